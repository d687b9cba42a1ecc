//! What an MCP tool answered, as the text the model reads: text blocks
//! joined, images and audio described by type and size, resource links
//! and embedded resources by URI and size (an embedded text's text
//! follows), `structuredContent` kept as JSON after them. Bounded as it
//! is made, never unbounded: past [`RESULT_MAX_BYTES`] the text is cut
//! with a note. ADR 0045.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// The most bytes of an MCP result's text kept before the result is cut
/// as any tool's is (ADR 0021): what a command's whole output may be.
pub const RESULT_MAX_BYTES: usize = 256 * 1024;

/// An MCP call's answer as text, and whether the server marked it an
/// error (`isError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The text the model reads.
    pub text: String,
    /// The server said the call failed.
    pub is_error: bool,
}

/// The text of `result`, at most [`RESULT_MAX_BYTES`] (and a note).
pub fn answer(result: &CallToolResult) -> Answer {
    let mut text = Bounded::default();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => text.push(&t.text),
            ContentBlock::Image(image) => text.push(&format!(
                "[image {}, {}]",
                image.mime_type,
                size(decoded_len(&image.data))
            )),
            ContentBlock::Audio(audio) => text.push(&format!(
                "[audio {}, {}]",
                audio.mime_type,
                size(decoded_len(&audio.data))
            )),
            ContentBlock::ResourceLink(link) => {
                let mut line = format!("[resource link {}", link.uri);
                if !link.name.is_empty() {
                    line.push_str(&format!(" ({})", link.name));
                }
                if let Some(mime) = &link.mime_type {
                    line.push_str(&format!(", {mime}"));
                }
                if let Some(bytes) = link.size {
                    line.push_str(&format!(", {}", size(bytes)));
                }
                line.push(']');
                text.push(&line);
            }
            ContentBlock::Resource(embedded) => match &embedded.resource {
                ResourceContents::TextResourceContents { uri, text: t, .. } => {
                    text.push(&format!("[resource {uri}, {}]", size(t.len() as u64)));
                    text.push(t);
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => text.push(&format!(
                    "[resource {uri}, {}, {}]",
                    mime_type.as_deref().unwrap_or("binary"),
                    size(decoded_len(blob))
                )),
                _ => text.push("[an embedded resource of a kind dashfloat does not read]"),
            },
            _ => text.push("[content of a kind dashfloat does not read]"),
        }
    }
    if let Some(structured) = &result.structured_content {
        text.push("structured content:");
        text.push(&serde_json::to_string(structured).unwrap_or_default());
    }
    Answer {
        text: text.finish(),
        is_error: result.is_error == Some(true),
    }
}

/// Text built block by block, one line apart, never past the bound.
#[derive(Default)]
struct Bounded {
    text: String,
    cut: bool,
}

impl Bounded {
    fn push(&mut self, block: &str) {
        if self.cut {
            return;
        }
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        let room = RESULT_MAX_BYTES.saturating_sub(self.text.len());
        if block.len() <= room {
            self.text.push_str(block);
        } else {
            let mut end = room;
            while !block.is_char_boundary(end) {
                end -= 1;
            }
            self.text.push_str(&block[..end]);
            self.cut = true;
        }
    }

    fn finish(mut self) -> String {
        if self.cut {
            self.text.push_str(&format!(
                "\n[the answer was cut at {} KiB; ask the tool for less]",
                RESULT_MAX_BYTES / 1024
            ));
        }
        self.text
    }
}

/// The bytes base64 `data` decodes to, without decoding it.
fn decoded_len(data: &str) -> u64 {
    let trimmed = data.trim_end_matches('=');
    (trimmed.len() as u64) * 3 / 4
}

/// `bytes` for a person: `512 bytes`, `1.2 KiB`, `3.4 MiB`.
fn size(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{:.1} KiB", bytes as f64 / KIB),
        _ => format!("{:.1} MiB", bytes as f64 / (KIB * KIB)),
    }
}
