"""IR -> code object, keeping the ABI (kernel descriptors, metadata) of the original.

:func:`write_code_object` is the one way to turn a :class:`~asmevo.ir.Module`
into a code object:

1. kernels whose code changed (an instruction without an original encoding)
   get their descriptor register counts recomputed by
   :func:`recompute_register_counts` (the hook the passes call; it only ever
   grows the allocation, since hand-written kernels reach registers
   indirectly, e.g. ``s_set_gpr_idx_on``);
2. :func:`sync_descriptors` / :func:`sync_metadata` rewrite the descriptor
   items (``.amdhsa_kernel`` block or raw ``NAME.kd`` data) and the metadata
   (YAML or raw note) from ``Kernel.descriptor`` / ``Kernel.metadata``;
   For a module parsed from text, each ``.amdhsa_kernel`` block is kept as written
   unless ``Kernel.descriptor`` changed (then it is rewritten), register growth edits
   the block's own ``.amdhsa_next_free_*`` fields, and an edited ``Kernel.metadata``
   rewrites the ``.amdgpu_metadata`` YAML (:func:`sync_text_metadata`);
3. when the module came from a code object and every instruction keeps its
   size and place, the original file is patched in place
   (:func:`asmevo.backend.patch.patch_in_place`); otherwise the module is
   printed and assembled (llvm-mc + ld.lld).
"""

from __future__ import annotations

import copy
import os
import re

import msgpack

from ..errors import AsmevoError
from ..ir.module import AmdhsaKernel, BasicBlock, Directive, Kernel, LabelDef, MetadataBlock, Module
from ..ir.operands import reg_units
from ..ir.printer import print_module
from .assemble import assemble_bytes
from ..fileio import write_output

#: Extra SGPRs llvm-mc adds on gfx942 (VCC, XNACK mask, FLAT_SCRATCH; see descriptor.py).
EXTRA_SGPRS = 6


def code_changed(kernel: Kernel) -> bool:
    """Whether any instruction of ``kernel`` lacks its original encoding (new or evolved)."""
    return any(i.encoding is None for i in kernel.instructions())


def used_registers(kernel: Kernel) -> dict[str, int]:
    """Highest register index + 1 per file (``{"v": 8, "a": 0, "s": 14}``) named by any
    operand of ``kernel`` (explicit operands only; indirect accesses are not seen)."""
    top = {"v": 0, "a": 0, "s": 0}
    for inst in kernel.instructions():
        for op in inst.operands:
            for u in reg_units(op):
                if len(u) == 2 and u[0] in top:
                    top[u[0]] = max(top[u[0]], u[1] + 1)
    return top


def recompute_register_counts(kernel: Kernel) -> list[str]:
    """Grow ``kernel.descriptor``'s register allocation to cover the registers its code names.

    VGPRs: ArchVGPRs rounded up to 4, AGPRs placed from ``accum_offset``
    (gfx90a/gfx942 unified file, AMDGPUUsage compute_pgm_rsrc3); SGPRs: highest
    SGPR used, at least the user + system SGPRs the descriptor enables (PITFALLS
    BR-24), plus 6 extra on gfx942.  Counts only grow, never shrink.  The
    metadata ``.vgpr_count``/``.agpr_count``/``.sgpr_count`` are raised to match.

    Returns:
        Descriptions of the fields changed (empty when nothing changed).
    """
    kd = kernel.descriptor
    if kd is None:
        return []
    before = kd.as_dict()
    top = used_registers(kernel)
    arch = (top["v"] + 3) // 4 * 4
    if top["a"]:
        accum = max(kd.accum_offset_vgprs, arch, 4)
        total = accum + top["a"]
        kd.set_register_counts(accum_offset_vgprs=min(accum, 256))
    else:
        total = top["v"]
        if top["v"] > kd.accum_offset_vgprs:
            kd.set_register_counts(accum_offset_vgprs=min(arch, 256))
    if total > kd.vgpr_count:
        kd.set_register_counts(num_vgprs=total)
    system = (kd.enable_sgpr_workgroup_id_x + kd.enable_sgpr_workgroup_id_y
              + kd.enable_sgpr_workgroup_id_z + kd.enable_sgpr_workgroup_info
              + kd.enable_private_segment)
    sgprs = max(top["s"], kd.user_sgpr_count + system) + EXTRA_SGPRS
    if sgprs > kd.sgpr_count:
        kd.set_register_counts(num_sgprs=sgprs)
    changes = [f"{n}: {before[n]} -> {v}" for n, v in kd.fields() if before[n] != v]
    changes += _grow_metadata_counts(kernel.metadata, top["v"], top["a"], sgprs)
    return changes


def _grow_metadata_counts(md: dict | None, vgprs: int, agprs: int, sgprs: int) -> list[str]:
    """Raise the metadata ``.vgpr_count``/``.agpr_count``/``.sgpr_count`` (SGPRs including the
    extra ones, as the AsmPrinter writes them) to at least the given counts."""
    changes = []
    if isinstance(md, dict):
        for key, val in ((".vgpr_count", vgprs), (".agpr_count", agprs), (".sgpr_count", sgprs)):
            if key in md and isinstance(md[key], int) and not isinstance(md[key], bool) and val > md[key]:
                changes.append(f"metadata {key}: {md[key]} -> {val}")
                md[key] = val
    return changes


def recompute_amdhsa_fields(module: Module, kernel: Kernel) -> list[str]:
    """The text-module counterpart of :func:`recompute_register_counts`: grow the
    ``.amdhsa_next_free_vgpr`` (unified total on gfx90a/gfx942: AGPRs counted after
    ``.amdhsa_accum_offset``), ``.amdhsa_accum_offset`` and ``.amdhsa_next_free_sgpr``
    fields of ``kernel``'s ``.amdhsa_kernel`` block to cover the registers its code names.
    Fields written as expressions are left alone.  Returns the changes made."""
    blk = module.amdhsa_kernel(kernel.name)
    if blk is None:
        return []
    f = blk.fields

    def geti(key: str) -> int | None:
        try:
            return int(f[key], 0)
        except (KeyError, ValueError):
            return None

    top = used_registers(kernel)
    changes = []
    # PITFALLS BR-24: the firmware writes the user SGPRs (preloaded kernargs included) and the
    # system SGPRs after them, so the allocation must cover them whatever the code names.
    try:
        from ..frontend.descriptor import KernelDescriptor
        kd = KernelDescriptor.from_directives(f)
        top["s"] = max(top["s"], kd.user_sgpr_count + kd.enable_sgpr_workgroup_id_x
                       + kd.enable_sgpr_workgroup_id_y + kd.enable_sgpr_workgroup_id_z
                       + kd.enable_sgpr_workgroup_info + kd.enable_private_segment)
    except ValueError:
        pass

    def bump(key: str, val: int) -> None:
        old = geti(key)
        if old is not None and val > old:
            f[key] = str(val)
            changes.append(f"{key}: {old} -> {val}")

    arch = (top["v"] + 3) // 4 * 4
    bump(".amdhsa_accum_offset", min(max(arch, 4), 256))
    accum = geti(".amdhsa_accum_offset") or arch
    bump(".amdhsa_next_free_vgpr", max(accum, arch) + top["a"] if top["a"] else top["v"])
    bump(".amdhsa_next_free_sgpr", top["s"])
    return changes


def _kd_symbol_directives(module: Module, name: str) -> list:
    co = module.code_object
    sym = co.symbol(name + ".kd") if co is not None else None
    out = []
    if sym is None or sym.bind == "STB_GLOBAL":
        out.append(Directive(".globl", f"{name}.kd"))
    elif sym.bind == "STB_WEAK":
        out.append(Directive(".weak", f"{name}.kd"))
    out.append(Directive(".type", f"{name}.kd,@object"))
    vis = {"STV_PROTECTED": ".protected", "STV_HIDDEN": ".hidden"}.get(sym.visibility if sym else "")
    if vis:
        out.append(Directive(vis, f"{name}.kd"))
    return out


def _block_encodes(block: AmdhsaKernel, kd) -> bool:
    """Whether llvm-mc would encode ``block`` as ``kd`` (entry offset aside)."""
    from ..frontend.descriptor import KernelDescriptor
    try:
        mine = KernelDescriptor.from_directives(block.fields)
    except ValueError:
        return False
    return all(n == "kernel_code_entry_byte_offset" for n, _, _ in mine.diff(kd))


def sync_descriptors(module: Module) -> None:
    """Rewrite each kernel's descriptor items from ``Kernel.descriptor``.

    An ``.amdhsa_kernel`` block gets fresh ``.amdhsa_*`` fields, or becomes raw
    data when the new values have no directive form; raw ``NAME.kd`` data
    (``LabelDef NAME.kd`` .. ``.size NAME.kd, 64``) is regenerated.
    """
    from ..frontend.disasm import raw_descriptor_items
    for k in module.kernels:
        kd = k.descriptor
        if kd is None:
            continue
        items = module.items
        for idx, it in enumerate(items):
            if isinstance(it, AmdhsaKernel) and it.name == k.name:
                if _block_encodes(it, kd):
                    break  # unchanged: keep the block as written (expressions, comments' order...)
                if kd.directive_blockers():
                    items[idx:idx + 1] = _kd_symbol_directives(module, k.name) + \
                        raw_descriptor_items(k.name, kd)
                else:
                    it.fields = kd.to_directives()
                break
            if isinstance(it, LabelDef) and it.name == f"{k.name}.kd":
                end = idx
                while end < len(items) and not (isinstance(items[end], Directive)
                                                and items[end].name == ".size"
                                                and items[end].args.startswith(f"{k.name}.kd,")):
                    end += 1
                if end == len(items):
                    raise AsmevoError(f"raw descriptor {k.name}.kd has no '.size {k.name}.kd, 64'",
                                      file=module.source)
                items[idx:end + 1] = raw_descriptor_items(k.name, kd)
                break


def metadata_document(module: Module) -> dict | None:
    """The full metadata map: the original document with each kernel's entry replaced by
    ``Kernel.metadata`` (matched by ``.name``); ``None`` when the module has none."""
    co = module.code_object
    if co is None or co.metadata is None:
        return None
    doc = copy.deepcopy(co.metadata.raw)
    by_name = {k.name: k.metadata for k in module.kernels if k.metadata is not None}
    ks = doc.get("amdhsa.kernels") or []
    for i, entry in enumerate(ks):
        if isinstance(entry, dict) and entry.get(".name") in by_name:
            ks[i] = by_name[entry[".name"]]
    return doc


def sync_metadata(module: Module) -> bool:
    """Rewrite the metadata item from :func:`metadata_document` when it changed.
    Returns whether anything changed."""
    from ..frontend.disasm import raw_note_items
    from ..frontend.metadata import to_yaml
    doc = metadata_document(module)
    if doc is None or doc == module.code_object.metadata.raw:
        return False
    items = module.items
    for idx, it in enumerate(items):
        if isinstance(it, MetadataBlock):
            it.text = to_yaml(doc)
            return True
        if isinstance(it, Directive) and it.name == ".section" and it.args.startswith(".note"):
            end = idx + 1
            while end < len(items) and not (isinstance(items[end], Directive)
                                            and items[end].name in (".section", ".text")):
                end += 1
            items[idx:end] = raw_note_items(msgpack.packb(doc))
            return True
    raise AsmevoError("the module has metadata but no .amdgpu_metadata block or .note section to update",
                      file=module.source)


_PC_LABEL = ".Lasmevo_pc_"


def anchor_pc_labels(module: Module) -> int:
    """Put each ``.Lasmevo_pc_ADDR`` label (the PC value an ``s_getpc_b64`` returned, used by
    the symbolic ``sym@rel32@lo+(.+4-.Lasmevo_pc_ADDR)`` operands the disassembler writes)
    right after its ``s_getpc_b64`` again: the one whose original address is ADDR - 4.  An
    edit such as ``insert_after(getpc, ...)`` lands before the label (the label opens the next
    block) and would otherwise shift every such offset.  Returns the number of labels moved.
    """
    moved = 0
    for k in module.kernels:
        labelled = {b.label: b for b in k.blocks if b.label and b.label.startswith(_PC_LABEL)}
        for name, blk in labelled.items():
            try:
                pc = int(name[len(_PC_LABEL):], 16)
            except ValueError:
                continue
            where = next(((bi, ii) for bi, b in enumerate(k.blocks) for ii, i in enumerate(b.instructions)
                          if i.opcode == "s_getpc_b64" and i.address == pc - 4), None)
            if where is None:
                continue  # the s_getpc_b64 was changed or removed: keep the label where it is
            bi, ii = where
            g_blk = k.blocks[bi]
            nxt = k.blocks[bi + 1] if bi + 1 < len(k.blocks) else None
            if ii == len(g_blk.instructions) - 1 and nxt is blk and not blk.directives:
                continue  # already right after the s_getpc_b64
            blk.label = None  # the old position becomes a plain fall-through block
            rest = g_blk.instructions[ii + 1:]
            del g_blk.instructions[ii + 1:]
            k.blocks.insert(bi + 1, BasicBlock(name, rest))
            moved += 1
    return moved


_REL32 = re.compile(r"^(?P<sym>[A-Za-z_.$][\w.$]*)@rel32@(?P<part>lo|hi)(?P<add>[+-]\s*\d+)?$")


def anchor_text_pc_relative(module: Module) -> int:
    """Keep compiler-written PC-relative pairs of a text module correct after edits.

    Clang writes ``s_getpc_b64 s[N:N+1]`` then, on the next two lines,
    ``s_add_u32 sN, sN, sym@rel32@lo+4`` and ``s_addc_u32 sN+1, sN+1, sym@rel32@hi+12``:
    the addends hold the literal's distance from the PC (4 and 12) plus any offset into
    ``sym``.  When an edit puts instructions between them, those constants are stale; the
    pair is rewritten as ``sym@rel32@lo+(OFF+.+4-.Lasmevo_pc_N)`` with a label right after
    the ``s_getpc_b64``, so llvm-mc measures the distance.  Only pairs that were on
    consecutive source lines (adjacent as written, so OFF = addend - 4 / - 12 is known) are
    touched.  Returns the number of pairs rewritten.
    """
    from ..ir.operands import Expr, Reg
    done = 0
    for k in module.kernels:
        insts = list(k.instructions())
        for n, g in enumerate(insts):
            if g.opcode != "s_getpc_b64" or g.line is None or not g.operands:
                continue
            d = g.operands[0]
            if not (isinstance(d, Reg) and d.file == "s" and d.count == 2):
                continue
            add = next((i for i in insts[n + 1:] if i.line == g.line + 1), None)
            addc = next((i for i in insts[n + 1:] if i.line == g.line + 2), None)
            if add is None or addc is None or add.opcode != "s_add_u32" or addc.opcode != "s_addc_u32":
                continue
            parts = []
            for inst, part, base in ((add, "lo", 4), (addc, "hi", 12)):
                op = inst.operands[-1] if len(inst.operands) == 3 else None
                m = _REL32.match(op.text.strip()) if isinstance(op, Expr) else None
                if m is None or m.group("part") != part:
                    break
                parts.append((inst, m.group("sym"), int((m.group("add") or "0").replace(" ", "")) - base))
            if len(parts) != 2:
                continue
            i_add = next(j for j, x in enumerate(insts) if x is add)
            i_addc = next(j for j, x in enumerate(insts) if x is addc)
            if i_add == n + 1 and i_addc == n + 2:
                continue  # still adjacent: the constants hold
            label = f"{_PC_LABEL}text_{done}_{g.line}"
            b, idx = k.locate(g)
            rest = b.instructions[idx + 1:]
            del b.instructions[idx + 1:]
            k.blocks.insert(k.blocks.index(b) + 1, BasicBlock(label, rest))
            for inst, sym, off in parts:
                part = "lo" if inst is add else "hi"
                new = list(inst.operands)
                new[-1] = Expr(f"{sym}@rel32@{part}+({off}+.+4-{label})")
                k.replace(inst, inst.evolve(operands=new))
            done += 1
    return done


def prepare(module: Module, *, recompute_registers: bool = True) -> None:
    """Steps 1 and 2 of :func:`write_code_object` (in place on ``module``)."""
    anchor_pc_labels(module)
    if module.code_object is None:
        anchor_text_pc_relative(module)
    text_module = module.code_object is None
    if text_module:
        # a pass may have edited Kernel.descriptor: write it into the block first, then grow
        # the block's own fields minimally (keeps the source text) and re-derive the descriptor
        sync_descriptors(module)
    if recompute_registers:
        for k in module.kernels:
            if not code_changed(k):
                continue
            blk = module.amdhsa_kernel(k.name) if text_module else None
            if blk is not None or k.descriptor is None:
                recompute_amdhsa_fields(module, k)
                if blk is not None and k.descriptor is not None:
                    _rederive_descriptor(module, k, blk)
            else:
                recompute_register_counts(k)
    sync_descriptors(module)
    if text_module:
        sync_text_metadata(module)
    else:
        sync_metadata(module)


def _rederive_descriptor(module: Module, kernel: Kernel, blk: AmdhsaKernel) -> None:
    from ..frontend.descriptor import KernelDescriptor
    try:
        new = KernelDescriptor.from_directives(blk.fields)
    except ValueError:
        return
    new.kernel_code_entry_byte_offset = kernel.descriptor.kernel_code_entry_byte_offset
    kernel.descriptor = new
    top = used_registers(kernel)
    try:
        nfs = int(blk.fields.get(".amdhsa_next_free_sgpr", ""), 0)
    except ValueError:
        nfs = top["s"]
    _grow_metadata_counts(kernel.metadata, top["v"], top["a"], max(nfs, top["s"]) + EXTRA_SGPRS)


def _replace_entries(doc: dict, by_name: dict) -> bool:
    """Replace (in place) the ``amdhsa.kernels`` entries of ``doc`` whose ``.name`` is in
    ``by_name`` and that differ from it; returns whether any did."""
    entries = doc.get("amdhsa.kernels") or []
    changed = False
    for i, entry in enumerate(entries):
        if isinstance(entry, dict) and entry.get(".name") in by_name \
                and by_name[entry[".name"]] != entry:
            entries[i] = copy.deepcopy(by_name[entry[".name"]])
            changed = True
    return changed


def sync_text_metadata(module: Module) -> bool:
    """For a module parsed from text: rewrite its ``.amdgpu_metadata`` YAML (or the raw
    NT_AMDGPU_METADATA note data ``asmevo dis`` writes when YAML cannot express the values)
    when a kernel's ``Kernel.metadata`` no longer equals its entry there.  The new YAML is read back with
    llvm-mc's typing (:func:`asmevo.frontend.metadata.read_yaml_metadata`) and must give the
    same values (llvm-mc ignores YAML quoting, so e.g. a string ``"1"`` cannot be written).

    Returns:
        Whether the block was rewritten.

    Raises:
        AsmevoError: the edited metadata has no YAML form that llvm-mc reads back unchanged.
    """
    from ..frontend.disasm import raw_note_items
    from ..frontend.loader import raw_note_document
    from ..frontend.metadata import read_yaml_metadata, to_yaml
    by_name = {k.name: k.metadata for k in module.kernels if isinstance(k.metadata, dict)}
    items = module.items
    for idx, it in enumerate(items):
        if isinstance(it, Directive) and it.name == ".section" and it.args.startswith(".note"):
            doc = raw_note_document(items, idx + 1, module.source)
            if doc is None:
                continue
            if not _replace_entries(doc, by_name):
                return False
            end = idx + 1
            while end < len(items) and not (isinstance(items[end], Directive)
                                            and items[end].name in (".section", ".text")):
                end += 1
            items[idx:end] = raw_note_items(msgpack.packb(doc))
            return True
    for it in module.items:
        if not isinstance(it, MetadataBlock):
            continue
        doc = read_yaml_metadata(it.text, file=module.source, line=it.line)
        if not _replace_entries(doc, by_name):
            return False
        text = to_yaml(doc)
        if read_yaml_metadata(text) != doc:
            raise AsmevoError("the edited kernel metadata has no .amdgpu_metadata YAML form that "
                              "llvm-mc reads back with the same types", file=module.source, line=it.line)
        it.text = text
        return True
    return False


def write_code_object(module: Module, path: str, *, inputs: tuple[str, ...] = (),
                      recompute_registers: bool = True, allow_patch: bool = True) -> str:
    """Write ``module`` as a loadable code object at ``path`` (never over one of ``inputs``
    nor over the module's source file).

    Returns:
        ``"patched"`` when the original file was patched in place, ``"assembled"`` otherwise.

    Raises:
        AsmSyntaxError / ToolFailedError: llvm-mc or ld.lld rejected the printed module.
    """
    from .patch import patch_in_place
    if module.source:
        inputs = tuple(inputs) + (module.source,)
    prepare(module, recompute_registers=recompute_registers)
    if allow_patch and module.code_object is not None and patch_in_place(module, path, inputs=inputs,
                                                                         prepared=True):
        return "patched"
    # llvm-mc line numbers refer to the printed module, not to the source file
    data = assemble_bytes(print_module(module), filename=f"<printed module of {module.source or '?'}>")
    check_pc_relative_layout(module, data)
    check_dynamic_relocations(module, data)
    write_output(path, data, inputs=inputs)
    return "assembled"


def check_dynamic_relocations(module: Module, data: bytes) -> None:
    """Refuse a rebuilt code object whose dynamic relocations (``.rela.dyn``: what the
    loader writes into the data, e.g. a pointer table's ``R_AMDGPU_RELATIVE64``) differ
    from the original code object's: the disassembler prints relocated data as the file's
    bytes (zeros), so llvm-mc + ld.lld would drop them and the table would be null."""
    co = module.code_object
    if co is None or not getattr(co, "data", None):
        return
    from ..frontend.relocs import dynamic_relocations
    old, new = dynamic_relocations(co.data), dynamic_relocations(data)
    if old == new:
        return
    lost = [r for r in old if r not in new] or [r for r in new if r not in old] or old
    raise AsmevoError(f"cannot rebuild {co.path}: the rebuilt code object would not keep its "
                      f"dynamic relocations ({len(old)} in the original, {len(new)} rebuilt; "
                      f"e.g. {lost[0].text()}); only an in-place patch (every change the "
                      "same size) keeps them", file=module.source)


def _symbolic_pc_relative(kernel: Kernel, getpc) -> bool:
    """Whether every use of ``getpc``'s result in the next two instructions is a symbolic
    ``@rel32@`` operand (as :mod:`asmevo.frontend.disasm` writes PC-relative data references)."""
    from ..ir.operands import Expr
    insts = list(kernel.instructions())
    for n, i in enumerate(insts):
        if i is getpc:
            nxt = insts[n + 1:n + 3]
            return len(nxt) == 2 and all(
                any(isinstance(op, Expr) and "@rel32@" in op.text for op in x.operands) for x in nxt)
    return False


def check_pc_relative_layout(module: Module, data: bytes) -> None:
    """Refuse a rebuilt code object in which an ``s_getpc_b64`` moved relative to a data
    section while its PC-relative offsets are plain literals (the disassembler turns
    ``s_getpc_b64`` + ``s_add_u32``/``s_addc_u32`` pairs that point into a data section into
    symbolic ``sym@rel32@lo`` fixups; any other use keeps resolved literals), since after
    such a move they point at the wrong bytes.  Both a changed section
    layout and code inserted/removed before the ``s_getpc_b64`` are caught (the rebuilt
    object is listed with llvm-objdump, only when the code has an ``s_getpc_b64``).

    Raises:
        AsmevoError: naming the ``s_getpc_b64`` and the section whose distance changed.
    """
    co = module.code_object
    if co is None:
        return
    old_pcs = [(k, i) for k in module.kernels for i in k.instructions() if i.opcode == "s_getpc_b64"]
    if not old_pcs:
        return
    import os
    import tempfile
    from ..frontend.codeobject import read_code_object
    from ..frontend.disasm import objdump_listing
    with tempfile.TemporaryDirectory(prefix="asmevo-layout-") as d:
        p = os.path.join(d, "new.co")
        with open(p, "wb") as f:
            f.write(data)
        new = read_code_object(p)
        new_pcs = [e.address for e in objdump_listing(p) if e.text.startswith("s_getpc_b64")]
    orig_pcs = [e.address for e in objdump_listing(co.path) if e.text.startswith("s_getpc_b64")]
    if len(new_pcs) != len(old_pcs) or len(orig_pcs) != len(old_pcs):
        raise AsmevoError(f"the rebuilt code has {len(new_pcs)} s_getpc_b64, the original "
                          f"{len(orig_pcs)}: cannot check that PC-relative data references still "
                          "hold", file=module.source)
    for (k, inst), old_pc, new_pc in zip(old_pcs, orig_pcs, new_pcs):
        if _symbolic_pc_relative(k, inst):
            continue  # ld.lld recomputes sym@rel32 fixups for the new layout
        for s in co.sections:
            if not s.alloc or s.name in (".text", ".relro_padding", ".dynamic") \
                    or s.type not in ("SHT_PROGBITS", "SHT_NOBITS"):
                continue
            ns = new.section(s.name)
            if ns is None or ns.addr - new_pc != s.addr - old_pc:
                got = f"{ns.addr - new_pc:#x}" if ns else "gone"
                raise AsmevoError(
                    f"the rebuild moves {s.name} relative to the s_getpc_b64 of kernel {k.name} "
                    f"(at {old_pc:#x}; distance {s.addr - old_pc:#x} -> {got}): its PC-relative "
                    "literal offsets would point at the wrong data", file=module.source)


def as_built(module: Module) -> Module:
    """The module of the bytes ``module`` is written as (an in-memory module is never trusted
    as-is): :func:`write_code_object` (in-place patch or llvm-mc +
    ld.lld rebuild, what ``asmevo-opt -o X.co``, evolve and the MCP export write) into a
    temporary file, loaded back (disassembled).

    Raises:
        AsmevoError: the module does not assemble or link.
    """
    import tempfile
    from ..frontend.loader import load
    src = module.source
    m = copy.copy(module)
    m.items = copy.deepcopy(module.items)   # write_code_object prepares (edits) its module
    with tempfile.TemporaryDirectory(prefix="asmevo-built-") as d:
        out = os.path.join(d, "built.co")
        write_code_object(m, out)
        built = load(out)
    built.source = src
    return built
