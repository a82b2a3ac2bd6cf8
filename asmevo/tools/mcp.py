"""``asmevo mcp``: serve asmevo's tools to an agent over the Model Context Protocol.

stdio by default (what MCP clients start as a subprocess); ``--transport http`` serves
streamable HTTP at ``http://HOST:PORT/mcp``, bound to 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import sys


def add_arguments(p) -> None:
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                   help="stdio (default) or http (streamable HTTP at /mcp)")
    p.add_argument("--host", default="127.0.0.1", help="HTTP address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000)")
    p.add_argument("--run-dir", default=None,
                   help="directory of the lineage stores (default: a new temporary directory); "
                        "the same store `asmevo evolve --out DIR --resume` uses")


def run(args) -> int:
    from ..errors import AsmevoError
    from ..mcp.server import _import_mcp, build_server
    _import_mcp()          # a clear message (exit 2) when the optional SDK is missing
    if not 0 < args.port < 65536:
        raise AsmevoError(f"--port {args.port} is not a TCP port")
    srv = build_server(run_dir=args.run_dir)
    if args.transport == "stdio":
        srv.run()
    else:
        if args.host not in ("127.0.0.1", "localhost", "::1"):
            print(f"asmevo mcp: serving on {args.host}:{args.port}: anyone who can reach it can "
                  "read and write files as this user", file=sys.stderr)
        srv.run(transport="streamable-http", host=args.host, port=args.port)
    return 0
