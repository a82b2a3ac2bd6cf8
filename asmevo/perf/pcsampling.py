"""rocprofv3 PC sampling as a :class:`~asmevo.perf.profile.Profile` (``source="hardware"``).

``rocprofv3 --pc-sampling-beta-enabled --pc-sampling-method stochastic|host_trap
--pc-sampling-unit cycles --pc-sampling-interval N --kernel-trace -f csv`` writes one row per
sample to ``*_pc_sampling_stochastic.csv`` (or ``*_pc_sampling_host_trap.csv``) with the
columns (rocprofiler-sdk "Using PC sampling"; rocprof-compute's readers)::

    Sample_Timestamp, Exec_Mask, Dispatch_Id, Instruction, Instruction_Comment,
    Correlation_Id [, Wave_Issued_Instruction, Instruction_Type, Stall_Reason, Wave_Count]

and ``*_kernel_trace.csv`` maps ``Dispatch_Id`` to ``Kernel_Name``.  The CSV names the sampled
instruction by its text, not its address, so a sample is mapped to the instruction(s) of the
kernel with the same text (whitespace and case normalised); a text that occurs ``n`` times
gives each occurrence ``1/n`` of the sample (counted in ``extra["ambiguous_samples"]``).  When
the CSV has an address column (``Pc``, ``PC``, ``Vaddr``, ``Code_Object_Offset``) it is used
instead.

Per instruction: ``hits`` = samples, ``latency`` = samples x interval (clk, when the interval
is in cycles), ``stall`` = the part sampled while the wave did not issue, spread over
:data:`~asmevo.perf.profile.CAUSES` by ``Stall_Reason`` (:data:`STALL_CAUSES`).  A sampled
profile is a distribution, not a duration: ``cycles`` is the samples times the interval and
``extra["cycles_meaning"]`` says so.
"""

from __future__ import annotations

import collections
import csv
import re

from ..errors import AsmevoError
from .profile import InstructionRow, KernelProfile, Profile
from .windows import classify, hot_windows, kernel_pcs

REQUIRED = ("Instruction",)
ADDRESS_COLUMNS = ("Pc", "PC", "Vaddr", "Code_Object_Offset", "Instruction_Address")

#: rocprofiler ``..._NOT_ISSUED_REASON_*`` -> asmevo cause (rocprofiler-sdk pc_sampling.h)
STALL_CAUSES = {
    "NO_INSTRUCTION_AVAILABLE": "idle",
    "ALU_DEPENDENCY": "dependency",
    "WAITCNT": "vmcnt",
    "INTERNAL_INSTRUCTION": "issue",
    "BARRIER_WAIT": "barrier",
    "ARBITER_NOT_WIN": "pipe",
    "ARBITER_WIN_EX_STALL": "pipe",
    "OTHER_WAIT": "idle",
    "SLEEP_WAIT": "idle",
}


def _norm(text: str) -> str:
    t = re.sub(r"\s+", " ", text.strip().lower())
    return re.sub(r"\s*,\s*", ", ", t)


def _reason(s: str) -> str:
    s = (s or "").strip().upper()
    for k in STALL_CAUSES:
        if s.endswith(k):
            return k
    return s


def read_kernel_trace(path: str) -> dict:
    """``Dispatch_Id -> Kernel_Name`` from rocprofv3's ``*_kernel_trace.csv``."""
    try:
        with open(path, newline="") as f:
            r = csv.DictReader(f)
            if not r.fieldnames or "Dispatch_Id" not in r.fieldnames \
                    or "Kernel_Name" not in r.fieldnames:
                raise AsmevoError("not a rocprofv3 kernel_trace.csv: needs the columns Dispatch_Id "
                                  "and Kernel_Name", file=path, line=1)
            return {str(row["Dispatch_Id"]).strip(): str(row["Kernel_Name"]).strip() for row in r}
    except OSError as e:
        raise AsmevoError(f"cannot read: {e.strerror}", file=path) from None


def read_pc_sampling(csv_path: str, module, *, kernel: str | None = None,
                     kernel_trace: str | None = None, interval: float = 1.0,
                     clock_mhz: float = 2100.0, top: int | None = None) -> Profile:
    """Read a rocprofv3 PC-sampling CSV for ``module`` (see the module docstring).

    Args:
        kernel: keep samples of this kernel only (needs ``kernel_trace`` when the module
            holds several kernels); default: the module's only kernel.
        kernel_trace: rocprofv3's ``*_kernel_trace.csv`` (``Dispatch_Id`` -> kernel name).
        interval: clk between samples (``--pc-sampling-interval`` in cycles); 1 counts samples.
        clock_mhz: for ``microseconds``.

    Raises:
        AsmevoError: unreadable file, missing columns, no sample matching an instruction.
    """
    names = [k.name for k in module.kernels]
    if kernel is None:
        if len(names) != 1:
            raise AsmevoError(f"the code object holds {len(names)} kernels; name one "
                              f"({', '.join(names)})", file=csv_path)
        kernel = names[0]
    try:
        k = module.kernel(kernel)
    except KeyError:
        raise AsmevoError(f"no kernel {kernel!r} in the code object", file=csv_path) from None
    dispatch = read_kernel_trace(kernel_trace) if kernel_trace else None
    insts = list(k.instructions())
    pcs = kernel_pcs(k)
    by_text = collections.defaultdict(list)
    by_addr = {}
    for i, inst in enumerate(insts):
        by_text[_norm(inst.text())].append(i)
        by_addr[pcs[i]] = i
        if inst.address is not None:
            by_addr.setdefault(inst.address, i)
    rows: dict[int, InstructionRow] = {}
    stats = collections.Counter()
    try:
        with open(csv_path, newline="") as f:
            r = csv.DictReader(f)
            fields = [c.strip() for c in (r.fieldnames or [])]
            if "Instruction" not in fields and not any(c in fields for c in ADDRESS_COLUMNS):
                raise AsmevoError("not a rocprofv3 PC-sampling CSV: no Instruction column (have "
                                  f"{', '.join(fields) or 'none'})", file=csv_path, line=1)
            acol = next((c for c in ADDRESS_COLUMNS if c in fields), None)
            for ln, rec in enumerate(r, start=2):
                rec = {(a or "").strip(): (b or "") for a, b in rec.items()}
                stats["samples"] += 1
                if dispatch is not None:
                    kn = dispatch.get(rec.get("Dispatch_Id", "").strip())
                    if kn is None or (kn != kernel and not kn.startswith(kernel + "(")
                                      and kernel not in kn.split()):
                        stats["other_kernels"] += 1
                        continue
                targets = []
                if acol and rec.get(acol, "").strip():
                    try:
                        a = int(rec[acol].strip(), 0)
                    except ValueError:
                        raise AsmevoError(f"column {acol}: not an address: {rec[acol]!r}",
                                          file=csv_path, line=ln) from None
                    if a in by_addr:
                        targets = [by_addr[a]]
                if not targets:
                    targets = by_text.get(_norm(rec.get("Instruction", "")), [])
                if not targets:
                    stats["unmatched"] += 1
                    continue
                if len(targets) > 1:
                    stats["ambiguous_samples"] += 1
                w = 1.0 / len(targets)
                issued = rec.get("Wave_Issued_Instruction", "").strip()
                stalled = issued in ("0", "false", "False")
                cause = "issue"
                if stalled:
                    cause = STALL_CAUSES.get(_reason(rec.get("Stall_Reason", "")), "idle")
                for i in targets:
                    row = rows.get(i)
                    if row is None:
                        row = rows[i] = InstructionRow(index=i, pc=pcs[i], text=insts[i].text())
                    if cause == "vmcnt" and "lgkmcnt" in row.text and "vmcnt" not in row.text:
                        c = "lgkmcnt"
                    else:
                        c = cause
                    row.hits += w
                    row.latency += w * interval
                    if stalled:
                        row.stall += w * interval
                    if c == "idle":
                        row.idle += w * interval
                    row.causes[c] = row.causes.get(c, 0.0) + w * interval
    except OSError as e:
        raise AsmevoError(f"cannot read: {e.strerror}", file=csv_path) from None
    except UnicodeDecodeError:
        raise AsmevoError("not a text CSV file", file=csv_path) from None
    if not rows:
        raise AsmevoError(f"no sample of kernel {kernel} matches an instruction of the code "
                          f"object ({stats['samples']} samples)", file=csv_path)
    rlist = [rows[i] for i in sorted(rows)]
    total = sum(x.latency for x in rlist)
    from ..analysis import AnalysisManager
    from ..analysis.regbudget import RegisterBudget
    rb = AnalysisManager(module).get(RegisterBudget, k)
    occ = int(rb.occupancy or 0)
    lim = min(rb.occupancy_limits, key=lambda x: rb.occupancy_limits[x]) \
        if rb.occupancy_limits and occ < 8 else "waves"
    kp = KernelProfile(kernel=kernel, cycles=total, cu_cycles=total,
                       microseconds=total / clock_mhz, occupancy=occ, occupancy_limit=lim,
                       bottleneck="valu", instructions=rlist,
                       extra={**{k2: int(v) for k2, v in stats.items()},
                              "interval_clk": interval,
                              "cycles_meaning": "samples x interval (a sampled distribution, "
                                                "not a launch duration)"})
    kp.bottleneck = classify(insts, [rows.get(i) for i in range(len(insts))])
    kp.windows = hot_windows(k, rlist, top, kernel_bottleneck=kp.bottleneck)
    prof = Profile(model={"name": "rocprofv3-pc-sampling", "version": "csv"}, source="hardware",
                   estimated=False, machine="hardware")
    prof.kernels[kernel] = kp
    return prof
