"""Instructions whose meaning is not a per-lane function of register values.

They are registered here (``fn=None``) so that the registry stays the single
list of what asmevo understands; the emulator implements each ``kind`` in
:mod:`asmevo.emu.executor`, and the z3 backend raises
:class:`~asmevo.semantics.registry.Unsupported` for them.
"""

from __future__ import annotations

from .registry import define

_SIZES = {"dword": 4, "dwordx2": 8, "dwordx3": 12, "dwordx4": 16, "dwordx8": 32, "dwordx16": 64,
          "ubyte": 1, "sbyte": 1, "ushort": 2, "sshort": 2, "byte": 1, "short": 2,
          "b32": 4, "b64": 8, "b96": 12, "b128": 16, "u8": 1, "i8": 1, "u16": 2, "i16": 2, "b8": 1,
          "b16": 2}


def K(name, kind, **extra):
    define(name, None, kind, **extra)


# program flow / no value effect
for n in ("s_atc_probe", "s_atc_probe_buffer", "s_dcache_inv_vol", "s_dcache_wb_vol",
          "s_waitcnt", "s_nop", "s_sleep", "s_setprio", "s_waitcnt_vmcnt", "s_waitcnt_lgkmcnt",
          "s_waitcnt_expcnt", "buffer_wbl2", "buffer_inv", "s_icache_inv", "s_dcache_wb",
          "s_dcache_inv", "s_ttracedata", "s_sethalt", "buffer_wbinvl1", "buffer_wbinvl1_vol",
          "s_code_end"):
    K(n, "nop")
K("s_barrier", "barrier")
K("s_endpgm", "endpgm")
for n in ("s_branch", "s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_vccz", "s_cbranch_vccnz",
          "s_cbranch_execz", "s_cbranch_execnz"):
    K(n, "branch")
for n in ("s_getpc_b64", "s_setpc_b64", "s_swappc_b64", "s_setreg_b32", "s_getreg_b32",
          "s_setreg_imm32_b32", "s_set_gpr_idx_on", "s_set_gpr_idx_off", "s_set_gpr_idx_mode",
          "s_memtime", "s_memrealtime", "s_sendmsg", "s_trap"):
    K(n, "sys")
for n in ("v_readlane_b32", "v_writelane_b32", "v_readfirstlane_b32"):
    K(n, "lane")
K("v_swap_b32", "swap")
for n in ("s_movrels_b32", "s_movrels_b64", "s_movreld_b32", "s_movreld_b64"):
    K(n, "movrel", size=8 if n.endswith("64") else 4)
# SMEM
for sz in ("dword", "dwordx2", "dwordx4", "dwordx8", "dwordx16"):
    K(f"s_load_{sz}", "smem", size=_SIZES[sz])
    K(f"s_buffer_load_{sz}", "smem", size=_SIZES[sz], buffer=True)
# FLAT / GLOBAL / SCRATCH
for seg in ("flat", "global", "scratch"):
    for sz in ("dword", "dwordx2", "dwordx3", "dwordx4", "ubyte", "sbyte", "ushort", "sshort"):
        K(f"{seg}_load_{sz}", "vmem", size=_SIZES[sz], seg=seg, load=True,
          signed=sz in ("sbyte", "sshort"))
    for sz in ("dword", "dwordx2", "dwordx3", "dwordx4", "byte", "short"):
        K(f"{seg}_store_{sz}", "vmem", size=_SIZES[sz], seg=seg, load=False)
    for n, sz, hi in (("byte_d16_hi", 1, True), ("short_d16_hi", 2, True)):
        K(f"{seg}_store_{n}", "vmem", size=sz, seg=seg, load=False, d16_hi=True)
    for n, sz, hi, sg in (("ubyte_d16", 1, False, False), ("ubyte_d16_hi", 1, True, False),
                          ("sbyte_d16", 1, False, True), ("sbyte_d16_hi", 1, True, True),
                          ("short_d16", 2, False, False), ("short_d16_hi", 2, True, False)):
        K(f"{seg}_load_{n}", "vmem", size=sz, seg=seg, load=True, d16=True, d16_hi=hi, signed=sg)
    if seg == "global":
        for sz in ("dword", "ubyte", "sbyte", "ushort", "sshort"):
            K(f"global_load_lds_{sz}", "vmem", size=_SIZES[sz], seg=seg, load=True, lds=True,
              signed=sz in ("sbyte", "sshort"))
    if seg != "scratch":
        for op in ("add", "sub", "swap", "cmpswap", "smin", "umin", "smax", "umax", "and", "or",
                   "xor", "inc", "dec", "add_f32", "add_f64", "min_f64", "max_f64", "pk_add_f16",
                   "pk_add_bf16"):
            K(f"{seg}_atomic_{op}", "vmem_atomic", op=op, size=8 if op.endswith("f64") else 4,
              seg=seg)
            if not op.endswith(("f32", "f16", "bf16", "f64")):
                K(f"{seg}_atomic_{op}_x2", "vmem_atomic", op=op, size=8, seg=seg)
# MUBUF
for sz in ("dword", "dwordx2", "dwordx3", "dwordx4", "ubyte", "sbyte", "ushort", "sshort"):
    K(f"buffer_load_{sz}", "mubuf", size=_SIZES[sz], load=True, signed=sz in ("sbyte", "sshort"))
for sz in ("dword", "dwordx2", "dwordx3", "dwordx4", "byte", "short"):
    K(f"buffer_store_{sz}", "mubuf", size=_SIZES[sz], load=False)
K("buffer_store_short_d16_hi", "mubuf", size=2, load=False, d16_hi=True)
# typed buffer access: the V#'s DATA_FORMAT/NUM_FORMAT give the element layout and conversion
for _c, _nc in (("x", 1), ("xy", 2), ("xyz", 3), ("xyzw", 4)):
    K(f"buffer_load_format_{_c}", "mubuf", size=4 * _nc, load=True, format=_nc)
    K(f"buffer_store_format_{_c}", "mubuf", size=4 * _nc, load=False, format=_nc)
    # MTBUF: the same with the format in the instruction (format:[...] / format:N)
    K(f"tbuffer_load_format_{_c}", "mubuf", size=4 * _nc, load=True, format=_nc, tbuffer=True)
    K(f"tbuffer_store_format_{_c}", "mubuf", size=4 * _nc, load=False, format=_nc, tbuffer=True)
for n, sz, hi, sg in (("ubyte_d16", 1, False, False), ("ubyte_d16_hi", 1, True, False),
                      ("sbyte_d16", 1, False, True), ("sbyte_d16_hi", 1, True, True),
                      ("short_d16", 2, False, False), ("short_d16_hi", 2, True, False)):
    K(f"buffer_load_{n}", "mubuf", size=sz, load=True, d16=True, d16_hi=hi, signed=sg)
for sz in ("dword", "dwordx2", "dwordx4"):
    K(f"s_store_{sz}", "smem", size=_SIZES[sz], store=True)
for op in ("add", "sub", "swap", "cmpswap", "smin", "umin", "smax", "umax", "and", "or", "xor",
           "inc", "dec"):
    K(f"s_atomic_{op}", "smem", size=4, atomic=op)
    K(f"s_atomic_{op}_x2", "smem", size=8, atomic=op)
K("buffer_store_byte_d16_hi", "mubuf", size=1, load=False, d16_hi=True)
for op in ("add", "sub", "swap", "cmpswap", "smin", "umin", "smax", "umax", "and", "or", "xor",
           "inc", "dec", "add_f32", "pk_add_f16", "pk_add_bf16", "add_f64", "min_f64", "max_f64"):
    K(f"buffer_atomic_{op}", "mubuf_atomic", op=op, size=8 if op.endswith("f64") else 4)
    if not op.endswith(("f32", "f16", "bf16", "f64")):
        K(f"buffer_atomic_{op}_x2", "mubuf_atomic", op=op, size=8)
# DS
for sz in ("b32", "b64", "b96", "b128", "u8", "i8", "u16", "i16"):
    K(f"ds_read_{sz}", "ds", op="read", size=_SIZES[sz], signed=sz in ("i8", "i16"))
for sz in ("b32", "b64", "b96", "b128", "b8", "b16"):
    K(f"ds_write_{sz}", "ds", op="write", size=_SIZES[sz])
K("ds_write_b8_d16_hi", "ds", op="write", size=1, d16_hi=True)
for n, sz, hi, sg in (("u8_d16", 1, False, False), ("u8_d16_hi", 1, True, False),
                      ("i8_d16", 1, False, True), ("i8_d16_hi", 1, True, True),
                      ("u16_d16", 2, False, False), ("u16_d16_hi", 2, True, False)):
    K(f"ds_read_{n}", "ds", op="read", size=sz, d16=True, d16_hi=hi, signed=sg)
K("ds_write_b16_d16_hi", "ds", op="write", size=2, d16_hi=True)
for n, sz, st in (("ds_read2_b32", 4, 1), ("ds_read2_b64", 8, 1), ("ds_read2st64_b32", 4, 64),
                  ("ds_read2st64_b64", 8, 64)):
    K(n, "ds", op="read2", size=sz, stride=st)
for n, sz, st in (("ds_write2_b32", 4, 1), ("ds_write2_b64", 8, 1), ("ds_write2st64_b32", 4, 64),
                  ("ds_write2st64_b64", 8, 64)):
    K(n, "ds", op="write2", size=sz, stride=st)
# LDS atomics: ds_<op>_<type> (no return) and ds_<op>_rtn_<type> (returns the old value)
for op, ty in (("add", "u32"), ("sub", "u32"), ("rsub", "u32"), ("inc", "u32"), ("dec", "u32"),
               ("min", "i32"), ("max", "i32"), ("min", "u32"), ("max", "u32"), ("and", "b32"),
               ("or", "b32"), ("xor", "b32"), ("add", "f32"), ("min", "f32"), ("max", "f32"),
               ("cmpst", "b32")):
    aop = {"min_u32": "umin", "max_u32": "umax", "min_i32": "smin", "max_i32": "smax",
           "add_f32": "add_f32", "min_f32": "min_f32", "max_f32": "max_f32"}.get(f"{op}_{ty}", op)
    K(f"ds_{op}_{ty}", "ds", op="atomic", aop=aop, ret=False, size=4)
    K(f"ds_{op}_rtn_{ty}", "ds", op="atomic", aop=aop, ret=True, size=4)
    ty64 = {"u32": "u64", "i32": "i64", "b32": "b64", "f32": "f64"}[ty]
    if (op, ty64) == ("add", "f64") or ty != "f32":
        aop64 = {"add_f32": "add_f64"}.get(aop, aop)
        K(f"ds_{op}_{ty64}", "ds", op="atomic", aop=aop64, ret=False, size=8)
        K(f"ds_{op}_rtn_{ty64}", "ds", op="atomic", aop=aop64, ret=True, size=8)
for op, sz in (("min_f64", 8), ("max_f64", 8), ("pk_add_f16", 4), ("pk_add_bf16", 4)):
    name, ty = op.rsplit("_", 1)
    K(f"ds_{op}", "ds", op="atomic", aop=op, ret=False, size=sz)
    K(f"ds_{name}_rtn_{ty}", "ds", op="atomic", aop=op, ret=True, size=sz)
for n in ("ds_wrxchg_rtn_b32", "ds_wrxchg_rtn_b64"):
    K(n, "ds", op="atomic", aop="swap", ret=True, size=4 if n.endswith("b32") else 8)
K("ds_swizzle_b32", "ds", op="swizzle", size=4)
# ds_append / ds_consume: LDS[M0 + offset] += / -= popcount(EXEC); every active lane gets the
# pre-op value (CDNA3 ISA guide, DS_APPEND / DS_CONSUME; LLVM llvm.amdgcn.ds.append puts the
# LDS pointer in M0)
K("ds_append", "ds", op="append", size=4, sign=1)
K("ds_consume", "ds", op="append", size=4, sign=-1)
K("ds_permute_b32", "ds", op="permute", size=4)
K("ds_bpermute_b32", "ds", op="bpermute", size=4)
# MFMA (operand layouts: CDNA3 ISA guide, "Matrix arithmetic"; asmevo.emu.executor.mfma_maps)
_MFMA = {
    "v_mfma_f32_32x32x8_f16": (32, 32, 8, "f16", "f32"),
    "v_mfma_f32_32x32x8f16": (32, 32, 8, "f16", "f32"),
    "v_mfma_f32_16x16x16_f16": (16, 16, 16, "f16", "f32"),
    "v_mfma_f32_16x16x16f16": (16, 16, 16, "f16", "f32"),
    "v_mfma_f32_32x32x8_bf16": (32, 32, 8, "bf16", "f32"),
    "v_mfma_f32_16x16x16_bf16": (16, 16, 16, "bf16", "f32"),
    "v_mfma_f32_32x32x2_f32": (32, 32, 2, "f32", "f32"),
    "v_mfma_f32_16x16x4_f32": (16, 16, 4, "f32", "f32"),
    "v_mfma_i32_16x16x32_i8": (16, 16, 32, "i8", "i32"),
    "v_mfma_i32_32x32x16_i8": (32, 32, 16, "i8", "i32"),
    "v_mfma_f64_16x16x4_f64": (16, 16, 4, "f64", "f64"),
    "v_mfma_f64_16x16x4f64": (16, 16, 4, "f64", "f64"),
}
for n, (M, N, Kk, ty, acc) in _MFMA.items():
    K(n, "mfma", M=M, N=N, K=Kk, ty=ty, tyb=ty, acc=acc)
# multi-block forms (``blocks`` independent products; CBSZ/ABID broadcast A blocks) and the
# pre-gfx940 spellings LLVM still accepts for single- and multi-block shapes
_MFMA_MB = {
    "v_mfma_f32_32x32x1_2b_f32": (32, 32, 1, 2, "f32", "f32", ("v_mfma_f32_32x32x1f32",)),
    "v_mfma_f32_16x16x1_4b_f32": (16, 16, 1, 4, "f32", "f32", ("v_mfma_f32_16x16x1f32",)),
    "v_mfma_f32_4x4x1_16b_f32": (4, 4, 1, 16, "f32", "f32", ("v_mfma_f32_4x4x1f32",)),
    "v_mfma_f32_32x32x4_2b_f16": (32, 32, 4, 2, "f16", "f32", ("v_mfma_f32_32x32x4f16",)),
    "v_mfma_f32_16x16x4_4b_f16": (16, 16, 4, 4, "f16", "f32", ("v_mfma_f32_16x16x4f16",)),
    "v_mfma_f32_4x4x4_16b_f16": (4, 4, 4, 16, "f16", "f32", ("v_mfma_f32_4x4x4f16",)),
    "v_mfma_f32_32x32x4_2b_bf16": (32, 32, 4, 2, "bf16", "f32", ("v_mfma_f32_32x32x4bf16_1k",)),
    "v_mfma_f32_16x16x4_4b_bf16": (16, 16, 4, 4, "bf16", "f32", ("v_mfma_f32_16x16x4bf16_1k",)),
    "v_mfma_f32_4x4x4_16b_bf16": (4, 4, 4, 16, "bf16", "f32", ("v_mfma_f32_4x4x4bf16_1k",)),
    "v_mfma_i32_32x32x4_2b_i8": (32, 32, 4, 2, "i8", "i32", ("v_mfma_i32_32x32x4i8",)),
    "v_mfma_i32_16x16x4_4b_i8": (16, 16, 4, 4, "i8", "i32", ("v_mfma_i32_16x16x4i8",)),
    "v_mfma_i32_4x4x4_16b_i8": (4, 4, 4, 16, "i8", "i32", ("v_mfma_i32_4x4x4i8",)),
    "v_mfma_f64_4x4x4_4b_f64": (4, 4, 4, 4, "f64", "f64", ("v_mfma_f64_4x4x4f64",)),
}
for n, (M, N, Kk, nb, ty, acc, aliases) in _MFMA_MB.items():
    for _n in (n,) + aliases:
        K(_n, "mfma", M=M, N=N, K=Kk, ty=ty, tyb=ty, acc=acc, blocks=nb)
for _n, _c in (("v_mfma_f32_32x32x2f32", "v_mfma_f32_32x32x2_f32"),
               ("v_mfma_f32_16x16x4f32", "v_mfma_f32_16x16x4_f32"),
               ("v_mfma_f32_32x32x8bf16_1k", "v_mfma_f32_32x32x8_bf16"),
               ("v_mfma_f32_16x16x16bf16_1k", "v_mfma_f32_16x16x16_bf16")):
    if _n not in _MFMA:
        M, N, Kk, ty, acc = _MFMA[_c]
        K(_n, "mfma", M=M, N=N, K=Kk, ty=ty, tyb=ty, acc=acc)
# 4:2 structured-sparse MFMA: D += decompress(A, index VGPR src2) @ B (CDNA3 ISA guide,
# "Sparse matrix"; index layout as AMD's matrix instruction calculator)
for _n, (M, N, Kk, ty, acc) in {
        "v_smfmac_f32_16x16x32_f16": (16, 16, 32, "f16", "f32"),
        "v_smfmac_f32_32x32x16_f16": (32, 32, 16, "f16", "f32"),
        "v_smfmac_f32_16x16x32_bf16": (16, 16, 32, "bf16", "f32"),
        "v_smfmac_f32_32x32x16_bf16": (32, 32, 16, "bf16", "f32"),
        "v_smfmac_i32_16x16x64_i8": (16, 16, 64, "i8", "i32"),
        "v_smfmac_i32_32x32x32_i8": (32, 32, 32, "i8", "i32")}.items():
    K(_n, "mfma", M=M, N=N, K=Kk, ty=ty, tyb=ty, acc=acc, sparse=True)
for _a in ("fp8", "bf8"):
    for _b in ("fp8", "bf8"):
        K(f"v_smfmac_f32_16x16x64_{_a}_{_b}", "mfma", M=16, N=16, K=64, ty=_a, tyb=_b, acc="f32",
          sparse=True)
        K(f"v_smfmac_f32_32x32x32_{_a}_{_b}", "mfma", M=32, N=32, K=32, ty=_a, tyb=_b, acc="f32",
          sparse=True)
for _a in ("fp8", "bf8"):
    for _b in ("fp8", "bf8"):
        K(f"v_mfma_f32_32x32x16_{_a}_{_b}", "mfma", M=32, N=32, K=16, ty=_a, tyb=_b, acc="f32")
        K(f"v_mfma_f32_16x16x32_{_a}_{_b}", "mfma", M=16, N=16, K=32, ty=_a, tyb=_b, acc="f32")
