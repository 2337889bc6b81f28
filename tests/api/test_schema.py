import pytest
import yaml
from django.core.management import call_command
from drf_spectacular.validation import validate_schema

pytestmark = pytest.mark.django_db

PATHS = [
    "/api/auth/token/",
    "/api/auth/token/revoke/",
    "/api/projects/",
    "/api/projects/{slug}/",
    "/api/projects/{slug}/videos/",
    "/api/projects/{slug}/videos/{video_id}/",
    "/api/projects/{slug}/benchmark-imports/",
]


@pytest.fixture(scope="module")
def schema(django_db_blocker):
    from drf_spectacular.generators import SchemaGenerator

    with django_db_blocker.unblock():
        return SchemaGenerator().get_schema(request=None, public=True)


def test_schema_is_valid_openapi_3(schema):
    assert schema["openapi"].startswith("3.")
    validate_schema(schema)  # jsonschema against the OpenAPI 3 meta-schema; raises when invalid


def test_spectacular_validates_without_warnings(tmp_path):
    out = tmp_path / "schema.yaml"
    # --fail-on-warn turns any unresolved type or component clash into a failure.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    assert set(PATHS) <= set(yaml.safe_load(out.read_text())["paths"])


def test_schema_contains_the_paths(schema):
    assert set(PATHS) <= set(schema["paths"])


def test_errors_share_one_component(schema):
    error = schema["components"]["schemas"]["ErrorResponse"]
    assert error["required"] == ["error"]
    body = schema["components"]["schemas"]["ErrorBody"]
    assert set(body["properties"]) == {"code", "message", "details"}
    detail = schema["paths"]["/api/projects/{slug}/"]["get"]["responses"]
    for code in ("401", "403", "404", "500"):
        assert detail[code]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorResponse"}
    listing = schema["paths"]["/api/projects/{slug}/videos/"]["get"]["responses"]
    assert "400" in listing  # filters can be invalid
    obtain = schema["paths"]["/api/auth/token/"]["post"]["responses"]
    assert {"200", "400", "401", "429"} <= set(obtain)


def test_pagination_is_documented(schema):
    page = schema["components"]["schemas"]["PaginatedVideoListItemList"]
    assert set(page["required"]) == {"count", "page", "page_size", "total_pages", "next", "previous", "results"}
    params = {p["name"] for p in schema["paths"]["/api/projects/{slug}/videos/"]["get"]["parameters"]}
    assert {"page", "page_size", "ordering", "status", "curation_status", "split"} <= params


def test_both_auth_schemes_are_documented(schema):
    assert {"tokenAuth", "cookieAuth"} <= set(schema["components"]["securitySchemes"])


def test_schema_endpoint_serves_openapi(client):
    response = client.get("/api/schema/", headers={"Accept": "application/vnd.oai.openapi+json"})
    assert response.status_code == 200
    assert response.json()["openapi"].startswith("3.")


@pytest.mark.parametrize("url, marker", [("/api/docs/", b"swagger-ui"), ("/api/redoc/", b"redoc")])
def test_docs_pages_use_vendored_assets(client, url, marker):
    response = client.get(url)
    assert response.status_code == 200
    html = response.content
    assert marker in html.lower()
    assert b"/static/drf_spectacular_sidecar/" in html
    assert b"cdn." not in html and b"unpkg" not in html
