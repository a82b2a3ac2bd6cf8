"""The ``widen`` move: adjacent loads/stores of one base merged into one access, checked by the
verifier (the gate at level ``all``), and its legality checks refusing the unsafe pairs."""

from __future__ import annotations

import pytest
from moves_helpers import blocks_of, build, env_of, gate, run_move, static_ok, text

PROLOGUE = """
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_load_dwordx2 s[6:7], s[0:1], 0x8
	s_load_dwordx2 s[8:9], s[0:1], 0x10
	v_lshlrev_b32_e32 v1, 3, v0
	v_lshlrev_b32_e32 v4, 2, v0
	s_waitcnt lgkmcnt(0)
"""

#: a[2i] + a[2i+1] + b[i] -> c[i]: two adjacent dword loads into v2, v3 (an aligned pair)
PAIR = PROLOGUE + """
	global_load_dword v2, v1, s[4:5]
	global_load_dword v3, v1, s[4:5] offset:4
	global_load_dword v5, v4, s[6:7]
	s_waitcnt vmcnt(0)
	v_add_u32_e32 v2, v2, v3
	v_add_u32_e32 v2, v2, v5
	global_store_dword v4, v2, s[8:9]
	s_endpgm
"""

#: the c pointer loaded as two dwords into s11 and s6 (not a pair): merged through a rename
SPLIT_SMEM = """
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_load_dword s11, s[0:1], 0x10
	s_load_dword s6, s[0:1], 0x14
	v_lshlrev_b32_e32 v1, 2, v0
	s_waitcnt lgkmcnt(0)
	s_mov_b32 s8, s11
	s_mov_b32 s9, s6
	global_load_dword v2, v1, s[4:5]
	s_waitcnt vmcnt(0)
	global_store_dword v1, v2, s[8:9]
	s_endpgm
"""

#: LDS round trip: ds_write_b32 pair -> ds_write2_b32, ds_read_b32 pair -> ds_read2_b32
LDS = """
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_load_dwordx2 s[8:9], s[0:1], 0x10
	v_lshlrev_b32_e32 v1, 2, v0
	s_waitcnt lgkmcnt(0)
	global_load_dword v2, v1, s[4:5]
	global_load_dword v3, v1, s[6:7]
	s_waitcnt vmcnt(0)
	ds_write_b32 v1, v2
	ds_write_b32 v1, v3 offset:256
	s_waitcnt lgkmcnt(0)
	s_barrier
	ds_read_b32 v4, v1
	ds_read_b32 v5, v1 offset:256
	s_waitcnt lgkmcnt(0)
	v_xor_b32_e32 v4, v4, v5
	global_store_dword v1, v4, s[8:9]
	s_endpgm
"""


def _merged(out, prefix):
    return out is not None and out[1]["new"].startswith(prefix)


@pytest.mark.corpus
def test_widen_scalar_and_global_loads_pass_the_gate(tmp_path, llvm_mc):
    co, h, m = build(tmp_path, "pair", PAIR)
    out = run_move(m, "widen", want=lambda d: d["new"].startswith("global_load_dwordx2"))
    assert out is not None
    blocks, desc = out
    assert desc["new"] == "global_load_dwordx2 v[2:3], v1, s[4:5]"
    assert static_ok(m, blocks)
    assert gate(co, h, blocks)["status"] == "accepted"
    out = run_move(m, "widen", want=lambda d: d["new"].startswith("s_load_dwordx4"))
    assert out is not None and out[1]["new"] == "s_load_dwordx4 s[4:7], s[0:1], 0x0"
    t = text(out[0])
    assert "s_load_dwordx2 s[4:5], s[0:1], 0x0" not in t and len(t) == len(text(blocks_of(m))) - 1
    assert gate(co, h, out[0])["status"] == "accepted"
    # the parent is never edited in place
    assert "global_load_dword v3, v1, s[4:5] offset:4" in text(blocks_of(m))


def test_widen_renames_scattered_scalar_destinations(tmp_path, llvm_mc):
    co, h, m = build(tmp_path, "split", SPLIT_SMEM)
    out = run_move(m, "widen", want=lambda d: d["new"].startswith("s_load_dwordx2 s[")
                   and "0x10" in d["new"])
    assert out is not None
    blocks, desc = out
    new = desc["new"]
    lo = int(new.split("s[")[1].split(":")[0])
    assert lo % 2 == 0 and lo + 2 <= 16 and lo >= 3    # aligned, in budget, no ABI register
    t = text(blocks)
    assert f"s_mov_b32 s8, s{lo}" in t and f"s_mov_b32 s9, s{lo + 1}" in t
    assert static_ok(m, blocks)
    assert gate(co, h, blocks)["status"] == "accepted"


def test_ds_read2_and_write2(tmp_path, llvm_mc):
    co, h, m = build(tmp_path, "lds", LDS, lds=512)
    rd = run_move(m, "widen", want=lambda d: d["new"].startswith("ds_read2"))
    assert rd is not None and rd[1]["new"] == "ds_read2_b32 v[4:5], v1 offset1:64"
    wr = run_move(m, "widen", want=lambda d: d["new"].startswith("ds_write2"))
    assert wr is not None and wr[1]["new"] == "ds_write2_b32 v1, v2, v3 offset1:64"
    for blocks, _ in (rd, wr):
        assert static_ok(m, blocks)
        assert gate(co, h, blocks)["status"] == "accepted"


def test_ds_read2_needs_an_aligned_pair(tmp_path, llvm_mc):
    """v5/v6 are no aligned pair: the loaded values are renamed to a free even pair (VGPR
    renames: the window proof cannot see they are dead, so at best differential testing
    vouches for them -- never a counterexample)."""
    body = LDS.replace("v4", "v6").replace("v5", "v7").replace("ds_read_b32 v6", "ds_read_b32 v5") \
        .replace("v_xor_b32_e32 v6, v6, v7", "v_xor_b32_e32 v6, v5, v7") \
        .replace("ds_read_b32 v7", "ds_read_b32 v6").replace("v5, v7", "v5, v6")
    assert "ds_read_b32 v5, v1\n" in body and "ds_read_b32 v6, v1 offset:256" in body
    co, h, m = build(tmp_path, "lds2", body, lds=512)
    out = run_move(m, "widen", want=lambda d: d["new"].startswith("ds_read2"))
    assert out is not None
    pair = out[1]["new"].split("v[")[1].split(":")
    assert int(pair[0]) % 2 == 0
    assert static_ok(m, out[0])
    r = gate(co, h, out[0])
    assert r["status"] in ("accepted", "unknown-unproved"), r["verdict"]


# -- refusals ---------------------------------------------------------------------------

def _merge(m, p1, p2):
    from asmevo.evolve.mutations_widen import merge_pair
    return merge_pair(env_of(m).view(blocks_of(m)), 0, p1, p2)


def _pos(m, snippet):
    ins = blocks_of(m)[0].instructions
    return next(i for i, x in enumerate(ins) if x.text() == snippet)


def test_refusals(tmp_path, llvm_mc):
    from asmevo.evolve.mutations_widen import pair_problem
    from asmevo.frontend.asm_parser import parse_instruction as P
    # offsets not back to back, different bases, different cache bits, the address overwritten
    assert pair_problem(P("global_load_dword v2, v1, s[4:5]"), P("global_load_dword v3, v1, s[4:5] offset:8"))
    assert pair_problem(P("global_load_dword v2, v1, s[4:5]"), P("global_load_dword v3, v1, s[6:7] offset:4"))
    assert pair_problem(P("global_load_dword v2, v1, s[4:5] sc0"), P("global_load_dword v3, v1, s[4:5] offset:4"))
    assert pair_problem(P("s_load_dwordx2 s[0:1], s[0:1], 0x0"), P("s_load_dwordx2 s[2:3], s[0:1], 0x8"))
    # scalar: only equal widths into 2/4/8 dwords (no dwordx3 on gfx942)
    assert pair_problem(P("s_load_dword s3, s[0:1], 0x10"), P("s_load_dwordx2 s[4:5], s[0:1], 0x8"))
    # buffer loads are never merged (per-dword range checking)
    assert pair_problem(P("buffer_load_dword v2, v1, s[0:3], 0 offen"),
                        P("buffer_load_dword v3, v1, s[0:3], 0 offen offset:4"))
    # ds_read2 offsets: 8 bits of elements
    assert pair_problem(P("ds_read_b32 v2, v1"), P("ds_read_b32 v3, v1 offset:1024"))
    assert pair_problem(P("ds_read_b32 v2, v1"), P("ds_read_b32 v3, v1 offset:2"))

    # a store between two loads: the second may not be hoisted above it
    body = PAIR.replace("\tglobal_load_dword v3, v1, s[4:5] offset:4\n",
                        "\tglobal_store_dword v4, v0, s[8:9]\n\tglobal_load_dword v3, v1, s[4:5] offset:4\n")
    co, h, m = build(tmp_path, "store_between", body)
    p1, p2 = _pos(m, "global_load_dword v2, v1, s[4:5]"), _pos(m, "global_load_dword v3, v1, s[4:5] offset:4")
    assert "writes memory" in _merge(m, p1, p2)
    # a barrier between two LDS reads
    body = LDS.replace("\tds_read_b32 v5, v1 offset:256\n", "\ts_barrier\n\tds_read_b32 v5, v1 offset:256\n")
    co, h, m = build(tmp_path, "barrier_between", body, lds=512)
    assert "s_barrier" in _merge(m, _pos(m, "ds_read_b32 v4, v1"), _pos(m, "ds_read_b32 v5, v1 offset:256"))
    # v5/v6 are no aligned pair and every even pair of the 8-VGPR budget is busy: skipped
    body = PROLOGUE + """
	global_load_dword v5, v1, s[4:5]
	global_load_dword v6, v1, s[4:5] offset:4
	v_mov_b32_e32 v7, 1
	s_waitcnt vmcnt(0)
	v_add3_u32 v2, v5, v6, v7
	global_store_dword v4, v2, s[8:9]
	s_endpgm
"""
    co, h, m = build(tmp_path, "tight", body, vgprs=8)
    why = _merge(m, _pos(m, "global_load_dword v5, v1, s[4:5]"),
                 _pos(m, "global_load_dword v6, v1, s[4:5] offset:4"))
    assert isinstance(why, str) and "no free aligned tuple" in why
