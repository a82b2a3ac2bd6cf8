"""checks.apply_checked(atomic=True): edits that only make sense together (a register
renaming, a pair merge, a spill promotion) are applied all or not at all."""

from __future__ import annotations

import textwrap

from asmevo.frontend.asm_parser import parse_asm
from asmevo.passes.checks import apply_checked, static_violations
from asmevo.passes.manager import AnalysisManager

SRC = textwrap.dedent("""
    k:
    v_mov_b32_e32 v1, 1
    global_store_dword v[2:3], v1, off
    s_endpgm
    .Lunreachable:
    v_mov_b32_e32 v1, 2
    s_endpgm
""")


def _setup():
    m = parse_asm(SRC, "t.s")
    k = m.kernels[0]
    return m, k, AnalysisManager(m)


def _rename_v1(k):
    from asmevo.ir import Reg
    plan = []
    for i in k.instructions():
        ops = [Reg("v", 9, 1) if o == Reg("v", 1, 1) else o for o in i.operands]
        if ops != i.operands:
            plan.append((i, [i.evolve(operands=ops)]))
    return plan


def test_atomic_plan_touching_a_frozen_block_applies_nothing():
    m, k, am = _setup()
    before = [i.text() for i in k.instructions()]
    plan = _rename_v1(k)
    assert len(plan) == 3          # two in the entry block, one in the unreachable block
    kept = apply_checked(k, am, plan, static_violations(k, am), atomic=True)
    assert kept == []
    assert [i.text() for i in k.instructions()] == before


def test_non_atomic_plan_drops_only_the_frozen_edit():
    m, k, am = _setup()
    kept = apply_checked(k, am, _rename_v1(k), static_violations(k, am))
    assert len(kept) == 2
    assert [i.text() for i in k.blocks[0].instructions][:2] == [
        "v_mov_b32_e32 v9, 1", "global_store_dword v[2:3], v9, off"]
    assert k.blocks[1].instructions[0].text() == "v_mov_b32_e32 v1, 2"
