//! The registry: one line per tool, in the order the model sees them. From
//! it come the validated call ([`ToolCall`]), the typed output
//! ([`ToolOutput`]), the specs that [`definitions`] and validation are made
//! from, and every dispatch to a tool's own file. Nothing else in the crate
//! lists the tools. ADR 0011.

use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::protocol::{FileGuard, Preview, ToolStatus};

use super::ToolContext;
use super::failure::ToolFailure;
use super::preview::reviewable;
use super::tool::{Effect, Shown, Tool};
use super::validate::typed;

/// One tool as validation sees it: what the model is shown, and the typed
/// parse of arguments the schema accepted.
pub(crate) struct ToolSpec {
    /// The name the model calls the tool by.
    pub(crate) name: &'static str,
    /// What the model reads about the tool.
    pub(crate) description: String,
    /// The JSON Schema validation enforces and the model is shown.
    pub(crate) parameters: Value,
    /// The typed parse, run once the schema accepted the arguments.
    pub(crate) parse: fn(Value) -> Result<ToolCall, ToolFailure>,
}

/// Declares the tools: each line is `Variant(module::Type)`, `Type`
/// implementing [`Tool`] in its own file, `module`.
macro_rules! registry {
    ($($(#[$doc:meta])* $variant:ident($module:ident::$tool:ident),)+) => {
        $(use super::$module::$tool;)+

        /// A validated call, ready to run: the tool and its typed arguments
        /// with defaults filled in. Only [`validate`](super::validate) makes
        /// one from model output.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum ToolCall {
            $($(#[$doc])* $variant($tool),)+
        }

        /// What a call that worked returns, per tool; serialised as that
        /// tool's own fields.
        #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
        #[serde(untagged)]
        pub enum ToolOutput {
            $($(#[$doc])* $variant(<$tool as Tool>::Output),)+
        }

        /// The specs, in the order the model sees them.
        pub(crate) fn specs() -> Vec<ToolSpec> {
            vec![$(ToolSpec {
                name: <$tool>::NAME,
                description: <$tool>::description(),
                parameters: <$tool>::parameters(),
                parse: |value| {
                    let call: $tool = typed(<$tool>::NAME, value)?;
                    call.check()?;
                    Ok(ToolCall::$variant(call))
                },
            },)+]
        }

        impl ToolCall {
            /// The tool's name as the model knows it.
            pub fn name(&self) -> &'static str {
                match self {
                    $(ToolCall::$variant(_) => <$tool>::NAME,)+
                }
            }

            /// What the call can change.
            pub fn effect(&self) -> Effect {
                match self {
                    $(ToolCall::$variant(_) => <$tool>::EFFECT,)+
                }
            }

            /// The call in brief for its row in the log:
            /// `src/main.rs:120-180`, `cargo test`, `notes.md (12 lines)`.
            pub fn summary(&self) -> String {
                match self {
                    $(ToolCall::$variant(call) => call.summary(),)+
                }
            }

            /// The call as the repeat detector compares it (ADR 0015): its
            /// typed arguments with defaults filled in, whatever their order
            /// or spacing, and its path in a normal form (`./src/` is
            /// `src`, `./` and a left-out path are `.`).
            pub fn canonical(&self) -> String {
                let mut call = self.clone();
                let place = match &mut call {
                    $(ToolCall::$variant(call) => call.place_mut(),)+
                };
                *place = normal_place(place);
                format!("{call:?}")
            }

            fn written_path(&self) -> Option<&str> {
                match self {
                    $(ToolCall::$variant(call) => call.written_path(),)+
                }
            }

            /// The tool's preview, refused when it is longer than a person
            /// can review.
            pub(crate) fn preview(&self, ctx: &ToolContext) -> Result<Preview, ToolFailure> {
                let preview = match self {
                    $(ToolCall::$variant(call) => call.preview(ctx),)+
                }?;
                reviewable(self.name(), self.effect(), preview)
            }

            /// Runs the call with its tool.
            pub(crate) async fn run(
                &self,
                ctx: &ToolContext,
                cancel: &CancellationToken,
                guard: FileGuard,
            ) -> Result<ToolOutput, ToolFailure> {
                match self {
                    $(ToolCall::$variant(call) => {
                        call.run(ctx, cancel, guard).await.map(ToolOutput::$variant)
                    })+
                }
            }
        }

        impl Shown for ToolOutput {
            fn status(&self) -> ToolStatus {
                match self {
                    $(ToolOutput::$variant(output) => output.status(),)+
                }
            }

            fn text(&self) -> std::borrow::Cow<'_, str> {
                match self {
                    $(ToolOutput::$variant(output) => output.text(),)+
                }
            }

            fn cut(&mut self, max_bytes: usize) -> bool {
                match self {
                    $(ToolOutput::$variant(output) => output.cut(max_bytes),)+
                }
            }
        }
    };
}

registry! {
    /// `read_file`: a window of lines of a text file.
    ReadFile(read::ReadFile),
    /// `write_file`: create or replace a whole file.
    WriteFile(write::WriteFile),
    /// `edit_file`: replace one unique exact block.
    EditFile(edit::EditFile),
    /// `execute_command`: a `/bin/sh -c` command line.
    ExecuteCommand(command::ExecuteCommand),
    /// `list_directory`: one directory's entries.
    ListDirectory(list::ListDirectory),
    /// `glob`: the files whose path matches a pattern.
    Glob(glob::Glob),
    /// `grep`: the lines of files that match a regular expression.
    Grep(grep::Grep),
}

impl ToolCall {
    /// Whether the call changes the machine (files or processes), i.e.
    /// whether the agent must ask before running it and run it only after
    /// every earlier call.
    pub fn mutates(&self) -> bool {
        self.effect() != Effect::Reads
    }

    /// Whether the call writes into a `.git` of the project once every link
    /// is followed: the approval policy asks about those even under
    /// auto-edit. Looks at the filesystem (a few `lstat`s, as the path
    /// policy does).
    pub fn writes_into_git(&self, ctx: &ToolContext) -> bool {
        self.written_path().is_some_and(|path| {
            ctx.workspace
                .resolve(path)
                .is_ok_and(|real| super::in_git(ctx.workspace.as_ref(), &real))
        })
    }
}

/// A path with its `.` parts and doubled or trailing separators left out,
/// `.` when nothing is left; `..` parts stay, as what they name depends on
/// links.
fn normal_place(place: &str) -> String {
    let parts: Vec<&str> = place
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    match (place.starts_with('/'), parts.is_empty()) {
        (true, _) => format!("/{}", parts.join("/")),
        (false, true) => ".".to_owned(),
        (false, false) => parts.join("/"),
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
