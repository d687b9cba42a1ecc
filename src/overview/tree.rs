//! The top of the file tree as the overview shows it: two levels, folders
//! first, then files, each by name; at most [`TOP_ENTRIES_MAX`] entries at
//! the top, [`FOLDER_ENTRIES_MAX`] in a folder and [`INNER_LINES_MAX`]
//! inside folders in all, with "… and K more" for the rest, and at most
//! [`TREE_MAX_BYTES`] in all. What the
//! search tools leave out (ignored files, build and vendored folders)
//! is not in it.

use std::path::{Path, PathBuf};

use crate::safe_text::strip_controls;
use crate::tools::ProjectTop;
use crate::tools::walk::SEARCH_SKIPPED_DIRS;

use super::text::one_line;

/// Levels of the tree shown.
pub(super) const SHOWN_DEPTH: usize = 2;

/// The line that introduces the tree.
pub(super) const HEADING: &str =
    "files (two levels; ignored, build and dependency folders left out):";

/// Entries shown at the top, at most (20).
const TOP_ENTRIES_MAX: usize = 20;

/// Entries shown in one folder, at most (8): enough to see what kind of
/// folder it is.
const FOLDER_ENTRIES_MAX: usize = 8;

/// Lines shown inside folders in all, at most (32): a project of many
/// folders shows the first ones' entries, and the rest by their count.
const INNER_LINES_MAX: usize = 32;

/// Characters of one name shown, at most (60).
const NAME_MAX_CHARS: usize = 60;

/// Bytes of the tree's lines, at most (1,200; some 300–400 tokens):
/// what the line counts leave, when the names are long. Past it the
/// tree ends with a line saying it was cut.
const TREE_MAX_BYTES: usize = 1_200;

/// The tree's lines: each entry of the top on its own line (folders end
/// with `/`), a folder's entries under it indented by two spaces. Empty
/// when the walk found nothing.
pub(super) fn render(top: &ProjectTop) -> Vec<String> {
    let root = children(top, Path::new(""));
    let mut lines = Vec::new();
    let mut inner_left = INNER_LINES_MAX;
    for (path, folder) in root.iter().take(TOP_ENTRIES_MAX) {
        let name = shown(path);
        if !folder {
            lines.push(name);
            continue;
        }
        let inside = children(top, path);
        let shown_here = inside.len().min(FOLDER_ENTRIES_MAX).min(inner_left);
        if shown_here == 0 {
            lines.push(format!("{name}/ ({} entries)", inside.len()));
            continue;
        }
        lines.push(format!("{name}/"));
        for (path, folder) in &inside[..shown_here] {
            let slash = if *folder { "/" } else { "" };
            lines.push(format!("  {}{slash}", shown(path)));
        }
        inner_left -= shown_here;
        if inside.len() > shown_here {
            lines.push(format!("  … and {} more", inside.len() - shown_here));
        }
    }
    if root.len() > TOP_ENTRIES_MAX {
        lines.push(format!("… and {} more", root.len() - TOP_ENTRIES_MAX));
    }
    cut_to_bytes(&mut lines);
    if !top.whole && !lines.is_empty() {
        lines.push(
            "(the project has more files than were walked: this is part of its tree)".to_owned(),
        );
    }
    lines
}

/// Keeps the first lines within [`TREE_MAX_BYTES`], and says so when
/// any were left out.
fn cut_to_bytes(lines: &mut Vec<String>) {
    let mut size = 0;
    let keep = lines
        .iter()
        .take_while(|line| {
            size += line.len() + 1;
            size <= TREE_MAX_BYTES
        })
        .count();
    if keep < lines.len() {
        lines.truncate(keep);
        lines.push("… (the rest of the tree is left out: its names are long)".to_owned());
    }
}

/// The entries directly in `dir`, folders first, each group by name.
fn children<'a>(top: &'a ProjectTop, dir: &Path) -> Vec<(&'a PathBuf, bool)> {
    // A folder's descendants follow it in the map's order.
    let mut inside: Vec<(&PathBuf, bool)> = top
        .entries
        .range(dir.to_path_buf()..)
        .take_while(|(path, _)| path.starts_with(dir))
        .filter(|(path, _)| path.parent() == Some(dir))
        .map(|(path, folder)| (path, *folder))
        .collect();
    // A linked worktree's `.git` is a file the walk keeps.
    inside.retain(|(path, _)| {
        !path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| SEARCH_SKIPPED_DIRS.contains(&n))
    });
    inside.sort_by_key(|(path, folder)| (!folder, path.file_name()));
    inside
}

/// An entry's name as one line.
fn shown(path: &Path) -> String {
    let name = path
        .file_name()
        .unwrap_or(path.as_os_str())
        .to_string_lossy();
    one_line(&name, NAME_MAX_CHARS).unwrap_or_else(|| strip_controls(&name).into_owned())
}
