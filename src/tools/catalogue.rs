//! The five tools, each one spec: its name, the description the model reads
//! (with the recovery guidance for that tool's failures), its JSON Schema,
//! and whether it mutates. The model-visible `tools` array and runtime
//! validation are both made from these specs (DS4Server #72); nothing else
//! in the crate spells a parameter. See `docs/decisions/0011-tool-results-and-failures.md`.

use serde_json::{Value, json};

use super::exec::EXEC_OUTPUT_MAX_BYTES;
use super::list::LIST_MAX_ENTRIES;
use super::read::{READ_DEFAULT_LIMIT, READ_MAX_BYTES, READ_MAX_LIMIT, READ_MAX_LINES};

/// Which tool a spec describes; the validated call carries the same tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolKind {
    ReadFile,
    WriteFile,
    EditFile,
    ExecuteCommand,
    ListDirectory,
}

/// One tool: everything the model sees about it and what validation checks.
pub(crate) struct ToolSpec {
    pub(crate) kind: ToolKind,
    pub(crate) name: &'static str,
    pub(crate) description: String,
    pub(crate) parameters: Value,
}

/// The catalogue, in the order the model sees it.
pub(crate) fn specs() -> Vec<ToolSpec> {
    vec![
        read_file(),
        write_file(),
        edit_file(),
        execute_command(),
        list_directory(),
    ]
}

/// A path parameter: the same words for every tool.
fn path_param(what: &str) -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "description": format!(
            "{what}, relative to the working directory (or absolute inside it). \
             Paths that leave the working directory, directly or through a symbolic link, are refused."
        ),
    })
}

fn read_file() -> ToolSpec {
    ToolSpec {
        kind: ToolKind::ReadFile,
        name: "read_file",
        description: format!(
            "Read a text file as a window of lines (1-based). At most {READ_MAX_LINES} lines and \
             {} KiB are returned; when more follows, `truncated` is true and a closing marker gives \
             the totals and the offset to continue from. Binary files are refused; non-UTF-8 bytes \
             are shown as U+FFFD and `lossy` is true (copy such lines into edit_file only from a \
             UTF-8 view). If the path is not found, list_directory its parent to find the right name.",
            READ_MAX_BYTES / 1024
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": path_param("The file to read"),
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "default": 1,
                    "description": "First line to return, 1-based."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": READ_MAX_LIMIT,
                    "default": READ_DEFAULT_LIMIT,
                    "description": format!("How many lines to return (at most {READ_MAX_LINES} are returned per call).")
                }
            },
            "required": ["path"],
            "additionalProperties": false
        }),
    }
}

fn write_file() -> ToolSpec {
    ToolSpec {
        kind: ToolKind::WriteFile,
        name: "write_file",
        description: "Create a file or replace its whole content; parent directories are created. \
             The write is atomic (a temp file renamed into place) and keeps an existing file's \
             permissions. For a small change to an existing file prefer edit_file, which does not \
             resend the whole file. Needs the user's approval; if rejected, ask what they want instead."
            .to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": path_param("The file to write"),
                "content": {
                    "type": "string",
                    "description": "The complete new content of the file."
                }
            },
            "required": ["path", "content"],
            "additionalProperties": false
        }),
    }
}

fn edit_file() -> ToolSpec {
    ToolSpec {
        kind: ToolKind::EditFile,
        name: "edit_file",
        description: "Replace one exact occurrence of search_block with replace_block. The match is \
             byte-exact (whitespace and indentation included) and must be unique. If the result says \
             \"search block not found\", read_file around the line it names and copy the text exactly; \
             if it says the block matched several times, add surrounding lines until it is unique. \
             Files over 8 MiB are refused: use write_file or execute_command. Needs the user's approval."
            .to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": path_param("The file to edit"),
                "search_block": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The exact text to find; it must occur exactly once."
                },
                "replace_block": {
                    "type": "string",
                    "description": "The text that replaces it; must differ from search_block (may be empty to delete)."
                }
            },
            "required": ["path", "search_block", "replace_block"],
            "additionalProperties": false
        }),
    }
}

fn execute_command() -> ToolSpec {
    ToolSpec {
        kind: ToolKind::ExecuteCommand,
        name: "execute_command",
        description: format!(
            "Run a shell command line with /bin/sh -c (pipes, `;`, `&&`, `cd` work) in its own \
             process group, stdin empty, provider credentials removed from the environment. stdout \
             and stderr come back interleaved in `output`, the first {} KiB of it, with a marker \
             giving the total. A command that finishes has ok:true and `exit_code` (or `signal`): a \
             non-zero exit is the command's answer, read the output before retrying. A time limit \
             applies: on timeout the partial output comes back; run long jobs with a bounded scope. \
             When the command ends, everything it started is killed, so background servers do not \
             survive (`cmd &` is pointless). Needs the user's approval.",
            EXEC_OUTPUT_MAX_BYTES / 1024
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The command line."
                },
                "cwd": {
                    "type": "string",
                    "minLength": 1,
                    "default": ".",
                    "description": "Directory to run in, relative to the working directory; must stay inside it."
                }
            },
            "required": ["command"],
            "additionalProperties": false
        }),
    }
}

fn list_directory() -> ToolSpec {
    ToolSpec {
        kind: ToolKind::ListDirectory,
        name: "list_directory",
        description: format!(
            "List one directory: names sorted bytewise, directories end with `/`, files have sizes, \
             symbolic links show their target. At most {LIST_MAX_ENTRIES} entries (the first by name); \
             `truncated` and `total` say when there are more: use execute_command with find or ls \
             and a filter for the rest. Names that are not UTF-8 are shown lossily and flagged."
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "minLength": 1,
                    "default": ".",
                    "description": "The directory to list, relative to the working directory (or absolute inside it)."
                }
            },
            "additionalProperties": false
        }),
    }
}

/// The OpenAI `tools` array for a chat-completions request.
pub fn definitions() -> Value {
    Value::Array(
        specs()
            .into_iter()
            .map(|spec| {
                json!({
                    "type": "function",
                    "function": {
                        "name": spec.name,
                        "description": spec.description,
                        "parameters": spec.parameters,
                    }
                })
            })
            .collect(),
    )
}
