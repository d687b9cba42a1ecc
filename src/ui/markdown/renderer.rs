//! The pulldown-cmark event walker: block structure (containers, lists,
//! quotes, headings), inline styles and links, turned into prefixed lines.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::code::Code;
use super::inline::Inline;
use super::options;
use super::spans::{push_span, truncate_to};
use super::table::{Table, inline_pieces};
use super::wrapping::wrap_inline;
use crate::ui::theme::Theme;
use crate::ui::width::str_width;

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

pub(super) struct Renderer<'t> {
    pub(super) theme: &'t Theme,
    /// While streaming: the unfinished last line, not yet placed.
    pub(super) tail: Option<&'t str>,
    width: usize,
    pub(super) out: Vec<Line<'static>>,
    containers: Vec<Container>,
    pub(super) inline: Inline,
    /// Composed inline styles; the last is current.
    styles: Vec<Style>,
    /// Next number of each open list (None for bullet lists).
    lists: Vec<Option<u64>>,
    /// A blank line is owed before the next block.
    pending_blank: bool,
    pub(super) code: Option<Code>,
    code_count: usize,
    table: Option<Table>,
    /// Per open link: its destination and where its text starts in `inline`.
    links: Vec<(String, usize)>,
    in_html_block: bool,
}

impl<'t> Renderer<'t> {
    pub(super) fn new(theme: &'t Theme, width: usize) -> Self {
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

    pub(super) fn run(&mut self, text: &str) {
        for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
            if let Event::End(TagEnd::CodeBlock) = event {
                self.take_tail_into_code(&text[range]);
            }
            self.event(event);
        }
        self.flush_inline();
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
            Tag::CodeBlock(kind) => self.start_code(kind),
            Tag::HtmlBlock => {
                self.start_block();
                self.in_html_block = true;
            }
            Tag::List(start) => self.start_list(start),
            Tag::Item => self.start_item(),
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

    /// A code block: numbered for Alt+N and `/copy N`, labelled with its
    /// fence's language.
    fn start_code(&mut self, kind: CodeBlockKind<'_>) {
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

    /// A list, numbered from `start` or bulleted; one inside an item
    /// follows the item's text without a blank line.
    fn start_list(&mut self, start: Option<u64>) {
        let nested = self.containers.last().is_some_and(|c| c.item);
        if nested {
            self.flush_inline();
        } else {
            self.start_block();
        }
        self.lists.push(start);
    }

    /// A list item: its number, or a bullet that changes with the depth.
    fn start_item(&mut self) {
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
    pub(super) fn avail(&self) -> usize {
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
    pub(super) fn emit(&mut self, content: Vec<Span<'static>>) {
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
    pub(super) fn flush_inline(&mut self) {
        if self.inline.is_empty() {
            return;
        }
        let inline = std::mem::take(&mut self.inline);
        let avail = self.avail();
        for line in wrap_inline(&inline, avail) {
            self.emit(line);
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
