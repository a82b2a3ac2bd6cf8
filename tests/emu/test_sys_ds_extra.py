"""ds_append/ds_consume, s_trap, s_sendmsg, s_setpc/s_swappc and the compile-time list of
instructions without semantics (Program.unsupported)."""

import numpy as np
import pytest

from asmevo.emu.executor import Program
from asmevo.emu.memory import EmuError, GlobalMemory
from tests.emu.conftest import build_kernel

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
LANES = np.arange(64)


def test_ds_append_counts_active_lanes(snippet):
    # LDS[0x40 + 8] = 100; 40 active lanes: every active lane gets 100, LDS becomes 140
    s = snippet(["s_mov_b32 m0, 0x40", "ds_append v1 offset:8", "ds_read_b32 v2, v3 offset:0x48"])
    s.group.lds.words[0x48 // 4] = 100
    s.w.v[1] = 7
    s.w.set_exec(LANES < 40)
    s.run()
    assert np.array_equal(s.w.v[1], np.where(LANES < 40, 100, 7))
    assert s.group.lds.words[0x48 // 4] == 140


def test_ds_consume_wraps_and_two_waves(snippet):
    # two waves of 64 lanes consume from 100: first gets 100, second 36; LDS = 100-128 mod 2^32
    s = snippet(["s_mov_b32 m0, 0x10", "ds_consume v1"], nwaves=2)
    s.group.lds.words[4] = 100
    s.run()
    assert (s.waves[0].v[1] == 100).all() and (s.waves[1].v[1] == 36).all()
    assert s.group.lds.words[4] == (100 - 128) & 0xFFFFFFFF


def test_ds_append_out_of_range_faults(snippet):
    s = snippet(["s_mov_b32 m0, 0x1000", "ds_append v1"], lds=256)
    with pytest.raises(EmuError):
        s.run()


def test_s_trap_names_trap_id(snippet):
    s = snippet(["v_mov_b32_e32 v1, 3", "s_trap 2", "v_mov_b32_e32 v1, 4"])
    with pytest.raises(EmuError, match="s_trap 2"):
        s.run()
    assert (s.w.v[1] == 3).all()


def test_s_sendmsg_has_no_register_effect(snippet):
    s = snippet(["v_mov_b32_e32 v1, 3", "s_sendmsg sendmsg(MSG_INTERRUPT)", "v_mov_b32_e32 v2, 4"])
    s.run()
    assert (s.w.v[1] == 3).all() and (s.w.v[2] == 4).all()


def _with_addresses(kernel):
    a = 0
    for b in kernel.blocks:
        for inst in b.instructions:
            inst.address = a
            a += 4          # every instruction below is 4 bytes (inline constants only)
    return kernel


def test_s_setpc_and_swappc(snippet):
    # addresses: 0 s_mov, 4 s_mov, 8 swappc, 12 v_mov, 16 endpgm, 20 v_mov, 24 setpc
    lines = ["s_mov_b32 s4, 20", "s_mov_b32 s5, 0", "s_swappc_b64 s[6:7], s[4:5]",
             "v_mov_b32_e32 v1, 1", "s_endpgm", "v_mov_b32_e32 v2, 2", "s_setpc_b64 s[6:7]"]
    s = snippet([])
    s.kernel = _with_addresses(build_kernel(lines))
    s.run()
    assert s.w.s[6] == 12 and s.w.s[7] == 0
    assert (s.w.v[1] == 1).all() and (s.w.v[2] == 2).all()


def test_unsupported_instructions_listed_at_compile_time():
    k = build_kernel(["v_mov_b32_e32 v1, 1",
                      "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], 0 cbsz:1 abid:1",
                      "s_endpgm"])
    prog = Program(k, GlobalMemory())
    assert [i for i, _ in prog.unsupported] == [1]
    assert "cbsz" in prog.unsupported[0][1]


def _mfma_f64_case(snippet, mods):
    from asmevo.ir.instruction import Instruction
    rng = np.random.default_rng(3)
    s = snippet(["v_mfma_f64_16x16x4_f64 v[8:15], v[0:1], v[2:3], v[16:23]"])
    inst = s.kernel.blocks[0].instructions[0]
    s.kernel.blocks[0].instructions[0] = Instruction(inst.opcode, inst.operands, mods)
    A = rng.uniform(-1, 1, (16, 4))
    Bm = rng.uniform(-1, 1, (4, 16))
    C = rng.uniform(-1, 1, (64, 4))
    a = np.zeros(64)
    b = np.zeros(64)
    for k in range(4):          # A[i][k] in lane i + 16k, B[k][j] in lane j + 16k
        a[np.arange(16) + 16 * k] = A[:, k]
        b[np.arange(16) + 16 * k] = Bm[k, :]
    s.w.v[0:2] = a.view(np.uint32).reshape(64, 2).T
    s.w.v[2:4] = b.view(np.uint32).reshape(64, 2).T
    s.w.v[16:24] = np.ascontiguousarray(C).view(np.uint32).reshape(64, 8).T
    s.run()
    got = np.ascontiguousarray(s.w.v[8:16].T).view(np.float64)   # (64, 4)
    return A, Bm, C, got


@pytest.mark.parametrize("mods,na,nb,nc", [
    ((("neg", (1, 0, 1)),), -1, 1, -1),
    ((("neg", (0, 1, 0)),), 1, -1, 1),
    ((("blgp", 6),), 1, -1, -1),          # raw BLGP bits of an f64 MFMA are NEG[2:0]
])
def test_mfma_f64_negation(snippet, mods, na, nb, nc):
    A, Bm, C, got = _mfma_f64_case(snippet, mods)
    D = (na * A) @ (nb * Bm)
    for i in range(16):
        for j in range(16):
            ln, it = j + 16 * (i % 4), i // 4
            assert np.isclose(got[ln, it], nc * C[ln, it] + D[i, j], rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("blgp", range(8))
def test_mfma_blgp_lane_patterns(snippet, blgp):
    """BLGP source lane per the AMD matrix instruction calculator (_get_blgp_transformed_lane):
    1 lanes 0-31 to both halves, 2 lanes 32-63 to both, 3 rotate down by 16 (lane l reads
    l+16 mod 64), 4-7 broadcast 16-lane group blgp-4 to all four groups."""
    s = snippet([f"v_mfma_f32_32x32x2_f32 v[8:23], v0, v1, 0 blgp:{blgp}"])
    rng = np.random.default_rng(blgp)
    a = rng.integers(-4, 5, 64).astype(np.float32)
    b = rng.integers(-4, 5, 64).astype(np.float32)
    s.w.v[0] = a.view(np.uint32)
    s.w.v[1] = b.view(np.uint32)
    s.run()
    l = np.arange(64)
    src = {0: l, 1: l % 32, 2: np.where(l < 32, l + 32, l), 3: (l + 16) % 64,
           4: l % 16, 5: 16 + l % 16, 6: 32 + l % 16, 7: 48 + l % 16}[blgp]
    bb = b[src]
    # 32x32x2 f32: A[i][k] in lane i + 32k, B[k][j] in lane j + 32k (single block)
    A = np.stack([a[0:32], a[32:64]], axis=1)
    Bm = np.stack([bb[0:32], bb[32:64]], axis=0)
    D = A @ Bm
    got = np.ascontiguousarray(s.w.v[8:24].T).view(np.float32)   # (64, 16)
    for i in range(32):
        for j in range(32):
            ln = j + 32 * ((i // 4) % 2)
            it = i % 4 + 4 * (i // 8)
            assert got[ln, it] == D[i, j]


@pytest.mark.parametrize("cbsz,abid", [(0, 0), (2, 1), (4, 15)])
def test_mfma_4x4x1_16b_broadcast(snippet, cbsz, abid):
    """16 blocks of 4x4x1: A[b][i][0] in lane 4b+i, B[b][0][j] in lane 4b+j, D[b][i][j] in
    register i, lane 4b+j; block b takes A block (b >> cbsz << cbsz) + abid."""
    s = snippet([f"v_mfma_f32_4x4x1_16b_f32 v[8:11], v0, v1, v[12:15] cbsz:{cbsz} abid:{abid}"])
    a = np.arange(64, dtype=np.float32) - 20
    b = (np.arange(64, dtype=np.float32) % 7) - 3
    s.w.v[0] = a.view(np.uint32)
    s.w.v[1] = b.view(np.uint32)
    for r in range(4):
        s.w.v[12 + r] = np.full(64, 100.0 * r, np.float32).view(np.uint32)
    s.run()
    got = s.w.v[8:12].view(np.float32)
    for blk in range(16):
        src = ((blk >> cbsz) << cbsz) + abid
        for i in range(4):
            for j in range(4):
                assert got[i, 4 * blk + j] == 100.0 * i + a[4 * src + i] * b[4 * blk + j]


def test_mfma_32x32x1_2b_two_blocks(snippet):
    """2 blocks of 32x32x1: A[b][i] in lane 32b+i; D[b][i][j] in register 16b + 4*(i//8)
    + i%4, lane j + 32*((i//4) % 2)."""
    s = snippet(["v_mfma_f32_32x32x1_2b_f32 v[8:39], v0, v1, 0"])
    a = (np.arange(64) % 5 - 2).astype(np.float32)
    b = (np.arange(64) % 3 + 1).astype(np.float32)
    s.w.v[0] = a.view(np.uint32)
    s.w.v[1] = b.view(np.uint32)
    s.run()
    got = s.w.v[8:40].view(np.float32)
    for blk in range(2):
        for i in range(32):
            for j in range(32):
                r = 16 * blk + 4 * (i // 8) + i % 4
                assert got[r, j + 32 * ((i // 4) % 2)] == a[32 * blk + i] * b[32 * blk + j]


def test_mfma_f64_4x4x4_4b(snippet):
    """4 blocks of f64 4x4x4: A[b][i][k] in lane 4b + 16k + i; D[b][i][j] in lane
    16i + 4b + j (one f64 element)."""
    rng = np.random.default_rng(5)
    s = snippet(["v_mfma_f64_4x4x4_4b_f64 v[8:9], v[0:1], v[2:3], 0"])
    a = rng.uniform(-1, 1, 64)
    b = rng.uniform(-1, 1, 64)
    s.w.v[0:2] = a.view(np.uint32).reshape(64, 2).T
    s.w.v[2:4] = b.view(np.uint32).reshape(64, 2).T
    s.run()
    got = np.ascontiguousarray(s.w.v[8:10].T).view(np.float64)[:, 0]
    for blk in range(4):
        for i in range(4):
            for j in range(4):
                want = sum(a[4 * blk + 16 * k + i] * b[4 * blk + 16 * k + j] for k in range(4))
                assert np.isclose(got[16 * i + 4 * blk + j], want, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("abid", [0, 3])
def test_smfmac_f16_16x16x32(snippet, abid):
    """4:2 sparse A (16x32 f16): in row i, group g of 4 columns keeps positions p0 < p1,
    stored as the two f16 halves of VGPR (g % 2) in lane i + 16*(g // 2); the index VGPR of
    that lane holds p0 | p1 << 2 at bit 4*(g % 2) + 8*abid.  D = C + A @ B, B 32x16 with
    B[k][j] in lane j + 16*(k // 8), half k % 8 of v[6:9]; C/D in v[0:3] (D[i][j]: v(i%4),
    lane j + 16*(i//4))."""
    rng = np.random.default_rng(abid)
    s = snippet([f"v_smfmac_f32_16x16x32_f16 v[0:3], v[4:5], v[6:9], v10 abid:{abid}"])
    A = np.zeros((16, 32))
    stored = np.zeros((64, 4), np.float16)      # lane, half index within v[4:5]
    index = np.zeros(64, np.uint32)
    for i in range(16):
        for g in range(8):
            p0, p1 = sorted(rng.choice(4, 2, replace=False))
            x0, x1 = rng.integers(-4, 5, 2)
            A[i, 4 * g + p0], A[i, 4 * g + p1] = x0, x1
            ln = i + 16 * (g // 2)
            stored[ln, 2 * (g % 2)], stored[ln, 2 * (g % 2) + 1] = x0, x1
            index[ln] |= np.uint32((p0 | (p1 << 2)) << (4 * (g % 2) + 8 * abid))
    Bm = rng.integers(-3, 4, (32, 16)).astype(np.float64)
    bl = np.zeros((64, 8), np.float16)
    for k in range(32):
        for j in range(16):
            bl[j + 16 * (k // 8), k % 8] = Bm[k, j]
    C = rng.integers(-8, 9, (64, 4)).astype(np.float32)
    s.w.v[4:6] = stored.view(np.uint32).T
    s.w.v[6:10] = bl.view(np.uint32).T
    s.w.v[10] = index | np.uint32(0xAAAAAAAA & ~(0xFF << (8 * abid)))  # other sets: noise
    s.w.v[0:4] = C.view(np.uint32).T
    s.run()
    D = A @ Bm
    got = s.w.v[0:4].view(np.float32)
    for i in range(16):
        for j in range(16):
            ln = j + 16 * (i // 4)
            assert got[i % 4, ln] == C[ln, i % 4] + D[i, j]


def _vsharp(s, base, stride, nrec, dfmt, nfmt):
    s.w.s[4] = base & 0xFFFFFFFF
    s.w.s[5] = (base >> 32) | (stride << 16)
    s.w.s[6] = nrec
    s.w.s[7] = (dfmt << 15) | (nfmt << 12)


def test_buffer_load_format_unorm8x4_and_defaults(snippet):
    # DATA_FORMAT 10 (8_8_8_8), NUM_FORMAT 0 (unorm): byte b -> b / 255.0; idxen, stride 4
    s = snippet(["buffer_load_format_xyzw v[1:4], v0, s[4:7], 0 idxen",
                 "buffer_load_format_xy v[5:6], v0, s[8:11], 0 idxen"])
    data = np.arange(256, dtype=np.uint8)
    base = s.mem.map("buf", data)
    _vsharp(s, base, 4, 64, 10, 0)
    s.w.s[8:12] = s.w.s[4:8]
    s.w.s[11] = (2 << 15) | (5 << 12)          # 16-bit sint, one component
    s.w.s[9] = (base >> 32) | (2 << 16)        # stride 2
    s.w.v[0] = LANES
    s.run()
    got = s.w.v[1:5].view(np.float32)
    for c in range(4):
        assert np.array_equal(got[c], (np.float32(4 * LANES + c) / np.float32(255.0)))
    sh = data.view(np.int16)
    assert np.array_equal(s.w.v[5].view(np.int32), sh[LANES].astype(np.int32))
    assert (s.w.v[6] == 0).all()               # y beyond a 1-component format reads 0


def test_buffer_load_format_w_default_and_range(snippet):
    # 32-bit float, one component: y, z read 0 and w reads 1.0; lanes past num_records read 0
    s = snippet(["buffer_load_format_xyzw v[1:4], v0, s[4:7], 0 idxen"])
    data = np.arange(64, dtype=np.float32) * 0.5
    base = s.mem.map("buf", data)
    _vsharp(s, base, 4, 10, 4, 7)
    s.w.v[0] = LANES
    s.run()
    v = s.w.v[1:5].view(np.float32)
    assert np.array_equal(v[0], np.where(LANES < 10, LANES * 0.5, 0))
    assert (v[1] == 0).all() and (v[2] == 0).all() and (v[3] == 1.0).all()


def test_buffer_store_format_f16x2_and_snorm16(snippet):
    s = snippet(["buffer_store_format_xy v[1:2], v0, s[4:7], 0 idxen",
                 "buffer_store_format_x v3, v0, s[8:11], 0 idxen"])
    out = s.mem.map("out", np.zeros(64, np.uint32))
    out2 = s.mem.map("out2", np.full(64, 0xFFFF, np.uint16))
    _vsharp(s, out, 4, 64, 5, 7)               # 16_16 float
    s.w.s[8:12] = s.w.s[4:8]
    s.w.s[8] = out2 & 0xFFFFFFFF
    s.w.s[9] = (out2 >> 32) | (2 << 16)
    s.w.s[11] = (2 << 15) | (1 << 12)          # 16-bit snorm
    s.w.v[0] = LANES
    s.w.v[1] = (LANES * 0.25).astype(np.float32).view(np.uint32)
    s.w.v[2] = (-LANES * 1.0).astype(np.float32).view(np.uint32)
    s.w.v[3] = np.linspace(-2, 2, 64).astype(np.float32).view(np.uint32)
    s.run()
    h = s.mem.region("out").data.view(np.float16).reshape(64, 2)
    assert np.array_equal(h[:, 0], (LANES * 0.25).astype(np.float16))
    assert np.array_equal(h[:, 1], (-LANES * 1.0).astype(np.float16))
    q = s.mem.region("out2").data.view(np.int16)
    want = np.rint(np.clip(np.linspace(-2, 2, 64).astype(np.float32).astype(np.float64), -1, 1)
                   * 32767).astype(np.int16)
    assert np.array_equal(q, want)


def test_buffer_format_packed_formats_raise(snippet):
    s = snippet(["buffer_load_format_x v1, v0, s[4:7], 0 idxen"])
    base = s.mem.map("buf", np.zeros(64, np.uint32))
    _vsharp(s, base, 4, 64, 8, 0)              # 10_10_10_2: not emulated
    with pytest.raises(EmuError, match="DATA_FORMAT 8"):
        s.run()


def test_tbuffer_format_from_instruction(snippet):
    # the instruction's format wins over the V#'s (which says 8-bit unorm here)
    s = snippet(["tbuffer_load_format_xy v[2:3], v0, s[4:7], 0 "
                 "format:[BUF_DATA_FORMAT_16_16,BUF_NUM_FORMAT_SINT] idxen",
                 "tbuffer_store_format_x v1, v0, s[8:11], 0 format:116 idxen"])
    data = (np.arange(128, dtype=np.int16) - 64)
    base = s.mem.map("buf", data)
    out = s.mem.map("out", np.zeros(64, np.float32))
    _vsharp(s, base, 4, 64, 1, 0)
    s.w.s[8] = out & 0xFFFFFFFF
    s.w.s[9] = (out >> 32) | (4 << 16)
    s.w.s[10] = 64
    s.w.s[11] = (1 << 15)
    s.w.v[0] = LANES
    s.w.v[1] = (LANES * 1.5).astype(np.float32).view(np.uint32)
    s.run()
    assert np.array_equal(s.w.v[2].view(np.int32), 2 * LANES - 64)
    assert np.array_equal(s.w.v[3].view(np.int32), 2 * LANES - 63)
    assert np.array_equal(s.mem.region("out").data.view(np.float32), LANES * 1.5)
