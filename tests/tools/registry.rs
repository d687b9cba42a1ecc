//! The registry with a tool registered at run time beside the built-ins:
//! what it refuses to take in, and a run-time tool's calls offered,
//! validated against its own schema, previewed, compared and run as a
//! built-in's are.

use dashfloat::bounds::TOOL_NAME_MAX_CHARS;
use dashfloat::protocol::{CallArguments, PreviewKind};
use dashfloat::tools::{Effect, Registry, RegistryError, ToolCall, ToolContext, execute, preview};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::json_of;
use crate::support::calls::arguments;
use crate::support::dynamic::Echo;
use crate::validation::invalid_argument;

/// The built-ins and `echo`, which runs as a command does.
fn with_echo() -> Registry {
    let mut registry = Registry::builtin();
    registry
        .register(Echo::named("echo", Effect::RunsCommands))
        .unwrap();
    registry
}

/// A failure as the model reads it.
fn refusal(registry: &Registry, args: &str) -> Value {
    serde_json::to_value(registry.validate("echo", &arguments(args)).unwrap_err()).unwrap()
}

#[test]
fn a_run_time_tool_is_offered_after_the_built_ins_and_named_among_the_known() {
    let registry = with_echo();
    let definitions = registry.definitions();
    let tools = definitions.as_array().unwrap();
    assert_eq!(tools.len(), 8);
    assert_eq!(
        tools[..7],
        Registry::builtin().definitions().as_array().unwrap()[..]
    );
    assert_eq!(tools[7]["type"], "function");
    assert_eq!(tools[7]["function"]["name"], "echo");
    assert_eq!(tools[7]["function"]["description"], "Says the text back.");
    assert_eq!(
        tools[7]["function"]["parameters"]["required"],
        json!(["text"])
    );
    let unknown = registry.validate("nope", &arguments("{}")).unwrap_err();
    assert!(unknown.to_string().ends_with("grep, echo"), "{unknown}");
}

#[test]
fn a_tool_whose_name_is_taken_or_uncallable_or_whose_schema_cannot_validate_is_refused() {
    let mut registry = with_echo();
    let before = registry.definitions();
    for (name, error) in [
        (
            "echo",
            RegistryError::NameTaken {
                name: "echo".into(),
            },
        ),
        (
            "read_file",
            RegistryError::NameTaken {
                name: "read_file".into(),
            },
        ),
        (
            "mcp server tool",
            RegistryError::BadName {
                name: "mcp server tool".into(),
            },
        ),
        ("", RegistryError::BadName { name: "".into() }),
    ] {
        assert_eq!(
            registry.register(Echo::named(name, Effect::Reads)),
            Err(error)
        );
    }
    let longest = "m".repeat(TOOL_NAME_MAX_CHARS);
    assert!(
        registry
            .register(Echo::named(&format!("{longest}m"), Effect::Reads))
            .is_err()
    );
    registry
        .register(Echo::named("mcp__files__read-2", Effect::Reads))
        .unwrap();
    registry
        .register(Echo::named(&longest, Effect::Reads))
        .unwrap();
    assert_eq!(
        registry.definitions().as_array().unwrap().len(),
        before.as_array().unwrap().len() + 2
    );
}

#[test]
fn a_schema_that_does_not_compile_or_is_not_an_objects_is_refused() {
    for schema in [
        json!({"type": "string"}),
        json!({"type": "object", "properties": {"a": {"type": "no such type"}}}),
    ] {
        let mut registry = Registry::builtin();
        let refused = registry.register(tool_with_schema(schema.clone()));
        assert!(
            matches!(&refused, Err(RegistryError::BadSchema { name, .. }) if name == "odd"),
            "{schema}: {refused:?}"
        );
        assert_eq!(registry.definitions(), Registry::builtin().definitions());
    }
}

/// A tool whose schema is `schema`.
fn tool_with_schema(schema: Value) -> std::sync::Arc<dyn dashfloat::tools::DynamicTool> {
    #[derive(Debug)]
    struct Odd(Value);
    impl dashfloat::tools::DynamicTool for Odd {
        fn name(&self) -> &str {
            "odd"
        }
        fn description(&self) -> &str {
            "odd"
        }
        fn parameters(&self) -> &Value {
            &self.0
        }
        fn effect(&self) -> Effect {
            Effect::Reads
        }
        fn run<'a>(
            &'a self,
            _arguments: &'a serde_json::Map<String, Value>,
            _ctx: &'a ToolContext,
            _cancel: &'a CancellationToken,
        ) -> futures_util::future::BoxFuture<
            'a,
            Result<dashfloat::tools::DynamicOutput, dashfloat::tools::ToolFailure>,
        > {
            Box::pin(async { unreachable!("never registered") })
        }
    }
    std::sync::Arc::new(Odd(schema))
}

#[test]
fn a_bad_call_of_a_run_time_tool_is_answered_as_a_built_ins_would_be() {
    let registry = with_echo();
    let invalid = |field: &str, expected: &str, received: &str| {
        invalid_argument("echo", field, expected, received)
    };
    assert_eq!(
        refusal(&registry, r#"{"text": 5}"#),
        invalid("text", "non-empty string", "integer 5")
    );
    assert_eq!(
        refusal(&registry, r#"{}"#),
        invalid("text", "non-empty string", "missing")
    );
    assert_eq!(
        refusal(&registry, r#"{"text": "a", "times": 2.0}"#),
        invalid("times", "integer 1..3", "number 2.0")
    );
    assert_eq!(
        refusal(&registry, r#"{"text": "a", "loud": true}"#),
        invalid(
            "loud",
            "no such parameter; echo takes text, times",
            "boolean true"
        )
    );
    assert_eq!(
        refusal(&registry, r#"["a"]"#),
        invalid("", "a JSON object of arguments", "array of 1 items")
    );
    assert_eq!(
        refusal(&registry, r#"{"text": "#)["code"],
        "malformed_arguments"
    );
}

#[tokio::test]
async fn a_run_time_call_keeps_its_arguments_and_runs_with_its_effect_and_preview() {
    let registry = with_echo();
    let args = CallArguments::Json(json!({"times": 2, "text": "hi"}));
    let call = registry.validate("echo", &args).unwrap();
    let ToolCall::Dynamic(dynamic) = &call else {
        panic!("not a run-time call: {call:?}")
    };
    assert_eq!(Some(dynamic.arguments()), args.object());
    assert_eq!((call.name(), call.effect()), ("echo", Effect::RunsCommands));
    assert!(call.mutates());
    assert!(call.beyond_undo());
    assert_eq!(call.summary(), r#"{"times":2,"text":"hi"}"#);
    assert_eq!(
        call.canonical(),
        None,
        "compared by its arguments, keys sorted"
    );
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    let shown = preview(&call, &ctx).unwrap();
    let lines: Vec<(PreviewKind, &str)> = shown
        .lines
        .iter()
        .map(|l| (l.kind, l.text.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            (PreviewKind::Header, "call echo with:"),
            (PreviewKind::Added, "{"),
            (PreviewKind::Added, "  \"times\": 2,"),
            (PreviewKind::Added, "  \"text\": \"hi\""),
            (PreviewKind::Added, "}"),
        ]
    );
    let result = execute(&call, &ctx, CancellationToken::new()).await;
    assert_eq!(json_of(result), json!({"ok": true, "output": "hi hi"}));
}

/// A run-time tool's change is beyond `/undo` unless it only reads; of
/// the built-ins only a command's is.
#[test]
fn what_a_call_changes_is_beyond_undo_unless_it_is_a_built_in_write_or_a_read() {
    let mut registry = Registry::builtin();
    for (name, effect) in [("peek", Effect::Reads), ("note", Effect::WritesFiles)] {
        registry.register(Echo::named(name, effect)).unwrap();
    }
    let beyond = |name: &str, args: &str| {
        registry
            .validate(name, &arguments(args))
            .unwrap()
            .beyond_undo()
    };
    assert!(!beyond("peek", r#"{"text": "a"}"#));
    assert!(beyond("note", r#"{"text": "a"}"#));
    assert!(!beyond("write_file", r#"{"path": "a", "content": "b"}"#));
    assert!(!beyond("read_file", r#"{"path": "a"}"#));
    assert!(beyond("execute_command", r#"{"command": "true"}"#));
}

#[test]
fn the_same_call_of_the_same_tool_is_equal_and_of_another_tool_is_not() {
    let registry = with_echo();
    let mut other = Registry::builtin();
    other
        .register(Echo::named("echo", Effect::RunsCommands))
        .unwrap();
    let args = arguments(r#"{"text": "a"}"#);
    let call = |registry: &Registry| registry.validate("echo", &args).unwrap();
    assert_eq!(call(&registry), call(&registry.clone()));
    assert_ne!(
        call(&registry),
        call(&other),
        "another tool of the same name"
    );
}
