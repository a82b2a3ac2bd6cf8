"""``asmevo verify ORIG CAND``: static checks, ABI, z3 windows and differential testing.

Prints one verdict (``--json``: a machine-readable record) and exits with
0 accepted, 1 rejected, 3 unknown, 2 bad input.  The taxonomy is in
asmevo/verify/verdict.py and docs/verify.md.
"""

from __future__ import annotations

import argparse
import sys

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


def _harness_entry_names(path: str) -> list[str] | None:
    """The entry names of harness file ``path`` (a manifest list or one entry), or None when
    it cannot be read as JSON (the harness loader then says what is wrong with it)."""
    import json
    import os
    from ..emu.harness import MAX_HARNESS_BYTES
    try:
        if os.path.getsize(path) > MAX_HARNESS_BYTES:
            return None
        with open(path, "rb") as f:
            doc = json.loads(f.read())
    except (OSError, ValueError, RecursionError):
        return None
    docs = doc if isinstance(doc, list) else [doc]
    return [str(x.get("name")) for x in docs if isinstance(x, dict)]


def _kernel_names(path: str) -> list[str]:
    """Names of the kernels (with a kernel descriptor) of the code object or assembly file
    ``path``; a code object is read without disassembling it.

    Raises:
        AsmevoError: ``path`` does not load (the same message the verifier would give).
    """
    from ..frontend.loader import is_code_object
    if is_code_object(path):
        from ..frontend.codeobject import read_code_object
        return [k.name for k in read_code_object(path).kernels]
    from ..frontend.loader import load
    return [k.name for k in load(path).kernels if k.is_kernel]


def checked_entry(harness_path: str | None, entry: str | None, original: str,
                  kernels=None) -> dict | None:
    """The harness entry ``--harness``/``--entry`` pick (None without ``--harness``), checked
    against the original before any work: an ``--entry`` that names no entry of the harness,
    a harness entry whose kernel the original lacks, or (without ``--harness``) an
    ``--entry`` that names no kernel of the original is bad input, one line naming the
    entry, the file, and the entries or kernels there are.

    Args:
        original: the original's path (for messages; its kernels are read from it unless
            ``kernels``, their names, is given).

    Raises:
        AsmevoError: as above (exit 2), or a harness that does not load.
    """
    harness = None
    if harness_path:
        from ..verify.diff import load_harness
        try:
            harness = load_harness(harness_path, entry)
        except AsmevoError:
            names = _harness_entry_names(harness_path) if entry is not None else None
            if names is None or entry in names:
                raise                              # something else is wrong with it
            raise AsmevoError(f"--entry {entry!r}: no entry of that name in the harness; its "
                              f"entries: {', '.join(names) or '(none)'}",
                              file=harness_path) from None
    name = harness.get("kernel") if harness is not None else entry
    if not name:
        return harness
    have = list(kernels) if kernels is not None else _kernel_names(original)
    if name in have:
        return harness
    listed = f"its kernels: {', '.join(have)}" if have else "it holds no kernel"
    if harness is not None:
        which = f"--entry {entry!r}: the harness entry" if entry else \
            f"harness entry {harness.get('name')!r}"
        raise AsmevoError(f"{which} ({harness_path}) runs kernel {name!r}, which this file does "
                          f"not hold; {listed}", file=original)
    raise AsmevoError(f"--entry {entry!r}: no kernel of that name in this file; {listed}",
                      file=original)


def run(args: argparse.Namespace) -> int:
    """Run ``asmevo verify``; returns the exit status."""
    from ..verify.driver import verify
    if args.trials < 1:
        raise AsmevoError("--trials must be at least 1")
    level = args.level or ("all" if args.harness else "z3")
    harness = checked_entry(args.harness, args.entry, args.original)
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
