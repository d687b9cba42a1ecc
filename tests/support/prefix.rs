//! The fixed prefix — the system prompt and the tool schemas — in a
//! llama.cpp server's own tokens, through its own chat template (issue 12's
//! budget, ADR 0033). Shared by the real-model test that guards the budget
//! and the latency bench that reports it.

use serde_json::{Value, json};

/// The prefix's tokens on the server at `url` (a `.../v1` base URL): the
/// system prompt and tools through `/apply-template`, then `/tokenize`,
/// less the template's framing of an empty system and user message.
pub async fn prefix_tokens(url: &str) -> usize {
    dashfloat::llm::install_crypto_provider();
    let client = reqwest::Client::new();
    let post = async |path: &str, body: Value| -> Value {
        let response = client
            .post(dashfloat::base_url::server(url, path))
            .json(&body)
            .send();
        response.await.unwrap().json().await.unwrap()
    };
    let count = async |body: Value| -> usize {
        let prompt = post("/apply-template", body).await;
        let content = json!({"content": prompt["prompt"], "parse_special": true});
        post("/tokenize", content).await["tokens"]
            .as_array()
            .unwrap()
            .len()
    };
    let user = json!({"role": "user", "content": ""});
    let whole = count(json!({
        "messages": [{"role": "system", "content": dashfloat::agent::system_prompt()}, user],
        "tools": dashfloat::tools::Registry::builtin().definitions(),
    }))
    .await;
    let framing = count(json!({"messages": [{"role": "system", "content": ""}, user]})).await;
    whole - framing
}
