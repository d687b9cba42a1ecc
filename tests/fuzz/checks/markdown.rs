//! The markdown renderer and wrapper at any width from 1 to 300: the
//! streamed render of every prefix never panics, no line is wider than
//! asked, and once the text ends its line the streamed render is the
//! whole-text render.
use std::sync::LazyLock;

use dashfloat::ui::markdown::{Rendered, render, render_streaming};
use dashfloat::ui::theme::Theme;
use dashfloat::ui::width::str_width;

static THEME: LazyLock<Theme> = LazyLock::new(|| Theme::new(false));

fn fits(rendered: &Rendered, width: u16) -> bool {
    rendered.lines.iter().all(|line| {
        let columns: usize = line.spans.iter().map(|s| str_width(&s.content)).sum();
        columns <= usize::from(width)
    })
}

/// Two bytes of width (1–300), one choosing how many prefixes, then the
/// text.
pub fn run(data: &[u8]) {
    let Some((head, text)) = data.split_at_checked(3) else {
        return;
    };
    let text = String::from_utf8_lossy(text);
    let width = u16::from_le_bytes([head[0], head[1]]) % 300 + 1;
    let theme = &*THEME;
    let whole = render(&text, width, theme);
    assert!(fits(&whole, width), "a line wider than {width}");
    // A few prefixes, as the reply streams in.
    let step = (text.len() / (usize::from(head[2]) % 8 + 1)).max(1);
    let mut end = 0;
    while end < text.len() {
        end = (end + step).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let streamed = render_streaming(&text[..end], width, theme);
        assert!(fits(&streamed, width), "a streamed line wider than {width}");
    }
    let ended = format!("{text}\n");
    assert_eq!(
        render_streaming(&ended, width, theme),
        render(&ended, width, theme)
    );
}
