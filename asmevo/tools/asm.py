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
    assemble(text, args.output, filename=name, inputs=(args.input,))
    return 0
