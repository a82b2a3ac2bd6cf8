"""sgpr-spill-promote (exact output), and its soundness checks on cases where
promoting a lane would change what the kernel computes."""

from __future__ import annotations

import pytest

from passes_helpers import norm, opt

ACROSS_BRANCH = """
    k:
    s_or_saveexec_b64 s[8:9], -1
    v_accvgpr_read_b32 v0, a0
    s_mov_b64 exec, s[8:9]
    s_load_dwordx2 s[4:5], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    v_writelane_b32 v0, s4, 0
    v_writelane_b32 v0, s5, 1
    s_or_saveexec_b64 s[8:9], -1
    v_accvgpr_write_b32 a0, v0
    s_mov_b64 exec, s[8:9]
    s_cmp_eq_u32 s2, 0
    s_cbranch_scc1 .LBB0_2
    s_mov_b64 s[4:5], 0
    .LBB0_2:
    s_or_saveexec_b64 s[8:9], -1
    v_accvgpr_read_b32 v0, a0
    s_mov_b64 exec, s[8:9]
    v_readlane_b32 s4, v0, 0
    v_readlane_b32 s5, v0, 1
    v_mov_b32_e32 v1, 0
    global_store_dword v1, v1, s[4:5]
    s_endpgm
"""


def test_lanes_become_sgprs_across_a_branch():
    out, inst = opt(ACROSS_BRANCH, "sgpr-spill-promote")
    # lanes 0 and 1 (an SGPR pair) get the lowest free aligned pair, s[6:7]
    assert out == norm("""
        s_or_saveexec_b64 s[8:9], -1
        v_accvgpr_read_b32 v0, a0
        s_mov_b64 exec, s[8:9]
        s_load_dwordx2 s[4:5], s[0:1], 0x0
        s_waitcnt lgkmcnt(0)
        s_mov_b32 s6, s4
        s_mov_b32 s7, s5
        s_or_saveexec_b64 s[8:9], -1
        v_accvgpr_write_b32 a0, v0
        s_mov_b64 exec, s[8:9]
        s_cmp_eq_u32 s2, 0
        s_cbranch_scc1 .LBB0_2
        s_mov_b64 s[4:5], 0
        .LBB0_2:
        s_or_saveexec_b64 s[8:9], -1
        v_accvgpr_read_b32 v0, a0
        s_mov_b64 exec, s[8:9]
        s_mov_b32 s4, s6
        s_mov_b32 s5, s7
        v_mov_b32_e32 v1, 0
        global_store_dword v1, v1, s[4:5]
        s_endpgm
    """)
    s = inst.stats["sgpr-spill-promote"]
    assert (s["lanes-promoted"], s["writelanes-removed"], s["readlanes-removed"]) == (2, 2, 2)


def test_cleanup_removes_the_whole_spill():
    """With copy-prop, dce and peephole after it, the spill VGPR, its AGPR home and
    the whole-wave save/restore code all go; the clobber of s[4:5] on the
    fall-through path is dead because the reload overwrote it."""
    out, _ = opt(ACROSS_BRANCH, "sgpr-spill-promote,copy-prop,dce,peephole,copy-prop,dce")
    assert out == norm("""
        s_load_dwordx2 s[4:5], s[0:1], 0x0
        s_waitcnt lgkmcnt(0)
        s_cmp_eq_u32 s2, 0
        s_cbranch_scc1 .LBB0_2
        .LBB0_2:
        v_mov_b32_e32 v1, 0
        global_store_dword v1, v1, s[4:5]
        s_endpgm
    """)


def test_lane_read_before_written_in_a_loop_gets_an_initialising_readlane():
    """Lanes 2/3 are read on the first iteration before anything wrote them (LLVM's
    undefined loop-carried mask at -O0): the SGPRs must start with the same junk."""
    out, inst = opt("""
        k:
        s_mov_b64 s[4:5], 0
        v_writelane_b32 v0, s4, 0
        v_writelane_b32 v0, s5, 1
        .LBB0_1:
        v_readlane_b32 s6, v0, 2
        v_readlane_b32 s7, v0, 3
        v_readlane_b32 s4, v0, 0
        v_readlane_b32 s5, v0, 1
        s_or_b64 s[6:7], s[6:7], s[4:5]
        v_writelane_b32 v0, s6, 2
        v_writelane_b32 v0, s7, 3
        s_add_u32 s4, s4, 1
        v_writelane_b32 v0, s4, 0
        s_cmp_lt_u32 s4, 10
        s_cbranch_scc1 .LBB0_1
        v_readlane_b32 s6, v0, 2
        v_mov_b32_e32 v1, s6
        v_mov_b32_e32 v2, 0
        global_store_dword v2, v1, s[0:1]
        s_endpgm
    """, "sgpr-spill-promote")
    assert out == norm("""
        s_mov_b64 s[4:5], 0
        v_readlane_b32 s8, v0, 2
        v_readlane_b32 s9, v0, 3
        s_mov_b32 s2, s4
        s_mov_b32 s3, s5
        .LBB0_1:
        s_mov_b32 s6, s8
        s_mov_b32 s7, s9
        s_mov_b32 s4, s2
        s_mov_b32 s5, s3
        s_or_b64 s[6:7], s[6:7], s[4:5]
        s_mov_b32 s8, s6
        s_mov_b32 s9, s7
        s_add_u32 s4, s4, 1
        s_mov_b32 s2, s4
        s_cmp_lt_u32 s4, 10
        s_cbranch_scc1 .LBB0_1
        s_mov_b32 s6, s8
        v_mov_b32_e32 v1, s6
        v_mov_b32_e32 v2, 0
        global_store_dword v2, v1, s[0:1]
        s_endpgm
    """)
    assert inst.stats["sgpr-spill-promote"]["lanes-initialised"] == 2


def test_spill_vgpr_reused_per_lane_between_spills_is_promoted():
    """v0 holds ordinary per-lane data while the spill lives in a0: under the same
    EXEC the data is written before it is read, so the lanes that differ after the
    promotion (the old spill lanes, outside EXEC) are never seen."""
    out, _ = opt("""
        k:
        s_or_saveexec_b64 s[8:9], -1
        v_writelane_b32 v0, s4, 0
        v_accvgpr_write_b32 a0, v0
        s_mov_b64 exec, s[8:9]
        v_mov_b32_e32 v0, 7
        v_add_u32_e32 v1, v0, v0
        global_store_dword v2, v1, s[0:1]
        s_or_saveexec_b64 s[8:9], -1
        v_accvgpr_read_b32 v0, a0
        s_mov_b64 exec, s[8:9]
        v_readlane_b32 s6, v0, 0
        v_mov_b32_e32 v1, s6
        global_store_dword v2, v1, s[0:1]
        s_endpgm
    """, "sgpr-spill-promote")
    assert "v_writelane" not in out and "v_readlane" not in out
    assert "s_mov_b32 s2, s4" in out and "s_mov_b32 s6, s2" in out


LEFT_ALONE = {
    # a0 keeps the old lane 0 while v0 gets a new one; the restore brings the old
    # one back: one SGPR per lane would return the new value
    "save-overwrite-restore": """
        k:
        s_or_saveexec_b64 s[8:9], -1
        v_writelane_b32 v0, s4, 0
        v_accvgpr_write_b32 a0, v0
        v_writelane_b32 v0, s5, 0
        v_accvgpr_read_b32 v0, a0
        s_mov_b64 exec, s[8:9]
        v_readlane_b32 s6, v0, 0
        v_mov_b32_e32 v1, s6
        global_store_dword v2, v1, s[0:1]
        s_endpgm
    """,
    # a VALU op reads the spill VGPR itself (lane 0 is data for work-item 0)
    "valu-reads-the-lane": """
        k:
        v_writelane_b32 v0, s4, 0
        v_add_u32_e32 v1, v0, v0
        v_readlane_b32 s6, v0, 0
        global_store_dword v2, v1, s[0:1]
        v_mov_b32_e32 v1, s6
        global_store_dword v2, v1, s[0:1]
        s_endpgm
    """,
    # the save to a0 runs under a partial EXEC: lane 0 may not be copied
    "save-under-partial-exec": """
        k:
        v_writelane_b32 v0, s4, 0
        s_mov_b64 exec, s[10:11]
        v_accvgpr_write_b32 a0, v0
        s_mov_b64 exec, -1
        v_mov_b32_e32 v0, 0
        v_accvgpr_read_b32 v0, a0
        v_readlane_b32 s6, v0, 0
        v_mov_b32_e32 v1, s6
        global_store_dword v2, v1, s[0:1]
        s_endpgm
    """,
    # v0 is written under one EXEC and read under all lanes: lane 0 may be the old
    # spill value, which the promotion changes
    "reuse-read-under-wider-exec": """
        k:
        s_or_saveexec_b64 s[8:9], -1
        v_writelane_b32 v0, s4, 0
        v_accvgpr_write_b32 a0, v0
        s_mov_b64 exec, s[8:9]
        v_mov_b32_e32 v0, 7
        s_mov_b64 exec, -1
        v_add_u32_e32 v1, v0, v0
        global_store_dword v2, v1, s[0:1]
        v_accvgpr_read_b32 v0, a0
        v_readlane_b32 s6, v0, 0
        v_mov_b32_e32 v1, s6
        global_store_dword v2, v1, s[0:1]
        s_endpgm
    """,
    # the lane is selected by M0, not a constant
    "lane-in-m0": """
        k:
        v_writelane_b32 v0, s4, m0
        v_readlane_b32 s6, v0, 0
        v_mov_b32_e32 v1, s6
        global_store_dword v2, v1, s[0:1]
        s_endpgm
    """,
}


@pytest.mark.parametrize("name", sorted(LEFT_ALONE))
def test_left_alone(name):
    src = LEFT_ALONE[name]
    out, inst = opt(src, "sgpr-spill-promote")
    assert out == norm(src.replace("k:\n", "", 1)), name
    assert not inst.stats["sgpr-spill-promote"].get("lanes-promoted")


def test_too_few_free_sgprs_promote_what_fits():
    """Below s4 only s3 is free: one of the two lanes (lane 0) is promoted, lane 1
    stays a spill; below s3 nothing is free and nothing changes."""
    out, inst = opt(ACROSS_BRANCH, "sgpr-spill-promote<max-sgpr=4>")
    assert "s_mov_b32 s3, s4" in out and "s_mov_b32 s4, s3" in out
    assert "v_writelane_b32 v0, s5, 1" in out and "v_readlane_b32 s5, v0, 1" in out
    assert inst.stats["sgpr-spill-promote"]["lanes-promoted"] == 1
    out, _ = opt(ACROSS_BRANCH, "sgpr-spill-promote<max-sgpr=3>")
    assert "v_writelane_b32 v0, s4, 0" in out and "v_readlane_b32 s4, v0, 0" in out


def test_corpus_O0_spills_promoted_and_results_match(corpus_dir, tmp_path, capsys):
    """softmax_row_O0: every SGPR spill lane is promoted by the default pipeline
    (no v_writelane is left) and the emulator still matches the NumPy reference."""
    from asmevo.frontend.loader import load
    from asmevo.tools.opt import main
    from test_corpus import _emulate_matches_reference
    out = tmp_path / "s.co"
    rc = main(["--passes=default", "--verify-each", "--stats",
               str(corpus_dir / "softmax_row_O0.co"), "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "sgpr-spill-promote.lanes-promoted = 32" in err
    ops = [i.opcode for k in load(str(out)).kernels for i in k.instructions()]
    assert "v_writelane_b32" not in ops
    errs, _ = _emulate_matches_reference(corpus_dir, "softmax_row_O0", out)
    assert errs == []
