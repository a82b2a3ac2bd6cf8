"""Pass effects (asmevo.analysis._isa.effects, re-exported by asmevo.passes.effects).

effects() is built on facts() and the ISA table's operand roles: the property test checks
it never claims less than facts() on every table example (a may-analysis over-approximates
reads and may-writes, and never counts a write as full that facts() calls partial)."""

import pytest

from asmevo import isa
from asmevo.analysis._isa import effects, facts
from asmevo.frontend.asm_parser import parse_instruction
from asmevo.passes import effects as pass_effects

EXEC = {("exec_lo",), ("exec_hi",)}
VCC = {("vcc_lo",), ("vcc_hi",)}
SCC = {("scc",)}


def E(text):
    return effects(parse_instruction(text))


def test_passes_module_reexports_the_analysis_classification():
    i = parse_instruction("v_add_f32_e32 v0, v1, v2")
    assert pass_effects.effects is effects and pass_effects.effects(i) is effects(i)
    assert pass_effects.is_copy(parse_instruction("s_mov_b32 s0, s1")) is not None
    assert pass_effects.writes_exec(parse_instruction("s_and_saveexec_b64 s[0:1], vcc"))


def test_every_table_example_is_at_least_as_conservative_as_facts():
    checked = 0
    for r in isa.records():
        inst = parse_instruction(r.example)
        e, f = effects(inst), facts(inst)
        assert e.known
        f_uses = set(f.uses)
        if inst.opcode.startswith(("v_fmaak", "v_fmamk", "v_madak", "v_madmk")):
            # facts() counts these destinations as read (its tied-operand list); the
            # table, which effects() follows, does not tie them (D = S0 * S1 + K)
            f_uses -= set(f.defs)
        assert f_uses <= e.uses, r.example
        assert set(f.defs) | set(f.partial) <= e.defs_may, r.example
        assert e.defs_must <= e.defs_may, r.example
        assert not (set(f.partial) & e.defs_must), r.example
        if f.valu or f.ds or f.vmem or f.flat:
            assert e.vector or inst.opcode.startswith(("v_readlane", "v_readfirstlane"))
        checked += 1
    assert checked > 1500


@pytest.mark.parametrize("text,uses,must,may_only,partial", [
    # SALU arithmetic writes SCC in full; a destination that is also a source is partial
    ("s_add_u32 s0, s1, 1", {("s", 1)}, {("s", 0), ("scc",)}, set(), False),
    ("s_add_u32 s0, s0, 1", {("s", 0)}, {("scc",)}, {("s", 0)}, True),
    ("s_cselect_b32 s0, s1, s2", {("s", 1), ("s", 2), ("scc",)}, {("s", 0)}, set(), False),
    ("s_and_saveexec_b64 s[0:1], vcc", EXEC | VCC, {("s", 0), ("s", 1)} | EXEC | SCC, set(),
     False),
    ("v_cmpx_gt_u32_e32 vcc, 4, v0", EXEC | {("v", 0)}, EXEC | VCC, set(), False),
    # tied accumulator and DPP keep part of the destination
    ("v_fmac_f32_e32 v0, v1, v2", EXEC | {("v", 0), ("v", 1), ("v", 2)}, set(), {("v", 0)}, True),
    ("v_mov_b32_dpp v0, v1 row_shr:1 row_mask:0x3 bank_mask:0xf",
     EXEC | {("v", 0), ("v", 1)}, set(), {("v", 0)}, True),
    # DS always reads M0 and EXEC (conservative); scratch reads FLAT_SCRATCH
    ("ds_read_b32 v0, v1", EXEC | {("v", 1), ("m0",)}, {("v", 0)}, set(), False),
    ("scratch_load_dword v0, off, s0 offset:4",
     EXEC | {("s", 0), ("flat_scratch_lo",), ("flat_scratch_hi",)}, {("v", 0)}, set(), False),
    # d16 loads are partial, d16 stores write nothing
    ("global_load_short_d16_hi v0, v[2:3], off", EXEC | {("v", 0), ("v", 2), ("v", 3)}, set(),
     {("v", 0)}, True),
    ("global_store_short_d16_hi v[2:3], v4, off", EXEC | {("v", 2), ("v", 3), ("v", 4)}, set(),
     set(), False),
])
def test_effects_examples(text, uses, must, may_only, partial):
    e = E(text)
    assert e.uses == frozenset(uses)
    assert e.defs_must == frozenset(must)
    assert e.defs_may == frozenset(must | may_only)
    assert e.partial == partial


def test_kinds_side_effects_and_operand_prefix():
    assert E("v_mfma_f32_16x16x16_f16 a[0:3], v[0:1], v[2:3], a[0:3]").kind == "mfma"
    assert E("s_waitcnt vmcnt(0)").kind == "waitcnt" and E("s_waitcnt vmcnt(0)").side_effects
    assert E("s_cbranch_scc1 .L").kind == "branch" and ("scc",) in E("s_cbranch_scc1 .L").uses
    assert E("v_add_co_u32_e32 v2, vcc, 1, v2").ndefs == 2
    assert E("v_add_f32_e32 v0, v1, v2").ndefs == 1
    assert E("global_store_dword v[0:1], v2, off").ndefs == 0
    assert not E("v_readfirstlane_b32 s0, v1").vector
    assert E("s_movrels_b32 s0, s4").uses_all and E("v_movrels_b32_e32 v0, v1").uses_all
    assert E("s_set_gpr_idx_on s0, gpr_idx(SRC0)").barrier_kernel
    # the call writes its return address (may), but no written operand is counted as full
    call = E("s_call_b64 s[40:41], 4660")
    assert call.side_effects and {("s", 40), ("s", 41)} <= call.defs_may
    assert not call.defs_must
    # s_setvskip sets a mode (side effect) and reads both operands
    sk = E("s_setvskip s8, s24")
    assert sk.side_effects and {("s", 8), ("s", 24)} <= sk.uses


def test_unknown_mnemonic_is_never_removed():
    from asmevo.ir import Instruction
    from asmevo.ir.operands import Reg
    e = effects(Instruction("v_not_a_real_op", (Reg("v", 0, 1), Reg("v", 1, 1))))
    assert not e.known and e.uses_all and e.side_effects


def test_fmaak_destination_is_not_tied_but_fmac_is():
    """v_fmaak_f32 D = S0*S1 + K writes D without reading it; v_fmac_f32 D = S0*S1 + D
    reads it (LLVM VOP2Instructions.td: only the *mac/fmac forms tie src2 to vdst)."""
    from asmevo.analysis._isa import facts
    from asmevo.frontend.asm_parser import parse_asm
    m = parse_asm("k:\nv_fmaak_f32 v0, v1, v2, 0x41200000\nv_fmac_f32_e32 v3, v1, v2\n"
                  "s_endpgm\n", "t.s")
    fmaak, fmac, _ = m.kernels[0].instructions()
    assert ("v", 0) not in facts(fmaak).uses and ("v", 0) in facts(fmaak).defs
    assert ("v", 3) in facts(fmac).uses


def test_written_operands_by_position_not_identity():
    # the parser shares one operand object per register spelling: v2 as destination and as
    # source is one object, so the written operands are found by position (ndefs was -1)
    for _ in range(3):
        e = E("v_add_co_u32_e32 v2, vcc, 1, v2")
        assert e.ndefs == 2
    assert E("v_add_u32_e32 v3, v3, v3").ndefs == 1
