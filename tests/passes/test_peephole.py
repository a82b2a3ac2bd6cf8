"""peephole rules: each rewrite the rule itself produces is proved equivalent with z3
(asmevo.verify.check_windows); negative side conditions leave code alone."""

from __future__ import annotations

import pytest

from asmevo.frontend.asm_parser import parse_instruction as P
from asmevo.passes.peephole import RULES
from passes_helpers import norm, opt
from z3_limits import deterministic_z3

verify = pytest.importorskip("asmevo.verify")

RULE = {r.name: r for r in RULES}

# (rule, window, units compared after the window; the rest are dead by the side condition)
PROOFS = [
    ("mul-pow2-vgpr", ["v_mul_lo_u32 v1, v2, 8"], [("v", 1)]),
    ("mul-pow2-vgpr", ["v_mul_lo_u32 v1, 0x80000000, s2"], [("v", 1)]),
    ("mul-pow2-sgpr", ["s_mul_i32 s1, s2, 16"], [("s", 1)]),
    ("shl-add", ["v_lshlrev_b32_e32 v3, 2, v1", "v_add_u32_e32 v4, v3, v2"], [("v", 4)]),
    ("shl-add", ["v_lshlrev_b32_e32 v3, 5, v1", "v_add_u32_e32 v3, s0, v3"], [("v", 3)]),
    ("add-shl", ["v_add_u32_e32 v3, v1, v2", "v_lshlrev_b32_e32 v3, 2, v3"], [("v", 3)]),
    ("exec-save-restore", ["s_or_saveexec_b64 s[8:9], -1", "s_mov_b64 exec, s[8:9]"],
     [("exec_lo",), ("exec_hi",)]),
    ("exec-save-restore", ["s_mov_b64 s[8:9], exec", "s_mov_b64 exec, s[8:9]"],
     [("exec_lo",), ("exec_hi",)]),
]


@pytest.mark.parametrize("rule,window,live", PROOFS)
def test_rule_rewrite_is_proved_equivalent(rule, window, live):
    a = [P(x) for x in window]
    b = RULE[rule].fn(a, lambda op: True)
    assert b is not None, "rule did not match"
    # a deterministic z3 resource limit, not the 10 s wall-clock default: the verdict
    # must not depend on how loaded the machine is
    with deterministic_z3() as no_timeout:
        r = verify.check_windows(a, b, live_out=live, timeout_ms=no_timeout)
    assert r.equivalent, r.text()


def test_checker_rejects_a_wrong_rewrite():
    # negative control: the prover must be able to say no
    a = [P("v_add_u32_e32 v3, v1, v2"), P("v_lshlrev_b32_e32 v3, 2, v3")]
    r = verify.check_windows(a, [P("v_add_lshl_u32 v3, v1, v2, 3")], live_out=[("v", 3)])
    assert r.status == "not equivalent"


def test_peephole_in_a_kernel_and_side_conditions():
    out, inst = opt("""
        k:
        v_mul_lo_u32 v1, v2, 8
        v_lshlrev_b32_e32 v3, 2, v1
        v_add_u32_e32 v4, v3, v0
        s_mul_i32 s1, s2, 4
        s_cmp_eq_u32 s3, 0
        s_mul_i32 s5, s2, 4
        s_cselect_b32 s6, s5, s1
        v_mov_b32_e32 v5, s6
        global_store_dword v[6:7], v4, off
        global_store_dword v[6:7], v5, off offset:4
        s_endpgm
    """, "peephole")
    assert out == norm("""
        v_lshlrev_b32_e64 v1, 3, v2
        v_lshl_add_u32 v4, v1, 2, v0
        s_lshl_b32 s1, s2, 2
        s_cmp_eq_u32 s3, 0
        s_mul_i32 s5, s2, 4
        s_cselect_b32 s6, s5, s1
        v_mov_b32_e32 v5, s6
        global_store_dword v[6:7], v4, off
        global_store_dword v[6:7], v5, off offset:4
        s_endpgm
    """)  # the second s_mul_i32 stays: SCC is live (s_cselect reads it)
    assert inst.stats["peephole"]["rules.shl-add"] == 1


def test_live_temporary_blocks_fusion():
    src = """
        k:
        v_lshlrev_b32_e32 v3, 2, v1
        v_add_u32_e32 v4, v3, v0
        global_store_dword v[6:7], v4, off
        global_store_dword v[6:7], v3, off offset:4
        s_endpgm
    """
    out, _ = opt(src, "peephole")
    assert out == norm(src.replace("k:\n", ""))


def test_unknown_rule_name_is_a_pipeline_error():
    from asmevo.passes import PipelineError, parse_pipeline
    with pytest.raises(PipelineError, match="unknown peephole rule"):
        parse_pipeline("peephole<rules=shl-add+nope>")
