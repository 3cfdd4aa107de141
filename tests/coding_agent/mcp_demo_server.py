"""A real MCP server from the official Python SDK (``MCPServer``, FastMCP in mcp 1.x), for the MCP tool tests.

``python mcp_demo_server.py stdio`` speaks over stdin/stdout; ``python mcp_demo_server.py http PORT`` serves
streamable HTTP on 127.0.0.1:PORT/mcp, and answers only a request with ``Authorization: Bearer PORT`` when
``--auth`` follows (the config's headers reach the server).
"""

from __future__ import annotations

import sys

try:
    from mcp.server.mcpserver import MCPServer as Server  # mcp 2.x
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server
from mcp.types import ToolAnnotations

server = Server("srv")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers and return the sum."""
    return a + b


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def shout(text: str) -> str:
    """The text in capitals."""
    print(f"shouting {len(text)} characters", file=sys.stderr)
    return text.upper()


@server.tool()
def refuse(reason: str) -> str:
    """Always fails, saying why."""
    raise ValueError(f"refused: {reason}")


def _http(port: int, auth: bool) -> None:
    import uvicorn

    app = server.streamable_http_app()
    if auth:
        inner = app

        async def app(scope, receive, send):  # the config's headers must reach the server
            headers = dict(scope.get("headers") or [])
            if scope["type"] == "http" and headers.get(b"authorization") != f"Bearer {port}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"no"})
                return
            await inner(scope, receive, send)

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        _http(int(sys.argv[2]), "--auth" in sys.argv)
