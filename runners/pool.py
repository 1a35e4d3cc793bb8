"""Parent side of the worker protocol: one persistent worker, restarted after a crash or hang."""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from runners.sandbox import default_memory_limit, isolated, job_env, over_limit

ROOT = Path(__file__).resolve().parent.parent


class Worker:
    """A runners.worker subprocess; `submit` returns its rows or raises WorkerFailure."""

    def __init__(self, interpret_triton: bool, memory_limit: int | None = None, root: Path = ROOT) -> None:
        """root: the source tree whose suite/ the worker imports (an exported past commit for A/B runs)."""
        # the code under test sees no database URL and no tokens, nor this process (runners.sandbox)
        env = job_env(PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
                      PYTHONUNBUFFERED="1")
        if interpret_triton:
            env["TRITON_INTERPRET"] = "1"
        self.memory_limit = memory_limit or default_memory_limit()
        self.proc = subprocess.Popen(isolated([sys.executable, "-m", "runners.worker"]), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=env, cwd=str(root))
        self._lines: queue.Queue = queue.Queue()
        self._err: list[str] = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self._lines), daemon=True).start()
        threading.Thread(target=self._drain_err, daemon=True).start()

    @staticmethod
    def _pump(stream, q: queue.Queue) -> None:
        for line in stream:
            q.put(line)
        q.put(None)

    def _drain_err(self) -> None:
        for line in self.proc.stderr:
            self._err.append(line)
            del self._err[:-60]

    def stderr_tail(self) -> str:
        return "".join(self._err)[-2000:]

    def submit(self, job: dict, timeout_s: float) -> list[dict]:
        try:
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise WorkerFailure(f"worker gone before the job: {exc}\n{self.stderr_tail()}")
        deadline = time.monotonic() + timeout_s
        while True:  # the answer, or the clock or the memory limit runs out
            try:
                line = self._lines.get(timeout=min(0.2, max(deadline - time.monotonic(), 0.0)))
                break
            except queue.Empty:
                why = over_limit(self.proc, self.memory_limit)
                if why:
                    raise WorkerFailure(f"{why}\n{self.stderr_tail()}")
                if time.monotonic() >= deadline:
                    self.kill()
                    raise WorkerFailure(f"timeout: no answer after {timeout_s:.0f} s (killed)\n{self.stderr_tail()}")
        if line is None:
            code = self.proc.wait()
            raise WorkerFailure(f"worker died with exit code {code}\n{self.stderr_tail()}")
        msg = json.loads(line)
        if msg.get("fatal"):  # the worker is leaving (CUDA context lost): wait, so the next job gets a new one
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill()
        return msg["rows"]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.alive():
            self.proc.kill()
        self.proc.wait()

    def close(self) -> None:
        if self.alive():
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class WorkerFailure(RuntimeError):
    """The worker crashed, hung or vanished while running a job."""
