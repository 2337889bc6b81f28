"""The OpenAPI schema tells the truth: Schemathesis drives every operation of the live server.

Two members of a project with real data (a video, clips, cues, comments, queues, an assignment, a
job, releases), an admin and an annotator, each get one run over every operation but the token
ones; the token endpoints get their own run with a throwaway user, because obtaining a token
rotates it, revoking deletes it, and random passwords posted at the login must not count against a
real member's failed logins. Path ids are pinned to that project's rows, so the requests reach the
views' logic instead of stopping at a 404.

Checks: not_a_server_error, status_code_conformance, content_type_conformance,
response_headers_conformance, response_schema_conformance, negative_data_rejection and
positive_data_acceptance. A request the schema calls valid may still be refused for what no schema
can state, so positive_data_acceptance also expects the documented refusal statuses there:
- POST videos/, imports/, scores/, videos/{id}/subtitles/ and videos/{id}/comments/: the rules are
  about the uploaded file's content (a PNG is not a video, a manifest, a scores file, subtitles or
  comments): 400/413/422.
- POST queues/{id}/assign/ and assignments/{id}/reassign/: the assignee must be an active member of
  the project, the items rows of the queue (other rows of the database): 400/409.
- POST queues/{id}/claim/ and assignments/{id}/heartbeat|release|complete/: only the lease's
  holder (or an admin, to release) may, and only a member of the queue with the stage's role may
  claim: who holds which lease is other rows' state (403), as is a lease already ended (409).
- POST jobs/{id}/retry/, videos/{id}/reprocess|transcribe|complexity/ and DELETE releases/{id}/:
  the answer depends on the state of other rows (a job still running or not failed, a video
  without audio, a release being built): 409/422.
- POST releases/: besides that state (a version taken: 409), its `filters` name other rows (video
  ids, categories) and `split_config` has rules between its numbers, described but not typed (400).
- POST auth/token/: random credentials are wrong credentials (401), and many of them are throttled (429).

Budget: coverage and fuzzing phases (fuzzing only for the annotator on admin-only operations, which
answer 403 before reading any input), five fuzzed examples per operation, one worker per run, the
three runs side by side, a fixed seed. Path parameters are pinned to real rows, so malformed path
ids are not generated here (the router and tests/api/test_errors.py cover those).
"""

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token

from tests.permission_matrix.world import build_world

pytestmark = pytest.mark.django_db(transaction=True)

ST = str(Path(sys.executable).parent / "st")
SEED = 20261124
CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
        "negative_data_rejection",
        "positive_data_acceptance",
    ]
)
TOKEN_PATHS = "^/api/auth/token/"
RUN_TIMEOUT_S = 300

DELETE_RELEASE = "DELETE /api/projects/{slug}/releases/{release_id}/"
# Operations whose schema-valid requests may be refused for a file's content or other rows' state
# (see the module docstring): the statuses positive_data_acceptance accepts besides 2xx.
SEMANTIC_REFUSALS = {
    "POST /api/projects/{slug}/videos/": [400, 413, 422],
    "POST /api/projects/{slug}/imports/": [400, 413, 422],
    "POST /api/projects/{slug}/scores/": [400, 413, 422],
    "POST /api/projects/{slug}/videos/{video_id}/subtitles/": [400, 413, 422],
    "POST /api/projects/{slug}/videos/{video_id}/comments/": [400, 413, 422],
    "POST /api/projects/{slug}/queues/{queue_id}/assign/": [400, 409],
    "POST /api/projects/{slug}/assignments/{assignment_id}/reassign/": [400, 409],
    "POST /api/projects/{slug}/queues/{queue_id}/claim/": [403, 409, 422],
    "POST /api/projects/{slug}/assignments/{assignment_id}/heartbeat/": [403, 409, 422],
    "POST /api/projects/{slug}/assignments/{assignment_id}/release/": [403, 409, 422],
    "POST /api/projects/{slug}/assignments/{assignment_id}/complete/": [403, 409, 422],
    "POST /api/projects/{slug}/jobs/{job_id}/retry/": [409, 422],
    "POST /api/projects/{slug}/videos/{video_id}/reprocess/": [409, 422],
    "POST /api/projects/{slug}/videos/{video_id}/transcribe/": [409, 422],
    "POST /api/projects/{slug}/videos/{video_id}/complexity/": [409, 422],
    "POST /api/projects/{slug}/releases/": [400, 409, 422],
    DELETE_RELEASE: [409, 422],
    "POST /api/auth/token/": [401, 429],
}


# What only a project admin may do: everyone else gets 403 before any input is read.
ADMIN_ONLY = {
    *(name for name in SEMANTIC_REFUSALS if "/assignments/" not in name or name.endswith("/reassign/")),
    "POST /api/projects/{slug}/videos/{video_id}/curation/",
} - {"POST /api/projects/{slug}/queues/{queue_id}/claim/", "POST /api/auth/token/"}


def _config(path: Path, world, *, admin: bool) -> Path:
    """Path ids of project P's rows; the refusal statuses; a coverage phase without method probing.

    A member who is not an admin is refused the admin operations (403, as the permission matrix
    pins), so for them 403 is an expected answer to a valid request too, and those operations get
    only the fuzzing phase: the coverage phase's hundreds of bodies would each meet the same 403.
    """
    p = world.p
    lines = [
        # Other methods on each path are the permission matrix's and the router's business; the
        # budget goes to the documented operations' parameters and bodies.
        "[phases.coverage]",
        "unexpected-methods = []",
        # A parameter given twice is refused before any view runs (tests/api/test_pagination.py).
        "generate-duplicate-query-parameters = false",
        "",
        "[parameters]",
        f'"path.slug" = "{p.project.slug}"',
        f'"path.video_id" = {p.id("video")}',
        f'"path.queue_id" = {p.id("queue")}',
        f'"path.assignment_id" = {p.id("assignment")}',
        f'"path.job_id" = {p.id("job")}',
        f'"path.release_id" = {p.id("release")}',
        "",
    ]
    for name in sorted({*SEMANTIC_REFUSALS, *ADMIN_ONLY}):
        statuses = SEMANTIC_REFUSALS.get(name, [])
        expected = ["2xx", *map(str, statuses if admin else sorted({*statuses, 403}))]
        lines += ["[[operations]]", f'include-name = "{name}"']
        lines.append(f"checks.positive_data_acceptance.expected-statuses = {json.dumps(expected)}")
        if not admin and name in ADMIN_ONLY:
            lines.append("phases.coverage.enabled = false")
        if name == DELETE_RELEASE:
            # It deletes the doomed release, so the release the reads use stays for the next role.
            lines.append(f'parameters = {{ "path.release_id" = {p.id("release_doomed")} }}')
        lines.append("")
    path.write_text("\n".join(lines))
    return path


def _start(live_server, schema: Path, config: Path, token: str, *filters: str, max_examples: int) -> subprocess.Popen:
    command = [
        ST,
        "--config-file",
        str(config),
        "run",
        str(schema),
        "--url",
        live_server.url,
        "--header",
        f"Authorization: Token {token}",
        "--checks",
        CHECKS,
        "--phases",
        "coverage,fuzzing",
        "--max-examples",
        str(max_examples),
        "--workers",
        "1",
        "--seed",
        str(SEED),
        "--no-shrink",
        "--suppress-health-check",
        "all",
        "--request-timeout",
        "20",
        *filters,
    ]
    # In its own folder: Schemathesis keeps a cache of past failures where it runs, and replays them.
    folder = config.with_suffix("")
    folder.mkdir()
    return subprocess.Popen(  # noqa: S603
        command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def test_every_operation_keeps_to_the_schema(live_server, tmp_path):
    world = build_world()
    # The schema the server serves, fetched once: the runs share it rather than each asking for it.
    with urllib.request.urlopen(f"{live_server.url}/api/schema/?format=json") as response:  # noqa: S310
        schema = tmp_path / "schema.json"
        schema.write_bytes(response.read())
    # The three runs go side by side (the live server answers each request in its own thread): the
    # time goes mostly to generating and checking cases, so two cores finish them sooner together.
    runs = {}
    for role in ("admin", "annotator"):
        config = _config(tmp_path / f"{role}.toml", world, admin=role == "admin")
        token = Token.objects.create(user=world.users[role]).key
        runs[role] = _start(live_server, schema, config, token, "--exclude-path-regex", TOKEN_PATHS, max_examples=5)

    # The token endpoints rotate and revoke the caller's token: a throwaway user, not a member.
    throwaway = get_user_model().objects.create_user(username="st-throwaway", password="pw-throwaway")  # noqa: S106
    token = Token.objects.create(user=throwaway).key
    config = _config(tmp_path / "tokens.toml", world, admin=True)
    tokens_only = ("--include-path-regex", TOKEN_PATHS)
    runs["a throwaway user"] = _start(live_server, schema, config, token, *tokens_only, max_examples=10)

    outputs = {}
    try:
        for who, process in runs.items():
            outputs[who] = (process.communicate(timeout=RUN_TIMEOUT_S)[0], process.returncode)
    finally:
        for process in runs.values():
            if process.poll() is None:
                process.kill()
    failed = {who: output for who, (output, code) in outputs.items() if code != 0}
    assert not failed, "\n\n".join(f"Schemathesis as {who} found failures:\n{output}" for who, output in failed.items())
