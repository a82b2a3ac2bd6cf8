"""Assembly text -> loadable gfx942 code object, via llvm-mc and ld.lld.

The link step is the one clang's AMDGPU toolchain runs for ``amdgcn-amd-amdhsa``
(``clang -###``): ``ld.lld --no-undefined -shared in.o -o out.co``, which gives
the same section layout as the clang corpus files (.note, .dynsym, .gnu.hash,
.hash, .dynstr, .rodata, .text, .dynamic).

llvm-mc diagnostics (``<stdin>:LINE:COL: error: ...``) are turned into an
:class:`~asmevo.errors.AsmSyntaxError` located at ``filename:LINE:COL``.
"""

from __future__ import annotations

import os
import re
import subprocess

from ..errors import AsmevoError, AsmSyntaxError, ToolFailedError, ToolNotFoundError
from ..fileio import write_output
from ..llvm import MCPU, TRIPLE, crash_reason, find_tool, run_process

_DIAG = re.compile(r"^(?:<stdin>|[^:\n]*):(\d+):(\d+): (error|warning): (.*)$", re.M)
_TARGET = re.compile(r'^\s*\.amdgcn_target\s+"([^"]*)"', re.M)
#: Triton's newer LLVM spells the triple ``amdgpu9.42-amd-amdhsa-unknown-gfx942``; llvm-mc 19
#: wants ``amdgcn-amd-amdhsa--gfx942`` (corpus README, "Triton").
_TRITON_TARGET = re.compile(r'^(\s*\.amdgcn_target\s+")amdgpu[0-9.]+-amd-amdhsa-unknown-(gfx[0-9a-z]+[^"]*)"',
                            re.M)


def find_linker() -> str:
    """Path of ld.lld.  ``asmevo.llvm.find_tool`` checks ``--version`` for "version NN", which
    ld.lld does not print ("Debian LLD 19.1.7"), so fall back to the ld.lld beside llvm-mc.

    Raises:
        ToolNotFoundError: neither is found.
    """
    try:
        return find_tool("ld.lld")
    except ToolNotFoundError as e:
        cand = os.path.join(os.path.dirname(find_tool("llvm-mc")), "ld.lld")
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
        raise e


def fix_target_line(text: str) -> str:
    """Rewrite a Triton ``.amdgcn_target "amdgpu9.42-amd-amdhsa-unknown-gfx942"`` line to the
    spelling llvm-mc 19 accepts (``"amdgcn-amd-amdhsa--gfx942"``); other text is unchanged."""
    if '"amdgpu' not in text:  # what the pattern needs (its scan of a large text: ~10 ms)
        return text
    return _TRITON_TARGET.sub(r'\1amdgcn-amd-amdhsa--\2"', text)


def mc_args(text: str) -> list[str]:
    """llvm-mc target options for ``text``: triple, ``-mcpu`` and ``-mattr`` from its
    ``.amdgcn_target`` id (``gfx942:sramecc+:xnack-`` -> ``-mattr=+sramecc,-xnack``)."""
    m = _TARGET.search(text)
    cpu, attrs = MCPU, []
    if m:
        tid = m.group(1).split("--", 1)[-1] if "--" in m.group(1) else m.group(1).rsplit("-", 1)[-1]
        parts = tid.split(":")
        if parts[0].startswith("gfx"):
            cpu = parts[0]
        for f in parts[1:]:
            if f and f[-1] in "+-":
                attrs.append(f[-1] + f[:-1])
    args = [f"-triple={TRIPLE}", f"-mcpu={cpu}"]
    if attrs:
        args.append("-mattr=" + ",".join(attrs))
    return args


def _diagnostic_error(stderr: str, filename: str, returncode: int = 1,
                      text: str | None = None) -> AsmevoError:
    why = crash_reason(stderr, returncode)
    if why is not None:  # llvm-mc aborted: say what in the file caused it, not the dump
        from ..llvm import explain_crash
        return explain_crash("llvm-mc", why, text, filename)
    m = _DIAG.search(stderr)
    if m and m.group(3) == "error":
        line, col = int(m.group(1)), int(m.group(2))
        nxt = _DIAG.search(stderr, m.end())  # only this diagnostic's source line and caret
        extra = stderr[m.end():nxt.start() if nxt else len(stderr)].strip("\n")
        if nxt:
            more = sum(1 for x in _DIAG.finditer(stderr, m.end()) if x.group(3) == "error")
            if more:
                extra += f"\n({more} more error(s) follow from llvm-mc)"
        msg = m.group(4) + (("\n" + extra) if extra else "")
        err = AsmSyntaxError(f"llvm-mc: {msg}", file=filename, line=line, column=col)
        # every line llvm-mc reported an error on (it goes on after the first), so a caller
        # that repairs lines can repair them all in one pass
        err.error_lines = sorted({int(x.group(1)) for x in _DIAG.finditer(stderr)
                                  if x.group(3) == "error"})
        return err
    return ToolFailedError(f"llvm-mc failed:\n{stderr.strip()}", file=filename)


def run_mc(text: str, extra: list[str], *, filename: str = "<input>") -> subprocess.CompletedProcess:
    """Run llvm-mc on ``text`` (stdin) with the target options plus ``extra``.

    Raises:
        AsmSyntaxError: llvm-mc reported an error (located at ``filename:line:col``).
    """
    exe = find_tool("llvm-mc")
    proc = run_process([exe, *mc_args(text), *extra], input=text, what="llvm-mc", file=filename)
    if proc.returncode != 0:
        raise _diagnostic_error(proc.stderr, filename, proc.returncode, text)
    return proc


def assemble_object(text: str, obj_path: str, *, filename: str = "<input>") -> None:
    """Assemble ``text`` into a relocatable object at ``obj_path`` (llvm-mc -filetype=obj)."""
    run_mc(text, ["-filetype=obj", "-o", obj_path], filename=filename)


def object_bytes(text: str, *, filename: str = "<input>") -> bytes:
    """The relocatable object of ``text`` (llvm-mc -filetype=obj), read from the tool's
    standard output: no temporary file.

    Raises:
        AsmSyntaxError: llvm-mc reported an error (located at ``filename:line:col``).
    """
    exe = find_tool("llvm-mc")
    proc = run_process([exe, *mc_args(text), "-filetype=obj", "-o", "-"], input=text.encode(),
                       what="llvm-mc", file=filename)
    if proc.returncode != 0:
        raise _diagnostic_error(proc.stderr.decode(errors="replace"), filename, proc.returncode,
                                text)
    return proc.stdout


def assemble_bytes(text: str, *, filename: str = "<input>") -> bytes:
    """Assemble and link ``text``; return the code object's bytes.

    Raises:
        AsmSyntaxError: llvm-mc rejected the text.
        ToolFailedError: ld.lld failed (e.g. an undefined symbol).
    """
    text = fix_target_line(text)
    import tempfile  # (only here: dis's check reads llvm-mc's object from a pipe)
    with tempfile.TemporaryDirectory(prefix="asmevo-") as d:
        obj = os.path.join(d, "in.o")
        out = os.path.join(d, "out.co")
        assemble_object(text, obj, filename=filename)
        exe = find_linker()
        proc = run_process([exe, "--no-undefined", "-shared", obj, "-o", out], input="",
                           what="ld.lld", file=filename)
        if proc.returncode != 0:
            raise ToolFailedError(f"ld.lld failed:\n{proc.stderr.strip()}", file=filename)
        with open(out, "rb") as f:
            return f.read()


def assemble(text: str, out_path: str, *, filename: str = "<input>",
             inputs: tuple[str, ...] = ()) -> None:
    """Assemble and link ``text`` into a loadable code object at ``out_path``
    (written with :func:`asmevo.fileio.write_output`, never over one of ``inputs``).

    Raises:
        AsmSyntaxError, ToolFailedError: as :func:`assemble_bytes`; AsmevoError when
        ``out_path`` is an input.
    """
    data = assemble_bytes(text, filename=filename)
    write_output(out_path, data, inputs=inputs)
