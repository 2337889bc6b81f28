"""A fake OpenAI-compatible HTTP server on loopback, for tests and benchmarks.

It speaks enough of the OpenAI API for the `openai` SDK: chat completions (text and image_url
content parts, `response_format` json_schema / json_object), audio transcriptions (multipart;
json, text, verbose_json with segments, srt, vtt) and the model list. Everything is a real HTTP
exchange over a socket, so the code under test runs exactly as it does against a real endpoint.

Scripting: rules match a marker in the request (a substring of the message texts, the `user`
field, `metadata`, the model name or the transcription form fields; or a predicate), and hand
out their replies in order::

    server.script("step=judge", [Reply.status(429, retry_after=0), Reply.json({"overall": 95})])
    server.script(None, [Reply.text("not json")])          # the next request, whatever it is
    server.always("clip-7", Reply.status(500))              # until reset
    server.set_default(lambda req: Reply.json({...}))       # when no rule matches

Without a rule, a chat request with a json_schema gets a schema-valid example answer, so a whole
pipeline runs against the fake with no script at all.

Every request is logged (`server.requests()`), with the peak number handled at once
(`server.max_in_flight`) and an optional fixed latency per request (`latency_ms`).

Standalone, for benchmarks and worker processes::

    python -m tests.fakes.openai_server --port 8765 --latency-ms 50

A standalone server is scripted over HTTP by `FakeOpenAIRemote` (the `/_fake/...` endpoints).
"""

from __future__ import annotations

import argparse
import base64
import binascii
import email.parser
import email.policy
import json
import math
import signal
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_MODELS = ("gpt-4o", "gpt-4o-mini", "whisper-1", "fake-vision")
DEFAULT_SEGMENTS = ((0.0, 1.5, "Hello and welcome."), (1.5, 3.25, "Today we look at the video."))
# Roughly what OpenAI bills for a low-detail image; only used to make usage numbers plausible.
TOKENS_PER_IMAGE = 85


# --- Replies ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Build with the class methods, not the constructor."""

    kind: str  # chat | status | delay | disconnect | transcript
    content: str | None = None
    finish_reason: str = "stop"
    http_status: int = 200
    message: str = ""
    retry_after: float | None = None
    error_code: str | None = None
    delay_s: float = 0.0
    usage: dict | None = None
    segments: tuple | None = None
    transcript_text: str | None = None
    language: str = "en"
    then: Reply | None = None

    @classmethod
    def json(cls, obj: Any, *, usage: dict | None = None, finish_reason: str = "stop") -> Reply:
        """A chat answer whose content is `obj` serialised as JSON."""
        return cls("chat", content=json.dumps(obj, ensure_ascii=False), usage=usage, finish_reason=finish_reason)

    @classmethod
    def text(cls, content: str, *, usage: dict | None = None, finish_reason: str = "stop") -> Reply:
        """A chat answer with exactly this content (e.g. prose or broken JSON)."""
        return cls("chat", content=content, usage=usage, finish_reason=finish_reason)

    @classmethod
    def truncated(cls, obj_or_text: Any, *, keep: float = 0.5, usage: dict | None = None) -> Reply:
        """An answer cut off at the token limit: the first `keep` of the text, finish_reason=length."""
        full = obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text, ensure_ascii=False)
        cut = max(1, min(len(full) - 1, int(len(full) * keep)))
        return cls("chat", content=full[:cut], finish_reason="length", usage=usage)

    @classmethod
    def status(
        cls,
        code: int,
        *,
        message: str | None = None,
        retry_after: float | None = None,
        error_code: str | None = None,
    ) -> Reply:
        """An HTTP error in OpenAI's error shape; `retry_after` sets the Retry-After headers.

        `error_code` fills error.code and error.type, e.g. "insufficient_quota" for a 429 that waiting won't cure.
        """
        message = message or _default_error_message(code)
        return cls("status", http_status=code, message=message, retry_after=retry_after, error_code=error_code)

    @classmethod
    def delay(cls, seconds: float, then: Reply | None = None) -> Reply:
        """Wait, then answer with `then` (or the default answer). Longer than the client's timeout = a timeout."""
        return cls("delay", delay_s=seconds, then=then)

    @classmethod
    def disconnect(cls) -> Reply:
        """Close the connection without answering (the client sees a connection error)."""
        return cls("disconnect")

    @classmethod
    def transcript(
        cls,
        segments: Iterable[tuple[float, float, str]] | None = DEFAULT_SEGMENTS,
        *,
        text: str | None = None,
        language: str = "en",
    ) -> Reply:
        """A transcription. `segments=None` answers with text only, as servers without verbose_json do."""
        segs = None if segments is None else tuple((float(s), float(e), str(t)) for s, e, t in segments)
        if text is None:
            text = " ".join(t for _, _, t in segs or ())
        return cls("transcript", segments=segs, transcript_text=text, language=language)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["then"] = self.then.to_dict() if self.then else None
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Reply:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown reply fields: {', '.join(sorted(unknown))}")
        data = dict(data)
        if data.get("then"):
            data["then"] = cls.from_dict(data["then"])
        if data.get("segments") is not None:
            data["segments"] = tuple(tuple(s) for s in data["segments"])
        return cls(**data)


def _default_error_message(code: int) -> str:
    return {
        400: "Invalid request.",
        401: "Incorrect API key provided.",
        404: "Not found.",
        429: "Rate limit reached for requests.",
        500: "The server had an error while processing your request.",
        502: "Bad gateway.",
        503: "The engine is currently overloaded, please try again later.",
    }.get(code, f"HTTP {code}")


def _error_type(code: int) -> str:
    if code == 429:
        return "rate_limit_exceeded"
    if code >= 500:
        return "server_error"
    if code == 401:
        return "authentication_error"
    return "invalid_request_error"


# --- The request log --------------------------------------------------------------------------


@dataclass
class RecordedRequest:
    """One request as the server saw it; image bytes are decoded for assertions."""

    seq: int
    method: str
    path: str
    endpoint: str  # chat | transcription | models | other
    headers: dict[str, str]
    body: Any = None
    form: dict[str, Any] = field(default_factory=dict)
    files: dict[str, dict] = field(default_factory=dict)
    started: float = 0.0
    finished: float | None = None
    reply_kind: str | None = None
    status: int | None = None
    rule: str | None = None

    @property
    def messages(self) -> list[dict]:
        return (self.body or {}).get("messages", []) if isinstance(self.body, dict) else []

    @property
    def model(self) -> str:
        if isinstance(self.body, dict):
            return str(self.body.get("model", ""))
        return str(self.form.get("model", ""))

    @property
    def user(self) -> str:
        return str((self.body or {}).get("user", "")) if isinstance(self.body, dict) else ""

    @property
    def response_format(self) -> dict | None:
        return (self.body or {}).get("response_format") if isinstance(self.body, dict) else None

    @property
    def schema(self) -> dict | None:
        rf = self.response_format or {}
        if rf.get("type") == "json_schema":
            return (rf.get("json_schema") or {}).get("schema")
        return None

    def _parts(self) -> Iterable[dict]:
        for message in self.messages:
            content = message.get("content")
            if isinstance(content, str):
                yield {"type": "text", "text": content, "role": message.get("role")}
            elif isinstance(content, list):
                for part in content:
                    if isinstance(part, dict):
                        yield {**part, "role": message.get("role")}

    @property
    def text(self) -> str:
        """Every text part of every message, system included, joined by newlines."""
        return "\n".join(str(p.get("text", "")) for p in self._parts() if p.get("type") == "text")

    @property
    def image_urls(self) -> list[str]:
        urls = []
        for part in self._parts():
            if part.get("type") == "image_url":
                image = part.get("image_url")
                urls.append(image.get("url", "") if isinstance(image, dict) else str(image))
        return urls

    @property
    def images(self) -> list[bytes]:
        """Decoded bytes of every data-URL image (remote URLs decode to b"")."""
        out = []
        for url in self.image_urls:
            if url.startswith("data:") and "," in url:
                try:
                    out.append(base64.b64decode(url.split(",", 1)[1], validate=True))
                except (binascii.Error, ValueError):
                    out.append(b"")
            else:
                out.append(b"")
        return out

    @property
    def marker_text(self) -> str:
        """What string rules search: texts, user, metadata, model and form fields; never image bytes."""
        pieces = [self.text, self.user, self.model]
        if isinstance(self.body, dict) and self.body.get("metadata"):
            pieces.append(json.dumps(self.body["metadata"], ensure_ascii=False))
        pieces += [f"{k}={v}" for k, v in self.form.items()]
        pieces += [f.get("filename", "") for f in self.files.values()]
        return "\n".join(pieces)

    def summary(self) -> dict:
        """A JSON-able digest for the remote log (no image bytes)."""
        return {
            "seq": self.seq,
            "method": self.method,
            "path": self.path,
            "endpoint": self.endpoint,
            "model": self.model,
            "user": self.user,
            "text": self.text,
            "response_format": self.response_format,
            "image_count": len(self.image_urls),
            "image_sizes": [len(b) for b in self.images],
            "form": self.form,
            "files": self.files,
            "started": self.started,
            "finished": self.finished,
            "reply_kind": self.reply_kind,
            "status": self.status,
            "rule": self.rule,
        }


# --- Scripting --------------------------------------------------------------------------------

Matcher = str | Callable[[RecordedRequest], bool] | None
Responder = Callable[[RecordedRequest], "Reply | dict | list | str"]


@dataclass
class _Rule:
    match: Matcher
    replies: list[Reply]
    repeat: bool
    endpoint: str | None
    used: int = 0

    def describe(self) -> str:
        if self.match is None:
            return "<any>"
        return self.match if isinstance(self.match, str) else getattr(self.match, "__name__", "<predicate>")

    def matches(self, request: RecordedRequest) -> bool:
        if self.endpoint and request.endpoint != self.endpoint:
            return False
        if not self.repeat and self.used >= len(self.replies):
            return False
        if self.match is None:
            return True
        if isinstance(self.match, str):
            return self.match in request.marker_text
        return bool(self.match(request))

    def take(self) -> Reply:
        reply = self.replies[min(self.used, len(self.replies) - 1)]
        self.used += 1
        return reply


def example_from_schema(schema: dict | None, name: str = "value") -> Any:
    """A small instance that satisfies common JSON Schemas (what a cooperative model would send)."""
    if not isinstance(schema, dict):
        return {}
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return example_from_schema(schema[key][0], name)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        props = schema.get("properties", {})
        return {key: example_from_schema(sub, key) for key, sub in props.items()}
    if kind == "array":
        count = max(int(schema.get("minItems", 1)), 1)
        if "maxItems" in schema:
            count = min(count, int(schema["maxItems"]))
        return [example_from_schema(schema.get("items", {}), name) for _ in range(count)]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        high = schema.get("maximum", schema.get("exclusiveMaximum", low + 10))
        value = (low + high) / 2
        return int(math.ceil(value)) if kind == "integer" else float(value)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    text = f"Example {name.replace('_', ' ')}."
    min_len = int(schema.get("minLength", 0))
    return text + "x" * max(0, min_len - len(text))


def default_responder(request: RecordedRequest) -> Reply:
    """A cooperative model: schema-valid JSON when asked for JSON, a short text otherwise."""
    if request.endpoint == "transcription":
        return Reply.transcript()
    rf = request.response_format or {}
    if rf.get("type") == "json_schema":
        return Reply.json(example_from_schema(request.schema))
    schema = _schema_in_prompt(request.text)
    if rf.get("type") == "json_object" or schema is not None:
        return Reply.json(example_from_schema(schema) if schema is not None else {"answer": "ok"})
    return Reply.text("ok")


def _schema_in_prompt(text: str) -> dict | None:
    """A JSON Schema written into the prompt (as clients do without structured output), if any."""
    decoder = json.JSONDecoder()
    start = text.find('{"type"')
    while start >= 0:
        try:
            value, _end = decoder.raw_decode(text[start:])
            if isinstance(value, dict) and ("properties" in value or "items" in value):
                return value
        except ValueError:
            pass
        start = text.find('{"type"', start + 1)
    return None


def _as_reply(value: Reply | dict | list | str) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, dict | list):
        return Reply.json(value)
    return Reply.text(str(value))


# --- The server -------------------------------------------------------------------------------


class FakeOpenAIServer:
    """An OpenAI-compatible server in a background thread; see the module docstring."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency_ms: float = 0,
        api_key: str | None = None,
        reject_json_schema: bool = False,
        reject_verbose_json: bool = False,
        models: Iterable[str] = DEFAULT_MODELS,
        control: bool = True,
    ) -> None:
        self.host = host
        self.latency_ms = latency_ms
        self.api_key = api_key  # None accepts any key
        self.reject_json_schema = reject_json_schema
        self.reject_verbose_json = reject_verbose_json
        self.models = list(models)
        self.control = control
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._rules: list[_Rule] = []
        self._default: Responder = default_responder
        self._log: list[RecordedRequest] = []
        self._in_flight = 0
        self._max_in_flight = 0
        self._httpd = _HTTPServer((host, port), _Handler)
        self._httpd.fake = self
        self._thread: threading.Thread | None = None

    # Life cycle.
    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-openai:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever(poll_interval=0.05)

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in a delay
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread:
            self._thread.join(5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # Scripting.
    def script(
        self,
        match: Matcher,
        replies: Reply | Iterable[Reply],
        *,
        repeat: bool = False,
        endpoint: str | None = None,
    ) -> None:
        """Hand out `replies` in order to requests that match; `repeat` keeps giving the last one."""
        replies = [replies] if isinstance(replies, Reply) else list(replies)
        if not replies:
            raise ValueError("a script needs at least one reply")
        for reply in replies:
            if not isinstance(reply, Reply):
                raise TypeError(f"script replies must be Reply objects, got {type(reply).__name__}")
        with self._lock:
            self._rules.append(_Rule(match, replies, repeat, endpoint))

    def always(self, match: Matcher, reply: Reply, *, endpoint: str | None = None) -> None:
        self.script(match, [reply], repeat=True, endpoint=endpoint)

    def set_default(self, responder: Responder | None) -> None:
        """Answer unmatched requests with `responder(request)`; None restores the cooperative default."""
        with self._lock:
            self._default = responder or default_responder

    def reset(self) -> None:
        with self._lock:
            self._rules.clear()
            self._log.clear()
            self._default = default_responder
            self._max_in_flight = self._in_flight

    def pending(self) -> int:
        """Scripted replies not handed out yet (repeating rules count their last reply as pending)."""
        with self._lock:
            return sum(max(0, len(r.replies) - r.used) or (1 if r.repeat else 0) for r in self._rules)

    # Inspection.
    def requests(self, endpoint: str | None = None, match: str | None = None) -> list[RecordedRequest]:
        with self._lock:
            log = list(self._log)
        return [
            r for r in log if (endpoint is None or r.endpoint == endpoint) and (match is None or match in r.marker_text)
        ]

    @property
    def max_in_flight(self) -> int:
        return self._max_in_flight

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def stats(self) -> dict:
        with self._lock:
            return {
                "requests": len(self._log),
                "in_flight": self._in_flight,
                "max_in_flight": self._max_in_flight,
                "latency_ms": self.latency_ms,
            }

    # Internals used by the handler.
    def _begin(self, request: RecordedRequest) -> None:
        with self._lock:
            request.seq = len(self._log) + 1
            self._log.append(request)
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)

    def _end(self, request: RecordedRequest) -> None:
        # Called before the last byte goes out, so a client that got its answer is never still counted.
        with self._lock:
            if request.finished is None:
                request.finished = time.monotonic()
                self._in_flight -= 1

    def _choose(self, request: RecordedRequest) -> Reply:
        with self._lock:
            for rule in self._rules:
                if rule.matches(request):
                    request.rule = rule.describe()
                    return rule.take()
            default = self._default
        return _as_reply(default(request))

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    fake: FakeOpenAIServer


class _ClientGone(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects
    server: _HTTPServer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's signature
        pass

    # Routing.
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        fake = self.server.fake
        path = self.path.split("?", 1)[0].rstrip("/")
        try:
            raw = self._read_body()
            if path.startswith("/_fake/") and fake.control:
                self._control(method, path, raw)
                return
            self._api(method, path, raw)
        except _ClientGone:
            self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    # The OpenAI API.
    def _api(self, method: str, path: str, raw: bytes) -> None:
        fake = self.server.fake
        endpoint = {
            ("POST", "/v1/chat/completions"): "chat",
            ("POST", "/v1/audio/transcriptions"): "transcription",
            ("GET", "/v1/models"): "models",
        }.get((method, path), "other")
        request = RecordedRequest(
            seq=0,
            method=method,
            path=path,
            endpoint=endpoint,
            headers={k.lower(): v for k, v in self.headers.items()},
            started=time.monotonic(),
        )
        fake._begin(request)
        try:
            if fake.api_key is not None and request.headers.get("authorization") != f"Bearer {fake.api_key}":
                self._error(request, 401, "Incorrect API key provided.")
                return
            if endpoint == "models":
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in fake.models]
                self._json(request, 200, {"object": "list", "data": data})
                return
            if endpoint == "other":
                self._error(request, 404, f"Unknown endpoint {method} {path}")
                return
            if endpoint == "chat":
                try:
                    request.body = json.loads(raw or b"{}")
                except ValueError:
                    self._error(request, 400, "We could not parse the JSON body of your request.")
                    return
                if not isinstance(request.body, dict) or not isinstance(request.body.get("messages"), list):
                    self._error(request, 400, "'messages' is a required property")
                    return
            else:
                problem = self._parse_multipart(request, raw)
                if problem:
                    self._error(request, 400, problem)
                    return
            fake._sleep(fake.latency_ms / 1000)
            self._answer(request, fake._choose(request))
        finally:
            fake._end(request)

    def _answer(self, request: RecordedRequest, reply: Reply) -> None:
        fake = self.server.fake
        if reply.kind == "delay":
            fake._sleep(reply.delay_s)
            if fake._stopping.is_set():
                raise _ClientGone
            reply = reply.then or _as_reply(fake._default(request))
        request.reply_kind = reply.kind
        if reply.kind == "disconnect":
            fake._end(request)
            self.close_connection = True
            raise _ClientGone
        if reply.kind == "status":
            headers = {}
            if reply.retry_after is not None:
                headers["Retry-After"] = str(int(math.ceil(reply.retry_after)))
                headers["retry-after-ms"] = str(int(reply.retry_after * 1000))
            self._error(request, reply.http_status, reply.message, headers, code=reply.error_code)
            return
        if request.endpoint == "transcription":
            self._transcription(request, reply)
            return
        if reply.kind != "chat":
            self._error(request, 500, f"fake: a {reply.kind} reply cannot answer a chat request")
            return
        rf = request.response_format or {}
        if fake.reject_json_schema and rf.get("type") == "json_schema":
            self._error(
                request,
                400,
                "response_format of type 'json_schema' is not supported by this model.",
                param="response_format",
            )
            return
        self._json(request, 200, self._completion(request, reply))

    def _completion(self, request: RecordedRequest, reply: Reply) -> dict:
        content = reply.content or ""
        prompt_tokens = max(1, math.ceil(len(request.text) / 4)) + TOKENS_PER_IMAGE * len(request.image_urls)
        usage = reply.usage or {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": max(1, math.ceil(len(content) / 4)),
        }
        usage = {**usage, "total_tokens": usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)}
        return {
            "id": f"chatcmpl-fake-{request.seq}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model,
            "system_fingerprint": "fake",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "finish_reason": reply.finish_reason,
                    "logprobs": None,
                }
            ],
            "usage": usage,
        }

    def _parse_multipart(self, request: RecordedRequest, raw: bytes) -> str | None:
        content_type = self.headers.get("Content-Type", "")
        if not content_type.startswith("multipart/form-data"):
            return "Transcriptions take multipart/form-data."
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw
        )
        if not message.is_multipart():
            return "Malformed multipart body."
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if not name:
                continue
            payload = part.get_payload(decode=True) or b""
            filename = part.get_filename()
            if filename is not None:
                request.files[name] = {
                    "filename": filename,
                    "size": len(payload),
                    "content_type": part.get_content_type(),
                }
            elif name.endswith("[]"):
                request.form.setdefault(name[:-2], []).append(payload.decode("utf-8", "replace"))
            else:
                request.form[name] = payload.decode("utf-8", "replace")
        if "file" not in request.files:
            return "'file' is a required property"
        if not request.form.get("model"):
            return "'model' is a required property"
        return None

    def _transcription(self, request: RecordedRequest, reply: Reply) -> None:
        fake = self.server.fake
        if reply.kind != "transcript":
            self._error(request, 500, f"fake: a {reply.kind} reply cannot answer a transcription request")
            return
        fmt = request.form.get("response_format", "json")
        if fmt == "verbose_json" and fake.reject_verbose_json:
            self._error(
                request,
                400,
                f"response_format 'verbose_json' is not compatible with model '{request.model}'.",
                param="response_format",
            )
            return
        text = reply.transcript_text or ""
        segments = reply.segments
        if fmt == "text":
            self._send(request, 200, text.encode(), "text/plain; charset=utf-8")
            return
        if fmt in ("srt", "vtt"):
            self._send(request, 200, _subtitles(segments or ((0.0, 1.0, text),), fmt).encode(), "text/plain")
            return
        if fmt != "verbose_json":
            self._json(request, 200, {"text": text, "usage": {"type": "duration", "seconds": 1}})
            return
        body: dict[str, Any] = {
            "task": "transcribe",
            "language": reply.language,
            "text": text,
            "duration": segments[-1][1] if segments else 0.0,
        }
        if segments is not None:
            body["segments"] = [
                {
                    "id": i,
                    "seek": 0,
                    "start": s,
                    "end": e,
                    "text": t,
                    "tokens": [],
                    "temperature": 0.0,
                    "avg_logprob": -0.2,
                    "compression_ratio": 1.0,
                    "no_speech_prob": 0.01,
                }
                for i, (s, e, t) in enumerate(segments)
            ]
        body["usage"] = {"type": "duration", "seconds": body["duration"]}
        self._json(request, 200, body)

    # Writing answers.
    def _error(
        self,
        request: RecordedRequest | None,
        status: int,
        message: str,
        headers: dict | None = None,
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        body = {"error": {"message": message, "type": code or _error_type(status), "param": param, "code": code}}
        self._json(request, status, body, headers)

    def _json(self, request: RecordedRequest | None, status: int, body: Any, headers: dict | None = None) -> None:
        self._send(request, status, json.dumps(body, ensure_ascii=False).encode(), "application/json", headers)

    def _send(
        self,
        request: RecordedRequest | None,
        status: int,
        payload: bytes,
        content_type: str,
        headers: dict | None = None,
    ) -> None:
        if request is not None:
            request.status = status
            if request.reply_kind is None:
                request.reply_kind = "error" if status >= 400 else request.endpoint
            self.server.fake._end(request)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("x-request-id", f"req_fake_{request.seq if request else 0}")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    # Remote control for a standalone server (never logged, never counted in flight).
    def _control(self, method: str, path: str, raw: bytes) -> None:
        fake = self.server.fake
        try:
            data = json.loads(raw or b"{}")
            if (method, path) == ("POST", "/_fake/script"):
                replies = [Reply.from_dict(r) for r in data["replies"]]
                fake.script(data.get("match"), replies, repeat=bool(data.get("repeat")), endpoint=data.get("endpoint"))
                result: Any = {"ok": True}
            elif (method, path) == ("POST", "/_fake/reset"):
                fake.reset()
                result = {"ok": True}
            elif (method, path) == ("POST", "/_fake/config"):
                for key in ("latency_ms", "reject_json_schema", "reject_verbose_json", "api_key"):
                    if key in data:
                        setattr(fake, key, data[key])
                result = {"ok": True}
            elif (method, path) == ("GET", "/_fake/requests"):
                result = [r.summary() for r in fake.requests()]
            elif (method, path) == ("GET", "/_fake/stats"):
                result = {**fake.stats(), "pending": fake.pending()}
            else:
                self._error(None, 404, f"Unknown control endpoint {method} {path}")
                return
        except (ValueError, KeyError, TypeError) as exc:
            self._error(None, 400, f"bad control request: {exc}")
            return
        self._json(None, 200, result)


def _subtitles(segments: Iterable[tuple[float, float, str]], fmt: str) -> str:
    def stamp(t: float, sep: str) -> str:
        ms = int(round(t * 1000))
        return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d}{sep}{ms % 1000:03d}"

    sep = "," if fmt == "srt" else "."
    lines = ["WEBVTT", ""] if fmt == "vtt" else []
    for i, (s, e, t) in enumerate(segments, 1):
        if fmt == "srt":
            lines.append(str(i))
        lines += [f"{stamp(s, sep)} --> {stamp(e, sep)}", t, ""]
    return "\n".join(lines)


# --- Scripting a standalone server from another process ---------------------------------------


class FakeOpenAIRemote:
    """Scripts and inspects a fake server running in another process, over its /_fake endpoints."""

    def __init__(self, base_url: str, timeout: float = 10) -> None:
        self.root = base_url.rstrip("/").removesuffix("/v1")
        self.timeout = timeout

    def _call(self, method: str, path: str, data: Any = None) -> Any:
        body = None if data is None else json.dumps(data).encode()
        req = urllib.request.Request(
            self.root + path, data=body, method=method, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 - loopback URL we were given
            return json.loads(resp.read())

    def script(self, match: str | None, replies: Iterable[Reply], *, repeat: bool = False, endpoint: str | None = None):
        payload = {"match": match, "replies": [r.to_dict() for r in replies], "repeat": repeat, "endpoint": endpoint}
        return self._call("POST", "/_fake/script", payload)

    def reset(self) -> None:
        self._call("POST", "/_fake/reset", {})

    def configure(self, **options: Any) -> None:
        self._call("POST", "/_fake/config", options)

    def requests(self) -> list[dict]:
        return self._call("GET", "/_fake/requests")

    def stats(self) -> dict:
        return self._call("GET", "/_fake/stats")


# --- Standalone -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible server on loopback (tests, benchmarks).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on start)")
    parser.add_argument("--latency-ms", type=float, default=0, help="fixed delay before every API answer")
    parser.add_argument("--api-key", default=None, help="require this bearer key (default: accept any)")
    parser.add_argument("--reject-json-schema", action="store_true", help="answer json_schema requests with 400")
    parser.add_argument("--reject-verbose-json", action="store_true", help="refuse verbose_json transcriptions")
    args = parser.parse_args(argv)
    server = FakeOpenAIServer(
        host=args.host,
        port=args.port,
        latency_ms=args.latency_ms,
        api_key=args.api_key,
        reject_json_schema=args.reject_json_schema,
        reject_verbose_json=args.reject_verbose_json,
    )
    # SIGTERM ends serve_forever cleanly (from another thread: shutdown() waits for the loop).
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.stop, daemon=True).start())
    print(f"fake-openai listening on {server.base_url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._stopping.set()
        server._httpd.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
