"""pytest fixtures for the fake OpenAI-compatible server.

Enable them for the whole suite with one line in tests/conftest.py::

    pytest_plugins = ["tests.fakes.fixtures"]
"""

import pytest

from tests.fakes.openai_server import FakeOpenAIServer

FAKE_API_KEY = "sk-fake-test-key"


def _point_settings_at(settings, server: FakeOpenAIServer) -> None:
    from llm.client import forget_endpoints

    # A new server may reuse an old one's port: nothing learnt about the old one may carry over.
    forget_endpoints()
    settings.OPENAI_BASE_URL = server.base_url
    settings.OPENAI_API_KEY = FAKE_API_KEY
    # Retries happen at full speed in tests; the retry logic itself is what is under test.
    settings.LLM_RETRY_BASE_S = 0.001
    settings.LLM_RETRY_MAX_S = 0.01


@pytest.fixture
def fake_openai(settings):
    """A fresh fake server for one test; settings point the LLM layer at it."""
    server = FakeOpenAIServer().start()
    _point_settings_at(settings, server)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def fake_openai_session():
    """One fake server for the whole run, e.g. for a separate worker process.

    Give a worker `OPENAI_BASE_URL=fake_openai_session.base_url` in its environment. Tests that
    share it must tell their requests apart by marker (see `FakeOpenAIServer.script`) and should
    use `fake_openai_shared`, which resets the script and log around each test.
    """
    server = FakeOpenAIServer().start()
    yield server
    server.stop()


@pytest.fixture
def fake_openai_shared(settings, fake_openai_session):
    """The session-wide fake server, reset for this test, with settings pointing at it."""
    fake_openai_session.reset()
    fake_openai_session.latency_ms = 0
    _point_settings_at(settings, fake_openai_session)
    yield fake_openai_session
    fake_openai_session.reset()
