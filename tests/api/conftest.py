import pytest
from django.core.cache import cache
from rest_framework.authtoken.models import Token


@pytest.fixture(autouse=True)
def _fresh_throttles():
    """Throttle counters live in the cache; every test starts with none."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def token_for(db):
    def make(user) -> dict:
        token, _ = Token.objects.get_or_create(user=user)
        return {"Authorization": f"Token {token.key}"}

    return make
