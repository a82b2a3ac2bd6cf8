"""Safe output: write to a temporary file beside the target, then rename.

An input is never overwritten: :func:`write_output` refuses a target that is
the same file as one of the inputs.

Only regular files are replaced by a rename.  ``-`` is standard output; a character
or block device (``/dev/null``), a FIFO, a socket, anything under ``/dev`` or
``/proc`` (``/proc/self/fd/1``), or a symlink to one of those is opened and written
directly, as LLVM's tools do (renaming a temporary file over ``/dev/null`` would replace
the device with a regular file).  A symlink to a regular file has its target
replaced; the link stays.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile

from .errors import AsmevoError


def check_not_input(path: str, inputs) -> None:
    """Raise AsmevoError (exit 2) when ``path`` names one of ``inputs`` (None entries and
    ``-`` ignored): call it before any work that ends in writing ``path``."""
    _check_inputs(path, tuple(x for x in inputs if x and x != "-"))


def _check_inputs(path: str, inputs: tuple[str, ...]) -> None:
    for src in inputs:
        if not src or src == "-":
            continue
        try:
            if os.path.exists(path) and os.path.samefile(path, src):
                raise AsmevoError(f"refusing to overwrite the input file {src}", file=path)
        except FileNotFoundError:
            pass


def is_direct(path: str) -> bool:
    """Whether ``path`` is written in place rather than by temp file + rename: ``-``, an
    existing non-regular file (device, FIFO, socket; symlinks followed), or a path under
    ``/dev`` or ``/proc``."""
    if path == "-":
        return True
    real = os.path.realpath(path)
    if real.startswith(("/dev/", "/proc/")):
        return True
    try:
        st = os.stat(path)
    except OSError:
        return False
    return not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode)


def rename_target(path: str) -> str:
    """The path a rename must replace: the final target of a symlink chain (so the link
    stays a link), else ``path`` itself."""
    return os.path.realpath(path) if os.path.islink(path) else path


def _write_direct(path: str, data: bytes | str) -> None:
    if path == "-":
        if isinstance(data, str):
            sys.stdout.write(data)
            sys.stdout.flush()
        else:
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        return
    mode = "w" if isinstance(data, str) else "wb"
    try:
        with open(path, mode) as f:
            f.write(data)
    except OSError as e:
        raise AsmevoError(f"cannot write output: {e.strerror or e}", file=path) from None


def write_output(path: str, data: bytes | str, *, inputs: tuple[str, ...] = ()) -> None:
    """Write ``data`` to ``path``: atomically (temp file in the same directory + rename) for a
    regular file, directly for ``-`` (stdout), a device, a FIFO or a symlink to one
    (:func:`is_direct`).

    Raises:
        AsmevoError: ``path`` is one of ``inputs``, a directory, or cannot be written.
    """
    path = os.fspath(path)
    _check_inputs(path, inputs)
    if os.path.isdir(path):
        raise AsmevoError("is a directory; expected a file path for the output", file=path)
    if is_direct(path):
        _write_direct(path, data)
        return
    target = rename_target(path)
    d = os.path.dirname(os.path.abspath(target))
    mode = "w" if isinstance(data, str) else "wb"
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".asmevo-", suffix=".tmp")
    except OSError as e:
        raise AsmevoError(f"cannot write output: {e.strerror}", file=path) from None
    try:
        with os.fdopen(fd, mode) as f:
            f.write(data)
        commit_temp(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise AsmevoError(f"cannot write output: {e.strerror or e}", file=path) from None
        raise


def commit_temp(tmp: str, path: str) -> None:
    """Put the finished temporary file ``tmp`` at ``path``: copy its bytes into a direct
    target (:func:`is_direct`, ``tmp`` is then removed), else rename it over the regular
    file (the symlink's target for a symlink), keeping an existing file's permissions
    (new files: 0644)."""
    if is_direct(path):
        with open(tmp, "rb") as f:
            data = f.read()
        _write_direct(path, data)
        os.unlink(tmp)
        return
    target = rename_target(path)
    try:
        perm = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        perm = 0o644
    os.chmod(tmp, perm)
    os.replace(tmp, target)
