"""Cost estimates for model calls, from a small price table keyed by model name.

Prices are list prices in US dollars and go stale; a deployment overrides or extends them with
the `LLM_PRICES` setting (same shape), and a project with its own endpoint sets its own prices per
model (`ModelEndpoint.prices`, input and output per 1M tokens), which win over both. A model
that is not in the table costs 0 and the call says so, rather than pretending to know.
"""

from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings

# model name (or prefix) → (input $ per 1M tokens, output $ per 1M tokens, $ per audio minute)
PRICES: dict[str, tuple[float, float, float]] = {
    "gpt-4o-mini": (0.15, 0.60, 0.0),
    "gpt-4o": (2.50, 10.00, 0.0),
    "gpt-4.1-nano": (0.10, 0.40, 0.0),
    "gpt-4.1-mini": (0.40, 1.60, 0.0),
    "gpt-4.1": (2.00, 8.00, 0.0),
    "gpt-5-nano": (0.05, 0.40, 0.0),
    "gpt-5-mini": (0.25, 2.00, 0.0),
    "gpt-5": (1.25, 10.00, 0.0),
    "whisper-1": (0.0, 0.0, 0.006),
    "gpt-4o-mini-transcribe": (0.0, 0.0, 0.003),
    "gpt-4o-transcribe": (0.0, 0.0, 0.006),
}

_MILLION = Decimal(1_000_000)


@dataclass(frozen=True)
class CostEstimate:
    usd: Decimal
    known: bool
    note: str = ""


def price_table() -> dict[str, tuple[float, float, float]]:
    return {**PRICES, **getattr(settings, "LLM_PRICES", {})}


def _price_for(model: str, overrides: dict | None = None) -> tuple[float, float, float] | None:
    table = price_table()
    for name, price in (overrides or {}).items():
        # A project's price is per token only; a per-minute audio price still comes from the table.
        known = table.get(name, (0.0, 0.0, 0.0))
        table[name] = (float(price[0]), float(price[1]), known[2])
    if model in table:
        return table[model]
    # Dated snapshots ("gpt-4o-2024-08-06") cost what their family costs; the longest prefix wins
    # so "gpt-4o-mini-…" is not billed as "gpt-4o".
    matches = [name for name in table if model.startswith(name + "-")]
    return table[max(matches, key=len)] if matches else None


def estimate_cost(
    *,
    model: str,
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
    audio_seconds: float = 0,
    prices: dict | None = None,
) -> CostEstimate:
    """`prices` are a project's own (model → [input, output] $ per 1M tokens), over the table."""
    price = _price_for(model, prices)
    if price is None:
        return CostEstimate(Decimal(0), False, f"no price known for model {model!r}; cost recorded as 0")
    per_in, per_out, per_minute = (Decimal(str(p)) for p in price)
    usd = (
        Decimal(prompt_tokens) * per_in / _MILLION
        + Decimal(completion_tokens) * per_out / _MILLION
        + Decimal(str(audio_seconds)) / Decimal(60) * per_minute
    )
    return CostEstimate(usd.quantize(Decimal("0.000001")), True)
