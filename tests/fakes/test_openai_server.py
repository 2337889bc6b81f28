"""The fake OpenAI server itself: the SDK talks to it, scripts route by marker, standalone mode works."""

import base64
import json
import os
import signal
import subprocess
import sys
import threading

import openai
import pytest

from scripts.loopback_services import REPO, free_port
from tests.fakes.openai_server import FakeOpenAIRemote, FakeOpenAIServer, Reply


def sdk(server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0, timeout=10)


def ask(client, text: str, **kwargs) -> str:
    response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": text}], **kwargs)
    return response.choices[0].message.content


def test_markers_route_parallel_requests_to_their_own_scripts():
    with FakeOpenAIServer(latency_ms=20) as server:
        for n in range(5):
            server.script(f"job-{n}", [Reply.json({"n": n}), Reply.json({"n": n, "second": True})])
        client = sdk(server)
        answers: dict[int, list] = {}

        def run(n):
            answers[n] = [json.loads(ask(client, f"Work for job-{n}.")) for _ in range(2)]

        threads = [threading.Thread(target=run, args=(n,)) for n in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)

        assert answers == {n: [{"n": n}, {"n": n, "second": True}] for n in range(5)}
        assert server.pending() == 0
        assert len(server.requests(match="job-3")) == 2
        # Exhausted scripts fall through to the default answer.
        assert ask(client, "job-1 again") == "ok"


def test_default_answer_follows_the_requested_schema_and_usage_is_reported():
    schema = {
        "type": "object",
        "required": ["score", "tags"],
        "properties": {
            "score": {"type": "integer", "minimum": 1, "maximum": 10},
            "tags": {"type": "array", "minItems": 2, "items": {"type": "string", "enum": ["a", "b"]}},
        },
    }
    with FakeOpenAIServer() as server:
        response = sdk(server).chat.completions.create(
            model="gpt-4o",
            messages=[{"role": "user", "content": "rate it"}],
            response_format={"type": "json_schema", "json_schema": {"name": "rating", "schema": schema}},
        )

    assert json.loads(response.choices[0].message.content) == {"score": 6, "tags": ["a", "a"]}
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
    assert response.usage.total_tokens == response.usage.prompt_tokens + response.usage.completion_tokens


def test_errors_come_in_openai_shape_with_retry_after():
    with FakeOpenAIServer() as server:
        server.script(None, [Reply.status(429, retry_after=2), Reply.status(500)])
        client = sdk(server)

        with pytest.raises(openai.RateLimitError) as limited:
            ask(client, "x")
        with pytest.raises(openai.InternalServerError):
            ask(client, "x")

    assert limited.value.response.headers["retry-after"] == "2"
    assert limited.value.body["message"] == "Rate limit reached for requests."


def test_truncated_reply_reports_finish_reason_length():
    with FakeOpenAIServer() as server:
        server.script(None, [Reply.truncated({"long": "x" * 40}, keep=0.5)])
        response = sdk(server).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])

    choice = response.choices[0]
    assert choice.finish_reason == "length"
    with pytest.raises(ValueError):  # noqa: PT011 - any JSON error
        json.loads(choice.message.content)


def test_request_log_keeps_images_and_in_flight_peak():
    with FakeOpenAIServer(latency_ms=100) as server:
        client = sdk(server)
        images = [b"\xff\xd8\x00\x01", b"\xff\xd8\x00\x02"]
        content = [
            {"type": "text", "text": "look"},
            *(
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + base64.b64encode(i).decode()}}
                for i in images
            ),
        ]
        threads = [
            threading.Thread(
                target=client.chat.completions.create,
                kwargs={
                    "model": "m",
                    "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": content}],
                },
            )
            for _ in range(3)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)

        log = server.requests(endpoint="chat")
        assert len(log) == 3
        assert log[0].images == images
        assert log[0].text == "sys\nlook"
        assert server.max_in_flight == 3
        assert server.in_flight == 0


def test_transcription_formats():
    with FakeOpenAIServer() as server:
        server.script(None, [Reply.transcript([(0, 1, "One."), (1, 2.5, "Two.")])] * 3, endpoint="transcription")
        client = sdk(server)
        audio = ("a.wav", b"RIFF0000WAVE", "audio/wav")
        verbose = client.audio.transcriptions.create(file=audio, model="whisper-1", response_format="verbose_json")
        plain = client.audio.transcriptions.create(file=audio, model="whisper-1", response_format="text")
        srt = client.audio.transcriptions.create(file=audio, model="whisper-1", response_format="srt")

    assert [(s.start, s.end, s.text) for s in verbose.segments] == [(0, 1, "One."), (1, 2.5, "Two.")]
    assert verbose.duration == 2.5
    assert plain.strip() == "One. Two."
    assert "00:00:01,000 --> 00:00:02,500" in srt


def test_standalone_server_is_scriptable_from_another_process():
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.openai_server", "--port", str(port), "--latency-ms", "50"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        line = proc.stdout.readline()
        assert line.strip() == f"fake-openai listening on http://127.0.0.1:{port}/v1", proc.stderr.read()
        base_url = f"http://127.0.0.1:{port}/v1"
        remote = FakeOpenAIRemote(base_url)
        remote.script("bench-7", [Reply.json({"done": 7})])
        client = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0, timeout=10)

        assert json.loads(ask(client, "run bench-7")) == {"done": 7}
        assert ask(client, "anything else") == "ok"
        assert [m.id for m in client.models.list()][:2] == ["gpt-4o", "gpt-4o-mini"]
        stats = remote.stats()
        assert (stats["requests"], stats["latency_ms"], stats["pending"]) == (3, 50, 0)
        assert [r["text"] for r in remote.requests() if r["endpoint"] == "chat"] == ["run bench-7", "anything else"]
        remote.reset()
        assert remote.stats()["requests"] == 0
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
