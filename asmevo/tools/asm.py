"""``asmevo asm K.s -o K.co``: assemble and link assembly text into a code object."""

from __future__ import annotations


def add_arguments(p) -> None:
    """Arguments: the assembly file, ``-o`` output, ``--via-ir``."""
    p.add_argument("input", help="assembly text (.s / .amdgcn / .asm)")
    p.add_argument("-o", "--output", required=True, help="code object to write")
    p.add_argument("--via-ir", action="store_true",
                   help="parse into asmevo IR and assemble the printed IR instead of the text as is")


def run(args) -> int:
    """Assemble ``args.input`` into ``args.output``; returns 0."""
    from ..backend.assemble import assemble
    from ..frontend.loader import check_output_path, read_assembly_text
    text = read_assembly_text(args.input, allow_empty=False)
    check_output_path(args.output)
    if args.via_ir:
        from ..frontend.asm_parser import parse_asm
        from ..ir.printer import print_module
        text = print_module(parse_asm(text, args.input))
        name = args.input + " (printed IR)"
    else:
        name = args.input
    _import_reader_meanwhile()
    assemble(text, args.output, filename=name, inputs=(args.input,))
    warn_unloadable(args.input, args.output)
    return 0


def _import_reader_meanwhile() -> None:
    """Import the code-object reader that :func:`warn_unloadable` needs (pyelftools, some
    40 ms) on a thread, while llvm-mc and ld.lld run; a failure is left to the import in
    :func:`warn_unloadable`, which reports it as before."""
    import threading

    def target() -> None:
        try:
            from ..frontend import codeobject  # noqa: F401
        except BaseException:  # noqa: BLE001 - imported again (and reported) later
            pass
    threading.Thread(target=target, name="asmevo-import").start()


def warn_unloadable(src: str, out: str) -> None:
    """Warn on stderr when the code object just written lacks what the HIP runtime needs
    to load it: the ``NT_AMDGPU_METADATA`` note (from an ``.amdgpu_metadata`` block), or
    a metadata entry for a kernel.  ``hipModuleLoad`` rejects such a code object (the ROCm
    runtime reads kernel names, argument layout and kernarg size only from that note;
    AMDGPUUsage "Code Object V3 and Above Metadata"), and llvm-mc and ld.lld say nothing."""
    import sys

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
