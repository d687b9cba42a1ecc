//! The tool-call accumulator (ADR 0007 §1–2): streamed `delta.tool_calls`
//! fragments in, whole calls out. One behaviour per test.

use dashfloat::bounds::REPLY_MAX_BYTES;
use dashfloat::bounds::{MADE_UP_ID_LEN, MAX_TOOL_CALLS};
use dashfloat::llm::tool_calls::{
    AccumulatorError, AssembledCall, CallError, MadeUpIds, ToolCallAccumulator,
};
use dashfloat::llm::wire::{ChatChunk, WireFunctionDelta, WireToolCallDelta};
use serde_json::{Map, Value, json};

use crate::support::random::Rng;

// ---------------------------------------------------------------- helpers

/// A fragment as a server sends it; `type` accompanies the id, as in
/// llama-server's and OpenAI's first fragments.
fn frag(index: Option<u32>, id: Option<&str>, name: Option<&str>, args: &str) -> WireToolCallDelta {
    WireToolCallDelta {
        index,
        id: id.map(str::to_owned),
        kind: id.map(|_| "function".to_owned()),
        function: Some(WireFunctionDelta {
            name: name.map(str::to_owned),
            arguments: Some(args.to_owned()),
        }),
    }
}

/// A continuation fragment: index and an arguments piece only.
fn args(index: u32, piece: &str) -> WireToolCallDelta {
    frag(Some(index), None, None, piece)
}

/// Feeds each fragment as its own chunk; returns the sum of the counts.
fn feed_each(acc: &mut ToolCallAccumulator, fragments: &[WireToolCallDelta]) -> usize {
    fragments
        .iter()
        .map(|f| acc.feed(std::slice::from_ref(f)).unwrap())
        .sum()
}

fn assemble(fragments: &[WireToolCallDelta]) -> Vec<AssembledCall> {
    let mut acc = ToolCallAccumulator::new();
    feed_each(&mut acc, fragments);
    acc.finish()
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn parsed(call: &AssembledCall) -> &Map<String, Value> {
    call.parsed
        .as_ref()
        .unwrap_or_else(|e| panic!("call {} failed: {e}", call.id))
}

/// The id made up for the call at `position` of a conversation's first
/// episode.
fn made(position: usize) -> String {
    MadeUpIds::calls(0).nth(position)
}

fn ids(calls: &[AssembledCall]) -> Vec<&str> {
    calls.iter().map(|c| c.id.as_str()).collect()
}

/// The tool calls of each `data:` frame of an SSE transcript, parsed with
/// the crate's wire structs.
fn sse_tool_calls(transcript: &str) -> Vec<Vec<WireToolCallDelta>> {
    transcript
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| {
            let chunk: ChatChunk = serde_json::from_str(data).unwrap();
            chunk
                .choices
                .into_iter()
                .next()
                .map(|c| c.delta.tool_calls)
                .unwrap_or_default()
        })
        .collect()
}

/// Arguments text with multi-byte characters and every kind of JSON escape:
/// `\u00e9`, a surrogate pair for 🦀, `\"`, `\\`, `\n`, `\/`.
const TRICKY_ARGS: &str =
    r#"{"path": "café/naïve \u00e9 \"q\" \\ 日本語 🦀 \ud83e\udd80\n\/x.txt", "note": "Ω≈ç√"}"#;

/// Splits `text` at the given byte offsets (char boundaries).
fn split_at(text: &str, cuts: &[usize]) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut from = 0;
    for &cut in cuts {
        pieces.push(text[from..cut].to_owned());
        from = cut;
    }
    pieces.push(text[from..].to_owned());
    pieces
}

// ------------------------------------------------------------ the merging

#[test]
fn interleaved_indices_assemble_two_separate_calls() {
    let calls = assemble(&[
        frag(Some(0), Some("a"), Some("read_file"), ""),
        frag(Some(1), Some("b"), Some("list_directory"), ""),
        args(0, r#"{"path""#),
        args(1, r#"{"path""#),
        args(0, r#": "src/main.rs"}"#),
        args(1, r#": "src"}"#),
    ]);
    assert_eq!(ids(&calls), ["a", "b"]);
    assert_eq!(calls[0].name, "read_file");
    assert_eq!(parsed(&calls[0]), &object(json!({"path": "src/main.rs"})));
    assert_eq!(calls[1].name, "list_directory");
    assert_eq!(parsed(&calls[1]), &object(json!({"path": "src"})));
}

#[test]
fn id_sent_only_on_the_first_fragment_stays_with_the_call() {
    let calls = assemble(&[
        frag(
            Some(0),
            Some("Xk2mP9qLr4TzW8vNb3YcJ6hF1sD5gA7e"),
            Some("read_file"),
            "",
        ),
        args(0, "{\n"),
        args(0, "  \"path\": \"README.md\"\n"),
        args(0, "}"),
    ]);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "Xk2mP9qLr4TzW8vNb3YcJ6hF1sD5gA7e");
    assert_eq!(parsed(&calls[0]), &object(json!({"path": "README.md"})));
}

#[test]
fn calls_without_ids_get_distinct_synthesised_ids_by_order_of_appearance() {
    let whole = assemble(&[
        frag(Some(0), None, Some("read_file"), r#"{"path":"a"}"#),
        frag(Some(1), None, Some("read_file"), r#"{"path":"b"}"#),
    ]);
    let fragmented = assemble(&[
        frag(Some(0), None, Some("read_file"), ""),
        frag(Some(1), None, Some("read_file"), r#"{"pa"#),
        args(0, r#"{"path":"a"}"#),
        args(1, r#"th":"b"}"#),
    ]);
    assert_eq!(ids(&whole), [made(0), made(1)]);
    assert_eq!(
        whole, fragmented,
        "ids do not depend on how the stream was split"
    );
}

#[test]
fn made_up_ids_are_nine_letters_and_digits_of_the_episode_the_agent_gave() {
    let mut acc = ToolCallAccumulator::with_ids(MadeUpIds::calls(3));
    acc.feed(&[frag(Some(0), None, Some("list_directory"), "{}")])
        .unwrap();
    assert_eq!(ids(&acc.finish()), ["c00000300"]);
    assert_eq!(MadeUpIds::attached(36 * 36 + 35).nth(37), "a00010z11");
    for id in [
        MadeUpIds::calls(70_000).nth(63),
        MadeUpIds::attached(1).nth(7),
    ] {
        assert_eq!(id.len(), MADE_UP_ID_LEN);
        assert!(id.bytes().all(|b| b.is_ascii_alphanumeric()), "{id}");
    }
    // The episode is read back, so a resumed conversation makes up ids
    // past those it holds; not from a provider's own ids, nor from ids
    // renewed from the old form.
    assert_eq!(
        MadeUpIds::episode_of(&MadeUpIds::calls(70_000).nth(5)),
        Some(70_000)
    );
    assert_eq!(MadeUpIds::episode_of("a00000c07"), Some(12));
    for theirs in [
        "D681PevKs",
        "call_abc",
        "c0000010",
        "x00000100",
        "chatcmpl-tool-9f2",
    ] {
        assert_eq!(MadeUpIds::episode_of(theirs), None, "{theirs}");
    }
    assert_eq!(MadeUpIds::episode_of(&MadeUpIds::renewed(3)), None);
    // The old form is told apart from a provider's `call_…` ids, and
    // every renewed id is new and of the one form.
    assert!(MadeUpIds::is_old_form("call_12_at0") && MadeUpIds::is_old_form("call_4_1_1"));
    for theirs in ["call_abc123", "call_4", "call__1", "c00000100"] {
        assert!(!MadeUpIds::is_old_form(theirs), "{theirs}");
    }
    let renewed: std::collections::HashSet<String> = (0..3_000).map(MadeUpIds::renewed).collect();
    assert_eq!(renewed.len(), 3_000);
    assert!(renewed.iter().all(|id| id.len() == MADE_UP_ID_LEN));
}

#[test]
fn index_zero_reused_with_new_ids_starts_new_calls() {
    let calls = assemble(&[
        frag(Some(0), Some("first"), Some("read_file"), r#"{"path":"#),
        args(0, r#""a.txt"}"#),
        frag(Some(0), Some("second"), Some("read_file"), r#"{"path":"#),
        args(0, r#""b.txt"}"#),
        frag(Some(0), Some("third"), Some("list_directory"), "{}"),
    ]);
    assert_eq!(ids(&calls), ["first", "second", "third"]);
    assert_eq!(parsed(&calls[0]), &object(json!({"path": "a.txt"})));
    assert_eq!(parsed(&calls[1]), &object(json!({"path": "b.txt"})));
    assert_eq!(calls[2].name, "list_directory");
}

#[test]
fn a_known_id_routes_its_fragment_back_to_that_call() {
    // index 0 for all, the id on every fragment, interleaved: A B A B
    let calls = assemble(&[
        frag(Some(0), Some("A"), Some("read_file"), r#"{"path":"#),
        frag(Some(0), Some("B"), Some("read_file"), r#"{"path":"#),
        frag(Some(0), Some("A"), None, r#""a"}"#),
        frag(Some(0), Some("B"), None, r#""b"}"#),
    ]);
    assert_eq!(ids(&calls), ["A", "B"]);
    assert_eq!(parsed(&calls[0]), &object(json!({"path": "a"})));
    assert_eq!(parsed(&calls[1]), &object(json!({"path": "b"})));
}

#[test]
fn a_missing_index_continues_the_call_the_previous_fragment_went_to() {
    let calls = assemble(&[
        frag(None, Some("only"), Some("read_file"), ""),
        frag(None, None, None, r#"{"path":"#),
        frag(None, None, None, r#""x"}"#),
    ]);
    assert_eq!(ids(&calls), ["only"]);
    assert_eq!(parsed(&calls[0]), &object(json!({"path": "x"})));

    let after_index_one = assemble(&[
        frag(Some(0), Some("a"), Some("read_file"), r#"{"path":"a"}"#),
        frag(Some(1), Some("b"), Some("read_file"), r#"{"path":"#),
        frag(None, None, None, r#""b"}"#),
    ]);
    assert_eq!(parsed(&after_index_one[1]), &object(json!({"path": "b"})));
}

#[test]
fn a_different_name_without_an_id_starts_a_new_call() {
    // Whole calls per chunk with no index and an empty id, as some
    // compatibility layers send them.
    let mut acc = ToolCallAccumulator::new();
    let first = frag(None, Some(""), Some("read_file"), r#"{"path":"a"}"#);
    let second = frag(None, Some(""), Some("list_directory"), r#"{"path":"src"}"#);
    acc.feed(&[first, second]).unwrap();
    let calls = acc.finish();
    assert_eq!(
        ids(&calls),
        [made(0), made(1)],
        "an empty id counts as none"
    );
    assert_eq!(calls[0].name, "read_file");
    assert_eq!(parsed(&calls[0]), &object(json!({"path": "a"})));
    assert_eq!(calls[1].name, "list_directory");
    assert_eq!(parsed(&calls[1]), &object(json!({"path": "src"})));
}

#[test]
fn two_whole_calls_to_one_tool_without_ids_stay_two() {
    let calls = assemble(&[
        frag(None, None, Some("read_file"), r#"{"path":"a"}"#),
        frag(None, None, Some("read_file"), r#" {"path":"b"}"#),
    ]);
    assert_eq!(ids(&calls), [made(0), made(1)]);
    assert_eq!(parsed(&calls[0]), &object(json!({"path": "a"})));
    assert_eq!(parsed(&calls[1]), &object(json!({"path": "b"})));
    // The name sent again on a piece of arguments not yet whole, or with
    // a piece that opens no object, stays in the call.
    let calls = assemble(&[
        frag(None, None, Some("read_file"), r#"{"path":{"#),
        frag(None, None, Some("read_file"), r#""x":1}"#),
        frag(None, None, Some("read_file"), "}"),
        frag(None, None, Some("read_file"), ""),
    ]);
    assert_eq!(calls.len(), 1);
    assert_eq!(parsed(&calls[0]), &object(json!({"path": {"x": 1}})));
}

#[test]
fn a_name_repeated_identically_is_ignored() {
    let calls = assemble(&[
        frag(Some(0), Some("a"), Some("read_file"), r#"{"path":"#),
        frag(Some(0), Some("a"), Some("read_file"), r#""x"}"#),
        frag(Some(0), None, Some("read_file"), ""),
    ]);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "read_file");
    assert_eq!(parsed(&calls[0]), &object(json!({"path": "x"})));
}

#[test]
fn a_conflicting_name_is_an_error_for_that_call_only() {
    let calls = assemble(&[
        frag(Some(0), Some("a"), Some("read_file"), r#"{"path":"#),
        frag(
            Some(1),
            Some("b"),
            Some("list_directory"),
            r#"{"path":"src"}"#,
        ),
        frag(Some(0), Some("a"), Some("write_file"), r#""x"}"#),
    ]);
    assert_eq!(ids(&calls), ["a", "b"]);
    assert_eq!(calls[0].name, "read_file", "the first name is kept");
    assert_eq!(
        calls[0].parsed,
        Err(CallError::ConflictingName {
            first: "read_file".into(),
            then: "write_file".into(),
        })
    );
    assert_eq!(parsed(&calls[1]), &object(json!({"path": "src"})));
}

#[test]
fn a_conflicting_type_is_an_error_for_that_call() {
    let mut odd = frag(Some(0), Some("a"), None, "");
    odd.kind = Some("retrieval".into());
    let calls = assemble(&[frag(Some(0), Some("a"), Some("read_file"), "{}"), odd]);
    assert_eq!(
        calls[0].parsed,
        Err(CallError::ConflictingType {
            first: "function".into(),
            then: "retrieval".into(),
        })
    );
}

#[test]
fn calls_come_out_in_order_of_first_appearance() {
    let calls = assemble(&[
        frag(Some(2), Some("c"), Some("read_file"), "{}"),
        frag(Some(0), Some("a"), Some("read_file"), "{}"),
        frag(Some(1), Some("b"), Some("read_file"), "{}"),
    ]);
    assert_eq!(ids(&calls), ["c", "a", "b"]);
}

#[test]
fn a_fragment_carrying_nothing_starts_no_call() {
    let mut acc = ToolCallAccumulator::new();
    let hollow = WireToolCallDelta {
        index: Some(0),
        kind: Some("function".into()),
        ..WireToolCallDelta::default()
    };
    assert_eq!(
        acc.feed(&[hollow, WireToolCallDelta::default()]).unwrap(),
        0
    );
    assert!(acc.is_empty());
    assert!(acc.finish().is_empty());
}

#[test]
fn announced_lists_named_calls_with_their_arguments_so_far() {
    let mut acc = ToolCallAccumulator::new();
    assert!(acc.is_empty());
    feed_each(
        &mut acc,
        &[
            frag(Some(0), Some("a"), Some("read_file"), r#"{"path": "RE"#),
            args(1, r#"{"orphan": "#),
            frag(Some(2), Some("c"), Some("execute_command"), ""),
        ],
    );
    assert!(!acc.is_empty());
    assert_eq!(acc.len(), 3);
    let announced: Vec<_> = acc
        .announced()
        .iter()
        .map(|c| (c.id.to_owned(), c.name.to_owned(), c.arguments.to_owned()))
        .collect();
    assert_eq!(
        announced,
        [
            ("a".into(), "read_file".into(), r#"{"path": "RE"#.into()),
            ("c".into(), "execute_command".into(), String::new()),
        ]
    );
}

// ----------------------------------------------------------- the arguments

#[test]
fn arguments_split_at_every_char_position_parse_identically() {
    let expected: Value = serde_json::from_str(TRICKY_ARGS).unwrap();
    assert_eq!(
        expected["path"],
        "café/naïve é \"q\" \\ 日本語 🦀 🦀\n/x.txt"
    );
    let boundaries: Vec<usize> = TRICKY_ARGS.char_indices().map(|(i, _)| i).collect();
    for &cut in &boundaries {
        let pieces = split_at(TRICKY_ARGS, &[cut]);
        let calls = assemble(&[
            frag(Some(0), Some("a"), Some("write_file"), &pieces[0]),
            args(0, &pieces[1]),
        ]);
        assert_eq!(calls[0].arguments, TRICKY_ARGS, "cut at {cut}");
        assert_eq!(
            calls[0].parsed,
            Ok(object(expected.clone())),
            "cut at {cut}"
        );
    }
}

#[test]
fn arguments_split_twice_inside_escapes_parse_identically() {
    let expected = object(serde_json::from_str(TRICKY_ARGS).unwrap());
    let boundaries: Vec<usize> = TRICKY_ARGS.char_indices().map(|(i, _)| i).collect();
    for (n, &first) in boundaries.iter().enumerate() {
        for &second in &boundaries[n..] {
            let pieces = split_at(TRICKY_ARGS, &[first, second]);
            let calls = assemble(&[
                frag(Some(0), Some("a"), Some("write_file"), ""),
                args(0, &pieces[0]),
                args(0, &pieces[1]),
                args(0, &pieces[2]),
            ]);
            assert_eq!(
                calls[0].parsed.as_ref(),
                Ok(&expected),
                "cuts {first}, {second}"
            );
        }
    }
}

#[test]
fn arguments_in_one_fragment_or_one_char_per_fragment_agree() {
    let mut fragments = vec![frag(Some(0), Some("a"), Some("write_file"), "")];
    fragments.extend(TRICKY_ARGS.chars().map(|c| args(0, &c.to_string())));
    let per_char = assemble(&fragments);
    let whole = assemble(&[frag(Some(0), Some("a"), Some("write_file"), TRICKY_ARGS)]);
    assert_eq!(per_char, whole);
    assert!(whole[0].parsed.is_ok());
}

#[test]
fn empty_arguments_read_as_an_empty_object() {
    for text in ["", "  \n"] {
        let calls = assemble(&[frag(Some(0), Some("a"), Some("list_directory"), text)]);
        assert_eq!(calls[0].parsed, Ok(Map::new()), "{text:?}");
        assert_eq!(calls[0].arguments, text, "the raw text is kept as streamed");
    }
}

#[test]
fn invalid_json_reports_serde_message_and_position() {
    let calls = assemble(&[
        frag(Some(0), Some("a"), Some("read_file"), "{\n  \"path\": "),
        args(0, "README.md\n}"),
    ]);
    let Err(CallError::InvalidJson {
        detail,
        line,
        column,
    }) = &calls[0].parsed
    else {
        panic!("expected InvalidJson, got {:?}", calls[0].parsed);
    };
    assert_eq!((*line, *column), (2, 11));
    assert_eq!(detail, "expected value at line 2 column 11");
    assert_eq!(
        calls[0].parsed.as_ref().unwrap_err().to_string(),
        "the arguments are not valid JSON: expected value at line 2 column 11"
    );
}

#[test]
fn arguments_cut_off_by_the_stream_are_invalid_json() {
    let calls = assemble(&[frag(
        Some(0),
        Some("a"),
        Some("read_file"),
        r#"{"path": "READ"#,
    )]);
    let Err(CallError::InvalidJson { detail, .. }) = &calls[0].parsed else {
        panic!("expected InvalidJson, got {:?}", calls[0].parsed);
    };
    assert!(detail.starts_with("EOF while parsing a string"), "{detail}");
}

#[test]
fn two_objects_run_together_are_invalid_json() {
    let calls = assemble(&[frag(
        Some(0),
        None,
        Some("read_file"),
        r#"{"path":"a"}{"path":"b"}"#,
    )]);
    let Err(CallError::InvalidJson { detail, .. }) = &calls[0].parsed else {
        panic!("expected InvalidJson, got {:?}", calls[0].parsed);
    };
    assert!(detail.starts_with("trailing characters"), "{detail}");
}

#[test]
fn json_that_is_not_an_object_is_named() {
    for (text, found) in [
        ("null", "null"),
        ("true", "a boolean"),
        ("42", "a number"),
        (r#""{\"path\":\"a\"}""#, "a string"),
        (r#"["a"]"#, "an array"),
    ] {
        let calls = assemble(&[frag(Some(0), Some("a"), Some("read_file"), text)]);
        assert_eq!(
            calls[0].parsed,
            Err(CallError::NotAnObject {
                found,
                value: serde_json::from_str(text).unwrap()
            }),
            "{text}"
        );
    }
    let calls = assemble(&[frag(Some(0), Some("a"), Some("read_file"), "[1]")]);
    assert_eq!(
        calls[0].parsed.as_ref().unwrap_err().to_string(),
        "the arguments are an array, not a JSON object"
    );
}

#[test]
fn a_call_that_never_got_a_name_is_an_error() {
    let calls = assemble(&[args(0, r#"{"path":"a"}"#)]);
    assert_eq!(ids(&calls), [made(0)]);
    assert_eq!(calls[0].name, "");
    assert_eq!(calls[0].parsed, Err(CallError::MissingName));
}

// ---------------------------------------------------------------- the wire

/// A tool call as llama-server streams it (`../shared/llm/README.md`): a
/// role chunk, the first fragment with a 32-character id, `type` and the
/// whole name, argument pieces with the model's own newlines, then
/// `finish_reason` in its own chunk, a usage chunk with `timings`, `[DONE]`.
const LLAMA_SERVER_STREAM: &str = r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"created":1732900000,"id":"chatcmpl-abc","model":"qwen2.5-coder-0.5b","system_fingerprint":"b4000","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"id":"Xk2mP9qLr4TzW8vNb3YcJ6hF1sD5gA7e","type":"function","function":{"name":"read_file","arguments":"{\""}}]}}],"created":1732900000,"id":"chatcmpl-abc","model":"qwen2.5-coder-0.5b","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"path"}}]}}],"created":1732900000,"id":"chatcmpl-abc","model":"qwen2.5-coder-0.5b","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\": \""}}]}}],"created":1732900000,"id":"chatcmpl-abc","model":"qwen2.5-coder-0.5b","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"README"}}]}}],"created":1732900000,"id":"chatcmpl-abc","model":"qwen2.5-coder-0.5b","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":".md\"\n}"}}]}}],"created":1732900000,"id":"chatcmpl-abc","model":"qwen2.5-coder-0.5b","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":"tool_calls","index":0,"delta":{}}],"created":1732900000,"id":"chatcmpl-abc","model":"qwen2.5-coder-0.5b","object":"chat.completion.chunk"}

data: {"choices":[],"created":1732900000,"id":"chatcmpl-abc","model":"qwen2.5-coder-0.5b","object":"chat.completion.chunk","usage":{"completion_tokens":14,"prompt_tokens":812,"total_tokens":826},"timings":{"prompt_n":812,"predicted_n":14}}

data: [DONE]

"#;

#[test]
fn llama_server_chunks_deserialise_into_one_call() {
    let mut acc = ToolCallAccumulator::new();
    for fragments in sse_tool_calls(LLAMA_SERVER_STREAM) {
        acc.feed(&fragments).unwrap();
    }
    let calls = acc.finish();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "Xk2mP9qLr4TzW8vNb3YcJ6hF1sD5gA7e");
    assert_eq!(calls[0].name, "read_file");
    assert_eq!(calls[0].arguments, "{\"path\": \"README.md\"\n}");
    assert_eq!(parsed(&calls[0]), &object(json!({"path": "README.md"})));
}

#[test]
fn a_wire_fragment_deserialises_field_by_field() {
    let text = r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"abc","type":"function","function":{"name":"read_file","arguments":"{\""}}]}}]}"#;
    let chunk: ChatChunk = serde_json::from_str(text).unwrap();
    assert_eq!(
        chunk.choices[0].delta.tool_calls,
        [WireToolCallDelta {
            index: Some(0),
            id: Some("abc".into()),
            kind: Some("function".into()),
            function: Some(WireFunctionDelta {
                name: Some("read_file".into()),
                arguments: Some("{\"".into()),
            }),
        }]
    );
}

#[test]
fn null_or_missing_tool_calls_deserialise_as_none() {
    for text in [
        r#"{"choices":[{"delta":{"content":"hi","tool_calls":null}}]}"#,
        r#"{"choices":[{"delta":{"content":"hi"}}]}"#,
    ] {
        let chunk: ChatChunk = serde_json::from_str(text).unwrap();
        assert!(chunk.choices[0].delta.tool_calls.is_empty(), "{text}");
    }
    let nulls = r#"{"choices":[{"delta":{"tool_calls":[{"index":null,"id":null,"type":null,"function":null}]}}]}"#;
    let chunk: ChatChunk = serde_json::from_str(nulls).unwrap();
    assert_eq!(
        chunk.choices[0].delta.tool_calls,
        [WireToolCallDelta::default()]
    );
}

#[test]
fn calls_count_whatever_the_finish_reason_or_without_one() {
    let stop = LLAMA_SERVER_STREAM.replace(
        r#""finish_reason":"tool_calls""#,
        r#""finish_reason":"stop""#,
    );
    let no_finish: String = LLAMA_SERVER_STREAM
        .split("\n\n")
        .filter(|event| !event.contains(r#""finish_reason":"tool_calls""#))
        .collect::<Vec<_>>()
        .join("\n\n");
    for transcript in [stop, no_finish] {
        let mut acc = ToolCallAccumulator::new();
        for fragments in sse_tool_calls(&transcript) {
            acc.feed(&fragments).unwrap();
        }
        let calls = acc.finish();
        assert_eq!(calls.len(), 1);
        assert_eq!(parsed(&calls[0]), &object(json!({"path": "README.md"})));
    }
}

// -------------------------------------------------------------- the bounds

#[test]
fn sixty_four_calls_are_accepted() {
    let mut acc = ToolCallAccumulator::new();
    for i in 0..MAX_TOOL_CALLS as u32 {
        acc.feed(&[frag(Some(i), None, Some("read_file"), "{}")])
            .unwrap();
    }
    assert_eq!(MAX_TOOL_CALLS, 64);
    assert_eq!(acc.finish().len(), 64);
}

#[test]
fn the_sixty_fifth_call_is_refused_and_the_first_sixty_four_stay_announced() {
    let mut acc = ToolCallAccumulator::new();
    for i in 0..64 {
        acc.feed(&[frag(Some(i), None, Some("read_file"), "{}")])
            .unwrap();
    }
    assert_eq!(
        acc.feed(&[frag(Some(64), None, Some("read_file"), "{}")]),
        Err(AccumulatorError::TooManyCalls { limit: 64 })
    );
    assert_eq!(acc.announced().len(), 64);
    // More fragments of an existing call are still no new call.
    assert!(acc.feed(&[args(3, " ")]).is_ok());
    // The index-0-with-new-ids shape is counted the same way.
    let mut reused = ToolCallAccumulator::new();
    let all: Vec<_> = (0..65)
        .map(|i| frag(Some(0), Some(&format!("id{i}")), Some("read_file"), "{}"))
        .collect();
    assert_eq!(
        reused.feed(&all),
        Err(AccumulatorError::TooManyCalls { limit: 64 })
    );
    assert_eq!(reused.len(), 64);
}

#[test]
fn one_call_in_a_thousand_fragments_is_one_call() {
    let mut acc = ToolCallAccumulator::new();
    acc.feed(&[frag(
        Some(0),
        Some("a"),
        Some("write_file"),
        r#"{"content":""#,
    )])
    .unwrap();
    for _ in 0..1000 {
        acc.feed(&[args(0, "x")]).unwrap();
    }
    acc.feed(&[args(0, r#""}"#)]).unwrap();
    let calls = acc.finish();
    assert_eq!(calls.len(), 1);
    assert_eq!(parsed(&calls[0])["content"].as_str().unwrap().len(), 1000);
}

#[test]
fn more_than_four_mib_of_arguments_is_reported_in_the_byte_counts() {
    let piece = "x".repeat(64 * 1024);
    let mut acc = ToolCallAccumulator::new();
    let mut total = acc
        .feed(&[frag(Some(0), Some("a"), Some("write_file"), "")])
        .unwrap();
    assert_eq!(total, "a".len() + "function".len() + "write_file".len());
    let header = total;
    for _ in 0..REPLY_MAX_BYTES / piece.len() {
        total += acc.feed(&[args(0, &piece)]).unwrap();
    }
    assert_eq!(total, header + REPLY_MAX_BYTES);
    total += acc.feed(&[args(0, "y")]).unwrap();
    assert_eq!(total - header, REPLY_MAX_BYTES + 1);
    assert!(total > REPLY_MAX_BYTES);
    assert_eq!(acc.bytes(), total);
}

#[test]
fn repeated_ids_and_names_count_on_every_fragment() {
    let mut acc = ToolCallAccumulator::new();
    let repeat = frag(Some(0), Some("id"), Some("read_file"), "{}");
    let per = "id".len() + "function".len() + "read_file".len() + 2;
    assert_eq!(
        acc.feed(&[repeat.clone(), repeat.clone()]).unwrap(),
        2 * per
    );
    assert_eq!(acc.feed(&[repeat]).unwrap(), per);
    assert_eq!(acc.bytes(), 3 * per);
}

// ---------------------------------------------------------- property-style

/// How a generated stream identifies its calls.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// Distinct indices; the id only on the first fragment (llama.cpp, vLLM).
    IdFirstOnly,
    /// Distinct indices; no ids at all.
    NoIds,
    /// Distinct indices; the id on every fragment.
    IdEveryFragment,
    /// Index 0 for every call; the id on every fragment.
    IndexZeroIdEveryFragment,
    /// Index 0 for every call; the id only on the first fragment, so calls
    /// cannot interleave.
    IndexZeroIdFirstOnly,
}

/// Random arguments text: an object with string values drawn from
/// multi-byte characters and JSON escapes, with llama-server-style
/// newlines and indentation sometimes.
fn random_arguments(rng: &mut Rng) -> String {
    const TOKENS: &[&str] = &[
        "a",
        "src/",
        ".rs",
        " ",
        "é",
        "日本",
        "🦀",
        "Ω",
        r"\u00e9",
        r"\ud83e\udd80",
        r#"\""#,
        r"\\",
        r"\n",
        r"\t",
        r"\/",
        r"\u0000",
    ];
    const KEYS: &[&str] = &["path", "content", "command", "search_block", "ünï"];
    let pretty = rng.chance(2);
    let mut text = String::from(if pretty { "{\n" } else { "{" });
    let fields = rng.below(4);
    for field in 0..fields {
        if field > 0 {
            text.push_str(if pretty { ",\n" } else { "," });
        }
        if pretty {
            text.push_str("  ");
        }
        text.push_str(&format!("\"{}{field}\": ", rng.pick(KEYS)));
        if rng.chance(5) {
            text.push_str(&rng.below(100_000).to_string());
        } else {
            text.push('"');
            for _ in 0..rng.below(12) {
                text.push_str(rng.pick::<&str>(TOKENS));
            }
            text.push('"');
        }
    }
    text.push_str(if pretty { "\n}" } else { "}" });
    text
}

/// Splits at random char boundaries into 1..=len+1 pieces (empty pieces
/// allowed: servers send `""`).
fn random_pieces(rng: &mut Rng, text: &str) -> Vec<String> {
    let boundaries: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let mut cuts: Vec<usize> = (0..rng.below(boundaries.len() + 1))
        .map(|_| rng.pick(&boundaries))
        .collect();
    cuts.sort_unstable();
    split_at(text, &cuts)
}

#[test]
fn random_splits_and_interleavings_assemble_the_same_calls() {
    const NAMES: &[&str] = &[
        "read_file",
        "write_file",
        "edit_file",
        "list_directory",
        "execute_command",
    ];
    let shapes = [
        Shape::IdFirstOnly,
        Shape::NoIds,
        Shape::IdEveryFragment,
        Shape::IndexZeroIdEveryFragment,
        Shape::IndexZeroIdFirstOnly,
    ];
    let mut rng = Rng(0xDA5F_10A7);
    for round in 0..1500 {
        let shape = shapes[round % shapes.len()];
        let count = 1 + rng.below(4);
        // Per call: (index, provider id, name, arguments, fragments).
        let mut streams: Vec<Vec<WireToolCallDelta>> = Vec::new();
        let mut wanted: Vec<(Option<String>, String, String)> = Vec::new();
        for n in 0..count {
            let name = rng.pick(NAMES);
            let text = random_arguments(&mut rng);
            let id = match shape {
                Shape::NoIds => None,
                _ => Some(format!("{:032x}", rng.next())),
            };
            let index = match shape {
                Shape::IndexZeroIdEveryFragment | Shape::IndexZeroIdFirstOnly => 0,
                _ => n as u32,
            };
            let every = matches!(
                shape,
                Shape::IdEveryFragment | Shape::IndexZeroIdEveryFragment
            );
            let pieces = random_pieces(&mut rng, &text);
            let fragments = pieces
                .iter()
                .enumerate()
                .map(|(k, piece)| {
                    let first = k == 0;
                    let id = id.as_deref().filter(|_| first || every);
                    let name = Some(name).filter(|_| first || rng.chance(4));
                    frag(Some(index), id, name, piece)
                })
                .collect();
            streams.push(fragments);
            wanted.push((id, name.to_owned(), text));
        }

        // Interleave, keeping each call's own order; record first appearance.
        let interleave = !matches!(shape, Shape::IndexZeroIdFirstOnly);
        let mut cursors = vec![0; count];
        let mut merged = Vec::new();
        let mut order = Vec::new();
        let mut live: Vec<usize> = (0..count).collect();
        while !live.is_empty() {
            let pick = if interleave { rng.below(live.len()) } else { 0 };
            let call = live[pick];
            if cursors[call] == 0 {
                order.push(call);
            }
            merged.push(streams[call][cursors[call]].clone());
            cursors[call] += 1;
            if cursors[call] == streams[call].len() {
                live.remove(pick);
            }
        }

        // Feed in chunks of 1..=3 fragments.
        let mut acc = ToolCallAccumulator::new();
        let mut reported = 0;
        let mut rest = merged.as_slice();
        while !rest.is_empty() {
            let take = (1 + rng.below(3)).min(rest.len());
            reported += acc.feed(&rest[..take]).unwrap();
            rest = &rest[take..];
        }
        let expected_bytes: usize = merged
            .iter()
            .map(|f| {
                let function = f.function.as_ref().unwrap();
                [&f.id, &f.kind, &function.name, &function.arguments]
                    .into_iter()
                    .flatten()
                    .map(String::len)
                    .sum::<usize>()
            })
            .sum();
        assert_eq!(reported, expected_bytes, "round {round} ({shape:?})");
        assert_eq!(acc.bytes(), reported);

        let calls = acc.finish();
        assert_eq!(calls.len(), count, "round {round} ({shape:?})");
        for (position, (call, &source)) in calls.iter().zip(&order).enumerate() {
            let (id, name, text) = &wanted[source];
            let id = id.clone().unwrap_or_else(|| made(position));
            assert_eq!(call.id, id, "round {round} ({shape:?})");
            assert_eq!(&call.name, name, "round {round} ({shape:?})");
            assert_eq!(&call.arguments, text, "round {round} ({shape:?})");
            let whole: Value = serde_json::from_str(text).unwrap();
            assert_eq!(
                call.parsed,
                Ok(object(whole)),
                "round {round} ({shape:?}): {text}"
            );
        }
    }
}

#[test]
fn random_garbage_never_panics_and_never_exceeds_the_call_cap() {
    const TEXT: &[&str] = &[
        "", "a", "b", "{", "}", "\"", "é", "🦀", "null", "[1]", r"\u00",
    ];
    let mut rng = Rng(7);
    for _ in 0..300 {
        let mut acc = ToolCallAccumulator::new();
        for _ in 0..rng.below(200) {
            let fragments: Vec<_> = (0..rng.below(4))
                .map(|_| {
                    let maybe = |rng: &mut Rng| {
                        if rng.chance(2) {
                            None
                        } else {
                            Some(rng.pick(TEXT).to_string())
                        }
                    };
                    WireToolCallDelta {
                        index: if rng.chance(3) {
                            None
                        } else {
                            Some([0, 1, 2, 70, u32::MAX][rng.below(5)])
                        },
                        id: maybe(&mut rng),
                        kind: maybe(&mut rng),
                        function: if rng.chance(5) {
                            None
                        } else {
                            Some(WireFunctionDelta {
                                name: maybe(&mut rng),
                                arguments: maybe(&mut rng),
                            })
                        },
                    }
                })
                .collect();
            let _ = acc.feed(&fragments);
            let _ = acc.announced();
        }
        assert!(acc.len() <= MAX_TOOL_CALLS);
        for call in acc.finish() {
            let _ = call.parsed.map_err(|e| e.to_string());
        }
    }
}

#[test]
fn no_two_calls_share_an_id_when_a_provider_id_meets_a_made_up_one() {
    // The provider names its second call with the id the first was given:
    // it is answered under the next made-up id, and its later pieces still
    // find it by the provider's id. (Found by the tool_calls fuzz target.)
    let calls = assemble(&[
        frag(Some(0), None, Some("read_file"), r#"{"path":"a"}"#),
        frag(Some(1), Some(&made(0)), Some("glob"), r#"{"pattern":"#),
        frag(Some(2), Some(&made(2)), Some("grep"), r#"{"pattern":"x"}"#),
        frag(Some(3), None, Some("list_directory"), "{}"),
        // A later piece by the provider's id finds its call.
        frag(None, Some(&made(0)), None, r#""*.rs"}"#),
    ]);
    assert_eq!(ids(&calls), [made(0), made(1), made(2), made(3)]);
    assert_eq!(calls[1].name, "glob");
    assert_eq!(parsed(&calls[1])["pattern"], "*.rs");
    // A made-up id the provider took first moves on to the next number's.
    let calls = assemble(&[
        frag(
            Some(0),
            Some(&made(1)),
            Some("read_file"),
            r#"{"path":"a"}"#,
        ),
        frag(Some(1), None, Some("glob"), r#"{"pattern":"*"}"#),
    ]);
    assert_eq!(ids(&calls), [made(1), made(2)]);
}
