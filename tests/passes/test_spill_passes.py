"""scratch-forward and redundant-move on -O0 style spill code (exact output)."""

from __future__ import annotations

from passes_helpers import norm, opt


def test_scratch_store_forwarded_to_load_and_dead_store_removed():
    out, inst = opt("""
        k:
        s_mov_b32 s33, 0
        v_add_u32_e32 v1, v0, v0
        scratch_store_dword off, v1, s33 offset:4
        scratch_store_dword off, v0, s33 offset:8
        scratch_load_dword v2, off, s33 offset:4
        scratch_load_dword v0, off, s33 offset:8
        s_waitcnt vmcnt(0)
        global_store_dword v[4:5], v2, off
        scratch_load_dword v3, off, s33 offset:8
        s_waitcnt vmcnt(0)
        global_store_dword v[4:5], v3, off
        s_endpgm
    """, "scratch-forward")
    # offset 4: forwarded, then never loaded -> store deleted; offset 8: the reload
    # into the stored register is deleted; a later load of 8 keeps its store
    assert out == norm("""
        s_mov_b32 s33, 0
        v_add_u32_e32 v1, v0, v0
        scratch_store_dword off, v0, s33 offset:8
        v_mov_b32_e32 v2, v1
        s_waitcnt vmcnt(0)
        global_store_dword v[4:5], v2, off
        scratch_load_dword v3, off, s33 offset:8
        s_waitcnt vmcnt(0)
        global_store_dword v[4:5], v3, off
        s_endpgm
    """)
    s = inst.stats["scratch-forward"]
    assert (s["loads-forwarded"], s["loads-removed"], s["stores-removed"]) == (1, 1, 1)


def test_scratch_not_forwarded_across_exec_change_or_overwrite():
    src = """
        k:
        s_mov_b32 s33, 0
        scratch_store_dword off, v1, s33 offset:4
        s_mov_b64 exec, s[6:7]
        scratch_load_dword v2, off, s33 offset:4
        scratch_store_dword off, v1, s33 offset:8
        v_mov_b32_e32 v1, 0
        scratch_load_dword v3, off, s33 offset:8
        s_waitcnt vmcnt(0)
        global_store_dword v[4:5], v2, off
        global_store_dword v[4:5], v3, off
        s_endpgm
    """
    out, _ = opt(src, "scratch-forward")
    assert out == norm(src.replace("k:\n", ""))


def test_scratch_left_alone_with_flat_access():
    src = """
        k:
        s_mov_b32 s33, 0
        scratch_store_dword off, v1, s33 offset:4
        flat_store_dword v[8:9], v0
        scratch_load_dword v2, off, s33 offset:4
        s_waitcnt vmcnt(0) lgkmcnt(0)
        global_store_dword v[4:5], v2, off
        s_endpgm
    """
    out, _ = opt(src, "scratch-forward")
    assert out == norm(src.replace("k:\n", ""))


def test_redundant_wwm_reload_then_empty_exec_save_restore():
    out, inst = opt("""
        k:
        s_or_saveexec_b64 s[8:9], -1
        v_accvgpr_write_b32 a0, v0
        s_mov_b64 exec, s[8:9]
        s_cbranch_execz .LBB0_2
        s_or_saveexec_b64 s[8:9], -1
        v_accvgpr_read_b32 v0, a0
        s_mov_b64 exec, s[8:9]
        v_readlane_b32 s0, v0, 1
        v_mov_b32_e32 v3, s0
        global_store_dword v[4:5], v3, off
        .LBB0_2:
        s_or_saveexec_b64 s[8:9], -1
        v_accvgpr_read_b32 v0, a0
        s_mov_b64 exec, s[8:9]
        v_writelane_b32 v0, s1, 2
        s_or_saveexec_b64 s[8:9], -1
        v_accvgpr_read_b32 v0, a0
        s_mov_b64 exec, s[8:9]
        v_readlane_b32 s0, v0, 2
        v_mov_b32_e32 v3, s0
        global_store_dword v[4:5], v3, off
        s_endpgm
    """, "redundant-move,peephole")
    # both reloads after the save are redundant; the one after v_writelane is not
    assert out == norm("""
        s_or_saveexec_b64 s[8:9], -1
        v_accvgpr_write_b32 a0, v0
        s_mov_b64 exec, s[8:9]
        s_cbranch_execz .LBB0_2
        v_readlane_b32 s0, v0, 1
        v_mov_b32_e32 v3, s0
        global_store_dword v[4:5], v3, off
        .LBB0_2:
        v_writelane_b32 v0, s1, 2
        s_or_saveexec_b64 s[8:9], -1
        v_accvgpr_read_b32 v0, a0
        s_mov_b64 exec, s[8:9]
        v_readlane_b32 s0, v0, 2
        v_mov_b32_e32 v3, s0
        global_store_dword v[4:5], v3, off
        s_endpgm
    """)
    assert inst.stats["redundant-move"]["moves-removed"] == 2


def test_reload_kept_when_a_path_changes_the_register():
    src = """
        k:
        s_or_saveexec_b64 s[8:9], -1
        v_accvgpr_write_b32 a0, v0
        s_mov_b64 exec, s[8:9]
        s_cbranch_scc1 .LBB0_2
        v_mov_b32_e32 v0, 0
        .LBB0_2:
        s_or_saveexec_b64 s[8:9], -1
        v_accvgpr_read_b32 v0, a0
        s_mov_b64 exec, s[8:9]
        global_store_dword v[4:5], v0, off
        s_endpgm
    """
    out, _ = opt(src, "redundant-move")
    assert out == norm(src.replace("k:\n", ""))


def test_scratch_left_alone_when_the_base_is_read_before_it_is_set():
    """s33 holds whatever the launch left in it for the first access, then 0: the
    two accesses at offset 4 may be different addresses."""
    src = """
        k:
        scratch_store_dword off, v1, s33 offset:4
        s_mov_b32 s33, 0
        scratch_load_dword v2, off, s33 offset:4
        s_waitcnt vmcnt(0)
        global_store_dword v[4:5], v2, off
        s_endpgm
    """
    out, _ = opt(src, "scratch-forward")
    assert out == norm(src.replace("k:\n", "", 1))
