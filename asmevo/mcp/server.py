"""asmevo's tools over the Model Context Protocol (``mcp`` package, version 2: ``MCPServer``).

Every tool is a method of :class:`asmevo.mcp.session.Session`; this module only declares
them to MCP.  Calls run one at a time on a single worker thread (the session's lineage stores
are SQLite connections of that thread), so a long verification never blocks the transport.
Bad input (an unknown id, a malformed edit, a verifier failure) comes back as an MCP tool
error carrying the command line's message; the server keeps serving.

Resources: ``asmevo://kernel/{kernel_id}/asm`` and ``asmevo://candidate/{candidate_id}/asm``
(assembly text), ``asmevo://docs/{name}`` (passes, verify, evolve, perf, devices, mcp).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os

from ..errors import AsmevoError
from .session import Session

INSTALL = "asmevo mcp needs the MCP SDK: pip install 'asmevo[mcp]' (package mcp >= 2)"
DOCS = ("passes", "verify", "evolve", "perf", "devices", "mcp")
_DOC_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "docs")

INSTRUCTIONS = """asmevo: optimise gfx942 (MI300X) machine code with a verifier as the gate.
Typical session: load_kernel(path, harness) -> profile(kernel_id) for the hot windows ->
listing(kernel_id, start, end) for the instruction indices -> propose_edit(kernel_id,
edit={"edits":[{"from": i, "to": j, "asm": [...]}]}, hypothesis=...) -> read the verdict
(status, reasons, counterexample) and the estimated speed-up -> lineage()/best() ->
export(candidate_id, path). Timings are the timing model's estimates unless stated."""


def _import_mcp():
    try:
        from mcp.server import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:
        raise AsmevoError(INSTALL) from None
    return MCPServer, ToolError


def build_server(session: Session | None = None, *, run_dir: str | None = None):
    """An ``MCPServer`` serving ``session`` (a new one on ``run_dir`` when None)."""
    MCPServer, ToolError = _import_mcp()
    from .. import __version__ as version
    s = session or Session(run_dir)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="asmevo-mcp")
    srv = MCPServer("asmevo", version=str(version), instructions=INSTRUCTIONS)
    srv.asmevo_session = s

    async def call(fn, *a, **kw):
        def body():
            try:
                return fn(*a, **kw)
            except AsmevoError as e:
                raise ToolError(str(e)) from None
            except ToolError:
                raise
            except Exception as e:   # a bug: still a tool error, never a dead server
                raise ToolError(f"internal error: {type(e).__name__}: {e} (please report)") from None
        return await asyncio.wrap_future(pool.submit(body))

    @srv.tool()
    async def load_kernel(path: str, harness: str | None = None, entry: str | None = None) -> dict:
        """Load a gfx942 code object (.co/.hsaco) or assembly (.s) and, optionally, its harness
        (launch description JSON; a corpus manifest with `entry`). Returns a kernel id, the
        kernels with instruction counts and occupancy (waves per SIMD)."""
        return await call(s.load_kernel, path, harness, entry)

    @srv.tool()
    async def listing(kernel_id: str, start: int = 0, end: int | None = None) -> dict:
        """Instructions start..end (end exclusive, at most 2000) of a kernel or candidate id,
        each with the index and pc (bytes from the kernel start) that edits use."""
        return await call(s.listing, kernel_id, start, end)

    @srv.tool()
    async def analyze(kernel_id: str, which: list[str] | None = None) -> dict:
        """Static findings: waitcnt dependencies, hazards (missing wait states), register
        budget and occupancy. `which`: some of cfg, liveness, waitcnt, regs, hazards."""
        return await call(s.analyze, kernel_id, which)

    @srv.tool()
    async def profile(kernel_id: str, top: int = 5) -> dict:
        """Estimated cycles (timing model of an MI300X CU, `estimated: true`), occupancy,
        bottleneck class and the `top` hot windows with their per-instruction rows."""
        return await call(s.profile, kernel_id, top)

    @srv.tool()
    async def propose_edit(kernel_id: str, hypothesis: str, edit: dict | None = None,
                           asm: str | None = None, pipeline: str | None = None,
                           parent: str | None = None) -> dict:
        """Propose one change to the kernel (default parent: the lineage's best candidate).
        Give exactly one of: `edit` (window-edit object: {"edits": [{"from": index, "to":
        index (exclusive), "expect": [...]?, "asm": [lines]}]}), `asm` (the whole edited
        assembly), `pipeline` (pass pipeline, opt -passes= syntax). It is built, verified
        against the original (static, z3, differential testing) and timed; the verdict
        (status, reasons, counterexample) and the estimated speed-ups against the original
        and the parent come back, and it is stored in the lineage."""
        return await call(s.propose_edit, kernel_id, edit, asm, pipeline, hypothesis, parent)

    @srv.tool()
    async def verify(a: str, b: str, level: str = "all") -> dict:
        """The verifier's verdict on b against a (kernel or candidate ids); level: static,
        z3, diff or all."""
        return await call(s.verify, a, b, level)

    @srv.tool()
    async def run(kernel_id: str, seed: int = 0) -> dict:
        """Run a kernel or candidate in the embedded emulator on the harness's inputs
        (seeded); outputs summarised, with the harness's numpy reference check."""
        return await call(s.run, kernel_id, seed)

    @srv.tool()
    async def isa(mnemonic: str) -> dict:
        """The gfx942 ISA-table record of a mnemonic, its semantics summary and the hazard
        rules (with their LLVM sources) that name it."""
        return await call(s.isa, mnemonic)

    @srv.tool()
    async def lineage(kernel_id: str | None = None, top: int = 10) -> dict:
        """Stored candidates, best first, with operator, hypothesis, verdict and estimated
        cycles (shared with `asmevo evolve` runs on the same run directory)."""
        return await call(s.lineage, kernel_id, top)

    @srv.tool()
    async def best(kernel_id: str | None = None) -> dict:
        """The best accepted candidate of each lineage, with its verification receipt."""
        return await call(s.best, kernel_id)

    @srv.tool()
    async def export(candidate_id: str, path: str) -> dict:
        """Write a candidate as a code object (in-place patch of the original when every
        change fits, else an ABI-preserving rebuild); never over an input."""
        return await call(s.export, candidate_id, path)

    @srv.resource("asmevo://kernel/{kernel_id}/asm", mime_type="text/plain")
    async def kernel_asm(kernel_id: str) -> str:
        """Assembly text of a loaded kernel."""
        return await call(s.assembly, kernel_id)

    @srv.resource("asmevo://candidate/{candidate_id}/asm", mime_type="text/plain")
    async def candidate_asm(candidate_id: str) -> str:
        """Assembly text of a stored candidate."""
        return await call(s.assembly, candidate_id)

    @srv.resource("asmevo://docs/{name}", mime_type="text/markdown")
    async def docs(name: str) -> str:
        """asmevo's documentation: passes, verify, evolve, perf, devices, mcp."""
        if name not in DOCS:
            raise ToolError(f"no document {name!r}; one of {', '.join(DOCS)}")
        path = os.path.join(_DOC_DIR, f"{name}.md")
        if not os.path.exists(path):
            raise ToolError(f"docs/{name}.md is not installed with this copy of asmevo")
        with open(path, encoding="utf-8") as f:
            return f.read()

    return srv
