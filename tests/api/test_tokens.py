import pytest
from rest_framework.authtoken.models import Token

from api.tokens import token_revoke, token_rotate
from tests import factories

pytestmark = pytest.mark.django_db


def test_rotate_keeps_exactly_one_token_per_user():
    user = factories.UserFactory()
    first = token_rotate(user=user)
    second = token_rotate(user=user)
    assert first.key != second.key
    assert list(Token.objects.filter(user=user).values_list("key", flat=True)) == [second.key]


def test_revoke_twice_is_not_an_error():
    user = factories.UserFactory()
    token_rotate(user=user)
    assert token_revoke(user=user) is True
    assert token_revoke(user=user) is False
    assert not Token.objects.filter(user=user).exists()
