"""Reading and writing SRT, WebVTT and the LongVideoBench subtitle JSON shapes."""

import codecs
import json
import random

import pytest

from videos.models import CueSource
from videos.subtitle_formats import (
    LVB_START_END,
    LVB_TIMESTAMP,
    SRT,
    VTT,
    Cue,
    Problem,
    SubtitleFormatError,
    format_timestamp,
    parse_clock,
    parse_subtitles,
    to_lvb_json,
    to_srt,
    to_webvtt,
)

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8

CUES = [
    Cue(0.0, 1.5, "Hello there"),
    Cue(1.0, 4.25, "Overlapping line\nwith a second line"),
    Cue(5.0, 5.0, "Zero-length cue"),
    Cue(61.001, 62.999, "今天我们去北京看长城"),
    Cue(3600 * 123 + 4.5, 3600 * 123 + 6.0, "Tom & Jerry <3, after 123 hours"),
]


def _lvb_loader_seconds(timestamp: str) -> float:
    """LongVideoBench's own `timestamp_to_seconds`: exactly three colon parts."""
    h, m, s = timestamp.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def _same_cues(actual, expected):
    assert [c.text for c in actual] == [c.text for c in expected]
    for a, e in zip(actual, expected, strict=True):
        assert a.start == pytest.approx(e.start, abs=5e-4)
        assert a.end == pytest.approx(e.end, abs=5e-4)


# --- timestamps


@pytest.mark.parametrize(
    ("seconds", "style", "expected"),
    [
        (0, "srt", "00:00:00,000"),
        (3661.5, "srt", "01:01:01,500"),
        (3661.5, "vtt", "01:01:01.500"),
        (3661.5, "lvb", "01:01:01.500"),
        (59.9996, "vtt", "00:01:00.000"),  # rounding carries into the minutes, never "00:00:60.000"
        (360_000.25, "srt", "100:00:00,250"),
        (5, "lvb", "00:00:05.000"),
    ],
)
def test_format_timestamp(seconds, style, expected):
    assert format_timestamp(seconds, style) == expected


@pytest.mark.parametrize(("seconds", "style"), [(-0.5, "vtt"), (float("nan"), "srt"), (1.0, "ass")])
def test_format_timestamp_refuses_what_it_cannot_write(seconds, style):
    with pytest.raises(ValueError, match="cannot write a subtitle time|unknown timestamp style"):
        format_timestamp(seconds, style)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("00:00:01,500", 1.5),
        ("00:00:01.5", 1.5),
        ("01:02.250", 62.25),
        ("123:00:00.000", 442_800.0),
        ("-00:00:02", -2.0),
    ],
)
def test_parse_clock(text, seconds):
    assert parse_clock(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["00:61:00.000", "00:00:75,000", "1.5", "00:0a:01,000", ""])
def test_parse_clock_refuses_bad_times(text):
    with pytest.raises(ValueError, match="is not a time like|has minutes or seconds of 60 or more"):
        parse_clock(text)


# --- round trips through every format


def test_srt_round_trip():
    report = parse_subtitles(to_srt(CUES).encode("utf-8"), "x.srt")
    assert (report.format, report.problems) == (SRT, [])
    _same_cues(report.cues, CUES)


def test_webvtt_round_trip_keeps_ampersands_and_angle_brackets():
    document = to_webvtt(CUES)
    assert "Tom &amp; Jerry &lt;3" in document
    report = parse_subtitles(document.encode("utf-8"), "x.vtt")
    assert (report.format, report.problems) == (VTT, [])
    _same_cues(report.cues, CUES)


@pytest.mark.parametrize(("shape", "fmt"), [("start_end", LVB_START_END), ("timestamp", LVB_TIMESTAMP)])
def test_lvb_json_round_trip(shape, fmt):
    data = json.dumps(to_lvb_json(CUES, shape), ensure_ascii=False).encode("utf-8")
    report = parse_subtitles(data, "x.json")
    assert (report.format, report.problems, report.source) == (fmt, [], "lvb_json")
    _same_cues(report.cues, CUES)


def test_report_source_is_a_cue_source_the_model_accepts():
    for fmt, document in [(SRT, to_srt(CUES)), (VTT, to_webvtt(CUES))]:
        assert parse_subtitles(document.encode(), None).source == fmt
    assert {"srt", "vtt", "lvb_json"} <= set(CueSource.values)


# --- writers, exactly as LongVideoBench's loader and the browser need them


def test_to_lvb_json_start_end_shape_is_exact_and_in_time_order():
    cues = [Cue(7.0, 9.5, "second"), Cue(0.25, 3.0, "first")]
    assert to_lvb_json(cues, "start_end") == [
        {"start": "00:00:00.250", "end": "00:00:03.000", "line": "first"},
        {"start": "00:00:07.000", "end": "00:00:09.500", "line": "second"},
    ]
    for record in to_lvb_json(CUES, "start_end"):
        assert record["start"].count(":") == 2 and "," not in record["start"]
        assert _lvb_loader_seconds(record["end"]) >= _lvb_loader_seconds(record["start"])


def test_to_lvb_json_timestamp_shape_writes_floats_never_ints():
    records = to_lvb_json([Cue(5, 10, "whole seconds"), Cue(0, 2, "first")], "timestamp")
    assert json.dumps(records) == (
        '[{"timestamp": [0.0, 2.0], "text": "first"}, {"timestamp": [5.0, 10.0], "text": "whole seconds"}]'
    )
    # The loader replaces a non-float end with the video's duration.
    assert all(isinstance(r["timestamp"][1], float) for r in json.loads(json.dumps(records)))


def test_to_lvb_json_refuses_an_unknown_shape():
    with pytest.raises(ValueError, match="unknown LongVideoBench subtitle shape"):
        to_lvb_json(CUES, "lines")


def test_to_webvtt_exact_output():
    assert to_webvtt([Cue(1.0, 2.5, "a <b> & c"), Cue(0.0, 1.0, "first\n\nblank line inside")]) == (
        "WEBVTT\n\n"
        "00:00:00.000 --> 00:00:01.000\nfirst\nblank line inside\n\n"
        "00:00:01.000 --> 00:00:02.500\na &lt;b&gt; &amp; c\n"
    )


def test_to_srt_exact_output():
    assert to_srt([Cue(1.0, 2.5, "two"), Cue(0.0, 1.0, "one")]) == (
        "1\n00:00:00,000 --> 00:00:01,000\none\n\n2\n00:00:01,000 --> 00:00:02,500\ntwo\n"
    )


# --- SRT


def test_srt_markup_separators_and_layout_variants():
    srt = (
        '1\r\n00:00:01,000 --> 00:00:02,500\r\n<i>Hello</i> {\\an8}<font color="red">world</font>\r\n\r\n'
        "2\r\n00:00:03.000-->00:00:04.000 X1:10 X2:20\r\nDot decimals, no spaces, coordinates\r\n"
        # No blank line before the next cue, and a cue without an index.
        "3\r\n00:00:05,000 --> 00:00:06,000\r\nrunning on\r\n"
        "00:00:07,000 --> 00:00:08,000\r\nno index\r\n"
    )
    report = parse_subtitles(srt.encode("utf-8"), "movie.srt")
    assert report.problems == []
    assert report.cues == [
        Cue(1.0, 2.5, "Hello world"),
        Cue(3.0, 4.0, "Dot decimals, no spaces, coordinates"),
        Cue(5.0, 6.0, "running on"),
        Cue(7.0, 8.0, "no index"),
    ]


def test_srt_malformed_cues_are_reported_by_line_and_valid_ones_kept():
    srt = (
        "1\n00:00:01,000 --> 00:00:02,000\nfine\n"  # lines 1-3
        "\n2\n00:00:05,000 --> 00:00:04,000\nend before start\n"  # 5-7
        "\nx\n00:00:05,000 --> 00:00:06,000\nnon-numeric index\n"  # 9-11
        "\n4\n00:00:0a,000 --> 00:00:06,000\nbad timestamp\n"  # 13-15
        "\n5\n100:00:01,000 --> 100:00:02,000\nhours past 99\n"  # 17-19
        "\n6\n-00:00:01,000 --> 00:00:02,000\nnegative\n"  # 21-23
        "\n7\n00:00:08,000 --> 00:00:09,000\n<i></i>\n"  # 25-27: only markup, so no text
        "\n8\n00:00:08,000 -> 00:00:09,000\nmissing arrow\n"  # 29-31
        "\nstray text after a blank line\n"  # 33
        "\n9\n00:00:01,500 --> 00:00:03,000\noverlaps the first, which is fine\n"  # 35-37
    )
    report = parse_subtitles(srt.encode("utf-8"), "broken.srt")
    assert report.cues == [
        Cue(1.0, 2.0, "fine"),
        Cue(1.5, 3.0, "overlaps the first, which is fine"),
        Cue(360_001.0, 360_002.0, "hours past 99"),
    ]
    assert [(p.line, p.message) for p in report.problems] == [
        (6, "ends (00:00:04.000) before it starts (00:00:05.000)"),
        (9, 'cue number "x" is not a number; cue skipped'),
        (14, 'bad timing line "00:00:0a,000 --> 00:00:06,000": "00:00:0a,000" is not a time like "00:01:02.500"'),
        (22, "starts at a negative time (-00:00:01.000)"),
        (26, "cue has no text"),
        (30, 'bad timing line "00:00:08,000 -> 00:00:09,000" (expected "00:00:01,000 --> 00:00:04,000")'),
        (33, 'text outside any cue (no timing line above it): "stray text after a blank line"'),
    ]


def test_chinese_srt_in_utf16_and_gb18030_decodes_correctly():
    text = "1\n00:00:01,000 --> 00:00:03,000\n主播太厉害了！\n\n2\n00:00:04,000 --> 00:00:05,000\n下一个问题\n"
    for data, encoding in [
        (codecs.BOM_UTF16_LE + text.encode("utf-16-le"), "utf-16"),
        (text.encode("utf-16-be"), "utf-16-be"),
        (text.encode("gb18030"), "gb18030"),
        (codecs.BOM_UTF8 + text.encode("utf-8"), "utf-8-sig"),
    ]:
        report = parse_subtitles(data, "zh.srt")
        assert report.encoding == encoding
        assert [c.text for c in report.cues] == ["主播太厉害了！", "下一个问题"]


# --- WebVTT


def test_webvtt_header_blocks_settings_and_markup():
    vtt = (
        "WEBVTT - a title\nKind: captions\nLanguage: en\n\n"
        "NOTE a comment\nthat spans lines\n\n"
        "STYLE\n::cue { color: yellow }\n\n"
        "REGION\nid:fred width:40%\n\n"
        "intro\n00:01.000 --> 00:02.000 align:start position:10%\n"
        "<v Roger Bingham>Hi &amp; welcome</v> <00:00:01.500><c.yellow>back</c>\n\n"
        "00:00:03.000 --> 00:00:04.000\n第二行 &lt;3\n"
    )
    report = parse_subtitles(vtt.encode("utf-8"), None)
    assert (report.format, report.problems) == (VTT, [])
    assert report.cues == [Cue(1.0, 2.0, "Hi & welcome back"), Cue(3.0, 4.0, "第二行 <3")]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_every_line_ending(newline):
    for document, fmt in [(to_webvtt(CUES), VTT), (to_srt(CUES), SRT)]:
        report = parse_subtitles(document.replace("\n", newline).encode(), None)
        assert (report.format, report.problems) == (fmt, [])
        _same_cues(report.cues, CUES)


def test_webvtt_without_a_blank_line_after_the_header():
    report = parse_subtitles(b"WEBVTT\n00:00.000 --> 00:01.000\nstraight in\n", "x.vtt")
    assert report.cues == [Cue(0.0, 1.0, "straight in")]
    assert report.problems == []


def test_vtt_missing_its_header_is_read_as_webvtt_by_name_and_the_problem_reported():
    """Decision: no cue is lost for a missing header; a .vtt name says WebVTT, and we say what was off."""
    body = b"\n00:00:01.000 --> 00:00:02.000\nno header\n\n00:00:03.000 --> 00:00:04.000\nstill fine\n"
    report = parse_subtitles(body, "captions.vtt")
    assert report.format == VTT
    assert [c.text for c in report.cues] == ["no header", "still fine"]
    assert report.problems == [
        Problem(2, 'missing the "WEBVTT" header line; read as WebVTT because of the .vtt file name')
    ]
    # Without the name, the same timing lines read as SRT (which accepts dot decimals) with no complaint.
    unnamed = parse_subtitles(body, None)
    assert (unnamed.format, unnamed.problems, unnamed.cues) == (SRT, [], report.cues)


def test_content_decides_the_format_before_the_file_name():
    assert parse_subtitles(to_webvtt(CUES).encode(), "mislabelled.srt").format == VTT
    assert parse_subtitles(json.dumps(to_lvb_json(CUES)).encode(), "mislabelled.srt").format == LVB_START_END
    assert parse_subtitles(to_srt(CUES).encode(), "mislabelled.json").format == SRT


# --- LongVideoBench JSON


def test_lvb_json_elements_are_checked_one_by_one_with_line_numbers():
    document = """[
  {"start": "00:00:01.000", "end": "00:00:02.000", "line": "good"},
  {"start": "00:00:03.000", "end": "00:00:02.000", "line": "backwards"},
  {"start": "00:00:03.000", "line": "no end"},
  {"start": "nonsense", "end": "00:00:04.000", "line": "bad time"},
  {"start": "00:00:05.000", "end": "00:00:06.000", "line": 42},
  {"start": "00:00:05.000", "end": "00:00:06.000", "line": "   "},
  "just a string",
  {"speaker": "A", "words": "wrong keys"},
  {"start": 7, "end": "00:00:08,5", "line": "numbers and commas are accepted on input"}
]"""
    report = parse_subtitles(document.encode(), "lvb.json")
    assert report.format == LVB_START_END
    assert report.cues == [Cue(1.0, 2.0, "good"), Cue(7.0, 8.5, "numbers and commas are accepted on input")]
    assert [(p.line, p.message) for p in report.problems] == [
        (3, "ends (00:00:02.000) before it starts (00:00:03.000)"),
        (4, 'element 3 has no "end"'),
        (5, 'element 4: "start": "nonsense" is not a time like "00:01:02.500"'),
        (6, 'element 5: "line" is a number, not text'),
        (7, "cue has no text"),
        (8, "element 7 is a string, not an object"),
        (
            9,
            (
                'element 8 is not a LongVideoBench cue: expected "start"/"end"/"line" or "timestamp"/"text" '
                '(keys found: "speaker", "words")'
            ),
        ),
    ]


def test_lvb_timestamp_shape_with_int_and_null_ends():
    document = json.dumps(
        [
            {"timestamp": [0, 5], "text": "ints are read as seconds"},
            {"timestamp": [5.5, None], "text": "runs to the end of the video"},
            {"timestamp": [1.0], "text": "one number"},
            {"timestamp": [1.0, 2.0]},
        ]
    ).encode()
    without_duration = parse_subtitles(document, None)
    assert without_duration.format == LVB_TIMESTAMP
    assert without_duration.cues == [Cue(0.0, 5.0, "ints are read as seconds")]
    assert [p.message for p in without_duration.problems] == [
        (
            'element 2: end is null (LongVideoBench reads it as "until the end of the video"); '
            "the video's duration is needed to keep this cue"
        ),
        'element 3: "timestamp" must be a list [start, end]',
        'element 4 has no "text"',
    ]
    with_duration = parse_subtitles(document, None, video_duration_s=60.0)
    assert with_duration.cues == [
        Cue(0.0, 5.0, "ints are read as seconds"),
        Cue(5.5, 60.0, "runs to the end of the video"),
    ]


# --- files that are not subtitles at all


@pytest.mark.parametrize(
    ("data", "filename", "message"),
    [
        (b"", "a.srt", "empty file: no subtitle cues"),
        (b"\n  \r\n\t\n", "a.srt", "empty file: no subtitle cues"),
        (random.Random(3).randbytes(4096), "a.srt", "not a subtitle file: not a text file"),
        (PNG, "a.vtt", "not a subtitle file: this is a PNG image"),
        (b'{"subtitles": []}', "a.json", "the JSON is an object, not a list of cues"),
        (b'"just a string"', "a.json", "the JSON is a string, not a list of cues"),
        (b'[{"start": "00:00:01.000", "end": ', "a.json", "not valid JSON: Expecting value at line 1 column 35"),
        (
            b'[\n{"start": "00:00:01.000", "end": "00:00:02.000", "line": "a"}\n{"start": 1}]',
            "a.json",
            "not valid JSON: Expecting ',' delimiter at line 3 column 1",
        ),
        (b"[]", "a.json", "no subtitle cues: the JSON list is empty"),
        (
            b'[{"foo": 1}, {"bar": 2}]',
            "a.json",
            "no valid cues: 2 problem(s), the first at line 1: element 1 is not a LongVideoBench cue",
        ),
        (
            b"[1, 2, 3]",
            "a.json",
            "no valid cues: 3 problem(s), the first at line 1: element 1 is a number, not an object",
        ),
        (
            b"1\n00:00:02,000 --> 00:00:01,000\nbackwards\n\n2\nnot a timing line\ntext\n\n"
            b"x\n00:00:01,000 --> 00:00:02,000\nbad index\n",
            "broken.srt",
            "no valid cues: 3 problem(s), the first at line 2: ends (00:00:01.000) before it starts",
        ),
        (
            b"Just some notes about the video.\nNothing timed here.\n",
            "notes.srt",
            "not a subtitle file: no timing lines like",
        ),
        (b"Just some notes about the video.\n", "notes.txt", "not a subtitle file: no WEBVTT header, no timing lines"),
        (
            b"WEBVTT\n\nNOTE nothing but a note\n",
            "a.vtt",
            "no subtitle cues: the WebVTT file has a header but no timing lines",
        ),
    ],
    ids=[
        "empty",
        "whitespace",
        "binary-garbage",
        "png",
        "json-object",
        "json-string",
        "json-truncated",
        "json-missing-comma",
        "json-empty-list",
        "json-wrong-objects",
        "json-numbers",
        "srt-all-broken",
        "plain-text-srt-name",
        "plain-text-no-subtitle-name",
        "vtt-header-only",
    ],
)
def test_files_without_a_usable_cue_are_refused_with_the_reason(data, filename, message):
    with pytest.raises(SubtitleFormatError) as excinfo:
        parse_subtitles(data, filename)
    assert message in str(excinfo.value)


def test_the_refusal_carries_every_problem_for_the_ui():
    data = b"1\n00:00:02,000 --> 00:00:01,000\nbackwards\n\n2\n00:00:0x,000 --> 00:00:02,000\nbad\n"
    with pytest.raises(SubtitleFormatError) as excinfo:
        parse_subtitles(data, "broken.srt")
    assert excinfo.value.format == SRT
    assert [p.line for p in excinfo.value.problems] == [2, 6]
    assert str(excinfo.value.problems[1]).startswith("line 6: bad timing line")
