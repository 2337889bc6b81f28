"""The interface's language: the browser's by default, a person's own choice once made, English for the API."""

import pytest
from django.conf import settings
from django.urls import reverse

from projects.models import UserPreference
from projects.preferences import preference_language, preference_language_set
from tests import factories

pytestmark = pytest.mark.django_db

CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9,en;q=0.5"}


def _choose(client, language, next_url="/"):
    return client.post(reverse("set_language"), {"language": language, "next": next_url})


def test_the_browser_language_is_the_default(client, people, project):
    client.force_login(people["admin"])
    home = reverse("studio:project_home", args=[project.slug])
    assert "What to do next" in client.get(home).text
    page = client.get(home, **CHINESE)
    assert "下一步做什么" in page.text
    assert '<html lang="zh-hans">' in page.text
    # The language chooser offers both, the current one selected.
    assert '<option value="zh-hans" lang="zh-hans" selected>简体中文</option>' in page.text


def test_a_choice_wins_over_the_browser_and_is_saved_for_the_person(client, people, project):
    admin = people["admin"]
    client.force_login(admin)
    response = _choose(client, "zh-hans", "/p/x/")
    assert response.status_code == 302 and response["Location"] == "/p/x/"
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    assert preference_language(user=admin) == "zh-hans"
    home = reverse("studio:project_home", args=[project.slug])
    assert "下一步做什么" in client.get(home, HTTP_ACCEPT_LANGUAGE="en").text

    _choose(client, "en")
    assert preference_language(user=admin) == "en"
    assert "What to do next" in client.get(home, **CHINESE).text


def test_an_anonymous_choice_lives_in_the_cookie_only(client):
    response = _choose(client, "zh-hans", "/accounts/login/")
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    assert not UserPreference.objects.exists()
    assert "用户名" in client.get("/accounts/login/").text


def test_an_unknown_language_changes_nothing(client, people):
    client.force_login(people["admin"])
    response = _choose(client, "xx")
    assert response.status_code == 302
    assert settings.LANGUAGE_COOKIE_NAME not in response.cookies
    assert preference_language(user=people["admin"]) == ""
    with pytest.raises(ValueError, match="unsupported language"):
        preference_language_set(user=people["admin"], language="xx")


def test_logging_in_brings_back_the_saved_language(client, people, project):
    annotator = people["annotator"]
    preference_language_set(user=annotator, language="zh-hans")
    response = client.post(
        reverse("login"), {"username": annotator.username, "password": factories.PASSWORD}, HTTP_ACCEPT_LANGUAGE="en"
    )
    assert response.status_code == 302
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    home = reverse("studio:project_home", args=[project.slug])
    assert "下一步做什么" in client.get(home, HTTP_ACCEPT_LANGUAGE="en").text


def test_logging_in_without_a_saved_language_keeps_the_browsers(client, people):
    response = client.post(reverse("login"), {"username": people["examiner"].username, "password": factories.PASSWORD})
    assert response.status_code == 302
    assert settings.LANGUAGE_COOKIE_NAME not in response.cookies


def test_the_api_answers_in_english_whatever_the_language(client, people, project):
    client.force_login(people["admin"])
    _choose(client, "zh-hans")
    url = reverse("api:project-detail", args=[project.slug])
    assert client.get(url, **CHINESE).status_code == 200
    anonymous = client.__class__()
    answer = anonymous.get(url, **CHINESE)
    assert answer.status_code == 401
    assert "Authentication credentials were not provided." in answer.text
    assert "Accept-Language" not in answer.get("Vary", "")


def test_choice_labels_and_messages_follow_the_language(client, people, project):
    client.force_login(people["admin"])
    _choose(client, "zh-hans")
    response = client.post(reverse("studio:project_settings", args=[project.slug]), {}, follow=True)
    # The form comes back with its errors, in Chinese, and its labels translated.
    assert "主要语言" in response.text


def test_the_javascript_catalogue_follows_the_language(client):
    english = client.get(reverse("javascript-catalog"))
    assert english.status_code == 200 and "已保存" not in english.text
    chinese = client.get(reverse("javascript-catalog"), **CHINESE)
    assert "\\u5df2\\u4fdd\\u5b58" in chinese.text or "已保存" in chinese.text
