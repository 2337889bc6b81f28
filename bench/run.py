"""`make bench`: start a throw-away PostgreSQL (and Redis when a figure needs it), measure, report.

Prints one line per figure on stdout (`name: value unit (ratio r vs baseline b)`), progress on
stderr, and merges the figures it measured into bench/results.json: figures not run this time keep
the value of their last successful run, so `--only` never erases the others.

    python -m bench.run [--only name,name] [--scale 0.01] [--seed N] [--results PATH] [--list]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from bench.figure import DEFAULT_SEED, BenchContext, Figure, Result, result_of

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_PATH = BENCH_DIR / "results.json"


class SelectionError(Exception):
    pass


def discover_figures(package: str = "bench.figures") -> list[Figure]:
    """Every figure of every module in `package`, in module then declaration order."""
    pkg = importlib.import_module(package)
    figures: list[Figure] = []
    where: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        module_name = f"{package}.{info.name}"
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # noqa: BLE001 - turned into a message that says what to do
            raise SelectionError(
                f"cannot import {module_name}: {exc!r}. Figure modules are imported before Django is set up; "
                "import Django code inside the measure function."
            ) from exc
        for figure in getattr(module, "FIGURES", []):
            if figure.name in where:
                raise SelectionError(
                    f"figure {figure.name!r} is defined twice: in {where[figure.name]} and {module_name}"
                )
            where[figure.name] = module_name
            figures.append(figure)
    return figures


def select_figures(figures: list[Figure], only: str | None) -> list[Figure]:
    """The figures named in `only` (comma-separated), in registry order; all of them without it."""
    if not only:
        return list(figures)
    wanted = [name.strip() for name in only.split(",") if name.strip()]
    known = {f.name for f in figures}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise SelectionError(f"unknown figure(s): {', '.join(unknown)}. Known figures: {', '.join(sorted(known))}")
    if not wanted:
        raise SelectionError("--only names no figure")
    return [f for f in figures if f.name in wanted]


def measure(figure: Figure, ctx: BenchContext) -> Result:
    return result_of(figure, figure.measure(ctx))


def merge_results(path: Path, results: list[Result]) -> dict:
    """Write `results` into the JSON file at `path`, keeping the figures already there that were not run."""
    merged: dict = {}
    if path.exists():
        try:
            merged = json.loads(path.read_text())
            if not isinstance(merged, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            # Never lose what was there: keep the unreadable file beside the new one.
            keep = path.with_name(path.name + ".unreadable")
            shutil.copyfile(path, keep)
            print(f"bench: {path} was unreadable ({exc}); kept it as {keep} and started afresh", file=sys.stderr)
            merged = {}
    for result in results:
        merged[result.name] = result.as_json()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(merged, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)
    return merged


def run_figures(figures: list[Figure], ctx: BenchContext, out=None) -> tuple[list[Result], list[str]]:
    """Measure each figure, print its line as soon as it is known; a failure does not stop the rest."""
    out = out or sys.stdout
    results, failed = [], []
    for figure in figures:
        print(f"bench: measuring {figure.name} …", file=sys.stderr, flush=True)
        started = time.perf_counter()
        try:
            result = measure(figure, ctx)
        except Exception:  # noqa: BLE001 - reported, and the run goes on to the next figure
            failed.append(figure.name)
            print(f"bench: {figure.name} FAILED:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
            continue
        results.append(result)
        print(result.line(), file=out, flush=True)
        print(f"bench: {figure.name} took {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    return results, failed


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="make bench", description="Measure the benchmark figures.")
    parser.add_argument("--only", help="comma-separated figure names (default: all)")
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="data size as a fraction of the full benchmark (default 1; smaller for quick checks)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument(
        "--results",
        type=Path,
        help="JSON file to merge into (default bench/results.json; at another scale "
        "bench/.work/results-scale<S>.json, so a quick run never overwrites full-scale figures)",
    )
    parser.add_argument("--list", action="store_true", help="list the figures and exit")
    return parser.parse_args(argv)


def start_services(base: Path, *, redis: bool) -> list:
    """A throw-away PostgreSQL (first) and, if asked, Redis under `base`; Django's settings point at them.

    Django is not set up yet: the caller does that once the environment is right.
    """
    from scripts.loopback_services import start_postgres, start_redis

    services = [start_postgres(base / "pg")]
    try:
        os.environ["DATABASE_URL"] = services[0].url
        os.environ["DATABASE_CONN_MAX_AGE"] = "0"
        if redis:
            services.append(start_redis(base / "redis"))
            os.environ["REDIS_URL"] = services[1].url
        else:
            os.environ.pop("REDIS_URL", None)
    except BaseException:
        for service in services:
            service.stop()
        raise
    os.environ["VIDQA_VAR_DIR"] = str(base / "var")
    os.environ["DJANGO_MEDIA_ROOT"] = str(base / "media")
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.base"
    os.environ.pop("DJANGO_DEBUG", None)  # DEBUG would keep every query in memory
    return services


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    if not (args.scale > 0):
        print("bench: --scale must be above 0", file=sys.stderr)
        return 2
    try:
        figures = select_figures(discover_figures(), args.only)
    except SelectionError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    if args.list:
        for f in figures:
            print(f"{f.name} ({f.unit}){': ' + f.description if f.description else ''}")
        return 0
    results_path = args.results or (
        RESULTS_PATH if args.scale == 1 else BENCH_DIR / ".work" / f"results-scale{args.scale:g}.json"
    )

    started = time.perf_counter()
    base = Path(tempfile.mkdtemp(prefix="vidqa-bench-"))
    os.chmod(base, 0o755)  # noqa: S103 - as root, PostgreSQL runs as `postgres` and must reach its folder
    services = []
    try:
        services = start_services(base, redis=any(f.needs_redis for f in figures))
        pg = services[0]
        redis_url = os.environ.get("REDIS_URL", "")
        print(
            f"bench: PostgreSQL at {pg.url}{', Redis at ' + redis_url if redis_url else ''}; "
            f"scale {args.scale:g}, seed {args.seed}",
            file=sys.stderr,
            flush=True,
        )

        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        ctx = BenchContext(work_dir=base / "work", scale=args.scale, seed=args.seed, redis_url=redis_url)
        ctx.work_dir.mkdir()
        results, failed = run_figures(figures, ctx)
        if ctx._dataset is not None:
            counts = ", ".join(f"{k} {v:,}" for k, v in ctx._dataset.counts.items())
            print(f"bench: dataset: {counts}", file=sys.stderr)
            stages = ", ".join(f"{k} {v:.1f}" for k, v in ctx._dataset.stage_seconds.items())
            print(f"bench: datagen stages (s): {stages}", file=sys.stderr)
        if results:
            merge_results(results_path, results)
            print(f"bench: wrote {len(results)} figure(s) to {results_path}", file=sys.stderr)
        if failed:
            print(f"bench: FAILED: {', '.join(failed)}", file=sys.stderr)
        return 1 if failed else 0
    finally:
        try:
            from django.db import connections

            connections.close_all()
        except Exception:  # noqa: BLE001, S110 - Django may not be set up yet; nothing to close then
            pass
        for service in reversed(services):
            service.stop()
        shutil.rmtree(base, ignore_errors=True)
        print(f"bench: whole run took {time.perf_counter() - started:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
