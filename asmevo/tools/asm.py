"""``asmevo asm K.s -o K.co``: assemble and link assembly text into a code object."""

from __future__ import annotations

from ..errors import AsmevoError


def add_arguments(p) -> None:
    """Arguments: the assembly file, ``-o`` output, ``--via-ir``."""
    p.add_argument("input", help="assembly text (.s / .amdgcn / .asm)")
    p.add_argument("-o", "--output", required=True, help="code object to write")
    p.add_argument("--via-ir", action="store_true",
                   help="parse into asmevo IR and assemble the printed IR instead of the text as is")


def run(args) -> int:
    """Assemble ``args.input`` into ``args.output``; returns 0.

    Ctrl-C or a SIGTERM meanwhile ends the command with status 130 or 143 after the usual
    clean-up (llvm-mc or ld.lld killed and reaped, the temporary directory removed:
    :class:`asmevo.llvm.stopped_cleanly`)."""
    from ..llvm import stopped_cleanly
    with stopped_cleanly():
        return _run(args)


def _run(args) -> int:
    from ..backend.assemble import assemble_bytes
    from ..fileio import write_output
    from ..frontend.loader import check_output_path, read_assembly_text
    text = read_assembly_text(args.input, allow_empty=False, expected="assembly text")
    check_output_path(args.output)
    if args.via_ir:
        from ..frontend.asm_parser import parse_asm
        from ..ir.printer import print_module
        text = print_module(parse_asm(text, args.input))
        name = args.input + " (printed IR)"
    else:
        name = args.input
    _import_reader_meanwhile()
    data = assemble_bytes(text, filename=name)
    try:
        write_output(args.output, data, inputs=(args.input,))
    except BrokenPipeError:
        raise
    except OSError as e:  # standard output that cannot take it (> /dev/full): one message
        raise AsmevoError(f"cannot write output: {e.strerror or e}",
                          file="<stdout>" if args.output == "-" else args.output) from None
    if args.output != "-":
        warn_unloadable(args.input, args.output)
    return 0


def _import_reader_meanwhile() -> None:
    """Import what :func:`warn_unloadable` reads the output with (the ELF reader and msgpack)
    on a thread, while llvm-mc and ld.lld run; a failure is left to the import in
    :func:`warn_unloadable`, which reports it as before."""
    import threading

    def target() -> None:
        try:
            import msgpack  # noqa: F401

            from ..frontend import elf  # noqa: F401
        except BaseException:  # noqa: BLE001 - imported again (and reported) later
            pass
    threading.Thread(target=target, name="asmevo-import").start()


def _surely_loadable(out: str) -> bool:
    """True when :func:`warn_unloadable` would certainly print nothing for ``out``: it has an
    ``NT_AMDGPU_METADATA`` note that decodes to a map, and every kernel (a function symbol in
    ``.text`` with a ``NAME.kd`` object symbol, as :func:`read_code_object` finds them) has an
    ``amdhsa.kernels`` entry (``.name`` NAME or ``.symbol`` NAME.kd, as
    :meth:`Metadata.kernel`).  Read with :mod:`asmevo.frontend.elf` and msgpack, without the
    full reader's imports (dataclasses, the descriptor and metadata modules: some 20 ms of
    every ``asmevo asm``); False sends the file to :func:`warn_unloadable`'s full read, which
    decides (a file the full reader rejects gets no warning either)."""
    try:
        return _surely_loadable_read(out)
    except Exception:  # noqa: BLE001 - anything odd: the full reader decides
        return False


def _surely_loadable_read(out: str) -> bool:
    import msgpack

    from ..frontend.elf import read_elf
    with open(out, "rb") as f:
        f_elf = read_elf(f.read())
    if f_elf is None:
        return False
    raw = None
    for s in f_elf.sections:
        if s.type_number == 7:
            notes = f_elf.notes(s)
            if notes is None:
                return False
            for owner, ntype, desc in notes:
                if owner == "AMDGPU" and ntype == 32:
                    try:
                        raw = msgpack.unpackb(desc, raw=False, strict_map_key=False)
                    except Exception:  # noqa: BLE001 - the full reader reports it
                        return False
    if not isinstance(raw, dict):
        return False
    entries = raw.get("amdhsa.kernels", []) or []
    if not isinstance(entries, list) or not all(isinstance(k, dict) for k in entries):
        return False
    names = [k.get(".name", "") for k in entries]
    symbols = [k.get(".symbol", "") for k in entries]
    symtab = f_elf.by_name.get(".symtab") or f_elf.by_name.get(".dynsym")
    if symtab is None:
        return True  # no symbols, no kernels
    if symtab.type_number not in (2, 11) or symtab.entsize != 24:
        return False
    syms = f_elf.symbols(symtab)
    secs = f_elf.sections
    by_name = {s.name: s for s in syms}
    for sym in syms:
        shndx = sym.shndx
        if sym.type != "STT_FUNC" or not (isinstance(shndx, int) and 0 < shndx < len(secs)) \
                or secs[shndx].name != ".text":
            continue
        kd = by_name.get(sym.name + ".kd")
        if kd is None or kd.type != "STT_OBJECT":
            continue
        if sym.name not in names and sym.name + ".kd" not in symbols:
            return False
    return True


def warn_unloadable(src: str, out: str) -> None:
    """Warn on stderr when the code object just written lacks what the HIP runtime needs
    to load it: the ``NT_AMDGPU_METADATA`` note (from an ``.amdgpu_metadata`` block), or
    a metadata entry for a kernel.  ``hipModuleLoad`` rejects such a code object (the ROCm
    runtime reads kernel names, argument layout and kernarg size only from that note;
    AMDGPUUsage "Code Object V3 and Above Metadata"), and llvm-mc and ld.lld say nothing."""
    import sys

    if _surely_loadable(out):
        return
    from ..frontend.codeobject import read_code_object
    try:
        co = read_code_object(out)
    except Exception:  # noqa: BLE001 - a warning only; the object was written as asked
        return
    if co.metadata is None:
        sys.stderr.write(
            f"asmevo asm: warning: {src} has no .amdgpu_metadata block, so {out} has no "
            f"NT_AMDGPU_METADATA note; the HIP runtime (hipModuleLoad) refuses such a code "
            f"object, because it reads kernel names, argument layout and kernarg size only "
            f"from that note. Add an .amdgpu_metadata ... .end_amdgpu_metadata block "
            f"(`asmevo dis` of a code object writes one).\n")
        return
    for k in co.kernels:
        if k.metadata is None:
            sys.stderr.write(
                f"asmevo asm: warning: kernel {k.name} has no entry in the .amdgpu_metadata "
                f"block of {src} (amdhsa.kernels); the HIP runtime cannot launch it.\n")
