//! A description for a project whose manifest gives none: the first
//! paragraph of its README — past the title, badges, images and HTML —
//! in a line of at most [`DESCRIPTION_MAX_CHARS`].

use std::path::Path;

use crate::tools::ProjectTop;

use super::Stated;
use super::read::Reader;
use super::text::DESCRIPTION_MAX_CHARS;

/// The README's names looked for at the top, in order.
const READMES: [&str; 6] = [
    "README.md",
    "README.rst",
    "README.txt",
    "README",
    "readme.md",
    "Readme.md",
];

/// The README's first paragraph, with the file's name.
pub(super) fn description(reader: &Reader<'_>, top: &ProjectTop) -> Option<Stated> {
    let file = READMES
        .into_iter()
        .find(|name| top.entries.get(Path::new(name)) == Some(&false))?;
    let text = reader.head(file)?;
    // Bold is markup the line does without.
    let paragraph = first_paragraph(&text)?.replace("**", "");
    Stated::line(Some(paragraph), DESCRIPTION_MAX_CHARS, file)
}

/// The first run of prose lines: headings (`#`, or a line underlined with
/// `===`/`---`), badges and images, HTML, reStructuredText directives,
/// code fences and front matter are passed over.
fn first_paragraph(text: &str) -> Option<String> {
    let mut paragraph: Vec<&str> = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("```") || line.starts_with("~~~") {
            fenced = !fenced;
            paragraph.clear();
            continue;
        }
        if fenced {
            continue;
        }
        if is_underline(line) {
            // What came before was a title.
            paragraph.clear();
            continue;
        }
        let skipped = line.starts_with(['#', '<', '!', '|'])
            || line.starts_with("[!")
            || line.starts_with("..")
            || line.starts_with(":")
            || line == "---";
        if line.is_empty() || skipped {
            if !paragraph.is_empty() && line.is_empty() {
                return Some(paragraph.join(" "));
            }
            continue;
        }
        paragraph.push(line);
    }
    (!paragraph.is_empty()).then(|| paragraph.join(" "))
}

/// Whether `line` only underlines (or overlines) a title: three or more
/// of one of `=`, `-`, `~`, `^`, `*`, `+`.
fn is_underline(line: &str) -> bool {
    let mut chars = line.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    matches!(first, '=' | '-' | '~' | '^' | '*' | '+')
        && line.len() >= 3
        && chars.all(|c| c == first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_paragraph_comes_after_titles_and_badges() {
        let md = "# Inventory\n\n[![ci](x.svg)](y)\n<p align=center>\n\nA small\nstock-keeping library.\n\nMore.";
        assert_eq!(
            first_paragraph(md).as_deref(),
            Some("A small stock-keeping library.")
        );
        let rst = "=======\nSlugify\n=======\n\n.. image:: badge.svg\n\nMakes slugs.\n";
        assert_eq!(first_paragraph(rst).as_deref(), Some("Makes slugs."));
        let setext = "Title\n-----\nBody line\n";
        assert_eq!(first_paragraph(setext).as_deref(), Some("Body line"));
        assert_eq!(first_paragraph("# Only a title\n"), None);
        assert_eq!(first_paragraph("```\ncode\n```\nText"), Some("Text".into()));
    }
}
