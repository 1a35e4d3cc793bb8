"""MQAR (multi-query associative recall, as Zoology defines it): a model-level retrieval probe.

Not a runner technique: `train` fits a tiny attention model, `evaluate` measures recall on the
query tokens and the loss on the other tokens, with dense attention and with each selector."""
