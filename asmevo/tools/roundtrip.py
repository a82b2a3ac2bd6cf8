"""``asmevo roundtrip K.co [--keep DIR]``: dis + asm a code object and compare with the original.

Checks (one verdict line each): the target id and code object version, the
kernel set, the ``.text`` bytes, every kernel descriptor field (the entry
offset must point at the kernel symbol; its raw value may differ if the
layout moved), and the decoded metadata.  Exit status 0 when all agree, 1 on
a difference, 2 on bad input.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

from ..errors import AsmevoError
from ..fileio import write_output


@dataclass
class Check:
    """One comparison: ``name``, ``ok``, and a one-line ``detail``."""

    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        """``text: ok (identical, 1152 bytes)`` / ``text: DIFFERENT (...)``."""
        return f"{self.name}: {'ok' if self.ok else 'DIFFERENT'} ({self.detail})"


def compare_code_objects(orig, new) -> list[Check]:
    """Compare two :class:`~asmevo.frontend.codeobject.CodeObject` s (see module docstring)."""
    checks = [Check("target", orig.target_id == new.target_id and
                    orig.code_object_version == new.code_object_version,
                    f"{orig.target_id} v{orig.code_object_version} vs {new.target_id} "
                    f"v{new.code_object_version}")]
    names_o = [k.name for k in orig.kernels]
    names_n = [k.name for k in new.kernels]
    checks.append(Check("kernels", names_o == names_n, ", ".join(names_n) if names_o == names_n
                        else f"{names_o} vs {names_n}"))
    a, b = orig.text.data, new.text.data
    if a == b:
        checks.append(Check("text", True, f"identical, {len(a)} bytes"))
    else:
        first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
        checks.append(Check("text", False, f"{len(a)} vs {len(b)} bytes, first difference at "
                                           f".text+{first:#x}"))
    newk = {k.name: k for k in new.kernels}
    for k in orig.kernels:
        k2 = newk.get(k.name)
        if k2 is None:
            checks.append(Check(f"descriptor {k.name}", False, "missing"))
            continue
        diff = [d for d in k.descriptor.diff(k2.descriptor) if d[0] != "kernel_code_entry_byte_offset"]
        entry_ok = k2.code_entry == k2.address and k.code_entry == k.address
        ok = not diff and entry_ok
        if ok:
            detail = "every field identical" if k.descriptor == k2.descriptor else \
                "every field identical; entry offset follows the new layout"
        else:
            detail = "; ".join(f"{n}: {x} vs {y}" for n, x, y in diff[:6])
            if not entry_ok:
                detail += ("; " if detail else "") + "entry offset does not point at the kernel"
        checks.append(Check(f"descriptor {k.name}", ok, detail))
    ma = orig.metadata.raw if orig.metadata else None
    mb = new.metadata.raw if new.metadata else None
    if ma == mb:
        checks.append(Check("metadata", True, "decoded values identical"))
    else:
        keys = sorted({*(ma or {}), *(mb or {})})
        bad = [k for k in keys if (ma or {}).get(k) != (mb or {}).get(k)]
        checks.append(Check("metadata", False, "differs in " + ", ".join(bad)))
    return checks


def roundtrip(path: str, keep: str | None = None) -> list[Check]:
    """Disassemble ``path``, assemble the text, read it back and compare.

    With ``keep``, the assembly and the rebuilt code object are written to that
    directory as ``NAME.s`` and ``NAME.rebuilt.co``.

    Raises:
        AsmevoError: bad input (missing file, not a gfx942 code object...).
    """
    from ..backend.assemble import assemble_bytes
    from ..frontend.codeobject import read_code_object
    from ..frontend.disasm import disassemble
    from ..ir.printer import print_module
    module = disassemble(path)
    text = print_module(module)
    data = assemble_bytes(text, filename=os.path.basename(path) + ".s")
    with tempfile.TemporaryDirectory(prefix="asmevo-rt-") as d:
        p = os.path.join(d, "rebuilt.co")
        with open(p, "wb") as f:
            f.write(data)
        new = read_code_object(p)
    if keep:
        os.makedirs(keep, exist_ok=True)
        stem = os.path.splitext(os.path.basename(path))[0]
        write_output(os.path.join(keep, stem + ".s"), text, inputs=(path,))
        write_output(os.path.join(keep, stem + ".rebuilt.co"), data, inputs=(path,))
    return compare_code_objects(module.code_object, new)


def add_arguments(p) -> None:
    """Arguments: the code object and ``--keep DIR``."""
    p.add_argument("input", help="code object (.co / .hsaco)")
    p.add_argument("--keep", metavar="DIR", help="keep the assembly and the rebuilt code object here")


def run(args) -> int:
    """Print one verdict line per check; 0 if all agree, 1 otherwise."""
    if not os.path.exists(args.input):
        raise AsmevoError("no such file", file=args.input)
    if os.path.isdir(args.input):
        raise AsmevoError("is a directory, expected a code object file", file=args.input)
    from ..frontend.loader import is_code_object
    if not is_code_object(args.input) and os.path.getsize(args.input) > 0 \
            and not args.input.endswith((".co", ".hsaco")):
        raise AsmevoError("expected a code object (ELF), got a file that is not one; for assembly "
                          "text use 'asmevo asm' and run roundtrip on its output", file=args.input,
                          offset=0)
    if args.keep:
        if os.path.exists(args.keep) and not os.path.isdir(args.keep):
            raise AsmevoError("--keep: exists and is not a directory", file=args.keep)
        try:
            os.makedirs(args.keep, exist_ok=True)
        except OSError as e:
            raise AsmevoError(f"--keep: cannot create the directory: {e.strerror or e}",
                              file=args.keep) from None
    checks = roundtrip(args.input, args.keep)
    for c in checks:
        print(c.line())
    ok = all(c.ok for c in checks)
    print(f"roundtrip {args.input}: {'identical' if ok else 'DIFFERENT'}")
    return 0 if ok else 1
