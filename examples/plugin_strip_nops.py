"""Example asmevo-opt pass plugin: remove ``s_nop`` instructions beyond a budget.

Load it with::

    asmevo-opt --load-pass-plugin=examples/plugin_strip_nops.py \
        --passes='strip-nops<keep=1>' in.s -o out.s

This is a teaching example of the plugin API, not a safe optimisation:
``s_nop`` provides wait states that hazards may need (use ``nop-trim`` for
that); run with ``--verify-each`` to have such damage reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from asmevo.passes import Pass, PassResult, register_pass


@register_pass
@dataclass
class StripNops(Pass):
    """Keep at most `keep` s_nop instructions per kernel (example plugin)."""

    name: ClassVar[str] = "strip-nops"
    scope: ClassVar[str] = "kernel"
    preserves: ClassVar[frozenset[str]] = frozenset()
    keep: int = field(default=0, metadata={"doc": "s_nop instructions to keep per kernel"})

    def run(self, kernel, am) -> PassResult:
        kept = 0
        for block in kernel.blocks:
            new = []
            for inst in block.instructions:
                if inst.opcode == "s_nop":
                    if kept >= self.keep:
                        continue
                    kept += 1
                new.append(inst)
            block.instructions = new
        result = PassResult()
        result.stats["kept"] = kept
        return result
