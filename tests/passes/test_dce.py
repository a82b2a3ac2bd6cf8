"""dce on small hand-written kernels: exact output, including code it must leave alone."""

from __future__ import annotations

from passes_helpers import norm, opt


def test_removes_dead_valu_salu_and_chains():
    out, inst = opt("""
        k:
        s_load_dwordx2 s[0:1], s[4:5], 0x0
        v_mov_b32_e32 v1, 7
        v_mov_b32_e32 v2, 3
        s_add_u32 s8, s9, s10
        s_mov_b32 s11, s8
        s_waitcnt lgkmcnt(0)
        v_add_u32_e32 v3, v2, v0
        global_store_dword v0, v3, s[0:1]
        s_endpgm
    """, "dce")
    assert out == norm("""
        s_load_dwordx2 s[0:1], s[4:5], 0x0
        v_mov_b32_e32 v2, 3
        s_waitcnt lgkmcnt(0)
        v_add_u32_e32 v3, v2, v0
        global_store_dword v0, v3, s[0:1]
        s_endpgm
    """)
    assert inst.stats["dce"]["removed"] == 3


def test_keeps_memory_ops_barriers_and_live_specials():
    src = """
        k:
        global_load_dword v1, v[2:3], off
        ds_read_b32 v4, v5
        s_load_dword s2, s[0:1], 0x0
        s_barrier
        s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)
        s_mov_b32 m0, s3
        v_cmp_gt_i32_e32 vcc, 0, v0
        s_and_saveexec_b64 s[6:7], vcc
        s_cbranch_execz .LBB0_2
        ds_read_addtid_b32 v6
        .LBB0_2:
        s_or_b64 exec, exec, s[6:7]
        s_waitcnt vmcnt(0) lgkmcnt(0)
        global_store_dword v[2:3], v1, off
        s_endpgm
    """
    out, inst = opt(src, "dce")
    # nothing is dead: memory ops, messages and barriers are kept; m0 is read by
    # ds_read_addtid; vcc by s_and_saveexec; exec by the branch; s[6:7] by the restore
    assert out == norm(src.replace("k:\n", ""))
    assert inst.stats["dce"]["removed"] == 0
    # without the final store, the EXEC restore before s_endpgm is dead
    out, _ = opt(src.replace("global_store_dword v[2:3], v1, off\n", ""), "dce")
    assert "s_or_b64 exec, exec, s[6:7]" not in out and "s_waitcnt vmcnt(0) lgkmcnt(0)" in out


def test_dead_exec_and_scc_writes_are_removed_only_when_dead():
    out, _ = opt("""
        k:
        s_cmp_lg_u32 s0, 0
        s_cmp_eq_u32 s1, 0
        s_cselect_b32 s2, 1, 0
        s_mov_b64 exec, s[4:5]
        s_mov_b64 exec, s[6:7]
        v_mov_b32_e32 v0, s2
        global_store_dword v[2:3], v0, off
        s_endpgm
    """, "dce")
    assert out == norm("""
        s_cmp_eq_u32 s1, 0
        s_cselect_b32 s2, 1, 0
        s_mov_b64 exec, s[6:7]
        v_mov_b32_e32 v0, s2
        global_store_dword v[2:3], v0, off
        s_endpgm
    """)


def test_vgpr_write_before_exec_change_is_kept():
    # v0 is rewritten only in the lanes of the new EXEC; other lanes keep 1.0
    src = """
        k:
        v_mov_b32_e32 v0, 1.0
        s_mov_b64 exec, s[4:5]
        v_mov_b32_e32 v0, 2.0
        s_mov_b64 exec, -1
        global_store_dword v[2:3], v0, off
        s_endpgm
    """
    out, _ = opt(src, "dce")
    assert out == norm(src.replace("k:\n", ""))


def test_vgpr_rewritten_under_same_exec_is_dead():
    out, _ = opt("""
        k:
        v_mov_b32_e32 v0, 1.0
        v_mov_b32_e32 v0, 2.0
        global_store_dword v[2:3], v0, off
        s_endpgm
    """, "dce")
    assert out == norm("""
        v_mov_b32_e32 v0, 2.0
        global_store_dword v[2:3], v0, off
        s_endpgm
    """)


def test_partial_writes_do_not_kill():
    # DPP with a row mask and v_writelane keep the old value in other lanes
    src = """
        k:
        v_mov_b32_e32 v0, 0
        v_mov_b32_dpp v0, v1 quad_perm:[1,0,3,2] row_mask:0x3 bank_mask:0xf
        v_mov_b32_e32 v4, 0
        v_writelane_b32 v4, s0, 5
        global_store_dword v[2:3], v0, off
        global_store_dword v[2:3], v4, off offset:4
        s_endpgm
    """
    out, _ = opt(src, "dce")
    assert out == norm(src.replace("k:\n", ""))


def test_liveness_across_blocks_and_loops():
    out, _ = opt("""
        k:
        s_mov_b32 s4, 0
        s_mov_b32 s5, 9
        .LBB0_1:
        s_add_u32 s4, s4, 1
        s_cmp_lt_u32 s4, 10
        s_cbranch_scc1 .LBB0_1
        v_mov_b32_e32 v0, s4
        global_store_dword v[2:3], v0, off
        s_endpgm
    """, "dce")
    assert out == norm("""
        s_mov_b32 s4, 0
        .LBB0_1:
        s_add_u32 s4, s4, 1
        s_cmp_lt_u32 s4, 10
        s_cbranch_scc1 .LBB0_1
        v_mov_b32_e32 v0, s4
        global_store_dword v[2:3], v0, off
        s_endpgm
    """)


def test_indirect_control_flow_is_left_alone():
    src = """
        f:
        v_mov_b32_e32 v9, 1
        s_setpc_b64 s[30:31]
    """
    out, inst = opt(src, "dce")
    assert out == norm(src.replace("f:\n", ""))
    assert inst.stats["dce"]["skipped-kernels"] == 1


def test_half_register_writes_keep_the_earlier_value():
    # v_cvt_pk_fp8_f32 writes only 16 bits of v1 (the ISA table lists v1 as read too):
    # the v_mov that set the other half is live
    src = """
        k:
        v_mov_b32_e32 v1, 0
        v_cvt_pk_fp8_f32 v1, v2, v3
        global_store_dword v[4:5], v1, off
        s_endpgm
    """
    out, _ = opt(src, "dce")
    assert out == norm(src.replace("k:\n", ""))
