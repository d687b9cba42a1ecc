//! Configuration precedence: flags > environment > config file > defaults.

use std::collections::HashMap;
use std::time::Duration;

use clap::Parser;
use dashfloat::bounds::{LOCAL_BASE_URL, LOCAL_CONTEXT_WINDOW};
use dashfloat::config::{Cli, Config, ConfigError};

fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

fn resolve(cli: &Cli, vars: &[(&str, &str)], file: Option<&str>) -> (Config, Vec<ConfigError>) {
    Config::resolve(
        cli,
        env(vars),
        file.map(|t| Ok(t.to_string())),
        "config.toml",
    )
}

#[test]
fn no_configuration_means_the_local_model() {
    let (c, problems) = resolve(&Cli::default(), &[], None);
    assert!(problems.is_empty());
    assert_eq!(c.base_url, LOCAL_BASE_URL);
    assert_eq!(c.context_window, LOCAL_CONTEXT_WINDOW);
    assert!(!c.provider_configured);
    assert_eq!(c.host(), "127.0.0.1:8088");
}

#[test]
fn the_file_fills_what_flags_leave_open() {
    let file = r#"
base_url = "https://api.example.com/v1/"
model = "big-model"
context_window = 200000
idle_timeout_secs = 5
[headers]
"X-Team" = "core"
"#;
    let (c, problems) = resolve(&Cli::default(), &[], Some(file));
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(c.base_url, "https://api.example.com/v1");
    assert_eq!(c.model, "big-model");
    assert_eq!(c.context_window, 200_000);
    assert_eq!(c.idle_timeout, Duration::from_secs(5));
    assert_eq!(c.headers, vec![("X-Team".to_string(), "core".into())]);
    assert!(c.provider_configured);
}

#[test]
fn flags_win_over_the_file() {
    let cli = Cli::parse_from([
        "dashfloat",
        "--model",
        "flag-model",
        "--base-url",
        "http://localhost:1234/v1",
        "--header",
        "X-Team: flags",
    ]);
    let file =
        "model = \"file-model\"\nbase_url = \"https://file/v1\"\n[headers]\nX-Team = \"file\"\n";
    let (c, _) = resolve(&cli, &[], Some(file));
    assert_eq!(c.model, "flag-model");
    assert_eq!(c.base_url, "http://localhost:1234/v1");
    assert_eq!(c.headers, vec![("X-Team".to_string(), "flags".into())]);
}

#[test]
fn the_key_comes_from_the_named_variable_only() {
    let key = |c: &Config| c.api_key.as_ref().map(|k| k.expose().clone());
    let url = ["--base-url", "https://api.example.com/v1"];
    let cli = Cli::parse_from(["dashfloat", "--api-key-env", "MY_KEY"].iter().chain(&url));
    let (c, _) = resolve(
        &cli,
        &[("MY_KEY", "sk-1"), ("OPENAI_API_KEY", "sk-2")],
        None,
    );
    assert_eq!(key(&c).as_deref(), Some("sk-1"));
    assert_eq!(c.api_key_env, "MY_KEY");
    let cli = Cli::parse_from(["dashfloat"].iter().chain(&url));
    let (c, _) = resolve(&cli, &[("OPENAI_API_KEY", "sk-2")], None);
    assert_eq!(key(&c).as_deref(), Some("sk-2"));
}

#[test]
fn a_broken_file_is_reported_and_defaults_stand() {
    let (c, problems) = resolve(&Cli::default(), &[], Some("model = [unclosed"));
    assert_eq!(c.base_url, LOCAL_BASE_URL);
    assert!(matches!(problems.as_slice(), [ConfigError::Parse { .. }]));
    assert!(problems[0].to_string().contains("config.toml"));
}

#[test]
fn an_unknown_key_in_the_file_is_reported() {
    let (_, problems) = resolve(&Cli::default(), &[], Some("modle = \"typo\""));
    assert!(problems[0].to_string().contains("modle"), "{}", problems[0]);
}

#[test]
fn a_header_without_a_colon_is_reported() {
    let cli = Cli::parse_from(["dashfloat", "--header", "NoColon"]);
    let (_, problems) = resolve(&cli, &[], None);
    assert_eq!(problems, vec![ConfigError::Header("NoColon".into())]);
}

#[test]
fn a_non_http_base_url_falls_back_to_local() {
    let cli = Cli::parse_from(["dashfloat", "--base-url", "ftp://x"]);
    let (c, problems) = resolve(&cli, &[("OPENAI_API_KEY", "sk-for-the-provider")], None);
    assert_eq!(c.base_url, LOCAL_BASE_URL);
    assert_eq!(problems, vec![ConfigError::BaseUrl("ftp://x".into())]);
    // The URL was refused, so the local default stands, and it gets no key.
    assert!(!c.provider_configured);
    assert!(
        c.api_key.is_none(),
        "the key would go to whatever listens on 8088"
    );
}

/// The base URL is kept as requests read it: spaces around it dropped,
/// the scheme in lower case, no trailing slash.
#[test]
fn the_base_url_is_kept_as_requests_read_it() {
    for (written, kept) in [
        ("  http://127.0.0.1:9/v1 ", "http://127.0.0.1:9/v1"),
        ("HTTPS://api.example.com/v1/", "https://api.example.com/v1"),
        ("http://127.0.0.1:9", "http://127.0.0.1:9"),
    ] {
        let file = format!("base_url = {written:?}");
        let (c, problems) = resolve(&Cli::default(), &[], Some(&file));
        assert!(problems.is_empty(), "{written:?}: {problems:?}");
        assert_eq!(c.base_url, kept, "{written:?}");
    }
}

#[test]
fn an_unreadable_named_config_file_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.toml");
    let cli = Cli::parse_from(["dashfloat", "--config", missing.to_str().unwrap()]);
    let (c, problems) = Config::load(&cli, env(&[]));
    assert_eq!(c.base_url, LOCAL_BASE_URL);
    assert!(matches!(problems.as_slice(), [ConfigError::Read { .. }]));
}

#[test]
fn the_default_file_location_follows_xdg() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("dashfloat");
    std::fs::create_dir_all(&conf).unwrap();
    std::fs::write(conf.join("config.toml"), "model = \"xdg-model\"\n").unwrap();
    let (c, problems) = Config::load(
        &Cli::default(),
        env(&[("XDG_CONFIG_HOME", dir.path().to_str().unwrap())]),
    );
    assert!(problems.is_empty());
    assert_eq!(c.model, "xdg-model");
}

#[test]
fn a_missing_default_file_is_fine() {
    let dir = tempfile::tempdir().unwrap();
    let (_, problems) = Config::load(
        &Cli::default(),
        env(&[("XDG_CONFIG_HOME", dir.path().to_str().unwrap())]),
    );
    assert!(problems.is_empty());
}

#[test]
fn agent_limits_come_from_flags_then_the_file() {
    let file =
        "max_steps = 4\nexec_timeout_secs = 7\nexec_timeout_max_secs = 600\ntemperature = 0.2\n";
    let (c, problems) = resolve(&Cli::default(), &[], Some(file));
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(c.max_steps, 4);
    assert_eq!(c.exec_timeout, Duration::from_secs(7));
    assert_eq!(c.exec_timeout_max, Duration::from_secs(600));
    // The maximum is never below the default.
    let (floor, _) = resolve(
        &Cli::default(),
        &[],
        Some("exec_timeout_secs = 900\nexec_timeout_max_secs = 60\n"),
    );
    assert_eq!(floor.exec_timeout_max, Duration::from_secs(900));
    assert_eq!(c.temperature, Some(0.2));
    let cli = Cli::parse_from(["dashfloat", "--max-steps", "9", "--temperature", "0"]);
    let (c, _) = resolve(&cli, &[], Some(file));
    assert_eq!((c.max_steps, c.temperature), (9, Some(0.0)));
}

#[test]
fn the_approval_policy_is_a_flag_and_defaults_to_asking() {
    use dashfloat::agent::ApprovalPolicy;
    let (c, _) = resolve(&Cli::default(), &[], None);
    assert_eq!(c.approval, ApprovalPolicy::Ask);
    let cli = Cli::parse_from(["dashfloat", "--approval", "dangerously-approve-all"]);
    let (c, _) = resolve(&cli, &[], None);
    assert_eq!(c.approval, ApprovalPolicy::DangerouslyApproveAll);
    let cli = Cli::parse_from(["dashfloat", "exec", "--approval", "auto", "hi"]);
    let (c, _) = resolve(&cli, &[], None);
    assert_eq!(c.approval, ApprovalPolicy::Auto);
    assert!(Cli::try_parse_from(["dashfloat", "--approval", "yes"]).is_err());
    // The file cannot choose a policy at all.
    let (c, problems) = resolve(&Cli::default(), &[], Some("approval = \"auto\"\n"));
    assert_eq!(c.approval, ApprovalPolicy::Ask);
    assert_eq!(problems.len(), 1, "{problems:?}");
}

/// `sandbox = "always"` in the file confines approved commands too; it
/// is the file's only say over the sandbox, and any other value is a
/// problem that leaves the default.
#[test]
fn the_file_can_make_every_command_sandboxed() {
    use dashfloat::agent::SandboxScope;
    let (c, _) = resolve(&Cli::default(), &[], None);
    assert_eq!(c.sandbox, SandboxScope::Unasked);
    let (c, problems) = resolve(&Cli::default(), &[], Some("sandbox = \"always\"\n"));
    assert_eq!((c.sandbox, problems.len()), (SandboxScope::Always, 0));
    let (c, problems) = resolve(&Cli::default(), &[], Some("sandbox = \"off\"\n"));
    assert_eq!(c.sandbox, SandboxScope::Unasked);
    assert_eq!(problems.len(), 1, "{problems:?}");
}

#[test]
fn no_key_goes_to_the_built_in_local_default() {
    let vars = [("OPENAI_API_KEY", "sk-for-the-provider")];
    let (c, problems) = resolve(&Cli::default(), &vars, None);
    assert!(problems.is_empty(), "{problems:?}");
    assert!(!c.provider_configured);
    assert!(
        c.api_key.is_none(),
        "a key would go to whatever listens on 8088"
    );
    // Naming the same local URL is configuring it: the key goes there.
    let cli = Cli::parse_from(["dashfloat", "--base-url", LOCAL_BASE_URL]);
    let (c, _) = resolve(&cli, &vars, None);
    assert!(c.api_key.is_some());
}

#[test]
fn debug_output_never_shows_the_key_or_header_values() {
    let cli = Cli::parse_from([
        "dashfloat",
        "--base-url",
        "https://api.example.com/v1",
        "--header",
        "X-Api-Key: header-credential",
    ]);
    let (c, _) = resolve(&cli, &[("OPENAI_API_KEY", "sk-debug-marker")], None);
    let shown = format!("{c:?}");
    assert!(!shown.contains("sk-debug-marker"), "{shown}");
    assert!(!shown.contains("header-credential"), "{shown}");
    assert!(shown.contains("[redacted]"), "{shown}");
    assert!(shown.contains("X-Api-Key"), "{shown}");
}

#[test]
fn credentials_in_the_base_url_stay_out_of_the_status_bar_and_the_messages() {
    let cli = Cli::parse_from([
        "dashfloat",
        "--base-url",
        "http://alice:pw-marker@host:8080/v1",
    ]);
    let (c, _) = resolve(&cli, &[], None);
    assert_eq!(c.host(), "host:8080");
    // The URL itself keeps them: the request needs them.
    assert_eq!(c.base_url, "http://alice:pw-marker@host:8080/v1");
    let cli = Cli::parse_from(["dashfloat", "--base-url", "ftp://alice:pw-marker@host/"]);
    let (_, problems) = resolve(&cli, &[], None);
    let text = problems[0].to_string();
    assert!(!text.contains("pw-marker"), "{text}");
    assert!(text.contains("ftp://[redacted]@host/"), "{text}");
}

#[test]
fn pass_env_comes_from_the_exec_table() {
    let file = "[exec]\npass_env = [\"GH_TOKEN\", \"PGPASSWORD\"]\n";
    let (c, problems) = resolve(&Cli::default(), &[], Some(file));
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(c.pass_env, vec!["GH_TOKEN", "PGPASSWORD"]);
    let (_, problems) = resolve(&Cli::default(), &[], Some("[exec]\npas_env = []\n"));
    assert!(problems[0].to_string().contains("pas_env"), "{problems:?}");
}

#[test]
fn durations_outside_their_bounds_are_config_errors_and_the_default_stands() {
    use dashfloat::bounds::EXEC_DEFAULT_TIMEOUT;
    use dashfloat::bounds::{DEFAULT_IDLE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT};
    // u64::MAX seconds once overflowed `Instant::now() + idle` mid-stream.
    let cli = Cli::parse_from([
        "dashfloat",
        "--idle-timeout",
        "18446744073709551615",
        "--request-timeout",
        "0",
    ]);
    let file = "exec_timeout_secs = 86401\n";
    let (c, problems) = resolve(&cli, &[], Some(file));
    assert_eq!(c.idle_timeout, DEFAULT_IDLE_TIMEOUT);
    assert_eq!(c.request_timeout, DEFAULT_REQUEST_TIMEOUT);
    assert_eq!(c.exec_timeout, EXEC_DEFAULT_TIMEOUT);
    assert_eq!(
        c.exec_timeout_max,
        dashfloat::bounds::EXEC_DEFAULT_MAX_TIMEOUT
    );
    let texts: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    for (setting, given) in [
        ("idle timeout", "18446744073709551615"),
        ("request timeout", "0"),
        ("exec timeout", "86401"),
    ] {
        assert!(
            texts
                .iter()
                .any(|t| t.contains(setting) && t.contains(given)),
            "no problem names the {setting} of {given}: {texts:?}"
        );
    }
    // The bounds themselves are accepted.
    let cli = Cli::parse_from(["dashfloat", "--idle-timeout", "1"]);
    let (c, problems) = resolve(&cli, &[], Some("exec_timeout_secs = 86400\n"));
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(c.idle_timeout, Duration::from_secs(1));
    assert_eq!(c.exec_timeout, Duration::from_secs(86_400));
}

#[test]
fn the_server_is_asked_only_what_was_not_configured() {
    use dashfloat::llm::discover::Questions;
    let ask = |window, models| Questions {
        window,
        models,
        kind: false,
    };
    // The local default: its model name is fixed, its window may be asked,
    // and so is its kind, as the cache is warmed for a server on this
    // machine.
    let (c, _) = resolve(&Cli::default(), &[], None);
    assert!(!c.model_configured && !c.context_window_configured);
    let local = Questions {
        kind: true,
        ..ask(true, false)
    };
    assert_eq!(c.questions(), local);
    // A window configured for a server on this machine: only its kind;
    // with the warm-up off, nothing.
    let cli = Cli::parse_from(["dashfloat", "--context-window", "4096"]);
    let (c, _) = resolve(&cli, &[], None);
    let kind_only = Questions {
        kind: true,
        ..ask(false, false)
    };
    assert_eq!(c.questions(), kind_only);
    let cli = Cli::parse_from([
        "dashfloat",
        "--context-window",
        "4096",
        "--warm-cache",
        "off",
    ]);
    let (c, _) = resolve(&cli, &[], None);
    assert_eq!(c.questions(), ask(false, false));
    // A provider without a model or window: both are asked.
    let cli = Cli::parse_from(["dashfloat", "--base-url", "http://gpu:8000/v1"]);
    let (c, _) = resolve(&cli, &[], None);
    assert_eq!(c.questions(), ask(true, true));
    // The file's model and window count as configured...
    let file = "model = \"file-model\"\ncontext_window = 4096\n";
    let (c, _) = resolve(&cli, &[], Some(file));
    assert!(c.model_configured && c.context_window_configured);
    assert_eq!((c.model.as_str(), c.context_window), ("file-model", 4096));
    assert_eq!(c.questions(), ask(false, false));
    // ...and so do the flags (or their variables), which win over the file.
    let cli = Cli::parse_from([
        "dashfloat",
        "--base-url",
        "http://gpu:8000/v1",
        "--context-window",
        "2048",
    ]);
    let (c, _) = resolve(&cli, &[], Some("context_window = 4096\n"));
    assert_eq!(c.context_window, 2048);
    assert_eq!(c.questions(), ask(false, true));
}

#[test]
fn approval_flag_and_slash_command_spell_every_policy_alike() {
    use clap::ValueEnum;
    use dashfloat::config::ApprovalFlag;
    use dashfloat::protocol::ApprovalPolicy;
    for flag in ApprovalFlag::value_variants() {
        let spelled = flag.to_possible_value().unwrap();
        let policy = ApprovalPolicy::from(*flag);
        assert_eq!(spelled.get_name(), policy.name());
        assert_eq!(ApprovalPolicy::from_name(spelled.get_name()), Some(policy));
    }
    assert_eq!(
        ApprovalFlag::value_variants().len(),
        ApprovalPolicy::ALL.len()
    );
}

#[test]
fn the_reply_reserve_and_the_compaction_mark_come_from_flags_then_the_file() {
    use dashfloat::bounds::{COMPACT_AT_MAX, COMPACT_AT_MIN, DEFAULT_COMPACT_AT};
    let (c, problems) = resolve(&Cli::default(), &[], None);
    assert!(problems.is_empty());
    assert_eq!((c.max_output, c.compact_at), (None, DEFAULT_COMPACT_AT));
    let file = "max_output = 1024\ncompact_at = 0.6\n";
    let (c, problems) = resolve(&Cli::default(), &[], Some(file));
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!((c.max_output, c.compact_at), (Some(1024), 0.6));
    let cli = Cli::parse_from(["dashfloat", "--max-output", "2048", "--compact-at", "0.7"]);
    let (c, _) = resolve(&cli, &[], Some(file));
    assert_eq!((c.max_output, c.compact_at), (Some(2048), 0.7));
    // The bounds themselves are accepted; past them the default stands.
    for (given, expected) in [
        (COMPACT_AT_MIN, COMPACT_AT_MIN),
        (COMPACT_AT_MAX, COMPACT_AT_MAX),
    ] {
        let (c, problems) = resolve(
            &Cli::default(),
            &[],
            Some(&format!("compact_at = {given}\n")),
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(c.compact_at, expected);
    }
    let (c, problems) = resolve(&Cli::default(), &[], Some("compact_at = 0.99\n"));
    assert_eq!(c.compact_at, DEFAULT_COMPACT_AT);
    assert_eq!(
        problems,
        [ConfigError::CompactAt("0.99".into())],
        "a mark past the bound is reported"
    );
    assert_eq!(
        problems[0].to_string(),
        "compact_at 0.99 is outside 0.3 ..= 0.95; using 0.8"
    );
}

#[test]
fn sessions_are_saved_unless_the_flag_or_the_file_says_not() {
    let (c, _) = resolve(&Cli::default(), &[], None);
    assert!(c.save_sessions);
    let (c, problems) = resolve(&Cli::default(), &[], Some("save_sessions = false\n"));
    assert!(problems.is_empty(), "{problems:?}");
    assert!(!c.save_sessions);
    let cli = Cli::parse_from(["dashfloat", "--no-save"]);
    let (c, _) = resolve(&cli, &[], Some("save_sessions = true\n"));
    assert!(!c.save_sessions);
}

#[test]
fn the_project_overview_is_sent_unless_the_file_says_not() {
    assert!(resolve(&Cli::default(), &[], None).0.project_overview);
    let (c, problems) = resolve(&Cli::default(), &[], Some("project_overview = false\n"));
    assert!(problems.is_empty(), "{problems:?}");
    assert!(!c.project_overview);
}

#[test]
fn the_asks_to_act_and_to_look_are_on_unless_the_file_says_not() {
    let (c, _) = resolve(&Cli::default(), &[], None);
    assert!(c.ask_to_act && c.ask_to_look);
    let file = "ask_to_act = false\nask_to_look = false\n";
    let (c, problems) = resolve(&Cli::default(), &[], Some(file));
    assert!(problems.is_empty(), "{problems:?}");
    assert!(!c.ask_to_act && !c.ask_to_look);
}

#[test]
fn the_command_line_names_the_session_to_open() {
    use dashfloat::config::CliCommand;
    use dashfloat::session::OpenSession;
    let open = |args: &[&str]| {
        Cli::parse_from(std::iter::once("dashfloat").chain(args.iter().copied())).open_session()
    };
    assert_eq!(open(&[]), OpenSession::New);
    assert_eq!(open(&["-c"]), OpenSession::Continue);
    assert_eq!(open(&["--continue"]), OpenSession::Continue);
    assert_eq!(
        open(&["--resume", "20261201-081500-3fa2c1"]),
        OpenSession::Resume("20261201-081500-3fa2c1".into())
    );
    assert_eq!(open(&["--resume"]), OpenSession::Pick { all: false });
    assert_eq!(
        open(&["--resume", "--all"]),
        OpenSession::Pick { all: true }
    );
    assert!(Cli::try_parse_from(["dashfloat", "-c", "--resume", "x"]).is_err());
    let cli = Cli::parse_from(["dashfloat", "sessions", "--json", "--all"]);
    assert_eq!(cli.command, Some(CliCommand::Sessions { json: true }));
    assert!(cli.all);
}

#[test]
fn the_tool_syntax_comes_from_the_flag_then_the_file_and_defaults_to_auto() {
    use dashfloat::llm::adapters::{Syntax, ToolSyntax};
    let (c, _) = resolve(&Cli::default(), &[], None);
    assert_eq!(c.tool_syntax, ToolSyntax::Auto);
    let (c, problems) = resolve(&Cli::default(), &[], Some("tool_syntax = \"hermes\"\n"));
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(c.tool_syntax, ToolSyntax::Only(Syntax::Hermes));
    let cli = Cli::parse_from(["dashfloat", "--tool-syntax", "native"]);
    let (c, _) = resolve(&cli, &[], Some("tool_syntax = \"hermes\"\n"));
    assert_eq!(c.tool_syntax, ToolSyntax::Native);
    for syntax in ToolSyntax::all() {
        let cli = Cli::parse_from(["dashfloat", "--tool-syntax", syntax.name()]);
        assert_eq!(resolve(&cli, &[], None).0.tool_syntax, syntax);
    }
    assert!(Cli::try_parse_from(["dashfloat", "--tool-syntax", "qwen"]).is_err());
    let (_, problems) = resolve(&Cli::default(), &[], Some("tool_syntax = \"qwen\"\n"));
    assert!(
        matches!(problems[..], [ConfigError::Parse { .. }]),
        "{problems:?}"
    );
}

#[test]
fn the_cache_is_warmed_for_a_server_on_this_machine_unless_told_otherwise() {
    use dashfloat::base_url::is_loopback;
    let (c, _) = resolve(&Cli::default(), &[], None);
    assert!(c.warm_cache, "the local default");
    let remote = Cli::parse_from(["dashfloat", "--base-url", "https://api.openai.com/v1"]);
    assert!(!resolve(&remote, &[], None).0.warm_cache);
    let (c, problems) = resolve(&remote, &[], Some("warm_cache = true\n"));
    assert!(problems.is_empty(), "{problems:?}");
    assert!(c.warm_cache);
    let off = Cli::parse_from(["dashfloat", "--warm-cache", "off"]);
    assert!(!resolve(&off, &[], Some("warm_cache = true\n")).0.warm_cache);
    for url in [
        "http://127.0.0.1:8088/v1",
        "http://localhost:11434/v1",
        "http://[::1]:8080/v1",
    ] {
        assert!(is_loopback(url), "{url}");
    }
    for url in [
        "https://api.openai.com/v1",
        "http://10.0.0.2:8080/v1",
        "http://localhost.evil.com/v1",
        "not a url",
    ] {
        assert!(!is_loopback(url), "{url}");
    }
}

/// `dashfloat exec` takes every flag after the subcommand as well as
/// before it: a flag added without `global` would be refused there.
#[test]
fn every_flag_is_global_so_exec_takes_it_too() {
    let command = <Cli as clap::CommandFactory>::command();
    let local: Vec<String> = command
        .get_arguments()
        .filter(|arg| !arg.is_global_set() && arg.get_long().is_some())
        .filter(|arg| !matches!(arg.get_long(), Some("help" | "version")))
        .map(|arg| arg.get_id().to_string())
        .collect();
    assert!(local.is_empty(), "flags exec would refuse: {local:?}");
    let cli = Cli::parse_from([
        "dashfloat",
        "exec",
        "--seed",
        "3",
        "--tool-syntax",
        "hermes",
        "hi",
    ]);
    assert_eq!(cli.seed, Some(3));
}

#[test]
fn an_empty_model_name_is_reported_and_taken_as_not_given() {
    // Found by the config_file fuzz target: `model = ""` was sent as is.
    let file = "base_url = \"https://api.example.com/v1\"\nmodel = \" \"\n";
    let (c, problems) = resolve(&Cli::default(), &[], Some(file));
    assert!(
        matches!(problems[..], [ConfigError::EmptyModel]),
        "{problems:?}"
    );
    assert!(!c.model.trim().is_empty());
    assert!(!c.model_configured);
    // So the provider is asked which models it serves.
    assert!(c.questions().models);
    let cli = Cli::parse_from(["dashfloat", "--model", ""]);
    let (c, problems) = resolve(&cli, &[], None);
    assert!(
        matches!(problems[..], [ConfigError::EmptyModel]),
        "{problems:?}"
    );
    assert_eq!(c.model, dashfloat::bounds::LOCAL_MODEL);
}

#[test]
fn sandbox_deny_read_takes_absolute_paths_and_the_home_and_reports_the_rest() {
    let file = r#"sandbox_deny_read = ["/srv/keys", "~/private", "relative/dir"]"#;
    let (c, problems) = resolve(&Cli::default(), &[("HOME", "/home/ada")], Some(file));
    assert_eq!(
        c.sandbox_deny_read,
        [
            std::path::PathBuf::from("/srv/keys"),
            std::path::PathBuf::from("/home/ada/private")
        ]
    );
    assert_eq!(
        problems,
        [ConfigError::SandboxDenyRead("relative/dir".into())]
    );
    let (c, problems) = resolve(&Cli::default(), &[], Some(r#"sandbox_deny_read = ["~/x"]"#));
    assert!(c.sandbox_deny_read.is_empty());
    assert_eq!(problems, [ConfigError::SandboxDenyRead("~/x".into())]);
}

/// The wire (ADR 0052): Anthropic's own host selects its wire and its
/// key variable; the flag, the environment and the file choose it as
/// the other settings do; OpenAI's host stays on chat.
#[test]
fn the_wire_follows_the_base_url_unless_chosen() {
    use dashfloat::llm::wires::Wire;
    let anthropic = Cli::parse_from(["dashfloat", "--base-url", "https://api.anthropic.com"]);
    let (c, problems) = resolve(&anthropic, &[("ANTHROPIC_API_KEY", "sk-ant")], None);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(c.wire, Wire::Anthropic);
    assert_eq!(c.api_key_env, "ANTHROPIC_API_KEY");
    assert_eq!(
        c.api_key.as_ref().map(|k| k.expose().as_str()),
        Some("sk-ant")
    );

    let openai = Cli::parse_from(["dashfloat", "--base-url", "https://api.openai.com/v1"]);
    let (c, _) = resolve(&openai, &[], None);
    assert_eq!(
        (c.wire, c.api_key_env.as_str()),
        (Wire::Chat, "OPENAI_API_KEY")
    );
    let (c, _) = resolve(&openai, &[], Some("wire = \"responses\""));
    assert_eq!(c.wire, Wire::Responses);
    let flagged = Cli::parse_from([
        "dashfloat",
        "--base-url",
        "https://proxy.example/v1",
        "--wire",
        "anthropic",
    ]);
    let (c, _) = resolve(&flagged, &[], Some("wire = \"responses\""));
    assert_eq!(c.wire, Wire::Anthropic);
    let (_, problems) = resolve(&Cli::default(), &[], Some("wire = \"soap\""));
    assert!(
        matches!(problems.as_slice(), [ConfigError::Parse { .. }]),
        "{problems:?}"
    );
}

/// `[prices."MODEL"]`: dollars per million tokens, kept in millionths of
/// a dollar; `cached_input` defaults to `input`; a price that is not one
/// is a problem and the model's prices are left out.
#[test]
fn prices_are_read_per_model() {
    use dashfloat::protocol::Price;
    let file = r#"
[prices."claude-sonnet-4-5"]
input = 3.0
cached_input = 0.3
output = 15.0
[prices."local"]
input = 0
output = 0.5
[prices."broken"]
input = -1.0
output = 2.0
[prices."huge"]
input = 2000000.0
output = 1.0
"#;
    let (c, problems) = resolve(&Cli::default(), &[], Some(file));
    assert_eq!(
        c.prices.get("claude-sonnet-4-5"),
        Some(&Price {
            input: 3_000_000,
            cached_input: 300_000,
            output: 15_000_000
        })
    );
    assert_eq!(
        c.prices.get("local"),
        Some(&Price {
            input: 0,
            cached_input: 0,
            output: 500_000
        })
    );
    assert!(!c.prices.contains_key("broken") && !c.prices.contains_key("huge"));
    // Negative, and past the bound of a million dollars a million tokens.
    assert_eq!(
        problems,
        [
            ConfigError::Price("broken".into()),
            ConfigError::Price("huge".into())
        ]
    );
}

#[test]
fn notifications_are_the_bell_unless_the_file_or_a_flag_says_otherwise() {
    use dashfloat::ui::notify::Notify;
    let (c, _) = resolve(&Cli::default(), &[], None);
    assert_eq!(c.notify, Notify::Bell);
    let (c, _) = resolve(&Cli::default(), &[], Some("notify = \"osc777\""));
    assert_eq!(c.notify, Notify::Osc777);
    let flagged = Cli::parse_from(["dashfloat", "--notify", "off"]);
    let (c, _) = resolve(&flagged, &[], Some("notify = \"osc9\""));
    assert_eq!(c.notify, Notify::Off);
    let (_, problems) = resolve(&Cli::default(), &[], Some("notify = \"siren\""));
    assert!(!problems.is_empty());
}

#[test]
fn the_files_hooks_are_read_and_a_bad_one_is_named_while_the_others_stand() {
    let (config, problems) = resolve(
        &Cli::default(),
        &[],
        Some(
            "[[hooks]]\nevent = \"pre_tool_use\"\ncommand = \"~/.config/dashfloat/hooks/guard.sh\"\ntools = [\"execute_command\"]\n\
             [[hooks]]\nevent = \"stop\"\ncommand = \"notify-send done\"\ntimeout = 500\n\
             [[hooks]]\nevent = \"stop\"\ncommand = \"scripts/notify.sh\"\n",
        ),
    );
    assert_eq!(config.hooks.len(), 1);
    assert_eq!(
        config.hooks[0].command,
        "~/.config/dashfloat/hooks/guard.sh"
    );
    assert_eq!(config.hooks[0].whose, dashfloat::hooks::Whose::Person);
    assert_eq!(
        problems.iter().map(ToString::to_string).collect::<Vec<_>>(),
        [
            "hook 2 of config.toml cannot be used: its timeout of 500 s is outside 1 to 120 s; it is left out",
            "hook 3 of config.toml cannot be used: its program `scripts/notify.sh` is a path inside the project, \
             which a repository or the model can change; name it by an absolute path or ~/…, or put the hook \
             in the project's .dashfloat/config.toml, which runs sandboxed once trusted; it is left out"
        ]
    );
}
