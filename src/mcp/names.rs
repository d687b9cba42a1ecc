//! The names MCP tools are offered under: `mcp__SERVER__TOOL`, made of
//! the letters, digits, `_` and `-` a provider takes, at most
//! [`TOOL_NAME_MAX_CHARS`] long. A name the rules changed or cut keeps a
//! short hash of the original, so two tools that sanitise to one name are
//! both kept and told apart. ADR 0045.

use crate::stable_hash::{ContentHash, content_hash};
use crate::tools::registry::TOOL_NAME_MAX_CHARS;

/// What every MCP tool's name starts with.
pub const PREFIX: &str = "mcp__";
/// Characters of the original's hash a changed name ends with.
const HASH_CHARS: usize = 8;

/// The name `server`'s tool `tool` is offered under. Names already
/// callable and short enough are kept as they are; any other is made
/// callable, cut, and given `_` and 8 hex characters of a hash of the
/// server's and tool's names as they were, so that different originals
/// do not meet.
pub fn tool_name(server: &str, tool: &str) -> String {
    let plain = format!("{PREFIX}{server}__{tool}");
    let callable = plain
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if callable && plain.len() <= TOOL_NAME_MAX_CHARS {
        return plain;
    }
    let sanitised: String = plain
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(TOOL_NAME_MAX_CHARS - HASH_CHARS - 1)
        .collect();
    let original = format!("{server}\0{tool}");
    let (ContentHash::Xxh3(hash) | ContentHash::Sip13(hash)) = content_hash(original.as_bytes());
    format!("{sanitised}_{:0width$x}", hash >> 32, width = HASH_CHARS)
}

/// `name` made unique among `taken`: as it is when free, else with `_2`,
/// `_3`, … (cut to fit) — for the rare hashes that meet.
pub fn unique(name: String, taken: impl Fn(&str) -> bool) -> String {
    if !taken(&name) {
        return name;
    }
    (2..)
        .map(|n| {
            let suffix = format!("_{n}");
            let keep = TOOL_NAME_MAX_CHARS - suffix.len();
            let stem: String = name.chars().take(keep).collect();
            format!("{stem}{suffix}")
        })
        .find(|candidate| !taken(candidate))
        .unwrap_or(name)
}
