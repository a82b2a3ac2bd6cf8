"""``asmevo analyze`` of assembly text analyses the bytes llvm-mc makes of it (issue 14).

An instruction written as data words (``.long`` for an MFMA) is invisible to a parse of
the text; the report must see it (as ``asmevo verify`` does, by assembling first) and
still point at source lines.
"""

import json

from asmevo.cli import main

# v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15] as words: it reads v1 right
# after a VALU wrote it (rule 17: 2 wait states)
MFMA_WORDS = ".long 0xd3cc8000, 0x04020500"

WITH_SYMBOL = f"""\t.text
\t.globl\tk
\t.type\tk,@function
k:
\tv_mov_b32_e32 v1, 0
\t{MFMA_WORDS}
\ts_endpgm
.Lfunc_end0:
\t.size\tk, .Lfunc_end0-k
"""

LISTING = f"""k:
\tv_mov_b32_e32 v1, 0
\t{MFMA_WORDS}
\ts_endpgm
"""


def _run(tmp_path, capsys, text, *flags):
    src = tmp_path / "k.s"
    src.write_text(text)
    rc = main(["analyze", str(src), *flags])
    return rc, capsys.readouterr(), str(src)


def test_mfma_as_data_words_is_seen(tmp_path, capsys):
    for text, line in ((WITH_SYMBOL, 6), (LISTING, 3)):
        rc, out, src = _run(tmp_path, capsys, text, "--hazards")
        assert rc == 1, out.out
        assert "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]: rule 17 v1 needs 2" \
            in out.out
        # the report points at the .long line and says what it is
        assert f"({src}:{line}, an instruction written as data words)" in out.out
        assert "analysing it as parsed text" not in out.err


def test_json_carries_lines(tmp_path, capsys):
    rc, out, _src = _run(tmp_path, capsys, WITH_SYMBOL, "--hazards", "--json")
    assert rc == 1
    rep = json.loads(out.out)["kernels"][0]
    [v] = rep["hazards"]["violations"]
    assert (v["rule"], v["line"], v.get("data_word")) == (17, 6, True)


def test_padding_in_text_clears_it(tmp_path, capsys):
    text = WITH_SYMBOL.replace(MFMA_WORDS, "s_nop 1\n\t" + MFMA_WORDS)
    rc, out, _src = _run(tmp_path, capsys, text, "--hazards")
    assert rc == 0, out.out


def test_source_lines_for_instruction_lines(tmp_path, capsys):
    text = WITH_SYMBOL.replace(MFMA_WORDS, "v_readfirstlane_b32 s4, v1")
    rc, out, src = _run(tmp_path, capsys, text, "--hazards")
    assert rc == 1
    assert f"VIOLATION 0:1 ({src}:6)  v_readfirstlane_b32 s4, v1: rule 15" in out.out
