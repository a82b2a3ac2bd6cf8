"""Locate and run LLVM's AMDGPU tools (llvm-mc, llvm-objdump, ld.lld).

Search order (first hit wins, per tool):

1. the directory in the ``ASMEVO_LLVM_BIN`` environment variable;
2. ``/opt/rocm/llvm/bin``;
3. ``/usr/lib/llvm-{22,21,20,19,18,17}/bin`` (Debian/Ubuntu packages);
4. ``PATH`` (plain names and ``-NN`` suffixed names, newest first).

LLVM 17 or later is required (it knows gfx942).  When nothing is found a
:class:`~asmevo.errors.ToolNotFoundError` says how to install the tools.

Every tool call is bounded: :func:`run_process` gives it ``ASMEVO_TOOL_TIMEOUT`` seconds
(default :data:`DEFAULT_TOOL_TIMEOUT`; ``0`` means no limit), runs it in its own process
group and kills the whole group when the time is up
(:class:`~asmevo.errors.ToolTimeoutError`, exit 2, naming the limit).  A tool that
aborts (``LLVM ERROR: ...`` with a stack dump, or killed by a signal) raises
:class:`~asmevo.errors.ToolCrashedError` with the one line that says why, never the dump.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
import threading

from .errors import AsmevoError, ToolCrashedError, ToolFailedError, ToolNotFoundError, ToolTimeoutError

TRIPLE = "amdgcn-amd-amdhsa"
MCPU = "gfx942"
_VERSIONS = (22, 21, 20, 19, 18, 17)
INSTALL_HINT = ("install LLVM 17 or later with AMDGPU support, e.g. on Debian/Ubuntu: "
                "apt-get install llvm-19 lld-19, or set ASMEVO_LLVM_BIN to a directory "
                "holding llvm-mc, llvm-objdump and ld.lld")


#: Seconds an LLVM tool call may take (``ASMEVO_TOOL_TIMEOUT`` overrides; 0: no limit).
DEFAULT_TOOL_TIMEOUT = 120.0
TIMEOUT_ENV = "ASMEVO_TOOL_TIMEOUT"


def tool_timeout() -> float | None:
    """The time limit of one LLVM tool call in seconds (``None``: no limit).

    Raises:
        AsmevoError: ``ASMEVO_TOOL_TIMEOUT`` is not a number >= 0.
    """
    env = os.environ.get(TIMEOUT_ENV)
    if env is None or env.strip() == "":
        return DEFAULT_TOOL_TIMEOUT
    try:
        v = float(env)
    except ValueError:
        v = -1.0
    if not v >= 0 or v != v or v == float("inf"):
        raise AsmevoError(f"{TIMEOUT_ENV}={env!r}: expected a number of seconds >= 0 "
                          "(0: no limit)")
    return v or None


_CRASH_MARKS = ("PLEASE submit a bug report", "Stack dump:", "LLVM ERROR:")
_LLVM_ERROR = re.compile(r"^LLVM ERROR: (.*)$", re.M)


def crash_reason(stderr: str, returncode: int) -> str | None:
    """The one-line reason when a tool aborted rather than reporting a diagnostic
    (``LLVM ERROR: ...``, a stack dump, or death by a signal); ``None`` otherwise."""
    if returncode >= 0 and not any(m in stderr for m in _CRASH_MARKS):
        return None
    m = _LLVM_ERROR.search(stderr)
    if m:
        return m.group(1).strip()
    if returncode < 0:
        try:
            return f"killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    first = next((ln.strip() for ln in stderr.splitlines()
                  if ln.strip() and not ln.startswith(("PLEASE", "Stack dump", " #", "0.", "1."))),
                 "")
    return first or "crashed (stack dump)"


def run_process(argv: list[str], *, input: bytes | str | None = None, what: str | None = None,
                file: str | None = None, timeout: float | None = -1.0,
                cwd: str | None = None, stdout_file: str | None = None,
                stdout_fd: int | None = None) -> subprocess.CompletedProcess:
    """Run ``argv`` with captured output, bounded in time; return the completed process
    (whatever its exit status: the caller reads the diagnostics).

    ``stdout_file``: a path the tool's standard output goes to (read back into the result's
    ``stdout``); for megabytes of output (an objdump listing) a file costs a fraction of the
    CPU and time of a pipe, which wakes both processes for every 64 KiB.

    ``stdout_fd``: a descriptor (a pipe the caller reads while the tool runs) the tool's
    standard output goes to; the result's ``stdout`` is then ``None``.

    ``timeout``: seconds, ``None`` for no limit, default :func:`tool_timeout`.  The process
    runs in a new session (its own process group); on timeout the whole group is killed.

    Raises:
        ToolTimeoutError: it did not finish in time (``file``: the user's input, for the
            message); the message names the limit and ``ASMEVO_TOOL_TIMEOUT``.
        ToolFailedError: it could not be started.
    """
    if timeout is not None and timeout < 0:
        timeout = tool_timeout()
    text = isinstance(input, str)
    name = what or os.path.basename(argv[0])
    sink = None
    try:
        if stdout_file is not None:
            sink = open(stdout_file, "wb")
        proc = start_tool(argv, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                          stdout=stdout_fd if stdout_fd is not None
                          else subprocess.PIPE if sink is None else sink,
                          stderr=subprocess.PIPE, text=text, cwd=cwd)
    except OSError as e:
        raise ToolFailedError(f"cannot run {name}: {e.strerror or e}", file=file) from None
    finally:
        if sink is not None:
            sink.close()
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise ToolTimeoutError(
            f"{name} did not finish within {timeout:g} s and was stopped (the time limit of one "
            f"LLVM tool call; raise it with {TIMEOUT_ENV}=SECONDS, 0 for no limit)",
            file=file) from None
    except BaseException:
        _kill_group(proc)
        raise
    finally:
        tool_ended(proc)
    if stdout_file is not None:
        with open(stdout_file, "r" if text else "rb") as f:
            out = f.read()
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


# -- the tools running now: Ctrl-C and SIGTERM stop them -------------------------------------
#
# A tool leads its own session (its process group: a timeout kills what it started too), so
# the terminal's Ctrl-C does not reach it: asmevo must stop it.  Every tool is recorded from
# its start until it is reaped; :func:`stop_tools` kills and reaps the ones still running.
# A KeyboardInterrupt raised inside ``subprocess.Popen`` after the fork (or before the caller
# held the new process) left the tool running, unknown to anyone: :func:`start_tool` holds
# SIGINT and SIGTERM off until the tool is recorded.

_tools: dict = {}           # running tool (Popen) -> ident of the thread that started it
_tools_lock = threading.Lock()


class _SignalsHeld:
    """In the main thread: SIGINT and SIGTERM, when Python handles them, are recorded
    instead of acted on until :meth:`release`, which restores their handlers and raises
    the recorded signals again (their handlers then run).  :func:`signals_held` is the
    ``with`` form."""

    def __init__(self):
        self.old: dict = {}
        self.got: list = []
        if threading.current_thread() is not threading.main_thread():
            return          # (Python runs signal handlers in the main thread only)
        for s in (signal.SIGINT, signal.SIGTERM):
            h = signal.getsignal(s)
            if callable(h):
                self.old[s] = signal.signal(s, self._record)

    def _record(self, signum, frame) -> None:
        self.got.append(signum)

    def release(self) -> None:
        old, self.old = self.old, {}
        for s, h in old.items():
            signal.signal(s, h)
        got, self.got = self.got, []
        for s in dict.fromkeys(got):
            signal.raise_signal(s)


class signals_held:
    """``with signals_held(): ...``: a SIGINT or SIGTERM that comes during the body (e.g.
    starting a thread that will start a tool) acts when it ends (:class:`_SignalsHeld`)."""

    def __enter__(self):
        self.held = _SignalsHeld()
        return self

    def __exit__(self, *exc) -> None:
        self.held.release()


def start_tool(argv: list[str], **popen_kw) -> subprocess.Popen:
    """``subprocess.Popen(argv, start_new_session=True, **popen_kw)``, recorded as running
    (:func:`stop_tools`) before a SIGINT or SIGTERM can act in the caller; one that came
    meanwhile acts once it is recorded, after the tool is stopped.  The caller calls
    :func:`tool_ended` once it has reaped the tool.

    Raises:
        OSError: the tool could not be started.
    """
    held = _SignalsHeld()
    try:
        proc = subprocess.Popen(argv, start_new_session=True, **popen_kw)
    except BaseException:
        held.release()
        raise
    with _tools_lock:
        _tools[proc] = threading.get_ident()
    try:
        held.release()
    except BaseException:
        _kill_group(proc)
        tool_ended(proc)
        raise
    return proc


def tool_ended(proc: subprocess.Popen) -> None:
    """``proc`` (from :func:`start_tool`) was reaped: no longer running."""
    with _tools_lock:
        _tools.pop(proc, None)


def stop_tools(thread: int | None = None) -> None:
    """Kill (SIGKILL, with their process groups) and reap the LLVM tools still running that
    thread ``thread`` started (``None``: any thread): what Ctrl-C and SIGTERM do to the
    tools of a command they stop."""
    with _tools_lock:
        procs = [p for p, t in _tools.items() if thread is None or t == thread]
    for proc in procs:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(10)      # (not communicate: the thread that started it may be in it)
        except (subprocess.TimeoutExpired, OSError):
            pass
        tool_ended(proc)


class stopped_cleanly:
    """``with stopped_cleanly(): ...`` around a command's work: in the main thread a SIGTERM
    raises ``SystemExit(143)`` (128 + SIGTERM) instead of killing the process at once, so
    that ``finally`` blocks run (temporary files removed); when Ctrl-C or SIGTERM ends the
    body, the LLVM tools still running are killed and reaped (:func:`stop_tools`).  The
    previous SIGTERM handler is restored afterwards."""

    def __enter__(self):
        self.old = None
        if threading.current_thread() is threading.main_thread():
            try:
                self.old = signal.signal(signal.SIGTERM, _on_sigterm)
            except (ValueError, OSError):
                self.old = None
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self.old is not None:
            signal.signal(signal.SIGTERM, self.old)
        if isinstance(exc, (KeyboardInterrupt, Terminated)):
            stop_tools()


class Terminated(SystemExit):
    """``SystemExit(143)`` raised by SIGTERM (see :class:`stopped_cleanly`)."""


def _on_sigterm(signum, frame) -> None:
    raise Terminated(128 + signum)


#: seconds the main thread waits on a tool's thread or output at a time: a signal that comes
#: just before a blocking wait begins (Python runs its handler only between bytecodes) acts
#: within this time, not when the tool ends.  (Not for ``communicate``: a call retried after
#: its timeout no longer sends the rest of the input.)
WAIT_S = 0.1


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill ``proc``'s process group (it leads its own session) and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:    # (not communicate: a communicate cut short by Ctrl-C leaves it unusable)
        proc.wait(10)
    except (subprocess.TimeoutExpired, OSError):
        pass
    for f in (proc.stdin, proc.stdout, proc.stderr):
        try:
            if f is not None:
                f.close()
        except (OSError, ValueError):
            pass


def _candidate_dirs() -> list[str]:
    dirs = []
    env = os.environ.get("ASMEVO_LLVM_BIN")
    if env:
        dirs.append(env)
    dirs.append("/opt/rocm/llvm/bin")
    dirs.extend(f"/usr/lib/llvm-{v}/bin" for v in _VERSIONS)
    return dirs


def _version_ok(path: str) -> bool:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    m = re.search(r"(?:version|LLD) (\d+)\.", out)
    return bool(m) and int(m.group(1)) >= 17


@functools.cache
def find_tool(name: str) -> str:
    """Return the absolute path of LLVM tool ``name`` (e.g. ``"llvm-mc"``).

    Raises:
        ToolNotFoundError: no LLVM >= 17 copy of the tool was found.
    """
    env = os.environ.get("ASMEVO_LLVM_BIN")
    # /usr/lib/llvm-NN/bin holds LLVM NN (Debian/Ubuntu packaging), NN >= 17 by _VERSIONS:
    # no need to start the tool for --version (two of them per dis or asm command)
    versioned = {f"/usr/lib/llvm-{v}/bin" for v in _VERSIONS if v >= 17}
    for d in _candidate_dirs():
        p = os.path.join(d, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            if d == env or d in versioned or _version_ok(p):
                return p
    for cand in [name] + [f"{name}-{v}" for v in _VERSIONS]:
        p = shutil.which(cand)
        if p and _version_ok(p):
            return p
    raise ToolNotFoundError(f"cannot find {name} (LLVM >= 17); {INSTALL_HINT}")


def run_tool(name: str, args: list[str], *, input: bytes | str | None = None,
             what: str | None = None, timeout: float | None = -1.0,
             file: str | None = None, stdout_file: str | None = None,
             stdout_fd: int | None = None) -> subprocess.CompletedProcess:
    """Run LLVM tool ``name`` with ``args``, bounded by :func:`tool_timeout` (or
    ``timeout`` seconds; ``None``: no limit); return the completed process.

    Raises:
        ToolNotFoundError: the tool is missing.
        ToolTimeoutError: it ran past the time limit (killed with its process group).
        ToolCrashedError: it aborted (``LLVM ERROR``, a signal): the reason, not the dump.
        ToolFailedError: it exited non-zero (message = its stderr, prefixed by ``what``).
    """
    exe = find_tool(name)
    proc = run_process([exe, *args], input=input, what=what or name, file=file, timeout=timeout,
                       stdout_file=stdout_file, stdout_fd=stdout_fd)
    if proc.returncode != 0:
        err = proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode(errors="replace")
        why = crash_reason(err, proc.returncode)
        if why is not None:
            raise ToolCrashedError(f"{what or name} aborted: {why}", file=file)
        raise ToolFailedError(f"{what or name} failed:\n{err.strip()}", file=file)
    return proc


_SIZE_DIRECTIVE = re.compile(r"^([ \t]*\.size[ \t]+)([^,\n;]+?)[ \t]*,[ \t]*([^;\n#]*?)[ \t]*(?:[;#].*)?$",
                             re.M)
_LABEL_DEF = re.compile(r"^[ \t]*([A-Za-z_.$][\w.$]*):", re.M)
_COV_DIRECTIVE = re.compile(r"^([ \t]*\.amdhsa_code_object_version[ \t]+)(\S+)", re.M)


def _line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _absolute_size(expr: str, labels: set[str]) -> bool:
    """Whether a ``.size`` expression is one llvm-mc can evaluate to a constant: an integer, or
    the difference of two labels defined in the file (``.Lfunc_end0-vadd_f32``)."""
    e = expr.strip()
    if re.fullmatch(r"\(?\s*(?:0[xX][0-9a-fA-F]+|\d+)\s*\)?", e):
        return True
    m = re.fullmatch(r"\(?\s*([A-Za-z_.$][\w.$]*)\s*-\s*([A-Za-z_.$][\w.$]*)\s*\)?", e)
    return bool(m) and m.group(1) in labels and m.group(2) in labels


def explain_crash(tool: str, why: str, text: str | None, filename: str | None) -> AsmevoError:
    """The error for ``tool`` aborting with ``LLVM ERROR: why`` on assembly ``text`` (of
    ``filename``): located at the directive of the file that causes it when known
    (a ``.size`` whose expression is not absolute, an unsupported
    ``.amdhsa_code_object_version``), else naming the reason; never the stack dump."""
    from .errors import AsmSyntaxError
    if text is not None and "Size expression must be absolute" in why:
        labels = set(_LABEL_DEF.findall(text))
        for m in _SIZE_DIRECTIVE.finditer(text):
            if not _absolute_size(m.group(3), labels):
                line, col = _line_col(text, m.start(3))
                return AsmSyntaxError(
                    f".size {m.group(2).strip()}, {m.group(3)}: the size expression is not "
                    "absolute; expected a number or the difference of two labels defined in this "
                    f"file (llvm-mc aborts on it: LLVM ERROR: {why})", file=filename, line=line,
                    column=col)
    if text is not None and "Code Object Version" in why:
        m = _COV_DIRECTIVE.search(text)
        if m:
            line, col = _line_col(text, m.start(2))
            return AsmSyntaxError(f".amdhsa_code_object_version {m.group(2)}: not a version "
                                  f"{tool} supports; expected 4, 5 or 6 ({tool} aborts on it: "
                                  f"LLVM ERROR: {why})", file=filename, line=line, column=col)
    return ToolCrashedError(f"{tool} aborted on this input: LLVM ERROR: {why} (an LLVM failure "
                            "triggered by the file, reported without its stack dump)",
                            file=filename)
