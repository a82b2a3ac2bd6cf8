"""``asmevo verify ORIG CAND``: static checks, ABI, z3 windows and differential testing.

Prints one verdict (``--json``: a machine-readable record) and exits with
0 accepted, 1 rejected, 3 unknown, 2 bad input.  The taxonomy is in
asmevo/verify/verdict.py and docs/verify.md.
"""

from __future__ import annotations

import argparse
import sys

from ..emu.harness import checked_entry
from ..errors import AsmevoError
from ..verify.verdict import DESCRIPTIONS
from .run import non_negative_int


def _tolerance(text: str) -> tuple[float, float]:
    try:
        r, a = (float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError("expected RTOL,ATOL, e.g. 1e-5,1e-6") from None
    if r < 0 or a < 0:
        raise argparse.ArgumentTypeError("tolerances must be >= 0")
    return r, a


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Register the command-line options of ``asmevo verify``."""
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = "verdicts:\n" + "\n".join(f"  {s.value:28s} {d}" for s, d in DESCRIPTIONS.items()) + (
        "\nexit status: 0 accepted, 1 rejected, 3 unknown, 2 bad input")
    p.add_argument("original", help="original code object (.co/.hsaco) or assembly (.s)")
    p.add_argument("candidate", help="candidate code object or assembly")
    p.add_argument("--harness", help="launch harness JSON (needed by --level diff/all)")
    p.add_argument("--entry", help="harness entry to use when the harness is a manifest list (its kernel "
                                   "is tested); without --harness: the kernel to check")
    p.add_argument("--trials", type=int, default=8, help="differential trials (default 8)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="input-generation seed (default 0)")
    p.add_argument("--level", choices=("static", "z3", "diff", "all"), default=None,
                   help="layers to run (cumulative; default: all with --harness, else z3)")
    p.add_argument("--tolerance", type=_tolerance, default=None, metavar="RTOL,ATOL",
                   help="float tolerance for outputs (default: bit exact, NaN payload aware; "
                        "0,0: exact values, any NaN matches any NaN)")
    p.add_argument("--timeout", type=int, default=10_000, metavar="MS",
                   help="z3 time budget per window in ms (default 10000)")
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")
    from ..device import add_device_argument
    add_device_argument(p)


def run(args: argparse.Namespace) -> int:
    """Run ``asmevo verify``; returns the exit status."""
    from ..verify.driver import verify
    if args.trials < 1:
        raise AsmevoError("--trials must be at least 1")
    from ..frontend.loader import check_input_path
    for path in (args.original, args.candidate):
        # a path that names no file is a typo, not a candidate the verifier rejects
        # (build-failed, exit 1, is for a file that does not load as a code object)
        if path != "-":
            check_input_path(path)
    level = args.level or ("all" if args.harness else "z3")
    harness = checked_entry(args.harness, args.entry, args.original,
                            fits=level in ("diff", "all"))
    from ..device import get_device
    device = get_device(args.device)       # a missing HIP runtime: exit 2 before any work
    v = verify(args.original, args.candidate, harness=harness, level=level, entry=args.entry,
               trials=args.trials, seed=args.seed, tolerance=args.tolerance,
               timeout_ms=args.timeout, device=device if device.hardware else None)
    _print_quietly(v.dumps() if args.json else v.text())
    return v.exit_status


def _print_quietly(text: str) -> None:
    """Print ``text``; a reader that closed the pipe early (``| head -1``) is not an error:
    the rest is discarded and the exit status stays the verdict's."""
    import os
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
