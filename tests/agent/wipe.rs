//! A write that would delete most of a file (ADR 0046): refused before
//! anyone is asked under every policy; said on purpose, it is put to the
//! person under every policy, approve-all too, and never run headless.

use dashfloat::agent::ApprovalPolicy;
use dashfloat::protocol::{AgentEvent, Decision, UiCommand};
use serde_json::json;

use crate::auto::{confirms, result_of};
use crate::support;
use support::agent::{setup, start_with};
use support::server::{Reply, ScriptedServer};

/// An 80-line history, as a person's changelog is.
fn history() -> String {
    (1..=80).map(|n| format!("- change {n}\n")).collect()
}

#[tokio::test]
async fn a_wiping_write_is_refused_unasked_and_said_on_purpose_it_is_always_asked() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("HISTORY.md");
    std::fs::write(&file, history()).unwrap();
    let server = ScriptedServer::start(Vec::new()).await;
    let mut h = start_with(setup(
        &server.base_url(),
        dir.path(),
        ApprovalPolicy::DangerouslyApproveAll,
    ));
    let wipe = json!({"path": "HISTORY.md", "content": "# History\n\nNew section.\n"});
    server.push_reply(Reply::tool_call(
        "r1",
        "read_file",
        &[r#"{"path":"HISTORY.md"}"#],
    ));
    server.push_reply(Reply::tool_call("w1", "write_file", &[&wipe.to_string()]));
    server.push_reply(Reply::text(&["done"]));
    h.prompt("add a section at the top").await;
    let events = h.turn().await;
    assert!(confirms(&events).is_empty(), "{events:#?}");
    let refused = result_of(&server, "w1");
    assert_eq!(refused["ok"], false, "{refused:#}");
    let error = refused["error"].as_str().unwrap();
    assert!(
        error.contains(
            "has 80 lines and this content keeps only 0 of them, so the write would delete 80"
        ) && error.contains("insert_at"),
        "{error}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), history());

    // Said on purpose: asked even under approve-all and auto-edit, and
    // the preview says what it deletes.
    let mut on_purpose = wipe.clone();
    on_purpose["replace_whole_file"] = json!(true);
    for (n, policy) in [
        ApprovalPolicy::DangerouslyApproveAll,
        ApprovalPolicy::AutoEdit,
    ]
    .into_iter()
    .enumerate()
    {
        h.send(UiCommand::SetApproval(policy)).await;
        h.until(|e| matches!(e, AgentEvent::ApprovalChanged(_)))
            .await;
        let id = format!("p{n}");
        server.push_reply(Reply::tool_call(
            &id,
            "write_file",
            &[&on_purpose.to_string()],
        ));
        server.push_reply(Reply::text(&["done"]));
        h.prompt("replace it whole").await;
        let (asked, events) = h.next_confirm().await;
        let preview = confirms(&events)[0]
            .preview
            .iter()
            .map(|l| l.text.clone())
            .collect::<Vec<_>>();
        assert!(
            preview.contains(&"(replaces the whole file: deletes 80 of its 80 lines)".to_owned()),
            "{preview:#?}"
        );
        if n == 0 {
            h.decide(&asked, Decision::Reject).await;
            h.turn().await;
            assert_eq!(std::fs::read_to_string(&file).unwrap(), history());
        } else {
            h.decide(&asked, Decision::Approve).await;
            h.turn().await;
            let done = result_of(&server, &id);
            assert_eq!(
                done["changed"], "added 3 lines and removed 80; the file has 3 lines",
                "{done:#}"
            );
        }
    }
}

#[tokio::test]
async fn headless_a_write_said_to_replace_a_file_whole_is_not_run_and_says_how_to_edit() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("HISTORY.md");
    std::fs::write(&file, history()).unwrap();
    let server = ScriptedServer::start(Vec::new()).await;
    let mut s = setup(
        &server.base_url(),
        dir.path(),
        ApprovalPolicy::DangerouslyApproveAll,
    );
    s.headless = true;
    let mut h = start_with(s);
    let args = json!({"path": "HISTORY.md", "content": "new\n", "replace_whole_file": true});
    server.push_reply(Reply::tool_call(
        "r1",
        "read_file",
        &[r#"{"path":"HISTORY.md"}"#],
    ));
    server.push_reply(Reply::tool_call("w1", "write_file", &[&args.to_string()]));
    server.push_reply(Reply::text(&["done"]));
    h.prompt("replace it").await;
    h.turn().await;
    let result = result_of(&server, "w1");
    assert_eq!(result["code"], "rejected", "{result:#}");
    let error = result["error"].as_str().unwrap();
    assert!(
        error.contains("always needs the person") && error.contains("edit_file"),
        "{error}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), history());
}

/// A turn's own change is kept (ADR 0051): after the 1.5B appended a
/// line it wrote the file again, then back without the line. Within the
/// turn, the same write is answered that the change is made and the
/// write back is refused, before anyone is asked; the next prompt may
/// put it back.
#[tokio::test]
async fn a_turn_that_made_its_change_is_told_so_and_cannot_undo_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("requirements.txt");
    std::fs::write(&file, "requests==2.31.0\n").unwrap();
    let server = ScriptedServer::start(Vec::new()).await;
    let mut h = start_with(setup(
        &server.base_url(),
        dir.path(),
        ApprovalPolicy::AutoEdit,
    ));
    let added = json!({"path": "requirements.txt", "content": "requests==2.31.0\npytest>=7\n"});
    let back = json!({"path": "requirements.txt", "content": "requests==2.31.0\n"});
    server.push_reply(Reply::tool_call(
        "r1",
        "read_file",
        &[r#"{"path":"requirements.txt"}"#],
    ));
    server.push_reply(Reply::tool_call("w1", "write_file", &[&added.to_string()]));
    server.push_reply(Reply::tool_call("w2", "write_file", &[&added.to_string()]));
    server.push_reply(Reply::tool_call("w3", "write_file", &[&back.to_string()]));
    server.push_reply(Reply::text(&["added"]));
    h.prompt("add pytest>=7 to requirements.txt").await;
    let events = h.turn().await;
    assert!(confirms(&events).is_empty(), "{events:#?}");
    assert_eq!(result_of(&server, "w1")["ok"], true);
    let again = result_of(&server, "w2");
    assert!(
        again["error"]
            .as_str()
            .unwrap()
            .contains("which your change earlier in this turn put there"),
        "{again:#}"
    );
    let undo = result_of(&server, "w3");
    assert!(
        undo["error"].as_str().unwrap().contains("undoing it"),
        "{undo:#}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "requests==2.31.0\npytest>=7\n"
    );

    server.push_reply(Reply::tool_call("w4", "write_file", &[&back.to_string()]));
    server.push_reply(Reply::text(&["taken out"]));
    h.prompt("take it out again").await;
    h.turn().await;
    assert_eq!(result_of(&server, "w4")["ok"], true);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "requests==2.31.0\n"
    );
}
