"""Waitcnt analysis: one small kernel per counter rule (ISA_NOTES section 8, PITFALLS BR-11/BR-16)."""

import re
import subprocess

import pytest

from asmevo.analysis.waitcnt import WaitcntAnalysis, format_waitcnt, parse_waitcnt
from asmevo.frontend.asm_parser import parse_instruction


def viol(kern, text):
    k, am = kern(text)
    w = am.get(WaitcntAnalysis, k)
    return [(v.inst.opcode, v.unit, v.counter, v.needed) for v in w.violations], w, k


def test_missing_wait_and_in_order_vmcnt(kern):
    v, _, _ = viol(kern, """
        k:
            global_load_dword v1, v[2:3], off
            global_load_dword v4, v[2:3], off offset:4
            s_waitcnt vmcnt(1)
            v_add_f32_e32 v5, v1, v1
            v_add_f32_e32 v6, v4, v4
            s_endpgm
    """)
    # v1 is covered by vmcnt(1) (one younger load); v4 is not and needs vmcnt(0)
    assert v == [("v_add_f32_e32", ("v", 4), "vmcnt", 0)]


def test_smem_out_of_order_br16(kern):
    v, w, k = viol(kern, """
        k:
            s_load_dwordx2 s[8:9], s[0:1], 0x0
            s_load_dwordx2 s[10:11], s[0:1], 0x8
            s_waitcnt lgkmcnt(1)
            s_add_u32 s20, s8, s8
            s_endpgm
    """)
    assert v == [("s_add_u32", ("s", 8), "lgkmcnt", 0)]


def test_lds_in_order_but_mixed_with_smem_is_not(kern):
    ok, _, _ = viol(kern, """
        k:
            ds_read_b32 v1, v0
            ds_read_b32 v2, v0 offset:4
            s_waitcnt lgkmcnt(1)
            v_mov_b32_e32 v3, v1
            s_endpgm
    """)
    assert ok == []
    bad, _, _ = viol(kern, """
        k:
            ds_read_b32 v1, v0
            s_load_dword s4, s[0:1], 0x0
            s_waitcnt lgkmcnt(1)
            v_mov_b32_e32 v3, v1
            s_endpgm
    """)
    assert bad == [("v_mov_b32_e32", ("v", 1), "lgkmcnt", 0)]


def test_flat_counts_on_both(kern):
    bad, _, _ = viol(kern, """
        k:
            flat_load_dword v1, v[2:3]
            s_waitcnt vmcnt(0)
            v_mov_b32_e32 v3, v1
            s_endpgm
    """)
    assert bad == [("v_mov_b32_e32", ("v", 1), "lgkmcnt", 0)]
    ok, _, _ = viol(kern, """
        k:
            flat_load_dword v1, v[2:3]
            s_waitcnt vmcnt(0) lgkmcnt(0)
            v_mov_b32_e32 v3, v1
            s_endpgm
    """)
    assert ok == []
    # a pending FLAT makes vmcnt(N>0) imprecise: only vmcnt(0) is safe
    bad2, _, _ = viol(kern, """
        k:
            flat_load_dword v1, v[2:3]
            global_load_dword v4, v[2:3], off
            s_waitcnt vmcnt(1) lgkmcnt(0)
            v_mov_b32_e32 v3, v1
            s_endpgm
    """)
    assert bad2 == [("v_mov_b32_e32", ("v", 1), "vmcnt", 0)]


def test_lds_dma_needs_vmcnt_before_ds_read(kern):
    bad, _, _ = viol(kern, """
        k:
            buffer_load_dword v2, s[4:7], 0 offen lds
            ds_read_b32 v3, v4
            s_endpgm
    """)
    assert bad == [("ds_read_b32", ("lds_dma",), "vmcnt", 0)]
    ok, _, _ = viol(kern, """
        k:
            buffer_load_dword v2, s[4:7], 0 offen lds
            ds_write_b32 v5, v6
            s_waitcnt vmcnt(0)
            ds_read_b32 v3, v4
            s_endpgm
    """)
    assert ok == []


def test_buffer_inv_counts_on_vmcnt_br11(kern):
    v, w, k = viol(kern, """
        k:
            global_load_dword v1, v[2:3], off
            buffer_inv sc1
            s_waitcnt vmcnt(1)
            v_mov_b32_e32 v4, v1
            s_endpgm
    """)
    assert v == []
    wait = w.waitcnts[0]
    # the inv is the one younger vmcnt event: vmcnt(1) is exactly the weakest safe count
    assert w.required(wait)["vmcnt"] == 1
    # pending: the load (1 younger event) and the inv itself (a cache write-back/invalidate)
    assert w.pending_before(wait)["vmcnt"] == {("v", 1): 1, ("mem_write",): 0}


def test_overwrite_of_register_in_flight(kern):
    bad, _, _ = viol(kern, """
        k:
            global_load_dword v1, v[2:3], off
            v_mov_b32_e32 v1, 0
            s_endpgm
    """)
    assert bad == [("v_mov_b32_e32", ("v", 1), "vmcnt", 0)]
    # two VMEM loads to the same VGPR complete in order: no wait needed
    ok, _, _ = viol(kern, """
        k:
            global_load_dword v1, v[2:3], off
            global_load_dword v1, v[2:3], off offset:4
            s_waitcnt vmcnt(0)
            v_mov_b32_e32 v5, v1
            s_endpgm
    """)
    assert ok == []
    mixed, _, _ = viol(kern, """
        k:
            ds_read_b32 v1, v0
            global_load_dword v1, v[2:3], off
            s_endpgm
    """)
    assert mixed == [("global_load_dword", ("v", 1), "lgkmcnt", 0)]


def test_stores_need_no_wait_at_exit(kern):
    v, _, _ = viol(kern, """
        k:
            global_store_dword v[2:3], v1, off
            ds_write_b32 v0, v1
            s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)
            s_endpgm
    """)
    assert v == []


def test_loop_carried_load(kern):
    src = """
        k:
            global_load_dword v1, v[2:3], off
            s_mov_b32 s4, 0
        .Lloop:
            {wait}
            v_add_f32_e32 v5, v1, v5
            global_load_dword v1, v[2:3], off
            s_add_u32 s4, s4, 1
            s_cmp_lg_u32 s4, 8
            s_cbranch_scc1 .Lloop
            s_waitcnt vmcnt(0)
            global_store_dword v[2:3], v5, off
            s_endpgm
    """
    bad, _, _ = viol(kern, src.format(wait=""))
    # both the first load and the previous iteration's load reach the use
    assert bad == [("v_add_f32_e32", ("v", 1), "vmcnt", 0)]
    ok, w, _ = viol(kern, src.format(wait="s_waitcnt vmcnt(0)"))
    assert ok == []
    assert w.required(w.waitcnts[0]) == {"vmcnt": 0, "lgkmcnt": 15, "expcnt": 7}


def test_divergent_branch_join(kern):
    src = """
        k:
            global_load_dword v1, v[2:3], off
            s_cmp_eq_u32 s0, 0
            s_cbranch_scc1 .Lelse
            {then_wait}
            v_mov_b32_e32 v6, 1
            s_branch .Ljoin
        .Lelse:
            s_waitcnt vmcnt(0)
            v_mov_b32_e32 v6, 2
        .Ljoin:
            v_add_f32_e32 v7, v1, v6
            s_endpgm
    """
    bad, _, _ = viol(kern, src.format(then_wait=""))
    assert bad == [("v_add_f32_e32", ("v", 1), "vmcnt", 0)]
    ok, _, _ = viol(kern, src.format(then_wait="s_waitcnt vmcnt(0)"))
    assert ok == []


def test_required_gives_weakest_count(kern):
    v, w, k = viol(kern, """
        k:
            global_load_dword v1, v[2:3], off
            global_load_dword v4, v[2:3], off offset:4
            global_load_dword v6, v[2:3], off offset:8
            s_waitcnt vmcnt(0)
            v_mov_b32_e32 v7, v1
            s_waitcnt vmcnt(0)
            v_mov_b32_e32 v8, v6
            s_endpgm
    """)
    w1, w2 = w.waitcnts
    assert w.required(w1) == {"vmcnt": 2, "lgkmcnt": 15, "expcnt": 7}
    assert w.slack(w1) == {"vmcnt": 2, "lgkmcnt": 0, "expcnt": 0}
    # with w1 as it is, nothing is pending at w2 (required() keeps the other waits)
    assert w.required(w2)["vmcnt"] == 63


def test_wait_before_barrier_is_kept(kern):
    v, w, k = viol(kern, """
        k:
            ds_write_b32 v0, v1
            s_waitcnt lgkmcnt(0)
            s_barrier
            s_endpgm
    """)
    assert w.required(w.waitcnts[0])["lgkmcnt"] == 0
    w.memory_order = False
    w._required.clear()
    assert w.required(w.waitcnts[0])["lgkmcnt"] == 15


@pytest.mark.parametrize("text", [
    "vmcnt(0)", "vmcnt(16)", "vmcnt(63) expcnt(7) lgkmcnt(15)", "lgkmcnt(0)", "expcnt(0)",
    "vmcnt(0) expcnt(0) lgkmcnt(0)", "vmcnt(37) lgkmcnt(5)", "vmcnt(5) expcnt(3)"])
def test_waitcnt_simm16_matches_llvm_mc(llvm_mc, text):
    out = subprocess.run([llvm_mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-show-encoding"],
                         input=f"s_waitcnt {text}\n", capture_output=True, text=True, check=True).stdout
    enc = re.search(r"encoding: \[(.*)\]", out).group(1).split(",")
    simm = int(enc[0], 16) | int(enc[1], 16) << 8
    from_text = parse_waitcnt(parse_instruction(f"s_waitcnt {text}"))
    from_imm = parse_waitcnt(parse_instruction(f"s_waitcnt {simm}"))
    assert from_text == from_imm
    assert parse_waitcnt(parse_instruction("s_waitcnt " + format_waitcnt(from_text))) == from_text


def test_call_returns_with_counters_at_zero(kern):
    v, _, _ = viol(kern, """
        k:
            s_load_dwordx2 s[8:9], s[0:1], 0x0
            global_load_dword v1, v[2:3], off
            s_getpc_b64 s[4:5]
            s_swappc_b64 s[30:31], s[4:5]
            s_add_u32 s10, s8, 1
            v_mov_b32_e32 v5, v1
            s_endpgm
    """)
    assert v == []
    # the call's own operands must be ready
    bad, _, _ = viol(kern, """
        k:
            s_load_dwordx2 s[4:5], s[0:1], 0x0
            s_swappc_b64 s[30:31], s[4:5]
            s_endpgm
    """)
    assert bad == [("s_swappc_b64", ("s", 4), "lgkmcnt", 0), ("s_swappc_b64", ("s", 5), "lgkmcnt", 0)]
