"""The llvm-objdump listing that :mod:`asmevo.frontend.disasm` parses (a light module:
``asmevo dis`` starts the tool with it before importing the disassembler).

The listing comes through a pipe, never a temporary file (nothing is left behind when the
command is stopped).  The tool's diagnostics are read as they come and bounded
(:data:`STDERR_LIMIT`): a corrupt file can make llvm-objdump write warnings without end, and
it is stopped once that is clear; :meth:`StartedObjdump.close` stops it at once when the
caller no longer wants the listing (e.g. the ELF reader rejected the file first)."""

from __future__ import annotations

import os

from ..llvm import MCPU


def objdump_args(path: str) -> list[str]:
    """The llvm-objdump arguments of the listing: ``-d -z --mcpu=gfx942 -j .text PATH``."""
    return ["-d", "-z", f"--mcpu={MCPU}", "-j", ".text", path]


def run_objdump(path: str) -> str:
    """The llvm-objdump listing of ``path`` (:func:`objdump_args`) as text.

    Raises:
        ToolNotFoundError / ToolFailedError: llvm-objdump is missing or failed.
    """
    return StartedObjdump(path).result()


#: the pipe of :class:`StartedObjdump`: 1 MiB (the Linux default limit for a user), so that
#: llvm-objdump's 4 KiB writes rarely wait for the reader
PIPE_SIZE = 1 << 20

#: bytes of llvm-objdump's diagnostics read before it is stopped (a valid code object gives
#: none; a corrupt one can give warnings without end, e.g. a symbol table that runs past the
#: end of the file: one warning per entry)
STDERR_LIMIT = 1 << 20

#: lines of the tool's diagnostics quoted in an error message
QUOTED_LINES = 8


def _quote(err: str) -> str:
    """The first :data:`QUOTED_LINES` lines of a tool's diagnostics, and how many follow."""
    lines = err.strip().splitlines()
    if len(lines) <= QUOTED_LINES:
        return "\n".join(lines)
    return "\n".join(lines[:QUOTED_LINES]) + f"\n({len(lines) - QUOTED_LINES} more lines)"


class StartedObjdump:
    """llvm-objdump on ``path`` (:func:`objdump_args`), started at once so that the tool runs
    while the caller imports and reads; :meth:`chunks` gives the listing while the tool writes
    it (the caller parses it meanwhile, on the other core), :meth:`result` waits and returns
    the whole text; both raise the tool's error.  The listing comes through a 1 MiB pipe read
    in batches: a file cost llvm-objdump some 25 ms more system time (page cache) for 3 MB of
    listing, and a 64 KiB pipe read as it fills woke both processes for every write.  A
    thread reads the tool's stderr (at most :data:`STDERR_LIMIT` bytes: past that the tool
    is stopped) and enforces the tool-call time limit (``ASMEVO_TOOL_TIMEOUT``).
    :meth:`close` (which :meth:`chunks` and :meth:`result` call) kills a tool whose listing
    is no longer wanted, at once; a caller that may not read the listing must call it."""

    def __init__(self, path: str):
        import subprocess
        import threading

        from ..errors import ToolFailedError
        from ..llvm import find_tool, start_tool, tool_timeout
        self.path = path
        self._err: BaseException | None = None
        self._stderr = b""
        self._overflow = False
        self._timed_out = False
        self._proc = None
        self._fd: int | None = None
        self._timeout = tool_timeout()
        exe = find_tool("llvm-objdump")
        r, w = os.pipe()
        try:
            import fcntl
            fcntl.fcntl(w, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_SIZE)
        except (ImportError, OSError, ValueError):
            pass  # a smaller pipe: more wake-ups, the same listing
        try:
            # (recorded as running before a Ctrl-C can act here: asmevo.llvm.stop_tools)
            self._proc = start_tool([exe, *objdump_args(path)], stdin=subprocess.DEVNULL,
                                    stdout=w, stderr=subprocess.PIPE)
        except OSError as e:
            os.close(r)
            raise ToolFailedError(f"cannot run llvm-objdump: {e.strerror or e}") from None
        except BaseException:
            os.close(r)
            raise
        finally:
            os.close(w)  # (the tool holds it now) the reader sees the end of the listing
        self._fd = r
        try:
            self._done = threading.Event()
            self._thread = threading.Thread(target=self._watch, name="asmevo-objdump",
                                            daemon=True)
            self._thread.start()
        except BaseException:   # (Ctrl-C while the thread starts: the caller never gets self)
            self._stop_unwatched()
            raise

    def _stop_unwatched(self) -> None:
        """Kill and reap the tool (the thread that would may not run) and close the pipe."""
        from ..llvm import tool_ended
        self._kill()
        try:
            self._proc.wait()
        except OSError:
            pass
        tool_ended(self._proc)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _watch(self) -> None:
        """Read the tool's stderr (bounded) until it closes, then reap the tool; stop it when
        its diagnostics pass :data:`STDERR_LIMIT` or its time is up."""
        import select
        import subprocess
        import time
        proc = self._proc
        fd = proc.stderr.fileno()
        deadline = None if self._timeout is None else time.monotonic() + self._timeout
        kept: list[bytes] = []
        size = 0
        try:
            poller = select.poll()  # (not select.select: no limit on the descriptor's number)
            poller.register(fd, select.POLLIN)
            while True:
                wait = None if deadline is None else max(0.0, deadline - time.monotonic())
                ready = poller.poll(None if wait is None else wait * 1000)
                if not ready:
                    self._timed_out = True
                    break
                data = os.read(fd, 65536)
                if not data:
                    break
                if size < STDERR_LIMIT:
                    kept.append(data[:STDERR_LIMIT - size])
                size += len(data)
                if size > STDERR_LIMIT:
                    self._overflow = True
                    break
        except (OSError, ValueError):
            pass  # (closed by close(): the tool is being killed)
        finally:
            self._stderr = b"".join(kept)
            if self._timed_out or self._overflow:
                self._kill()
            try:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                try:
                    proc.wait(left)
                except subprocess.TimeoutExpired:  # stderr closed, the tool still running
                    self._timed_out = True
                    self._kill()
                    proc.wait()
            except OSError:
                pass
            try:
                proc.stderr.close()
            except OSError:
                pass
            from ..llvm import tool_ended
            tool_ended(proc)
            self._done.set()

    def _kill(self) -> None:
        """Kill the tool's process group (it leads its own session)."""
        import signal
        proc = self._proc
        if proc is None or proc.returncode is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def _error(self):
        """The tool's error once it has ended (None when it succeeded)."""
        from ..errors import ToolCrashedError, ToolFailedError, ToolTimeoutError
        from ..llvm import TIMEOUT_ENV, crash_reason
        err = self._stderr.decode(errors="replace")
        if self._timed_out:
            return ToolTimeoutError(
                f"llvm-objdump did not finish within {self._timeout:g} s and was stopped (the "
                f"time limit of one LLVM tool call; raise it with {TIMEOUT_ENV}=SECONDS, 0 for "
                "no limit)", file=self.path)
        if self._overflow:
            return ToolFailedError(
                f"llvm-objdump wrote more than {STDERR_LIMIT} bytes of diagnostics and was "
                "stopped; expected a well-formed code object. It began:\n" + _quote(err),
                file=self.path)
        code = self._proc.returncode
        if code != 0:
            why = crash_reason(err, code)
            if why is not None:
                return ToolCrashedError(f"llvm-objdump aborted: {why}", file=self.path)
            return ToolFailedError(f"llvm-objdump failed:\n{_quote(err)}", file=self.path)
        return None

    def _pieces(self, batch: float):
        """The listing's bytes as they come, in reads of up to a MiB; while the tool runs,
        ``batch`` seconds between reads let the pipe fill (fewer reads and wake-ups)."""
        import select
        import time

        from ..llvm import WAIT_S
        buf = memoryview(bytearray(PIPE_SIZE))
        fd = self._fd
        poller = select.poll()   # (a timed wait: a Ctrl-C that comes just before it acts)
        poller.register(fd, select.POLLIN)
        while True:
            while not poller.poll(WAIT_S * 1000):
                pass
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
            err = self._error()
            if err is not None:
                raise err
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
        """Stop: kill the tool if it still runs (its listing is no longer wanted), close the
        listing's pipe and wait for the thread (promptly: the tool is gone)."""
        if self._proc is not None and not self._done.is_set():
            self._kill()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._proc is not None:
            self._thread.join()
