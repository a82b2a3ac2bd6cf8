"""Soundness (issue 14): words LLVM cannot decode for gfx942 (kept as ``.long`` by the
disassembler) may be any instruction.  The analyses treat them so, and a verdict that
depends on them is ``unknown``, never ``accepted``.

Before the fix an undecodable word was an instruction with no registers and no counters:
the ``s_waitcnt lgkmcnt(0)`` right after one was "removable" and removing it was accepted.
"""

from __future__ import annotations

import re

import pytest

from asmevo.analysis import AnalysisManager
from asmevo.analysis.hazards import UNDECODABLE_WAIT_STATES, HazardAnalysis
from asmevo.analysis.liveness import Liveness
from asmevo.analysis.waitcnt import WaitcntAnalysis, is_undecodable
from asmevo.backend.assemble import assemble
from asmevo.frontend.loader import load
from asmevo.verify import Status
from asmevo.verify.static import check_static

#: 0xffffffff does not decode for gfx942 (llvm-objdump prints ``.long 0xffffffff``)
WORD = ".long 0xffffffff"

KERNEL = """\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
\t.text
\t.globl k
\t.p2align 8
\t.type k,@function
k:
{body}\ts_endpgm
\t.section .rodata,"a",@progbits
\t.p2align 6, 0x0
\t.amdhsa_kernel k
\t.amdhsa_user_sgpr_kernarg_segment_ptr 1
\t.amdhsa_next_free_vgpr 8
\t.amdhsa_next_free_sgpr 8
\t.amdhsa_accum_offset 4
\t.end_amdhsa_kernel
"""


def _co(tmp_path, name: str, body: str):
    """Assemble and link ``body`` as kernel ``k``; load it back (disassembled)."""
    p = tmp_path / f"{name}.co"
    assemble(KERNEL.format(body=body), str(p))
    return load(str(p))


def _small(tmp_path, with_wait: bool):
    body = f"\tv_mov_b32_e32 v1, 0\n\t{WORD}\n"
    if with_wait:
        body += "\ts_waitcnt lgkmcnt(0)\n"
    body += "\tv_mov_b32_e32 v2, s0\n"
    return _co(tmp_path, f"small{int(with_wait)}", body)


def test_the_word_is_loaded_as_undecodable(tmp_path):
    m = _small(tmp_path, True)
    words = [i for i in m.kernel("k").instructions() if is_undecodable(i)]
    assert len(words) == 1 and words[0].opcode == ".long"


def test_wait_after_an_undecodable_word_is_not_removable(tmp_path):
    """It may be a load whose result the next instruction reads: the wait is required."""
    m = _small(tmp_path, True)
    k = m.kernel("k")
    w = WaitcntAnalysis(k, AnalysisManager(m))
    wait = next(i for i in k.instructions() if i.opcode == "s_waitcnt")
    assert w.required(wait)["lgkmcnt"] == 0
    entry = next(x for x in w.to_json()["waitcnts"])
    assert not entry["removable"]
    assert w.violations == []  # nothing is known to be wrong


def test_wait_before_an_undecodable_word_is_kept(tmp_path):
    """It may read anything or be a memory-order point: a wait completing a load before it
    is needed even when nothing else reads the load's result."""
    body = f"\ts_load_dword s4, s[0:1], 0x0\n\ts_waitcnt lgkmcnt(0)\n\t{WORD}\n"
    m = _co(tmp_path, "before", body)
    k = m.kernel("k")
    wait = next(i for i in k.instructions() if i.opcode == "s_waitcnt")
    assert WaitcntAnalysis(k, AnalysisManager(m)).required(wait)["lgkmcnt"] == 0


def test_every_register_is_live_across_an_undecodable_word(tmp_path):
    m = _small(tmp_path, True)
    k = m.kernel("k")
    live = Liveness(k, AnalysisManager(m))
    word = next(i for i in k.instructions() if is_undecodable(i))
    before = live.live_before(word)
    assert ("v", 1) in before and ("v", 2) in before  # v1 written just before, never read


def test_hazards_next_to_an_undecodable_word_need_the_maximum(tmp_path):
    m = _small(tmp_path, True)
    k = m.kernel("k")
    h = HazardAnalysis(k, AnalysisManager(m))
    insts = list(k.instructions())
    word = next(i for i in insts if is_undecodable(i))
    assert h.undecodable
    assert h.required_nops(word) == UNDECODABLE_WAIT_STATES          # as a consumer
    assert h.required_nops(insts[insts.index(word) + 1]) == UNDECODABLE_WAIT_STATES  # producer


def test_removing_the_wait_after_an_undecodable_word_is_not_accepted(tmp_path):
    orig, cand = _small(tmp_path, True), _small(tmp_path, False)
    v = check_static(orig, cand)
    assert v.status is Status.UNKNOWN_UNSUPPORTED, v.text()
    assert "undecodable" in v.message
    # an unchanged kernel with such a word is not affected
    assert check_static(orig, _small(tmp_path, True)).accepted


def _layernorm_variants(corpus_dir):
    """layernorm.s with an undecodable word and a wait after it before the first barrier
    (a wait that only the word can need), and the same with that wait removed."""
    text = (corpus_dir / "layernorm.s").read_text()
    pat = r"(\tds_write_b32 v1, v4\n\ts_waitcnt lgkmcnt\(0\)\n)(\ts_barrier\n)"
    orig, n = re.subn(pat, r"\1\t" + WORD + r"\n\ts_waitcnt lgkmcnt(0)\n\2", text, count=1)
    assert n == 1
    cand, n = re.subn(pat, r"\1\t" + WORD + r"\n\2", text, count=1)
    assert n == 1
    return orig, cand


@pytest.mark.corpus
def test_corpus_kernel_wait_after_undecodable_word_static(corpus_dir, tmp_path):
    """A real kernel (layernorm, assembled): the wait after the word is required by the
    model, and removing it is unknown at level static, never accepted."""
    orig_t, cand_t = _layernorm_variants(corpus_dir)
    paths = []
    for nm, t in (("o", orig_t), ("c", cand_t)):
        p = tmp_path / f"{nm}.co"
        assemble(t, str(p))
        paths.append(str(p))
    o, c = load(paths[0]), load(paths[1])
    k = o.kernel("layernorm")
    insts = list(k.instructions())
    word = next(i for i in insts if is_undecodable(i))
    wait = insts[insts.index(word) + 1]
    assert wait.opcode == "s_waitcnt"
    assert WaitcntAnalysis(k, AnalysisManager(o)).required(wait)["lgkmcnt"] == 0
    v = check_static(o, c)
    assert v.status is Status.UNKNOWN_UNSUPPORTED, v.text()


@pytest.mark.corpus
def test_corpus_kernel_wait_after_undecodable_word_verify(corpus_dir, tmp_path):
    """End to end through ``asmevo verify`` on assembly text (assembled first)."""
    from asmevo.verify import verify
    orig_t, cand_t = _layernorm_variants(corpus_dir)
    po, pc = tmp_path / "o.s", tmp_path / "c.s"
    po.write_text(orig_t)
    pc.write_text(cand_t)
    v = verify(str(po), str(pc), level="static")
    assert v.outcome == "unknown", v.text()
    v = verify(str(po), str(pc), level="z3")
    assert v.outcome == "unknown", v.text()
