"""How long it takes to fill a database to benchmark scale (see bench.datagen)."""

from bench.figure import BenchContext, Figure, Measurement


def measure_datagen(ctx: BenchContext) -> Measurement:
    # The dataset is generated once per run, by whichever figure asks first; its time is the figure.
    return Measurement(value=ctx.dataset().seconds)


FIGURES = [
    Figure(
        name="datagen_s",
        unit="s",
        measure=measure_datagen,
        description="Wall time to generate the benchmark-scale project (bench.datagen), ANALYZE included.",
    ),
]
