# Until tests/conftest.py lists "tests.fakes.fixtures" in pytest_plugins, make the fixtures visible here.
from tests.fakes.fixtures import fake_openai, fake_openai_session, fake_openai_shared  # noqa: F401
