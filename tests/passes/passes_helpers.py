"""Small helpers for pass tests: run a pipeline on assembly text, get the code back as text."""

from __future__ import annotations

import textwrap

from asmevo.frontend.asm_parser import parse_asm
from asmevo.passes import run_pipeline


def code(module, kernel: str | None = None) -> str:
    """The kernel's code as text: one instruction per line, labels as ``NAME:``, no indent."""
    k = module.kernel(kernel) if kernel else module.kernels[0]
    lines = []
    for n, b in enumerate(k.blocks):
        if b.label and not (n == 0 and b.label == k.name):
            lines.append(b.label + ":")
        lines.extend(i.text() for i in b.instructions)
    return "\n".join(lines)


def opt(asm: str, pipeline: str, **kw) -> tuple[str, object]:
    """Parse ``asm`` (dedented), run ``pipeline``; returns (code text, Instrumentation)."""
    m = parse_asm(textwrap.dedent(asm).strip() + "\n", "test.s")
    inst = run_pipeline(m, pipeline, **kw)
    return code(m), inst


def norm(s: str) -> str:
    """Dedent and strip an expected-output block."""
    return "\n".join(line.strip() for line in textwrap.dedent(s).strip().splitlines())
