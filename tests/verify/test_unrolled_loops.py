"""The verifier proves a loop-pipelined candidate against K0 through the loop normalisation
(asmevo.ir.unroll), and never accepts a wrong unrolling.

Positive: ``loop-pipeline`` on matvec and sgemm_naive is ``accepted`` at the default level
(relational proof against K0 with the loop unrolled twice, evidence says so) and the timing
model's cycles drop.  Negative (each must be rejected or unknown, never accepted): the
normalisation with the exit branch not inverted, with a ``C`` that holds the SCC write the
branch reads, the second copy's loads hoisted without renaming (clobbering what the first
copy's ``C`` reads), and a wait that is too weak."""

from __future__ import annotations

import pytest

from asmevo.ir.instruction import Instruction
from asmevo.ir.module import BasicBlock, Kernel
from asmevo.ir.operands import Label
from asmevo.ir.unroll import INVERSE, self_loops, split_loop, unroll_self_loop

pytestmark = pytest.mark.corpus


def _load(corpus_dir, name):
    from asmevo.frontend.loader import load
    return load(str(corpus_dir / f"{name}.co"))


def _with_kernel(m, kernel):
    import copy
    m2 = copy.copy(m)
    m2.items = [kernel if getattr(it, "name", None) == kernel.name and isinstance(it, Kernel)
                else it for it in m.items]
    return m2


def _build(m, tmp_path, tag):
    """Write ``m`` as a code object and load it back (what the gate does)."""
    from asmevo.backend.rebuild import write_code_object
    from asmevo.frontend.loader import load
    p = tmp_path / f"{tag}.co"
    write_code_object(m, str(p))
    return load(str(p))


def _verify(corpus_dir, name, cand, **kw):
    from asmevo.verify import verify
    return verify(str(corpus_dir / f"{name}.co"), cand,
                  harness=str(corpus_dir / "manifest.json"), entry=name, **kw)


def _pipelined(corpus_dir, name):
    from asmevo.passes import run_pipeline
    m = _load(corpus_dir, name)
    inst = run_pipeline(m, "loop-pipeline", kernels=[name])
    st = inst.stats.get("loop-pipeline", {})
    assert st.get("pipelined") == 1, st
    return m


def _cycles(module, name, corpus_dir):
    from asmevo.perf import estimate
    return estimate(module, name, harness=str(corpus_dir / "manifest.json"),
                    entry=name).kernel(name).cycles


@pytest.mark.parametrize("name", ["matvec", "sgemm_naive"])
def test_pipelined_loop_is_accepted_and_faster(corpus_dir, tmp_path, name):
    k0 = _load(corpus_dir, name)
    cand = _build(_pipelined(corpus_dir, name), tmp_path, name)
    assert len(cand.kernel(name).blocks) == len(k0.kernel(name).blocks) + 2
    v = _verify(corpus_dir, name, cand)
    assert v.status.value == "accepted", v.message
    ev = [e for e in v.evidence if e.kind == "relational-proof"]
    assert ev and "unrolled twice (ir/unroll.py)" in ev[0].message
    before, after = _cycles(k0, name, corpus_dir), _cycles(cand, name, corpus_dir)
    print(f"{name}: {before:.0f} -> {after:.0f} cycles (timing model), {before / after:.2f}x")
    assert after < 0.85 * before


# -- negative: wrong unrollings ----------------------------------------------------------------

def _manual_unroll(k, bi, np_, invert=True):
    """The normalisation's construction with a forced split P = body[:np_] (tests only: the
    real one chooses the split and refuses unsafe ones)."""
    blocks = [BasicBlock(b.label, list(b.instructions), list(b.directives)) for b in k.blocks]
    b = k.blocks[bi]
    body, br = b.instructions[:-1], b.instructions[-1]
    P, C = body[:np_], body[np_:]

    def dup(i):
        return Instruction(i.opcode, i.operands, i.modifiers)
    if blocks[bi + 1].label is None:
        blocks[bi + 1].label = ".Ltest_next"
    e_label = ".Ltest_exit"
    h = BasicBlock(b.label, list(P) + [br.evolve(opcode=INVERSE[br.opcode] if invert else br.opcode,
                                                 operands=[Label(e_label)])], list(b.directives))
    m = BasicBlock(None, [dup(i) for i in C + P + C] + [dup(br)])
    e = BasicBlock(e_label, [dup(i) for i in C] + [Instruction("s_branch", [Label(blocks[bi + 1].label)])])
    blocks[bi] = h
    blocks.insert(bi + 1, m)
    blocks.append(e)
    return Kernel(k.name, blocks, k.is_kernel, k.descriptor, k.metadata, k.address)


def _loop(corpus_dir, name):
    """``(module, kernel, loop block index, len(P), len(C))`` of ``name``'s first self-loop."""
    m = _load(corpus_dir, name)
    k = m.kernel(name)
    bi = self_loops(k)[0]
    return (m, k, bi, *split_loop(k, bi))


def _not_accepted(v):
    assert v.status.value != "accepted", v.message
    assert v.outcome in ("rejected", "unknown")


def test_exit_branch_not_inverted_is_never_accepted(corpus_dir, tmp_path):
    name = "matvec"
    m, k, bi, np_, _ = _loop(corpus_dir, name)
    bad = _manual_unroll(k, bi, np_, invert=False)
    cand = _build(_with_kernel(m, bad), tmp_path, "noinvert")
    v = _verify(corpus_dir, name, cand)
    _not_accepted(v)
    assert v.outcome == "rejected", v.message   # the loop runs a different number of times


def test_C_holding_the_scc_write_is_never_accepted(corpus_dir, tmp_path):
    name = "matvec"
    m, k, bi, np_, _ = _loop(corpus_dir, name)
    body = k.blocks[bi].instructions[:-1]
    assert body[np_ - 1].opcode == "s_cmp_eq_u32"
    bad = _manual_unroll(k, bi, np_ - 1)       # s_cmp sunk below the exit test
    cand = _build(_with_kernel(m, bad), tmp_path, "sccsunk")
    _not_accepted(_verify(corpus_dir, name, cand))
    # and the relational proof alone against the true normalisation does not prove it
    from asmevo.verify.relational import prove_relational
    nk = unroll_self_loop(k, bi, taken_labels=cand.kernel(name).labels())
    assert not prove_relational(nk, cand.kernel(name)).equivalent


def _unrenamed(corpus_dir, name, c1_wait, lead_wait=None):
    """matvec's pipelined M with the second copy's loads hoisted but nothing renamed: the
    first copy's C then reads v1/s0 after the second copy overwrote them.  ``lead_wait``:
    a wait put first in M (then every wait the static layer asks for is there, and only
    the values are wrong)."""
    from asmevo.frontend.asm_parser import parse_instruction
    m, k, bi, np_, nc = _loop(corpus_dir, name)
    nk = unroll_self_loop(k, bi)
    M = nk.blocks[bi + 1]
    c1, p2, c2, br = M.instructions[:nc], M.instructions[nc:nc + np_], \
        M.instructions[nc + np_:-1], M.instructions[-1]
    c1 = [parse_instruction(c1_wait) if i.opcode == "s_waitcnt" else i for i in c1]
    lead = [parse_instruction(lead_wait)] if lead_wait else []
    M.instructions = lead + list(p2) + c1 + list(c2) + [br]
    return m, nk


@pytest.mark.parametrize("wait", ["s_waitcnt vmcnt(0) lgkmcnt(0)", "s_waitcnt vmcnt(1) lgkmcnt(0)"])
def test_hoisted_load_without_renaming_is_never_accepted(corpus_dir, tmp_path, wait):
    name = "matvec"
    m, nk = _unrenamed(corpus_dir, name, wait)
    cand = _build(_with_kernel(m, nk), tmp_path, "norename")
    v = _verify(corpus_dir, name, cand)
    _not_accepted(v)
    assert v.outcome == "rejected", v.message


def test_hoisted_load_without_renaming_passes_static_but_is_never_accepted(corpus_dir, tmp_path):
    """With every wait in place (one before the hoisted loads), the static layer has nothing
    to say: the relational proof must fail and differential testing must see the clobber."""
    from asmevo.verify.relational import prove_relational
    name = "matvec"
    m, nk = _unrenamed(corpus_dir, name, "s_waitcnt vmcnt(0) lgkmcnt(0)",
                       lead_wait="s_waitcnt vmcnt(0) lgkmcnt(0)")
    cand = _build(_with_kernel(m, nk), tmp_path, "norename2")
    k = _load(corpus_dir, name).kernel(name)
    ref = unroll_self_loop(k, self_loops(k)[0], taken_labels=cand.kernel(name).labels())
    assert not prove_relational(ref, cand.kernel(name)).equivalent
    v = _verify(corpus_dir, name, cand)
    _not_accepted(v)
    assert v.status.value == "rejected-output-mismatch", v.message


@pytest.mark.parametrize("weak", ["s_waitcnt vmcnt(2) lgkmcnt(0)", "s_waitcnt vmcnt(1)",
                                  "s_waitcnt lgkmcnt(0)"])
def test_too_weak_wait_is_never_accepted(corpus_dir, tmp_path, weak):
    from asmevo.frontend.asm_parser import parse_instruction
    name = "matvec"
    m = _pipelined(corpus_dir, name)
    k = m.kernel(name)
    bi = self_loops(_load(corpus_dir, name).kernel(name))[0]
    M = k.blocks[bi + 1]
    waits = [j for j, i in enumerate(M.instructions) if i.opcode == "s_waitcnt"]
    assert M.instructions[waits[0]].text() == "s_waitcnt vmcnt(1) lgkmcnt(0)"
    M.instructions[waits[0]] = parse_instruction(weak)
    cand = _build(m, tmp_path, "weak")
    v = _verify(corpus_dir, name, cand)
    _not_accepted(v)
    assert v.status.value == "rejected-waitcnt", v.message


def test_structure_that_matches_no_normalisation_stays_unknown(corpus_dir, tmp_path):
    """Two extra blocks that are not the normalisation's shape: no proof is claimed."""
    from asmevo.frontend.asm_parser import parse_instruction
    name = "matvec"
    m = _load(corpus_dir, name)
    k = m.kernel(name)
    bi = self_loops(k)[0]
    nk = unroll_self_loop(k, bi)
    # M falls through to a new block that only branches on: the CFG no longer corresponds
    nk.blocks.insert(bi + 2, BasicBlock(None, [parse_instruction("s_nop 0")]))
    cand = _build(_with_kernel(m, nk), tmp_path, "shape")
    v = _verify(corpus_dir, name, cand)
    _not_accepted(v)


# -- loads the original never makes (adversarial round on the normalisation, 2026-12-01) -----
# E (the exit after the FIRST copy) runs only for odd trip counts, which the matvec harness
# (cols = 96) never launches, so the proof alone judges it.  A load whose value is unused
# changes no register or memory write, yet may fault where K0 does not: the candidate's
# loads must each be covered by a load of K0 (equiv.read_coverage).

_PREFETCH = "global_load_dword v6, v[2:3], off"


def _with_extra_load(corpus_dir, name, where, text):
    from asmevo.frontend.asm_parser import parse_instruction
    m = _pipelined(corpus_dir, name)
    k = m.kernel(name)
    bi = self_loops(_load(corpus_dir, name).kernel(name))[0]
    if where == "H-before-exit":      # the classic pipelining mistake: load the next element
        H = k.blocks[bi]              # before the exit test
        H.instructions.insert(len(H.instructions) - 1, parse_instruction(text))
    else:                             # in E, with a wait (the static memory-order rule)
        E = k.blocks[-1]
        E.instructions[:0] = [parse_instruction(text), parse_instruction("s_waitcnt vmcnt(0)")]
    return m


@pytest.mark.parametrize("where,text", [
    ("H-before-exit", _PREFETCH),
    ("E", _PREFETCH),
    ("E", "global_load_dword v6, v7, s[0:1] offset:-4"),
])
def test_a_load_the_original_never_makes_is_never_accepted(corpus_dir, tmp_path, where, text):
    name = "matvec"
    cand = _build(_with_extra_load(corpus_dir, name, where, text), tmp_path, "extra_load")
    v = _verify(corpus_dir, name, cand)
    _not_accepted(v)
    assert "read#" in v.message or v.outcome == "rejected", v.message
