//! The one wrapping engine: every way text is laid out in rows (plain
//! entries, markdown replies, streaming replies, the input box) keeps each
//! row within its width as ratatui draws it, and never cuts a grapheme
//! cluster (CJK, emoji with U+FE0F, ZWJ sequences, combining marks, flags).

use std::collections::HashSet;

use dashfloat::ui::editor::Editor;
use dashfloat::ui::markdown::{render, render_streaming};
use dashfloat::ui::theme::Theme;
use dashfloat::ui::wrap::wrap_plain;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use unicode_segmentation::UnicodeSegmentation;

/// Texts that measure differently per character and per cluster.
const SAMPLES: [&str; 10] = [
    // CJK, with full-width punctuation.
    "中文字符也要正确换行，宽度为二。全角，标点！日本語のテキスト",
    // Emoji presentation selectors: one column as a character, two drawn.
    "love ❤\u{FE0F}❤\u{FE0F}❤\u{FE0F} and ☀\u{FE0F}☀\u{FE0F} weather ✔\u{FE0F}done",
    // ZWJ sequences and skin tones.
    "family 👨\u{200D}👩\u{200D}👧\u{200D}👦👩\u{200D}💻👍🏽👍🏿 and 🏳\u{FE0F}\u{200D}🌈 flags",
    // Combining marks, stacked.
    "cafe\u{301} re\u{301}sume\u{301} Z\u{351}\u{34b}\u{35b}a\u{350}l\u{351}g\u{34a}o n\u{303}o\u{308}",
    // Regional-indicator flags, run together and spaced.
    "🇺🇸🇫🇷🇩🇪🇯🇵🇧🇷🇨🇦 and 🇬🇧 🇮🇹",
    // Mixed scripts and a long unbroken word.
    "path/to/a_file_name_that_is_very_long_indeed.rs 한국어 텍스트 ﾊﾞｶ ok",
    // Keycaps and a text-presentation selector.
    "keys #\u{FE0F}\u{20E3} 1\u{FE0F}\u{20E3} ✂\u{FE0E} end",
    // Everything glued into one word.
    "中❤\u{FE0F}👨\u{200D}👩\u{200D}👧🇺🇸e\u{301}中❤\u{FE0F}👨\u{200D}👩\u{200D}👧🇺🇸e\u{301}",
    // Plain ASCII, for the fast path, with indentation and a tab.
    "    indented\tline with  two  spaces and averyveryveryverylongwordthatmustbecut",
    // Several lines.
    "first line 中文\n\n  third ❤\u{FE0F} line\nfourth 🇺🇸🇫🇷",
];

/// The columns ratatui takes to draw `line`, read from a buffer it drew
/// into (wide enough never to cut it).
fn drawn_width(line: &Line<'_>) -> usize {
    let mut buffer = Buffer::empty(Rect::new(0, 0, 1024, 1));
    let (x, _) = buffer.set_line(0, 0, line, 1024);
    usize::from(x)
}

/// Asserts `line` fits `width` both as ratatui draws it and as it measures
/// a line's width.
fn assert_fits(line: &Line<'_>, width: usize, what: &str) {
    let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
    assert!(
        drawn_width(line) <= width && line.width() <= width,
        "{what} at width {width}: {text:?} is drawn {} wide ({} measured)",
        drawn_width(line),
        line.width()
    );
}

/// Asserts every cluster of `row` is a whole cluster of `source` (or one of
/// `extra`): nothing was cut inside a flag, a ZWJ sequence or an accent.
fn assert_whole_clusters(row: &str, source: &str, extra: &[&str], what: &str) {
    let whole: HashSet<&str> = source
        .graphemes(true)
        .chain(extra.iter().copied())
        .collect();
    for cluster in row.graphemes(true) {
        assert!(
            cluster.is_ascii() || whole.contains(cluster),
            "{what}: {cluster:?} in {row:?} is part of a cluster of {source:?}"
        );
    }
}

/// The source's clusters without whitespace, as a string: what wrapping
/// must keep (when every cluster fits the width).
fn visible(text: &str) -> String {
    text.graphemes(true)
        .filter(|g| !g.starts_with(char::is_whitespace))
        .collect()
}

#[test]
fn plain_rows_fit_every_width_and_keep_every_cluster_whole() {
    for sample in SAMPLES {
        for width in 1..=200u16 {
            let rows = wrap_plain(sample, width);
            for row in &rows {
                assert_fits(&Line::raw(row.as_str()), usize::from(width), "plain");
                assert_whole_clusters(row, sample, &[], "plain");
            }
            // Nothing is lost once every cluster fits (the widest is 3).
            if width >= 3 {
                assert_eq!(visible(&rows.concat()), visible(sample), "width {width}");
            }
        }
    }
}

#[test]
fn markdown_lines_fit_every_width_and_keep_every_cluster_whole() {
    let theme = Theme::new(false);
    let marks = ["•", "◦", "▪", "│", "─", "┼", "…"];
    for sample in SAMPLES {
        let documents = [
            sample.to_string(),
            format!("# {sample}"),
            format!("- {sample}\n  - *{sample}*"),
            format!("> **{sample}** `{sample}`"),
            format!("```\n{sample}\n```"),
            format!("| a | {sample} |\n|---|---|\n| {sample} | b |"),
        ];
        for doc in &documents {
            for width in 1..=200u16 {
                for line in &render(doc, width, &theme).lines {
                    let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
                    assert_fits(line, usize::from(width), "render");
                    assert_whole_clusters(&text, doc, &marks, "render");
                }
                // The same wrapper; every width would only repeat it.
                if width <= 40 {
                    for line in &render_streaming(doc, width, &theme).lines {
                        assert_fits(line, usize::from(width), "stream");
                    }
                }
            }
        }
    }
}

#[test]
fn input_box_rows_fit_every_width_and_keep_every_cluster_whole() {
    for sample in SAMPLES {
        let mut editor = Editor::new();
        assert!(editor.insert_str(sample));
        for width in 1..=200u16 {
            let layout = editor.layout(width, 100, 0);
            for row in &layout.rows {
                assert_fits(&Line::raw(row.as_str()), usize::from(width), "input");
                assert_whole_clusters(row, sample, &[], "input");
            }
            assert!(usize::from(layout.cursor.0) <= usize::from(width));
        }
    }
}

#[test]
fn an_emoji_with_a_presentation_selector_counts_two_columns() {
    // Measured a character at a time it is one column, and three of them
    // overflowed a five-column row by one.
    let hearts = "❤\u{FE0F}❤\u{FE0F}❤\u{FE0F}";
    assert_eq!(wrap_plain(hearts, 5), ["❤\u{FE0F}❤\u{FE0F}", "❤\u{FE0F}"]);
    let lines = render(hearts, 5, &Theme::new(false)).lines;
    assert_eq!(lines.len(), 2);
}

#[test]
fn prompts_excerpts_and_replies_wrap_alike() {
    let theme = Theme::new(false);
    let text = "wrap 中文字符 ❤\u{FE0F} 👨\u{200D}👩\u{200D}👧 🇺🇸🇫🇷 e\u{301}te\u{301} alike";
    for width in 1..=40u16 {
        let reply: Vec<String> = render(text, width, &theme)
            .lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(wrap_plain(text, width), reply, "width {width}");
    }
}

fn rows_with_ends(rows: &[String]) -> String {
    rows.iter().map(|r| format!("{r}|\n")).collect()
}

#[test]
fn readable_rows_of_each_kind_of_cluster() {
    let mut out = String::new();
    for (sample, widths) in [
        (SAMPLES[0], [7, 12]),
        (SAMPLES[1], [5, 11]),
        (SAMPLES[2], [6, 13]),
        (SAMPLES[3], [6, 10]),
        (SAMPLES[4], [3, 9]),
        (SAMPLES[8], [9, 16]),
    ] {
        for width in widths {
            out.push_str(&format!("--- width {width}: {sample:?}\n"));
            out.push_str(&rows_with_ends(&wrap_plain(sample, width)));
        }
    }
    insta::assert_snapshot!("plain_rows", out);
}

#[test]
fn readable_input_box_rows() {
    let mut out = String::new();
    for (sample, width) in [(SAMPLES[2], 7), (SAMPLES[4], 5), (SAMPLES[9], 9)] {
        let mut editor = Editor::new();
        assert!(editor.insert_str(sample));
        let layout = editor.layout(width, 100, 0);
        out.push_str(&format!(
            "--- width {width}, cursor {:?}: {sample:?}\n",
            layout.cursor
        ));
        out.push_str(&rows_with_ends(&layout.rows));
    }
    insta::assert_snapshot!("input_box_rows", out);
}
