"""Static checks of a candidate kernel against its own descriptor (and the original).

Checks, in the order they decide a verdict:

1. **register bounds** (``rejected-register-bounds``): every register an
   instruction names exists under the candidate's kernel descriptor.  On
   gfx90a/gfx942 the VGPR file is unified: the kernel gets
   ``(GRANULATED_WORKITEM_VGPR_COUNT + 1) * 8`` registers; AGPR ``aN`` lives at
   unified index ``ACCUM_OFFSET + N``, so a VGPR name at or above ACCUM_OFFSET
   aliases an AGPR.  SGPRs: ``(GRANULATED_WAVEFRONT_SGPR_COUNT + 1) * 8`` per
   wave, of which 6 hold VCC, XNACK_MASK and FLAT_SCRATCH (AMDGPUUsage
   compute_pgm_rsrc1/rsrc3 tables; AMDGPUBaseInfo.cpp getNumExtraSGPRs; gfx942
   has architected flat scratch, so always 6).  Architectural limits:
   ``v0..v255``, ``a0..a255``, ``s0..s101``.  Two rules are relative to the
   original (see :func:`check_register_bounds`).
2. **descriptor counts** (``rejected-descriptor-counts``): the SGPRs the
   hardware initialises at entry (user SGPRs incl. kernarg preload, plus the
   enabled system SGPRs) fit the SGPR allocation (PITFALLS BR-24);
   USER_SGPR_COUNT covers the enabled user SGPRs; metadata ``.vgpr_count``,
   ``.agpr_count``, ``.sgpr_count`` do not under-report the registers used;
   ``group_segment_fixed_size`` (LDS) and ``private_segment_fixed_size``
   (scratch) cover every statically known access (immediate offsets of DS and
   scratch instructions are lower bounds of the address).
3. **waitcnt** (``rejected-waitcnt``) and **hazards** (``rejected-hazard``):
   violations reported by :mod:`asmevo.analysis` that the original does not
   have.  When those analyses are unavailable the verdict is
   ``unknown-unsupported``, never ``accepted``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..frontend.descriptor import KernelDescriptor
from ..ir.instruction import Instruction
from ..ir.module import Kernel, Module
from ..ir.operands import Reg, base_of
from .abi import KernelFacts, kernel_facts
from .verdict import Evidence, Status, Verdict

#: Architectural register-file limits on gfx942 (CDNA3 ISA guide, "Scalar/Vector operands").
MAX_VGPR, MAX_AGPR, MAX_SGPR = 256, 256, 102
#: SGPRs above the used ones that the allocation must hold on gfx942 (VCC, XNACK, FLAT_SCRATCH).
EXTRA_SGPRS = 6


@dataclass
class RegisterUse:
    """Highest register index used per file, with the instruction that used it.

    Attributes:
        max_v, max_a, max_s: highest index used (-1 if none).
        where: ``{"v"|"a"|"s": Instruction}`` the instruction naming the highest register.
        uses: every ``(file, index, Instruction)`` for bounds reporting.
    """

    max_v: int = -1
    max_a: int = -1
    max_s: int = -1
    where: dict = field(default_factory=dict)
    uses: list = field(default_factory=list)


def register_use(kernel: Kernel) -> RegisterUse:
    """Scan every explicit register operand of ``kernel`` (all blocks)."""
    ru = RegisterUse()
    for inst in kernel.instructions():
        for op in inst.operands:
            b = base_of(op)
            if not isinstance(b, Reg) or b.file not in ("v", "a", "s"):
                continue
            last = b.index + b.count - 1
            ru.uses.append((b.file, last, inst))
            attr = "max_" + b.file
            if last > getattr(ru, attr):
                setattr(ru, attr, last)
                ru.where[b.file] = inst
    return ru


def _loc(inst: Instruction) -> dict:
    d = {"instruction": inst.text()}
    if inst.address is not None:
        d["address"] = inst.address
    if inst.line is not None:
        d["line"] = inst.line
    return d


def unified_overlaps(facts: KernelFacts) -> set[int]:
    """Unified-file indices named both as a VGPR (``v_i``, ``i >= accum_offset``) and as an
    AGPR (``a_j`` with ``accum_offset + j == i``): the two names alias on gfx90a/gfx942."""
    kd = facts.descriptor
    if kd is None:
        return set()
    acc = kd.accum_offset_vgprs
    vs, as_ = set(), set()
    for inst in facts.kernel.instructions():
        for op in inst.operands:
            b = base_of(op)
            if isinstance(b, Reg) and b.file == "v":
                vs.update(i for i in range(b.index, b.index + b.count) if i >= acc)
            elif isinstance(b, Reg) and b.file == "a":
                as_.update(acc + i for i in range(b.index, b.index + b.count))
    return vs & as_


def _sgpr_need(facts: KernelFacts) -> int:
    ru = register_use(facts.kernel)
    return ru.max_s + 1 + EXTRA_SGPRS


def check_register_bounds(facts: KernelFacts, orig: KernelFacts | None = None) -> list[Evidence]:
    """Registers named by instructions that do not exist under the descriptor.

    Absolute rules: architectural limits; VGPRs and AGPRs (at ``accum_offset +
    a``) inside the unified allocation.  Rules whose hardware details the ISA
    guide leaves open are applied relative to the original (hand-written AITer
    kernels rely on them): a VGPR name that aliases an AGPR of the same kernel
    is rejected only when the original has no such alias at that index; the
    SGPRs used plus the 6 reserved ones must fit ``(GRANULATED_WAVEFRONT_SGPR_COUNT
    + 1) * 8`` unless the original already needs at least as many with no
    larger allocation (GFX9 allocates SGPRs in granules of 16, LLVM encodes 8).
    """
    kd = facts.descriptor
    ru = register_use(facts.kernel)
    ev: list[Evidence] = []
    seen: set = set()
    alloc_v = kd.vgpr_count if kd else MAX_VGPR
    acc = kd.accum_offset_vgprs if kd else MAX_VGPR
    alloc_s = kd.sgpr_count if kd else MAX_SGPR + EXTRA_SGPRS
    o_kd = orig.descriptor if orig is not None else None
    if o_kd is not None:
        o_need = _sgpr_need(orig)
        if o_need > o_kd.sgpr_count and alloc_s >= o_kd.sgpr_count:
            alloc_s = max(alloc_s, o_need)
    aliases = unified_overlaps(facts) - (unified_overlaps(orig) if orig is not None else set())
    for f, last, inst in ru.uses:
        why = None
        if f == "v":
            if last >= MAX_VGPR:
                why = f"v{last} beyond the {MAX_VGPR} addressable VGPRs"
            elif kd and last >= alloc_v:
                why = f"v{last} beyond the {alloc_v} allocated VGPRs"
            elif last in aliases:
                why = (f"v{last} is also AGPR a{last - acc} (ACCUM_OFFSET {acc}); "
                       "the original has no such alias")
        elif f == "a":
            if last >= MAX_AGPR:
                why = f"a{last} beyond the {MAX_AGPR} addressable AGPRs"
            elif kd and acc + last >= alloc_v:
                why = (f"a{last} is unified register {acc + last}, beyond the {alloc_v} "
                       f"allocated (ACCUM_OFFSET {acc})")
        elif f == "s":
            if last >= MAX_SGPR:
                why = f"s{last} beyond the {MAX_SGPR} addressable SGPRs"
            elif kd and last + 1 + EXTRA_SGPRS > alloc_s:
                why = (f"s{last} plus the {EXTRA_SGPRS} VCC/XNACK/FLAT_SCRATCH SGPRs exceeds "
                       f"the {alloc_s} allocated SGPRs")
        if why and (f, last, id(inst)) not in seen:
            seen.add((f, last, id(inst)))
            ev.append(Evidence("static", "register-out-of-range", f"{facts.name}: {why}: {inst.text()}",
                               {"kernel": facts.name, "file": f, "index": last, **_loc(inst)}))
    return ev


# --- static memory footprint -------------------------------------------------

_WIDTH_TOKENS = {"b8": 1, "u8": 1, "i8": 1, "b16": 2, "u16": 2, "i16": 2, "f16": 2, "bf16": 2,
                 "b32": 4, "u32": 4, "i32": 4, "f32": 4, "b64": 8, "u64": 8, "i64": 8, "f64": 8,
                 "b96": 12, "b128": 16}
_DS_NO_ADDRESS = re.compile(r"^ds_(swizzle|permute|bpermute|append|consume|gws|nop|ordered_count)|addtid")
_SCRATCH_WIDTH = {"byte": 1, "sbyte": 1, "ubyte": 1, "short": 2, "sshort": 2, "ushort": 2,
                  "dword": 4, "dwordx2": 8, "dwordx3": 12, "dwordx4": 16}


def _ds_width(op: str) -> int | None:
    toks = op.split("_")
    if "pk" in toks:
        return 4
    for t in reversed(toks):
        if t in _WIDTH_TOKENS:
            return _WIDTH_TOKENS[t]
    return None


def lds_requirement(kernel: Kernel) -> tuple[int, Instruction | None]:
    """Lower bound of the LDS bytes the kernel's DS instructions touch.

    An address is ``vaddr + offset`` with an unsigned vaddr, so ``offset +
    width`` bytes must exist (``ds_read2*``/``ds_write2*``: ``offset0``/``offset1``
    in units of the element size, x64 for ``st64``).  Returns ``(bytes,
    instruction that needs most)``.
    """
    best, where = 0, None
    for inst in kernel.instructions():
        op = inst.opcode
        if not op.startswith("ds_") or _DS_NO_ADDRESS.search(op):
            continue
        w = _ds_width(op)
        if w is None:
            continue
        if re.search(r"(read|write|load|store|wrxchg|cmpst|cmpxchg)2", op):
            unit = w * (64 if "st64" in op else 1)
            need = max(int(inst.mod("offset0", 0) or 0), int(inst.mod("offset1", 0) or 0)) * unit + w
        else:
            need = int(inst.mod("offset", 0) or 0) + w
        if need > best:
            best, where = need, inst
    return best, where


def scratch_requirement(kernel: Kernel) -> tuple[int, Instruction | None]:
    """Lower bound of per-work-item scratch bytes touched by ``scratch_*`` instructions
    (``offset`` >= 0 plus the access width; address registers are unsigned)."""
    best, where = 0, None
    for inst in kernel.instructions():
        op = inst.opcode
        if not op.startswith("scratch_"):
            continue
        m = re.match(r"scratch_(load|store)_(\w+?)(_d16(_hi)?)?$", op)
        if not m or m.group(2) not in _SCRATCH_WIDTH:
            continue
        off = int(inst.mod("offset", 0) or 0)
        if off < 0:
            continue
        need = off + _SCRATCH_WIDTH[m.group(2)]
        if need > best:
            best, where = need, inst
    return best, where


def check_descriptor_counts(facts: KernelFacts, orig: KernelFacts | None = None) -> list[Evidence]:
    """Descriptor and metadata counts that do not cover what the code uses (see module doc).

    LDS/scratch: when the original itself accesses beyond its fixed size (dynamic
    LDS), the candidate may access up to the original's footprint."""
    kd, name = facts.descriptor, facts.name
    ev: list[Evidence] = []
    ru = register_use(facts.kernel)
    if kd is not None:
        system = (kd.enable_sgpr_workgroup_id_x + kd.enable_sgpr_workgroup_id_y
                  + kd.enable_sgpr_workgroup_id_z + kd.enable_sgpr_workgroup_info)
        entry = kd.user_sgpr_count + system
        if kd.user_sgpr_count < kd.implied_user_sgprs:
            ev.append(Evidence("static", "user-sgpr-count",
                               f"{name}: USER_SGPR_COUNT {kd.user_sgpr_count} < {kd.implied_user_sgprs} "
                               "user SGPRs enabled (incl. kernarg preload)",
                               {"kernel": name, "user_sgpr_count": kd.user_sgpr_count,
                                "implied": kd.implied_user_sgprs}))
        if entry + EXTRA_SGPRS > kd.sgpr_count:
            ev.append(Evidence("static", "entry-sgprs",
                               f"{name}: {entry} entry SGPRs (user + system) + {EXTRA_SGPRS} exceed the "
                               f"{kd.sgpr_count} allocated SGPRs (PITFALLS BR-24)",
                               {"kernel": name, "entry_sgprs": entry, "allocated": kd.sgpr_count}))
        if kd.accum_offset_vgprs > 256:
            ev.append(Evidence("static", "accum-offset", f"{name}: ACCUM_OFFSET {kd.accum_offset_vgprs} > 256",
                               {"kernel": name}))
    md = facts.metadata or {}
    acc = kd.accum_offset_vgprs if kd else None
    need_v = ru.max_v + 1
    if ru.max_a >= 0:
        need_v = max(need_v, (acc if acc is not None else need_v) + ru.max_a + 1)
    o_md, o_need = {}, {}
    if orig is not None:
        o_md = orig.metadata or {}
        oru = register_use(orig.kernel)
        o_acc = orig.descriptor.accum_offset_vgprs if orig.descriptor else 0
        o_need = {".vgpr_count": max(oru.max_v + 1, o_acc + oru.max_a + 1 if oru.max_a >= 0 else 0),
                  ".agpr_count": oru.max_a + 1, ".sgpr_count": oru.max_s + 1}
    for key, need in ((".vgpr_count", need_v), (".agpr_count", ru.max_a + 1),
                      (".sgpr_count", ru.max_s + 1)):
        if key in md:
            try:
                have = int(md[key])
            except (TypeError, ValueError):
                continue
            # Hand-written originals may under-report; the candidate may too, no worse.
            try:
                o_short = int(o_md[key]) < o_need[key] and need <= o_need[key]
            except (KeyError, TypeError, ValueError):
                o_short = False
            if have < need and not o_short:
                ev.append(Evidence("static", "metadata-count",
                                   f"{name}: metadata {key} {have} < {need} registers used",
                                   {"kernel": name, "key": key, "metadata": have, "used": need}))
    lds, lds_at = lds_requirement(facts.kernel)
    scr, scr_at = scratch_requirement(facts.kernel)
    if kd is not None:
        # The original may legitimately exceed its fixed LDS size (dynamic LDS); then the
        # candidate is held to the original's footprint instead.
        lds_ok = scr_ok = 0
        if orig is not None and orig.descriptor is not None:
            o_lds = lds_requirement(orig.kernel)[0]
            o_scr = scratch_requirement(orig.kernel)[0]
            if o_lds > orig.descriptor.group_segment_fixed_size:
                lds_ok = o_lds
            if o_scr > orig.descriptor.private_segment_fixed_size:
                scr_ok = o_scr
        if lds > kd.group_segment_fixed_size and lds > lds_ok:
            ev.append(Evidence("static", "lds-size",
                               f"{name}: LDS access needs {lds} bytes, group_segment_fixed_size is "
                               f"{kd.group_segment_fixed_size}: {lds_at.text()}",
                               {"kernel": name, "needed": lds, "size": kd.group_segment_fixed_size,
                                **_loc(lds_at)}))
        if scr > kd.private_segment_fixed_size and scr > scr_ok:
            ev.append(Evidence("static", "scratch-size",
                               f"{name}: scratch access needs {scr} bytes, private_segment_fixed_size "
                               f"is {kd.private_segment_fixed_size}: {scr_at.text()}",
                               {"kernel": name, "needed": scr, "size": kd.private_segment_fixed_size,
                                **_loc(scr_at)}))
    return ev


def allocation_notes(facts: KernelFacts) -> list[str]:
    """Non-fatal remarks: registers allocated but unused (occupancy cost only)."""
    kd = facts.descriptor
    if kd is None:
        return []
    ru = register_use(facts.kernel)
    need_v = ru.max_v + 1
    if ru.max_a >= 0:
        need_v = max(need_v, kd.accum_offset_vgprs + ru.max_a + 1)
    out = []
    if KernelDescriptor.granulate_vgprs(need_v) < kd.granulated_workitem_vgpr_count:
        out.append(f"{facts.name}: {kd.vgpr_count} VGPRs allocated, {need_v} used")
    return out


def _budget(module: Module | None, kernel: Kernel):
    try:
        from ..analysis import AnalysisManager
        from ..analysis.regbudget import RegisterBudget
        return RegisterBudget(kernel, AnalysisManager(module))
    except Exception:  # noqa: BLE001 - optional second opinion
        return None


def budget_problems(cand_mod: Module, cand: KernelFacts, orig_mod: Module | None,
                    orig: KernelFacts | None) -> list[tuple[Status, Evidence]]:
    """Problems reported by :class:`asmevo.analysis.regbudget.RegisterBudget` (a second,
    independently written opinion on register and LDS budgets) that the original does
    not have at least as badly.  Returns ``[(status, evidence)]``; nothing when the
    analysis is unavailable (the checks above still apply)."""
    cb = _budget(cand_mod, cand.kernel)
    if cb is None:
        return []
    ob = _budget(orig_mod, orig.kernel) if orig is not None else None
    worst: dict = {}
    for p in (ob.problems if ob is not None else []):
        worst[p.what] = max(worst.get(p.what, -1), p.used)
    out = []
    for p in cb.problems:
        if p.what in worst and p.used <= worst[p.what]:
            continue
        st = Status.REJECTED_REGISTER_BOUNDS if p.what in ("vgpr", "agpr", "sgpr") \
            else Status.REJECTED_DESCRIPTOR_COUNTS
        out.append((st, Evidence("static", f"budget-{p.what}", f"{cand.name}: {p.message}",
                                 {"kernel": cand.name, "used": p.used, "granted": p.granted})))
    return out


def undefined_reads(cand_mod: Module, cand: KernelFacts, orig_mod: Module | None,
                    orig: KernelFacts | None) -> list[Evidence]:
    """Registers the candidate may read before writing them that the kernel ABI does not
    initialise at entry, and that the original does not read undefined
    (:attr:`asmevo.analysis.liveness.Liveness.undefined_at_entry`).  The emulator
    zero-fills such registers, so differential testing cannot see these reads; they
    break the entry conditions (``rejected-abi``)."""
    from ..analysis import AnalysisManager
    from ..analysis.liveness import Liveness
    try:
        cu = set(Liveness(cand.kernel, AnalysisManager(cand_mod)).undefined_at_entry)
        ou = set(Liveness(orig.kernel, AnalysisManager(orig_mod)).undefined_at_entry) \
            if orig is not None else set()
    except Exception:  # noqa: BLE001 - no liveness: nothing to add (not a required check)
        return []
    new = sorted(cu - ou, key=lambda u: (len(u), u[0], u[1] if len(u) > 1 else 0))
    if not new:
        return []
    names = ", ".join(f"{u[0]}{u[1]}" if len(u) == 2 else u[0] for u in new[:8])
    return [Evidence("static", "undefined-at-entry",
                     f"{cand.name}: may read {names} before writing it; the kernel ABI does not "
                     "initialise it and the original does not read it",
                     {"kernel": cand.name, "registers": [list(u) for u in new]})]


# --- waitcnt / hazards from asmevo.analysis ----------------------------------

class AnalysisUnavailable(Exception):
    """The waitcnt or hazard analysis is not importable or does not support this kernel."""


def _violations(kind: str, module: Module, kernel: Kernel) -> list[dict]:
    """Violations found by ``asmevo.analysis`` for ``kind`` in ``{"waitcnt", "hazard"}``.

    Each violation is a dict with at least ``message`` and ``signature`` (a
    hashable description used to match violations between original and candidate).

    Raises:
        AnalysisUnavailable: the analysis module is absent or raised.
    """
    from ..analysis import AnalysisManager
    if kind == "waitcnt":
        try:
            from ..analysis.waitcnt import WaitcntAnalysis
        except ImportError as e:
            raise AnalysisUnavailable(f"no waitcnt analysis ({e})") from None
        try:
            w = WaitcntAnalysis(kernel, AnalysisManager(module))
        except Exception as e:  # noqa: BLE001 - the analysis could not handle this kernel
            raise AnalysisUnavailable(f"waitcnt analysis failed: {type(e).__name__}: {e}") from None
        out = []
        for v in w.violations:
            u = v.unit
            reg = f"{u[0]}{u[1]}" if len(u) == 2 else u[0]
            prod = v.producer.text() if v.producer is not None else None
            out.append({"message": f"{v.inst.text()} reads {reg} before {v.counter}"
                                   f"({v.needed}) covers {prod or 'its producer'}",
                        "signature": (v.inst.text(), u, v.counter, prod),
                        "instruction": v.inst.text(), "register": reg, "counter": v.counter,
                        "needed": v.needed, "producer": prod, "block": v.block, "index": v.index})
        return out
    try:
        from ..analysis import hazards as hz
    except ImportError as e:
        raise AnalysisUnavailable(f"no hazard analysis ({e})") from None
    return _hazard_violations(hz, module, kernel)


def _hazard_violations(hz, module: Module, kernel: Kernel) -> list[dict]:
    """Adapter to :class:`asmevo.analysis.hazards.HazardAnalysis` (see :func:`_violations`).

    The signature ignores the available wait-state count so that a hazard the
    original already has (an analysis false positive, or a hand-written
    kernel's choice) is forgiven in the candidate only if it is no worse
    (``available`` not smaller)."""
    from ..analysis import AnalysisManager
    try:
        h = hz.HazardAnalysis(kernel, AnalysisManager(module))
    except Exception as e:  # noqa: BLE001 - the analysis could not handle this kernel
        raise AnalysisUnavailable(f"hazard analysis failed: {type(e).__name__}: {e}") from None
    out = []
    for v in h.violations:
        u = v.unit
        reg = None if u is None else (f"{u[0]}{u[1]}" if len(u) == 2 else u[0])
        prod = v.producer.text() if v.producer is not None else None
        rule = hz.RULES.get(v.rule)
        desc = f"{rule.producer} -> {rule.consumer}" if rule else f"rule {v.rule}"
        out.append({"message": f"{v.inst.text()}: {v.available} wait state(s) after "
                               f"{prod or 'its producer'}, {v.required} required ({desc}; "
                               f"ISA_NOTES hazard row {v.rule})",
                    "signature": (v.inst.text(), prod, v.rule, u),
                    "available": v.available,
                    "instruction": v.inst.text(), "producer": prod, "rule": v.rule,
                    "required": v.required, "register": reg, "block": v.block, "index": v.index})
    return out


def _weakened_waits(orig_mod: Module, ko: Kernel, kc: Kernel,
                    cand_mod: Module | None = None) -> list[dict]:
    """``s_waitcnt``s of the original that the candidate removed or weakened below what
    :meth:`asmevo.analysis.waitcnt.WaitcntAnalysis.required` says they must keep
    (register uses *and* memory-order points such as ``s_barrier`` and stores).

    Windows are aligned block by block (:func:`asmevo.verify.equiv.changed_windows`);
    for each original wait in a changed window, the candidate's window must hold
    a wait at least as strong (every count <= the required count).  When the block
    structure differs no alignment exists; :func:`_unaligned_waits` then matches needed
    waits to candidate waits without positions and reports ``unknown`` when one is missing.
    """
    from ..analysis import AnalysisManager
    from ..analysis.waitcnt import MAX, NAMES, WaitcntAnalysis, parse_waitcnt
    from .equiv import changed_windows
    wins, why = changed_windows(ko, kc)
    if why or not wins:
        return []
    try:
        w = WaitcntAnalysis(ko, AnalysisManager(orig_mod))
    except Exception as e:  # noqa: BLE001
        raise AnalysisUnavailable(f"waitcnt analysis failed: {type(e).__name__}: {e}") from None
    wc_analysis = None
    out = []
    for bi, p, eo, ec in wins:
        wo = [i for i in ko.blocks[bi].instructions[p:eo] if i.opcode == "s_waitcnt"]
        wc = [parse_waitcnt(i) for i in kc.blocks[bi].instructions[p:ec] if i.opcode == "s_waitcnt"]
        idle: set | None = None
        for x in wo:
            try:
                req = w.required(x)
            except KeyError:
                continue  # unreachable wait
            need = tuple(req[n] for n in NAMES)
            if any(need[c] < MAX[c] for c in range(3)) and not any(
                    all(cnt[c] <= need[c] for c in range(3)) for cnt in wc):
                if idle is None:
                    try:
                        if wc_analysis is None:
                            wc_analysis = WaitcntAnalysis(kc, AnalysisManager(cand_mod))
                        idle = wc_analysis.idle_counters(bi, p, ec)
                        busy = [n for n in NAMES if n not in idle]
                        idle |= _unneeded_waits(kc, cand_mod, bi, p, ec, busy)
                    except Exception:  # noqa: BLE001 - no waiver without the analysis
                        idle = set()
                need = tuple(MAX[c] if NAMES[c] in idle else need[c] for c in range(3))
            if all(need[c] >= MAX[c] for c in range(3)):
                continue
            if any(all(cnt[c] <= need[c] for c in range(3)) for cnt in wc):
                continue
            txt = ", ".join(f"{NAMES[c]}({need[c]})" for c in range(3) if need[c] < MAX[c])
            out.append({"message": f"{x.text()} (block {bi}) was removed or weakened; the original "
                                   f"needs at least {txt} there (register uses or memory-order points)",
                        "signature": ("weakened", bi, x.text()), "instruction": x.text(),
                        "block": bi, "required": req})
    return out


def _unneeded_waits(kc: Kernel, cand_mod: Module | None, bi: int, p: int, ec: int,
                    names: list[str], limit: int = 48) -> set[str]:
    """Counters among ``names`` for which a wait-for-all (count 0) inserted at any point
    of the candidate's window ``[p, ec]`` of block ``bi`` would be required for nothing:
    :meth:`~asmevo.analysis.waitcnt.WaitcntAnalysis.required` (register uses and
    memory-order points, the same test that decides which of the original's waits are
    needed) gives that counter's maximum at every point.  The candidate is changed
    only temporarily.  Windows longer than ``limit`` instructions are not tried (empty
    set: no waiver)."""
    from ..analysis import AnalysisManager
    from ..analysis.waitcnt import MAX, NAMES, WaitcntAnalysis, make_waitcnt
    if not names or ec - p + 1 > limit:
        return set()
    insts = kc.blocks[bi].instructions
    left = set(names)
    for q in range(p, ec + 1):
        for nm in sorted(left):
            w = make_waitcnt(tuple(0 if NAMES[c] == nm else MAX[c] for c in range(3)))
            insts.insert(q, w)
            try:
                req = WaitcntAnalysis(kc, AnalysisManager(cand_mod)).required(w)
            except Exception:  # noqa: BLE001 - no waiver without the analysis
                req = None
            finally:
                del insts[q]
            if req is None or req[nm] < MAX[NAMES.index(nm)]:
                left.discard(nm)
        if not left:
            break
    return left


def _unaligned_waits(orig_mod: Module, ko: Kernel, kc: Kernel) -> str | None:
    """The conservative fallback of :func:`_weakened_waits` when the block structure differs
    (no window alignment exists): every ``s_waitcnt`` of the original that
    :meth:`~asmevo.analysis.waitcnt.WaitcntAnalysis.required` says is needed (a register use
    or a memory-order point such as ``s_barrier``) must be matched by a distinct ``s_waitcnt``
    of the candidate at least as strong.  Returns a reason when some needed wait has no
    match (the caller reports ``unknown``: without alignment this may be a false alarm, but
    the removal is not proved harmless), or None.

    Raises:
        AnalysisUnavailable: the waitcnt analysis failed on the original.
    """
    from ..analysis import AnalysisManager
    from ..analysis.waitcnt import MAX, NAMES, WaitcntAnalysis, parse_waitcnt
    try:
        w = WaitcntAnalysis(ko, AnalysisManager(orig_mod))
    except Exception as e:  # noqa: BLE001
        raise AnalysisUnavailable(f"waitcnt analysis failed: {type(e).__name__}: {e}") from None
    needs = []
    for x in ko.instructions():
        if x.opcode != "s_waitcnt":
            continue
        try:
            req = w.required(x)
        except KeyError:
            continue
        need = tuple(req[n] for n in NAMES)
        if not all(need[c] >= MAX[c] for c in range(3)):
            needs.append((x, need))
    have = [parse_waitcnt(i) for i in kc.instructions() if i.opcode == "s_waitcnt"]
    # strongest requirements first, each matched to the weakest candidate wait that covers it
    needs.sort(key=lambda t: t[1])
    have.sort(key=lambda c: tuple(-v for v in c))
    used = [False] * len(have)
    missing = []
    for x, need in needs:
        for j, cnt in enumerate(have):
            if not used[j] and all(cnt[c] <= need[c] for c in range(3)):
                used[j] = True
                break
        else:
            missing.append(x)
    if not missing:
        return None
    return (f"{ko.name}: the block structure differs and {len(missing)} needed s_waitcnt of the "
            f"original ({missing[0].text()}) has no candidate wait at least as strong; "
            "removed or weakened waits cannot be ruled out")


#: Kernels longer than this (instructions) are not aligned as one sequence when their block
#: structure differs (difflib is quadratic in the worst case); the z3 layer cannot compare
#: such kernels either, so the verdict is unknown anyway.
ALIGN_LIMIT = 6000


def align_instructions(ko: Kernel, kc: Kernel) -> dict[int, Instruction]:
    """Candidate instruction (by ``id``) -> the original instruction it corresponds to.

    With the same block structure (:func:`asmevo.verify.equiv.changed_windows`) unchanged
    blocks and the common prefix and suffix of a changed block correspond position by
    position; otherwise the whole kernel is aligned as one sequence.  Inside a changed
    region instructions are matched by :func:`difflib.SequenceMatcher` on their values
    (labels renamed to the original's), and what is left of a replaced region is paired
    by mnemonic in order over the whole region (a rewritten operand keeps the
    correspondence; an instruction moved past an equal one is paired with itself).  Candidate
    instructions without a counterpart (added ones) are absent."""
    import difflib
    from .equiv import changed_windows, label_map, rename_labels
    lm = label_map(ko, kc) or {}
    m: dict[int, Instruction] = {}

    def region(io: list, ic: list) -> None:
        ko_keys = [i.key() for i in io]
        kc_keys = [rename_labels(i, lm).key() for i in ic]
        sm = difflib.SequenceMatcher(None, ko_keys, kc_keys, autojunk=False)
        left_o: list = []
        left_c: list = []

        def flush() -> None:
            by_op: dict[str, list] = {}
            for i in left_o:
                by_op.setdefault(i.opcode, []).append(i)
            for i in left_c:
                q = by_op.get(i.opcode)
                if q:
                    m[id(i)] = q.pop(0)
            left_o.clear()
            left_c.clear()

        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            if tag == "equal":
                for a, b in zip(io[i1:i2], ic[j1:j2]):
                    m[id(b)] = a
            else:
                left_o.extend(io[i1:i2])
                left_c.extend(ic[j1:j2])
        flush()

    wins, why = changed_windows(ko, kc)
    if why:
        io, ic = list(ko.instructions()), list(kc.instructions())
        if max(len(io), len(ic)) > ALIGN_LIMIT:
            return m  # nothing aligned: the caller reports the candidate's points unknown
        region(io, ic)
        return m
    changed = {bi: (p, eo, ec) for bi, p, eo, ec in wins}
    for bi, (bo, bc) in enumerate(zip(ko.blocks, kc.blocks)):
        io, ic = bo.instructions, bc.instructions
        if bi not in changed:
            for a, b in zip(io, ic):
                m[id(b)] = a
            continue
        p, eo, ec = changed[bi]
        for a, b in zip(io[:p], ic[:p]):
            m[id(b)] = a
        for a, b in zip(io[eo:], ic[ec:]):
            m[id(b)] = a
        region(io[p:eo], ic[p:ec])
    return m


class _Reach:
    """Whether an instruction may execute before another in one kernel (CFG paths), and
    whether it does so without a retreating edge (an edge to a block not later in reverse
    post-order: a loop back edge)."""

    def __init__(self, cfg):
        import networkx as nx
        from ..analysis.cfg import EXIT
        self.cfg = cfg
        g = cfg.graph
        rank = {b: i for i, b in enumerate(cfg.rpo())}
        dag = nx.DiGraph()
        dag.add_nodes_from(b for b in g.nodes if b != EXIT)
        for u, v in g.edges:
            if EXIT in (u, v):
                continue
            if u in rank and v in rank and rank[v] > rank[u]:
                dag.add_edge(u, v)
        self._g = g.subgraph([b for b in g.nodes if b != EXIT])
        self._dag = dag
        self._memo: dict = {}

    def _after(self, graph, key, b: int) -> set:
        k = (key, b)
        r = self._memo.get(k)
        if r is None:
            import networkx as nx
            r = set()
            for s in graph.successors(b):
                r.add(s)
                r |= nx.descendants(graph, s)
            self._memo[k] = r
        return r

    def before(self, a, p) -> tuple[bool, bool]:
        """``(on some path a executes before p, ... on such a path without a back edge)``."""
        ba, ia = self.cfg.position(a)
        bp, ip = self.cfg.position(p)
        acyc = (ba == bp and ia < ip) or bp in self._after(self._dag, "dag", ba)
        if acyc:
            return True, True
        return (ba == bp and ia < ip) or bp in self._after(self._g, "g", ba), False


def _order_point_waits(orig_mod: Module, ko: Kernel, cand_mod: Module | None,
                       kc: Kernel) -> tuple[list[dict], str | None]:
    """Waits the original has before a memory-order point that the candidate no longer has
    before that same point (issue 14: a wait moved past ``s_barrier`` was accepted).

    The rule: if the original completes a memory access before a memory-order point
    (:func:`asmevo.analysis.waitcnt.is_order_point`: ``s_barrier``, ``s_sendmsg*``,
    stores, atomics, cache maintenance, undecodable words), the candidate must complete it
    before the corresponding point too.  For every order point ``P`` of the candidate and
    every access ``A`` the candidate may still have in flight at ``P``
    (:meth:`~asmevo.analysis.waitcnt.WaitcntAnalysis.order_point_pending`), with ``P'`` and
    ``A'`` their counterparts in the original (:func:`align_instructions`): a violation
    when some path of the original runs ``A'`` before ``P'`` and no path leaves ``A'`` in
    flight at ``P'``, unless the access moved across the point (``A`` reaches ``P``
    without a loop back edge in one program and only through one in the other: a move,
    which the z3 layer's cross-barrier check leaves undecided).  A candidate access in
    flight at a point without a counterpart in the original gives an ``unknown`` reason.

    Returns ``(violations, unknown reason or None)``.

    Raises:
        AnalysisUnavailable: the waitcnt analysis failed.
    """
    from ..analysis import AnalysisManager
    from ..analysis.waitcnt import WaitcntAnalysis
    try:
        wo = WaitcntAnalysis(ko, AnalysisManager(orig_mod))
        wc = WaitcntAnalysis(kc, AnalysisManager(cand_mod))
        po = wo.order_point_pending()
        pc = wc.order_point_pending()
    except Exception as e:  # noqa: BLE001
        raise AnalysisUnavailable(f"waitcnt analysis failed: {type(e).__name__}: {e}") from None
    if not pc:
        return [], None
    m = align_instructions(ko, kc)
    if not m:
        return [], (f"{kc.name}: the kernels could not be aligned (block structure differs, "
                    f"over {ALIGN_LIMIT} instructions); waits before memory-order points are "
                    "not checked")
    ro, rc = _Reach(wo.cfg), _Reach(wc.cfg)
    out: list[dict] = []
    unknown = None
    for P, pend in pc.values():
        Po = m.get(id(P))
        if Po is None or id(Po) not in po:
            continue  # a point the original does not have: not one of its waits
        pend_o = po[id(Po)][1]
        for A, counter in pend.values():
            Ao = m.get(id(A))
            if Ao is None:
                unknown = unknown or (
                    f"{kc.name}: {A.text()} may be in flight at {P.text()} and has no "
                    "counterpart in the original; whether the original completes it before "
                    "that point is not decided")
                continue
            if id(Ao) in pend_o:
                continue
            some_o, acyc_o = ro.before(Ao, Po)
            if not some_o:
                continue  # issued after the point in the original: moved, not a wait
            _, acyc_c = rc.before(A, P)
            if acyc_o != acyc_c:
                continue  # moved across the point (loop-carried on one side only)
            bi, _ = wc.cfg.position(P)
            out.append({"message": f"{A.text()} may still be in flight ({counter}) at "
                                   f"{P.text()} (block {bi}); the original completes it before "
                                   "that memory-order point (a wait moved past it or removed)",
                        "signature": ("order-point", P.text(), A.text()),
                        "instruction": P.text(), "access": A.text(), "counter": counter,
                        "block": bi})
    return out, unknown


def _undecodable_words(kc: Kernel, ko: Kernel | None) -> str | None:
    """The reason a changed kernel holding undecodable words (``.long`` words LLVM cannot
    decode for gfx942, :func:`asmevo.analysis.waitcnt.is_undecodable`) is undecided, or None.

    Such a word may be any instruction: read or write any register, count on any counter,
    order memory, need or provide wait states.  The analyses treat it so (waits around it
    are required, every register is live across it, the hazard search gives up near it),
    but a verdict that depends on it can only be ``unknown`` (issue 14): when the kernel
    differs from the original at all, the static layer answers ``unknown-unsupported`` for
    it, and its waitcnt and hazard findings are reported as undecided instead of rejections.
    An unchanged kernel is not affected (nothing to decide)."""
    from ..analysis.waitcnt import is_undecodable
    if ko is not None and not _differs(ko, kc):
        return None
    words = [i for k in (kc, ko) if k is not None for i in k.instructions() if is_undecodable(i)]
    if not words:
        return None
    w = words[0]
    at = f" at {w.address:#x}" if w.address is not None else ""
    n = sum(1 for i in kc.instructions() if is_undecodable(i))    # the candidate's own
    holds = f"the kernel holds {n}" if n else f"the original holds {len(words)}"
    return (f"{kc.name}: {holds} undecodable word(s) ({w.text()}{at}) and "
            "differs from the original; such a word may be any instruction, so the change "
            "is not decided")


def _differs(ko: Kernel, kc: Kernel) -> bool:
    """Whether the two kernels' instruction sequences differ (by value)."""
    a = [i.key() for i in ko.instructions()]
    b = [i.key() for i in kc.instructions()]
    return a != b


def check_memory_order(kind: str, cand_mod: Module, cand: KernelFacts,
                       orig_mod: Module | None, orig: KernelFacts | None) -> tuple[list[Evidence], str | None]:
    """Violations of ``kind`` in the candidate that the original does not have.

    Returns ``(evidence, unknown_reason)``; ``unknown_reason`` is set when the
    analysis could not run, or when the block structure differs and a needed wait of
    the original has no counterpart (:func:`_unaligned_waits`).
    """
    try:
        cv = _violations(kind, cand_mod, cand.kernel)
        ov = _violations(kind, orig_mod, orig.kernel) if orig is not None else []
    except AnalysisUnavailable as e:
        return [], f"{kind} analysis unavailable: {e}"
    unaligned = None
    if kind == "waitcnt" and orig is not None:
        try:
            extra = _weakened_waits(orig_mod, orig.kernel, cand.kernel, cand_mod)
        except AnalysisUnavailable as e:
            return [], f"waitcnt analysis unavailable: {e}"
        cv = cv + extra
        try:
            from .equiv import changed_windows
            if changed_windows(orig.kernel, cand.kernel)[1]:
                unaligned = _unaligned_waits(orig_mod, orig.kernel, cand.kernel)
            if _differs(orig.kernel, cand.kernel):
                order, why = _order_point_waits(orig_mod, orig.kernel, cand_mod, cand.kernel)
                cv = cv + order
                unaligned = unaligned or why
        except AnalysisUnavailable as e:
            return [], f"waitcnt analysis unavailable: {e}"
    # Match candidate violations to the original's with the same signature: a candidate
    # violation is forgiven when it pairs with one of the original's that has no more wait
    # states available (greedy two-pointer matching over sorted counts is optimal).
    orig_av: dict = {}
    for v in ov:
        orig_av.setdefault(v["signature"], []).append(v.get("available", 0))
    cand_by: dict = {}
    for v in cv:
        cand_by.setdefault(v["signature"], []).append(v)
    ev = []
    for sig, vs in cand_by.items():
        os_ = sorted(orig_av.get(sig, []))
        j = 0
        for v in sorted(vs, key=lambda x: x.get("available", 0)):
            if j < len(os_) and os_[j] <= v.get("available", 0):
                j += 1
                continue
            ev.append(Evidence("static", kind, f"{cand.name}: {v['message']}",
                               {"kernel": cand.name, **{k: x for k, x in v.items() if k != "signature"}}))
    return ev, unaligned


def check_static(orig: Module | None, cand: Module, *, kernels: list[str] | None = None,
                 memory_order: bool = True) -> Verdict:
    """All static checks of ``cand`` (see module docstring), optionally relative to ``orig``.

    Returns a Verdict: the first failing check in the order register bounds,
    descriptor counts, waitcnt, hazards; ``unknown-unsupported`` if a needed
    analysis is unavailable or a kernel has no descriptor; else ``accepted``.
    """
    cf = kernel_facts(cand)
    of = kernel_facts(orig) if orig is not None else {}
    names = kernels or sorted(cf)
    notes: list[str] = []
    buckets: dict[Status, list[Evidence]] = {s: [] for s in (
        Status.REJECTED_REGISTER_BOUNDS, Status.REJECTED_DESCRIPTOR_COUNTS, Status.REJECTED_ABI,
        Status.REJECTED_WAITCNT, Status.REJECTED_HAZARD)}
    unknown: list[str] = []
    for n in names:
        if n not in cf:
            unknown.append(f"no kernel {n!r} in the candidate")
            continue
        f = cf[n]
        o = of.get(n)
        if f.descriptor is None:
            unknown.append(f"{n}: no kernel descriptor to check registers against")
        buckets[Status.REJECTED_REGISTER_BOUNDS] += check_register_bounds(f, o)
        buckets[Status.REJECTED_DESCRIPTOR_COUNTS] += check_descriptor_counts(f, o)
        for st_, e in budget_problems(cand, f, orig, o):
            buckets[st_].append(e)
        buckets[Status.REJECTED_ABI] += undefined_reads(cand, f, orig, o)
        notes += allocation_notes(f)
        words = _undecodable_words(f.kernel, o.kernel if o is not None else None)
        if memory_order:
            for kind, st in (("waitcnt", Status.REJECTED_WAITCNT), ("hazard", Status.REJECTED_HAZARD)):
                ev, why = check_memory_order(kind, cand, f, orig, o)
                if words:  # they depend on what the words are: undecided, not rejected
                    unknown += [f"{e.message} (next to undecodable words, not decided)"
                                for e in ev]
                else:
                    buckets[st] += ev
                if why:
                    unknown.append(why)
        if words:
            unknown.append(words)
    for st, ev in buckets.items():
        if ev:
            return Verdict(st, ev[0].message, ev, notes=notes)
    if unknown:
        return Verdict(Status.UNKNOWN_UNSUPPORTED, unknown[0],
                       [Evidence("static", "undecided", u) for u in dict.fromkeys(unknown)], notes=notes)
    return Verdict(Status.ACCEPTED, "static checks passed", notes=notes)
