"""io.table_files reads users' files as Python's csv and json modules read them, and says what is wrong in one line."""

import csv
import io
import json
import os

import pytest

from official_bert.io.table_files import TableFileError, check_utf8, read_columns, read_rows, table_format

# What spreadsheets and csv.writer produce: quoted commas and tabs, doubled quotes, newlines in a quoted field (LF,
# CRLF and CR), non-ASCII, empty fields, a field that is only spaces.
TRICKY = [
    {"id": "1", "subject": "Login, again", "body": 'He said "it broke"', "tags": "bug|ui", "extra": ""},
    {"id": "2", "subject": "multi\nline", "body": "crlf\r\ninside\rand cr", "tags": "", "extra": "x"},
    {"id": "3", "subject": "tab\tand,comma", "body": "café — naïve 日本", "tags": "q", "extra": "   "},
    {"id": "4", "subject": '""', "body": "'single'", "tags": "a|b|c", "extra": "trailing\n"},
]


def write_csv(path, rows, fieldnames, delimiter=",", bom=False, lineterminator="\r\n"):
    with open(path, "w", encoding="utf-8-sig" if bom else "utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames, delimiter=delimiter, lineterminator=lineterminator)
        writer.writeheader()
        writer.writerows(rows)


def dict_reader_rows(path, delimiter=","):
    with open(path, encoding="utf-8-sig", newline="") as f:
        return [dict(row) for row in csv.DictReader(f, delimiter=delimiter)]


@pytest.mark.parametrize("delimiter,name", [(",", "t.csv"), ("\t", "t.tsv")])
@pytest.mark.parametrize("bom", [False, True])
@pytest.mark.parametrize("lineterminator", ["\r\n", "\n"])
def test_rows_equal_csv_dict_reader(tmp_path, delimiter, name, bom, lineterminator):
    path = str(tmp_path / name)
    # The columns in another order than the dicts', and more of them than a task needs.
    write_csv(path, TRICKY, ["tags", "extra", "body", "id", "subject"], delimiter, bom, lineterminator)
    expected = dict_reader_rows(path, delimiter)
    assert expected == TRICKY  # the csv module's own round trip, so the comparison below is against the truth
    rows = list(read_rows(path, columns=["body", "tags"]))
    assert [row for _, row in rows] == expected
    assert [list(row) for _, row in rows] == [["tags", "extra", "body", "id", "subject"]] * len(TRICKY)
    assert [number for number, _ in rows] == [1, 2, 3, 4]
    assert read_columns(path) == ["tags", "extra", "body", "id", "subject"]


def test_blank_lines_and_lone_cr_line_ends_as_dict_reader(tmp_path):
    path = str(tmp_path / "mac.csv")
    with open(path, "wb") as f:
        f.write(b"a,b\r1,2\r\r\n3,\"x\ry\"\n\n")
    assert [row for _, row in read_rows(path)] == dict_reader_rows(path) == [{"a": "1", "b": "2"},
                                                                            {"a": "3", "b": "x\ry"}]
    assert [number for number, _ in read_rows(path)] == [1, 2]


def test_json_lines_and_text(tmp_path):
    path = str(tmp_path / "train.json")
    objects = [{"text": "a \u2028 b", "labels": ["x", "y"], "score": 0.5}, {"text": "c", "labels": [], "score": 1}]
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("\ufeff" + json.dumps(objects[0], ensure_ascii=False) + "\r\n\r\n" + json.dumps(objects[1]) + "\n")
    assert list(read_rows(path, columns=["labels"])) == [(1, objects[0]), (3, objects[1])]
    text = str(tmp_path / "inputs.txt")
    with open(text, "wb") as f:
        f.write(b"\xef\xbb\xbffirst line\r\n\r\n  second  \n")
    assert list(read_rows(text)) == [(1, {"text": "first line"}), (3, {"text": "  second  "})]


def test_remote_path_through_gfile():
    import tensorflow as tf
    path = "ram://table_files/dev.csv"
    text = io.StringIO(newline="")
    csv.writer(text).writerows([["text", "label"], ["a, b", "1"]])
    with tf.io.gfile.GFile(path, "w") as f:
        f.write(text.getvalue())
    assert list(read_rows(path, columns=["label"])) == [(1, {"text": "a, b", "label": "1"})]


def test_format_from_extension_or_flag():
    assert [table_format(p) for p in ("a.CSV", "a.tsv", "a.jsonl", "a.ndjson", "a.txt")] == [
        "csv", "tsv", "jsonl", "jsonl", "text"]
    assert table_format("data.bin", "csv") == "csv"
    with pytest.raises(TableFileError, match=r"data\.bin: cannot tell its format .*--input_format=csv\|tsv"):
        table_format("data.bin")
    with pytest.raises(TableFileError, match="--input_format=xml: expected one of csv, tsv, jsonl, text"):
        table_format("a.csv", "xml")


def error_of(path, content, columns=(), input_format=None):
    with open(path, "wb") as f:
        f.write(content)
    with pytest.raises(TableFileError) as raised:
        list(read_rows(path, input_format, columns))
    message = str(raised.value)
    assert "\n" not in message and message.startswith(path)
    return message[len(path):]


@pytest.mark.parametrize("name,content,columns,expected", [
    ("e.jsonl", b'{"text": "a"}\n{"text": "b",}\n', (),
     ", row 2: not a JSON object: Expecting property name enclosed in double quotes at column 14"),
    ("e.json", b'[{"text": "a"},\n', (), ", row 1: not a JSON object: Expecting value at column 16 "
                                        "(a JSON array? write one object per line: JSON Lines)"),
    ("e.jsonl", b'{"text": "a"}\n"b"\n', (), ", row 2: expected a JSON object, got str '\"b\"'"),
    ("e.csv", b"text,label\na,1\nb,2,3\n", (), ", row 2 (line 3): 3 fields where the header has 2"),
    ("e.csv", b"text,label\na\n", (), ", row 1 (line 2): 1 fields where the header has 2"),
    ("e.csv", b'text,label\n"a,1\nb,2\n', (),
     ", row 1 (lines 2-3): 1 fields where the header has 2 (a quote left open?)"),
    ("e.csv", b"text,label\nok,1\ncaf\xe9,2\n", (), ", line 3: byte 0xe9 at byte offset 19 is not UTF-8 "
                                                     "(save the file as UTF-8)"),
    ("e.txt", b"\xef\xbb\xbfok\n\xff\n", (), ", line 2: byte 0xff at byte offset 6 is not UTF-8 (save the file as "
                                              "UTF-8)"),
    ("e.csv", b"", (), ": the file is empty (it has no data rows)"),
    ("e.csv", b"text,label\r\n", (), ": the file is empty (it has no data rows)"),
    ("e.jsonl", b"\n\n", (), ": the file is empty (it has no data rows)"),
    ("e.csv", b"body,tags\nx,y\n", ("text",), ": no column 'text' (its columns: body, tags)"),
    ("e.jsonl", b'{"text": "a", "label": 1}\n{"text": "b"}\n', ("label",),
     ", row 2: no column 'label' (its columns: text)"),
    ("e.txt", b"a\n", ("label",), ": no column 'label' (a plain-text file has one column, 'text')"),
    ("e.csv", b"text,text\na,b\n", (), ", header: the column 'text' appears more than once"),
])
def test_errors_are_one_line_naming_file_and_row(tmp_path, name, content, columns, expected):
    assert error_of(str(tmp_path / name), content, columns) == expected


def test_non_utf8_offset_counts_from_the_file_start(tmp_path):
    content = b"text,label\r\n" + "é,1\r\n".encode() * 3 + b"\x80,2\r\n"
    message = error_of(str(tmp_path / "o.csv"), content)
    offset = len("text,label\r\n") + 3 * len("é,1\r\n".encode())
    assert content[offset] == 0x80
    assert message == f", line 5: byte 0x80 at byte offset {offset} is not UTF-8 (save the file as UTF-8)"


def test_rows_stream_without_reading_the_whole_file(tmp_path):
    path = str(tmp_path / "big.csv")
    with open(path, "w", newline="") as f:
        f.write("text,label\n" + "a,1\n" * 1000 + "broken\n")
    rows = read_rows(path)
    assert next(rows) == (1, {"text": "a", "label": "1"})  # the error of row 1001 is not reached yet
    with pytest.raises(TableFileError, match="row 1001"):
        list(rows)


@pytest.mark.parametrize("name,content,input_format,expected", [
    ("t.csv", b"text\tlabel\nfine\tpos\n", None,
     r": no column 'text' (header is 'text\tlabel': a tab-separated file? give --input_format=tsv)"),
    ("t.csv", b"text;label\nfine;pos\n", None,
     ": no column 'text' (header is 'text;label': a ';'-separated file? save it with commas or tabs "
     "(--input_format=csv or tsv))"),
    ("t.tsv", b"text,label\nfine,pos\n", None,
     ": no column 'text' (header is 'text,label': a comma-separated file? give --input_format=csv)"),
    ("t.data", b"text\tlabel\nfine\tpos\n", "csv",
     r": no column 'text' (header is 'text\tlabel': a tab-separated file? give --input_format=tsv)"),
])
def test_a_file_of_other_separators_shows_its_header_and_the_format_to_give(tmp_path, name, content, input_format,
                                                                           expected):
    assert error_of(str(tmp_path / name), content, ("text", "label"), input_format) == expected


def test_a_ragged_row_of_a_one_column_header_names_the_separator(tmp_path):
    message = error_of(str(tmp_path / "s.csv"), b"text;label\nhello, world;pos\n")
    assert message == (", row 1 (line 2): 2 fields where the header has 1 (header is 'text;label': a ';'-separated "
                       "file? save it with commas or tabs (--input_format=csv or tsv))")


@pytest.mark.parametrize("name,delimiter", [("long.csv", ","), ("long.tsv", "\t")])
def test_a_cell_longer_than_the_csv_modules_default_limit(tmp_path, name, delimiter):
    path = str(tmp_path / name)
    document = "word, \"quoted\" " * 20_000  # 300,000 characters: over csv's default 131,072
    rows = [{"text": document, "label": "pos"}, {"text": "short", "label": "neg"}]
    write_csv(path, rows, ["text", "label"], delimiter)
    header_path = str(tmp_path / f"header-{name}")
    write_csv(header_path, [{document: "x"}], [document], delimiter)
    assert len(document) > 131_072
    previous = csv.field_size_limit(131_072)  # the default, whatever an earlier reader in this process set
    try:
        assert [row for _, row in read_rows(path, columns=["text"])] == rows
        csv.field_size_limit(131_072)
        assert read_columns(header_path) == [document]
    finally:
        csv.field_size_limit(previous)


def test_check_utf8_names_the_line_and_byte_offset(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes(b"\xef\xbb\xbfgood line\nok\r\ncaf\xe9\n")
    with pytest.raises(TableFileError) as raised:
        check_utf8(str(path))
    assert str(raised.value) == f"{path}, line 3: byte 0xe9 at byte offset 20 is not UTF-8 (save the file as UTF-8)"
    path.write_bytes("\ufeffcafé\n\nnaïve".encode())
    check_utf8(str(path))


@pytest.mark.parametrize("name,separator", [("train.csv", ","), ("train.tsv", "\t")])
def test_the_header_row_again_mid_file_is_refused_naming_its_row(tmp_path, name, separator):
    # K7: two files joined into one; the second header was read as a row labelled 'label'.
    header = separator.join(["id", "text", "label"])
    lines = [header] + [separator.join([str(i), f"text {i}", "pos" if i % 2 else "neg"]) for i in range(24)]
    path = tmp_path / name
    path.write_text("\n".join(lines + lines) + "\n")
    with pytest.raises(TableFileError) as raised:
        list(read_rows(str(path), columns=["text", "label"]))
    assert str(raised.value) == (f"{path}, row 25 (line 26): the header row again ({header!r}): two files joined "
                                 "into one? Remove that line (it would be read as data)")


def test_a_one_column_file_may_hold_its_column_name_as_text(tmp_path):
    # One column cannot tell a repeated header from a text that happens to be the column's name.
    path = tmp_path / "texts.csv"
    path.write_text("text\nhello\ntext\n")
    assert [row for _, row in read_rows(str(path))] == [{"text": "hello"}, {"text": "text"}]


@pytest.mark.parametrize("header,wanted,expected", [
    # K6a, K6c: the trailing space showed only as a space before ")", so the line read as if 'label' were there.
    ("id\ttext\tlabel ", "label", "its columns: id, text, 'label '; the header's 'label ' has a space at its end: "
                                  "remove it from the file"),
    ("id \ttext\tlabel", "id", "its columns: 'id ', text, label; the header's 'id ' has a space at its end: remove "
                               "it from the file"),
    ("id\ttext\t\u200blabel", "label", "its columns: id, text, '\\u200blabel'; the header's '\\u200blabel' has "
                                       "U+200B ZERO WIDTH SPACE at its start: remove it from the file"),
    ("id\ttext\tlabel\u00a0", "label", "its columns: id, text, 'label\\xa0'; the header's 'label\\xa0' has U+00A0 "
                                       "NO-BREAK SPACE at its end: remove it from the file"),
    ("id\ttext\ttag ", "label", "its columns: id, text, 'tag '"),
])
def test_a_header_name_with_invisible_characters_around_it_is_shown_quoted_with_the_fix(tmp_path, header, wanted,
                                                                                         expected):
    # Names are kept as written (as csv, pandas and datasets keep them); the message makes the difference visible.
    path = tmp_path / "train_hdrsp.tsv"
    path.write_text(header + "\n1\tfine\tpos\n", encoding="utf-8")
    with pytest.raises(TableFileError) as raised:
        list(read_rows(str(path), columns=[wanted]))
    assert str(raised.value) == f"{path}: no column {wanted!r} ({expected})"
    assert [name for _, row in read_rows(str(path)) for name in row] == header.split("\t")
