"""What a benchmark figure is, what it returns, and what the runner hands it.

A figure module under bench/figures/ exposes `FIGURES = [Figure(...), ...]`. The runner imports
those modules *before* Django is set up (it must know which services to start first), so a figure
module imports Django code inside its `measure` function, never at the top.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench.datagen import Dataset

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")
DEFAULT_SEED = 20250101


@dataclass(frozen=True)
class Measurement:
    """A figure's value and, when it compares against something, a baseline measured in the same run."""

    value: float
    baseline: float | None = None


@dataclass(frozen=True)
class Figure:
    name: str
    unit: str
    measure: Callable[[BenchContext], Measurement | float | int]
    description: str = ""
    # Redis must be known before Django reads its settings, so a figure says so up front.
    needs_redis: bool = False

    def __post_init__(self) -> None:
        if not NAME_PATTERN.match(self.name):
            raise ValueError(f"figure name {self.name!r} must be lower_snake_case (letters, digits, _)")
        if not self.unit:
            raise ValueError(f"figure {self.name!r} needs a unit")


@dataclass
class BenchContext:
    """Shared by every figure of one run: scale, seed, a scratch folder, the benchmark database."""

    work_dir: Path
    scale: float = 1.0
    seed: int = DEFAULT_SEED
    redis_url: str = ""
    _dataset: Dataset | None = field(default=None, repr=False)

    def dataset(self) -> Dataset:
        """The benchmark-scale data; generated on first use, then reused by every later figure."""
        if self._dataset is None:
            from bench.datagen import generate

            self._dataset = generate(scale=self.scale, seed=self.seed)
        return self._dataset


@dataclass(frozen=True)
class Result:
    name: str
    unit: str
    value: float
    baseline: float | None = None

    @property
    def ratio(self) -> float | None:
        if self.baseline is None or self.baseline == 0:
            return None
        return self.value / self.baseline

    def as_json(self) -> dict:
        ratio = self.ratio
        return {
            "value": _rounded(self.value),
            "unit": self.unit,
            "baseline": None if self.baseline is None else _rounded(self.baseline),
            "ratio": None if ratio is None else round(ratio, 4),
        }

    def line(self) -> str:
        text = f"{self.name}: {format_number(self.value)} {self.unit}"
        if self.ratio is not None:
            text += f" (ratio {self.ratio:.2f} vs baseline {format_number(self.baseline)})"
        return text


def result_of(figure: Figure, outcome: Measurement | float | int) -> Result:
    """Turn what `measure` returned into a Result, refusing anything that is not a finite number."""
    measurement = outcome if isinstance(outcome, Measurement) else Measurement(value=outcome)
    for label, number in (("value", measurement.value), ("baseline", measurement.baseline)):
        if number is None and label == "baseline":
            continue
        if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number):
            raise TypeError(f"figure {figure.name!r} returned a {label} that is not a finite number: {number!r}")
    return Result(figure.name, figure.unit, measurement.value, measurement.baseline)


def format_number(number: float) -> str:
    """Short and readable: whole numbers as integers, others with at most three decimals."""
    if isinstance(number, int) or (float(number).is_integer() and abs(number) < 1e15):
        return str(int(number))
    size = abs(number)
    if size < 0.01:
        return f"{number:.3g}"
    decimals = 1 if size >= 100 else 2 if size >= 10 else 3
    return f"{number:.{decimals}f}".rstrip("0").rstrip(".")


def _rounded(number: float) -> float | int:
    if isinstance(number, int):
        return number
    return float(f"{number:.6g}")
