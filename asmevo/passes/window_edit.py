"""window-edit: replace a window of instructions with new assembly text from a JSON file.

Schema of ``EDIT.json`` (docs/passes.md; example: examples/edit_vadd_double.json)::

    {
      "kernel": "vadd_f32",          # optional when the module has one kernel
      "edits": [                      # applied in order; one edit may also stand alone
        {
          "from": ".LBB0_2" | 12,     # label (window starts at its first instruction)
                                      # or 0-based instruction index in layout order
          "to":   ".LBB0_3" | 20,     # exclusive end: label or instruction index;
                                      # omitted: "from" + len(expect) or the block end
          "expect": ["v_add_f32_e32 v1, v2, v3", ...],   # optional: the window's
                                      # current text, checked before replacing
          "asm": "v_mul_f32_e32 v1, 2.0, v1\\nv_nop"      # new instructions, one per line
                                      # ('\\n' or a list of lines; ';' comments allowed)
        }
      ]
    }

Indices refer to the kernel as it is when the edit is applied (after earlier
edits).  The window must lie inside one basic block (it may end at the block's
end); the new text may not define labels.  Every new line is parsed with
:func:`asmevo.frontend.asm_parser.parse_instruction` and type-checked with
:func:`asmevo.frontend.typecheck.check_instruction`; any problem is an
:class:`~asmevo.errors.AsmevoError` naming the JSON file and the edit.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar

from ..errors import AsmevoError
from ..ir import Instruction, Kernel, Module
from .base import Pass, PassResult


class EditError(AsmevoError):
    """A window-edit file that cannot be read, parsed or applied."""


#: Deepest nesting of arrays/objects an edit file may have (a real one needs 4: the object,
#: "edits", an edit, its "asm"/"expect" list); json would recurse until Python's limit.
MAX_EDIT_DEPTH = 32
_EXPECTED = 'expected an object {"kernel": ..., "edits": [{"from", "to", "expect", "asm"}, ...]}'


def _check_depth(text: str, path: str) -> None:
    """Refuse nesting deeper than :data:`MAX_EDIT_DEPTH`, located at the bracket that goes
    too deep (before ``json.loads`` would raise RecursionError)."""
    from ..limits import json_too_deep
    at = json_too_deep(text, MAX_EDIT_DEPTH)
    if at is not None:
        raise EditError(f"edit file nested more than {MAX_EDIT_DEPTH} levels deep; " + _EXPECTED,
                        file=path, line=at[0], column=at[1])


def _load(path: str) -> dict:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise EditError(f"cannot read edit file: {e.strerror}", file=path) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise EditError(f"edit file is not UTF-8 text (byte {raw[e.start]:#04x} at offset "
                        f"{e.start}); {_EXPECTED}", file=path) from None
    _check_depth(text, path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise EditError(f"invalid JSON: {e.msg}", file=path, line=e.lineno,
                        column=e.colno) from None
    except RecursionError:
        raise EditError(f"edit file nested too deeply; {_EXPECTED}", file=path) from None
    except ValueError:   # an integer literal of more digits than Python converts
        raise EditError(f"invalid JSON: a number literal too long to read; {_EXPECTED}",
                        file=path) from None
    if isinstance(data, dict) and "edits" not in data and "asm" in data:
        data = {"kernel": data.get("kernel"), "edits": [data]}
    if not isinstance(data, dict) or not isinstance(data.get("edits"), list) \
            or not data["edits"]:
        raise EditError("expected an object with a non-empty \"edits\" list", file=path)
    return data


def parse_window_asm(asm, path: str, n: int) -> list[Instruction]:
    """The new instructions of edit ``n``: parsed and type-checked.

    Raises:
        EditError: not text, a label, a parse error or an ISA type error.
    """
    from ..frontend.asm_parser import parse_instruction
    if isinstance(asm, list) and all(isinstance(x, str) for x in asm):
        lines = asm
    elif isinstance(asm, str):
        lines = asm.splitlines()
    else:
        raise EditError(f"edits[{n}].asm must be a string or a list of strings", file=path)
    out = []
    where = f"{path}: edits[{n}].asm"
    for k, line in enumerate(lines, 1):
        text = line.split(";", 1)[0].strip()
        if not text:
            continue
        if text.endswith(":"):
            raise EditError(f"edits[{n}].asm line {k}: labels are not allowed in a window "
                            f"({text})", file=path)
        try:
            inst = parse_instruction(text, where, k)
        except AsmevoError as e:
            raise EditError(f"edits[{n}].asm line {k}: {e.message}", file=path) from None
        try:
            from ..frontend.typecheck import check_instruction
        except ImportError:
            check_instruction = None
        if check_instruction is not None:
            try:
                check_instruction(inst, where, text)
            except ImportError:
                pass  # ISA table not available: parse check only
            except AsmevoError as e:
                raise EditError(f"edits[{n}].asm line {k}: {e.message}", file=path) from None
        out.append(inst)
    return out


@dataclass
class WindowEdit(Pass):
    """Replace instruction windows with new assembly (JSON edit file; schema in docs/passes.md)."""

    name: ClassVar[str] = "window-edit"
    scope: ClassVar[str] = "module"
    preserves: ClassVar[frozenset[str]] = frozenset()
    file: str = field(metadata={"doc": "path of the EDIT.json file"})

    def __post_init__(self) -> None:
        if not self.file:
            raise EditError("window-edit needs file=EDIT.json")

    def run(self, module: Module, am) -> PassResult:
        """Apply every edit; stat ``edits``.

        Raises:
            EditError: bad file, unknown kernel/label, index out of range, window
                crossing a block boundary, ``expect`` mismatch, bad assembly.
        """
        data = _load(self.file)
        path = self.file
        kname = data.get("kernel")
        if kname is None:
            if len(module.kernels) != 1:
                raise EditError("the module has several kernels; name one with \"kernel\" ("
                                + ", ".join(k.name for k in module.kernels) + ")", file=path)
            kernel = module.kernels[0]
        else:
            try:
                kernel = module.kernel(kname)
            except KeyError as e:
                raise EditError(str(e.args[0]), file=path) from None
        stats = Counter()
        for n, ed in enumerate(data["edits"]):
            if not isinstance(ed, dict) or "asm" not in ed or "from" not in ed:
                raise EditError(f"edits[{n}] needs \"from\" and \"asm\"", file=path)
            new = parse_window_asm(ed["asm"], path, n)
            self._apply(kernel, ed, new, path, n)
            stats["edits"] += 1
        return PassResult(changed=True, stats=stats)

    @staticmethod
    def _index(kernel: Kernel, where, path: str, n: int, key: str) -> int:
        flat = list(kernel.positions())
        if isinstance(where, bool) or not isinstance(where, (int, str)):
            raise EditError(f"edits[{n}].{key} must be a label or an instruction index",
                            file=path)
        if isinstance(where, int):
            if not 0 <= where <= len(flat):
                raise EditError(f"edits[{n}].{key} = {where} is out of range (kernel "
                                f"{kernel.name} has {len(flat)} instructions)", file=path)
            return where
        count = 0
        for b in kernel.blocks:
            if b.label == where:
                return count
            count += len(b.instructions)
        raise EditError(f"edits[{n}].{key}: no label {where!r} in kernel {kernel.name}",
                        file=path)

    def _apply(self, kernel: Kernel, ed: dict, new: list[Instruction], path: str,
               n: int) -> None:
        start = self._index(kernel, ed["from"], path, n, "from")
        flat = list(kernel.positions())
        expect = ed.get("expect")
        if isinstance(expect, str):
            expect = [expect]
        if "to" in ed:
            end = self._index(kernel, ed["to"], path, n, "to")
        elif expect is not None:
            end = start + len(expect)
        else:
            end = None
        if start < len(flat):
            blk, i0, _ = flat[start]
        else:  # appending at the very end: the last block
            blk, i0 = kernel.blocks[-1], len(kernel.blocks[-1].instructions)
        if end is None:
            end = start + (len(blk.instructions) - i0)
        if end < start:
            raise EditError(f"edits[{n}]: \"to\" ({end}) is before \"from\" ({start})", file=path)
        if end - start > len(blk.instructions) - i0:
            raise EditError(f"edits[{n}]: the window [{start}, {end}) crosses the end of the "
                            f"basic block{' ' + blk.label if blk.label else ''}; a window must "
                            "lie inside one block", file=path)
        old = blk.instructions[i0:i0 + (end - start)]
        if expect is not None:
            got = [i.text() for i in old]
            want = [" ".join(str(x).split(";", 1)[0].split()) for x in expect]
            if [" ".join(g.split()) for g in got] != want:
                raise EditError(f"edits[{n}]: the window does not hold the expected "
                                f"instructions; found: {got}", file=path)
        blk.instructions[i0:i0 + (end - start)] = new
