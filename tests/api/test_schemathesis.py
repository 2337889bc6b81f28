"""The OpenAPI schema tells the truth: Schemathesis drives every operation of the live server.

Two members of a project with real data (a video, clips, cues, comments, queues, an assignment, a
job, releases), an admin and an annotator, each get one run over every operation but the token
ones; the token endpoints get their own run with a throwaway user, because obtaining a token
rotates it, revoking deletes it, and random passwords posted at the login must not count against a
real member's failed logins. Archiving a project stops its work (409 `project_archived`), so the
archive and unarchive operations get a run of their own against a throwaway project, and the other
runs test the real behaviour of a live project. Path ids are pinned to that project's rows, so the
requests reach the views' logic instead of stopping at a 404.

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
- POST chains/, PUT chains/{id}/, POST chain-pairs/{id}/relations/, PATCH|DELETE …/relations/{id}/,
  POST mcqs/, PATCH mcqs/{id}/ and their …/submit/: a chain names a clip of this project and skills of
  its taxonomy, a relation turns that exist in the pair's chains and a relation type of the taxonomy,
  an MCQ videos of this project and moments inside them (other rows: 400/422); a version must be the
  stored one and the item still editable (409), and a machine-proposed link is rejected, not removed
  (422); a submitted item must be complete (422); once submitted (by a run's earlier request) the item
  has moved on, and only its stage's people may change it (403); a deleted link is gone (404).
  PATCH …/relations/{id}/ has rules between its fields: a rewritten question and answer go together,
  and a version alone changes nothing (400).
- POST members/: the username must name an existing account (400). POST members/{id}/remove-roles/ and
  DELETE members/{id}/: a member left with no role is no longer one (404 afterwards), and the last admin
  keeps the admin role (409).
- POST invitations/: Django's e-mail validation is stricter than the `email` format the schema states (400).
- PATCH settings/: the editable taxonomies' rows need unique codes, and some numbers bound others (400).
- POST auth/token/: random credentials are wrong credentials (401), and many of them are throttled (429).
- POST audit/probe-runs/ and evaluations/ (and …/resume/): the MCQ ids, the release and its file name
  other rows and files (400), and a project with no model endpoint cannot start one (409);
  audit/send-to-review/ names MCQs of this project (400); benchmark-imports/ reads a zip or a server
  folder whose content has rules (400/413/422) and refuses a file imported before (409).

Budget: coverage and fuzzing phases (fuzzing only for the annotator on admin-only operations, which
answer 403 before reading any input), five fuzzed examples per operation, one worker per run, the
four runs side by side, a fixed seed. Path parameters are pinned to real rows, so malformed path
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

from annotator.models import Origin, QAPair
from projects.models import Role
from tests import factories
from tests.permission_matrix.world import P_PEOPLE, build_world

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
ARCHIVE_PATHS = "^/api/projects/[^/]+/(un)?archive/$"
# Each run takes two to four minutes on a loaded two-core machine; the bound stops a hung one.
RUN_TIMEOUT_S = 480

DELETE_RELEASE = "DELETE /api/projects/{slug}/releases/{release_id}/"
DELETE_RELATION = "DELETE /api/projects/{slug}/chain-pairs/{chain_pair_id}/relations/{relation_id}/"
DELETE_MEMBER = "DELETE /api/projects/{slug}/members/{user_id}/"
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
    "POST /api/projects/{slug}/chains/": [400, 409, 422],
    "PUT /api/projects/{slug}/chains/{chain_id}/": [403, 409, 422],
    "POST /api/projects/{slug}/chains/{chain_id}/submit/": [403, 409, 422],
    "POST /api/projects/{slug}/chain-pairs/{chain_pair_id}/relations/": [403, 409, 422],
    "PATCH /api/projects/{slug}/chain-pairs/{chain_pair_id}/relations/{relation_id}/": [400, 403, 409, 422],
    "POST /api/projects/{slug}/chain-pairs/{chain_pair_id}/submit/": [403, 409, 422],
    DELETE_RELATION: [403, 404, 409, 422],
    "POST /api/projects/{slug}/mcqs/": [400, 422],
    "PATCH /api/projects/{slug}/mcqs/{mcq_id}/": [403, 409, 422],
    "POST /api/projects/{slug}/mcqs/{mcq_id}/submit/": [403, 409, 422],
    "POST /api/projects/{slug}/members/": [400, 409],
    "POST /api/projects/{slug}/members/{user_id}/remove-roles/": [404, 409],
    DELETE_MEMBER: [404, 409],
    "POST /api/projects/{slug}/invitations/": [400],
    "PATCH /api/projects/{slug}/settings/": [400],
    "POST /api/auth/token/": [401, 429],
    "POST /api/projects/{slug}/audit/probe-runs/": [400, 409],
    "POST /api/projects/{slug}/audit/send-to-review/": [400],
    "POST /api/projects/{slug}/benchmark-imports/": [400, 409, 413, 422],
    "POST /api/projects/{slug}/evaluations/": [400, 409],
    "POST /api/projects/{slug}/evaluations/{run_id}/resume/": [400, 409],
    "POST /api/projects/{slug}/evaluations/{run_id}/cancel/": [],
}
# The items' operations are any member's (each refuses what the caller's roles may not do), not the admin's.
MEMBER_OPERATIONS = ("/chains/", "/chain-pairs/", "/mcqs/")


# What only a project admin may do: everyone else gets 403 before any input is read.
ADMIN_ONLY = {
    *(
        name
        for name in SEMANTIC_REFUSALS
        if ("/assignments/" not in name or name.endswith("/reassign/"))
        and not any(m in name for m in MEMBER_OPERATIONS)
    ),
    "POST /api/projects/{slug}/videos/{video_id}/curation/",
    "GET /api/projects/{slug}/settings/",
    "POST /api/projects/{slug}/invitations/{invitation_id}/revoke/",
} - {"POST /api/projects/{slug}/queues/{queue_id}/claim/", "POST /api/auth/token/"}


def _doomed_rows(world) -> dict:
    """Rows the deleting operations take, so the rows the other operations use stay for them."""
    p = world.p
    relation = p.objects["relation"]
    turn_1 = QAPair.objects.get(chain=relation.chain_pair.chain_before, index=1)
    # Drawn by a person: a machine-proposed link is rejected, never removed.
    doomed_relation = factories.RelationFactory(
        chain_pair=relation.chain_pair, from_pair=turn_1, to_pair=relation.to_pair, origin=Origin.HUMAN
    )
    doomed_member = factories.UserFactory(username=f"doomed-{P_PEOPLE}")
    factories.MembershipFactory(project=p.project, user=doomed_member, role=Role.REVISER)
    return {"relation": doomed_relation.pk, "member": doomed_member.pk}


def _config(path: Path, world, doomed: dict, *, admin: bool, slug: str = "") -> Path:
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
        f'"path.slug" = "{slug or p.project.slug}"',
        f'"path.video_id" = {p.id("video")}',
        f'"path.queue_id" = {p.id("queue")}',
        f'"path.assignment_id" = {p.id("assignment")}',
        f'"path.job_id" = {p.id("job")}',
        f'"path.release_id" = {p.id("release")}',
        f'"path.chain_id" = {p.id("chain")}',
        f'"path.chain_pair_id" = {p.id("chain_pair")}',
        f'"path.relation_id" = {p.id("relation")}',
        f'"path.mcq_id" = {p.id("mcq")}',
        # The reviser: the admin running changes their roles, not the admin's own or the annotator's.
        f'"path.user_id" = {world.users["reviser"].pk}',
        f'"path.invitation_id" = {p.id("invitation")}',
        f'"path.run_id" = {p.id("evaluation")}',
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
        if name == DELETE_RELATION:
            lines.append(f'parameters = {{ "path.relation_id" = {doomed["relation"]} }}')
        if name == DELETE_MEMBER:
            lines.append(f'parameters = {{ "path.user_id" = {doomed["member"]} }}')
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
    doomed = _doomed_rows(world)
    runs = {}
    tokens = {role: Token.objects.create(user=world.users[role]).key for role in ("admin", "annotator")}
    elsewhere = ("--exclude-path-regex", f"{TOKEN_PATHS}|{ARCHIVE_PATHS}")
    for role in ("admin", "annotator"):
        config = _config(tmp_path / f"{role}.toml", world, doomed, admin=role == "admin")
        runs[role] = _start(live_server, schema, config, tokens[role], *elsewhere, max_examples=5)

    # Archiving stops a project's work: a throwaway project of the same admin, archived and unarchived.
    archived = factories.ProjectFactory(name="Project Archived", slug="proj-archived")
    factories.MembershipFactory(project=archived, user=world.users["admin"], role=Role.ADMIN)
    config = _config(tmp_path / "archive.toml", world, doomed, admin=True, slug=archived.slug)
    archive_only = ("--include-path-regex", ARCHIVE_PATHS)
    runs["admin of a throwaway project"] = _start(
        live_server, schema, config, tokens["admin"], *archive_only, max_examples=5
    )

    # The token endpoints rotate and revoke the caller's token: a throwaway user, not a member.
    throwaway = get_user_model().objects.create_user(username="st-throwaway", password="pw-throwaway")  # noqa: S106
    token = Token.objects.create(user=throwaway).key
    config = _config(tmp_path / "tokens.toml", world, doomed, admin=True)
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
