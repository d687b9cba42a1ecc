//! The fixed prefix of every request — the system prompt and the tool
//! schemas — counted in a llama-server's own tokens, through its chat
//! template (`/apply-template`, then `/tokenize`). Used by the real-model
//! test that guards the budget and by `benches/latency.rs`.

use serde_json::{Value, json};

/// The fixed prefix's tokens on the server at `base_url` (`…/v1`): a
/// system and empty user message with the tools, less the same without
/// system text or tools, so only what dashfloat sends is counted (the
/// template's words about tools included).
pub async fn prefix_tokens(base_url: &str) -> usize {
    let user = json!({"role": "user", "content": ""});
    let whole = template_tokens(
        base_url,
        json!({
            "messages": [{"role": "system", "content": dashfloat::agent::system_prompt()}, user],
            "tools": dashfloat::tools::definitions(),
        }),
    )
    .await;
    let framing = template_tokens(
        base_url,
        json!({"messages": [{"role": "system", "content": ""}, user]}),
    )
    .await;
    whole - framing
}

/// Tokens of `request` (a chat request's `messages` and `tools`) as the
/// server's template renders it.
async fn template_tokens(base_url: &str, request: Value) -> usize {
    let root = base_url.trim_end_matches('/').trim_end_matches("/v1");
    let client = reqwest::Client::new();
    let prompt: Value = client
        .post(format!("{root}/apply-template"))
        .json(&request)
        .send()
        .await
        .expect("apply-template")
        .json()
        .await
        .expect("apply-template answer");
    let tokens: Value = client
        .post(format!("{root}/tokenize"))
        .json(&json!({"content": prompt["prompt"], "parse_special": true}))
        .send()
        .await
        .expect("tokenize")
        .json()
        .await
        .expect("tokenize answer");
    tokens["tokens"].as_array().expect("tokens").len()
}
