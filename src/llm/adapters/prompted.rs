//! Tools offered in the prompt, for a server that refuses the API's
//! `tools` field or `tool` role: the catalogue goes into the system
//! prompt, past calls are written back as the syntax writes them, and
//! results come back as user text in the syntax's own result format. The
//! replies are read by the same adapters. ADR 0031.

use serde_json::Value;

use super::Syntax;

impl Syntax {
    /// A call written the way this syntax writes one; `arguments` is the
    /// arguments' JSON text as the model sent it.
    pub fn write_call(self, name: &str, arguments: &str) -> String {
        let name_json = Value::String(name.to_owned());
        match self {
            Syntax::Fenced => {
                format!("```json\n{{\"name\": {name_json}, \"arguments\": {arguments}}}\n```")
            }
            Syntax::Hermes => format!(
                "<tool_call>\n{{\"name\": {name_json}, \"arguments\": {arguments}}}\n</tool_call>"
            ),
            Syntax::Mistral => {
                format!("[TOOL_CALLS][{{\"name\": {name_json}, \"arguments\": {arguments}}}]")
            }
            Syntax::Llama => {
                format!("<|python_tag|>{{\"name\": {name_json}, \"parameters\": {arguments}}}")
            }
            Syntax::Deepseek => format!(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{arguments}\
                 <｜tool▁call▁end｜><｜tool▁calls▁end｜>"
            ),
            Syntax::Glm => glm_call(name, arguments),
        }
    }

    /// A tool's result as the syntax's templates hand it back to the model.
    pub fn write_result(self, name: &str, result: &str) -> String {
        match self {
            Syntax::Fenced => format!("Result of {name}:\n```json\n{result}\n```"),
            Syntax::Hermes | Syntax::Glm => {
                format!("<tool_response>\n{result}\n</tool_response>")
            }
            Syntax::Mistral => format!("[TOOL_RESULTS]{{\"content\": {result}}}[/TOOL_RESULTS]"),
            Syntax::Llama => format!("Result of {name}: {result}"),
            Syntax::Deepseek => {
                format!("<｜tool▁output▁begin｜>{result}<｜tool▁output▁end｜>")
            }
        }
    }

    /// The marker that opens a tool result in this syntax's templates,
    /// when it is markup no reply has a reason to hold: the model writing
    /// it is making up a result, so a request stops there. `Result of` is
    /// plain English and opens none.
    pub fn result_opener(self) -> Option<&'static str> {
        match self {
            Syntax::Hermes | Syntax::Glm => Some("<tool_response>"),
            Syntax::Mistral => Some("[TOOL_RESULTS]"),
            Syntax::Deepseek => Some("<｜tool▁output▁begin｜>"),
            Syntax::Fenced | Syntax::Llama => None,
        }
    }

    /// The result opener a chat template writes, if it writes one of the
    /// syntaxes' openers: the server then renders results that way, and a
    /// model behind it that writes one is making a result up.
    pub fn result_opener_in(template: &str) -> Option<&'static str> {
        Syntax::ALL
            .into_iter()
            .filter_map(Syntax::result_opener)
            .find(|opener| template.contains(opener))
    }

    /// What the system prompt adds: the tools (`tools` is the request's
    /// `tools` array) and how to call one.
    pub fn instructions(self, tools: &Value) -> String {
        let example = self.write_call("TOOL_NAME", "{\"ARGUMENT\": \"VALUE\"}");
        let mut text = format!(
            "\n\n# Tools\n\nTo call a tool, write exactly this, with the tool's name and its \
             arguments as JSON, then stop; the result comes back in the next message:\n\
             {example}\n\nThe tools, as JSON:\n"
        );
        for tool in tools.as_array().into_iter().flatten() {
            text.push_str(&tool.get("function").unwrap_or(tool).to_string());
            text.push('\n');
        }
        text
    }
}

/// GLM's pairs: a string value as it is, any other value as JSON. Text
/// that is not a JSON object (a malformed call, sent back as the model
/// wrote it) becomes one `arguments` pair, so nothing is lost.
fn glm_call(name: &str, arguments: &str) -> String {
    let mut text = format!("<tool_call>{name}\n");
    let pairs: Vec<(String, String)> = match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => map
            .into_iter()
            .map(|(key, value)| match value {
                Value::String(s) => (key, s),
                other => (key, other.to_string()),
            })
            .collect(),
        _ => vec![("arguments".to_owned(), arguments.to_owned())],
    };
    for (key, value) in pairs {
        text.push_str(&format!(
            "<arg_key>{key}</arg_key>\n<arg_value>{value}</arg_value>\n"
        ));
    }
    text.push_str("</tool_call>");
    text
}
