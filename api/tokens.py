"""API tokens: one per user; obtaining one replaces the old, revoking deletes it."""

from django.contrib.auth import get_user_model
from django.db import transaction
from rest_framework.authtoken.models import Token


@transaction.atomic
def token_rotate(*, user) -> Token:
    # Lock the user row so two simultaneous logins cannot both create a token (one per user).
    get_user_model().objects.select_for_update().only("pk").get(pk=user.pk)
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


def token_revoke(*, user) -> bool:
    """Delete the user's token; False when there was none (revoking twice is not an error)."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)
