"""The llvm-objdump listing that :mod:`asmevo.frontend.disasm` parses (a light module:
``asmevo dis`` starts the tool with it before importing the disassembler)."""

from __future__ import annotations

import os
import tempfile

from ..llvm import MCPU, run_tool


def objdump_args(path: str) -> list[str]:
    """The llvm-objdump arguments of the listing: ``-d -z --mcpu=gfx942 -j .text PATH``."""
    return ["-d", "-z", f"--mcpu={MCPU}", "-j", ".text", path]


def run_objdump(path: str) -> str:
    """The llvm-objdump listing of ``path`` (:func:`objdump_args`) as text.

    Raises:
        ToolNotFoundError / ToolFailedError: llvm-objdump is missing or failed.
    """
    fd, listing = tempfile.mkstemp(prefix="asmevo-objdump-", suffix=".txt")
    os.close(fd)
    try:  # through a file: a pipe costs more CPU and time for megabytes of listing
        return run_tool("llvm-objdump", objdump_args(path), what="llvm-objdump",
                        stdout_file=listing).stdout.decode(errors="replace")
    finally:
        os.unlink(listing)


class StartedObjdump:
    """:func:`run_objdump` on a thread, started early so that the tool runs while the
    caller imports and reads; :meth:`result` waits and returns its text or raises its
    error."""

    def __init__(self, path: str):
        import threading
        self.path = path
        self._out: str | None = None
        self._err: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="asmevo-objdump")
        self._thread.start()

    def _run(self) -> None:
        try:
            self._out = run_objdump(self.path)
        except BaseException as e:  # noqa: BLE001 - raised again by result()
            self._err = e

    def result(self) -> str:
        """The listing text (waits for the tool).

        Raises:
            ToolNotFoundError / ToolFailedError: as :func:`run_objdump`.
        """
        self._thread.join()
        if self._err is not None:
            raise self._err
        return self._out
