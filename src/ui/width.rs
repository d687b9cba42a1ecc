//! How many columns text takes on screen: the one width rule every line
//! the UI lays out is measured with (ADR 0018).
//!
//! Text is measured in grapheme clusters (from `unicode-segmentation`), the
//! units ratatui draws one cell or two at a time, and each cluster is given
//! the width ratatui gives it when it fills the buffer. Measuring exactly
//! what the renderer draws is what keeps a wrapped line inside its width:
//! `"❤\u{FE0F}"` is one two-column cluster, a flag or a family emoji joined
//! by U+200D is one cluster that no row break can split, and an accent is
//! part of the letter before it.

use ratatui::buffer::CellWidth;
use unicode_segmentation::UnicodeSegmentation;

/// The columns grapheme cluster `cluster` takes when drawn: 0 for one that
/// holds a control character (ratatui drops those), otherwise ratatui's own
/// cell width for it (1 or 2 for almost everything).
#[inline]
pub fn cluster_width(cluster: &str) -> usize {
    match cluster.as_bytes() {
        [byte] => usize::from(!byte.is_ascii_control()),
        _ if cluster.contains(char::is_control) => 0,
        _ => usize::from(cluster.cell_width()),
    }
}

/// The display width of `text`: the sum of its clusters' widths.
pub fn str_width(text: &str) -> usize {
    if text.is_ascii() {
        return text.bytes().filter(|b| !b.is_ascii_control()).count();
    }
    clusters(text).map(|c| c.width).sum()
}

/// One grapheme cluster of a text, where it is and how wide it is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cluster<'t> {
    /// Its byte offset in the text it came from.
    pub start: usize,
    /// The cluster itself.
    pub text: &'t str,
    /// Its width ([`cluster_width`]).
    pub width: usize,
}

impl Cluster<'_> {
    /// The byte offset just past it.
    pub fn end(&self) -> usize {
        self.start + self.text.len()
    }

    /// Whether it is whitespace (a place a line may break).
    pub fn is_whitespace(&self) -> bool {
        self.text.starts_with(char::is_whitespace)
    }
}

/// The grapheme clusters of `text`, in order.
pub fn clusters(text: &str) -> Clusters<'_> {
    Clusters { text, at: 0 }
}

/// Iterator over a text's [`Cluster`]s. An ASCII character followed by
/// another ASCII character is a cluster on its own (save CR LF), so plain
/// ASCII text never reaches the segmentation tables.
#[derive(Debug, Clone)]
pub struct Clusters<'t> {
    text: &'t str,
    at: usize,
}

impl<'t> Iterator for Clusters<'t> {
    type Item = Cluster<'t>;

    #[inline]
    fn next(&mut self) -> Option<Cluster<'t>> {
        let rest = self.text.get(self.at..)?;
        let bytes = rest.as_bytes();
        let len = match bytes {
            [] => return None,
            [b'\r', b'\n', ..] => 2,
            [first, next, ..] if first.is_ascii() && next.is_ascii() => 1,
            [first] if first.is_ascii() => 1,
            _ => rest.graphemes(true).next().map_or(rest.len(), str::len),
        };
        let text = &rest[..len];
        let cluster = Cluster {
            start: self.at,
            text,
            width: cluster_width(text),
        };
        self.at += len;
        Some(cluster)
    }
}

/// The longest start of `text` that fits in `width` columns, cut between
/// clusters.
pub fn prefix_fitting(text: &str, width: usize) -> &str {
    let mut used = 0;
    for cluster in clusters(text) {
        used += cluster.width;
        if used > width {
            return &text[..cluster.start];
        }
    }
    text
}
