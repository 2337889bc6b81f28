"""SVBench streaming paths: where a path starts, when it jumps, and that it is seeded."""

import pytest

from releases.paths import streaming_paths

CHAINS = [["q"] * 3, ["q"] * 2, ["q"] * 3]
LINKS = [((0, 1), (1, 1)), ((1, 0), (2, 2))]


def test_one_path_per_question_of_the_first_chain_and_none_without_chains():
    paths = streaming_paths(chains=CHAINS, relations=LINKS, p=0.5, seed=1)
    assert [path[0] for path in paths] == [(0, 0), (0, 1), (0, 2)]
    assert streaming_paths(chains=[], relations=[], seed=1) == []


def test_p0_never_jumps():
    for seed in range(20):
        paths = streaming_paths(chains=CHAINS, relations=LINKS, p=0.0, seed=seed)
        assert paths[0] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)]
        assert paths[2] == [(0, 2), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)]


def test_p1_jumps_at_every_linked_question_it_reaches():
    for seed in range(20):
        paths = streaming_paths(chains=CHAINS, relations=LINKS, p=1.0, seed=seed)
        # (0, 1) → (1, 1); (1, 1) has no link → next chain from its first question.
        assert paths[0] == [(0, 0), (0, 1), (1, 1), (2, 0), (2, 1), (2, 2)]
        # From (0, 2) the walk reaches (1, 0), which links to (2, 2).
        assert paths[2] == [(0, 2), (1, 0), (2, 2)]


def test_seeded_and_reproducible_and_the_seed_matters():
    links = [((c, q), (c + 1, t)) for c in range(5) for q in range(4) for t in range(4) if (q + t + c) % 3 == 0]
    chains = [["q"] * 4] * 6
    one = streaming_paths(chains=chains, relations=links, p=0.5, seed=42)
    assert one == streaming_paths(chains=chains, relations=list(reversed(links)), p=0.5, seed=42)
    assert any(streaming_paths(chains=chains, relations=links, p=0.5, seed=s) != one for s in range(43, 53))


def test_jump_rate_follows_p():
    # Linked to the second question of the next chain: a path's second step shows whether it jumped.
    chains = [["q"], ["q", "q"]]
    links = [((0, 0), (1, 1))]
    jumps = sum(streaming_paths(chains=chains, relations=links, p=0.8, seed=s)[0][1] == (1, 1) for s in range(2000))
    assert 1500 < jumps < 1700


def test_several_links_from_one_question_pick_one_of_them():
    chains = [["q"], ["q"] * 4]
    links = [((0, 0), (1, 1)), ((0, 0), (1, 3))]
    targets = {streaming_paths(chains=chains, relations=links, p=1.0, seed=s)[0][1] for s in range(200)}
    assert targets == {(1, 1), (1, 3)}


def test_paths_never_go_back_in_time():
    links = [((0, 2), (1, 0)), ((1, 1), (2, 0))]
    for path in streaming_paths(chains=CHAINS, relations=links, p=0.5, seed=3):
        assert path == sorted(path) and len(set(path)) == len(path)


@pytest.mark.parametrize(
    "relations",
    [[((0, 0), (2, 0))], [((0, 5), (1, 0))], [((0, 0), (1, 9))]],
)
def test_linkages_outside_the_chains_are_refused(relations):
    with pytest.raises(ValueError, match="linkage"):
        streaming_paths(chains=CHAINS, relations=relations, seed=1)


def test_p_outside_0_1_is_refused():
    with pytest.raises(ValueError, match="between 0 and 1"):
        streaming_paths(chains=CHAINS, relations=[], p=1.5, seed=1)
