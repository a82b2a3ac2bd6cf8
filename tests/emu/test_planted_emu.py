"""Emulator behaviour that planted bugs got past every tier, tested through assembled-text
kernels run by :func:`asmevo.emu.run_kernel` (the public entry point).

* Buffer range checking (CDNA3 ISA guide, "Buffer instructions", range checking, raw
  buffer with stride 0): a dword or sub-dword access is in range only when ``offset + size
  <= num_records``; a load that is out of range returns 0, a store is dropped.  ``offset <
  num_records`` alone is wrong for an access that straddles the end: the tests put
  accesses there (an unaligned dword and a dwordx2 / dwordx4 whose first dword is inside).
  A multi-dword access (``buffer_load/store_dwordx{2,3,4}``) is checked per dword, not all
  or nothing: dword ``j`` is in range when ``offset + 4*j + 4 <= num_records`` (the ISA
  guide's range-checking notes: "Load/store-DWORD-x{2,3,4} range-check per component",
  while "Load/store-format-* instruction and atomics are range-checked 'all or nothing'";
  LLVM AMDGPUUsage, "Relaxed Buffer OOB Mode", llvm/llvm-project PR #134734: "the voffset
  used for the access will be range-checked for each 32-bit word independently").  The
  all-or-nothing model this file once asserted made a candidate that zeroes the first
  dword of a straddling dwordx2 "equal" to the original (adversarial round, t3_bufoob).
* Lane-mask results (VOPC, the carry-out of ``v_add_co_u32`` & co., ``v_cmp`` in VOP3 form
  with an SGPR-pair destination): the bits of inactive lanes are written 0, whatever they
  held and whatever the comparison would give there.
"""

from __future__ import annotations

import numpy as np
import pytest

from planted_kernels import run_text_kernel

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

LANES = np.arange(64)
#: V# words 2..3: num_records in s10, DST_SEL/NUM_FORMAT/DATA_FORMAT as clang emits (0x00027000)
RSRC = """
s_mov_b32 s10, s7
s_mov_b32 s11, 0x27000
"""


def _in(nwords=64):
    return (np.arange(nwords, dtype=np.uint32) * 0x01010101 + 0x11) & 0xFFFFFFFF


def _load_bytes(inp: np.ndarray, off: int, size: int, nrec: int) -> list[int]:
    """Reference: the dwords a raw-buffer load of ``size`` bytes at byte ``off`` returns
    (each dword of a multi-dword load range-checked on its own)."""
    out = []
    for j in range(0, size, 4):
        if off + j + 4 > nrec:
            out.append(0)
        else:
            b = inp.view(np.uint8)[off + j:off + j + 4]
            out.append(int(np.frombuffer(b.tobytes(), np.uint32)[0]))
    return out


@pytest.mark.parametrize("nrec", [64, 66, 70, 72])
def test_buffer_load_dword_straddling_num_records(nrec):
    # lane i loads the dword at byte offset 60 + i (i < 16): offsets 61..63 straddle
    # num_records = 64 and must read 0; with nrec 66 / 70 the first lanes past 60 still fit
    body = RSRC + """
        v_add_u32_e32 v2, 60, v0
        v_mov_b32_e32 v3, 0x5a5a5a5a
        buffer_load_dword v3, v2, s[8:11], 0 offen
        s_waitcnt vmcnt(0)
        global_store_dword v1, v3, s[4:5]
    """
    inp = _in()
    out = run_text_kernel(body, inp, block=16, n=nrec)
    want = [_load_bytes(inp, 60 + i, 4, nrec)[0] for i in range(16)]
    assert [int(x) for x in out[:16]] == want


def _wide_load_kernel(width: str, nregs: int, base: int) -> str:
    """Lane i loads ``buffer_load_dword{width}`` at byte offset ``base + 4 i`` of the buffer and
    stores dword k of it at ``out[64 k + i]``."""
    dst = f"v[4:{3 + nregs}]"
    stores = "\n".join(f"global_store_dword v10, v{4 + k}, s[4:5] offset:{64 * k * 4}"
                       for k in range(nregs))
    return RSRC + f"""
        v_lshlrev_b32_e32 v2, 2, v0
        v_add_u32_e32 v2, {base}, v2
        v_lshlrev_b32_e32 v10, 2, v0
        buffer_load_dword{width} {dst}, v2, s[8:11], 0 offen
        s_waitcnt vmcnt(0)
        {stores}
    """


def _check_wide_load(width, size, offset, nrec):
    """Run a ``buffer_load_dword{width}`` at ``offset + 4*lane`` over 8 lanes with
    ``num_records = nrec``; every lane's dwords must be the per-dword range-checked bytes.
    Returns ``(inputs, outputs)``."""
    nregs = size // 4
    inp = _in()
    out = run_text_kernel(_wide_load_kernel(width, nregs, offset), inp, block=8, n=nrec)
    for lane in range(8):
        want = _load_bytes(inp, offset + 4 * lane, size, nrec)
        got = [int(out[64 * k + lane]) for k in range(nregs)]
        assert got == want, (lane, got, want)
    return inp, out


@pytest.mark.parametrize("width,size", [("x2", 8), ("x4", 16)])
def test_buffer_load_wide_straddling_num_records(width, size):
    nregs = size // 4
    inp, out = _check_wide_load(width, size, 32, 48)
    # lane 3 (offset 44): its first dword is the buffer's last one, the rest are past the end
    assert [int(out[64 * k + 3]) for k in range(nregs)] == [int(inp[11])] + [0] * (nregs - 1)


@pytest.mark.parametrize("width,size", [("x2", 8), ("x3", 12), ("x4", 16)])
@pytest.mark.parametrize("nrec", [44, 46, 48])
def test_buffer_load_wide_straddling_per_dword_unaligned_end(width, size, nrec):
    # num_records not a multiple of 4: a dword partly past the end is out of range whole
    _check_wide_load(width, size, 24, nrec)


@pytest.mark.parametrize("width,size", [("x2", 8), ("x4", 16)])
def test_buffer_store_wide_straddling_writes_in_range_dwords(width, size):
    # one lane stores size bytes at offset 56 of a 64-byte buffer: the dwords at 56 and 60
    # are written, the rest (64..) dropped -- the words past num_records stay as they were
    nregs = size // 4
    movs = "\n".join(f"v_mov_b32_e32 v{4 + k}, 0x{0xab000000 + k:x}" for k in range(nregs))
    body = RSRC + f"""
        s_mov_b32 s8, s4
        s_mov_b32 s9, s5
        s_mov_b32 s10, 64
        v_mov_b32_e32 v2, 56
        {movs}
        buffer_store_dword{width} v[4:{3 + nregs}], v2, s[8:11], 0 offen
    """
    out = run_text_kernel(body, _in(), block=1, n=0, out_words=64, out_init=0)
    ref = np.zeros(64, np.uint32)
    ref[14], ref[15] = 0xab000000, 0xab000001
    assert [hex(int(x)) for x in out[:64]] == [hex(int(x)) for x in ref]


def test_buffer_store_straddling_num_records_is_dropped():
    # lane i stores 4 bytes at 56 + 2 i: lanes with 56 + 2 i + 4 > 64 (i >= 3) are dropped
    body = RSRC + """
        s_mov_b32 s8, s4
        s_mov_b32 s9, s5
        s_mov_b32 s10, 64
        v_lshlrev_b32_e32 v2, 1, v0
        v_add_u32_e32 v2, 56, v2
        v_or_b32_e32 v3, 0xab000000, v0
        buffer_store_dword v3, v2, s[8:11], 0 offen
    """
    out = run_text_kernel(body, _in(), block=1, n=0, out_words=64)
    ref = np.zeros(64, np.uint32)
    ref.view(np.uint8)[56:60] = np.frombuffer(np.uint32(0xab000000).tobytes(), np.uint8)
    assert list(out[:64]) == list(ref)
    out = run_text_kernel(body.replace("v_lshlrev_b32_e32 v2, 1, v0", "v_lshlrev_b32_e32 v2, 1, v0\n"
                                       "v_add_u32_e32 v2, 6, v2"), _in(), block=1, n=0, out_words=64)
    assert not out.any(), "a store of 4 bytes at offset 62 of 64 must be dropped"


def test_buffer_atomic_straddling_num_records_does_nothing():
    body = RSRC + """
        s_mov_b32 s8, s4
        s_mov_b32 s9, s5
        s_mov_b32 s10, 64
        v_mov_b32_e32 v2, 62
        v_mov_b32_e32 v3, 5
        buffer_atomic_add v3, v2, s[8:11], 0 offen glc
        v_mov_b32_e32 v2, 60
        v_mov_b32_e32 v4, 7
        buffer_atomic_add v4, v2, s[8:11], 0 offen glc
        s_waitcnt vmcnt(0)
        v_mov_b32_e32 v5, 0
        global_store_dword v5, v3, s[4:5] offset:256
        global_store_dword v5, v4, s[4:5] offset:260
    """
    out = run_text_kernel(body, _in(), block=1, out_words=128, out_init=0)
    assert int(out[15]) == 7          # the in-range atomic at byte 60
    assert int(out[64]) == 0          # the straddling one returned 0 ...
    assert int(out[65]) == 0          # ... the in-range one the old value (0)
    assert out[:15].sum() == 0 and int(out[15]) == 7


# -- lane masks: inactive lanes read 0 -----------------------------------------------------

def _mask_out(out, k):
    return int(out[2 * k]) | (int(out[2 * k + 1]) << 32)


LANE_MASK_BODY = """
    s_mov_b64 s[12:13], -1
    s_mov_b64 s[14:15], -1
    s_mov_b64 s[16:17], -1
    s_mov_b64 vcc, -1
    v_mov_b32_e32 v2, -1
    v_cmp_le_u32_e64 s[18:19], 0, v0
    s_mov_b32 exec_lo, 0xff0f
    s_mov_b32 exec_hi, 0xffff
    v_cmp_le_u32_e32 vcc, 0, v0
    v_cmp_gt_u32_e64 s[12:13], 100, v0
    v_add_co_u32_e64 v3, s[14:15], v2, v2
    v_cmp_class_f32_e64 s[16:17], v2, 3
    s_mov_b64 s[20:21], vcc
    s_mov_b64 exec, -1
    v_mov_b32_e32 v5, 0
    v_mov_b32_e32 v6, s20
    v_mov_b32_e32 v7, s21
    global_store_dwordx2 v5, v[6:7], s[4:5]
    v_mov_b32_e32 v6, s12
    v_mov_b32_e32 v7, s13
    global_store_dwordx2 v5, v[6:7], s[4:5] offset:8
    v_mov_b32_e32 v6, s14
    v_mov_b32_e32 v7, s15
    global_store_dwordx2 v5, v[6:7], s[4:5] offset:16
    v_mov_b32_e32 v6, s16
    v_mov_b32_e32 v7, s17
    global_store_dwordx2 v5, v[6:7], s[4:5] offset:24
    v_mov_b32_e32 v6, s18
    v_mov_b32_e32 v7, s19
    global_store_dwordx2 v5, v[6:7], s[4:5] offset:32
"""


def test_lane_mask_results_zero_inactive_lanes():
    exec_mask = 0x0000FFFF0000FF0F
    out = run_text_kernel(LANE_MASK_BODY, _in(), block=64, out_words=64)
    # every comparison is true on every lane; the destinations held all ones before
    assert _mask_out(out, 0) == exec_mask, "VOPC e32 -> vcc"
    assert _mask_out(out, 1) == exec_mask, "VOPC e64 -> SGPR pair"
    assert _mask_out(out, 2) == exec_mask, "carry-out of v_add_co_u32 (-1 + -1 carries)"
    assert _mask_out(out, 3) == exec_mask, "v_cmp_class (NaN classes of 0xffffffff)"
    assert _mask_out(out, 4) == (1 << 64) - 1, "full EXEC: every lane"


def test_lane_mask_partial_wave_zeroes_missing_lanes():
    # a workgroup of 40 work items: lanes 40..63 start inactive, their bits read 0
    body = """
        s_mov_b64 s[12:13], -1
        v_mov_b32_e32 v2, -1
        v_add_co_u32_e64 v3, s[12:13], v2, v2
        v_cmp_ne_u32_e32 vcc, 7, v0
        s_mov_b64 s[14:15], vcc
        s_mov_b64 exec, -1
        v_mov_b32_e32 v5, 0
        v_mov_b32_e32 v6, s12
        v_mov_b32_e32 v7, s13
        global_store_dwordx2 v5, v[6:7], s[4:5]
        v_mov_b32_e32 v6, s14
        v_mov_b32_e32 v7, s15
        global_store_dwordx2 v5, v[6:7], s[4:5] offset:8
    """
    out = run_text_kernel(body, _in(), block=40, out_words=64)
    full = (1 << 40) - 1
    assert _mask_out(out, 0) == full
    assert _mask_out(out, 1) == full & ~(1 << 7)
