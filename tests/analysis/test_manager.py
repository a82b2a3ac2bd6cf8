"""AnalysisManager: caching per (analysis, kernel), invalidation with preserved analyses, names."""

import pytest

from asmevo.analysis import ANALYSES, analyze_all
from asmevo.analysis.cfg import CFG
from asmevo.analysis.liveness import Liveness
from asmevo.analysis.waitcnt import WaitcntAnalysis

SRC = """
k:
    global_load_dword v1, v[2:3], off
    s_waitcnt vmcnt(0)
    v_mov_b32_e32 v4, v1
    s_endpgm
"""


def test_cache_and_invalidate(kern):
    k, am = kern(SRC)
    cfg = am.get(CFG, k)
    lv = am.get(Liveness, k)
    assert am.get(CFG, k) is cfg and lv.cfg is cfg          # dependency served from the cache
    assert am.get("liveness", k) is lv                       # names from ANALYSES
    am.invalidate(k, preserved={CFG})
    assert am.cached(CFG, k) is cfg and am.cached(Liveness, k) is None
    assert am.get(Liveness, k) is not lv
    am.invalidate(k)
    assert am.cached(CFG, k) is None
    with pytest.raises(KeyError):
        am.get("nope", k)


def test_edit_then_recompute(kern):
    k, am = kern(SRC)
    assert am.get(WaitcntAnalysis, k).violations == []
    wait = k.blocks[0].instructions[1]
    k.remove(wait)
    am.invalidate(k)
    v = am.get(WaitcntAnalysis, k).violations
    assert [(x.unit, x.counter, x.needed) for x in v] == [(("v", 1), "vmcnt", 0)]


def test_registry_and_analyze_all(kern):
    k, am = kern(SRC)
    assert set(ANALYSES) == {"cfg", "liveness", "liveness-may", "waitcnt", "regbudget", "hazards"}
    res = analyze_all(k, am.module)
    assert set(res) == {"cfg", "liveness", "waitcnt", "regs", "hazards"}
    assert res["hazards"].violations == [] and res["waitcnt"].violations == []


def test_analysis_without_manager(kern):
    k, _ = kern(SRC)
    assert Liveness(k).cfg.blocks[0] is k.blocks[0]
