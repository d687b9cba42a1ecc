//! Images named in a prompt (ADR 0055): sent as image content on every
//! wire, bounded, and left out when the model refuses them — the prompt
//! then goes again without them, and later prompts go without theirs.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use dashfloat::agent::ApprovalPolicy;
use dashfloat::bounds::{IMAGE_MAX_BYTES, IMAGES_PER_PROMPT_MAX};
use dashfloat::llm::wires::Wire;
use dashfloat::protocol::UiCommand;
use serde_json::Value;

use crate::support;
use support::agent::{AgentHarness, reply_text, setup, start_with, system_texts};
use support::server::{Reply, ScriptedServer};

/// A real 1×1 PNG, as an image tool writes one.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx\x9cc\xf8\xff\xff?\0\x05\xfe\x02\xfe\xa7\x35\x81\x84\0\0\0\0IEND\xaeB`\x82";

/// A minimal JPEG: start of image, a JFIF header, end of image.
const JPEG: &[u8] = b"\xff\xd8\xff\xe0\0\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0\xff\xd9";

/// What llama.cpp answers when it has no vision projector.
const NO_MMPROJ: &str = r#"{"error":{"code":400,"message":"image input is not supported - hint: if this is unexpected, you may need to provide the mmproj","type":"invalid_request_error"}}"#;

const WIRES: [Wire; 3] = [Wire::Chat, Wire::Responses, Wire::Anthropic];

fn agent(wire: Wire, server: &ScriptedServer, dir: &std::path::Path) -> AgentHarness {
    let mut s = setup(&server.base_url(), dir, ApprovalPolicy::Ask);
    if let Ok(endpoint) = &mut s.endpoint {
        endpoint.context.wire = wire;
    }
    start_with(s)
}

fn data_url(media_type: &str, bytes: &[u8]) -> String {
    format!("data:{media_type};base64,{}", STANDARD.encode(bytes))
}

/// The data URLs of the images a request (read back as chat's) sends.
fn images_sent(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|part| part["type"] == "image_url")
        .map(|part| part["image_url"]["url"].as_str().unwrap().to_owned())
        .collect()
}

/// The text of the request's last user message, its parts' texts joined.
fn last_words(body: &Value) -> String {
    let last = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap();
    match &last["content"] {
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n\n"),
        text => text.as_str().unwrap().to_owned(),
    }
}

#[tokio::test]
async fn an_image_named_in_a_prompt_goes_as_image_content_on_every_wire() {
    for wire in WIRES {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("shot.png"), PNG).unwrap();
        std::fs::write(dir.path().join("photo"), JPEG).unwrap();
        let server =
            ScriptedServer::speaking(wire, vec![Reply::text(&["A dot and a photo."])]).await;
        let mut h = agent(wire, &server, dir.path());
        h.prompt("what is in @shot.png and @photo?").await;
        let events = h.turn().await;
        assert_eq!(reply_text(&events), "A dot and a photo.", "{wire:?}");
        let notices = system_texts(&events);
        assert!(
            notices.contains(&format!("image shot.png ({} bytes)", PNG.len())),
            "{wire:?}: {notices:?}"
        );
        let requests = server.requests();
        assert_eq!(requests.len(), 1, "{wire:?}");
        let body = &requests[0].body;
        assert_eq!(
            images_sent(body),
            [data_url("image/png", PNG), data_url("image/jpeg", JPEG)],
            "{wire:?}: told by its bytes, not its name"
        );
        assert_eq!(last_words(body), "what is in @shot.png and @photo?");
        let raw = String::from_utf8_lossy(&requests[0].raw_body).into_owned();
        let form = match wire {
            Wire::Chat => r#"{"type":"image_url","image_url":{"url":"data:image/png;base64,"#,
            Wire::Responses => r#"{"type":"input_image","image_url":"data:image/png;base64,"#,
            Wire::Anthropic => {
                r#"{"type":"image","source":{"type":"base64","media_type":"image/png","data":""#
            }
        };
        assert!(raw.contains(form), "{wire:?}: {raw}");
    }
}

#[tokio::test]
async fn a_model_that_refuses_images_gets_the_prompt_without_them_and_no_later_ones() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("shot.png"), PNG).unwrap();
    std::fs::write(dir.path().join("photo.jpg"), JPEG).unwrap();
    let server = ScriptedServer::start(vec![
        Reply::status(400, "application/json", NO_MMPROJ),
        Reply::text(&["I cannot see it."]),
        Reply::text(&["Still no images."]),
        Reply::text(&["Now I see it."]),
    ])
    .await;
    let mut h = agent(Wire::Chat, &server, dir.path());
    h.prompt("what is in @shot.png?").await;
    let events = h.turn().await;
    assert_eq!(reply_text(&events), "I cannot see it.");
    let notices = system_texts(&events);
    assert!(
        notices.iter().any(|n| n
            .starts_with("the model does not take images (image input is not supported - hint: ")
            && n.contains("the prompt is sent again without them")),
        "{notices:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(images_sent(&requests[0].body), [data_url("image/png", PNG)]);
    assert!(images_sent(&requests[1].body).is_empty());
    assert_eq!(
        last_words(&requests[1].body),
        "what is in @shot.png?\n\n[image shot.png left out: the model does not take images]"
    );

    h.prompt("and @photo.jpg?").await;
    let events = h.turn().await;
    assert_eq!(reply_text(&events), "Still no images.");
    assert!(
        system_texts(&events).contains(
            &"image photo.jpg left out: the model does not take images (it refused one); /model chooses another"
                .to_owned()
        ),
        "{:?}",
        system_texts(&events)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "no request was refused again");
    assert!(images_sent(&requests[2].body).is_empty());

    h.send(UiCommand::SetModel {
        name: "a-vision-model".into(),
    })
    .await;
    h.prompt("and now @photo.jpg?").await;
    let events = h.turn().await;
    assert_eq!(reply_text(&events), "Now I see it.");
    assert_eq!(
        images_sent(&server.requests()[3].body),
        [data_url("image/jpeg", JPEG)],
        "another model is asked again"
    );
}

#[tokio::test]
async fn an_ordinary_bad_request_keeps_the_images_and_ends_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("shot.png"), PNG).unwrap();
    let server = ScriptedServer::start(vec![Reply::status(
        400,
        "application/json",
        r#"{"error":{"message":"temperature must be at most 2"}}"#,
    )])
    .await;
    let mut h = agent(Wire::Chat, &server, dir.path());
    h.prompt("what is in @shot.png?").await;
    let events = h.turn().await;
    assert!(
        system_texts(&events)
            .iter()
            .any(|n| n.contains("temperature must be at most 2"))
    );
    assert_eq!(server.requests().len(), 1, "not sent again");
}

#[tokio::test]
async fn an_image_past_the_bounds_is_left_out_with_a_notice() {
    let dir = tempfile::tempdir().unwrap();
    let mut large = PNG.to_vec();
    large.resize(IMAGE_MAX_BYTES as usize + 1, 0);
    std::fs::write(dir.path().join("large.png"), &large).unwrap();
    let mut text = String::from("look at @large.png");
    for n in 0..=IMAGES_PER_PROMPT_MAX {
        std::fs::write(dir.path().join(format!("i{n}.png")), PNG).unwrap();
        text.push_str(&format!(" @i{n}.png"));
    }
    let server = ScriptedServer::start(vec![Reply::text(&["Seen."])]).await;
    let mut h = agent(Wire::Chat, &server, dir.path());
    h.prompt(&text).await;
    let events = h.turn().await;
    let notices = system_texts(&events);
    assert!(
        notices.contains(
            &"image large.png (3.75 MiB) left out: an image goes to the model only up to 3.75 MiB"
                .to_owned()
        ),
        "{notices:?}"
    );
    assert!(
        notices.contains(&format!(
            "image i{IMAGES_PER_PROMPT_MAX}.png left out: one prompt takes at most {IMAGES_PER_PROMPT_MAX} images"
        )),
        "{notices:?}"
    );
    let sent = images_sent(&server.requests()[0].body);
    assert_eq!(sent.len(), IMAGES_PER_PROMPT_MAX);
    assert!(sent.iter().all(|url| *url == data_url("image/png", PNG)));
}

#[tokio::test]
async fn a_screenshot_pasted_from_outside_the_project_is_attached_and_nothing_else_there() {
    let project = tempfile::tempdir().unwrap();
    // Not hidden, as a temporary folder's name is: a bare name in a
    // hidden folder is never attached.
    let desktop = tempfile::Builder::new().prefix("desk").tempdir().unwrap();
    let shot = desktop.path().join("Screenshot at 10.00.png");
    std::fs::write(&shot, PNG).unwrap();
    let notes = desktop.path().join("notes.txt");
    std::fs::write(&notes, "private").unwrap();
    let server = ScriptedServer::start(vec![Reply::text(&["A dot."])]).await;
    let mut h = agent(Wire::Chat, &server, project.path());
    h.prompt(&format!(
        "what is this '{}' and {}",
        shot.display(),
        notes.display()
    ))
    .await;
    let events = h.turn().await;
    assert_eq!(reply_text(&events), "A dot.");
    assert!(system_texts(&events).contains(&format!(
        "image Screenshot at 10.00.png ({} bytes)",
        PNG.len()
    )));
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "no file was read for the model");
    assert_eq!(images_sent(&requests[0].body), [data_url("image/png", PNG)]);
}

/// Only the person's own words reach outside the project: the same
/// screenshot named in a prompt a project's command made, or printed by
/// a prompt's hook, is not read.
#[tokio::test]
async fn words_that_are_not_the_persons_name_no_image_outside_the_project() {
    let project = tempfile::tempdir().unwrap();
    let desktop = tempfile::Builder::new().prefix("desk").tempdir().unwrap();
    let shot = desktop.path().join("shot.png");
    std::fs::write(&shot, PNG).unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text(&["Nothing to see."]),
        Reply::text(&["Still nothing."]),
    ])
    .await;
    let mut s = setup(&server.base_url(), project.path(), ApprovalPolicy::Ask);
    s.hooks = vec![dashfloat::hooks::Hook {
        event: dashfloat::hooks::HookEvent::UserPromptSubmit,
        command: format!("echo 'see {}'", shot.display()),
        tools: None,
        timeout: std::time::Duration::from_secs(10),
        whose: dashfloat::hooks::Whose::Person,
    }];
    let mut h = start_with(s);
    h.send(UiCommand::ProjectPrompt {
        text: format!("describe {}", shot.display()),
    })
    .await;
    let events = h.turn().await;
    assert_eq!(reply_text(&events), "Nothing to see.");
    h.prompt("what now?").await;
    let events = h.turn().await;
    assert_eq!(reply_text(&events), "Still nothing.");
    let requests = server.requests();
    for request in &requests {
        assert!(images_sent(&request.body).is_empty());
    }
    // The hook's words did reach the model, after the person's.
    let last = last_words(&requests[1].body);
    assert!(last.starts_with("what now?"), "{last}");
    assert!(last.contains(&format!("see {}", shot.display())), "{last}");
}

/// A saved session keeps its images: resumed, the next request sends
/// them again with the earlier prompt (a session saved before images
/// were kept loads too: `llm::wire`'s own tests).
#[tokio::test]
async fn a_session_keeps_its_images_when_resumed() {
    use super::sessions::{settled, start_saving};
    use dashfloat::session::{OpenSession, SessionStore};

    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("shot.png"), PNG).unwrap();
    let store = SessionStore::at(home.path().join("sessions"));
    let server = ScriptedServer::start(vec![Reply::text(&["A dot."])]).await;
    let mut h = start_saving(&server, project.path(), &store, OpenSession::New);
    h.prompt("what is in @shot.png?").await;
    h.turn().await;
    settled(&mut h).await;
    h.send(UiCommand::Quit).await;
    h.task.await.unwrap();
    let id = std::fs::read_dir(store.dir())
        .unwrap()
        .flatten()
        .find_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_suffix(".json").map(str::to_owned)
        })
        .unwrap();
    let saved = store.load(&id).unwrap();
    assert_eq!(saved.messages[1].images[0].name, "shot.png");

    let server2 = ScriptedServer::start(vec![Reply::text(&["Still a dot."])]).await;
    let mut h2 = start_saving(&server2, project.path(), &store, OpenSession::Resume(id));
    h2.prompt("and now?").await;
    h2.turn().await;
    assert_eq!(
        images_sent(&server2.requests()[0].body),
        [data_url("image/png", PNG)]
    );
}
