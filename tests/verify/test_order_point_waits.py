"""Soundness (issue 14): a wait the original needs before a memory-order point must stay
before that same point in the candidate.

The static layer used to match the original's waits to the candidate's anywhere in a changed
window, so moving ``s_waitcnt lgkmcnt(0)`` from before ``s_barrier`` to just after it (a
``ds_write`` still in flight when other waves pass the barrier and read that LDS) was
``accepted``, while deleting the same wait was ``rejected-waitcnt``.  These tests use real
corpus kernels (clang -O3 with ``s_barrier``, and an AITer GEMM with LDS-DMA loads).
"""

from __future__ import annotations

import copy
import re

import pytest

from asmevo.analysis import AnalysisManager
from asmevo.analysis.waitcnt import MAX, NAMES, WaitcntAnalysis
from asmevo.frontend.asm_parser import parse_asm
from asmevo.frontend.loader import load
from asmevo.verify import Status
from asmevo.verify.static import align_instructions, check_static

pytestmark = pytest.mark.corpus

BARRIER_KERNELS = ["layernorm", "row_max", "softmax_row", "scan_inclusive_i32", "transpose_lds",
                   "sgemm_tiled"]
LDS_DMA_KERNEL = "aiter/gfx942/i8gemm/I8gemm_bf16_perTokenI8_BpreShuffle_16x128.co"


def _wait_barrier_sites(kernel, module):
    """(block, index) of every ``s_waitcnt`` directly before ``s_barrier`` that the waitcnt
    model says is needed (it completes something before the barrier)."""
    w = WaitcntAnalysis(kernel, AnalysisManager(module))
    out = []
    for bi, b in enumerate(kernel.blocks):
        ins = b.instructions
        for ii in range(len(ins) - 1):
            if ins[ii].opcode == "s_waitcnt" and ins[ii + 1].opcode == "s_barrier":
                req = w.required(ins[ii])
                if any(req[NAMES[c]] < MAX[c] for c in range(3)):
                    out.append((bi, ii))
    return out


def _swap(module, kname, bi, ii):
    """A copy of ``module`` with instructions ``ii`` and ``ii+1`` of block ``bi`` swapped."""
    m = copy.deepcopy(module)
    ins = m.kernel(kname).blocks[bi].instructions
    ins[ii], ins[ii + 1] = ins[ii + 1], ins[ii]
    return m


def _delete(module, kname, bi, ii):
    m = copy.deepcopy(module)
    del m.kernel(kname).blocks[bi].instructions[ii]
    return m


@pytest.mark.parametrize("name", BARRIER_KERNELS)
def test_wait_moved_past_barrier_is_rejected_like_a_deleted_one(corpus_dir, name):
    """Every needed wait directly before an ``s_barrier``, moved to just after it: rejected
    (as deleting it is), never accepted.  The unchanged kernel stays accepted."""
    orig = load(str(corpus_dir / f"{name}.co"))
    k = orig.kernel(name)
    sites = _wait_barrier_sites(k, orig)
    assert sites, f"{name}: no needed wait before a barrier"
    assert check_static(orig, copy.deepcopy(orig)).accepted
    for bi, ii in sites:
        moved = check_static(orig, _swap(orig, name, bi, ii))
        assert moved.status is Status.REJECTED_WAITCNT, (name, bi, ii, moved.text())
        assert "s_barrier" in moved.message
        deleted = check_static(orig, _delete(orig, name, bi, ii))
        assert deleted.status is Status.REJECTED_WAITCNT, (name, bi, ii, deleted.text())


def test_layernorm_text_wait_moved_past_barrier(corpus_dir):
    """The report's form: layernorm's assembly text, the first ``s_waitcnt lgkmcnt(0)`` after
    ``ds_write_b32 v1, v4`` moved from before ``s_barrier`` to after it."""
    text = (corpus_dir / "layernorm.s").read_text()
    moved, n = re.subn(r"(\tds_write_b32 v1, v4\n)\ts_waitcnt lgkmcnt\(0\)\n\ts_barrier\n",
                       r"\1\ts_barrier\n\ts_waitcnt lgkmcnt(0)\n", text, count=1)
    assert n == 1
    v = check_static(parse_asm(text, "o.s"), parse_asm(moved, "c.s"))
    assert v.status is Status.REJECTED_WAITCNT, v.text()
    assert "ds_write_b32 v1, v4" in v.message and "s_barrier" in v.message


def test_layernorm_wait_moved_above_the_store_is_rejected(corpus_dir):
    """Moving the wait earlier, above the ``ds_write`` it completes, leaves the store in
    flight at the barrier too (the old matching accepted any wait in the window)."""
    text = (corpus_dir / "layernorm.s").read_text()
    moved, n = re.subn(r"(\tds_write_b32 v1, v4\n)\ts_waitcnt lgkmcnt\(0\)\n(\ts_barrier\n)",
                       r"\ts_waitcnt lgkmcnt(0)\n\1\2", text, count=1)
    assert n == 1
    v = check_static(parse_asm(text, "o.s"), parse_asm(moved, "c.s"))
    assert v.status is Status.REJECTED_WAITCNT, v.text()


def test_harmless_moves_near_a_barrier_stay_accepted(corpus_dir):
    """No false alarm: a nop between the wait and the barrier, and an independent VALU
    instruction moved across the barrier-wait pair, keep every store completed in time."""
    text = (corpus_dir / "layernorm.s").read_text()
    o = parse_asm(text, "o.s")
    nop, n = re.subn(r"(\tds_write_b32 v1, v4\n\ts_waitcnt lgkmcnt\(0\)\n)(\ts_barrier\n)",
                     r"\1\ts_nop 0\n\2", text, count=1)
    assert n == 1
    v = check_static(o, parse_asm(nop, "c.s"))
    assert v.accepted, v.text()


def test_lds_dma_wait_moved_past_barrier_is_rejected(corpus_dir):
    """The report's second form, at level static: ``s_waitcnt vmcnt(N)`` moved past
    ``s_barrier`` while ``buffer_load_dword ... lds`` (LDS-DMA) loads are in flight."""
    path = corpus_dir / LDS_DMA_KERNEL
    if not path.exists():
        pytest.skip("AITer corpus absent")
    orig = load(str(path))
    k = orig.kernels[0]
    sites = [(bi, ii) for bi, ii in _wait_barrier_sites(k, orig)
             if "vmcnt" in k.blocks[bi].instructions[ii].text()]
    assert sites
    bi, ii = sites[0]
    v = check_static(orig, _swap(orig, k.name, bi, ii))
    assert v.status is Status.REJECTED_WAITCNT, v.text()
    assert any(" lds" in e.message and "s_barrier" in e.message for e in v.evidence), v.text()


def test_wait_moved_past_barrier_rejected_at_level_all(corpus_dir, tmp_path):
    """End to end, as reported (``--level all`` with the manifest harness): rejected."""
    from asmevo.verify import verify
    from asmevo.verify.diff import load_harness
    text = (corpus_dir / "layernorm.s").read_text()
    moved, n = re.subn(r"(\tds_write_b32 v1, v4\n)\ts_waitcnt lgkmcnt\(0\)\n\ts_barrier\n",
                       r"\1\ts_barrier\n\ts_waitcnt lgkmcnt(0)\n", text, count=1)
    assert n == 1
    p = tmp_path / "moved.s"
    p.write_text(moved)
    h = load_harness(str(corpus_dir / "manifest.json"), "layernorm")
    v = verify(str(corpus_dir / "layernorm.co"), str(p), harness=h, level="all", trials=1)
    assert v.status is Status.REJECTED_WAITCNT, v.text()


def test_alignment_pairs_a_moved_order_point_with_itself():
    """The alignment behind the check: an instruction swapped with its neighbour, and one
    whose operands were rewritten, keep their counterparts."""
    a = parse_asm("k:\nds_write_b32 v1, v4\ns_waitcnt lgkmcnt(0)\ns_barrier\n"
                  "ds_read_b32 v2, v1\ns_endpgm\n", "a.s").kernels[0]
    b = parse_asm("k:\nds_write_b32 v1, v5\ns_barrier\ns_waitcnt lgkmcnt(0)\n"
                  "ds_read_b32 v2, v1\ns_endpgm\n", "b.s").kernels[0]
    m = align_instructions(a, b)
    ia, ib = list(a.instructions()), list(b.instructions())
    assert m[id(ib[0])] is ia[0]      # rewritten operand: paired by mnemonic
    assert m[id(ib[1])] is ia[2]      # the barrier
    assert m[id(ib[2])] is ia[1]      # the wait
    assert m[id(ib[3])] is ia[3]


def test_loop_carried_store_before_barrier(tmp_path):
    """A store at the end of a loop body, completed by a wait at the top of the next iteration
    before the barrier: moving that wait past the barrier is rejected too (the store reaches
    the barrier only through the back edge, in both programs)."""
    head = ("k:\ns_mov_b32 s0, 4\n.Lloop:\n")
    body = "ds_write_b32 v1, v4\ns_sub_u32 s0, s0, 1\ns_cmp_lg_u32 s0, 0\ns_cbranch_scc1 .Lloop\n"
    a = parse_asm(head + "s_waitcnt lgkmcnt(0)\ns_barrier\nds_read_b32 v2, v1\n"
                  "s_waitcnt lgkmcnt(0)\n" + body + "s_endpgm\n", "a.s")
    b = parse_asm(head + "s_barrier\ns_waitcnt lgkmcnt(0)\nds_read_b32 v2, v1\n"
                  "s_waitcnt lgkmcnt(0)\n" + body + "s_endpgm\n", "b.s")
    from asmevo.verify.static import _order_point_waits
    ka, kb = a.kernels[0], b.kernels[0]
    viol, why = _order_point_waits(a, ka, b, kb)
    assert why is None
    assert viol and viol[0]["instruction"] == "s_barrier", viol
