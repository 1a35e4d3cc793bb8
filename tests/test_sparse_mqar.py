"""MQAR data follows the Zoology task; the model's selector path equals dense when all is kept."""
import pytest
import torch

from suite.techniques.mqar.data import IGNORE, N_KEYS, N_VALUES, batch
from suite.techniques.mqar.model import TinyLM
from suite.techniques.mqar.data import VOCAB
from suite.lib.selectors import select


def test_every_query_asks_for_the_value_bound_to_its_key():
    x, y, q = batch(16, 128, 8, torch.Generator().manual_seed(0))
    assert q.sum(1).eq(8).all()
    for i in range(16):
        pairs = {int(x[i, 2 * j]): int(x[i, 2 * j + 1]) for j in range(8)}
        for p in torch.nonzero(q[i]).flatten().tolist():
            assert p >= 16 and int(x[i, p]) in pairs and int(y[i, p]) == pairs[int(x[i, p])]
    assert (x[:, 0:16:2] <= N_KEYS).all() and (y[:, :16] == IGNORE).all()


def test_answers_are_never_inputs():
    """No value token after the pairs: a value written after its query would let later queries be
    answered by elimination (the values not answered yet) instead of by recall."""
    x, y, q = batch(64, 256, 8, torch.Generator().manual_seed(2))
    is_value = (x > N_KEYS) & (x <= N_KEYS + N_VALUES)
    assert is_value[:, 1:16:2].all() and not is_value[:, 16:].any()
    assert ((y[q] > N_KEYS) & (y[q] <= N_KEYS + N_VALUES)).all()


def test_key_shift_lets_a_key_see_the_previous_token_only():
    """With key_shift, changing token t-1 changes the key at t (one-hop recall); without it, it does
    not; no key sees a later token."""
    torch.manual_seed(0)
    for shift in (True, False):
        attn = TinyLM(VOCAB, dim=32, key_shift=shift).blocks[0].attn
        h = torch.randn(1, 8, 32)
        h2 = h.clone()
        h2[0, 3] += 1.0
        (k1, _), (k2, _) = attn.keys_values(h), attn.keys_values(h2)
        moved = (k1 - k2).abs().amax(dim=(0, 1, 3)) > 1e-6
        assert moved[3] and moved[4] == shift and not moved[5] and not moved[2]


@pytest.mark.parametrize("key_shift", [False, True])
def test_selector_path_with_everything_kept_equals_dense(key_shift):
    torch.manual_seed(0)
    model = TinyLM(VOCAB, dim=32, key_shift=key_shift).eval()
    x, _, _ = batch(2, 64, 4, torch.Generator().manual_seed(1))
    dense = model(x)
    for name in ("exact_topk", "mean_pool", "zeta_morton"):
        sparse = model(x, (lambda qq, kk, b, d, n=name: select(n, qq, kk, b, d), 8, 1.0))
        assert torch.allclose(dense, sparse, atol=1e-4)
    # A small budget changes the computation (the probe is not vacuous).
    thin = model(x, (lambda qq, kk, b, d: select("mean_pool", qq, kk, b, d), 8, 0.1))
    assert not torch.allclose(dense, thin, atol=1e-3)


CKPT = "suite/techniques/mqar/checkpoint/mqar_tiny.pt"
CONTROL = "suite/techniques/mqar/checkpoint/mqar_no_curriculum.pt"


def test_committed_checkpoint_recalls_densely_and_loses_it_to_a_selector_unseen_by_the_loss():
    """The H200-trained checkpoint (plain attention, curriculum), on fresh sequences here: dense
    recall >= 0.9 at a trained length; mean-pooled selection near chance while the loss on the other
    tokens barely moves; the same model trained without the curriculum guesses among the 8 values."""
    from pathlib import Path

    from runners.studies.mqar_evaluate import load, score

    root = Path(__file__).resolve().parent.parent
    model = load(str(root / CKPT), "cpu")
    assert not model.config["key_shift"]
    dense = score(model, None, 256, 8, 32, 16, 1.0, 7, "cpu")
    thin = score(model, "mean_pool", 256, 8, 32, 16, 0.1, 7, "cpu")
    assert dense["recall"] >= 0.9 and thin["recall"] < 0.15
    assert abs(thin["nonquery_loss_nats"] - dense["nonquery_loss_nats"]) < 0.02 * dense["nonquery_loss_nats"]
    control = score(load(str(root / CONTROL), "cpu"), None, 256, 8, 32, 16, 1.0, 7, "cpu")
    assert control["recall"] < 0.3


def test_h200_mqar_run_shows_the_failure_perplexity_cannot_see():
    """The H200 run on the committed checkpoint: dense recall >= 0.9 at every trained length, the
    no-curriculum control near a guess among the 8 values; block-summary selectors near chance while
    the filler loss stays within 1% of dense."""
    import json
    from pathlib import Path

    doc = json.loads((Path(__file__).resolve().parent.parent / "results/h200/mqar_h200_curriculum.json").read_text())
    assert doc["run"]["env"]["gpu_name"] == "NVIDIA H200" and doc["run"]["git"]["commit"]
    rows = {(r["impl"], r["case"], r["metric"]): r for r in doc["results"]}
    val = {k: r["value"] for k, r in rows.items()}
    for ctx in (256, 512, 1024):
        assert rows[("dense", f"ctx{ctx}", "recall")]["params"]["trained_length"]
        dense_recall, dense_loss = val[("dense", f"ctx{ctx}", "recall")], val[("dense", f"ctx{ctx}", "nonquery_loss_nats")]
        assert dense_recall >= 0.9 and val[("dense_control", f"ctx{ctx}", "recall")] < 0.3
        for sel in ("mean_pool", "msa_index", "dhsa_chunks"):
            assert val[(sel, f"ctx{ctx}_d10", "recall")] < dense_recall / 5
            assert abs(val[(sel, f"ctx{ctx}_d10", "nonquery_loss_nats")] - dense_loss) < 0.01 * dense_loss


def test_curriculum_stages_cover_their_share_of_the_budget_then_hand_over():
    from runners.studies.mqar_train import stage_at

    stages = [(32, 4, 0.15), (128, 8, 0.1)]
    assert [stage_at(f, stages) for f in (0.0, 0.149, 0.15, 0.249, 0.25, 1.0)] == \
        [(32, 4), (32, 4), (128, 8), (128, 8), None, None]
    assert stage_at(0.0, []) is None
