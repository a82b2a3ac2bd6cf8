"""asmevo.ir.unroll: a self-loop unrolled twice runs the original's instructions in order.

The corpus tier normalises every self-loop of every manifest kernel and runs the result in
the emulator on the harness inputs: outputs must be bit-identical to K0's, with the same
number of executed instructions.  The default tier checks the shape of the result and that
every precondition is refused."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from asmevo.frontend.asm_parser import parse_asm
from asmevo.ir.operands import Label
from asmevo.ir.unroll import INVERSE, self_loops, split_loop, unroll_self_loop

LOOP = """
.text
.globl k
.type k,@function
k:
  s_mov_b32 s4, 8
.LBB0_1:
  global_load_dword v1, v[2:3], off
  s_add_i32 s4, s4, -1
  {extra_p}
  s_cmp_eq_u32 s4, 0
  s_waitcnt vmcnt(0)
  v_add_f32_e32 v4, v4, v1
  {extra_c}
  {branch} .LBB0_1
  global_store_dword v[2:3], v4, off
  s_endpgm
"""


def _kernel(extra_p="", extra_c="", branch="s_cbranch_scc0", tail=""):
    text = LOOP.format(extra_p=extra_p, extra_c=extra_c, branch=branch) + tail
    return parse_asm(text, "t.s").kernels[0]


def test_shape_of_the_normalisation():
    k = _kernel()
    assert self_loops(k) == [1]
    assert split_loop(k, 1) == (3, 2)
    n = unroll_self_loop(k, 1)
    assert n is not None and n is not k
    assert [len(b.instructions) for b in n.blocks] == [1, 4, 8, 2, 3]
    h, m, x, e = n.blocks[1], n.blocks[2], n.blocks[3], n.blocks[4]
    body = k.blocks[1].instructions[:-1]
    # H: P ; inverted branch to E (keeps B's label)
    assert h.label == ".LBB0_1"
    assert h.instructions[:3] == body[:3]
    assert h.instructions[3].opcode == "s_cbranch_scc1"
    assert h.instructions[3].operands == [Label(e.label)]
    # M: C ; P ; C ; the original branch, back to H
    assert m.label is None
    assert m.instructions[:-1] == body[3:] + body[:3] + body[3:]
    assert m.instructions[-1] == k.blocks[1].instructions[-1]
    # X got a label; E = C ; s_branch X, after the last block
    assert x.label and x.instructions == k.blocks[2].instructions
    assert e.instructions[:-1] == body[3:]
    assert e.instructions[-1].opcode == "s_branch" and e.instructions[-1].operands == [Label(x.label)]
    # every instruction object appears once (analyses locate instructions by identity)
    ids = [id(i) for b in n.blocks for i in b.instructions]
    assert len(ids) == len(set(ids))
    # the input kernel is unchanged
    assert [len(b.instructions) for b in k.blocks] == [1, 6, 2]


@pytest.mark.parametrize("op", sorted(INVERSE))
def test_every_branch_kind_is_inverted(op):
    if "vcc" in op:
        k = _kernel(extra_p="v_cmp_eq_u32_e32 vcc, 0, v1", branch=op)
    else:
        k = _kernel(branch=op)
    n = unroll_self_loop(k, 1)
    assert n is not None
    assert n.blocks[1].instructions[-1].opcode == INVERSE[op]
    assert INVERSE[INVERSE[op]] == op


@pytest.mark.parametrize("extra_c,why", [
    ("s_add_u32 s6, s6, 4", "the last instruction writes SCC: C is empty"),
    ("s_and_b64 s[6:7], s[6:7], 1", "s_and writes SCC (ISA table Defs)"),
    ("s_mov_b64 exec, s[6:7]", "writes EXEC"),
    ("s_barrier", "a barrier in C"),
    ("s_sendmsg sendmsg(MSG_INTERRUPT)", "a message in C"),
    ("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 0", "a MODE write in C"),
    ("s_sethalt 0", "s_sethalt in C"),
    ("s_getpc_b64 s[6:7]", "reads the program counter"),
    ("s_movreld_b32 s0, s6", "writes a register chosen by M0 (VCC among them)"),
    (".long 0xffffffff", "an undecodable word"),
])
def test_refused_when_C_would_be_empty_or_holds_a_denied_instruction(extra_c, why):
    k = _kernel(extra_c=extra_c)
    assert unroll_self_loop(k, 1) is None, why


def test_instructions_that_do_not_write_scc_stay_in_C():
    # s_mov/s_cselect do not write SCC (ISA table): they join C
    k = _kernel(extra_c="s_mov_b32 s6, s5\n  s_cselect_b32 s7, s6, s5")
    assert split_loop(k, 1) == (3, 4)


def test_vcc_branch_C_must_not_write_vcc():
    k = _kernel(extra_p="v_cmp_eq_u32_e32 vcc, 0, v1",
                extra_c="v_add_co_u32_e32 v5, vcc, v5, v6", branch="s_cbranch_vccz")
    assert unroll_self_loop(k, 1) is None
    k = _kernel(extra_p="v_cmp_eq_u32_e32 vcc, 0, v1",
                extra_c="v_add_u32_e32 v5, v5, v6", branch="s_cbranch_vccz")
    assert split_loop(k, 1) == (3, 4)   # s_cmp writes SCC, not VCC: it joins C


def test_refused_preconditions():
    # a branch to another block is not a self-loop
    text = LOOP.format(extra_p="", extra_c="", branch="s_cbranch_scc0").replace(
        "s_cbranch_scc0 .LBB0_1", "s_cbranch_scc0 .LBB0_2") + ".LBB0_2:\n  s_endpgm\n"
    assert self_loops(parse_asm(text, "t.s").kernels[0]) == []
    # execz/execnz loops (divergent) are not handled
    assert unroll_self_loop(_kernel(branch="s_cbranch_execnz"), 1) is None
    # the entry block (block 0 loops on itself)
    text = LOOP.replace("  s_mov_b32 s4, 8\n.LBB0_1:\n", "").format(
        extra_p="", extra_c="", branch="s_cbranch_scc0").replace(".LBB0_1", "k")
    k = parse_asm(text, "t.s").kernels[0]
    assert k.blocks[0].label == "k" and split_loop(k, 0) is None
    # indirect control flow anywhere in the kernel
    k = _kernel(tail="  s_setpc_b64 s[8:9]\n")
    assert unroll_self_loop(k, 1) is None
    # the last block falls through (E would be entered by it)
    k = parse_asm(LOOP.format(extra_p="", extra_c="", branch="s_cbranch_scc0").replace(
        "  s_endpgm\n", ""), "t.s").kernels[0]
    assert unroll_self_loop(k, 1) is None
    # a label or symbolic expression in the body (PC-relative relocation)
    k = _kernel(extra_p="s_add_u32 s8, s8, sym@rel32@lo+4")
    assert unroll_self_loop(k, 1) is None
    # s_getpc_b64 or a relocation anywhere in the kernel: code after the loop moves
    k = _kernel(tail="  s_getpc_b64 s[8:9]\n  s_endpgm\n")
    assert unroll_self_loop(k, 1) is None
    k = parse_asm(LOOP.format(extra_p="", extra_c="", branch="s_cbranch_scc0").replace(
        "k:\n", "k:\n  s_add_u32 s8, s8, sym@rel32@lo+4\n"), "t.s").kernels[0]
    assert unroll_self_loop(k, 1) is None
    # out of range
    assert unroll_self_loop(_kernel(), 5) is None and unroll_self_loop(_kernel(), 2) is None


def test_P_empty_is_refused():
    text = """
.text
.globl k
.type k,@function
k:
  s_mov_b32 s4, 8
.LBB0_1:
  s_cmp_eq_u32 s4, 0
  v_add_f32_e32 v4, v4, v1
  s_cbranch_scc0 .LBB0_1
  s_endpgm
"""
    k = parse_asm(text, "t.s").kernels[0]
    assert split_loop(k, 1) == (1, 1)
    text = text.replace("  s_cmp_eq_u32 s4, 0\n", "")
    assert unroll_self_loop(parse_asm(text, "t.s").kernels[0], 1) is None


def test_fresh_labels_avoid_taken_ones():
    k = _kernel()
    n = unroll_self_loop(k, 1, taken_labels={".Lunroll_k_1_exit"})
    assert n.blocks[-1].label == ".Lunroll_k_1_exit_2"


# -- corpus: bit-identical in the emulator ---------------------------------------------------

def _entries(corpus_dir):
    out = []
    for mf in ("manifest.json", "triton/manifest.json"):
        p = corpus_dir / mf
        if p.exists():
            out += [(mf, e) for e in json.loads(p.read_text())]
    return out


@pytest.mark.corpus
def test_every_corpus_self_loop_normalised_runs_bit_identical(corpus_dir):
    from asmevo.emu import harness as H
    from asmevo.emu import run_kernel
    from asmevo.frontend.loader import load
    done = []
    for mf, e in _entries(corpus_dir):
        base = (corpus_dir / mf).parent
        path = base / (e.get("code_object") or e.get("hsaco") or "")
        if not path.is_file():
            continue
        m = load(str(path))
        k = m.kernel(e["kernel"])
        loops = self_loops(k)
        if not loops:
            continue
        h = H.load_harness(str(corpus_dir / mf), e["name"])
        for seed in (0, 1):
            inputs = H.make_inputs(h, seed)
            ref = run_kernel(m, h["kernel"], H.make_launch(h, inputs))
            for bi in loops:
                nk = unroll_self_loop(k, bi)
                m2 = copy.copy(m)
                m2.items = [nk if it is k else it for it in m.items]
                got = run_kernel(m2, h["kernel"], H.make_launch(h, inputs))
                for name, arr in ref.outputs.items():
                    assert np.array_equal(arr.view(np.uint8), got.outputs[name].view(np.uint8)), \
                        (e["name"], bi, name, seed)
                # one branch per iteration before and after: the same dynamic count
                assert got.instructions == ref.instructions, (e["name"], bi)
                done.append((e["name"], bi))
    names = {n for n, _ in done}
    # matvec, sgemm_naive, the two MFMA kernels and sgemm_tiled_O1 have uniform self-loops
    assert {"matvec", "sgemm_naive", "mfma_32x32x8_f16"} <= names, done


def test_refused_when_the_result_could_put_a_branch_out_of_range(monkeypatch):
    import asmevo.ir.unroll as U
    assert U.MAX_DWORDS < 32767          # SOPP branches: signed 16-bit dword offsets
    k = _kernel()
    assert unroll_self_loop(k, 1) is not None
    monkeypatch.setattr(U, "MAX_DWORDS", 20)
    assert unroll_self_loop(k, 1) is None
