"""The ``asmevo`` command: sub-commands dispatched to modules in ``asmevo.tools``.

Every sub-command module exposes ``add_arguments(parser)`` and ``run(args) -> int``.
Bad input (:class:`~asmevo.errors.AsmevoError`) prints one clear message and
exits with status 2, never a traceback.  Any other exception is a bug: it prints
``asmevo CMD: internal error: TYPE: MESSAGE (please report ...)`` and exits 1
(``ASMEVO_DEBUG=1`` shows the traceback instead).  A closed stdout pipe
(``asmevo dis K.co | head``) ends the command quietly with status 0.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from .errors import AsmevoError

#: sub-command -> (module in asmevo.tools, one-line help)
COMMANDS = {
    "dis": ("dis", "disassemble a code object into reassemblable assembly"),
    "asm": ("asm", "assemble and link assembly text into a code object"),
    "roundtrip": ("roundtrip", "dis + asm a code object and compare the result with the original"),
    "analyze": ("analyze", "CFG, liveness, waitcnt, register budget and hazard analyses"),
    "run": ("run", "run a kernel in the embedded gfx942 emulator"),
    "verify": ("verify", "verify a candidate code object against the original"),
    "equiv": ("equiv", "z3 equivalence of two straight-line instruction windows"),
    "evolve": ("evolve", "correctness-gated optimisation loop: K0 in, a verified faster best.co out"),
    "profile": ("profile", "estimated cycles, occupancy, bottleneck and hot windows of a kernel"),
    "mcp": ("mcp", "serve asmevo's tools to agents over the Model Context Protocol"),
}


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``asmevo``; returns the exit status."""
    parser = argparse.ArgumentParser(prog="asmevo", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    mods = {}
    for name, (modname, help_) in COMMANDS.items():
        try:
            mod = importlib.import_module(f"asmevo.tools.{modname}")
        except ImportError:
            continue  # sub-command not built yet
        mods[name] = mod
        p = sub.add_parser(name, help=help_, description=help_)
        mod.add_arguments(p)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    return run_guarded(lambda: int(mods[args.command].run(args) or 0), f"asmevo {args.command}")


def run_guarded(fn, prog: str) -> int:
    """Run a tool's body ``fn() -> int`` with the error policy every asmevo command shares.

    * :class:`~asmevo.errors.AsmevoError` (bad input): ``PROG: <message with location>`` on
      stderr, its ``exit_status`` (2);
    * ``BrokenPipeError`` (stdout closed, e.g. ``| head``): quiet, exit 0;
    * ``KeyboardInterrupt``: exit 130;
    * any other exception is a bug: ``PROG: internal error: TYPE: msg`` and exit 1, the
      traceback only when ``ASMEVO_DEBUG=1``.
    """
    try:
        return fn()
    except AsmevoError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return e.exit_status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except Exception as e:  # a bug, not bad input: no traceback unless ASMEVO_DEBUG=1
        if os.environ.get("ASMEVO_DEBUG") == "1":
            raise
        print(f"{prog}: internal error: {type(e).__name__}: {e} (please report; "
              "ASMEVO_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1


def _quiet_stdout() -> None:
    """After a BrokenPipeError on stdout: point fd 1 at /dev/null so the interpreter's final
    flush does not raise again (Python docs, "Note on SIGPIPE")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass

if __name__ == "__main__":
    sys.exit(main())
