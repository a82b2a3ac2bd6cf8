"""``asmevo equiv A.s B.s``: z3 equivalence of two straight-line instruction windows.

Prints ``equivalent``, ``not equivalent`` (with a counterexample: initial
register values and both results) or ``unknown`` (with the reason) and exits
with 0, 1 or 3 respectively (2: bad input).  Never ``equivalent`` on a timeout
or an unsupported instruction.
"""

from __future__ import annotations

import argparse
import json

from ..errors import AsmevoError

_EXIT = {"equivalent": 0, "not equivalent": 1, "unknown": 3}


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Register the command-line options of ``asmevo equiv``."""
    p.add_argument("a", help="first window: assembly text, straight-line instructions")
    p.add_argument("b", help="second window")
    p.add_argument("--live-out", default=None, metavar="REGS",
                   help="registers to compare, e.g. v0,v[2:3],s4,vcc,scc "
                        "(default: every register either window writes)")
    p.add_argument("--timeout", type=int, default=10_000, metavar="MS",
                   help="solver time budget in ms (default 10000)")
    p.add_argument("--float", dest="float_mode", choices=("uf", "fp"), default="fp",
                   help="floats as IEEE (fp, default) or uninterpreted functions (uf)")
    p.add_argument("--json", action="store_true", help="print the answer as JSON")


def read_window(path: str):
    """The instructions of an assembly file, in order (labels and directives ignored).

    Raises:
        AsmevoError: unreadable file, not UTF-8 (byte offset), a code object, or a parse or
            type-check error (unknown mnemonic, register range, operand width; line:column).
    """
    from ..frontend.asm_parser import parse_asm
    from ..frontend.loader import read_assembly_text
    text = read_assembly_text(path)
    m = parse_asm(text, path, check=True)
    return [i for k in m.kernels for i in k.instructions()]


def run(args: argparse.Namespace) -> int:
    """Run ``asmevo equiv``; returns the exit status."""
    from ..verify.equiv import check_windows, parse_units
    if args.timeout <= 0:
        raise AsmevoError("--timeout must be a positive number of milliseconds")
    a = read_window(args.a)
    b = read_window(args.b)
    live = parse_units(args.live_out) if args.live_out is not None else None
    r = check_windows(a, b, live_out=live, timeout_ms=args.timeout, float_mode=args.float_mode)
    from .verify import _print_quietly
    _print_quietly(json.dumps(r.to_json(), indent=2) if args.json else r.text())
    return _EXIT[r.status]
