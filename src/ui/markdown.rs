//! Assistant prose → styled lines that fit a width.
//!
//! One pass over pulldown-cmark events. Inline content of a block is
//! gathered into styled fragments, then word-wrapped greedily into the
//! columns left after the block's prefix (quote bars, list markers, heading
//! marker). Code blocks are kept verbatim and only hard-broken by columns.
//! Everything is linear in the input, so the streaming message can be
//! re-rendered every frame.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::wrap::{WidthCounter, str_width};

/// The rendered form of one assistant message.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rendered {
    /// The lines, each at most the requested width in display columns.
    pub lines: Vec<Line<'static>>,
}

/// Columns a tab advances to (the next multiple of this) in code blocks.
const TAB_STOP: usize = 4;

/// The markdown extensions assistants commonly use.
fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// Renders complete markdown into lines at most `width` display columns wide.
pub fn render(text: &str, width: u16, theme: &Theme) -> Rendered {
    let mut r = Renderer::new(theme, usize::from(width));
    if width > 0 {
        r.run(text);
    }
    Rendered { lines: r.out }
}

/// Renders a reply that is still streaming: every completed line (up to the
/// last `'\n'`) as markdown and the unfinished last line as plain wrapped
/// text, so half-typed markup (`**bo`, a half link) never flickers into a
/// different shape. Inside an open code fence the unfinished line is code
/// already, so the whole text renders as markdown and nothing jumps.
pub fn render_streaming(text: &str, width: u16, theme: &Theme) -> Rendered {
    let split = text.rfind('\n').map_or(0, |i| i + 1);
    let (done, tail) = text.split_at(split);
    if width == 0 {
        return Rendered::default();
    }
    let mut r = Renderer::new(theme, usize::from(width));
    if !tail.is_empty() {
        r.tail = Some(tail);
    }
    r.run(done);
    // Not taken by an open code fence: plain text after the last block.
    if let Some(tail) = r.tail.take() {
        if !r.out.is_empty() && tail_starts_block(done, tail) {
            r.out.push(Line::default());
        }
        r.inline.text(tail, theme.text);
        r.flush_inline();
    }
    Rendered { lines: r.out }
}

/// Guesses whether the unfinished `tail` will be a block of its own once
/// complete (so a blank line separates it) rather than continue the block
/// the completed text ended with (paragraph, list item, table).
fn tail_starts_block(done: &str, tail: &str) -> bool {
    let body = done.strip_suffix('\n').unwrap_or(done);
    let last = body.rsplit('\n').next().unwrap_or("");
    let last = last.trim_start_matches(|c: char| c == '>' || c.is_whitespace());
    if last.is_empty() || last.starts_with('#') || is_fence(last) || is_rule(last) {
        return true;
    }
    let tail = tail.trim_start_matches(|c: char| c == '>' || c.is_whitespace());
    if looks_like_item(tail) {
        return !looks_like_item(last);
    }
    if tail.starts_with('|') {
        return !last.starts_with('|');
    }
    tail.starts_with('#') || is_fence(tail)
}

fn is_fence(line: &str) -> bool {
    line.starts_with("```") || line.starts_with("~~~")
}

fn is_rule(line: &str) -> bool {
    let mut marks = line.chars().filter(|c| !c.is_whitespace());
    let Some(first) = marks.next() else {
        return false;
    };
    let mut count = 1;
    for c in marks {
        if c != first {
            return false;
        }
        count += 1;
    }
    matches!(first, '-' | '*' | '_') && count >= 3
}

/// `- x`, `* x`, `+ x`, `1. x`, `1) x` (or just the marker so far).
fn looks_like_item(line: &str) -> bool {
    let rest = line.trim_start_matches(|c: char| c.is_ascii_digit());
    let marker = if rest.len() < line.len() {
        rest.strip_prefix('.').or_else(|| rest.strip_prefix(')'))
    } else {
        line.strip_prefix(['-', '*', '+'])
    };
    marker.is_some_and(|after| after.is_empty() || after.starts_with(' '))
}

/// Whether the source of a fenced code block lacks its closing fence (the
/// block runs to the end of the text so far).
fn fence_unclosed(block: &str) -> bool {
    let mut lines = block.lines();
    lines.next();
    let Some(last) = lines.last() else {
        return true;
    };
    let last = last
        .trim_start_matches(|c: char| c == '>' || c.is_whitespace())
        .trim_end();
    !(is_fence(last) && last.chars().all(|c| c == '`' || c == '~'))
}

/// The fenced/indented code blocks of a message, verbatim, in order (for
/// copy-to-clipboard by index: block `[n]` on screen is element `n - 1`).
/// The newline that ends each block's last line is not included.
pub fn code_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for event in Parser::new_ext(text, options()) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => current = Some(String::new()),
            Event::Text(t) => {
                if let Some(code) = current.as_mut() {
                    code.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(mut code) = current.take() {
                    if code.ends_with('\n') {
                        code.pop();
                    }
                    blocks.push(code);
                }
            }
            _ => {}
        }
    }
    blocks
}

/// How a run of inline content may be broken.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RunKind {
    /// Text that may wrap at whitespace.
    Text,
    /// Text kept on one line when it fits (inline code).
    Atomic,
    /// A hard line break (empty).
    Break,
}

/// A styled stretch `start..end` of [`Inline::text`].
struct Run {
    start: usize,
    end: usize,
    style: Style,
    kind: RunKind,
}

/// A block's inline content before wrapping: one string (control characters
/// already dropped) and the styled runs that cover it, so wrapping slices it
/// instead of allocating per word.
#[derive(Default)]
struct Inline {
    text: String,
    runs: Vec<Run>,
}

impl Inline {
    fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    fn push(&mut self, t: &str, style: Style, kind: RunKind) {
        let start = self.text.len();
        // Byte pre-check: C0 controls, DEL, and 0xC2 (lead byte of C1).
        let suspect = t
            .bytes()
            .any(|b| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f || b == 0xc2);
        if suspect {
            self.text.extend(
                t.chars()
                    .filter(|&c| !c.is_control() || c == '\n' || c == '\t'),
            );
        } else {
            self.text.push_str(t);
        }
        let end = self.text.len();
        if start == end && kind != RunKind::Break {
            return;
        }
        if kind == RunKind::Text
            && let Some(last) = self.runs.last_mut()
            && last.kind == RunKind::Text
            && last.style == style
        {
            last.end = end;
            return;
        }
        self.runs.push(Run {
            start,
            end,
            style,
            kind,
        });
    }

    fn text(&mut self, t: &str, style: Style) {
        self.push(t, style, RunKind::Text);
    }

    fn atomic(&mut self, t: &str, style: Style) {
        self.push(t, style, RunKind::Atomic);
    }

    fn hard_break(&mut self) {
        self.push("", Style::new(), RunKind::Break);
    }
}

/// Something that prefixes each line of the blocks inside it.
struct Container {
    /// The prefix of the container's first line (list marker, heading marker).
    first: String,
    /// The prefix of every later line (hanging indent, quote bar).
    rest: String,
    /// The prefix's style.
    style: Style,
    /// Width of `first` (and of `rest`).
    width: usize,
    /// Whether the first line has been produced.
    used: bool,
    /// Whether this is a list item (lists nested in items aren't spaced).
    item: bool,
}

/// A table being collected.
struct Table {
    alignments: Vec<Alignment>,
    rows: Vec<Vec<Vec<(String, Style)>>>,
    /// Number of header rows (0 or 1) at the top of `rows`.
    header_rows: usize,
}

/// A code block being collected.
struct Code {
    label: String,
    text: String,
    fenced: bool,
}

struct Renderer<'t> {
    theme: &'t Theme,
    /// While streaming: the unfinished last line, not yet placed.
    tail: Option<&'t str>,
    width: usize,
    out: Vec<Line<'static>>,
    containers: Vec<Container>,
    inline: Inline,
    /// Composed inline styles; the last is current.
    styles: Vec<Style>,
    /// Next number of each open list (None for bullet lists).
    lists: Vec<Option<u64>>,
    /// A blank line is owed before the next block.
    pending_blank: bool,
    code: Option<Code>,
    code_count: usize,
    table: Option<Table>,
    /// Per open link: its destination and where its text starts in `inline`.
    links: Vec<(String, usize)>,
    in_html_block: bool,
}

impl<'t> Renderer<'t> {
    fn new(theme: &'t Theme, width: usize) -> Self {
        Self {
            theme,
            tail: None,
            width,
            out: Vec::new(),
            containers: Vec::new(),
            inline: Inline::default(),
            styles: vec![theme.text],
            lists: Vec::new(),
            pending_blank: false,
            code: None,
            code_count: 0,
            table: None,
            links: Vec::new(),
            in_html_block: false,
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or(self.theme.text)
    }

    fn push_style(&mut self, s: Style) {
        let composed = self.style().patch(s);
        self.styles.push(composed);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    fn run(&mut self, text: &str) {
        for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
            if let Event::End(TagEnd::CodeBlock) = event {
                self.take_tail_into_code(&text[range]);
            }
            self.event(event);
        }
        self.flush_inline();
    }

    /// While streaming, an unfinished line inside a still-open fence is
    /// code already: it joins the block instead of showing as prose (unless
    /// it is the closing fence being typed).
    fn take_tail_into_code(&mut self, block: &str) {
        let Some(tail) = self.tail else {
            return;
        };
        let Some(code) = self.code.as_mut() else {
            return;
        };
        if !code.fenced || !fence_unclosed(block) {
            return;
        }
        self.tail = None;
        if !is_fence(tail.trim_start_matches(|c: char| c == '>' || c.is_whitespace())) {
            code.text.push_str(tail);
            code.text.push('\n');
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => {
                if let Some(code) = self.code.as_mut() {
                    code.text.push_str(&t);
                } else {
                    self.text(&t);
                }
            }
            Event::Code(t) => {
                let style = self.style().patch(self.theme.inline_code);
                self.inline.atomic(&t, style);
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => {
                let style = self.style().patch(self.theme.inline_code);
                self.inline.atomic(&t, style);
            }
            Event::Html(t) | Event::InlineHtml(t) => self.text(&t),
            Event::FootnoteReference(t) => {
                let style = self.style();
                self.inline.text(&format!("[^{t}]"), style);
            }
            Event::SoftBreak => {
                let style = self.style();
                self.inline.text(" ", style);
            }
            Event::HardBreak => self.inline.hard_break(),
            Event::Rule => {
                self.start_block();
                let avail = self.avail();
                let rule = "─".repeat(avail);
                let spans = vec![Span::styled(rule, self.theme.dim)];
                self.emit(spans);
                self.pending_blank = true;
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                self.inline.atomic(mark, self.theme.accent);
            }
        }
    }

    /// Adds text in the current style; in an HTML block its newlines are
    /// line breaks.
    fn text(&mut self, t: &str) {
        let style = self.style();
        if self.in_html_block {
            let mut parts = t.split('\n').peekable();
            while let Some(part) = parts.next() {
                self.inline.text(part, style);
                if parts.peek().is_some() {
                    self.inline.hard_break();
                }
            }
        } else {
            self.inline.text(t, style);
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.start_block(),
            Tag::Heading { level, .. } => {
                self.start_block();
                let n = heading_level(level);
                let marker = format!("{} ", "#".repeat(n));
                self.push_container(marker, self.theme.dim, false);
                self.push_style(self.theme.heading);
            }
            Tag::BlockQuote(_) => {
                self.start_block();
                self.containers.push(Container {
                    first: "│ ".to_owned(),
                    rest: "│ ".to_owned(),
                    style: self.theme.dim,
                    width: 2,
                    used: true,
                    item: false,
                });
            }
            Tag::CodeBlock(kind) => {
                self.start_block();
                self.code_count += 1;
                let mut label = format!("[{}]", self.code_count);
                let fenced = matches!(kind, CodeBlockKind::Fenced(_));
                if let CodeBlockKind::Fenced(info) = kind
                    && let Some(lang) = info.split([' ', ',', '{']).next()
                    && !lang.is_empty()
                {
                    label.push(' ');
                    label.push_str(lang);
                }
                self.code = Some(Code {
                    label,
                    text: String::new(),
                    fenced,
                });
            }
            Tag::HtmlBlock => {
                self.start_block();
                self.in_html_block = true;
            }
            Tag::List(start) => {
                let nested = self.containers.last().is_some_and(|c| c.item);
                if nested {
                    self.flush_inline();
                } else {
                    self.start_block();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                // A loose previous item owes a blank line; it belongs to the
                // enclosing prefix, before this item's marker.
                self.start_block();
                let depth = self.lists.len();
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => match depth {
                        0 | 1 => "• ".to_owned(),
                        2 => "◦ ".to_owned(),
                        _ => "▪ ".to_owned(),
                    },
                };
                self.push_container(marker, self.theme.accent, true);
            }
            Tag::Table(alignments) => {
                self.start_block();
                self.table = Some(Table {
                    alignments,
                    rows: Vec::new(),
                    header_rows: 0,
                });
            }
            Tag::TableHead => {
                if let Some(t) = self.table.as_mut() {
                    t.rows.push(Vec::new());
                    t.header_rows = 1;
                }
                self.push_style(self.theme.strong);
            }
            Tag::TableRow => {
                if let Some(t) = self.table.as_mut() {
                    t.rows.push(Vec::new());
                }
            }
            Tag::TableCell => self.inline = Inline::default(),
            Tag::Emphasis => self.push_style(self.theme.emphasis),
            Tag::Strong => self.push_style(self.theme.strong),
            Tag::Strikethrough => self.push_style(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Superscript | Tag::Subscript => self.push_style(Style::new()),
            Tag::Link { dest_url, .. } => {
                self.links
                    .push((dest_url.into_string(), self.inline.text.len()));
                self.push_style(self.theme.link);
            }
            Tag::Image { dest_url, .. } => {
                self.links
                    .push((dest_url.into_string(), self.inline.text.len()));
                self.push_style(self.theme.link);
                let style = self.style();
                self.inline.text("image: ", style);
            }
            Tag::FootnoteDefinition(label) => {
                self.start_block();
                let style = self.theme.dim;
                self.inline.text(&format!("[^{label}]: "), style);
            }
            Tag::DefinitionList | Tag::DefinitionListTitle | Tag::MetadataBlock(_) => {
                self.start_block();
            }
            Tag::DefinitionListDefinition => {
                self.start_block();
                self.push_container(": ".to_owned(), self.theme.dim, true);
            }
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush_inline();
                self.pending_blank = true;
            }
            TagEnd::Heading(_) => {
                self.flush_inline();
                self.pop_style();
                self.containers.pop();
                self.pending_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.containers.pop();
                self.pending_blank = true;
            }
            TagEnd::CodeBlock => {
                if let Some(code) = self.code.take() {
                    self.emit_code(&code);
                }
                self.pending_blank = true;
            }
            TagEnd::HtmlBlock => {
                self.flush_inline();
                self.in_html_block = false;
                self.pending_blank = true;
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.lists.pop();
                if !self.containers.last().is_some_and(|c| c.item) {
                    self.pending_blank = true;
                }
            }
            TagEnd::Item | TagEnd::DefinitionListDefinition => {
                self.flush_inline();
                if self.containers.last().is_some_and(|c| !c.used) {
                    // An empty item still shows its marker.
                    self.emit(Vec::new());
                }
                self.containers.pop();
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.emit_table(&table);
                }
                self.pending_blank = true;
            }
            TagEnd::TableHead => self.pop_style(),
            TagEnd::TableRow => {}
            TagEnd::TableCell => {
                let cell = inline_pieces(&std::mem::take(&mut self.inline));
                if let Some(row) = self.table.as_mut().and_then(|t| t.rows.last_mut()) {
                    row.push(cell);
                }
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => self.pop_style(),
            TagEnd::Link | TagEnd::Image => {
                self.pop_style();
                if let Some((url, start)) = self.links.pop() {
                    self.link_suffix(&url, start);
                }
            }
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::MetadataBlock(_) => {
                self.flush_inline();
                self.pending_blank = true;
            }
        }
    }

    /// After a link's text: its URL, dimmed, unless the text already says it.
    fn link_suffix(&mut self, url: &str, start: usize) {
        if url.is_empty() {
            return;
        }
        let shown = self.inline.text.get(start..).unwrap_or_default();
        let bare = url.strip_prefix("mailto:").unwrap_or(url);
        if shown == url || shown == bare {
            return;
        }
        let dim = self.theme.dim;
        self.inline.text(&format!(" ({url})"), dim);
    }

    fn push_container(&mut self, first: String, style: Style, item: bool) {
        let width = str_width(&first);
        self.containers.push(Container {
            rest: " ".repeat(width),
            first,
            style,
            width,
            used: false,
            item,
        });
    }

    /// Ends any pending inline text and pays an owed blank line.
    fn start_block(&mut self) {
        self.flush_inline();
        if self.pending_blank && !self.out.is_empty() {
            self.emit_blank();
        }
        self.pending_blank = false;
    }

    /// Columns of the prefix the current containers put before each line,
    /// capped so at least one column is left for content.
    fn prefix_width(&self) -> usize {
        let w: usize = self.containers.iter().map(|c| c.width).sum();
        w.min(self.width.saturating_sub(1))
    }

    /// Columns left for content after the prefix (at least 1).
    fn avail(&self) -> usize {
        (self.width - self.prefix_width()).max(1)
    }

    /// The prefix spans of the next line; marks first lines used.
    fn prefix(&mut self, consume: bool) -> Vec<Span<'static>> {
        let mut budget = self.prefix_width();
        let mut spans: Vec<Span<'static>> = Vec::new();
        for c in &mut self.containers {
            if budget == 0 {
                break;
            }
            let text = if consume && !c.used {
                c.used = true;
                &c.first
            } else {
                &c.rest
            };
            let text = if c.width <= budget {
                text.clone()
            } else {
                truncate_to(text, budget)
            };
            budget = budget.saturating_sub(c.width);
            push_span(&mut spans, text, c.style);
        }
        spans
    }

    /// Emits one content line after the containers' prefix.
    fn emit(&mut self, content: Vec<Span<'static>>) {
        let mut spans = self.prefix(true);
        for s in content {
            let style = s.style;
            push_span(&mut spans, s.content.into_owned(), style);
        }
        self.out.push(Line::from(spans));
    }

    fn emit_blank(&mut self) {
        let mut spans = self.prefix(false);
        while let Some(last) = spans.last_mut() {
            let trimmed = last.content.trim_end().to_owned();
            if trimmed.is_empty() {
                spans.pop();
            } else {
                last.content = trimmed.into();
                break;
            }
        }
        self.out.push(Line::from(spans));
    }

    /// Wraps the gathered inline content into lines.
    fn flush_inline(&mut self) {
        if self.inline.is_empty() {
            return;
        }
        let inline = std::mem::take(&mut self.inline);
        let avail = self.avail();
        for line in wrap_inline(&inline, avail) {
            self.emit(line);
        }
    }

    fn emit_code(&mut self, code: &Code) {
        let avail = self.avail();
        let dim = self.theme.dim;
        for part in hard_break(&code.label, avail) {
            self.emit(vec![Span::styled(part, dim)]);
        }
        let body = code.text.strip_suffix('\n').unwrap_or(&code.text);
        let style = self.theme.code_block;
        for line in body.split('\n') {
            let expanded = expand_tabs(line);
            if expanded.is_empty() {
                self.emit(Vec::new());
                continue;
            }
            for part in hard_break(&expanded, avail) {
                self.emit(vec![Span::styled(part, style)]);
            }
        }
    }

    fn emit_table(&mut self, table: &Table) {
        let avail = self.avail();
        let cols = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        if cols == 0 {
            return;
        }
        let cell_width =
            |cell: &Vec<(String, Style)>| -> usize { cell.iter().map(|(t, _)| str_width(t)).sum() };
        let mut widths = vec![1usize; cols];
        for row in &table.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(cell_width(cell).min(avail));
            }
        }
        let sep = 3;
        let total = |w: &[usize]| w.iter().sum::<usize>() + sep * (w.len() - 1);
        // Shrink the widest column until the table fits (or all are 1 wide).
        let mut excess = total(&widths).saturating_sub(avail);
        while excess > 0 {
            let (i, &max) = widths
                .iter()
                .enumerate()
                .max_by_key(|(_, w)| **w)
                .unwrap_or((0, &1));
            if max <= 1 {
                break;
            }
            let second = widths
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, w)| *w)
                .max()
                .unwrap_or(1)
                .max(1);
            let cut = excess.min(max - second.min(max - 1)).max(1);
            widths[i] = max - cut;
            excess -= cut;
        }
        let dim = self.theme.dim;
        for (r, row) in table.rows.iter().enumerate() {
            let mut spans: Vec<Span<'static>> = Vec::new();
            for (i, &w) in widths.iter().enumerate() {
                if i > 0 {
                    push_span(&mut spans, " │ ".to_owned(), dim);
                }
                let empty = Vec::new();
                let cell = row.get(i).unwrap_or(&empty);
                let align = table.alignments.get(i).copied().unwrap_or(Alignment::None);
                fit_cell(&mut spans, cell, w, align, self.theme.text);
            }
            let spans = truncate_spans(spans, avail);
            self.emit(spans);
            if r + 1 == table.header_rows {
                let rule = widths
                    .iter()
                    .map(|w| "─".repeat(*w))
                    .collect::<Vec<_>>()
                    .join("─┼─");
                let rule = truncate_to(&rule, avail);
                self.emit(vec![Span::styled(rule, dim)]);
            }
        }
    }
}

fn heading_level(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Appends `text` to `spans`, merging with the last span when styles match.
fn push_span(spans: &mut Vec<Span<'static>>, text: String, style: Style) {
    if text.is_empty() {
        return;
    }
    if let Some(last) = spans.last_mut()
        && last.style == style
    {
        last.content.to_mut().push_str(&text);
        return;
    }
    spans.push(Span::styled(text, style));
}

/// Inline content flattened to styled text (table cells don't wrap).
fn inline_pieces(inline: &Inline) -> Vec<(String, Style)> {
    inline
        .runs
        .iter()
        .map(|run| {
            let text = &inline.text[run.start..run.end];
            let clean: String = if run.kind == RunKind::Break {
                " ".to_owned()
            } else {
                text.chars()
                    .map(|c| if c.is_whitespace() { ' ' } else { c })
                    .collect()
            };
            (clean, run.style)
        })
        .collect()
}

/// Writes one table cell exactly `w` columns wide: truncated with `…` when
/// longer, padded by its alignment when shorter.
fn fit_cell(
    spans: &mut Vec<Span<'static>>,
    cell: &[(String, Style)],
    w: usize,
    align: Alignment,
    pad_style: Style,
) {
    let full: usize = cell.iter().map(|(t, _)| str_width(t)).sum();
    let mut content: Vec<Span<'static>> = Vec::new();
    let used = if full <= w {
        for (t, s) in cell {
            push_span(&mut content, t.clone(), *s);
        }
        full
    } else {
        let mut budget = w.saturating_sub(1);
        let mut used = 0;
        let mut last_style = pad_style;
        for (t, s) in cell {
            let part = truncate_to(t, budget);
            let pw = str_width(&part);
            budget -= pw;
            used += pw;
            last_style = *s;
            push_span(&mut content, part, *s);
            if budget == 0 {
                break;
            }
        }
        push_span(&mut content, "…".to_owned(), last_style);
        used + 1
    };
    let pad = w.saturating_sub(used);
    let (left, right) = match align {
        Alignment::Right => (pad, 0),
        Alignment::Center => (pad / 2, pad - pad / 2),
        Alignment::Left | Alignment::None => (0, pad),
    };
    push_span(spans, " ".repeat(left), pad_style);
    for s in content {
        let style = s.style;
        push_span(spans, s.content.into_owned(), style);
    }
    push_span(spans, " ".repeat(right), pad_style);
}

/// The longest prefix of `s` (control characters dropped) that fits in `w`
/// columns.
fn truncate_to(s: &str, w: usize) -> String {
    let mut out = String::new();
    let mut counter = WidthCounter::new();
    let mut used = 0;
    for c in s.chars() {
        if c.is_control() {
            continue;
        }
        let cw = counter.next(c);
        if used + cw > w {
            break;
        }
        used += cw;
        out.push(c);
    }
    out
}

/// Cuts a line of spans to at most `w` columns.
fn truncate_spans(spans: Vec<Span<'static>>, w: usize) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut budget = w;
    for s in spans {
        let sw = str_width(&s.content);
        if sw <= budget {
            budget -= sw;
            out.push(s);
        } else {
            let part = truncate_to(&s.content, budget);
            if !part.is_empty() {
                out.push(Span::styled(part, s.style));
            }
            break;
        }
    }
    out
}

/// Tabs to spaces (to the next multiple of [`TAB_STOP`]); other control
/// characters dropped.
fn expand_tabs(line: &str) -> String {
    if !line.chars().any(char::is_control) {
        return line.to_owned();
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut col = 0;
    let mut counter = WidthCounter::new();
    for c in line.chars() {
        if c == '\t' {
            let n = TAB_STOP - col % TAB_STOP;
            out.extend(std::iter::repeat_n(' ', n));
            col += n;
        } else if !c.is_control() {
            col += counter.next(c);
            out.push(c);
        }
    }
    out
}

/// Splits `s` into pieces of at most `w` columns (a character wider than
/// `w` is dropped rather than overflow).
fn hard_break(s: &str, w: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut used = 0;
    let mut counter = WidthCounter::new();
    for c in s.chars() {
        if c.is_control() {
            continue;
        }
        let cw = counter.next(c);
        if cw > w {
            continue;
        }
        if used + cw > w {
            out.push(std::mem::take(&mut cur));
            used = 0;
        }
        used += cw;
        cur.push(c);
    }
    if !cur.is_empty() || out.is_empty() {
        out.push(cur);
    }
    out
}

/// Greedy word wrap of inline content into lines of at most `avail`
/// columns. Break opportunities are whitespace (collapsed to one space) and
/// the gap before a wide (CJK) character; inline code stays whole when it
/// fits; a word longer than a line is broken by columns.
fn wrap_inline(inline: &Inline, avail: usize) -> Vec<Vec<Span<'static>>> {
    let mut w = Wrapper {
        inline,
        avail,
        run: 0,
        lines: Vec::new(),
        cur: Vec::new(),
        cur_w: 0,
        started: false,
    };
    // The word being scanned: `start..end` of the text, `width` columns,
    // and the run holding the whitespace before it (`space`), if any.
    let mut word = Word::default();
    let mut space: Option<usize> = None;
    for (index, run) in inline.runs.iter().enumerate() {
        let text = &inline.text[run.start..run.end];
        match run.kind {
            RunKind::Break => {
                w.place(&mut word);
                space = None;
                w.new_line();
                w.started = false;
            }
            RunKind::Atomic if str_width(text) <= avail => {
                // Glued to neighbouring text unless whitespace separates them.
                word.extend(run.start, run.end, str_width(text), &mut space);
            }
            RunKind::Text | RunKind::Atomic => {
                let mut counter = WidthCounter::new();
                let bytes = text.as_bytes();
                let mut i = 0;
                while i < bytes.len() {
                    let b = bytes[i];
                    let at = run.start + i;
                    if b.is_ascii() {
                        i += 1;
                        if b.is_ascii_whitespace() || b == 0x0b {
                            w.place(&mut word);
                            space.get_or_insert(index);
                            counter = WidthCounter::new();
                        } else {
                            let cw = counter.next(char::from(b));
                            word.extend(at, at + 1, cw, &mut space);
                        }
                        continue;
                    }
                    let Some(c) = text[i..].chars().next() else {
                        break;
                    };
                    i += c.len_utf8();
                    if c.is_whitespace() {
                        w.place(&mut word);
                        space.get_or_insert(index);
                        counter = WidthCounter::new();
                        continue;
                    }
                    let cw = counter.next(c);
                    if cw >= 2 {
                        w.place(&mut word);
                    }
                    word.extend(at, at + c.len_utf8(), cw, &mut space);
                }
            }
        }
    }
    w.place(&mut word);
    if w.started || !w.cur.is_empty() {
        w.new_line();
    }
    w.lines
}

/// A unit of wrapping: `start..end` of the inline text, with no break
/// opportunity inside.
#[derive(Default)]
struct Word {
    start: usize,
    end: usize,
    width: usize,
    /// The run holding the whitespace before the word, if any.
    space: Option<usize>,
    active: bool,
}

impl Word {
    /// Adds `start..end` (adjacent to the word) of `width` columns; a new
    /// word takes the pending whitespace.
    #[inline]
    fn extend(&mut self, start: usize, end: usize, width: usize, space: &mut Option<usize>) {
        if self.active {
            self.end = end;
            self.width += width;
        } else {
            *self = Word {
                start,
                end,
                width,
                space: space.take(),
                active: true,
            };
        }
    }
}

/// Line-filling state of [`wrap_inline`].
struct Wrapper<'a> {
    inline: &'a Inline,
    avail: usize,
    /// Index of the run the next slice starts in (slices only move forward).
    run: usize,
    lines: Vec<Vec<Span<'static>>>,
    /// The current line as stretches of the text, turned into spans only
    /// when the line is complete (one allocation per span, not per word).
    cur: Vec<Seg>,
    cur_w: usize,
    /// Whether the current line has content (a space may precede a word).
    started: bool,
}

/// A stretch of a line being filled.
enum Seg {
    /// `start..end` of the inline text.
    Slice(usize, usize, Style),
    /// One space standing for collapsed whitespace.
    Space(Style),
}

impl Wrapper<'_> {
    fn new_line(&mut self) {
        let mut spans: Vec<Span<'static>> = Vec::with_capacity(self.cur.len());
        for seg in self.cur.drain(..) {
            let (text, style) = match seg {
                Seg::Slice(a, b, style) => (&self.inline.text[a..b], style),
                Seg::Space(style) => (" ", style),
            };
            push_str_span(&mut spans, text, style);
        }
        self.lines.push(spans);
        self.cur_w = 0;
    }

    /// Adds one space before the next word; when the text already has a
    /// single space there in the same style, the slices simply join.
    fn space(&mut self, style: Style, next: usize) {
        if let Some(Seg::Slice(_, end, s)) = self.cur.last_mut()
            && *s == style
            && *end + 1 == next
            && self.inline.text.as_bytes().get(*end) == Some(&b' ')
        {
            *end = next;
            return;
        }
        self.cur.push(Seg::Space(style));
    }

    fn push_seg(&mut self, a: usize, b: usize, style: Style) {
        if let Some(Seg::Slice(_, end, s)) = self.cur.last_mut()
            && *end == a
            && *s == style
        {
            *end = b;
            return;
        }
        self.cur.push(Seg::Slice(a, b, style));
    }

    /// Appends `text[a..b]` in the styles of the runs covering it.
    fn slice(&mut self, mut a: usize, b: usize) {
        let runs = &self.inline.runs;
        while a < b {
            while self.run + 1 < runs.len() && runs[self.run].end <= a {
                self.run += 1;
            }
            let Some(run) = runs.get(self.run) else {
                return;
            };
            // Past the last run (never expected) the rest takes its style.
            let e = if run.end > a { b.min(run.end) } else { b };
            let style = run.style;
            self.push_seg(a, e, style);
            a = e;
        }
    }

    /// Places a finished word (if any) on the current or a new line.
    fn place(&mut self, word: &mut Word) {
        if !word.active {
            return;
        }
        word.active = false;
        let (a, b, width) = (word.start, word.end, word.width);
        let space_before = word
            .space
            .and_then(|i| self.inline.runs.get(i))
            .map(|r| r.style);
        let avail = self.avail;
        let sep = usize::from(self.started && space_before.is_some());
        if self.cur_w + sep + width <= avail {
            if sep == 1
                && let Some(s) = space_before
            {
                self.space(s, a);
            }
            self.cur_w += sep + width;
            self.started = true;
            self.slice(a, b);
            return;
        }
        if self.started {
            self.new_line();
        }
        self.started = true;
        if width <= avail {
            self.cur_w = width;
            self.slice(a, b);
            return;
        }
        // Longer than a whole line: break it by columns.
        let mut counter = WidthCounter::new();
        let mut piece = a;
        let text = &self.inline.text[a..b];
        for (i, c) in text.char_indices() {
            let cw = counter.next(c);
            if cw > avail {
                // Can never fit (a wide character in one column): dropped.
                self.slice(piece, a + i);
                piece = a + i + c.len_utf8();
                continue;
            }
            if self.cur_w + cw > avail {
                self.slice(piece, a + i);
                self.new_line();
                piece = a + i;
            }
            self.cur_w += cw;
        }
        self.slice(piece, b);
    }
}

/// Appends `text` to `spans`, merging with the last span when styles match.
fn push_str_span(spans: &mut Vec<Span<'static>>, text: &str, style: Style) {
    if text.is_empty() {
        return;
    }
    if let Some(last) = spans.last_mut()
        && last.style == style
    {
        last.content.to_mut().push_str(text);
        return;
    }
    spans.push(Span::styled(text.to_owned(), style));
}
