"""SVBench import: the meta CSV's videos, Dialogue chains on clips, Con linkages as relations; a bad
linkage names its file, record and field and imports nothing."""

import pytest

from annotator.models import ChainPair, ItemKind, Origin, QAChain, Relation, RelationDecision
from releases.imports.services import benchmark_import
from releases.models import ImportedRecord
from tests import factories
from tests.releases.import_files import messages, nothing_written, write_files

pytestmark = pytest.mark.django_db

META = (
    "Video_Name,Path_of_Video,Sort_of_Set,Path_of_QandA,Path_of_Con\n"
    "walk,videos/walk.mp4,Train,svbench/Dialogue/walk.json,svbench/Con/walk.json\n"
)
DIALOGUE = [
    {
        "chain": {"questions": ["Q1", "Q2"], "answers": ["A1", "A2"]},
        "qac_timestamps_start": 0.0,
        "qac_timestamps_end": 10.5,
    },
    {"chain": {"questions": ["Q3"], "answers": ["A3"]}, "qac_timestamps_start": 9.5, "qac_timestamps_end": 20.0},
]


def _con(after=0, label="Actions"):
    return [
        {
            "chain_1": {
                "questions": ["Q1", "Q2"],
                "answers": ["A1", "A2"],
                "qac_timestamps_start": 0.0,
                "qac_timestamps_end": 10.5,
            },
            "chain_2": {
                "questions": ["Q3"],
                "answers": ["A3"],
                "qac_timestamps_start": 9.5,
                "qac_timestamps_end": 20.0,
            },
            "relationship": {"chainBefore": [1], "chainAfter": [after], "relationship": [label]},
        }
    ]


@pytest.fixture
def sv_project():
    project = factories.ProjectFactory()
    factories.VideoFactory(project=project, name="walk", duration_s=60.0)
    return project


def _files(tmp_path, con):
    return write_files(
        tmp_path / "release",
        {"svbench/meta.csv": META, "svbench/Dialogue/walk.json": DIALOGUE, "svbench/Con/walk.json": con},
    )


def test_chains_clips_and_linkages_are_imported(sv_project, tmp_path):
    report = benchmark_import(project=sv_project, format="svbench", source=_files(tmp_path, _con()))
    assert report.ok, report.problems
    chains = list(QAChain.objects.filter(project=sv_project).order_by("clip__index"))
    assert [(c.clip.index, c.clip.start_s, c.clip.end_s) for c in chains] == [(0, 0.0, 10.5), (1, 9.5, 20.0)]
    assert [[(p.question, p.answer) for p in c.pairs.order_by("index")] for c in chains] == [
        [("Q1", "A1"), ("Q2", "A2")],
        [("Q3", "A3")],
    ]
    pair = ChainPair.objects.get(project=sv_project)
    assert (pair.chain_before, pair.chain_after, pair.before_index) == (chains[0], chains[1], 0)
    relation = Relation.objects.get(chain_pair=pair)
    assert (relation.from_pair.question, relation.to_pair.question) == ("Q2", "Q3")
    assert (relation.relation_type, relation.decision, relation.origin) == (
        "action",
        RelationDecision.ACCEPTED,
        Origin.IMPORTED,
    )
    assert sv_project.videos.get(name="walk").split == "train"
    records = ImportedRecord.objects.filter(benchmark_import_id=report.import_id)
    assert {(r.item_kind, r.file, r.record_index) for r in records} == {
        (ItemKind.QA_CHAIN, "svbench/Dialogue/walk.json", 0),
        (ItemKind.QA_CHAIN, "svbench/Dialogue/walk.json", 1),
        (ItemKind.CHAIN_PAIR, "svbench/Con/walk.json", 0),
    }


@pytest.mark.parametrize(
    ("con", "field", "says"),
    [
        (_con(after=3), "chainAfter", "chain 1 has 1 questions"),
        (_con(label="Feelings"), "relationship", "not a relation type"),
    ],
)
def test_a_bad_linkage_imports_nothing(sv_project, tmp_path, con, field, says):
    report = benchmark_import(project=sv_project, format="svbench", source=_files(tmp_path, con))
    found = messages(report)
    assert len(found) == 1, found
    message = found[0]
    assert message.startswith(f"svbench/Con/walk.json, record 0, field “{field}”") and says in message, message
    assert nothing_written(sv_project)


def test_a_chain_past_the_end_of_its_video_imports_nothing(sv_project, tmp_path):
    sv_project.videos.filter(name="walk").update(duration_s=15.0)
    report = benchmark_import(project=sv_project, format="svbench", source=_files(tmp_path, _con()))
    found = messages(report)
    assert len(found) == 1, found
    message = found[0]
    assert "svbench/Dialogue/walk.json, record 1 (id walk#1), field “qac_timestamps_end”" in message
    assert nothing_written(sv_project)


def test_english_and_chinese_folders_give_text_and_translation(sv_project, tmp_path):
    def meta(lang):
        return (
            "Video_Name,Path_of_Video,Sort_of_Set,Path_of_QandA,Path_of_Con\n"
            f"walk,videos/walk.mp4,Test,svbench/Dialogue/Dialogue_{lang}/walk.json,svbench/Con/Con_{lang}/walk.json\n"
        )

    chinese = [
        {
            **e,
            "chain": {
                "questions": [f"问{q}" for q in e["chain"]["questions"]],
                "answers": ["答"] * len(e["chain"]["answers"]),
            },
        }
        for e in DIALOGUE
    ]
    folder = write_files(
        tmp_path / "release",
        {
            "svbench/meta_EN.csv": meta("EN"),
            "svbench/meta_ZH.csv": meta("ZH"),
            "svbench/Dialogue/Dialogue_EN/walk.json": DIALOGUE,
            "svbench/Dialogue/Dialogue_ZH/walk.json": chinese,
            "svbench/Con/Con_EN/walk.json": _con(),
            "svbench/Con/Con_ZH/walk.json": _con(),
        },
    )
    report = benchmark_import(project=sv_project, format="svbench", source=folder)
    assert report.ok, report.problems
    first = QAChain.objects.filter(project=sv_project).order_by("clip__index").first()
    assert [(p.question, p.question_translation, p.answer_translation) for p in first.pairs.order_by("index")] == [
        ("Q1", "问Q1", "答"),
        ("Q2", "问Q2", "答"),
    ]
    assert sv_project.videos.get(name="walk").split == "test"
