//! What the agent learned of the server it talks to, by asking (ADR 0020)
//! or by being refused (ADR 0031, 0055), and what that makes of every
//! request.

use crate::llm::adapters::Syntax;

/// The server's facts, as far as they are known.
#[derive(Debug, Default)]
pub(super) struct ServerFacts {
    /// The server refused the API's tools: from then on they are offered
    /// in the prompt, calls written in this syntax (ADR 0031).
    pub(super) prompted: Option<Syntax>,
    /// The server is llama.cpp: requests ask it how far it has read, and
    /// its slot may be saved with the session (ADR 0034).
    pub(super) llama_cpp: bool,
    /// The marker the server's chat template opens a tool result with.
    pub(super) template_result_opener: Option<&'static str>,
    /// The model refused images: later prompts go without theirs, until
    /// `/model` chooses another (ADR 0055).
    pub(super) images_refused: bool,
}

impl ServerFacts {
    /// Where every reply stops: where the model starts to write a tool
    /// result itself — its syntax's marker when the tools are offered in
    /// the prompt, the chat template's otherwise.
    pub(super) fn stop(&self) -> Option<[&'static str; 1]> {
        self.prompted
            .and_then(Syntax::result_opener)
            .or(self.template_result_opener)
            .map(|opener| [opener])
    }
}
