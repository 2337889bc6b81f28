"""Streaming import formats for real-time comments, and their PostgreSQL COPY encoding."""

import codecs
import io
import json
import math
import random
import tracemalloc

import pytest
from django.db import connection

from tests import factories
from videos import comment_formats
from videos.comment_formats import (
    COPY_COLUMNS,
    CSV,
    JSONL,
    USER_MAX_LENGTH,
    CommentFormatError,
    CommentRow,
    RowProblem,
    copy_sql,
    iter_comments,
    parse_comment_time,
    write_copy_rows,
)
from videos.models import Comment
from videos.text_encoding import SNIFF_BYTES

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8


def _read(data: bytes, filename: str | None = None):
    return list(iter_comments(io.BytesIO(data), filename))


def _rows(items):
    return [i for i in items if isinstance(i, CommentRow)]


def _problems(items):
    return [(i.line, i.message) for i in items if isinstance(i, RowProblem)]


# --- times


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("12.5", 12.5),
        (" 7 ", 7.0),
        (3, 3.0),
        (4.25, 4.25),
        ("1e2", 100.0),
        ("01:02:03.5", 3723.5),
        ("01:02:03", 3723.0),
        ("02:03", 123.0),
        ("02:03.25", 123.25),
        ("00:00:01,5", 1.5),
        ("90:00", 5400.0),
    ],
)
def test_comment_times(value, seconds):
    assert parse_comment_time(value) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "missing time"),
        ("abc", 'bad time "abc"'),
        ("-3", "negative time (-3 s)"),
        (-0.5, "negative time"),
        ("nan", "not a finite number"),
        ("inf", "not a finite number"),
        (math.inf, "not a finite number"),
        ("00:61:00", 'bad time "00:61:00"'),
        (True, "time is true, not a time"),
        (None, "time is null"),
        ([1], "time is a list"),
    ],
)
def test_bad_comment_times(value, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_comment_time(value)


# --- CSV


def test_csv_with_user_and_extra_columns():
    data = b'time,text,user,color,lang\n1.5,hello,bob,red,en\n00:01:02.5,"quoted, with comma",al,,\n'
    reader = iter_comments(io.BytesIO(data), "c.csv")
    assert (reader.format, reader.encoding) == (CSV, "utf-8")
    assert reader.columns == {"time": "time", "text": "text", "user": "user"}
    assert reader.extra_columns == ["color", "lang"]
    assert list(reader) == [
        CommentRow(2, 1.5, "hello", "bob", {"color": "red", "lang": "en"}),
        CommentRow(3, 62.5, "quoted, with comma", "al", {"color": "", "lang": ""}),
    ]


@pytest.mark.parametrize(
    ("header", "columns"),
    [
        ("time_s,content", {"time": "time_s", "text": "content"}),
        ("Timestamp,Comment,Username", {"time": "Timestamp", "text": "Comment", "user": "Username"}),
        ("t,message,author", {"time": "t", "text": "message", "user": "author"}),
        ("offset,Text,User Name", {"time": "offset", "text": "Text", "user": "User Name"}),
        ("\ufeffTIME , TEXT", {"time": "TIME", "text": "TEXT"}),  # the UTF-8 BOM is not part of the name
    ],
)
def test_csv_header_aliases(header, columns):
    data = (header + "\n3,hi" + (",u" if header.count(",") == 2 else "") + "\n").encode()
    reader = iter_comments(io.BytesIO(data), "c.csv")
    assert reader.columns == columns
    [row] = list(reader)
    assert (row.time_s, row.text, row.metadata) == (3.0, "hi", None)


@pytest.mark.parametrize("delimiter", ["\t", ";", "|"])
def test_csv_other_delimiters(delimiter):
    data = delimiter.join(["time", "text", "user"]) + "\n" + delimiter.join(["4", "a, b", "x"]) + "\n"
    assert _read(data.encode(), "c.tsv") == [CommentRow(2, 4.0, "a, b", "x", None)]


def test_csv_bad_rows_are_reported_by_line_and_skipped():
    data = (
        "time,text,user\n"  # 1
        "1,fine,a\n"  # 2
        "-3,negative,a\n"  # 3
        "abc,bad time,a\n"  # 4
        "5,   ,a\n"  # 5
        "\n"  # 6: blank lines are not rows
        '6,"spans\ntwo lines",a\n'  # 7-8
        "7,too,many,fields\n"  # 9
        "8,short\n"  # 10
        "9,nul\x00inside,a\n"  # 11
        f"10,long user,{'u' * (USER_MAX_LENGTH + 1)}\n"  # 12
        "11,last,a\n"  # 13
    ).encode()
    items = _read(data, "c.csv")
    assert _rows(items) == [
        CommentRow(2, 1.0, "fine", "a"),
        CommentRow(7, 6.0, "spans\ntwo lines", "a"),
        CommentRow(13, 11.0, "last", "a"),
    ]
    assert _problems(items) == [
        (3, "negative time (-3 s)"),
        (4, 'bad time "abc" (expected seconds like 12.5, HH:MM:SS.fff or MM:SS)'),
        (5, "empty text"),
        (9, "row has 4 fields but the header has 3 (text with an unquoted delimiter?)"),
        (10, "row has 2 fields but the header has 3 (text with an unquoted delimiter?)"),
        (11, "contains a NUL character, which the database cannot store"),
        (12, f"user name longer than {USER_MAX_LENGTH} characters"),
    ]


@pytest.mark.parametrize(
    ("encoded", "encoding"),
    [
        (lambda t: t.encode("gb18030"), "gb18030"),
        (lambda t: codecs.BOM_UTF16_LE + t.encode("utf-16-le"), "utf-16"),
        (lambda t: codecs.BOM_UTF8 + t.encode("utf-8"), "utf-8-sig"),
    ],
    ids=["gb18030", "utf16", "utf8-bom"],
)
def test_chinese_comments_in_other_encodings(encoded, encoding):
    text = "时间,弹幕,用户\n".replace("时间", "time").replace("弹幕", "danmaku").replace("用户", "nickname")
    text += "1.0,主播太厉害了！,小明\n2.5,哈哈哈,小红\n"
    reader = iter_comments(io.BytesIO(encoded(text)), "c.csv")
    assert reader.encoding == encoding
    assert [(r.text, r.user) for r in reader] == [("主播太厉害了！", "小明"), ("哈哈哈", "小红")]


def test_bytes_in_another_encoding_late_in_a_file_cost_only_their_row():
    head = b"time,text\n" + b"1,plain ascii comment\n" * 4000
    assert len(head) > SNIFF_BYTES
    data = head + "2,中文评论\n".encode("gb18030") + b"3,after\n"
    items = _read(data, "c.csv")
    assert len(_rows(items)) == 4001
    assert _rows(items)[-1] == CommentRow(4003, 3.0, "after")
    assert _problems(items) == [(4002, "holds bytes that are not valid utf-8 (does the file mix encodings?)")]


# --- JSONL


def test_jsonl_with_one_broken_line_among_good_ones():
    lines = [
        '{"time": 1, "text": "hi", "user": "z", "extra": {"a": 1}, "likes": 3}',  # 1
        '{"t": 2, "content": "broken"',  # 2
        "",  # 3
        "[1, 2]",  # 4
        '{"offset": "00:03", "message": "ok \\ud83d\\ude00", "author": 42}',  # 5: emoji as escaped pair
        '{"time": 4, "text": "bad \\ud83d"}',  # 6: unpaired surrogate
        '{"text": "no time"}',  # 7
        '{"time": 5}',  # 8
        '{"time": 5, "text": "nul \\u0000"}',  # 9
        '{"time": "x", "text": "bad time"}',  # 10
        '{"time": 6, "text": 666}',  # 11: danmaku that are numbers stay text
        '{"time": 7, "text": ["a"]}',  # 12
        '{"time": 8, "text": "last"}',  # 13
    ]
    reader = iter_comments(io.BytesIO("\r\n".join(lines).encode()), "c.jsonl")
    assert reader.format == JSONL
    items = list(reader)
    assert _rows(items) == [
        CommentRow(1, 1.0, "hi", "z", {"extra": {"a": 1}, "likes": 3}),
        CommentRow(5, 3.0, "ok 😀", "42", None),
        CommentRow(11, 6.0, "666", "", None),
        CommentRow(13, 8.0, "last", "", None),
    ]
    assert _problems(items) == [
        (2, "invalid JSON: Expecting ',' delimiter at column 29"),
        (4, "not a JSON object but a list"),
        (6, "contains an unpaired \\udXXX escape, which is not valid Unicode"),
        (7, "no time field (one of: time, time_s, timestamp, t, offset, offset_s, seconds, sec, time_sec, start)"),
        (8, "no text field (one of: text, content, comment, message, msg, body, danmaku)"),
        (9, "contains a NUL character (\\u0000), which the database cannot store"),
        (10, 'bad time "x" (expected seconds like 12.5, HH:MM:SS.fff or MM:SS)'),
        (12, 'text is ["a"], not text'),
    ]


def test_jsonl_overlong_line_is_skipped_without_being_held(monkeypatch):
    monkeypatch.setattr(comment_formats, "MAX_LINE_CHARS", 100)
    lines = ['{"time": 1, "text": "ok"}', '{"time": 2, "text": "' + "x" * 500 + '"}', '{"time": 3, "text": "ok"}']
    items = _read("\n".join(lines).encode(), "c.jsonl")
    assert [r.line for r in _rows(items)] == [1, 3]
    assert _problems(items) == [(2, "line longer than 100 characters; skipped")]


# --- files that are not comments


@pytest.mark.parametrize(
    ("data", "filename", "message"),
    [
        (b"", "c.csv", "empty file: no header and no comments"),
        (b"\n\n  \n", "c.csv", "empty file: no header and no comments"),
        (PNG, "c.csv", "not a comments file: this is a PNG image"),
        (random.Random(5).randbytes(10_000), "c.jsonl", "not a comments file: not a text file"),
        (b'[{"time": 1, "text": "a"}]', "c.json", "this is a JSON array; comments must be JSONL"),
        (
            b"when,what\n1,hi\n",
            "c.csv",
            "not a comments CSV: the header row has no time column (one of: time, time_s, timestamp, t, offset, "
            "offset_s, seconds, sec, time_sec, start) and no text column (one of: text, content, comment, message, "
            'msg, body, danmaku); found columns: "when", "what"',
        ),
        (b"time,user\n1,bob\n", "c.csv", "the header row has no text column (one of: text, content"),
        (b"text,user\nhi,bob\n", "c.csv", "the header row has no time column (one of: time"),
        (
            b"1.5,hello,bob\n2.0,again,al\n",
            "c.csv",
            'found columns: "1.5", "hello", "bob". The first line must be a header',
        ),
        (b"1\n00:00:01,000 --> 00:00:02,000\nsubtitles, not comments\n", "c.csv", 'found columns: "1"'),
        (b"time,text\n1,hi\n", "c.jsonl", 'not JSONL: line 1 is not a JSON object: "time,text"'),
    ],
    ids=[
        "empty",
        "blank-lines",
        "png",
        "binary-garbage",
        "json-array",
        "csv-unknown-columns",
        "csv-no-text",
        "csv-no-time",
        "csv-no-header",
        "srt-as-comments",
        "csv-named-jsonl",
    ],
)
def test_files_that_cannot_be_comments_are_refused_up_front(data, filename, message):
    with pytest.raises(CommentFormatError) as excinfo:
        iter_comments(io.BytesIO(data), filename)  # refused on the call, before any row is read
    assert message in str(excinfo.value)


def test_a_file_opened_from_a_path_is_closed_when_the_rows_run_out(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("time,text\n1,a\n2,b\n", encoding="utf-8")
    reader = iter_comments(path)
    assert reader.filename == str(path)
    assert [r.text for r in reader] == ["a", "b"]
    assert reader._stream.closed


def test_a_caller_file_object_stays_open():
    source = io.BytesIO(b"time,text\n1,a\n")
    with iter_comments(source, "c.csv") as reader:
        assert len(list(reader)) == 1
    assert not source.closed


# --- memory stays flat however big the file


def _write_big_file(path, rows: int, fmt: str) -> int:
    with open(path, "w", encoding="utf-8", newline="") as f:
        if fmt == CSV:
            f.write("time,text,user,color,mode\n")
        for i in range(rows):
            if i % 50_000 == 12_345:
                line = "oops,bad time,u,white,1\n" if fmt == CSV else '{"time": "oops"}\n'
            elif fmt == CSV:
                text = f"弹幕评论第{i}条 the streamer is really, really great today!"
                line = f'{i * 0.01:.2f},"{text}",user{i % 997},white,1\n'
            else:
                record = {"time": i * 0.01, "text": f"弹幕评论第{i}条 great", "user": f"u{i % 997}", "mode": 1}
                line = json.dumps(record) + "\n"
            f.write(line)
    return path.stat().st_size


@pytest.mark.parametrize("fmt", [CSV, JSONL])
def test_streaming_keeps_memory_flat_for_a_large_file(tmp_path, fmt):
    rows = 200_000
    path = tmp_path / f"big.{fmt}"
    size = _write_big_file(path, rows, fmt)
    limit = 16 * 1024 * 1024
    # Reading the file whole (or keeping the rows) would already exceed the limit.
    assert size > limit
    tracemalloc.start()
    try:
        good = bad = 0
        last = None
        for item in iter_comments(path):
            if isinstance(item, CommentRow):
                good += 1
                last = item
            else:
                bad += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (good, bad) == (rows - 4, 4)
    assert last.time_s == pytest.approx((rows - 1) * 0.01)
    assert peak < limit, f"peak allocation {peak / 2**20:.1f} MiB while streaming a {size / 2**20:.0f} MiB file"


# --- PostgreSQL COPY


TRICKY = [
    CommentRow(1, 1.5, "tab\there, newline\nthere, cr\rhere", "back\\slash", {"k": "v\n\\", "n": 1, "中": ["文"]}),
    CommentRow(2, 1e-05, "\\N is literal text, not NULL", "", None),
    CommentRow(3, 3600.125, "end-of-data marker on its own line:\n\\.\nstill text", "tab\tuser", {}),
    CommentRow(4, 0.0, "emoji 😀 and 中文 and a trailing backslash \\", "\\", {"quote": "\"'", "tab": "\t"}),
]


def test_write_copy_rows_escapes_exactly():
    out = io.StringIO()
    assert write_copy_rows(TRICKY[:2], out, video_id=7) == 2
    assert out.getvalue() == (
        '7\t1.5\ttab\\there, newline\\nthere, cr\\rhere\tback\\\\slash\t{"k":"v\\\\n\\\\\\\\","n":1,"中":["文"]}\n'
        "7\t1e-05\t\\\\N is literal text, not NULL\t\t\\N\n"
    )


def test_write_copy_rows_refuses_what_it_cannot_write():
    with pytest.raises(TypeError, match="RowProblem"):
        write_copy_rows([RowProblem(3, "bad time")], io.StringIO(), video_id=1)
    with pytest.raises(ValueError, match="line 9: PostgreSQL cannot store a NUL"):
        write_copy_rows([CommentRow(9, 1.0, "a\x00b")], io.StringIO(), video_id=1)
    with pytest.raises(ValueError, match="line 9: PostgreSQL cannot store a NUL"):
        write_copy_rows([CommentRow(9, 1.0, "ab", "", {"x": "\x00"})], io.StringIO(), video_id=1)


def test_copy_statement_and_limits_match_the_comment_model():
    table = Comment._meta.db_table
    assert copy_sql() == f'COPY "{table}" ("video_id", "time_s", "text", "user", "metadata") FROM STDIN'
    columns = {f.column for f in Comment._meta.concrete_fields}
    assert set(COPY_COLUMNS) <= columns
    assert Comment._meta.get_field("user").max_length == USER_MAX_LENGTH


def _require_postgresql():
    if connection.vendor != "postgresql":
        pytest.skip(f"COPY is PostgreSQL's; this database is {connection.vendor}")


@pytest.mark.django_db
def test_copy_rows_round_trip_through_postgresql_exactly():
    _require_postgresql()
    out = io.StringIO()
    write_copy_rows(TRICKY, out, video_id=42)
    out.seek(0)
    with connection.cursor() as cursor:
        # The real column types (varchar(200) user, jsonb metadata, the time check) without the FK.
        cursor.execute("CREATE TEMP TABLE copy_probe (LIKE videos_comment INCLUDING ALL)")
        cursor.copy_expert(copy_sql("copy_probe"), out)
        cursor.execute('SELECT video_id, time_s, text, "user", metadata::text FROM copy_probe ORDER BY time_s')
        fetched = cursor.fetchall()
    expected = sorted(TRICKY, key=lambda r: r.time_s)
    assert [(v, t, text, user) for v, t, text, user, _ in fetched] == [(42, r.time_s, r.text, r.user) for r in expected]
    assert [None if m is None else json.loads(m) for *_, m in fetched] == [r.metadata for r in expected]


@pytest.mark.django_db
def test_streamed_rows_copy_into_the_comment_table():
    _require_postgresql()
    video = factories.VideoFactory()
    data = b'time,text,user,color\n1,"multi\nline\ttab",bob,red\n00:00:02.5,back\\slash \\N,,\n'
    rows = [item for item in iter_comments(io.BytesIO(data), "c.csv") if isinstance(item, CommentRow)]
    buffer = io.StringIO()
    write_copy_rows(rows, buffer, video_id=video.pk)
    buffer.seek(0)
    with connection.cursor() as cursor:
        cursor.copy_expert(copy_sql(Comment._meta.db_table), buffer)
    stored = list(Comment.objects.filter(video=video).values_list("time_s", "text", "user", "metadata"))
    assert stored == [(1.0, "multi\nline\ttab", "bob", {"color": "red"}), (2.5, "back\\slash \\N", "", {"color": ""})]
