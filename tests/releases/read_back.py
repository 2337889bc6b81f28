"""Reading a built release back from storage, as a benchmark's loader would."""

import csv
import io
import json

from django.core.files.storage import default_storage


def read_bytes(release, path: str) -> bytes:
    with default_storage.open(release.storage_prefix + path, "rb") as fh:
        return fh.read()


def read_json(release, path: str):
    return json.loads(read_bytes(release, path).decode("utf-8"))


def read_jsonl(release, path: str) -> list:
    return [json.loads(line) for line in read_bytes(release, path).decode("utf-8").splitlines()]


def read_csv(release, path: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(read_bytes(release, path).decode("utf-8"))))


def paths(release) -> list[str]:
    return [f["path"] for f in release.files]
