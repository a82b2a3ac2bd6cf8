"""Safe output: write to a temporary file beside the target, then rename.

An input is never overwritten: :func:`write_output` refuses a target that is
the same file as one of the inputs.
"""

from __future__ import annotations

import os
import tempfile

from .errors import AsmevoError


def write_output(path: str, data: bytes | str, *, inputs: tuple[str, ...] = ()) -> None:
    """Atomically write ``data`` to ``path`` (temp file in the same directory + rename).

    Raises:
        AsmevoError: ``path`` is one of ``inputs`` or cannot be written.
    """
    for src in inputs:
        try:
            if os.path.exists(path) and os.path.samefile(path, src):
                raise AsmevoError(f"refusing to overwrite the input file {src}", file=path)
        except FileNotFoundError:
            pass
    d = os.path.dirname(os.path.abspath(path))
    mode = "w" if isinstance(data, str) else "wb"
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".asmevo-", suffix=".tmp")
    except OSError as e:
        raise AsmevoError(f"cannot write output: {e.strerror}", file=path) from None
    try:
        with os.fdopen(fd, mode) as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise AsmevoError(f"cannot write output: {e.strerror or e}", file=path) from None
        raise
