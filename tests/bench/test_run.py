"""bench.run: the figure registry, the printed lines and bench/results.json, with dummy figures."""

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.figure import BenchContext, Figure, Measurement, result_of
from bench.run import SelectionError, discover_figures, merge_results, run_figures, select_figures

REPO = Path(__file__).resolve().parent.parent.parent


def _figures():
    return [
        Figure("render_ms", "ms", lambda ctx: Measurement(value=12.5, baseline=10.0)),
        Figure("query_count", "queries", lambda ctx: 7),
        Figure("zero_base", "s", lambda ctx: Measurement(value=3.0, baseline=0.0)),
    ]


def test_each_figure_prints_one_line_with_its_ratio_when_it_has_a_baseline(tmp_path):
    out = io.StringIO()
    results, failed = run_figures(_figures(), BenchContext(work_dir=tmp_path), out=out)
    assert failed == []
    assert out.getvalue().splitlines() == [
        "render_ms: 12.5 ms (ratio 1.25 vs baseline 10)",
        "query_count: 7 queries",
        # A zero baseline gives no ratio rather than a division error.
        "zero_base: 3 s",
    ]
    assert [r.ratio for r in results] == [1.25, None, None]


def test_a_failing_figure_is_reported_and_the_others_still_run(tmp_path, capsys):
    def broken(ctx):
        raise RuntimeError("no data")

    figures = [Figure("broken_s", "s", broken), *_figures()[1:2]]
    out = io.StringIO()
    results, failed = run_figures(figures, BenchContext(work_dir=tmp_path), out=out)
    assert failed == ["broken_s"]
    assert [r.name for r in results] == ["query_count"]
    assert out.getvalue() == "query_count: 7 queries\n"
    assert "broken_s FAILED" in capsys.readouterr().err


def test_results_json_has_the_fixed_shape_and_keeps_figures_not_run(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(
        json.dumps(
            {
                "older_figure": {"value": 1.0, "unit": "s", "baseline": None, "ratio": None},
                "render_ms": {"value": 99.0, "unit": "ms", "baseline": None, "ratio": None},
            }
        )
    )
    results, _ = run_figures(_figures()[:2], BenchContext(work_dir=tmp_path), out=io.StringIO())
    merge_results(path, results)
    data = json.loads(path.read_text())
    assert data == {
        "older_figure": {"value": 1.0, "unit": "s", "baseline": None, "ratio": None},
        "render_ms": {"value": 12.5, "unit": "ms", "baseline": 10.0, "ratio": 1.25},
        "query_count": {"value": 7, "unit": "queries", "baseline": None, "ratio": None},
    }


def test_an_unreadable_results_file_is_kept_aside_not_lost(tmp_path, capsys):
    path = tmp_path / "results.json"
    path.write_text("{not json")
    results, _ = run_figures(_figures()[1:2], BenchContext(work_dir=tmp_path), out=io.StringIO())
    merge_results(path, results)
    assert json.loads(path.read_text()) == {
        "query_count": {"value": 7, "unit": "queries", "baseline": None, "ratio": None}
    }
    assert (tmp_path / "results.json.unreadable").read_text() == "{not json"
    assert "unreadable" in capsys.readouterr().err


def test_only_selects_by_name_in_registry_order_and_names_unknown_ones():
    figures = _figures()
    assert [f.name for f in select_figures(figures, "zero_base,render_ms")] == ["render_ms", "zero_base"]
    assert select_figures(figures, None) == figures
    with pytest.raises(SelectionError, match=r"unknown figure\(s\): nope\. Known figures: query_count, render_ms"):
        select_figures(figures, "render_ms,nope")


def test_figures_are_checked_when_declared_and_when_measured():
    with pytest.raises(ValueError, match="lower_snake_case"):
        Figure("Bad Name", "s", lambda ctx: 1)
    with pytest.raises(ValueError, match="unit"):
        Figure("no_unit", "", lambda ctx: 1)
    figure = Figure("odd_s", "s", lambda ctx: 1)
    for bad in (float("nan"), "12", None, True, Measurement(value=1.0, baseline=float("inf"))):
        with pytest.raises(TypeError, match="finite number"):
            result_of(figure, bad)


def test_the_registry_finds_every_module_and_refuses_a_name_twice(tmp_path, monkeypatch):
    assert "datagen_s" in [f.name for f in discover_figures()]
    package = tmp_path / "fake_figures"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for module in ("a", "b"):
        (package / f"{module}.py").write_text(
            "from bench.figure import Figure\nFIGURES = [Figure('same_s', 's', lambda ctx: 1)]\n"
        )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(SelectionError, match="defined twice: in fake_figures.a and fake_figures.b"):
        discover_figures("fake_figures")


def test_make_bench_runs_end_to_end_on_its_own_database(tmp_path):
    """The real runner: own PostgreSQL, generated data, one printed line, and the JSON file."""
    results = tmp_path / "results.json"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--only", "datagen_s", "--scale", "0.003", "--results", str(results)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"datagen_s: \d+(\.\d+)? s\n", proc.stdout), proc.stdout
    data = json.loads(results.read_text())
    assert list(data) == ["datagen_s"]
    assert set(data["datagen_s"]) == {"value", "unit", "baseline", "ratio"}
    assert data["datagen_s"]["unit"] == "s" and data["datagen_s"]["value"] > 0
    assert "whole run took" in proc.stderr


def test_an_unknown_figure_is_refused_before_anything_starts():
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--only", "nope"], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert "unknown figure(s): nope" in proc.stderr and proc.stdout == ""
