"""The lmms-eval task folder a release carries (`filters["lmms_eval"]`): built for the demo project, loaded
the way lmms-eval 0.7.x loads an include path (tests/releases/lmms_eval_loader.py), and its document
functions called on every record of the release. `make lmms-eval-check` runs lmms-eval itself."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.urls import reverse

from annotator.models import MCQ, ItemStatus
from demo.services import demo_project_load
from releases.build import release_build
from releases.forms import ReleaseForm
from releases.models import DatasetRelease, ReleaseStatus
from releases.services import clean_filters, release_create
from releases.writers.lmms_tasks import UTILS_SOURCE, task_prefix
from tests.releases.lmms_eval_loader import index_tasks, load_docs, load_task, load_yaml

pytestmark = pytest.mark.django_db

WORKED = [s for s in ItemStatus.values if s != ItemStatus.DRAFT]
MCQ_FORMATS = ["longvideobench", "mvpbench", "livibench", "generic"]
LETTERS = "ABCDE"


@pytest.fixture
def demo(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return demo_project_load(force=True).project


def build(project, version, **fields) -> DatasetRelease:
    fields.setdefault("formats", MCQ_FORMATS)
    fields.setdefault("filters", {"statuses": WORKED, "lmms_eval": True})
    release = release_build(release=DatasetRelease.objects.create(project=project, version=version, seed=5, **fields))
    assert release.status == ReleaseStatus.READY, release.validation_errors
    return release


def folder_of(release) -> Path:
    return Path(default_storage.path(release.storage_prefix)) / "lmms_eval"


def import_utils(folder: Path):
    spec = importlib.util.spec_from_file_location("utils", folder / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_demo_release_carries_tasks_lmms_eval_can_load_and_score(demo):
    release = build(demo, "v1", split_config={"ratios": {"train": 0.5, "test": 0.5}})
    folder = folder_of(release)
    root = folder.parent
    listed = {f["path"]: f for f in release.files}

    # Only task YAMLs, the utils module and a README; never an __init__.py (it would shadow lmms_eval).
    names = sorted(p.name for p in folder.iterdir())
    assert "__init__.py" not in names and "utils.py" in names and "README.md" in names
    assert all(n.endswith(".yaml") for n in names if n not in ("utils.py", "README.md"))
    assert (folder / "utils.py").read_bytes() == UTILS_SOURCE.read_bytes()
    assert all(f"lmms_eval/{n}" in listed for n in names)  # in the manifest, with sha256

    tasks = index_tasks(folder)
    yamls = sorted(n for n in names if n.endswith(".yaml"))
    assert sorted(Path(p).name for p in tasks.values()) == yamls  # every YAML is a task
    assert all(name.startswith("vidqa_demo_") for name in tasks)  # never a built-in task's name
    assert sorted(release.manifest["lmms_eval"]["tasks"]) == sorted(tasks)

    written = {
        p for p in listed if p.startswith(("longvideobench/lvb_", "mvpbench/", "livibench/")) and p.count("/") == 1
    }
    seen_files, records_by_family = set(), {"lvb": 0, "mvp": 0, "livi": 0}
    for name, path in tasks.items():
        simple = load_yaml(path, mode="simple")
        assert simple["task"] == name and simple["dataset_path"] == "json"
        config = load_task(path)
        split = config["test_split"]
        data_files = config["dataset_kwargs"]["data_files"]
        assert list(data_files) == [split]
        data = Path(data_files[split])
        assert data.is_absolute() and data.is_file() and data.parent.parent == root
        relative = data.relative_to(root).as_posix()
        assert relative in written and name.endswith(f"_{split}")
        seen_files.add(relative)
        family = name.removeprefix("vidqa_demo_").removesuffix(f"_{split}")
        assert config["tag"] == f"vidqa_demo_{split}" and config["cluster_key"] == "video"
        assert [m["metric"] for m in config["metric_list"]] == ["accuracy", "failed_requests", "no_choice"]
        kwargs = config["lmms_eval_specific_kwargs"]["default"]

        docs = load_docs(data_files, split)
        assert docs
        records_by_family[family] += len(docs)
        for doc in docs:
            visuals = config["doc_to_visual"](doc)
            assert visuals and all(os.path.isabs(v) and os.path.isfile(v) for v in visuals)
            assert all(Path(v).parent == root / "videos" for v in visuals)
            text = config["doc_to_text"](doc, kwargs)
            target = config["doc_to_target"](doc)
            if family == "mvp":
                assert doc["query"] in text and all(label in text for label in doc["options"])
                assert len(visuals) == 1 + len(doc["video_options"]) and target == doc["answer"]
                wrong = next(label for label in doc["options"] if label != target)
            else:
                options = doc["candidates"] if family == "lvb" else doc["options"]
                answer = doc["correct_choice"] if family == "lvb" else doc["answer"]
                assert doc["question"] in text
                assert all(f"{LETTERS[i]}. {o}" in text for i, o in enumerate(options))
                assert target == LETTERS[answer]
                wrong = LETTERS[(answer + 1) % len(options)]
                # The option's text alone is read as that option, as our extraction reads it.
                assert config["process_results"](doc, [options[answer]])["accuracy"]["score"] == 1
            assert text.endswith(kwargs["post_prompt"])

            right = config["process_results"](doc, [target])
            assert right["accuracy"]["score"] == 1 and right["accuracy"]["choice"] == target
            assert right["failed_requests"]["score"] == 0 and right["no_choice"]["score"] == 0
            assert right["accuracy"]["video"]  # the cluster for lmms-eval's clustered standard error
            assert config["process_results"](doc, [f"The answer is ({target})."])["accuracy"]["score"] == 1
            assert config["process_results"](doc, [wrong])["accuracy"]["score"] == 0
            unread = config["process_results"](doc, ["I cannot tell from these frames."])
            assert unread["accuracy"]["score"] == 0 and unread["no_choice"]["score"] == 1
            failed = config["process_results"](doc, ["[LMMS_EVAL_REQUEST_FAILED after 5 retries] Connection error."])
            assert failed["accuracy"]["score"] == 0 and failed["failed_requests"]["score"] == 1
            assert failed["no_choice"]["score"] == 0
    assert seen_files == written  # a task for every MCQ file, and no task without one

    # Every released MCQ is in exactly one task.
    released = MCQ.objects.filter(project=demo, status__in=WORKED)
    multi = [m for m in released if m.mcq_videos.count() > 1]
    assert records_by_family["mvp"] == len(multi)
    assert sum(records_by_family.values()) == released.count()

    # The aggregation lmms-eval calls with the per-record dicts.
    utils = import_utils(folder)
    assert (
        utils.mean_score([{"score": 1, "video": "a"}, {"score": 0, "video": "a"}, {"score": 1, "video": "b"}]) == 2 / 3
    )
    assert str(root) == utils.RELEASE_ROOT

    # Same data, same bytes: a second build of it writes the same folder.
    again = build(demo, "v1-again", split_config={"ratios": {"train": 0.5, "test": 0.5}})
    ours = {f["path"]: f["sha256"] for f in release.files if f["path"].startswith("lmms_eval/")}
    assert ours == {f["path"]: f["sha256"] for f in again.files if f["path"].startswith("lmms_eval/")}


def test_a_visual_missing_from_a_release_without_media_is_named(demo):
    release = build(
        demo,
        "text-only",
        formats=["longvideobench"],
        filters={"statuses": WORKED, "lmms_eval": True, "include_media": False},
    )
    folder = folder_of(release)
    (path,) = index_tasks(folder).values()
    config = load_task(path)
    doc = load_docs(config["dataset_kwargs"]["data_files"], config["test_split"])[0]
    with pytest.raises(FileNotFoundError, match=r"videos/.*built without its media"):
        config["doc_to_visual"](doc)


def test_without_the_option_there_is_no_folder(demo):
    release = build(demo, "plain", filters={"statuses": WORKED})
    assert not any(f["path"].startswith("lmms_eval/") for f in release.files)
    assert "lmms_eval" not in release.manifest


def test_the_reply_rules_are_those_of_our_answer_extraction():
    answers = pytest.importorskip("llm.answers")
    spec = importlib.util.spec_from_file_location("lmms_utils", UTILS_SOURCE)
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    options = ["a red cube", "a red cube and a ball", "the host", "nothing"]
    replies = [
        "B",
        "b",
        "(C)",
        "Answer: D",
        "The correct answer is (A) because option B is wrong.",
        "答案是C",
        "I think the answer is a bit unclear",
        "Option 2",
        "a red cube and a ball",
        "It shows a red cube.",
        "A or B",
        "The answer is A. No, the answer is B.",
        "**B**",
        "5",
        "",
        "[LMMS_EVAL_REQUEST_FAILED after 5 retries] boom",
    ]
    for reply in replies:
        ours = answers.extract_choice(reply, options)
        assert utils.extract_choice(reply, options) == (ours.index, ours.method), reply
    labels = ["1", "2", "3"]
    for reply in ["2", "Answer: 3", "video 1", "Option 4", "The second one"]:
        ours = answers.extract_choice(reply, labels, labels=labels)
        assert utils.extract_choice(reply, labels, labels=labels) == (ours.index, ours.method), reply


def test_task_names_are_made_from_the_slug():
    assert task_prefix("demo") == "vidqa_demo"
    assert task_prefix("Long-Video.Bench_2") == "vidqa_long_video_bench_2"


def test_the_option_needs_an_mcq_format_and_answers(project, people, accepted):
    admin = people["admin"]
    with pytest.raises(ValidationError) as exc:
        release_create(project=project, by=admin, version="x1", formats=["generic"], filters={"lmms_eval": True})
    assert "LongVideoBench, MVPBench or LiViBench" in " ".join(exc.value.message_dict["filters"])
    with pytest.raises(ValidationError) as exc:
        release_create(
            project=project,
            by=admin,
            version="x2",
            formats=["longvideobench"],
            filters={"lmms_eval": True},
            test_style=True,
        )
    assert "test-style" in " ".join(exc.value.message_dict["filters"])
    assert not DatasetRelease.objects.filter(project=project).exists()
    with pytest.raises(ValidationError, match="lmms_eval must be true or false"):
        clean_filters({"lmms_eval": "yes"}, project=project)
    assert "lmms_eval" not in clean_filters({"lmms_eval": False}, project=project)
    assert clean_filters({"lmms_eval": True}, project=project)["lmms_eval"] is True

    fields = {"version": "v9", "statuses": ["accepted"], "split_mode": "none", "seed": 0, "lmms_eval": "on"}
    form = ReleaseForm(data={**fields, "formats": ["generic"]}, project=project)
    assert not form.is_valid() and "lmms_eval" in form.errors
    form = ReleaseForm(data={**fields, "formats": ["longvideobench"]}, project=project)
    assert form.is_valid(), form.errors
    assert form.service_fields()["filters"]["lmms_eval"] is True


def test_the_form_asks_for_the_tasks_and_the_page_lists_them(client, project, people, accepted, demo):
    client.force_login(people["admin"])
    url = reverse("releases:new", args=[project.slug])
    form = {
        "version": "v2",
        "statuses": ["accepted"],
        "include_media": "on",
        "split_mode": "none",
        "seed": "5",
        "lmms_eval": "on",
    }
    page = client.get(url).text
    assert 'name="lmms_eval"' in page
    response = client.post(url, {**form, "formats": ["generic"]})
    assert response.status_code == 200
    assert "choose one of those formats too" in response.text and not DatasetRelease.objects.filter(project=project)
    response = client.post(url, {**form, "formats": ["longvideobench"]})
    assert response.status_code == 302
    assert DatasetRelease.objects.get(project=project).filters["lmms_eval"] is True

    release = build(demo, "v1")
    boss = get_user_model().objects.create_superuser("boss", "boss@example.com", "pw")
    client.force_login(boss)
    page = client.get(reverse("releases:detail", args=[demo.slug, release.pk])).text
    assert "lmms-eval tasks" in page
    assert all(f"<code>{task}</code>" in page for task in release.manifest["lmms_eval"]["tasks"])
