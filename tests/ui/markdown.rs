//! The markdown renderer: styled output snapshots, streaming behaviour, the
//! width invariant and code block extraction.

use dashfloat::ui::markdown::{code_blocks, render, render_streaming};
use dashfloat::ui::theme::Theme;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

/// A theme whose every role has its own colour, so snapshots can name the
/// role each span was drawn with.
fn test_theme() -> Theme {
    let fg = |n| Style::new().fg(Color::Indexed(n));
    Theme {
        header: fg(10),
        user: fg(11),
        text: Style::new(),
        dim: fg(1),
        accent: fg(2),
        heading: fg(3),
        inline_code: fg(4),
        code_block: fg(5),
        link: fg(6),
        emphasis: Style::new().add_modifier(Modifier::ITALIC),
        strong: Style::new().add_modifier(Modifier::BOLD),
        error: fg(12),
        border: fg(13),
    }
}

fn role(c: Color) -> &'static str {
    match c {
        Color::Indexed(1) => "dim",
        Color::Indexed(2) => "accent",
        Color::Indexed(3) => "heading",
        Color::Indexed(4) => "code",
        Color::Indexed(5) => "block",
        Color::Indexed(6) => "link",
        _ => "?",
    }
}

/// One line as text: unstyled spans plain, styled ones as `«role,mods:text»`;
/// a `|` marks where the line ends.
fn describe(line: &Line<'_>) -> String {
    let mut out = String::new();
    for span in &line.spans {
        let s = span.style;
        let mut tags: Vec<&str> = Vec::new();
        if let Some(c) = s.fg {
            tags.push(role(c));
        }
        for (m, name) in [
            (Modifier::BOLD, "bold"),
            (Modifier::ITALIC, "italic"),
            (Modifier::UNDERLINED, "underline"),
            (Modifier::CROSSED_OUT, "strike"),
        ] {
            if s.add_modifier.contains(m) {
                tags.push(name);
            }
        }
        if tags.is_empty() {
            out.push_str(&span.content);
        } else {
            out.push_str(&format!("«{}:{}»", tags.join(","), span.content));
        }
    }
    out.push('|');
    out
}

fn describe_all(lines: &[Line<'_>]) -> String {
    lines.iter().map(describe).collect::<Vec<_>>().join("\n")
}

fn plain(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

/// A reply using every construct the renderer knows, CJK and an emoji
/// included; `benches/main.rs` times its rendering.
const DOCUMENT: &str = include_str!("../fixtures/markdown-document.md");

#[test]
fn document_at_80_columns() {
    let out = render(DOCUMENT, 80, &test_theme());
    insta::assert_snapshot!("document_80", describe_all(&out.lines));
}

#[test]
fn document_at_30_columns() {
    let out = render(DOCUMENT, 30, &test_theme());
    insta::assert_snapshot!("document_30", describe_all(&out.lines));
}

#[test]
fn code_block_is_verbatim_labelled_and_broken_at_width() {
    let text = "Before.\n\n```python\ndef f():\n\treturn 'abcdefghijklmnopqrstuvwxyz'\n\n    x  =  1\n```\n\n~~~\nsecond\n~~~\n";
    let out = render(text, 20, &test_theme());
    insta::assert_snapshot!("code_block_20", describe_all(&out.lines));
    let lines: Vec<String> = out.lines.iter().map(plain).collect();
    assert!(lines.contains(&"[1] python".to_owned()));
    assert!(lines.contains(&"[2]".to_owned()));
    // Inner spacing kept as typed; the tab became four columns.
    assert!(lines.contains(&"    x  =  1".to_owned()));
    assert!(lines.contains(&"    return 'abcdefgh".to_owned()));
    assert!(lines.contains(&"ijklmnopqrstuvwxyz'".to_owned()));
}

#[test]
fn links_show_the_url_only_when_it_differs_from_the_text() {
    let out = render(
        "[docs](https://a.example/x) and <https://b.example>",
        80,
        &test_theme(),
    );
    let line = plain(&out.lines[0]);
    assert_eq!(line, "docs (https://a.example/x) and https://b.example");
}

#[test]
fn ordered_list_keeps_its_start_number_and_hangs_wrapped_lines() {
    let out = render("7. first item wraps here\n8. second", 14, &test_theme());
    let lines: Vec<String> = out.lines.iter().map(plain).collect();
    assert_eq!(lines, ["7. first item", "   wraps here", "8. second"]);
}

#[test]
fn inline_code_is_not_broken_when_it_fits() {
    let out = render("aaaa `let x = 1` b", 12, &test_theme());
    let lines: Vec<String> = out.lines.iter().map(plain).collect();
    assert_eq!(lines, ["aaaa", "let x = 1 b"]);
}

#[test]
fn wide_characters_count_two_columns() {
    let out = render("中文字符中文字符", 7, &test_theme());
    let lines: Vec<String> = out.lines.iter().map(plain).collect();
    assert_eq!(lines, ["中文字", "符中文", "字符"]);
}

/// A cell cut where a wide character does not fit ends there: text from
/// further on must not seem to follow what is shown.
#[test]
fn a_table_cell_cut_at_a_wide_character_ends_there() {
    let out = render("| h |\n|---|\n| ab中**cd** |", 4, &test_theme());
    let lines: Vec<String> = out.lines.iter().map(plain).collect();
    let row = lines.iter().find(|l| l.contains("ab")).unwrap();
    assert!(row.contains("ab…"), "{lines:?}");
    assert!(!row.contains('c'), "{lines:?}");
}

#[test]
fn streaming_keeps_a_half_typed_line_plain() {
    let theme = test_theme();
    let out = render_streaming("Intro **done**\n\nhalf **typed and `open", 80, &theme);
    let text = describe_all(&out.lines);
    assert_eq!(text, "Intro «bold:done»|\n|\nhalf **typed and `open|");
}

#[test]
fn streaming_renders_a_completed_line_as_markdown() {
    let theme = test_theme();
    let partial = render_streaming("a **b", 80, &theme);
    assert_eq!(describe_all(&partial.lines), "a **b|");
    let complete = render_streaming("a **b**\n", 80, &theme);
    assert_eq!(describe_all(&complete.lines), "a «bold:b»|");
    assert_eq!(complete, render("a **b**\n", 80, &theme));
}

#[test]
fn streaming_continues_a_paragraph_without_a_gap() {
    let theme = test_theme();
    let out = render_streaming("first line\nsecond", 80, &theme);
    let lines: Vec<String> = out.lines.iter().map(plain).collect();
    assert_eq!(lines, ["first line", "second"]);
    let out = render_streaming("# Title\nbody", 80, &theme);
    let lines: Vec<String> = out.lines.iter().map(plain).collect();
    assert_eq!(lines, ["# Title", "", "body"]);
}

#[test]
fn streaming_inside_an_open_fence_shows_code() {
    let theme = test_theme();
    let out = render_streaming("```sh\nls -la\ncd **x", 80, &theme);
    assert_eq!(
        describe_all(&out.lines),
        "«dim:[1] sh»|\n«block:ls -la»|\n«block:cd **x»|"
    );
}

#[test]
fn streaming_a_closing_fence_being_typed_is_not_shown_as_code() {
    let theme = test_theme();
    let out = render_streaming("```\nx\n``", 80, &theme);
    assert_eq!(
        describe_all(&out.lines),
        "«dim:[1]»|\n«block:x»|\n«block:``»|"
    );
    let out = render_streaming("```\nx\n```", 80, &theme);
    assert_eq!(describe_all(&out.lines), "«dim:[1]»|\n«block:x»|");
}

#[test]
fn streaming_after_a_closed_fence_is_plain_text() {
    let theme = test_theme();
    let out = render_streaming("```\nx\n```\nafter **it", 80, &theme);
    assert_eq!(
        describe_all(&out.lines),
        "«dim:[1]»|\n«block:x»|\n|\nafter **it|"
    );
}

#[test]
fn streaming_a_text_that_ends_its_line_matches_the_final_render() {
    let theme = test_theme();
    let mut ends = 0;
    for (i, _) in DOCUMENT.match_indices('\n') {
        let text = &DOCUMENT[..=i];
        assert_eq!(render_streaming(text, 40, &theme), render(text, 40, &theme));
        ends += 1;
    }
    assert!(ends > 30);
}

#[test]
fn every_line_fits_the_width() {
    let inputs = [
        DOCUMENT,
        "",
        "plain",
        "averyveryverylongwordwithoutanyspacesatallthatmustbehardbroken",
        "> > > deeply quoted text inside three quotes\n\n- a\n  - b\n    - c\n      - d very nested\n",
        "| a | b | c | d | e | f |\n|---|---|---|---|---|---|\n| 1 | 2 | 3 | 4 | 5 | 6 |\n| long cell content here | 中文 | x | y | z | w |",
        "# A heading long enough to wrap a few times at small widths\n###### h6",
        "```\n\tcode\twith\ttabs and 中文 wide chars 🎉🎉🎉\n```",
        "emoji ❤\u{FE0F} ❤\u{FE0F} 👨\u{200D}👩\u{200D}👧 family e\u{301}\u{301} combining",
        "1. `inline code longer than narrow widths` and [link text](http://example.com/a/very/long/url/path)",
        "<table><tr><td>html</td></tr></table>\n\ntext<br>more",
        "a\\\nhard break\n\n***\n\n   indented code block\n",
        "100000. big number item\n\n- [ ] task\n- [x] done",
        "中文字符中文字符中文字符。全角，标点！",
        "text with\ttab and control \u{7} bell \u{1b}[31m escape",
    ];
    let theme = Theme::new(false);
    for input in inputs {
        let mut widths: Vec<u16> = (1..=12).collect();
        widths.extend([17, 23, 40, 80, 81]);
        for width in widths {
            let check = |lines: &[Line<'_>], what: &str| {
                for line in lines {
                    assert!(
                        line.width() <= usize::from(width),
                        "{what} width {width}: {:?} is {} wide, input {input:?}",
                        plain(line),
                        line.width()
                    );
                }
            };
            check(&render(input, width, &theme).lines, "render");
            // Every prefix, as the stream would deliver it.
            let mut cut = 0;
            while cut < input.len() {
                cut += 1;
                while !input.is_char_boundary(cut) {
                    cut += 1;
                }
                check(
                    &render_streaming(&input[..cut], width, &theme).lines,
                    "stream",
                );
            }
        }
    }
}

#[test]
fn zero_width_renders_nothing() {
    assert!(render("# hi\n\ntext", 0, &test_theme()).lines.is_empty());
    assert!(render_streaming("hi", 0, &test_theme()).lines.is_empty());
}

#[test]
fn code_blocks_are_extracted_verbatim_in_order() {
    let text = "Text\n\n```rust\nfn a() {\n\tb();\n}\n```\n\n    indented\n    block\n\n- item\n\n  ~~~\n  in list\n  ~~~\n\n`inline` is not a block\n";
    assert_eq!(
        code_blocks(text),
        ["fn a() {\n\tb();\n}", "indented\nblock", "in list"]
    );
    assert!(code_blocks("no code here").is_empty());
}
