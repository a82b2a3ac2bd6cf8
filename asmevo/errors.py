"""Errors that asmevo reports to users.

Every error that comes from bad input is an :class:`AsmevoError` carrying where
it happened (file, line:column or byte offset) and what was expected.  The
command-line tools print ``str(err)`` and exit with status 2; they never show a
traceback for these.
"""

from __future__ import annotations


class AsmevoError(Exception):
    """Bad input or an unusable environment.

    Attributes:
        message: what went wrong and what was expected.
        file: the input file, when known.
        line, column: 1-based position in a text input, when known.
        offset: byte offset in a binary input, when known.
    """

    exit_status = 2

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 column: int | None = None, offset: int | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.offset = offset

    def location(self) -> str:
        """Return ``file:line:column`` / ``file: offset 0x..`` (empty when unknown)."""
        loc = self.file or ""
        if self.line is not None:
            loc += f":{self.line}"
            if self.column is not None:
                loc += f":{self.column}"
        elif self.offset is not None:
            loc += f": byte offset {self.offset:#x}"
        return loc

    def __str__(self) -> str:
        loc = self.location()
        return f"{loc}: error: {self.message}" if loc else f"error: {self.message}"


def unknown_kernel_error(kernel: str, have, file: str | None = None) -> AsmevoError:
    """The one message of every command for a ``--kernel`` naming no kernel of its input
    (run, evolve, profile, verify, opt, analyze; docs/cli.md):
    ``K.co: error: --kernel 'nope': no kernel 'nope' in this file; its kernels: a, b``.

    Args:
        kernel: the name given.
        have: the kernels the input holds, in file order.
        file: the input's path (None: standard input, said as "the input").
    """
    have = list(have)
    listed = f"its kernels: {', '.join(have)}" if have else "it holds no kernel"
    where = "this file" if file else "the input"
    return AsmevoError(f"--kernel {kernel!r}: no kernel {kernel!r} in {where}; {listed}",
                       file=file)


class AsmSyntaxError(AsmevoError):
    """Assembly text that does not parse or does not type-check against the ISA table."""


class NotModelledError(AsmSyntaxError):
    """Assembly text the assembler accepts but asmevo's IR does not model (``.rept``, ``.if``,
    data or fill directives among instructions): refused where the IR itself is used (passes,
    proposals), while the routes that judge or run text go through the assembler's bytes."""


class CodeObjectError(AsmevoError):
    """A truncated, corrupt or foreign ELF file (byte offset given)."""


class ToolNotFoundError(AsmevoError):
    """An LLVM tool (llvm-mc, llvm-objdump, ld.lld) could not be found."""


class ToolFailedError(AsmevoError):
    """An LLVM tool ran and failed; the message holds its diagnostics."""


class LimitExceededError(AsmevoError):
    """An input or a tool call went past one of asmevo's documented limits (time of an LLVM
    tool call, input size, length of a number literal); the message names the limit and
    how to raise it."""


class ToolTimeoutError(ToolFailedError, LimitExceededError):
    """An LLVM tool did not finish within ``ASMEVO_TOOL_TIMEOUT`` seconds and was killed."""


class ToolCrashedError(ToolFailedError):
    """An LLVM tool aborted (``LLVM ERROR``, a signal, a stack dump) on the input."""
