"""The ``asmevo`` command: sub-commands dispatched to modules in ``asmevo.tools``.

Every sub-command module exposes ``add_arguments(parser)`` and ``run(args) -> int``.
Bad input (:class:`~asmevo.errors.AsmevoError`) prints one clear message and
exits with status 2, never a traceback.  Any other exception is a bug: it prints
``asmevo CMD: internal error: TYPE: MESSAGE (please report ...)`` and exits 1
(``ASMEVO_DEBUG=1`` shows the traceback instead).  A closed stdout pipe
(``asmevo dis K.co | head``) ends the command quietly with status 0.

LLVM conventions (docs/cli.md): ``--version``; ``-`` as an input file reads standard input
(:class:`StdinInputs`); single-dash long options (``-json``, ``-regs``) are read as their
double-dash form (:func:`normalize_argv`); options are never abbreviated
(``allow_abbrev=False``); ``python -m asmevo`` runs :func:`main`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from .errors import AsmevoError

#: what ``asmevo --help`` says first
DESCRIPTION = ("asmevo: optimise and verify AMD gfx942 machine code; 'asmevo COMMAND --help' "
               "describes each command.")

#: sub-command -> (module in asmevo.tools, one-line help); ``opt`` is ``asmevo-opt``
#: (:func:`asmevo.tools.opt.main`): the same module, options and behaviour
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
    "opt": ("opt", "run a pass pipeline over a code object or assembly file (the same as "
                   "asmevo-opt, same options)"),
    "mcp": ("mcp", "serve asmevo's tools to agents over the Model Context Protocol"),
}


#: sub-command -> the arguments that name an input file and may be ``-`` (standard input)
STDIN_ARGS = {
    "dis": ("input",), "asm": ("input",), "roundtrip": ("input",), "analyze": ("input",),
    "run": ("input",), "verify": ("original", "candidate"), "equiv": ("a", "b"),
    "profile": ("input",), "evolve": ("input",), "opt": ("input",),
}


def version_text(prog: str) -> str:
    """``PROG VERSION`` plus the target and the LLVM tools found (LLVM's ``--version`` style)."""
    from . import __version__
    lines = [f"{prog} {__version__}", "  Default target: amdgcn-amd-amdhsa--gfx942 (CDNA3)"]
    try:
        from .llvm import find_tool
        lines.append(f"  LLVM tools: {os.path.dirname(find_tool('llvm-mc'))}")
    except Exception:  # noqa: BLE001 - the version must print without LLVM installed
        lines.append("  LLVM tools: not found (see README, 'LLVM tools')")
    return "\n".join(lines) + "\n"


class _VersionAction(argparse.Action):
    def __init__(self, option_strings, dest, prog: str = "asmevo", **kw):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)
        self.prog = prog

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(version_text(self.prog))
        parser.exit(0)


def add_version_argument(parser: argparse.ArgumentParser, prog: str) -> None:
    """``--version``: print :func:`version_text` as is and exit 0."""
    parser.add_argument("--version", action=_VersionAction, prog=prog,
                        help="print the version, the target and the LLVM tools used, and exit")


def _long_options(parser: argparse.ArgumentParser) -> dict[str, bool]:
    """``--name`` -> whether it takes a value, for every long option of ``parser``."""
    out = {}
    for opt, action in parser._option_string_actions.items():  # noqa: SLF001
        if opt.startswith("--"):
            out[opt] = action.nargs != 0
    return out


def _value_options(parser: argparse.ArgumentParser) -> set[str]:
    return {o for o, a in parser._option_string_actions.items() if a.nargs != 0}  # noqa: SLF001


def normalize_argv(argv: list[str], parser: argparse.ArgumentParser,
                   subparsers: dict[str, argparse.ArgumentParser] | None = None) -> list[str]:
    """LLVM's single-dash long options (``-passes=dce``, ``-print-after-all``, ``-stats``):
    ``-NAME[=V]`` becomes ``--NAME[=V]`` when ``--NAME`` is an option of the parser in use
    (the sub-command's after its name).  Short options (``-o``, ``-p``), negative numbers, the
    value of an option that takes one, and everything after ``--`` are left alone."""
    out: list[str] = []
    current = parser
    longs, values = _long_options(parser), _value_options(parser)
    expect_value = False
    for n, tok in enumerate(argv):
        if tok == "--":
            out.extend(argv[n:])
            break
        if expect_value:
            out.append(tok)
            expect_value = False
            continue
        if subparsers and current is parser and tok in subparsers:
            current = subparsers[tok]
            longs, values = _long_options(current), _value_options(current)
            out.append(tok)
            continue
        if tok.startswith("-") and not tok.startswith("--") and len(tok) > 2 and tok[1].isalpha():
            name, eq, _ = tok[1:].partition("=")
            if "--" + name in longs:
                tok = "-" + tok
        if tok.startswith("-") and "=" not in tok and tok in values:
            expect_value = True
        out.append(tok)
    return out


class StdinInputs:
    """``-`` as an input file: standard input is read once into a temporary file (``.co``
    when it starts with the ELF magic, else ``.s``) whose path replaces ``-``; messages name
    it ``<stdin>`` (:meth:`rename`)."""

    def __init__(self):
        self.dir: str | None = None
        self.path: str | None = None

    def replace(self, args: argparse.Namespace, names: tuple[str, ...]) -> None:
        dashes = [n for n in names if getattr(args, n, None) == "-"]
        if len(dashes) > 1:
            raise AsmevoError(f"standard input ('-') can be read only once; given for "
                              f"{', '.join(dashes)}")
        if not dashes:
            return
        import tempfile
        from .limits import check_input_size, max_input_bytes
        data = sys.stdin.buffer.read(max_input_bytes() + 1)
        check_input_size(len(data), "<stdin>")
        self.dir = tempfile.mkdtemp(prefix="asmevo-stdin-")
        self.path = os.path.join(self.dir, "stdin" + (".co" if data[:4] == b"\x7fELF" else ".s"))
        with open(self.path, "wb") as f:
            f.write(data)
        setattr(args, dashes[0], self.path)
        args.stdin_path = self.path

    def rename(self, e: AsmevoError) -> None:
        """Name standard input ``<stdin>`` in ``e`` instead of the temporary file."""
        if self.path is None:
            return
        if e.file == self.path:
            e.file = "<stdin>"
        if self.path in e.message:
            e.message = e.message.replace(self.path, "<stdin>")
            e.args = (e.message,)

    def cleanup(self) -> None:
        if self.dir:
            import shutil
            shutil.rmtree(self.dir, ignore_errors=True)


def _remember_translations() -> None:
    """argparse translates each of its messages with ``gettext.gettext``, which looks for
    message catalogs on disk at every call (locale normalisation and four file checks, some
    0.3 ms each): building the command's parsers made 33 calls, ~10 ms of every ``asmevo``
    command (issue 16).  The answer depends only on the environment, fixed for the process
    this command is: remember it (only then; ``main(argv)`` in process leaves argparse as is)."""
    import argparse
    import functools
    import gettext
    if argparse._ is gettext.gettext:
        argparse._ = functools.lru_cache(maxsize=None)(gettext.gettext)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``asmevo``; returns the exit status."""
    parser = argparse.ArgumentParser(prog="asmevo", description=DESCRIPTION,
                                     allow_abbrev=False,
                                     epilog="LLVM conventions: '-' reads standard input / writes "
                                            "standard output; long options may be written with "
                                            "one dash (-o, -json); --version.")
    add_version_argument(parser, "asmevo")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    mods = {}
    subs = {}
    command_line = argv is None  # the process is this command (console script, python -m)
    if command_line:
        _remember_translations()
    argv = sys.argv[1:] if argv is None else list(argv)
    # only the chosen sub-command's module is imported (its options are registered); the
    # others are listed by name for --help: start-up stays small (numpy, z3, the loop...)
    chosen = next((t for t in argv if not t.startswith("-")), None)
    for name, (modname, help_) in COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_, allow_abbrev=False)
        if name != chosen:
            continue
        try:
            mod = importlib.import_module(f"asmevo.tools.{modname}")
        except ImportError:
            continue  # sub-command not built yet
        mods[name] = mod
        mod.add_arguments(p)
        subs[name] = p
    try:
        args = parser.parse_args(normalize_argv(argv, parser, subs))
    except SystemExit as e:  # --help, --version (0) and usage errors (2)
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    if not args.command:
        parser.print_help()
        return 2
    stdin = StdinInputs()

    def body() -> int:
        stdin.replace(args, STDIN_ARGS.get(args.command, ()))
        return int(mods[args.command].run(args) or 0)

    try:
        status = run_guarded(body, f"asmevo {args.command}", stdin.rename)
    finally:
        stdin.cleanup()
    if command_line and args.command in FAST_EXIT:
        exit_now(status)
    return status


#: sub-commands that end the process at once when run as a command (:func:`exit_now`)
FAST_EXIT = frozenset({"dis", "asm"})


def exit_now(status: int) -> None:
    """End the process with ``status`` after flushing stdout and stderr, without the
    interpreter's teardown: for ``asmevo dis`` of a large kernel, freeing its IR object by
    object (and the final garbage collection) took about a tenth of the command (issue 16).
    Only for a command (the interpreter's own process) whose work is done: outputs written
    and closed, nothing left for ``atexit``; threads still running (an llvm-objdump started
    before an error) are waited for first, as the interpreter's exit would.  A closed stdout
    at the final flush ends quietly with status 0, as :func:`run_guarded` does."""
    threading = sys.modules.get("threading")
    if threading is not None:
        try:
            for t in threading.enumerate():
                if t is not threading.main_thread() and not t.daemon:
                    t.join()
        except KeyboardInterrupt:       # a second Ctrl-C while waiting: stop now
            status = 130
    try:
        if sys.stdout is not None:      # None: started with stdout closed (>&-)
            sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
        status = 0
    except (OSError, ValueError):
        pass
    try:
        if sys.stderr is not None:
            sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(status)


def run_guarded(fn, prog: str, on_error=None) -> int:
    """Run a tool's body ``fn() -> int`` with the error policy every asmevo command shares.

    * :class:`~asmevo.errors.AsmevoError` (bad input): ``PROG: <message with location>`` on
      stderr, its ``exit_status`` (2);
    * ``BrokenPipeError`` (stdout closed, e.g. ``| head``): quiet, exit 0;
    * ``KeyboardInterrupt``: exit 130, after killing the LLVM tools still running
      (:func:`asmevo.llvm.stop_tools`);
    * any other exception is a bug: ``PROG: internal error: TYPE: msg`` and exit 1, the
      traceback only when ``ASMEVO_DEBUG=1``.
    """
    try:
        return fn()
    except AsmevoError as e:
        if on_error is not None:
            on_error(e)
        print(f"{prog}: {e}", file=sys.stderr)
        return e.exit_status
    except KeyboardInterrupt:
        llvm = sys.modules.get("asmevo.llvm")      # (not imported: no tool was started)
        if llvm is not None:
            llvm.stop_tools()
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
