//! The agent loop against the scripted server: multi-episode conversations
//! with tool calls, confirmations, rejections, interrupts, failures, the
//! repeat detector and the step limit. The scripted server checks the
//! pairing of calls and results on every request body it receives.

use std::path::Path;

use dashfloat::agent::ApprovalPolicy;
use dashfloat::bounds::EXEC_LIVE_LINES;
use dashfloat::protocol::{AgentEvent, Decision, Phase, PreviewKind, ToolStatus};
use serde_json::{Value, json};

use crate::support;
use support::agent::{
    AgentHarness, EVENT_WAIT, reply_text, setup, start_in_temp, start_with, system_texts,
};
use support::server::{
    Reply, ScriptedServer, assert_prefix_stable, finish_chunk, role_chunk, tool_call_chunk,
};

fn call(id: &str, name: &str, args: Value) -> Reply {
    Reply::tool_call(id, name, &[&args.to_string()])
}

fn dir_of(h: &AgentHarness) -> &Path {
    h.dir.as_ref().unwrap().path()
}

pub(crate) use crate::support::agent::tool_results;

fn statuses(events: &[AgentEvent]) -> Vec<ToolStatus> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolResult { status, .. } => Some(status.clone()),
            _ => None,
        })
        .collect()
}

/// The UI hears of a call as soon as its name arrives, then of its size
/// as the arguments grow, before the call is whole.
#[tokio::test]
async fn a_call_being_written_is_reported_with_its_growing_size() {
    let content = "z".repeat(3 * 1024);
    let server = ScriptedServer::start(vec![
        call(
            "w1",
            "write_file",
            json!({"path": "big.txt", "content": content}),
        ),
        Reply::text(&["Not written."]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    h.prompt("write it").await;
    let (id, events) = h.next_confirm().await;
    let writing: Vec<(String, usize)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallWriting { name, bytes } => Some((name.clone(), *bytes)),
            _ => None,
        })
        .collect();
    assert_eq!(writing.first(), Some(&("write_file".to_string(), 0)));
    assert!(
        writing.iter().any(|(_, bytes)| *bytes >= 3 * 1024),
        "{writing:?}"
    );
    h.decide(&id, Decision::Reject).await;
    h.turn().await;
}

#[tokio::test]
async fn read_then_answer() {
    let server = ScriptedServer::start(vec![
        call("c1", "read_file", json!({"path": "notes.txt"})),
        Reply::text(&["The file says hi."]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    std::fs::write(dir_of(&h).join("notes.txt"), "hi\n").unwrap();
    h.prompt("what do the notes say?").await;
    let events = h.turn().await;
    assert!(events.contains(&AgentEvent::ToolCall {
        id: "c1".into(),
        name: "read_file".into(),
        summary: "notes.txt".into(),
    }));
    assert_eq!(statuses(&events), vec![ToolStatus::Ok]);
    assert!(!events.iter().any(|e| matches!(e, AgentEvent::Confirm(_))));
    assert_eq!(reply_text(&events), "The file says hi.");
    let second = &server.requests()[1].body;
    let results = tool_results(second);
    assert_eq!(results[0]["ok"], json!(true));
    assert_eq!(results[0]["content"], json!("hi\n"));
    let assistant = &second["messages"][2];
    assert_eq!(assistant["tool_calls"][0]["id"], "c1");
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"],
        json!(r#"{"path":"notes.txt"}"#)
    );
}

#[tokio::test]
async fn an_approved_edit_lands_exactly_as_previewed() {
    let server = ScriptedServer::start(vec![
        call(
            "e1",
            "edit_file",
            json!({"path": "lib.rs", "search_block": "fn old() {}", "replace_block": "fn new() {}"}),
        ),
        Reply::text(&["Renamed."]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    let file = dir_of(&h).join("lib.rs");
    std::fs::write(&file, "// top\nfn old() {}\n// bottom\n").unwrap();
    h.prompt("rename old to new").await;
    let (id, events) = h.next_confirm().await;
    let Some(AgentEvent::Confirm(req)) = events.last() else {
        unreachable!()
    };
    assert_eq!((req.position, req.of), (1, 1));
    let removed: Vec<&str> = req
        .preview
        .iter()
        .filter(|l| l.kind == PreviewKind::Removed)
        .map(|l| l.text.as_str())
        .collect();
    let added: Vec<&str> = req
        .preview
        .iter()
        .filter(|l| l.kind == PreviewKind::Added)
        .map(|l| l.text.as_str())
        .collect();
    assert_eq!((removed, added), (vec!["fn old() {}"], vec!["fn new() {}"]));
    // Nothing is written before the answer.
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "// top\nfn old() {}\n// bottom\n"
    );
    h.decide(&id, Decision::Approve).await;
    let events = h.turn().await;
    assert_eq!(statuses(&events), vec![ToolStatus::Ok]);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "// top\nfn new() {}\n// bottom\n"
    );
}

#[tokio::test]
async fn a_rejected_edit_leaves_the_file_and_says_rejected() {
    let server = ScriptedServer::start(vec![
        call(
            "e1",
            "edit_file",
            json!({"path": "a.txt", "search_block": "x", "replace_block": "y"}),
        ),
        Reply::text(&["OK, I will not."]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    let file = dir_of(&h).join("a.txt");
    std::fs::write(&file, "x\n").unwrap();
    h.prompt("change x").await;
    let (id, _) = h.next_confirm().await;
    h.decide(&id, Decision::Reject).await;
    let events = h.turn().await;
    assert_eq!(statuses(&events), vec![ToolStatus::Rejected]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x\n");
    let result = &tool_results(&server.requests()[1].body)[0];
    assert_eq!(result["ok"], json!(false));
    assert_eq!(result["rejected"], json!(true));
}

/// The 1.5B asked for the command it had just been refused, again and
/// again. Once rejected, the same call is answered without asking until
/// the person writes; their next message may ask for it after all.
#[tokio::test]
async fn a_call_the_person_rejected_is_not_put_to_them_again_until_they_write() {
    let args = json!({"command": "python3 test_stats.py"});
    let server = ScriptedServer::start(vec![
        call("c1", "execute_command", args.clone()),
        call(
            "c2",
            "execute_command",
            json!({"command": "python3 test_stats.py -v"}),
        ),
        // The first call again, its default written out.
        call(
            "c3",
            "execute_command",
            json!({"command": "python3 test_stats.py", "cwd": "./"}),
        ),
        Reply::text(&["I will not run it."]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    h.prompt("run the tests").await;
    let (id, _) = h.next_confirm().await;
    assert_eq!(id, "c1");
    h.decide(&id, Decision::Reject).await;
    let (id, _) = h.next_confirm().await;
    assert_eq!(id, "c2", "another call is asked as usual");
    h.decide(&id, Decision::Reject).await;
    let events = h.turn().await;
    assert!(
        !events.iter().any(|e| matches!(e, AgentEvent::Confirm(_))),
        "the same call was asked again: {events:#?}"
    );
    assert_eq!(
        statuses(&events),
        vec![ToolStatus::Rejected, ToolStatus::Rejected],
        "c2 rejected by the person, c3 as it was before"
    );
    assert!(
        system_texts(&events).iter().any(|t| t
            == "not asked again: you rejected this same call (execute_command python3 test_stats.py (in ./)) since your last message"),
        "{:#?}",
        system_texts(&events)
    );
    let results = tool_results(&server.requests()[3].body);
    assert_eq!(
        results[2]["error"],
        json!(
            "not run: the person already rejected this exact call since they last wrote, so it was not put to them again. Ask them what they want instead"
        )
    );
    assert_eq!(results[2]["rejected"], json!(true));

    server.push_reply(call("c4", "execute_command", args));
    server.push_reply(Reply::text(&["ran"]));
    h.prompt("run it after all").await;
    let (id, _) = h.next_confirm().await;
    assert_eq!(id, "c4");
    h.decide(&id, Decision::Reject).await;
    h.turn().await;
}

#[tokio::test]
async fn a_file_changed_after_the_preview_is_not_overwritten() {
    let server = ScriptedServer::start(vec![
        call("r1", "read_file", json!({"path": "a.txt"})),
        call(
            "w1",
            "write_file",
            json!({"path": "a.txt", "content": "from the model\n"}),
        ),
        Reply::text(&["done"]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    let file = dir_of(&h).join("a.txt");
    std::fs::write(&file, "original\n").unwrap();
    h.prompt("overwrite a.txt").await;
    let (id, _) = h.next_confirm().await;
    std::fs::write(&file, "edited by the person meanwhile\n").unwrap();
    h.decide(&id, Decision::Approve).await;
    let events = h.turn().await;
    let st = statuses(&events);
    let [ToolStatus::Error(e)] = st.as_slice() else {
        panic!("{events:#?}")
    };
    assert!(e.contains("changed after"), "{e}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "edited by the person meanwhile\n"
    );
}

#[tokio::test]
async fn an_approved_command_runs_and_its_output_goes_back() {
    let server = ScriptedServer::start(vec![
        call(
            "x1",
            "execute_command",
            json!({"command": "echo from-the-shell; exit 3"}),
        ),
        Reply::text(&["It exited 3."]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    h.prompt("run it").await;
    let (id, events) = h.next_confirm().await;
    let Some(AgentEvent::Confirm(req)) = events.last() else {
        unreachable!()
    };
    assert!(
        req.preview
            .iter()
            .any(|l| l.text.contains("echo from-the-shell"))
    );
    h.decide(&id, Decision::Approve).await;
    let events = h.turn().await;
    assert_eq!(
        statuses(&events),
        vec![ToolStatus::Error("exit code 3".into())]
    );
    let result = &tool_results(&server.requests()[1].body)[0];
    assert_eq!(result["exit_code"], json!(3));
    assert!(
        result["output"]
            .as_str()
            .unwrap()
            .contains("from-the-shell")
    );
}

/// A turn whose one call, `x1`, runs `command`, approved; then the reply
/// `done`.
async fn approved_command(command: &str) -> (ScriptedServer, AgentHarness) {
    let server = ScriptedServer::start(vec![
        call("x1", "execute_command", json!({ "command": command })),
        Reply::text(&["done"]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    h.prompt("run it").await;
    let (id, _) = h.next_confirm().await;
    h.decide(&id, Decision::Approve).await;
    (server, h)
}

/// A command's output reaches the screen while it runs: its latest lines,
/// a line rewritten with `\r` in its last form, no escape sequence's
/// remnant; none after its result.
/// The command waits for the test between its prints, so each is seen.
#[tokio::test]
async fn a_running_command_shows_its_latest_lines_as_it_prints_them() {
    let command = "echo one; until [ -e go ]; do sleep 0.05; done; printf '10%%\\r\\033[2K100%%\\n'; \
                   until [ -e go2 ]; do sleep 0.05; done; echo two";
    let (server, mut h) = approved_command(command).await;
    let live = |tail: &'static str| move |e: &AgentEvent| matches!(e, AgentEvent::ToolOutput { id, tail: t } if id == "x1" && t == tail);
    h.until(live("one")).await;
    std::fs::write(dir_of(&h).join("go"), "").unwrap();
    h.until(live("one\n100%")).await;
    std::fs::write(dir_of(&h).join("go2"), "").unwrap();
    let events = h.turn().await;
    let result = events
        .iter()
        .position(|e| matches!(e, AgentEvent::ToolResult { .. }))
        .unwrap();
    assert!(
        !events[result..]
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolOutput { .. })),
        "{events:#?}"
    );
    assert_eq!(statuses(&events), vec![ToolStatus::Ok]);
    // The model reads the whole output as shown: the progress line in its
    // last form, without the line erase.
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results[0]["output"], json!("one\n100%\ntwo\n"));
}

/// However much a command prints, what it shows while it runs is its
/// last `EXEC_LIVE_LINES` lines, each cut to 200 bytes.
#[tokio::test]
async fn a_running_command_shows_only_its_last_lines_each_cut() {
    let command = "seq 1 2000; printf '%0300d\\n' 0; until [ -e go ]; do sleep 0.05; done";
    let (_server, mut h) = approved_command(command).await;
    let expected = format!("1997\n1998\n1999\n2000\n{}", "0".repeat(200));
    assert_eq!(EXEC_LIVE_LINES, 5);
    h.until(|e| matches!(e, AgentEvent::ToolOutput { tail, .. } if *tail == expected))
        .await;
    std::fs::write(dir_of(&h).join("go"), "").unwrap();
    assert_eq!(statuses(&h.turn().await), vec![ToolStatus::Ok]);
}

/// The live tail is taken from the output's last 2,000 bytes: a character
/// that window cuts in two is dropped, not shown as a replacement mark.
#[tokio::test]
async fn a_running_command_s_tail_never_starts_inside_a_character() {
    // 3,003 bytes: the window starts at byte 1,003, inside an `é`.
    let command = "i=0; while [ $i -lt 1500 ]; do printf 'é'; i=$((i+1)); done; printf '\\nbc'; \
                   until [ -e go ]; do sleep 0.05; done";
    let (_server, mut h) = approved_command(command).await;
    let expected = format!("{}\nbc", "é".repeat(100));
    h.until(|e| matches!(e, AgentEvent::ToolOutput { tail, .. } if *tail == expected))
        .await;
    std::fs::write(dir_of(&h).join("go"), "").unwrap();
    assert_eq!(statuses(&h.turn().await), vec![ToolStatus::Ok]);
}

#[tokio::test]
async fn interrupting_a_command_kills_it_answers_cancelled_and_the_next_prompt_works() {
    let server = ScriptedServer::start(vec![
        call(
            "x1",
            "execute_command",
            json!({"command": "echo $$ > pid; echo started; sleep 30"}),
        ),
        Reply::text(&["next answer"]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    h.prompt("sleep").await;
    let (id, _) = h.next_confirm().await;
    h.decide(&id, Decision::Approve).await;
    h.until(|e| *e == AgentEvent::Phase(Phase::Executing)).await;
    let pid = support::pid_written(&dir_of(&h).join("pid"), EVENT_WAIT).await;
    assert!(support::process_alive(pid));
    h.send(dashfloat::protocol::UiCommand::Cancel).await;
    let events = h.turn().await;
    assert_eq!(statuses(&events), vec![ToolStatus::Cancelled]);
    assert!(
        !support::process_alive(pid),
        "the command's shell survived the cancel"
    );
    // No follow-up episode after an interrupt: the person speaks next.
    assert_eq!(server.requests().len(), 1);
    h.prompt("and now?").await;
    let events = h.turn().await;
    assert_eq!(reply_text(&events), "next answer");
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results[0]["cancelled"], json!(true));
}

#[tokio::test]
async fn a_stream_cut_inside_a_calls_arguments_answers_the_call_and_stays_usable() {
    // The role chunk and the first piece of the call's arguments.
    let cut = Reply::tool_call("c1", "write_file", &[r#"{"path": "a.txt", "cont"#]).cut_after(2);
    let server = ScriptedServer::start(vec![cut, Reply::text(&["recovered"])]).await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    h.prompt("write").await;
    let events = h.turn().await;
    assert!(matches!(
        statuses(&events).as_slice(),
        [ToolStatus::Error(_)]
    ));
    assert!(!dir_of(&h).join("a.txt").exists());
    h.prompt("again").await;
    assert_eq!(reply_text(&h.turn().await), "recovered");
    let second = &server.requests()[1].body;
    assert_eq!(second["messages"][2]["tool_calls"][0]["id"], "c1");
}

#[tokio::test]
async fn an_unknown_tool_is_answered_with_the_catalogue() {
    let server = ScriptedServer::start(vec![
        call("u1", "delete_everything", json!({})),
        Reply::text(&["Sorry."]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    h.prompt("go").await;
    let events = h.turn().await;
    assert!(!events.iter().any(|e| matches!(e, AgentEvent::Confirm(_))));
    let result = &tool_results(&server.requests()[1].body)[0];
    assert_eq!(result["code"], json!("unknown_tool"));
    assert!(result["error"].as_str().unwrap().contains("read_file"));
}

#[tokio::test]
async fn invalid_arguments_then_the_corrected_call_succeeds() {
    let server = ScriptedServer::start(vec![
        call(
            "r1",
            "read_file",
            json!({"path": "notes.txt", "limit": "20"}),
        ),
        call("r2", "read_file", json!({"path": "notes.txt", "limit": 20})),
        Reply::text(&["done"]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    std::fs::write(dir_of(&h).join("notes.txt"), "a\nb\n").unwrap();
    h.prompt("read").await;
    let events = h.turn().await;
    let st = statuses(&events);
    assert!(
        matches!(&st[0], ToolStatus::Error(e) if e.contains("limit")),
        "{st:?}"
    );
    assert_eq!(st[1], ToolStatus::Ok);
    let results = tool_results(&server.requests()[2].body);
    assert_eq!(results[0]["error"], json!("invalid_argument"));
    assert_eq!(results[0]["field"], json!("limit"));
    assert_eq!(results[0]["received"], json!("string \"20\""));
    assert_eq!(results[1]["ok"], json!(true));
}

#[tokio::test]
async fn invalid_arguments_never_reach_a_confirmation_or_the_disk() {
    let server = ScriptedServer::start(vec![
        call("w1", "write_file", json!({"path": "a.txt"})),
        Reply::text(&["ok"]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    h.prompt("write").await;
    let events = h.turn().await;
    assert!(!events.iter().any(|e| matches!(e, AgentEvent::Confirm(_))));
    assert!(!dir_of(&h).join("a.txt").exists());
}

/// An invalid call's row names the file or command its arguments give,
/// not a prefix of their JSON; what names nothing shows the JSON cut short.
#[tokio::test]
async fn an_invalid_calls_row_names_what_its_arguments_name() {
    let server = ScriptedServer::start(vec![
        call(
            "e1",
            "edit_file",
            json!({"path": "calc/stats.py", "search_block": "x\n", "replace_block": "x\n"}),
        ),
        call(
            "c1",
            "execute_command",
            json!({"command": "make\nmake test", "timeout_seconds": "60"}),
        ),
        call("g1", "grep", json!({"regex": "median"})),
        Reply::text(&["ok"]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    h.prompt("fix it").await;
    let events = h.turn().await;
    let rows: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCall { summary, .. } => Some(summary.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(rows, ["calc/stats.py", "make", r#"{"regex":"median"}"#]);
    assert!(
        statuses(&events)
            .iter()
            .all(|s| matches!(s, ToolStatus::Error(_))),
        "{events:#?}"
    );
}

#[tokio::test]
async fn a_call_repeated_eight_times_gets_notices_at_three_five_and_eight() {
    let mut replies: Vec<Reply> = (0..8)
        .map(|i| call(&format!("c{i}"), "list_directory", json!({"path": "."})))
        .collect();
    replies.push(Reply::text(&["enough"]));
    let server = ScriptedServer::start(replies).await;
    let mut s = setup(
        &server.base_url(),
        tempfile::tempdir().unwrap().path(),
        ApprovalPolicy::Ask,
    );
    let dir = tempfile::tempdir().unwrap();
    s.tools = dashfloat::tools::ToolContext::new(dir.path()).unwrap();
    s.max_steps = 20;
    let mut h = start_with(s);
    h.prompt("look around").await;
    let events = h.turn().await;
    let notices: Vec<String> = system_texts(&events)
        .into_iter()
        .filter(|t| t.starts_with("the model made this same list_directory call"))
        .collect();
    assert_eq!(notices.len(), 3, "{notices:#?}");
    assert!(notices[2].contains(" 8 times "), "{notices:#?}");
    let last = &server.requests()[8].body;
    let results = tool_results(last);
    let with_notice: Vec<usize> = results
        .iter()
        .enumerate()
        .filter(|(_, r)| r.get("notice").is_some())
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(with_notice, vec![3, 5, 8]);
    // Calls are never blocked: every one ran.
    assert!(results.iter().all(|r| r["ok"] == json!(true)));
}

/// A reply that loops over the same calls is stopped at a call's third
/// copy: each of its calls runs once, the next request holds them once,
/// and the person is told why the reply ended there.
#[tokio::test]
async fn a_reply_looping_over_its_calls_runs_each_once() {
    let grep = r#"{"pattern":"zeta"}"#;
    let list = r#"{"path":"."}"#;
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            ("g1", "grep", grep),
            ("l1", "list_directory", list),
            ("g2", "grep", grep),
            ("l2", "list_directory", list),
            ("g3", "grep", grep),
            ("l3", "list_directory", list),
            ("g4", "grep", grep),
        ]),
        Reply::text(&["no zeta here"]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    std::fs::write(dir_of(&h).join("a.txt"), "alpha\n").unwrap();
    h.prompt("find zeta").await;
    let events = h.turn().await;
    assert_eq!(
        system_texts(&events),
        [
            "the model wrote the same grep call 3 times in one reply; the reply was stopped \
          there, and each of its calls runs once"
        ]
    );
    assert_eq!(statuses(&events).len(), 2);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body["messages"].as_array().unwrap();
    let asked: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(asked, ["g1", "l1"]);
    let answered: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    assert_eq!(answered, ["g1", "l1"]);
    assert_eq!(reply_text(&events), "no zeta here");
}

/// A reply that quotes a call block from a README the model read, and
/// goes on explaining it, runs nothing: the block copies a call from a
/// tool result, so it is prose, shown whole (issue 37, ADR 0027). A call
/// of the model's own in the same shape, prose after it, runs.
#[tokio::test]
async fn a_call_block_quoted_from_a_file_read_is_shown_not_run() {
    let readme = "# Agents\nAn agent reads a file so:\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"secret.txt\"}}\n```\n";
    let quote = "The README shows the format:\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"secret.txt\"}}\n```\nThat is only an example.";
    let (held, after) = quote.split_at(quote.find("\n```\nThat").unwrap());
    let server = ScriptedServer::start(vec![
        call("c0", "read_file", json!({"path": "README.md"})),
        Reply::text(&[held, after]),
        Reply::text(&[
            "Reading it:\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n```\nThis shows the file.",
        ]),
        Reply::text(&["It holds alpha."]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    std::fs::write(dir_of(&h).join("README.md"), readme).unwrap();
    std::fs::write(dir_of(&h).join("secret.txt"), "secret\n").unwrap();
    std::fs::write(dir_of(&h).join("a.txt"), "alpha\n").unwrap();
    h.prompt("what does the readme say about reading files?")
        .await;
    let events = h.turn().await;
    assert_eq!(server.requests().len(), 2, "the quoted call was run");
    assert_eq!(statuses(&events), vec![ToolStatus::Ok], "{events:#?}");
    assert_eq!(reply_text(&events), quote);
    // Shown being written while it was held (the first piece ends in
    // it), never announced.
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolCallWriting { name, .. } if name == "read_file")),
        "{events:#?}"
    );
    h.prompt("then read the other file").await;
    let events = h.turn().await;
    assert_eq!(statuses(&events), vec![ToolStatus::Ok], "{events:#?}");
    assert_eq!(
        tool_results(&server.requests()[3].body).last().unwrap()["content"],
        json!("alpha\n")
    );
}

/// A repeat that gives the result the model already has is answered as
/// unchanged, and the next request asks for an answer, not a call: a call
/// written as text in that reply stays text and the turn ends.
#[tokio::test]
async fn a_repeat_with_the_same_result_is_unchanged_and_the_next_reply_must_answer() {
    let server = ScriptedServer::start(vec![
        call("c0", "read_file", json!({"path": "a.txt"})),
        call("c1", "read_file", json!({"path": "a.txt"})),
        Reply::text(&[
            "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n```",
        ]),
        Reply::text(&["fine"]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let mut h = start_with(setup(&server.base_url(), dir.path(), ApprovalPolicy::Ask));
    h.prompt("read the first file").await;
    let events = h.turn().await;
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "the text call was not run");
    assert!(requests[1].body.get("tool_choice").is_none());
    assert_eq!(requests[2].body["tool_choice"], json!("none"));
    let results = tool_results(&requests[2].body);
    assert_eq!(results[0]["content"], json!("alpha\n"));
    assert_eq!(
        results[1],
        json!({"ok": true, "unchanged": dashfloat::bounds::UNCHANGED_RESULT})
    );
    // The request ends with the ask to answer, sent with it only.
    let last = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .cloned();
    assert_eq!(
        last,
        Some(json!({"role": "user", "content": dashfloat::bounds::ANSWER_NOW_PROMPT}))
    );
    // Both rows show what the file holds: the person sees every result.
    assert_eq!(statuses(&events), vec![ToolStatus::Ok, ToolStatus::Ok]);
    // The person's next message starts afresh: calls may be made again.
    h.prompt("again").await;
    h.turn().await;
    let next = &server.requests()[3].body;
    assert!(next.get("tool_choice").is_none());
    let texts: Vec<&str> = next["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(
        !texts.contains(&dashfloat::bounds::ANSWER_NOW_PROMPT),
        "{texts:?}"
    );
    // The ask to answer is the only message not repeated, and it is last.
    assert_prefix_stable(&server.requests());
}

/// A failed call made again is answered with its whole error (it says
/// how to recover) until the third time; only then is it unchanged and
/// an answer asked for.
#[tokio::test]
async fn a_failed_call_made_again_gets_its_error_again_before_it_counts_as_unchanged() {
    let edit = json!({"path": "a.txt", "search_block": "beta", "replace_block": "gamma"});
    let server = ScriptedServer::start(vec![
        call("c0", "edit_file", edit.clone()),
        call("c1", "edit_file", edit.clone()),
        call("c2", "edit_file", edit),
        Reply::text(&["I could not find beta."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let mut h = start_with(setup(
        &server.base_url(),
        dir.path(),
        ApprovalPolicy::AutoEdit,
    ));
    h.prompt("replace beta").await;
    let events = h.turn().await;
    // The person reads what happened; the model's words are for the model.
    assert_eq!(
        system_texts(&events),
        [
            "the model made this same edit_file call 3 times since your last message; its result \
          now tells it to stop and answer"
        ]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let results = tool_results(&requests[3].body);
    let error = results[0]["error"].as_str().unwrap();
    assert!(error.contains("lines 1-1:\nalpha\n"), "{error}");
    assert_eq!(results[1]["error"], results[0]["error"]);
    assert_eq!(
        results[1]["notice"],
        json!(dashfloat::bounds::FAILED_REPEAT_NOTICE)
    );
    assert!(requests[2].body.get("tool_choice").is_none());
    assert_eq!(
        results[2],
        json!({"ok": false, "unchanged": dashfloat::bounds::UNCHANGED_RESULT, "notice": results[2]["notice"]})
    );
    assert_eq!(requests[3].body["tool_choice"], json!("none"));
}

#[tokio::test]
async fn the_step_limit_ends_a_looping_turn_with_every_call_answered() {
    let replies: Vec<Reply> = (0..5)
        .map(|i| call(&format!("c{i}"), "list_directory", json!({})))
        .collect();
    let server = ScriptedServer::start(replies).await;
    let dir = tempfile::tempdir().unwrap();
    let mut s = setup(&server.base_url(), dir.path(), ApprovalPolicy::Ask);
    s.max_steps = 3;
    let mut h = start_with(s);
    h.prompt("loop").await;
    let events = h.turn().await;
    assert_eq!(server.requests().len(), 3);
    // The last step asks for an answer rather than a call; this server
    // calls anyway, and the limit still holds.
    let choices: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.body.get("tool_choice").cloned().unwrap_or(Value::Null))
        .collect();
    assert_eq!(choices, vec![Value::Null, Value::Null, json!("none")]);
    assert!(
        system_texts(&events)
            .iter()
            .any(|t| t.contains("stopped after 3 model steps"))
    );
    assert_eq!(statuses(&events).len(), 3);
    // The next prompt carries all three answers.
    server.push_reply(Reply::text(&["fine"]));
    h.prompt("continue").await;
    h.turn().await;
    assert_eq!(tool_results(&server.requests()[3].body).len(), 3);
}

/// Three calls in one episode: a read, then two edits.
fn three_calls() -> Reply {
    Reply::tool_calls(&[
        ("r", "read_file", r#"{"path":"a.txt"}"#),
        ("e1", "write_file", r#"{"path":"b.txt","content":"B\n"}"#),
        ("e2", "write_file", r#"{"path":"c.txt","content":"C\n"}"#),
    ])
}

#[tokio::test]
async fn several_mutations_are_confirmed_one_at_a_time_in_order() {
    let server = ScriptedServer::start(vec![three_calls(), Reply::text(&["both written"])]).await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    std::fs::write(dir_of(&h).join("a.txt"), "A\n").unwrap();
    h.prompt("copy").await;
    let (first, events) = h.next_confirm().await;
    let Some(AgentEvent::Confirm(req)) = events.last() else {
        unreachable!()
    };
    assert_eq!((first.as_str(), req.position, req.of), ("e1", 1, 2));
    // The read ran before the first confirmation, without asking.
    assert_eq!(statuses(&events), vec![ToolStatus::Ok]);
    // The second write waits until the first is answered.
    assert!(!dir_of(&h).join("c.txt").exists());
    h.decide(&first, Decision::Approve).await;
    let (second, events) = h.next_confirm().await;
    let Some(AgentEvent::Confirm(req)) = events.last() else {
        unreachable!()
    };
    assert_eq!((second.as_str(), req.position, req.of), ("e2", 2, 2));
    assert!(dir_of(&h).join("b.txt").exists());
    h.decide(&second, Decision::Reject).await;
    let events = h.turn().await;
    assert!(events.contains(&AgentEvent::ToolResult {
        id: "e2".into(),
        status: ToolStatus::Rejected,
        excerpt: String::new()
    }));
    assert!(!dir_of(&h).join("c.txt").exists());
    let ids: Vec<String> = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str().map(str::to_string))
        .collect();
    assert_eq!(ids, vec!["r", "e1", "e2"]);
}

#[tokio::test]
async fn cancelling_while_confirming_answers_every_unresolved_call() {
    let server = ScriptedServer::start(vec![three_calls(), Reply::text(&["after"])]).await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    std::fs::write(dir_of(&h).join("a.txt"), "A\n").unwrap();
    h.prompt("copy").await;
    h.next_confirm().await;
    h.send(dashfloat::protocol::UiCommand::Cancel).await;
    let events = h.turn().await;
    assert_eq!(
        statuses(&events),
        vec![ToolStatus::Cancelled, ToolStatus::Cancelled]
    );
    h.prompt("next").await;
    h.turn().await;
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["ok"], json!(true));
    assert_eq!(results[1]["cancelled"], json!(true));
    assert_eq!(results[2]["cancelled"], json!(true));
}

#[tokio::test]
async fn auto_edit_applies_edits_without_asking_but_asks_for_commands() {
    let calls = Reply::tool_calls(&[
        ("w", "write_file", r#"{"path":"b.txt","content":"B"}"#),
        ("x", "execute_command", r#"{"command":"true"}"#),
    ]);
    let server = ScriptedServer::start(vec![calls, Reply::text(&["ok"])]).await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::AutoEdit);
    h.prompt("go").await;
    let (id, events) = h.next_confirm().await;
    assert_eq!(id, "x");
    assert!(events.contains(&AgentEvent::ToolResult {
        id: "w".into(),
        status: ToolStatus::Ok,
        excerpt: String::new()
    }));
    h.decide(&id, Decision::Approve).await;
    h.turn().await;
}

#[tokio::test]
async fn approve_all_runs_everything_without_asking() {
    let server = ScriptedServer::start(vec![
        call(
            "x",
            "execute_command",
            json!({"command": "echo ran > ran.txt"}),
        ),
        Reply::text(&["ok"]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::DangerouslyApproveAll);
    h.prompt("go").await;
    let events = h.turn().await;
    assert!(!events.iter().any(|e| matches!(e, AgentEvent::Confirm(_))));
    assert!(dir_of(&h).join("ran.txt").exists());
}

#[tokio::test]
async fn an_edit_whose_block_is_missing_is_answered_without_asking() {
    let server = ScriptedServer::start(vec![
        call(
            "e",
            "edit_file",
            json!({"path": "a.txt", "search_block": "absent", "replace_block": "x"}),
        ),
        Reply::text(&["ok"]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    std::fs::write(dir_of(&h).join("a.txt"), "present\n").unwrap();
    h.prompt("edit").await;
    let events = h.turn().await;
    assert!(!events.iter().any(|e| matches!(e, AgentEvent::Confirm(_))));
    let result = &tool_results(&server.requests()[1].body)[0];
    assert!(result["error"].as_str().unwrap().contains("not found"));
}

#[tokio::test]
async fn calls_without_ids_get_stable_made_up_ids_that_results_echo() {
    let frames = vec![
        role_chunk(),
        tool_call_chunk(0, None, Some("list_directory"), "{}"),
        finish_chunk("tool_calls"),
    ];
    let server = ScriptedServer::start(vec![Reply::sse(frames), Reply::text(&["ok"])]).await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    h.prompt("list").await;
    h.turn().await;
    let body = &server.requests()[1].body;
    // Nine letters and digits, the one form every provider takes.
    let id = body["messages"][2]["tool_calls"][0]["id"].as_str().unwrap();
    assert_eq!(id, "c00000100");
    assert_eq!(body["messages"][3]["tool_call_id"], id);
}

#[tokio::test]
async fn the_recorded_llama_server_tool_call_replays_into_a_valid_round_trip() {
    let server = ScriptedServer::start(vec![
        Reply::fixture("tool-call-read-file.sse"),
        Reply::text(&["It is a demo."]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    std::fs::write(dir_of(&h).join("README.md"), "# Demo\n").unwrap();
    h.prompt("Read the readme").await;
    let events = h.turn().await;
    assert_eq!(statuses(&events), vec![ToolStatus::Ok]);
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results[0]["content"], json!("# Demo\n"));
}

#[tokio::test]
async fn every_steps_usage_reaches_the_ui_as_it_ends() {
    let server = ScriptedServer::start(vec![
        call("c", "list_directory", json!({})),
        Reply::text(&["done"]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    h.prompt("go").await;
    let events = h.turn().await;
    // The context meter follows the turn: a step's usage comes before
    // the next step's tool runs, not only at the end.
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Usage(_) => Some("usage"),
            AgentEvent::ToolResult { .. } => Some("result"),
            AgentEvent::TurnDone => Some("done"),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["usage", "result", "usage", "done"]);
    // Reply::text reports one completion token per delta.
    let last = events.iter().rev().find_map(|e| match e {
        AgentEvent::Usage(u) => Some(u),
        _ => None,
    });
    assert_eq!(last.map(|u| u.completion_tokens), Some(1));
}

#[tokio::test]
async fn two_calls_with_one_id_are_both_answered_under_distinct_ids() {
    // Index 0 has no id (made up as c00000100); index 1 brings that same
    // id, and is answered under one made up for it.
    let frames = vec![
        role_chunk(),
        tool_call_chunk(0, None, Some("list_directory"), "{}"),
        tool_call_chunk(1, Some("c00000100"), Some("list_directory"), "{}"),
        finish_chunk("tool_calls"),
    ];
    let server = ScriptedServer::start(vec![Reply::sse(frames), Reply::text(&["ok"])]).await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    h.prompt("list twice").await;
    let events = h.turn().await;
    let empty = ToolStatus::Empty("empty directory".into());
    assert_eq!(statuses(&events), vec![empty.clone(), empty]);
    let body = &server.requests()[1].body;
    let ids: Vec<&str> = body["messages"][2]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["c00000100", "c00000101"]);
}

#[tokio::test]
async fn a_write_to_a_fifo_is_refused_in_its_preview_without_blocking() {
    let server = ScriptedServer::start(vec![
        call("w", "write_file", json!({"path": "pipe", "content": "x"})),
        Reply::text(&["ok"]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    nix::unistd::mkfifo(
        &dir_of(&h).join("pipe"),
        nix::sys::stat::Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    h.prompt("write to the pipe").await;
    let events = h.turn().await;
    let st = statuses(&events);
    assert!(
        matches!(st.as_slice(), [ToolStatus::Error(e)] if e.contains("not a regular file")),
        "{st:?}"
    );
}

#[tokio::test]
async fn cancel_when_nothing_runs_confirms_the_agent_is_idle() {
    let server = ScriptedServer::start(vec![]).await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    h.send(dashfloat::protocol::UiCommand::Cancel).await;
    let events = h.turn().await;
    assert_eq!(
        events,
        vec![AgentEvent::Phase(Phase::Idle), AgentEvent::TurnDone]
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_tool_rows_excerpt_is_at_most_thirty_lines_and_says_what_was_left_out() {
    let server = ScriptedServer::start(vec![
        call("r", "read_file", json!({"path": "long.txt"})),
        Reply::text(&["ok"]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    let mut text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    text.insert_str(0, &format!("{}\n", "w".repeat(500)));
    std::fs::write(dir_of(&h).join("long.txt"), &text).unwrap();
    h.prompt("read it").await;
    let events = h.turn().await;
    let excerpt = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolResult { excerpt, .. } => Some(excerpt.clone()),
            _ => None,
        })
        .unwrap();
    let lines: Vec<&str> = excerpt.lines().collect();
    assert_eq!(lines.len(), 31);
    assert_eq!(lines[0].chars().count(), 241, "long lines are cut with …");
    assert!(lines[0].ends_with('…'));
    assert_eq!(lines[29], "line 29");
    assert_eq!(lines[30], "… 71 more lines");
    // The model still gets the whole file.
    let result = &tool_results(&server.requests()[1].body)[0];
    assert_eq!(result["content"].as_str().unwrap(), text);
}

/// The preview lines of the confirmation at the end of `events`.
fn confirm_preview(events: &[AgentEvent]) -> Vec<String> {
    match events.last() {
        Some(AgentEvent::Confirm(req)) => req.preview.iter().map(|l| l.text.clone()).collect(),
        other => panic!("expected a confirmation, got {other:?}"),
    }
}

/// A project with `.git/config` and `docs/notes.md -> ../.git/config`.
fn with_git_link(h: &AgentHarness) {
    let dir = dir_of(h);
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    std::fs::write(dir.join(".git/config"), "[core]\n").unwrap();
    std::os::unix::fs::symlink("../.git/config", dir.join("docs/notes.md")).unwrap();
}

#[tokio::test]
async fn auto_edit_still_asks_before_a_write_lands_in_git_and_shows_where() {
    let server = ScriptedServer::start(vec![
        call("r", "read_file", json!({"path": "docs/notes.md"})),
        call(
            "w",
            "write_file",
            json!({"path": "docs/notes.md", "content": "[core]\nhooksPath = /tmp/evil\n"}),
        ),
        Reply::text(&["ok"]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::AutoEdit);
    with_git_link(&h);
    h.prompt("take notes").await;
    let (id, events) = h.next_confirm().await;
    assert_eq!(id, "w");
    let preview = confirm_preview(&events);
    assert_eq!(preview[0], "replace docs/notes.md → .git/config");
    h.decide(&id, Decision::Reject).await;
    h.turn().await;
    assert_eq!(
        std::fs::read_to_string(dir_of(&h).join(".git/config")).unwrap(),
        "[core]\n"
    );
}

/// A repository's own directory under another name (`git init
/// --separate-git-dir=meta/repo`): its config runs code at the person's
/// next git command, so auto-edit asks there too; a look-alike folder
/// that is no repository does not ask.
#[tokio::test]
async fn auto_edit_asks_before_writing_into_a_git_directory_of_another_name() {
    let config = json!({"path": "meta/repo/config", "content": "[core]\n\tfsmonitor = x\n"});
    let server = ScriptedServer::start(vec![
        call(
            "w1",
            "write_file",
            json!({"path": "meta/notes/config", "content": "n\n"}),
        ),
        call("w2", "write_file", config),
        Reply::text(&["ok"]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::AutoEdit);
    let repo = dir_of(&h).join("meta/repo");
    std::fs::create_dir_all(repo.join("objects")).unwrap();
    std::fs::create_dir_all(repo.join("refs")).unwrap();
    std::fs::write(repo.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::create_dir_all(dir_of(&h).join("meta/notes/refs")).unwrap();
    h.prompt("configure").await;
    let (id, events) = h.next_confirm().await;
    assert_eq!(id, "w2", "the folder that is no repository did not ask");
    let preview = confirm_preview(&events);
    assert_eq!(preview[1], "(this changes the repository's own files)");
    h.decide(&id, Decision::Reject).await;
    h.turn().await;
    assert!(!repo.join("config").exists());
    assert!(dir_of(&h).join("meta/notes/config").exists());
}

/// A repository's directory built file by file, its `HEAD` last: the
/// write that makes it one asks.
#[tokio::test]
async fn auto_edit_asks_for_the_write_that_completes_a_git_directory() {
    let write = |id: &str, path: &str, content: &str| {
        (
            id.to_owned(),
            json!({"path": path, "content": content}).to_string(),
        )
    };
    let calls = [
        write("w1", "sub/config", "[core]\n\tfsmonitor = x\n"),
        write("w2", "sub/objects/.keep", ""),
        write("w3", "sub/refs/.keep", ""),
        write("w4", "sub/HEAD", "ref: refs/heads/main\n"),
    ];
    let mut replies: Vec<Reply> = calls
        .iter()
        .map(|(id, args)| Reply::tool_call(id, "write_file", &[args]))
        .collect();
    replies.push(Reply::text(&["ok"]));
    let server = ScriptedServer::start(replies).await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::AutoEdit);
    h.prompt("set it up").await;
    let (id, _) = h.next_confirm().await;
    assert_eq!(id, "w4");
    h.decide(&id, Decision::Reject).await;
    h.turn().await;
    assert!(!dir_of(&h).join("sub/HEAD").exists());
}

#[tokio::test]
async fn auto_edit_asks_for_a_git_write_that_an_earlier_call_made_possible() {
    // When the round starts, docs/notes.md is no link; the command the
    // person approves makes it one. The write must be judged when it runs.
    let calls = Reply::tool_calls(&[
        (
            "x",
            "execute_command",
            r#"{"command":"mkdir -p .git docs && ln -s ../.git/config docs/notes.md"}"#,
        ),
        (
            "w",
            "write_file",
            r#"{"path":"docs/notes.md","content":"x"}"#,
        ),
    ]);
    let server = ScriptedServer::start(vec![calls, Reply::text(&["ok"])]).await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::AutoEdit);
    h.prompt("go").await;
    let (id, _) = h.next_confirm().await;
    assert_eq!(id, "x");
    h.decide(&id, Decision::Approve).await;
    let (id, events) = h.next_confirm().await;
    assert_eq!(id, "w");
    assert_eq!(
        confirm_preview(&events)[0],
        "create docs/notes.md → .git/config (1 line)"
    );
    h.decide(&id, Decision::Reject).await;
    h.turn().await;
    assert!(!dir_of(&h).join(".git/config").exists());
}

#[tokio::test]
async fn auto_edit_asks_before_an_edit_inside_git_even_without_a_link() {
    let server = ScriptedServer::start(vec![
        call(
            "e",
            "edit_file",
            json!({"path": ".git/config", "search_block": "[core]", "replace_block": "[user]"}),
        ),
        Reply::text(&["ok"]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::AutoEdit);
    with_git_link(&h);
    h.prompt("edit").await;
    let (id, events) = h.next_confirm().await;
    assert_eq!(id, "e");
    assert_eq!(confirm_preview(&events)[0], "edit .git/config at line 1");
    h.decide(&id, Decision::Approve).await;
    h.turn().await;
    assert_eq!(
        std::fs::read_to_string(dir_of(&h).join(".git/config")).unwrap(),
        "[user]\n"
    );
}

#[tokio::test]
async fn approve_all_writes_into_git_without_asking() {
    let server = ScriptedServer::start(vec![
        call("r", "read_file", json!({"path": "docs/notes.md"})),
        call(
            "w",
            "write_file",
            json!({"path": "docs/notes.md", "content": "[user]\n"}),
        ),
        Reply::text(&["ok"]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::DangerouslyApproveAll);
    with_git_link(&h);
    h.prompt("go").await;
    let events = h.turn().await;
    assert!(!events.iter().any(|e| matches!(e, AgentEvent::Confirm(_))));
    assert_eq!(
        std::fs::read_to_string(dir_of(&h).join(".git/config")).unwrap(),
        "[user]\n"
    );
}

#[tokio::test]
async fn a_file_the_model_has_not_read_is_not_replaced_nor_put_to_the_person() {
    let server = ScriptedServer::start(vec![
        call(
            "w1",
            "write_file",
            json!({"path": "deps.txt", "content": "requests\n"}),
        ),
        call("r1", "read_file", json!({"path": "deps.txt"})),
        call(
            "w2",
            "write_file",
            json!({"path": "deps.txt", "content": "pytest\nrequests\n"}),
        ),
        Reply::text(&["added"]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    let file = dir_of(&h).join("deps.txt");
    std::fs::write(&file, "pytest\n").unwrap();
    h.prompt("add requests to the dependencies").await;
    // The blind write is answered without a confirmation; the one after
    // the read is put to the person.
    let (id, events) = h.next_confirm().await;
    assert_eq!(id, "w2");
    let st = statuses(&events);
    let Some(ToolStatus::Error(e)) = st.first() else {
        panic!("{events:#?}")
    };
    assert!(e.contains("you have not read it"), "{e}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "pytest\n");
    h.decide(&id, Decision::Approve).await;
    h.turn().await;
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "pytest\nrequests\n"
    );
    let answered = &server.requests()[1].body["messages"];
    let last = &answered[answered.as_array().unwrap().len() - 1];
    assert_eq!(last["tool_call_id"], "w1");
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("read_file it first"),
        "{last}"
    );
}

#[tokio::test]
async fn a_call_written_as_text_joins_the_conversation_as_a_canonical_call() {
    let server = ScriptedServer::start(vec![
        Reply::text(&[
            "Reading it.\n<tool_call>\n{\"name\": \"read_file\", ",
            "\"arguments\": {\"path\": \"notes.txt\"}}\n</tool_call>",
        ]),
        Reply::text(&["The file says hi."]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    std::fs::write(dir_of(&h).join("notes.txt"), "hi\n").unwrap();
    h.prompt("what do the notes say?").await;
    let events = h.turn().await;
    assert_eq!(statuses(&events), vec![ToolStatus::Ok]);
    let second = &server.requests()[1].body;
    let assistant = &second["messages"][2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["content"], "Reading it.\n");
    assert_eq!(assistant["tool_calls"][0]["id"], "c00000100");
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "read_file");
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"],
        json!(r#"{"path":"notes.txt"}"#)
    );
    assert_eq!(second["messages"][3]["role"], "tool");
    assert_eq!(second["messages"][3]["tool_call_id"], "c00000100");
    assert_eq!(tool_results(second)[0]["content"], json!("hi\n"));
}

#[tokio::test]
async fn a_server_that_refuses_the_tools_gets_them_in_the_prompt_from_then_on() {
    let server = ScriptedServer::start(vec![
        Reply::status(
            400,
            "application/json",
            r#"{"error":{"message":"Unrecognized request argument supplied: tools"}}"#,
        ),
        Reply::text(&[
            "Reading both.\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n```\n",
            "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b.txt\"}}\n```",
        ]),
        Reply::text(&["a and b."]),
        Reply::text(&["Still prompted."]),
    ])
    .await;
    let mut h = start_in_temp(&server.base_url(), ApprovalPolicy::Ask);
    std::fs::write(dir_of(&h).join("a.txt"), "a\n").unwrap();
    std::fs::write(dir_of(&h).join("b.txt"), "b\n").unwrap();
    h.prompt("what do the two files hold?").await;
    let events = h.turn().await;
    assert!(
        system_texts(&events)
            .iter()
            .any(|t| t.contains("offering them in the prompt instead (fenced syntax)")),
        "{events:#?}"
    );
    assert_eq!(statuses(&events), vec![ToolStatus::Ok, ToolStatus::Ok]);
    assert_eq!(reply_text(&events), "Reading both.\n\na and b.");
    let requests = server.requests();
    assert!(requests[0].body.get("tools").is_some());
    // The retry and every request after it: no tools field, no tool
    // role, the catalogue in the system prompt.
    for request in &requests[1..] {
        let body = &request.body;
        assert!(body.get("tools").is_none(), "{body}");
        assert!(body.get("tool_choice").is_none(), "{body}");
        // `Result of`, the fenced syntax's result, is plain English: no
        // request stops there.
        assert!(body.get("stop").is_none(), "{body}");
        let messages = body["messages"].as_array().unwrap();
        assert!(
            messages
                .iter()
                .all(|m| m["role"] != "tool" && m.get("tool_calls").is_none())
        );
        let system = messages[0]["content"].as_str().unwrap();
        assert!(system.starts_with("system prompt\n\n# Tools\n"), "{system}");
        assert!(system.contains("\"name\":\"read_file\""), "{system}");
    }
    // The calls written back as the syntax writes them, both results in
    // one user message after them.
    let third = requests[2].body["messages"].as_array().unwrap().clone();
    assert_eq!(third[2]["role"], "assistant");
    assert_eq!(
        third[2]["content"],
        "Reading both.\n\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\":\"a.txt\"}}\n```\n\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\":\"b.txt\"}}\n```"
    );
    assert_eq!(third[3]["role"], "user");
    let results = third[3]["content"].as_str().unwrap();
    assert!(
        results.starts_with("Result of read_file:\n```json\n{\"ok\":true")
            && results.contains("\"content\":\"b\\n\""),
        "{results}"
    );
    assert_eq!(third.len(), 4);
    // The next turn goes straight to the prompt.
    h.prompt("again").await;
    h.turn().await;
    assert_eq!(server.requests().len(), 4);
    // From the switch on, the prompted form is as stable as the API's.
    assert_prefix_stable(&server.requests()[1..]);
}
