//! The UI's mode — what has the keys — its transitions, and which key does
//! what in each mode (the table is ADR 0003's).
//!
//! Four modes exclude one another: the input box has the keys
//! ([`Mode::Editing`]); a picker over the log has them ([`Mode::Picking`]);
//! a call waits for the person's answer ([`Mode::Confirming`]); or an
//! answer is on its way to the agent ([`Mode::Answered`]). A picker never
//! covers a question: the question closes it, and a list that comes while
//! one waits does not open it (a picker over the log would hide the
//! preview, whose rows would still count as seen).
//!
//! What stays beside the mode, in [`State`], holds in any of them: the
//! agent's phase (mirrored, and set ahead of the agent's word when a key
//! starts something); the popups of commands and of `@` paths, which
//! follow the text typed and are drawn for it, taking keys only while
//! editing and shut while a call waits; and the one-key memories (Esc
//! armed to rewind, Ctrl+C armed to quit, a session list asked for the
//! picker), which outlive a mode change.
//!
//! The mode changes only through the transitions of [`Mode`]; [`on_key`]
//! is a `match` on the mode and the modifiers held, with an arm for each.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::protocol::{CallId, Decision, UiCommand};

use super::editor::Editor;
use super::picker::{Choice, Picker};
use super::slash::Slash;
use super::state::{Hint, State};
use super::transcript::Transcript;
use super::update::{
    Effect, Outcome, SendFailure, answer, copy_reply, ctrl_c, insert, quit, run_command, submit,
};

/// What has the keys, and what lies over the log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Mode {
    /// The input box has the keys. A popup of commands or of the
    /// project's paths, while the text typed opens one, takes Tab, ↑/↓
    /// and Esc (the paths' popup Enter too).
    #[default]
    Editing,
    /// A picker over the log (saved sessions to resume, prompts to rewind
    /// to) takes every key but Ctrl's. It was asked for while the agent
    /// was idle, and what it chooses needs the agent idle.
    Picking(Picker),
    /// A call waits for the person: Esc, and while nothing is being
    /// written `y`, `n`, ↑ and ↓, answer it or read its preview; other
    /// keys go to the input box, whose words Enter sends instead of an
    /// answer. No popup opens: it would cover the preview's last rows.
    Confirming(Confirmation),
    /// The answer to this call has been handed to the loop to send; keys
    /// are the input box's, as in [`Mode::Editing`]. If the agent had no
    /// room for it, the question comes back, or the turn would wait for
    /// an answer forever.
    Answered(Confirmation),
}

impl Mode {
    /// The picker over the log, while one is open.
    pub fn picker(&self) -> Option<&Picker> {
        match self {
            Mode::Picking(picker) => Some(picker),
            Mode::Editing | Mode::Confirming(_) | Mode::Answered(_) => None,
        }
    }

    /// The call waiting for the person's answer, while one does.
    pub fn confirmation(&self) -> Option<&Confirmation> {
        match self {
            Mode::Confirming(confirmation) => Some(confirmation),
            Mode::Editing | Mode::Picking(_) | Mode::Answered(_) => None,
        }
    }

    /// Whether the popups of commands and paths may be open: not while a
    /// call waits, whose keys they would take and whose preview they would
    /// cover.
    pub(super) fn lets_popups_open(&self) -> bool {
        match self {
            Mode::Confirming(_) => false,
            Mode::Editing | Mode::Picking(_) | Mode::Answered(_) => true,
        }
    }

    /// Records what of the waiting call's preview the next frame shows
    /// (see [`Confirmation::track`]).
    pub(super) fn track_preview(&mut self, transcript: &mut Transcript, width: u16) {
        match self {
            Mode::Confirming(confirmation) => confirmation.track(transcript, width),
            Mode::Editing | Mode::Picking(_) | Mode::Answered(_) => {}
        }
    }

    /// Any mode → Confirming: the agent asks about a call. An open picker
    /// closes; an answer still on its way can no longer come back, since
    /// the agent asks again only once it has one.
    pub(super) fn ask(&mut self, confirmation: Confirmation) {
        *self = Mode::Confirming(confirmation);
    }

    /// Confirming → Answered: the call the answer is for. `None`, and no
    /// change, when nothing is asked.
    pub(super) fn answer(&mut self) -> Option<CallId> {
        match self {
            Mode::Confirming(confirmation) => {
                let id = confirmation.id.clone();
                *self = Mode::Answered(confirmation.clone());
                Some(id)
            }
            Mode::Editing | Mode::Picking(_) | Mode::Answered(_) => None,
        }
    }

    /// Confirming or Answered → Editing once call `id` has its result:
    /// its answer reached the agent, or the question is moot.
    pub(super) fn settle(&mut self, id: &str) {
        match self {
            Mode::Confirming(confirmation) | Mode::Answered(confirmation)
                if confirmation.id == id =>
            {
                *self = Mode::Editing;
            }
            Mode::Editing | Mode::Picking(_) | Mode::Confirming(_) | Mode::Answered(_) => {}
        }
    }

    /// Answered → Confirming or Editing when the answer to call `id` did
    /// not reach the agent: one whose queue was full can take it again, so
    /// the question comes back as far as it was read; one that has stopped
    /// cannot, so it goes. Whether the answer was that call's.
    pub(super) fn take_back(&mut self, id: &str, why: SendFailure) -> bool {
        match self {
            Mode::Answered(confirmation) if confirmation.id == id => {
                *self = match why {
                    SendFailure::Full => Mode::Confirming(confirmation.clone()),
                    SendFailure::Closed => Mode::Editing,
                };
                true
            }
            Mode::Editing | Mode::Picking(_) | Mode::Confirming(_) | Mode::Answered(_) => false,
        }
    }

    /// Editing, Answered or Picking → Picking: the agent sent a list the
    /// person asked to choose from. Refused, and no change, while a call
    /// waits; whether it opened.
    pub(super) fn pick(&mut self, picker: Picker) -> bool {
        match self {
            Mode::Confirming(_) => false,
            Mode::Editing | Mode::Picking(_) | Mode::Answered(_) => {
                *self = Mode::Picking(picker);
                true
            }
        }
    }

    /// Picking → Editing: the choice was taken, or Esc pressed.
    fn close_picker(&mut self) {
        match self {
            Mode::Picking(_) => *self = Mode::Editing,
            Mode::Editing | Mode::Confirming(_) | Mode::Answered(_) => {}
        }
    }

    /// Confirming or Answered → Editing: the turn is over, another session
    /// opened, or the agent is gone; nothing waits for an answer. A
    /// picker stays open.
    pub(super) fn forget_call(&mut self) {
        match self {
            Mode::Confirming(_) | Mode::Answered(_) => *self = Mode::Editing,
            Mode::Editing | Mode::Picking(_) => {}
        }
    }
}

/// A call waiting for the person's confirmation, and how much of its
/// preview has been on screen: `y` approves only once every row of it has
/// been drawn, so no one approves what they could not see (ADR 0014).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmation {
    /// The call; the answer echoes it.
    pub id: CallId,
    /// Its place among the episode's confirmations (1-based).
    pub position: usize,
    /// How many there are.
    pub of: usize,
    /// The log entry that holds its preview.
    pub entry: usize,
    /// The rule `a` remembers (`cargo test`), when the call offers one.
    pub remember: Option<String>,
    /// What of the preview has been drawn; `None` until its first frame.
    seen: Option<Seen>,
}

/// How much of a preview has been drawn, in rows at one width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    /// The width the rows were wrapped for.
    width: u16,
    /// The preview's rows at that width.
    rows: usize,
    /// How many rows, from the first, have all been on screen.
    through: usize,
}

impl Confirmation {
    /// A confirmation whose preview is log entry `entry`, not yet drawn.
    pub fn new(id: CallId, position: usize, of: usize, entry: usize) -> Self {
        Self {
            id,
            position,
            of,
            entry,
            remember: None,
            seen: None,
        }
    }

    /// This confirmation, offering `a` to remember `rule` when there is
    /// one (ADR 0044).
    pub fn offering(self, rule: Option<String>) -> Self {
        Self {
            remember: rule,
            ..self
        }
    }

    /// Whether every row of the preview has been on screen.
    pub fn fully_seen(&self) -> bool {
        self.seen.is_some_and(|s| s.through >= s.rows)
    }

    /// The first row not yet on screen (1-based) and the preview's row
    /// count: rows 21 to 62 of 62 are `(21, 62)`; `None` before the first
    /// frame.
    pub fn unseen(&self) -> Option<(usize, usize)> {
        self.seen.map(|s| (s.through + 1, s.rows))
    }

    /// Records what of the preview the frame about to be drawn shows. The
    /// first frame opens the preview at its first row; a width change
    /// moves the rows, so a preview only partly read is shown from its top
    /// and counted again, while one read to its end stays read.
    fn track(&mut self, transcript: &mut Transcript, width: u16) {
        let rows = transcript.entry_rows(self.entry);
        let seen = match self.seen {
            Some(seen) if seen.width == width => seen,
            Some(seen) if seen.through >= seen.rows => Seen {
                width,
                rows: rows.len(),
                through: rows.len(),
            },
            _ => {
                transcript.show_from(rows.start);
                Seen {
                    width,
                    rows: rows.len(),
                    through: 0,
                }
            }
        };
        let shown = transcript.entry_on_screen(self.entry);
        let through = if !shown.is_empty() && shown.start <= seen.through {
            seen.through.max(shown.end)
        } else {
            seen.through
        };
        self.seen = Some(Seen { through, ..seen });
    }
}

/// The modifiers a key is read with, the strongest only: Ctrl over Alt
/// over Shift.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// No modifier, or only one no binding reads (Super, Meta).
    Nothing,
    Shift,
    Alt,
    Ctrl,
}

impl Held {
    fn of(modifiers: KeyModifiers) -> Self {
        if modifiers.contains(KeyModifiers::CONTROL) {
            Held::Ctrl
        } else if modifiers.contains(KeyModifiers::ALT) {
            Held::Alt
        } else if modifiers.contains(KeyModifiers::SHIFT) {
            Held::Shift
        } else {
            Held::Nothing
        }
    }
}

/// A key press. The mode takes it first — the picker every key but
/// Ctrl's; a waiting call Esc, `y`, `n` and the arrows, Shift or not; an
/// open popup its keys, unmodified — and what it leaves goes to the input
/// box's bindings, which hold in every mode.
pub(super) fn on_key(state: &mut State, key: KeyEvent) -> Outcome {
    let held = Held::of(key.modifiers);
    if let (Held::Alt, KeyCode::Char(c)) = (held, key.code)
        && !is_alt_chord(c)
    {
        return esc_then(state, key.code, key.modifiers.difference(KeyModifiers::ALT));
    }
    let rewind_armed = std::mem::take(&mut state.rewind_armed);
    let taken = match (&mut state.mode, held) {
        (Mode::Picking(picker), Held::Nothing | Held::Shift | Held::Alt) => {
            Some(match picker_key(picker, key.code) {
                Picked::Open(out) => out,
                Picked::Closed(command) => {
                    state.mode.close_picker();
                    Outcome::with(command.map(Effect::Send).into_iter().collect())
                }
            })
        }
        (Mode::Confirming(pending), Held::Nothing | Held::Shift) => {
            let unseen = (!pending.fully_seen()).then(|| unseen_hint(pending));
            let remembers = pending.remember.is_some();
            confirm_key(state, key.code, unseen, remembers)
        }
        (Mode::Editing | Mode::Answered(_), Held::Nothing) => popup_key(state, key.code),
        (Mode::Picking(_), Held::Ctrl)
        | (Mode::Confirming(_), Held::Alt | Held::Ctrl)
        | (Mode::Editing | Mode::Answered(_), Held::Shift | Held::Alt | Held::Ctrl) => None,
    };
    taken.unwrap_or_else(|| input_key(state, key, rewind_armed))
}

/// Whether Alt+`c` is a chord of its own: Alt+1…9 copies a code block;
/// Alt+b and Alt+f move by words, as readline's (and macOS terminals'
/// Option+←/→) do. Each, being also Esc and that key, can only lose an
/// Esc, never answer a call.
fn is_alt_chord(c: char) -> bool {
    ('1'..='9').contains(&c) || matches!(c, 'b' | 'f')
}

/// Alt+`code` that no binding takes: an Esc and a key that came in one
/// read, as a terminal sends Alt+key, and as tmux (or a slow link) passes
/// on Esc and a key typed right after it. Taken as the two keys, so Esc
/// then `y` never approves the call the Esc rejected.
fn esc_then(state: &mut State, code: KeyCode, modifiers: KeyModifiers) -> Outcome {
    let mut out = on_key(state, KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    let then = on_key(state, KeyEvent::new(code, modifiers));
    out.changed |= then.changed;
    out.effects.extend(then.effects);
    out
}

/// What a key did to the open picker.
enum Picked {
    /// It stays open.
    Open(Outcome),
    /// It closed, asking the agent for the choice if one was taken.
    Closed(Option<UiCommand>),
}

/// A key while the picker is open: ↑/↓ choose, Enter resumes the chosen
/// session or rewinds to the chosen prompt, Esc closes the picker (the
/// session goes on); other keys do nothing.
fn picker_key(picker: &mut Picker, code: KeyCode) -> Picked {
    match code {
        KeyCode::Up => picker.up(),
        KeyCode::Down => picker.down(),
        KeyCode::Enter => {
            return Picked::Closed(picker.chosen().map(|choice| match choice {
                Choice::Session(id) => UiCommand::Resume { id: id.clone() },
                Choice::Prompt(prompt) => UiCommand::Rewind { prompt: *prompt },
            }));
        }
        KeyCode::Esc => return Picked::Closed(None),
        _ => return Picked::Open(Outcome::default()),
    }
    Picked::Open(Outcome::changed())
}

/// A key, without Ctrl or Alt, while a call waits: Esc rejects; `y`
/// approves once the preview has been seen (else the help line says
/// `unseen`, what is left to read), `a` likewise approves and remembers
/// the rule offered (`remembers`; ADR 0044), and `n` rejects, only while
/// the person is not writing — one typing ahead when the question appears
/// must not answer it by a letter (text put back by a rewind is not being
/// written); with nothing typed, the arrows read the preview line by
/// line. `None` for the keys the input box takes, Enter among them: it
/// sends what is written instead of an answer ([`submit`]).
fn confirm_key(
    state: &mut State,
    code: KeyCode,
    unseen: Option<String>,
    remembers: bool,
) -> Option<Outcome> {
    let typing = state.editor.typing();
    let decision = match code {
        KeyCode::Esc => Decision::Reject,
        KeyCode::Char(_) if typing => return None,
        KeyCode::Char('y' | 'Y') => Decision::Approve,
        KeyCode::Char('a' | 'A') if remembers => Decision::Remember,
        KeyCode::Char('n' | 'N') => Decision::Reject,
        KeyCode::Up if state.editor.is_empty() => {
            state.transcript.scroll_up(1);
            return Some(Outcome::changed());
        }
        KeyCode::Down if state.editor.is_empty() => {
            state.transcript.scroll_down(1);
            return Some(Outcome::changed());
        }
        _ => return None,
    };
    if let (Decision::Approve | Decision::Remember, Some(why)) = (&decision, unseen) {
        state.hint = Some(Hint::new(why));
        return Some(Outcome::changed());
    }
    Some(answer(state, decision))
}

/// Why `y` did not approve: the rows of the preview not yet on screen.
fn unseen_hint(pending: &Confirmation) -> String {
    match pending.unseen() {
        Some((from, rows)) => format!(
            "not approved yet: lines {from}–{rows} of {rows} have not been on screen — ↓/PgDn"
        ),
        None => "not approved yet: the preview has not been on screen".to_string(),
    }
}

/// The keys a popup takes while it is open, unmodified: the command
/// popup's Tab, arrows and Esc (Enter runs the selected command through
/// [`submit`]); the `@` popup's Enter too: it completes the path instead
/// of sending, unless the word is that path already. `None` while no
/// popup is open, and for the keys the input box takes.
fn popup_key(state: &mut State, code: KeyCode) -> Option<Outcome> {
    if state.mention.is_open() {
        match (code, state.mention.accept()) {
            (KeyCode::Tab | KeyCode::Enter, Some((start, path))) => {
                insert(state, |editor| editor.complete(start, &path));
            }
            // The word is the selected path already: Enter sends.
            (KeyCode::Enter, None) => return None,
            (KeyCode::Up, _) => state.mention.step(false),
            (KeyCode::Down, _) => state.mention.step(true),
            (KeyCode::Esc, _) => state.mention.close(),
            (KeyCode::Tab, None) => {}
            _ => return None,
        }
        return Some(Outcome::changed());
    }
    state.completion.selected(&state.commands)?;
    let input = match code {
        KeyCode::Tab => state.completion.tab(&state.commands),
        KeyCode::Up => state.completion.step(false, &state.commands),
        KeyCode::Down => state.completion.step(true, &state.commands),
        KeyCode::Esc => {
            state.completion.close();
            None
        }
        _ => return None,
    };
    if let Some(input) = input {
        state.editor.choose(&input);
    }
    Some(Outcome::changed())
}

/// The input box's bindings, in every mode for the keys the mode leaves:
/// editing, history, scrolling the log, sending, and the Ctrl chords.
/// `rewind_armed`: the key before was an Esc that armed Esc Esc.
fn input_key(state: &mut State, key: KeyEvent, rewind_armed: bool) -> Outcome {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    let busy = state.phase.is_active();
    let page = usize::from(state.log_height().saturating_sub(2).max(1));
    match key.code {
        KeyCode::Char('c') if ctrl => return ctrl_c(state),
        KeyCode::Char('d') if ctrl => {
            if state.editor.is_empty() {
                return quit(state);
            }
            state.editor.delete();
        }
        KeyCode::Esc if busy => {
            state.hint = Some(Hint::while_stopping("interrupting…"));
            return Outcome::with(vec![Effect::Send(UiCommand::Cancel)]);
        }
        KeyCode::Esc if state.editor.is_empty() && rewind_armed => {
            return run_command(state, Slash::Rewind);
        }
        KeyCode::Esc if state.editor.is_empty() => {
            state.rewind_armed = true;
            state.hint = Some(Hint::new("Esc again to rewind to an earlier prompt"));
        }
        KeyCode::Esc => {}
        KeyCode::Enter if alt || shift => insert(state, Editor::newline),
        KeyCode::Char('j') if ctrl => insert(state, Editor::newline),
        KeyCode::Enter => return submit(state),
        KeyCode::Char('y') if ctrl => return copy_reply(state, None),
        KeyCode::Char(c @ '1'..='9') if alt => {
            return copy_reply(state, Some(usize::from(c as u8 - b'1')));
        }
        KeyCode::Char('l') if ctrl => return Outcome::with(vec![Effect::Redraw]),
        KeyCode::Char('z') if ctrl => return Outcome::with(vec![Effect::Suspend]),
        KeyCode::Char('u') if ctrl => state.editor.kill_to_line_start(),
        KeyCode::Char('w') if ctrl => state.editor.delete_word_back(),
        KeyCode::Char('a') if ctrl => state.editor.move_home(),
        KeyCode::Char('e') if ctrl => state.editor.move_end(),
        KeyCode::Char(c) if !ctrl && !alt => insert(state, |editor| editor.insert_char(c)),
        KeyCode::Tab => insert(state, |editor| editor.insert_char('\t')),
        KeyCode::Backspace => state.editor.backspace(),
        KeyCode::Delete => state.editor.delete(),
        KeyCode::Left if ctrl || alt => state.editor.word_left(),
        KeyCode::Right if ctrl || alt => state.editor.word_right(),
        KeyCode::Char('b') if alt => state.editor.word_left(),
        KeyCode::Char('f') if alt => state.editor.word_right(),
        KeyCode::Left => state.editor.move_left(),
        KeyCode::Right => state.editor.move_right(),
        KeyCode::Up => {
            if !state.editor.move_up() {
                let current = state.editor.text().to_string();
                if let Some(entry) = state.history.prev(&current).map(str::to_string) {
                    state.editor.choose(&entry);
                }
            }
        }
        KeyCode::Down => {
            if !state.editor.move_down()
                && let Some(entry) = state.history.next().map(str::to_string)
            {
                state.editor.choose(&entry);
            }
        }
        KeyCode::Home if ctrl || state.editor.is_empty() => state.transcript.scroll_to_top(),
        KeyCode::End if ctrl || state.editor.is_empty() => state.transcript.follow(),
        KeyCode::Home => state.editor.move_home(),
        KeyCode::End => state.editor.move_end(),
        KeyCode::PageUp => state.transcript.scroll_up(page),
        KeyCode::PageDown => state.transcript.scroll_down(page),
        _ => return Outcome::default(),
    }
    Outcome::changed()
}
