//! The environment a command runs with: the agent's own, minus credentials.
//! A build script, a test or a model-written `env | curl ...` must not be
//! able to read the provider's key. `docs/decisions/0013-command-runner.md`.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

/// Variables that are always removed from a command's environment: the
/// providers' keys and other well-known credentials. ADR 0013.
pub const SECRET_VARS: &[&str] = &[
    "OPENAI_API_KEY",
    "DASHFLOAT_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENROUTER_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
    "TOGETHER_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITLAB_TOKEN",
    "NPM_TOKEN",
    "CARGO_REGISTRY_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",
];

/// Name endings that mark a credential whatever its prefix
/// (`FOO_API_KEY`, `BAR_TOKEN`...). Erring towards removal: a command that
/// needs one can be given it explicitly by the person. ADR 0013.
const SECRET_SUFFIXES: &[&str] = &[
    "_API_KEY",
    "_APIKEY",
    "_SECRET",
    "_SECRET_KEY",
    "_ACCESS_KEY",
    "_TOKEN",
    "_PASSWORD",
];

/// Whether a variable name is a credential by [`SECRET_VARS`] or by its
/// ending.
pub fn is_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_VARS.contains(&upper.as_str()) || SECRET_SUFFIXES.iter().any(|s| upper.ends_with(s))
}

/// `base` without its credentials: every [`is_secret`] variable and every
/// one named in `extra` (the key variable the person configured, which may
/// have any name).
pub fn child_env(
    base: impl IntoIterator<Item = (OsString, OsString)>,
    extra: &[String],
) -> Vec<(OsString, OsString)> {
    base.into_iter()
        .filter(|(name, _)| {
            let text = String::from_utf8_lossy(name.as_bytes());
            !is_secret(&text) && !extra.iter().any(|e| e.as_str() == text)
        })
        .collect()
}
