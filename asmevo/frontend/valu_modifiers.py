"""Which gfx942 VALU instructions take ``clamp``, output modifiers (``mul:``/``div:``),
``op_sel``, ``op_sel_hi`` and ``neg_lo``/``neg_hi``: the ``HasClamp``/``HasOMod``/
``HasOpSel``/``HasOpSelHi``/``HasNeg`` bits of LLVM's VOP profiles
(``llvm/lib/Target/AMDGPU/VOPInstructions.td``, ``SIInstrInfo.td``) as llvm-mc 19 applies
them for ``-mcpu=gfx942``, including AMDGPUAsmParser's gfx940 refusals (``op_sel`` and
``op_sel_hi`` on ``v_dot*``: "invalid op_sel operand").

The sets name ISA-table records (``asmevo.isa``).  They are generated, not written by
hand: ``python -m asmevo.frontend.valu_modifiers`` appends each modifier to every VALU
record's example (in llvm-mc's operand order), keeps the records llvm-mc assembles and
rewrites ``_valu_modifiers_table.py`` (a Python module, so it ships with the package).  tests/frontend/test_parser_isa_property.py
checks the type checker against llvm-mc on mutated instructions of the whole table.
"""

from __future__ import annotations

import os

_OUT = os.path.join(os.path.dirname(__file__), "_valu_modifiers_table.py")

#: modifier -> frozenset of record names that take it (``_covered``: every record swept)
TABLE: dict[str, frozenset[str]] = {}


def _load() -> dict[str, frozenset[str]]:
    if not TABLE:
        from ._valu_modifiers_table import DATA
        for k, v in DATA.items():
            TABLE[k] = frozenset(v.split() if isinstance(v, str) else ())
    return TABLE


def takes(record_name: str, modifier: str) -> bool | None:
    """Whether the record takes ``modifier`` (``clamp``, ``omod``, ``op_sel``,
    ``op_sel_hi``, ``neg_lo_hi``); ``None`` for a record the table does not cover."""
    t = _load()
    if record_name not in t["_covered"]:
        return None
    return record_name in t[modifier]


#: what each table key appends to an example (llvm-mc accepts the zero values as well as
#: others wherever the field exists)
_PROBES = {"clamp": [("clamp", True)], "omod": [("mul", 2)],
           "op_sel": [("op_sel", (0, 0, 0, 0)), ("op_sel", (0, 0, 0)), ("op_sel", (0, 0))],
           "op_sel_hi": [("op_sel_hi", (1, 1, 1)), ("op_sel_hi", (1, 1))],
           "neg_lo_hi": [("neg_lo", (0, 0, 0)), ("neg_lo", (0, 0))]}


def generate() -> dict[str, list[str]]:  # pragma: no cover - run by hand with LLVM
    """Sweep llvm-mc (see module docstring); returns the JSON-ready table."""
    import re
    import subprocess

    from .. import isa
    from ..ir import print_instruction
    from ..llvm import MCPU, TRIPLE, find_tool
    from .asm_parser import parse_instruction
    from .typecheck import MOD_RANK

    def accepted(lines):
        r = subprocess.run([find_tool("llvm-mc"), f"-triple={TRIPLE}", f"-mcpu={MCPU}"],
                           input="\n".join(lines) + "\n", capture_output=True, text=True)
        bad = {int(n) for n in re.findall(r"^<stdin>:(\d+):\d+: error:", r.stderr, re.M)}
        return [i not in bad for i in range(1, len(lines) + 1)]

    recs = [r for r in isa.records() if r.name.startswith("v_")]
    recs = [r for r, ok in zip(recs, accepted([r.example for r in recs])) if ok]
    out: dict[str, list[str]] = {"_covered": sorted(r.name for r in recs)}
    for key, probes in _PROBES.items():
        names: set[str] = set()
        for name, val in probes:
            texts = []
            for r in recs:
                inst = parse_instruction(r.example)
                mods = sorted(list(inst.modifiers) + [(name, val)],
                              key=lambda nv: MOD_RANK.get(nv[0], -1))
                texts.append(print_instruction(inst.evolve(modifiers=mods)).strip())
            names |= {r.name for r, ok in zip(recs, accepted(texts)) if ok}
        out[key] = sorted(names)
    # source modifiers on register operands, per operand index: "neg@2" names the records
    # whose operand 2 takes -x / neg(x), "abs@1" |x|, "sext@1" sext(x)
    from ..ir import Src
    probes = []
    for r in recs:
        inst = parse_instruction(r.example)
        for k in range(1, len(inst.operands)):
            op = inst.operands[k]
            if isinstance(op, Src) or type(op).__name__ != "Reg":
                continue
            for mod, new in (("neg", Src(op, neg=True)), ("abs", Src(op, abs=True)),
                             ("sext", Src(op, sext=True))):
                ops = list(inst.operands)
                ops[k] = new
                probes.append((f"{mod}@{k}", r.name,
                               print_instruction(inst.evolve(operands=ops)).strip()))
    src: dict[str, set[str]] = {}
    for (key, name, _t), ok in zip(probes, accepted([t for _k, _n, t in probes])):
        src.setdefault(key, set())
        src.setdefault("probed@" + key.split("@")[1], set()).add(name)
        if ok:
            src[key].add(name)
    out["_src_covered"] = sorted({r.name for r in recs})
    for key in sorted(src):
        out[key] = sorted(src[key])
    return out


def takes_source_modifier(record_name: str, kind: str, index: int) -> bool | None:
    """Whether register operand ``index`` of the record takes source modifier ``kind``
    (``neg``, ``abs`` or ``sext``); ``None`` when the table does not cover it."""
    t = _load()
    if record_name not in t.get(f"probed@{index}", ()):
        return None  # operand ``index`` of the example is not a register: not swept
    return record_name in t.get(f"{kind}@{index}", frozenset())


def _write(table: dict[str, list[str]]) -> None:  # pragma: no cover
    import textwrap
    lines = ['"""Generated by ``python -m asmevo.frontend.valu_modifiers`` (llvm-mc 19, gfx942);',
             'do not edit."""', "", "DATA = {"]
    for k, v in table.items():
        body = textwrap.wrap(" ".join(v), 88)
        if not body:
            lines.append(f"    {k!r}: '',")
            continue
        lines.append(f"    {k!r}: (")
        lines.extend(f"        {(w + ' ')!r}" for w in body)
        lines.append("    ),")
    lines.append("}")
    with open(_OUT, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":  # pragma: no cover
    _write(generate())
    print(f"wrote {_OUT}")
