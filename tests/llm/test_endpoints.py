"""A project's model endpoint over the environment's, the connection test, and failures in words."""

import socket
from decimal import Decimal

import pytest

from llm.client import LLMError, chat_json, endpoint_connection_test
from llm.endpoints import NoModelEndpoint, endpoint_for, endpoint_require, model_endpoint_save
from llm.failures import failure_in_words
from llm.models import CallOutcome, LLMCall, ModelEndpoint, ModelUse
from llm.pricing import estimate_cost
from tests import factories
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.llm.test_client import COMPLEXITY_CONTEXT

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def environment(settings):
    settings.OPENAI_BASE_URL = "http://env.example/v1"
    settings.OPENAI_API_KEY = "sk-environment"
    settings.LLM_DEFAULT_MODEL = "env-text"
    settings.LLM_VISION_MODEL = "env-vision"
    settings.LLM_JUDGE_MODEL = "env-judge"
    settings.LLM_TRANSCRIBE_MODEL = "env-whisper"
    settings.LLM_RETRY_BASE_S = 0.001
    settings.LLM_RETRY_MAX_S = 0.01


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_project_that_sets_nothing_uses_the_environment(project):
    endpoint = endpoint_for(project=project, use=ModelUse.JUDGE)
    assert (endpoint.base_url, endpoint.api_key, endpoint.model, endpoint.source) == (
        "http://env.example/v1",
        "sk-environment",
        "env-judge",
        "environment",
    )


def test_the_project_endpoint_wins_over_the_environment(project):
    model_endpoint_save(
        project=project,
        user=None,
        base_url="http://own.example/v1/",
        models={"drafts": "own-text", "transcription": "own-whisper"},
        prices={},
        new_key="sk-own",
    )
    drafts = endpoint_for(project=project, use=ModelUse.DRAFTS)
    assert (drafts.base_url, drafts.api_key, drafts.model, drafts.source) == (
        "http://own.example/v1",
        "sk-own",
        "own-text",
        "project",
    )
    # A use the project leaves blank keeps the deployment's model, on the project's endpoint.
    assert endpoint_for(project=project, use=ModelUse.VISION).model == "env-vision"
    assert endpoint_for(project=project, use=ModelUse.TRANSCRIPTION).model == "own-whisper"
    # The key never shows in a repr (a log line, a traceback).
    assert "sk-own" not in repr(drafts)


def test_the_deployment_key_never_goes_to_a_project_url(project):
    model_endpoint_save(project=project, user=None, base_url="http://own.example/v1", models={}, prices={})
    assert endpoint_for(project=project, use=ModelUse.DRAFTS).api_key == ""


def test_a_project_key_alone_goes_to_the_environment_url(project):
    model_endpoint_save(project=project, user=None, base_url="", models={}, prices={}, new_key="sk-own")
    endpoint = endpoint_for(project=project, use=ModelUse.DRAFTS)
    assert (endpoint.base_url, endpoint.api_key) == ("http://env.example/v1", "sk-own")


def test_saving_without_a_new_key_keeps_it_and_clearing_removes_it(project):
    model_endpoint_save(
        project=project, user=None, base_url="http://own.example/v1", models={}, prices={}, new_key="k1"
    )
    model_endpoint_save(project=project, user=None, base_url="http://own.example/v2", models={}, prices={})
    assert ModelEndpoint.objects.get(project=project).api_key == "k1"
    model_endpoint_save(
        project=project, user=None, base_url="http://own.example/v2", models={}, prices={}, clear_key=True
    )
    assert ModelEndpoint.objects.get(project=project).api_key == ""


def test_no_base_url_and_no_key_anywhere_is_a_plain_refusal(project, settings):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    with pytest.raises(NoModelEndpoint) as refused:
        endpoint_require(project=project)
    assert refused.value.status == 409 and refused.value.code == "no_model_endpoint"
    assert refused.value.message == (
        "No model endpoint is set for this project: a project admin can set one under Settings → Model endpoint."
    )
    # A key alone means OpenAI's own API, as the SDK assumes.
    settings.OPENAI_API_KEY = "sk-environment"
    assert endpoint_require(project=project).base_url == "https://api.openai.com/v1"


def test_project_prices_override_the_price_table(project):
    assert estimate_cost(model="gpt-4o", prompt_tokens=1_000_000).usd == Decimal("2.500000")
    own = estimate_cost(model="gpt-4o", prompt_tokens=1_000_000, completion_tokens=500_000, prices={"gpt-4o": [1, 4]})
    assert own.usd == Decimal("3.000000") and own.known
    assert estimate_cost(model="local-llama", prompt_tokens=10, prices={"local-llama": [0, 0]}).known


def test_a_call_goes_to_the_project_endpoint_with_its_key_and_prices(project, settings):
    server = FakeOpenAIServer(api_key="sk-own").start()
    try:
        model_endpoint_save(
            project=project,
            user=None,
            base_url=server.base_url,
            models={"drafts": "gpt-4o-mini"},
            prices={"gpt-4o-mini": [1000, 1000]},
            new_key="sk-own",
        )
        server.script(None, [Reply.json({"answer": "yes"}, usage={"prompt_tokens": 1000, "completion_tokens": 0})])
        result = chat_json(
            project=project,
            step="complexity",
            template_key="complexity",
            context=COMPLEXITY_CONTEXT,
            schema={"type": "object"},
        )
    finally:
        server.stop()
    request = server.requests("chat")[0]
    assert request.headers["authorization"] == "Bearer sk-own" and request.model == "gpt-4o-mini"
    assert result.call.endpoint == server.base_url and result.call.cost_usd == Decimal("1.000000")


def test_a_call_with_no_endpoint_anywhere_is_recorded_and_says_so(project, settings):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    with pytest.raises(LLMError) as failed:
        chat_json(project=project, step="complexity", template_key="complexity", context=COMPLEXITY_CONTEXT)
    assert "No model endpoint is set for this project" in failed.value.message
    assert failed.value.call.outcome == CallOutcome.ERROR and failed.value.call.endpoint == ""


def test_connection_test_reports_the_model_and_time_and_is_recorded(project, fake_openai):
    report = endpoint_connection_test(project=project)
    assert report.ok, report.detail
    assert report.message.startswith("Connected: model env-text answered in ") and report.message.endswith(" s.")
    request = fake_openai.requests("chat")[0]
    assert request.body["max_tokens"] == 1 and request.model == "env-text"
    assert LLMCall.objects.get(step="connection_test").outcome == CallOutcome.OK


def test_connection_test_says_plainly_that_the_key_was_refused(project, fake_openai):
    fake_openai.api_key = "sk-the-right-one"
    report = endpoint_connection_test(project=project)
    assert not report.ok
    assert report.message.startswith("The key was refused (401)")
    assert "401" in report.detail and "Incorrect API key" in report.detail
    assert LLMCall.objects.get(step="connection_test").outcome == CallOutcome.ERROR


def test_connection_test_says_plainly_that_the_connection_was_refused(project):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    model_endpoint_save(project=project, user=None, base_url=url, models={}, prices={})
    report = endpoint_connection_test(project=project)
    assert not report.ok
    assert report.message == f"Could not connect to {url}: the server refused the connection."
    assert "refused" in report.detail.lower()
    # One attempt only: a connection test does not retry.
    assert report.call.attempts == 1


def test_connection_test_with_no_endpoint_says_who_can_set_one(project, settings):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    report = endpoint_connection_test(project=project)
    assert not report.ok and report.message.startswith("No model endpoint is set for this project")


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (
            "qa_chain: gave up after 4 attempts; last: connection failed: [Errno -2] Name or service not known",
            "Could not connect to the model endpoint: the server's name could not be found (check the base URL).",
        ),
        (
            "connection failed: [Errno 111] Connection refused",
            "Could not connect to the model endpoint: the server refused the connection.",
        ),
        ("gave up after 4 attempts; last: no answer within 60 s", "the server did not answer in time"),
        ("judge: the endpoint refused the request: HTTP 401: Incorrect API key provided.", "The key was refused (401)"),
        ("the endpoint refused the request: HTTP 403: forbidden", "(403)"),
        ("rate limited by http://x: it asks to wait 600 s", "(429)"),
        ("gave up after 4 attempts; last: HTTP 503: overloaded", "server error (5xx)"),
    ],
)
def test_known_failures_in_words(raw, words):
    assert words in failure_in_words(raw)


def test_unknown_failures_and_plain_sentences_are_left_as_they_are():
    assert failure_in_words("ffmpeg exited with status 1") is None
    assert failure_in_words("No model endpoint is set for this project: …") is None


def test_an_endpoint_row_belongs_to_one_project(project):
    other = factories.ProjectFactory()
    model_endpoint_save(project=project, user=None, base_url="http://a.example/v1", models={}, prices={})
    assert endpoint_for(project=other, use=ModelUse.DRAFTS).source == "environment"
