"""Imports between the apps go one way: interfaces → review and releases → items → media, models and
jobs → projects.

The check reads every module's imports with `ast` (nothing is imported, so a module that would fail
to import is still checked). A module is an *interface* when it lives in an interface package (api,
studio, demo, config, backups) or is a view, URL, admin, template-tag or management-command module of any
app: interfaces may import any floor. Every other module sits on its app's floor and may import its
own floor (when the two apps do not import each other) or any floor below it, never one above.
Nobody imports a private (underscore) name of another app.
"""

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The floors, lowest first. `charts` draws SVG and `estimates` computes statistics from plain numbers;
# neither imports an app. `releases` may import `audits` (the release gate), never the reverse.
# `evaluations` scores models on releases: the last step of the flow.
FLOORS: dict[str, int] = {
    "charts": 0,
    "estimates": 0,
    "projects": 0,
    "jobs": 1,
    "llm": 1,
    "videos": 1,
    "annotator": 2,
    "reviewer": 3,
    "audits": 3,
    "releases": 3,
    "evaluations": 4,
}
INTERFACE_APPS = {"api", "studio", "demo", "config", "backups"}
APPS = set(FLOORS) | INTERFACE_APPS
INTERFACE = 99


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted
    line: int
    target: str  # the imported module, dotted
    names: tuple[str, ...]


def module_floor(module: str) -> int:
    parts = module.split(".")
    app = parts[0]
    if app in INTERFACE_APPS:
        return INTERFACE
    last = parts[-1]
    if (
        last.endswith("views")
        or last in {"urls", "admin"}
        or "templatetags" in parts
        or ("management" in parts and "commands" in parts)
    ):
        return INTERFACE
    return FLOORS[app]


def imports_of(module: str, source: str) -> list[Import]:
    """The imports of one module that name another app."""
    app = module.split(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            targets = [(node.module, tuple(a.name for a in node.names))]
        elif isinstance(node, ast.Import):
            targets = [(a.name, ()) for a in node.names]
        else:
            continue
        for target, names in targets:
            top = target.split(".")[0]
            if top in APPS and top != app:
                found.append(Import(module, node.lineno, target, names))
    return found


def project_modules() -> dict[str, str]:
    sources = {}
    for app in sorted(APPS):
        for path in sorted((ROOT / app).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if "migrations" in rel.parts:
                continue  # migrations name other apps' migrations by design
            dotted = ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
            sources[dotted] = path.read_text(encoding="utf-8")
    return sources


def app_graph(sources: dict[str, str]) -> dict[str, set[str]]:
    """Which app's domain modules import which app. Interface modules are the top floor wherever they
    live (an editor's views in annotator/ may show reviewer's lease panel), so they are not edges."""
    graph: dict[str, set[str]] = defaultdict(set)
    for module, source in sources.items():
        if module_floor(module) == INTERFACE:
            continue
        for imp in imports_of(module, source):
            graph[module.split(".")[0]].add(imp.target.split(".")[0])
    return graph


def violations(sources: dict[str, str]) -> list[str]:
    graph = app_graph(sources)
    problems = []
    for module, source in sources.items():
        floor = module_floor(module)
        for imp in imports_of(module, source):
            where = f"{module}:{imp.line} imports {imp.target}"
            private = [n for n in imp.names if n.startswith("_")]
            private += [p for p in imp.target.split(".") if p.startswith("_") and not p.startswith("__")]
            if private:
                problems.append(f"{where}: private name(s) {', '.join(private)} of another app")
            if floor == INTERFACE:
                continue
            target_app = imp.target.split(".")[0]
            if target_app in INTERFACE_APPS:
                problems.append(f"{where}: an interface, from floor {floor}")
                continue
            target_floor = module_floor(imp.target)
            if target_floor == INTERFACE:
                problems.append(f"{where}: an interface module, from floor {floor}")
            elif target_floor > floor:
                problems.append(f"{where}: floor {target_floor} is above floor {floor}")
            elif target_floor == floor and module.split(".")[0] in graph.get(target_app, set()):
                problems.append(f"{where}: the two apps of floor {floor} import each other")
    return problems


def app_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle of the app graph, each as the list of its apps (found by depth-first search)."""
    cycles, seen = [], set()

    def walk(node: str, path: list[str]):
        for nxt in sorted(graph.get(node, ())):
            if nxt in path:
                cycle = path[path.index(nxt) :]
                key = frozenset(cycle)
                if key not in seen:
                    seen.add(key)
                    cycles.append([*cycle, nxt])
            else:
                walk(nxt, [*path, nxt])

    for start in sorted(graph):
        walk(start, [start])
    return cycles


def test_every_app_is_placed():
    from django.apps import apps

    ours = {c.name for c in apps.get_app_configs() if (ROOT / c.name).is_dir() and c.name.isidentifier()}
    assert ours <= APPS, f"place the new app(s) {sorted(ours - APPS)} on a floor in tests/test_layers.py"


def test_imports_go_one_way():
    problems = violations(project_modules())
    assert not problems, "imports against the direction:\n" + "\n".join(problems)


def test_no_import_cycle_between_apps():
    sources = project_modules()
    assert not app_cycles(app_graph(sources)), app_cycles(app_graph(sources))


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("videos.planted", "from reviewer.models import Assignment\n"),
        ("annotator.planted", "import releases.build\n"),
        ("projects.planted", "from jobs.services import job_create\n"),
        ("reviewer.planted", "from studio import charts\n"),
        ("reviewer.planted", "from annotator.chain_views import chain_editor\n"),
        ("reviewer.planted", "from annotator.chains import _private_helper\n"),
        ("api.planted", "from annotator.chains import _private_helper\n"),
    ],
)
def test_a_planted_wrong_import_fails(module, source):
    sources = {**project_modules(), module: source}
    assert any(p.startswith(f"{module}:1 ") for p in violations(sources))


def test_a_planted_cycle_is_found():
    sources = {**project_modules(), "projects.planted": "from videos.models import Video\n"}
    assert any("projects" in cycle for cycle in app_cycles(app_graph(sources)))


def test_allowed_imports_pass():
    sources = {
        "reviewer.fine": "from annotator.models import QAChain\nfrom projects.models import Project\n",
        "annotator.fine_views": "from reviewer.queues import queue_claim\n",
        "api.fine": "from releases.build import release_build\n",
    }
    assert not [p for p in violations({**project_modules(), **sources}) if p.split(":")[0] in sources]
