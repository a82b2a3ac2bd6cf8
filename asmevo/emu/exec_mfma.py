"""MFMA and SMFMAC instructions (operand layouts: CDNA3 ISA guide, "Matrix arithmetic").
"""

from __future__ import annotations

import functools
import numpy as np

from ..ir.operands import Imm, base_of
from ..semantics.immediates import imm_bits
from ..semantics.npbackend import NP
from .state import LANES
from .exec_common import LANE_COUNT, CompileError, U16, U32, U64, U8, _regs_of

# ----------------------------------------------------------------------------- MFMA
def _unpack_elems(raw: np.ndarray, ty: str):
    """Lane-major uint32 (64, nregs) -> float64/int64 elements (64, n)."""
    b = np.ascontiguousarray(raw)
    if ty == "f16":
        return b.view(np.float16).astype(np.float64)
    if ty == "bf16":
        h = b.view(U16).astype(U32) << U32(16)
        return h.view(np.float32).astype(np.float64)
    if ty == "f32":
        return b.view(np.float32).astype(np.float64)
    if ty == "f64":
        return b.view(np.float64)
    if ty == "i8":
        return b.view(np.int8).astype(np.int64)
    if ty in ("fp8", "bf8"):
        # gfx942 FNUZ formats, decoded by the same table the v_cvt_f32_fp8 semantics use
        return NP.fp82f(b.view(U8).astype(U32), ty).view(np.float32).astype(np.float64)
    raise CompileError(f"MFMA element type {ty}")


@functools.lru_cache(maxsize=None)
def mfma_maps(M: int, N: int, K: int, blocks: int = 1, f64_out: bool = False):
    """Lane/item index maps of a gfx9 MFMA with ``blocks`` independent M x N x K products
    (CDNA3 ISA guide, "Matrix arithmetic"; the same register layout as AMD's
    matrix instruction calculator for gfx9).

    Returns ``(Ai, Ak, Bl, Bk, Dl, Dk)``: int arrays of shapes (blocks, M, K), (blocks, K, N)
    and (blocks, M, N).  A[b][i][k] is element ``Ak`` (of the lane's packed elements) in lane
    ``Ai`` = b*M + M*blocks*(k // KL) + i with KL = K*M*blocks/64 elements per lane and
    ``Ak`` = k % KL; B likewise with N.  D[b][i][j] is accumulator element ``Dk`` of lane
    ``Dl``: rows come in groups of ``h`` (4, or 1 for f64 results), 64/N groups side by side
    across the lanes; with r = (i // h) % (64 // N), c = ceil(64 / (M*N/h)) blocks share a
    register: lane = (b % c)*N + r*c*N + j, element = b*M*N/64 + (i // (h*64/N))*h + i % h."""
    B = blocks
    KLa = K * M * B // 64
    KLb = K * N * B // 64
    b = np.arange(B)[:, None, None]
    i = np.arange(M)[None, :, None]
    k = np.arange(K)[None, None, :]
    Ai = b * M + M * B * (k // KLa) + i
    Ak = np.broadcast_to(k % KLa, Ai.shape)
    kk = np.arange(K)[None, :, None]
    j = np.arange(N)[None, None, :]
    Bl = b * N + N * B * (kk // KLb) + j
    Bk = np.broadcast_to(kk % KLb, Bl.shape)
    h = 1 if f64_out else 4
    mpr = 64 // N
    c = -(-64 // (M * N // h))
    ii = np.arange(M)[None, :, None]
    Dl = (b % c) * N + ((ii // h) % mpr) * c * N + j
    Dk = b * (M * N // 64) + (ii // (h * mpr)) * h + ii % h + 0 * j
    return Ai, Ak, Bl, Bk, Dl, Dk


def _blgp_src(blgp: int) -> np.ndarray:
    """Source lane of each lane's B operand under BLGP (AMD matrix instruction calculator,
    _get_blgp_transformed_lane): 0 normal, 1/2 broadcast lanes 0-31 / 32-63 to both
    halves, 3 rotate down by 16 lanes (lane l reads l+16 mod 64), 4-7 broadcast the
    16-lane group blgp-4 to all four groups."""
    lane = LANES
    return {0: lane, 1: lane & 31, 2: (lane & 31) + 32, 3: (lane + 16) & 63,
            4: lane & 15, 5: (lane & 15) + 16, 6: (lane & 15) + 32, 7: (lane & 15) + 48}[blgp]


def compile_mfma(inst, spec, ctx, nxt):
    """MFMA: D = C + A @ B per block, products and sums in float64 (int64 for i8), rounded
    once to the accumulator type.  CBSZ/ABID (multi-block forms): block b uses the A block
    (b // 2**cbsz) * 2**cbsz + abid; BLGP permutes the B lanes (f64 forms: NEG bits)."""
    ex = spec.extra
    if ex.get("sparse"):
        return _compile_smfmac(inst, spec, ctx, nxt)
    M, N, K, ty, tyb, acc = ex["M"], ex["N"], ex["K"], ex["ty"], ex["tyb"], ex["acc"]
    nb = ex.get("blocks", 1)
    cbsz = int(inst.mod("cbsz", 0) or 0)
    abid = int(inst.mod("abid", 0) or 0)
    if cbsz or abid:
        if nb == 1 or (1 << cbsz) > nb or abid >= (1 << cbsz):
            raise CompileError(f"MFMA cbsz:{cbsz} abid:{abid} is not valid for {nb} block(s)")
    a_block = (np.arange(nb) >> cbsz << cbsz) + abid
    blgp = int(inst.mod("blgp", 0) or 0)
    # CDNA3 f64 MFMA: the BLGP field holds NEG[2:0] (negate A, B, C), printed by LLVM as
    # neg:[a,b,c] (AMD matrix instruction calculator, CDNA3 FP64 negation)
    negs = (0, 0, 0)
    neg_mod = inst.mod("neg", None)
    if acc == "f64":
        if neg_mod:
            negs = tuple(int(x) for x in (tuple(neg_mod) + (0, 0, 0))[:3])
        elif blgp:
            negs = (blgp & 1, (blgp >> 1) & 1, (blgp >> 2) & 1)
        blgp = 0
    elif neg_mod and any(neg_mod):
        raise CompileError("neg on a non-f64 MFMA")
    blgp_src = _blgp_src(blgp)
    ops = inst.operands
    d = _regs_of(ops[0])
    A, Bop = _regs_of(ops[1]), _regs_of(ops[2])
    C = base_of(ops[3])
    nacc = nb * M * N // 64                 # accumulator elements per lane
    nregs = nacc * (2 if acc == "f64" else 1)
    Ai, Ak, Bl, Bk, Dl, Dk = mfma_maps(M, N, K, nb, acc == "f64")
    Ai, Ak = Ai[a_block], Ak[a_block]

    def regs(wv, r):
        F = wv.v if r.file == "v" else wv.a
        return F[r.index:r.index + r.count].T  # (64, count)

    cconst = None
    if isinstance(C, Imm):
        cconst = imm_bits(C.value, "f64" if acc == "f64" else acc, C.text)

    def run_group(wv, W):
        """``run`` for the running waves of a lockstep group (rows ``wv.srun`` of its W
        waves): gathers and scatters once for all of them; each wave's product is the same
        matmul call on the same layout as one wave's (summation order unchanged)."""
        rows = wv.srun

        def grp(r):     # (waves, 64, count)
            F = wv.v if r.file == "v" else wv.a
            return F[r.index:r.index + r.count].reshape(r.count, W, 64)[:, rows] \
                .transpose(1, 2, 0)
        ea = _unpack_elems(grp(A), ty)
        eb = _unpack_elems(grp(Bop), tyb)
        if blgp:
            eb = eb[:, blgp_src]
        if negs[0]:
            ea = -ea
        if negs[1]:
            eb = -eb
        Am = ea[:, Ai, Ak]
        Bm = eb[:, Bl, Bk]
        nw = Am.shape[0]
        if cconst is not None:
            cm = np.full((nw, 64, nacc), cconst, U64 if acc == "f64" else U32)
        else:
            cm = np.ascontiguousarray(grp(C))
        if acc == "f32":
            cv = cm.view(np.float32).astype(np.float64)[:, Dl, Dk]
            Dm = (cv + np.stack([Am[k] @ Bm[k] for k in range(nw)])).astype(np.float32) \
                .view(U32)
        elif acc == "f64":
            cv = cm.view(np.float64)[:, Dl, Dk]
            if negs[2]:
                cv = -cv
            Dm = (cv + np.stack([Am[k] @ Bm[k] for k in range(nw)])).view(U64)
        else:           # integer products and sums are exact: one batched matmul
            cv = cm.view(np.int32).astype(np.int64)[:, Dl, Dk]
            Dm = ((cv + Am @ Bm) & 0xFFFFFFFF).astype(U32)
        out = np.zeros((nw, 64, nacc), Dm.dtype)
        out[:, Dl, Dk] = Dm
        F = wv.v if d.file == "v" else wv.a
        F[d.index:d.index + nregs].reshape(nregs, W, 64)[:, rows] = \
            np.ascontiguousarray(out).view(U32).transpose(2, 0, 1)
        return nxt

    def run(wv):
        if LANE_COUNT[0] != 64:     # a lockstep group (asmevo.emu.lockstep)
            return run_group(wv, LANE_COUNT[0] // 64)
        ea = _unpack_elems(regs(wv, A), ty)
        eb = _unpack_elems(regs(wv, Bop), tyb)
        if blgp:
            eb = eb[blgp_src]
        if negs[0]:
            ea = -ea
        if negs[1]:
            eb = -eb
        Am = ea[Ai, Ak]
        Bm = eb[Bl, Bk]
        if cconst is not None:
            cm = np.full((64, nacc), cconst, U64 if acc == "f64" else U32)
        else:
            cm = np.ascontiguousarray(regs(wv, C))
        if acc == "f32":
            cv = cm.view(np.float32).astype(np.float64)[Dl, Dk]
            Dm = (cv + Am @ Bm).astype(np.float32).view(U32)
        elif acc == "f64":
            # f64 MFMA: products and sums in float64, summed in k order
            cv = cm.view(np.float64)[Dl, Dk]
            if negs[2]:
                cv = -cv
            Dm = (cv + Am @ Bm).view(U64)
        else:
            cv = cm.view(np.int32).astype(np.int64)[Dl, Dk]
            Dm = ((cv + Am @ Bm) & 0xFFFFFFFF).astype(U32)
        out = np.zeros((64, nacc), Dm.dtype)
        out[Dl, Dk] = Dm
        F = wv.v if d.file == "v" else wv.a
        F[d.index:d.index + nregs] = np.ascontiguousarray(out).view(U32).T
        return nxt
    return run


@functools.lru_cache(maxsize=None)
def smfmac_maps(M: int, K: int, esize: int, abid: int):
    """Index maps of the compressed A operand of a 4:2 sparse MFMA (v_smfmac_*).

    A[i][k] is dense M x K; each group of 4 k values keeps 2 of them.  The kept pair of
    group g of row i is stored as elements e0 = s % KS and e0 + 1 of lane
    i + M*(s // KS), s = 2g, KS = (K/2)*M/64 stored elements per lane.  Its 4-bit index
    (bits [1:0]: position in the group of the first stored value, [3:2]: of the second)
    is in the index VGPR of the same lane at bit 4*((e0 + 64*abid/esize) // 2) (ABID
    chooses the index set; AMD matrix instruction calculator, gfx9 compression index).
    Returns ``(lane, e0, shift)`` int arrays of shape (M, K/4)."""
    KS = (K // 2) * M // 64
    i = np.arange(M)[:, None]
    g = np.arange(K // 4)[None, :]
    s = 2 * g
    lane = i + M * (s // KS)
    e0 = np.broadcast_to(s % KS, lane.shape)
    shift = ((e0 + 64 * abid // esize) // 2) * 4
    return lane, e0, shift


_ESIZE = {"f16": 16, "bf16": 16, "i8": 8, "fp8": 8, "bf8": 8}


def _compile_smfmac(inst, spec, ctx, nxt):
    """v_smfmac_*: vdst += decompress(src0, src2) @ src1 (the destination is also the
    accumulator input).  CBSZ must be 0; ABID chooses the index set."""
    ex = spec.extra
    M, N, K, ty, tyb, acc = ex["M"], ex["N"], ex["K"], ex["ty"], ex["tyb"], ex["acc"]
    cbsz = int(inst.mod("cbsz", 0) or 0)
    abid = int(inst.mod("abid", 0) or 0)
    es = _ESIZE[ty]
    nsets = 32 // (2 * ((K // 2) * M // 64))       # index sets in the 32-bit index VGPR
    if cbsz or abid >= nsets:
        raise CompileError(f"sparse MFMA cbsz:{cbsz} abid:{abid} is not emulated")
    ops = inst.operands
    d, A, Bop, idx = _regs_of(ops[0]), _regs_of(ops[1]), _regs_of(ops[2]), _regs_of(ops[3])
    nacc = M * N // 64
    _, _, Bl, Bk, Dl, Dk = mfma_maps(M, N, K)
    Bl, Bk, Dl, Dk = Bl[0], Bk[0], Dl[0], Dk[0]
    lane, e0, shift = smfmac_maps(M, K, es, abid)
    base = 4 * np.arange(K // 4)[None, :] + np.zeros((M, 1), int)
    rows = np.broadcast_to(np.arange(M)[:, None], lane.shape)

    def regs(wv, r):
        F = wv.v if r.file == "v" else wv.a
        return F[r.index:r.index + r.count].T  # (64, count)

    def run(wv):
        ea = _unpack_elems(regs(wv, A), ty)
        eb = _unpack_elems(regs(wv, Bop), tyb)
        F = wv.v if idx.file == "v" else wv.a
        nib = (F[idx.index].astype(np.int64)[lane] >> shift) & 15
        Am = np.zeros((M, K), ea.dtype)
        Am[rows, base + (nib & 3)] = ea[lane, e0]
        Am[rows, base + (nib >> 2)] = ea[lane, e0 + 1]
        Bm = eb[Bl, Bk]
        cm = np.ascontiguousarray(regs(wv, d))
        if acc == "f32":
            cv = cm.view(np.float32).astype(np.float64)[Dl, Dk]
            Dm = (cv + Am @ Bm).astype(np.float32).view(U32)
        else:
            cv = cm.view(np.int32).astype(np.int64)[Dl, Dk]
            Dm = ((cv + Am @ Bm) & 0xFFFFFFFF).astype(U32)
        out = np.zeros((64, nacc), U32)
        out[Dl, Dk] = Dm
        Fd = wv.v if d.file == "v" else wv.a
        Fd[d.index:d.index + nacc] = np.ascontiguousarray(out).T
        return nxt
    return run


