"""/healthz: what `make run`, docker-compose and load balancers poll."""

import pytest
from django.db import OperationalError, connection


@pytest.mark.django_db
def test_healthz_answers_ok_without_login(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.content == b"ok"
    assert response["Content-Type"].startswith("text/plain")


@pytest.mark.django_db
def test_healthz_reports_an_unreachable_database_as_503(client, monkeypatch):
    def refuse(*args, **kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(connection, "cursor", refuse)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert b"database" in response.content


def test_healthz_only_answers_reads(client):
    assert client.post("/healthz").status_code == 405
