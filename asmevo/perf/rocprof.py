"""A real MI300 thread trace as a :class:`~asmevo.perf.profile.Profile` (``source="hardware"``).

``rocprofv3 --att -d OUT -- app`` decodes the thread trace (``librocprof-trace-decoder``)
into per-instruction ``stats_*.csv`` files whose columns are (ROCm/rocm-systems#4414; the
rocprofiler-sdk "using thread trace" how-to)::

    CodeObj, Vaddr, Instruction, Hitcount, Latency, Stall, Idle, Source

``Hitcount`` is the wave-instructions executed at that address, ``Latency``/``Stall``/
``Idle`` are clk summed over those hits.  They are exactly the columns of
:class:`~asmevo.perf.profile.InstructionRow`, so :func:`read_att_stats` only has to map
each ``Vaddr`` to an instruction of the module: first as the instruction's address in the
code object (what ``llvm-objdump`` and asmevo's disassembler print); when most rows do not
match that way (a trace taken at the code object's load address), the load offset is the
most common ``Vaddr - address`` among rows whose ``Instruction`` opcode matches.  Rows that
match no instruction are counted in ``extra["unmatched_rows"]``.

Each row's ``causes`` are derived from its ``Stall``/``Idle`` and the instruction
(:func:`asmevo.perf.windows.row_causes`: a waiting ``s_waitcnt``'s stall is its counter's,
``s_barrier``'s is ``barrier``...).  The result has ``estimated=False``; hot windows, ``asmevo profile`` and :func:`compare`
read it as they read the model's profiles.  A stats file has no launch duration: a
kernel's ``cycles`` is the sum of its rows' ``Latency`` (wave-clk traced) unless the
caller passes the measured launch clk in ``cycles``.
"""

from __future__ import annotations

import collections
import csv

from ..errors import AsmevoError
from .profile import InstructionRow, KernelProfile, Profile
from .windows import classify, hot_windows, kernel_pcs, row_causes

#: the stats_*.csv columns asmevo reads (``Source`` is optional)
COLUMNS = ("CodeObj", "Vaddr", "Instruction", "Hitcount", "Latency", "Stall", "Idle")


def _num(s, what: str, path: str, line: int) -> float:
    try:
        s = str(s).strip()
        return float(int(s, 0)) if s.lower().startswith("0x") else float(s)
    except ValueError:
        raise AsmevoError(f"column {what}: not a number: {s!r}", file=path, line=line) from None


def _addr(s, path: str, line: int) -> int:
    s = str(s).strip()
    try:
        return int(s, 16) if s.lower().startswith("0x") or any(c in "abcdefABCDEF" for c in s) \
            else int(s)
    except ValueError:
        raise AsmevoError(f"column Vaddr: not an address: {s!r}", file=path, line=line) from None


def read_att_stats(csv_path, module, *, clock_mhz: float = 2100.0,
                   cycles: dict | None = None, top: int | None = None) -> Profile:
    """Read a rocprofv3 thread-trace ``stats_*.csv`` for ``module`` (see module docstring).

    Args:
        csv_path: one ``stats_*.csv``, or a list of them (one per traced shader engine or
            dispatch): their rows are summed per instruction.
        clock_mhz: the clock the trace ran at, for ``microseconds`` (MHz; MI300X peak 2100,
            machine table).
        cycles: measured launch clk per kernel name, when known.
        top: hot windows kept per kernel (all when None).

    Raises:
        AsmevoError: unreadable file, missing columns, bad numbers, or no row matching an
            instruction of ``module``.
    """
    if isinstance(csv_path, (list, tuple)):
        paths = [str(p) for p in csv_path]
        if not paths:
            raise AsmevoError("no stats_*.csv file given")
    else:
        paths = [str(csv_path)]
    raw = []
    for path in paths:
        raw.extend(_read_rows(path))
    csv_path = paths[0]
    return _profile(raw, csv_path, module, clock_mhz, cycles, top)


def _read_rows(csv_path: str) -> list:
    """``(line, vaddr, instruction, hits, latency, stall, idle)`` of every row of one file."""
    try:
        with open(csv_path, newline="") as f:
            reader = csv.DictReader(f)
            fields = [c.strip() for c in (reader.fieldnames or [])]
            missing = [c for c in COLUMNS if c not in fields]
            if missing:
                raise AsmevoError(f"not a rocprofv3 stats_*.csv: missing column(s) "
                                  f"{', '.join(missing)} (have {', '.join(fields) or 'none'})",
                                  file=csv_path, line=1)
            raw = []
            for ln, rec in enumerate(reader, start=2):
                rec = {(k or "").strip(): v for k, v in rec.items()}
                raw.append((ln, _addr(rec["Vaddr"], csv_path, ln), (rec["Instruction"] or "").strip(),
                            _num(rec["Hitcount"], "Hitcount", csv_path, ln),
                            _num(rec["Latency"], "Latency", csv_path, ln),
                            _num(rec["Stall"], "Stall", csv_path, ln),
                            _num(rec["Idle"], "Idle", csv_path, ln)))
    except OSError as e:
        raise AsmevoError(f"cannot read: {e.strerror}", file=csv_path) from None
    except UnicodeDecodeError:
        raise AsmevoError("not a text CSV file", file=csv_path) from None
    return raw


def _profile(raw, csv_path, module, clock_mhz, cycles, top) -> Profile:
    # address -> (kernel, index)
    where: dict[int, tuple] = {}
    ops: dict[int, str] = {}
    kernels = [k for k in module.kernels]
    pcs = {}
    lists = {}
    for k in kernels:
        pcs[k.name] = kernel_pcs(k)
        lists[k.name] = list(k.instructions())
        base = k.address
        for i, inst in enumerate(lists[k.name]):
            # the address in the code object; a text module's instructions have none: then
            # the kernel's base (or 0) plus the byte offset
            a = inst.address if inst.address is not None else (base or 0) + pcs[k.name][i]
            if a is not None:
                where[a] = (k, i)
                ops[a] = inst.opcode
    direct = sum(1 for r in raw if r[1] in where)
    offset = 0
    if raw and direct * 2 < len(raw):
        votes = collections.Counter()
        by_op = collections.defaultdict(list)
        for a, op in ops.items():
            by_op[op].append(a)
        for r in raw[:64]:
            op = r[2].split(None, 1)[0] if r[2] else ""
            for a in by_op.get(op, ())[:256]:
                votes[r[1] - a] += 1
        if votes:
            offset = votes.most_common(1)[0][0]
    rows: dict[str, dict[int, InstructionRow]] = collections.defaultdict(dict)
    unmatched = 0
    for ln, va, text, hits, lat, stall, idle in raw:
        hit = where.get(va - offset)
        if hit is None:
            unmatched += 1
            continue
        k, i = hit
        insts = rows[k.name]
        r = insts.get(i)
        if r is None:
            inst = lists[k.name][i]
            r = insts[i] = InstructionRow(index=i, pc=pcs[k.name][i], text=inst.text())
        r.hits += int(hits)
        r.latency += lat
        r.stall += stall
        r.idle += idle
    if not rows:
        raise AsmevoError(f"no row of the trace matches an instruction of the code object "
                          f"({len(raw)} rows)", file=csv_path)
    prof = Profile(model={"name": "rocprofv3-att", "version": "stats_csv"}, source="hardware",
                   estimated=False, machine="hardware")
    from ..analysis.regbudget import RegisterBudget
    from ..analysis import AnalysisManager
    am = AnalysisManager(module)
    for k in kernels:
        if k.name not in rows:
            continue
        rb = am.get(RegisterBudget, k)
        occ = int(rb.occupancy or 0)
        lim = min(rb.occupancy_limits, key=lambda x: rb.occupancy_limits[x]) \
            if rb.occupancy_limits else "waves"
        if occ >= 8:
            lim = "waves"
        rlist = [rows[k.name][i] for i in sorted(rows[k.name])]
        for r in rlist:  # a trace has no causes: derived from Stall/Idle and the instruction
            r.causes = row_causes(r, lists[k.name][r.index])
        total = sum(r.latency for r in rlist)
        cyc = float((cycles or {}).get(k.name, total))
        kp = KernelProfile(kernel=k.name, cycles=cyc, cu_cycles=cyc, microseconds=cyc / clock_mhz,
                           occupancy=occ, occupancy_limit=lim, bottleneck="valu",
                           instructions=rlist,
                           extra={"unmatched_rows": unmatched, "vaddr_offset": offset,
                                  "cycles_meaning": "measured launch clk" if cycles and
                                  k.name in cycles else "sum of traced Latency (wave-clk)"})
        insts = lists[k.name]
        kp.bottleneck = classify(insts, [rows[k.name].get(i) for i in range(len(insts))])
        kp.windows = hot_windows(k, rlist, top, kernel_bottleneck=kp.bottleneck)
        prof.kernels[k.name] = kp
    return prof

