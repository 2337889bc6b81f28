"""The assertion every API error test shares."""


def assert_error(response, status: int, code: str) -> dict:
    """The one error shape: {"error": {"code", "message", "details"}}; returns the inner object."""
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}
    error = body["error"]
    assert set(error) == {"code", "message", "details"}
    assert error["code"] == code
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["details"], dict)
    return error
