"""The JSON columns the dashboard reads decode as json would, orjson's refusals included."""
import json
import math

from db.queries import _json


def test_decodes_like_json():
    doc = {"samples": [0.1, 1e-300, 12345678901234567, -0.0], "stats": {"p10": 1.5, "note": "é"}, "n": None}
    text = json.dumps(doc)
    assert _json(text) == json.loads(text)


def test_reads_what_orjson_refuses():
    assert math.isnan(_json('[NaN, 1.0]')[0])


def test_objects_from_a_decoding_driver_pass_through():
    obj = {"a": [1, 2]}
    assert _json(obj) is obj
