"""What the gate builds for a move is the move's code.

Found while measuring the rename/widen/interleave moves: :func:`asmevo.evolve.gate.readdress`
gives moved instructions (same bytes, new position) their new address so K0 can be patched
in place, but :func:`asmevo.backend.patch.patch_in_place` writes only instructions without
an encoding, so a moved instruction's bytes are never written: K0's bytes stay at its new
position.  A pure reordering (``swap``/``move``) then builds K0 itself, and a reordering
followed by a change in a later step builds a third program (conv2d_3x3: a ``swap`` of
``s_load_dword s2`` and ``v_mad_u64_u32``, then ``rename`` s2 -> s5, built as
``s_load_dword s2; s_load_dword s5``, rejected with a counterexample).  The verifier judges
the built bytes, so nothing wrong is accepted, but reorderings never reach the timing model,
and best.s/best.diff (printed from the blocks) need not be best.co.  Fixed: the patcher writes
every instruction's bytes at its address, moved ones included.
"""

from __future__ import annotations

import random

import pytest
from moves_helpers import KERNEL, all_indices, blocks_of, build, text

BODY = """
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_load_dwordx2 s[8:9], s[0:1], 0x10
	v_lshlrev_b32_e32 v1, 2, v0
	s_waitcnt lgkmcnt(0)
	global_load_dword v2, v1, s[4:5]
	v_mov_b32_e32 v3, 7
	v_mov_b32_e32 v4, 9
	s_waitcnt vmcnt(0)
	v_add_u32_e32 v3, v3, v2
	v_add_u32_e32 v3, v3, v4
	global_store_dword v1, v3, s[8:9]
	s_endpgm
"""


def _built(co, h, blocks):
    from asmevo.evolve.gate import GateContext
    g = GateContext({"k0": str(co), "harness": str(h), "kernel": KERNEL})
    try:
        m, how, _ = g.build_image(blocks)
        return [x.text() for b in m.kernel(KERNEL).blocks for x in b.instructions], how
    finally:
        g.close()


def test_changed_moves_build_what_they_say(tmp_path, llvm_mc):
    """rename edits instructions in place (no move): the build is the move's code."""
    from asmevo.evolve.mutations import call_move
    from moves_helpers import env_of
    co, h, m = build(tmp_path, "ok", BODY)
    for s in range(6):
        out = call_move("rename", blocks_of(m), all_indices(m), random.Random(s), env_of(m))
        if out is not None:
            assert _built(co, h, out[0])[0] == text(out[0])


def test_a_swap_builds_the_swapped_code(tmp_path, llvm_mc):
    from asmevo.evolve.mutations import MOVES
    co, h, m = build(tmp_path, "swap", BODY)
    ins = blocks_of(m)[0].instructions
    i = next(j for j, x in enumerate(ins) if x.text() == "v_mov_b32_e32 v3, 7")
    out = MOVES["swap"](blocks_of(m), {i}, random.Random(0))
    assert out is not None
    assert _built(co, h, out[0])[0] == text(out[0])
