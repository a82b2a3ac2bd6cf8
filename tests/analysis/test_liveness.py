"""Liveness: per-block sets, partial writes, indexed access, entry ABI, pressure."""

from asmevo.analysis.liveness import Liveness, format_units


def test_straight_line_and_kill(kern):
    k, am = kern("""
        k:
            v_mov_b32_e32 v1, v0
            v_add_f32_e32 v2, v1, v1
            v_mov_b32_e32 v1, 0
            global_store_dword v[4:5], v2, off
            s_endpgm
    """)
    lv = am.get(Liveness, k)
    insts = list(k.instructions())
    assert ("v", 1) in lv.live_after(insts[0])
    assert ("v", 1) not in lv.live_after(insts[1])      # redefined before any read
    assert ("v", 1) not in lv.live_after(insts[2])      # dead def
    assert {("v", 2), ("v", 4), ("v", 5), ("exec_lo",)} <= lv.live_before(insts[3])
    assert lv.live_after(insts[3]) == frozenset()       # s_endpgm uses nothing
    # v4,v5 are read but never written: undefined at entry (v0 and exec come from the ABI)
    assert format_units(lv.undefined_at_entry) == ["v[4:5]"]


def test_loop_carried_and_divergent(kern):
    k, am = kern("""
        k:
            v_mov_b32_e32 v3, 0
            s_mov_b32 s4, 0
        .Lloop:
            v_add_u32_e32 v3, v3, v0
            s_add_u32 s4, s4, 1
            s_cmp_lg_u32 s4, 8
            s_cbranch_scc1 .Lloop
            v_cmp_gt_u32_e32 vcc, 4, v0
            s_and_saveexec_b64 s[6:7], vcc
            s_cbranch_execz .Lend
            v_mov_b32_e32 v3, 7
        .Lend:
            s_or_b64 exec, exec, s[6:7]
            global_store_dword v[8:9], v3, off
            s_endpgm
    """)
    lv = am.get(Liveness, k)
    loop = lv.cfg.label_index[".Lloop"]
    assert {("v", 3), ("s", 4), ("v", 0)} <= lv.live_in(loop)
    assert ("s", 4) in lv.live_out(loop)                 # back edge keeps s4 live
    end = lv.cfg.label_index[".Lend"]
    assert ("v", 3) in lv.live_in(end) and ("s", 6) in lv.live_in(end)
    assert ("scc",) not in lv.live_in(end)


def test_partial_writes_keep_old_value(kern):
    k, am = kern("""
        k:
            v_mov_b32_e32 v1, 5
            v_mov_b32_sdwa v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_0
            v_mov_b32_e32 v6, 5
            v_writelane_b32 v6, s0, 3
            global_store_dword v[4:5], v1, off
            global_store_dword v[4:5], v6, off
            s_endpgm
    """)
    lv = am.get(Liveness, k)
    insts = list(k.instructions())
    assert ("v", 1) in lv.live_after(insts[0])   # the SDWA preserve write reads v1
    assert ("v", 6) in lv.live_after(insts[2])   # v_writelane writes one lane only


def test_gpr_index_mode_is_conservative(kern):
    k, am = kern("""
        k:
            v_mov_b32_e32 v10, 1
            v_mov_b32_e32 v12, 2
            s_set_gpr_idx_on s2, gpr_idx(SRC0)
            v_mov_b32_e32 v1, v8
            s_set_gpr_idx_off
            global_store_dword v[4:5], v1, off
            s_endpgm
    """)
    lv = am.get(Liveness, k)
    insts = list(k.instructions())
    # v8 indexed by M0 may read v10 or v12: both stay live
    assert {("v", 10), ("v", 12)} <= lv.live_after(insts[1])
    assert ("v", 7) not in lv.live_after(insts[1])


def test_pressure(kern):
    k, am = kern("""
        k:
            v_mov_b32_e32 v1, 1
            v_mov_b32_e32 v2, 2
            v_mov_b32_e32 v3, 3
            v_add3_u32 v1, v1, v2, v3
            global_store_dword v[4:5], v1, off
            s_endpgm
    """)
    lv = am.get(Liveness, k)
    # across v_mov v3: v0(not used), v1, v2, v3 (def), v4, v5 -> 5
    assert lv.max_pressure["v"] == 5
    assert lv.max_pressure_at["v"] == (0, 2)
    assert len(lv.pressure()) == 6


def test_call_uses_everything(kern):
    k, am = kern("""
        k:
            v_mov_b32_e32 v7, 1
            s_mov_b32 s9, 2
            s_getpc_b64 s[10:11]
            s_swappc_b64 s[30:31], s[10:11]
            s_endpgm
    """)
    lv = am.get(Liveness, k)
    insts = list(k.instructions())
    # the callee may read v7 and s9: they stay live up to the call
    assert {("v", 7), ("s", 9)} <= lv.live_after(insts[2])
