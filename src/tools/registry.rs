//! The registry: the tools the model is offered, in the order it sees
//! them. The built-ins are one line each in the macro below; a tool known
//! only at run time (an MCP server's) is a [`DynamicTool`] given to
//! [`Registry::register`]. Both enter through the same door: the name
//! checked, the schema compiled. From a registry come the `tools` array
//! ([`Registry::definitions`]) and the validated call
//! ([`Registry::validate`], a [`ToolCall`]); the call then carries its own
//! effect, summary, canonical form, preview and run, and its run gives a
//! typed output ([`ToolOutput`]). A built-in keeps its typed arguments and
//! output, its own variant of each enum; every run-time tool shares the
//! one `Dynamic` variant. Nothing else in the crate lists the tools.
//! ADR 0011, ADR 0042.

use std::marker::PhantomData;
use std::sync::{Arc, LazyLock};

use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::protocol::{CallArguments, FileGuard, Preview, ToolStatus};

use super::ToolContext;
use super::dynamic::{DynamicCall, DynamicOutput, DynamicTool};
use super::failure::ToolFailure;
use super::preview::reviewable;
use super::tool::{Effect, Shown, Tool};
use super::validate::{AN_OBJECT, Schema, received, typed};

/// The longest tool name a provider takes (OpenAI's rule, which the
/// others follow): longer, and every request offering the tool is
/// refused.
pub const TOOL_NAME_MAX_CHARS: usize = 64;

/// Declares the built-in tools: each line is `Variant(module::Type)`,
/// `Type` implementing [`Tool`] in its own file, `module`.
macro_rules! registry {
    ($($(#[$doc:meta])* $variant:ident($module:ident::$tool:ident),)+) => {
        $(use super::$module::$tool;)+

        /// A validated call, ready to run: a built-in tool and its typed
        /// arguments with defaults filled in, or a run-time tool and the
        /// arguments its schema accepted. Only [`Registry::validate`]
        /// makes one from model output.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum ToolCall {
            $($(#[$doc])* $variant($tool),)+
            /// A tool registered at run time.
            Dynamic(DynamicCall),
        }

        /// What a call that worked returns, per tool; serialised as that
        /// tool's own fields.
        #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
        #[serde(untagged)]
        pub enum ToolOutput {
            $($(#[$doc])* $variant(<$tool as Tool>::Output),)+
            /// What a tool registered at run time answered.
            Dynamic(DynamicOutput),
        }

        $(impl From<$tool> for ToolCall {
            fn from(call: $tool) -> Self {
                ToolCall::$variant(call)
            }
        })+

        /// The built-in tools, each through the adapter from [`Tool`], in
        /// the order the model sees them.
        fn builtins() -> Vec<Box<dyn Registered>> {
            vec![$(Box::new(Builtin::<$tool>(PhantomData)),)+]
        }

        impl ToolCall {
            /// The tool's name as the model knows it.
            pub fn name(&self) -> &str {
                match self {
                    $(ToolCall::$variant(_) => <$tool>::NAME,)+
                    ToolCall::Dynamic(call) => call.tool().name(),
                }
            }

            /// What the call can change.
            pub fn effect(&self) -> Effect {
                match self {
                    $(ToolCall::$variant(_) => <$tool>::EFFECT,)+
                    ToolCall::Dynamic(call) => call.tool().effect(),
                }
            }

            /// The call in brief for its row in the log:
            /// `src/main.rs:120-180`, `cargo test`, `notes.md (12 lines)`.
            pub fn summary(&self) -> String {
                match self {
                    $(ToolCall::$variant(call) => call.summary(),)+
                    ToolCall::Dynamic(call) => call.tool().summary(call.arguments()),
                }
            }

            /// The call as the repeat detector compares it (ADR 0015): a
            /// built-in's typed arguments with defaults filled in,
            /// whatever their order or spacing, and its path in a normal
            /// form (`./src/` is `src`, `./` and a left-out path are
            /// `.`). `None` for a run-time tool's call, which is compared
            /// by its name and arguments, keys sorted, as a call that did
            /// not validate is.
            pub fn canonical(&self) -> Option<String> {
                let mut call = self.clone();
                let place = match &mut call {
                    $(ToolCall::$variant(call) => call.place_mut(),)+
                    ToolCall::Dynamic(_) => return None,
                };
                *place = normal_place(place);
                Some(format!("{call:?}"))
            }

            fn written_path(&self) -> Option<&str> {
                match self {
                    $(ToolCall::$variant(call) => call.written_path(),)+
                    ToolCall::Dynamic(_) => None,
                }
            }

            /// The tool's preview, refused when it is longer than a person
            /// can review.
            pub(crate) fn preview(&self, ctx: &ToolContext) -> Result<Preview, ToolFailure> {
                let preview = match self {
                    $(ToolCall::$variant(call) => call.preview(ctx),)+
                    ToolCall::Dynamic(call) => call.tool().preview(call.arguments(), ctx),
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
                    ToolCall::Dynamic(call) => call
                        .tool()
                        .run(call.arguments(), ctx, cancel)
                        .await
                        .map(ToolOutput::Dynamic),
                }
            }
        }

        impl Shown for ToolOutput {
            fn status(&self) -> ToolStatus {
                match self {
                    $(ToolOutput::$variant(output) => output.status(),)+
                    ToolOutput::Dynamic(output) => output.status(),
                }
            }

            fn text(&self) -> std::borrow::Cow<'_, str> {
                match self {
                    $(ToolOutput::$variant(output) => output.text(),)+
                    ToolOutput::Dynamic(output) => output.text(),
                }
            }

            fn cut(&mut self, max_bytes: usize) -> bool {
                match self {
                    $(ToolOutput::$variant(output) => output.cut(max_bytes),)+
                    ToolOutput::Dynamic(output) => output.cut(max_bytes),
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
    /// `edit_file`: replace one unique exact block, or insert text.
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

    /// Whether the call says it replaces most of an existing file: put to
    /// the person under every policy, even approve-all (ADR 0046).
    pub fn replaces_whole_file(&self) -> bool {
        matches!(self, ToolCall::WriteFile(write) if write.replace_whole_file)
    }

    /// Whether what the call may change is beyond `/undo`: a command, or
    /// a run-time tool's call that does more than read, whose changes no
    /// preview shows as a diff, no path policy confines and no checkpoint
    /// keeps. Auto-edit asks about these as about a command (ADR 0014,
    /// ADR 0042), and `/undo` says such a call ran since.
    pub fn beyond_undo(&self) -> bool {
        match self {
            ToolCall::Dynamic(_) => self.mutates(),
            _ => self.effect() == Effect::RunsCommands,
        }
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

/// One tool as the registry takes it in, built-in or registered at run
/// time: what the model is shown, and how arguments its schema accepted
/// become the validated call.
trait Registered: Send + Sync {
    /// The name the model calls the tool by.
    fn name(&self) -> String;
    /// What the model reads about the tool.
    fn description(&self) -> String;
    /// The JSON Schema of its arguments.
    fn parameters(&self) -> Value;
    /// The parameters of the schema the model is not shown.
    fn hidden(&self) -> &'static [&'static str] {
        &[]
    }
    /// The parameters the shown schema requires, beyond the whole one's.
    fn shown_required(&self) -> &'static [&'static str] {
        &[]
    }
    /// The validated call of arguments the schema accepted.
    fn accept(&self, arguments: &Value) -> Result<ToolCall, ToolFailure>;
}

/// The adapter every built-in [`Tool`] registers through: its call is its
/// typed arguments, parsed from the accepted JSON and checked.
struct Builtin<T>(PhantomData<fn() -> T>);

impl<T: Tool> Registered for Builtin<T>
where
    ToolCall: From<T>,
{
    fn name(&self) -> String {
        T::NAME.to_owned()
    }

    fn description(&self) -> String {
        T::description()
    }

    fn parameters(&self) -> Value {
        T::parameters()
    }

    fn hidden(&self) -> &'static [&'static str] {
        T::HIDDEN
    }

    fn shown_required(&self) -> &'static [&'static str] {
        T::SHOWN_REQUIRED
    }

    fn accept(&self, arguments: &Value) -> Result<ToolCall, ToolFailure> {
        let call: T = typed(T::NAME, arguments)?;
        call.check()?;
        Ok(call.into())
    }
}

/// A run-time tool registers as itself: its call keeps the arguments
/// object its schema accepted.
impl Registered for Arc<dyn DynamicTool> {
    fn name(&self) -> String {
        DynamicTool::name(self.as_ref()).to_owned()
    }

    fn description(&self) -> String {
        DynamicTool::description(self.as_ref()).to_owned()
    }

    fn parameters(&self) -> Value {
        DynamicTool::parameters(self.as_ref()).clone()
    }

    fn accept(&self, arguments: &Value) -> Result<ToolCall, ToolFailure> {
        // The registry took only a schema of an object, so this holds.
        let Value::Object(map) = arguments else {
            return Err(ToolFailure::InvalidArgument {
                tool: DynamicTool::name(self.as_ref()).to_owned(),
                field: String::new(),
                expected: AN_OBJECT.to_owned(),
                received: received(arguments),
            });
        };
        Ok(ToolCall::Dynamic(DynamicCall::new(
            Arc::clone(self),
            map.clone(),
        )))
    }
}

/// One registered tool: what the model is shown, its schema compiled, and
/// how its calls are made.
struct Entry {
    name: String,
    description: String,
    schema: Schema,
    /// The schema without its hidden parameters: what the model reads.
    shown: Value,
    tool: Box<dyn Registered>,
}

impl Entry {
    /// The entry of `tool`, unless no model could call it by its name or
    /// its schema cannot validate its calls.
    fn new(tool: Box<dyn Registered>) -> Result<Self, RegistryError> {
        let name = tool.name();
        let callable = (1..=TOOL_NAME_MAX_CHARS).contains(&name.chars().count())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !callable {
            return Err(RegistryError::BadName { name });
        }
        let schema = match Schema::compile(tool.parameters()) {
            Ok(schema) => schema,
            Err(message) => return Err(RegistryError::BadSchema { name, message }),
        };
        let mut shown = schema.parameters().clone();
        if let Some(properties) = shown.get_mut("properties").and_then(Value::as_object_mut) {
            for hidden in tool.hidden() {
                properties.remove(*hidden);
            }
        }
        if let Some(required) = shown.get_mut("required").and_then(Value::as_array_mut) {
            required.extend(tool.shown_required().iter().map(|name| json!(name)));
        }
        Ok(Entry {
            description: tool.description(),
            name,
            schema,
            shown,
            tool,
        })
    }
}

/// The built-ins, registered once per process (their schemas compiled
/// once) and shared by every registry: they never change. Each passes
/// the checks every tool does (a test holds all seven to it); one that did
/// not would be left out rather than take the process down.
static BUILTINS: LazyLock<Registry> = LazyLock::new(|| {
    let mut registry = Registry {
        entries: Vec::new(),
    };
    for tool in builtins() {
        let _ = registry.add(tool);
    }
    registry
});

/// Why a tool could not join a registry; nothing was added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Another tool of the registry has the name already.
    #[error("a tool named {name} is registered already; the second was left out")]
    NameTaken {
        /// The name both tools have.
        name: String,
    },
    /// A provider would refuse every request offering a tool of this name.
    #[error(
        "the tool name {name:?} is not one a model can call: it takes 1 to {TOOL_NAME_MAX_CHARS} letters, digits, `_` and `-`"
    )]
    BadName {
        /// The name as the tool gave it.
        name: String,
    },
    /// The tool's JSON Schema does not compile, or does not describe an
    /// object of arguments.
    #[error("the schema of the tool {name} cannot validate its calls: {message}")]
    BadSchema {
        /// The tool's name.
        name: String,
        /// What is wrong with the schema.
        message: String,
    },
}

/// The tools one agent offers the model: the built-ins, then those
/// registered at run time, in that order. Cheap to clone (entries are
/// shared); each agent holds its own.
#[derive(Clone)]
pub struct Registry {
    entries: Vec<Arc<Entry>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|entry| &entry.name))
            .finish()
    }
}

impl Registry {
    /// The built-in tools alone, in the order the model sees them.
    pub fn builtin() -> Self {
        BUILTINS.clone()
    }

    /// Adds a tool known only at run time, after the tools already there:
    /// an agent holding the registry offers it, validates its calls
    /// against its own schema, asks about them as its effect says, and
    /// runs them. Refused, leaving the registry as it was, when its name
    /// is taken or no model could call it, or its schema cannot validate
    /// a call.
    pub fn register(&mut self, tool: Arc<dyn DynamicTool>) -> Result<(), RegistryError> {
        self.add(Box::new(tool))
    }

    /// The one door into a registry, for the built-ins and run-time
    /// tools alike.
    fn add(&mut self, tool: Box<dyn Registered>) -> Result<(), RegistryError> {
        let entry = Entry::new(tool)?;
        if self.contains(&entry.name) {
            return Err(RegistryError::NameTaken { name: entry.name });
        }
        self.entries.push(Arc::new(entry));
        Ok(())
    }

    /// Whether a tool of the registry is named `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.iter().any(|e| e.name == name)
    }

    /// The OpenAI `tools` array for a chat-completions request.
    pub fn definitions(&self) -> Value {
        Value::Array(
            self.entries
                .iter()
                .map(|entry| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": entry.name,
                            "description": entry.description,
                            "parameters": entry.shown,
                        }
                    })
                })
                .collect(),
        )
    }

    /// The whole JSON Schema the calls of the tool `name` are validated
    /// against: its parameters as shown to the model, and the hidden ones.
    pub fn parameters(&self, name: &str) -> Option<&Value> {
        let entry = self.entries.iter().find(|e| e.name == name)?;
        Some(entry.schema.parameters())
    }

    /// Validates a call by tool name and its arguments as the stream
    /// parsed them, against the tool's whole schema, before
    /// any side effect and before any confirmation. The error is the
    /// failure result to send back; nothing has touched the disk either
    /// way.
    pub fn validate(&self, name: &str, arguments: &CallArguments) -> Result<ToolCall, ToolFailure> {
        let Some(entry) = self.entries.iter().find(|e| e.name == name) else {
            return Err(ToolFailure::UnknownTool {
                tool: name.to_owned(),
                known: self
                    .entries
                    .iter()
                    .map(|e| e.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let value = match arguments {
            CallArguments::Json(value) => value,
            CallArguments::Malformed { detail, .. } => {
                return Err(ToolFailure::MalformedArguments {
                    tool: entry.name.clone(),
                    detail: detail.clone(),
                });
            }
        };
        entry.schema.check(&entry.name, value)?;
        entry.tool.accept(value)
    }
}
