"""Soundness (adversary report 2, WA-1 and lesser bugs 2-3): every route that verifies or runs
assembly text judges the bytes llvm-mc and ld.lld make of it, never the parsed IR.

* ``asmevo-opt --verify -o -`` verified the in-memory modules: a ``.rept`` the IR kept as one
  copy let dce delete an instruction the second copy needs, and the result was "accepted";
* a ``.long`` word whose comment names another instruction (the IR reads the comment, the
  hardware the word) let nop-trim delete a real instruction, accepted the same way;
* ``asmevo run X.s`` ran the parse, not what the assembler makes of the text;
* ``asmevo-opt -S --verify -o X.co`` verified a temporary ``.co`` file holding text
  (a spurious build-failed).
"""

from __future__ import annotations

import pathlib

import numpy as np

from asmevo.cli import main as cli_main

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"
H = str(EX / "vadd_f32.json")
ADD = "\tv_add_f32_e32 v2, v6, v7\n"


def _vadd(tmp_path, name: str, new: str) -> str:
    text = (EX / "vadd_f32.s").read_text()
    assert ADD in text
    p = tmp_path / name
    p.write_text(text.replace(ADD, new, 1))
    return str(p)


def test_opt_to_stdout_does_not_accept_what_rept_makes(tmp_path, capsys):
    # c = a + 2b as assembled; the IR saw one copy of the loop body (c = a + b)
    src = _vadd(tmp_path, "rept.s", "\t.rept 2\n" + ADD + "\tv_mov_b32_e32 v6, v2\n\t.endr\n")
    rc = cli_main(["opt", "--passes=kernel(dce)", "--verify=all", "--harness", H, src, "-o", "-"])
    out = capsys.readouterr()
    assert rc != 0 and "accepted" not in out.err, out.err
    assert out.out == ""
    assert "rept.s:" in out.err and ".rept" in out.err   # refused at its line (exit 2)
    assert rc == 2


def test_opt_to_stdout_verifies_the_bytes_not_the_comment(tmp_path, capsys):
    # 0x7e040280 is v_mov_b32_e32 v2, 0; the comment says s_nop 0, which nop-trim deletes
    src = _vadd(tmp_path, "lie.s", ADD + "\t.long 0x7e040280 ; s_nop 0\n")
    rc = cli_main(["opt", "--passes=kernel(nop-trim)", "--verify=all", "--harness", H, src,
                   "-o", "-"])
    out = capsys.readouterr()
    assert rc == 1 and "rejected" in out.err, out.err
    assert out.out == ""


def test_opt_to_stdout_writes_what_was_verified(tmp_path, capsys):
    src = str(EX / "vadd_f32.s")
    rc = cli_main(["opt", "--passes=kernel(dce)", "--verify=static", src, "-o", "-"])
    out = capsys.readouterr()
    assert rc == 0 and "accepted" in out.err, out.err
    assert "v_add_f32_e32 v2, v6, v7" in out.out and ".amdhsa_kernel vadd_f32" in out.out


def test_opt_text_output_with_a_code_object_name_is_verified_as_text(tmp_path, capsys):
    out_path = tmp_path / "x.co"
    rc = cli_main(["opt", "--passes=kernel(dce)", "-S", "--verify=all", "--harness", H,
                   str(EX / "vadd_f32.s"), "-o", str(out_path)])
    err = capsys.readouterr().err
    assert rc == 0 and "accepted" in err and "build-failed" not in err, err
    assert out_path.read_text().lstrip().startswith(".text") or "vadd_f32:" in out_path.read_text()


def test_run_text_runs_the_assembled_bytes(tmp_path, capsys):
    src = _vadd(tmp_path, "rept.s", "\t.rept 2\n" + ADD + "\tv_mov_b32_e32 v6, v2\n\t.endr\n")
    rc = cli_main(["run", src, "--harness", H, "--check", "--out", str(tmp_path / "r1")])
    err = capsys.readouterr()
    assert rc == 1 and "MISMATCH" in err.out + err.err      # c = a + 2b is not the reference
    co = tmp_path / "rept.co"
    assert cli_main(["asm", src, "-o", str(co)]) == 0
    assert cli_main(["run", str(co), "--harness", H, "--out", str(tmp_path / "r2")]) == 0
    a, b = np.load(tmp_path / "r1" / "c.npy"), np.load(tmp_path / "r2" / "c.npy")
    assert np.array_equal(a.view(np.uint32), b.view(np.uint32))


def test_run_text_with_a_long_word(tmp_path, capsys):
    # v_mov_b32_e32 v2, 1.0 after the add, as a word: the kernel writes 1.0 everywhere
    src = _vadd(tmp_path, "long.s", ADD + "\t.long 0x7e0402f2\n")
    rc = cli_main(["run", src, "--harness", H, "--check", "--out", str(tmp_path / "r")])
    out = capsys.readouterr()
    assert rc == 1, out
    assert np.all(np.load(tmp_path / "r" / "c.npy") == np.float32(1.0))


def test_analyze_text_the_parser_refuses_reads_the_bytes(tmp_path, capsys):
    src = _vadd(tmp_path, "rept.s", "\t.rept 2\n" + ADD + "\tv_mov_b32_e32 v6, v2\n\t.endr\n")
    rc = cli_main(["analyze", src])
    out = capsys.readouterr().out
    assert rc == 0 and "vadd_f32: 23 instructions" in out, out    # both copies of the body
