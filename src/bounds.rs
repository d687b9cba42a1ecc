//! What the tests and benchmarks hold dashfloat to, reached through this
//! one place: every bound (a size, a count, a timeout) a test checks at
//! and past, and the fixed texts and tables a test compares with (what the
//! model is told on a repeat, the key tables, the commands). Each is
//! documented where it is defined, and public only through here; the
//! crate's other tunables are private to their modules, so they are no
//! API and the dead-code lint sees them.

pub use crate::agent::DEFAULT_MAX_STEPS;
pub use crate::agent::budget::{
    BYTES_PER_TOKEN_START, COMPACT_AT_MAX, COMPACT_AT_MIN, DEFAULT_COMPACT_AT,
};
pub use crate::agent::compact::{RESULT_CUT_MIN_BYTES, SUMMARY_MAX_DIVISOR, SUMMARY_PROMPT};
pub use crate::agent::conversation::{
    ANSWER_NOW_PROMPT, NOTHING_FOUND_PROMPT, PRUNED_TAIL, SUMMARY_PREFIX,
};
pub use crate::agent::images::{IMAGE_MAX_BYTES, IMAGES_PER_PROMPT_MAX};
pub use crate::agent::instructions::INSTRUCTIONS_MAX_BYTES;
pub use crate::agent::repeat::{FAILED_REPEAT_NOTICE, REPEAT_MAX_KEYS};
pub use crate::commands::load::{COMMAND_FILE_MAX_BYTES, COMMANDS_MAX};
pub use crate::config::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, LOCAL_BASE_URL, LOCAL_CONTEXT_WINDOW,
    LOCAL_MODEL,
};
pub use crate::exec::EXIT_USAGE;
pub use crate::hooks::config::{HOOK_TIMEOUT_DEFAULT, HOOK_TIMEOUT_MAX, HOOKS_MAX};
pub use crate::hooks::event::HOOK_RESULT_MAX_BYTES;
pub use crate::hooks::run::{HOOK_CONTEXT_MAX_BYTES, HOOK_OUTPUT_MAX_BYTES, HOOK_REASON_MAX_BYTES};
pub use crate::launch::HANDOVER_FD_VAR;
pub use crate::llm::REDIRECT_MAX;
pub use crate::llm::classify::{ERROR_BODY_MAX_BYTES, RETRY_AFTER_MAX};
pub use crate::llm::discover::{DISCOVERY_BODY_MAX_BYTES, DISCOVERY_TIMEOUT, SERVED_MODELS_MAX};
pub use crate::llm::guarded::PIECE_BYTES;
pub use crate::llm::slots::{REFUSAL_SHOWN_MAX_BYTES, SLOT_ACTION_TIMEOUT, SLOT_REPLY_MAX_BYTES};
pub use crate::llm::stream::{
    FRAME_MAX_BYTES, REPLY_CALL_COPIES_MAX, REPLY_MAX_BYTES, TOOL_CALL_EARLY_PROGRESS_BYTES,
    TOOL_CALL_PROGRESS_BYTES,
};
pub use crate::llm::tool_calls::{MADE_UP_ID_LEN, MAX_TOOL_CALLS};
pub use crate::log::LOG_LINE_MAX_BYTES;
pub use crate::permissions::store::{RULES_FILE_MAX_BYTES, RULES_MAX};
pub use crate::protocol::{LOG_BYTES_MAX, LOG_ITEMS_MAX, PROMPT_MAX_BYTES};
pub use crate::session::file::SCHEMA_VERSION;
pub use crate::session::id::ID_MAX_CHARS;
pub use crate::session::writer::JOURNAL_COMPACT_MIN_BYTES;
pub use crate::session::{
    PROBLEMS_LISTED_MAX, SESSION_FILE_MAX_BYTES, SESSIONS_LISTED_MAX, TITLE_MAX_CHARS,
};
pub use crate::tools::analyser::{
    ANALYSER_GIT_DIR_ENTRIES_MAX, ANALYSER_MAX_FILE_BYTES, ANALYSER_MAX_LINE_BYTES,
    ANALYSER_RUN_ENV, ANALYSER_WORK_TREE_ENTRIES_MAX,
};
pub use crate::tools::edit::{
    EDIT_EXCERPT_MAX_BYTES, EDIT_HINT_LINE_MAX_BYTES, EDIT_MAX_FILE_BYTES, LOOSE_NOTE,
};
pub use crate::tools::escalation::REASON_MAX_CHARS;
pub use crate::tools::exec::{
    EXEC_DEFAULT_MAX_TIMEOUT, EXEC_DEFAULT_TIMEOUT, EXEC_LIVE_LINES, EXEC_OUTPUT_MAX_BYTES,
};
pub use crate::tools::glob::GLOB_DEFAULT_MAX_RESULTS;
pub use crate::tools::grep::{
    GREP_DEFAULT_MAX_RESULTS, GREP_LINE_MAX_CHARS, GREP_MAX_LINE_BYTES, GREP_UNSEARCHED_MAX_LISTED,
    GREP_WHOLE_FILE_MAX_BYTES, GREP_WIDENED_MAX_RESULTS,
};
pub use crate::tools::list::LIST_MAX_ENTRIES;
pub use crate::tools::locate::{LOCATE_MAX_FILES, LOCATE_MAX_SHOWN};
pub use crate::tools::loose::LOOSE_COMPARISONS_MAX;
pub use crate::tools::preview::{PREVIEW_MAX_LINES, PREVIEW_REVIEW_MAX_LINES};
pub use crate::tools::read::{
    READ_BINARY_PROBE_BYTES, READ_MAX_BYTES, READ_MAX_LINES, READ_STREAM_THRESHOLD_BYTES,
};
pub use crate::tools::registry::TOOL_NAME_MAX_CHARS;
pub use crate::tools::result::UNCHANGED_RESULT;
pub use crate::tools::syntax::{
    SYNTAX_ERRORS_SHOWN, SYNTAX_EXCERPT_MAX_BYTES, SYNTAX_MAX_FILE_BYTES, SYNTAX_PARSE_TIMEOUT,
};
pub use crate::tools::walk::SEARCH_SKIPPED_DIRS;
pub use crate::tools::write::WIPE_MIN_LINES;
pub use crate::ui::editor::{HISTORY_LIMIT, HISTORY_MAX_BYTES};
pub use crate::ui::entry::ENTRY_ROWS_MAX;
pub use crate::ui::keys::TABLES;
pub use crate::ui::picker::PICKER_TITLE_COLUMNS;
pub use crate::ui::slash::{COMMANDS, POPUP_MAX_ROWS};
pub use crate::ui::state::{INPUT_MAX_ROWS, SPINNER};
pub use crate::ui::terminal::PANICS_KEPT;
pub use crate::ui::transcript::ROWS_MAX;
pub use crate::ui::update::{COPY_MAX_BYTES, WRITING_NAME_MAX_CHARS};
