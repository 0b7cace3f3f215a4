"""Independent MCP client (the PyPI `mcp` SDK) for micro-rag-mcp.

Usage: python3 pyclient.py BINARY DATA_FOLDER QUERY [SERVER_FLAG...]

Starts the server over stdio, lists its tools, waits for the initial index
by repeating a search, reads around the first hit through resources, lists
the documents, calls reindex with a progress callback, and prints one JSON
object on stdout for the Go test to check.
"""

import asyncio
import json
import sys
import time

from mcp import ClientSession, StdioServerParameters, types
from mcp.shared import exceptions

# The SDK renamed McpError to MCPError in its 2.x series.
MCPError = getattr(exceptions, "MCPError", None) or getattr(exceptions, "McpError")
from mcp.client.stdio import stdio_client


def field(obj, snake, camel):
    return getattr(obj, snake, None) if hasattr(obj, snake) else getattr(obj, camel, None)


def text_of(result):
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def main(binary, folder, query, extra):
    params = StdioServerParameters(
        command=binary,
        args=["--data-folder", folder, "--title", "py-docs",
              "--inst", "Answers from the team docs.\nCite paths."] + extra,
    )
    out = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server_name"] = init.server_info.name if hasattr(init, "server_info") else init.serverInfo.name
            out["instructions"] = init.instructions
            tools = await session.list_tools()
            out["tools"] = sorted(t.name for t in tools.tools)
            out["search_required"] = next(
                t for t in tools.tools if t.name == "search").input_schema["required"] \
                if hasattr(tools.tools[0], "input_schema") else next(
                t for t in tools.tools if t.name == "search").inputSchema["required"]

            deadline = time.monotonic() + 90
            while True:
                res = await session.call_tool("search", {"query": query, "top_k": 3})
                structured = getattr(res, "structured_content", None) or getattr(res, "structuredContent", None)
                is_error = getattr(res, "is_error", None) or getattr(res, "isError", False)
                if is_error:
                    raise SystemExit("search failed: " + text_of(res))
                if structured and structured["results"]:
                    out["search"] = structured
                    out["search_text"] = text_of(res)
                    break
                if time.monotonic() > deadline:
                    raise SystemExit("no search results within 90 s")
                await asyncio.sleep(0.5)

            # Read-around through resources: the links of the search result,
            # the document without the fragment, the listing, a bad URI.
            links = [c for c in res.content if getattr(c, "type", "") == "resource_link"]
            out["links"] = [str(link.uri) for link in links]
            read = await session.read_resource(out["links"][0])
            out["read_uri"] = str(read.contents[0].uri)
            out["read_text"] = read.contents[0].text
            doc = await session.read_resource(out["links"][0].split("#")[0])
            out["doc_text"] = doc.contents[0].text
            listed, cursor = [], None
            while True:
                page = await session.list_resources(
                    params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
                listed += [r.name for r in page.resources]
                cursor = field(page, "next_cursor", "nextCursor")
                if not cursor:
                    break
            out["listed"] = listed
            templates = await session.list_resource_templates()
            out["templates"] = sorted(field(t, "uri_template", "uriTemplate") for t in templates.resource_templates) \
                if hasattr(templates, "resource_templates") else sorted(t.uriTemplate for t in templates.resourceTemplates)
            try:
                await session.read_resource("micro-rag://py-docs/no/such/file.md")
                out["bad_uri_error"] = ""
            except MCPError as e:
                out["bad_uri_error"] = str(e)

            progress = []

            async def on_progress(p, total, message):
                progress.append(message)

            while True:
                res = await session.call_tool("reindex", {"force": False}, progress_callback=on_progress)
                # The server's own first reindex may still hold the lock.
                if "busy:" not in text_of(res) or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.5)
            out["reindex"] = getattr(res, "structured_content", None) or getattr(res, "structuredContent", None)
            out["reindex_error"] = bool(getattr(res, "is_error", None) or getattr(res, "isError", False))

            res = await session.call_tool("search", {"query": query, "top_k": 99})
            out["bad_top_k_error"] = bool(getattr(res, "is_error", None) or getattr(res, "isError", False))
            out["bad_top_k_text"] = text_of(res)
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]))
