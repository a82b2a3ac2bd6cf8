"""asmevo's input limits: what a parse or a tool call may be given, each raisable by an
environment variable.  A limit that is hit is a
:class:`~asmevo.errors.LimitExceededError` (exit status 2) naming the limit, where the input
went past it, and the variable that raises it.

========================  ===================================  ============
variable                  what                                 default
========================  ===================================  ============
``ASMEVO_TOOL_TIMEOUT``   seconds one LLVM tool call may run   120 (0: none)
``ASMEVO_MAX_INPUT_BYTES``  size of an input file (assembly    64 MiB
                          text or code object)
``ASMEVO_MAX_LITERAL``    characters of one number literal in  256
                          assembly text (llvm-mc and int()
                          take quadratic time on long ones)
========================  ===================================  ============

``ASMEVO_TOOL_TIMEOUT`` is read by :func:`asmevo.llvm.tool_timeout`.
"""

from __future__ import annotations

import os
import re

from .errors import AsmevoError, LimitExceededError

DEFAULT_MAX_INPUT_BYTES = 64 << 20
DEFAULT_MAX_LITERAL = 256


def _env_int(name: str, default: int) -> int:
    v = os.environ.get(name)
    if v is None or not v.strip():
        return default
    try:
        n = int(v, 0)
    except ValueError:
        n = -1
    if n <= 0:
        raise AsmevoError(f"{name}={v!r}: expected a positive integer")
    return n


def max_input_bytes() -> int:
    """``ASMEVO_MAX_INPUT_BYTES`` (default 64 MiB)."""
    return _env_int("ASMEVO_MAX_INPUT_BYTES", DEFAULT_MAX_INPUT_BYTES)


def max_literal() -> int:
    """``ASMEVO_MAX_LITERAL`` (default 256 characters)."""
    return _env_int("ASMEVO_MAX_LITERAL", DEFAULT_MAX_LITERAL)


def check_input_size(size: int, path: str | None, what: str = "input") -> None:
    """Raise when an input of ``size`` bytes is over :func:`max_input_bytes`."""
    limit = max_input_bytes()
    if size > limit:
        raise LimitExceededError(f"{what} is larger than {limit} bytes (the input size limit; raise "
                                 "it with ASMEVO_MAX_INPUT_BYTES=BYTES)", file=path, offset=limit)


_LONG_NUMBER = re.compile(r"(?<![\w.$])[0-9][0-9A-Za-z_.]*")


def check_literals(text: str, path: str | None) -> None:
    """Raise at ``line:column`` of the first number literal longer than :func:`max_literal`
    characters outside comments (``;`` / ``//`` to the end of the line)."""
    limit = max_literal()
    if len(text) <= limit:
        return
    # quick filter: only lines holding a long run of digits are looked at
    for m in re.finditer(r"[0-9A-Fa-fxX_]{%d,}" % (limit + 1), text):
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.start())
        line_text = text[start:end if end >= 0 else len(text)]
        code = re.split(r";|//", line_text, maxsplit=1)[0]
        for lit in _LONG_NUMBER.finditer(code):
            if len(lit.group()) > limit:
                line = text.count("\n", 0, start) + 1
                raise LimitExceededError(
                    f"number literal of {len(lit.group())} characters; at most {limit} are "
                    "accepted (the literal length limit; raise it with ASMEVO_MAX_LITERAL=N)",
                    file=path, line=line, column=lit.start() + 1)


def json_too_deep(text: str, limit: int) -> tuple[int, int] | None:
    """``(line, column)`` (1-based) of the first ``[`` or ``{`` of JSON ``text`` that opens
    more than ``limit`` nested arrays/objects, or None.  ``json.loads`` recurses once per
    level, so a deep enough file ends in RecursionError instead of a located message; the
    loaders call this first and raise their own error (what they expected) there.  Brackets
    inside strings do not count."""
    depth = 0
    in_str = esc = False
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return text.count("\n", 0, i) + 1, i - (text.rfind("\n", 0, i) + 1) + 1
        elif ch in "]}":
            depth -= 1
    return None
