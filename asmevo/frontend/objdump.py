"""The llvm-objdump listing that :mod:`asmevo.frontend.disasm` parses (a light module:
``asmevo dis`` starts the tool with it before importing the disassembler)."""

from __future__ import annotations

import os
import tempfile

from ..llvm import MCPU, run_tool


def objdump_args(path: str) -> list[str]:
    """The llvm-objdump arguments of the listing: ``-d -z --mcpu=gfx942 -j .text PATH``."""
    return ["-d", "-z", f"--mcpu={MCPU}", "-j", ".text", path]


def _listing_file() -> str:
    fd, listing = tempfile.mkstemp(prefix="asmevo-objdump-", suffix=".txt")
    os.close(fd)
    return listing


def _run(path: str, listing: str) -> str:
    # through a file: a pipe costs more CPU and time for megabytes of listing
    return run_tool("llvm-objdump", objdump_args(path), what="llvm-objdump",
                    stdout_file=listing).stdout.decode(errors="replace")


def run_objdump(path: str) -> str:
    """The llvm-objdump listing of ``path`` (:func:`objdump_args`) as text.

    Raises:
        ToolNotFoundError / ToolFailedError: llvm-objdump is missing or failed.
    """
    listing = _listing_file()
    try:
        return _run(path, listing)
    finally:
        os.unlink(listing)


class StartedObjdump:
    """:func:`run_objdump` on a thread, started early so that the tool runs while the
    caller imports and reads; :meth:`chunks` gives the listing while the tool writes it (the
    caller parses it meanwhile, on the other core), :meth:`result` waits and returns the whole
    text; both raise the tool's error.  The listing file is removed as soon as the tool is
    done (:meth:`chunks` reads it through a descriptor opened before the tool started)."""

    def __init__(self, path: str):
        import threading
        self.path = path
        self._out: str | None = None
        self._err: BaseException | None = None
        listing = _listing_file()
        self._reader = open(listing, "rb")  # noqa: SIM115 - closed by chunks()/result()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(listing,), name="asmevo-objdump")
        self._thread.start()

    def _run(self, listing: str) -> None:
        try:
            self._out = _run(self.path, listing)
        except BaseException as e:  # noqa: BLE001 - raised again by result()
            self._err = e
        finally:
            try:
                os.unlink(listing)
            except OSError:
                pass
            self._done.set()

    def result(self) -> str:
        """The listing text (waits for the tool).

        Raises:
            ToolNotFoundError / ToolFailedError: as :func:`run_objdump`.
        """
        self._thread.join()
        self._reader.close()
        if self._err is not None:
            raise self._err
        return self._out

    def chunks(self, poll: float = 0.003):
        """Yield the listing in pieces of whole lines as llvm-objdump writes them (their
        concatenation is :meth:`result`'s text: a piece ends at a newline, which no UTF-8
        sequence contains), waiting ``poll`` seconds when there is nothing new; after the
        last piece, raise the tool's error if it failed."""
        done = self._done
        f = self._reader
        try:
            pending = b""
            while True:
                finished = done.is_set()  # before the read: that read then gets the rest
                data = f.read()
                if data:
                    pending += data
                    cut = pending.rfind(b"\n") + 1
                    if cut:
                        piece, pending = pending[:cut], pending[cut:]
                        yield piece.decode(errors="replace")
                elif finished:
                    break
                else:
                    done.wait(poll)
            self._thread.join()
            if self._err is not None:
                raise self._err
            if pending:
                yield pending.decode(errors="replace")
        finally:
            f.close()
