"""Project-wide static checks over a generated set of MCQs with known, planted flaws.

The clean items vary their wording, option lengths and key positions as real ones do; the planted
ones each carry one flaw. The checks must find every planted flaw and flag at most 2 % of the
clean items.
"""

import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotator.models import MCQ, MCQVideo, ReferredMoment
from audits.static_checks import near_duplicate_pairs, project_static_audit, shingles
from tests import factories

pytestmark = pytest.mark.django_db

CLEAN = 320
SEED = 7
PEOPLE = [
    "the chef",
    "the host",
    "the guest",
    "the boy",
    "the woman in red",
    "the man with glasses",
    "the helper",
    "the old fisherman",
    "the girl on the bike",
    "the tour guide",
    "the street vendor",
    "the drummer",
    "the nurse",
    "the farmer",
    "the pilot",
    "the teacher",
    "the baker",
    "the goalkeeper",
    "the singer",
]
THINGS = [
    "pan",
    "knife",
    "bowl",
    "basket",
    "kettle",
    "jar",
    "tray",
    "ladle",
    "cup",
    "board",
    "lamp",
    "map",
    "umbrella",
    "suitcase",
    "guitar",
    "ticket",
    "ball",
    "ladder",
    "bucket",
    "camera",
    "scarf",
    "helmet",
    "notebook",
    "bottle",
    "clock",
    "mirror",
    "blanket",
    "rope",
    "candle",
    "shovel",
]
PLACES = [
    "kitchen",
    "garden",
    "market",
    "studio",
    "balcony",
    "hallway",
    "station",
    "library",
    "harbour",
    "stadium",
    "bakery",
    "workshop",
    "rooftop",
    "classroom",
    "parking lot",
]
ACTIONS = [
    "lifts",
    "puts down",
    "washes",
    "points at",
    "opens",
    "carries",
    "drops",
    "hides",
    "paints",
    "throws",
    "repairs",
    "sells",
    "wraps",
    "kicks",
    "fills",
]
CATEGORIES = ["S2E", "S2O", "S2A", "E2O", "O2E", "T2E", "E3E", "O3O", "SSS", "TAA"]
# A clean item's question is an opening (the referring query) and a question proper; item i takes
# opening i % 20 and question i // 20, so no two items share both and none is a near-duplicate.
OPENINGS = [
    "When {p} {a} the {t} in the {l}",
    "Right after {p} walks into the {l}",
    "While {p} is holding the {t}",
    "Before the {t} falls off the counter",
    "After the {t} appears for the first time",
    "Once {p} has finished talking to {p2}",
    "Just as the music in the {l} stops",
    "At the moment the camera zooms in on {p}",
    "Shortly before {p2} leaves the {l}",
    "During the argument between {p} and {p2}",
    "As soon as the lights go out",
    "Between the two visits to the {l}",
    "Whenever {p} laughs",
    "The first time a {t} is shown on screen",
    "In the scene with the broken {t}",
    "Once the rain begins outside the {l}",
    "When someone knocks on the door",
    "Right before the credits roll",
    "As {p} climbs onto the roof",
    "After {p} counts the coins",
]
QUESTIONS = [
    ("what colour is the object beside them?", "colour"),
    ("which object does the camera show next?", "object"),
    ("how many people are visible?", "count"),
    ("what does the speaker say?", "reply"),
    ("which sound can be heard?", "sound"),
    ("how does the light change?", "light"),
    ("what is on the wall behind?", "object"),
    ("what colour are the curtains?", "colour"),
    ("how many cups stand on the table?", "count"),
    ("what is the first thing anyone says?", "reply"),
    ("what noise comes from outside?", "sound"),
    ("how does the room look afterwards?", "light"),
    ("which item is picked up?", "object"),
    ("what colour is the car passing by?", "colour"),
    ("how many birds fly past?", "count"),
    ("what reply is given?", "reply"),
]


ANSWERS = {
    "colour": [
        "It is pale blue",
        "It is dark green",
        "It is bright red",
        "It is light grey",
        "It is deep purple",
        "It is warm orange",
        "It is plain white",
        "It is matte black",
    ],
    "object": [
        "A wooden chair",
        "A metal bucket",
        "A paper lantern",
        "A glass vase",
        "A woven rug",
        "A plastic crate",
        "A leather bag",
        "A clay pot",
    ],
    "count": ["Two of them", "Three of them", "Four of them", "Five of them", "Six of them", "Seven of them"],
    "reply": [
        "A short greeting",
        "A quiet apology",
        "A funny story",
        "A quick question",
        "A weather report",
        "A long complaint",
        "A warm thank-you",
    ],
    "sound": ["A sharp bang", "A soft click", "A loud ring", "A low hum", "A short beep", "A dull thud"],
    "light": [
        "It gets darker",
        "It turns warmer",
        "It starts to flicker",
        "It becomes brighter",
        "It turns blue",
        "It stays the same",
    ],
}


@pytest.fixture
def planted(db):
    project = factories.ProjectFactory(kind="longvideobench", slug="audit-static")
    rng = random.Random(SEED)
    videos = [factories.VideoFactory(project=project, name=f"v{i:02d}", duration_s=300.0) for i in range(40)]
    short = factories.VideoFactory(project=project, name="blink", duration_s=0.6)
    keys = [i % 4 for i in range(CLEAN)]
    rng.shuffle(keys)
    rows = []
    for n in range(CLEAN):
        words = {
            "p": rng.choice(PEOPLE),
            "p2": rng.choice(PEOPLE),
            "a": rng.choice(ACTIONS),
            "t": rng.choice(THINGS),
            "l": rng.choice(PLACES),
        }
        referring = OPENINGS[n % len(OPENINGS)].format(**words)
        proper, kind = QUESTIONS[n // len(OPENINGS)]
        question = f"{referring}, {proper}"
        pool = ANSWERS[kind]
        rows.append(
            MCQ(
                project=project,
                question=question,
                referring_query=referring,
                referring_start=0,
                referring_end=len(referring),
                question_wo_referring_query=proper[0].upper() + proper[1:],
                options=rng.sample(pool, 4),
                correct_index=keys[n],
                category=rng.choice(CATEGORIES),
                level="L1-Perception",
                status="examining",
            )
        )
    clean = MCQ.objects.bulk_create(rows)
    MCQVideo.objects.bulk_create(MCQVideo(mcq=m, video=videos[i % len(videos)], order=0) for i, m in enumerate(clean))
    ReferredMoment.objects.bulk_create(
        ReferredMoment(mcq=m, video=videos[i % len(videos)], time_s=10.0 + i % 250, frame_index=250 + i, order=0)
        for i, m in enumerate(clean)
    )

    def plant(code, **fields):
        base = {
            "project": project,
            "question": "When the host opens the jar, what is inside it?",
            "referring_query": "When the host opens the jar",
            "referring_start": 0,
            "referring_end": 27,
            "question_wo_referring_query": "What is inside it?",
            "options": ["Dry beans", "Fresh basil", "Coarse salt", "Brown sugar"],
            "correct_index": 2,
            "category": "O2E",
            "level": "L1-Perception",
            "status": "examining",
        }
        base.update(fields)
        video = base.pop("video", videos[0])
        moment = base.pop("moment", 12.0)
        mcq = MCQ.objects.create(**base)
        MCQVideo.objects.create(mcq=mcq, video=video, order=0)
        ReferredMoment.objects.create(mcq=mcq, video=video, time_s=moment, frame_index=int(moment * 25), order=0)
        return code, mcq.pk

    flaws = [
        plant("duplicate_options", options=["Dry beans", "Fresh basil", "dry beans!", "Brown sugar"]),
        plant(
            "duplicate_options",
            question="When the host opens the tin, what is inside it?",
            referring_end=27,
            options=["Tea", "Coffee", "Cocoa", "tea"],
            correct_index=1,
        ),
        plant("correct_out_of_range", correct_index=4),
        plant("correct_longest", options=["Beans", "Basil", "Coarse grey sea salt from the market", "Sugar"]),
        plant(
            "answer_leaked",
            question="When the host opens the jar of salt, what is inside it?",
            referring_end=27,
            question_wo_referring_query="What is inside it?",
            options=["Dry beans", "Fresh basil", "Coarse salt", "Brown sugar"],
        ),
        plant("moment_outside_video", moment=412.5),
        plant("video_too_short", video=short, moment=0.3),
    ]
    # Near-duplicate questions: one pair on the same video, one across videos.
    original = clean[5]
    twin = plant(
        "near_duplicate_question",
        question=original.question.replace("?", " ?"),
        referring_end=original.referring_end,
        question_wo_referring_query=original.question_wo_referring_query + " ",
        options=["Yes", "No", "Maybe", "Twice"],
        correct_index=1,
        video=videos[5 % len(videos)],
    )
    far = plant(
        "near_duplicate_question",
        question=clean[9].question.replace("the", "that", 1),
        referring_end=clean[9].referring_end + 1,
        question_wo_referring_query=clean[9].question_wo_referring_query.replace("the", "that", 1),
        options=["Up", "Down", "Left", "Right"],
        correct_index=3,
        video=videos[33],
    )
    flaws += [twin, far]
    # A position bias: in category SOS the key is the first option nine times in ten.
    biased = []
    landmark_questions = ["which landmark is shown in the corner?", "which building is seen from the bridge?"]
    for n in range(40):
        words = {
            "p": rng.choice(PEOPLE),
            "p2": rng.choice(PEOPLE),
            "a": rng.choice(ACTIONS),
            "t": rng.choice(THINGS),
            "l": rng.choice(PLACES),
        }
        referring = OPENINGS[n % len(OPENINGS)].format(**words)
        proper = landmark_questions[n // len(OPENINGS)]
        mcq = MCQ.objects.create(
            project=project,
            question=f"{referring}, {proper}",
            referring_query=referring,
            referring_start=0,
            referring_end=len(referring),
            question_wo_referring_query=proper[0].upper() + proper[1:],
            options=["The old tower", "The stone bridge", "The red castle", "The busy harbour"],
            correct_index=0 if n % 10 else 2,
            category="SOS",
            level="L2-Relation",
            status="examining",
        )
        MCQVideo.objects.create(mcq=mcq, video=videos[n % 7], order=0)
        ReferredMoment.objects.create(mcq=mcq, video=videos[n % 7], time_s=20.0, frame_index=500, order=0)
        biased.append(mcq.pk)
    return project, [m.pk for m in clean], flaws, biased, (original.pk, clean[9].pk)


def test_every_planted_flaw_is_found_and_clean_items_are_rarely_flagged(planted):
    project, clean, flaws, biased, originals = planted

    audit = project_static_audit(project=project)

    assert audit.checked == len(clean) + len(flaws) + len(biased)
    for code, pk in flaws:
        assert code in {f.code for f in audit.items.get(pk, [])}, (code, pk, audit.items.get(pk))
    # The clean twins of the near-duplicates are flagged for the same reason, and only they may be.
    for pk in originals:
        assert {f.code for f in audit.items[pk]} == {"near_duplicate_question"}
    # The items of the biased category are clean one by one: their flaw shows only in the position table.
    unflawed = clean + biased
    flagged_clean = [pk for pk in unflawed if pk in audit.items and pk not in originals]
    assert len(flagged_clean) <= 0.02 * len(unflawed), {pk: audit.items[pk] for pk in flagged_clean}

    # Key outside the options and a video too short for the loader are blockers.
    blocked = set(audit.blocked)
    assert {pk for code, pk in flaws if code in ("correct_out_of_range", "video_too_short")} <= blocked

    # The position bias shows in its category, and not in the balanced ones.
    by_category = {(p.category, p.options): p for p in audit.positions}
    sos = by_category[("SOS", 4)]
    assert sos.counts == (36, 0, 4, 0) and sos.biased and sos.p_value < 1e-6
    assert [p.category for p in audit.position_biases] == ["", "SOS"] or [
        p.category for p in audit.position_biases
    ] == ["SOS"]
    assert not any(p.biased for p in audit.positions if p.category not in ("", "SOS"))
    near = {pk for pk, findings in audit.items.items() if any(f.code == "near_duplicate_question" for f in findings)}
    assert near & set(clean + biased) == set(originals)


def test_the_audit_reads_in_a_fixed_number_of_queries(planted):
    project, *_ = planted
    with CaptureQueriesContext(connection) as queries:
        project_static_audit(project=project)
    assert len(queries) == 3


def test_a_scope_of_items_is_audited_alone(planted):
    project, clean, flaws, _biased, _originals = planted
    scope = [pk for _code, pk in flaws[:3]]
    audit = project_static_audit(project=project, mcq_ids=scope)
    assert audit.checked == 3 and set(audit.items) == set(scope)


def test_near_duplicates_are_found_without_comparing_every_pair_and_in_chinese():
    texts = {
        1: "厨师举起锅的时候，酱汁是什么颜色？",
        2: "厨师举起锅的时候，酱汁是什么颜色",
        3: "主持人打开罐子以后，里面装的是什么？",
        4: "When the chef lifts the pan, what colour is the sauce?",
        5: "When the chef lifts the pan, what colour is the sauce",
        6: "Where does the guest put the basket after the song?",
    }
    pairs = {(a, b) for a, b, _score in near_duplicate_pairs(texts, threshold=0.8)}
    assert pairs == {(1, 2), (4, 5)}
    assert shingles("ab") == frozenset({"ab"}) and shingles("") == frozenset()
