//! [`TextCalls`]: the streaming reader of one episode's content. It holds
//! back only what may still turn out to be part of a call: a possible
//! opening marker cut by a piece boundary, a call's head until its name
//! and arguments are read (at most [`HOLD_MAX_BYTES`]), and what follows a
//! call's arguments until its closer. Every decision is made on the text
//! alone, at the earliest byte it can be, so the result does not depend on
//! how the text was split into pieces.

use std::sync::Arc;

use super::cursor::{Step, floor_boundary};
use super::glm::{PairArgs, PairStep};
use super::json_call::{ValueEnd, ValueScanner};
use super::offered::OfferedTools;
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
    /// opens a call only at a line's start.
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

/// Where the reader is.
#[derive(Debug, Clone)]
enum State {
    /// In prose, looking for markers.
    Prose,
    /// After a marker (`opener` bytes of the held text), reading a head.
    Head {
        opener: usize,
        candidates: Vec<Syntax>,
        next_in_list: bool,
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
    markers: Vec<(&'static str, Marker)>,
    /// A `{` opening the reply may start a Llama call.
    bare_json: bool,
    held: String,
    state: State,
    in_code: bool,
    in_inline: bool,
    reply_start: bool,
    line: Line,
}

impl TextCalls {
    /// A reader for `setting`, taking only calls to `offered` tools;
    /// `None` when there is nothing to read (`native`, or no tools).
    pub fn new(setting: ToolSyntax, offered: Arc<OfferedTools>) -> Option<Self> {
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
            markers,
            bare_json,
            held: String::new(),
            state: State::Prose,
            in_code: false,
            in_inline: false,
            reply_start: bare_json,
            line: Line::Start(0),
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
        if !self.held.is_empty() {
            prose(out, std::mem::take(&mut self.held));
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
            } => self.head(end, opener, candidates, next_in_list, out),
            State::Json {
                syntax,
                shape,
                scanner,
            } => self.json(end, syntax, shape, scanner, out),
            State::Pairs(pairs) => self.pairs(end, pairs, out),
            State::Tail { syntax, shape } => self.tail(end, syntax, shape),
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
            Some((opener, Marker::Call { syntaxes, .. })) => {
                self.reply_start = false;
                self.state = State::Head {
                    opener,
                    candidates: syntaxes,
                    next_in_list: false,
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
        out: &mut Vec<TextPiece>,
    ) -> bool {
        let limit = floor_boundary(&self.held, HOLD_MAX_BYTES);
        let window = self.held.get(opener.min(limit)..limit).unwrap_or("");
        let mut more = false;
        for &syntax in &candidates {
            match syntax.head(window, &self.offered, next_in_list) {
                Step::Yes(head) => {
                    self.held.drain(..opener + head.len);
                    self.line = Line::Text;
                    out.push(TextPiece::CallStarted(head.name.clone()));
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
            };
            return false;
        }
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
        arguments(out, self.held.drain(..taken).collect());
        match ended {
            Some(ValueEnd::Whole) => {
                self.state = State::Tail { syntax, shape };
                true
            }
            Some(ValueEnd::Closer(len)) => {
                self.held.drain(..len);
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
                arguments(out, std::mem::take(&mut self.held));
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
                self.held.drain(..consumed);
                arguments(out, text);
                self.state = State::Pairs(pairs);
                true
            }
            PairStep::Closed {
                consumed,
                arguments: text,
            } => {
                self.held.drain(..consumed);
                arguments(out, text);
                true
            }
        }
    }

    /// What follows a call's arguments. The closer, and separators of an
    /// array of calls, are the syntax's own and are dropped; text that
    /// does not fit is prose.
    fn tail(&mut self, end: bool, syntax: Syntax, shape: Shape) -> bool {
        let limit = floor_boundary(&self.held, HOLD_MAX_BYTES);
        let within = self.held.len() < HOLD_MAX_BYTES;
        match syntax.tail(self.held.get(..limit).unwrap_or(""), shape) {
            Step::Yes(Tail::Done(len)) => {
                self.held.drain(..len);
                true
            }
            Step::Yes(Tail::Next(len)) => {
                self.held.drain(..len);
                self.state = State::Head {
                    opener: 0,
                    candidates: vec![syntax],
                    next_in_list: true,
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
            Step::More | Step::No => true,
        }
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
