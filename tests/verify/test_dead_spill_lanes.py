"""Window counterexamples in dead SGPR-spill lanes are not ``rejected-counterexample``.

``sgpr-spill-promote`` on ``examples/vadd_f32_O0.co`` moves the SGPR spills held in
lanes 0 and 1 of v0 (``v_writelane_b32 v0, s0, 0``) into free SGPRs.  The entry
block's window then differs in v0, and the unchanged rest of the block copies v0
whole into a0 (the WWM spill), so the old confirmation rule ("read by the rest of the
block") reported a counterexample.  But no value of those lanes can reach memory, a
branch or any other side effect in the candidate (a0 is copied back into v0 at the
end, and v0 is never read again before ``s_endpgm``): the observable liveness
(:mod:`asmevo.analysis.observable`) withholds the confirmation, and the relational
proof then accepts the kernel.

The adversarial cases must stay rejected: the same edit where a later ``v_readlane``
reads lane 0 or 1 of v0 and the value flows into the stored output (in both the
original and the candidate, so only the promoted lanes differ).  A ``v_readlane`` of
lane 2 (not promoted, equal in both) is correct code and must not be rejected.
"""

from __future__ import annotations

import pathlib
import re

import pytest

from asmevo.analysis import AnalysisManager
from asmevo.analysis.cfg import CFG
from asmevo.frontend.asm_parser import parse_asm
from asmevo.verify import verify
from asmevo.verify.equiv import check_kernels
from asmevo.analysis.observable import ALL, observable_liveness

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "vadd_f32_O0.co"
HARNESS = str(ROOT / "examples" / "vadd_f32_O0.json")


@pytest.fixture(scope="module")
def promoted(tmp_path_factory):
    """(original text, candidate .co path, candidate text): ``sgpr-spill-promote``'s
    output for the example, both disassembled."""
    from asmevo.frontend.disasm import disassemble_and_print
    from asmevo.tools.opt import main
    d = tmp_path_factory.mktemp("ssp")
    out = d / "ssp.co"
    assert main(["--passes=kernel(sgpr-spill-promote)", str(EXAMPLE), "-o", str(out)]) == 0
    _, o_text = disassemble_and_print(str(EXAMPLE))
    _, c_text = disassemble_and_print(str(out))
    # the pass did what this test is about: both spill lanes now live in SGPRs
    assert "v_writelane_b32 v0, s0, 0" in o_text and "v_writelane" not in c_text
    assert "v_readlane_b32 s0, v0, 0" in o_text and "v_readlane" not in c_text
    return o_text, out, c_text


def _leak(text: str, lane: int) -> str:
    """Read lane ``lane`` of v0 at the start of the ``if`` body (where, in the original,
    lanes 0 and 1 still hold the spilled EXEC) and xor it into the stored value."""
    text, n1 = re.subn(r"(\ts_cbranch_execz \S+\n)", rf"\1\tv_readlane_b32 s14, v0, {lane}\n",
                       text, count=1)
    text, n2 = re.subn(r"(\tglobal_store_dword v\[0:1\], v2, off\n)",
                       r"\tv_xor_b32_e32 v2, s14, v2\n\1", text, count=1)
    assert n1 == n2 == 1
    return text


def _write(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


# ---------------------------------------------------------------------------------------
# The reported case: a correct pass output.

def test_promoted_spill_lanes_are_accepted(promoted):
    _, cand, _ = promoted
    v = verify(str(EXAMPLE), str(cand), harness=HARNESS, level="all", trials=3)
    assert v.status != "rejected-counterexample", v.text()
    assert v.accepted, v.text()
    assert v.layers.get("z3") == "pass", v.text()


def test_window_alone_is_unconfirmed_and_says_why(promoted):
    o_text, _, c_text = promoted
    v = check_kernels(parse_asm(o_text, "o.s"), parse_asm(c_text, "c.s"), relational=False)
    assert v.outcome == "unknown", v.text()
    ev = [e for e in v.evidence if e.kind == "unconfirmed-counterexample"]
    assert ev and "v0" in ev[0].message and "observable liveness" in ev[0].message, v.text()


# ---------------------------------------------------------------------------------------
# Adversarial: the promoted lanes do reach memory.

@pytest.mark.parametrize("lane", [0, 1])
def test_promoted_lane_read_into_the_output_is_rejected(promoted, tmp_path, lane):
    o_text, _, c_text = promoted
    o = _write(tmp_path, "o.s", _leak(o_text, lane))
    c = _write(tmp_path, "c.s", _leak(c_text, lane))
    v = verify(o, c, harness=HARNESS, level="all", trials=3)
    assert v.outcome == "rejected", v.text()
    # the window's counterexample is confirmed in exactly the lane that is read
    k = check_kernels(parse_asm(_leak(o_text, lane), "o.s"),
                      parse_asm(_leak(c_text, lane), "c.s"), relational=True)
    assert k.status == "rejected-counterexample", k.text()
    assert k.evidence[0].data["counterexample"]["inputs"].get("lane") == lane, k.text()
    # and differential testing alone sees it too
    d = verify(o, c, harness=HARNESS, level="diff", trials=2)
    assert d.outcome == "rejected", d.text()


def test_unpromoted_lane_read_into_the_output_is_not_rejected(promoted, tmp_path):
    # lane 2 of v0 is the same in both kernels: the difference in lanes 0 and 1 is dead
    o_text, _, c_text = promoted
    v = verify(_write(tmp_path, "o.s", _leak(o_text, 2)), _write(tmp_path, "c.s", _leak(c_text, 2)),
               harness=HARNESS, level="all", trials=3)
    assert v.outcome != "rejected", v.text()


def test_stale_lanes_restoring_exec_before_s_endpgm_are_not_observable(promoted, tmp_path):
    # The candidate's last block reads the promoted (now stale) lanes back, as the original
    # does, but only to restore EXEC right before s_endpgm: nothing observes EXEC there.
    o_text, _, c_text = promoted
    stale = c_text.replace("\ts_mov_b32 s0, s10\n\ts_mov_b32 s1, s11\n",
                           "\tv_readlane_b32 s0, v0, 0\n\tv_readlane_b32 s1, v0, 1\n")
    assert stale != c_text
    v = verify(str(EXAMPLE), _write(tmp_path, "c.s", stale), harness=HARNESS, level="all",
               trials=3)
    assert v.status != "rejected-counterexample", v.text()


# ---------------------------------------------------------------------------------------
# The analysis on small kernels.

def _obs(body: str):
    m = parse_asm(f".text\nk:\n{body}", "k.s")
    k = m.kernels[0]
    cfg = AnalysisManager(m).get(CFG, k)
    return k, observable_liveness(k, cfg)


def _before(obs, k, text: str) -> dict:
    for bi, b in enumerate(k.blocks):
        for ii, inst in enumerate(b.instructions):
            if inst.text().startswith(text):
                return obs.live_before(bi, ii)
    raise AssertionError(text)


def test_readlane_with_a_constant_lane_observes_one_lane():
    k, obs = _obs("""
  v_writelane_b32 v0, s4, 3
  v_writelane_b32 v0, s5, 5
  s_nop 0
  v_readlane_b32 s6, v0, 5
  v_mov_b32_e32 v1, s6
  global_store_dword v[2:3], v1, off
  s_endpgm
""")
    assert _before(obs, k, "s_nop")[("v", 0)] == frozenset({5})
    # the writelane of lane 5 kills it; lane 3 is never read: v0 dead before both
    assert ("v", 0) not in _before(obs, k, "v_writelane_b32 v0, s5")
    assert ("s", 4) not in _before(obs, k, "v_writelane_b32 v0, s4")
    assert _before(obs, k, "v_writelane_b32 v0, s5")[("s", 5)] == ALL


def test_lane_select_in_a_register_observes_every_lane():
    k, obs = _obs("""
  s_nop 0
  v_readlane_b32 s6, v0, s7
  v_mov_b32_e32 v1, s6
  global_store_dword v[2:3], v1, off
  s_endpgm
""")
    assert _before(obs, k, "s_nop")[("v", 0)] == ALL


def test_copy_chain_ending_unread_is_not_observable():
    k, obs = _obs("""
  s_nop 0
  v_accvgpr_write_b32 a0, v0
  v_accvgpr_read_b32 v4, a0
  v_add_u32_e32 v5, v4, v1
  s_mov_b64 exec, s[0:1]
  s_endpgm
""")
    live = _before(obs, k, "s_nop")
    assert ("v", 0) not in live and ("v", 1) not in live and ("a", 0) not in live


def test_loads_branches_and_stores_are_roots():
    k, obs = _obs("""
  s_nop 0
  global_load_dword v4, v[6:7], off
  s_cmp_eq_u32 s8, 0
  s_cbranch_scc1 .L1
  global_store_dword v[2:3], v1, off
.L1:
  s_endpgm
""")
    live = _before(obs, k, "s_nop")
    for u in [("v", 6), ("v", 7), ("s", 8), ("v", 1), ("v", 2), ("v", 3)]:
        assert u in live, u
    assert ("v", 4) not in live


def test_a_vgpr_write_under_the_same_exec_hides_older_lanes_but_not_across_blocks():
    k, obs = _obs("""
  s_nop 0
  v_mov_b32_e32 v1, 7
  global_store_dword v[2:3], v1, off
  s_cbranch_execz .L1
  s_nop 1
  v_mov_b32_e32 v4, 1
.L1:
  global_store_dword v[2:3], v4, off
  s_endpgm
""")
    # v1 is rewritten under the same EXEC before the store reads it
    assert ("v", 1) not in _before(obs, k, "s_nop 0")
    # v4's write in the other block may leave lanes unwritten: v4 live on entry
    assert _before(obs, k, "s_nop 0")[("v", 4)] == ALL


def test_loop_reaches_a_fixpoint():
    k, obs = _obs("""
  s_mov_b32 s2, 0
.L0:
  v_readlane_b32 s3, v0, 2
  v_writelane_b32 v0, s3, 4
  s_add_u32 s2, s2, 1
  s_cmp_lt_u32 s2, s3
  s_cbranch_scc1 .L0
  v_readlane_b32 s4, v0, 4
  v_mov_b32_e32 v1, s4
  global_store_dword v[2:3], v1, off
  s_endpgm
""")
    # lane 4 is written in the loop before every read of it; lane 2 is read each round
    assert _before(obs, k, "s_mov_b32 s2, 0")[("v", 0)] == frozenset({2})


def test_unknown_instruction_gives_up():
    m = parse_asm(".text\nk:\n  s_movrels_b32 s0, s1\n  s_endpgm\n", "k.s")
    k = m.kernels[0]
    assert observable_liveness(k, AnalysisManager(m).get(CFG, k)) is None
