"""The permission matrix: every page and API endpoint × every kind of visitor → the expected answer.

Driven by the URL resolver: `test_every_route_has_a_decision` walks every route the project serves
and fails for one that has no row in MATRIX (or EXEMPT_*), so a page added later without a decision
about who may use it breaks this file. Visitors: anonymous, one member of project P per role
(annotator, examiner, reviser, admin; one Membership each) and the stranger, the admin of project
Q only. The policy being pinned (projects.permissions, STYLE.md):

- anonymous: pages → 302 to the login page; API → 401 (token authentication comes first);
- stranger: 404, the same as for something missing, and no name of P in the answer;
- a member whose role lacks the action: 403;
- allowed: the page's answer (200, or 302 for actions that redirect). Writes are sent with an
  empty or minimal body, so an allowed role is expected to get past the permission check and be
  refused (or served) by validation: anything but 401, 403, 404, 405, a 500 or the login page.

Examiner and reviser are never the item's author: see test_author_* below. Lists never show a
row of the other project: see test_list_pages_show_only_their_project / test_api_lists_*. An id of
another project's object in your own project's URL is not found: test_objects_of_another_project_*.

Speed: the two projects are built once for the module (tests/permission_matrix/world.py) inside a
transaction rolled back at the end; each test runs in a savepoint within it.
"""

import json
from dataclasses import dataclass, field

import pytest
from django.conf import settings
from django.db import transaction
from django.shortcuts import resolve_url
from django.test import override_settings
from django.urls import reverse

from annotator.models import ItemStatus
from projects.permissions import Action, roles_allowed
from reviewer.examination import checklist_for
from reviewer.models import ExamVerdict
from tests import factories
from tests.permission_matrix.routes import walk
from tests.permission_matrix.world import JOIN_TOKEN, P_MARK, P_NAME, P_PEOPLE, Q_MARK, Q_NAME, Q_PEOPLE, build_world

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "annotator", "examiner", "reviser", "admin", "stranger")
MEMBERS = ("annotator", "examiner", "reviser", "admin")

# Who holds each action, written out here rather than read from projects.permissions, so that a
# change of the policy shows up as a failing test (test_gates_match_the_policy) and not silently.
GATE_ROLES = {
    Action.VIEW: {"annotator", "examiner", "reviser", "admin"},
    Action.ANNOTATE: {"annotator", "admin"},
    Action.EXAMINE: {"examiner", "admin"},
    Action.REVISE: {"reviser", "admin"},
    Action.ADMINISTER: {"admin"},
}
PUBLIC = "public"  # everyone, anonymous included, gets `ok`
LOGIN_ONLY = "login"  # anyone signed in (the stranger too) gets `ok`; it shows only their own things
V, AN, EX, RV, AD = Action.VIEW, Action.ANNOTATE, Action.EXAMINE, Action.REVISE, Action.ADMINISTER

LOGIN = "302 to the login page"
WRITE = "past the permission check"  # any status but 401/403/404/405/5xx (validation answers are fine)
REFUSALS = {401, 403, 404, 405}

# Which object of P (world.p.objects) a URL keyword stands for; "=x" is the literal x.
KWARG_OBJECTS = {
    "slug": "slug",
    "video_id": "video",
    "chain_id": "chain",
    "pair_id": "chain_pair",
    "link_id": "relation",
    "chain_pair_id": "chain_pair",
    "relation_id": "relation",
    "mcq_id": "mcq",
    "queue_id": "queue",
    "assignment_id": "assignment",
    "job_id": "job",
    "seed_id": "seed",
    "score_id": "score",
    "release_id": "release",
    "kind": "=mcq",
    "item_id": "mcq",
    "step": "=transcribe",
    "panel": "=progress",
    "user_id": "member",
    "invitation_id": "invitation",
    "run_id": "evaluation",
    "index": "=0",
}
EXAMINING_MCQ = {"kind": "=mcq", "item_id": "mcq_examining"}
FLAGGED_MCQ = {"kind": "=mcq", "item_id": "mcq_flagged"}
CHAIN_ITEM = {"kind": "=qa_chain", "item_id": "chain"}
DOOMED_RELEASE = {"release_id": "release_doomed"}
PAIR_VERSION = {"version": 1}  # the world's chain pairs are at version 1
JOIN = {"token": "=" + JOIN_TOKEN}  # P's open invitation link
STAFF = "site administrators (staff) only; nobody here is staff (tests/studio/test_people_views.py)"
ACCOUNT = {"account_id": "=1"}  # any id: the staff check comes before the lookup


@dataclass(frozen=True)
class Case:
    """One route and method: which action gates it and what an allowed visitor gets."""

    route: str
    method: str = "GET"
    gate: str = V
    ok: object = 200
    kwargs: dict = field(default_factory=dict)  # overrides of KWARG_OBJECTS for this route
    query: str = ""
    roles: dict = field(default_factory=dict)  # role → expected answer, where the gate alone does not say
    path: str = ""  # a literal path instead of reversing the route (catch-all routes)
    body: dict | None = None  # a JSON body, where the view reads the body before the object
    form: dict | None = None  # form fields, where one route holds actions for different roles
    why: str = ""

    @property
    def api(self) -> bool:
        return self.route.startswith("api:")

    def expected(self, role: str):
        if role in self.roles:
            return self.roles[role]
        if self.gate == PUBLIC:
            return self.ok
        if role == "anonymous":
            return 401 if self.api else LOGIN
        if self.gate == LOGIN_ONLY:
            return self.ok
        if role == "stranger":
            return 404
        return self.ok if role in GATE_ROLES[self.gate] else 403

    def refs(self, route_kwargs) -> dict[str, str]:
        return {name: self.kwargs.get(name, KWARG_OBJECTS.get(name)) for name in route_kwargs}

    def url(self, data, route_kwargs, *, swap: str = "", other=None) -> str:
        """The route's URL over `data`'s objects; the keyword `swap` takes `other`'s object instead."""
        if self.path:
            return self.path
        kwargs = {}
        for name, ref in self.refs(route_kwargs).items():
            kwargs[name] = ref[1:] if ref.startswith("=") else (other if name == swap else data).id(ref)
        url = reverse(self.route, kwargs=kwargs)
        return f"{url}?{self.query}" if self.query else url


def post(route, gate=AD, ok=WRITE, **kw) -> Case:
    return Case(route, "POST", gate, ok, **kw)


# The lease of the world's examining MCQ is held by the examiner.
HOLDER = "the lease is held by the examiner"

MATRIX = [
    Case("healthz", gate=PUBLIC, why="liveness probe for load balancers and docker-compose; no data"),
    post(
        "csp_report",
        PUBLIC,
        400,
        why="browsers post Content-Security-Policy violation reports from any page, signed in or not, with no "
        "CSRF token; CSRF-exempt, size-limited, only logged (an empty body is no JSON: 400)",
    ),
    # --- the interface's language ---
    Case("javascript-catalog", gate=PUBLIC, why="the page modules' strings in the visitor's language; no data"),
    post(
        "set_language",
        PUBLIC,
        302,
        form={"language": "zh-hans", "next": "/"},
        why="anyone may choose the interface's language (the login page too); a signed-in person's choice is saved",
    ),
    # --- studio ---
    Case("studio:project_list", gate=LOGIN_ONLY, query="all=1", why="lists the visitor's own projects"),
    Case("studio:project_home"),
    Case("studio:project_settings", gate=AD),
    post("studio:project_settings"),
    Case("studio:model_endpoint", gate=AD),
    post("studio:model_endpoint"),
    post("studio:model_endpoint_test"),
    Case("studio:project_new", gate=LOGIN_ONLY, ok=403, why="site administrators and projects.add_project only"),
    post("studio:project_new", LOGIN_ONLY, 403, why="site administrators and projects.add_project only"),
    post("studio:project_archive", ok=302, why="archives, or unarchives, then back to the settings"),
    Case("studio:job_status"),
    post("studio:job_retry"),
    # --- people: a project's admins manage its members and invitations ---
    Case("studio:people", gate=AD),
    Case("studio:people_import", gate=AD),
    post("studio:people_import", why="without a file: the form's error"),
    post("studio:member_roles"),
    post("studio:member_deactivate"),
    post("studio:invitation_create"),
    post("studio:invitation_revoke"),
    Case("studio:join", gate=PUBLIC, kwargs=JOIN, why="the invitation link: the token is the secret"),
    post("studio:join", PUBLIC, WRITE, kwargs=JOIN, why="signs up (anonymous) or accepts (signed in)"),
    Case("studio:me", gate=LOGIN_ONLY, why="one's own statistics and API token"),
    post("studio:me_token_rotate", LOGIN_ONLY, 302, why="the caller's own token"),
    post("studio:me_token_revoke", LOGIN_ONLY, 302, why="the caller's own token"),
    Case("studio:accounts", gate=LOGIN_ONLY, ok=403, why=STAFF),
    post("studio:accounts", LOGIN_ONLY, 403, why=STAFF),
    post("studio:account_active", LOGIN_ONLY, 403, kwargs=ACCOUNT, why=STAFF),
    post("studio:account_password_link", LOGIN_ONLY, 403, kwargs=ACCOUNT, why=STAFF),
    # --- videos ---
    Case("videos:media", kwargs={"kind": "=original"}, why="members stream the bytes; no slug in the URL"),
    Case("videos:list"),
    post("videos:upload"),
    post("videos:scores_upload"),
    post("videos:reprocess"),
    post("videos:run_step"),
    post("videos:run_step_bulk", kwargs={"step": "=complexity"}),
    post("videos:curation"),
    post("videos:subtitles_upload"),
    post("videos:comments_upload"),
    Case("videos:player"),
    Case("videos:player_subtitles"),
    Case("videos:player_comments", query="start=0&end=60"),
    # --- drafts (admins run the machines) ---
    Case("annotator:drafts", gate=AD),
    post("annotator:draft_start"),
    Case("annotator:draft_job", gate=AD),
    Case("annotator:seeds", gate=AD),
    post("annotator:seed_add"),
    post("annotator:seed_change"),
    # --- annotation: everyone reads; editing a chain, links or MCQ being annotated is the annotators' ---
    Case("annotator:work"),
    Case("annotator:work_next", ok=302, why="opens the next item, or goes back to the list"),
    post("annotator:chain_new", AN, why="writing a chain by hand is annotating"),
    Case("annotator:chain_editor"),
    post("annotator:chain_save", AN, why="annotating chain: annotate (edit_rights.may_edit)"),
    post("annotator:chain_undo", AN),
    post("annotator:chain_submit", AN),
    post("annotator:pair_new", AN, why="opening a chain pair to link by hand is annotating"),
    Case("annotator:pair_editor"),
    post("annotator:pair_link_add", AN),
    # These read the body's version before the link, so an empty body would answer 400 before 404.
    post("annotator:pair_link_decide", AN, body=PAIR_VERSION),
    post("annotator:pair_link_type", AN, body=PAIR_VERSION),
    post("annotator:pair_link_rewrite", AN, body=PAIR_VERSION),
    post("annotator:pair_link_remove", AN, body=PAIR_VERSION),
    post("annotator:pair_submit", AN),
    Case("annotator:mcq_list"),
    post("annotator:mcq_new", AN),
    Case("annotator:mcq_next", ok=302, why="opens the next MCQ, or goes back to the list"),
    Case("annotator:mcq_editor"),
    post("annotator:mcq_save", AN),
    post("annotator:mcq_undo", AN),
    post("annotator:mcq_submit", AN),
    post("annotator:video_unusable", AN, why="flagging is the annotators'"),
    post("annotator:video_unusable", AD, form={"action": "clear"}, why="clearing the flag is the admins'"),
    # --- queues ---
    Case("reviewer:queues"),
    post("reviewer:queues", why="creating a queue"),
    post("reviewer:claim_next", V, 302, why="claims from the visitor's own queues; none → back to the list"),
    Case("reviewer:queue_detail", gate=AD),
    post("reviewer:queue_detail"),
    post(
        "reviewer:queue_claim",
        V,
        302,
        why="the claim service refuses a visitor who may not claim with a message on the queues page",
    ),
    post("reviewer:queue_assign"),
    post("reviewer:queue_leases"),
    post("reviewer:lease_release", V, 403, roles={"examiner": WRITE, "admin": WRITE}, why=HOLDER + " (or an admin)"),
    post("reviewer:item_presence", V, 200, why="an open page of an item says it is open; every member may see items"),
    # --- quality gate and history ---
    Case("reviewer:score_list"),
    post("reviewer:gate_waiting"),
    Case("reviewer:stuck_work", gate=AD),
    Case("audits:page", gate=AD),
    Case("audits:csv", gate=AD),
    Case("audits:probes_csv", gate=AD),
    # --- evaluations: members read the leaderboard and runs; admins start, cancel and resume ---
    Case("evaluations:leaderboard"),
    Case("evaluations:csv"),
    post("evaluations:start", why="an empty form is refused with a message: back to the leaderboard"),
    Case("evaluations:compare", ok=302, why="without two runs chosen: back to the leaderboard with a message"),
    Case("evaluations:run"),
    post("evaluations:act", why="an unknown action is refused with a message: back to the run"),
    Case("evaluations:prediction"),
    post("audits:run", why="a refused run (no model endpoint) goes back to the page with the message"),
    post("audits:send", why="an empty form sends nothing: back to the page with a message"),
    post("reviewer:stuck_work_act", why="an empty form is no action: back to the page with a message (302)"),
    Case("reviewer:score_call"),
    Case("reviewer:item_scores", ok=302, kwargs=CHAIN_ITEM, why="a plain visit goes to the history page"),
    post("reviewer:item_judge", kwargs=CHAIN_ITEM),
    Case("reviewer:item_history", kwargs=CHAIN_ITEM),
    post("reviewer:item_revert", kwargs=CHAIN_ITEM),
    # --- dashboards ---
    Case("reviewer:dashboard", gate=AD),
    post("reviewer:dashboard_refresh", why="recomputes a snapshot; without a preset range: 400"),
    Case("reviewer:dashboard_csv", gate=AD),
    Case("reviewer:dashboard_rows", gate=AD, query="kind=mcq"),
    # --- examination and revision ---
    Case("reviewer:examine_home", gate=EX),
    post("reviewer:examine_next", EX),
    Case("reviewer:examine_item", gate=EX, kwargs=EXAMINING_MCQ),
    post("reviewer:examine_verdict", EX, kwargs=EXAMINING_MCQ),
    post("reviewer:examine_reopen", kwargs=EXAMINING_MCQ),
    Case("reviewer:revise_list", gate=RV),
    post("reviewer:revise_next", RV),
    post("reviewer:revise_start", RV, kwargs=FLAGGED_MCQ),
    # --- releases: members read and download, admins cut and delete ---
    Case("releases:list"),
    Case("releases:new", gate=AD),
    post("releases:new"),
    post("releases:preview"),
    Case("releases:import", gate=AD, why="importing benchmark files is an admin's import"),
    post("releases:import"),
    Case("releases:import_job", gate=AD, kwargs={"job_id": "import_job"}),
    Case("releases:detail"),
    Case("releases:row"),
    Case("releases:statistics"),
    Case("releases:download_zip"),
    Case("releases:download_tar"),
    Case("releases:delete", gate=AD, why="the confirmation page"),
    post("releases:delete", kwargs=DOOMED_RELEASE),
    # --- API ---
    post("api:token-obtain", PUBLIC, 400, why="credentials come in the body; no session or token is read"),
    post("api:token-revoke", LOGIN_ONLY, 204, why="revokes the caller's own token"),
    Case("api:token-status", gate=LOGIN_ONLY, why="whether the caller has a token; never the key"),
    Case("api:project-list", gate=LOGIN_ONLY, why="lists the caller's own projects"),
    Case("api:member-list", gate=AD),
    post("api:member-list", why="add roles"),
    Case("api:member-detail", "DELETE", AD, WRITE),
    post("api:member-roles-remove"),
    Case("api:invitation-list", gate=AD),
    post("api:invitation-list", why="create"),
    post("api:invitation-revoke"),
    Case("api:project-detail"),
    post("api:project-list", LOGIN_ONLY, 403, why="creating a project: site administrators and projects.add_project"),
    Case("api:project-settings", gate=AD),
    Case("api:project-settings", "PATCH", AD, WRITE),
    post("api:project-archive"),
    post("api:project-unarchive"),
    Case("api:video-list"),
    post("api:video-list", why="upload"),
    Case("api:video-detail"),
    post("api:manifest-import"),
    post("api:benchmark-import"),
    post("api:video-reprocess"),
    post("api:video-transcribe"),
    post("api:video-complexity"),
    Case("api:video-clips"),
    Case("api:video-cues"),
    post("api:video-subtitles"),
    Case("api:video-comments", query="start=0&end=60"),
    post("api:video-comments", why="import"),
    Case("api:video-comments-density"),
    Case("api:video-curation"),
    post("api:video-curation", why="override"),
    post("api:scores-import"),
    Case("api:audit", gate=AD),
    post("api:audit-probe-runs", why="starting probes is the admins'; the world has no model endpoint (409)"),
    post("api:audit-send", why="the empty body is refused by validation"),
    Case("api:evaluation-list"),
    post("api:evaluation-list", why="starting a run; the empty body is refused by validation"),
    Case("api:evaluation-compare", ok=400, why="without a and b: a validation error"),
    Case("api:evaluation-detail"),
    Case("api:evaluation-predictions"),
    post("api:evaluation-cancel"),
    post("api:evaluation-resume", why="resuming needs an endpoint: the world has none (409)"),
    Case("api:job-list"),
    Case("api:job-detail"),
    post("api:job-retry"),
    Case("api:queue-list"),
    post("api:queue-claim", EX, why="an examining queue: roles that examine (and are its members) claim"),
    post("api:queue-assign"),
    post("api:assignment-heartbeat", V, 403, roles={"examiner": WRITE}, why=HOLDER),
    post("api:assignment-release", V, 403, roles={"examiner": WRITE, "admin": WRITE}, why=HOLDER + " (or an admin)"),
    post("api:assignment-complete", V, 403, roles={"examiner": WRITE}, why=HOLDER),
    post("api:assignment-reassign"),
    Case("api:release-list"),
    post("api:release-list", why="create"),
    Case("api:release-detail"),
    Case("api:release-detail", "DELETE", AD, WRITE, kwargs=DOOMED_RELEASE),
    Case("api:release-download"),
    Case("api:release-statistics"),
    # Items: everyone reads; writing a chain, links or MCQ being annotated is the annotators' (edit_rights).
    Case("api:chain-list"),
    post("api:chain-list", AN, why="writing a chain by hand; the empty body is refused by validation"),
    Case("api:chain-detail"),
    Case("api:chain-detail", "PUT", AN, WRITE, why="annotating chain: edit_rights.may_edit"),
    post("api:chain-submit", AN),
    Case("api:relation-list"),
    post("api:relation-list", AN, why="adding a link to a chain pair being annotated"),
    Case("api:relation-detail", "PATCH", AN, WRITE),
    Case("api:relation-detail", "DELETE", AN, WRITE, why="no `version` in the query: 400"),
    post("api:chain-pair-submit", AN),
    Case("api:mcq-list"),
    post("api:mcq-list", AN, why="a new MCQ; the empty body is refused by validation"),
    Case("api:mcq-detail"),
    Case("api:mcq-detail", "PATCH", AN, WRITE, why="annotating MCQ: edit_rights.may_edit"),
    post("api:mcq-submit", AN),
    *(
        Case(
            "api:not-found",
            method,
            PUBLIC,
            404,
            path="/api/no-such-endpoint/",
            why="the catch-all: any unknown /api/ path answers 404 in the API's error shape",
        )
        for method in ("GET", "POST", "PUT", "PATCH", "DELETE")
    ),
]

# Routes with no row in MATRIX, on purpose. Matched by the start of the route's pattern or by name.
EXEMPT_PREFIXES = {
    "admin/": "Django admin: staff accounts and model permissions, not projects.permissions",
    "accounts/": "Django's login, logout and password views: public by design (tests/browser/test_login.py)",
}
EXEMPT_NAMES = {
    "api:schema": "the OpenAPI schema describes the API, not anyone's data: public by design",
    "api:docs": "Swagger UI over the schema: public by design",
    "api:redoc": "ReDoc over the schema: public by design",
}
EXEMPT_CALLBACKS = {
    "django.views.static.serve": "static and media files served by runserver in DEBUG only",
}

HOW_TO_CLASSIFY = (
    "Add a row to MATRIX in tests/test_permission_matrix.py, e.g. "
    "Case('{name}', gate=Action.VIEW) for a page every member reads, or post('{name}', Action.ADMINISTER) "
    "for a form only admins send (gate: public, login, view, annotate, examine, revise or administer; "
    "ok: what an allowed role gets). If it is public by design, add it to EXEMPT_NAMES with the reason."
)


def _exemption(route) -> str:
    callback = f"{getattr(route.callback, '__module__', '')}.{getattr(route.callback, '__name__', '')}"
    for prefix, reason in EXEMPT_PREFIXES.items():
        if route.pattern.startswith(prefix):
            return reason
    return EXEMPT_NAMES.get(route.name) or EXEMPT_CALLBACKS.get(callback, "")


def _routes() -> dict:
    return {route.name: route for route in walk() if not _exemption(route)}


# --- the routes --------------------------------------------------------------------------------------------


def test_every_route_has_a_decision():
    routes = _routes()
    cases: dict[str, set[str]] = {}
    for case in MATRIX:
        cases.setdefault(case.route, set()).add(case.method)

    problems = []
    for name, route in routes.items():
        if name not in cases:
            problems.append(f"{name} ({route.pattern}) has no entry. " + HOW_TO_CLASSIFY.format(name=name))
            continue
        missing = (route.api_methods or set()) - cases[name]
        if missing:
            problems.append(
                f"{name} ({route.pattern}) answers {', '.join(sorted(missing))} with no entry: add "
                f"Case('{name}', '{min(missing)}', gate=…, ok=…) to MATRIX."
            )
        overridden = {k for c in MATRIX if c.route == name for k in c.kwargs}
        unknown = route.kwargs - set(KWARG_OBJECTS) - overridden
        if unknown:
            problems.append(
                f"{name} ({route.pattern}) takes {', '.join(sorted(unknown))}: say which object of the world it "
                "stands for in KWARG_OBJECTS (or the case's kwargs) of tests/test_permission_matrix.py."
            )
    stale = sorted(set(cases) - set(routes))
    if stale:
        problems.append(f"MATRIX has rows for routes that no longer exist: {', '.join(stale)}; remove them.")
    assert not problems, "\n".join(problems)


def test_exemptions_name_routes_that_exist():
    """An exemption for a route that is gone would silently exempt whatever later takes its name."""
    names = {route.name for route in walk()}
    assert set(EXEMPT_NAMES) <= names
    patterns = [route.pattern for route in walk()]
    for prefix in EXEMPT_PREFIXES:
        assert any(p.startswith(prefix) for p in patterns), prefix


def test_gates_match_the_policy():
    for action, roles in GATE_ROLES.items():
        assert {str(r) for r in roles_allowed(action)} == roles, action


# --- the world ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def media_root(tmp_path_factory):
    path = tmp_path_factory.mktemp("matrix-media")
    with override_settings(MEDIA_ROOT=str(path)):
        yield path


@pytest.fixture(autouse=True)
def _media_root(media_root):
    """Replaces the suite's per-test media folder: the world's files are written once, for every test."""


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker, media_root):
    """Built once for the module in a transaction that is rolled back at the end; each test runs in a
    savepoint inside it (pytest-django's `db`), so what a test writes is undone before the next."""
    with django_db_blocker.unblock(), transaction.atomic():
        yield build_world()
        transaction.set_rollback(True)


def _send(client, case: Case, url: str):
    method = case.method.lower()
    if case.body is not None or (case.api and method in ("post", "put", "patch")):
        return getattr(client, method)(url, data=json.dumps(case.body or {}), content_type="application/json")
    if case.form is not None:
        return getattr(client, method)(url, data=case.form)
    return getattr(client, method)(url)


def _body(response) -> str:
    # Reading a stream to the end closes it (the test client's wrapper); closing it again here would
    # fire request_finished and close the database connection inside the test's transaction.
    content = b"".join(response.streaming_content) if response.streaming else response.content
    return content.decode("utf-8", errors="replace")


def _is_login_redirect(response) -> bool:
    return response.status_code == 302 and response["Location"].startswith(resolve_url(settings.LOGIN_URL) + "?next=")


def _params():
    for case in MATRIX:
        for role in ROLES:
            variant = "".join(f"[{k}={v}]" for k, v in (case.form or {}).items())
            case_id = f"{case.route}:{case.method}{variant}:{role}"
            yield pytest.param(case, role, id=case_id)


@pytest.mark.parametrize(("case", "role"), list(_params()))
def test_matrix(client, world, case, role):
    route = _routes()[case.route]
    url = case.url(world.p, route.kwargs)
    if role != "anonymous":
        client.force_login(world.users[role])
    response = _send(client, case, url)
    status = response.status_code
    body = _body(response)
    expected = case.expected(role)
    where = f"{case.method} {url} as {role}: got {status}" + (f" → {response.get('Location')}" if status == 302 else "")
    where += f" ({case.why})" if case.why else ""

    if expected == LOGIN:
        assert _is_login_redirect(response), f"{where}; expected {LOGIN}"
    elif expected == WRITE:
        assert status not in REFUSALS and status < 500, f"{where}; expected {WRITE}"
        assert not _is_login_redirect(response), f"{where}; expected {WRITE}"
    else:
        assert status == expected, f"{where}; expected {expected}: {body[:300]}"
    if role == "stranger":
        # "Not yours" says nothing about what is there.
        assert P_MARK not in body, f"{where}; the answer names something of project P"


# --- an object of another project is not found through your own project ------------------------------------


def _swap_params():
    for case in MATRIX:
        if case.path:
            continue
        for name, ref in sorted(case.refs(_routes()[case.route].kwargs).items()):
            if name != "slug" and not ref.startswith("="):
                variant = "".join(f"[{k}={v}]" for k, v in (case.form or {}).items())
                yield pytest.param(case, name, id=f"{case.route}:{case.method}{variant}:{name}")


@pytest.mark.parametrize(("case", "swap"), list(_swap_params()))
def test_objects_of_another_project_are_not_found(client, world, case, swap):
    """The stranger is Q's admin: Q's URLs with one id of P's (a video, an item, a lease …) say 404."""
    url = case.url(world.q, _routes()[case.route].kwargs, swap=swap, other=world.p)
    client.force_login(world.users["stranger"])
    response = _send(client, case, url)
    body = _body(response)
    assert response.status_code == 404, f"{case.method} {url} as Q's admin: got {response.status_code}"
    assert P_MARK not in body, f"{case.method} {url}: the answer names something of project P"


# --- examiner and reviser are never the item's author --------------------------------------------------------


def _mcq_by(world, author, status):
    p = world.p
    return factories.MCQFactory(project=p.project, video=p.objects["video"], author=author, status=status)


def _pass_form(item) -> dict:
    return {"decision": "pass", "ok": [code for code, _ in checklist_for("mcq")], "version": str(item.version)}


def test_author_examiner_gets_403_on_their_own_item_and_others_can_pass_it(client, world):
    p, examiner = world.p, world.users["examiner"]
    own = _mcq_by(world, examiner, ItemStatus.EXAMINING)
    client.force_login(examiner)

    def verdict_url(item):
        return reverse("reviewer:examine_verdict", args=[p.project.slug, "mcq", item.pk])

    mine = client.post(verdict_url(own), _pass_form(own))
    assert mine.status_code == 403

    theirs = p.objects["mcq_examining"]
    response = client.post(verdict_url(theirs), _pass_form(theirs))
    assert response.status_code == 302
    assert ExamVerdict.objects.filter(mcq=theirs, examiner=examiner).exists()


def test_author_reviser_gets_403_on_starting_a_revision_of_their_own_item(client, world):
    p, reviser = world.p, world.users["reviser"]
    own = _mcq_by(world, reviser, ItemStatus.FLAGGED)
    client.force_login(reviser)

    mine = client.post(reverse("reviewer:revise_start", args=[p.project.slug, "mcq", own.pk]))
    assert mine.status_code == 403
    own.refresh_from_db()
    assert own.status == ItemStatus.FLAGGED

    theirs = p.objects["mcq_flagged"]
    response = client.post(reverse("reviewer:revise_start", args=[p.project.slug, "mcq", theirs.pk]))
    assert response.status_code == 302
    theirs.refresh_from_db()
    assert theirs.status == ItemStatus.REVISING


def test_author_is_never_handed_their_own_item_by_a_claim(client, world):
    """The examining queue holds the examiner's own MCQ (and one already leased): the examiner gets
    nothing, the admin, who did not write it, gets the examiner's MCQ."""
    p, examiner = world.p, world.users["examiner"]
    own = _mcq_by(world, examiner, ItemStatus.EXAMINING)
    url = reverse("api:queue-claim", args=[p.project.slug, p.objects["queue"].pk])

    client.force_login(examiner)
    assert client.post(url).status_code == 204

    client.force_login(world.users["admin"])
    response = client.post(url)
    assert response.status_code == 201
    assert response.json()["item"]["id"] == own.pk


def test_author_reviser_may_not_edit_their_own_flagged_item_in_revision(client, world):
    """In revision after an examiner's flag, a reviser edits it, unless the reviser wrote it."""
    p, reviser = world.p, world.users["reviser"]
    own = _mcq_by(world, reviser, ItemStatus.REVISING)
    theirs = _mcq_by(world, world.users["annotator"], ItemStatus.REVISING)
    client.force_login(reviser)

    def save(item):
        url = reverse("annotator:mcq_save", args=[p.project.slug, item.pk])
        return client.post(url, data=json.dumps({}), content_type="application/json")

    assert save(own).status_code == 403
    assert save(theirs).status_code == 400  # past the permission check: the empty body is refused


# --- no list shows a row of the other project ---------------------------------------------------------------

# Page lists, and who reads them (every role the matrix gives 200). Q's stranger reads Q's.
# The third element is what of its own project the page must show ("mark": a row's name or text;
# "name": the project's name, for the list of projects), so that "nothing foreign" proves something.
LIST_PAGES = [
    ("studio:project_list", "all=1", "name"),
    ("studio:project_home", "", "name"),
    ("videos:list", "", "mark"),
    ("annotator:work", "", "mark"),
    ("annotator:mcq_list", "", "mark"),
    ("annotator:drafts", "", "mark"),
    ("annotator:seeds", "", "mark"),
    ("reviewer:queues", "", "mark"),
    ("reviewer:queue_detail", "", "mark"),
    ("reviewer:score_list", "", "mark"),
    ("reviewer:stuck_work", "", "name"),  # the world has no stuck work: its name shows whose page it is
    ("audits:page", "", "mark"),
    ("evaluations:leaderboard", "", "mark"),
    ("reviewer:dashboard", "", "mark"),
    ("reviewer:examine_home", "", "mark"),
    ("reviewer:revise_list", "", "mark"),
    ("releases:list", "", "mark"),
]
API_LISTS = [
    ("api:project-list", "", "name"),
    ("api:video-list", "", "mark"),
    ("api:video-clips", "", "clips"),
    ("api:video-cues", "", "mark"),
    ("api:video-comments", "start=0&end=60", "mark"),
    ("api:job-list", "", "mark"),
    ("api:evaluation-list", "", "mark"),
    ("api:queue-list", "", "mark"),
    ("api:release-list", "", "mark"),
    ("api:chain-list", "", "mark"),
    ("api:mcq-list", "", "mark"),
]


# Lists that are empty for a visitor by design: the check falls back to the project's name there.
EMPTY_FOR = {
    ("annotator:work", "examiner"): "lists what the visitor can edit; examiners edit nothing here",
    ("annotator:work", "reviser"): "lists what the visitor can edit; nothing of P is being revised",
    ("reviewer:revise_list", "stranger"): "Q's flagged item is the stranger's own: nobody revises their own",
}


def _foreign(world, data) -> tuple[str, ...]:
    """What of the other project must never appear: its names and texts, its people, its name and slug."""
    if data is world.p:
        return Q_MARK, Q_PEOPLE, Q_NAME, world.q.project.slug
    return P_MARK, P_PEOPLE, P_NAME, world.p.project.slug


def _readers(route: str) -> list[str]:
    case = next(c for c in MATRIX if c.route == route and c.method == "GET")
    return [role for role in MEMBERS if case.expected(role) == 200]


def _list_params(lists):
    for route, query, shows in lists:
        for role in [*_readers(route), "stranger"]:
            yield pytest.param(route, query, shows, role, id=f"{route}:{role}")


def _list_get(client, world, route, query, role):
    """GET the list of the visitor's own project: Q's for the stranger, P's for everyone else."""
    data = world.q if role == "stranger" else world.p
    client.force_login(world.users[role])
    response = client.get(Case(route, query=query).url(data, _routes()[route].kwargs))
    assert response.status_code == 200, f"{route} as {role}: {response.status_code}"
    return data, response


def _shows_its_own(data, shows: str, body: str) -> bool:
    return (data.project.name if shows == "name" else data.mark) in body


@pytest.mark.parametrize(("route", "query", "shows", "role"), list(_list_params(LIST_PAGES)))
def test_list_pages_show_only_their_project(client, world, route, query, shows, role):
    data, response = _list_get(client, world, route, query, role)
    body = response.content.decode()
    if (route, role) in EMPTY_FOR:
        shows = "name"
    assert _shows_its_own(data, shows, body), f"{route} as {role} shows no row of its own project"
    for token in _foreign(world, data):
        assert token not in body, f"{route} as {role} shows {token!r} of the other project"


@pytest.mark.parametrize(("route", "query", "shows", "role"), list(_list_params(API_LISTS)))
def test_api_lists_show_only_their_project(client, world, route, query, shows, role):
    data, response = _list_get(client, world, route, query, role)
    body = response.content.decode()
    if shows == "clips":
        # Clips have no text of their own: their ids must be exactly the video's.
        returned = {clip["id"] for clip in response.json()["clips"]}
        assert returned and returned == set(data.objects["video"].clips.values_list("pk", flat=True))
    else:
        assert _shows_its_own(data, shows, body), f"{route} as {role} returns no row of its own project"
    for token in _foreign(world, data):
        assert token not in body, f"{route} as {role} returns {token!r} of the other project"


@pytest.mark.parametrize("role", [*MEMBERS, "stranger"])
def test_api_project_list_is_exactly_the_callers_projects(client, world, role):
    data = world.q if role == "stranger" else world.p
    client.force_login(world.users[role])
    results = client.get(reverse("api:project-list")).json()["results"]
    assert [r["slug"] for r in results] == [data.project.slug]
