"""NumPy references for the AITer kernels described in corpus/aiter/LAUNCH.md."""

import numpy as np


def topksoftmax(A, batch, expert, topk, renormalize, **_):
    """MoE gating: softmax over experts, top-k experts per token (descending weight)."""
    x = A.reshape(batch, expert).astype(np.float64)
    p = np.exp(x - x.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    idx = np.argsort(-p, axis=1, kind="stable")[:, :topk]
    w = np.take_along_axis(p, idx, axis=1)
    if renormalize:
        w = w / w.sum(axis=1, keepdims=True)
    return {"T": idx.astype(np.int32).reshape(-1), "W": w.astype(np.float32).reshape(-1)}


def bwd_odo(O, dO, head_dim, **_):
    """FMHA backward pre-pass: D = rowsum(dO * O) per (head, q row), fp32."""
    o = O.astype(np.float64).reshape(-1, head_dim)
    do = dO.astype(np.float64).reshape(-1, head_dim)
    return {"D": (o * do).sum(axis=1).astype(np.float32)}


def bwd_dq_convert(dQ_acc, **_):
    """FMHA backward post-pass: fp32 dQ accumulator -> fp16 dQ, rounded toward zero
    (the kernel converts with v_cvt_pkrtz_f16_f32)."""
    x = dQ_acc.astype(np.float32)
    h = x.astype(np.float16)
    # step the round-to-nearest result one ulp toward zero where it rounded away from zero
    away = np.abs(h.astype(np.float64)) > np.abs(x.astype(np.float64))
    hb = h.view(np.uint16)
    hb = np.where(away & np.isfinite(x), hb - np.uint16(1), hb).astype(np.uint16)
    return {"dQ": hb.view(np.float16)}


def unshuffle_b(Bs, N, K, layout=(16, 16)):
    """Inverse of aiter's shuffle_weight(B, layout): B [N, K] int8 was stored as
    view(N/BN, BN, K/BK, BK/16, 16).permute(0, 2, 3, 1, 4) with BN, BK = layout[0], 2*layout[1]."""
    BN, BK = layout[0], 2 * layout[1]
    x = Bs.reshape(N // BN, K // BK, BK // 16, BN, 16)
    return x.transpose(0, 3, 1, 2, 4).reshape(N, K)


def _bf16_bits(x):
    f = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = (f + 0x7FFF + ((f >> 16) & 1)) >> 16
    return r.astype(np.uint16)


def bf16_to_f32(bits):
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def i8gemm_bf16(A, B, SA, SB, BIAS, M, Ndim, K, **_):
    """out[M, N] = bf16((A @ B^T) * SA[m] * SB[n] + BIAS[n]); B pre-shuffled with aiter's
    shuffle_weight layout (16, 16); returned as bf16 bit patterns (uint16)."""
    Bu = unshuffle_b(B, Ndim, K)
    acc = A.reshape(M, K).astype(np.int64) @ Bu.astype(np.int64).T
    out = acc.astype(np.float64) * SA[:, None] * SB[None, :] + BIAS[None, :]
    return {"C": _bf16_bits(out).reshape(-1)}


def i8gemm_bf16_splitk(A, B, SA, SB, BIAS, M, Ndim, K, KS, **_):
    """Split-K variant: each of the KS splits rounds its partial product to bf16 and adds it
    with global_atomic_pk_add_bf16 into the zeroed output (bf16 + bf16, rounded)."""
    Bu = unshuffle_b(B, Ndim, K).astype(np.int64)
    A2 = A.reshape(M, K).astype(np.int64)
    step = K // KS
    acc = np.zeros((M, Ndim), np.float32)
    for j in range(KS):
        ks = slice(step * j, step * (j + 1))
        p = (A2[:, ks] @ Bu[:, ks].T).astype(np.float32) * SA[:, None] * SB[None, :]
        if j == 0:
            p = p + BIAS[None, :]
        acc = bf16_to_f32(_bf16_bits(acc + bf16_to_f32(_bf16_bits(p))))
    return {"C": _bf16_bits(acc).reshape(-1)}
