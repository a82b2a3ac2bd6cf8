"""Soundness: an assembly candidate is verified as the bytes llvm-mc emits, not as parsed text.

Tester repros r1/r2 (vadd_f32): an ``.if 0`` block hid the real instruction and a ``.long``
word carried another; both were accepted because the layers reasoned about the parsed text.
"""

import pytest

from asmevo.frontend.disasm import disassemble
from asmevo.ir.printer import print_module
from asmevo.verify import verify
from asmevo.verify.diff import load_harness


@pytest.fixture
def vadd_text(corpus_dir):
    return print_module(disassemble(str(corpus_dir / "vadd_f32.co")))


def _edit(text: str, fn) -> str:
    lines = text.splitlines()
    i = next(k for k, l in enumerate(lines) if l.strip().startswith("v_add_f32"))
    return "\n".join(fn(lines, i)) + "\n"


def test_if0_block_and_long_word_are_what_runs(corpus_dir, vadd_text, tmp_path):
    # v_sub_f32_e32 v2, v6, v7 hidden as a word; the add is in a block the assembler skips
    cand = tmp_path / "r1.s"
    cand.write_text(_edit(vadd_text, lambda ls, i: ls[:i] + ["\t.if 0", ls[i], "\t.endif",
                                                            "\t.long 0x04040f06"] + ls[i + 1:]))
    v = verify(str(corpus_dir / "vadd_f32.co"), str(cand), level="z3")
    assert v.status.value == "rejected-counterexample", v.text()
    assert "v2" in v.message


def test_long_word_instruction_is_seen(corpus_dir, vadd_text, tmp_path):
    # .long 0x7e040280 is v_mov_b32 v2, 0 after the add
    cand = tmp_path / "r2.s"
    cand.write_text(_edit(vadd_text, lambda ls, i: ls[:i + 1] + ["\t.long 0x7e040280"] + ls[i + 1:]))
    h = load_harness(str(corpus_dir / "manifest.json"), "vadd_f32")
    v = verify(str(corpus_dir / "vadd_f32.co"), str(cand), harness=h, level="all", trials=2)
    assert v.outcome == "rejected", v.text()
    assert not verify(str(corpus_dir / "vadd_f32.co"), str(cand), level="z3").accepted


def test_unmodified_text_still_accepted_and_bad_text_is_build_failed(corpus_dir, vadd_text,
                                                                    tmp_path):
    same = tmp_path / "same.s"
    same.write_text(vadd_text)
    v = verify(str(corpus_dir / "vadd_f32.co"), str(same), level="z3")
    assert v.accepted, v.text()
    bad = tmp_path / "bad.s"
    bad.write_text(_edit(vadd_text, lambda ls, i: ls[:i] + ["\tv_add_f32_e32 v2, v6, s[0:1]"]
                         + ls[i + 1:]))
    v = verify(str(corpus_dir / "vadd_f32.co"), str(bad), level="z3")
    assert v.status.value == "build-failed", v.text()
