"""Buffer range checking is per dword for multi-dword raw-buffer accesses, in z3 and in the
emulator alike.

The hardware range-checks ``buffer_load/store_dwordx{2,3,4}`` on a raw buffer (stride 0, no
IDXEN) one dword at a time: dword ``j`` is in range when ``offset + 4*j + 4 <= num_records``
(CDNA3 ISA guide, range-checking notes: "Load/store-DWORD-x{2,3,4} range-check per
component"; LLVM AMDGPUUsage, "Relaxed Buffer OOB Mode", llvm/llvm-project PR #134734: "the
voffset used for the access will be range-checked for each 32-bit word independently").
Both backends used to check such an access all or nothing, so the adversarial round's
candidate -- zero the first dword of a ``dwordx2`` whenever ``offset + 8 > num_records`` --
was proved equal to the original, and the emulator agreed; on hardware the lane whose load
straddles the end reads the buffer's last dword in the original and 0 in the candidate.
"""

from __future__ import annotations

import sys
import pathlib

import numpy as np
import pytest
import z3

from asmevo.frontend.asm_parser import parse_instruction as P
from asmevo.semantics.z3backend import symexec
from asmevo.verify import Status, verify
from asmevo.verify.equiv import check_windows

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from planted_kernels import load_text_kernel, run_text_kernel  # noqa: E402
from emu.conftest import Snippet  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def W(*lines):
    return [P(x) for x in lines]


#: a raw V# in s[12:15]: stride 0 (word 1 masked to the base's high bits), num_records s14
VSHARP = ("s_and_b32 s13, s5, 0xffff", "s_mov_b32 s15, 0x27000")
LOAD_X2 = "buffer_load_dwordx2 v[2:3], v1, s[12:15], 0 offen"
#: the adversary's change: v2 := 0 unless offset + 8 <= num_records
ZERO_FIRST = ("s_sub_u32 s16, s14, 8", "v_cmp_ge_u32_e32 vcc, s16, v1",
              "v_cndmask_b32_e32 v2, 0, v2, vcc")


def test_zeroing_the_first_dword_of_a_straddling_dwordx2_is_not_equivalent():
    a = W(*VSHARP, LOAD_X2)
    b = W(*VSHARP, LOAD_X2, *ZERO_FIRST)
    r = check_windows(a, b, live_out=[("v", 2), ("v", 3)])
    assert r.status == "not equivalent", r.text()
    assert "v2" in r.differing
    ce = r.counterexample
    # the counterexample: the first dword in range, the second not
    off, nrec = ce["inputs"]["v1"], ce["inputs"]["s14"]
    assert off + 4 <= nrec < off + 8, ce


def test_a_straddling_dwordx2_load_gives_the_in_range_dword():
    r = symexec(W(*VSHARP, LOAD_X2))
    i = r.initial
    act = z3.Extract(0, 0, z3.LShR(z3.Concat(i[("exec_hi",)], i[("exec_lo",)]),
                                   z3.ZeroExt(58, r.lane))) == 1
    off, nrec = z3.ZeroExt(32, i[("v", 1)]), z3.ZeroExt(32, i[("s", 14)])
    s = z3.Solver()
    # first dword in range, second not: v2 is memory (not forced 0), v3 is 0
    s.add(act, z3.ULE(off + 4, nrec), z3.UGT(off + 8, nrec))
    s.push()
    s.add(r.regs[("v", 3)] != 0)
    assert s.check() == z3.unsat
    s.pop()
    s.add(r.regs[("v", 2)] != 0)
    assert s.check() == z3.sat
    # reads are recorded per dword: two 4-byte reads, the second active only in range
    assert [rd.size for rd in r.reads] == [4, 4]


def test_a_straddling_dwordx4_store_is_recorded_per_dword():
    r = symexec(W(*VSHARP, "buffer_store_dwordx4 v[4:7], v1, s[12:15], 0 offen"))
    assert [w.size for w in r.writes] == [4, 4, 4, 4]
    i = r.initial
    off, nrec = z3.ZeroExt(32, i[("v", 1)]), z3.ZeroExt(32, i[("s", 14)])
    s = z3.Solver()
    s.add(r.writes[0].active, z3.ULE(off + 8, nrec), z3.UGT(off + 12, nrec))
    # the first two dwords are written, the third and fourth dropped
    for k, want in enumerate([True, True, False, False]):
        s.push()
        s.add(r.writes[k].active if not want else z3.Not(r.writes[k].active))
        assert s.check() == z3.unsat, k
        s.pop()


def test_a_straddling_store_changed_in_its_dropped_dword_is_equivalent():
    # the dword past num_records is never written: a candidate storing something else there
    # when that dword is out of range is equal; one storing it in range is not
    st = "buffer_store_dwordx2 v[2:3], v1, s[12:15], 0 offen"
    a = W(*VSHARP, st)
    b = W(*VSHARP, "s_sub_u32 s16, s14, 8", "v_cmp_ge_u32_e32 vcc, s16, v1",
          "v_cndmask_b32_e32 v3, 0, v3, vcc", st)
    assert check_windows(a, b, live_out=[]).status == "equivalent"
    c = W(*VSHARP, "s_sub_u32 s16, s14, 8", "v_cmp_ge_u32_e32 vcc, s16, v1",
          "v_cndmask_b32_e32 v2, 0, v2, vcc", st)
    assert check_windows(a, c, live_out=[]).status == "not equivalent"


def test_structured_buffer_keeps_the_record_check():
    # idxen: the whole access is in range by index < num_records (no per-dword split of the
    # range: both dwords share one mask)
    r = symexec(W(*VSHARP, "buffer_load_dwordx2 v[2:3], v1, s[12:15], 0 idxen"))
    i = r.initial
    s = z3.Solver()
    s.add(z3.ULT(i[("v", 1)], i[("s", 14)]), r.reads[0].active != r.reads[1].active)
    assert s.check() == z3.unsat


# -- whole kernels: the adversary's case through verify() and the emulator ---------------------

K0 = """
    s_and_b32 s9, s9, 0xffff
    s_lshl_b32 s10, s7, 2
    s_mov_b32 s11, 0x27000
    buffer_load_dwordx2 v[2:3], v1, s[8:11], 0 offen
    s_waitcnt vmcnt(0)
    v_add_u32_e32 v4, v2, v3
    global_store_dword v1, v4, s[4:5]
"""
#: the adversary's candidate: as in its kernel, the change starts at the V# (an operand
#: swap), so the window z3 compares holds the load as well as the zeroing
C = K0.replace("""    s_and_b32 s9, s9, 0xffff
    s_lshl_b32 s10, s7, 2
    s_mov_b32 s11, 0x27000
    buffer_load_dwordx2 v[2:3], v1, s[8:11], 0 offen
    s_waitcnt vmcnt(0)
""", """    s_and_b32 s9, 0xffff, s9
    s_lshl_b32 s10, s7, 2
    s_mov_b32 s11, 0x27000
    s_sub_u32 s12, s10, 8
    buffer_load_dwordx2 v[2:3], v1, s[8:11], 0 offen
    s_waitcnt vmcnt(0)
    v_cmp_ge_u32_e32 vcc, s12, v1
    s_nop 1
    v_cndmask_b32_e32 v2, 0, v2, vcc
""")
assert C != K0


def test_verify_rejects_the_adversarial_candidate():
    v = verify(load_text_kernel(K0), load_text_kernel(C), level="z3", entry="k")
    assert v.status == Status.REJECTED_COUNTEREXAMPLE, v.message


def test_emulator_runs_the_adversarial_case_as_the_hardware_does():
    inp = (np.arange(64, dtype=np.uint32) * 0x01010101 + 0x11) & 0xFFFFFFFF
    o0 = run_text_kernel(K0, inp, block=64, n=64)
    oc = run_text_kernel(C, inp, block=64, n=64)
    want = [(int(inp[i]) + int(inp[i + 1])) & 0xFFFFFFFF for i in range(63)] + [int(inp[63])]
    assert [int(x) for x in o0[:64]] == want
    assert [int(x) for x in oc[:63]] == want[:63] and int(oc[63]) == 0


# -- z3 and the emulator agree on straddling loads and stores ----------------------------------

LANES = np.arange(64)


@pytest.mark.parametrize("inst,nd,load", [
    ("buffer_load_dwordx2 v[4:5], v1, s[12:15], 0 offen", 2, True),
    ("buffer_load_dwordx3 v[4:6], v1, s[12:15], 0 offen offset:4", 3, True),
    ("buffer_load_dwordx4 v[4:7], v1, s[12:15], s3 offen", 4, True),
    ("buffer_store_dwordx2 v[4:5], v1, s[12:15], 0 offen", 2, False),
    ("buffer_store_dwordx3 v[4:6], v1, s[12:15], 0 offen offset:4", 3, False),
    ("buffer_store_dwordx4 v[4:7], v1, s[12:15], s3 offen offset:8", 4, False),
    ("buffer_load_dwordx2 v[4:5], v1, s[12:15], 0 idxen", 2, True),
    ("buffer_load_dword v4, v1, s[12:15], 0 offen offset:2", 1, True),
])
@pytest.mark.parametrize("nrec", [37, 40, 42, 70, 1000])
def test_z3_and_the_emulator_agree(inst, nd, load, nrec):
    """Lane i accesses byte offset 16 * i (idxen: record i) of a raw buffer (stride 0) whose
    num_records falls inside some lane's access; the registers (loads) or the memory
    (stores) the emulator leaves equal z3's terms evaluated on the same values."""
    nb = 64 * 16 + 32
    rng = np.random.default_rng(nrec + 10 * nd)
    mem0 = rng.integers(0, 256, nb, dtype=np.uint8)
    s = Snippet([inst])
    base = s.mem.map("buf", mem0)
    w = s.w
    sregs = {12: base & 0xFFFFFFFF, 13: (base >> 32) & 0xFFFF, 14: nrec, 15: 0x27000, 3: 4}
    for i, x in sregs.items():
        w.s[i] = x
    vaddr = LANES * 16 if "offen" in inst else LANES
    w.v[1] = vaddr
    data = rng.integers(0, 1 << 32, (nd, 64), dtype=np.uint32)
    w.v[4:4 + nd] = data
    s.run()
    after = s.mem.region("buf").data.copy()

    r = symexec([P(inst)])
    gmem = z3.K(z3.BitVecSort(64), z3.BitVecVal(0, 8))
    for k in range(nb):
        gmem = z3.Store(gmem, z3.BitVecVal(base + k, 64), z3.BitVecVal(int(mem0[k]), 8))
    fixed = [(z3.Array("global", z3.BitVecSort(64), z3.BitVecSort(8)), gmem)]
    for u, t in r.initial.items():
        if u[0] == "s" and u[1] in sregs:
            fixed.append((t, z3.BitVecVal(sregs[u[1]], 32)))
        elif u in (("exec_lo",), ("exec_hi",)):
            fixed.append((t, z3.BitVecVal(0xFFFFFFFF, 32)))

    def at(term, lane):
        vals = {1: int(vaddr[lane])} | {4 + k: int(data[k, lane]) for k in range(nd)}
        ls = fixed + [(r.lane, z3.BitVecVal(lane, 6))] + [
            (z3.Array(f"v{i}", z3.BitVecSort(6), z3.BitVecSort(32)),
             z3.K(z3.BitVecSort(6), z3.BitVecVal(x, 32))) for i, x in vals.items()]
        return z3.simplify(z3.substitute(term, *ls))

    ioff = int(inst.split("offset:")[1]) if "offset:" in inst else 0
    so = 4 if " s3 " in inst else 0

    def ref(lane, k):
        """The hardware rule: (byte offset in the buffer, in range) of dword k of a lane."""
        if "idxen" in inst:       # stride 0: every lane at offset 0, in range by its index
            return so + 4 * k, lane < nrec
        off = 16 * lane + ioff + 4 * k
        return off + so, off + 4 <= nrec

    for lane in range(64):
        if load:
            for k in range(nd):
                got = int(w.v[4 + k, lane])
                assert at(r.regs[("v", 4 + k)], lane).as_long() == got, (inst, nrec, lane, k)
                a, ok = ref(lane, k)
                want = int.from_bytes(mem0[a:a + 4].tobytes(), "little") if ok else 0
                assert got == want, (inst, nrec, lane, k, "emulator against the rule")
        else:
            # lanes touch disjoint bytes: each z3 write of this lane, where active, left its
            # value in the emulator's memory, and where not, the bytes as they were
            for wr in r.writes:
                a = at(wr.address, lane).as_long() - base
                act = z3.is_true(at(wr.active, lane))
                want = at(wr.value, lane).as_long() if act else \
                    int.from_bytes(mem0[a:a + wr.size].tobytes(), "little")
                assert int.from_bytes(after[a:a + wr.size].tobytes(), "little") == want, \
                    (inst, nrec, lane, a, act)
            for k in range(nd):
                a, ok = ref(lane, k)
                want = data[k, lane] if ok else int.from_bytes(mem0[a:a + 4].tobytes(), "little")
                assert int.from_bytes(after[a:a + 4].tobytes(), "little") == want, \
                    (inst, nrec, lane, k, "emulator against the rule")


@pytest.mark.parametrize("lockstep", [False, True])
def test_lockstep_group_straddling_matches_the_reference(lockstep):
    """Several waves of one group, each with its own num_records (some not a multiple of 4):
    the lockstep executor's per-lane V# path (exec_mubuf group_addrs) checks per dword too,
    and where the lanes' stores overlap the later lane still wins."""
    from asmevo.emu.memory import GlobalMemory
    from asmevo.emu.state import Wave, Workgroup
    from emu.conftest import run_group
    mem = GlobalMemory()
    rng = np.random.default_rng(7)
    src = rng.integers(0, 256, 512 * 6, dtype=np.uint8)
    base = mem.map("buf", src)
    waves, nrecs = [], [37, 40, 42, 64, 100, 260]
    for k, nrec in enumerate(nrecs):
        wv = Wave(Workgroup((k, 0, 0), 0), 0)
        wv.v[0] = LANES * 4
        wv.v[10:12] = rng.integers(0, 1 << 32, (2, 64), dtype=np.uint32)
        b = base + 512 * k
        wv.s[4], wv.s[5], wv.s[6], wv.s[7] = b & 0xFFFFFFFF, b >> 32, nrec, 0
        wv.set_exec(np.ones(64, bool))
        waves.append(wv)
    run_group(["buffer_load_dwordx4 v[4:7], v0, s[4:7], 0 offen",
               "buffer_store_dwordx2 v[10:11], v0, s[4:7], 0 offen"],
              waves, mem, lockstep)
    out = mem.region("buf").data
    for k, (wv, nrec) in enumerate(zip(waves, nrecs)):
        words = src[512 * k:512 * (k + 1)].view("<u4")
        for lane in range(64):
            for j in range(4):
                off = 4 * lane + 4 * j
                want = int(words[off // 4]) if off + 4 <= nrec else 0
                assert int(wv.v[4 + j, lane]) == want, (k, lane, j)
        # lane i stores dwords at 4 i and 4 i + 4: word m is lane m's first dword (the later
        # lane wins over lane m - 1's second), word 64 lane 63's second; in range only
        got = out[512 * k:512 * (k + 1)].view("<u4")
        for m in range(128):
            if 4 * m + 4 > nrec or m > 64:
                want = int(words[m])
            else:
                want = int(wv.v[10, m]) if m < 64 else int(wv.v[11, 63])
            assert int(got[m]) == want, (k, m)
