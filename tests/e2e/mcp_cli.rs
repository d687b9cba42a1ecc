//! End to end, `dashfloat mcp list|get|add|remove` with the real binary
//! and real files: servers added to a config file that did not exist
//! (0700 directory, 0600 file), listed as text and JSON, shown, removed;
//! the rest of an existing file kept byte for byte; every refusal leaving
//! the file as it was; values of variables and headers never printed; a
//! project's `.mcp.json` listed as untrusted until it is trusted.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use dashfloat::trust::{MCP_JSON, TrustStore};
use serde_json::{Value, json};

use crate::support::dashfloat_bin;

/// A config directory and a project directory of their own.
struct Dirs {
    home: tempfile::TempDir,
    project: tempfile::TempDir,
}

impl Dirs {
    fn new() -> Dirs {
        Dirs {
            home: tempfile::tempdir().unwrap(),
            project: tempfile::tempdir().unwrap(),
        }
    }

    /// The config file dashfloat reads with `home` as XDG_CONFIG_HOME.
    fn config(&self) -> PathBuf {
        self.home.path().join("dashfloat/config.toml")
    }

    fn write_config(&self, text: &str) {
        std::fs::create_dir_all(self.config().parent().unwrap()).unwrap();
        std::fs::write(self.config(), text).unwrap();
    }

    fn read_config(&self) -> String {
        std::fs::read_to_string(self.config()).unwrap()
    }

    /// `dashfloat mcp ARGS` in the project, `env` on top.
    fn mcp_with(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = Command::new(dashfloat_bin());
        command
            .arg("mcp")
            .args(args)
            .current_dir(self.project.path())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path())
            .env_remove("DASHFLOAT_CONFIG")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("OPENAI_API_KEY");
        for (name, value) in env {
            command.env(name, value);
        }
        command.output().unwrap()
    }

    fn mcp(&self, args: &[&str]) -> Output {
        self.mcp_with(args, &[])
    }

    /// `dashfloat mcp ARGS`, which must succeed: its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.mcp(args);
        assert!(out.status.success(), "{args:?}: {}", text(&out));
        String::from_utf8(out.stdout).unwrap()
    }

    /// `dashfloat mcp ARGS --json`, parsed.
    fn json(&self, args: &[&str]) -> Value {
        let mut args = args.to_vec();
        args.push("--json");
        serde_json::from_str(&self.ok(&args)).unwrap()
    }
}

/// stdout and stderr together, for assertions and failure messages.
fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn servers_are_added_listed_shown_and_removed() {
    let dirs = Dirs::new();
    assert!(!dirs.home.path().join("dashfloat").exists());
    let none = dirs.ok(&["list"]);
    assert!(none.starts_with("no MCP servers are configured"), "{none}");
    assert_eq!(dirs.json(&["list"]), json!([]));

    let added = dirs.ok(&[
        "add",
        "docs",
        "--env",
        "DOCS_TOKEN=s3cr3t",
        "--",
        "npx",
        "-y",
        "@acme/docs server",
    ]);
    assert!(added.contains("added the MCP server docs"), "{added}");
    dirs.ok(&[
        "add",
        "web",
        "--url",
        "https://mcp.example.com/mcp",
        "--bearer-token-env-var",
        "WEB_TOKEN",
    ]);
    assert_eq!(mode(&dirs.home.path().join("dashfloat")), 0o700);
    assert_eq!(mode(&dirs.config()), 0o600);
    assert_eq!(
        dirs.read_config(),
        "[mcp_servers.docs]\n\
command = \"npx\"\n\
args = [\"-y\", \"@acme/docs server\"]\n\
env = { DOCS_TOKEN = \"s3cr3t\" }\n\
\n\
[mcp_servers.web]\n\
url = \"https://mcp.example.com/mcp\"\n\
bearer_token_env_var = \"WEB_TOKEN\"\n"
    );

    let listing = dirs.ok(&["list"]);
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), 3, "{listing}");
    for column in ["NAME", "ENABLED", "SOURCE", "TRANSPORT", "TOOLS"] {
        assert!(lines[0].contains(column), "{listing}");
    }
    assert!(
        lines[1].starts_with("docs ")
            && lines[1].contains("config")
            && lines[1].contains("npx -y '@acme/docs server' (env: DOCS_TOKEN)")
            && lines[1].contains("all; asked"),
        "{listing}"
    );
    assert!(
        lines[2].starts_with("web ") && lines[2].contains("https://mcp.example.com/mcp"),
        "{listing}"
    );

    let list = dirs.json(&["list"]);
    assert_eq!(
        list[0],
        json!({
            "name": "docs",
            "source": "config",
            "trusted": true,
            "enabled": true,
            "transport": {
                "type": "stdio",
                "command": "npx",
                "args": ["-y", "@acme/docs server"],
                "env": {"DOCS_TOKEN": "*****"},
                "env_vars": [],
                "cwd": null,
            },
            "startup_timeout_sec": 10.0,
            "tool_timeout_sec": 60.0,
            "enabled_tools": null,
            "disabled_tools": [],
            "approval": {"default": "prompt", "approve": [], "prompt": []},
            "sandbox": "off",
        })
    );
    assert_eq!(
        list[1]["transport"],
        json!({
            "type": "streamable_http",
            "url": "https://mcp.example.com/mcp",
            "bearer_token_env_var": "WEB_TOKEN",
            "http_headers": {},
            "env_http_headers": {},
        })
    );
    assert_eq!(dirs.json(&["get", "web"]), list[1]);

    let shown = dirs.ok(&["get", "docs"]);
    assert!(shown.starts_with("docs\n"), "{shown}");
    for line in [
        "  transport: stdio",
        "  command: npx",
        "  args: -y '@acme/docs server'",
        "  env: DOCS_TOKEN=*****",
        "  remove: dashfloat mcp remove docs",
    ] {
        assert!(shown.contains(line), "{line} in {shown}");
    }

    assert!(
        dirs.ok(&["remove", "docs"])
            .contains("removed the MCP server docs")
    );
    assert_eq!(
        dirs.read_config(),
        "[mcp_servers.web]\n\
url = \"https://mcp.example.com/mcp\"\n\
bearer_token_env_var = \"WEB_TOKEN\"\n"
    );
    dirs.ok(&["remove", "web"]);
    assert_eq!(dirs.json(&["list"]), json!([]));
}

/// A config file as a person keeps it: comments, odd spacing, other
/// settings around the servers.
const PERSONAL: &str = "# my dashfloat settings
model   =   \"gpt-x\"   # the one I pay for
warm_cache = false

[headers]
# sent to the provider
X-Team = \"blue\"

# the servers
[mcp_servers.old]
command = \"old-server\"  # keep me
[mcp_servers.old.tools.drop]
approval_mode = \"approve\"

[exec]
pass_env = [\"GITHUB_TOKEN\"] # on purpose
# the end
";

#[test]
fn comments_and_other_settings_survive_add_and_remove_byte_for_byte() {
    let dirs = Dirs::new();
    dirs.write_config(PERSONAL);

    dirs.ok(&["add", "new", "--", "new-server", "--stdio"]);
    let with_new = PERSONAL.replace(
        "approval_mode = \"approve\"\n\n",
        "approval_mode = \"approve\"\n\n\
[mcp_servers.new]\n\
command = \"new-server\"\n\
args = [\"--stdio\"]\n\n",
    );
    assert_eq!(dirs.read_config(), with_new);
    let names: Vec<Value> = dirs
        .json(&["list"])
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].clone())
        .collect();
    assert_eq!(names, [json!("new"), json!("old")]);

    dirs.ok(&["remove", "new"]);
    assert_eq!(dirs.read_config(), PERSONAL);

    // The table removed goes with the comment above its header; every
    // other byte stays.
    dirs.ok(&["remove", "old"]);
    let start = PERSONAL.find("# the servers").unwrap();
    let end = PERSONAL.find("[exec]").unwrap();
    let without_old = format!("{}{}", &PERSONAL[..start], &PERSONAL[end..]);
    assert_eq!(dirs.read_config(), without_old);
}

#[test]
fn a_symlinked_config_file_is_written_through_its_link() {
    let dirs = Dirs::new();
    let dotfiles = dirs.home.path().join("dotfiles");
    std::fs::create_dir(&dotfiles).unwrap();
    let real = dotfiles.join("dashfloat.toml");
    std::fs::write(&real, "model = \"m\"\n").unwrap();
    std::fs::create_dir(dirs.home.path().join("dashfloat")).unwrap();
    std::os::unix::fs::symlink(&real, dirs.config()).unwrap();

    dirs.ok(&["add", "s", "--", "server"]);
    assert!(dirs.config().is_symlink());
    assert_eq!(
        std::fs::read_to_string(&real).unwrap(),
        "model = \"m\"\n\n[mcp_servers.s]\ncommand = \"server\"\n"
    );
}

#[test]
fn refusals_leave_the_config_file_as_it_was() {
    let dirs = Dirs::new();
    dirs.write_config(PERSONAL);
    let refused = |args: &[&str], status: i32, says: &str| {
        let out = dirs.mcp(args);
        let shown = text(&out);
        assert_eq!(out.status.code(), Some(status), "{args:?}: {shown}");
        assert!(shown.contains(says), "{args:?}: {says:?} in {shown}");
        assert_eq!(dirs.read_config(), PERSONAL, "{args:?} changed the file");
    };
    refused(
        &["add", "old", "--", "other"],
        1,
        "there is already an MCP server named old",
    );
    refused(
        &["add", "bad name", "--", "x"],
        2,
        "may hold only letters, digits, _ and -",
    );
    refused(&["add", "a.b", "--", "x"], 2, "may hold only letters");
    refused(
        &["add", "w", "--url", "ftp://example.com/mcp"],
        2,
        "must be an http:// or https:// URL",
    );
    refused(
        &["add", "w", "--url", "not a url"],
        2,
        "http:// or https://",
    );
    refused(
        &["add", "w", "--url", "https://example.com", "--", "x"],
        2,
        "cannot be used with",
    );
    refused(&["add", "w"], 2, "required arguments were not provided");
    refused(
        &["add", "w", "--env", "NOEQUALS", "--", "x"],
        2,
        "KEY=VALUE",
    );
    refused(
        &["add", "w", "--bearer-token-env-var", "T", "--", "x"],
        2,
        "cannot be used with",
    );
    refused(
        &["add", "w", "--url", "https://example.com", "--env", "A=b"],
        2,
        "cannot be used with",
    );
    // Refused by dashfloat's own parser before anything is written.
    refused(
        &["add", "e", "--", ""],
        1,
        "MCP server e: the command is empty",
    );
    refused(
        &["remove", "absent"],
        1,
        "there is no MCP server named absent",
    );
    refused(&["get", "absent"], 1, "there is no MCP server named absent");

    // A file dashfloat would not read is not touched.
    let broken = "model = \"m\"\nnot_a_setting = 1\n";
    dirs.write_config(broken);
    let out = dirs.mcp(&["add", "x", "--", "server"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("is invalid"), "{}", text(&out));
    assert_eq!(dirs.read_config(), broken);
}

#[test]
fn values_of_variables_and_headers_are_never_printed() {
    let dirs = Dirs::new();
    dirs.write_config(
        "[mcp_servers.db]
command = \"db-server\"
env = { DB_PASSWORD = \"hunter2-env\" }
env_vars = [\"PGHOST\"]

[mcp_servers.api]
url = \"https://alice:hunter2-url@api.example.com/mcp\"
http_headers = { Authorization = \"Bearer hunter2-header\" }
env_http_headers = { X-Org = \"ORG_VAR\" }
",
    );
    let outputs = [
        dirs.ok(&["list"]),
        dirs.ok(&["list", "--json"]),
        dirs.ok(&["get", "db"]),
        dirs.ok(&["get", "db", "--json"]),
        dirs.ok(&["get", "api"]),
        dirs.ok(&["get", "api", "--json"]),
    ];
    for out in &outputs {
        assert!(!out.contains("hunter2"), "{out}");
    }
    assert!(outputs[0].contains("(env: DB_PASSWORD)"), "{}", outputs[0]);
    assert!(
        outputs[0].contains("(headers: Authorization)"),
        "{}",
        outputs[0]
    );
    assert!(
        outputs[2].contains("env: DB_PASSWORD=*****"),
        "{}",
        outputs[2]
    );
    assert!(outputs[2].contains("env_vars: PGHOST"), "{}", outputs[2]);
    assert!(
        outputs[4].contains("http_headers: Authorization=*****"),
        "{}",
        outputs[4]
    );
    assert!(
        outputs[4].contains("env_http_headers: X-Org=ORG_VAR"),
        "{}",
        outputs[4]
    );
    let api: Value = serde_json::from_str(&outputs[5]).unwrap();
    assert_eq!(
        api["transport"],
        json!({
            "type": "streamable_http",
            "url": "https://[redacted]@api.example.com/mcp",
            "bearer_token_env_var": null,
            "http_headers": {"Authorization": "*****"},
            "env_http_headers": {"X-Org": "ORG_VAR"},
        })
    );
}

#[test]
fn a_project_mcp_json_is_listed_as_untrusted_until_it_is_trusted() {
    let dirs = Dirs::new();
    dirs.write_config("[mcp_servers.mine]\ncommand = \"mine\"\n");
    let project_file = "{\"mcpServers\": {\"theirs\": {\"command\": \"./serve\", \
\"args\": [\"--port\", \"1\"], \"env\": {\"THEIR_KEY\": \"hunter2\"}}}}";
    std::fs::write(dirs.project.path().join(".mcp.json"), project_file).unwrap();

    let out = dirs.mcp(&["list"]);
    assert!(out.status.success(), "{}", text(&out));
    let listing = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), 3, "{listing}");
    assert!(lines[1].starts_with("mine ") && lines[1].contains("config"));
    assert!(
        lines[2].starts_with("theirs ")
            && lines[2].contains(".mcp.json (untrusted)")
            && lines[2].contains("./serve --port 1 (env: THEIR_KEY)"),
        "{listing}"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains(".mcp.json is not trusted"), "{stderr}");

    let list = dirs.json(&["list"]);
    assert_eq!(list[1]["name"], "theirs");
    assert_eq!(list[1]["source"], "project");
    assert_eq!(list[1]["trusted"], false);
    assert_eq!(list[1]["transport"]["env"], json!({"THEIR_KEY": "*****"}));
    let shown = dirs.ok(&["get", "theirs"]);
    assert!(shown.contains("source: .mcp.json (untrusted)"), "{shown}");
    assert!(!shown.contains("remove:"), "{shown}");
    // Not the config file's to remove.
    let out = dirs.mcp(&["remove", "theirs"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    let real = dirs.project.path().canonicalize().unwrap();
    TrustStore::new(&dirs.home.path().join("dashfloat"), &real, &MCP_JSON)
        .trust(project_file)
        .unwrap();
    assert_eq!(dirs.json(&["get", "theirs"])["trusted"], true);
    assert!(dirs.ok(&["list"]).contains(".mcp.json (trusted)"));
}

#[test]
fn a_servers_own_flags_after_the_double_dash_stay_in_its_command_line() {
    let dirs = Dirs::new();
    // A key in the environment makes dashfloat re-execute itself without
    // it, handing `--header` values over: the server's own `--header`
    // after `--` must stay where it is, in its command line.
    dirs.write_config("base_url = \"https://api.example.com/v1\"\n");
    let out = dirs.mcp_with(
        &[
            "add",
            "hdr",
            "--",
            "server",
            "--header",
            "X-Token: abc",
            "--base-url",
            "https://u:p@example.com",
        ],
        &[("OPENAI_API_KEY", "sk-test")],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        dirs.json(&["get", "hdr"])["transport"]["args"],
        json!([
            "--header",
            "X-Token: abc",
            "--base-url",
            "https://u:p@example.com"
        ])
    );
}
