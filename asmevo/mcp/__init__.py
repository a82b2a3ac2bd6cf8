"""asmevo's tools for agents over MCP (``asmevo mcp``): :mod:`.session` holds the tools as
plain methods, :mod:`.server` declares them to the MCP SDK (optional extra ``asmevo[mcp]``)."""
