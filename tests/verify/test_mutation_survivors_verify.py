"""Tests for mutants of asmevo/verify that survived the mutation probe
(scripts/mutation_probe.py, seed 14; docs/verify.md, "Mutation pass").  Each names the
mutant it kills."""

from __future__ import annotations

import pytest

from asmevo.frontend.asm_parser import parse_instruction
from asmevo.frontend.asm_parser import parse_instruction as P
from asmevo.verify.equiv import check_windows
from asmevo.verify.mutate import _peephole_candidates

#: every rewrite rule of the mutation generator's "peephole" family (the preserving edits
#: behind docs/verify.md's accepted-rate figure), with what it must produce
PEEPHOLES = [
    ("v_lshlrev_b32_e32 v1, 1, v2", ["v_add_u32_e32 v1, v2, v2", "v_mul_lo_u32 v1, v2, 2"]),
    ("v_lshlrev_b32_e32 v1, 0, v2", ["v_mul_lo_u32 v1, v2, 1"]),
    ("v_lshlrev_b32_e32 v1, 3, v2", ["v_mul_lo_u32 v1, v2, 8"]),
    ("v_lshlrev_b32_e32 v1, 6, v2", ["v_mul_lo_u32 v1, v2, 64"]),
    ("v_lshlrev_b32_e32 v1, 7, v2", []),            # 128 would need a literal
    ("v_lshlrev_b32_e32 v1, -1, v2", []),           # (1 << -1 raises)
    ("v_sub_u32_e32 v1, v2, v3", ["v_subrev_u32_e32 v1, v3, v2"]),
    ("v_sub_u32_e32 v1, s2, v3", []),
    ("v_subrev_u32_e32 v1, v2, v3", ["v_sub_u32_e32 v1, v3, v2"]),
    ("v_mov_b32_e32 v1, v2", ["v_or_b32_e32 v1, v2, v2"]),
    ("v_mov_b32_e32 v1, 0", ["v_bfrev_b32_e32 v1, 0"]),
    ("v_mov_b32_e32 v1, 1", []),
    ("s_mov_b32 s1, s2", ["s_mov_b32 s1, s2"]),
    ("v_add_u32_e32 v1, v2, v3", ["v_add_u32_e64 v1, v3, v2"]),
    ("v_xor_b32_e32 v1, s2, v3", ["v_xor_b32_e64 v1, v3, s2"]),
    ("v_or_b32_e32 v1, v2, v3", ["v_or_b32_e64 v1, v3, v2"]),
    ("v_and_b32_e32 v1, v2, v3", ["v_and_b32_e64 v1, v3, v2"]),
    ("v_lshl_add_u64 v[0:1], v[2:3], 0, v[4:5]", ["v_lshl_add_u64 v[0:1], v[4:5], 0, v[2:3]"]),
    ("v_lshl_add_u64 v[0:1], v[2:3], 1, v[4:5]", []),
]


@pytest.mark.parametrize("text,expected", PEEPHOLES, ids=[p[0] for p in PEEPHOLES])
def test_every_peephole_rule_and_its_proof(text, expected):
    # mutate._peephole_candidates (mutant: the v_lshlrev -> v_mul_lo_u32 rule dropped,
    # `Expr -> pass`, which only the slow full mutation run's preserving count noticed)
    inst = parse_instruction(text)
    got = _peephole_candidates(inst)
    assert [i.text() for i in got] == expected
    for new in got:     # equivalent by construction: z3 proves each
        assert check_windows([inst], [new]).equivalent, (text, new.text())


def _mod(body: str):
    from asmevo.frontend.asm_parser import parse_asm
    return parse_asm(f".text\nk:\n{body}", "k.s")


def test_scalar_copy_kept_across_a_branch_is_proved():
    # relational._refute_concretely skips random inputs on which the block's assumptions
    # are false (mutant: the skip dropped -> 'orig.s9 == cand.s8' refuted on an input
    # where the entry constraint s9 == s8 did not hold; no all-lanes retry restores a
    # scalar fact, so the proof was lost)
    from asmevo.verify.relational import EQUIVALENT, prove_relational
    o = """
  s_add_u32 s8, s2, 5
  s_mov_b32 s9, s8
  s_cmp_eq_u32 s3, 0
  s_cbranch_scc1 .L1
  s_add_u32 s10, s10, 1
.L1:
  v_mov_b32 v4, s9
  global_store_dword v[2:3], v4, off
  s_endpgm
"""
    c = o.replace("  s_mov_b32 s9, s8\n", "").replace("v_mov_b32 v4, s9", "v_mov_b32 v4, s8")
    r = prove_relational(_mod(o).kernels[0], _mod(c).kernels[0], timeout_ms=4000)
    assert r.status == EQUIVALENT, r.reason
    assert "orig.s9 == cand.s8" in r.invariants[".L1"]["conjuncts"]
    # control: the candidate storing s2 + 6 instead is not proved
    bad = c.replace("s_add_u32 s8, s2, 5", "s_add_u32 s8, s2, 6")
    r = prove_relational(_mod(o).kernels[0], _mod(bad).kernels[0], timeout_ms=4000)
    assert r.status != EQUIVALENT


def test_repeated_block_labels_still_give_windows():
    # equiv.changed_windows: when label_map cannot match the labels one to one (a label
    # repeated) but they are equal block by block, windows are compared without renaming
    # (mutant: `lm = {}` dropped -> rename_labels(branch, None) raised TypeError)
    from asmevo.verify.equiv import changed_windows, label_map
    text = "  s_cbranch_scc1 .L1\n.L1:\n  s_nop 0\n.L1:\n  s_endpgm\n"
    ko = _mod(text).kernels[0]
    kc = _mod(text.replace("s_nop 0", "s_nop 1")).kernels[0]
    assert label_map(ko, kc) is None
    assert changed_windows(ko, kc) == ([(1, 0, 1, 1)], None)


_LOADS = """
  global_load_dword v4, v[2:3], off
  ds_read_b32 v5, v1
  s_waitcnt vmcnt(0) lgkmcnt(0)
  v_add_u32_e32 v6, v4, v5
  global_store_dword v[2:3], v6, off
  s_endpgm
"""


def test_memory_operations_reordered_without_a_barrier_are_proved_by_z3():
    # equiv._barrier_order_changed applies only to windows holding an s_barrier (mutant:
    # `== "s_barrier"` -> `!=`: any reordered memory operation became 'cross-wave order',
    # unknown-unsupported, and z3 never saw it)
    from asmevo.verify.equiv import check_kernels
    swapped = _LOADS.replace("  global_load_dword v4, v[2:3], off\n  ds_read_b32 v5, v1\n",
                             "  ds_read_b32 v5, v1\n  global_load_dword v4, v[2:3], off\n")
    assert swapped != _LOADS
    v = check_kernels(_mod(_LOADS), _mod(swapped))
    assert v.accepted, v.text()
    # control: the same move across an s_barrier is the final unknown
    o = _LOADS.replace("  ds_read_b32 v5, v1\n", "  s_barrier\n  ds_read_b32 v5, v1\n")
    c = _LOADS.replace("  ds_read_b32 v5, v1\n", "  ds_read_b32 v5, v1\n  s_barrier\n")
    v = check_kernels(_mod(o), _mod(c))
    assert not v.accepted and "s_barrier" in v.text(), v.text()


@pytest.mark.parametrize("line,need", [
    ("ds_write_b8 v0, v1 offset:100", 101),
    ("ds_read_u16 v1, v0 offset:100", 102),
    ("ds_write_b32 v0, v1 offset:100", 104),
    ("ds_read_b64 v[2:3], v0 offset:100", 108),
    ("ds_write_b96 v0, v[1:3] offset:100", 112),
    ("ds_read_b128 v[4:7], v0 offset:100", 116),
    ("ds_read2_b32 v[2:3], v0 offset0:3 offset1:9", 40),
    ("ds_read2st64_b64 v[4:7], v0 offset0:1 offset1:2", 2 * 8 * 64 + 8),
])
def test_lds_requirement_counts_the_access_width(line, need):
    # static.lds_requirement: offset + access width, per width token (mutant: b96 -> 11 bytes)
    from asmevo.verify.static import lds_requirement
    k = _mod(f"  {line}\n  s_endpgm\n").kernels[0]
    assert lds_requirement(k)[0] == need


def test_undecodable_word_reason_names_its_address_when_it_has_one():
    # static._undecodable_words: " at 0x..." only for a word with an address (mutant:
    # `is not None` -> `is`: the address was dropped, and a word without one raised)
    from asmevo.ir.instruction import Instruction
    from asmevo.ir.operands import Imm
    from asmevo.verify.static import _undecodable_words

    def kern(nop: int, address):
        k = _mod(f"  s_nop {nop}\n  s_endpgm\n").kernels[0]
        k.blocks[0].instructions.insert(1, Instruction(".long", [Imm(0xffffffff)], address=address))
        return k

    why = _undecodable_words(kern(1, 0x104), kern(0, 0x104))
    assert why and "holds 1 undecodable word(s) (.long 0xffffffff at 0x104)" in why
    why = _undecodable_words(kern(1, None), kern(0, None))
    assert why and "(.long 0xffffffff)" in why
    assert _undecodable_words(kern(0, None), kern(0, None)) is None     # unchanged kernel


def test_relational_proof_gives_up_on_cache_policy_and_halts_in_any_block():
    # relational._execute: a block whose cache-policy bits, cache maintenance or no-op-in-z3
    # instructions differ is unsupported (mutant: `or` -> `and`: a policy difference alone
    # was ignored and the pair below was proved 'equivalent')
    from asmevo.verify.relational import EQUIVALENT, prove_relational
    o = """
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 .L1
  v_add_u32 v6, v6, 1
.L1:
  global_load_dword v4, v[2:3], off
  s_waitcnt vmcnt(0)
  global_store_dword v[2:3], v4, off offset:4
  s_endpgm
"""
    for c, why in (
            (o.replace("global_load_dword v4, v[2:3], off", "global_load_dword v4, v[2:3], off sc0 sc1"),
             "cache-policy bits"),
            (o.replace("v_add_u32 v6, v6, 1", "v_add_u32 v6, v6, 1\n  s_sethalt 1"), "no-ops")):
        r = prove_relational(_mod(o).kernels[0], _mod(c).kernels[0], timeout_ms=4000)
        assert r.status != EQUIVALENT and why in r.reason, (why, r.reason)


_SPILLED_C = """
  s_add_u32 s8, s2, 5
  v_writelane_b32 v9, s8, 3
  v_add_u32 v10, v1, v1
  s_cmp_eq_u32 s3, 0
  s_cbranch_scc1 .L1
  s_mov_b32 s8, 0
.L1:
  v_readlane_b32 s8, v9, 3
  v_mov_b32 v4, s8
  global_store_dword v[2:3], v4, off
  s_endpgm
"""


def test_a_lane_fact_defines_only_its_own_register():
    # relational._Entry.cloc: a candidate VGPR without an equality is the array of *its
    # own* lane conjuncts (mutant: `c[2][1] == u` -> `!=`: v10's lane 3 took the value of
    # the fact about v9's lane 3, and reading the wrong register was proved equivalent)
    from asmevo.verify.relational import EQUIVALENT, prove_relational
    o = """
  s_add_u32 s20, s2, 5
  s_cmp_eq_u32 s3, 0
  s_cbranch_scc1 .L1
  s_mov_b32 s8, 0
.L1:
  v_mov_b32 v4, s20
  global_store_dword v[2:3], v4, off
  s_endpgm
"""
    r = prove_relational(_mod(o).kernels[0], _mod(_SPILLED_C).kernels[0], timeout_ms=4000)
    assert r.status == EQUIVALENT, r.reason
    assert "orig.s20 == cand.v9[lane 3]" in r.invariants["#1"]["conjuncts"]
    wrong = _SPILLED_C.replace("v_readlane_b32 s8, v9, 3", "v_readlane_b32 s8, v10, 3")
    r = prove_relational(_mod(o).kernels[0], _mod(wrong).kernels[0], timeout_ms=4000)
    assert r.status != EQUIVALENT, r.reason


def test_each_barrier_in_a_block_gives_fresh_shared_memory():
    # relational._run: shared memory after the n-th s_barrier of a block is a new unknown
    # (other waves write between barriers) (mutant: `nb += 1` -> `nb += 0`: every barrier
    # of the block gave the same memory, and an LDS value read before the second barrier
    # was proved equal to the one read after it)
    from asmevo.verify.relational import EQUIVALENT, prove_relational
    o = """
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 .L1
  v_add_u32 v6, v6, 1
.L1:
  s_barrier
  ds_read_b32 v5, v1
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_read_b32 v7, v1
  s_waitcnt lgkmcnt(0)
  global_store_dword v[2:3], v7, off
  s_endpgm
"""
    c = o.replace("global_store_dword v[2:3], v7, off", "global_store_dword v[2:3], v5, off")
    r = prove_relational(_mod(o).kernels[0], _mod(c).kernels[0], timeout_ms=4000)
    assert r.status != EQUIVALENT, r.reason
    r = prove_relational(_mod(o).kernels[0], _mod(o.replace("v7", "v8")).kernels[0], timeout_ms=4000)
    assert r.status == EQUIVALENT, r.reason          # control: a renaming is proved


def test_concrete_search_finds_the_counterexample_before_the_solver():
    # equiv._concrete_search: differing values on a random/edge input are the
    # counterexample, no solver query needed (mutant: the comparison loop dropped -> every
    # such pair went to z3; the verdict stays, the cost does not: 0.3 s -> 9 s for two
    # reassociated float multiplies)
    a = [P("v_mul_lo_u32 v1, v2, v3"), P("v_mul_lo_u32 v1, v1, v4")]
    b = [P("v_mul_lo_u32 v1, v2, v4"), P("v_mul_hi_u32 v1, v1, v3")]
    r = check_windows(a, b, live_out=[("v", 1)])
    assert r.status == "not equivalent" and "(concrete inputs)" in r.reason, r.text()
    ce = r.counterexample
    assert ce["differs"] == ["v1"] and ce["a"]["v1"] != ce["b"]["v1"]


def test_abi_metadata_falls_back_to_the_code_objects_table():
    # abi._metadata_entries: kernels without their own metadata and no .amdgpu_metadata
    # block take the code object's metadata entries (KernelMeta.raw) (mutant: that branch
    # dropped -> no entry, so the ABI checks had no metadata to compare)
    import pathlib

    from asmevo.frontend.loader import load
    from asmevo.ir.module import MetadataBlock
    from asmevo.verify.abi import _metadata_entries
    co = pathlib.Path(__file__).resolve().parents[2] / "examples" / "vadd_f32.co"
    m = load(str(co))
    want = {k.name: dict(k.metadata) for k in m.kernels}
    for k in m.kernels:
        k.metadata = None
    m.items = [it for it in m.items if not isinstance(it, MetadataBlock)]
    got, errors = _metadata_entries(m)
    assert errors == [] and set(got) == {"vadd_f32"}
    assert got["vadd_f32"][".args"] == want["vadd_f32"][".args"]
