"""The machine description: every parameter of the timing model in one table.

Each parameter has a value, a unit, its source and a confidence tag, as in
``../shared/research/TIMING_FACTS.md`` (the section numbers below are that file's):

* ``[A]`` an AMD document or AMD-maintained code/table;
* ``[L]`` LLVM code (a compiler model; it may not match silicon);
* ``[M]`` a third-party microbenchmark (mt4g, MrRoy09);
* ``[I]`` an inference or arithmetic that no source states.

Units: ``clk`` = shader-engine clock; a *pass* is 4 clk (wave64 on a 16-lane SIMD);
one hazard *wait state* is one issue slot of the wave = 4 clk (TIMING_FACTS.md
preamble, [I]); bytes are bytes.

:data:`MI300X` is the default description. ``load_machine(path)`` reads another one
from a TOML file that overrides any of the keys (``asmevo profile --machine FILE``)::

    name = "MI325X"
    clock_mhz = 2100
    [latency]            # optional tables: a key may be written "latency.hbm" or
    hbm = 950            # as "hbm" inside [latency]

Unknown keys and bad values raise :class:`~asmevo.errors.AsmevoError` naming the file
and the key (exit status 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import AsmevoError


@dataclass(frozen=True)
class Param:
    """One model parameter: ``value`` in ``unit``, with ``source`` and confidence
    ``tag`` (A, L, M or I)."""

    key: str
    value: object
    unit: str
    source: str
    tag: str


_TF = "TIMING_FACTS.md"

#: (key, value, unit, source, tag) -- the MI300X (gfx942) table
_TABLE = [
    # -- 1. machine --------------------------------------------------------------------
    ("clock_mhz", 2100, "MHz", f"{_TF} s1: mt4g clockRate 2100000 kHz; 1307.4 TF = 2048 x 304 x 2.1 GHz", "M"),
    ("cus", 304, "CUs", f"{_TF} s1: ROCm mi300.md, 8 XCDs x 38", "A"),
    ("xcds", 8, "XCDs", f"{_TF} s1: ROCm mi300.md", "A"),
    ("simds_per_cu", 4, "SIMDs", f"{_TF} s1: rocprofiler-compute pipeline-descriptions.rst", "A"),
    ("wave_size", 64, "lanes", f"{_TF} s1: gpu-arch-specs.rst", "A"),
    ("waves_per_simd", 8, "waves", f"{_TF} s1: pipeline-descriptions.rst; LLVM getMaxWavesPerEU", "A"),
    ("vgprs_per_simd", 512, "registers/lane (unified VGPR+AGPR)", f"{_TF} s1: gpu-arch-specs 512 KiB/CU; LLVM getTotalNumVGPRs", "A"),
    ("vgpr_granule", 8, "registers", f"{_TF} s1: LLVM getVGPRAllocGranule (ROCm guide says 16)", "L"),
    ("sgpr_granule", 16, "registers", f"{_TF} s1: LLVM getSGPRAllocGranule", "L"),
    ("lds_bytes_per_cu", 65536, "bytes", f"{_TF} s1: gpu-arch-specs.rst", "A"),
    ("lds_granule", 512, "bytes", f"{_TF} s1: AMDGPUUsage COMPUTE_PGM_RSRC2.LDS_SIZE", "L"),
    ("max_workgroups_per_cu", 16, "workgroups (barriers)", f"{_TF} s1: LLVM getMaxWorkGroupsPerCU", "L"),
    # -- 2. issue ----------------------------------------------------------------------
    ("issue.pass_clk", 4, "clk per wave64 VALU pass", f"{_TF} s2: ROCm/HIP hardware_implementation.rst", "A"),
    ("issue.wave_slot_clk", 4, "clk between two issues of one wave (1 SIMD looked at per clk, round robin)",
     f"{_TF} s2: pipeline-descriptions.rst 'Scheduler' + inference", "I"),
    ("issue.wait_state_clk", 4, "clk per hazard wait state / s_nop slot", f"{_TF} preamble: one wait state = one issue slot", "I"),
    ("issue.trans_clk", 16, "clk of VALU occupancy per wave64 transcendental", f"{_TF} s2: SISchedule WriteTrans32 quarter rate", "L"),
    ("issue.valu_clk", 4, "clk of VALU occupancy per wave64 op (f32, f64, packed f32, mul_lo)", f"{_TF} s2: mi300.md vector FP64 full rate, packed FP32 256 FLOP/clk/CU", "A"),
    ("issue.trans_forward_ws", 1, "wait states trans -> non-trans VALU reader", f"{_TF} s2: GCNHazardRecognizer hasTransForwardingHazard", "L"),
    ("issue.salu_clk", 4, "clk from SALU issue to a dependent issue", f"{_TF} s3: SISchedule WriteSALU 1 unit", "L"),
    ("issue.branch_clk", 4, "clk of a taken or not-taken branch (one issue slot)", "no public figure; ACO gfx9 branch 4", "I"),
    ("issue.waitcnt_clk", 4, "clk of an s_waitcnt that does not wait", f"{_TF} s3: overhead unknown, 1 issue slot", "I"),
    ("mfma.coexec_delay_clk", 4, "clk after an XDL MFMA issue before an independent VALU may issue", f"{_TF} s2: amd_matrix_instruction_calculator cdna3", "A"),
    ("mfma.smfmac_coexec_delay_clk", 8, "clk after an SMFMAC issue before VALU may issue", f"{_TF} s2: matrix calculator", "A"),
    ("mfma.dep_srcab_xdl", 3, "extra wait states (over passes) for an XDL result read as SrcA/B or by VALU/VMEM/LDS", f"{_TF} s4: checkMAIHazards90A / checkMAIVALUHazards", "L"),
    ("mfma.dep_srcab_nonxdl", 2, "extra wait states (over passes) for a non-XDL result read as SrcA/B or by VALU", f"{_TF} s4", "L"),
    ("mfma.dep_srcc_4x4", 2, "wait states after a 2-pass MFMA before a same-accumulator MFMA", f"{_TF} s4", "L"),
    # -- 3. latencies (issue to data usable, clk) --------------------------------------
    ("latency.lds", 51, "clk", f"{_TF} s3: mt4g MI300X LDS p-chase ~51 (p50 52)", "M"),
    ("latency.smem_hit", 48, "clk", f"{_TF} s3: mt4g sL1 hit", "M"),
    ("latency.smem_miss_penalty", 124, "clk added on an sL1 miss", f"{_TF} s3: mt4g sL1 miss penalty", "M"),
    ("latency.l1_hit", 116, "clk", f"{_TF} s3: mt4g vL1 p-chase 116; MrRoy09 112", "M"),
    ("latency.l2_hit", 288, "clk (L1 miss, L2 hit)", f"{_TF} s3: mt4g p50 288; 224 with nt/sc1", "M"),
    ("latency.mall_hit", 500, "clk (L2 miss, Infinity Cache hit)", f"{_TF} s3: L2 + mt4g miss penalty 209", "I"),
    ("latency.hbm", 900, "clk", f"{_TF} s3: mt4g mean 900 (p50 876)", "M"),
    ("latency.store_ack", 208, "clk from a store's issue to its vmcnt decrement", f"{_TF} s3: MrRoy09 store->load 208", "M"),
    ("latency.atomic", 288, "clk (atomics execute at L2)", "inference: L2 round trip", "I"),
    # -- bandwidths --------------------------------------------------------------------
    ("bw.lds_bytes_per_clk_cu", 128, "bytes/clk/CU (32 banks x 4 B)", f"{_TF} s3: pipeline-descriptions.rst LDS", "A"),
    ("bw.lds_bytes_per_clk_port", 64, "bytes/clk per SIMD-pair LDS port", f"{_TF} s3: pipeline-descriptions.rst LDS", "A"),
    ("bw.lds_banks", 32, "banks of 4 bytes", f"{_TF} s3", "A"),
    ("bw.vl1_bytes_per_clk_cu", 128, "bytes/clk/CU", f"{_TF} s1: SoL yaml vL1D 128 x sclk x CUs", "A"),
    ("bw.l2_bytes_per_clk_cu", 54, "bytes/clk per CU when every CU of the XCD is busy (2048/38)", f"{_TF} s1: per-CU share", "I"),
    ("bw.l2_bytes_per_clk_xcd", 2048, "bytes/clk per XCD (16 channels x 128 B)", f"{_TF} s1: gpu-arch-specs + SoL yaml", "A"),
    ("bw.l1_fill_bytes_per_clk_max", 64, "bytes/clk cap of one CU's L2->L1 path", "inference: one 64-B request per clk", "I"),
    ("bw.hbm_bytes_per_clk", 2524, "bytes/clk for the whole chip (5.3 TB/s / 2.1 GHz)", f"{_TF} s1: mi300.md 5.3 TB/s", "A"),
    ("bw.hbm_bytes_per_clk_cu", 8.3, "bytes/clk per CU when all 304 CUs are busy", f"{_TF} s1: per-CU share", "I"),
    ("bw.sl1_bytes_per_clk", 64, "bytes/clk per SQC", f"{_TF} s1: SoL yaml", "A"),
    # -- caches ------------------------------------------------------------------------
    ("cache.l1_bytes", 32768, "bytes per CU", f"{_TF} s1: gpu-arch-specs vL1D 32 KiB", "A"),
    ("cache.l1_line", 128, "bytes", f"{_TF} s1: mt4g line size", "M"),
    ("cache.sl1_bytes", 16384, "bytes per 2 CUs", f"{_TF} s1: gpu-arch-specs", "A"),
    ("cache.sl1_line", 64, "bytes", f"{_TF} s1: mt4g", "M"),
    ("cache.l2_bytes", 4194304, "bytes per XCD", f"{_TF} s1: gpu-arch-specs 4 MiB/XCD", "A"),
    ("cache.l2_line", 128, "bytes", f"{_TF} s1: gpu-arch-specs", "A"),
    ("cache.mall_bytes", 268435456, "bytes (memory-side Infinity Cache)", f"{_TF} s1: gpu-arch-specs L3 256 MiB", "A"),
    # -- counters ----------------------------------------------------------------------
    ("counters.vmcnt_max", 63, "outstanding", "CDNA3 ISA guide s_waitcnt vmcnt 6 bits", "A"),
    ("counters.lgkmcnt_max", 15, "outstanding", "CDNA3 ISA guide s_waitcnt lgkmcnt 4 bits", "A"),
]

#: MFMA passes by shape class (TIMING_FACTS.md s4: AMD matrix instruction calculator,
#: cdna3 table; agrees with llvm-mca gfx942 RThroughput) [A].  The ISA table's
#: ``passes`` field is used first; this table is the fallback and the reference.
MFMA_PASSES = {
    "f32_32x32": 16, "f32_16x16": 8, "f32_4x4": 2,
    "xdl_32x32x8": 8, "xdl_16x16x16": 4, "xdl_32x32x4_2b": 16, "xdl_16x16x4_4b": 8,
    "xdl_4x4x4_16b": 2, "i8_32x32x16": 8, "i8_16x16x32": 4, "fp8_32x32x16": 8,
    "fp8_16x16x32": 4, "xf32_32x32x4": 8, "xf32_16x16x8": 4, "f64_16x16x4": 8,
    "f64_4x4x4": 4, "smfmac_16x16": 4, "smfmac_32x32": 8,
}


@dataclass
class Machine:
    """A machine description: ``name``, ``params`` (key -> :class:`Param`) and
    ``origin`` (the file it came from, or "builtin").  ``m["latency.hbm"]`` or
    ``m.get("latency.hbm")`` give a value."""

    name: str
    params: dict = field(default_factory=dict)
    origin: str = "builtin"

    def __getitem__(self, key: str):
        return self.params[key].value

    def get(self, key: str, default=None):
        p = self.params.get(key)
        return default if p is None else p.value

    @property
    def clock_mhz(self) -> float:
        return float(self["clock_mhz"])

    def microseconds(self, clk: float) -> float:
        """``clk`` shader clocks in microseconds at :attr:`clock_mhz`."""
        return clk / self.clock_mhz

    def table(self) -> list[dict]:
        """Every parameter as ``{key, value, unit, source, tag}`` (for docs and --json)."""
        return [dict(key=p.key, value=p.value, unit=p.unit, source=p.source, tag=p.tag)
                for p in self.params.values()]

    def to_toml(self) -> str:
        """The description as TOML that :func:`load_machine` reads back (sources as
        comments)."""
        out = [f'name = "{self.name}"']
        for p in self.params.values():
            out.append(f"{_tkey(p.key)} = {p.value!r}  # {p.unit}; [{p.tag}] {p.source}")
        return "\n".join(out) + "\n"


def _tkey(k: str) -> str:
    return f'"{k}"' if "." in k else k


def _builtin() -> Machine:
    return Machine("MI300X (gfx942)", {k: Param(k, v, u, s, t) for k, v, u, s, t in _TABLE})


#: the default description
MI300X = _builtin()


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def load_machine(path: str | None = None) -> Machine:
    """The machine description in TOML file ``path`` over the MI300X defaults (the
    built-in MI300X table when ``path`` is None).

    Raises:
        AsmevoError: unreadable file, bad TOML, unknown key or a value of the wrong
            type or out of range (the message names the file and the key).
    """
    if path is None:
        return _builtin()
    import tomllib
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except OSError as e:
        raise AsmevoError(f"cannot read machine description: {e.strerror}", file=str(path)) from None
    except tomllib.TOMLDecodeError as e:
        raise AsmevoError(f"bad TOML in machine description: {e}", file=str(path)) from None
    base = _builtin()
    name = doc.pop("name", None)
    if name is not None and not isinstance(name, str):
        raise AsmevoError("key 'name': expected a string", file=str(path))
    params = dict(base.params)
    for key, v in _flatten(doc).items():
        if key not in params:
            raise AsmevoError(f"unknown key '{key}' in machine description", file=str(path))
        old = params[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise AsmevoError(f"key '{key}': expected a number, got {v!r}", file=str(path))
        if not (v > 0) or v != v or v == float("inf"):
            raise AsmevoError(f"key '{key}': expected a positive finite number, got {v!r}",
                              file=str(path))
        if isinstance(old.value, int) and not isinstance(old.value, bool) and float(v) != int(v):
            raise AsmevoError(f"key '{key}': expected an integer, got {v!r}", file=str(path))
        params[key] = Param(key, type(old.value)(v) if isinstance(old.value, int) else float(v),
                            old.unit, f"{path}", "user")
    return Machine(name or f"{base.name} + {path}", params, str(path))
