//! Validation: every failure class with its precise result, the schema the
//! model sees agreeing with what runtime validation accepts, and invalid
//! calls never touching the disk.

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::calls::validate;
use dashfloat::tools::{
    ExecuteCommand, Glob, Grep, ListDirectory, ReadFile, Registry, ToolCall, ToolContext,
    ToolFailure, execute,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A failure as the model reads it.
fn json_of(failure: ToolFailure) -> Value {
    serde_json::to_value(failure).unwrap()
}

fn invalid(tool: &str, args: &str) -> Value {
    json_of(validate(tool, args).unwrap_err())
}

/// The `invalid_argument` failure of a call of `tool`, as the model reads
/// it.
pub(crate) fn invalid_argument(tool: &str, field: &str, expected: &str, received: &str) -> Value {
    json!({
        "ok": false,
        "error": "invalid_argument",
        "field": field,
        "expected": expected,
        "received": received,
        "code": "invalid_argument",
        "tool": tool,
    })
}

fn expect_invalid(tool: &str, args: &str, field: &str, expected: &str, received: &str) {
    assert_eq!(
        invalid(tool, args),
        invalid_argument(tool, field, expected, received),
        "{tool} {args}"
    );
}

#[test]
fn a_quoted_integer_is_not_coerced() {
    expect_invalid(
        "read_file",
        r#"{"path":"a","limit":"20"}"#,
        "limit",
        "integer 1..10000",
        "string \"20\"",
    );
    expect_invalid(
        "read_file",
        r#"{"path":"a","offset":"5"}"#,
        "offset",
        "integer >= 1",
        "string \"5\"",
    );
}

#[test]
fn a_float_is_not_an_integer() {
    expect_invalid(
        "read_file",
        r#"{"path":"a","offset":5.0}"#,
        "offset",
        "integer >= 1",
        "number 5.0",
    );
    expect_invalid(
        "read_file",
        r#"{"path":"a","limit":2.5}"#,
        "limit",
        "integer 1..10000",
        "number 2.5",
    );
}

#[test]
fn a_limit_out_of_range_is_refused_at_both_ends() {
    expect_invalid(
        "read_file",
        r#"{"path":"a","limit":0}"#,
        "limit",
        "integer 1..10000",
        "integer 0",
    );
    expect_invalid(
        "read_file",
        r#"{"path":"a","limit":10001}"#,
        "limit",
        "integer 1..10000",
        "integer 10001",
    );
    expect_invalid(
        "read_file",
        r#"{"path":"a","offset":0}"#,
        "offset",
        "integer >= 1",
        "integer 0",
    );
    expect_invalid(
        "read_file",
        r#"{"path":"a","offset":-3}"#,
        "offset",
        "integer >= 1",
        "integer -3",
    );
}

#[test]
fn a_limit_at_the_bounds_is_accepted() {
    for limit in [1, 10_000] {
        let call = validate("read_file", &format!(r#"{{"path":"a","limit":{limit}}}"#)).unwrap();
        assert_eq!(
            call,
            ToolCall::ReadFile(ReadFile {
                path: "a".into(),
                offset: 1,
                limit
            })
        );
    }
}

#[test]
fn defaults_are_filled_in() {
    assert_eq!(
        validate("read_file", r#"{"path":"a"}"#).unwrap(),
        ToolCall::ReadFile(ReadFile {
            path: "a".into(),
            offset: 1,
            limit: 2000
        })
    );
    assert_eq!(
        validate("list_directory", "{}").unwrap(),
        ToolCall::ListDirectory(ListDirectory { path: ".".into() })
    );
    assert_eq!(
        validate("execute_command", r#"{"command":"ls"}"#).unwrap(),
        ToolCall::ExecuteCommand(ExecuteCommand {
            command: "ls".into(),
            cwd: ".".into(),
            timeout_seconds: None,
            sandbox: None,
            reason: None,
        })
    );
}

#[test]
fn a_missing_required_argument_is_named() {
    expect_invalid("read_file", "{}", "path", "non-empty string", "missing");
    expect_invalid(
        "write_file",
        r#"{"path":"a"}"#,
        "content",
        "string",
        "missing",
    );
    expect_invalid(
        "edit_file",
        r#"{"path":"a","search_block":"x"}"#,
        "replace_block",
        "string",
        "missing",
    );
    expect_invalid(
        "execute_command",
        "{}",
        "command",
        "non-empty string",
        "missing",
    );
}

#[test]
fn an_unknown_argument_is_refused() {
    expect_invalid(
        "read_file",
        r#"{"path":"a","line":3}"#,
        "line",
        "no such parameter; read_file takes path, offset, limit",
        "integer 3",
    );
}

#[test]
fn a_wrong_type_is_named_with_what_arrived() {
    expect_invalid(
        "write_file",
        r#"{"path":"a","content":null}"#,
        "content",
        "string",
        "null",
    );
    expect_invalid(
        "write_file",
        r#"{"path":["a"],"content":""}"#,
        "path",
        "non-empty string",
        "array of 1 items",
    );
    expect_invalid(
        "execute_command",
        r#"{"command":true}"#,
        "command",
        "non-empty string",
        "boolean true",
    );
    expect_invalid(
        "list_directory",
        r#"{"path":{}}"#,
        "path",
        "non-empty string",
        "object",
    );
}

#[test]
fn arguments_that_are_not_an_object_are_refused() {
    expect_invalid(
        "list_directory",
        "[]",
        "",
        "a JSON object of arguments",
        "array of 0 items",
    );
    expect_invalid(
        "list_directory",
        r#""src""#,
        "",
        "a JSON object of arguments",
        "string \"src\"",
    );
}

#[test]
fn a_long_received_string_is_cut() {
    let long = "x".repeat(500);
    let v = invalid("read_file", &format!(r#"{{"path":"a","limit":"{long}"}}"#));
    assert_eq!(
        v["received"],
        json!(format!("string \"{}…\"", "x".repeat(60)))
    );
}

#[test]
fn an_empty_search_block_is_refused() {
    expect_invalid(
        "edit_file",
        r#"{"path":"a","search_block":"","replace_block":"x"}"#,
        "search_block",
        "non-empty string",
        "string \"\"",
    );
}

#[test]
fn a_search_block_equal_to_the_replacement_is_refused() {
    expect_invalid(
        "edit_file",
        r#"{"path":"a","search_block":"x","replace_block":"x"}"#,
        "replace_block",
        "text different from search_block",
        "the same text as search_block",
    );
}

#[test]
fn an_empty_path_is_refused_by_the_schema() {
    expect_invalid(
        "read_file",
        r#"{"path":""}"#,
        "path",
        "non-empty string",
        "string \"\"",
    );
}

#[test]
fn malformed_json_is_its_own_class() {
    let v = invalid("read_file", r#"{"path": "a""#);
    assert_eq!(v["code"], "malformed_arguments");
    assert_eq!(v["tool"], "read_file");
    assert_eq!(v["ok"], false);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("the arguments of read_file are not valid JSON")
    );
    assert_eq!(invalid("list_directory", "")["code"], "malformed_arguments");
}

#[test]
fn an_unknown_tool_is_its_own_class() {
    assert_eq!(
        invalid("delete_everything", "{}"),
        json!({
            "ok": false,
            "error": "there is no tool named \"delete_everything\"; the tools are read_file, write_file, edit_file, execute_command, list_directory, glob, grep",
            "code": "unknown_tool",
            "tool": "delete_everything",
        })
    );
}

#[test]
fn an_unknown_tool_is_reported_before_the_arguments_are_parsed() {
    assert_eq!(invalid("nope", "{{{")["code"], "unknown_tool");
}

#[test]
fn rejected_and_cancelled_have_their_own_shapes() {
    assert_eq!(
        json_of(ToolFailure::Rejected {
            tool: "write_file".into(),
            again: false,
        }),
        json!({"ok": false, "rejected": true, "error": "the person rejected this call. Do not make the same call again: change it as they would want, or ask them what they want instead", "code": "rejected", "tool": "write_file"})
    );
    assert_eq!(
        json_of(ToolFailure::Rejected {
            tool: "write_file".into(),
            again: true,
        }),
        json!({"ok": false, "rejected": true, "error": "not run: the person already rejected this exact call since they last wrote, so it was not put to them again. Ask them what they want instead", "code": "rejected", "tool": "write_file"})
    );
    assert_eq!(
        json_of(ToolFailure::Cancelled {
            tool: "execute_command".into(),
            output: Some("partial".into())
        }),
        json!({"ok": false, "cancelled": true, "error": "cancelled by the user", "output": "partial", "code": "cancelled", "tool": "execute_command"})
    );
}

#[test]
fn every_failure_class_has_a_distinct_code() {
    let failures = [
        ToolFailure::MalformedArguments {
            tool: "t".into(),
            detail: "d".into(),
        },
        ToolFailure::UnknownTool {
            tool: "t".into(),
            known: "k".into(),
        },
        ToolFailure::InvalidArgument {
            tool: "t".into(),
            field: "f".into(),
            expected: "e".into(),
            received: "r".into(),
        },
        ToolFailure::PathDenied {
            tool: "t".into(),
            message: "m".into(),
        },
        ToolFailure::ExecutionFailed {
            tool: "t".into(),
            message: "m".into(),
        },
        ToolFailure::Timeout {
            tool: "t".into(),
            after: std::time::Duration::from_secs(30),
            output: String::new(),
        },
        ToolFailure::Cancelled {
            tool: "t".into(),
            output: None,
        },
        ToolFailure::Rejected {
            tool: "t".into(),
            again: false,
        },
    ];
    let codes: std::collections::BTreeSet<_> = failures.iter().map(ToolFailure::code).collect();
    assert_eq!(codes.len(), failures.len());
    assert_eq!(json_of(failures[5].clone())["error"], "timed out after 30s");
}

#[test]
fn mutates_and_name_follow_the_catalogue() {
    let cases = [
        (r#"{"path":"a"}"#, "read_file", false),
        (r#"{"path":"a","content":""}"#, "write_file", true),
        (
            r#"{"path":"a","search_block":"x","replace_block":"y"}"#,
            "edit_file",
            true,
        ),
        (r#"{"command":"true"}"#, "execute_command", true),
        ("{}", "list_directory", false),
        (r#"{"pattern":"*"}"#, "glob", false),
        (r#"{"pattern":"x"}"#, "grep", false),
    ];
    for (args, name, mutates) in cases {
        let call = validate(name, args).unwrap();
        assert_eq!(call.name(), name);
        assert_eq!(call.mutates(), mutates, "{name}");
    }
}

/// A well-typed value for a property schema (at its minimum when bounded,
/// the first of its values when it lists them).
fn sample(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].get(0) {
        return first.clone();
    }
    if let Some(first) = schema["anyOf"].get(0) {
        return sample(first);
    }
    match schema["type"].as_str().unwrap() {
        "integer" => schema.get("minimum").cloned().unwrap_or(json!(1)),
        "string" => json!("a"),
        "boolean" => json!(true),
        other => panic!("no sample for {other}"),
    }
}

/// The field an optional field goes with, as its description says ("…;
/// needs reason"): the two are left out together, and neither is taken
/// without the other (`execute_command`'s `sandbox` and `reason`, ADR
/// 0044).
fn partner(props: &BTreeMap<String, Value>, field: &str) -> Option<String> {
    let needs = |f: &str| {
        props[f]["description"]
            .as_str()
            .and_then(|d| d.split("needs ").nth(1))
            .map(str::to_owned)
    };
    needs(field).or_else(|| {
        props
            .keys()
            .find(|other| needs(other).as_deref() == Some(field))
            .cloned()
    })
}

/// The model-visible schema and the runtime agree: everything the schema
/// declares is accepted, every required field is really required, every
/// optional one really optional with the default the schema states (or
/// together with the field it needs), every wrong type and every
/// undeclared field refused, for every tool. The schema the model is
/// shown is that one without the hidden parameters (ADR 0050), and the
/// only ones hidden are the flags a small model sets by reflex.
#[test]
fn the_schema_the_model_sees_is_the_one_validation_enforces() {
    let registry = Registry::builtin();
    let defs = registry.definitions();
    let tools = defs.as_array().unwrap();
    assert_eq!(tools.len(), 7);
    let mut hidden = Vec::new();
    for def in tools {
        assert_eq!(def["type"], "function");
        let name = def["function"]["name"].as_str().unwrap();
        let shown = &def["function"]["parameters"];
        let params = registry.parameters(name).unwrap();
        for (field, schema) in params["properties"].as_object().unwrap() {
            match shown["properties"].get(field) {
                Some(seen) => assert_eq!(seen, schema, "{name}.{field}"),
                None => hidden.push(format!("{name}.{field}")),
            }
        }
        // The shown schema may require what a hidden parameter stands in
        // for (edit_file's search_block, for insert_at); nothing else.
        let required = |schema: &Value| -> Vec<String> {
            schema["required"]
                .as_array()
                .map(|r| r.iter().map(|v| v.as_str().unwrap().to_owned()).collect())
                .unwrap_or_default()
        };
        let extra: Vec<String> = required(shown)
            .into_iter()
            .filter(|field| !required(params).contains(field))
            .collect();
        let expected: &[&str] = if name == "edit_file" {
            &["search_block"]
        } else {
            &[]
        };
        assert_eq!(extra, expected, "{name}");
        assert_eq!(params["type"], "object");
        assert_eq!(params["additionalProperties"], false, "{name}");
        assert!(!def["function"]["description"].as_str().unwrap().is_empty());
        // The schema is plain JSON Schema that a validator compiles.
        assert!(jsonschema::validator_for(params).is_ok(), "{name}");
        let props: BTreeMap<String, Value> = params["properties"]
            .as_object()
            .unwrap()
            .clone()
            .into_iter()
            .collect();
        let required: Vec<&str> = params["required"]
            .as_array()
            .map(|r| r.iter().map(|v| v.as_str().unwrap()).collect())
            .unwrap_or_default();
        // A field that stands for another ("Instead of search_block, …"):
        // the call gives exactly one of the two; the full sample the other.
        let instead = props.iter().find_map(|(field, schema)| {
            let rest = schema["description"]
                .as_str()?
                .strip_prefix("Instead of ")?;
            let other = rest.split([',', ':', ' ']).next()?;
            Some((field.clone(), other.to_owned()))
        });
        // Distinct samples so a no-op edit is not what is being tested.
        let full: serde_json::Map<String, Value> = props
            .iter()
            .filter(|(k, _)| instead.as_ref().is_none_or(|(alt, _)| alt != *k))
            .map(|(k, s)| {
                let v = if k == "replace_block" {
                    json!("b")
                } else {
                    sample(s)
                };
                (k.clone(), v)
            })
            .collect();
        validate(name, &Value::Object(full.clone()).to_string())
            .unwrap_or_else(|e| panic!("{name} refuses its own full sample: {e}"));
        for (field, schema) in &props {
            let mut without = full.clone();
            without.remove(field);
            if let Some((alt, other)) = instead
                .as_ref()
                .filter(|(alt, other)| field == alt || field == other)
            {
                alternatives(name, &full, (alt, other), &props[alt]);
            } else if let Some(partner) = partner(&props, field) {
                validate(name, &Value::Object(without.clone()).to_string())
                    .expect_err(&format!("{name}.{field} is taken without {partner}"));
                without.remove(&partner);
                validate(name, &Value::Object(without).to_string()).unwrap_or_else(|e| {
                    panic!("{name}.{field} and {partner} are not optional together: {e}")
                });
            } else {
                let outcome = validate(name, &Value::Object(without).to_string());
                optional_or_required(name, field, schema, &required, outcome);
            }
            let mut wrong = full.clone();
            wrong.insert(field.clone(), json!({"wrong": "type"}));
            let v = json_of(validate(name, &Value::Object(wrong).to_string()).unwrap_err());
            assert_eq!(v["code"], "invalid_argument");
            assert_eq!(v["field"], json!(field), "{name}.{field}");
            assert_eq!(v["received"], "object");
        }
        let mut extra = full.clone();
        extra.insert("undeclared".into(), json!(1));
        let v = json_of(validate(name, &Value::Object(extra).to_string()).unwrap_err());
        assert_eq!(v["field"], "undeclared", "{name}");
    }
    assert_eq!(
        hidden,
        [
            "write_file.replace_whole_file",
            "edit_file.insert_at",
            "execute_command.sandbox",
            "execute_command.reason"
        ]
    );
}

/// Two fields that stand for each other: either one is taken, both are
/// refused (naming the one that says it is instead of the other), and
/// neither is refused as the other missing.
fn alternatives(
    name: &str,
    full: &serde_json::Map<String, Value>,
    (alt, other): (&str, &str),
    alt_schema: &Value,
) {
    let mut swapped = full.clone();
    swapped.remove(other);
    swapped.insert(alt.to_owned(), sample(alt_schema));
    validate(name, &Value::Object(swapped.clone()).to_string())
        .unwrap_or_else(|e| panic!("{name}.{alt} is refused instead of {other}: {e}"));
    let mut both = swapped.clone();
    both.insert(other.to_owned(), full[other].clone());
    let v = json_of(validate(name, &Value::Object(both).to_string()).unwrap_err());
    assert_eq!(v["field"], alt, "{name}: {alt} and {other} together");
    swapped.remove(alt);
    let v = json_of(validate(name, &Value::Object(swapped).to_string()).unwrap_err());
    assert_eq!(
        (v["field"].as_str(), v["received"].as_str()),
        (Some(other), Some("missing")),
        "{name} without {alt} or {other}"
    );
}

/// `outcome`, of a call without `field`, is what the schema says: a
/// required field is named missing; an optional one is taken, and states
/// its default or what leaving it out means.
fn optional_or_required(
    name: &str,
    field: &str,
    schema: &Value,
    required: &[&str],
    outcome: Result<ToolCall, ToolFailure>,
) {
    if required.contains(&field) {
        let v = json_of(outcome.unwrap_err());
        assert_eq!(
            (v["field"].as_str(), v["received"].as_str()),
            (Some(field), Some("missing"))
        );
        return;
    }
    // An optional field states its default, or — where the default is
    // configured, not fixed — what leaving it out means.
    let says_what_absence_means = schema["description"]
        .as_str()
        .is_some_and(|d| d.contains("leave it out"));
    assert!(
        schema.get("default").is_some() || says_what_absence_means,
        "{name}.{field} is optional without a default"
    );
    outcome
        .unwrap_or_else(|e| panic!("{name}.{field} is optional in the schema but required: {e}"));
}

#[test]
fn the_schema_defaults_are_the_runtime_defaults() {
    let defs = Registry::builtin().definitions();
    let read = &defs[0]["function"]["parameters"]["properties"];
    let ToolCall::ReadFile(ReadFile { offset, limit, .. }) =
        validate("read_file", r#"{"path":"a"}"#).unwrap()
    else {
        panic!("not a read");
    };
    assert_eq!(json!(offset), read["offset"]["default"]);
    assert_eq!(json!(limit), read["limit"]["default"]);
    let list = &defs[4]["function"]["parameters"]["properties"];
    assert_eq!(list["path"]["default"], ".");
    let glob = &defs[5]["function"]["parameters"]["properties"];
    let ToolCall::Glob(Glob {
        path, max_results, ..
    }) = validate("glob", r#"{"pattern":"*"}"#).unwrap()
    else {
        panic!("not a glob");
    };
    assert_eq!(json!(path), glob["path"]["default"]);
    assert_eq!(json!(max_results), glob["max_results"]["default"]);
    let grep = &defs[6]["function"]["parameters"]["properties"];
    let ToolCall::Grep(Grep {
        path,
        include,
        ignore_case,
        max_results,
        ..
    }) = validate("grep", r#"{"pattern":"x"}"#).unwrap()
    else {
        panic!("not a grep");
    };
    assert_eq!(json!(path), grep["path"]["default"]);
    assert_eq!(json!(include), grep["include"]["default"]);
    assert_eq!(json!(ignore_case), grep["ignore_case"]["default"]);
    assert_eq!(json!(max_results), grep["max_results"]["default"]);
}

fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.is_dir() {
            for (k, v) in snapshot(&path) {
                out.insert(format!("{}/{k}", entry.file_name().to_string_lossy()), v);
            }
            out.insert(
                format!("{}/", entry.file_name().to_string_lossy()),
                Vec::new(),
            );
        } else {
            out.insert(
                entry.file_name().to_string_lossy().into_owned(),
                std::fs::read(&path).unwrap(),
            );
        }
    }
    out
}

#[tokio::test]
async fn invalid_mutations_never_touch_the_disk_and_a_corrected_call_does() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let before = snapshot(dir.path());
    let bad = [
        ("write_file", r#"{"path":"new/b.txt","content":7}"#),
        (
            "write_file",
            r#"{"path":"new/b.txt","content":"x","mode":"0777"}"#,
        ),
        ("write_file", r#"{"path":"new/b.txt""#),
        (
            "edit_file",
            r#"{"path":"a.txt","search_block":"one","replace_block":"one"}"#,
        ),
        (
            "edit_file",
            r#"{"path":"a.txt","search_block":"","replace_block":"x"}"#,
        ),
        ("execute_command", r#"{"command":"touch evil","cwd":5}"#),
        ("execute_command", r#"{"command":"touch evil","timeout":1}"#),
        ("remove_file", r#"{"path":"a.txt"}"#),
    ];
    for (name, args) in bad {
        assert!(validate(name, args).is_err(), "{name} {args}");
    }
    assert_eq!(snapshot(dir.path()), before);
    // The model corrects itself on the next step and the call goes through.
    let call = validate("write_file", r#"{"path":"new/b.txt","content":"x"}"#).unwrap();
    let result = execute(&call, &ctx, CancellationToken::new()).await;
    assert!(result.outcome.is_ok(), "{result:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("new/b.txt")).unwrap(),
        "x"
    );
}

#[tokio::test]
async fn a_path_denial_is_a_result_with_its_own_code() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    let call = validate("read_file", r#"{"path":"../../etc/passwd"}"#).unwrap();
    assert_eq!(
        serde_json::to_value(execute(&call, &ctx, CancellationToken::new()).await).unwrap(),
        json!({"ok": false, "error": "path escapes the working directory: ../../etc/passwd", "code": "path_denied", "tool": "read_file"})
    );
}
