"""Calibration microbenchmarks of the CU model against TIMING_FACTS.md.

Each benchmark is a small gfx942 kernel generated as assembly text (:func:`kernel_text`;
it assembles with llvm-mc), run by the emulator with a trace and replayed by
:func:`asmevo.perf.cu.simulate_cu` with every workgroup on the one modelled CU.  A figure
is a *difference* of two runs that differ only in the repetition count of the measured
sequence, so the prologue and epilogue cancel:
``per-op clk = (cycles(n2) - cycles(n1)) / (n2 - n1)``.

:func:`run_all` returns one :class:`Figure` per row: name, model value, published value
(TIMING_FACTS.md; ``None`` where no number is published), unit and source.  Every
model value is an estimate of the model, not a measurement.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import numpy as np

from .machine import MI300X, Machine

_HEAD = """\t.text
\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
\t.globl\tk
\t.p2align\t8
\t.type\tk,@function
k:
"""

_TAIL = """\ts_endpgm
\t.section\t.rodata,"a",@progbits
\t.p2align\t6, 0x0
\t.amdhsa_kernel k
\t\t.amdhsa_group_segment_fixed_size {lds}
\t\t.amdhsa_private_segment_fixed_size 0
\t\t.amdhsa_kernarg_size 8
\t\t.amdhsa_user_sgpr_count 2
\t\t.amdhsa_user_sgpr_kernarg_segment_ptr 1
\t\t.amdhsa_system_sgpr_workgroup_id_x 1
\t\t.amdhsa_system_vgpr_workitem_id 0
\t\t.amdhsa_next_free_vgpr {vgprs}
\t\t.amdhsa_next_free_sgpr 32
\t\t.amdhsa_accum_offset {accum}
\t\t.amdhsa_reserve_vcc 1
\t\t.amdhsa_reserve_xnack_mask 1
\t.end_amdhsa_kernel
\t.text
.Lfunc_end0:
\t.size\tk, .Lfunc_end0-k
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     {agprs}
    .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: {lds}
    .kernarg_segment_align: 8
    .kernarg_segment_size: 8
    .max_flat_workgroup_size: 1024
    .name:           k
    .private_segment_fixed_size: 0
    .sgpr_count:     32
    .sgpr_spill_count: 0
    .symbol:         k.kd
    .uses_dynamic_stack: false
    .vgpr_count:     {vgprs}
    .vgpr_spill_count: 0
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--gfx942
amdhsa.version:
  - 1
  - 2
...

\t.end_amdgpu_metadata
"""

#: s[4:5] = the buffer, s2 = workgroup id, v0 = work-item id, v31 = wave id in the launch
PROLOGUE = """
s_load_dwordx2 s[4:5], s[0:1], 0x0
s_waitcnt lgkmcnt(0)
v_and_b32_e32 v0, 0x3ff, v0
v_lshrrev_b32_e32 v31, 6, v0
v_readfirstlane_b32 s3, v31
"""


def kernel_text(body: str, *, vgprs: int = 64, agprs: int = 32, lds: int = 0) -> str:
    """A launchable kernel ``k(uint *buf)`` running ``body`` after :data:`PROLOGUE`."""
    src = PROLOGUE + textwrap.dedent(body)
    lines = []
    for line in src.strip().splitlines():
        line = line.strip()
        if line:
            lines.append(line + "\n" if line.endswith(":") else "\t" + line + "\n")
    accum = vgprs - agprs if agprs else vgprs
    return _HEAD + "".join(lines) + _TAIL.format(lds=lds, vgprs=vgprs, agprs=agprs, accum=accum)


def load_kernel(text: str):
    from ..frontend.asm_parser import parse_asm
    from ..frontend.loader import fill_text_abi
    m = parse_asm(text, "calibration.s")
    fill_text_abi(m)
    return m


def run_model(body: str, *, block: int = 64, grid: int = 1, buf: np.ndarray | None = None,
              lds: int = 0, vgprs: int = 64, agprs: int = 32, active_cus: int = 1,
              machine: Machine = MI300X, occupancy: int | None = None):
    """Trace ``body`` on ``grid`` workgroups of ``block`` work items and replay all of them
    on one CU (``active_cus`` sets the memory bandwidth shares).  The :class:`CUResult`."""
    from ..emu.launch import Arg, Launch, run_kernel
    from ..emu.trace import Tracer
    from .cu import simulate_cu
    from .dynamic import occupancy_of
    from .memory import CUMemory
    m = load_kernel(kernel_text(body, vgprs=vgprs, agprs=agprs, lds=lds))
    k = m.kernel("k")
    data = buf if buf is not None else np.zeros(1024, np.uint32)
    la = Launch((block, 1, 1), (grid, 1, 1), [Arg("buf", "buffer", "uint32", data=data, role="inout")],
                dynamic_lds=0)
    tr = Tracer()
    with np.errstate(all="ignore"):
        run_kernel(m, "k", la, trace=tr)
    by = {}
    for t in tr.waves:
        by.setdefault(t.wg_linear, []).append(t)
    regs, _, _, _ = occupancy_of(k, lds, block, machine)
    mem = CUMemory(machine, active_cus=active_cus)
    return simulate_cu(list(k.instructions()), sorted(by.items()),
                       occupancy=occupancy or regs, lds_per_wg=lds, machine=machine, memory=mem)


def per_op(make, n1: int, n2: int, **kw) -> float:
    """clk per repetition: ``(cycles(make(n2)) - cycles(make(n1))) / (n2 - n1)``."""
    a = run_model(make(n1), **kw).cycles
    b = run_model(make(n2), **kw).cycles
    return (b - a) / (n2 - n1)


@dataclass
class Figure:
    """One calibration row: the model's ``value`` against ``published`` (None when
    TIMING_FACTS.md has no number), in ``unit``; ``ratio`` = value / published."""

    name: str
    value: float
    published: float | None
    unit: str
    source: str
    check: bool = True         # held to the 15% tolerance

    @property
    def ratio(self) -> float | None:
        return self.value / self.published if self.published else None


# ---------------------------------------------------------------------------- bodies
def _rep(lines: list[str], n: int) -> str:
    k = len(lines)
    return "\n".join(lines[i % k] for i in range(n)) + "\n"


def valu_dep(n):
    return "v_mov_b32 v1, 1.0\nv_mov_b32 v2, 1.0\n" + _rep(["v_add_f32_e32 v1, v1, v2"], n)


def mfma_chain(op, acc, a="v[2:3]", b="v[4:5]"):
    def make(n):
        return _rep([f"{op} {acc}, {a}, {b}, {acc}"], n)
    return make


def mfma_indep(op, accs, a="v[2:3]", b="v[4:5]"):
    def make(n):
        return _rep([f"{op} {acc}, {a}, {b}, {acc}" for acc in accs], n)
    return make


def lds_chase(n):
    return "v_mov_b32 v1, 0\n" + _rep(["ds_read_b32 v1, v1", "s_waitcnt lgkmcnt(0)"], 2 * n)


def lds_stream(op, shift, regs):
    """Independent LDS reads at lane * (1 << shift) bytes, 8 in flight."""
    def make(n):
        lines = []
        for i in range(n):
            lines.append(f"{op} {regs[i % len(regs)]}, v1")
            if i % 8 == 7:
                lines.append("s_waitcnt lgkmcnt(8)")
        return f"v_and_b32_e32 v1, 63, v0\nv_lshlrev_b32_e32 v1, {shift}, v1\n" + \
            "\n".join(lines) + "\ns_waitcnt lgkmcnt(0)\n"
    return make


def global_chase(n):
    return "v_mov_b32 v1, 0\n" + _rep(["global_load_dword v1, v1, s[4:5]", "s_waitcnt vmcnt(0)"], 2 * n)


def smem_chase(n):
    return "s_mov_b32 s6, 0\n" + _rep(["s_load_dword s6, s[4:5], s6", "s_waitcnt lgkmcnt(0)"], 2 * n)


def barrier_loop(n):
    return _rep(["s_barrier"], n)


def stream_loop(n):
    """Each wave streams its own region: one 512-B load (dwordx2 per lane) per iteration,
    waited for before the next."""
    return (f"v_and_b32_e32 v1, 63, v0\nv_lshlrev_b32_e32 v1, 3, v1\n"   # lane * 8 in 512 B
            f"s_lshl_b32 s7, s2, 2\ns_add_u32 s7, s7, s3\n"    # global wave id
            f"s_mul_i32 s7, s7, {n * 512}\nv_add_u32_e32 v1, s7, v1\n" +
            _rep(["global_load_dwordx2 v[2:3], v1, s[4:5]", "s_waitcnt vmcnt(0)",
                  "v_add_u32_e32 v1, 0x200, v1"], 3 * n))


def _chain_buffer(footprint: int, stride: int, words: int) -> np.ndarray:
    buf = np.zeros(max(words, footprint // 4 + 1), np.uint32)
    offs = np.arange(0, footprint, stride, dtype=np.int64)
    buf[offs // 4] = (offs + stride) % footprint
    return buf


_MFMA = [
    # (name, instruction, two accumulators, A, B, FLOP per wave-instruction,
    #  published FLOP/clk/CU [A: mi300.md], passes [A: matrix calculator])
    ("f16 32x32x8", "v_mfma_f32_32x32x8_f16", ("a[0:15]", "a[16:31]"), "v[2:3]", "v[4:5]", 2 * 32 * 32 * 8, 2048, 8),
    ("f16 16x16x16", "v_mfma_f32_16x16x16_f16", ("a[0:3]", "a[4:7]"), "v[2:3]", "v[4:5]", 2 * 16 * 16 * 16, 2048, 4),
    ("bf16 32x32x8", "v_mfma_f32_32x32x8_bf16", ("a[0:15]", "a[16:31]"), "v[2:3]", "v[4:5]", 2 * 32 * 32 * 8, 2048, 8),
    ("i8 32x32x16", "v_mfma_i32_32x32x16_i8", ("a[0:15]", "a[16:31]"), "v[2:3]", "v[4:5]", 2 * 32 * 32 * 16, 4096, 8),
    ("fp8 16x16x32", "v_mfma_f32_16x16x32_fp8_fp8", ("a[0:3]", "a[4:7]"), "v[2:3]", "v[4:5]", 2 * 16 * 16 * 32, 4096, 4),
    ("f32 32x32x2", "v_mfma_f32_32x32x2_f32", ("a[0:15]", "a[16:31]"), "v2", "v3", 2 * 32 * 32 * 2, 256, 16),
    ("f32 16x16x4", "v_mfma_f32_16x16x4_f32", ("a[0:3]", "a[4:7]"), "v2", "v3", 2 * 16 * 16 * 4, 256, 8),
    ("f64 16x16x4", "v_mfma_f64_16x16x4_f64", ("v[8:15]", "v[16:23]"), "v[2:3]", "v[4:5]", 2 * 16 * 16 * 4, 256, 8),
]


def run_all(machine: Machine = MI300X, quick: bool = False) -> list[Figure]:
    """Every calibration figure (``quick``: fewer repetitions, same figures)."""
    m = machine
    f = []
    R = 64 if quick else 128
    tf = "TIMING_FACTS.md"

    def w4(make):   # 4 waves, one per SIMD
        return per_op(make, R, 2 * R, block=256, machine=m)

    f.append(Figure("dependent VALU chain (v_add_f32)", per_op(valu_dep, R, 2 * R, machine=m),
                    4, "clk/op", f"{tf} s3: back-to-back, 1 issue slot = 4 clk [L/I]"))
    for name, op, flop, pub in (
            ("v_fma_f32", "v_fma_f32 v{r}, v{r}, v{r}, v{r}", 128, 128),
            ("v_pk_fma_f32", "v_pk_fma_f32 v[{r}:{r1}], v[{r}:{r1}], v[{r}:{r1}], v[{r}:{r1}]", 256, 256),
            ("v_fma_f64", "v_fma_f64 v[{r}:{r1}], v[{r}:{r1}], v[{r}:{r1}], v[{r}:{r1}]", 128, 128)):
        def make(n, opx=op):
            return _rep([opx.format(r=r, r1=r + 1) for r in range(2, 18, 2)], n)
        clk = w4(make)
        per = (64 * (4 if "pk" in name else 2)) * 4 / clk   # FLOP per clk over 4 waves
        f.append(Figure(f"independent {name}, 4 waves", per, pub, "FLOP/clk/CU",
                        f"{tf} s2: mi300.md peak table [A]"))
    f.append(Figure("transcendental v_exp_f32, 1 wave", per_op(
        lambda n: _rep([f"v_exp_f32_e32 v{r}, v{r}" for r in range(2, 18)], n), R, 2 * R, machine=m),
        16, "clk/op", f"{tf} s2: quarter rate, WriteTrans32 [L]"))
    # MFMA: dependent accumulate chain (1 wave) and independent (4 waves)
    for name, op, accs, a, b, flop, pub, passes in _MFMA:
        chain = per_op(mfma_chain(op, accs[0], a, b), R // 4, R // 2, machine=m)
        f.append(Figure(f"MFMA {name} accumulate chain", chain, passes * 4, "clk/op",
                        f"{tf} s4: calculator passes x 4 [A]; same-acc 0 wait states [L]"))
        ind = per_op(mfma_indep(op, accs, a, b), R // 4, R // 2, block=256, machine=m)
        f.append(Figure(f"MFMA {name} independent, 4 waves", flop * 4 / ind, pub, "FLOP/clk/CU",
                        f"{tf} s2: mi300.md [A]"))
    # MFMA result read by a VALU: XDL passes + 3 wait states = (8 + 3 + 1) x 4 clk after the
    # MFMA's issue, then the next MFMA one slot later
    mv = per_op(lambda n: _rep(["v_mfma_f32_32x32x8_f16 a[0:15], v[2:3], v[4:5], a[0:15]",
                                "v_accvgpr_read_b32 v6, a15"], 2 * n), R // 4, R // 2, machine=m)
    f.append(Figure("MFMA f16 32x32x8 -> dependent VALU read, pair", mv, (8 + 3 + 1) * 4 + 4,
                    "clk/pair", f"{tf} s4: XDL result read by VALU needs passes+3 wait states [L]"))
    f.append(Figure("LDS pointer chase (ds_read_b32)", per_op(lds_chase, R // 2, R, lds=4096, machine=m),
                    51, "clk/load", f"{tf} s3: mt4g ~51 [M]"))
    regs16 = [f"v[{r}:{r + 3}]" for r in range(4, 28, 4)]
    regs4 = [f"v{r}" for r in range(4, 28)]
    clk = per_op(lds_stream("ds_read_b128", 4, regs16), R, 2 * R, block=512, lds=4096, machine=m)
    f.append(Figure("LDS bandwidth ds_read_b128, 8 waves", 8 * 1024 / clk, 128, "B/clk/CU",
                    f"{tf} s3: 32 banks x 4 B [A]"))
    clk = per_op(lds_stream("ds_read_b32", 2, regs4), R, 2 * R, block=512, lds=4096, machine=m)
    f.append(Figure("LDS bandwidth ds_read_b32, 8 waves", 8 * 256 / clk, 128, "B/clk/CU",
                    f"{tf} s3 [A]"))
    clk = per_op(lds_stream("ds_read_b32", 7, regs4), R // 2, R, block=512, lds=8192, machine=m)
    f.append(Figure("LDS ds_read_b32 32-way bank conflict, 8 waves", 8 * 256 / clk, 4, "B/clk/CU",
                    f"{tf} s3: conflicts serialise within a bank: 128/32 [A/I]"))
    buf = _chain_buffer(2048, 128, 1024)
    f.append(Figure("global pointer chase, vL1 hit", per_op(global_chase, R // 2, R, buf=buf, machine=m),
                    116, "clk/load", f"{tf} s3: mt4g 116 [M]"))
    buf = _chain_buffer(65536, 128, 65536 // 4)
    f.append(Figure("global pointer chase, L2 hit", per_op(global_chase, 1024, 1536, buf=buf, machine=m),
                    288, "clk/load", f"{tf} s3: mt4g p50 288 [M]"))
    # Infinity Cache: an L2 of 64 KiB (a machine override) so that a 128-KiB chain misses it
    # on its second pass while the 256-MiB MALL holds it
    from .machine import Param
    small = Machine(m.name + ", 64 KiB L2", dict(m.params, **{"cache.l2_bytes": Param(
        "cache.l2_bytes", 65536, "bytes", "calibration override", "I")}))
    buf = _chain_buffer(131072, 128, 131072 // 4)
    f.append(Figure("global pointer chase, Infinity Cache hit (64 KiB L2)",
                    per_op(global_chase, 1024 + 256, 1024 + 512, buf=buf, machine=small),
                    500, "clk/load", f"{tf} s3: L2 288 + mt4g miss penalty 209 [I]"))
    buf = _chain_buffer(4096 * 512, 4096, 4096 * 512 // 4)
    f.append(Figure("global pointer chase, HBM", per_op(global_chase, 128, 256, buf=buf, machine=m),
                    900, "clk/load", f"{tf} s3: mt4g mean 900 [M]"))
    f.append(Figure("SMEM pointer chase, sL1 hit", per_op(smem_chase, R // 2, R, machine=m),
                    48, "clk/load", f"{tf} s3: mt4g 48 [M]"))
    f.append(Figure("s_barrier, 4 waves", per_op(barrier_loop, R // 2, R, block=256, machine=m),
                    None, "clk/barrier", f"{tf}: no published figure (LLVM's 500 is a guess)", False))
    return f


def occupancy_scaling(machine: Machine = MI300X, waves=(1, 2, 4, 8), n: int = 16,
                      active_cus: int | None = None) -> list[tuple[int, float]]:
    """``[(waves per SIMD, bytes/clk of the CU)]`` for :func:`stream_loop` with every CU of
    the machine busy (HBM share ``bw.hbm_bytes_per_clk / cus``)."""
    out = []
    cus = active_cus or int(machine["cus"])
    for w in waves:
        total = 4 * w
        buf = np.zeros(total * n * 128 + 64, np.uint32)
        r = run_model(stream_loop(n), block=256, grid=w, buf=buf, active_cus=cus, machine=machine)
        out.append((w, total * n * 512 / r.cycles))
    return out
