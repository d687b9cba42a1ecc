"""Self-check of the MCP test servers, and a description of them by example.

    PY=$(scripts/mcp-servers install | sed -n 's/^python=//p')
    $PY tests/mcp/servers/check.py

With the official SDK's client (mcp==2.3.0) it starts sdk_server.py over
stdio and over Streamable HTTP and checks each tool as its docstring says:
pagination with MCP_TEST_PAGE_SIZE=2, progress for `slow`, cancellation
logged, list_changed after `add_tool`, a crash ending the connection. With
raw JSON-RPC it checks which protocol versions sdk_server.py negotiates, and
starts hostile.py in every mode far enough to see its misbehaviour. It lists
server-everything's tools through the `everything=` line of
scripts/mcp-servers. Prints one line per check and `N passed, M failed`;
exits 1 when any failed. dashfloat's Rust tests do the real testing.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SDK_SERVER = str(HERE / "sdk_server.py")
HOSTILE = str(HERE / "hostile.py")
PY = sys.executable
TMP = Path(tempfile.mkdtemp(prefix="mcp-check-"))

results: list[tuple[str, bool, str]] = []


def check(name: str, ok: bool, detail: Any = "") -> bool:
    results.append((name, bool(ok), "" if ok else str(detail)[:500]))
    print(f"{'ok  ' if ok else 'FAIL'} {name}{'' if ok else ': ' + str(detail)[:500]}", flush=True)
    return bool(ok)


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def wait_for_event(path: Path, pred: Any, timeout: float = 5.0) -> dict[str, Any] | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for event in read_log(path):
            if pred(event):
                return event
        await anyio.sleep(0.05)
    return None


def texts(result: types.CallToolResult) -> list[str]:
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


# --- sdk_server.py through the SDK's client -----------------------------------

EXPECTED_TOOLS = {
    "echo", "read_only_echo", "all_content", "fail", "slow", "add_tool",
    "crash", "hang", "big", "env", "cwd",
}


class HttpServer:
    """sdk_server.py --transport http --port 0, its URL read from its one stdout line."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [PY, SDK_SERVER, "--transport", "http", "--port", "0"],
            stdout=subprocess.PIPE, env={**os.environ, **env}, cwd=cwd, text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening http://127.0.0.1:") or not line.endswith("/mcp"):
            self.proc.kill()
            raise RuntimeError(f"unexpected first line from the HTTP server: {line!r}")
        self.url = line.removeprefix("listening ")
        self.first_line = line

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        return self.proc.wait(timeout=10)


def sdk_params(env: dict[str, str], cwd: Path) -> StdioServerParameters:
    # stdio_client merges env over a minimal default environment, not ours.
    return StdioServerParameters(command=PY, args=[SDK_SERVER, "--transport", "stdio"], env=env, cwd=str(cwd))


async def check_sdk_server(transport: str) -> None:
    tag = f"sdk/{transport}"
    log = TMP / f"sdk-{transport}.log"
    cwd = TMP / f"cwd-{transport}"
    cwd.mkdir()
    env = {"MCP_TEST_LOG": str(log), "MCP_TEST_PAGE_SIZE": "2", "CHECK_VAR": "hello from the environment"}
    http: HttpServer | None = None
    if transport == "http":
        http = HttpServer(env, cwd)
        check(f"{tag}: prints 'listening http://127.0.0.1:N/mcp'", True)
        server: Any = http.url
    else:
        server = sdk_params(env, cwd)

    notifications: list[Any] = []

    async def on_message(message: Any) -> None:
        notifications.append(message)

    try:
        with anyio.fail_after(60):
            async with Client(server, mode="legacy", message_handler=on_message, cache=None) as client:
                await check_session(tag, client, log, cwd, notifications)
        started = [e for e in read_log(log) if e["event"] == "started"]
        check(f"{tag}: logs started with pid and cwd", started and started[0]["cwd"] == str(cwd), started)
        inits = [e for e in read_log(log) if e["event"] == "request" and e["method"] == "initialize"]
        check(f"{tag}: logs the initialize request", inits and "protocolVersion" in inits[0]["params"], inits)
        if http is None:
            stopped = await wait_for_event(log, lambda e: e["event"] == "stopped")
            check(f"{tag}: exits when its stdin closes (logs stdin_closed, stopped)", stopped, read_log(log)[-3:])
        await check_crash(tag, server if http is None else None, env, cwd, log)
    finally:
        if http is not None:
            http.stop()


async def check_session(tag: str, client: Client, log: Path, cwd: Path, notifications: list[Any]) -> None:
    check(f"{tag}: negotiates 2025-11-25 (the SDK client's handshake default)",
          client.protocol_version == "2025-11-25", client.protocol_version)
    caps = client.server_capabilities
    check(f"{tag}: advertises tools.listChanged", caps.tools is not None and caps.tools.list_changed, caps)

    # Pagination: 11 tools, 2 a page.
    pages: list[list[types.Tool]] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        pages.append(page.tools)
        cursor = page.next_cursor
        if cursor is None or len(pages) > 20:
            break
    names = [t.name for p in pages for t in p]
    check(f"{tag}: tools/list pages of MCP_TEST_PAGE_SIZE=2 with nextCursor",
          len(pages) == 6 and all(len(p) <= 2 for p in pages), [len(p) for p in pages])
    check(f"{tag}: lists the 11 tools", set(names) == EXPECTED_TOOLS and len(names) == 11, names)
    by_name = {t.name: t for p in pages for t in p}
    ro = by_name["read_only_echo"].annotations
    check(f"{tag}: read_only_echo is annotated readOnlyHint", ro is not None and ro.read_only_hint is True, ro)

    r = await client.call_tool("echo", {"text": "héllo"})
    check(f"{tag}: echo", texts(r) == ["héllo"] and not r.is_error, r)
    r = await client.call_tool("read_only_echo", {"text": "ro"})
    check(f"{tag}: read_only_echo", texts(r) == ["ro"], r)
    r = await client.call_tool("echo", {})
    check(f"{tag}: echo without text is a tool error", r.is_error, r)

    r = await client.call_tool("all_content", {})
    kinds = [c.type for c in r.content]
    check(f"{tag}: all_content has every content type",
          kinds == ["text", "image", "audio", "resource_link", "resource", "resource"], kinds)
    image, audio, link, res_text, res_blob = r.content[1:]
    check(f"{tag}: all_content's image is a PNG",
          image.mime_type == "image/png" and base64.b64decode(image.data).startswith(b"\x89PNG\r\n\x1a\n"), image)
    check(f"{tag}: all_content's audio is a WAV",
          audio.mime_type == "audio/wav" and base64.b64decode(audio.data)[:4] == b"RIFF", audio)
    check(f"{tag}: all_content's resource_link",
          str(link.uri) == "file:///tmp/example.txt" and link.size == 1234 and link.mime_type == "text/plain", link)
    check(f"{tag}: all_content's embedded text and blob resources",
          str(res_text.resource.uri) == "mem://notes" and res_text.resource.text
          and str(res_blob.resource.uri) == "mem://blob" and base64.b64decode(res_blob.resource.blob), r.content[4:])
    check(f"{tag}: all_content's structuredContent", r.structured_content == {"answer": 42}, r.structured_content)

    r = await client.call_tool("fail", {"message": "it broke"})
    check(f"{tag}: fail is isError with the message", r.is_error and texts(r) == ["it broke"], r)

    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append((p, total, message))

    r = await client.call_tool("slow", {"seconds": 0.3, "steps": 3}, progress_callback=on_progress)
    check(f"{tag}: slow answers done", texts(r) == ["done"], r)
    check(f"{tag}: slow sends progress 1..3 of 3",
          progress == [(1, 3, "step 1 of 3"), (2, 3, "step 2 of 3"), (3, 3, "step 3 of 3")], progress)
    r = await client.call_tool("slow", {"seconds": 0.1, "steps": 2})
    sent = [e for e in read_log(log) if e["event"] == "progress"]
    check(f"{tag}: no progress without a progressToken", texts(r) == ["done"] and len(sent) == 3, sent)

    # Cancellation: the SDK client sends notifications/cancelled when the
    # caller's scope is cancelled.
    for tool, args in (("slow", {"seconds": 30, "steps": 30}), ("hang", {})):
        with anyio.move_on_after(1.0):
            await client.call_tool(tool, args)
        ev = await wait_for_event(log, lambda e, t=tool: e["event"] == "cancelled" and e["tool"] == t)
        check(f"{tag}: cancelling {tool} logs cancelled with its request_id", ev and ev["request_id"] is not None, ev)
        note = await wait_for_event(
            log, lambda e: e["event"] == "notification" and e["method"] == "notifications/cancelled"
            and ev is not None and e["params"]["requestId"] == ev["request_id"])
        check(f"{tag}: ... and logs the notifications/cancelled it got", note, note)
    r = await client.call_tool("echo", {"text": "still alive"})
    check(f"{tag}: the connection works after cancellations", texts(r) == ["still alive"], r)

    r = await client.call_tool("add_tool", {})
    check(f"{tag}: add_tool answers added", texts(r) == ["added"], r)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not any(
            isinstance(n, types.ToolListChangedNotification) for n in notifications):
        await anyio.sleep(0.05)
    check(f"{tag}: add_tool sends notifications/tools/list_changed",
          any(isinstance(n, types.ToolListChangedNotification) for n in notifications), notifications)
    names2: list[str] = []
    cursor = None
    for _ in range(20):
        page = await client.list_tools(cursor=cursor)
        names2 += [t.name for t in page.tools]
        cursor = page.next_cursor
        if cursor is None:
            break
    check(f"{tag}: late_tool is listed after add_tool", "late_tool" in names2 and len(names2) == 12, names2)
    r = await client.call_tool("late_tool", {})
    check(f"{tag}: late_tool answers late", texts(r) == ["late"], r)

    size = 1_000_000 if tag.endswith("stdio") else 500_000
    r = await client.call_tool("big", {"bytes": size})
    check(f"{tag}: big answers {size} bytes of x", texts(r) == ["x" * size], len(texts(r)[0]) if texts(r) else r)
    r = await client.call_tool("env", {"name": "CHECK_VAR"})
    check(f"{tag}: env reads a variable", texts(r) == ["hello from the environment"], r)
    r = await client.call_tool("env", {"name": "CHECK_VAR_NOT_SET"})
    check(f"{tag}: env of an unset variable is (unset)", texts(r) == ["(unset)"], r)
    r = await client.call_tool("cwd", {})
    check(f"{tag}: cwd is the directory it was started in", texts(r) == [str(cwd)], r)
    try:
        r = await client.call_tool("no_such_tool", {})
        check(f"{tag}: an unknown tool is a JSON-RPC error", False, r)
    except MCPError as exc:
        check(f"{tag}: an unknown tool is a JSON-RPC error", exc.code == types.INVALID_PARAMS, exc.error)
    calls = [e for e in read_log(log) if e["event"] == "call"]
    check(f"{tag}: logs each call with tool and arguments",
          any(e["tool"] == "echo" and e["arguments"] == {"text": "héllo"} for e in calls), calls[:2])


async def check_crash(tag: str, stdio: StdioServerParameters | None, env: dict[str, str], cwd: Path,
                      log: Path) -> None:
    """crash on a connection of its own: the call fails, the process exits 3."""
    http = HttpServer(env, cwd) if stdio is None else None
    server: Any = stdio if http is None else http.url
    outcome: Any = None
    try:
        with anyio.fail_after(20):
            async with Client(server, mode="legacy", cache=None, read_timeout_seconds=15) as client:
                try:
                    outcome = await client.call_tool("crash", {})
                except Exception as exc:
                    outcome = exc
    except TimeoutError as exc:
        outcome = exc
    except BaseException as exc:  # the context's exit may raise too, once the peer is gone
        if outcome is None:
            outcome = exc
    check(f"{tag}: crash ends the call with an error ({type(outcome).__name__})",
          isinstance(outcome, BaseException) and not isinstance(outcome, TimeoutError), outcome)
    ev = await wait_for_event(log, lambda e: e["event"] == "crash")
    check(f"{tag}: crash logs crash before exiting", ev and ev["exit_code"] == 3, ev)
    if http is not None:
        code = http.proc.wait(timeout=10)
        check(f"{tag}: the crashed process exited 3", code == 3, code)


async def check_sdk_auto_mode() -> None:
    """The SDK client's default mode probes server/discover; sdk_server.py serves 2026-07-28 then."""
    log = TMP / "sdk-auto.log"
    params = sdk_params({"MCP_TEST_LOG": str(log)}, TMP)
    with anyio.fail_after(30):
        async with Client(params, cache=None) as client:
            version = client.protocol_version
            r = await client.call_tool("echo", {"text": "modern"})
    check("sdk/stdio mode=auto: the SDK client and server settle on 2026-07-28 (no initialize)",
          version == "2026-07-28" and texts(r) == ["modern"], (version, r))


# --- raw JSON-RPC over a pipe ------------------------------------------------------


class Raw:
    """A child process spoken to in raw newline-delimited JSON-RPC."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})})
        self.buf = bytearray()
        self.cond = threading.Condition()
        self.eof = False
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        while True:
            chunk = os.read(fd, 1 << 20)
            with self.cond:
                if not chunk:
                    self.eof = True
                else:
                    self.buf += chunk
                self.cond.notify_all()
            if not chunk:
                return

    def send(self, message: Any) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        try:
            self.proc.stdin.write(data)  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
        except BrokenPipeError:
            pass

    def line(self, timeout: float = 10.0) -> bytes | None:
        """The next whole line, or None at a timeout or end of output."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while b"\n" not in self.buf:
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    return None
                self.cond.wait(left)
            i = self.buf.index(b"\n")
            out = bytes(self.buf[:i])
            del self.buf[: i + 1]
            return out

    def message(self, timeout: float = 10.0) -> Any:
        """The next line that parses as JSON (others are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            raw = self.line(max(0.0, deadline - time.monotonic()))
            if raw is None:
                return None
            try:
                return json.loads(raw)
            except ValueError:
                continue

    def request(self, rid: int, method: str, params: dict[str, Any] | None = None, timeout: float = 10.0) -> Any:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        deadline = time.monotonic() + timeout
        while True:
            reply = self.message(max(0.0, deadline - time.monotonic()))
            if reply is None or (isinstance(reply, dict) and reply.get("id") == rid):
                return reply

    def pending(self, n: int, timeout: float) -> int:
        """Waits until at least n bytes are unread (or timeout); returns how many are."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while len(self.buf) < n and not self.eof and time.monotonic() < deadline:
                self.cond.wait(0.1)
            return len(self.buf)

    def stop(self) -> int | None:
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None


def initialize(version: str = "2025-06-18") -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "check.py", "version": "0"}}


def check_sdk_versions() -> None:
    for offered, expected in [("2024-11-05", "2024-11-05"), ("2025-03-26", "2025-03-26"),
                              ("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"),
                              ("1999-01-01", "2025-11-25"), ("2026-07-28", "2025-11-25")]:
        raw = Raw([PY, SDK_SERVER, "--transport", "stdio"])
        reply = raw.request(1, "initialize", initialize(offered), timeout=20)
        got = reply and reply.get("result", {}).get("protocolVersion")
        check(f"sdk/stdio: initialize offering {offered} negotiates {expected}", got == expected, reply)
        raw.stop()
    raw = Raw([PY, SDK_SERVER, "--transport", "stdio"])
    reply = raw.request(1, "server/discover", {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "check.py", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}}}, timeout=20)
    versions = reply and reply.get("result", {}).get("supportedVersions")
    check("sdk/stdio: server/discover (2026-07-28 envelope) lists supportedVersions [2026-07-28]",
          versions == ["2026-07-28"], reply)
    raw.stop()


# --- hostile.py ------------------------------------------------------------------------


def hostile(mode: str, log: Path) -> Raw:
    return Raw([PY, HOSTILE, mode], {"MCP_TEST_LOG": str(log)})


def start_hostile(mode: str) -> tuple[Raw, Path, Any]:
    log = TMP / f"hostile-{mode}.log"
    raw = hostile(mode, log)
    reply = raw.request(1, "initialize", initialize("2025-11-25"))
    ok = reply is not None and reply.get("result", {}).get("protocolVersion") == "2025-11-25"
    check(f"hostile/{mode}: answers initialize", ok, reply)
    raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return raw, log, reply


def list_page(raw: Raw, rid: int, cursor: str | None = None, timeout: float = 10.0) -> Any:
    return raw.request(rid, "tools/list", {"cursor": cursor} if cursor else {}, timeout=timeout)


def check_hostile() -> None:
    # huge: one 64 MiB text, in one line.
    raw, log, _ = start_hostile("huge")
    tools = list_page(raw, 2)["result"]["tools"]
    check("hostile/huge: lists the tool huge", [t["name"] for t in tools] == ["huge"], tools)
    reply = raw.request(3, "tools/call", {"name": "huge", "arguments": {}}, timeout=60)
    text = reply and reply["result"]["content"][0]["text"]
    check("hostile/huge: huge answers one text of 64 MiB", text is not None and len(text) == 64 * 1024 * 1024,
          len(text) if text else reply)
    raw.stop()

    raw, log, _ = start_hostile("controls")
    tools = list_page(raw, 2)["result"]["tools"]
    names = [t["name"] for t in tools]
    check("hostile/controls: names hold ESC and other control characters",
          any("\x1b[2J" in n for n in names) and any("\x00" in n and "\x07" in n for n in names), names)
    check("hostile/controls: a 200-character name", any(len(n) == 200 for n in names), [len(n) for n in names])
    check("hostile/controls: read.file and read/file (equal once sanitised)",
          "read.file" in names and "read/file" in names, names)
    check("hostile/controls: descriptions hold OSC title and clipboard sequences",
          any("\x1b]0;" in t["description"] and "\x1b]52;" in t["description"] for t in tools), tools[1])
    reply = raw.request(3, "tools/call", {"name": "read/file", "arguments": {}})
    check("hostile/controls: results hold escapes", "\x1b[2J" in reply["result"]["content"][0]["text"], reply)
    raw.stop()

    raw, log, _ = start_hostile("bad-schema")
    tools = {t["name"]: t for t in list_page(raw, 2)["result"]["tools"]}
    check("hostile/bad-schema: good and bad, bad's schema is not JSON Schema",
          set(tools) == {"good", "bad"} and tools["bad"]["inputSchema"] == {"type": 12, "properties": "nope"}, tools)
    raw.stop()

    raw, log, _ = start_hostile("many")
    names, cursor, pages = [], None, 0
    while pages < 200:
        result = list_page(raw, 10 + pages, cursor)["result"]
        pages += 1
        names += [t["name"] for t in result["tools"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    check("hostile/many: 10,000 distinct tools in 100 pages of 100",
          pages == 100 and len(set(names)) == 10_000, (pages, len(set(names))))
    raw.stop()

    raw, log, _ = start_hostile("endless")
    seen, cursor = set(), None
    for i in range(50):
        result = list_page(raw, 10 + i, cursor)["result"]
        seen.update(t["name"] for t in result["tools"])
        cursor = result.get("nextCursor")
    check("hostile/endless: every page has a new tool and a nextCursor (50 pages)",
          len(seen) == 50 and cursor is not None, (len(seen), cursor))
    raw.stop()

    log = TMP / "hostile-garbage.log"
    raw = hostile("garbage", log)
    raw.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize()})
    first, second, third = raw.line(), raw.line(), raw.line()
    junk_ok = first is not None and second is not None and third is not None
    try:
        junk_ok = junk_ok and "jsonrpc" not in json.loads(second) and json.loads(third)["id"] == 1
        json.loads(first)  # type: ignore[arg-type]
        junk_ok = False
    except ValueError:
        pass
    check("hostile/garbage: a non-JSON line and a non-JSON-RPC line before the initialize answer",
          junk_ok, (first, second, third))
    raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = list_page(raw, 2)["result"]["tools"]
    reply = raw.request(3, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    check("hostile/garbage: then lists echo and answers it",
          [t["name"] for t in tools] == ["echo"] and reply["result"]["content"][0]["text"] == "hi", reply)
    # What any mode does with what it does not expect.
    for junk in (b"not json\n", b"[1,2,3]\n", b'"a string"\n', b'{"id":9,"result":{}}\n', b"\xff\xfe\n",
                 b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"x"}\n', b"[" * 100000 + b"\n"):
        raw.send(junk)
    reply = raw.request(5, "ping")
    check("hostile/garbage: survives junk input and still answers ping",
          reply == {"jsonrpc": "2.0", "id": 5, "result": {}}, reply)
    invalid = [e for e in read_log(log) if e["event"] == "received_invalid"]
    check("hostile/garbage: logs lines that are not JSON as received_invalid", len(invalid) >= 2, invalid)
    raw.stop()

    raw, log, _ = start_hostile("long-line")
    raw.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    n = raw.pending(32 * 1024 * 1024, timeout=30)
    with raw.cond:
        no_newline = b"\n" not in raw.buf
    check("hostile/long-line: tools/list gets 32 MiB without a newline, then nothing",
          n >= 32 * 1024 * 1024 and no_newline and raw.proc.poll() is None, (n, no_newline))
    raw.proc.kill()
    raw.proc.wait()

    log = TMP / "hostile-silent.log"
    raw = hostile("silent", log)
    reply = raw.request(1, "initialize", initialize(), timeout=1.5)
    received = [e for e in read_log(log) if e["event"] == "received"]
    check("hostile/silent: never answers initialize, but logs it",
          reply is None and received and received[0]["message"]["method"] == "initialize", (reply, received))
    raw.stop()

    raw, log, _ = start_hostile("die-on-list")
    raw.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    code = raw.proc.wait(timeout=10)
    check("hostile/die-on-list: exits 1 during tools/list, half an answer written",
          code == 1 and raw.line(timeout=1) is None and raw.buf.startswith(b'{"jsonrpc"'), (code, bytes(raw.buf)))
    ev = [e for e in read_log(log) if e["event"] == "dying"]
    check("hostile/die-on-list: logs dying", ev, read_log(log))

    for mode in ("huge", "controls", "bad-schema", "many", "endless", "garbage"):
        events = read_log(TMP / f"hostile-{mode}.log")
        check(f"hostile/{mode}: logs started and every message received",
              events and events[0]["event"] == "started"
              and any(e["event"] == "received" and isinstance(e["message"], dict)
                      and e["message"].get("method") == "notifications/initialized" for e in events), events[:3])


# --- server-everything ---------------------------------------------------------


async def check_everything() -> None:
    out = subprocess.run([str(ROOT / "scripts" / "mcp-servers"), "install"], capture_output=True, text=True)
    lines = dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
    if not check("everything: scripts/mcp-servers install prints everything=", "everything" in lines, out):
        return
    argv = shlex.split(lines["everything"])
    with anyio.fail_after(60):
        async with Client(StdioServerParameters(command=argv[0], args=argv[1:]), mode="legacy", cache=None) as client:
            tools = (await client.list_tools()).tools
            r = await client.call_tool("echo", {"message": "hi"})
    names = [t.name for t in tools]
    check(f"everything: lists its tools ({len(names)})", "echo" in names and len(names) >= 10, names)
    check("everything: echo answers", any("hi" in t for t in texts(r)), r)


async def main() -> None:
    print(f"[check] logs in {TMP} (removed if all pass)", flush=True)
    groups = [
        ("sdk_server.py over stdio", lambda: check_sdk_server("stdio")),
        ("sdk_server.py over Streamable HTTP", lambda: check_sdk_server("http")),
        ("sdk_server.py under the SDK client's default mode", check_sdk_auto_mode),
        ("sdk_server.py's protocol versions", lambda: anyio.to_thread.run_sync(check_sdk_versions)),
        ("hostile.py", lambda: anyio.to_thread.run_sync(check_hostile)),
        ("server-everything", check_everything),
    ]
    for title, run in groups:
        print(f"[check] {title}", flush=True)
        try:
            await run()
        except BaseException as exc:  # a group that blows up is one failure, and the rest still run
            if isinstance(exc, KeyboardInterrupt):
                raise
            check(f"{title}: ran to the end", False, repr(exc))
    passed = sum(1 for _, ok, _ in results if ok)
    failed = len(results) - passed
    if not failed:
        shutil.rmtree(TMP, ignore_errors=True)
    print(f"{passed} passed, {failed} failed", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    anyio.run(main)
