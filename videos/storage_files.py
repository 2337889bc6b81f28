"""ffmpeg needs a path on disk; storage may be local or S3-compatible. This bridges the two."""

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.core.files import File
from django.core.files.storage import default_storage


@contextmanager
def local_path(name: str, storage=default_storage) -> Iterator[Path]:
    """A local path for a stored file: the file itself on local storage, else a temporary copy."""
    try:
        yield Path(storage.path(name))
        return
    except NotImplementedError:
        pass
    suffix = Path(name).suffix
    with tempfile.NamedTemporaryFile(suffix=suffix) as tmp:
        with storage.open(name, "rb") as src:
            shutil.copyfileobj(src, tmp, length=1024 * 1024)
        tmp.flush()
        yield Path(tmp.name)


def store_file(local: Path, name: str, storage=default_storage) -> str:
    """Copy a local file into storage under `name` (or a free variant of it); returns the stored name."""
    with open(local, "rb") as fh:
        return storage.save(name, File(fh, name=Path(name).name))
