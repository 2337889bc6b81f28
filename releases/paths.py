"""SVBench temporal dialogue paths: a conversation that moves through a video's QA chains in time order.

`streaming_paths` defines the walk exactly:

- **Input.** `chains` are the video's released chains in time order (anything with a length: the
  number of questions of each); `relations` are temporal linkages `((c, q), (c + 1, t))` from
  question q of chain c to question t of the next chain.
- **Paths.** One path per question of the first chain: path k starts at (0, k). A video with no
  chain, or whose first chain is empty, has no path.
- **Step.** At (c, q):
  1. if (c, q) has linkages into chain c + 1, one random number u is drawn; when u < p the walk
     jumps to (c + 1, t) — t is the smallest linked target, or, when several are linked, one of
     them drawn uniformly (a second draw);
  2. otherwise (no linkage, or u ≥ p) it goes to (c, q + 1) while chain c has more questions,
     then to (c + 1, 0);
  3. the path ends after the last question of the last chain.
  So p = 0 never jumps, p = 1 jumps at every linked question it reaches (random() < 1 always), and
  a path visits chains in order, never going back in time.
- **Seeded.** One `random.Random` per call, seeded from `seed`; the paths are walked one after the
  other in start order, so the same inputs give the same paths. Callers derive `seed` per video
  (release seed and video name), so a video's paths do not depend on the other videos released.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence, Sized

Step = tuple[int, int]


def streaming_paths(
    *,
    chains: Sequence[Sized],
    relations: Iterable[tuple[Step, Step]],
    p: float = 0.8,
    seed: int,
) -> list[list[Step]]:
    """The SVBench paths of one video as lists of (chain_index, question_index); see the module doc."""
    if not 0 <= p <= 1:
        raise ValueError(f"the jump probability must be between 0 and 1, not {p}")
    sizes = [len(chain) for chain in chains]
    links: dict[Step, set[int]] = defaultdict(set)
    for (c, q), (c2, t) in relations:
        if c2 != c + 1:
            raise ValueError(f"a linkage goes from a chain to the next one, not from {c} to {c2}")
        if not (0 <= c < len(sizes) - 1 and 0 <= q < sizes[c] and 0 <= t < sizes[c2]):
            raise ValueError(f"linkage ({c}, {q}) → ({c2}, {t}) points outside the chains")
        links[(c, q)].add(t)
    if not sizes or sizes[0] == 0:
        return []
    rng = random.Random(f"vidqa-paths:{seed}")  # noqa: S311 - reproducible walks, not secrets
    paths = []
    for start in range(sizes[0]):
        path: list[Step] = []
        c, q = 0, start
        while True:
            path.append((c, q))
            targets = links.get((c, q))
            if targets and rng.random() < p:
                ordered = sorted(targets)
                t = ordered[0] if len(ordered) == 1 else ordered[rng.randrange(len(ordered))]
                c, q = c + 1, t
                continue
            if q + 1 < sizes[c]:
                q += 1
                continue
            c += 1
            while c < len(sizes) and sizes[c] == 0:  # an empty chain has nothing to ask
                c += 1
            if c >= len(sizes):
                break
            q = 0
        paths.append(path)
    return paths
