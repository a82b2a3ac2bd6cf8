"""``asmevo asm K.s -o K.co``: assemble and link assembly text into a code object."""

from __future__ import annotations

import os

from ..errors import AsmevoError


def add_arguments(p) -> None:
    """Arguments: the assembly file, ``-o`` output, ``--via-ir``."""
    p.add_argument("input", help="assembly text (.s / .amdgcn / .asm)")
    p.add_argument("-o", "--output", required=True, help="code object to write")
    p.add_argument("--via-ir", action="store_true",
                   help="parse into asmevo IR and assemble the printed IR instead of the text as is")


def run(args) -> int:
    """Assemble ``args.input`` into ``args.output``; returns 0."""
    from ..backend.assemble import assemble
    from ..frontend.loader import is_code_object
    if not os.path.exists(args.input):
        raise AsmevoError("no such file", file=args.input)
    if os.path.isdir(args.input):
        raise AsmevoError("is a directory, expected an assembly file", file=args.input)
    if is_code_object(args.input):
        raise AsmevoError("this is a code object (ELF); expected assembly text (use 'asmevo dis' first)",
                          file=args.input)
    try:
        with open(args.input, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise AsmevoError(f"not UTF-8 text at byte {e.start}", file=args.input, offset=e.start) from None
    if args.via_ir:
        from ..frontend.asm_parser import parse_asm
        from ..ir.printer import print_module
        text = print_module(parse_asm(text, args.input))
        name = args.input + " (printed IR)"
    else:
        name = args.input
    assemble(text, args.output, filename=name, inputs=(args.input,))
    return 0
