//! `dashfloat mcp list|get|add|remove`, as `codex mcp` has them: the
//! servers of the config file, and of the project's `.mcp.json` with
//! whether the person trusted it, shown without the values of their
//! variables and headers (which may be credentials); tables added to and
//! removed from the config file with everything else in it — comments,
//! order, spacing — kept byte for byte (`toml_edit`). A change is read
//! with dashfloat's own parser before it is written and again from the
//! disk after: a change that would not read back is not written, and one
//! that did not is undone. ADR 0045.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::Serialize;
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, Value};

use super::config::{Origin, ServerConfig, Transport, from_project_file};
use crate::config::{Cli, Config, ConfigError, McpAddArgs, McpCommand};
use crate::own_files;
use crate::safe_text::strip_controls;
use crate::secret::redact_userinfo;
use crate::tools::Sandbox;
use crate::trust::{MCP_JSON, ProjectTrust, TrustStore};

/// What is shown in place of the value of a variable or a header.
pub const MASK: &str = "*****";
/// The config file's table of servers.
const TABLE: &str = "mcp_servers";
/// How the temporary file a change is written through starts.
const TEMP_PREFIX: &str = ".config";

/// Where `dashfloat mcp` reads and writes.
#[derive(Debug, Clone)]
pub struct Places {
    /// The config file (`--config`, else the default location); `None`
    /// when no variable names one.
    pub config_file: Option<PathBuf>,
    /// dashfloat's configuration directory, where the trust of each
    /// project's `.mcp.json` is kept.
    pub config_dir: Option<PathBuf>,
    /// The project: the working directory's real path, `None` when it
    /// has none.
    pub project: Option<PathBuf>,
}

/// Why a `dashfloat mcp` command failed (exit status 1), or why clap
/// refused one of its arguments (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum McpCliError {
    /// `add` was given a name with other characters than Codex allows.
    #[error("a server's name may hold only letters, digits, _ and -")]
    Name,
    /// `add --url` was given something else than an http(s) URL.
    #[error("the URL must be an http:// or https:// URL with a host")]
    Url,
    /// `add --env` was given something else than `KEY=VALUE`.
    #[error("write it as KEY=VALUE, the KEY without spaces")]
    Env,
    /// No `--config`, `XDG_CONFIG_HOME` or `HOME` names a config file.
    #[error("neither --config, XDG_CONFIG_HOME nor HOME names a config file")]
    NoConfigFile,
    /// The config file exists but cannot be read.
    #[error("cannot read the config file {path}: {source}")]
    Read {
        /// The config file.
        path: String,
        /// The OS's words.
        source: io::Error,
    },
    /// The config file is not one dashfloat reads: it is left as it is.
    #[error("the config file {path} is invalid: {detail}; nothing was changed")]
    Invalid {
        /// The config file.
        path: String,
        /// The parser's words.
        detail: String,
    },
    /// `mcp_servers` is something else than a table.
    #[error("{TABLE} in {path} is not a table; nothing was changed")]
    NotATable {
        /// The config file.
        path: String,
    },
    /// `add` of a name already configured.
    #[error("there is already an MCP server named {name} in {path}; nothing was changed")]
    Exists {
        /// The server's name.
        name: String,
        /// The config file.
        path: String,
    },
    /// `get` or `remove` of a name not configured.
    #[error("there is no MCP server named {name} {place}")]
    NotFound {
        /// The name asked for.
        name: String,
        /// Where it was looked for, in words.
        place: String,
    },
    /// The changed file would not read back as intended: not written.
    #[error(
        "the change would not read back from {path} as intended: {detail}; nothing was written"
    )]
    WouldBreak {
        /// The config file.
        path: String,
        /// What dashfloat's parser made of it.
        detail: String,
    },
    /// The changed file could not be written.
    #[error("cannot write the config file {path}: {source}")]
    Write {
        /// The config file.
        path: String,
        /// The OS's words.
        source: io::Error,
    },
    /// The file written did not read back as intended; the earlier one
    /// was put back, or could not be.
    #[error("the config file {path} did not read back as written: {detail}; {undone}")]
    ReadBack {
        /// The config file.
        path: String,
        /// What went wrong.
        detail: String,
        /// Whether the earlier file was put back, in words.
        undone: String,
    },
    /// The JSON could not be made.
    #[error("cannot encode the JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// A server name as `dashfloat mcp add` takes it: letters, digits, `_`
/// and `-`, as Codex allows (a clap value parser).
pub fn server_name(name: &str) -> Result<String, McpCliError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if !name.is_empty() && name.chars().all(allowed) {
        Ok(name.to_owned())
    } else {
        Err(McpCliError::Name)
    }
}

/// A URL as `dashfloat mcp add --url` takes it: one the client can send
/// to, as the config file's parser requires (a clap value parser).
pub fn server_url(url: &str) -> Result<String, McpCliError> {
    crate::base_url::usable(url).ok_or(McpCliError::Url)
}

/// `dashfloat mcp add --env KEY=VALUE` taken apart (a clap value parser).
pub fn env_pair(pair: &str) -> Result<(String, String), McpCliError> {
    match pair.split_once('=') {
        Some((key, value)) if !key.is_empty() && !key.contains(char::is_whitespace) => {
            Ok((key.to_owned(), value.to_owned()))
        }
        _ => Err(McpCliError::Env),
    }
}

/// Runs `command`: its answer on stdout; the problems of the files read,
/// and a failure, on stderr; every line without control characters (the
/// names come from files). Exit status 0 done, 1 failed.
pub fn run(command: &McpCommand, places: &Places) -> ExitCode {
    let mut notes = Vec::new();
    let answer = answer(command, places, &mut notes);
    let mut err = io::stderr().lock();
    for note in &notes {
        let _ = writeln!(err, "dashfloat: {}", strip_controls(note));
    }
    match answer {
        Ok(text) => {
            let mut out = io::stdout().lock();
            let _ = out.write_all(strip_controls(&text).as_bytes());
            let _ = out.flush();
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(err, "dashfloat: {}", strip_controls(&e.to_string()));
            ExitCode::FAILURE
        }
    }
}

/// What `command` prints on stdout; `notes` gathers what goes to stderr.
fn answer(
    command: &McpCommand,
    places: &Places,
    notes: &mut Vec<String>,
) -> Result<String, McpCliError> {
    match command {
        McpCommand::List { json } => {
            let servers = known(places, notes)?;
            if *json {
                let shown: Vec<Shown<'_>> = servers.iter().map(Shown::of).collect();
                Ok(format!("{}\n", serde_json::to_string_pretty(&shown)?))
            } else if servers.is_empty() {
                Ok("no MCP servers are configured: add one with \
`dashfloat mcp add NAME -- COMMAND [ARGS]...` or `dashfloat mcp add NAME --url URL`\n"
                    .to_owned())
            } else {
                Ok(listing(&servers))
            }
        }
        McpCommand::Get { name, json } => {
            let servers = known(places, notes)?;
            let server = servers
                .iter()
                .find(|s| s.config.name == *name)
                .ok_or_else(|| McpCliError::NotFound {
                    name: name.clone(),
                    place: "(`dashfloat mcp list` lists them)".to_owned(),
                })?;
            if *json {
                Ok(format!(
                    "{}\n",
                    serde_json::to_string_pretty(&Shown::of(server))?
                ))
            } else {
                Ok(details(server))
            }
        }
        McpCommand::Add(args) => {
            let path = places
                .config_file
                .as_deref()
                .ok_or(McpCliError::NoConfigFile)?;
            edit(path, &Change::Add(args))?;
            Ok(format!(
                "added the MCP server {} to {}\n",
                args.name,
                path.display()
            ))
        }
        McpCommand::Remove { name } => {
            let path = places
                .config_file
                .as_deref()
                .ok_or(McpCliError::NoConfigFile)?;
            edit(path, &Change::Remove(name))?;
            Ok(format!(
                "removed the MCP server {name} from {}\n",
                path.display()
            ))
        }
    }
}

/// One server as listed: its table, and whether dashfloat starts it.
struct Listed {
    config: ServerConfig,
    /// Always for the config file's; for the project's, whether the
    /// person trusted its `.mcp.json` as it is now.
    trusted: bool,
}

/// The servers of the config file, then those of the project's
/// `.mcp.json`; what cannot be used of either goes to `notes`.
fn known(places: &Places, notes: &mut Vec<String>) -> Result<Vec<Listed>, McpCliError> {
    let mut listed = Vec::new();
    if let Some(path) = &places.config_file {
        let text = read_config(path)?;
        let (servers, problems) = read_back(text.as_deref().unwrap_or_default(), path);
        notes.extend(
            problems
                .iter()
                .filter(|p| matches!(p, ConfigError::Parse { .. } | ConfigError::Mcp(_)))
                .map(ToString::to_string),
        );
        listed.extend(servers.into_iter().map(|config| Listed {
            config,
            trusted: true,
        }));
    }
    let (Some(dir), Some(project)) = (&places.config_dir, &places.project) else {
        return Ok(listed);
    };
    let (text, trusted) = match TrustStore::new(dir, project, &MCP_JSON).read() {
        ProjectTrust::Absent => return Ok(listed),
        ProjectTrust::Trusted(text) => (text, true),
        ProjectTrust::Untrusted(text) => {
            notes.push(format!(
                "this directory's {} is not trusted (or changed since): its servers \
are not started; /mcp trust in a session trusts it as it is now",
                MCP_JSON.path
            ));
            (text, false)
        }
        ProjectTrust::Unreadable(why) => {
            notes.push(format!(
                "cannot read this directory's {}: {why}",
                MCP_JSON.path
            ));
            return Ok(listed);
        }
    };
    let mut problems = Vec::new();
    listed.extend(
        from_project_file(&text, &mut problems)
            .into_iter()
            .map(|config| Listed { config, trusted }),
    );
    notes.extend(problems.iter().map(ToString::to_string));
    Ok(listed)
}

/// The config file's text, `None` when there is no file.
fn read_config(path: &Path) -> Result<Option<String>, McpCliError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(McpCliError::Read {
            path: path.display().to_string(),
            source,
        }),
    }
}

/// What dashfloat makes of the config file's `text` at start-up, flags
/// and environment aside: its servers and its problems.
fn read_back(text: &str, path: &Path) -> (Vec<ServerConfig>, Vec<ConfigError>) {
    let (config, problems) = Config::resolve(
        &Cli::default(),
        |_| None,
        Some(Ok(text.to_owned())),
        &path.display().to_string(),
    );
    (config.mcp_servers, problems)
}

/// A change to the config file's servers.
enum Change<'a> {
    /// `dashfloat mcp add`.
    Add(&'a McpAddArgs),
    /// `dashfloat mcp remove NAME`.
    Remove(&'a str),
}

impl Change<'_> {
    fn name(&self) -> &str {
        match self {
            Change::Add(args) => &args.name,
            Change::Remove(name) => name,
        }
    }

    /// Makes the change in `doc`, the config file at `path`.
    fn apply(&self, doc: &mut DocumentMut, path: &str) -> Result<(), McpCliError> {
        let name = self.name();
        match self {
            Change::Add(args) => {
                let servers = doc.entry(TABLE).or_insert_with(|| {
                    let mut table = Table::new();
                    table.set_implicit(true);
                    Item::Table(table)
                });
                if servers
                    .as_table_like()
                    .is_some_and(|table| table.contains_key(name))
                {
                    return Err(McpCliError::Exists {
                        name: name.to_owned(),
                        path: path.to_owned(),
                    });
                }
                let table = server_table(args);
                match servers {
                    Item::Table(servers) => {
                        servers.insert(name, Item::Table(table));
                    }
                    Item::Value(Value::InlineTable(servers)) => {
                        servers.insert(name, Value::InlineTable(table.into_inline_table()));
                    }
                    _ => {
                        return Err(McpCliError::NotATable {
                            path: path.to_owned(),
                        });
                    }
                }
            }
            Change::Remove(_) => {
                doc.get_mut(TABLE)
                    .and_then(Item::as_table_like_mut)
                    .and_then(|servers| servers.remove(name))
                    .ok_or_else(|| McpCliError::NotFound {
                        name: name.to_owned(),
                        place: format!("in {path}"),
                    })?;
            }
        }
        Ok(())
    }

    /// Whether dashfloat's parser finds the change made in `servers`.
    fn made(&self, servers: &[ServerConfig]) -> Result<(), String> {
        let name = self.name();
        let present = servers.iter().any(|s| s.name == name);
        match (self, present) {
            (Change::Add(_), false) => Err(format!("the server {name} is not in it")),
            (Change::Remove(_), true) => Err(format!("the server {name} is still in it")),
            _ => Ok(()),
        }
    }
}

/// The table `dashfloat mcp add` writes, keys as Codex writes them.
fn server_table(args: &McpAddArgs) -> Table {
    let mut table = Table::new();
    if let Some(url) = &args.url {
        table.insert("url", toml_edit::value(url));
        if let Some(var) = &args.bearer_token_env_var {
            table.insert("bearer_token_env_var", toml_edit::value(var));
        }
    } else if let Some((command, rest)) = args.command.split_first() {
        table.insert("command", toml_edit::value(command));
        if !rest.is_empty() {
            table.insert("args", toml_edit::value(rest.iter().collect::<Array>()));
        }
        if !args.env.is_empty() {
            let env: InlineTable = args
                .env
                .iter()
                .map(|(key, value)| (key.as_str(), value.as_str()))
                .collect();
            table.insert("env", toml_edit::value(env));
        }
    }
    table
}

/// Makes `change` to the config file at `path`, keeping the rest of it
/// as it is. Refused, and nothing written, when the file is not one
/// dashfloat reads or the change would bring a problem it did not have;
/// undone when the file written does not read back with the change.
fn edit(path: &Path, change: &Change<'_>) -> Result<(), McpCliError> {
    let shown = path.display().to_string();
    let before = read_config(path)?;
    let before_text = before.as_deref().unwrap_or_default();
    let (_, known_problems) = read_back(before_text, path);
    let invalid = |detail: String| McpCliError::Invalid {
        path: shown.clone(),
        detail,
    };
    if let Some(ConfigError::Parse { detail, .. }) = known_problems
        .iter()
        .find(|p| matches!(p, ConfigError::Parse { .. }))
    {
        return Err(invalid(detail.clone()));
    }
    let mut doc: DocumentMut = before_text
        .parse()
        .map_err(|e: toml_edit::TomlError| invalid(e.message().to_owned()))?;
    change.apply(&mut doc, &shown)?;
    let mut after = doc.to_string();
    // The blank line that set a removed first table's successor apart
    // is not left at the top.
    if !before_text.starts_with('\n') {
        after = after.trim_start_matches('\n').to_owned();
    }
    let reads_back = |text: &str| {
        let (servers, problems) = read_back(text, path);
        let new: Vec<String> = problems
            .iter()
            .filter(|p| !known_problems.contains(p))
            .map(ToString::to_string)
            .collect();
        if new.is_empty() {
            change.made(&servers)
        } else {
            Err(new.join("; "))
        }
    };
    reads_back(&after).map_err(|detail| McpCliError::WouldBreak {
        path: shown.clone(),
        detail,
    })?;
    write(path, &after)?;
    let written = read_config(path)?.unwrap_or_default();
    if let Err(detail) = reads_back(&written) {
        let undone = match &before {
            Some(text) => write(path, text).map(|()| "the earlier file was put back"),
            None => std::fs::remove_file(path)
                .map(|()| "it was removed")
                .map_err(|source| McpCliError::Write {
                    path: shown.clone(),
                    source,
                }),
        };
        return Err(McpCliError::ReadBack {
            path: shown,
            detail,
            undone: undone.map_or_else(|e| format!("and undoing it failed: {e}"), str::to_owned),
        });
    }
    Ok(())
}

/// Writes `text` to the config file at `path` through a temporary file,
/// 0600, in the directory of the file a symlink at `path` points to;
/// makes the directory, 0700, when it is missing.
fn write(path: &Path, text: &str) -> Result<(), McpCliError> {
    let failed = |source| McpCliError::Write {
        path: path.display().to_string(),
        source,
    };
    let target = match path.canonicalize() {
        Ok(real) => real,
        Err(e) if e.kind() == io::ErrorKind::NotFound => path.to_path_buf(),
        Err(e) => return Err(failed(e)),
    };
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        own_files::make_dir(dir).map_err(failed)?;
    }
    own_files::write_atomically(dir, &target, text.as_bytes(), TEMP_PREFIX).map_err(failed)
}

/// `list`'s table: a header, then a server a line.
fn listing(servers: &[Listed]) -> String {
    let header = ["NAME", "ENABLED", "SOURCE", "TRANSPORT", "TOOLS"].map(str::to_owned);
    let rows: Vec<[String; 5]> = std::iter::once(header)
        .chain(servers.iter().map(|s| {
            [
                s.config.name.clone(),
                yes_no(s.config.enabled).to_owned(),
                source(s),
                transport_brief(&s.config.transport),
                tools_brief(&s.config),
            ]
        }))
        .collect();
    let mut widths = [0; 5];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    rows.iter()
        .map(|row| {
            let line: Vec<String> = row
                .iter()
                .zip(widths)
                .map(|(cell, width)| format!("{cell:width$}"))
                .collect();
            format!("{}\n", line.join("  ").trim_end())
        })
        .collect()
}

/// `get`'s text: the name, then a field a line.
fn details(server: &Listed) -> String {
    let config = &server.config;
    let mut fields: Vec<(&str, String)> = vec![
        ("source", source(server)),
        ("enabled", yes_no(config.enabled).to_owned()),
    ];
    match &config.transport {
        Transport::Stdio {
            command,
            args,
            env,
            env_vars,
            cwd,
        } => fields.extend([
            ("transport", "stdio".to_owned()),
            ("command", shell_word(command).into_owned()),
            (
                "args",
                or_dash((!args.is_empty()).then(|| command_line(args))),
            ),
            ("env", or_dash(pairs(&masked(env)))),
            ("env_vars", or_dash(env_vars.iter())),
            (
                "cwd",
                cwd.as_ref()
                    .map_or_else(|| "-".to_owned(), |cwd| cwd.display().to_string()),
            ),
        ]),
        Transport::Http {
            url,
            bearer_token_env_var,
            http_headers,
            env_http_headers,
        } => fields.extend([
            ("transport", "streamable_http".to_owned()),
            ("url", redact_userinfo(url).into_owned()),
            (
                "bearer_token_env_var",
                bearer_token_env_var
                    .clone()
                    .unwrap_or_else(|| "-".to_owned()),
            ),
            ("http_headers", or_dash(pairs(&masked(http_headers)))),
            ("env_http_headers", or_dash(pairs(env_http_headers))),
        ]),
    }
    fields.extend([
        (
            "startup_timeout_sec",
            config.startup_timeout.as_secs_f64().to_string(),
        ),
        (
            "tool_timeout_sec",
            config.tool_timeout.as_secs_f64().to_string(),
        ),
        (
            "enabled_tools",
            config
                .enabled_tools
                .as_ref()
                .map_or_else(|| "all".to_owned(), |only| or_dash(only.iter())),
        ),
        ("disabled_tools", or_dash(config.disabled_tools.iter())),
        ("approval", approval_brief(config)),
        ("sandbox", sandbox_name(config.sandbox).to_owned()),
    ]);
    if config.origin == Origin::Config {
        fields.push(("remove", format!("dashfloat mcp remove {}", config.name)));
    }
    let mut out = format!("{}\n", config.name);
    for (key, value) in fields {
        out.push_str(&format!("  {key}: {value}\n"));
    }
    out
}

/// Where a server comes from, in words.
fn source(server: &Listed) -> String {
    match (server.config.origin, server.trusted) {
        (Origin::Config, _) => "config".to_owned(),
        (Origin::Project, true) => format!("{} (trusted)", MCP_JSON.path),
        (Origin::Project, false) => format!("{} (untrusted)", MCP_JSON.path),
    }
}

/// The command line or the URL, with the names of what is set for it.
fn transport_brief(transport: &Transport) -> String {
    let (mut line, names): (String, Vec<&String>) = match transport {
        Transport::Stdio {
            command, args, env, ..
        } => (
            command_line(std::iter::once(command).chain(args)),
            env.keys().collect(),
        ),
        Transport::Http {
            url, http_headers, ..
        } => (
            redact_userinfo(url).into_owned(),
            http_headers.keys().collect(),
        ),
    };
    let label = match transport {
        Transport::Stdio { .. } => "env",
        Transport::Http { .. } => "headers",
    };
    if !names.is_empty() {
        line.push_str(&format!(" ({label}: {})", or_dash(names)));
    }
    line
}

/// Which tools are offered and which run unasked, in brief.
fn tools_brief(config: &ServerConfig) -> String {
    let mut offered = config.enabled_tools.as_ref().map_or_else(
        || "all".to_owned(),
        |only| format!("only {}", or_dash(only)),
    );
    if !config.disabled_tools.is_empty() {
        offered.push_str(&format!(" but {}", or_dash(&config.disabled_tools)));
    }
    format!("{offered}; {}", approval_brief(config))
}

/// Which calls run without asking, in brief.
fn approval_brief(config: &ServerConfig) -> String {
    let approval = &config.approval;
    match (approval.all, approval.asked.is_empty()) {
        (true, true) => "unasked".to_owned(),
        (true, false) => format!("unasked but {}", or_dash(&approval.asked)),
        (false, _) if approval.tools.is_empty() => "asked".to_owned(),
        (false, _) => format!("asked but {}", or_dash(&approval.tools)),
    }
}

/// `sandbox` as the config file spells it.
fn sandbox_name(sandbox: Sandbox) -> &'static str {
    match sandbox {
        Sandbox::Unconfined => "off",
        Sandbox::ReadOnly => "read-only",
        Sandbox::WorkspaceWrite => "workspace-write",
    }
}

fn yes_no(yes: bool) -> &'static str {
    if yes { "yes" } else { "no" }
}

/// The items joined by `, `, or `-` when there are none.
fn or_dash(items: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    let joined: Vec<String> = items.into_iter().map(|i| i.as_ref().to_owned()).collect();
    if joined.is_empty() {
        "-".to_owned()
    } else {
        joined.join(", ")
    }
}

/// `KEY=VALUE` of each pair.
fn pairs<V: AsRef<str>>(map: &BTreeMap<impl AsRef<str>, V>) -> Vec<String> {
    map.iter()
        .map(|(key, value)| format!("{}={}", key.as_ref(), value.as_ref()))
        .collect()
}

/// The names of `map` with [`MASK`] for each value: variables and
/// headers may hold credentials.
fn masked(map: &BTreeMap<String, String>) -> BTreeMap<&str, &'static str> {
    map.keys().map(|key| (key.as_str(), MASK)).collect()
}

/// `words` as a shell command line.
fn command_line<'a>(words: impl IntoIterator<Item = &'a String>) -> String {
    let words: Vec<Cow<'_, str>> = words.into_iter().map(|word| shell_word(word)).collect();
    words.join(" ")
}

/// `word` as a shell would take it back: in single quotes when it holds
/// anything but letters, digits and `@%+=:,./_-`.
fn shell_word(word: &str) -> Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(format!("'{}'", word.replace('\'', r"'\''")))
    }
}

/// A server as `list --json` and `get --json` print it (the fields are
/// described in `dashfloat mcp list --help`).
#[derive(Serialize)]
struct Shown<'a> {
    name: &'a str,
    source: &'static str,
    trusted: bool,
    enabled: bool,
    transport: ShownTransport<'a>,
    startup_timeout_sec: f64,
    tool_timeout_sec: f64,
    enabled_tools: Option<&'a BTreeSet<String>>,
    disabled_tools: &'a BTreeSet<String>,
    approval: ShownApproval<'a>,
    sandbox: &'static str,
}

/// How the server is reached, values of variables and headers masked.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ShownTransport<'a> {
    Stdio {
        command: &'a str,
        args: &'a [String],
        env: BTreeMap<&'a str, &'static str>,
        env_vars: &'a [String],
        cwd: Option<&'a Path>,
    },
    StreamableHttp {
        url: Cow<'a, str>,
        bearer_token_env_var: Option<&'a str>,
        http_headers: BTreeMap<&'a str, &'static str>,
        env_http_headers: &'a BTreeMap<String, String>,
    },
}

/// Which tools run unasked.
#[derive(Serialize)]
struct ShownApproval<'a> {
    default: &'static str,
    approve: &'a BTreeSet<String>,
    prompt: &'a BTreeSet<String>,
}

impl<'a> Shown<'a> {
    fn of(server: &'a Listed) -> Shown<'a> {
        let config = &server.config;
        let transport = match &config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                env_vars,
                cwd,
            } => ShownTransport::Stdio {
                command,
                args,
                env: masked(env),
                env_vars,
                cwd: cwd.as_deref(),
            },
            Transport::Http {
                url,
                bearer_token_env_var,
                http_headers,
                env_http_headers,
            } => ShownTransport::StreamableHttp {
                url: redact_userinfo(url),
                bearer_token_env_var: bearer_token_env_var.as_deref(),
                http_headers: masked(http_headers),
                env_http_headers,
            },
        };
        Shown {
            name: &config.name,
            source: match config.origin {
                Origin::Config => "config",
                Origin::Project => "project",
            },
            trusted: server.trusted,
            enabled: config.enabled,
            transport,
            startup_timeout_sec: config.startup_timeout.as_secs_f64(),
            tool_timeout_sec: config.tool_timeout.as_secs_f64(),
            enabled_tools: config.enabled_tools.as_ref(),
            disabled_tools: &config.disabled_tools,
            approval: ShownApproval {
                default: if config.approval.all {
                    "approve"
                } else {
                    "prompt"
                },
                approve: &config.approval.tools,
                prompt: &config.approval.asked,
            },
            sandbox: sandbox_name(config.sandbox),
        }
    }
}
