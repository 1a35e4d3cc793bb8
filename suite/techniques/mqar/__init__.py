"""MQAR (multi-query associative recall, as Zoology defines it): a model-level retrieval probe.

Not a runner technique: the data and the tiny model live here; training and evaluation (recall on
the query tokens, loss on the others, dense and with each selector) are study drivers in
`runners/studies/mqar_train.py` and `runners/studies/mqar_evaluate.py`."""
