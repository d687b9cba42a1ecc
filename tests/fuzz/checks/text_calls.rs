//! The text tool-call adapters: any content, cut into any pieces, in
//! every syntax, with one call taken as shown to the model (a copy of it
//! is a quote). They never panic, and the pieces they make (consecutive
//! prose and consecutive arguments joined) do not depend on where the
//! content was cut.
use std::sync::{Arc, LazyLock};

use dashfloat::llm::adapters::{OfferedTools, QuotedCalls, TextCalls, TextPiece, ToolSyntax};

static OFFERED: LazyLock<Arc<OfferedTools>> = LazyLock::new(|| {
    Arc::new(OfferedTools::from_definitions(
        &dashfloat::tools::Registry::builtin().definitions(),
    ))
});

static QUOTED: LazyLock<Arc<QuotedCalls>> = LazyLock::new(|| {
    let mut quoted = QuotedCalls::default();
    quoted.add(
        "{\"name\": \"read_file\", \"arguments\": {\"path\": \"README.md\"}}",
        &OFFERED,
    );
    Arc::new(quoted)
});

/// Joins consecutive prose and consecutive arguments.
fn joined(pieces: Vec<TextPiece>) -> Vec<TextPiece> {
    let mut out: Vec<TextPiece> = Vec::new();
    for piece in pieces {
        match (out.last_mut(), piece) {
            (Some(TextPiece::Prose(a)), TextPiece::Prose(b)) => a.push_str(&b),
            (Some(TextPiece::Arguments(a)), TextPiece::Arguments(b)) => a.push_str(&b),
            (_, piece) => out.push(piece),
        }
    }
    out.retain(|p| !matches!(p, TextPiece::Prose(t) | TextPiece::Arguments(t) if t.is_empty()));
    out
}

fn read(setting: ToolSyntax, pieces: &[&str]) -> Vec<TextPiece> {
    let Some(mut calls) = TextCalls::new(setting, Arc::clone(&OFFERED), Arc::clone(&QUOTED)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for piece in pieces {
        calls.feed(piece, &mut out);
    }
    calls.finish(&mut out);
    joined(out)
}

/// One byte choosing the syntax, one the piece sizes, then the content.
pub fn run(data: &[u8]) {
    let Some((head, content)) = data.split_at_checked(2) else {
        return;
    };
    let content = String::from_utf8_lossy(content);
    let settings: Vec<ToolSyntax> = ToolSyntax::all().collect();
    let setting = settings[usize::from(head[0]) % settings.len()];
    let r = usize::from(head[1]);
    let sizes = [1 + r % 5, 1 + r / 5 % 23, 1 + r];
    let whole = read(setting, &[&content]);
    let mut cut = Vec::new();
    let mut rest = &*content;
    for size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let mut at = (*size).min(rest.len());
        while !rest.is_char_boundary(at) {
            at += 1;
        }
        let (piece, tail) = rest.split_at(at);
        cut.push(piece);
        rest = tail;
    }
    assert_eq!(read(setting, &cut), whole, "cut as {cut:?}");
}
