"""The MCP endpoint: the server, its authentication, the tool-call pipeline and the stdio bridge.

Only this package imports the MCP SDK; importing the package itself does not (the command line
reads the paths below without paying for the SDK).
"""

MCP_PATH = "/mcp"
SSE_PATH = "/sse"
