"""``asmevo-opt``: run a pass pipeline over a code object or assembly file.

Usage (modelled on LLVM ``opt -passes=`` and ``mlir-opt``)::

    asmevo-opt --passes='kernel(copy-prop,dce),waitcnt-relax' K.co -o K.opt.co
    asmevo-opt --passes=default --stats --verify-each K.s -o K.opt.s
    asmevo-opt --print-passes

``asmevo opt ...`` (``python -m asmevo opt``, dispatched by :mod:`asmevo.cli`) is the same
command: this module's :func:`add_arguments` and :func:`run`; messages name ``asmevo opt``.

Output by suffix of ``-o``: ``.s``/``.amdgcn`` writes assembly
(:func:`asmevo.ir.print_module`); ``.co``/``.hsaco``/``.o`` writes a code object,
patched in place (:func:`asmevo.backend.patch.patch_in_place`) when every
change fits, else rebuilt (both through :func:`asmevo.backend.rebuild.write_code_object`;
``--stats`` says which, or that nothing changed when no pass changed the code).
Without ``-o`` (or with ``-o -``) the assembly goes to stdout.  Reports
(``--stats``, ``--time-passes``, IR dumps) go to stderr.  ``--json[=FILE]`` writes one
JSON record (pipeline, per-pass statistics and timing, every pass run, the
``--verify-each`` results and the ``--verify`` verdict, the exit status and any error) to
stdout, or to FILE with ``--json-output=FILE``.  ``--print-changed`` prints a kernel's IR after each pass that changed it,
``--print-on-crash[-path=FILE]`` the IR a failing pass left, ``--debug-pass-manager``
which pass ran on which kernel (or was skipped, and why).

LLVM conventions: ``-`` as the input reads standard input (a code object when it starts
with the ELF magic, else assembly); single-dash long options (``-passes=dce``,
``-print-after-all``, ``-stats``) are accepted; options are never abbreviated; ``--version``.

Bad input, a bad pipeline, a failing plugin, a pass that fails
``--verify-each`` or a rejected ``--verify`` result: one message on stderr,
exit status 2 (1 for a ``--verify`` rejection), and no output file.  A ``--verify``
verdict of ``unknown-*`` (e.g. ``unknown-unproved``) writes the output, prints the
verdict on stderr as unproved and exits 3.
``--harness``/``--entry`` serve ``--verify`` only: without it they are an error (exit 2),
neither ignored nor turning a verification on.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import AsmevoError

PROG = "asmevo-opt"
_CODE_OBJECT_SUFFIXES = (".co", ".hsaco", ".o", ".elf")
_TEXT_SUFFIXES = (".s", ".amdgcn", ".asm")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare asmevo-opt's options on ``p``: the ``asmevo-opt`` parser (:func:`main`) or the
    ``asmevo opt`` sub-command's (:mod:`asmevo.cli`); messages name ``p.prog``."""
    from ..cli import add_version_argument
    p.set_defaults(opt_prog=p.prog)
    p.epilog = ("LLVM conventions: '-' as the input reads standard input, '-o -' writes "
                "standard output; long options may be written with one dash (-passes=dce, "
                "-stats); options are never abbreviated.")
    add_version_argument(p, p.prog)
    p.add_argument("input", nargs="?", help="code object (.co/.hsaco) or assembly (.s/.amdgcn)")
    p.add_argument("-o", dest="output", metavar="OUT",
                   help="output: .s assembly, .co/.hsaco code object, '-' for stdout "
                        "(default: assembly on stdout)")
    p.add_argument("-S", dest="S", action="store_true",
                   help="write assembly text whatever the suffix of -o (as opt -S)")
    p.add_argument("-p", "--passes", default=None, metavar="PIPELINE",
                   help="pass pipeline, e.g. 'kernel(copy-prop,dce),sched<window=32>' "
                        "or 'default'")
    p.add_argument("--print-passes", action="store_true",
                   help="list registered passes with their parameters and exit")
    p.add_argument("--print-pipeline-passes", action="store_true",
                   help="print the parsed pipeline with all parameters spelled out and exit")
    p.add_argument("--print-before-all", action="store_true", help="dump IR before every pass")
    p.add_argument("--print-after-all", action="store_true", help="dump IR after every pass")
    p.add_argument("--print-before", action="append", default=[], metavar="NAME",
                   help="dump IR before pass NAME (repeatable)")
    p.add_argument("--print-after", action="append", default=[], metavar="NAME",
                   help="dump IR after pass NAME (repeatable)")
    p.add_argument("--verify-each", action="store_true",
                   help="run static checks after each pass; a pass may not add a violation")
    p.add_argument("--stats", action="store_true",
                   help="per-pass statistics: instructions removed/added/modified/moved, s_nop "
                        "wait states removed/added, s_waitcnt removed/added/changed, and each "
                        "pass's own counters")
    p.add_argument("--time-passes", action="store_true", help="report time spent in each pass")
    p.add_argument("--kernel", action="append", default=None, metavar="NAME",
                   help="optimise only kernel NAME (repeatable; default: all)")
    p.add_argument("--load-pass-plugin", action="append", default=[], metavar="FILE.py",
                   help="load a Python file that registers passes (repeatable)")
    p.add_argument("--verify", choices=("static", "diff", "all"), default=None,
                   help="verify the result against the input before writing it "
                        "(diff/all need --harness)")
    p.add_argument("--harness", metavar="H.json",
                   help="launch harness for --verify=diff|all; only with --verify (alone it "
                        "is an error, exit 2: it never turns verification on by itself)")
    p.add_argument("--entry", metavar="NAME",
                   help="harness entry when --harness is a manifest list (as asmevo verify); "
                        "only with --verify")
    p.add_argument("--print-changed", action="store_true",
                   help="print a kernel's IR at the start and after each pass that changed it")
    p.add_argument("--print-on-crash", action="store_true",
                   help="when a pass raises or fails --verify-each, print the IR it left (stderr)")
    p.add_argument("--print-on-crash-path", metavar="FILE", default=None,
                   help="write the IR of --print-on-crash to FILE instead of stderr")
    p.add_argument("--debug-pass-manager", action="store_true",
                   help="log which pass runs on which kernel, or is skipped and why (stderr)")
    p.add_argument("--json", action="store_true",
                   help="write statistics, pass timing, the run log and the --verify verdict "
                        "as JSON on stdout (needs -o FILE for the output)")
    p.add_argument("--json-output", metavar="FILE", default=None,
                   help="write that JSON record to FILE instead (implies --json)")


def _load(path: str):
    if not os.path.exists(path):
        raise AsmevoError("no such file", file=path)
    try:
        from ..frontend.loader import load
    except ImportError:
        load = None
    if load is not None:
        return load(path)
    if path.endswith(_TEXT_SUFFIXES):  # loader not built yet: text only
        from ..frontend.asm_parser import parse_asm
        with open(path, encoding="utf-8") as f:
            m = parse_asm(f.read(), path)
        m.source = path
        return m
    raise AsmevoError("reading code objects needs asmevo.frontend.loader, which is not "
                      "available", file=path)


#: Limits of a --passes string, checked before parsing (the parser recurses per level).
MAX_PIPELINE_DEPTH = 64
MAX_PIPELINE_CHARS = 100_000


def _check_pipeline_limits(text: str) -> None:
    """Refuse a pipeline nested deeper than :data:`MAX_PIPELINE_DEPTH`, longer than
    :data:`MAX_PIPELINE_CHARS` or holding a number longer than the literal limit, with the
    column, before parsing it.

    Raises:
        AsmevoError: naming the limit.
    """
    import re
    from ..limits import max_literal
    if len(text) > MAX_PIPELINE_CHARS:
        raise AsmevoError(f"invalid pipeline: {len(text)} characters; at most "
                          f"{MAX_PIPELINE_CHARS} are accepted")
    depth = 0
    for i, ch in enumerate(text):
        depth += ch in "(<"
        depth -= ch in ")>"
        if depth > MAX_PIPELINE_DEPTH:
            raise AsmevoError(f"invalid pipeline (column {i + 1}): nested more than "
                              f"{MAX_PIPELINE_DEPTH} levels deep")
    limit = max_literal()
    for m in re.finditer(r"[0-9A-Za-z_.+-]{%d,}" % (limit + 1), text):
        raise AsmevoError(f"invalid pipeline (column {m.start() + 1}): a name or number of "
                          f"{len(m.group())} characters; at most {limit} are accepted (the "
                          "literal length limit; raise it with ASMEVO_MAX_LITERAL=N)")


def _print_passes(out) -> None:
    from ..passes import registry
    out.write("Passes (name, scope, parameters):\n")
    for info in registry.all_passes():
        try:
            scope, doc, opts = info.scope, info.doc, info.option_doc
        except Exception as e:  # a pass module that fails to import: say so, keep listing
            out.write(f"  {info.name:<18} (cannot load: {type(e).__name__}: {e})\n")
            continue
        origin = "" if info.origin == "builtin" else f" [plugin {info.origin}]"
        out.write(f"  {info.name:<18} {scope:<7} {doc}{origin}\n")
        if opts:
            for o in opts.split(";"):
                out.write(f"  {'':<18}         <{o}>\n")
    out.write("Scopes: module(...), kernel(...), repeat<N>(...)\n")
    out.write(f"default = {registry.DEFAULT_PIPELINE}\n")


def _prog(args: argparse.Namespace) -> str:
    """The command's name in messages: ``asmevo-opt``, or ``asmevo opt``."""
    return getattr(args, "opt_prog", None) or PROG


def _write(module, out_path: str, in_path: str, verbose: bool = False,
           shown: str | None = None, text_only: bool = False, prog: str = PROG,
           changed: bool = True) -> str:
    """Write ``module`` to ``out_path`` (``.co``/``.hsaco``: code object; else assembly);
    ``shown`` is the path named in messages (the final name when writing a temporary file).
    ``verbose`` (``--stats``) says how a code object was written, or that nothing changed
    (``changed`` False: no pass changed the code; the output is still written)."""
    from ..fileio import write_output
    from ..ir import print_module
    if out_path.endswith(_CODE_OBJECT_SUFFIXES) and not text_only:
        try:
            from ..backend.rebuild import write_code_object
        except ImportError:
            raise AsmevoError("writing code objects needs asmevo.backend.rebuild, which is "
                              "not available yet; use -o FILE.s", file=out_path) from None
        how = write_code_object(module, out_path, inputs=(in_path,))
        if verbose:
            if changed:
                what = "code object " + ("patched in place" if how == "patched" else "rebuilt")
            else:
                what = ("nothing changed (no pass changed the code); code object "
                        + ("written as read" if how == "patched" else "rebuilt"))
            sys.stderr.write(f"{prog}: {shown or out_path}: {what}\n")
        if not changed and how == "patched":
            return "unchanged"
        return "patched" if how == "patched" else "rebuilt"
    from ..backend.rebuild import sync_text_metadata
    sync_text_metadata(module)   # passes that change register counts edit Kernel.metadata
    text = print_module(module)
    if out_path == "-":
        sys.stdout.write(text)
    else:
        write_output(out_path, text, inputs=(in_path,))
    return "assembly"


def _verify(args, original, module, record: dict | None = None) -> int:
    """``--verify``: 0 when accepted (the verdict is printed on stderr); 3 when unknown (the verdict is printed on stderr as
    unproved; the caller still writes the output); else (rejected) prints the verdict,
    returns 1 and nothing is written.  ``original`` and ``module`` are modules or paths:
    when an output file is written, the caller passes the input path and the path of the
    temporary file already written, so the bytes that will be kept are what is verified."""
    from ..passes import checks
    verdict = checks.verify_result(original, module, args.verify, args.harness, args.kernel,
                                   args.entry)
    if record is not None:
        record["verify"] = verdict.to_json()
    if verdict.accepted:
        sys.stderr.write(f"{_prog(args)}: --verify={args.verify}: {verdict.text()}\n")
        return 0
    if verdict.outcome == "unknown":
        sys.stderr.write(f"{_prog(args)}: warning: --verify={args.verify}: the result is "
                         f"UNPROVED ({verdict.status.value}); output written anyway\n"
                         f"{verdict.text()}\n")
        return 3
    sys.stderr.write(f"{_prog(args)}: error: --verify={args.verify} did not accept the "
                     f"result ({verdict.status.value}); no output written\n{verdict.text()}\n")
    return verdict.exit_status or 1


def run(args: argparse.Namespace) -> int:
    """Run asmevo-opt with parsed ``args``; returns the exit status.

    With ``--json`` the JSON record is written whatever happens (with ``"error"`` set
    when the run fails).

    Raises:
        AsmevoError: bad input, pipeline, plugin, or a pass failure (exit 2).
    """
    json_to = getattr(args, "json_output", None) or ("-" if getattr(args, "json", False) else None)
    if json_to is None:
        return _run(args, None)
    if json_to == "-" and (args.output in (None, "-")) and not (
            args.print_passes or args.print_pipeline_passes):
        raise AsmevoError("--json writes to stdout, where the assembly goes too; give -o FILE "
                          "for the output or --json-output=FILE")
    if json_to != "-":
        from ..frontend.loader import check_output_path
        if not _is_direct(json_to):
            check_output_path(json_to)
    shown_input = ("<stdin>" if args.input and args.input == getattr(args, "stdin_path", None)
                   else args.input)
    record: dict = {"tool": PROG, "input": shown_input, "output": args.output or "-",
                    "pipeline": args.passes, "error": None}
    rc = 2
    try:
        rc = _run(args, record)
        return rc
    except AsmevoError as e:
        record["error"] = str(e)
        rc = e.exit_status
        raise
    finally:
        record["exit_status"] = rc
        import json
        text = json.dumps(record, indent=1, default=str) + "\n"
        if json_to == "-":
            sys.stdout.write(text)
        else:
            from ..fileio import write_output
            write_output(json_to, text, inputs=(args.input,) if args.input else ())


def _is_direct(path: str) -> bool:
    from ..fileio import is_direct
    return is_direct(path)


def _run(args: argparse.Namespace, record: dict | None) -> int:
    from ..passes import manager as mgr
    from ..passes.pipeline import parse_pipeline, pipeline_text
    from ..passes.plugin import load_pass_plugin
    for plug in args.load_pass_plugin:
        load_pass_plugin(plug)
    if args.print_passes:
        _print_passes(sys.stdout)
        return 0
    if args.passes is None:
        raise AsmevoError("no pipeline given; use --passes=PIPELINE (see --print-passes)")
    _check_pipeline_limits(args.passes)
    nodes = parse_pipeline(args.passes)
    from ..passes import registry
    for flag, names in (("--print-before", args.print_before), ("--print-after", args.print_after)):
        for n in names:
            if registry.lookup(n) is None:
                raise AsmevoError(f"{flag}={n}: unknown pass; valid passes: "
                                  + ", ".join(registry.pass_names()))
    if args.print_pipeline_passes:
        sys.stdout.write(pipeline_text(nodes) + "\n")
        return 0
    if record is not None:
        record["pipeline"] = pipeline_text(nodes)
    if not args.input:
        raise AsmevoError("no input file")
    if args.output and args.output != "-" and not _is_direct(args.output):
        from ..frontend.loader import check_output_path
        check_output_path(args.output)  # before any work: a directory, a missing parent
    if args.verify in ("diff", "all") and not args.harness:
        raise AsmevoError(f"--verify={args.verify} needs --harness H.json")
    for flag, given in (("--harness", args.harness), ("--entry", args.entry)):
        # an option that only --verify reads is never ignored silently, nor does it turn a
        # verification on by itself (its exit statuses and cost are asked for explicitly)
        if given is not None and not args.verify:
            raise AsmevoError(f"{flag} needs --verify (static, diff or all); without it nothing "
                              f"reads {flag}: add --verify=all to test the result on the "
                              "harness, or drop the option")
    module = _load(args.input)
    if args.verify and (args.harness or args.entry):
        # a wrong --entry is bad input, said before any pass runs (as asmevo verify says it)
        from ..emu.harness import checked_entry
        checked_entry(args.harness, args.entry, args.input, module=module,
                      fits=args.verify in ("diff", "all"))
    inst = mgr.Instrumentation(print_before=args.print_before, print_after=args.print_after,
                               print_before_all=args.print_before_all,
                               print_after_all=args.print_after_all,
                               verify_each=args.verify_each,
                               print_changed=getattr(args, "print_changed", False),
                               print_on_crash=bool(getattr(args, "print_on_crash", False)
                                                   or getattr(args, "print_on_crash_path", None)),
                               crash_out=getattr(args, "print_on_crash_path", None),
                               debug_pass_manager=getattr(args, "debug_pass_manager", False))
    if record is not None:
        record["kernels"] = [k.name for k in module.kernels
                             if args.kernel is None or k.name in args.kernel]
    bad_input = False
    try:
        mgr.PassManager(nodes, kernels=args.kernel, instrumentation=inst).run(module)
    except AsmevoError as e:
        # bad input (a --kernel the input lacks, a pass option such as loop-pipeline's loop=N
        # past the last block) is the one error line, without an all-zero statistics table
        # before it; a pass that crashed or failed --verify-each keeps its reports
        bad_input = not isinstance(e, mgr.PassFailedError)
        raise
    finally:
        if record is not None:
            record.update(inst.to_json())
        if args.stats and not bad_input:
            sys.stderr.write(inst.stats_report())
        if args.time_passes and not bad_input:
            sys.stderr.write(inst.time_report())
    changed = any(c for _, _, c in inst.log)
    rc = 0
    out = args.output or "-"
    if out != "-":
        from ..fileio import check_not_input
        check_not_input(out, (args.input, getattr(args, "harness", None),
                              *(getattr(args, "load_pass_plugin", None) or [])))
    if args.verify:
        # Verify the bytes that will be kept: write a temporary file beside the output
        # (in the temporary directory for standard output, a device or a pipe), verify the
        # input against it (the verifier assembles text and loads code objects: never the
        # in-memory IR), then rename it (copy it into a device, a pipe or standard output;
        # delete it when rejected).
        import tempfile
        from ..fileio import commit_temp, is_direct, rename_target
        text_only = getattr(args, "S", False) or out == "-"
        tdir = (None if out == "-" or is_direct(out)
                else os.path.dirname(os.path.abspath(rename_target(out))))
        # the suffix says what the file holds: text (-S, standard output) is .s, whatever
        # the output's name (a .co name on text made the verifier read it as an ELF file)
        suffix = ".s" if text_only else (os.path.splitext(out)[1] or ".s")
        fd, tmp = tempfile.mkstemp(dir=tdir, prefix=".asmevo-opt-", suffix=suffix)
        os.close(fd)
        try:
            how = _write(module, tmp, args.input, verbose=args.stats, shown=out,
                         text_only=text_only, prog=_prog(args), changed=changed)
            rc = _verify(args, args.input, tmp, record)
            if rc and rc != 3:
                return rc
            if out == "-":
                with open(tmp, encoding="utf-8") as f:
                    sys.stdout.write(f.read())
            else:
                commit_temp(tmp, out)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        if record is not None:
            record["output_written"] = how
        return rc
    how = _write(module, out, args.input, verbose=args.stats, text_only=getattr(args, "S", False),
                 prog=_prog(args), changed=changed)
    if record is not None:
        record["output_written"] = how
    return rc


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``asmevo-opt`` console script; returns the exit status."""
    from ..cli import StdinInputs, normalize_argv, run_guarded
    parser = argparse.ArgumentParser(
        prog=PROG, description="run a pass pipeline over a code object or assembly file "
                               "(docs/passes.md)", allow_abbrev=False)
    add_arguments(parser)
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parser.parse_args(normalize_argv(argv, parser))
    except SystemExit as e:  # argparse usage errors exit 2 already
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    stdin = StdinInputs()

    def body() -> int:
        stdin.replace(args, ("input",))
        return run(args)

    try:
        return run_guarded(body, PROG, stdin.rename)
    finally:
        stdin.cleanup()

if __name__ == "__main__":
    sys.exit(main())
