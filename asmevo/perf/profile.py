"""The profile: where a launch's time goes, per instruction and per hot window.

One data type for every timing source, so that hot windows, ``asmevo profile``, the
optimisation loop and the MCP tools read the same table whichever source filled it:

* ``source="model-trace"``: the trace-driven compute-unit model (:mod:`asmevo.perf.cu`),
  fed by an emulator trace of the launch;
* ``source="model-static"``: the static per-wave estimate (:mod:`asmevo.perf.static`), for
  kernels without a harness;
* ``source="hardware"``: a real MI300's thread trace (rocprofv3 ``--att`` ``stats_*.csv``)
  or timed launches (:mod:`asmevo.device`).

Per-instruction rows use the columns of rocprofv3 thread-trace ``stats_*.csv``
(``CodeObj, Vaddr, Instruction, Hitcount, Latency, Stall, Idle``; ROCm/rocm-systems#4414),
so a real trace and the model fill the same table.  Units are shader-engine clocks (clk)
throughout; ``estimated`` is True unless every figure came from hardware.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

#: stall causes a row's cycles are attributed to (the keys of ``InstructionRow.causes``)
CAUSES = ("issue", "dependency", "hazard", "vmcnt", "lgkmcnt", "barrier", "pipe", "idle")

#: bottleneck classes of a kernel or a window
BOTTLENECKS = ("memory-latency", "memory-bandwidth", "lds", "valu", "mfma", "scalar",
               "barrier", "hazard-nops", "occupancy")

#: JSON schema version of :meth:`Profile.to_json`
SCHEMA_VERSION = 1


@dataclass
class InstructionRow:
    """One instruction of a kernel, as one row of a rocprofv3 ``stats_*.csv``.

    Attributes:
        index: position in ``Kernel.instructions()`` (what edits and listings use).
        pc: byte offset of the instruction from the start of its kernel's code.
        text: the instruction as asmevo prints it.
        hits: wave-instructions executed (``Hitcount``; summed over every wave of the launch);
            for the static estimate, the expected executions per wave (block weight, may be
            fractional).
        latency: clk from issue of this instruction to issue of the wave's next one,
            summed over hits (``Latency``).
        stall: clk of ``latency`` that the wave was ready but blocked (``Stall``).
        idle: clk of ``latency`` that the wave waited on nothing of its own (``Idle``).
        causes: clk by cause (keys of :data:`CAUSES`), summed over hits.
    """

    index: int
    pc: int
    text: str
    hits: int = 0
    latency: float = 0.0
    stall: float = 0.0
    idle: float = 0.0
    causes: dict = field(default_factory=dict)


@dataclass
class Window:
    """A hot window: instructions ``start..end`` (indices, inclusive) inside one block
    or loop body, with ``share`` of the kernel's attributed clk and its bottleneck."""

    start: int
    end: int
    start_pc: int
    end_pc: int
    cycles: float
    share: float
    bottleneck: str
    block: str = ""


@dataclass
class KernelProfile:
    """The profile of one kernel's launch.

    Attributes:
        kernel: symbol name.
        cycles: clk of the whole launch (the last compute unit to finish, with the
            workgroups spread over every CU of the machine).
        cu_cycles: clk of one CU's share of the launch (the CU that finishes last).
        microseconds: ``cycles`` at the machine's clock.
        occupancy: waves per SIMD that fit (1..8) and ``occupancy_limit``, the resource
            that binds it ("vgpr", "sgpr", "lds", "workgroup", "waves").
        bottleneck: one of :data:`BOTTLENECKS`.
        instructions: one row per instruction, in index order.
        windows: hot windows, hottest first.
        extra: anything else a source wants to keep (waves, workgroups, cache hit rates).
    """

    kernel: str
    cycles: float
    cu_cycles: float
    microseconds: float
    occupancy: int
    occupancy_limit: str
    bottleneck: str
    instructions: list = field(default_factory=list)
    windows: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)


@dataclass
class Profile:
    """A profile of one code object's launches.

    ``model`` names the model and its version (``{"name": ..., "version": ...}``) or the
    hardware; ``source`` is "model-trace", "model-static" or "hardware"; ``estimated`` is
    True unless the figures came from hardware; ``machine`` names the machine description.
    """

    model: dict
    source: str
    estimated: bool
    machine: str
    kernels: dict = field(default_factory=dict)

    def kernel(self, name: str | None = None) -> KernelProfile:
        """The profile of ``name`` (the only kernel when None). Raises KeyError."""
        if name is None:
            if len(self.kernels) != 1:
                raise KeyError(f"profile holds {len(self.kernels)} kernels; name one")
            return next(iter(self.kernels.values()))
        return self.kernels[name]

    def to_json(self) -> dict:
        """A JSON-ready dict (schema in ``docs/perf.md``)."""
        return {"schema": SCHEMA_VERSION, "model": dict(self.model), "source": self.source,
                "estimated": self.estimated, "machine": self.machine,
                "kernels": {k: _kernel_json(v) for k, v in self.kernels.items()}}

    @classmethod
    def from_json(cls, d: dict) -> "Profile":
        ks = {}
        for name, kd in d["kernels"].items():
            kd = dict(kd)
            kd["instructions"] = [InstructionRow(**r) for r in kd.get("instructions", [])]
            kd["windows"] = [Window(**w) for w in kd.get("windows", [])]
            ks[name] = KernelProfile(**kd)
        return cls(d["model"], d["source"], d["estimated"], d["machine"], ks)

    def digest(self) -> str:
        """sha256 of the canonical JSON: the profile hash a lineage record binds to."""
        return hashlib.sha256(json.dumps(self.to_json(), sort_keys=True).encode()).hexdigest()


def _kernel_json(kp: KernelProfile) -> dict:
    """``asdict(kp)`` without its deep-copy cost on 30,000-row kernels (same result)."""
    d = {f: getattr(kp, f) for f in ("kernel", "cycles", "cu_cycles", "microseconds", "occupancy",
                                     "occupancy_limit", "bottleneck")}
    d["instructions"] = [{"index": r.index, "pc": r.pc, "text": r.text, "hits": r.hits,
                          "latency": r.latency, "stall": r.stall, "idle": r.idle,
                          "causes": dict(r.causes)} if isinstance(r, InstructionRow) else asdict(r)
                         for r in kp.instructions]
    d["windows"] = [asdict(w) for w in kp.windows]
    d["extra"] = json.loads(json.dumps(kp.extra, default=str)) if kp.extra else {}
    return d

