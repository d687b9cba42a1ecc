//! Which variables count as credentials, and the environment a command
//! gets: credentials removed, the ones the person passes on purpose added.

use std::ffi::OsString;
use std::time::Duration;

use crate::support::calls::validate;
use dashfloat::secret::Secret;
use dashfloat::tools::{
    EnvSetting, ToolContext, child_env, execute, is_secret, is_secret_var, with_settings,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::json_of;

#[test]
fn common_credential_names_are_secret() {
    for name in [
        "API_KEY",
        "OPENAI_KEY",
        "OPENAI_API_KEY",
        "PGPASSWORD",
        "MYSQL_PWD",
        "SECRET",
        "TOKEN",
        "KEY",
        "PASSWORD",
        "PASSWD",
        "DB_PASSWD",
        "CREDENTIAL",
        "CREDENTIALS",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "AUTH",
        "BASIC_AUTH",
        "GITHUB_TOKEN",
        "NPM_TOKEN",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AZURE_CLIENT_SECRET",
        "SECRET_KEY_BASE",
        "GPG_PASSPHRASE",
        "my_service_token",
        "DB_PASS",
        "SMTP_PASS",
        "GITHUB_PAT",
        "API_KEYS",
        "AUTH_TOKENS",
        "OPENAI_API_KEY_2",
        "STRIPE_SECRET_KEY_LIVE",
        "ANTHROPIC_API_KEY_V2",
        "SLACK_TOKEN_PROD_1",
        "TF_TOKEN_app_terraform_io",
        "POETRY_PYPI_TOKEN_PYPI",
        "NGROK_AUTHTOKEN",
        "npm_config__authToken",
        "SSHPASS",
        "BW_SESSION",
        "OP_SESSION_my",
        "AZURE_STORAGE_CONNECTION_STRING",
        "GOOGLE_CLOUD_KEYFILE_JSON",
        "DOCKER_AUTH_CONFIG",
    ] {
        assert!(is_secret(name), "{name} should be secret");
    }
}

#[test]
fn ordinary_variables_that_look_alike_are_not_secret() {
    for name in [
        "PATH",
        "HOME",
        "TERM",
        "PWD",
        "OLDPWD",
        "SSH_AUTH_SOCK",
        "XAUTHORITY",
        "KEYMAP",
        "GPG_AGENT_INFO",
        "DASHFLOAT_API_KEY_ENV",
        "AWS_SHARED_CREDENTIALS_FILE",
        "TOKENIZERS_PARALLELISM",
        "MONKEY",
        "LANG",
        "NODE_ENV",
        "BYPASS",
        "RUST_TEST_THREADS",
        "PYTHON_V2",
        "LIVE",
        "2",
        "GIT_CONFIG_KEY_0",
        "git_config_key_12",
        "XDG_SESSION_ID",
        "DBUS_SESSION_BUS_ADDRESS",
        "SSH_AUTH_SOCK",
        "KEYTIMEOUT",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "PASSWORD_STORE_DIR",
        "VAULT_SECRET_ID_FILE",
    ] {
        assert!(!is_secret(name), "{name} should not be secret");
    }
}

#[test]
fn a_url_with_credentials_is_secret_whatever_its_name() {
    let secret = |name: &str, value: &str| is_secret_var(name.as_ref(), value.as_ref());
    assert!(secret("DATABASE_URL", "postgres://app:hunter2@db:5432/app"));
    assert!(secret("HTTPS_PROXY", "http://me:pw@proxy:3128"));
    assert!(secret("GIT_REMOTE", "https://ghp_token@github.com/o/r"));
    assert!(!secret("DATABASE_URL", "sqlite://./dev.db"));
    assert!(!secret("HOMEPAGE", "https://example.com/a@b"));
    assert!(!secret("EMAIL", "me@example.com"));
    assert!(secret("PGPASSWORD", "x"));
}

#[test]
fn the_child_environment_drops_credentials_and_adds_what_is_passed() {
    let base: Vec<(OsString, OsString)> = vec![
        ("PATH".into(), "/usr/bin:/bin".into()),
        ("PGPASSWORD".into(), "pg".into()),
        ("MY_PROVIDER_VAR".into(), "k".into()),
        ("DATABASE_URL".into(), "postgres://u:p@h/db".into()),
        ("GH_TOKEN".into(), "from-our-environment".into()),
    ];
    let pass = vec![("GH_TOKEN".into(), Secret::new("handed-on-purpose".into()))];
    let kept = child_env(base, &["MY_PROVIDER_VAR".to_owned()], &pass);
    assert_eq!(
        kept,
        vec![
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("GH_TOKEN".into(), "handed-on-purpose".into()),
        ]
    );
}

#[test]
#[allow(unsafe_code)]
fn a_command_sees_no_credential_but_the_ones_passed_to_it() {
    // SAFETY: nextest runs each test in its own process, and this one sets
    // the variables before it starts the runtime or any other thread.
    unsafe {
        std::env::set_var("PGPASSWORD", "pg-must-not-leak");
        std::env::set_var("API_KEY", "api-must-not-leak");
        std::env::set_var("GH_TOKEN", "gh-from-the-environment");
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(dir.path()).unwrap();
    ctx.exec_timeout = Duration::from_secs(10);
    ctx.pass_env = vec![("GH_TOKEN".into(), Secret::new("gh-passed".into()))];
    let call = validate(
        "execute_command",
        &json!({"command": "env; echo GH=$GH_TOKEN"}).to_string(),
    )
    .unwrap();
    let v = json_of(rt.block_on(execute(&call, &ctx, CancellationToken::new())));
    let out = v["output"].as_str().unwrap();
    assert!(!out.contains("must-not-leak"), "{out}");
    assert!(out.contains("GH=gh-passed"), "{out}");
    assert!(!out.contains("gh-from-the-environment"), "{out}");
    assert!(out.contains("PATH="), "{out}");
}

#[test]
fn settings_replace_set_and_remove_variables_in_order() {
    let env = vec![
        (OsString::from("PAGER"), OsString::from("less")),
        (OsString::from("LESS"), OsString::from("-R")),
        (OsString::from("HOME"), OsString::from("/home/u")),
    ];
    let out = with_settings(
        env,
        &[
            EnvSetting::Set("PAGER", "cat"),
            EnvSetting::Unset("LESS"),
            EnvSetting::Set("GIT_PAGER", "cat"),
        ],
    );
    assert_eq!(
        out,
        [
            ("HOME".into(), "/home/u".into()),
            ("PAGER".into(), "cat".into()),
            ("GIT_PAGER".into(), "cat".into()),
        ]
    );
}
