//! A scripted OpenAI-compatible HTTP/1.1 server on 127.0.0.1.
//!
//! Each incoming request takes the next [`Reply`] of the script, in the order
//! requests finish arriving. A reply is a status line, headers and a list of
//! [`Step`]s played with real timing: every [`Step::Send`] is one write, one
//! flush and (by default) one HTTP chunk, so a client sees exactly the
//! chunk boundaries and delays the test asked for.
//!
//! Every chat request's body is checked against the conversation invariant
//! providers enforce ([`super::pairing`]); dropping the server fails the
//! test with every request that broke it, so no test can pass while the
//! agent sends a call without its answer.
//!
//! The server runs on its own thread with its own single-threaded tokio
//! runtime. That keeps it serving while a test blocks (e.g. a pty test polling
//! the screen from a `#[tokio::test]` body) and keeps its clock real even when
//! the test's runtime has paused time. Dropping the [`ScriptedServer`] stops
//! it: pending `Delay`/`Hang` steps end and every open connection is closed.

use std::collections::VecDeque;
use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use dashfloat::llm::wires::Wire;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Largest request head (request line + headers) the server accepts.
const MAX_HEAD: usize = 64 * 1024;
/// Largest request body the server accepts.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// One action of a scripted reply body, played in order after the head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// One write + flush. With chunked framing (the default) this is exactly
    /// one HTTP chunk; an empty `Send` is skipped there (a zero-size chunk
    /// would end the body).
    Send(Vec<u8>),
    /// Wait this long (real time) before the next step.
    Delay(Duration),
    /// Close the socket at once without finishing the body (no terminating
    /// chunk): the client sees the body end early.
    Disconnect,
    /// Like `Disconnect` but with `SO_LINGER` 0, so the peer gets a TCP RST
    /// ("connection reset") instead of an orderly FIN.
    Reset,
    /// Keep the connection open and send nothing more until the server is
    /// dropped or the client closes it.
    Hang,
}

/// How a reply body is framed on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `Transfer-Encoding: chunked`; each `Send` is one chunk; a terminating
    /// `0\r\n\r\n` follows the last step.
    Chunked,
    /// Bytes are written exactly as given; the body ends when the socket
    /// closes (or where a `Content-Length` header the script set says).
    Raw,
}

/// One scripted HTTP response.
#[derive(Debug, Clone)]
pub struct Reply {
    /// HTTP status code.
    pub status: u16,
    /// Headers written as given (the server adds only `Connection: close`
    /// and, for chunked framing, `Transfer-Encoding: chunked`).
    pub headers: Vec<(String, String)>,
    /// Body steps, in order.
    pub steps: Vec<Step>,
    /// Wait this long after the request arrived before writing the status
    /// line (time to first byte).
    pub head_delay: Duration,
    /// Body framing.
    pub framing: Framing,
    /// Close the connection after reading the request, writing nothing:
    /// a server dropping a kept-alive connection as the request arrives.
    pub unanswered: bool,
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// e.g. `POST`.
    pub method: String,
    /// Request target as sent, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Headers in arrival order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON, or `Value::Null` if it is not JSON.
    pub body: Value,
    /// The body bytes (de-chunked if the request was chunked).
    pub raw_body: Vec<u8>,
}

/// Asserts what keeps a server's prompt cache warm (issue 12): each chat
/// request begins with the bytes of the one before it up to that one's
/// last message — no earlier message encoded anew, no timestamp — and
/// offers the same tools.
pub fn assert_prefix_stable(requests: &[Recorded]) {
    let chats: Vec<&Recorded> = requests
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .collect();
    for pair in chats.windows(2) {
        let (before, after) = (pair[0], pair[1]);
        let messages = before.body["messages"].as_array().expect("messages");
        let kept: Vec<String> = messages[..messages.len().saturating_sub(1)]
            .iter()
            .map(Value::to_string)
            .collect();
        let prefix = format!(
            "{{\"model\":{},\"messages\":[{}",
            before.body["model"],
            kept.join(",")
        );
        for request in [before, after] {
            assert!(
                request.raw_body.starts_with(prefix.as_bytes()),
                "a request does not begin with the previous one's bytes up to its last message:\n{}\nexpected to begin with\n{prefix}",
                String::from_utf8_lossy(&request.raw_body)
            );
        }
        assert_eq!(
            before.body["tools"], after.body["tools"],
            "the tools changed"
        );
    }
}

impl Recorded {
    /// The first header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl Reply {
    /// Full control: status, headers and steps as given, chunked framing
    /// unless `headers` contains a `Content-Length` (then raw).
    pub fn raw(status: u16, headers: &[(&str, &str)], steps: Vec<Step>) -> Reply {
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let framing = if headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        {
            Framing::Raw
        } else {
            Framing::Chunked
        };
        Reply {
            status,
            headers,
            steps,
            head_delay: Duration::ZERO,
            framing,
            unanswered: false,
        }
    }

    /// No reply at all: the connection closes once the request is read.
    pub fn unanswered() -> Reply {
        Reply {
            unanswered: true,
            ..Reply::raw(200, &[], Vec::new())
        }
    }

    /// A 200 `text/event-stream` reply: each frame as `data: {json}\n\n` in
    /// its own chunk, then `data: [DONE]\n\n`.
    pub fn sse(frames: impl IntoIterator<Item = Value>) -> Reply {
        let mut steps: Vec<Step> = frames
            .into_iter()
            .map(|frame| Step::Send(sse_frame(&frame)))
            .collect();
        steps.push(Step::Send(b"data: [DONE]\n\n".to_vec()));
        Reply::sse_steps(steps)
    }

    /// A 200 `text/event-stream` reply with the given body steps verbatim
    /// (no `[DONE]` added).
    pub fn sse_steps(steps: Vec<Step>) -> Reply {
        Reply::raw(
            200,
            &[
                ("Content-Type", "text/event-stream"),
                ("Cache-Control", "no-cache"),
            ],
            steps,
        )
    }

    /// A complete plain-text reply streamed as llama-server does: a role
    /// chunk, one content chunk per delta, a `finish_reason: "stop"` chunk
    /// with an empty delta, a usage chunk (`choices: []`), then `[DONE]`.
    pub fn text(deltas: &[&str]) -> Reply {
        let mut frames = vec![role_chunk()];
        frames.extend(deltas.iter().map(|d| content_chunk(d)));
        frames.push(finish_chunk("stop"));
        frames.push(usage_chunk(12, deltas.len() as u64));
        Reply::sse(frames)
    }

    /// A complete single tool call streamed as llama-server does: a role
    /// chunk; the first fragment with `index`, `id`, `type`, the whole name
    /// and the first argument piece (llama-server sends `"{"` there); one
    /// chunk per further piece; `finish_reason: "tool_calls"` with an empty
    /// delta; usage; `[DONE]`. No `content` is streamed.
    pub fn tool_call(id: &str, name: &str, args_fragments: &[&str]) -> Reply {
        let (first, rest) = args_fragments
            .split_first()
            .map_or(("", &[][..]), |(f, r)| (*f, r));
        let mut frames = vec![
            role_chunk(),
            tool_call_chunk(0, Some(id), Some(name), first),
        ];
        frames.extend(rest.iter().map(|f| tool_call_chunk(0, None, None, f)));
        frames.push(finish_chunk("tool_calls"));
        frames.push(usage_chunk(12, args_fragments.len().max(1) as u64));
        Reply::sse(frames)
    }

    /// Several whole calls in one reply, each `(id, name, arguments)` in
    /// one fragment at its own index: a role chunk, the calls,
    /// `finish_reason: "tool_calls"`, `[DONE]` (no usage chunk).
    pub fn tool_calls(calls: &[(&str, &str, &str)]) -> Reply {
        let mut frames = vec![role_chunk()];
        frames.extend(
            calls.iter().zip(0..).map(|((id, name, args), index)| {
                tool_call_chunk(index, Some(id), Some(name), args)
            }),
        );
        frames.push(finish_chunk("tool_calls"));
        Reply::sse(frames)
    }

    /// A plain reply with a `Content-Length` body, e.g.
    /// `Reply::status(400, "application/json", r#"{"error":..}"#)`.
    pub fn status(code: u16, content_type: &str, body: &str) -> Reply {
        let len = body.len().to_string();
        Reply::raw(
            code,
            &[("Content-Type", content_type), ("Content-Length", &len)],
            vec![Step::Send(body.as_bytes().to_vec())],
        )
    }

    /// Replays a recorded `.sse` transcript, one SSE event (everything up to
    /// and including its blank line) per chunk, bytes verbatim. A relative
    /// path is taken relative to `tests/fixtures/`. Panics if unreadable.
    pub fn fixture(path: impl AsRef<Path>) -> Reply {
        let frames = super::fixtures::fixture_frames(path);
        Reply::sse_steps(frames.into_iter().map(Step::Send).collect())
    }

    /// Adds a header.
    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Replaces the body steps.
    pub fn with_steps(mut self, steps: Vec<Step>) -> Reply {
        self.steps = steps;
        self
    }

    /// Appends a step.
    pub fn then(mut self, step: Step) -> Reply {
        self.steps.push(step);
        self
    }

    /// Inserts `Delay(d)` before every `Send` except the first, so chunks
    /// arrive `d` apart.
    pub fn delay_each(mut self, d: Duration) -> Reply {
        let mut out = Vec::with_capacity(self.steps.len() * 2);
        let mut seen_send = false;
        for step in self.steps {
            if matches!(step, Step::Send(_)) {
                if seen_send {
                    out.push(Step::Delay(d));
                }
                seen_send = true;
            }
            out.push(step);
        }
        self.steps = out;
        self
    }

    /// Waits `d` before sending the status line.
    pub fn head_delay(mut self, d: Duration) -> Reply {
        self.head_delay = d;
        self
    }

    /// Keeps the first `n` `Send` steps (and the steps between them), drops
    /// the rest and ends with `Disconnect`: a stream cut mid-way.
    pub fn cut_after(self, n: usize) -> Reply {
        self.truncate_sends(n, Step::Disconnect)
    }

    /// Keeps the first `n` `Send` steps and then `Hang`s: a stalled stream.
    pub fn hang_after(self, n: usize) -> Reply {
        self.truncate_sends(n, Step::Hang)
    }

    /// Body written without chunked framing (ends at close, or where a
    /// script-supplied `Content-Length` says).
    pub fn unframed(mut self) -> Reply {
        self.framing = Framing::Raw;
        self
    }

    fn truncate_sends(mut self, n: usize, last: Step) -> Reply {
        let mut sends = 0;
        let mut out = Vec::new();
        for step in self.steps {
            if matches!(step, Step::Send(_)) {
                if sends == n {
                    break;
                }
                sends += 1;
            }
            out.push(step);
        }
        out.push(last);
        self.steps = out;
        self
    }
}

/// `data: {json}\n\n` for one frame.
pub fn sse_frame(frame: &Value) -> Vec<u8> {
    format!("data: {frame}\n\n").into_bytes()
}

/// A `chat.completion.chunk` with one choice carrying `delta` and
/// `finish_reason`, laid out as llama-server lays it out.
pub fn chunk(delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "choices": [{"finish_reason": finish_reason, "index": 0, "delta": delta}],
        "created": 1_700_000_000,
        "id": "chatcmpl-scripted",
        "model": "scripted-model",
        "system_fingerprint": "scripted",
        "object": "chat.completion.chunk"
    })
}

/// The first chunk of a reply: `delta: {"role":"assistant","content":null}`.
pub fn role_chunk() -> Value {
    chunk(json!({"role": "assistant", "content": null}), None)
}

/// A chunk whose delta carries `content`.
pub fn content_chunk(text: &str) -> Value {
    chunk(json!({"content": text}), None)
}

/// A chunk whose delta carries `reasoning_content` (thinking models).
pub fn reasoning_chunk(text: &str) -> Value {
    chunk(json!({"reasoning_content": text}), None)
}

/// The chunk that ends a choice: empty delta and `finish_reason`.
pub fn finish_chunk(reason: &str) -> Value {
    chunk(json!({}), Some(reason))
}

/// The last chunk with `stream_options.include_usage`: `choices: []`,
/// `usage` (with `prompt_tokens_details`) and llama-server's non-standard
/// `timings` object, which clients must ignore.
pub fn usage_chunk(prompt: u64, completion: u64) -> Value {
    json!({
        "choices": [],
        "created": 1_700_000_000,
        "id": "chatcmpl-scripted",
        "model": "scripted-model",
        "system_fingerprint": "scripted",
        "object": "chat.completion.chunk",
        "usage": {
            "completion_tokens": completion,
            "prompt_tokens": prompt,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": 0}
        },
        "timings": {
            "cache_n": 0,
            "prompt_n": prompt,
            "prompt_ms": 10.0,
            "predicted_n": completion,
            "predicted_ms": 20.0
        }
    })
}

/// A chunk with one `delta.tool_calls` fragment. The first fragment of a
/// call carries `id`, `type` and `name`; later ones only `index` and an
/// `arguments` piece (pass `None`, `None`).
pub fn tool_call_chunk(
    index: u32,
    id: Option<&str>,
    name: Option<&str>,
    args_fragment: &str,
) -> Value {
    let mut call = serde_json::Map::new();
    call.insert("index".into(), json!(index));
    if let Some(id) = id {
        call.insert("id".into(), json!(id));
        call.insert("type".into(), json!("function"));
    }
    let mut function = serde_json::Map::new();
    if let Some(name) = name {
        function.insert("name".into(), json!(name));
    }
    function.insert("arguments".into(), json!(args_fragment));
    call.insert("function".into(), Value::Object(function));
    chunk(json!({"tool_calls": [Value::Object(call)]}), None)
}

/// Makes the reply to a request the script has none for.
type Responder = Box<dyn FnMut(&Recorded) -> Reply + Send>;

struct State {
    replies: VecDeque<Reply>,
    requests: Vec<Recorded>,
    /// Requests received in all, taken or not.
    received: usize,
    /// Answers what the script does not.
    responder: Option<Responder>,
    /// The chat requests that broke the tool-call pairing, said.
    unpaired: Vec<String>,
    /// The API the server speaks (ADR 0052).
    wire: Wire,
}

struct Shared {
    state: Mutex<State>,
    count: watch::Sender<usize>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A running scripted server; dropping it shuts it down.
pub struct ScriptedServer {
    port: u16,
    shared: Arc<Shared>,
    cancel: CancellationToken,
    thread: Option<JoinHandle<()>>,
}

impl ScriptedServer {
    /// Starts a server answering requests with `replies`, in order; once
    /// they are used up every request gets a 500 `script exhausted`.
    pub async fn start(replies: Vec<Reply>) -> ScriptedServer {
        ScriptedServer::start_blocking(replies)
    }

    /// [`ScriptedServer::start`] for non-async tests (it never blocks long:
    /// the server runs on its own thread).
    pub fn start_blocking(replies: Vec<Reply>) -> ScriptedServer {
        ScriptedServer::speaking_blocking(Wire::Chat, replies)
    }

    /// A server speaking `wire`: each scripted chat reply goes out as that
    /// wire's stream, and each request is checked by that wire's pairing
    /// rules and recorded in chat's shape ([`super::wires`]).
    pub async fn speaking(wire: Wire, replies: Vec<Reply>) -> ScriptedServer {
        ScriptedServer::speaking_blocking(wire, replies)
    }

    /// [`ScriptedServer::speaking`] for non-async tests.
    pub fn speaking_blocking(wire: Wire, replies: Vec<Reply>) -> ScriptedServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind scripted server");
        listener
            .set_nonblocking(true)
            .expect("set scripted server nonblocking");
        let port = listener.local_addr().expect("local addr").port();
        let (count, _) = watch::channel(0);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                replies: replies.into(),
                requests: Vec::new(),
                received: 0,
                responder: None,
                unpaired: Vec::new(),
                wire,
            }),
            count,
        });
        let cancel = CancellationToken::new();
        let thread = {
            let shared = Arc::clone(&shared);
            let cancel = cancel.clone();
            std::thread::Builder::new()
                .name(format!("scripted-server-{port}"))
                .spawn(move || serve(listener, shared, cancel))
                .expect("spawn scripted server thread")
        };
        ScriptedServer {
            port,
            shared,
            cancel,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL a client appends
    /// `/chat/completions` to.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Appends a reply to the script.
    pub fn push_reply(&self, reply: Reply) {
        self.shared.lock().replies.push_back(reply);
    }

    /// How many scripted replies have not been used yet.
    pub fn remaining_replies(&self) -> usize {
        self.shared.lock().replies.len()
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.lock().requests.clone()
    }

    /// Takes the requests recorded so far, so a long run keeps no more
    /// than one turn's (the pairing of each was checked as it arrived).
    pub fn take_requests(&self) -> Vec<Recorded> {
        std::mem::take(&mut self.shared.lock().requests)
    }

    /// Answers every request the script has no reply for with what
    /// `responder` makes of it, instead of a 500.
    pub fn respond_with(&self, responder: impl FnMut(&Recorded) -> Reply + Send + 'static) {
        self.shared.lock().responder = Some(Box::new(responder));
    }

    /// Waits until at least `n` requests have arrived and returns them all.
    /// Panics (listing what did arrive) if that takes longer than `timeout`.
    /// The timeout is real time even in a test with paused tokio time.
    pub async fn wait_requests(&self, n: usize, timeout: Duration) -> Vec<Recorded> {
        let mut rx = self.shared.count.subscribe();
        let (expired_tx, expired_rx) = tokio::sync::oneshot::channel::<()>();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        // A real-time timer, independent of the caller's (maybe paused) clock.
        std::thread::spawn(move || {
            if done_rx.recv_timeout(timeout).is_err() {
                let _ = expired_tx.send(());
            }
        });
        tokio::select! {
            _ = rx.wait_for(|c| *c >= n) => {}
            _ = expired_rx => self.panic_waiting(n, timeout),
        }
        let _ = done_tx.send(());
        self.requests()
    }

    /// [`ScriptedServer::wait_requests`] for non-async code.
    pub fn wait_requests_blocking(&self, n: usize, timeout: Duration) -> Vec<Recorded> {
        let deadline = Instant::now() + timeout;
        loop {
            let requests = self.requests();
            if requests.len() >= n {
                return requests;
            }
            if Instant::now() >= deadline {
                self.panic_waiting(n, timeout);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn panic_waiting(&self, n: usize, timeout: Duration) -> ! {
        let got: Vec<String> = self
            .requests()
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect();
        panic!(
            "scripted server: expected {n} request(s) within {timeout:?}, got {}: {got:?}",
            got.len()
        );
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.cancel.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let unpaired = std::mem::take(&mut self.shared.lock().unpaired);
        // A test already failing keeps its own message.
        if !unpaired.is_empty() && !std::thread::panicking() {
            panic!(
                "scripted server: requests that break the tool-call pairing:\n{}",
                unpaired.join("\n")
            );
        }
    }
}

fn serve(listener: std::net::TcpListener, shared: Arc<Shared>, cancel: CancellationToken) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("scripted server: cannot build runtime: {e}");
            return;
        }
    };
    rt.block_on(async {
        let listener = match TcpListener::from_std(listener) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("scripted server: cannot register listener: {e}");
                return;
            }
        };
        loop {
            tokio::select! {
                () = cancel.cancelled() => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let shared = Arc::clone(&shared);
                        let cancel = cancel.clone();
                        tokio::spawn(async move {
                            tokio::select! {
                                () = cancel.cancelled() => {}
                                _ = handle_connection(stream, shared, cancel.clone()) => {}
                            }
                        });
                    }
                    Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
                },
            }
        }
    });
    // Dropping the runtime drops every connection task and its socket.
    rt.shutdown_timeout(Duration::from_secs(1));
}

struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn bad(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// Reads one line (up to and including `\n`), bounded by `limit`.
async fn read_line(reader: &mut BufReader<TcpStream>, limit: &mut usize) -> io::Result<Vec<u8>> {
    let mut line = Vec::new();
    let n = (&mut *reader)
        .take(*limit as u64 + 1)
        .read_until(b'\n', &mut line)
        .await?;
    if n == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "connection closed",
        ));
    }
    if n > *limit || line.last() != Some(&b'\n') {
        return Err(bad("line too long or truncated"));
    }
    *limit -= n;
    Ok(line)
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

async fn read_request(reader: &mut BufReader<TcpStream>) -> io::Result<Request> {
    let mut limit = MAX_HEAD;
    let request_line = read_line(reader, &mut limit).await?;
    let request_line = String::from_utf8_lossy(trim_eol(&request_line)).into_owned();
    let mut parts = request_line.split_whitespace();
    let (Some(method), Some(path), Some(_version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(bad(format!("bad request line {request_line:?}")));
    };
    let (method, path) = (method.to_owned(), path.to_owned());

    let mut headers = Vec::new();
    loop {
        let line = read_line(reader, &mut limit).await?;
        let line = trim_eol(&line);
        if line.is_empty() {
            break;
        }
        let line = String::from_utf8_lossy(line);
        let Some((name, value)) = line.split_once(':') else {
            return Err(bad(format!("bad header line {line:?}")));
        };
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };

    if header("expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue")) {
        reader
            .get_mut()
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .await?;
        reader.get_mut().flush().await?;
    }

    let chunked =
        header("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut line_limit = 1024;
            let size_line = read_line(reader, &mut line_limit).await?;
            let size_text = String::from_utf8_lossy(trim_eol(&size_line)).into_owned();
            let size_hex = size_text.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size_hex, 16)
                .map_err(|_| bad(format!("bad chunk size {size_text:?}")))?;
            if size == 0 {
                // Trailers, then the blank line.
                loop {
                    let mut trailer_limit = MAX_HEAD;
                    let line = read_line(reader, &mut trailer_limit).await?;
                    if trim_eol(&line).is_empty() {
                        break;
                    }
                }
                break;
            }
            if body.len() + size > MAX_BODY {
                return Err(bad("request body too large"));
            }
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..]).await?;
            let mut crlf_limit = 2;
            let crlf = read_line(reader, &mut crlf_limit).await?;
            if !trim_eol(&crlf).is_empty() {
                return Err(bad("chunk not followed by CRLF"));
            }
        }
    } else if let Some(len) = header("content-length") {
        let len: usize = len
            .parse()
            .map_err(|_| bad(format!("bad content-length {len:?}")))?;
        if len > MAX_BODY {
            return Err(bad("request body too large"));
        }
        body.resize(len, 0);
        reader.read_exact(&mut body).await?;
    }
    Ok(Request {
        method,
        path,
        headers,
        body,
    })
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

async fn handle_connection(stream: TcpStream, shared: Arc<Shared>, cancel: CancellationToken) {
    let _ = stream.set_nodelay(true);
    let mut reader = BufReader::new(stream);
    let request = match read_request(&mut reader).await {
        Ok(r) => r,
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return,
        Err(e) => {
            let body = format!("scripted server: malformed request: {e}");
            let reply = Reply::status(400, "text/plain", &body);
            let _ = play(reader.get_mut(), reply, &cancel).await;
            return;
        }
    };

    let reply = {
        let mut state = shared.lock();
        let mut body = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        state.received += 1;
        let number = state.received;
        let wire = state.wire;
        let asks = request.method == "POST" && request.path.ends_with(super::wires::path_of(wire));
        if asks {
            let checked = super::wires::chat_request(wire, &body)
                .and_then(|chat| super::pairing::check(&chat).map(|()| chat));
            match checked {
                Ok(chat) => body = chat,
                Err(broken) => state.unpaired.push(format!("request #{number}: {broken}")),
            }
        }
        let recorded = Recorded {
            method: request.method.clone(),
            path: request.path.clone(),
            headers: request.headers,
            body,
            raw_body: request.body,
        };
        let scripted = state.replies.pop_front();
        let reply = match (scripted, state.responder.as_mut()) {
            (Some(reply), _) => reply,
            (None, Some(responder)) => responder(&recorded),
            (None, None) => Reply::status(
                500,
                "text/plain",
                &format!(
                    "script exhausted: request #{number} ({} {}) has no scripted reply",
                    recorded.method, recorded.path
                ),
            ),
        };
        state.requests.push(recorded);
        shared.count.send_replace(number);
        if asks {
            super::wires::reply(wire, reply)
        } else {
            reply
        }
    };
    // Errors here mean the client went away: normal when a test cancels.
    let _ = play(reader.get_mut(), reply, &cancel).await;
}

async fn play(stream: &mut TcpStream, reply: Reply, cancel: &CancellationToken) -> io::Result<()> {
    if !reply.head_delay.is_zero() {
        tokio::time::sleep(reply.head_delay).await;
    }
    if reply.unanswered {
        return stream.shutdown().await;
    }
    let chunked = reply.framing == Framing::Chunked;
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        reply.status,
        reason_phrase(reply.status)
    );
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if chunked {
        head.push_str("Transfer-Encoding: chunked\r\n");
    }
    head.push_str("Connection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.flush().await?;

    for step in reply.steps {
        match step {
            Step::Send(bytes) => {
                if chunked {
                    if bytes.is_empty() {
                        continue;
                    }
                    let mut frame = format!("{:x}\r\n", bytes.len()).into_bytes();
                    frame.extend_from_slice(&bytes);
                    frame.extend_from_slice(b"\r\n");
                    stream.write_all(&frame).await?;
                } else {
                    stream.write_all(&bytes).await?;
                }
                stream.flush().await?;
            }
            Step::Delay(d) => tokio::time::sleep(d).await,
            Step::Disconnect => return Ok(()),
            Step::Reset => {
                let _ = stream.set_zero_linger();
                return Ok(());
            }
            Step::Hang => {
                // Until the server stops or the client goes away: a client
                // that gave up must not leave the connection held.
                let mut buf = [0u8; 512];
                loop {
                    tokio::select! {
                        () = cancel.cancelled() => return Ok(()),
                        read = stream.read(&mut buf) => match read {
                            Ok(0) | Err(_) => return Ok(()),
                            Ok(_) => {}
                        },
                    }
                }
            }
        }
    }
    if chunked {
        stream.write_all(b"0\r\n\r\n").await?;
    }
    stream.flush().await?;
    stream.shutdown().await
}
