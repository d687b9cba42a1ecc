//! Drawing: a pure function of the state. Three regions (ADR 0001): the
//! status bar, the log, and the input box with its help line.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::protocol::{Phase, PromptProgress};

use super::keys;
use super::picker::size;
use super::slash::{self, POPUP_MAX_ROWS};
use super::state::{ContextUse, Progress, SPINNER, State};
use super::width::{clusters, str_width};

/// Draws the whole screen from what `State::prepare` laid out for the
/// current size; it changes nothing.
pub fn view(state: &State, frame: &mut Frame) {
    let [header, log, rule, input, help] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
        Constraint::Length(state.input_rows()),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    draw_header(state, frame, header);
    draw_log(state, frame, log);
    if let Some(picker) = state.mode.picker() {
        picker.draw(&state.theme, frame, log);
    }
    draw_rule(state, frame, rule);
    draw_input(state, frame, input);
    draw_help(state, frame, help);
    draw_popup(state, frame, log);
}

/// The popup over the bottom of the log: while `/` and the start of a
/// name are typed, each matching command with what it does; while an `@`
/// word is typed, the project's paths that match it (ADR 0038). The
/// selected row is marked.
fn draw_popup(state: &State, frame: &mut Frame, log: Rect) {
    let (rows, selected) = popup_rows(state);
    if rows.is_empty() || log.height == 0 {
        return;
    }
    let theme = &state.theme;
    let shown = slash::window(
        rows.len(),
        selected,
        POPUP_MAX_ROWS.min(usize::from(log.height)),
    );
    let lines: Vec<Line> = shown
        .map(|i| {
            let (mark, style) = if i == selected {
                ("›", theme.header.patch(theme.accent))
            } else {
                (" ", theme.header)
            };
            Line::styled(format!("{mark} {}", rows[i]), style)
        })
        .collect();
    let height = u16::try_from(lines.len()).unwrap_or(log.height);
    let area = Rect {
        y: log.y + log.height - height,
        height,
        ..log
    };
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).style(theme.header), area);
}

/// The popup's rows and which one is selected: the `@` completion's paths
/// while it is open, else the commands, each synopsis padded to one
/// column before what the command does.
fn popup_rows(state: &State) -> (Vec<String>, usize) {
    let paths = state.mention.candidates();
    if !paths.is_empty() {
        let rows = paths.iter().map(|p| format!("@{p}")).collect();
        return (rows, state.mention.selected_index());
    }
    let candidates = state.completion.candidates(&state.commands);
    let column = candidates
        .iter()
        .map(|c| str_width(&c.synopsis()))
        .max()
        .unwrap_or(0);
    let rows = candidates
        .iter()
        .map(|command| {
            let synopsis = command.synopsis();
            let pad = " ".repeat(column - str_width(&synopsis));
            format!("{synopsis}{pad}  {}", command.about())
        })
        .collect();
    (rows, state.completion.selected_index())
}

fn phase_label(state: &State) -> String {
    match (state.phase, state.mode.confirmation()) {
        (Phase::Confirming, Some(c)) => format!("Confirm ({} of {})", c.position, c.of),
        (Phase::Idle, _) => "idle".to_string(),
        (Phase::Streaming, _) => match &state.progress {
            Progress::Writing { name, bytes } => {
                format!("streaming · {name} {}", size(*bytes as u64))
            }
            Progress::Reading(progress) => reading_label(progress),
            Progress::Waiting => "waiting for the server".to_string(),
            Progress::Streaming => "streaming".to_string(),
        },
        (Phase::Executing, _) => "executing".to_string(),
        (Phase::Confirming, None) => "confirm".to_string(),
        (Phase::Compacting, _) => "compacting".to_string(),
    }
}

/// "2:31 ": how long the turn in flight has been working, while it works
/// (not while a confirmation waits for the person).
fn stopwatch(state: &State) -> String {
    match state.turn_clock.worked() {
        Some(worked) if state.phase.is_active() && state.phase != Phase::Confirming => {
            let secs = worked.as_secs();
            format!("{}:{:02} ", secs / 60, secs % 60)
        }
        _ => String::new(),
    }
}

/// "reading prompt 1,204/5,800 · ~30 s": how far the server has read a
/// long prompt, and how long the rest should take at its rate so far.
fn reading_label(progress: &PromptProgress) -> String {
    let mut label = format!(
        "reading prompt {}/{}",
        grouped(progress.processed),
        grouped(progress.total)
    );
    if let Some(left) = progress.remaining() {
        label.push_str(&format!(" · ~{} s", left.as_secs().max(1)));
    }
    label
}

/// A count with thousands separated: 5,800.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Formats a token count compactly: 950, 12.3k, 128k.
fn tokens(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=99_999 => format!("{:.1}k", n as f64 / 1000.0),
        _ => format!("{}k", n / 1000),
    }
}

fn draw_header(state: &State, frame: &mut Frame, area: Rect) {
    let theme = &state.theme;
    let s = &state.session;
    let glyph = if state.phase.is_active() {
        SPINNER[state.spinner % SPINNER.len()]
    } else {
        "●"
    };
    let used = match state.context {
        ContextUse::Reported(usage) => Some((usage.total_tokens, "")),
        ContextUse::Estimated(estimate) => Some((estimate, "~")),
        ContextUse::Unknown => None,
    };
    // What the provider read from its prompt cache, when it said.
    let cached = match state.context {
        ContextUse::Reported(usage) if usage.cached_tokens > 0 => {
            format!(", {} cached", tokens(usage.cached_tokens))
        }
        _ => String::new(),
    };
    let ctx = match used {
        Some((used, about)) if s.context_window > 0 => format!(
            "ctx {about}{}/{} ({}%{cached})",
            tokens(used),
            tokens(s.context_window),
            used.saturating_mul(100) / s.context_window
        ),
        _ => format!("ctx –/{}", tokens(s.context_window)),
    };
    let phase_style = if state.phase.is_active() {
        theme.header.patch(theme.accent)
    } else {
        theme.header
    };
    let mut left = vec![Span::styled(
        format!(" {glyph} {}{} ", stopwatch(state), phase_label(state)),
        phase_style,
    )];
    let approval = &s.approval;
    left.push(match approval.policy.warning() {
        Some(warning) => Span::styled(format!("│ ⚠ {warning} "), theme.header.patch(theme.error)),
        None => Span::styled(format!("│ {} ", approval.policy.name()), theme.header),
    });
    // Cents once there are dollars; under one, the fractions of a cent a
    // session of small requests adds up to.
    let cost = match state.cost() {
        Some(cost) if cost >= 1.0 => format!(" │ ${cost:.2}"),
        Some(cost) => format!(" │ ${cost:.4}"),
        None => String::new(),
    };
    left.push(Span::styled(
        format!(
            "│ {} @ {} │ {ctx}{cost} │ sandbox {} ",
            s.model, s.host, approval.sandbox
        ),
        theme.header,
    ));
    let used_width: usize = left.iter().map(|s| str_width(&s.content)).sum();
    let room = usize::from(area.width).saturating_sub(used_width + 2);
    let cwd = shorten_left(&s.cwd, room);
    let mut spans = left;
    if !cwd.is_empty() {
        spans.push(Span::styled(format!("│ {cwd}"), theme.header));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)).style(theme.header), area);
}

/// Keeps the end of `text` within `width` columns, marking a cut with `…`.
fn shorten_left(text: &str, width: usize) -> String {
    let total = str_width(text);
    if total <= width {
        return text.to_string();
    }
    if width < 2 {
        return String::new();
    }
    let mut dropped = 0;
    for cluster in clusters(text) {
        if total - dropped < width {
            return format!("…{}", &text[cluster.start..]);
        }
        dropped += cluster.width;
    }
    "…".to_string()
}

fn draw_log(state: &State, frame: &mut Frame, area: Rect) {
    let lines: Vec<Line> = state
        .transcript
        .visible(usize::from(area.height))
        .into_iter()
        .cloned()
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
}

/// Where the log stands in a pending preview that does not fit on screen:
/// "preview lines 1–20 of 62 — ↓/PgDn for more".
fn preview_position(state: &State) -> Option<String> {
    let confirm = state.mode.confirmation()?;
    let total = state.transcript.entry_rows(confirm.entry).len();
    let shown = state.transcript.entry_on_screen(confirm.entry);
    let (first, last) = (shown.start, shown.end);
    if first == 0 && last == total {
        return None;
    }
    Some(if shown.is_empty() {
        format!(" the {total}-line preview is out of view — PgUp/PgDn to find it ")
    } else if last < total {
        format!(
            " preview lines {}–{last} of {total} — ↓/PgDn for more ",
            first + 1
        )
    } else {
        format!(" preview lines {}–{last} of {total} ", first + 1)
    })
}

fn draw_rule(state: &State, frame: &mut Frame, area: Rect) {
    let theme = &state.theme;
    let label = match preview_position(state) {
        Some(position) => position,
        None if !state.transcript.is_following() => {
            " ↓ more below — End or Ctrl+End to follow ".to_string()
        }
        None => String::new(),
    };
    let fill = usize::from(area.width).saturating_sub(str_width(&label));
    let line = Line::from(vec![
        Span::styled("─".repeat(fill), theme.border),
        Span::styled(label, theme.accent),
    ]);
    frame.render_widget(Paragraph::new(line), area);
}

fn draw_input(state: &State, frame: &mut Frame, area: Rect) {
    let theme = &state.theme;
    let layout = state.input();
    let prompt_style = if state.phase.is_active() {
        theme.dim
    } else {
        theme.user
    };
    let lines: Vec<Line> = layout
        .rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let lead = if i == 0 { "› " } else { "  " };
            Line::from(vec![
                Span::styled(lead, prompt_style),
                Span::raw(row.clone()),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
    let (x, y) = layout.cursor;
    if y < area.height {
        frame.set_cursor_position(Position::new(area.x + 2 + x, area.y + y));
    }
}

/// The keys that apply now, most useful first; as many as fit are shown.
fn help_items(state: &State) -> &'static [&'static str] {
    if let Some(picker) = state.mode.picker() {
        return picker.keys();
    }
    if state.mention.is_open() {
        return keys::MENTION;
    }
    if !state.completion.candidates(&state.commands).is_empty() {
        return keys::POPUP;
    }
    match state.phase {
        Phase::Idle => keys::IDLE,
        Phase::Streaming | Phase::Executing | Phase::Compacting => keys::BUSY,
        Phase::Confirming => match state.mode.confirmation() {
            Some(c) if c.remember.is_some() => keys::CONFIRMING_REMEMBER,
            _ => keys::CONFIRMING,
        },
    }
}

/// Joins the items that fit in `width` columns.
fn fit_items(items: &[&str], width: usize) -> String {
    let mut out = String::new();
    for item in items {
        let sep = if out.is_empty() { "" } else { " · " };
        if str_width(&out) + str_width(sep) + str_width(item) > width {
            break;
        }
        out.push_str(sep);
        out.push_str(item);
    }
    out
}

fn draw_help(state: &State, frame: &mut Frame, area: Rect) {
    let theme = &state.theme;
    let line = match &state.hint {
        Some(hint) => Line::styled(hint.text.clone(), theme.accent),
        None => Line::styled(
            fit_items(help_items(state), usize::from(area.width)),
            theme.dim,
        ),
    };
    frame.render_widget(Paragraph::new(line), area);
}
