"""``asmevo dis K.co [-o K.s]``: disassemble a code object into reassemblable assembly."""

from __future__ import annotations

import sys

from ..errors import AsmevoError
from ..fileio import write_output


def add_arguments(p) -> None:
    """Arguments: the code object, optional ``-o`` output (stdout when absent)."""
    p.add_argument("input", help="code object (.co / .hsaco)")
    p.add_argument("-o", "--output", help="write the assembly here (default: stdout)")


def run(args) -> int:
    """Disassemble ``args.input``; returns 0."""
    import os

    from ..frontend.loader import check_output_path, is_code_object
    if not os.path.exists(args.input):
        raise AsmevoError("no such file", file=args.input)
    if os.path.isdir(args.input):
        raise AsmevoError("is a directory, expected a code object file", file=args.input)
    if args.output:
        check_output_path(args.output)
    if os.path.isfile(args.input) and os.path.getsize(args.input) == 0:
        raise AsmevoError("empty file; expected an ELF code object", file=args.input, offset=0)
    if not is_code_object(args.input) and not args.input.endswith((".co", ".hsaco")):
        raise AsmevoError("expected a code object (ELF); use 'asmevo asm' for assembly text",
                          file=args.input)
    # llvm-objdump runs while the disassembler's modules import (some 70 ms)
    from ..frontend.objdump import StartedObjdump
    started = StartedObjdump(args.input) if is_code_object(args.input) else None
    try:
        from ..frontend.gcpause import gc_paused
        with gc_paused():
            from ..frontend.disasm import disassemble_and_print
            module, text = disassemble_and_print(args.input, listing=started)
            for w in module.code_object.warnings:  # read as is, never fixed: tell the user
                sys.stderr.write(f"asmevo dis: {args.input}: warning: {w}\n")
    finally:
        if started is not None:
            started.close()  # (a listing not read after an error: the tool ends)
    if args.output:
        write_output(args.output, text, inputs=(args.input,))
    else:
        sys.stdout.write(text)
    return 0
