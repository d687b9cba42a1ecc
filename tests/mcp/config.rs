//! The servers a person configures, read as Codex's tables and Claude
//! Code's `.mcp.json` spell them; a project's file trusted once, keyed to
//! its content; the names tools are offered under.

use std::collections::BTreeMap;
use std::time::Duration;

use dashfloat::mcp::config::{McpConfigError, Origin, Transport, from_project_file, from_toml};
use dashfloat::mcp::names::{tool_name, unique};
use dashfloat::tools::Sandbox;
use dashfloat::trust::{MCP_JSON, ProjectTrust, TrustStore};

fn tables(text: &str) -> BTreeMap<String, toml::Value> {
    let mut parsed: toml::Table = toml::from_str(text).unwrap();
    let Some(toml::Value::Table(servers)) = parsed.remove("mcp_servers") else {
        panic!("no mcp_servers");
    };
    servers.into_iter().collect()
}

#[test]
fn codex_tables_are_read_as_codex_writes_them() {
    let text = r#"
[mcp_servers.docs]
command = "docs-server"
args = ["--port", "0"]
env = { DOCS_TOKEN = "abc" }
env_vars = ["GITHUB_TOKEN"]
cwd = "tools"
startup_timeout_sec = 20
tool_timeout_sec = 2.5
enabled_tools = ["search", "open"]
disabled_tools = ["open"]
default_tools_approval_mode = "approve"
required = true
supports_parallel_tool_calls = true
sandbox = "read-only"

[mcp_servers.docs.tools.search]
approval_mode = "prompt"

[mcp_servers.tracker]
url = "https://tracker.example/mcp"
bearer_token_env_var = "TRACKER_TOKEN"
http_headers = { "X-Team" = "core" }
env_http_headers = { "X-Key" = "TRACKER_KEY" }
enabled = false
startup_timeout_ms = 1500
"#;
    let mut problems = Vec::new();
    let servers = from_toml(tables(text), &mut problems);
    assert_eq!(problems, [], "Codex's own keys pass without a notice");
    assert_eq!(servers.len(), 2);
    let docs = &servers[0];
    assert_eq!(docs.name, "docs");
    assert_eq!(docs.origin, Origin::Config);
    let Transport::Stdio {
        command,
        args,
        env,
        env_vars,
        cwd,
    } = &docs.transport
    else {
        panic!("stdio");
    };
    assert_eq!(command, "docs-server");
    assert_eq!(args, &["--port", "0"]);
    assert_eq!(env["DOCS_TOKEN"], "abc");
    assert_eq!(env_vars, &["GITHUB_TOKEN"]);
    assert_eq!(cwd.as_deref(), Some(std::path::Path::new("tools")));
    assert_eq!(docs.startup_timeout, Duration::from_secs(20));
    assert_eq!(docs.tool_timeout, Duration::from_millis(2500));
    assert!(docs.offers("search") && !docs.offers("open") && !docs.offers("other"));
    assert!(
        !docs.approval.approves("search"),
        "prompt wins over the default"
    );
    assert!(docs.approval.approves("list"));
    assert_eq!(docs.sandbox, Sandbox::ReadOnly);
    assert!(docs.enabled);

    let tracker = &servers[1];
    assert!(!tracker.enabled);
    assert_eq!(tracker.startup_timeout, Duration::from_millis(1500));
    let Transport::Http {
        url,
        bearer_token_env_var,
        http_headers,
        env_http_headers,
    } = &tracker.transport
    else {
        panic!("http");
    };
    assert_eq!(url, "https://tracker.example/mcp");
    assert_eq!(bearer_token_env_var.as_deref(), Some("TRACKER_TOKEN"));
    assert_eq!(http_headers["X-Team"], "core");
    assert_eq!(env_http_headers["X-Key"], "TRACKER_KEY");
    assert!(
        !tracker.approval.approves("anything"),
        "every call asks by default"
    );
    assert_eq!(tracker.sandbox, Sandbox::Unconfined);
}

#[test]
fn a_bad_table_is_named_and_the_others_still_start() {
    let text = r#"
[mcp_servers.both]
command = "x"
url = "http://127.0.0.1:1/mcp"

[mcp_servers.none]
args = ["x"]

[mcp_servers.ftp]
url = "ftp://example/mcp"

[mcp_servers.slow]
command = "x"
tool_timeout_sec = -1

[mcp_servers.typo]
command = "x"
comand = "y"

[mcp_servers.shape]
command = 5

[mcp_servers.good]
command = "good-server"
"#;
    let mut problems = Vec::new();
    let servers = from_toml(tables(text), &mut problems);
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["good", "typo"],
        "a mistyped extra key is only a notice"
    );
    let texts: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("both") && t.contains("not both")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("none") && t.contains("give a command"))
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("ftp") && t.contains("http://"))
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("slow") && t.contains("tool_timeout_sec"))
    );
    assert!(problems.contains(&McpConfigError::UnknownKey {
        name: "typo".into(),
        key: "comand".into()
    }));
    assert!(texts.iter().any(|t| t.starts_with("MCP server shape:")));
}

#[test]
fn a_projects_mcp_json_is_read_as_claude_code_writes_it() {
    let text = r#"{
  "mcpServers": {
    "files": {"command": "npx", "args": ["-y", "server-filesystem", "."], "env": {"A": "1"}},
    "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-A": "b"}},
    "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
    "odd": {"type": "websocket", "url": "ws://x"}
  }
}"#;
    let mut problems = Vec::new();
    let servers = from_project_file(text, &mut problems);
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["files", "legacy", "remote"]);
    assert!(servers.iter().all(|s| s.origin == Origin::Project));
    assert!(problems[0].to_string().contains("websocket"));
    let mut problems = Vec::new();
    assert!(from_project_file("{not json", &mut problems).is_empty());
    assert!(
        problems[0]
            .to_string()
            .starts_with("the project's .mcp.json cannot be used")
    );
}

#[test]
fn a_projects_file_is_trusted_once_until_it_changes() {
    let config = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let store = TrustStore::new(config.path(), project.path(), &MCP_JSON);
    assert_eq!(store.read(), ProjectTrust::Absent);
    let first = r#"{"mcpServers": {"a": {"command": "a"}}}"#;
    std::fs::write(project.path().join(".mcp.json"), first).unwrap();
    assert_eq!(store.read(), ProjectTrust::Untrusted(first.into()));
    store.trust(first).unwrap();
    assert_eq!(store.read(), ProjectTrust::Trusted(first.into()));
    // Nothing was written into the project.
    let entries: Vec<_> = std::fs::read_dir(project.path()).unwrap().collect();
    assert_eq!(entries.len(), 1);
    let changed = r#"{"mcpServers": {"a": {"command": "evil"}}}"#;
    std::fs::write(project.path().join(".mcp.json"), changed).unwrap();
    assert_eq!(
        store.read(),
        ProjectTrust::Untrusted(changed.into()),
        "a changed file asks again"
    );
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join(".mcp.json"), first).unwrap();
    let elsewhere = TrustStore::new(config.path(), other.path(), &MCP_JSON);
    assert_eq!(
        elsewhere.read(),
        ProjectTrust::Untrusted(first.into()),
        "the same file in another project is not trusted"
    );
}

#[test]
fn trust_is_the_files_text_and_an_old_hash_record_asks_again() {
    let config = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let store = TrustStore::new(config.path(), project.path(), &MCP_JSON);
    // The largest file there may be, all of it what JSON escapes longest.
    let largest = "\u{1}".repeat(usize::try_from(MCP_JSON.max_bytes).unwrap());
    std::fs::write(project.path().join(".mcp.json"), &largest).unwrap();
    store.trust(&largest).unwrap();
    assert_eq!(store.read(), ProjectTrust::Trusted(largest));

    let text = r#"{"mcpServers": {"a": {"command": "a"}}}"#;
    std::fs::write(project.path().join(".mcp.json"), text).unwrap();
    store.trust(text).unwrap();
    let records: Vec<_> = std::fs::read_dir(config.path().join("mcp-trust"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    let [record] = &records[..] else {
        panic!("{records:?}")
    };
    let kept: serde_json::Value = serde_json::from_slice(&std::fs::read(record).unwrap()).unwrap();
    assert_eq!(kept["text"], text, "the record keeps the text itself");
    // A record as dashfloat kept them before: a hash of the file.
    let old = serde_json::json!({
        "project": project.path(),
        "content": "5e1d2a3b4c5d6e7f",
    });
    std::fs::write(record, old.to_string()).unwrap();
    assert_eq!(
        store.read(),
        ProjectTrust::Untrusted(text.into()),
        "a hash is no longer trust: the person is asked once again"
    );
}

#[test]
fn names_are_callable_bounded_and_told_apart() {
    assert_eq!(tool_name("docs", "search"), "mcp__docs__search");
    let dotted = tool_name("docs", "read.file");
    let slashed = tool_name("docs", "read/file");
    assert_ne!(dotted, slashed, "two tools that sanitise alike stay apart");
    for name in [&dotted, &slashed] {
        assert!(name.starts_with("mcp__docs__read_file_"), "{name}");
    }
    let long = tool_name("server", &"x".repeat(200));
    assert_eq!(long.len(), dashfloat::bounds::TOOL_NAME_MAX_CHARS);
    let escape = tool_name("s", "\u{1b}[2Jwipe é");
    assert!(
        escape
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
        "{escape}"
    );
    let taken = ["mcp__a__b".to_owned(), "mcp__a__b_2".to_owned()];
    assert_eq!(
        unique("mcp__a__b".into(), |n| taken.iter().any(|t| t == n)),
        "mcp__a__b_3"
    );
}
