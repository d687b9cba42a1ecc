"""An MCP server written with the official MCP Python SDK (mcp==2.3.0), for
the tests of dashfloat's MCP client. Run it with the venv's python that
`scripts/mcp-servers install` prints:

    python sdk_server.py --transport stdio
    python sdk_server.py --transport http --port N     # 0: any free port

Over HTTP it serves Streamable HTTP on 127.0.0.1:N at /mcp and, once it
accepts connections, prints exactly one line to stdout:
`listening http://127.0.0.1:N/mcp` (the real port when N is 0).

It uses the SDK's low-level `Server` (constructor `on_*` handlers taking
`(ctx, params)`), which can do what the high-level MCPServer cannot:
paginate tools/list with cursors, send tools/list_changed, report progress.

What a test needs to check is appended to the file named by $MCP_TEST_LOG,
one JSON object a line (see log events below). Environment:
  MCP_TEST_LOG        the log file (nothing is logged without it)
  MCP_TEST_PAGE_SIZE  tools per tools/list page (default: all in one page)
  MCP_TEST_STUBBORN=1 ignore SIGTERM, and stay alive after stdin closes,
                      so only SIGKILL ends the process

Log events (every one also has "pid"):
  {"event":"started","pid","cwd","transport","argv"}
  {"event":"request","method","request_id","params"}   every request received
  {"event":"notification","method","params"}         every notification received
  {"event":"call","tool","arguments","request_id"}   each tools/call
  {"event":"progress","request_id","progress","total","message"}  each one sent
  {"event":"cancelled","request_id","tool"}   the client's notifications/cancelled
                                              interrupted the call
  {"event":"interrupted","request_id","tool"}  the call was torn down otherwise
                                              (connection closed, shutdown)
  {"event":"list_changed_sent","tool"}         after add_tool's notification
  {"event":"crash","exit_code":3}              just before crash exits
  {"event":"sigterm"}                          SIGTERM received
  {"event":"stdin_closed"}                     stdio: the client closed stdin
  {"event":"stopped"}                          about to exit normally
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import socket
import sys
import threading
import zlib
from typing import Any

import anyio
import mcp.types as types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

LOG_PATH = os.environ.get("MCP_TEST_LOG")
_log_lock = threading.Lock()


def log(event: str, **fields: Any) -> None:
    """Append one JSON line to $MCP_TEST_LOG with a single write (O_APPEND)."""
    if not LOG_PATH:
        return
    record = {"event": event, "pid": os.getpid(), **fields}
    line = (json.dumps(record, default=repr, separators=(",", ":")) + "\n").encode()
    with _log_lock:
        fd = os.open(LOG_PATH, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


def tiny_png() -> bytes:
    """A real 2x2 RGBA PNG (red, green / blue, white), built here."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    rows = [b"\x00" + bytes([255, 0, 0, 255, 0, 255, 0, 255]), b"\x00" + bytes([0, 0, 255, 255, 255, 255, 255, 255])]
    ihdr = (2).to_bytes(4, "big") + (2).to_bytes(4, "big") + bytes([8, 6, 0, 0, 0])
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"".join(rows)))
        + chunk(b"IEND", b"")
    )


def tiny_wav() -> bytes:
    """A real WAV file: 8 kHz, 8-bit mono, 100 samples of silence."""
    samples = bytes([128]) * 100
    fmt = (1).to_bytes(2, "little") + (1).to_bytes(2, "little") + (8000).to_bytes(4, "little")
    fmt += (8000).to_bytes(4, "little") + (1).to_bytes(2, "little") + (8).to_bytes(2, "little")
    body = b"WAVE" + b"fmt " + len(fmt).to_bytes(4, "little") + fmt + b"data" + len(samples).to_bytes(4, "little")
    body += samples
    return b"RIFF" + len(body).to_bytes(4, "little") + body


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def obj_schema(properties: dict[str, Any] | None = None, required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties or {}}
    if required:
        schema["required"] = required
    return schema


TOOLS: list[types.Tool] = [
    types.Tool(
        name="echo",
        description="Answers with the text it is given.",
        input_schema=obj_schema({"text": {"type": "string", "description": "What to answer"}}, ["text"]),
    ),
    types.Tool(
        name="read_only_echo",
        description="Answers with the text it is given; annotated read-only.",
        input_schema=obj_schema({"text": {"type": "string"}}, ["text"]),
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    types.Tool(
        name="all_content",
        description="Answers with one content block of every type, and structured content.",
        input_schema=obj_schema(),
        output_schema=obj_schema({"answer": {"type": "integer"}}, ["answer"]),
    ),
    types.Tool(
        name="fail",
        description="Answers with isError true and the message.",
        input_schema=obj_schema({"message": {"type": "string"}}, ["message"]),
    ),
    types.Tool(
        name="slow",
        description="Takes `seconds`, sending `steps` progress notifications, then answers done.",
        input_schema=obj_schema({"seconds": {"type": "number"}, "steps": {"type": "integer"}}, ["seconds", "steps"]),
    ),
    types.Tool(
        name="add_tool",
        description="Adds the tool late_tool and sends notifications/tools/list_changed.",
        input_schema=obj_schema(),
    ),
    types.Tool(name="crash", description="Exits the process (code 3) mid-call.", input_schema=obj_schema()),
    types.Tool(name="hang", description="Never answers.", input_schema=obj_schema()),
    types.Tool(
        name="big",
        description="Answers with one text of `bytes` bytes of 'x'.",
        input_schema=obj_schema({"bytes": {"type": "integer", "minimum": 0}}, ["bytes"]),
    ),
    types.Tool(
        name="env",
        description="Answers with the value of an environment variable, or (unset).",
        input_schema=obj_schema({"name": {"type": "string"}}, ["name"]),
    ),
    types.Tool(name="cwd", description="Answers with the server's working directory.", input_schema=obj_schema()),
]
LATE_TOOL = types.Tool(name="late_tool", description="Added by add_tool; answers late.", input_schema=obj_schema())


def text_result(text: str, *, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)


def page_size() -> int | None:
    raw = os.environ.get("MCP_TEST_PAGE_SIZE")
    if not raw:
        return None
    size = int(raw)
    if size < 1:
        raise SystemExit(f"MCP_TEST_PAGE_SIZE must be >= 1, not {raw!r}")
    return size


async def list_tools(ctx: ServerRequestContext, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    size = page_size()
    cursor = params.cursor if params is not None else None
    start = 0
    if cursor is not None:
        # Cursors are opaque to the client; here they are "offset:N".
        try:
            kind, _, offset = cursor.partition(":")
            start = int(offset)
            if kind != "offset" or not 0 <= start <= len(TOOLS):
                raise ValueError
        except ValueError:
            raise MCPError(code=types.INVALID_PARAMS, message=f"invalid cursor {cursor!r}") from None
    if size is None:
        return types.ListToolsResult(tools=TOOLS[start:])
    end = start + size
    next_cursor = f"offset:{end}" if end < len(TOOLS) else None
    return types.ListToolsResult(tools=TOOLS[start:end], next_cursor=next_cursor)


def progress_token(ctx: ServerRequestContext) -> Any:
    meta = (ctx.params or {}).get("_meta")
    return meta.get("progressToken") if isinstance(meta, dict) else None


async def report(ctx: ServerRequestContext, progress: float, total: float, message: str) -> None:
    # A no-op in the SDK when the request carried no progressToken.
    await ctx.session.report_progress(progress, total, message)
    if progress_token(ctx) is not None:
        log("progress", request_id=ctx.request_id, progress=progress, total=total, message=message)


def require(args: dict[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    value = args.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ValueError(f"argument {name!r} is required and must be {getattr(kind, '__name__', kind)}")
    return value


async def run_tool(ctx: ServerRequestContext, name: str, args: dict[str, Any]) -> types.CallToolResult:
    if name in ("echo", "read_only_echo"):
        return text_result(require(args, "text", str))
    if name == "all_content":
        return types.CallToolResult(
            content=[
                types.TextContent(text="Every content type follows."),
                types.ImageContent(data=b64(tiny_png()), mime_type="image/png"),
                types.AudioContent(data=b64(tiny_wav()), mime_type="audio/wav"),
                types.ResourceLink(
                    uri="file:///tmp/example.txt", name="example.txt", mime_type="text/plain", size=1234
                ),
                types.EmbeddedResource(
                    resource=types.TextResourceContents(uri="mem://notes", mime_type="text/plain", text="Some notes.")
                ),
                types.EmbeddedResource(
                    resource=types.BlobResourceContents(
                        uri="mem://blob", mime_type="application/octet-stream", blob=b64(bytes(range(16)))
                    )
                ),
            ],
            structured_content={"answer": 42},
        )
    if name == "fail":
        return text_result(require(args, "message", str), is_error=True)
    if name == "slow":
        seconds = float(require(args, "seconds", (int, float)))
        steps = require(args, "steps", int)
        if steps <= 0:
            await anyio.sleep(seconds)
        for i in range(1, steps + 1):
            await anyio.sleep(seconds / steps)
            await report(ctx, i, steps, f"step {i} of {steps}")
        return text_result("done")
    if name == "add_tool":
        if LATE_TOOL not in TOOLS:
            TOOLS.append(LATE_TOOL)
        # Sent on this request's channel: over stdio that is the one pipe, over
        # Streamable HTTP the POST's SSE stream, which a client always reads
        # (the standalone GET stream is optional for it).
        await ctx.session.send_notification(types.ToolListChangedNotification(), related_request_id=ctx.request_id)
        log("list_changed_sent", tool="late_tool")
        return text_result("added")
    if name == "late_tool" and LATE_TOOL in TOOLS:
        return text_result("late")
    if name == "crash":
        log("crash", exit_code=3)
        os._exit(3)
    if name == "hang":
        await anyio.sleep_forever()
    if name == "big":
        size = require(args, "bytes", int)
        if size < 0:
            raise ValueError("argument 'bytes' must be >= 0")
        return text_result("x" * size)
    if name == "env":
        return text_result(os.environ.get(require(args, "name", str), "(unset)"))
    if name == "cwd":
        return text_result(os.getcwd())
    raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")


async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    log("call", tool=params.name, arguments=args, request_id=ctx.request_id)
    try:
        return await run_tool(ctx, params.name, args)
    except ValueError as exc:
        # Bad arguments are a tool error the model can read and correct.
        return text_result(f"{params.name}: {exc}", is_error=True)
    except anyio.get_cancelled_exc_class():
        # The SDK (default peer_cancel_mode "interrupt") cancels the handler's
        # scope when notifications/cancelled names its request: the handler
        # sees asyncio.CancelledError. Its dispatch context's cancel_requested
        # event tells that apart from a teardown (connection closed, shutdown).
        outbound = getattr(ctx.session, "_request_outbound", None)
        event = getattr(outbound, "cancel_requested", None)
        by_peer = event is not None and event.is_set()
        log("cancelled" if by_peer else "interrupted", request_id=ctx.request_id, tool=params.name)
        raise


class LogInbound:
    """Server middleware: logs every request and notification received."""

    async def __call__(self, ctx: ServerRequestContext, call_next: Any) -> Any:
        if ctx.request_id is None:
            log("notification", method=ctx.method, params=ctx.params)
        else:
            log("request", method=ctx.method, request_id=ctx.request_id, params=ctx.params)
        return await call_next(ctx)


class TestServer(Server):
    """Advertises tools.listChanged on every transport: the Streamable HTTP
    session manager calls create_initialization_options() with no
    NotificationOptions (there is no parameter to pass them), so the default
    has to be changed here."""

    def create_initialization_options(self, notification_options=None, *args, **kwargs):  # type: ignore[no-untyped-def]
        if notification_options is None:
            notification_options = NotificationOptions(tools_changed=True)
        return super().create_initialization_options(notification_options, *args, **kwargs)


def make_server() -> Server:
    server = TestServer(
        "dashfloat-test-sdk-server",
        version="1.0.0",
        instructions="A test server for dashfloat's MCP client.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.middleware.insert(0, LogInbound())
    return server


def stubborn() -> bool:
    return os.environ.get("MCP_TEST_STUBBORN") == "1"


def on_sigterm(_signum: int, _frame: Any) -> None:
    log("sigterm")
    if not stubborn():
        os._exit(128 + signal.SIGTERM)


async def serve_stdio() -> None:
    server = make_server()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
    log("stdin_closed")
    if stubborn():
        while True:
            await anyio.sleep(3600)


async def serve_http(port: int) -> None:
    import uvicorn

    server = make_server()
    app = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    # The socket is bound here, so port 0 gives the real port to print.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    real_port = sock.getsockname()[1]
    # No access log: uvicorn writes it to stdout, which carries only the line below.
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    userver = uvicorn.Server(config)

    async def announce() -> None:
        while not userver.started:
            await anyio.sleep(0.01)
        sys.stdout.write(f"listening http://127.0.0.1:{real_port}/mcp\n")
        sys.stdout.flush()

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await userver.serve(sockets=[sock])
        tg.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transport", choices=["stdio", "http"], required=True)
    parser.add_argument("--port", type=int, default=0, help="HTTP port on 127.0.0.1 (0: any free one)")
    opts = parser.parse_args()
    page_size()  # fail early on a bad value
    signal.signal(signal.SIGTERM, on_sigterm)
    log("started", cwd=os.getcwd(), transport=opts.transport, argv=sys.argv)
    # A line on stderr, which a client must keep off the screen (dashfloat
    # keeps it in its --log file).
    print(f"sdk_server: started on {opts.transport}", file=sys.stderr, flush=True)
    if opts.transport == "stdio":
        anyio.run(serve_stdio)
    else:
        anyio.run(serve_http, opts.port)
    log("stopped")


if __name__ == "__main__":
    main()
