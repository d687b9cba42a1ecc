//! What a mutating call will do, shown before the person approves it. Each
//! tool builds its own preview (a unified diff for the file tools, built
//! with the same plan the edit runs, so the diff is exactly what lands; the
//! command line and directory for `execute_command`) from the pieces here.
//! Every line that would run or land is shown — a person must never approve
//! what they could not see — and only a diff's unchanged context is capped.
//! A preview is as large as the call's own arguments allow: those come from
//! one model reply, capped at 4 MiB (ADR 0007).

use similar::{ChangeTag, TextDiff};

use crate::protocol::{Preview, PreviewKind, PreviewLine};

use super::analyser::{Analyser, Verdict};
use super::command::ClearedCommand;
use super::failure::ToolFailure;
use super::tool::Effect;
use super::{ToolCall, ToolContext, Workspace};

/// Lines of unchanged context a diff preview shows at most (ADR 0014); a
/// marker names each run left out. Added and removed lines, new content
/// and commands are never cut.
pub const PREVIEW_MAX_LINES: usize = 50;
/// Unchanged lines shown around each change.
const PREVIEW_CONTEXT_LINES: usize = 3;
/// The longest preview a person is asked to review (10,000 lines): a call
/// whose change or command is longer fails in its preview and the model is
/// told to split it. Nobody reads more in one confirmation, and it bounds
/// what the screen lays out for a pathological reply (4 MiB of newlines
/// would otherwise be two million rows). ADR 0014.
pub const PREVIEW_REVIEW_MAX_LINES: usize = 10_000;
/// The longest a preview's diff may search for the smallest change set.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// Builds the preview of a validated call and the guard its execution will
/// check. Reads files: run it off the agent's task. A call that cannot
/// succeed (the block is not found, the path is denied) fails here with the
/// same failure the tool would give, and is never put to the person.
pub fn preview(call: &ToolCall, ctx: &ToolContext) -> Result<Preview, ToolFailure> {
    call.preview(ctx)
}

/// What a call that needs confirming under the policy comes to.
#[derive(Debug)]
pub enum Judged {
    /// The analyser accepted it: run this in its place, unasked.
    ReadOnly(ClearedCommand),
    /// The person decides, on this preview.
    Confirm(Preview),
}

/// Asks the analyser about a command line, then builds the preview of
/// what it did not accept. A line the shell could not parse is answered
/// as an invalid argument, never run or put to the person. A command that
/// asks to leave the sandbox is never the analyser's: the person decides
/// (ADR 0044).
pub fn judge(
    tool: &ToolCall,
    ctx: &ToolContext,
    analyser: Option<&Analyser>,
) -> Result<Judged, ToolFailure> {
    let (Some(analyser), ToolCall::ExecuteCommand(command)) = (analyser, tool) else {
        return preview(tool, ctx).map(Judged::Confirm);
    };
    if command.leaves_sandbox() {
        return preview(tool, ctx).map(Judged::Confirm);
    }
    let default = ctx.exec_timeout.as_secs();
    let verdict = match analyser.analyse(&command.cwd, &command.command) {
        // A longer run than the default is the person's call.
        Verdict::ReadOnly { .. } if command.timeout_seconds.is_some_and(|t| t > default) => {
            Verdict::Ask {
                reason: format!(
                    "it asks for {} s, longer than the {default} s a command runs unasked",
                    command.timeout_seconds.unwrap_or(default)
                ),
            }
        }
        verdict => verdict,
    };
    match verdict {
        Verdict::ReadOnly { rendered } => {
            Ok(Judged::ReadOnly(ClearedCommand::new(command, rendered)))
        }
        Verdict::Invalid { reason } => Err(ToolFailure::InvalidArgument {
            tool: tool.name().to_string(),
            field: "command".to_string(),
            expected: "a command line the shell can parse".to_string(),
            received: reason,
        }),
        Verdict::Ask { reason } => {
            let mut preview = preview(tool, ctx)?;
            preview.lines.insert(
                1,
                line(PreviewKind::Marker, &format!("asks because {reason}")),
            );
            Ok(Judged::Confirm(preview))
        }
    }
}

/// `preview` unless it is longer than a person can review
/// ([`PREVIEW_REVIEW_MAX_LINES`]); the failure says how to split the work.
pub(crate) fn reviewable(
    tool: &str,
    effect: Effect,
    preview: Preview,
) -> Result<Preview, ToolFailure> {
    let shown = preview.lines.len();
    if shown <= PREVIEW_REVIEW_MAX_LINES {
        return Ok(preview);
    }
    let how = match effect {
        Effect::RunsCommands => {
            "put the work in a script file (write_file, in parts) and run that, or run shorter commands"
        }
        Effect::WritesFiles | Effect::Reads => {
            "write the file in parts (a first write_file, then edit_file calls that add to it)"
        }
    };
    Err(ToolFailure::ExecutionFailed {
        tool: tool.to_owned(),
        message: format!(
            "this change is {shown} lines long to review, more than the {PREVIEW_REVIEW_MAX_LINES} a person is asked to read in one confirmation; {how}"
        ),
    })
}

/// The path for a header: as the model gave it, and where the bytes land
/// when a link leads elsewhere (`docs/notes.md → .git/config`).
pub(crate) fn shown(ws: &dyn Workspace, path: &str, real: &std::path::Path) -> String {
    match ws.redirected(path, real) {
        Some(landed) => format!("{path} → {}", landed.display()),
        None => path.to_owned(),
    }
}

/// The header of a file change, and a note under it when the change lands
/// in the repository's own files.
pub(crate) fn heading(
    text: String,
    ws: &dyn Workspace,
    real: &std::path::Path,
) -> Vec<PreviewLine> {
    let mut lines = vec![header(text)];
    if super::in_git(ws, real) {
        lines.push(line(
            PreviewKind::Marker,
            "(this changes the repository's own files)",
        ));
    }
    lines
}

/// A title line: the file and what will happen to it, or the command.
pub(crate) fn header(text: String) -> PreviewLine {
    PreviewLine {
        kind: PreviewKind::Header,
        text,
    }
}

/// One line of the given kind.
pub(crate) fn line(kind: PreviewKind, text: &str) -> PreviewLine {
    PreviewLine {
        kind,
        text: text.to_string(),
    }
}

/// "1 line", "12 lines": `n` of a `noun` whose plural takes an s.
pub(crate) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The changed hunks between two versions: every changed line, with a few
/// lines of context around each and at most [`PREVIEW_MAX_LINES`] of
/// context in all.
pub(crate) fn diff(old: &[u8], new: &[u8]) -> Vec<PreviewLine> {
    let old = String::from_utf8_lossy(old);
    let new = String::from_utf8_lossy(new);
    // A deadline keeps a diff of two large unrelated texts from running
    // for minutes; past it the diff is coarser, never wrong.
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old.as_ref(), new.as_ref());
    let mut out = Vec::new();
    for (i, group) in diff
        .grouped_ops(PREVIEW_CONTEXT_LINES)
        .into_iter()
        .enumerate()
    {
        if i > 0 {
            out.push(line(PreviewKind::Marker, "…"));
        }
        for op in group {
            for change in diff.iter_changes(&op) {
                let kind = match change.tag() {
                    ChangeTag::Equal => PreviewKind::Context,
                    ChangeTag::Insert => PreviewKind::Added,
                    ChangeTag::Delete => PreviewKind::Removed,
                };
                let text = change.value();
                out.push(line(kind, text.strip_suffix('\n').unwrap_or(text)));
            }
        }
    }
    cap_context(out)
}

/// How many lines a change adds, removes and keeps: what a write's or an
/// edit's result says it did, and what tells a rewrite that keeps a file
/// from one that wipes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineChanges {
    /// Lines of the new text that were not in the old.
    pub added: usize,
    /// Lines of the old text that are gone.
    pub removed: usize,
    /// Lines of the old text still there, in order.
    pub kept: usize,
}

impl LineChanges {
    /// The changes from `old` to `new`, by the same line diff (and
    /// deadline) the preview shows. A last line is the same line whether
    /// or not it ends with a line break.
    pub(crate) fn between(old: &[u8], new: &[u8]) -> Self {
        let ended = |text: &[u8]| {
            let mut text = String::from_utf8_lossy(text).into_owned();
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text
        };
        let (old, new) = (ended(old), ended(new));
        let diff = TextDiff::configure()
            .timeout(DIFF_TIMEOUT)
            .diff_lines(&old, &new);
        let mut changes = LineChanges {
            added: 0,
            removed: 0,
            kept: 0,
        };
        for op in diff.ops() {
            for change in diff.iter_changes(op) {
                match change.tag() {
                    ChangeTag::Equal => changes.kept += 1,
                    ChangeTag::Insert => changes.added += 1,
                    ChangeTag::Delete => changes.removed += 1,
                }
            }
        }
        changes
    }

    /// The line a result gives: `added 3 lines and removed 1; the file
    /// has 84 lines`.
    pub(crate) fn sentence(&self, lines_now: u64) -> String {
        let what = match (self.added, self.removed) {
            (0, 0) => "changed no whole line".to_owned(),
            (added, 0) => format!("added {}", count(added, "line")),
            (0, removed) => format!("removed {}", count(removed, "line")),
            (added, removed) => format!("added {} and removed {removed}", count(added, "line")),
        };
        format!("{what}; the file has {}", count(lines_now as usize, "line"))
    }
}

/// The 1-based line of `old` where `new` first differs from it.
pub(crate) fn first_changed_line(old: &[u8], new: &[u8]) -> usize {
    let same = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    old[..same].iter().filter(|b| **b == b'\n').count() + 1
}

/// Keeps every line but the unchanged context past the first
/// [`PREVIEW_MAX_LINES`]; each run of context left out becomes one marker
/// saying how many lines it held.
fn cap_context(lines: Vec<PreviewLine>) -> Vec<PreviewLine> {
    let mut out = Vec::with_capacity(lines.len());
    let mut kept = 0;
    let mut left_out = 0;
    for l in lines {
        if l.kind == PreviewKind::Context {
            if kept < PREVIEW_MAX_LINES {
                kept += 1;
                out.push(l);
            } else {
                left_out += 1;
            }
            continue;
        }
        name_left_out(&mut out, &mut left_out);
        out.push(l);
    }
    name_left_out(&mut out, &mut left_out);
    out
}

/// Ends a run of context left out with its marker, if there was one.
fn name_left_out(out: &mut Vec<PreviewLine>, left_out: &mut usize) {
    if *left_out > 0 {
        out.push(line(
            PreviewKind::Marker,
            &format!("… {left_out} unchanged lines not shown"),
        ));
        *left_out = 0;
    }
}
