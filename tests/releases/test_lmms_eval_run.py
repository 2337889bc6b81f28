"""lmms-eval itself on the demo's LongVideoBench release, against the fake OpenAI server (opt-in).

lmms-eval pulls in torch (gigabytes), so the suite does not install it. `make lmms-eval-check
LMMS_EVAL=/path/to/bin/lmms-eval` runs this module with lmms-eval from its own environment (see
docs/evaluation_lmms_eval.md); without LMMS_EVAL it is skipped.

The fake server answers every question of the task as scripted: the right letter stated, a wrong
letter, a reply naming no option, and the right option's text. lmms-eval's accuracy must equal the
share of right answers counted here by hand, and each per-item score the one our own extraction
gives the same reply; no request may have failed (lmms-eval exits 0 even then).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from django.core.files.storage import default_storage

from annotator.models import ItemStatus
from demo.services import demo_project_load
from releases.build import release_build
from releases.models import DatasetRelease, ReleaseStatus
from releases.writers.lmms_eval_task import extract_choice
from tests.fakes.openai_server import FakeOpenAIServer, Reply

LMMS_EVAL = os.environ.get("LMMS_EVAL", "")

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        not (LMMS_EVAL and os.access(LMMS_EVAL, os.X_OK)),
        reason="lmms-eval is not installed here: run `make lmms-eval-check LMMS_EVAL=<its lmms-eval>`",
    ),
]

WORKED = [s for s in ItemStatus.values if s != ItemStatus.DRAFT]
LETTERS = "ABCDE"
TIMEOUT_S = 900


def _reply(n: int, record: dict) -> tuple[str, bool]:
    """The scripted reply to the n-th record and whether it is right (the hand computation)."""
    answer = record["correct_choice"]
    options = record["candidates"]
    kind = n % 4
    if kind == 0:
        return f"The answer is ({LETTERS[answer]}).", True
    if kind == 1:
        return LETTERS[(answer + 1) % len(options)], False
    if kind == 2:
        return "I cannot tell from these frames.", False
    return options[answer], True


def _demo_release(settings, tmp_path, formats):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    project = demo_project_load(force=True).project
    release = release_build(
        release=DatasetRelease.objects.create(
            project=project, version="v1", formats=formats, filters={"statuses": WORKED, "lmms_eval": True}
        )
    )
    assert release.status == ReleaseStatus.READY, release.validation_errors
    return release, Path(default_storage.path(release.storage_prefix))


def _lmms_eval(server: FakeOpenAIServer, folder: Path, tasks: str, tmp_path: Path) -> tuple[Path, str]:
    """Run lmms-eval as a user would (from another working directory); its output folder and log."""
    out = tmp_path / "lmms-results"
    env = {
        **os.environ,
        "OPENAI_API_KEY": "sk-fake",
        "HF_HOME": str(tmp_path / "hf"),
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
    }
    completed = subprocess.run(  # noqa: S603 - our own arguments
        [
            LMMS_EVAL,
            "--model",
            "openai",
            "--model_args",
            f"model_version=fake-vision,base_url={server.base_url},max_frames_num=4,num_concurrent=2,max_retries=1",
            "--include_path",
            str(folder),
            "--tasks",
            tasks,
            "--output_path",
            str(out),
            "--log_samples",
        ],
        cwd=tmp_path,  # not the release: the tasks must find their files from anywhere
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    log = completed.stdout[-4000:] + completed.stderr[-4000:]
    assert completed.returncode == 0, log
    return out, log


def _results(out: Path, log: str) -> dict:
    found = sorted(out.glob("*/*_results.json"))
    assert len(found) == 1, f"lmms-eval wrote no results (it exits 0 all the same):\n{log}"
    results = json.loads(found[0].read_text())["results"]
    print("lmms-eval results:", json.dumps(results, indent=1, default=str))  # shown by make lmms-eval-check
    return results


def _our_run(settings, server, release):
    """The in-app evaluation of the release (its LongVideoBench file) against the same scripted server."""
    from evaluations.runs import evaluation_start
    from evaluations.tasks import evaluation_run
    from llm.client import forget_endpoints

    settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = server.base_url, "sk-fake"
    settings.LLM_CONCURRENCY = 1
    forget_endpoints()
    run = evaluation_start(project=release.project, release=release, model="fake-vision", frames=4, use_extractor=False)
    evaluation_run(run.job_id)
    run.refresh_from_db()
    return run


def test_lmms_eval_scores_the_demo_release_as_we_do(settings, tmp_path):
    release, root = _demo_release(settings, tmp_path, ["longvideobench"])
    task = "vidqa_demo_lvb_test"
    assert release.manifest["lmms_eval"]["tasks"] == [task]
    records = json.loads((root / "longvideobench" / "lvb_test.json").read_text(encoding="utf-8"))
    assert len(records) >= 3  # a right, a wrong and an unreadable reply at least

    expected, replies = [], {}
    with FakeOpenAIServer() as server:
        for n, record in enumerate(records):
            text, right = _reply(n, record)
            replies[record["id"]] = text
            expected.append(right)
            # The question is in the prompt lmms-eval sends; each is scripted for its own question.
            server.script(record["question"], Reply.text(text), repeat=True)
        out, log = _lmms_eval(server, root / "lmms_eval", task, tmp_path)
        asked = server.requests("chat")
        ours = _our_run(settings, server, release)
    results = _results(out, log)[task]
    # Our own evaluation of the same release, with the same replies: the same accuracy.
    assert ours.summary["scored"] == len(records) and ours.summary["failed"] == 0
    assert ours.summary["accuracy"] == pytest.approx(results["accuracy,none"])

    # lmms-eval exits 0 even when requests fail: the results say whether they did.
    assert results["failed_requests,none"] == 0, log
    assert len(asked) == len(records)
    assert all(r.images for r in asked)  # the video went as frames
    hand = sum(expected) / len(expected)
    assert results["accuracy,none"] == pytest.approx(hand)
    assert results["no_choice,none"] == pytest.approx(sum(1 for n in range(len(records)) if n % 4 == 2) / len(records))

    (samples_file,) = out.glob(f"*/*_samples_{task}.jsonl")
    samples = [json.loads(line) for line in samples_file.read_text().splitlines()]
    assert len(samples) == len(records)
    for sample in samples:
        record = records[sample["doc_id"]]
        assert sample["accuracy"]["id"] == record["id"]
        index, _rule = extract_choice(replies[record["id"]], record["candidates"])
        assert sample["accuracy"]["score"] == int(index == record["correct_choice"])
    try:
        from llm.answers import extract_choice as ours  # the in-app evaluation's rules, where present
    except ImportError:
        return
    for sample in samples:
        record = records[sample["doc_id"]]
        assert sample["accuracy"]["score"] == int(
            ours(replies[record["id"]], record["candidates"]).index == record["correct_choice"]
        )


def test_lmms_eval_runs_every_task_of_the_demo_release_by_its_tag(settings, tmp_path):
    """LongVideoBench, MVPBench and LiViBench tasks at once; every reply names the first option ("1")."""
    release, root = _demo_release(settings, tmp_path, ["longvideobench", "mvpbench", "livibench"])
    tasks = release.manifest["lmms_eval"]["tasks"]
    assert tasks == ["vidqa_demo_lvb_test", "vidqa_demo_mvp_test", "vidqa_demo_livi_test"]
    firsts = {}
    lvb = json.loads((root / "longvideobench" / "lvb_test.json").read_text(encoding="utf-8"))
    firsts["vidqa_demo_lvb_test"] = [r["correct_choice"] == 0 for r in lvb]
    for task, path in (
        ("vidqa_demo_mvp_test", "mvpbench/test.jsonl"),
        ("vidqa_demo_livi_test", "livibench/test.jsonl"),
    ):
        lines = [json.loads(line) for line in (root / path).read_text(encoding="utf-8").splitlines()]
        firsts[task] = [(r["answer"] == r["options"][0]) if "video_options" in r else (r["answer"] == 0) for r in lines]
    with FakeOpenAIServer() as server:
        server.script(None, Reply.text("1"), repeat=True)
        out, log = _lmms_eval(server, root / "lmms_eval", "vidqa_demo_test", tmp_path)
        asked = server.requests("chat")
    results = _results(out, log)
    assert len(asked) == sum(len(v) for v in firsts.values())
    for task, first in firsts.items():
        assert results[task]["failed_requests,none"] == 0, log
        assert results[task]["no_choice,none"] == 0
        assert results[task]["accuracy,none"] == pytest.approx(sum(first) / len(first)), task


def test_a_failed_request_is_scored_wrong_and_counted_while_lmms_eval_exits_0(settings, tmp_path):
    """Why a check must read `failed_requests`: lmms-eval scores the failure as a wrong answer."""
    _release, root = _demo_release(settings, tmp_path, ["longvideobench"])
    task = "vidqa_demo_lvb_test"
    records = json.loads((root / "longvideobench" / "lvb_test.json").read_text(encoding="utf-8"))
    with FakeOpenAIServer() as server:
        server.always(records[0]["question"], Reply.status(500))
        for record in records[1:]:
            server.script(record["question"], Reply.text(LETTERS[record["correct_choice"]]), repeat=True)
        out, log = _lmms_eval(server, root / "lmms_eval", task, tmp_path)  # asserts the exit status 0
    results = _results(out, log)[task]
    assert results["failed_requests,none"] == pytest.approx(1 / len(records))
    assert results["accuracy,none"] == pytest.approx((len(records) - 1) / len(records))
