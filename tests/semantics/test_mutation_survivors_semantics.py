"""Tests for mutants of asmevo/semantics that survived the mutation probe
(scripts/mutation_probe.py, seed 14; docs/verify.md, "Mutation pass").  Each names the
mutant it kills.  Oracles: the ISA guide's pseudocode (hand-computed bits) and another
instruction with the same meaning proved equal by z3."""

from __future__ import annotations

import numpy as np
import pytest

from asmevo.frontend.asm_parser import parse_instruction as P
from asmevo.semantics import lookup
from asmevo.semantics.intbackend import INT, U32, U64
from asmevo.semantics.npbackend import NP
from asmevo.verify.equiv import check_windows


@pytest.mark.parametrize("w", [32, 64])
def test_bitset_uses_the_low_bits_of_the_index(w):
    # salu S_BITSET0/1_B32: D.u[S0.u[4:0]] = 0/1 (B64: S0.u[5:0]) (mutant: index & 30)
    full = (1 << w) - 1
    T = U32 if w == 32 else U64
    idx = list(range(w)) + [w, w + 1, w + 5, 0xFFFFFFFF]
    for n in idx:
        bit = 1 << (n & (w - 1))
        assert lookup(f"s_bitset0_b{w}").fn(INT, U32(n), T(full)) == full & ~bit, n
        assert lookup(f"s_bitset1_b{w}").fn(INT, U32(n), T(0)) == bit, n
    dt = np.uint32 if w == 32 else np.uint64
    ns = np.array(idx, np.uint32)
    got = lookup(f"s_bitset0_b{w}").fn(NP, ns, np.full(len(idx), full, dt))
    want = [full & ~(1 << (n & (w - 1))) for n in idx]
    assert np.asarray(got).astype(np.uint64).tolist() == want


@pytest.mark.parametrize("mix,plain", [
    ("v_fma_mix_f32 v4, v1, v2, v3", "v_fma_f32 v4, v1, v2, v3"),
    ("v_fma_mix_f32 v4, v1, v2, v3 op_sel_hi:[0,0,0]", "v_fma_f32 v4, v1, v2, v3"),
    ("v_fma_mix_f32 v4, -v1, v2, |v3|", "v_fma_f32 v4, -v1, v2, |v3|"),
])
def test_fma_mix_without_op_sel_hi_reads_f32_sources(mix, plain):
    # z3backend `_mix`: op_sel_hi absent means (0, 0, 0): every source is f32 (mutant:
    # (1, 0, 0) / (0, 1, 0) / (0, 0, 1): that source read as an f16 half)
    r = check_windows([P(mix)], [P(plain)], live_out=[("v", 4)])
    assert r.status == "equivalent", r.text()
    # control: with op_sel_hi set on a source the two differ
    r = check_windows([P(mix.split(" op_sel_hi")[0] + " op_sel_hi:[1,0,0]")], [P(plain)],
                      live_out=[("v", 4)])
    assert r.status == "not equivalent", r.text()


@pytest.mark.parametrize("a,b,status", [
    ("s_add_u32 s0, s1, 0x12345", "s_add_u32 s0, s1, 0x2345", "not equivalent"),
    ("s_mov_b32 s0, 0x12345678", "s_mov_b32 s0, 0x5678", "not equivalent"),
    ("s_movk_i32 s0, 0x8000", "s_mov_b32 s0, 0xffff8000", "equivalent"),
    ("s_addk_i32 s0, 0x8000", "s_add_i32 s0, s0, 0xffff8000", "equivalent"),
    ("s_cmpk_lt_u32 s0, 0x8000", "s_cmp_lt_u32 s0, 0x8000", "equivalent"),
])
def test_only_sopk_immediates_are_16_bit(a, b, status):
    # z3backend SALU sources: the 16-bit (sign-extended unless _u32) immediate is only for
    # s_movk/s_cmpk/s_addk/s_mulk/s_cmovk (mutant: `and` -> `or`: every SALU literal cut to
    # 16 bits, and a SOPK register operand read as an immediate)
    assert check_windows([P(a)], [P(b)]).status == status


def test_control_flow_and_unknown_words_end_a_symbolic_window():
    # z3backend.symexec: branches, barriers and s_endpgm are refused by name; a word
    # without semantics is Unsupported too (mutant: `is not None` -> `is`)
    from asmevo.ir.instruction import Instruction
    from asmevo.ir.operands import Imm
    from asmevo.semantics.registry import Unsupported
    from asmevo.semantics.z3backend import symexec
    for text in ("s_endpgm", "s_barrier", "s_branch 8", "s_cbranch_scc1 8"):
        with pytest.raises(Unsupported, match="control flow ends a straight-line window"):
            symexec([P("v_mov_b32 v1, v2"), P(text)])
    with pytest.raises(Unsupported, match="no semantics"):
        symexec([Instruction(".long", [Imm(0xffffffff)])])
    assert symexec([P("s_nop 0")]) is not None
