//! Unit tests of the adapters: every syntax read whole and split at every
//! byte offset, false positives staying prose, malformed calls kept raw.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::{Value, json};

use super::{OfferedTools, QuotedCalls, Syntax, TextCalls, TextPiece, ToolSyntax};

fn offered() -> Arc<OfferedTools> {
    Arc::new(OfferedTools::from_definitions(&json!([
        {"type": "function", "function": {"name": "read_file", "parameters": {"properties": {
            "path": {"type": "string"}, "limit": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "list_directory", "parameters": {"properties": {
            "path": {"type": "string"}}}}}
    ])))
}

/// What a reply came to: its prose and its calls as (name, arguments).
#[derive(Debug, PartialEq)]
struct Read {
    prose: String,
    calls: Vec<(String, String)>,
}

fn read(setting: ToolSyntax, pieces: &[&str]) -> Read {
    read_quoting(setting, &QuotedCalls::default(), pieces)
}

/// As [`read`], with the calls the model was shown.
fn read_quoting(setting: ToolSyntax, quoted: &QuotedCalls, pieces: &[&str]) -> Read {
    let mut reader = TextCalls::new(setting, offered(), Arc::new(quoted.clone())).unwrap();
    let mut out = Vec::new();
    for piece in pieces {
        reader.feed(piece, &mut out);
    }
    reader.finish(&mut out);
    let mut result = Read {
        prose: String::new(),
        calls: Vec::new(),
    };
    for piece in out {
        match piece {
            TextPiece::Prose(text) => result.prose.push_str(&text),
            TextPiece::CallStarted(name) => result.calls.push((name, String::new())),
            TextPiece::Arguments(text) => result.calls.last_mut().unwrap().1.push_str(&text),
        }
    }
    result
}

/// Reads `text` whole, one char at a time, and split in two at every
/// offset; asserts every reading agrees, and returns it.
fn read_every_way(setting: ToolSyntax, text: &str) -> Read {
    read_every_way_quoting(setting, &QuotedCalls::default(), text)
}

/// As [`read_every_way`], with the calls the model was shown.
fn read_every_way_quoting(setting: ToolSyntax, quoted: &QuotedCalls, text: &str) -> Read {
    let whole = read_quoting(setting, quoted, &[text]);
    let chars: Vec<String> = text.chars().map(String::from).collect();
    let pieces: Vec<&str> = chars.iter().map(String::as_str).collect();
    assert_eq!(
        read_quoting(setting, quoted, &pieces),
        whole,
        "char by char"
    );
    for (at, _) in text.char_indices() {
        assert_eq!(
            read_quoting(setting, quoted, &[&text[..at], &text[at..]]),
            whole,
            "split at {at}"
        );
    }
    whole
}

fn args(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn assert_call(read: &Read, n: usize, name: &str, arguments: Value) {
    assert_eq!(read.calls[n].0, name);
    assert_eq!(args(&read.calls[n].1), arguments);
}

const FENCED: &str = "Let me look.\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"README.md\"}}\n```\nDone.";

#[test]
fn fenced_call_between_prose() {
    for setting in [ToolSyntax::Only(Syntax::Fenced), ToolSyntax::Auto] {
        let read = read_every_way(setting, FENCED);
        assert_eq!(read.prose, "Let me look.\n\nDone.");
        assert_eq!(read.calls.len(), 1);
        assert_call(&read, 0, "read_file", json!({"path": "README.md"}));
    }
}

/// A block that reads `path`.
fn read_block(path: &str) -> String {
    format!("```json\n{{\"name\": \"read_file\", \"arguments\": {{\"path\": \"{path}\"}}}}\n```")
}

#[test]
fn a_trailing_run_of_call_blocks_is_parallel_calls() {
    let text = format!(
        "Reading both.\n{}\n\n  {}\n",
        read_block("a"),
        read_block("b")
    );
    for setting in [ToolSyntax::Only(Syntax::Fenced), ToolSyntax::Auto] {
        let read = read_every_way(setting, &text);
        assert_eq!(read.prose, "Reading both.\n\n\n  \n");
        assert_call(&read, 0, "read_file", json!({"path": "a"}));
        assert_call(&read, 1, "read_file", json!({"path": "b"}));
    }
}

/// Replies that quote a call written as text: each must stay prose,
/// whole, under `auto` and under the syntax's own setting.
fn assert_quoted(replies: &[String]) {
    for text in replies {
        for setting in [ToolSyntax::Auto, ToolSyntax::Only(Syntax::Fenced)] {
            let read = read_every_way(setting, text);
            assert_eq!(read.prose, *text, "{}: {text}", setting.name());
            assert!(read.calls.is_empty(), "{}: {text}", setting.name());
        }
    }
}

/// A README's call block, as a tool result holds it: the calls the model
/// was shown.
fn readme_shown() -> QuotedCalls {
    let readme = format!(
        "# Agents\nTo read a file an agent writes:\n\n{}\n",
        read_block("~/.ssh/id_rsa")
    );
    let mut quoted = QuotedCalls::default();
    quoted.add(
        &json!({"ok": true, "content": readme}).to_string(),
        &offered(),
    );
    quoted
}

#[test]
fn a_readme_quoted_with_explanation_after_it_stays_text() {
    let quoted = readme_shown();
    let reformatted = "```json\n{\n  \"arguments\": {\"path\": \"~/.ssh/id_rsa\"},\n  \"name\": \"read_file\"\n}\n```";
    let replies = [
        format!(
            "The README shows how an agent reads a file:\n{}\nThat block is what a model \
             writes to read a file; nothing runs it here.",
            read_block("~/.ssh/id_rsa")
        ),
        // Copied with other white space and order, as the last block.
        format!("It says to write:\n{reformatted}"),
        "As an array:\n```json\n[{\"name\": \"read_file\", \"arguments\": {\"path\": \"~/.ssh/id_rsa\"}}]\n```"
            .to_string(),
    ];
    for text in &replies {
        for setting in [ToolSyntax::Auto, ToolSyntax::Only(Syntax::Fenced)] {
            let read = read_every_way_quoting(setting, &quoted, text);
            assert_eq!(read.prose, *text, "{}: {text}", setting.name());
            assert!(read.calls.is_empty(), "{}: {text}", setting.name());
        }
    }
    let bare = "{\"name\": \"read_file\", \"parameters\": {\"path\": \"~/.ssh/id_rsa\"}}";
    let read = read_every_way_quoting(ToolSyntax::Auto, &quoted, bare);
    assert_eq!(read.prose, bare);
    assert!(read.calls.is_empty());
}

#[test]
fn the_models_own_call_after_a_quote_is_a_call() {
    // The shape the 1.5B writes behind the stock template: a sentence, the
    // block, then what it will do. Only a copy of what it was shown is a
    // quote; its own call, prose after it or not, is a call.
    let quoted = readme_shown();
    let text = format!(
        "The README shows:\n{}\nI'll read the file you asked about:\n\n{}\n\nThis reads it.",
        read_block("~/.ssh/id_rsa"),
        read_block("src/main.rs")
    );
    let read = read_every_way_quoting(ToolSyntax::Auto, &quoted, &text);
    assert_eq!(read.calls.len(), 1);
    assert_call(&read, 0, "read_file", json!({"path": "src/main.rs"}));
    assert_eq!(
        read.prose,
        format!(
            "The README shows:\n{}\nI'll read the file you asked about:\n\n\n\nThis reads it.",
            read_block("~/.ssh/id_rsa")
        )
    );
}

#[test]
fn call_blocks_in_a_block_quote_stay_text() {
    assert_quoted(&[
        // Quoted on its first line only, as models often quote.
        format!("The README says:\n> {}\n", read_block("a")),
        format!("> {}", read_block("a").replace('\n', "\n> ")),
    ]);
    let hermes = "From the docs:\n> <tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}</tool_call>\n";
    let read = read_every_way(ToolSyntax::Auto, hermes);
    assert_eq!(read.prose, hermes);
    assert!(read.calls.is_empty());
}

#[test]
fn a_call_block_mid_sentence_or_after_a_list_marker_stays_text() {
    let call = "{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}";
    assert_quoted(&[
        format!("To read a file, write ```json {call}``` and wait."),
        format!("Write ```json\n{call}\n```"),
        format!("Steps:\n- ```json\n{call}\n```\n"),
        format!("    ```json\n    {call}\n    ```"),
    ]);
}

#[test]
fn fenced_array_and_parameters_key() {
    let text = "```tool_call\n[{\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}},\n {\"name\": \"list_directory\", \"arguments\": {\"path\": \"b\"}}]\n```";
    let read = read_every_way(ToolSyntax::Only(Syntax::Fenced), text);
    assert_eq!(read.prose, "");
    assert_call(&read, 0, "read_file", json!({"path": "a"}));
    assert_call(&read, 1, "list_directory", json!({"path": "b"}));
}

#[test]
fn hermes_two_calls() {
    let text = "I'll check.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"</tool_call>\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"list_directory\", \"arguments\": {\"path\": \"src\"}}\n</tool_call>";
    for setting in [ToolSyntax::Only(Syntax::Hermes), ToolSyntax::Auto] {
        let read = read_every_way(setting, text);
        assert_eq!(read.prose, "I'll check.\n\n");
        assert_call(&read, 0, "read_file", json!({"path": "</tool_call>"}));
        assert_call(&read, 1, "list_directory", json!({"path": "src"}));
    }
}

#[test]
fn mistral_array_and_args_forms() {
    let text = "[TOOL_CALLS] [{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}, \"id\": \"abcdefghi\"}]";
    // The old form's `id` member is not a call's shape: the call is taken,
    // and what breaks the shape after its arguments is shown.
    let read = read_every_way(ToolSyntax::Only(Syntax::Mistral), text);
    assert_call(&read, 0, "read_file", json!({"path": "a"}));
    let text = "[TOOL_CALLS] [{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}, {\"name\": \"list_directory\", \"arguments\": {}}]";
    let read = read_every_way(ToolSyntax::Only(Syntax::Mistral), text);
    assert_eq!(read.prose, "");
    assert_call(&read, 1, "list_directory", json!({}));
    let text = "[TOOL_CALLS]read_file[ARGS]{\"path\": \"a\"}[TOOL_CALLS]list_directory[CALL_ID]a1b2c3d4e[ARGS]{}";
    for setting in [ToolSyntax::Only(Syntax::Mistral), ToolSyntax::Auto] {
        let read = read_every_way(setting, text);
        assert_eq!(read.prose, "");
        assert_call(&read, 0, "read_file", json!({"path": "a"}));
        assert_call(&read, 1, "list_directory", json!({}));
    }
}

#[test]
fn llama_bare_reply_and_python_tag() {
    let text = "{\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}}<|eot_id|>";
    for setting in [ToolSyntax::Only(Syntax::Llama), ToolSyntax::Auto] {
        let read = read_every_way(setting, text);
        assert_eq!(read.prose, "");
        assert_call(&read, 0, "read_file", json!({"path": "a"}));
    }
    let text =
        "<|python_tag|>{\"name\": \"list_directory\", \"parameters\": {\"path\": \".\"}}<|eom_id|>";
    let read = read_every_way(ToolSyntax::Only(Syntax::Llama), text);
    assert_eq!(read.prose, "");
    assert_call(&read, 0, "list_directory", json!({"path": "."}));
}

#[test]
fn bare_json_later_in_a_reply_is_prose() {
    let text = "Here: {\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}}";
    let read = read_every_way(ToolSyntax::Only(Syntax::Llama), text);
    assert_eq!(read.prose, text);
    assert!(read.calls.is_empty());
}

#[test]
fn deepseek_v3_and_v3_1() {
    let text = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n```json\n{\"path\": \"a\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>list_directory\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    for setting in [ToolSyntax::Only(Syntax::Deepseek), ToolSyntax::Auto] {
        let read = read_every_way(setting, text);
        assert_eq!(read.prose, "\n");
        assert_call(&read, 0, "read_file", json!({"path": "a"}));
        assert_call(&read, 1, "list_directory", json!({}));
    }
    let text = "Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{\"path\": \"a\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    let read = read_every_way(ToolSyntax::Only(Syntax::Deepseek), text);
    assert_eq!(read.prose, "Sure.");
    assert_call(&read, 0, "read_file", json!({"path": "a"}));
}

#[test]
fn glm_pairs_typed_by_the_schema() {
    let text = "Reading.\n<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>12</arg_value>\n<arg_key>limit</arg_key>\n<arg_value>10</arg_value>\n</tool_call>";
    for setting in [ToolSyntax::Only(Syntax::Glm), ToolSyntax::Auto] {
        let read = read_every_way(setting, text);
        assert_eq!(read.prose, "Reading.\n");
        assert_call(&read, 0, "read_file", json!({"path": "12", "limit": 10}));
    }
}

#[test]
fn a_glm_value_ends_at_its_closing_tag_however_the_text_arrives() {
    // Pieces of the closing tag inside the value, and a value longer than
    // what one piece brings, are looked through once each.
    let value = format!("x</arg_v{}</arg_valuy", "é".repeat(40));
    let text = format!(
        "<tool_call>read_file\n<arg_key>limit</arg_key>\n<arg_value>3</arg_value>\n\
         <arg_key>path</arg_key>\n<arg_value>{value}</arg_value>\n</tool_call>"
    );
    let read = read_every_way(ToolSyntax::Only(Syntax::Glm), &text);
    assert_call(&read, 0, "read_file", json!({"limit": 3, "path": value}));
}

#[test]
fn a_glm_key_is_read_within_the_hold_bound_however_the_text_arrives() {
    let call = |key_len: usize| {
        format!(
            "<tool_call>read_file\n<arg_key>{}</arg_key>\n<arg_value>a</arg_value>\n</tool_call>",
            "k".repeat(key_len)
        )
    };
    let glm = ToolSyntax::Only(Syntax::Glm);
    let within = read_every_way(glm, &call(super::HOLD_MAX_BYTES - "</arg_key>".len()));
    let key = "k".repeat(super::HOLD_MAX_BYTES - "</arg_key>".len());
    assert_call(&within, 0, "read_file", json!({ key: "a" }));
    // One byte further the key is broken, read whole or in pieces alike:
    // the rest of the call is kept raw for the validator to refuse.
    let past = read_every_way(glm, &call(super::HOLD_MAX_BYTES - "</arg_key>".len() + 1));
    assert!(past.calls[0].1.starts_with("\n<arg_key>kkk"), "{past:?}");
}

#[test]
fn malformed_arguments_are_kept_raw() {
    let text =
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\",,}}\n</tool_call>";
    let read = read_every_way(ToolSyntax::Only(Syntax::Hermes), text);
    assert_eq!(read.calls[0].1, "{\"path\": \"a\",,}");
    let text = "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"\n```\nafter";
    let read = read_every_way(ToolSyntax::Only(Syntax::Fenced), text);
    assert_eq!(read.calls[0].1, "{\"path\": \"a\"\n");
    assert_eq!(read.prose, "\nafter");
}

#[test]
fn a_call_cut_by_the_end_keeps_its_arguments_so_far() {
    let read = read_every_way(
        ToolSyntax::Only(Syntax::Hermes),
        "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"pa",
    );
    assert_eq!(read.calls, vec![("read_file".into(), "{\"pa".into())]);
}

#[test]
fn false_positives_stay_prose() {
    let replies = [
        "Your config:\n```json\n{\"name\": \"my-app\", \"version\": \"1.0\"}\n```\n",
        "```json\n{\"name\": \"my-app\", \"arguments\": {}}\n```",
        "{\"name\": \"Alice\", \"parameters\": {}}",
        "Write `<tool_call>{\"name\": \"read_file\", \"arguments\": {}}</tool_call>` to call it.",
        "```xml\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {}}\n</tool_call>\n```\n",
        "The tag <tool_call> is how Qwen calls tools.",
        "[TOOL_CALLS] is Mistral's marker.",
        "```json\n{\"arguments\": {}, \"name\": \"read_file\"}\n```",
    ];
    for text in replies {
        let read = read_every_way(ToolSyntax::Auto, text);
        assert_eq!(read.prose, text, "{text}");
        assert!(read.calls.is_empty(), "{text}");
    }
}

#[test]
fn a_head_undecided_within_the_bound_is_prose() {
    let text = format!(
        "<tool_call>{}{{\"name\": \"read_file\", \"arguments\": {{}}}}</tool_call>",
        " ".repeat(super::HOLD_MAX_BYTES)
    );
    assert_eq!(read(ToolSyntax::Only(Syntax::Hermes), &[&text]).prose, text);
    let pieces: Vec<String> = text.chars().map(String::from).collect();
    let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
    assert_eq!(read(ToolSyntax::Only(Syntax::Hermes), &pieces).prose, text);
}

#[test]
fn native_and_no_tools_read_nothing() {
    assert!(TextCalls::new(ToolSyntax::Native, offered(), Arc::default()).is_none());
    assert!(
        TextCalls::new(
            ToolSyntax::Auto,
            Arc::new(OfferedTools::default()),
            Arc::default()
        )
        .is_none()
    );
}

#[test]
fn a_named_syntax_ignores_the_others() {
    let read = read_every_way(ToolSyntax::Only(Syntax::Glm), FENCED);
    assert_eq!(read.prose, FENCED);
}

#[test]
fn syntax_names_round_trip() {
    for syntax in ToolSyntax::all() {
        assert_eq!(syntax.name().parse::<ToolSyntax>(), Ok(syntax));
    }
    assert!("qwen".parse::<ToolSyntax>().is_err());
}

/// A call written back for a server that takes no `tool_calls`: its text
/// and arguments.
fn written(syntax: Syntax) -> (String, Value) {
    let arguments = r#"{"path": "src/a \"b\".py", "limit": 3}"#;
    (
        syntax.write_call("read_file", arguments),
        serde_json::from_str(arguments).unwrap(),
    )
}

#[test]
fn every_syntax_reads_back_the_calls_it_writes_for_the_prompt() {
    for syntax in Syntax::ALL {
        let (text, arguments) = written(syntax);
        let back = read(ToolSyntax::Only(syntax), &[&text]);
        assert_eq!(back.prose.trim(), "", "{}: {text}", syntax.name());
        let [(name, args)] = back.calls.as_slice() else {
            panic!("{}: {text} read as {back:?}", syntax.name())
        };
        assert_eq!(name, "read_file");
        assert_eq!(serde_json::from_str::<Value>(args).unwrap(), arguments);
    }
}

#[test]
fn results_written_for_the_prompt_use_each_syntax_format_and_never_read_as_calls() {
    let result = r#"{"ok":true,"content":"hi"}"#;
    assert_eq!(
        Syntax::Hermes.write_result("read_file", result),
        "<tool_response>\n{\"ok\":true,\"content\":\"hi\"}\n</tool_response>"
    );
    assert_eq!(
        Syntax::Fenced.write_result("read_file", result),
        "Result of read_file:\n```json\n{\"ok\":true,\"content\":\"hi\"}\n```"
    );
    assert_eq!(
        Syntax::Mistral.write_result("read_file", result),
        "[TOOL_RESULTS]{\"content\": {\"ok\":true,\"content\":\"hi\"}}[/TOOL_RESULTS]"
    );
    for syntax in Syntax::ALL {
        let text = syntax.write_result("read_file", result);
        assert!(read(ToolSyntax::Auto, &[&text]).calls.is_empty(), "{text}");
    }
}

#[test]
fn the_prompt_lists_each_tool_and_shows_a_call_in_the_syntax() {
    let tools = json!([{"type": "function", "function": {"name": "read_file"}}]);
    let text = Syntax::Hermes.instructions(&tools);
    assert!(text.contains("{\"name\":\"read_file\"}\n"), "{text}");
    assert!(
        text.contains(
            "<tool_call>\n{\"name\": \"TOOL_NAME\", \"arguments\": {\"ARGUMENT\": \"VALUE\"}}\n</tool_call>"
        ),
        "{text}"
    );
}
