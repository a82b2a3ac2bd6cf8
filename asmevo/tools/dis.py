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
    """Disassemble ``args.input``; returns 0.

    Ctrl-C or a SIGTERM meanwhile ends the command with status 130 or 143 after the usual
    clean-up (the tools it started are killed and reaped, no temporary file stays behind:
    :class:`asmevo.llvm.stopped_cleanly`)."""
    from ..llvm import stopped_cleanly
    with stopped_cleanly():
        return _run(args)


def _run(args) -> int:
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
    if not is_code_object(args.input) and not args.input.endswith((".co", ".hsaco")) and \
            _looks_like_text(args.input):
        raise AsmevoError("expected a code object (ELF); use 'asmevo asm' for assembly text",
                          file=args.input)
    # other binary data goes on to the reader, which says what the first bytes are
    # standard input ('-') was copied to a temporary file: messages name it <stdin>
    name = "<stdin>" if args.input == getattr(args, "stdin_path", None) else args.input
    # llvm-objdump runs while the disassembler's modules import (some 70 ms)
    from ..frontend.objdump import StartedObjdump
    started = None
    try:
        if is_code_object(args.input):
            started = StartedObjdump(args.input)
        from ..frontend.gcpause import gc_paused
        with gc_paused():
            from ..frontend.disasm import disassemble_and_print
            module, text = disassemble_and_print(args.input, listing=started)
            for w in module.code_object.warnings:  # read as is, never fixed: tell the user
                sys.stderr.write(f"asmevo dis: {name}: warning: {w}\n")
    finally:
        if started is not None:
            started.close()  # (a listing not read after an error: the tool is stopped)
    if args.output and args.output != "-":
        write_output(args.output, text, inputs=(args.input,))
    else:
        write_stdout(text)
    return 0


def _looks_like_text(path: str) -> bool:
    """Whether the start of ``path`` reads as UTF-8 text without NUL bytes (assembly, a
    harness...), so that the hint to use ``asmevo asm`` fits; unreadable: True (the old
    message)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return True
    if b"\0" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start >= len(head) - 3     # a character cut at the 4096-byte boundary
    return True


def write_stdout(text: str) -> None:
    """Write ``text`` to standard output and flush it, so that a failed write (``> /dev/full``:
    no space left) is an :class:`~asmevo.errors.AsmevoError` (one message, exit status 2), not
    an internal error or an output silently cut short; a closed pipe (``| head``) still
    raises ``BrokenPipeError`` (a quiet end)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as e:
        raise AsmevoError(f"cannot write output: {e.strerror or e}", file="<stdout>") from None
