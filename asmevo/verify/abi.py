"""ABI facts of a kernel and the ABI-preservation check (candidate vs original).

A candidate may change a kernel's code and the register counts derived from
it, nothing else the runtime or the caller can see.  Compared per kernel:

* the set of kernel symbols and their descriptor symbols (``NAME.kd``);
* the 64-byte kernel descriptor, field by field, except the fields derived
  from register use: GRANULATED_WORKITEM_VGPR_COUNT,
  GRANULATED_WAVEFRONT_SGPR_COUNT, ACCUM_OFFSET, and
  ``kernel_code_entry_byte_offset`` (the code may move).  This covers the
  entry conditions: user SGPR enables (kernel_code_properties), kernarg
  preload, system SGPR enables and work-item id VGPRs (compute_pgm_rsrc2),
  float modes (compute_pgm_rsrc1), LDS/scratch sizes and kernarg size;
* the kernel's ``amdhsa.kernels`` metadata entry, key by key, except
  ``.sgpr_count``, ``.vgpr_count``, ``.agpr_count``, ``.sgpr_spill_count``
  and ``.vgpr_spill_count``; this covers the kernarg layout (``.args``,
  ``.kernarg_segment_size``, ``.kernarg_segment_align``);
* the target id;
* in a code object, each descriptor's code entry is the kernel symbol's address;
* data the code may read: allocated data sections of a code object (kernel
  descriptors masked out), or the top-level data directives of assembly;
* a code object's dynamic relocations (``.rela.dyn``: what the loader writes into that
  data, e.g. a pointer table's ``R_AMDGPU_RELATIVE64``), by type, symbol-relative place,
  symbol and target (:mod:`asmevo.frontend.relocs`).

Sources: LLVM AMDGPUUsage, "Kernel Descriptor", "Code Object V3+ Metadata",
"Initial Kernel Execution State".
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from ..errors import AsmevoError
from ..frontend.descriptor import KernelDescriptor
from ..frontend.loader import amdhsa_descriptor, yaml_kernel_metadata
from ..ir.module import Kernel, MetadataBlock, Module
from .verdict import Evidence, Status, Verdict

#: Descriptor fields a candidate may change (derived from register use / code placement).
DESCRIPTOR_DERIVED = frozenset({
    "granulated_workitem_vgpr_count", "granulated_wavefront_sgpr_count", "accum_offset",
    "kernel_code_entry_byte_offset",
})

#: Metadata keys a candidate may change (register counts and fields derived from them).
METADATA_DERIVED = frozenset({
    ".sgpr_count", ".vgpr_count", ".agpr_count", ".sgpr_spill_count", ".vgpr_spill_count",
})


@dataclass
class KernelFacts:
    """What the verifier needs to know about one kernel entry.

    Attributes:
        name: kernel symbol.
        kernel: the IR kernel (code).
        descriptor: :class:`KernelDescriptor` (from the code object, or built from the
            ``.amdhsa_kernel`` block the way llvm-mc would), or None.
        descriptor_source: ``"code-object"``, ``"amdhsa"``, ``"amdhsa-expression"`` (the
            block has a field only llvm-mc can evaluate: no descriptor) or ``"none"``.
        metadata: this kernel's ``amdhsa.kernels`` entry (dict) or None.
        kd_symbol: the descriptor symbol (``name.kd``) when known.
        errors: what llvm-mc would reject in this kernel's ABI text (an ``.amdhsa_kernel``
            block, the ``.amdgpu_metadata`` YAML), as the frontend reports it (file,
            line:column); the descriptor or metadata it concerns is then None.
    """

    name: str
    kernel: Kernel
    descriptor: KernelDescriptor | None
    descriptor_source: str
    metadata: dict | None
    kd_symbol: str | None
    errors: list[AsmevoError] = field(default_factory=list)


def _meta_dict(m: Any) -> dict | None:
    """A metadata entry as a dict: a dict as is, a ``KernelMeta`` by its ``raw`` map."""
    if isinstance(m, dict):
        return m
    raw = getattr(m, "raw", None)
    return raw if isinstance(raw, dict) else None


def module_target(module: Module) -> str | None:
    """Target id: the code object's (from e_flags) or the ``.amdgcn_target`` directive."""
    co = getattr(module, "code_object", None)
    if co is not None and hasattr(co, "target_id"):
        try:
            return str(co.target_id)
        except Exception:  # noqa: BLE001
            pass
    return module.target


@functools.lru_cache(maxsize=256)
def _yaml_entries(text: str, source: str | None, line: int | None,
                  names: frozenset[str]) -> dict[str, dict] | AsmevoError:
    """:func:`asmevo.frontend.loader.yaml_kernel_metadata` of one ``.amdgpu_metadata`` block
    (llvm-mc's typing), or the error it raises; cached, since the original's block is read
    again for every candidate.  Callers must not modify the result."""
    try:
        return yaml_kernel_metadata(MetadataBlock(text, line), names, file=source)
    except AsmevoError as e:
        return e


def _processor(target: str) -> str:
    """``gfx942:sramecc+:xnack-`` from a target id: the processor and its features, the
    last ``-`` component (``amdgcn-amd-amdhsa--gfx942`` and Triton's
    ``amdgpu9.42-amd-amdhsa-unknown-gfx942`` name the same target)."""
    return target.strip().strip('"').rsplit("-", 1)[-1]


def _metadata_entries(module: Module) -> tuple[dict[str, dict], list[AsmevoError]]:
    """Kernel name -> metadata entry, from the kernels, else from the ``.amdgpu_metadata``
    YAML (read as llvm-mc reads it), else from the code object; and the errors llvm-mc
    would report for that YAML."""
    out: dict[str, dict] = {}
    errors: list[AsmevoError] = []
    for k in module.kernels:
        raw = _meta_dict(k.metadata)
        if raw is not None:
            out[k.name] = raw
    if out:
        return out, errors
    names = frozenset(k.name for k in module.kernels)
    for it in module.items:
        if isinstance(it, MetadataBlock):
            got = _yaml_entries(it.text, module.source, it.line, names)
            if isinstance(got, AsmevoError):
                errors.append(got)
            else:
                out.update(got)
    co = getattr(module, "code_object", None)
    if not out and co is not None:
        md = getattr(co, "metadata", None)
        ents = None
        if isinstance(md, dict):
            ents = md.get("amdhsa.kernels")
        elif md is not None:
            ents = getattr(md, "kernels", None)
        for e in ents or []:
            if isinstance(e, dict) and ".name" in e:
                out[str(e[".name"])] = e
            elif hasattr(e, "raw") and isinstance(e.raw, dict):
                out[str(e.raw.get(".name"))] = e.raw
    return out, errors


def kernel_facts(module: Module) -> dict[str, KernelFacts]:
    """Facts for every amdhsa kernel entry of ``module`` (device functions excluded),
    keyed by kernel name.

    A module parsed without :func:`asmevo.frontend.loader.fill_text_abi` gets its
    descriptors and metadata here, by the same frontend functions: what llvm-mc would
    reject there is recorded in :attr:`KernelFacts.errors` (never raised)."""
    md, md_errors = _metadata_entries(module)
    co = getattr(module, "code_object", None)
    co_kernels = {getattr(c, "name", None): c for c in (getattr(co, "kernels", None) or [])}
    out: dict[str, KernelFacts] = {}
    for k in module.kernels:
        if not k.is_kernel:
            continue
        kd, src = None, "none"
        errors = list(md_errors)
        cok = co_kernels.get(k.name)
        if k.descriptor is not None:
            kd = k.descriptor
            if not isinstance(kd, KernelDescriptor) and hasattr(kd, "to_bytes"):
                kd = KernelDescriptor.from_bytes(kd.to_bytes())
            src = "code-object"
        elif cok is not None and getattr(cok, "descriptor", None) is not None:
            kd, src = cok.descriptor, "code-object"
        else:
            blk = module.amdhsa_kernel(k.name)
            if blk is not None:
                try:
                    kd = amdhsa_descriptor(module, blk)
                    src = "amdhsa" if kd is not None else "amdhsa-expression"
                except AsmevoError as e:
                    errors.append(e)
        meta = md.get(k.name)
        kd_sym = None
        if cok is not None and getattr(cok, "kd_symbol", None) is not None:
            kd_sym = getattr(cok.kd_symbol, "name", None)
        elif meta and ".symbol" in meta:
            kd_sym = str(meta[".symbol"])
        elif kd is not None:
            kd_sym = k.name + ".kd"
        out[k.name] = KernelFacts(k.name, k, kd, src, meta, kd_sym, errors)
    return out


def _norm(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    if isinstance(v, bytes):
        return v.hex()
    return v


_DATA_DIRECTIVES = frozenset({".byte", ".short", ".hword", ".2byte", ".value", ".long", ".word",
                              ".4byte", ".int", ".quad", ".8byte", ".ascii", ".asciz", ".string",
                              ".zero", ".fill", ".space", ".skip", ".section", ".data", ".rodata",
                              ".bss", ".comm", ".lcomm", ".globl", ".type", ".size", ".p2align"})


def _data_bytes(module: Module) -> dict[str, bytes] | None:
    """Contents of the allocated PROGBITS data sections of a code object (``.rodata``,
    ``.data``...; NOBITS sections and linker padding are skipped), with every kernel
    descriptor's 64 bytes zeroed (descriptors are compared field by
    field); None for assembly input."""
    co = getattr(module, "code_object", None)
    if co is None or not hasattr(co, "sections"):
        return None
    kds = [(k.kd_address, 64) for k in getattr(co, "kernels", []) or []]
    out = {}
    for sec in co.sections:
        if not getattr(sec, "alloc", False) or getattr(sec, "executable", False):
            continue
        # NOBITS sections (.bss, ld.lld's .relro_padding) hold no bytes the code could read
        # differently: their contents are zero, and their sizes follow the code's layout.
        if sec.type != "SHT_PROGBITS" or sec.name == ".relro_padding":
            continue
        data = bytearray(sec.data)
        for addr, n in kds:
            lo = addr - sec.addr
            if 0 <= lo < len(data):
                data[lo:lo + n] = bytes(min(n, len(data) - lo))
        out[sec.name] = bytes(data)
    return out


def _data_directives(module: Module) -> list[tuple[str, str]] | None:
    """Top-level data-emitting directives of an assembly module, in order (None for a
    code object)."""
    from ..ir.module import Directive
    if getattr(module, "code_object", None) is not None:
        return None
    return [(d.name, d.args) for d in module.items
            if isinstance(d, Directive) and d.name in _DATA_DIRECTIVES]


def compare_data(orig: Module, cand: Module) -> list[Evidence]:
    """Data the kernels may read (constant tables in ``.rodata``/``.data``) must be unchanged:
    the instruction-level layers would not notice a changed constant table."""
    ev = []
    a, b = _data_bytes(orig), _data_bytes(cand)
    if a is not None and b is not None:
        for name in sorted(set(a) | set(b)):
            if a.get(name) != b.get(name):
                ev.append(Evidence("abi", "data-section", f"data section {name} differs "
                                   "(outside the kernel descriptors)", {"section": name}))
        return ev + compare_relocations(orig, cand)
    da, db = _data_directives(orig), _data_directives(cand)
    if da is not None and db is not None and da != db:
        i = next((i for i, (x, y) in enumerate(zip(da, db)) if x != y), min(len(da), len(db)))
        ev.append(Evidence("abi", "data-directives", f"data directives differ at #{i}: "
                           f"{da[i] if i < len(da) else '<none>'} vs {db[i] if i < len(db) else '<none>'}",
                           {"index": i}))
    return ev


def _relocations(module: Module) -> list | None:
    co = getattr(module, "code_object", None)
    data = getattr(co, "data", None)
    if not data:
        return None
    from ..frontend.relocs import dynamic_relocations
    return dynamic_relocations(data)


def compare_relocations(orig: Module, cand: Module) -> list[Evidence]:
    """The dynamic relocations (what the loader writes into the data when it maps the
    file) must be the same: a rebuild that drops ``tab``'s ``R_AMDGPU_RELATIVE64`` leaves
    a null pointer where the original had ``&vals``, and the data bytes, zero in both
    files, do not show it."""
    a, b = _relocations(orig), _relocations(cand)
    if a is None or b is None or a == b:
        return []
    ev = []
    for r in a:
        if r not in b:
            ev.append(Evidence("abi", "relocation", f"dynamic relocation {r.text()} of the "
                               "original is missing from the candidate",
                               {"relocation": r._asdict(), "side": "original"}))
    for r in b:
        if r not in a:
            ev.append(Evidence("abi", "relocation", f"dynamic relocation {r.text()} of the "
                               "candidate is not in the original",
                               {"relocation": r._asdict(), "side": "candidate"}))
    if not ev:  # the same relocations, a different count of one
        ev.append(Evidence("abi", "relocation", f"dynamic relocations differ: {len(a)} in the "
                           f"original, {len(b)} in the candidate", {}))
    return ev


def check_entry_points(module: Module) -> list[Evidence]:
    """In a code object, every descriptor's ``kernel_code_entry_byte_offset`` must lead to
    the kernel symbol's address: the hardware starts where the descriptor says, while
    the verifier reads the code at the symbol (AMDGPUUsage, "Kernel Descriptor")."""
    co = getattr(module, "code_object", None)
    ev = []
    for k in getattr(co, "kernels", None) or []:
        kd = getattr(k, "descriptor", None)
        if kd is None or not hasattr(k, "kd_address"):
            continue
        entry = k.kd_address + kd.kernel_code_entry_byte_offset
        if entry != k.address:
            ev.append(Evidence("abi", "entry-point",
                               f"{k.name}: the descriptor's code entry is {entry:#x}, the kernel "
                               f"symbol is at {k.address:#x}",
                               {"kernel": k.name, "entry": entry, "symbol": k.address}))
    return ev


def invalid_abi_text(facts: dict[str, KernelFacts]) -> list[Evidence]:
    """Evidence (kind ``invalid-abi-text``) for each error llvm-mc would report in the
    kernels' ABI text (:attr:`KernelFacts.errors`: an ``.amdhsa_kernel`` block the frontend's
    :meth:`KernelDescriptor.from_directives` rejects, malformed ``.amdgpu_metadata`` YAML),
    once per error, with the frontend's message and its file, line and column."""
    ev: list[Evidence] = []
    seen: set[str] = set()
    for name in sorted(facts):
        for e in facts[name].errors:
            if str(e) in seen:
                continue
            seen.add(str(e))
            ev.append(Evidence("abi", "invalid-abi-text",
                               f"{name}: llvm-mc would reject the candidate: {e}",
                               {"kernel": name, "message": e.message, "file": e.file,
                                "line": e.line, "column": e.column}))
    return ev


def compare_abi(orig: Module, cand: Module) -> Verdict:
    """Check that ``cand`` keeps ``orig``'s ABI (see module docstring).

    Returns a Verdict with status ``accepted`` or ``rejected-abi`` (evidence: the
    differing symbols/fields with both values, or ABI text of the candidate that llvm-mc
    would reject: :func:`invalid_abi_text`), or ``unknown-unsupported`` when a kernel's
    descriptor or metadata is unknown on one side only, or an ``.amdhsa_kernel`` field is
    an expression (it cannot be compared).
    """
    fo, fc = kernel_facts(orig), kernel_facts(cand)
    ev: list[Evidence] = []
    if set(fo) != set(fc):
        ev.append(Evidence("abi", "kernel-symbols", "kernel symbols differ: original "
                           f"{sorted(fo)}, candidate {sorted(fc)}",
                           {"original": sorted(fo), "candidate": sorted(fc)}))
    fno = sorted(k.name for k in orig.kernels if not k.is_kernel)
    fnc = sorted(k.name for k in cand.kernels if not k.is_kernel)
    if fno != fnc:
        ev.append(Evidence("abi", "function-symbols", f"function symbols differ: {fno} vs {fnc}",
                           {"original": fno, "candidate": fnc}))
    to, tc = module_target(orig), module_target(cand)
    if to and tc and _processor(to) != _processor(tc):
        ev.append(Evidence("abi", "target", f"target id differs: {to} vs {tc}",
                           {"original": to, "candidate": tc}))
    unknown: list[str] = []
    ev += invalid_abi_text(fc)
    for name in sorted(set(fo) & set(fc)):
        a, b = fo[name], fc[name]
        if a.kd_symbol != b.kd_symbol:
            ev.append(Evidence("abi", "kd-symbol", f"{name}: descriptor symbol "
                               f"{a.kd_symbol} vs {b.kd_symbol}",
                               {"kernel": name, "original": a.kd_symbol, "candidate": b.kd_symbol}))
        if (a.descriptor is None) != (b.descriptor is None):
            unknown.append(f"{name}: kernel descriptor known on one side only")
        elif a.descriptor is not None:
            for fname, x, y in a.descriptor.diff(b.descriptor):
                if fname in DESCRIPTOR_DERIVED:
                    continue
                ev.append(Evidence("abi", "descriptor-field",
                                   f"{name}: descriptor field {fname}: original {_norm(x)}, "
                                   f"candidate {_norm(y)}",
                                   {"kernel": name, "field": fname, "original": _norm(x),
                                    "candidate": _norm(y)}))
        elif "amdhsa-expression" in (a.descriptor_source, b.descriptor_source):
            unknown.append(f"{name}: an .amdhsa_kernel field is an expression, which only "
                           "llvm-mc can evaluate; the descriptors cannot be compared")
        if (a.metadata is None) != (b.metadata is None):
            unknown.append(f"{name}: metadata known on one side only")
        elif a.metadata is not None:
            ma, mb = _norm(a.metadata), _norm(b.metadata)
            for key in sorted(set(ma) | set(mb)):
                if key in METADATA_DERIVED:
                    continue
                if ma.get(key, "<absent>") != mb.get(key, "<absent>"):
                    ev.append(Evidence("abi", "metadata-key",
                                       f"{name}: metadata {key}: original {ma.get(key, '<absent>')!r}, "
                                       f"candidate {mb.get(key, '<absent>')!r}",
                                       {"kernel": name, "key": key,
                                        "original": ma.get(key), "candidate": mb.get(key)}))
    ev += check_entry_points(cand)
    ev += compare_data(orig, cand)
    ev += compare_layout(orig, cand)
    if ev:
        return Verdict(Status.REJECTED_ABI, ev[0].message, ev)
    if unknown:
        return Verdict(Status.UNKNOWN_UNSUPPORTED, unknown[0],
                       [Evidence("abi", "incomparable", u) for u in unknown])
    return Verdict(Status.ACCEPTED, "ABI preserved")


def compare_layout(orig: Module, cand: Module) -> list[Evidence]:
    """ELF layout problems of the candidate's code object that the original does not have
    (sections vs PT_LOAD segments, ``.symtab`` vs ``.dynsym``: :mod:`asmevo.verify.elflayout`).
    Text modules (no code object) have no layout to check."""
    from .elflayout import layout_problems
    co_c = getattr(cand, "code_object", None)
    if co_c is None or not getattr(co_c, "data", None):
        return []
    co_o = getattr(orig, "code_object", None)
    known = set(layout_problems(co_o.data)) if co_o is not None and getattr(co_o, "data", None) else set()
    return [Evidence("abi", "elf-layout", f"code object layout: {p}", {"problem": p})
            for p in layout_problems(co_c.data) if p not in known]
