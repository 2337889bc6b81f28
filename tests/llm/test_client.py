"""The LLM layer against the fake OpenAI-compatible server on loopback: answers, failures, records."""

import json
import subprocess
import threading
from decimal import Decimal

import pytest
from django.db import connection

from llm import client as llm_client
from llm.client import LLMError, chat_json, transcribe
from llm.concurrency import SlotTimeout, _redis, _slot_key, endpoint_slot, slots_in_use
from llm.models import CallOutcome, LLMCall, PromptTemplate
from llm.prompts import template_update
from tests import factories
from tests.fakes.openai_server import Reply

COMPLEXITY_CONTEXT = {"title": "Cooking stream", "duration": 95.5, "frame_count": 0, "subtitles": "", "comments": ""}
GOOD = {"score": 6, "reason": "Two people cook and talk to viewers."}


@pytest.fixture
def llm_settings(settings, fake_openai):
    settings.LLM_MAX_ATTEMPTS = 3
    settings.LLM_CONCURRENCY = 4
    settings.LLM_TIMEOUT_S = 5.0
    return settings


@pytest.fixture
def pauses(monkeypatch):
    """Backoff pauses the client asked for, without waiting for them."""
    seen: list[float] = []
    monkeypatch.setattr(llm_client, "_sleep", seen.append)
    return seen


def complexity(project, **overrides):
    kwargs = {
        "project": project,
        "step": "complexity",
        "template_key": "complexity",
        "context": COMPLEXITY_CONTEXT,
    }
    return chat_json(**{**kwargs, **overrides})


# --- Answers --------------------------------------------------------------------------------------


def test_good_json_is_parsed_and_every_detail_recorded(db, project, llm_settings, fake_openai):
    fake_openai.latency_ms = 30
    fake_openai.script("Cooking stream", [Reply.json(GOOD, usage={"prompt_tokens": 1200, "completion_tokens": 300})])

    result = complexity(project, params={"temperature": 0.1})

    assert result.parsed == GOOD
    call = LLMCall.objects.get()
    assert call == result.call
    template = PromptTemplate.objects.get(project=None, key="complexity", is_active=True)
    assert (call.outcome, call.attempts, call.step, call.model) == (CallOutcome.OK, 1, "complexity", "gpt-4o-mini")
    assert (call.template, call.template_key, call.template_version) == (template, "complexity", template.version)
    assert call.endpoint == fake_openai.base_url
    assert (call.prompt_tokens, call.completion_tokens) == (1200, 300)
    # gpt-4o-mini: $0.15 per 1M input tokens, $0.60 per 1M output tokens.
    assert call.cost_usd == Decimal("0.000360")
    assert call.latency_ms >= 30
    assert call.parsed == GOOD
    assert json.loads(call.raw_response)["choices"][0]["message"]["content"] == json.dumps(GOOD)
    assert call.parameters["temperature"] == 0.1
    assert call.request["response_format"] == "json_schema"
    assert "Cooking stream" in json.dumps(call.request["messages"])

    sent = fake_openai.requests(endpoint="chat")[0]
    assert sent.body["temperature"] == 0.1
    assert sent.schema == template.response_schema
    assert sent.headers["authorization"] == "Bearer sk-fake-test-key"
    assert sent.user == f"vidqa:complexity:project-{project.pk}"


def test_malformed_json_is_repaired_once(db, project, llm_settings, fake_openai):
    fake_openai.script("Cooking stream", [Reply.text('Sure! {"score": 6, "reason": '), Reply.json(GOOD)])

    result = complexity(project)

    assert result.parsed == GOOD
    call = result.call
    assert (call.outcome, call.attempts) == (CallOutcome.REPAIRED, 2)
    assert "not valid JSON" in call.request["repair"]["problem"]
    repair = fake_openai.requests(endpoint="chat")[1]
    assert repair.messages[-2] == {"role": "assistant", "content": 'Sure! {"score": 6, "reason": '}
    assert "not valid JSON" in repair.messages[-1]["content"]


def test_schema_violation_is_shown_to_the_model_and_repaired(db, project, llm_settings, fake_openai):
    fake_openai.script(None, [Reply.json({"score": 42, "reason": "busy"}), Reply.json(GOOD)])

    result = complexity(project)

    assert result.call.outcome == CallOutcome.REPAIRED
    problem = result.call.request["repair"]["problem"]
    assert "at score: 42 is greater than the maximum of 10" in problem
    assert "42 is greater than the maximum of 10" in fake_openai.requests()[1].messages[-1]["content"]


def test_answer_in_code_fences_needs_no_repair(db, project, llm_settings, fake_openai):
    fake_openai.script(None, [Reply.text("```json\n" + json.dumps(GOOD) + "\n```")])

    assert complexity(project).call.outcome == CallOutcome.OK


def test_malformed_twice_raises_with_the_call_marked_invalid(db, project, llm_settings, fake_openai):
    fake_openai.script(None, [Reply.text("not json"), Reply.text("still not json")])

    with pytest.raises(LLMError) as caught:
        complexity(project)

    call = caught.value.call
    assert call == LLMCall.objects.get()
    assert (call.outcome, call.attempts, call.parsed) == (CallOutcome.INVALID, 2, None)
    assert "no usable answer after one repair" in call.error
    assert "not valid JSON" in str(caught.value)
    assert call.request["repair"]["first_answer"] == "not json"
    assert json.loads(call.raw_response)["choices"][0]["message"]["content"] == "still not json"


def test_truncated_answer_is_repaired(db, project, llm_settings, fake_openai):
    fake_openai.script(None, [Reply.truncated(GOOD, keep=0.6), Reply.json(GOOD)])

    result = complexity(project)

    assert (result.parsed, result.call.outcome) == (GOOD, CallOutcome.REPAIRED)
    assert "cut off" in result.call.request["repair"]["problem"]
    assert "finish_reason=length" in fake_openai.requests()[1].messages[-1]["content"]


def test_truncated_twice_is_invalid(db, project, llm_settings, fake_openai):
    fake_openai.script(None, [Reply.truncated(GOOD), Reply.truncated(GOOD)])

    with pytest.raises(LLMError) as caught:
        complexity(project)

    assert caught.value.call.outcome == CallOutcome.INVALID
    assert "cut off" in caught.value.call.error


# --- Transport failures ---------------------------------------------------------------------------


def test_rate_limit_then_success_honours_retry_after(db, project, llm_settings, fake_openai, pauses):
    fake_openai.script(None, [Reply.status(429, retry_after=0.25), Reply.json(GOOD)])

    result = complexity(project)

    call = result.call
    assert (call.outcome, call.attempts) == (CallOutcome.OK, 2)
    assert pauses == [0.25]
    assert [a.get("status") for a in call.request["attempt_log"]] == [429, 200]
    assert len(fake_openai.requests()) == 2


def test_retry_after_longer_than_the_cap_gives_up_at_once(db, project, llm_settings, fake_openai, pauses):
    llm_settings.LLM_RETRY_AFTER_MAX_S = 5
    fake_openai.always(None, Reply.status(429, retry_after=3600))

    with pytest.raises(LLMError) as caught:
        complexity(project)

    assert caught.value.call.outcome == CallOutcome.RATE_LIMITED
    assert "asks to wait 3600 s" in caught.value.message
    assert len(fake_openai.requests()) == 1
    assert pauses == []


def test_out_of_quota_is_not_retried(db, project, llm_settings, fake_openai, pauses):
    fake_openai.always(None, Reply.status(429, message="You exceeded your quota.", error_code="insufficient_quota"))

    with pytest.raises(LLMError, match="out of quota") as caught:
        complexity(project)

    assert (caught.value.call.outcome, caught.value.call.attempts) == (CallOutcome.RATE_LIMITED, 1)
    assert pauses == []


def test_unexpected_failure_is_still_recorded(db, project, llm_settings, fake_openai, monkeypatch):
    def broken_slot(*args, **kwargs):
        raise RuntimeError("redis went away")

    monkeypatch.setattr(llm_client, "endpoint_slot", broken_slot)

    with pytest.raises(LLMError, match="unexpected RuntimeError: redis went away") as caught:
        complexity(project)

    assert caught.value.call == LLMCall.objects.get(outcome=CallOutcome.ERROR)
    assert isinstance(caught.value.__cause__, RuntimeError)


def test_rate_limited_until_giving_up(db, project, llm_settings, fake_openai, pauses):
    fake_openai.always(None, Reply.status(429))

    with pytest.raises(LLMError) as caught:
        complexity(project)

    assert (caught.value.call.outcome, caught.value.call.attempts) == (CallOutcome.RATE_LIMITED, 3)


def test_server_errors_until_giving_up_back_off_exponentially(db, project, llm_settings, fake_openai, pauses):
    llm_settings.LLM_RETRY_BASE_S = 1.0
    llm_settings.LLM_RETRY_MAX_S = 60.0
    fake_openai.always(None, Reply.status(500))

    with pytest.raises(LLMError) as caught:
        complexity(project)

    call = caught.value.call
    assert (call.outcome, call.attempts) == (CallOutcome.ERROR, 3)
    assert "gave up after 3 attempts" in call.error and "HTTP 500" in call.error
    assert "server had an error" in call.error
    assert len(fake_openai.requests()) == 3
    # base * 2**(n-1), jittered down by at most half.
    assert len(pauses) == 2
    assert 0.5 <= pauses[0] <= 1.0 and 1.0 <= pauses[1] <= 2.0


def test_backoff_is_capped(db, project, llm_settings, fake_openai, pauses):
    llm_settings.LLM_MAX_ATTEMPTS = 6
    llm_settings.LLM_RETRY_BASE_S = 1.0
    llm_settings.LLM_RETRY_MAX_S = 3.0
    fake_openai.always(None, Reply.status(503))

    with pytest.raises(LLMError):
        complexity(project)

    assert len(pauses) == 5 and max(pauses) <= 3.0


def test_server_error_then_success(db, project, llm_settings, fake_openai):
    fake_openai.script(None, [Reply.status(502), Reply.status(503), Reply.json(GOOD)])

    assert complexity(project).call.attempts == 3


def test_client_errors_are_not_retried(db, project, llm_settings, fake_openai):
    fake_openai.always(None, Reply.status(404, message="The model `nope` does not exist."))

    with pytest.raises(LLMError) as caught:
        complexity(project, model="nope")

    assert caught.value.call.attempts == 1
    assert "The model `nope` does not exist" in caught.value.call.error
    assert len(fake_openai.requests()) == 1


def test_timeout_is_retried_then_recorded_as_timeout(db, project, llm_settings, fake_openai):
    llm_settings.LLM_TIMEOUT_S = 0.3
    llm_settings.LLM_MAX_ATTEMPTS = 2
    fake_openai.always(None, Reply.delay(5))

    with pytest.raises(LLMError) as caught:
        complexity(project)

    call = caught.value.call
    assert (call.outcome, call.attempts) == (CallOutcome.TIMEOUT, 2)
    assert "no answer within 0.3 s" in call.error
    assert len(fake_openai.requests()) == 2


def test_timeout_then_success(db, project, llm_settings, fake_openai):
    llm_settings.LLM_TIMEOUT_S = 0.3
    fake_openai.script(None, [Reply.delay(5, then=Reply.json(GOOD)), Reply.json(GOOD)])

    result = complexity(project)

    assert (result.call.outcome, result.call.attempts) == (CallOutcome.OK, 2)


def test_dropped_connection_is_retried(db, project, llm_settings, fake_openai):
    fake_openai.script(None, [Reply.disconnect(), Reply.json(GOOD)])

    result = complexity(project)

    assert (result.call.outcome, result.call.attempts) == (CallOutcome.OK, 2)
    assert "connection failed" in result.call.request["attempt_log"][0]["error"]


# --- What is sent ---------------------------------------------------------------------------------


def test_images_are_sent_as_data_urls_and_recorded_as_sizes(db, project, llm_settings, fake_openai):
    frames = [b"\xff\xd8\xff\xe0" + bytes([i]) * (100 + i) + b"\xff\xd9" for i in range(3)]

    result = complexity(project, images=frames, context={**COMPLEXITY_CONTEXT, "frame_count": 3})

    sent = fake_openai.requests(endpoint="chat")[0]
    assert sent.images == frames
    assert all(url.startswith("data:image/jpeg;base64,") for url in sent.image_urls)
    assert sent.model == "gpt-4o"  # the vision default, since frames were sent
    call = result.call
    assert call.request["images"] == {"count": 3, "bytes": [106, 107, 108], "total_bytes": 321}
    user_parts = call.request["messages"][1]["content"]
    assert [p["type"] for p in user_parts] == ["text", "image", "image", "image"]
    assert "base64" not in json.dumps(call.request)


def test_project_model_choice_and_unknown_price(db, llm_settings, fake_openai):
    project = factories.ProjectFactory(models_per_step={"complexity": "local-llava"})

    call = complexity(project).call

    assert fake_openai.requests()[0].model == call.model == "local-llava"
    assert call.cost_usd == 0
    assert "no price known for model 'local-llava'" in call.request["cost_note"]


def test_explicit_model_wins(db, project, llm_settings, fake_openai):
    call = complexity(project, model="gpt-4o-2024-08-06").call

    assert call.model == "gpt-4o-2024-08-06"
    assert call.cost_usd > 0  # a dated snapshot is priced as its family


def test_project_template_is_used_and_its_version_recorded(db, project, llm_settings, fake_openai):
    template = template_update(
        project=project,
        key="complexity",
        body="Rate {title} from 1 to 10, as JSON.",
        schema={"type": "object", "required": ["score"], "properties": {"score": {"type": "integer"}}},
    )
    fake_openai.script(None, [Reply.json({"score": 3})])

    call = complexity(project).call

    assert fake_openai.requests()[0].text.endswith("Rate Cooking stream from 1 to 10, as JSON.")
    assert (call.template, call.template_version) == (template, template.version)
    assert template.version == 2


def test_missing_context_is_a_recorded_error_and_nothing_is_sent(db, project, llm_settings, fake_openai):
    with pytest.raises(LLMError) as caught:
        complexity(project, context={"title": "x"})

    call = caught.value.call
    assert (call.outcome, call.attempts) == (CallOutcome.ERROR, 0)
    assert "needs comments, duration, frame_count, subtitles" in call.error
    assert fake_openai.requests() == []


def test_unknown_template_key_is_a_clear_error(db, project, llm_settings, fake_openai):
    with pytest.raises(LLMError) as caught:
        chat_json(project=project, step="x", template_key="no_such_step", context={})

    assert "no active prompt template 'no_such_step'" in caught.value.message
    assert caught.value.call.outcome == CallOutcome.ERROR


def test_endpoint_without_json_schema_falls_back_and_remembers(db, project, llm_settings, fake_openai):
    fake_openai.reject_json_schema = True

    first = complexity(project)
    second = complexity(project)

    kinds = [(r.response_format or {}).get("type") for r in fake_openai.requests()]
    assert kinds == ["json_schema", "json_object", "json_object"]
    assert (first.call.outcome, first.call.attempts, first.call.request["response_format"]) == (
        CallOutcome.OK,
        2,
        "json_object",
    )
    assert second.call.attempts == 1
    # Without schema-constrained output the schema travels in the system message.
    assert '"maximum": 10' in fake_openai.requests()[1].messages[0]["content"]


def test_default_answers_of_the_fake_satisfy_every_default_schema(db, project, llm_settings, fake_openai):
    # The fake answers schema-valid JSON unscripted, so whole pipelines run against it.
    result = complexity(project)

    assert result.call.outcome == CallOutcome.OK
    assert 1 <= result.parsed["score"] <= 10


# --- Concurrency ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shared", [True, False], ids=["redis", "process-local"])
def test_concurrency_limit_per_endpoint(transactional_db, settings, fake_openai, shared):
    if shared:
        assert settings.REDIS_URL, "the harness provides Redis; run through scripts/test.sh"
    else:
        settings.REDIS_URL = ""
    settings.LLM_CONCURRENCY = 2
    fake_openai.latency_ms = 150
    project = factories.ProjectFactory()
    errors: list[BaseException] = []

    def one_call():
        try:
            complexity(project)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=one_call) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)

    assert errors == []
    assert len(fake_openai.requests()) == 6
    assert fake_openai.max_in_flight == 2
    assert LLMCall.objects.filter(outcome=CallOutcome.OK).count() == 6
    assert slots_in_use(fake_openai.base_url) == 0


def test_redis_slot_of_a_crashed_holder_expires(settings):
    assert settings.REDIS_URL, "the harness provides Redis; run through scripts/test.sh"
    endpoint = "http://lease-test.invalid/v1"
    client = _redis(settings.REDIS_URL)
    key = _slot_key(endpoint)
    client.delete(key)
    now_ms = int(client.time()[0]) * 1000
    try:
        client.zadd(key, {"live-holder": now_ms + 600_000})
        with pytest.raises(SlotTimeout, match="no free slot"), endpoint_slot(endpoint, limit=1, wait_s=0.2, lease_s=5):
            pass

        # A holder whose lease ran out (its worker died) no longer counts.
        client.zadd(key, {"live-holder": now_ms - 1})
        with endpoint_slot(endpoint, limit=1, wait_s=0.2, lease_s=5):
            assert slots_in_use(endpoint) == 1
        assert slots_in_use(endpoint) == 0
    finally:
        client.delete(key, key + ":wake")


def test_waiting_for_a_slot_too_long_is_a_recorded_error(db, project, settings, llm_settings, fake_openai):
    settings.REDIS_URL = ""
    settings.LLM_CONCURRENCY = 1
    settings.LLM_SLOT_WAIT_S = 0.1
    with endpoint_slot(fake_openai.base_url, limit=1, wait_s=1, lease_s=5), pytest.raises(LLMError) as caught:
        complexity(project)

    assert "no free slot" in caught.value.call.error
    assert fake_openai.requests() == []


# --- Transcription --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def audio_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("audio") / "speech.m4a"
    subprocess.run(
        [
            "ffmpeg",
            "-hide_banner",
            "-loglevel",
            "error",
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:duration=2",
            "-c:a",
            "aac",
            str(path),
        ],
        check=True,
    )
    return path


def test_transcribe_returns_segments(db, project, llm_settings, fake_openai, audio_file):
    segments = [(0.0, 0.8, "Hello there."), (0.8, 1.9, " How are you? ")]
    fake_openai.script(None, [Reply.transcript(segments, language="english")], endpoint="transcription")

    result, call = transcribe(project=project, audio_path=audio_file, language="en")

    assert result == [(0.0, 0.8, "Hello there."), (0.8, 1.9, "How are you?")]
    sent = fake_openai.requests(endpoint="transcription")[0]
    assert sent.form["response_format"] == "verbose_json"
    assert sent.form["language"] == "en"
    assert sent.form["timestamp_granularities"] == ["segment"]
    size = audio_file.stat().st_size
    assert sent.files["file"] == {"filename": "speech.m4a", "size": size, "content_type": "audio/mp4"}
    assert (call.step, call.model, call.outcome, call.attempts) == ("transcribe", "whisper-1", CallOutcome.OK, 1)
    assert call.parsed["segments"] == [[0.0, 0.8, "Hello there."], [0.8, 1.9, "How are you?"]]
    assert call.parsed["language"] == "english"
    # whisper-1: $0.006 per minute of audio, 1.9 s.
    assert call.cost_usd == Decimal("0.000190")


def test_transcribe_text_only_answer_becomes_one_segment(db, project, llm_settings, fake_openai, audio_file):
    fake_openai.script(None, [Reply.transcript(None, text="Hello there.")])

    result, _call = transcribe(project=project, audio_path=audio_file)

    assert len(result) == 1
    start, end, text = result[0]
    assert (start, text) == (0.0, "Hello there.")
    assert end == pytest.approx(2.0, abs=0.1)  # the audio's own duration


def test_transcribe_falls_back_when_verbose_json_is_refused(db, project, llm_settings, fake_openai, audio_file):
    fake_openai.reject_verbose_json = True

    result, call = transcribe(project=project, audio_path=audio_file)

    formats = [r.form["response_format"] for r in fake_openai.requests()]
    assert formats == ["verbose_json", "json"]
    assert len(result) == 1 and result[0][2] == "Hello and welcome. Today we look at the video."
    assert call.attempts == 2


def test_transcribe_retries_server_errors(db, project, llm_settings, fake_openai, audio_file):
    fake_openai.script(None, [Reply.status(500), Reply.transcript()])

    result, call = transcribe(project=project, audio_path=audio_file)

    assert call.attempts == 2 and len(result) == 2
    sizes = [r.files["file"]["size"] for r in fake_openai.requests()]
    assert sizes == [audio_file.stat().st_size] * 2  # the retry sent the whole file again


def test_transcribe_missing_or_oversized_file_is_a_clear_error(db, project, llm_settings, fake_openai, audio_file):
    with pytest.raises(LLMError, match="audio file not found"):
        transcribe(project=project, audio_path=audio_file.with_name("missing.m4a"))
    llm_settings.LLM_TRANSCRIBE_MAX_BYTES = 100
    with pytest.raises(LLMError, match="takes at most") as caught:
        transcribe(project=project, audio_path=audio_file)

    assert caught.value.call.outcome == CallOutcome.ERROR
    assert fake_openai.requests() == []
    assert LLMCall.objects.filter(step="transcribe", outcome=CallOutcome.ERROR).count() == 2
