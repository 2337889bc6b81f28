"""What the demo project contains: a cooking livestream told over synthetic pictures.

The pictures are ffmpeg test patterns (videos.synthetic), one per scene; the story is written so
that what the subtitles, questions and comments say matches what the pattern shows (the red
pattern with a sliding white square is "tomato sauce with a cube of mozzarella", the fractal is
"a romanesco close-up", the colour bars are "the signal dropped"). Pure data, no Django: the
run script reads DEMO_LOGINS from here to print them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PROJECT_SLUG = "demo"
PROJECT_NAME = "Demo: kitchen streaming"
PROJECT_DESCRIPTION = (
    "A generated demo: a 70-second cooking livestream in eight scenes with subtitles, viewer comments, "
    "QA chains, relations between adjacent chains, LongVideoBench-style MCQs and one multi-video MCQ. "
    "The pictures are synthetic test patterns standing in for camera shots; the subtitles and questions "
    "describe them as the story of the stream."
)

# Documented, fixed demo logins: this is a local demo, not a secret (load_demo refuses to create
# them in a production-like database unless forced).
DEMO_LOGINS: tuple[tuple[str, str, str], ...] = (
    # (username, password, project role)
    ("admin", "demo-admin", "admin"),
    ("annotator", "demo-annotator", "annotator"),
    ("examiner", "demo-examiner", "examiner"),
    ("reviser", "demo-reviser", "reviser"),
)

FPS = 25
WIDTH, HEIGHT = 640, 360
DESCRIPTION_MODEL = "demo-fixture"  # names the "model" of generated demo drafts: no model was called


@dataclass(frozen=True)
class QA:
    question: str
    answer: str
    skill: str


@dataclass(frozen=True)
class Scene:
    title: str
    pattern: str  # a key of videos.synthetic.PATTERNS
    duration_s: float  # a whole number of frames at FPS
    narration: tuple[str, ...]  # subtitle lines, spread evenly over the scene
    chain: tuple[QA, ...]  # the QA chain as it stands now
    # Pairs the annotator changed: index -> what the machine drafted there first.
    machine_edits: dict[int, QA] = field(default_factory=dict)
    comments: tuple[str, ...] = ()  # chat lines about this scene


SCENES: tuple[Scene, ...] = (
    Scene(
        title="Stream starts on the test card",
        pattern="testsrc2",
        duration_s=8.0,
        narration=(
            "Hi everyone, welcome back to Sunday Kitchen Live!",
            "I'm Mara, and the test card is still up while the camera warms up.",
            "Today we're making romanesco pasta in a quick tomato sauce.",
            "Say hi in the chat and tell me where you're watching from.",
        ),
        chain=(
            QA(
                "What is on screen while Mara greets the viewers at the start of the stream?",
                "A test card: vertical colour stripes crossed by a rainbow diagonal, with a running timecode "
                "in the top-left corner.",
                "ECA",
            ),
            QA(
                "Why is she still showing the test card instead of her kitchen?",
                "She says the camera is still warming up, so the stream shows the test card until the picture "
                "is ready.",
                "II",
            ),
            QA("What does she plan to cook today?", "Romanesco pasta in a quick tomato sauce.", "ECA"),
            QA(
                "What does she ask the viewers to do?",
                "To say hi in the chat and tell her where they are watching from.",
                "II",
            ),
            QA(
                "Judging by the timecode, how far into the stream is she when she announces the dish?",
                "About four to six seconds in; the timecode in the corner has only just started counting.",
                "STS",
            ),
        ),
        machine_edits={
            1: QA(
                "Why is Mara showing a test card?",
                "Because the stream has not started yet.",
                "II",
            ),
            4: QA(
                "When does Mara say what she is cooking?",
                "At the beginning of the video.",
                "STS",
            ),
        },
        comments=(
            "hi Mara!!",
            "hello from Lisbon",
            "first!",
            "greetings from Osaka",
            "hi from Toronto",
            "the test card again lol",
            "Sunday Kitchen Live is back",
            "hello from a rainy Manchester",
            "romanesco pasta? yes please",
            "evening from Melbourne",
        ),
    ),
    Scene(
        title="Mise en place: twenty-four bowls",
        pattern="colorchart",
        duration_s=9.0,
        narration=(
            "Here's everything prepped: twenty-four little bowls in four rows.",
            "Spices on top, vegetables in the middle rows, salt and flour along the bottom.",
            "The bottom row goes from white to dark grey: salt, flour, pepper and so on.",
            "If it's in a bowl, it goes in the pan at some point.",
        ),
        chain=(
            QA(
                "How are the ingredients laid out when Mara shows her mise en place?",
                "In twenty-four small bowls arranged in a grid of four rows of six.",
                "STS",
            ),
            QA(
                "Which row holds the plainest-looking ingredients?",
                "The bottom row, which runs from white to dark grey: salt, flour and ground pepper.",
                "CTA",
            ),
            QA(
                "Why does she prepare every ingredient in a bowl before cooking?",
                "So everything can go into the pan quickly once cooking starts; she says every bowl goes in "
                "at some point.",
                "II",
            ),
            QA(
                "If one of the bowls were missing, what would that mean for the dish?",
                "She would have to skip or replace that ingredient, since she says everything in a bowl ends "
                "up in the pan.",
                "CR",
            ),
            QA(
                "What will she most likely do right after this overview?",
                "Start cooking, beginning with the sauce in the pan.",
                "PA",
            ),
        ),
        machine_edits={
            0: QA("How many bowls are there?", "There are many bowls.", "STS"),
            3: QA(
                "What would happen if Mara had no bowls?",
                "Mara would not be able to cook.",
                "CR",
            ),
        },
        comments=(
            "so organised",
            "that's a lot of bowls",
            "what's in the orange one?",
            "mise en place goals",
            "is the bottom row salt?",
            "my kitchen could never",
            "24 bowls = 24 things to wash",
            "love the colours",
            "which one is the garlic?",
        ),
    ),
    Scene(
        title="Tomato sauce with a sliding cube of mozzarella",
        pattern="red_box",
        duration_s=10.0,
        narration=(
            "Into the pan goes the tomato, and look at that red.",
            "That white cube is the mozzarella, sliding across the pan.",
            "It keeps slipping to the right edge, so I push it back to the left.",
            "Low heat now, we don't want it to melt just yet.",
        ),
        chain=(
            QA(
                "What colour is the sauce when Mara tips the tomatoes into the pan?",
                "A bright brick red that fills the whole picture.",
                "ECA",
            ),
            QA("What is the white cube that moves across the pan?", "A cube of mozzarella.", "CSI"),
            QA(
                "In which direction does the cube keep moving, and what does she do when it reaches the edge?",
                "It slides from left to right; at the right edge she pushes it back to the left and it slides "
                "across again.",
                "STS",
            ),
            QA(
                "How many times does the cube cross the pan completely in this scene?",
                "Three times; it is part-way through a fourth crossing when the picture cuts away.",
                "CTA",
            ),
            QA("Why does she keep the heat low at this point?", "So the mozzarella does not melt yet.", "II"),
        ),
        machine_edits={
            2: QA(
                "Where does Mara move the mozzarella?",
                "Mara moves the mozzarella around the pan.",
                "STS",
            ),
        },
        comments=(
            "that red though",
            "mozzarella cube speedrun",
            "the cube keeps escaping lol",
            "push it back!",
            "low and slow",
            "smells good from here",
            "what brand of tomatoes?",
            "cube went right again",
        ),
    ),
    Scene(
        title="Signal lost: colour bars",
        pattern="smptebars",
        duration_s=5.0,
        narration=(
            "Oh no, the signal is gone, give me a second.",
            "Theo, can you check the camera cable?",
            "Colour bars again... sorry, everyone!",
        ),
        chain=(
            QA(
                "What replaces the picture of the pan right after the cube scene?",
                "Colour bars: seven vertical bars above a strip of smaller blocks, the standard broadcast test signal.",
                "ECA",
            ),
            QA(
                "What does Mara say when the bars appear?",
                "That the signal is gone and she needs a second.",
                "CST",
            ),
            QA("Whom does she ask for help, and with what?", "She asks Theo to check the camera cable.", "RI"),
            QA(
                "What is the most likely cause of the interruption?",
                "A loose or faulty camera cable, since that is what she asks him to check.",
                "CSI",
            ),
            QA(
                "How are the viewers likely to react while the bars are on screen?",
                "With confusion and jokes in the chat; many comments ask what happened.",
                "PA",
            ),
        ),
        machine_edits={
            2: QA("Who is Theo?", "Theo is a person.", "RI"),
        },
        comments=(
            "???",
            "signal lost",
            "F",
            "colour bars jumpscare",
            "did the stream die?",
            "it's not my wifi then",
            "THEO FIX IT",
            "rip stream",
            "bars hype",
            "still here, waiting",
            "lol the cable again",
        ),
    ),
    Scene(
        title="Romanesco close-up",
        pattern="mandelbrot",
        duration_s=9.0,
        narration=(
            "And we're back! Thanks, Theo.",
            "Look at this romanesco up close: every bud is made of smaller buds.",
            "The camera is slowly zooming in; the spirals just keep going.",
            "Pink plate, green and red florets. Gorgeous.",
        ),
        chain=(
            QA(
                "What vegetable does Mara show when the stream comes back?",
                "Romanesco, in an extreme close-up.",
                "ECA",
            ),
            QA(
                "What is special about its shape?",
                "Every bud is made of smaller buds arranged in spirals: a fractal pattern.",
                "CSI",
            ),
            QA("How does the camera move during the close-up?", "It slowly zooms in on the spirals.", "STS"),
            QA(
                "What colours can be seen in the picture?",
                "Green and red florets on a pink plate.",
                "ECA",
            ),
            QA("Whom does she thank when the picture returns, and why?", "Theo, for fixing the camera.", "RI"),
        ),
        comments=(
            "we're back!",
            "thanks Theo",
            "that's a fractal",
            "romanesco is so cool",
            "nature is maths",
            "zoom zoom",
            "it looks like a Mandelbrot set",
            "never seen it that close",
            "where do you buy those?",
        ),
    ),
    Scene(
        title="Pasta pot from above",
        pattern="blue_box",
        duration_s=10.0,
        narration=(
            "Pasta water is boiling, nice and blue in this light.",
            "That yellow square is a sheet of lasagne, sinking and popping back up.",
            "I'm breaking the sheets into pieces so they cook evenly.",
            "Nine minutes, then straight into the sauce.",
        ),
        chain=(
            QA(
                "What does the camera show from above once the romanesco is done?",
                "A pot of boiling pasta water that looks blue under the kitchen light.",
                "ECA",
            ),
            QA("What is the yellow square in the water?", "A sheet of lasagne.", "CSI"),
            QA(
                "How does the sheet move in the pot?",
                "It sinks from the top of the picture to the bottom, then pops back up at the top, again and again.",
                "STS",
            ),
            QA("Why does Mara break the sheets into pieces?", "So they cook evenly.", "II"),
            QA(
                "How long will the pasta cook, and where does it go next?",
                "Nine minutes, then straight into the tomato sauce.",
                "PA",
            ),
        ),
        comments=(
            "lasagne sheets in pasta? chaos",
            "blue water??",
            "it's the lighting",
            "salt the water!",
            "nine minutes noted",
            "the yellow square is hypnotic",
            "breaking lasagne is illegal in Italy",
        ),
    ),
    Scene(
        title="Chopping basil on the purple board",
        pattern="life",
        duration_s=10.0,
        narration=(
            "Last step: fresh basil, chopped right on the tray.",
            "Purple board, dark tray, and the green bits flying everywhere.",
            "The more I chop, the more it jumps around. Sorry, Theo!",
            "A handful of this goes on top at the end.",
        ),
        chain=(
            QA(
                "What is Mara chopping in the middle of the purple board?",
                "Fresh basil, on a dark tray.",
                "ECA",
            ),
            QA(
                "What happens to the green bits while she chops?",
                "They jump around the tray, scattering and regrouping.",
                "STS",
            ),
            QA(
                "Why does she apologise to Theo?",
                "Because the chopped basil flies everywhere, which he will probably have to clean up.",
                "RI",
            ),
            QA(
                "If she chopped more slowly, how would the tray probably look?",
                "Calmer, with fewer bits jumping around, since she says the more she chops the more it moves.",
                "CR",
            ),
            QA("What will she do with the basil?", "Put a handful on top of the dish at the end.", "PA"),
        ),
        comments=(
            "basil!!",
            "the green pixels are alive",
            "sorry Theo lol",
            "that board is so purple",
            "game of life basil",
            "smells like summer",
            "chop chop chop",
        ),
    ),
    Scene(
        title="The finished dish under the warm lamp",
        pattern="gradients",
        duration_s=9.0,
        narration=(
            "And here it is, under the warm lamp.",
            "Golden and orange, with a yellow glow at the edge.",
            "Thanks for cooking with me; same time next Sunday!",
        ),
        chain=(
            QA(
                "How is the finished dish lit when Mara presents it?",
                "Under a warm lamp that bathes the picture in orange.",
                "ECA",
            ),
            QA(
                "How do the colours change across the picture?",
                "From deep orange on one side to a yellow glow at the other edge.",
                "CTA",
            ),
            QA(
                "What does she say to close the stream?",
                "She thanks the viewers and says same time next Sunday.",
                "ECA",
            ),
            QA(
                "When will the next stream most likely take place?",
                "The following Sunday at the same time.",
                "PA",
            ),
            QA(
                "What is her mood at the end of the stream?",
                "Pleased and relaxed: the dish is done despite the dropped signal.",
                "CST",
            ),
        ),
        comments=(
            "looks amazing",
            "golden!",
            "see you next Sunday",
            "thanks Mara!",
            "great stream",
            "that glow",
            "bye from Lisbon",
            "making this tomorrow",
            "10/10 would watch again",
        ),
    ),
)

# Comments that fit anywhere in the stream.
GENERIC_COMMENTS: tuple[str, ...] = (
    "lol",
    "nice",
    "this is so relaxing",
    "what pan is that?",
    "audio is a bit loud",
    "love this channel",
    "hi chat",
    "can you share the recipe?",
    "yum",
    "is this live?",
    "how many people watching?",
    "the beep between scenes lol",
    "ok I'm hungry now",
    "my cat is watching too",
    "subscribed",
    "what time is it there?",
    "good vibes",
    "which knife do you use?",
    "chat is fast today",
    "wow",
    "clip that",
    "the camera work today",
    "hello everyone",
    "first time here",
    "this is my Sunday ritual",
)
VIEWER_HANDLES: tuple[str, ...] = tuple(
    f"{name}{n}"
    for name, n in (
        ("pasta_fan", 7),
        ("lina", 92),
        ("cookbot", 3),
        ("tomatoTom", 11),
        ("basil_b", 4),
        ("kitchenkat", 21),
        ("mo", 88),
        ("romanesco_r", 1),
        ("sunday_sam", 5),
        ("chefnoob", 64),
        ("ollie", 33),
        ("fractal_fan", 8),
        ("greta", 17),
        ("noodle", 42),
        ("yuki", 9),
        ("paolo", 77),
        ("dee", 2),
        ("hungryhippo", 12),
        ("lisbonlou", 6),
        ("theo_fan", 99),
        ("anya", 13),
        ("spatula", 27),
        ("maria", 45),
        ("jb", 30),
    )
)
COMMENT_COUNT = 300
# The dropped signal is when chat explodes: that scene gets this many times its share of comments.
BURST_SCENE, BURST_FACTOR = 3, 3.0


@dataclass(frozen=True)
class RelationSpec:
    before_index: int  # chains before_index and before_index + 1
    from_pair: int
    to_pair: int
    relation_type: str  # a code from projects.taxonomies.RELATION_TYPES
    rationale: str
    rewritten: QA | None = None  # set: accepted with this rewrite of the later pair


RELATIONS: tuple[RelationSpec, ...] = (
    RelationSpec(
        0,
        2,
        4,
        "event",
        "The dish announced at the start decides what she cooks first after the overview.",
        QA(
            "Knowing the dish she announced at the start, what will she most likely cook first after this overview?",
            "The tomato sauce for the romanesco pasta she announced: she starts with the sauce in the pan.",
            "PA",
        ),
    ),
    RelationSpec(
        0,
        0,
        0,
        "environment",
        "The picture changes from the test card to the ingredient grid.",
        QA(
            "How has the picture changed since the test card at the start of the stream?",
            "The stripes and timecode are gone; instead there is a grid of twenty-four bowls in four rows of six.",
            "CTA",
        ),
    ),
    RelationSpec(
        1,
        2,
        0,
        "object",
        "The tomatoes prepared in a bowl are what turns the pan red.",
        QA(
            "Which of the prepared bowls has just gone into the pan, judging by the colour of the sauce?",
            "The tomatoes: the pan turns the same bright red as the red bowls of the overview.",
            "CSI",
        ),
    ),
    RelationSpec(1, 1, 1, "object", "The white ingredients of the bottom row and the white cube in the pan."),
    RelationSpec(
        2,
        2,
        0,
        "event",
        "The signal drops while she is still pushing the cube back across the pan.",
        QA(
            "What happens to the picture while she is still pushing the cube back across the pan?",
            "The signal drops and colour bars replace the pan.",
            "ECA",
        ),
    ),
    RelationSpec(3, 2, 4, "person", "The person she asks for help is the one she thanks afterwards."),
    RelationSpec(3, 0, 0, "environment", "The colour bars give way to the romanesco close-up."),
    RelationSpec(4, 0, 4, "object", "The romanesco goes into the sauce with the pasta."),
    RelationSpec(5, 3, 0, "action", "Breaking the pasta sheets and chopping the basil are both cutting actions."),
    RelationSpec(6, 4, 1, "object", "The basil chopped on the tray is what tops the finished dish."),
)


@dataclass(frozen=True)
class MCQSpec:
    question: str
    referring_query: str
    question_wo_referring_query: str
    options: tuple[str, ...]
    correct_index: int
    category: str  # a LongVideoBench question category code
    moments: tuple[float, ...]  # seconds in the main video
    status: str  # annotator.models.ItemStatus value


MCQS: tuple[MCQSpec, ...] = (
    MCQSpec(
        question="When the sauce in the pan turns bright red, what colour is the cube that slides across it?",
        referring_query="When the sauce in the pan turns bright red",
        question_wo_referring_query="What colour is the cube that slides across the pan?",
        options=("White", "Yellow", "Green", "Magenta", "Blue"),
        correct_index=0,
        category="S2A",
        moments=(20.0,),
        status="accepted",
    ),
    MCQSpec(
        question='Right after the host says "the signal is gone", what appears on screen?',
        referring_query='Right after the host says "the signal is gone"',
        question_wo_referring_query="What appears on screen?",
        options=(
            "A spiral close-up of a vegetable",
            "A pot of blue water",
            "Colour bars",
            "A grid of small bowls",
        ),
        correct_index=2,
        category="T2E",
        moments=(27.5,),
        status="submitted",
    ),
    MCQSpec(
        question="After the colour bars disappear, what does the camera show next?",
        referring_query="After the colour bars disappear",
        question_wo_referring_query="What does the camera show next?",
        options=(
            "A pot of pasta water from above",
            "A close-up of romanesco",
            "The tomato sauce with the sliding cube",
            "Basil being chopped on a tray",
        ),
        correct_index=1,
        category="E3E",
        moments=(30.0, 34.0),
        status="annotating",
    ),
    MCQSpec(
        question="Starting from the grid of ingredient bowls, in which order do the next three scenes appear?",
        referring_query="Starting from the grid of ingredient bowls",
        question_wo_referring_query="In which order do the scenes appear?",
        options=(
            "Romanesco close-up, colour bars, sauce with the sliding cube",
            "Colour bars, sauce with the sliding cube, romanesco close-up",
            "Sauce with the sliding cube, romanesco close-up, colour bars",
            "Sauce with the sliding cube, colour bars, romanesco close-up",
        ),
        correct_index=3,
        category="SSS",
        moments=(12.0, 22.0),
        status="draft",
    ),
)


@dataclass(frozen=True)
class ShortVideo:
    name: str
    title: str
    scenes: tuple[tuple[str, float], ...]  # (pattern, seconds)


# The MVPBench-style question: a reference video and two candidates in order.
MVP_REFERENCE = ShortVideo(
    "romanesco_reference", "Romanesco close-up, then the red sauce", (("mandelbrot", 6.0), ("red_box", 6.0))
)
MVP_OTHER = ShortVideo("herb_tray_short", "Herbs on a tray, then a green board", (("life", 6.0), ("green_box", 6.0)))
MVP_QUESTION = (
    "<video>\nThe reference video shows a vegetable with a spiralling, fractal surface before a red sauce. "
    "Which of the following videos comes from the same cooking stream?\n1. <video>\n2. <video>\n"
    "Answer with the option's number."
)
MVP_OPTIONS = ("1", "2")
MVP_CORRECT_INDEX = 1  # candidate 2 is the main stream, which contains the same romanesco shot

# A livestream question in LiViBench's style: a task of the project's list, built from a kept seed
# question; the viewers' comments are part of its evidence. Accepted, so a LiViBench release has one.
LIVI_MCQ = MCQSpec(
    question="What interrupts the stream about half a minute in, and what do the viewers do?",
    referring_query="about half a minute in",
    question_wo_referring_query="What interrupts the stream, and what do the viewers do?",
    options=(
        "The signal drops and the chat asks whether the stream froze",
        "The pot boils over and the chat laughs",
        "A guest arrives and the chat greets her",
        "The lights go out and the chat leaves",
    ),
    correct_index=0,
    category="event recognition",
    moments=(29.5,),
    status="accepted",
)

SEED_QUESTIONS: tuple[tuple[str, str, str, str], ...] = (
    # (task, text, status, origin)
    ("scene recognition", "What kind of place is the streamer in during the first minute?", "kept", "human"),
    ("event recognition", "What interrupts the stream, and how does the streamer react?", "kept", "machine"),
    ("temporal querying", "At what point does the streamer first show the finished dish?", "proposed", "machine"),
)

VIDEO_DESCRIPTIONS: tuple[tuple[str, str], ...] = (
    # (agent role, text) for the main video
    (
        "visual",
        "A test card with colour stripes and a timecode; a grid of 24 coloured bowls; a red pan with a white "
        "cube sliding left to right; broadcast colour bars; a fractal romanesco close-up slowly zooming in; a "
        "blue pot with a yellow square sinking; green specks jumping on a dark tray on a purple board; an "
        "orange-to-yellow glow.",
    ),
    (
        "audio",
        "The host speaks throughout; a steady tone changes pitch at every scene change; no music.",
    ),
    (
        "interaction",
        "The host greets viewers and asks where they watch from; chat is busiest when the signal drops; she "
        "thanks her helper Theo by name.",
    ),
    (
        "narrative",
        "0-8 s greeting on the test card; 8-17 s ingredient overview; 17-27 s tomato sauce and mozzarella; "
        "27-32 s signal lost; 32-41 s romanesco close-up; 41-51 s pasta pot; 51-61 s basil; 61-70 s the "
        "finished dish and goodbye.",
    ),
)

# Per chain, in scene order: where each chain stands in the workflow (annotator.models.ItemStatus).
CHAIN_STATUSES: tuple[str, ...] = (
    "accepted",
    "scored",  # the judge passed it: waiting for the examiner
    "flagged",  # the examiner flagged it: waiting for the reviser
    "annotating",
    "draft",
    "draft",
    "draft",
    "draft",
)
# The examiner's flag on the flagged chain (codes of reviewer.examination.CHECKLISTS["qa_chain"]).
DEMO_CHAIN_CHECKS: tuple[str, ...] = (
    "skills_right", "coherent_pronouns", "answers_grounded", "needs_video", "no_duplicates", "other",
)
DEMO_FLAG_REASONS: tuple[str, ...] = ("coherent_pronouns",)
DEMO_FLAG_COMMENT = "Turns 3 and 4 name the chef again; use 'she' once she is introduced."
# Review queues: (name, stage, item kind, the demo login who pulls from it).
DEMO_QUEUES: tuple[tuple[str, str, str, str], ...] = (
    ("Annotate chains", "annotating", "qa_chain", "annotator"),
    ("Examine chains", "examining", "qa_chain", "examiner"),
    ("Examine MCQs", "examining", "mcq", "examiner"),
    ("Revise flagged chains", "revising", "qa_chain", "reviser"),
)
# Per chain pair (before_index 0..6).
CHAIN_PAIR_STATUSES: tuple[str, ...] = ("accepted", "annotating", "annotating", "draft", "draft", "draft", "draft")
