//! The environment a command runs with: the agent's own, minus credentials,
//! plus the variables the person hands to commands on purpose. A build
//! script, a test or a model-written `env | curl ...` must not be able to
//! read the provider's key or any other credential it did not need.
//! `docs/decisions/0013-command-runner.md`.

use std::ffi::{OsStr, OsString};

use crate::secret::{Secret, has_userinfo};

use super::analyser::EnvSetting;

/// Credentials whose names the word rule of [`is_secret`] does not catch.
/// ADR 0013.
const SECRET_VARS: &[&str] = &[
    "AWS_ACCESS_KEY_ID",
    "SECRET_KEY_BASE",
    "SSHPASS",
    "BW_SESSION",
    "DOCKER_AUTH_CONFIG",
    "GOOGLE_CLOUD_KEYFILE_JSON",
];

/// Beginnings and endings of names that hold a credential whatever the
/// rest says: a password manager's session per account
/// (`OP_SESSION_my`), a connection string with its password
/// (`AZURE_STORAGE_CONNECTION_STRING`). ADR 0013.
const SECRET_PREFIXES: &[&str] = &["OP_SESSION_"];
const SECRET_SUFFIXES: &[&str] = &["_CONNECTION_STRING"];

/// Words that mark a credential wherever they stand in a name, not only
/// last: tools put what the token is for after it
/// (`TF_TOKEN_app_terraform_io`, `POETRY_PYPI_TOKEN_PYPI`). ADR 0013.
const SECRET_ANYWHERE: &[&str] = &["TOKEN", "SECRET", "PASSWORD", "PASSWD"];

/// Last words of a name that mark a credential, bare (`TOKEN`) or after a
/// prefix (`GITHUB_TOKEN`, `MYSQL_PWD`). Whole words only, so
/// `SSH_AUTH_SOCK`, `XAUTHORITY` and `KEYMAP` are not credentials. ADR 0013.
const SECRET_WORDS: &[&str] = &[
    "KEY",
    "KEYS",
    "APIKEY",
    "TOKEN",
    "TOKENS",
    "PAT",
    "SECRET",
    "SECRETS",
    "PASS",
    "PASSWORD",
    "PASSWORDS",
    "PASSWD",
    "PASSPHRASE",
    "PWD",
    "CREDENTIAL",
    "CREDENTIALS",
    "AUTH",
];

/// Last words that only say which of several a credential is
/// (`OPENAI_API_KEY_2`, `STRIPE_SECRET_KEY_LIVE`): passed over to find the
/// word that says what it is, as are numbers and `V2`-style versions.
/// ADR 0013.
const QUALIFIER_WORDS: &[&str] = &[
    "LIVE",
    "TEST",
    "PROD",
    "PRODUCTION",
    "DEV",
    "STAGING",
    "OLD",
    "NEW",
    "PRIMARY",
    "SECONDARY",
    "BACKUP",
];

/// Endings that mark a credential even inside a word (`PGPASSWORD`,
/// `NGROK_AUTHTOKEN`). ADR 0013.
const SECRET_ENDINGS: &[&str] = &["PASSWORD", "PASSWD", "TOKEN"];

/// Names that end in a secret word but are not credentials: the shell's
/// working directory. ADR 0013.
const NOT_SECRET: &[&str] = &["PWD"];

/// Beginnings of names that end in a secret word and a qualifier but are
/// not credentials: git's configuration from the environment
/// (`GIT_CONFIG_KEY_0` names a key such as `safe.directory`; stripping it
/// while `GIT_CONFIG_COUNT` stays makes every git command fail). ADR 0013.
const NOT_SECRET_PREFIXES: &[&str] = &["GIT_CONFIG_KEY_"];

/// Whether a variable name marks a credential: its last `_`-separated word
/// (qualifiers such as `_2` or `_LIVE` passed over) is one of the secret
/// words (`API_KEY`, `TOKEN`, `MYSQL_PWD`, `OPENAI_API_KEY_2`) or ends in
/// `PASSWORD`/`PASSWD`/`TOKEN` (`PGPASSWORD`, `NGROK_AUTHTOKEN`), any word
/// is `TOKEN`, `SECRET`, `PASSWORD` or `PASSWD`, it begins or ends as a
/// credential's name does, or it is one of [`SECRET_VARS`]; never `PWD`
/// itself. Case does not matter.
pub fn is_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if NOT_SECRET.contains(&upper.as_str())
        || NOT_SECRET_PREFIXES.iter().any(|p| upper.starts_with(p))
    {
        return false;
    }
    let last = upper
        .rsplit('_')
        .find(|word| !is_qualifier(word))
        .unwrap_or(&upper);
    SECRET_VARS.contains(&upper.as_str())
        || SECRET_WORDS.contains(&last)
        || SECRET_ENDINGS.iter().any(|e| last.ends_with(e))
        || upper.split('_').any(|word| SECRET_ANYWHERE.contains(&word)) && !names_a_place(&upper)
        || SECRET_PREFIXES.iter().any(|p| upper.starts_with(p))
        || SECRET_SUFFIXES.iter().any(|s| upper.ends_with(s))
}

/// Whether a name ends in a word that says it holds where something is
/// (`AWS_WEB_IDENTITY_TOKEN_FILE`, `PASSWORD_STORE_DIR`), not the thing.
fn names_a_place(upper: &str) -> bool {
    upper
        .rsplit('_')
        .next()
        .is_some_and(|last| PLACE_WORDS.contains(&last))
}

/// Last words of names that hold a place. ADR 0013.
const PLACE_WORDS: &[&str] = &["FILE", "DIR", "PATH"];

/// Whether a name's word only says which credential of several it is.
fn is_qualifier(word: &str) -> bool {
    let number = |digits: &str| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    QUALIFIER_WORDS.contains(&word) || number(word) || word.strip_prefix('V').is_some_and(number)
}

/// Whether a variable holds a credential: by its name ([`is_secret`]) or
/// by its value, a URL with userinfo (`DATABASE_URL=postgres://u:pw@db`,
/// `HTTPS_PROXY=http://u:pw@proxy`).
pub fn is_secret_var(name: &OsStr, value: &OsStr) -> bool {
    is_secret(&name.to_string_lossy()) || has_userinfo(&value.to_string_lossy())
}

/// `base` without its credentials — every [`is_secret_var`] variable and
/// every one named in `extra` (the key variable the person configured,
/// which may have any name) — plus `pass`, the variables the person hands
/// to commands on purpose (`[exec] pass_env`), which win over `base`.
pub fn child_env(
    base: impl IntoIterator<Item = (OsString, OsString)>,
    extra: &[String],
    pass: &[(OsString, Secret<OsString>)],
) -> Vec<(OsString, OsString)> {
    base.into_iter()
        .filter(|(name, value)| {
            !is_secret_var(name, value)
                && !extra.iter().any(|e| OsStr::new(e) == name)
                && !pass.iter().any(|(p, _)| p == name)
        })
        .chain(pass.iter().map(|(n, v)| (n.clone(), v.expose().clone())))
        .collect()
}

/// `env` with `settings` applied in order: variables set to a value or
/// removed, as the analyser asks for a line it allowed (ADR 0025).
pub fn with_settings(
    mut env: Vec<(OsString, OsString)>,
    settings: &[EnvSetting],
) -> Vec<(OsString, OsString)> {
    for setting in settings {
        let name = match setting {
            EnvSetting::Set(name, _) | EnvSetting::Unset(name) => OsStr::new(name),
        };
        env.retain(|(n, _)| n != name);
        if let EnvSetting::Set(name, value) = setting {
            env.push((OsString::from(name), OsString::from(value)));
        }
    }
    env
}
