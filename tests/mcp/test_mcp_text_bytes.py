"""Soundness (adversary report 2, WA-2 and lesser bug 1): the MCP tools judge bytes.

* ``load_kernel`` of assembly text kept the parse, and ``verify`` compared two parses: a
  ``.rept`` body the IR held once let a candidate that dce had shortened be "accepted";
* an ``asm`` proposal with a ``.long`` word was patched into K0 without the word (the
  patcher ignored block directives) and accepted as K0's bytes, while its stored text, its
  listing and its content hash said otherwise.
"""

from __future__ import annotations

import pathlib

from asmevo.mcp.session import Session

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"
ADD = "\tv_add_f32_e32 v2, v6, v7\n"


def test_load_kernel_and_verify_judge_the_assembled_text(tmp_path):
    text = (EX / "vadd_f32.s").read_text()
    rept = tmp_path / "rept.s"
    rept.write_text(text.replace(ADD, "\t.rept 2\n" + ADD + "\tv_mov_b32_e32 v6, v2\n\t.endr\n"))
    # what dce made of the one-copy parse: the move is gone, the .rept stays
    out = tmp_path / "rept_out.s"
    out.write_text(text.replace(ADD, "\t.rept 2\n" + ADD + "\t.endr\n"))
    s = Session(str(tmp_path / "run"))
    try:
        a = s.load_kernel(str(rept), str(EX / "vadd_f32.json"))["kernel_id"]
        b = s.load_kernel(str(out), str(EX / "vadd_f32.json"))["kernel_id"]
        # the listing is of the bytes: both copies of the loop body are there
        rows = [r["text"] for r in s.listing(a)["rows"]]
        assert rows.count("v_add_f32_e32 v2, v6, v7") == 2
        v = s.verify(a, b, "all")
        assert v["status"] != "accepted" and v["status"].startswith("rejected"), v
        assert s.verify(a, a, "z3")["status"] == "accepted"
    finally:
        s.close()


def test_asm_proposal_with_a_long_word_is_its_bytes(tmp_path):
    s = Session(str(tmp_path / "run"))
    try:
        kid = s.load_kernel(str(EX / "vadd_f32.co"), str(EX / "vadd_f32.json"))["kernel_id"]
        asm = s.assembly(kid)
        kern = asm[asm.index("vadd_f32:\n"):asm.index(".Lasmevo_end_vadd_f32:")]
        store = "\tglobal_store_dword v[0:1], v2, off"
        assert store in kern
        # 0x7e040280 is v_mov_b32_e32 v2, 0: the kernel then stores zeros
        r = s.propose_edit(kid, asm=kern.replace(store, "\t.long 0x7e040280\n" + store),
                           hypothesis="a word")
        assert not r["accepted"] and r["outcome"] == "rejected", r
        k0 = s.best(kid)["best"][0]["hash"]
        assert r["hash"] != k0
        listing = s.assembly(r["candidate_id"])
        assert "0x7e040280" in listing
        v = s.verify(kid, r["candidate_id"], "all")
        assert v["status"].startswith("rejected"), v
        assert s.run(r["candidate_id"])["reference_check"]["ok"] is False
    finally:
        s.close()
