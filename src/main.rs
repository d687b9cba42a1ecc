//! The `dashfloat` binary: reads the configuration, starts the agent actor
//! and the UI task, and wires them together with bounded channels.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use tokio::sync::mpsc;

use dashfloat::agent::{self, AgentSetup};
use dashfloat::config::{Cli, CliCommand, Config};
use dashfloat::launch::{HANDOVER_FD_VAR, Launch};
use dashfloat::llm::classify::RequestContext;
use dashfloat::llm::stream::{Endpoint, EndpointError};
use dashfloat::log::Log;
use dashfloat::protocol::Severity;
use dashfloat::safe_text::strip_controls;
use dashfloat::secret::Secret;
use dashfloat::session::{OpenSession, SessionSetup, SessionStore};
use dashfloat::tools::{Analyser, ToolContext};
use dashfloat::ui::app::{self, UiSetup};
use dashfloat::ui::picker::{age, size};
use dashfloat::ui::state::SessionInfo;

/// Commands queued from the UI to the agent. The person types far slower
/// than the agent reads; the UI never waits on this queue.
const COMMAND_QUEUE: usize = 64;
/// Events queued from the agent to the UI. When full, the agent (and so the
/// stream behind it) waits for the UI: backpressure, not growth.
const EVENT_QUEUE: usize = 1024;
/// How long the agent gets to stop its tasks after the UI quits.
const AGENT_SHUTDOWN_GRACE: Duration = Duration::from_millis(500);
/// How long exiting waits for blocking file operations still running.
const RUNTIME_SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

fn main() -> ExitCode {
    // First, while there is one thread: the key must not stay in this
    // process image, where commands could read it (this may re-execute).
    let launch = Launch::conceal(|| {
        let cli = <Cli as clap::Parser>::parse();
        Config::load(&cli, |k| std::env::var(k).ok()).0.api_key_env
    });
    let cli = launch.cli();
    let (config, problems) = Config::load(&cli, |k| launch.var(k));
    let store = SessionStore::default_dir(|k| launch.var(k)).map(SessionStore::at);
    if let Some(CliCommand::Sessions { json }) = cli.command {
        return print_sessions(store.as_ref(), json, cli.all);
    }
    let pass_env = launch.pass_env(&config.pass_env);
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
    let outcome = runtime.block_on(run(
        config,
        pass_env,
        cli.log.clone(),
        notes,
        store.map(|store| (store, cli.open_session())),
    ));
    // Tasks still running are dropped, which kills what their commands
    // started; a blocking file operation is not waited for beyond the
    // grace. Then whatever is left under us dies: no command outlives us.
    runtime.shutdown_timeout(RUNTIME_SHUTDOWN_GRACE);
    dashfloat::tools::kill_all_commands();
    match outcome {
        Ok(transcript) => {
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

async fn run(
    config: Config,
    pass_env: Vec<(OsString, Secret<OsString>)>,
    log_path: Option<PathBuf>,
    notes: Vec<(Severity, String)>,
    sessions: Option<(SessionStore, OpenSession)>,
) -> std::io::Result<String> {
    // A path, not a string: a name that is not UTF-8 must reach the tools
    // as it is, not as a lossy copy naming another directory.
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let shown_cwd = abbreviate_home(&cwd, home.as_deref());
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let session = SessionInfo {
        model: config.model.clone(),
        host: config.host().to_string(),
        cwd: shown_cwd,
        context_window: config.context_window,
        approval: config.approval,
    };
    let mut tools = match ToolContext::new(&cwd) {
        Ok(tools) => tools,
        Err(e) => {
            return Err(std::io::Error::new(
                e.kind(),
                format!("cannot use the working directory {}: {e}", cwd.display()),
            ));
        }
    };
    let mut notes = notes;
    let pick_sessions = matches!(&sessions, Some((_, OpenSession::Pick { .. })));
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
    let read_only = config
        .auto_allow_read_only
        .then(|| Analyser::for_workspace(std::sync::Arc::clone(&tools.workspace)));
    let (command_tx, command_rx) = mpsc::channel(COMMAND_QUEUE);
    let (event_tx, event_rx) = mpsc::channel(EVENT_QUEUE);
    let system_prompt = agent::system_prompt();
    // The client (TLS roots and all) is built on the agent's task so the
    // first frame does not wait for it.
    let agent_task = tokio::spawn(async move {
        let setup = AgentSetup {
            endpoint: endpoint(&config),
            model: config.model.clone(),
            system_prompt,
            tools,
            approval: config.approval,
            read_only,
            max_steps: config.max_steps,
            temperature: config.temperature,
            seed: config.seed,
            log,
            questions: config.questions(),
            context_window: config.context_window,
            max_output: config.max_output,
            compact_at: config.compact_at,
            sessions,
            tool_syntax: config.tool_syntax,
        };
        agent::run(setup, command_rx, event_tx).await;
    });
    let setup = UiSetup {
        session,
        no_color,
        notes,
        pick_sessions,
    };
    let transcript = app::run(setup, command_tx, event_rx).await;
    // The UI sent Quit: the agent cancels what runs (killing command process
    // groups) and ends. A moment is enough; past it the agent is aborted.
    let mut agent_task = agent_task;
    if tokio::time::timeout(AGENT_SHUTDOWN_GRACE, &mut agent_task)
        .await
        .is_err()
    {
        agent_task.abort();
    }
    transcript
}

fn endpoint(config: &Config) -> Result<Endpoint, EndpointError> {
    let client =
        dashfloat::llm::build_client(config.request_timeout).map_err(EndpointError::Client)?;
    Ok(Endpoint {
        client,
        context: RequestContext {
            base_url: config.base_url.clone(),
            model: config.model.clone(),
            key_var: config.api_key_env.clone(),
            request_timeout: config.request_timeout,
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
