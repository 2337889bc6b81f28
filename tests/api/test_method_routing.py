"""One URL, several operations: each keeps its own view, and the schema documents each."""

import pytest
from rest_framework.response import Response
from rest_framework.views import APIView

from api.method_routing import route_methods

pytestmark = pytest.mark.django_db


class _Reads(APIView):
    """Reads things."""

    def get(self, request):
        return Response({"op": "read"})


class _Writes(APIView):
    parser_classes: list = []

    def post(self, request):
        return Response({"op": "write"})


def test_each_method_comes_from_the_view_that_defines_it():
    both = route_methods(_Reads, _Writes)
    assert both.get is _Reads.get and both.post is _Writes.post
    assert both.__name__ == "_Reads_WritesApi" and both.__doc__ == "Reads things."
    assert not hasattr(both, "put")


def test_overlapping_methods_are_refused():
    with pytest.raises(TypeError, match="GET is defined by both"):
        route_methods(_Reads, type("_AlsoReads", (APIView,), {"get": lambda self, request: None}))


@pytest.fixture(scope="module")
def schema(django_db_blocker):
    from drf_spectacular.generators import SchemaGenerator

    with django_db_blocker.unblock():
        return SchemaGenerator().get_schema(request=None, public=True)


@pytest.mark.parametrize(
    "path, get_id, post_id",
    [
        ("/api/projects/{slug}/videos/", "videos_list", "videos_upload"),
        ("/api/projects/{slug}/videos/{video_id}/comments/", "videos_comments_window", "videos_comments_import"),
        ("/api/projects/{slug}/videos/{video_id}/curation/", "videos_curation_retrieve", "videos_curation_override"),
    ],
)
def test_shared_urls_document_both_operations_separately(schema, path, get_id, post_id):
    operations = schema["paths"][path]
    get, post = operations["get"], operations["post"]
    assert (get["operationId"], post["operationId"]) == (get_id, post_id)
    assert get["description"] and post["description"] and get["description"] != post["description"]
    # The list's filters and pagination belong to GET only.
    assert not any(p["in"] == "query" for p in post.get("parameters", []))
    assert "requestBody" not in get


def test_every_issue_3_endpoint_is_in_the_schema_with_its_error_responses(schema):
    expected = {
        ("post", "/api/projects/{slug}/videos/"): {"201", "400", "401", "403", "404", "409", "422"},
        ("post", "/api/projects/{slug}/imports/"): {"202", "400", "401", "403", "404", "409"},
        ("post", "/api/projects/{slug}/benchmark-imports/"): {"202", "400", "401", "403", "404", "409"},
        ("post", "/api/projects/{slug}/videos/{video_id}/reprocess/"): {"202", "401", "403", "404", "409"},
        ("post", "/api/projects/{slug}/videos/{video_id}/transcribe/"): {"202", "401", "403", "404", "409", "422"},
        ("post", "/api/projects/{slug}/videos/{video_id}/complexity/"): {"202", "401", "403", "404", "409"},
        ("get", "/api/projects/{slug}/videos/{video_id}/clips/"): {"200", "401", "403", "404"},
        ("get", "/api/projects/{slug}/videos/{video_id}/cues/"): {"200", "400", "401", "403", "404"},
        ("post", "/api/projects/{slug}/videos/{video_id}/subtitles/"): {"201", "400", "401", "403", "404"},
        ("get", "/api/projects/{slug}/videos/{video_id}/comments/"): {"200", "400", "401", "403", "404"},
        ("post", "/api/projects/{slug}/videos/{video_id}/comments/"): {"202", "400", "401", "403", "404", "409"},
        ("get", "/api/projects/{slug}/videos/{video_id}/comments/density/"): {"200", "400", "401", "403", "404"},
        ("get", "/api/projects/{slug}/videos/{video_id}/curation/"): {"200", "401", "403", "404"},
        ("post", "/api/projects/{slug}/videos/{video_id}/curation/"): {"200", "400", "401", "403", "404"},
        ("post", "/api/projects/{slug}/scores/"): {"200", "400", "401", "403", "404"},
        ("get", "/api/projects/{slug}/jobs/"): {"200", "400", "401", "403", "404"},
        ("get", "/api/projects/{slug}/jobs/{job_id}/"): {"200", "401", "403", "404"},
        ("post", "/api/projects/{slug}/jobs/{job_id}/retry/"): {"202", "401", "403", "404", "409"},
    }
    error_ref = {"$ref": "#/components/schemas/ErrorResponse"}
    for (method, path), codes in expected.items():
        responses = schema["paths"][path][method]["responses"]
        assert codes <= set(responses), (method, path, sorted(responses))
        for code in codes:
            if int(code) >= 400:
                assert responses[code]["content"]["application/json"]["schema"] == error_ref, (method, path, code)


def test_uploads_are_documented_as_multipart_files(schema):
    for path in (
        "/api/projects/{slug}/videos/",
        "/api/projects/{slug}/imports/",
        "/api/projects/{slug}/benchmark-imports/",
        "/api/projects/{slug}/videos/{video_id}/subtitles/",
        "/api/projects/{slug}/videos/{video_id}/comments/",
        "/api/projects/{slug}/scores/",
    ):
        body = schema["paths"][path]["post"]["requestBody"]["content"]
        assert list(body) == ["multipart/form-data"], path
        component = body["multipart/form-data"]["schema"]["$ref"].rsplit("/", 1)[1]
        assert schema["components"]["schemas"][component]["properties"]["file"]["format"] == "binary"
