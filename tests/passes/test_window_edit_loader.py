"""A window-edit file that json cannot read in the ordinary way (nested 5,000 deep, a huge
integer literal, bytes that are not UTF-8): one located message naming the file and what was
expected, exit status 2, never a raw RecursionError / ValueError."""

import pathlib

import pytest

from asmevo.tools.opt import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
KSRC = ROOT / "examples" / "edit_vadd_double.s"


@pytest.mark.parametrize("content,where,words", [
    ('{"edits": ' + "[" * 5000 + "]" * 5000 + "}", ":1:", ["nested more than 32 levels"]),
    ("[" * 5000 + "]" * 5000, ":1:33:", ["nested more than 32 levels"]),
    ('{"edits": [' + "{" * 3000 + "}" * 3000 + "]}", ":1:", ["nested more than 32 levels"]),
    ('{"edits": [' + "1" * 5000 + "]}", ":", ["number literal too long"]),
    (b'{"edits": "\xff"}', ":", ["not UTF-8"]),
], ids=["arrays-5000-deep-in-edits", "bare-arrays-5000-deep", "objects-3000-deep",
        "5000-digit-integer", "not-utf8"])
def test_unreadable_edit_file_one_clear_message(tmp_path, capsys, content, where, words):
    ej = tmp_path / "edit.json"
    ej.write_bytes(content if isinstance(content, bytes) else content.encode())
    out = tmp_path / "o.s"
    assert main([f"--passes=window-edit<file={ej}>", str(KSRC), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"asmevo-opt: {ej}{where}"), err
    for w in words + ['expected an object {"kernel"', '"edits"']:
        assert w in err, (w, err)
    assert "Recursion" not in err and "set_int_max_str_digits" not in err
    assert not out.exists()


def test_ordinary_nesting_still_reads(tmp_path):
    """The real format (object -> edits -> edit -> asm list) is far below the limit."""
    ej = tmp_path / "edit.json"
    ej.write_text('{"edits": [{"from": 3, "to": 3, "asm": ["s_nop 0"]}]}')
    out = tmp_path / "o.s"
    assert main([f"--passes=window-edit<file={ej}>", str(KSRC), "-o", str(out)]) == 0
    assert "s_nop 0" in out.read_text()
