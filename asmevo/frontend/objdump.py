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


#: the pipe of :class:`StartedObjdump`: 1 MiB (the Linux default limit for a user), so that
#: llvm-objdump's 4 KiB writes rarely wait for the reader
PIPE_SIZE = 1 << 20


class StartedObjdump:
    """:func:`run_objdump` on a thread, started early so that the tool runs while the
    caller imports and reads; :meth:`chunks` gives the listing while the tool writes it (the
    caller parses it meanwhile, on the other core), :meth:`result` waits and returns the whole
    text; both raise the tool's error.  The listing comes through a 1 MiB pipe read in
    batches: a file cost llvm-objdump some 25 ms more system time (page cache) for 3 MB of
    listing, and a 64 KiB pipe read as it fills woke both processes for every write.
    :meth:`close` (which :meth:`chunks` and :meth:`result` call) ends a tool whose listing
    is no longer wanted; a caller that may not read the listing must call it."""

    def __init__(self, path: str):
        import threading
        self.path = path
        self._err: BaseException | None = None
        r, w = os.pipe()
        try:
            import fcntl
            fcntl.fcntl(w, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_SIZE)
        except (ImportError, OSError, ValueError):
            pass  # a smaller pipe: more wake-ups, the same listing
        self._fd: int | None = r
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(w,), name="asmevo-objdump")
        self._thread.start()

    def _run(self, w: int) -> None:
        try:
            run_tool("llvm-objdump", objdump_args(self.path), what="llvm-objdump", stdout_fd=w)
        except BaseException as e:  # noqa: BLE001 - raised again by chunks() / result()
            self._err = e
        finally:
            os.close(w)  # the reader sees the end of the listing
            self._done.set()

    def _pieces(self, batch: float):
        """The listing's bytes as they come, in reads of up to a MiB; while the tool runs,
        ``batch`` seconds between reads let the pipe fill (fewer reads and wake-ups)."""
        import time
        buf = memoryview(bytearray(PIPE_SIZE))
        fd = self._fd
        while True:
            n = os.readv(fd, [buf])
            if n == 0:
                return
            yield bytes(buf[:n])
            if batch and not self._done.is_set():
                time.sleep(batch)

    def chunks(self, batch: float = 0.002):
        """Yield the listing in pieces of whole lines as llvm-objdump writes them (their
        concatenation is :meth:`result`'s text: a piece ends at a newline, which no UTF-8
        sequence contains); after the last piece, raise the tool's error if it failed."""
        try:
            pending = b""
            for data in self._pieces(batch):
                pending += data
                cut = pending.rfind(b"\n") + 1
                if cut:
                    piece, pending = pending[:cut], pending[cut:]
                    yield piece.decode(errors="replace")
            self._thread.join()
            if self._err is not None:
                raise self._err
            if pending:
                yield pending.decode(errors="replace")
        finally:
            self.close()

    def result(self) -> str:
        """The listing text (waits for the tool).

        Raises:
            ToolNotFoundError / ToolFailedError: as :func:`run_objdump`.
        """
        return "".join(self.chunks(batch=0))

    def close(self) -> None:
        """Stop reading (a tool still writing then ends on the closed pipe) and wait for the
        thread."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._thread.join()
