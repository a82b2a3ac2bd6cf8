"""Tests for mutants of asmevo/verify that survived the mutation probe
(scripts/mutation_probe.py, seed 14; docs/verify.md, "Mutation pass").  Each names the
mutant it kills."""

from __future__ import annotations

import pytest

from asmevo.frontend.asm_parser import parse_instruction
from asmevo.verify.equiv import check_windows
from asmevo.verify.mutate import _peephole_candidates

#: every rewrite rule of the mutation generator's "peephole" family (the preserving edits
#: behind docs/verify.md's accepted-rate figure), with what it must produce
PEEPHOLES = [
    ("v_lshlrev_b32_e32 v1, 1, v2", ["v_add_u32_e32 v1, v2, v2", "v_mul_lo_u32 v1, v2, 2"]),
    ("v_lshlrev_b32_e32 v1, 0, v2", ["v_mul_lo_u32 v1, v2, 1"]),
    ("v_lshlrev_b32_e32 v1, 3, v2", ["v_mul_lo_u32 v1, v2, 8"]),
    ("v_lshlrev_b32_e32 v1, 6, v2", ["v_mul_lo_u32 v1, v2, 64"]),
    ("v_lshlrev_b32_e32 v1, 7, v2", []),            # 128 would need a literal
    ("v_sub_u32_e32 v1, v2, v3", ["v_subrev_u32_e32 v1, v3, v2"]),
    ("v_sub_u32_e32 v1, s2, v3", []),
    ("v_subrev_u32_e32 v1, v2, v3", ["v_sub_u32_e32 v1, v3, v2"]),
    ("v_mov_b32_e32 v1, v2", ["v_or_b32_e32 v1, v2, v2"]),
    ("v_mov_b32_e32 v1, 0", ["v_bfrev_b32_e32 v1, 0"]),
    ("v_mov_b32_e32 v1, 1", []),
    ("s_mov_b32 s1, s2", ["s_mov_b32 s1, s2"]),
    ("v_add_u32_e32 v1, v2, v3", ["v_add_u32_e64 v1, v3, v2"]),
    ("v_xor_b32_e32 v1, s2, v3", ["v_xor_b32_e64 v1, v3, s2"]),
    ("v_or_b32_e32 v1, v2, v3", ["v_or_b32_e64 v1, v3, v2"]),
    ("v_and_b32_e32 v1, v2, v3", ["v_and_b32_e64 v1, v3, v2"]),
    ("v_lshl_add_u64 v[0:1], v[2:3], 0, v[4:5]", ["v_lshl_add_u64 v[0:1], v[4:5], 0, v[2:3]"]),
    ("v_lshl_add_u64 v[0:1], v[2:3], 1, v[4:5]", []),
]


@pytest.mark.parametrize("text,expected", PEEPHOLES, ids=[p[0] for p in PEEPHOLES])
def test_every_peephole_rule_and_its_proof(text, expected):
    # mutate._peephole_candidates (mutant: the v_lshlrev -> v_mul_lo_u32 rule dropped,
    # `Expr -> pass`, which only the slow full mutation run's preserving count noticed)
    inst = parse_instruction(text)
    got = _peephole_candidates(inst)
    assert [i.text() for i in got] == expected
    for new in got:     # equivalent by construction: z3 proves each
        assert check_windows([inst], [new]).equivalent, (text, new.text())
