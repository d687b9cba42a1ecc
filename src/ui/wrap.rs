//! Width-aware wrapping of plain text (prompts, notices, reasoning).

/// Wraps `text` to lines of at most `width` display columns: explicit line
/// breaks are kept, words wrap, over-long words break, tabs become spaces.
pub fn wrap_plain(text: &str, width: u16) -> Vec<String> {
    let width = usize::from(width.max(1));
    let options = textwrap::Options::new(width)
        .break_words(true)
        .word_separator(textwrap::WordSeparator::UnicodeBreakProperties);
    let mut out = Vec::new();
    for line in text.split('\n') {
        let line = line.trim_end_matches('\r').replace('\t', "    ");
        if line.is_empty() {
            out.push(String::new());
            continue;
        }
        out.extend(
            textwrap::wrap(&line, &options)
                .into_iter()
                .map(|l| l.into_owned()),
        );
    }
    out
}
