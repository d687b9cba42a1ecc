//! Recorded SSE transcripts under `tests/fixtures/` and helpers to read them.
//! See `tests/fixtures/README.md` for how each was recorded.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// `tests/fixtures/` of this crate.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A path under `tests/fixtures/`; absolute paths are returned unchanged.
pub fn fixture_path(path: impl AsRef<Path>) -> PathBuf {
    let path = path.as_ref();
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        fixtures_dir().join(path)
    }
}

/// The raw bytes of a fixture. Panics with the path if unreadable.
pub fn fixture_bytes(path: impl AsRef<Path>) -> Vec<u8> {
    let path = fixture_path(path);
    std::fs::read(&path).unwrap_or_else(|e| panic!("read fixture {}: {e}", path.display()))
}

/// A fixture split into SSE events (see [`split_sse_events`]).
pub fn fixture_frames(path: impl AsRef<Path>) -> Vec<Vec<u8>> {
    split_sse_events(&fixture_bytes(path))
}

/// The JSON payloads of a fixture's `data:` lines, in order, without the
/// final `[DONE]`.
pub fn fixture_json(path: impl AsRef<Path>) -> Vec<Value> {
    sse_data(&fixture_bytes(path))
        .into_iter()
        .filter(|d| d != "[DONE]")
        .map(|d| serde_json::from_str(&d).unwrap_or_else(|e| panic!("fixture frame {d:?}: {e}")))
        .collect()
}

/// The request JSON kept beside a fixture (`NAME.request.json` for
/// `NAME.sse`).
pub fn fixture_request(name: &str) -> Value {
    let stem = name.strip_suffix(".sse").unwrap_or(name);
    let bytes = fixture_bytes(format!("{stem}.request.json"));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{stem}.request.json: {e}"))
}

/// The five-tool catalogue (OpenAI function format) used by the recorded
/// tool-call requests.
pub fn tool_catalogue() -> Value {
    fixture_request("tool-call-read-file")["tools"].clone()
}

/// Splits an SSE byte stream into events: each piece runs up to and
/// including the blank line (`\n` or `\r\n`) that ends an event; trailing
/// bytes without a blank line form a last piece. Concatenating the pieces
/// gives back the input exactly.
pub fn split_sse_events(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut events = Vec::new();
    let mut current = Vec::new();
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        current.extend_from_slice(line);
        if line == b"\n" || line == b"\r\n" {
            events.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        events.push(current);
    }
    events
}

/// The values of all `data:` fields in an SSE byte stream, one per event
/// (multi-line data joined with `\n`, one optional leading space stripped,
/// comments and other fields ignored).
pub fn sse_data(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut out = Vec::new();
    let mut data: Option<String> = None;
    for line in text.split_inclusive('\n') {
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            if let Some(d) = data.take() {
                out.push(d);
            }
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        if field == "data" {
            match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => data = Some(value.to_owned()),
            }
        }
    }
    if let Some(d) = data {
        out.push(d);
    }
    out
}
