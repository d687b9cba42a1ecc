//! [`TextCalls`]: the streaming reader of one episode's content. It holds
//! back only what may still turn out to be part of a call: a possible
//! opening marker cut by a piece boundary, a call's head until its name
//! and arguments are read (at most [`HOLD_MAX_BYTES`]), what follows a
//! call's arguments until its closer, and a call written without a marker
//! of its own (a fenced block, bare Llama JSON) until its block ends, as
//! it may be a quote. Every decision is made on the text alone, at the
//! earliest byte it can be, so the result does not depend on how the text
//! was split into pieces.

use std::sync::Arc;

use super::cursor::{Step, floor_boundary};
use super::glm::{PairArgs, PairStep};
use super::json_call::{ValueEnd, ValueScanner};
use super::offered::OfferedTools;
use super::quoted::QuotedCalls;
use super::{HOLD_MAX_BYTES, Shape, Syntax, Tail, TextPiece, ToolSyntax};

/// A markdown code fence.
const FENCE: &str = "```";
/// The most spaces before a fence that opens a block: four make an
/// indented code block (CommonMark).
const FENCE_INDENT_MAX: usize = 3;

/// What a marker found in prose does.
#[derive(Debug, Clone)]
enum Marker {
    /// It may open a call of one of these syntaxes. `marked` when only a
    /// call writes it; otherwise it is ordinary Markdown (a fence), which
    /// opens a call only at a line's start, held until its block ends.
    Call { syntaxes: Vec<Syntax>, marked: bool },
    /// A special token that is never prose: it is dropped.
    Silent,
}

/// Where in its line the reader is, as far as Markdown blocks go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// Only this many spaces so far (at most [`FENCE_INDENT_MAX`]).
    Start(usize),
    /// The line opened with `>`: a block quote, where nothing is a call.
    Quote,
    /// Other text came first.
    Text,
}

impl Line {
    /// The line after `c`.
    fn after(self, c: char) -> Line {
        match (self, c) {
            (_, '\n') => Line::Start(0),
            (Line::Start(n), ' ') if n < FENCE_INDENT_MAX => Line::Start(n + 1),
            (Line::Start(_), '>') => Line::Quote,
            (Line::Start(_), _) => Line::Text,
            (line, _) => line,
        }
    }

    /// Whether a marker of `kind` may open a call here.
    fn opens(self, kind: &Marker) -> bool {
        match kind {
            Marker::Silent => true,
            Marker::Call { marked: true, .. } => self != Line::Quote,
            Marker::Call { marked: false, .. } => matches!(self, Line::Start(_)),
        }
    }
}

/// A block of calls written without a marker of their own (a fenced
/// block, bare Llama JSON), held until it ends: its calls, or a quote if
/// one of them copies a call the model was shown (ADR 0027).
#[derive(Debug, Clone, Default)]
struct HeldBlock {
    /// The block as written so far: what is shown if it is a quote.
    text: String,
    /// The block as read: its calls.
    pieces: Vec<TextPiece>,
}

impl HeldBlock {
    /// The call whose arguments were read last: its name and arguments.
    fn last_call(&self) -> Option<(&str, &str)> {
        let mut last = self.pieces.iter().rev();
        match (last.next(), last.next()) {
            (Some(TextPiece::Arguments(arguments)), Some(TextPiece::CallStarted(name))) => {
                Some((name, arguments))
            }
            _ => None,
        }
    }
}

/// The call being read in a held block: nothing of it is announced until
/// the block ends, so a status line shows it from here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldCall<'a> {
    /// How many calls were held in the reply before it: tells it from
    /// the call held before, whatever their names and sizes.
    pub nth: usize,
    /// The tool it names.
    pub name: &'a str,
    /// The bytes of its arguments read so far.
    pub bytes: usize,
}

/// Where the reader is.
#[derive(Debug, Clone)]
enum State {
    /// In prose, looking for markers.
    Prose,
    /// After a marker (`opener` bytes of the held text), reading a head.
    /// A call found without a marker (`!marked`) joins the held block.
    Head {
        opener: usize,
        candidates: Vec<Syntax>,
        next_in_list: bool,
        marked: bool,
    },
    /// In a call's JSON arguments.
    Json {
        syntax: Syntax,
        shape: Shape,
        scanner: ValueScanner,
    },
    /// In a GLM call's key/value pairs.
    Pairs(PairArgs),
    /// After a call's arguments, reading what closes it.
    Tail { syntax: Syntax, shape: Shape },
}

/// Splits one episode's streamed content into prose and text tool calls.
/// Feed it every content piece in order, then [`finish`](Self::finish) it.
#[derive(Debug, Clone)]
pub struct TextCalls {
    offered: Arc<OfferedTools>,
    quoted: Arc<QuotedCalls>,
    markers: Vec<(&'static str, Marker)>,
    /// A `{` opening the reply may start a Llama call.
    bare_json: bool,
    held: String,
    state: State,
    in_code: bool,
    in_inline: bool,
    reply_start: bool,
    line: Line,
    /// The block held, from its first call on.
    block: Option<HeldBlock>,
    /// Calls held so far in the reply.
    held_calls: usize,
}

impl TextCalls {
    /// A reader for `setting`, taking only calls to `offered` tools, and
    /// of those written without a marker only the ones that copy none of
    /// `quoted`; `None` when there is nothing to read (`native`, or no
    /// tools).
    pub fn new(
        setting: ToolSyntax,
        offered: Arc<OfferedTools>,
        quoted: Arc<QuotedCalls>,
    ) -> Option<Self> {
        let syntaxes = setting.syntaxes();
        if syntaxes.is_empty() || offered.is_empty() {
            return None;
        }
        let mut markers: Vec<(&'static str, Marker)> = Vec::new();
        for &syntax in syntaxes {
            for &opener in syntax.openers() {
                match markers.iter_mut().find(|(m, _)| *m == opener) {
                    Some((_, Marker::Call { syntaxes, .. })) => syntaxes.push(syntax),
                    _ => markers.push((
                        opener,
                        Marker::Call {
                            syntaxes: vec![syntax],
                            marked: syntax.marked(),
                        },
                    )),
                }
            }
            markers.extend(syntax.silent().iter().map(|&m| (m, Marker::Silent)));
        }
        let bare_json = syntaxes.contains(&Syntax::Llama);
        Some(Self {
            offered,
            quoted,
            markers,
            bare_json,
            held: String::new(),
            state: State::Prose,
            in_code: false,
            in_inline: false,
            reply_start: bare_json,
            line: Line::Start(0),
            block: None,
            held_calls: 0,
        })
    }

    /// Reads the next content piece, adding what it settles to `out`.
    pub fn feed(&mut self, piece: &str, out: &mut Vec<TextPiece>) {
        self.held.push_str(piece);
        while self.step(false, out) {}
    }

    /// Ends the episode: held text that opened no call is prose; a call cut
    /// short keeps the arguments it had, as a cut native call does.
    pub fn finish(&mut self, out: &mut Vec<TextPiece>) {
        while self.step(true, out) {}
        self.release(out);
        if !self.held.is_empty() {
            prose(out, std::mem::take(&mut self.held));
        }
    }

    /// The call being read in a held block, if one is.
    pub fn held_call(&self) -> Option<HeldCall<'_>> {
        let pieces = &self.block.as_ref()?.pieces;
        let start = pieces
            .iter()
            .rposition(|p| matches!(p, TextPiece::CallStarted(_)))?;
        let (TextPiece::CallStarted(name), after) = pieces.get(start..)?.split_first()? else {
            return None;
        };
        let bytes = after
            .iter()
            .map(|p| match p {
                TextPiece::Arguments(text) => text.len(),
                _ => 0,
            })
            .sum();
        Some(HeldCall {
            nth: self.held_calls.saturating_sub(1),
            name,
            bytes,
        })
    }

    /// Takes `n` bytes of the held text as read; while a block is held,
    /// they are its text.
    fn take(&mut self, n: usize) -> String {
        let taken: String = self.held.drain(..n).collect();
        if let Some(block) = &mut self.block {
            block.text.push_str(&taken);
        }
        taken
    }

    /// Where what is read goes: the held block while there is one.
    fn target<'a>(&'a mut self, out: &'a mut Vec<TextPiece>) -> &'a mut Vec<TextPiece> {
        match &mut self.block {
            Some(block) => &mut block.pieces,
            None => out,
        }
    }

    /// A call without a marker starts: it joins the held block (the next
    /// of an array), or starts one.
    fn hold(&mut self) {
        self.block.get_or_insert_default();
        self.held_calls += 1;
    }

    /// The held block ended: its calls are passed on.
    fn release(&mut self, out: &mut Vec<TextPiece>) {
        if let Some(block) = self.block.take() {
            out.extend(block.pieces);
        }
    }

    /// Takes one step; false when more text is needed.
    fn step(&mut self, end: bool, out: &mut Vec<TextPiece>) -> bool {
        match std::mem::replace(&mut self.state, State::Prose) {
            State::Prose => self.prose(end, out),
            State::Head {
                opener,
                candidates,
                next_in_list,
                marked,
            } => self.head(end, opener, candidates, next_in_list, marked, out),
            State::Json {
                syntax,
                shape,
                scanner,
            } => self.json(end, syntax, shape, scanner, out),
            State::Pairs(pairs) => self.pairs(end, pairs, out),
            State::Tail { syntax, shape } => self.tail(end, syntax, shape, out),
        }
    }

    /// Passes prose on up to the next marker, tracking code fences, inline
    /// code spans and block quotes (markers inside them are prose) and
    /// where lines start (a fence opens a call only there).
    fn prose(&mut self, end: bool, out: &mut Vec<TextPiece>) -> bool {
        let text = self.held.as_str();
        let mut i = 0;
        let mut found = None;
        let mut stop = text.len();
        while i < text.len() {
            let rest = &text[i..];
            if !self.in_code
                && !self.in_inline
                && let Some(hit) = self.marker_at(rest, end)
            {
                found = hit;
                stop = i;
                break;
            }
            let Some(c) = rest.chars().next() else {
                break;
            };
            if rest.starts_with(FENCE) {
                self.in_code = !self.in_code;
                self.in_inline = false;
                self.reply_start = false;
                self.line = self.line.after(c);
                i += FENCE.len();
                continue;
            }
            if !end && FENCE.starts_with(rest) {
                stop = i;
                break;
            }
            if !self.in_code {
                match c {
                    '`' => self.in_inline = !self.in_inline,
                    '\n' => self.in_inline = false,
                    _ => {}
                }
            }
            if self.reply_start && !c.is_whitespace() {
                self.reply_start = false;
                if c == '{' && self.bare_json {
                    let bare = Marker::Call {
                        syntaxes: vec![Syntax::Llama],
                        marked: false,
                    };
                    found = Some((0, bare));
                    stop = i;
                    break;
                }
            }
            self.line = self.line.after(c);
            i += c.len_utf8();
        }
        let shown: String = self.held.drain(..stop).collect();
        prose(out, shown);
        match found {
            Some((len, Marker::Silent)) => {
                self.held.drain(..len);
                true
            }
            Some((opener, Marker::Call { syntaxes, marked })) => {
                self.reply_start = false;
                self.state = State::Head {
                    opener,
                    candidates: syntaxes,
                    next_in_list: false,
                    marked,
                };
                true
            }
            None => false,
        }
    }

    /// `Some(Some(..))` when a marker that may open a call here starts
    /// `rest`, `Some(None)` when `rest` may be the start of one (only when
    /// more text may come).
    fn marker_at(&self, rest: &str, end: bool) -> Option<Option<(usize, Marker)>> {
        let mut partial = false;
        for (marker, kind) in self.markers.iter().filter(|(_, k)| self.line.opens(k)) {
            if rest.starts_with(marker) {
                return Some(Some((marker.len(), kind.clone())));
            }
            partial |= !end && marker.starts_with(rest);
        }
        partial.then_some(None)
    }

    fn head(
        &mut self,
        end: bool,
        opener: usize,
        candidates: Vec<Syntax>,
        next_in_list: bool,
        marked: bool,
        out: &mut Vec<TextPiece>,
    ) -> bool {
        let limit = floor_boundary(&self.held, HOLD_MAX_BYTES);
        let window = self.held.get(opener.min(limit)..limit).unwrap_or("");
        let mut more = false;
        for &syntax in &candidates {
            match syntax.head(window, &self.offered, next_in_list) {
                Step::Yes(head) => {
                    if !marked {
                        self.hold();
                    }
                    self.take(opener + head.len);
                    self.line = Line::Text;
                    self.target(out)
                        .push(TextPiece::CallStarted(head.name.clone()));
                    self.state = match head.shape {
                        Shape::Pairs => State::Pairs(PairArgs::new(head.name)),
                        shape => State::Json {
                            syntax,
                            shape,
                            scanner: ValueScanner::default(),
                        },
                    };
                    return true;
                }
                Step::More => more = true,
                Step::No => {}
            }
        }
        if more && !end && self.held.len() < HOLD_MAX_BYTES {
            self.state = State::Head {
                opener,
                candidates,
                next_in_list,
                marked,
            };
            return false;
        }
        // The next call of an array held that is none ends the block.
        self.release(out);
        let marker: String = self.held.drain(..opener).collect();
        if !marker.is_empty() {
            self.line = Line::Text;
        }
        if marker.starts_with(FENCE) {
            self.in_code = true;
        }
        prose(out, marker);
        true
    }

    fn json(
        &mut self,
        end: bool,
        syntax: Syntax,
        shape: Shape,
        mut scanner: ValueScanner,
        out: &mut Vec<TextPiece>,
    ) -> bool {
        let (taken, ended) = scanner.scan(&self.held, syntax.closers());
        let taken = if end && ended.is_none() {
            self.held.len()
        } else {
            taken
        };
        let text = self.take(taken);
        arguments(self.target(out), text);
        match ended {
            Some(ValueEnd::Whole) => {
                let quote = self
                    .block
                    .as_ref()
                    .and_then(HeldBlock::last_call)
                    .is_some_and(|(name, arguments)| self.quoted.contains(name, arguments));
                if quote {
                    self.quote(syntax, out);
                } else {
                    self.state = State::Tail { syntax, shape };
                }
                true
            }
            Some(ValueEnd::Closer(len)) => {
                self.take(len);
                self.release(out);
                true
            }
            None => {
                if !end {
                    self.state = State::Json {
                        syntax,
                        shape,
                        scanner,
                    };
                }
                false
            }
        }
    }

    fn pairs(&mut self, end: bool, mut pairs: PairArgs, out: &mut Vec<TextPiece>) -> bool {
        match pairs.step(&self.held, &self.offered) {
            PairStep::Wait if end => {
                let text = self.take(self.held.len());
                arguments(self.target(out), text);
                false
            }
            PairStep::Wait => {
                self.state = State::Pairs(pairs);
                false
            }
            PairStep::Took {
                consumed,
                arguments: text,
            } => {
                self.take(consumed);
                arguments(self.target(out), text);
                self.state = State::Pairs(pairs);
                true
            }
            PairStep::Closed {
                consumed,
                arguments: text,
            } => {
                self.take(consumed);
                arguments(self.target(out), text);
                true
            }
        }
    }

    /// What follows a call's arguments. The closer, and separators of an
    /// array of calls, are the syntax's own and are dropped; text that
    /// does not fit is prose.
    fn tail(&mut self, end: bool, syntax: Syntax, shape: Shape, out: &mut Vec<TextPiece>) -> bool {
        let limit = floor_boundary(&self.held, HOLD_MAX_BYTES);
        let within = self.held.len() < HOLD_MAX_BYTES;
        match syntax.tail(self.held.get(..limit).unwrap_or(""), shape) {
            Step::Yes(Tail::Done(len)) => {
                self.take(len);
                self.release(out);
                true
            }
            Step::Yes(Tail::Next(len)) => {
                self.take(len);
                self.state = State::Head {
                    opener: 0,
                    candidates: vec![syntax],
                    next_in_list: true,
                    marked: syntax.marked(),
                };
                true
            }
            Step::More if within && !end => {
                self.state = State::Tail { syntax, shape };
                false
            }
            Step::More if within => {
                self.held.clear();
                false
            }
            Step::More | Step::No => {
                self.release(out);
                true
            }
        }
    }

    /// The call just read copies one the model was shown: its block, as
    /// far as it was read, is shown as prose, and the rest of it follows
    /// as prose (inside its code block, for a fence).
    fn quote(&mut self, syntax: Syntax, out: &mut Vec<TextPiece>) {
        if let Some(block) = self.block.take() {
            prose(out, block.text);
        }
        self.in_code = syntax == Syntax::Fenced;
    }
}

/// Adds prose to `out`, merged with prose just before it.
fn prose(out: &mut Vec<TextPiece>, text: String) {
    if text.is_empty() {
        return;
    }
    match out.last_mut() {
        Some(TextPiece::Prose(prev)) => prev.push_str(&text),
        _ => out.push(TextPiece::Prose(text)),
    }
}

/// Adds arguments text to `out`, merged with arguments just before it.
fn arguments(out: &mut Vec<TextPiece>, text: String) {
    if text.is_empty() {
        return;
    }
    match out.last_mut() {
        Some(TextPiece::Arguments(prev)) => prev.push_str(&text),
        _ => out.push(TextPiece::Arguments(text)),
    }
}
