//! What the server can tell about itself at start-up: the context window
//! (llama.cpp's `/props`, vLLM's `/models`) and the models it serves. Each
//! question is one small GET, bounded in time and size; any failure is an
//! answer of "unknown", so the configured or default values stand. ADR 0020.

use std::time::Duration;

use serde::Deserialize;

use super::adapters::Syntax;
use super::stream::{Endpoint, read_bounded};

/// The longest a discovery request may take, body included. Short: the
/// person may be typing the first prompt meanwhile. ADR 0020.
pub const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(5);
/// The most of a discovery response read; a longer one does not parse and
/// counts as no answer. ADR 0020.
pub const DISCOVERY_BODY_MAX_BYTES: usize = 64 * 1024;
/// The most model names kept from `/models` (and listed to the person).
/// ADR 0020.
pub const SERVED_MODELS_MAX: usize = 20;

/// What to ask the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Questions {
    /// The context window (none was configured).
    pub window: bool,
    /// The models served (none was configured for a base URL the person
    /// set).
    pub models: bool,
    /// Whether it is llama.cpp, which says how far it has read a prompt
    /// and can save its cache (ADR 0032, 0034): asked of a server the cache
    /// is warmed for, even when the window was configured.
    pub kind: bool,
}

/// What the server said; `None` / empty where it said nothing usable.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Answers {
    /// The context window of the model in use, in tokens.
    pub context_window: Option<u64>,
    /// The models served, at most [`SERVED_MODELS_MAX`], in the server's
    /// order.
    pub served: Vec<String>,
    /// Whether the server listed more models than were kept.
    pub more_served: bool,
    /// The server answered llama.cpp's `/props`: it is llama.cpp, reports
    /// how far it has read a prompt when asked, and may save its slot.
    pub llama_cpp: bool,
    /// The marker the server's chat template opens a tool result with
    /// (llama.cpp's `/props` shows the template), when it is one a reply
    /// has no reason to hold: requests stop there (ADR 0027).
    pub result_opener: Option<&'static str>,
    /// What went wrong, for the log only.
    pub problems: Vec<String>,
}

/// llama.cpp's `/props`, the part used.
#[derive(Debug, Deserialize)]
struct Props {
    default_generation_settings: GenerationSettings,
    #[serde(default)]
    chat_template: Option<String>,
}

#[derive(Debug, Deserialize)]
struct GenerationSettings {
    n_ctx: u64,
}

/// `/models` (OpenAI's shape; vLLM adds `max_model_len`).
#[derive(Debug, Deserialize)]
struct ModelList {
    data: Vec<ModelCard>,
}

#[derive(Debug, Deserialize)]
struct ModelCard {
    id: String,
    #[serde(default)]
    max_model_len: Option<u64>,
}

/// Asks the server what `questions` want to know about `model` (the name
/// in use; when models are asked for and exactly one is served, that one).
/// At most one request per endpoint.
pub async fn ask(endpoint: &Endpoint, model: &str, questions: Questions) -> Answers {
    let mut answers = Answers::default();
    if questions.window || questions.kind {
        match get::<Props>(
            endpoint,
            &crate::base_url::server(&endpoint.context.base_url, "/props"),
        )
        .await
        {
            Ok(props) => {
                answers.llama_cpp = true;
                answers.result_opener = props
                    .chat_template
                    .as_deref()
                    .and_then(Syntax::result_opener_in);
                match props.default_generation_settings.n_ctx {
                    0 => answers.problems.push("/props: n_ctx is 0".to_string()),
                    n_ctx => answers.context_window = Some(n_ctx).filter(|_| questions.window),
                }
            }
            Err(why) => answers.problems.push(format!("/props: {why}")),
        }
    }
    if !(questions.models || questions.window && answers.context_window.is_none()) {
        return answers;
    }
    let url = endpoint.context.wire.models_url(&endpoint.context.base_url);
    match get::<ModelList>(endpoint, &url).await {
        Ok(list) => {
            let in_use = match list.data.as_slice() {
                [only] if questions.models => only.id.as_str(),
                _ => model,
            };
            if questions.window && answers.context_window.is_none() {
                answers.context_window = list
                    .data
                    .iter()
                    .find(|card| card.id == in_use)
                    .and_then(|card| card.max_model_len)
                    .filter(|n| *n > 0);
            }
            if questions.models {
                answers.more_served = list.data.len() > SERVED_MODELS_MAX;
                answers.served = list
                    .data
                    .into_iter()
                    .take(SERVED_MODELS_MAX)
                    .map(|card| card.id)
                    .collect();
            }
        }
        Err(why) => answers.problems.push(format!("/models: {why}")),
    }
    answers
}

/// One GET with the provider's credentials, parsed as `T`, all of it
/// within [`DISCOVERY_TIMEOUT`].
async fn get<T: for<'de> Deserialize<'de>>(endpoint: &Endpoint, url: &str) -> Result<T, String> {
    let exchange = async {
        let request = endpoint.authorised(endpoint.client.get(url));
        let response = request
            .send()
            .await
            .map_err(|e| e.without_url().to_string())?;
        if !response.status().is_success() {
            return Err(format!("HTTP {}", response.status().as_u16()));
        }
        let body = read_bounded(response, DISCOVERY_TIMEOUT, DISCOVERY_BODY_MAX_BYTES).await;
        serde_json::from_slice(&body).map_err(|e| format!("unreadable answer: {e}"))
    };
    tokio::time::timeout(DISCOVERY_TIMEOUT, exchange)
        .await
        .map_err(|_| format!("no answer within {}s", DISCOVERY_TIMEOUT.as_secs()))?
}
