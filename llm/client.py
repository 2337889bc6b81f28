"""The one way the app talks to a language model: chat for JSON (with images) and transcription.

Any OpenAI-compatible endpoint works: the project's own (llm.models.ModelEndpoint), else the
environment's (settings.OPENAI_BASE_URL / OPENAI_API_KEY), resolved by llm.endpoints.endpoint_for. The
model is the caller's, else the project's choice for the step, else its endpoint's model for that
use, else the deployment default. Every call
leaves exactly one LLMCall row, successful or not, so a draft can always say where it came from
and a failure can always say why.

What a call survives:
- 429, 5xx, timeouts and dropped connections: retried with exponential backoff and jitter
  (Retry-After honoured), up to LLM_MAX_ATTEMPTS requests;
- malformed, truncated or schema-violating JSON: one repair request that shows the model its
  error and asks for the corrected JSON;
- an endpoint that does not support json_schema output: falls back to json_object, then to a
  prompt-only instruction, and remembers that per endpoint and model.
Requests to one endpoint are limited to LLM_CONCURRENCY at once across all processes.

Tuning settings (all optional; read from Django settings, else the environment):
LLM_MAX_ATTEMPTS (4), LLM_RETRY_BASE_S (1.0), LLM_RETRY_MAX_S (30), LLM_RETRY_AFTER_MAX_S (120),
LLM_CONCURRENCY (4; 0 = unlimited), LLM_CONCURRENCY_PER_ENDPOINT ({url: n}), LLM_SLOT_LEASE_S (how long a
slot a dead process held stays taken; default the call's timeout + 60 s), LLM_SLOT_WAIT_S
(900), LLM_TRANSCRIBE_MAX_BYTES (25 MB), plus LLM_TIMEOUT_S and the LLM_*_MODEL defaults.
"""

from __future__ import annotations

import base64
import json
import logging
import mimetypes
import os
import random
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from functools import partial
from pathlib import Path
from typing import Any

import openai
from django.conf import settings
from django.utils import timezone
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from .concurrency import SlotTimeout, endpoint_slot
from .endpoints import (
    OPENAI_DEFAULT_BASE_URL,
    TRANSCRIBE_STEP,
    Endpoint,
    NoModelEndpoint,
    endpoint_for,
    environment_model,
    use_for_step,
)
from .failures import failure_in_words
from .models import CallOutcome, LLMCall, ModelUse, PromptTemplate
from .pricing import estimate_cost
from .prompts import TemplateRenderError, prompt_template_for_call, template_render

log = logging.getLogger(__name__)


# Chat parameters passed as SDK arguments; anything else a caller sets goes in the request body as is.
_CHAT_PARAMS = frozenset(
    {
        "temperature",
        "top_p",
        "max_tokens",
        "max_completion_tokens",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "stop",
        "reasoning_effort",
        "n",
    }
)
# Parameters that steer this layer rather than the model.
_LOCAL_PARAMS = frozenset({"image_detail", "timeout_s"})

_REPAIR_PROMPT = (
    "Your previous answer cannot be used: {problem}.\n"
    "Reply again with only the complete, corrected JSON object: no prose, no code fences. "
    "Keep it concise enough to fit."
)
_SCHEMA_INSTRUCTION = "\n\nAnswer with a single JSON object that satisfies this JSON Schema:\n{schema}"
_JSON_INSTRUCTION = "\n\nAnswer with a single JSON object."

# Output modes an endpoint may reject, best first; what an endpoint+model rejected is remembered.
_FORMAT_MODES = ("json_schema", "json_object", "prompt")
_format_floor: dict[tuple[str, str], int] = {}
_transcribe_format: dict[tuple[str, str], str] = {}
_clients: dict[tuple[str, str], openai.OpenAI] = {}
_clients_lock = threading.Lock()
# Indirection so tests can see the pauses without waiting for them.
_sleep = time.sleep


class LLMError(Exception):
    """A model call failed for good; `call` is its LLMCall row (None only if it could not be saved)."""

    def __init__(self, message: str, *, call: LLMCall | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.call = call


@dataclass(frozen=True)
class LLMResult:
    parsed: Any
    call: LLMCall


# --- Settings and choices -------------------------------------------------------------------


def _setting(name: str, default: Any) -> Any:
    """A Django setting, else an environment variable (worker processes), else the default."""
    if hasattr(settings, name):
        return getattr(settings, name)
    raw = os.environ.get(name)
    if raw is None:
        return default
    return json.loads(raw) if isinstance(default, dict) else type(default)(raw)


def llm_endpoint(*, project=None) -> str:
    """The base URL the project's calls go to (the environment's without a project)."""
    try:
        return endpoint_for(project=project, use=ModelUse.DRAFTS).base_url
    except NoModelEndpoint:
        return (settings.OPENAI_BASE_URL or OPENAI_DEFAULT_BASE_URL).rstrip("/")


def model_for_step(*, project, step: str, vision: bool = False, endpoint: Endpoint | None = None) -> str:
    """The project's model for `step`, else its endpoint's model for the step's use, else the deployment's."""
    chosen = (project.models_per_step or {}).get(step) if project is not None else None
    if chosen:
        return str(chosen)
    if endpoint is not None:
        return endpoint.model
    use = use_for_step(step, vision=vision)
    if project is None:
        return environment_model(use)
    try:
        return endpoint_for(project=project, use=use).model
    except NoModelEndpoint:
        return environment_model(use)


def _resolve(project, step: str, *, vision: bool = False) -> Endpoint:
    """The call's endpoint, or a _Failure that says plainly there is none."""
    try:
        return endpoint_for(project=project, use=use_for_step(step, vision=vision))
    except NoModelEndpoint as exc:
        raise _Failure(exc.message, CallOutcome.ERROR) from None


def _concurrency_limit(endpoint: str) -> int:
    per_endpoint = _setting("LLM_CONCURRENCY_PER_ENDPOINT", {})
    if endpoint in per_endpoint:
        return int(per_endpoint[endpoint])
    return int(_setting("LLM_CONCURRENCY", 4))


def calls_in_flight(endpoint: str) -> int:
    """How many calls a batch (drafts, probes, an evaluation) keeps in flight at `endpoint`: the limit
    this layer enforces there, or 8 when that limit is 0 (unlimited)."""
    limit = _concurrency_limit(endpoint)
    return limit if limit > 0 else 8


def _openai_client(endpoint: str, api_key: str = "") -> openai.OpenAI:
    # Local servers (vLLM, Ollama, the test fake) need no key, but the SDK wants a non-empty one.
    api_key = api_key or "not-needed"
    key = (endpoint, api_key)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            # Retries are ours (counted, recorded, shared backoff settings), never the SDK's.
            client = openai.OpenAI(base_url=endpoint, api_key=api_key, max_retries=0, timeout=settings.LLM_TIMEOUT_S)
            _clients[key] = client
        return client


def forget_endpoints() -> None:
    """Drop pooled SDK clients and what endpoints were found not to support (after a config change, in tests)."""
    with _clients_lock:
        for client in _clients.values():
            client.close()
        _clients.clear()
    _format_floor.clear()
    _transcribe_format.clear()


# --- One exchange: requests, retries, bookkeeping -------------------------------------------


class _Failure(Exception):
    """Ends a call with an outcome; becomes an LLMError once the call is recorded."""

    def __init__(self, message: str, outcome: str) -> None:
        super().__init__(message)
        self.message = message
        self.outcome = outcome


class _Rejected(Exception):
    """The endpoint refused the request itself (4xx other than 429); the caller may adapt and resend."""

    def __init__(self, exc: openai.APIStatusError) -> None:
        super().__init__(_status_message(exc))
        self.status = exc.status_code
        self.message = _status_message(exc)


@dataclass
class _Exchange:
    endpoint: str
    timeout_s: float
    api_key: str = field(default="", repr=False)
    max_attempts: int | None = None  # None: LLM_MAX_ATTEMPTS
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempt_log: list[dict] = field(default_factory=list)
    raw_response: str = ""

    def send(self, request: Callable[[], Any]) -> Any:
        """Run `request` (an SDK call with_raw_response) with retries; returns the raw response."""
        max_attempts = self.max_attempts or max(1, int(_setting("LLM_MAX_ATTEMPTS", 4)))
        limit = _concurrency_limit(self.endpoint)
        wait_s = float(_setting("LLM_SLOT_WAIT_S", 900.0))
        # A slot a dead worker held frees itself after this long: the longest a live call can hold it.
        lease_s = float(_setting("LLM_SLOT_LEASE_S", 0.0)) or self.timeout_s + 60
        for n in range(1, max_attempts + 1):
            self.attempts += 1
            started = time.monotonic()
            entry: dict[str, Any] = {"attempt": self.attempts}
            try:
                with endpoint_slot(self.endpoint, limit=limit, wait_s=wait_s, lease_s=lease_s):
                    entry["queued_ms"] = _ms_since(started)
                    response = request()
                entry.update(status=response.status_code, ms=_ms_since(started))
                self.attempt_log.append(entry)
                self.raw_response = response.text
                return response
            except SlotTimeout as exc:
                entry.update(error=str(exc), ms=_ms_since(started))
                self.attempt_log.append(entry)
                raise _Failure(str(exc), CallOutcome.ERROR) from exc
            except openai.RateLimitError as exc:
                outcome, message = CallOutcome.RATE_LIMITED, _status_message(exc)
                self.raw_response = _body_text(exc)
                if _error_code(exc) == "insufficient_quota":
                    # A 429 that waiting does not cure: the account is out of credit.
                    entry.update(status=429, error=message, ms=_ms_since(started))
                    self.attempt_log.append(entry)
                    raise _Failure(f"the account at {self.endpoint} is out of quota ({message})", outcome) from exc
                retry_after = _retry_after_s(exc)
                cap = float(_setting("LLM_RETRY_AFTER_MAX_S", 120.0))
                if retry_after is not None and retry_after > cap:
                    entry.update(status=429, error=message, ms=_ms_since(started))
                    self.attempt_log.append(entry)
                    raise _Failure(
                        f"rate limited by {self.endpoint}: it asks to wait {retry_after:g} s, longer than "
                        f"LLM_RETRY_AFTER_MAX_S={cap:g} s ({message})",
                        outcome,
                    ) from exc
                pause = retry_after if retry_after is not None else _backoff_s(n)
                entry["status"] = 429
            except openai.APITimeoutError:
                outcome, message = CallOutcome.TIMEOUT, f"no answer within {self.timeout_s:g} s"
                pause = _backoff_s(n)
            except openai.APIConnectionError as exc:
                outcome, message = CallOutcome.ERROR, f"connection failed: {exc.__cause__ or exc}"
                pause = _backoff_s(n)
            except openai.APIStatusError as exc:
                self.raw_response = _body_text(exc)
                if exc.status_code < 500 and exc.status_code not in (408, 409):
                    entry.update(status=exc.status_code, error=_status_message(exc), ms=_ms_since(started))
                    self.attempt_log.append(entry)
                    raise _Rejected(exc) from exc
                outcome, message = CallOutcome.ERROR, _status_message(exc)
                entry["status"] = exc.status_code
                pause = _backoff_s(n)
            except openai.OpenAIError as exc:
                # Not an HTTP failure (e.g. an answer the SDK could not read): retrying will not help.
                entry.update(error=str(exc), ms=_ms_since(started))
                self.attempt_log.append(entry)
                raise _Failure(f"the model client failed: {exc}", CallOutcome.ERROR) from exc
            entry.update(error=message, ms=_ms_since(started))
            if n == max_attempts:
                self.attempt_log.append(entry)
                raise _Failure(f"gave up after {max_attempts} attempts; last: {message}", outcome)
            entry["retry_in_s"] = round(pause, 3)
            self.attempt_log.append(entry)
            _sleep(pause)
        raise AssertionError("unreachable")


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _backoff_s(attempt: int) -> float:
    base = float(_setting("LLM_RETRY_BASE_S", 1.0))
    cap = float(_setting("LLM_RETRY_MAX_S", 30.0))
    # Jitter spreads the retries of many workers hit by the same outage.
    return min(cap, base * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)  # noqa: S311 - not cryptographic


def _retry_after_s(exc: openai.APIStatusError) -> float | None:
    headers = exc.response.headers
    try:
        if headers.get("retry-after-ms"):
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        value = headers.get("retry-after")
        if not value:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            return max(0.0, (parsedate_to_datetime(value) - timezone.now()).total_seconds())
    except (TypeError, ValueError):
        return None


def _status_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return f"HTTP {exc.status_code}: {inner['message']}"
    return f"HTTP {exc.status_code}: {exc.message}"


def _error_code(exc: openai.APIStatusError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    inner = body.get("error", body)
    return str(inner.get("code") or inner.get("type") or "") if isinstance(inner, dict) else ""


def _body_text(exc: openai.APIStatusError) -> str:
    try:
        return exc.response.text
    except Exception:  # noqa: BLE001 - a body we cannot read is just not recorded
        return ""


# --- Chat for JSON ------------------------------------------------------------------------------


def chat_json(
    *,
    project,
    step: str,
    template_key: str,
    context: dict,
    images: Sequence[bytes] = (),
    schema: dict | None = None,
    model: str | None = None,
    params: dict | None = None,
) -> LLMResult:
    """Ask the model for JSON using the active `template_key` prompt, with optional JPEG frames.

    `schema` defaults to the template's response schema. Returns the parsed, schema-valid JSON and
    the recorded call; raises LLMError (with the recorded call) when no usable answer came back.
    """
    started = time.monotonic()
    images = [bytes(image) for image in images]
    params = dict(params or {})
    timeout_s = float(params.get("timeout_s") or settings.LLM_TIMEOUT_S)
    try:
        target = _resolve(project, step, vision=bool(images))
    except _Failure as failure:
        record = {
            "project": project,
            "step": step,
            "endpoint": "",
            "model": model or model_for_step(project=project, step=step, vision=bool(images)),
            "template_key": template_key,
            "parameters": {**params, "timeout_s": timeout_s},
            "request": {},
        }
        call = _save_call(
            record, _Exchange(endpoint="", timeout_s=timeout_s), started, outcome=failure.outcome, error=failure.message
        )
        raise LLMError(f"{step}: {failure.message}", call=call) from None
    endpoint = target.base_url
    model = model or model_for_step(project=project, step=step, vision=bool(images), endpoint=target)
    exchange = _Exchange(endpoint=endpoint, timeout_s=timeout_s, api_key=target.api_key)
    record: dict[str, Any] = {
        "project": project,
        "step": step,
        "endpoint": endpoint,
        "model": model,
        "prices": target.prices,
        "template_key": template_key,
        "parameters": {**params, "timeout_s": timeout_s},
        "request": {"images": _image_summary(images)},
    }
    try:
        template = _template(project, template_key, record)
        system, user_text = _render(template, context)
        schema = schema if schema is not None else template.response_schema
        validator = _validator(schema)
        parsed, repaired = _converse(
            exchange,
            record,
            model=model,
            system=system,
            user_text=user_text,
            images=images,
            schema=schema,
            validator=validator,
            params=params,
            schema_name=template_key,
        )
    except _Failure as failure:
        call = _save_call(record, exchange, started, outcome=failure.outcome, error=failure.message)
        raise LLMError(f"{step}: {failure.message}", call=call) from None
    except Exception as exc:
        # Whatever broke (Redis gone mid-call, an SDK surprise), the call is still on record.
        log.exception("unexpected failure in an LLM call")
        message = f"unexpected {type(exc).__name__}: {exc}"
        call = _save_call(record, exchange, started, outcome=CallOutcome.ERROR, error=message)
        raise LLMError(f"{step}: {message}", call=call) from exc
    call = _save_call(
        record, exchange, started, outcome=CallOutcome.REPAIRED if repaired else CallOutcome.OK, parsed=parsed
    )
    return LLMResult(parsed=parsed, call=call)


@dataclass(frozen=True)
class Turn:
    """One message of a free-text conversation: the user's (text and optional JPEG frames) or the model's.

    `parts`, when given, is the user message's content in order, each a text (str) or a JPEG frame
    (bytes): frames interleaved with the subtitles of their time, as LongVideoBench prompts them.
    """

    role: str  # "user" | "assistant"
    text: str = ""
    images: tuple[bytes, ...] = ()
    parts: tuple[str | bytes, ...] = ()

    def all_images(self) -> list[bytes]:
        return [*self.images, *(p for p in self.parts if isinstance(p, bytes))]


@dataclass(frozen=True)
class TextResult:
    text: str
    call: LLMCall


def chat_text(
    *,
    project,
    step: str,
    system: str,
    turns: Sequence[Turn],
    model: str | None = None,
    endpoint: Endpoint | None = None,
    params: dict | None = None,
    template_key: str = "",
) -> TextResult:
    """Ask for a free-text answer (an evaluated model's reply, a probe's guess) to a conversation.

    `endpoint` overrides the project's (an evaluation names its own); `model` defaults to the
    project's choice for the step. The call is recorded like every other; an empty answer is a
    failure (LLMError with outcome "invalid"), never an empty string for the caller to misread.
    """
    started = time.monotonic()
    params = dict(params or {})
    timeout_s = float(params.get("timeout_s") or settings.LLM_TIMEOUT_S)
    vision = any(turn.all_images() for turn in turns)
    images = [image for turn in turns for image in turn.all_images()]
    try:
        target = endpoint or _resolve(project, step, vision=vision)
    except _Failure as failure:
        record = {
            "project": project,
            "step": step,
            "endpoint": "",
            "model": model or model_for_step(project=project, step=step, vision=vision),
            "template_key": template_key,
            "parameters": {**params, "timeout_s": timeout_s},
            "request": {},
        }
        call = _save_call(
            record, _Exchange(endpoint="", timeout_s=timeout_s), started, outcome=failure.outcome, error=failure.message
        )
        raise LLMError(f"{step}: {failure.message}", call=call) from None
    model = model or model_for_step(project=project, step=step, vision=vision, endpoint=target)
    exchange = _Exchange(endpoint=target.base_url, timeout_s=timeout_s, api_key=target.api_key)
    record: dict[str, Any] = {
        "project": project,
        "step": step,
        "endpoint": target.base_url,
        "model": model,
        "prices": target.prices,
        "template_key": template_key,
        "parameters": {**params, "timeout_s": timeout_s},
        "request": {"images": _image_summary(images)},
    }
    detail = params.get("image_detail")
    messages: list[dict] = [{"role": "system", "content": system}] if system else []

    def image_part(image: bytes) -> dict:
        image_url: dict[str, Any] = {"url": "data:image/jpeg;base64," + base64.b64encode(image).decode("ascii")}
        if detail:
            image_url["detail"] = detail
        return {"type": "image_url", "image_url": image_url}

    for turn in turns:
        if turn.role == "assistant" or not turn.all_images():
            text = turn.text if not turn.parts else "\n".join(p for p in turn.parts if isinstance(p, str))
            messages.append({"role": turn.role, "content": text})
            continue
        content: list[dict] = []
        if turn.text:
            content.append({"type": "text", "text": turn.text})
        content += [image_part(image) for image in turn.images]
        for part in turn.parts:
            content.append(image_part(part) if isinstance(part, bytes) else {"type": "text", "text": part})
        messages.append({"role": "user", "content": content})
    record["request"].update(messages=_summarise_messages(messages), response_format="text")
    kwargs: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "user": f"vidqa:{step}:project-{project.pk}",
        "timeout": timeout_s,
        **{k: v for k, v in params.items() if k in _CHAT_PARAMS},
    }
    extra_body = {k: v for k, v in params.items() if k not in _CHAT_PARAMS and k not in _LOCAL_PARAMS}
    if extra_body:
        kwargs["extra_body"] = extra_body
    try:
        create = _openai_client(exchange.endpoint, exchange.api_key).chat.completions.with_raw_response.create
        try:
            response = exchange.send(partial(create, **kwargs))
        except _Rejected as rejected:
            raise _Failure(f"the endpoint refused the request: {rejected.message}", CallOutcome.ERROR) from None
        completion = _completion(exchange, response.text)
        text = completion["content"]
        if isinstance(text, list):  # some servers answer with content parts
            text = "".join(str(p.get("text", "")) for p in text if isinstance(p, dict))
        text = (text or "").strip()
        if not text:
            refusal = completion.get("refusal")
            raise _Failure(f"the model refused: {refusal}" if refusal else "the answer was empty", CallOutcome.INVALID)
    except _Failure as failure:
        call = _save_call(record, exchange, started, outcome=failure.outcome, error=failure.message)
        raise LLMError(f"{step}: {failure.message}", call=call) from None
    except Exception as exc:
        log.exception("unexpected failure in an LLM call")
        message = f"unexpected {type(exc).__name__}: {exc}"
        call = _save_call(record, exchange, started, outcome=CallOutcome.ERROR, error=message)
        raise LLMError(f"{step}: {message}", call=call) from exc
    call = _save_call(record, exchange, started, outcome=CallOutcome.OK, parsed={"text": text})
    return TextResult(text=text, call=call)


def _template(project, key: str, record: dict) -> PromptTemplate:
    try:
        template = prompt_template_for_call(project=project, key=key)
    except LookupError as exc:
        raise _Failure(str(exc), CallOutcome.ERROR) from exc
    record.update(template=template, template_version=template.version)
    return template


def _render(template: PromptTemplate, context: dict) -> tuple[str, str]:
    try:
        return template_render(template=template, context=context)
    except TemplateRenderError as exc:
        raise _Failure(str(exc), CallOutcome.ERROR) from exc


def _validator(schema: dict | None) -> Draft202012Validator | None:
    if schema is None:
        return None
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise _Failure(f"the response schema is not a valid JSON Schema: {exc.message}", CallOutcome.ERROR) from exc
    return Draft202012Validator(schema)


def _converse(
    exchange: _Exchange,
    record: dict,
    *,
    model: str,
    system: str,
    user_text: str,
    images: list[bytes],
    schema: dict | None,
    validator: Draft202012Validator | None,
    params: dict,
    schema_name: str,
) -> tuple[Any, bool]:
    """Ask, and if the answer is unusable ask once more for a repair; returns (parsed, repaired)."""
    detail = params.get("image_detail")
    user_content: list[dict] = [{"type": "text", "text": user_text}]
    for image in images:
        image_url: dict[str, Any] = {"url": "data:image/jpeg;base64," + base64.b64encode(image).decode("ascii")}
        if detail:
            image_url["detail"] = detail
        user_content.append({"type": "image_url", "image_url": image_url})
    sdk_params = {k: v for k, v in params.items() if k in _CHAT_PARAMS}
    extra_body = {k: v for k, v in params.items() if k not in _CHAT_PARAMS and k not in _LOCAL_PARAMS} or None
    user_tag = f"vidqa:{record['step']}:project-{record['project'].pk}"

    modes = _FORMAT_MODES if schema is not None else _FORMAT_MODES[1:]
    floor_key = (exchange.endpoint, model)

    def ask(turns: list[dict]) -> tuple[dict, str]:
        """One answer, stepping down the output modes while the endpoint rejects them."""
        while True:
            floor = _format_floor.get(floor_key, 0)
            mode = next((m for m in modes if _FORMAT_MODES.index(m) >= floor), "prompt")
            messages = _messages(system, turns, mode=mode, schema=schema)
            record["request"].update(messages=_summarise_messages(messages), response_format=mode)
            kwargs: dict[str, Any] = {
                "model": model,
                "messages": messages,
                "user": user_tag,
                "timeout": exchange.timeout_s,
                **sdk_params,
            }
            if mode == "json_schema":
                # strict=False: strict mode demands additionalProperties=false everywhere, which
                # admin-edited schemas rarely say; the answer is validated here anyway.
                json_schema = {"name": _schema_name(schema_name), "schema": schema, "strict": False}
                kwargs["response_format"] = {"type": "json_schema", "json_schema": json_schema}
            elif mode == "json_object":
                kwargs["response_format"] = {"type": "json_object"}
            if extra_body:
                kwargs["extra_body"] = extra_body
            try:
                create = _openai_client(exchange.endpoint, exchange.api_key).chat.completions.with_raw_response.create
                response = exchange.send(partial(create, **kwargs))
            except _Rejected as rejected:
                if mode != "prompt" and _about_response_format(rejected.message):
                    _format_floor[floor_key] = _FORMAT_MODES.index(mode) + 1
                    log.info("LLM %s at %s rejected response_format %s; falling back", model, exchange.endpoint, mode)
                    continue
                raise _Failure(f"the endpoint refused the request: {rejected.message}", CallOutcome.ERROR) from None
            return _completion(exchange, response.text), mode

    turns: list[dict] = [{"role": "user", "content": user_content}]
    completion, _mode = ask(turns)
    content, problem, parsed = _judge_answer(completion, validator)
    if problem is None:
        return parsed, False
    record["request"]["repair"] = {"problem": problem, "first_answer": content}
    turns += [
        {"role": "assistant", "content": content or ""},
        {"role": "user", "content": _REPAIR_PROMPT.format(problem=problem)},
    ]
    completion, _mode = ask(turns)
    content, second_problem, parsed = _judge_answer(completion, validator)
    if second_problem is None:
        return parsed, True
    raise _Failure(
        f"no usable answer after one repair: {second_problem} (first answer: {problem})", CallOutcome.INVALID
    )


def _messages(system: str, turns: list[dict], *, mode: str, schema: dict | None) -> list[dict]:
    if mode != "json_schema":
        # Without schema-constrained output the model only knows the shape if we tell it.
        system += (
            _SCHEMA_INSTRUCTION.format(schema=json.dumps(schema, ensure_ascii=False)) if schema else _JSON_INSTRUCTION
        )
    return [{"role": "system", "content": system}, *turns]


def _schema_name(key: str) -> str:
    # OpenAI allows letters, digits, underscores and dashes, at most 64.
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in key)[:64] or "answer"


def _about_response_format(message: str) -> bool:
    text = message.lower()
    return any(word in text for word in ("response_format", "json_schema", "json_object", "structured output"))


def _completion(exchange: _Exchange, raw: str) -> dict:
    try:
        body = json.loads(raw)
        choice = body["choices"][0]
        message = choice.get("message") or {}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise _Failure(f"the endpoint's answer is not a chat completion: {raw[:200]!r}", CallOutcome.ERROR) from exc
    usage = body.get("usage") or {}
    exchange.prompt_tokens += int(usage.get("prompt_tokens") or 0)
    exchange.completion_tokens += int(usage.get("completion_tokens") or 0)
    return {
        "content": message.get("content"),
        "refusal": message.get("refusal"),
        "finish_reason": choice.get("finish_reason"),
    }


def _judge_answer(completion: dict, validator: Draft202012Validator | None) -> tuple[str, str | None, Any]:
    """(content, problem or None, parsed)."""
    content = completion["content"]
    if isinstance(content, list):  # some servers answer with content parts
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    content = content or ""
    if completion["finish_reason"] == "length":
        problem = "the answer was cut off at the output token limit (finish_reason=length), so its JSON is incomplete"
        return content, problem, None
    if not content.strip():
        if completion.get("refusal"):
            return content, f"the model refused: {completion['refusal']}", None
        return content, "the answer was empty", None
    try:
        parsed = _loads_lenient(content)
    except ValueError as exc:
        return content, f"the answer is not valid JSON ({exc})", None
    if validator is not None:
        errors = sorted(validator.iter_errors(parsed), key=lambda e: list(e.absolute_path))
        if errors:
            details = "; ".join(
                f"at {'/'.join(str(p) for p in e.absolute_path) or '(top level)'}: {e.message}" for e in errors[:5]
            )
            more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
            return content, f"the JSON does not match the required schema: {details}{more}", None
    return content, None, parsed


def _loads_lenient(text: str) -> Any:
    """JSON, tolerating code fences and prose around one JSON value (common model habits)."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as first_error:
        starts = [i for i in (stripped.find("{"), stripped.find("[")) if i >= 0]
        if starts:
            try:
                value, _end = json.JSONDecoder().raw_decode(stripped[min(starts) :])
                return value
            except json.JSONDecodeError:
                pass
        raise ValueError(f"{first_error.msg} at line {first_error.lineno} column {first_error.colno}") from None


def _image_summary(images: list[bytes]) -> dict:
    return {"count": len(images), "bytes": [len(i) for i in images], "total_bytes": sum(len(i) for i in images)}


def _summarise_messages(messages: list[dict]) -> list[dict]:
    """The messages as sent, with every image replaced by its size: provenance without megabytes."""
    out = []
    for message in messages:
        content = message["content"]
        if isinstance(content, list):
            parts = []
            for part in content:
                if part.get("type") == "image_url":
                    url = part["image_url"]["url"]
                    size = len(base64.b64decode(url.split(",", 1)[1])) if url.startswith("data:") else None
                    mime = url[5 : url.find(";")] if url.startswith("data:") else ""
                    parts.append({"type": "image", "mime": mime, "bytes": size})
                else:
                    parts.append(part)
            content = parts
        out.append({"role": message["role"], "content": content})
    return out


def _save_call(
    record: dict,
    exchange: _Exchange,
    started: float,
    *,
    outcome: str,
    error: str = "",
    parsed: Any = None,
    audio_seconds: float = 0,
) -> LLMCall | None:
    cost = estimate_cost(
        model=record["model"],
        prompt_tokens=exchange.prompt_tokens,
        completion_tokens=exchange.completion_tokens,
        audio_seconds=audio_seconds,
        prices=record.get("prices"),
    )
    request = {**record["request"], "attempt_log": exchange.attempt_log}
    if not cost.known:
        request["cost_note"] = cost.note
    try:
        return LLMCall.objects.create(
            project=record["project"],
            step=record["step"],
            endpoint=record["endpoint"][:300],
            model=record["model"][:120],
            template=record.get("template"),
            template_key=record.get("template_key", ""),
            template_version=record.get("template_version"),
            parameters=record["parameters"],
            request=request,
            raw_response=exchange.raw_response,
            parsed=parsed,
            outcome=outcome,
            error=error,
            attempts=exchange.attempts,
            prompt_tokens=exchange.prompt_tokens,
            completion_tokens=exchange.completion_tokens,
            cost_usd=cost.usd,
            latency_ms=_ms_since(started),
        )
    except Exception:
        # Losing the provenance row must not hide the model's answer or the real error from the caller.
        log.exception("could not record an LLM call (%s %s, outcome %s)", record["step"], record["model"], outcome)
        return None


# --- Transcription ------------------------------------------------------------------------------


def transcribe(
    *, project, audio_path: str | Path, language: str | None = None
) -> tuple[list[tuple[float, float, str]], LLMCall]:
    """Speech to timed text via the transcriptions endpoint: [(start_s, end_s, text)], and the call.

    Asks for verbose_json with segments; a server (or model) that only returns text gives one
    segment over the whole audio. Raises LLMError with the recorded call on failure.
    """
    started = time.monotonic()
    path = Path(audio_path)
    try:
        target = _resolve(project, TRANSCRIBE_STEP)
    except _Failure as failure:
        record = {
            "project": project,
            "step": TRANSCRIBE_STEP,
            "endpoint": "",
            "model": model_for_step(project=project, step=TRANSCRIBE_STEP),
            "template_key": "",
            "parameters": {"language": language or ""},
            "request": {},
        }
        exchange = _Exchange(endpoint="", timeout_s=float(settings.LLM_TIMEOUT_S))
        call = _save_call(record, exchange, started, outcome=failure.outcome, error=failure.message)
        raise LLMError(f"transcribe: {failure.message}", call=call) from None
    endpoint = target.base_url
    model = model_for_step(project=project, step=TRANSCRIBE_STEP, endpoint=target)
    exchange = _Exchange(endpoint=endpoint, timeout_s=float(settings.LLM_TIMEOUT_S), api_key=target.api_key)
    record: dict[str, Any] = {
        "project": project,
        "step": TRANSCRIBE_STEP,
        "endpoint": endpoint,
        "model": model,
        "prices": target.prices,
        "template_key": "",
        "parameters": {"language": language or "", "timeout_s": exchange.timeout_s},
        "request": {"file": {"name": path.name, "bytes": path.stat().st_size if path.is_file() else None}},
    }
    audio_seconds = 0.0
    try:
        if not path.is_file():
            raise _Failure(f"audio file not found: {path}", CallOutcome.ERROR)
        max_bytes = int(_setting("LLM_TRANSCRIBE_MAX_BYTES", 25 * 1024 * 1024))
        if path.stat().st_size > max_bytes:
            raise _Failure(
                f"{path.name} is {path.stat().st_size / 1e6:.1f} MB; the transcription endpoint takes at most "
                f"{max_bytes / 1e6:.1f} MB (extract mono, compressed audio or split it first)",
                CallOutcome.ERROR,
            )
        body, fmt = _transcription_request(exchange, record, path=path, model=model, language=language)
        segments, text, detected, duration = _transcription_segments(body, fmt)
        if segments is None:
            duration = duration or _media_duration_s(path)
            segments = [(0.0, round(duration, 3), text)] if text else []
        audio_seconds = duration or (segments[-1][1] if segments else 0.0)
    except _Failure as failure:
        call = _save_call(record, exchange, started, outcome=failure.outcome, error=failure.message)
        raise LLMError(f"transcribe: {failure.message}", call=call) from None
    except Exception as exc:
        # Whatever broke (Redis gone mid-call, an SDK surprise), the call is still on record.
        log.exception("unexpected failure in an LLM call")
        message = f"unexpected {type(exc).__name__}: {exc}"
        call = _save_call(record, exchange, started, outcome=CallOutcome.ERROR, error=message)
        raise LLMError(f"transcribe: {message}", call=call) from exc
    parsed = {"language": detected or language or "", "text": text, "segments": [list(s) for s in segments]}
    call = _save_call(record, exchange, started, outcome=CallOutcome.OK, parsed=parsed, audio_seconds=audio_seconds)
    return segments, call


def _transcription_request(exchange: _Exchange, record: dict, *, path: Path, model: str, language: str | None):
    key = (exchange.endpoint, model)
    fmt = _transcribe_format.get(key, "verbose_json")
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    while True:
        record["request"]["response_format"] = fmt
        kwargs: dict[str, Any] = {"model": model, "response_format": fmt, "timeout": exchange.timeout_s}
        if fmt == "verbose_json":
            kwargs["timestamp_granularities"] = ["segment"]
        if language:
            kwargs["language"] = language

        def request(kwargs=kwargs):
            # A fresh file handle per attempt: a retry must send the whole file again.
            with path.open("rb") as handle:
                return _openai_client(
                    exchange.endpoint, exchange.api_key
                ).audio.transcriptions.with_raw_response.create(file=(path.name, handle, mime), **kwargs)

        try:
            response = exchange.send(request)
        except _Rejected as rejected:
            about_format = any(w in rejected.message.lower() for w in ("verbose_json", "response_format"))
            if fmt == "verbose_json" and about_format:
                # Models such as gpt-4o-transcribe only answer json/text: ask again for plain text.
                _transcribe_format[key] = fmt = "json"
                continue
            raise _Failure(f"the endpoint refused the request: {rejected.message}", CallOutcome.ERROR) from None
        return response.text, fmt


def _transcription_segments(raw: str, fmt: str):
    """(segments or None, text, language, duration) from a transcription answer."""
    try:
        body = json.loads(raw)
    except ValueError:
        return None, raw.strip(), "", 0.0  # a plain-text answer
    if not isinstance(body, dict):
        raise _Failure(f"the transcription answer is not an object: {raw[:200]!r}", CallOutcome.ERROR)
    text = str(body.get("text") or "").strip()
    duration = float(body.get("duration") or 0.0)
    language = str(body.get("language") or "")
    raw_segments = body.get("segments")
    if not raw_segments:
        return None, text, language, duration
    segments = []
    for seg in raw_segments:
        try:
            start, end, seg_text = float(seg["start"]), float(seg["end"]), str(seg.get("text", "")).strip()
        except (KeyError, TypeError, ValueError) as exc:
            raise _Failure(f"a transcription segment lacks start/end: {seg!r}", CallOutcome.ERROR) from exc
        if seg_text:
            segments.append((start, max(start, end), seg_text))
    return segments, text, language, duration


def _media_duration_s(path: Path) -> float:
    argv = [
        getattr(settings, "FFPROBE_BINARY", "ffprobe"),
        "-v",
        "error",
        "-show_entries",
        "format=duration",
        "-of",
        "default=noprint_wrappers=1:nokey=1",
        str(path),
    ]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)  # noqa: S603
        return float(out.stdout.strip())
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return 0.0


# --- Connection test ---------------------------------------------------------------------------

CONNECTION_TEST_STEP = "connection_test"


@dataclass(frozen=True)
class ConnectionReport:
    """What one small test call found: a plain sentence, and the technical detail behind it."""

    ok: bool
    message: str
    detail: str = ""
    call: LLMCall | None = None


def endpoint_connection_test(*, project) -> ConnectionReport:
    """One small chat completion (1 token, the drafts model, no retries) to the project's endpoint.

    Recorded as an LLMCall like any other model call; the key is sent but never reported back.
    """
    from django.utils.translation import gettext as _

    started = time.monotonic()
    try:
        target = endpoint_for(project=project, use=ModelUse.DRAFTS)
    except NoModelEndpoint as exc:
        return ConnectionReport(False, exc.message)
    model = model_for_step(project=project, step="connection_test", endpoint=target)
    timeout_s = min(float(settings.LLM_TIMEOUT_S), 20.0)
    exchange = _Exchange(endpoint=target.base_url, timeout_s=timeout_s, api_key=target.api_key, max_attempts=1)
    record: dict[str, Any] = {
        "project": project,
        "step": CONNECTION_TEST_STEP,
        "endpoint": target.base_url,
        "model": model,
        "template_key": "",
        "parameters": {"max_tokens": 1, "timeout_s": timeout_s},
        "request": {"messages": [{"role": "user", "content": "Reply with OK."}]},
        "prices": target.prices,
    }
    create = _openai_client(target.base_url, target.api_key).chat.completions.with_raw_response.create
    try:
        response = exchange.send(
            partial(
                create,
                model=model,
                messages=record["request"]["messages"],
                max_tokens=1,
                timeout=timeout_s,
                user=f"vidqa:{CONNECTION_TEST_STEP}:project-{project.pk}",
            )
        )
        _completion(exchange, response.text)
    except (_Failure, _Rejected) as exc:
        outcome = exc.outcome if isinstance(exc, _Failure) else CallOutcome.ERROR
        call = _save_call(record, exchange, started, outcome=outcome, error=exc.message)
        words = failure_in_words(exc.message, url=target.base_url) or _(
            "Could not use %(url)s: it did not answer as an OpenAI-compatible endpoint."
        ) % {"url": target.base_url}
        return ConnectionReport(False, words, detail=exc.message, call=call)
    call = _save_call(record, exchange, started, outcome=CallOutcome.OK)
    seconds = _ms_since(started) / 1000
    message = _("Connected: model %(model)s answered in %(seconds).1f s.") % {"model": model, "seconds": seconds}
    return ConnectionReport(True, message, detail=f"{target.base_url} ({target.source})", call=call)
