"""EXEC-aware may-liveness (MayLiveness) and the passes' views of it (asmevo.passes.liveness).

The corpus test checks the analysis against an independent round-robin fixpoint over
single instructions, with successors computed here from the branch text."""

import pytest

from asmevo.analysis.cfg import CFG, EXIT
from asmevo.analysis.liveness import Liveness, MayLiveness, lane_effects, may_use_kill
from asmevo.frontend.asm_parser import parse_asm
from asmevo.ir.operands import Label
from asmevo.passes.liveness import (block_transfer, dead_instructions, kernel_flow,
                                    live_after_each, liveness)

DIVERGENT = """
    k:
        v_mov_b32_e32 v1, 1
        s_mov_b32 s2, 5
        v_cmp_gt_u32_e32 vcc, 4, v0
        s_and_saveexec_b64 s[6:7], vcc
        v_mov_b32_e32 v1, 2
        s_mov_b32 s2, 7
        s_or_b64 exec, exec, s[6:7]
        global_store_dword v[4:5], v1, off
        global_store_dword v[4:5], v2, off
        s_add_u32 s3, s2, 1
        s_endpgm
"""


def test_vector_write_under_exec_kills_only_in_must_mode(kern):
    k, am = kern(DIVERGENT)
    insts = list(k.instructions())
    must, may = am.get(Liveness, k), am.get(MayLiveness, k)
    first_v1, second_v1 = insts[0], insts[4]
    # LLVM-style must-liveness: the second v_mov kills v1, so the first one is dead
    assert ("v", 1) not in must.live_after(first_v1)
    # may-liveness: lanes the second write skipped still read the first value
    assert ("v", 1) in may.live_after(first_v1)
    assert ("v", 1) in may.live_after(second_v1)
    # SGPR writes are full writes in both: s2 = 5 is dead
    assert ("s", 2) not in must.live_after(insts[1])
    assert ("s", 2) not in may.live_after(insts[1])
    assert ("s", 2) in may.live_after(insts[5])
    assert am.get(MayLiveness, k) is may and may is not must      # cached per mode


def test_may_pressure_counts_every_written_unit(kern):
    k, am = kern(DIVERGENT)
    may = am.get(MayLiveness, k)
    rows = may.pressure()
    assert len(rows) == len(list(k.instructions()))
    # v1 of the first v_mov is occupied across it although nothing is live before
    assert rows[0]["v"] >= 1
    assert may.max_pressure["v"] >= 4      # v0 (compare), v1, v[4:5] around the stores


def test_uses_all_instruction_uses_every_unit(kern):
    k, am = kern("""
        k:
            s_mov_b32 s9, 1
            v_mov_b32_e32 v7, 1
            s_mov_b32 m0, 0
            s_movrels_b32 s0, s4
            s_endpgm
    """)
    may = am.get(MayLiveness, k)
    movrels = list(k.instructions())[3]
    assert {("s", 9), ("v", 7), ("m0",)} <= may.live_before(movrels)
    # the passes refuse such kernels
    flow = kernel_flow(k)
    assert not flow.ok and "reads registers by index" in flow.reason
    lv = liveness(k)
    assert lv.live_in == [frozenset()] * len(k.blocks)


def test_passes_wrappers_agree_with_the_analysis(kern):
    k, am = kern(DIVERGENT)
    may = am.get(MayLiveness, k)
    lv = liveness(k)
    assert lv.flow.ok
    assert lv.live_in == [may.live_in(b) for b in range(len(k.blocks))]
    assert lv.live_out == [may.live_out(b) for b in range(len(k.blocks))]
    after = live_after_each(k, lv)
    for inst in k.instructions():
        assert after[id(inst)] == may.live_after(inst)
    blk = k.blocks[0].instructions
    assert block_transfer(blk, set(lv.live_out[0])) == set(lv.live_in[0])
    # with a manager, the analyses come from its cache
    lv2 = liveness(k, am)
    assert lv2.live_in == lv.live_in and am.cached(MayLiveness, k) is may
    # dead: s_mov_b32 s2, 5 (overwritten), s_add_u32 s3 (never read) and so its only
    # input s_mov_b32 s2, 7 (chains inside a block in one sweep); VGPR writes stay
    dead = dead_instructions(k, lv)
    insts = list(k.instructions())
    assert dead == {id(insts[1]), id(insts[5]), id(insts[9])}


def test_kernel_flow_lists_a_branch_to_the_next_block_twice(kern):
    k, _ = kern("""
        k:
            s_cmp_eq_u32 s0, 0
            s_cbranch_scc1 .Lnext
        .Lnext:
            s_branch .Lend
        .Lend:
            s_endpgm
    """)
    flow = kernel_flow(k)
    assert flow.ok
    assert flow.succ == [[1, 1], [2], []]
    assert flow.pred == [[], [0, 0], [1]]


@pytest.mark.parametrize("body,reason", [
    ("s_branch .Lout\n s_endpgm", "branch to .Lout outside the kernel"),
    ("s_mov_b32 s0, 0", "code falls off the end of the kernel"),
    ("s_setpc_b64 s[0:1]\n s_endpgm", "indirect control flow (s_setpc_b64)"),
    ("s_set_gpr_idx_on s0, gpr_idx(SRC0)\n s_set_gpr_idx_off\n s_endpgm",
     "s_set_gpr_idx_on changes register addressing"),
])
def test_kernel_flow_refuses(kern, body, reason):
    text = "k:\n " + body + "\n"
    if ".Lout" in body:
        text = "k:\n " + body + "\nother:\n.Lout:\n s_endpgm\n"
        m = parse_asm(text, "<t>")
        k = m.kernel("k")
    else:
        k, _ = kern(text)
    flow = kernel_flow(k)
    assert not flow.ok
    assert flow.reason == reason


# -- corpus: analysis vs an independent fixpoint ------------------------------------------------

def _succ_from_text(k):
    """Successor blocks from the branch mnemonics and labels (independent of the CFG)."""
    index = {b.label: n for n, b in enumerate(k.blocks) if b.label}
    out = []
    for n, b in enumerate(k.blocks):
        last = b.instructions[-1].opcode if b.instructions else ""
        s = []
        if last.startswith(("s_branch", "s_cbranch")):
            lab = next(o.name for o in b.instructions[-1].operands if isinstance(o, Label))
            s.append(index[lab])
        if not last.startswith(("s_branch", "s_endpgm")):
            s.append(n + 1)
        out.append(s)
    return out


def _round_robin(k):
    """live-after of every instruction by iterating single-instruction equations to a fixpoint."""
    succ = _succ_from_text(k)
    insts = [(b, i, inst) for b, blk in enumerate(k.blocks) for i, inst in enumerate(blk.instructions)]
    first = {}
    for b, blk in enumerate(k.blocks):
        first[b] = next(((b2, 0) for b2 in range(b, len(k.blocks)) if k.blocks[b2].instructions),
                        None)
    # state before/after each instruction: (strong, loc): live in every lane, and read
    # only per lane in the current EXEC epoch by an instruction that a full per-lane
    # write earlier in the block covers (see Liveness._scan); block ends are all strong
    before = {(b, i): (frozenset(), frozenset()) for b, i, _ in insts}
    after = {(b, i): (frozenset(), frozenset()) for b, i, _ in insts}
    changed = True
    while changed:
        changed = False
        for b, i, inst in reversed(insts):
            if i + 1 < len(k.blocks[b].instructions):
                strong, loc = before[(b, i + 1)]
            else:
                strong, loc = set(), set()
                for s in succ[b]:
                    if first.get(s) is not None:
                        strong |= before[first[s]][0] | before[first[s]][1]
            out = (frozenset(strong), frozenset(loc))
            u, kill = may_use_kill(inst)
            per_lane, full, writes_exec = lane_effects(inst)
            strong, loc = set(strong), set(loc)
            if writes_exec:
                strong |= loc
                loc = set()
            strong -= kill
            loc -= kill | full
            pl = {x for x in u if per_lane and x[0] in ("v", "a") and len(x) == 2}
            strong |= set(u) - pl
            loc |= pl
            inn = (frozenset(strong), frozenset(loc))
            if out != after[(b, i)] or inn != before[(b, i)]:
                after[(b, i)], before[(b, i)] = out, inn
                changed = True
    return {key: st | lc for key, (st, lc) in after.items()}


def test_may_liveness_matches_round_robin_fixpoint(corpus_dir):
    files = sorted(corpus_dir.glob("*.s")) + sorted((corpus_dir / "triton").glob("*.amdgcn"))
    checked = kernels = 0
    for p in files:
        m = parse_asm(p.read_text(), str(p))
        for k in m.kernels:
            flow = kernel_flow(k)
            if not flow.ok:
                continue
            kernels += 1
            # the passes' CFG view is the analysis CFG (duplicates aside)
            cfg = CFG(k)
            assert flow.succ == _succ_from_text(k)
            for b, ss in enumerate(flow.succ):
                assert set(ss) == {s for s in cfg.successors(b) if s != EXIT}
            want = _round_robin(k)
            lv = liveness(k)
            after = live_after_each(k, lv)
            from asmevo.analysis import AnalysisManager
            may = AnalysisManager(m).get(MayLiveness, k)
            for b, blk in enumerate(k.blocks):
                for i, inst in enumerate(blk.instructions):
                    assert after[id(inst)] == want[(b, i)], (p.name, b, i)
                    assert may.live_after(inst) == want[(b, i)], (p.name, b, i)
                    checked += 1
    assert kernels > 30 and checked > 3000
