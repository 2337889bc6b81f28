"""Release test data: accepted items over a few videos, and a ready release with real stored files."""

import hashlib

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone

from annotator.models import ItemStatus
from releases.models import DatasetRelease, ReleaseStatus
from tests import factories


@pytest.fixture
def accepted(project):
    return make_accepted(project)


def make_accepted(project) -> dict:
    """Two videos with an accepted MCQ each, one MCQ still in review, and an accepted QA chain."""
    videos = [factories.VideoFactory(project=project, name=f"clip_{i}") for i in range(2)]
    now = timezone.now()
    mcqs = [
        factories.MCQFactory(project=project, video=v, status=ItemStatus.ACCEPTED, accepted_at=now, category=cat)
        for v, cat in zip(videos, ["E2O", "S2A"], strict=True)
    ]
    pending = factories.MCQFactory(project=project, video=videos[0], status=ItemStatus.EXAMINING)
    chain = factories.QAChainFactory(
        clip=factories.ClipFactory(video=videos[1]), status=ItemStatus.ACCEPTED, accepted_at=now
    )
    factories.QAPairFactory(chain=chain, index=0, skill="CR")
    return {"videos": videos, "mcqs": mcqs, "pending": pending, "chain": chain}


def stored_release(project, *, version="v1", by=None, files=None, **fields) -> DatasetRelease:
    """A ready release whose files exist in storage with the sha256 and sizes it records."""
    prefix = f"releases/{project.slug}/{version}/"
    files = files or {"manifest.json": b'{"version": "v1"}\n', "generic/items.jsonl": b'{"id": 1}\n{"id": 2}\n'}
    listed = []
    for path, data in sorted(files.items()):
        default_storage.save(prefix + path, ContentFile(data))
        listed.append({"path": path, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)})
    archive = default_storage.save(prefix + f"{project.slug}-{version}.zip", ContentFile(b"PK\x05\x06" + b"\0" * 18))
    defaults = {
        "formats": ["generic"],
        "filters": {"statuses": ["accepted"], "include_media": True},
        "status": ReleaseStatus.READY,
        "storage_prefix": prefix,
        "archive": archive,
        "files": listed,
        "manifest": {
            "version": version,
            "app_version": "0.1.0",
            "manifest_version": "1",
            "schema_versions": {"manifest": "1", "generic": "1"},
        },
        "statistics": {
            "videos": 2,
            "items": {"qa_chain": 0, "chain_pair": 0, "relation": 0, "mcq": 2},
            "qa_pairs": 0,
            "per_split": {"train": {"videos": 1, "items": 1}, "test": {"videos": 1, "items": 1}},
            "categories": {"question_categories": {"E2O": 1, "S2A": 1}},
            "duration_groups": {"600": 2},
            # As the build counts them: as many counts as edges, the last bin open-ended.
            "duration_histogram": {"edges_s": [0, 60, 120, 180], "counts": [0, 2, 0, 0]},
            "qa_per_video": {"edges": [0, 1, 2, 3], "counts": [0, 2, 0, 0]},
            "option_lengths": {"edges_chars": [0, 10, 20], "correct": [2, 0, 0], "distractor": [5, 1, 0]},
        },
        "created_by": by,
        "finished_at": timezone.now(),
    }
    defaults.update(fields)
    return DatasetRelease.objects.create(project=project, version=version, **defaults)
