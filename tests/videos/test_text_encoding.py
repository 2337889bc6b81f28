"""Encoding detection for uploaded subtitle and comment files."""

import codecs
import io
import random

import pytest

from videos.text_encoding import (
    SNIFF_BYTES,
    TextDecodeError,
    decode_bytes,
    has_undecodable,
    open_text_stream,
    sniff_binary_kind,
)

CHINESE_SRT = (
    "1\n00:00:01,000 --> 00:00:03,500\n今天我们去北京看长城，天气很好。\n\n"
    "2\n00:00:04,000 --> 00:00:06,000\n大家都很开心！一二三四五。\n"
)


@pytest.mark.parametrize(
    ("data", "expected_encoding"),
    [
        (CHINESE_SRT.encode("utf-8"), "utf-8"),
        (codecs.BOM_UTF8 + CHINESE_SRT.encode("utf-8"), "utf-8-sig"),
        (codecs.BOM_UTF16_LE + CHINESE_SRT.encode("utf-16-le"), "utf-16"),
        (codecs.BOM_UTF16_BE + CHINESE_SRT.encode("utf-16-be"), "utf-16"),
        (CHINESE_SRT.encode("utf-16-le"), "utf-16-le"),
        (CHINESE_SRT.encode("utf-16-be"), "utf-16-be"),
        (CHINESE_SRT.encode("gb18030"), "gb18030"),
        (CHINESE_SRT.encode("gbk"), "gb18030"),
        (CHINESE_SRT.encode("gb2312"), "gb18030"),
        (CHINESE_SRT.encode("utf-32"), "utf-32"),
    ],
    ids=["utf8", "utf8-bom", "utf16le-bom", "utf16be-bom", "utf16le", "utf16be", "gb18030", "gbk", "gb2312", "utf32"],
)
def test_chinese_text_decodes_exactly_in_every_supported_encoding(data, expected_encoding):
    text, encoding = decode_bytes(data)
    assert text == CHINESE_SRT  # the BOM is consumed, never part of the text
    assert encoding == expected_encoding
    assert data.decode(encoding) == CHINESE_SRT  # the name is a codec that decodes the whole file


def test_traditional_chinese_in_gbk_still_decodes():
    text = "今天我們去臺灣看風景，天氣很好。大家都很開心！\n" * 3
    assert decode_bytes(text.encode("gbk"))[0] == text


def test_latin1_text_that_happens_to_decode_as_gb18030_is_not_read_as_chinese():
    text = "Die Straße führt über Äpfel und schöne Brücken hinaus\n" * 4
    data = text.encode("latin-1")
    data.decode("gb18030")  # the trap: these bytes are valid GB18030
    decoded, encoding = decode_bytes(data)
    assert encoding != "gb18030"
    assert decoded == text


def test_empty_input_is_empty_utf8_text():
    assert decode_bytes(b"") == ("", "utf-8")


def test_a_stray_nul_does_not_make_a_text_file_binary():
    text = "time,text\n" + "1.0,hello\n" * 500 + "2.0,bad\x00byte\n"
    assert decode_bytes(text.encode("utf-8")) == (text, "utf-8")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4, "this is a PNG image, not a text file"),
        (b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00" + bytes(range(256)) * 4, "an MP4/MOV video, not a text file"),
        (b"%PDF-1.7\n" + bytes(range(256)) * 4, "this is a PDF document, not a text file"),
        (random.Random(7).randbytes(20_000), "not a text file"),
        (codecs.BOM_UTF16_LE + b"\x00\xd8\x41\x00", "UTF-16 byte order mark but is not valid UTF-16 text"),
    ],
    ids=["png", "mp4", "pdf", "random-bytes", "utf16-bom-unpaired-surrogate"],
)
def test_binary_data_is_refused_with_what_it_looks_like(data, message):
    with pytest.raises(TextDecodeError, match=message):
        decode_bytes(data)


def test_sniff_binary_kind_names_common_uploads_and_not_text():
    assert sniff_binary_kind(b"\x1aE\xdf\xa3rest") == "a Matroska/WebM video"
    assert sniff_binary_kind(b"RIFF\x00\x00\x00\x00WAVEfmt ") == "a WAV audio file"
    assert sniff_binary_kind(b"WEBVTT\n\n") is None


# --- streaming


class CountingReader:
    """A non-seekable binary source that records how much was read from it."""

    def __init__(self, data: bytes):
        self._buffer = io.BytesIO(data)
        self.bytes_read = 0
        self.closed = False

    def read(self, n=-1):
        chunk = self._buffer.read(n)
        self.bytes_read += len(chunk)
        return chunk

    def close(self):
        self.closed = True


def _big_chinese(lines: int) -> str:
    # Multi-byte characters on every line, so one of them straddles the 64 KiB sniff boundary.
    return "".join(f"{i},{i * 0.5},评论第{i}条：主播太厉害了！\n" for i in range(lines))


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "gb18030"])
def test_stream_decodes_a_file_larger_than_the_sniff_window(encoding):
    text = _big_chinese(20_000)
    data = text.encode(encoding)
    assert len(data) > 3 * SNIFF_BYTES
    source = CountingReader(data)
    stream, detected = open_text_stream(source)
    # Choosing the encoding read only the sniff window (plus one byte to see there is more).
    assert source.bytes_read <= SNIFF_BYTES + 1
    assert detected == {"utf-8-sig": "utf-8-sig", "utf-16": "utf-16"}.get(encoding, encoding)
    assert stream.read() == text
    stream.close()
    assert not source.closed  # the caller's file object stays the caller's


def test_stream_from_a_path_closes_the_file_it_opened(tmp_path):
    path = tmp_path / "comments.csv"
    path.write_bytes("time,text\r\n1,你好\r\n".encode("gb18030"))
    stream, encoding = open_text_stream(path)
    assert encoding == "gb18030"
    # newline="" leaves line endings for the csv module to handle.
    assert stream.readlines() == ["time,text\r\n", "1,你好\r\n"]
    raw = stream.buffer.raw
    stream.close()
    assert raw._source.closed


def test_bytes_after_the_sniff_window_that_do_not_decode_are_marked_not_fatal():
    head = b"time,text\n" + b"1.0,plain ascii comment\n" * 4000
    assert len(head) > SNIFF_BYTES
    data = head + "2.0,中文评论\n".encode("gb18030") + b"3.0,after\n"
    stream, encoding = open_text_stream(io.BytesIO(data))
    assert encoding == "utf-8"
    lines = stream.read().splitlines()
    assert has_undecodable(lines[-2])
    assert lines[-2].startswith("2.0,")
    assert lines[-1] == "3.0,after"
    assert not any(has_undecodable(line) for line in lines[:-2])


def test_stream_refuses_binary_before_returning():
    source = CountingReader(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 1000)
    with pytest.raises(TextDecodeError, match="PNG image"):
        open_text_stream(source)


def test_stream_of_a_text_stream_is_returned_unchanged():
    text_stream = io.StringIO("time,text\n")
    assert open_text_stream(text_stream)[0] is text_stream


def test_stream_refuses_a_text_mode_file_object_of_another_kind():
    class TextSource:
        def read(self, n=-1):
            return "time,text\n"

    with pytest.raises(TypeError, match="binary file object"):
        open_text_stream(TextSource())
