"""sched: list scheduling inside blocks (exact output).

The hazard analysis validates every reordering in real runs; these tests give
the pass a stand-in analysis that reports no hazards, so that the scheduling
decisions themselves are checked (and check that without a hazard analysis
the pass leaves code alone)."""

from __future__ import annotations

import textwrap

from asmevo.analysis import Analysis
from asmevo.frontend.asm_parser import parse_asm
from asmevo.passes import Instrumentation, PassManager, parse_pipeline
from asmevo.passes.manager import AnalysisManager
from passes_helpers import code, norm


class NoHazards(Analysis):
    """Stand-in hazard analysis: no violations."""

    name = "hazards"

    def __init__(self, kernel, manager=None):
        super().__init__(kernel, manager)
        self.violations = []


def run(asm: str, pipeline: str, hazards=NoHazards):
    m = parse_asm(textwrap.dedent(asm).strip() + "\n", "t.s")
    am = AnalysisManager(m)
    if hazards is not None:
        am.register("hazards", hazards)
    inst = Instrumentation()
    PassManager(parse_pipeline(pipeline), instrumentation=inst).run(m, am)
    return code(m), inst


SRC = """
    k:
    v_add_u32_e32 v1, v0, v0
    v_add_u32_e32 v2, v1, v0
    global_load_dword v3, v[4:5], off
    s_waitcnt vmcnt(0)
    v_add_u32_e32 v6, v2, v2
    v_add_u32_e32 v7, v3, v3
    global_store_dword v[4:5], v7, off
    global_store_dword v[4:5], v6, off offset:4
    s_endpgm
"""


def test_loads_rise_and_waits_sink():
    out, inst = run(SRC, "sched")
    assert out == norm("""
        global_load_dword v3, v[4:5], off
        v_add_u32_e32 v1, v0, v0
        v_add_u32_e32 v2, v1, v0
        v_add_u32_e32 v6, v2, v2
        s_waitcnt vmcnt(0)
        v_add_u32_e32 v7, v3, v3
        global_store_dword v[4:5], v7, off
        global_store_dword v[4:5], v6, off offset:4
        s_endpgm
    """)
    assert inst.stats["sched"]["moved"] > 0


class MissingHazards(Analysis):
    """Stands for a build without asmevo.analysis.hazards."""

    name = "hazards"

    def __init__(self, kernel, manager=None):
        raise ImportError("no hazard analysis")


def test_no_hazard_analysis_means_no_change():
    out, inst = run(SRC, "sched", hazards=MissingHazards)
    assert out == norm(SRC.replace("k:\n", ""))
    assert inst.stats["sched"]["skipped-no-hazard-analysis"] == 1


def test_real_hazard_analysis_rejects_a_reorder_that_opens_a_hazard():
    # v_readfirstlane writes s0; the VALU reader needs 2 wait states (row 13). Here the
    # v_adds between them provide them; sched must not hoist the reader's neighbours
    # away so that fewer remain (it may reorder only when the hazard analysis agrees)
    src = """
        k:
        v_readfirstlane_b32 s0, v1
        global_load_dword v3, v[4:5], off
        v_add_u32_e32 v6, v7, v7
        v_add_u32_e32 v2, s0, v2
        s_waitcnt vmcnt(0)
        global_store_dword v[4:5], v3, off
        global_store_dword v[4:5], v2, off offset:4
        global_store_dword v[4:5], v6, off offset:8
        s_endpgm
    """
    from asmevo.analysis.hazards import HazardAnalysis
    out, _ = run(src, "sched", hazards=HazardAnalysis)
    lines = out.splitlines()
    assert lines.index("v_add_u32_e32 v2, s0, v2") - lines.index("v_readfirstlane_b32 s0, v1") >= 3


def test_dependences_memory_order_and_anchors_are_kept():
    src = """
        k:
        v_mov_b32_e32 v3, 1
        global_store_dword v[4:5], v3, off
        global_load_dword v6, v[4:5], off
        s_nop 1
        v_add_u32_e32 v1, v0, v0
        global_load_dword v7, v[8:9], off
        s_waitcnt vmcnt(0)
        v_add_u32_e32 v2, v6, v7
        global_store_dword v[4:5], v2, off
        s_endpgm
    """
    out, _ = run(src, "sched")
    # the load after the store stays after it (memory order); nothing crosses s_nop;
    # v_add v2 reads both loads so stays after the wait
    assert out == norm("""
        v_mov_b32_e32 v3, 1
        global_store_dword v[4:5], v3, off
        global_load_dword v6, v[4:5], off
        s_nop 1
        global_load_dword v7, v[8:9], off
        v_add_u32_e32 v1, v0, v0
        s_waitcnt vmcnt(0)
        v_add_u32_e32 v2, v6, v7
        global_store_dword v[4:5], v2, off
        s_endpgm
    """)


def test_max_stall_zero_keeps_waits_in_place():
    out, _ = run(SRC, "sched<max-stall=0>")
    lines = out.splitlines()
    # the wait may not sink below the instruction that followed it
    assert lines.index("s_waitcnt vmcnt(0)") < lines.index("v_add_u32_e32 v6, v2, v2")
    assert lines[0] == "global_load_dword v3, v[4:5], off"
