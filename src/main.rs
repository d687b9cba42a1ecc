//! The `dashfloat` binary: reads the configuration, starts the agent actor
//! and the UI task — or, for `dashfloat exec`, the headless driver in its
//! place — and wires them together with bounded channels.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use dashfloat::agent::{
    self, AgentSetup, ApprovalPolicy, Approvals, Primed, Remembered, SandboxScope, WorkspaceWrite,
};
use dashfloat::bounds::HANDOVER_FD_VAR;
use dashfloat::config::{Cli, CliCommand, Config, ExecArgs};
use dashfloat::exec::{self, ExecError, ExecSetup};
use dashfloat::hooks::Hook;
use dashfloat::launch::Launch;
use dashfloat::llm::classify::RequestContext;
use dashfloat::llm::stream::{Endpoint, EndpointError};
use dashfloat::log::Log;
use dashfloat::mcp::McpServers;
use dashfloat::permissions::Store;
use dashfloat::protocol::{AgentEvent, ApprovalMode, Severity, UiCommand};
use dashfloat::safe_text::strip_controls;
use dashfloat::secret::Secret;
use dashfloat::session::{OpenSession, SessionSetup, SessionStore};
use dashfloat::tools::sandbox::SandboxSettings;
use dashfloat::tools::{Analyser, Registry, ToolContext};
use dashfloat::trust::{MCP_JSON, PROJECT_CONFIG, ProjectTrust, TrustStore};
use dashfloat::ui::app::{self, UiSetup};
use dashfloat::ui::picker::{age, size};
use dashfloat::ui::state::SessionInfo;

/// Commands queued from the UI to the agent. The person types far slower
/// than the agent reads; the UI never waits on this queue.
const COMMAND_QUEUE: usize = 64;
/// Events queued from the agent to the UI. When full, the agent (and so the
/// stream behind it) waits for the UI: backpressure, not growth.
const EVENT_QUEUE: usize = 1024;
/// How long the agent gets to stop its tasks after the UI quits, and to
/// have the server save its slot twice, as the session's and as the fixed
/// prefix's (ADR 0034).
const AGENT_SHUTDOWN_GRACE: Duration = Duration::from_millis(500)
    .saturating_add(dashfloat::bounds::SLOT_ACTION_TIMEOUT.saturating_mul(2));
/// How long exiting waits for blocking file operations still running.
const RUNTIME_SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

fn main() -> ExitCode {
    dashfloat::memory::give_large_buffers_own_pages();
    // First, while there is one thread: the key must not stay in this
    // process image, where commands could read it (this may re-execute).
    let launch = Launch::conceal(|| {
        let cli = <Cli as clap::Parser>::parse();
        Config::load(&cli, |k| std::env::var(k).ok()).0.api_key_env
    });
    let started = std::time::Instant::now();
    let cli = launch.cli();
    let (config, problems) = Config::load(&cli, |k| launch.var(k));
    let store = SessionStore::default_dir(|k| launch.var(k)).map(SessionStore::at);
    let config_dir = dashfloat::config::config_dir(|k| launch.var(k));
    let command_dirs = dashfloat::commands::person_dirs(config_dir.as_deref(), |k| launch.var(k));
    let run = match cli.command.clone() {
        Some(CliCommand::Sessions { json }) => {
            return print_sessions(store.as_ref(), json, cli.all);
        }
        Some(CliCommand::Mcp { command }) => {
            let places = dashfloat::mcp::cli::Places {
                config_file: cli.config_path(|k| launch.var(k)),
                config_dir,
                project: working_directory().canonicalize().ok(),
            };
            return dashfloat::mcp::cli::run(&command, &places);
        }
        Some(CliCommand::Exec(args)) => {
            let prompt = match cli.open_session() {
                OpenSession::Pick { .. } => Err(ExecError::Picker),
                _ => exec::read_prompt(args.prompt.clone()),
            };
            match prompt {
                Ok(prompt) => Run::Exec(args, prompt),
                Err(e) => {
                    eprintln!("dashfloat: {}", strip_controls(&e.to_string()));
                    return ExitCode::from(dashfloat::bounds::EXIT_USAGE);
                }
            }
        }
        Some(CliCommand::PrimeCache) => Run::Prime,
        None => Run::Tui,
    };
    let pass_env = launch.pass_env(&config.pass_env);
    // Read here: credentials are no longer in this process's environment.
    let mcp_vars = config
        .mcp_servers
        .iter()
        .flat_map(|server| server.variables())
        .filter_map(|name| Some((name.to_owned(), Secret::new(launch.var(name)?))))
        .collect();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("dashfloat: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let notes = problems
        .iter()
        .map(ToString::to_string)
        .chain(launch.problems.iter().map(|e| {
            format!("{e}; commands you approve may be able to read the API key and headers")
        }))
        .map(|text| (Severity::Error, text))
        .collect();
    let start = Start {
        config,
        pass_env,
        mcp_vars,
        log_path: cli.log.clone(),
        notes,
        sessions: store.map(|store| (store, cli.open_session())),
        config_dir,
        command_dirs,
        headless: matches!(run, Run::Exec(..)),
    };
    let outcome = match run {
        Run::Exec(args, prompt) => runtime.block_on(run_exec(start, args, prompt, started)),
        Run::Prime => runtime.block_on(run_prime(start)),
        Run::Tui => runtime.block_on(run_tui(start)),
    };
    // Tasks still running are dropped, which kills what their commands
    // started; a blocking file operation is not waited for beyond the
    // grace. Then whatever is left under us dies: no command outlives us.
    runtime.shutdown_timeout(RUNTIME_SHUTDOWN_GRACE);
    dashfloat::tools::kill_all_commands();
    match outcome {
        Ok(Ended::Exec(status)) => ExitCode::from(status),
        Ok(Ended::Prime(primed)) => {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", strip_controls(&primed.to_string()));
            let _ = out.flush();
            if primed.succeeded() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Ok(Ended::Tui(transcript)) => {
            // Printed on the normal screen after the alternate one is left,
            // so the conversation stays in the terminal's scrollback; like
            // everything printed outside ratatui, without control bytes.
            // After a hang-up there is no terminal to print to: no failure.
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(strip_controls(&transcript).as_bytes());
            let _ = out.flush();
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "dashfloat: {}",
                strip_controls(&e.to_string())
            );
            ExitCode::FAILURE
        }
    }
}

/// What this run does.
enum Run {
    /// The full-screen session.
    Tui,
    /// `dashfloat exec`, with its prompt.
    Exec(ExecArgs, String),
    /// `dashfloat prime-cache`.
    Prime,
}

/// How a run ended.
enum Ended {
    /// The full screen closed: the transcript, for the scrollback.
    Tui(String),
    /// `dashfloat exec` finished: its exit status.
    Exec(u8),
    /// `dashfloat prime-cache` finished: what it did.
    Prime(Primed),
}

/// `dashfloat sessions [--json] [--all]`: the saved sessions on stdout,
/// newest first; the files skipped, with why, on stderr.
fn print_sessions(store: Option<&SessionStore>, json: bool, all: bool) -> ExitCode {
    let Some(store) = store else {
        eprintln!(
            "dashfloat: neither XDG_CONFIG_HOME nor HOME is set: there are no saved sessions"
        );
        return ExitCode::FAILURE;
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let here = cwd.to_string_lossy();
    let listing = store.list((!all).then_some(here.as_ref()));
    let mut err = std::io::stderr().lock();
    for note in listing.notes() {
        let _ = writeln!(err, "dashfloat: {}", strip_controls(&note));
    }
    let text = if json {
        match serde_json::to_string_pretty(&listing.sessions) {
            Ok(text) => format!("{text}\n"),
            Err(e) => {
                let _ = writeln!(err, "dashfloat: cannot encode the list: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else if listing.sessions.is_empty() {
        format!(
            "no saved sessions {}\n",
            if all {
                "yet"
            } else {
                "in this directory (--all lists every directory's)"
            }
        )
    } else {
        let now = dashfloat::session::now_secs();
        listing
            .sessions
            .iter()
            .map(|s| {
                let line = format!(
                    "{}  {:>9}  {:>8}  {}  {}",
                    s.id,
                    age(now, s.updated),
                    size(s.bytes),
                    s.title,
                    s.directory
                );
                format!("{}\n", strip_controls(&line))
            })
            .collect()
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    ExitCode::SUCCESS
}

/// What both the full screen and `dashfloat exec` start the agent from.
struct Start {
    config: Config,
    pass_env: Vec<(OsString, Secret<OsString>)>,
    /// The values of the variables the MCP servers' tables name.
    mcp_vars: HashMap<String, Secret>,
    log_path: Option<PathBuf>,
    /// Start-up problems, for the screen or stderr.
    notes: Vec<(Severity, String)>,
    sessions: Option<(SessionStore, OpenSession)>,
    /// dashfloat's configuration directory, where the commands remembered
    /// for each project are kept; `None` when neither variable names one.
    config_dir: Option<PathBuf>,
    /// The person's directories of custom commands (ADR 0053).
    command_dirs: Vec<PathBuf>,
    /// No one can confirm a call (`dashfloat exec`).
    headless: bool,
}

/// The agent, running on its own task, and the channels to it.
struct Running {
    commands: mpsc::Sender<UiCommand>,
    events: mpsc::Receiver<AgentEvent>,
    task: JoinHandle<()>,
    /// The start-up notes with the agent set-up's own added.
    notes: Vec<(Severity, String)>,
    /// The approval policy in force, as the status bar shows it.
    approval: ApprovalMode,
}

/// Waits a moment for the agent, told to quit, to end (it cancels what
/// runs, killing command process groups); past it the agent is aborted.
async fn stop_agent(mut task: JoinHandle<()>) {
    if tokio::time::timeout(AGENT_SHUTDOWN_GRACE, &mut task)
        .await
        .is_err()
    {
        task.abort();
    }
}

/// Sets the agent up as the configuration says and starts it: the one
/// place both front ends get their agent from. The agent's own start-up —
/// the HTTP client and its TLS roots, the project's instructions (git is
/// asked for the work tree), discovery, the warm-up, the project's file
/// list — waits for `first_frame`, so that on a busy machine none of it
/// takes a core from the first frame (ADR 0041).
fn start_agent(
    start: Start,
    cwd: &Path,
    first_frame: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<Running> {
    let (prepared, notes) = prepare(start, cwd)?;
    let mode = prepared.approval.mode();
    let (command_tx, command_rx) = mpsc::channel(COMMAND_QUEUE);
    let (event_tx, event_rx) = mpsc::channel(EVENT_QUEUE);
    // The client (TLS roots and all) is built on the agent's task, once the
    // first frame is on screen.
    let task = tokio::spawn(async move {
        first_frame.await;
        agent::run(prepared.into_setup(), command_rx, event_tx).await;
    });
    Ok(Running {
        commands: command_tx,
        events: event_rx,
        task,
        notes,
        approval: mode,
    })
}

/// Everything the agent is set up from but its HTTP client, which
/// [`Prepared::into_setup`] builds.
struct Prepared {
    config: Config,
    tools: ToolContext,
    approval: Approvals,
    read_only: Option<Analyser>,
    log: Log,
    sessions: Option<SessionSetup>,
    mcp: Option<McpServers>,
    mcp_trust: Option<TrustStore>,
    command_dirs: Vec<PathBuf>,
    hooks: Vec<Hook>,
    hooks_trust: Option<TrustStore>,
    headless: bool,
}

impl Prepared {
    /// The agent's setup, its endpoint's client built now.
    fn into_setup(self) -> AgentSetup {
        let config = self.config;
        AgentSetup {
            endpoint: endpoint(&config),
            model: config.model.clone(),
            system_prompt: agent::system_prompt(),
            tools: self.tools,
            registry: Registry::builtin(),
            approval: self.approval,
            read_only: self.read_only,
            headless: self.headless,
            max_steps: config.max_steps,
            temperature: config.temperature,
            seed: config.seed,
            log: self.log,
            questions: config.questions(),
            context_window: config.context_window,
            max_output: config.max_output,
            compact_at: config.compact_at,
            sessions: self.sessions,
            tool_syntax: config.tool_syntax,
            warm_cache: config.warm_cache,
            attach_named_files: config.attach_named_files,
            ask_to_act: config.ask_to_act,
            ask_to_look: config.ask_to_look,
            project_overview: config.project_overview,
            mcp: self.mcp,
            mcp_trust: self.mcp_trust,
            command_dirs: self.command_dirs,
            hooks: self.hooks,
            hooks_trust: self.hooks_trust,
        }
    }
}

/// What the agent is set up from, as the configuration says, in `cwd`;
/// and the start-up notes with those of the set-up added. The one place
/// the full screen, `exec` and `prime-cache` set their agent up.
fn prepare(start: Start, cwd: &Path) -> std::io::Result<(Prepared, Vec<(Severity, String)>)> {
    let Start {
        mut config,
        pass_env,
        mcp_vars,
        log_path,
        mut notes,
        sessions,
        config_dir,
        command_dirs,
        headless,
    } = start;
    // `exec`'s prompt comes at once: no typing to warm the cache during,
    // and no slot to keep (ADR 0032, 0034).
    config.warm_cache &= !headless;
    let sandbox = SandboxSettings::from_env().with_deny_read(config.sandbox_deny_read.clone());
    let mut tools = match ToolContext::sandboxed(cwd, sandbox) {
        Ok(tools) => tools,
        Err(e) => {
            return Err(std::io::Error::new(
                e.kind(),
                format!("cannot use the working directory {}: {e}", cwd.display()),
            ));
        }
    };
    let sessions = match sessions {
        Some((store, open)) => Some(SessionSetup {
            store,
            open,
            save: config.save_sessions,
            directory: cwd.to_string_lossy().into_owned(),
            base_url: config.base_url.clone(),
        }),
        None => {
            notes.push((
                Severity::Notice,
                "neither XDG_CONFIG_HOME nor HOME is set: this session is not saved".to_string(),
            ));
            None
        }
    };
    let log = match &log_path {
        None => Log::off(),
        Some(path) => Log::to_file(path).unwrap_or_else(|e| {
            notes.push((
                Severity::Error,
                format!(
                    "cannot open the log file {}: {e}; logging is off",
                    path.display()
                ),
            ));
            Log::off()
        }),
    };
    tools.exec_timeout = config.exec_timeout;
    tools.exec_timeout_max = config.exec_timeout_max;
    tools.secret_vars = vec![config.api_key_env.clone(), HANDOVER_FD_VAR.to_owned()];
    tools.pass_env = pass_env;
    let approval = approvals(&config, &tools.root, config_dir.as_deref(), &mut notes);
    let (mcp, mcp_trust) = mcp_servers(
        &config,
        &tools,
        config_dir.as_deref(),
        &log,
        |name| mcp_vars.get(name).map(|value| value.expose().clone()),
        &mut notes,
    );
    let (hooks, hooks_trust) = hooks(&config, &tools, config_dir.as_deref(), &mut notes);
    let read_only = config.auto_allow_read_only.then(|| {
        Analyser::for_workspace(std::sync::Arc::clone(&tools.workspace))
            .with_command_env(tools.command_env())
    });
    let prepared = Prepared {
        config,
        tools,
        approval,
        read_only,
        log,
        sessions,
        mcp,
        mcp_trust,
        command_dirs,
        hooks,
        hooks_trust,
        headless,
    };
    Ok((prepared, notes))
}

/// Who is asked and where commands run, as the configuration asks and as
/// far as this kernel can give it: `auto` (and `sandbox = "always"`)
/// need the workspace-write sandbox, and without it `auto` falls back to
/// `ask` with an error entry naming what is missing (`dashfloat exec`
/// then stops before its prompt). The project's remembered commands are
/// read from `config_dir` (ADR 0044).
fn approvals(
    config: &Config,
    root: &Path,
    config_dir: Option<&Path>,
    notes: &mut Vec<(Severity, String)>,
) -> Approvals {
    let mut approvals = Approvals::new(config.approval, WorkspaceWrite::Probed);
    approvals.scope = config.sandbox;
    if let Err(why) = approvals.admit(config.approval) {
        notes.push((Severity::Error, format!("{why}; the policy is ask")));
        approvals.policy = ApprovalPolicy::Ask;
    }
    let always = config.sandbox == SandboxScope::Always;
    if let Some(Err(why)) = always.then(|| approvals.workspace_write.get()) {
        notes.push((
            Severity::Error,
            format!("sandbox = \"always\" cannot be kept: {why}; every command you approve will fail to start"),
        ));
    }
    if let Some(dir) = config_dir {
        let store = Store::new(dir, root);
        let rules = store.load().unwrap_or_else(|e| {
            notes.push((
                Severity::Notice,
                format!("{e}; no remembered command applies until it is fixed or removed"),
            ));
            Vec::new()
        });
        approvals.remembered = Remembered {
            rules,
            store: Some(store),
        };
    }
    approvals
}

/// The MCP servers this session starts (none under `--no-mcp`): the
/// config file's, then the project's `.mcp.json` when the person trusted
/// it as it is now; an untrusted one is a notice saying how to trust it.
/// Nothing is started here (ADR 0045).
fn mcp_servers(
    config: &Config,
    tools: &ToolContext,
    config_dir: Option<&Path>,
    log: &Log,
    var: impl Fn(&str) -> Option<String>,
    notes: &mut Vec<(Severity, String)>,
) -> (Option<McpServers>, Option<TrustStore>) {
    if config.mcp_off {
        return (None, None);
    }
    let trust = config_dir.map(|dir| TrustStore::new(dir, &tools.root, &MCP_JSON));
    let mut servers = config.mcp_servers.clone();
    match trust.as_ref().map(TrustStore::read) {
        Some(ProjectTrust::Trusted(text)) => {
            let mut problems = Vec::new();
            servers.extend(dashfloat::mcp::config::from_project_file(&text, &mut problems));
            notes.extend(problems.iter().map(|p| (Severity::Error, p.to_string())));
        }
        Some(ProjectTrust::Untrusted(_)) => notes.push((
            Severity::Notice,
            "this project has a .mcp.json you have not trusted (or that changed since): its servers are not started. \
/mcp trust starts them and trusts the file as it is now"
                .to_owned(),
        )),
        Some(ProjectTrust::Unreadable(why)) => notes.push((
            Severity::Error,
            format!("cannot read this project's .mcp.json: {why}"),
        )),
        Some(ProjectTrust::Absent) | None => {}
    }
    let servers = McpServers::new(servers, tools.clone(), log.clone(), var);
    (Some(servers), trust)
}

/// The hooks this session runs: the config file's, then those of the
/// project's `.dashfloat/config.toml` when the person trusted it as it is
/// now; one not trusted (or changed since) that has hooks is a notice
/// saying how to see and trust them. `dashfloat exec` runs the same and
/// never asks (ADR 0054).
fn hooks(
    config: &Config,
    tools: &ToolContext,
    config_dir: Option<&Path>,
    notes: &mut Vec<(Severity, String)>,
) -> (Vec<Hook>, Option<TrustStore>) {
    let trust = config_dir.map(|dir| TrustStore::new(dir, &tools.root, &PROJECT_CONFIG));
    let mut hooks = config.hooks.clone();
    let mut problems = Vec::new();
    match trust.as_ref().map(TrustStore::read) {
        Some(ProjectTrust::Trusted(text)) => {
            hooks.extend(dashfloat::hooks::from_project_file(&text, &mut problems));
            notes.extend(problems.iter().map(|p| (Severity::Error, p.to_string())));
        }
        Some(ProjectTrust::Untrusted(text))
            if !dashfloat::hooks::from_project_file(&text, &mut problems).is_empty() =>
        {
            notes.push((
                Severity::Notice,
                "this project's .dashfloat/config.toml has hooks you have not trusted (or it changed since): they do not run. \
/hooks shows them; /hooks trust trusts the file as it is now"
                    .to_owned(),
            ));
        }
        Some(ProjectTrust::Unreadable(why)) => notes.push((
            Severity::Error,
            format!(
                "cannot read this project's .dashfloat/config.toml: {why}; its hooks do not run"
            ),
        )),
        Some(ProjectTrust::Untrusted(_) | ProjectTrust::Absent) | None => {}
    }
    (hooks, trust)
}

/// The working directory the tools run in. A path, not a string: a name
/// that is not UTF-8 must reach the tools as it is, not as a lossy copy
/// naming another directory.
fn working_directory() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}

/// The full-screen session.
async fn run_tui(start: Start) -> std::io::Result<Ended> {
    let cwd = working_directory();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let prices = start.config.prices.clone();
    let notify = start.config.notify;
    let (model, host, context_window) = (
        start.config.model.clone(),
        start.config.host().to_string(),
        start.config.context_window,
    );
    let pick_sessions = matches!(&start.sessions, Some((_, OpenSession::Pick { .. })));
    let (first_frame, drawn) = oneshot::channel();
    // A UI that ends before its first frame drops the sender: the agent
    // starts all the same, and ends as the UI is gone.
    let drawn = async {
        let _ = drawn.await;
    };
    let Running {
        commands,
        events,
        task,
        notes,
        approval,
    } = start_agent(start, &cwd, drawn)?;
    let session = SessionInfo {
        model,
        host,
        cwd: abbreviate_home(&cwd, home.as_deref()),
        context_window,
        approval,
        prices,
    };
    let setup = UiSetup {
        session,
        no_color,
        notes,
        pick_sessions,
        notify,
        first_frame,
    };
    let transcript = app::run(setup, commands, events).await;
    // The UI sent Quit: the agent cancels what runs and ends.
    stop_agent(task).await;
    transcript.map(Ended::Tui)
}
/// `dashfloat exec`: the same agent, driven headless for one turn.
async fn run_exec(
    start: Start,
    args: ExecArgs,
    prompt: String,
    started: std::time::Instant,
) -> std::io::Result<Ended> {
    let model = start.config.model.clone();
    let cwd = working_directory();
    let (prompt, command_notes) =
        match exec::command::command_prompt(prompt, &cwd, &start.command_dirs) {
            Ok(made) => made,
            Err(e) => {
                eprintln!("dashfloat: {}", strip_controls(&e.to_string()));
                return Ok(Ended::Exec(dashfloat::bounds::EXIT_USAGE));
            }
        };
    let Running {
        commands,
        events,
        task,
        mut notes,
        approval,
    } = start_agent(start, &cwd, std::future::ready(()))?;
    notes.extend(command_notes);
    let setup = ExecSetup {
        prompt,
        json: args.json,
        timeout: args.timeout.map(Duration::from_secs),
        model,
        approval: approval.policy,
        notes,
        started: tokio::time::Instant::from_std(started),
    };
    let status = exec::run(setup, commands, events).await;
    stop_agent(task).await;
    Ok(Ended::Exec(status))
}

/// `dashfloat prime-cache`: the agent set up as a new session here would
/// be, but with no session kept and no MCP server started (their tools are
/// not offered before the first prompt), runs its start-up and the new
/// conversation's warm-up, so a llama-server saves the fixed prefix's slot
/// (ADR 0034).
async fn run_prime(mut start: Start) -> std::io::Result<Ended> {
    start.config.mcp_off = true;
    let (mut prepared, _notes) = prepare(start, &working_directory())?;
    prepared.sessions = None;
    Ok(Ended::Prime(agent::prime(prepared.into_setup()).await))
}

fn endpoint(config: &Config) -> Result<Endpoint, EndpointError> {
    let client = dashfloat::llm::build_client(config.request_timeout, &config.base_url)
        .map_err(EndpointError::Client)?;
    Ok(Endpoint {
        client,
        context: RequestContext {
            base_url: config.base_url.clone(),
            model: config.model.clone(),
            key_var: config.api_key_env.clone(),
            request_timeout: config.request_timeout,
            wire: config.wire,
        },
        api_key: config.api_key.clone(),
        headers: config.headers.clone(),
        idle_timeout: config.idle_timeout,
    })
}

/// The working directory for the status bar (lossy where it is not UTF-8:
/// it is only shown), with the home directory as `~`.
fn abbreviate_home(path: &Path, home: Option<&Path>) -> String {
    match home {
        Some(home) if !home.as_os_str().is_empty() && home != Path::new("/") => {
            match path.strip_prefix(home) {
                Ok(rest) if rest.as_os_str().is_empty() => "~".to_string(),
                Ok(rest) => format!("~/{}", rest.display()),
                Err(_) => path.display().to_string(),
            }
        }
        _ => path.display().to_string(),
    }
}
