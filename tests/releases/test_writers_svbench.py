"""SVBench files read back and compared with the database: Dialogue, Con, Streaming, Path, meta CSV."""

import pytest

from annotator.models import QAPair
from releases.build import release_build
from releases.models import ReleaseStatus
from releases.validation import svbench_rules

from .read_back import paths, read_csv, read_json
from .release_data import build_small_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def small():
    return build_small_project()


def _build(small, **fields):
    fields.setdefault("formats", ["svbench"])
    release = release_build(release=small.release(**fields))
    assert release.status == ReleaseStatus.READY, release.validation_errors
    return release


def _docs(release, name, lang_folder=lambda f: f):
    return {
        folder: read_json(release, f"svbench/{lang_folder(folder)}/{name}.json")
        for folder in ("Dialogue", "Con", "Streaming")
    } | {"Path": read_json(release, f"svbench/Path/{name}.json")}


def test_dialogue_holds_the_released_chains_in_time_order_as_in_the_database(small):
    release = _build(small)
    dialogue = read_json(release, "svbench/Dialogue/alpha.json")
    chains = [small.chains[("alpha", i)] for i in range(3)]  # chain 3 is not accepted
    assert len(dialogue) == 3
    for element, chain in zip(dialogue, chains, strict=True):
        pairs = list(chain.pairs.order_by("index"))
        assert element["chain"]["questions"] == [p.question for p in pairs]
        assert element["chain"]["answers"] == [p.answer for p in pairs]
        assert element["qac_timestamps_start"] == chain.clip.start_s
        assert element["qac_timestamps_end"] == chain.clip.end_s
        assert isinstance(element["qac_timestamps_start"], float) and isinstance(element["qac_timestamps_end"], float)
    assert all(element["chain"]["questions"] for element in dialogue)  # never an empty chain


def test_con_pairs_consecutive_chains_with_their_released_links(small):
    release = _build(small)
    dialogue = read_json(release, "svbench/Dialogue/alpha.json")
    con = read_json(release, "svbench/Con/alpha.json")
    assert len(con) == 2
    for i, element in enumerate(con):
        for key, j in (("chain_1", i), ("chain_2", i + 1)):
            side = element[key]
            assert side["questions"] == dialogue[j]["chain"]["questions"]  # chain_2 is the next chain
            # Bit-identical timestamps: same type, same value, as SVBench's evaluation matches them with ==.
            for stamp in ("qac_timestamps_start", "qac_timestamps_end"):
                assert type(side[stamp]) is float and side[stamp] == dialogue[j][stamp]
    # Pair 0→1: the accepted link (turn 1 → turn 0, Action); the rejected one is left out.
    assert con[0]["relationship"] == {"chainBefore": [1], "chainAfter": [0], "relationship": ["Actions"]}
    # Pair 1→2 is not accepted: no links, but the three lists are still there.
    assert con[1]["relationship"] == {"chainBefore": [], "chainAfter": [], "relationship": []}
    # beta has one chain: no pair.
    assert read_json(release, "svbench/Con/beta.json") == []


def test_streaming_and_path_are_aligned_and_pass_every_rule(small):
    release = _build(small)
    for name in ("alpha", "beta"):
        docs = _docs(release, name)
        assert (
            svbench_rules(
                dialogue=docs["Dialogue"],
                con=docs["Con"],
                streaming=docs["Streaming"],
                path=docs["Path"],
                test_style=False,
            )
            == []
        )
        # One path per question of the first chain.
        assert len(docs["Path"]["Paths"]) == len(docs["Dialogue"][0]["chain"]["questions"])
        for steps, walk in zip(docs["Path"]["Paths"], docs["Streaming"], strict=True):
            assert walk["questions"] == [docs["Dialogue"][c]["chain"]["questions"][q] for c, q in steps]
            assert walk["timestamps"] == [
                [docs["Dialogue"][c]["qac_timestamps_start"], docs["Dialogue"][c]["qac_timestamps_end"]]
                for c, _ in steps
            ]


@pytest.mark.parametrize(
    ("p", "path_from_turn_1"),
    [
        (0.0, [[0, 1], [0, 2], [1, 0], [1, 1], [2, 0], [2, 1]]),
        (1.0, [[0, 1], [1, 0], [1, 1], [2, 0], [2, 1]]),  # jumps at the linked turn 1 → next chain's turn 0
    ],
)
def test_paths_follow_the_projects_jump_probability(small, p, path_from_turn_1):
    small.project.path_jump_probability = p
    small.project.save()
    release = _build(small)
    assert read_json(release, "svbench/Path/alpha.json")["Paths"][1] == path_from_turn_1


def test_meta_csv_names_video_split_and_files(small):
    release = _build(small, filters={"include_media": False})
    rows = read_csv(release, "svbench/meta.csv")
    assert [r["Video_Name"] for r in rows] == ["alpha", "beta"]
    alpha = rows[0]
    small.videos["alpha"].refresh_from_db()
    assert alpha == {
        "Video_Name": "alpha",
        "Path_of_Video": "videos/alpha.mp4",
        "Sort_of_Set": small.videos["alpha"].split.capitalize(),
        "Path_of_QandA": "svbench/Dialogue/alpha.json",
        "Path_of_Con": "svbench/Con/alpha.json",
    }
    assert alpha["Sort_of_Set"] in ("Train", "Test")
    assert "videos/alpha.mp4" not in paths(release)  # include_media false: named, not copied


def test_test_style_leaves_answers_out(small):
    release = _build(small, test_style=True)
    docs = _docs(release, "alpha")
    assert all("answers" not in e["chain"] for e in docs["Dialogue"])
    assert all("answers" not in e["chain_1"] and "answers" not in e["chain_2"] for e in docs["Con"])
    assert all("answers" not in walk for walk in docs["Streaming"])
    assert (
        svbench_rules(
            dialogue=docs["Dialogue"], con=docs["Con"], streaming=docs["Streaming"], path=docs["Path"], test_style=True
        )
        == []
    )


def test_translations_give_en_and_zh_sub_folders(small):
    for pair in QAPair.objects.filter(chain__project=small.project):
        pair.question_translation = f"问：{pair.question}"
        pair.answer_translation = f"答：{pair.answer}"
        pair.save()
    release = _build(small)
    en = _docs(release, "alpha", lambda f: f"{f}/{f}_EN")
    zh = _docs(release, "alpha", lambda f: f"{f}/{f}_ZH")
    chain0 = list(small.chains[("alpha", 0)].pairs.order_by("index"))
    assert en["Dialogue"][0]["chain"]["questions"] == [p.question for p in chain0]
    assert zh["Dialogue"][0]["chain"]["questions"] == [f"问：{p.question}" for p in chain0]
    assert zh["Streaming"][0]["questions"][0] == f"问：{chain0[0].question}"
    assert [r["Path_of_QandA"] for r in read_csv(release, "svbench/meta_ZH.csv")] == [
        "svbench/Dialogue/Dialogue_ZH/alpha.json",
        "svbench/Dialogue/Dialogue_ZH/beta.json",
    ]
    assert "svbench/meta.csv" not in paths(release)


def test_a_missing_translation_fails_the_release_naming_the_chain(small):
    chain = small.chains[("alpha", 1)]
    QAPair.objects.filter(chain__project=small.project).exclude(chain=chain).update(
        question_translation="问", answer_translation="答"
    )
    release = release_build(release=small.release(formats=["svbench"]))
    assert release.status == ReleaseStatus.FAILED
    assert [(e["format"], e["item"]) for e in release.validation_errors] == [("svbench", f"chain {chain.pk}")]
    assert "ZH translation" in release.validation_errors[0]["message"]
    assert not release.archive
