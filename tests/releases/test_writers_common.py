"""writers.common: `dumps_bytes` (orjson when its bytes are the stdlib's, the stdlib otherwise) and the
stream writers built on it."""

import datetime as dt
import hashlib
import math

import pytest
from django.core.files.storage import FileSystemStorage

from releases.writers.common import JsonArrayWriter, ReleaseFiles, dumps, dumps_bytes, json_float

TRICKY = [
    -0.0,
    0.0,
    1e-7,
    1e-5,
    1.5e-5,
    0.0001,
    0.00012345,
    123456789.125,
    1e16,
    1.2345678901234568e20,
    5e-324,
    1 / 3,
    2**53 + 1,
    2**63 - 1,
    2**64 - 1,
    2**64,
    -(2**63) - 1,
    10**30,
    "",
    "é – “quotes” 生日快乐",
    "emoji 👋🏽 and a ZWJ 👨‍👩‍👧",
    'control \x00\x01\x1f\x7f tab\t newline\n quote" backslash\\ slash/',
    "\u2028\u2029",
    "null 0.0000 3e-5 in text",
    None,
    True,
    False,
    [],
    {},
    {"b": 1, "a": [1.5, None, {"z": -0.0, "y": 1e-7}]},
    ("a", "tuple"),
    {1: "int key", "x": 2},
    {1.5: "float key", None: 0, True: 1},
    {"start": 12.5, "end": 1e-6, "text": "mixed"},
]


@pytest.mark.parametrize("value", TRICKY, ids=[repr(v)[:40] for v in TRICKY])
def test_dumps_bytes_are_the_stdlib_bytes(value):
    assert dumps_bytes(value) == dumps(value).encode("utf-8")
    assert dumps_bytes([value, {"k": value}]) == dumps([value, {"k": value}]).encode("utf-8")


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, [1.0, math.nan], {"x": {"y": math.inf}}])
def test_non_finite_floats_are_refused_as_before(value):
    with pytest.raises(ValueError, match="not JSON compliant"):
        dumps(value)
    with pytest.raises(ValueError, match="not JSON compliant"):
        dumps_bytes(value)


@pytest.mark.parametrize("value", [dt.datetime(2025, 1, 1, tzinfo=dt.UTC), {(1, 2): "tuple key"}, object()])
def test_what_the_stdlib_refuses_stays_refused(value):
    with pytest.raises(TypeError):
        dumps(value)
    with pytest.raises(TypeError):
        dumps_bytes(value)


def test_a_lone_surrogate_fails_as_before():
    with pytest.raises(UnicodeEncodeError):
        dumps("\ud800").encode("utf-8")
    with pytest.raises(UnicodeEncodeError):
        dumps_bytes("\ud800")


def test_streams_and_arrays_write_the_dumps_text(tmp_path):
    storage = FileSystemStorage(location=tmp_path)
    files = ReleaseFiles(storage, "r/")
    records = [value for value in TRICKY if value is not None and not isinstance(value, dict | int)] + [
        {"t": 1e-5, "s": "ok"}
    ]
    with files.stream("lines.jsonl") as out:
        for record in records:
            out.write_json_line(record)
        out.write("plain text\n")
    with files.stream("array.json") as out:
        array = JsonArrayWriter(out)
        for record in records:
            array.add(record)
        array.close()
    files.write_json("doc.json", records)
    listing = {r["path"]: r for r in files.listing()}
    files.close()
    expected = {
        "lines.jsonl": "".join(dumps(r) + "\n" for r in records) + "plain text\n",
        "array.json": dumps(records),
        "doc.json": dumps(records),
    }
    for path, text in expected.items():
        data = (tmp_path / "r" / path).read_bytes()
        assert data == text.encode("utf-8")
        assert listing[path]["bytes"] == len(data)
    assert listing["doc.json"]["sha256"] == hashlib.sha256(expected["doc.json"].encode()).hexdigest()


@pytest.mark.parametrize("value", [v for v in TRICKY if isinstance(v, float)])
def test_json_float_is_the_dumps_text(value):
    assert json_float(value) == dumps(value)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_json_float_refuses_non_finite(value):
    with pytest.raises(ValueError, match="no JSON text"):
        json_float(value)
