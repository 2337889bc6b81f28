"""The benchmark audit in Chromium, on the real worker with the fake model.

An admin imports a LongVideoBench file (a zip with its subtitles and video), runs the shortcut
probes from the audit page, reads the figures, sorts by shortcut score and sends the item a model
answers without watching back to review; an examiner opens another imported item and sees its
probe results beside it.
"""

import io
import json
import re
import time
import zipfile

import pytest
from playwright.sync_api import expect

from annotator.models import MCQ, ItemStatus, ReviewEvent
from audits.models import ProbeAnswer, ProbeRun
from jobs.models import BackgroundJob, JobStatus
from tests import factories
from tests.browser.helpers import login
from tests.fakes.openai_server import Reply
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

QUESTION = re.compile(r"Question: (.*)")
OPTION = re.compile(r"^([A-E])\. (.*)$", re.MULTILINE)
RECORDS = [
    ("What colour is the card at the start?", ["red", "green", "striped", "white"], 2, True),
    ("What does the cook hold when the scene changes?", ["a pan", "a cup", "a book", "a phone"], 0, False),
    ("Which object appears last?", ["a lamp", "a chair", "a bowl", "a fork"], 3, False),
]
KNOWN = {RECORDS[0][0]: RECORDS[0][1][RECORDS[0][2]]}  # the question the fake model knows without watching


def _model(request) -> Reply:
    """Knows the first question's answer from its text; answers "A" to everything else."""
    found = QUESTION.search(request.text)
    if found and found.group(1) in KNOWN:
        for letter, option in OPTION.findall(request.text):
            if option == KNOWN[found.group(1)]:
                return Reply.text(f"Answer: {letter}")
    return Reply.text("A")


def _lvb_zip(video_path) -> bytes:
    records = []
    for n, (question, options, key, _known) in enumerate(RECORDS):
        records.append(
            {
                "video_id": "kitchen",
                "question": question,
                "question_wo_referring_query": question,
                "candidates": options,
                "correct_choice": key,
                "position": [25 * (n + 1)],
                "topic_category": "LC",
                "question_category": "E2O",
                "level": "L1-Perception",
                "id": f"kitchen_{n}",
                "video_path": "kitchen.mp4",
                "subtitle_path": "kitchen.json",
                "duration_group": 15,
                "starting_timestamp_for_subtitles": 0.0,
                "duration": 6.0,
                "view_count": 0,
            }
        )
    subtitles = [{"timestamp": [0.5, 2.0], "text": "Here is the test card."}]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("longvideobench/lvb_test.json", json.dumps(records))
        archive.writestr("subtitles/kitchen.json", json.dumps(subtitles))
        archive.write(video_path, "videos/kitchen.mp4")
    return buffer.getvalue()


def _wait_job(kind: str, timeout: float = 120) -> BackgroundJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = BackgroundJob.objects.filter(kind=kind).order_by("-pk").first()
        if job is not None and job.is_finished:
            return job
        time.sleep(0.3)
    raise AssertionError(f"no finished {kind} job after {timeout} s: {BackgroundJob.objects.values('kind', 'status')}")


def test_import_audit_send_to_review_and_examine(
    live_server, page, settings, celery_worker_process, fake_openai_shared, tmp_path
):
    settings.MEDIA_ROOT = celery_worker_process.extra["media_root"]  # the worker reads the upload and the frames
    video = tmp_path / "kitchen.mp4"
    make_scene_video(video, [SceneSpec(3.0), SceneSpec(3.0)], width=320, height=180, fps=25)
    upload = tmp_path / "lvb.zip"
    upload.write_bytes(_lvb_zip(video))
    fake_openai_shared.set_default(_model)
    project = factories.ProjectFactory(name="Audit walk", slug="audit-walk", kind="longvideobench", probe_shuffles=3)
    people = factories.people_for(project)
    base = f"{live_server.url}/p/{project.slug}"

    # 1. The admin imports the LongVideoBench zip; the job's report says what came in.
    login(page, live_server, people["admin"])
    page.goto(f"{base}/releases/import/")
    page.select_option("select[name=format]", "longvideobench")
    page.set_input_files("input[name=archive]", str(upload))
    page.keyboard.press("Escape")
    page.click("button[type=submit]:has-text('Import')")
    job = _wait_job("releases.import_benchmark")
    assert job.status == JobStatus.SUCCEEDED, job.error
    expect(page.locator("#import-job")).to_contain_text("Imported", timeout=20_000)
    expect(page.locator("#import-job a[data-key=a]")).to_be_visible()
    assert MCQ.objects.filter(project=project, status=ItemStatus.EXAMINING).count() == len(RECORDS)
    page.screenshot(path=str(tmp_path / "1-import.png"), full_page=True)

    # 2. The audit page: nothing probed yet; r runs the probes, the job's progress shows.
    page.keyboard.press("a")  # from the import's report to the audit
    page.wait_for_url(f"{base}/audit/")
    expect(page.locator("#probes")).to_contain_text("Not probed yet")
    page.keyboard.press("r")
    expect(page.locator(".messages")).to_contain_text("queued")
    probe_job = _wait_job("audits.probe_run")
    assert probe_job.status == JobStatus.SUCCEEDED, probe_job.error
    run = ProbeRun.objects.get()
    assert run.counts["failed"] == 0 and run.counts["asked"] == run.counts["calls"], run.counts

    # 3. The figures: the text-only probe, its interval and chance; the known item scores highest.
    page.goto(f"{base}/audit/?sort=score")
    probes = page.locator("#probes")
    expect(probes).to_contain_text("Text only")
    expect(probes).to_contain_text("95 % interval (Wilson)")
    expect(probes.locator("svg")).to_be_visible()
    known = MCQ.objects.get(project=project, question=RECORDS[0][0])
    first_row = page.locator("#items tbody tr").first
    expect(first_row).to_contain_text(f"MCQ {known.pk}")
    text_answers = ProbeAnswer.objects.filter(mcq=known, probe="text")
    assert text_answers.count() == 3 and all(a.correct for a in text_answers)
    page.screenshot(path=str(tmp_path / "2-audit.png"), full_page=True)

    # 4. Tick it and send it to review (s): flagged, with the probe as the reason.
    first_row.locator("input[type=checkbox]").check()
    page.keyboard.press("s")
    expect(page.locator(".messages")).to_contain_text("1 item sent to review")
    known.refresh_from_db()
    assert known.status == ItemStatus.FLAGGED
    assert "shortcut:text" in ReviewEvent.objects.filter(mcq=known).latest("id").reasons

    # 5. The examiner opens another imported item and sees its probe results beside it.
    other = MCQ.objects.get(project=project, question=RECORDS[1][0])
    login(page, live_server, people["examiner"])
    page.goto(f"{base}/examine/mcq/{other.pk}/")
    section = page.locator(".probe-results")
    expect(section).to_contain_text("Shortcut probes")
    expect(section).to_contain_text("Text only")
    answered = ProbeAnswer.objects.filter(mcq=other, ok=True)
    right = answered.filter(correct=True).count()
    expect(section).to_contain_text(f"{right} of {answered.count()} answers right without the video")
    page.screenshot(path=str(tmp_path / "3-examine.png"), full_page=True)
