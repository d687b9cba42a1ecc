//! A write or edit of a file the current turn already changed: one that
//! would put the file back as it was, or rewrite most of it, is refused,
//! and one that changes nothing says the change is made. A small model
//! that has made the change keeps writing the file until the change is
//! gone (ADR 0051).

use std::path::Path;

use super::ToolContext;
use super::checkpoint::FileState;
use super::failure::ToolFailure;
use super::preview::LineChanges;
use super::read::count_lines;

/// How a call about to replace `old` with `new` in `real` may go, given
/// what the turn already did to the file: `rewrite` when the call
/// replaces the whole file without saying it means to.
pub(super) fn check(
    ctx: &ToolContext,
    tool: &str,
    (path, real): (&str, &Path),
    (old, new): (&[u8], &[u8]),
    rewrite: bool,
) -> Result<(), ToolFailure> {
    // Whether the file was there before the turn, and whether `new` is
    // what it held then.
    let looked = ctx
        .checkpoints
        .before_this_turn(ctx.workspace.as_ref(), real, |before| match before {
            FileState::File { content, .. } => (true, content.as_slice() == new),
            FileState::Absent | FileState::NotKept { .. } => (false, false),
        });
    let Some((existed, restores)) = looked else {
        return Ok(());
    };
    let refuse = |message: String| ToolFailure::ExecutionFailed {
        tool: tool.to_owned(),
        message,
    };
    if old == new {
        return Err(refuse(format!(
            "{path} already holds exactly this content, which your change earlier in this turn \
             put there; nothing was written. The change is made: answer the person now, saying \
             what you changed"
        )));
    }
    if !existed {
        return Ok(());
    }
    if restores {
        return Err(refuse(format!(
            "refused: this would put {path} back as it was before your change earlier in this \
             turn, undoing it. The change is in place: answer the person now, saying what you \
             changed. Only if the person asked to undo it, call write_file with the file's \
             earlier content and replace_whole_file: true (they will be asked)"
        )));
    }
    let lines = count_lines(old) as usize;
    let kept = LineChanges::between(old, new).kept;
    if rewrite && kept * 2 < lines {
        return Err(refuse(format!(
            "refused: you changed {path} earlier in this turn, and this content keeps only {kept} \
             of its {lines} lines. Your change is in place: if it is what the person asked for, \
             answer now; to change more, call edit_file with a search_block. Only if the person \
             asked to replace the whole file, call write_file again with replace_whole_file: \
             true (they will be asked)"
        )));
    }
    Ok(())
}
