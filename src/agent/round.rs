//! One round of tool calls: the calls of one episode, validated, shown,
//! confirmed one at a time in order where the policy asks, executed by
//! per-call tasks (read-only calls side by side, mutations one at a time in
//! call order), and answered back to the model in call order. Every way a
//! round ends answers every call.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::permissions::Rule;
use crate::protocol::{
    AgentEvent, CallId, ConfirmRequest, Decision, FileGuard, Phase, Preview, PreviewKind,
    PreviewLine, Severity, ToolCallRequest,
};
use crate::tools::{
    self, Analyser, Approved, ClearedCommand, Effect, Judged, Registry, Sandbox, ToolCall,
    ToolFailure, ToolResult,
};

use crate::hooks::{Event, HookEvent, Ran, StopReason, ToolDone, ToolUse};
use crate::llm::wire::Message;

use super::conversation::{AssistantCall, tool_message};
use super::hooks::{CallHooks, HookEnds, blocked, done_status};
use super::policy::Approvals;
use super::repeat::{FAILED_REPEAT_NOTICE, FAILED_REPEAT_RETRIES, Repeat, RepeatDetector};
use super::turn_results::Kept;
use super::{Agent, Words, outcome};

/// How long quitting waits for the calls of a cancelled round to end: a
/// cancelled command dies at once and a file write is not cut short, so
/// this is ample, and well inside the time the process gives the agent
/// to stop (`AGENT_SHUTDOWN_GRACE`).
const QUIT_SETTLE: Duration = Duration::from_millis(300);

/// How often a running call's latest output is passed on at most: often
/// enough to watch a test run move, seldom enough that a command printing
/// a flood costs the screen ten redraws a second, not thousands.
pub(super) const LIVE_OUTPUT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

/// What a tool task (or a preview task) tells the agent. It crosses a task
/// boundary typed: the JSON the model reads is made only when the result
/// joins the conversation.
#[derive(Debug)]
pub(super) enum ToolEvent {
    /// The preview of a call that needs confirming is ready.
    Preview {
        /// The call the preview is for.
        id: CallId,
        /// The preview task's ticket, which the call holds while it waits.
        ticket: u64,
        /// The preview, or why none could be built: the call is then
        /// answered with that failure and never confirmed.
        preview: Result<Preview, ToolFailure>,
    },
    /// The analyser showed a command line to be read-only: it runs
    /// unasked, as the analyser rendered it.
    ReadOnly {
        /// Which call: the id its rows and its answer carry.
        id: CallId,
        /// The preview task's ticket, which the call holds while it waits.
        ticket: u64,
        /// What runs in the call's place.
        cleared: ClearedCommand,
    },
    /// A running call printed more: its latest lines.
    Output {
        /// Which call: the id its rows and its answer carry.
        id: CallId,
        /// The output's last lines.
        tail: String,
    },
    /// A call finished.
    Finished {
        /// The call that finished.
        id: CallId,
        /// What it came to (boxed: the other events are far smaller).
        result: Box<ToolResult>,
        /// Its `post_tool_use` hooks, run before this was sent.
        hooks: HookEnds,
    },
    /// A call's `pre_tool_use` hooks ended (ADR 0054).
    Hooked {
        /// Which call.
        id: CallId,
        /// The hooks' ticket, which the call holds while it waits.
        ticket: u64,
        /// How each hook ended, or why their task ended without that.
        ran: HookEnds,
    },
}

/// Where one call stands.
enum CallState {
    /// Validated, not started.
    Ready(ToolCall),
    /// Its `pre_tool_use` hooks run, in the task holding this ticket
    /// (stopped through the handle): only that task's answer counts.
    Hooking(ToolCall, u64, tokio::task::AbortHandle),
    /// Its preview is being built by the task holding this ticket: only
    /// that task's answer counts (a call id may come again in a later
    /// round, while a cancelled round's task still runs).
    Previewing(ToolCall, u64),
    /// Waiting for the person's y / Esc.
    Confirming(ToolCall, FileGuard),
    /// Its tool task runs.
    Running(CancellationToken),
    /// Its result is in.
    Done(ToolResult),
}

struct RoundCall {
    id: CallId,
    name: String,
    /// The arguments encoded (or `{}` when they were not an object), as
    /// the assistant message carries them.
    arguments: String,
    /// The arguments as the stream parsed them (`{}` when they were not
    /// an object), as hooks are told them.
    input: serde_json::Value,
    /// Its `pre_tool_use` hooks have let it go on.
    hooked: bool,
    /// The call in brief, for its row.
    summary: String,
    /// What the repeat detector counts the call under
    /// ([`RepeatDetector::key`]).
    key: String,
    needs_confirmation: bool,
    /// How the repeat detector counted the call: its advice, added to the
    /// result, and the key its result is compared under.
    repeat: Option<Repeat>,
    state: CallState,
}

/// The calls of one episode.
pub(super) struct Round {
    calls: Vec<RoundCall>,
    /// The next call to start, in order.
    cursor: usize,
    /// Confirmations shown so far, for "Confirm (2 of 3)".
    confirms_shown: usize,
    /// The turn was cancelled: nothing new starts; the round ends when the
    /// calls still running have reported.
    cancelling: bool,
    /// The calls attach what the person named, not what the model asked.
    for_person: bool,
    /// Each call's answer as the saved session holds it while the round
    /// is in flight: its result, cut as it will be sent, once it is in,
    /// `cancelled` until then (what resuming after a crash must tell the
    /// model). Kept as each result comes, so a save writes them without
    /// measuring the conversation again.
    answers: Vec<Message>,
}

impl Round {
    /// Validates the episode's calls against `registry`, their arguments
    /// as the stream parsed them. Invalid ones get their failure as their
    /// result at once and never reach a confirmation; so do writes and
    /// edits when the turn's prompt only asks a `question` (ADR 0049).
    pub(super) fn new(
        requests: Vec<ToolCallRequest>,
        approvals: &Approvals,
        registry: &Registry,
        (tools, question): (&tools::ToolContext, bool),
    ) -> Self {
        // Results are matched to calls by id; the stream's accumulator
        // gives every call of an episode an id of its own.
        let calls = requests
            .into_iter()
            .map(|req| {
                let object = req.arguments.object();
                let arguments = object.map_or_else(|| "{}".to_owned(), |map| {
                    serde_json::to_string(map).unwrap_or_else(|_| "{}".to_owned())
                });
                let input = serde_json::Value::Object(object.cloned().unwrap_or_default());
                let state = match req.error {
                    Some(why) => CallState::Done(
                        ToolFailure::ExecutionFailed {
                            tool: req.name.clone(),
                            message: format!(
                                "the call could not be assembled from the stream ({why}); make the call again"
                            ),
                        }
                        .into(),
                    ),
                    None => match registry.validate(&req.name, &req.arguments) {
                        Ok(ToolCall::WriteFile(_) | ToolCall::EditFile(_)) if question => {
                            CallState::Done(
                                ToolFailure::Unasked {
                                    tool: req.name.clone(),
                                }
                                .into(),
                            )
                        }
                        Ok(call) => CallState::Ready(call),
                        Err(failure) => CallState::Done(failure.into()),
                    },
                };
                let valid = match &state {
                    CallState::Ready(call) => Some(call),
                    _ => None,
                };
                let needs_confirmation =
                    valid.is_some_and(|c| approvals.needs_confirmation(c, tools));
                // A call that did not validate is shown by what its
                // arguments name, if they are an object.
                let summary = valid.map_or_else(
                    || object.map(tools::brief).unwrap_or_default(),
                    ToolCall::summary,
                );
                let key = RepeatDetector::key(&req.name, &req.arguments, valid);
                RoundCall {
                    id: req.id,
                    name: req.name,
                    arguments,
                    input,
                    hooked: false,
                    summary,
                    key,
                    needs_confirmation,
                    repeat: None,
                    state,
                }
            })
            .collect::<Vec<RoundCall>>();
        let answers = calls
            .iter()
            .map(|c| tool_message(c.id.clone(), &cancelled(&c.name)))
            .collect();
        Self {
            calls,
            cursor: 0,
            confirms_shown: 0,
            cancelling: false,
            for_person: false,
            answers,
        }
    }

    /// The reads of the files the person's prompt named (ADR 0038):
    /// read-only calls, so under every policy none asks; the repeat
    /// detector does not count them, as the model did not ask for them.
    pub(super) fn for_person(
        requests: Vec<ToolCallRequest>,
        approvals: &Approvals,
        registry: &Registry,
        tools: &tools::ToolContext,
    ) -> Self {
        Self {
            for_person: true,
            ..Self::new(requests, approvals, registry, (tools, false))
        }
    }

    /// Whether the episode made no calls.
    pub(super) fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// The calls as the assistant message carries them.
    pub(super) fn assistant_calls(&self) -> Vec<AssistantCall> {
        self.calls
            .iter()
            .map(|c| AssistantCall {
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            })
            .collect()
    }

    /// Stops every running call and every call's hooks (used when the
    /// agent itself ends).
    pub(super) fn cancel_all(&self) {
        for call in &self.calls {
            match &call.state {
                CallState::Running(token) => token.cancel(),
                CallState::Hooking(_, _, hooks) => hooks.abort(),
                CallState::Ready(_)
                | CallState::Previewing(..)
                | CallState::Confirming(..)
                | CallState::Done(_) => {}
            }
        }
    }

    /// The calls not started yet: validated, being hooked or previewed,
    /// or waiting for the person.
    fn not_started(&self) -> impl Iterator<Item = &RoundCall> {
        self.calls.iter().filter(|c| {
            matches!(
                c.state,
                CallState::Ready(_)
                    | CallState::Hooking(..)
                    | CallState::Previewing(..)
                    | CallState::Confirming(..)
            )
        })
    }

    fn confirms_total(&self) -> usize {
        self.calls.iter().filter(|c| c.needs_confirmation).count()
    }

    fn outstanding(&self, upto: usize) -> bool {
        self.calls[..upto].iter().any(|c| {
            matches!(
                c.state,
                CallState::Running(_)
                    | CallState::Hooking(..)
                    | CallState::Previewing(..)
                    | CallState::Confirming(..)
            )
        })
    }

    /// The calls that already have their result, with it.
    fn answered(&self) -> Vec<(CallId, ToolResult)> {
        self.calls
            .iter()
            .filter_map(|c| match &c.state {
                CallState::Done(result) => Some((c.id.clone(), result.clone())),
                _ => None,
            })
            .collect()
    }

    /// Every call's answer as a saved session holds it while the round is
    /// in flight, in call order.
    pub(super) fn saved_answers(&self) -> &[Message] {
        &self.answers
    }

    fn position(&self, id: &str) -> Option<usize> {
        self.calls.iter().position(|c| c.id == id)
    }
}

impl RoundCall {
    /// Starts the call's tool task; a command runs in `sandbox`. The
    /// `post_tool_use` hooks among `hooks` run in the same task, after it.
    fn start(
        &mut self,
        (run, guard, sandbox): (Approved, FileGuard, Sandbox),
        (tx, hooks): (&tokio::sync::mpsc::Sender<ToolEvent>, Option<&CallHooks>),
        ctx: &tools::ToolContext,
    ) {
        ctx.checkpoints.starting(&run);
        let token = CancellationToken::new();
        self.state = CallState::Running(token.clone());
        let ctx = tools::ToolContext {
            sandbox,
            ..ctx.clone()
        };
        let post = hooks
            .filter(|h| h.runs_for(HookEvent::PostToolUse, &self.name))
            .map(|h| (h.clone(), self.tool_use()));
        spawn_run(tx, &ctx, (self.id.clone(), post), run, guard, token);
    }

    /// The call as its hooks are told it.
    fn tool_use(&self) -> ToolUse {
        ToolUse {
            name: self.name.clone(),
            arguments: self.input.clone(),
        }
    }
}

/// How a round whose episode did not complete is answered.
pub(super) enum Abandon {
    /// The person interrupted the reply.
    Interrupted,
    /// The stream failed.
    Failed,
}

fn cancelled(tool: &str) -> ToolResult {
    ToolFailure::Cancelled {
        tool: tool.to_string(),
        output: None,
    }
    .into()
}

impl Agent {
    /// Shows the round's calls and starts working through them.
    pub(super) async fn start_round(&mut self, mut round: Round) {
        self.emit(AgentEvent::Phase(Phase::Executing)).await;
        let counted = !round.for_person;
        for call in &mut round.calls {
            call.repeat = counted.then(|| self.repeats.record(&call.name, call.key.clone()));
            self.emit(AgentEvent::ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                summary: call.summary.clone(),
            })
            .await;
        }
        // Calls that failed validation are answered now.
        let invalid = round.answered();
        if self.saving.on() {
            for (id, result) in &invalid {
                let answer = self.saved_answer(id, result);
                if let Some(index) = round.position(id) {
                    round.answers[index] = answer;
                }
            }
        }
        self.turn.run(round);
        self.save().await;
        for (id, result) in invalid {
            self.finish_call(&id, result).await;
        }
        self.advance().await;
    }

    /// Answers every call of a round whose episode did not complete, with
    /// `cancelled` or the failure, and ends the turn.
    pub(super) async fn abandon_round(&mut self, mut round: Round, how: Abandon) {
        for call in &mut round.calls {
            self.emit(AgentEvent::ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                summary: String::new(),
            })
            .await;
            let result = match how {
                Abandon::Interrupted => cancelled(&call.name),
                Abandon::Failed => ToolFailure::ExecutionFailed {
                    tool: call.name.clone(),
                    message: "the reply broke off before this call was complete; it was not run"
                        .to_string(),
                }
                .into(),
            };
            call.state = CallState::Done(result);
        }
        let answered = round.answered();
        round.cancelling = true;
        self.turn.run(round);
        for (id, result) in answered {
            self.finish_call(&id, result).await;
        }
        self.advance().await;
    }

    /// Ctrl+C / Esc during the round: running calls are stopped (their
    /// results, with partial output, still arrive), nothing new starts,
    /// and every call not yet running — a preview being built included,
    /// whose late result is then ignored — is answered `cancelled`.
    pub(super) async fn cancel_round(&mut self) {
        let Some(round) = self.turn.round_mut() else {
            return;
        };
        round.cancelling = true;
        round.cancel_all();
        let waiting: Vec<(CallId, ToolResult)> = round
            .not_started()
            .map(|c| (c.id.clone(), cancelled(&c.name)))
            .collect();
        for (id, result) in waiting {
            self.finish_call(&id, result).await;
        }
        self.advance().await;
    }

    /// Before quitting: a round still running is cancelled and the ends
    /// of its calls awaited, for at most [`QUIT_SETTLE`], so that what
    /// they did (a write that landed, a command's output) is saved with
    /// its result and checkpoint instead of as cancelled before it ran.
    pub(super) async fn settle_round(&mut self, tool_rx: &mut mpsc::Receiver<ToolEvent>) {
        if self.turn.round().is_none() {
            return;
        }
        self.cancel_round().await;
        let deadline = tokio::time::Instant::now() + QUIT_SETTLE;
        while self.turn.round().is_some() {
            match tokio::time::timeout_at(deadline, tool_rx.recv()).await {
                Ok(Some(event)) => self.on_tool_event(event).await,
                Ok(None) | Err(_) => break,
            }
        }
    }

    /// The person's answer to a confirmation. Words sent for a call no
    /// longer waiting (its turn ended meanwhile) are a prompt.
    pub(super) async fn decide(&mut self, id: &str, decision: Decision) {
        if self.turn.restoring().is_some_and(|r| r.asks(id)) {
            return self.restore_decided(decision).await;
        }
        let hooks = self.call_hooks();
        let waiting = self.turn.round_mut().and_then(|round| {
            let index = round.position(id)?;
            matches!(round.calls[index].state, CallState::Confirming(..)).then_some((round, index))
        });
        let Some((round, index)) = waiting else {
            if let Decision::Redirect(words) = decision {
                self.prompt(words, Words::Person).await;
            }
            return;
        };
        let call = &mut round.calls[index];
        let CallState::Confirming(tool, guard) = &call.state else {
            return;
        };
        match decision {
            Decision::Approve | Decision::Remember => {
                let (tool, guard) = (tool.clone(), *guard);
                let sandbox = self.setup.approval.sandbox(&tool, true);
                let rule = (decision == Decision::Remember)
                    .then(|| self.setup.approval.offer(&tool))
                    .flatten();
                call.start(
                    (Approved::Call(tool), guard, sandbox),
                    (&self.tool_tx, hooks.as_ref()),
                    &self.setup.tools,
                );
                self.emit(AgentEvent::Phase(Phase::Executing)).await;
                if let Some(rule) = rule {
                    self.remember(rule).await;
                }
            }
            Decision::Reject => {
                let id = call.id.clone();
                if let Some(repeat) = &call.repeat {
                    self.repeats.reject(&repeat.key);
                }
                let result = ToolFailure::Rejected {
                    tool: call.name.clone(),
                    again: false,
                }
                .into();
                self.finish_call(&id, result).await;
                self.advance().await;
            }
            Decision::Redirect(words) => {
                if let Some(repeat) = &call.repeat {
                    self.repeats.reject(&repeat.key);
                }
                self.saving.record_prompt(&words);
                // The rest of the reply followed the plan the person just
                // turned down: what has not started does not run.
                let mut answers: Vec<(CallId, ToolResult)> = round
                    .not_started()
                    .map(|c| {
                        let words = (c.id == id).then(|| words.clone());
                        let tool = c.name.clone();
                        (c.id.clone(), ToolFailure::Redirected { tool, words }.into())
                    })
                    .collect();
                answers.sort_by_key(|(call, _)| call.as_str() != id);
                for (call, result) in answers {
                    self.finish_call(&call, result).await;
                }
                self.advance().await;
            }
        }
    }

    /// A preview or a tool result arrived.
    pub(super) async fn on_tool_event(&mut self, event: ToolEvent) {
        match event {
            ToolEvent::Finished { id, result, hooks } => {
                let ran = self.hooks_ran(hooks).await;
                self.tell_hook_failures(&ran).await;
                self.finish_call(&id, *result).await;
                self.advance().await;
            }
            ToolEvent::Hooked { id, ticket, ran } => {
                let ran = self.hooks_ran(ran).await;
                self.call_hooked(&id, ticket, ran).await;
            }
            ToolEvent::Output { id, tail } => {
                let running = self.turn.round().is_some_and(|round| {
                    round.position(&id).is_some_and(|index| {
                        matches!(round.calls[index].state, CallState::Running(_))
                    })
                });
                if running {
                    self.emit(AgentEvent::ToolOutput { id, tail }).await;
                }
            }
            ToolEvent::ReadOnly {
                id,
                ticket,
                cleared,
            } => {
                let hooks = self.call_hooks();
                let Some(round) = self.turn.round_mut() else {
                    return;
                };
                let Some(index) = round.position(&id) else {
                    return;
                };
                let call = &mut round.calls[index];
                if !matches!(call.state, CallState::Previewing(_, t) if t == ticket) {
                    return;
                }
                // No longer one of the round's confirmations.
                call.needs_confirmation = false;
                let summary = format!("{} · read-only, ran unasked", cleared.summary());
                let run = (
                    Approved::Cleared(cleared),
                    FileGuard::Unguarded,
                    Sandbox::ReadOnly,
                );
                call.start(run, (&self.tool_tx, hooks.as_ref()), &self.setup.tools);
                self.emit(AgentEvent::ToolAllowed { id, summary }).await;
                self.emit(AgentEvent::Phase(Phase::Executing)).await;
            }
            ToolEvent::Preview {
                id,
                ticket,
                preview,
            } => {
                let Some(round) = self.turn.round_mut() else {
                    return;
                };
                let Some(index) = round.position(&id) else {
                    return;
                };
                let CallState::Previewing(tool, t) = &round.calls[index].state else {
                    return;
                };
                if *t != ticket {
                    return;
                }
                let tool = tool.clone();
                match preview {
                    Err(failure) => {
                        // Never put to the person: not one of the round's
                        // confirmations.
                        round.calls[index].needs_confirmation = false;
                        self.finish_call(&id, failure.into()).await;
                        self.advance().await;
                    }
                    // No one can answer a confirmation: the call is
                    // answered as not run, saying how to allow it.
                    Ok(_) if self.setup.headless => {
                        round.calls[index].needs_confirmation = false;
                        let failure = self.setup.approval.unattended(&tool);
                        self.finish_call(&id, failure.into()).await;
                        self.advance().await;
                    }
                    // The person said no to this very call already: asking
                    // again would only make them say it again.
                    Ok(_)
                        if round.calls[index]
                            .repeat
                            .as_ref()
                            .is_some_and(|r| self.repeats.rejected(&r.key)) =>
                    {
                        round.calls[index].needs_confirmation = false;
                        let failure = ToolFailure::Rejected {
                            tool: tool.name().to_string(),
                            again: true,
                        };
                        let text = format!(
                            "not asked again: you rejected this same call ({} {}) since your last message",
                            tool.name(),
                            tool.summary()
                        );
                        self.system(Severity::Notice, text).await;
                        self.finish_call(&id, failure.into()).await;
                        self.advance().await;
                    }
                    Ok(mut preview) => {
                        round.confirms_shown += 1;
                        let remember = self.setup.approval.offer(&tool);
                        let sandbox = self.setup.approval.sandbox(&tool, true);
                        preview
                            .lines
                            .extend(confinement_lines(sandbox, remember.as_ref()));
                        let request = ConfirmRequest {
                            id: id.clone(),
                            preview: preview.lines,
                            position: round.confirms_shown,
                            of: round.confirms_total(),
                            remember: remember.map(|rule| rule.to_string()),
                        };
                        round.calls[index].state = CallState::Confirming(tool, preview.guard);
                        self.emit(AgentEvent::Confirm(request)).await;
                        self.emit(AgentEvent::Phase(Phase::Confirming)).await;
                    }
                }
            }
        }
    }

    /// A call's `pre_tool_use` hooks ended: a call one denied is answered
    /// with the reason and never shown to the person; any other goes on.
    async fn call_hooked(&mut self, id: &str, ticket: u64, ran: Vec<Ran>) {
        let Some(round) = self.turn.round_mut() else {
            return;
        };
        let Some(index) = round.position(id) else {
            return;
        };
        let call = &mut round.calls[index];
        let CallState::Hooking(tool, t, _) = &call.state else {
            return;
        };
        if *t != ticket {
            return;
        }
        let tool = tool.clone();
        match blocked(&ran) {
            Some(reason) => {
                call.needs_confirmation = false;
                let failure = ToolFailure::Denied {
                    tool: call.name.clone(),
                    reason,
                };
                self.tell_hook_failures(&ran).await;
                self.finish_call(id, failure.into()).await;
            }
            None => {
                call.state = CallState::Ready(tool);
                call.hooked = true;
                self.tell_hook_failures(&ran).await;
            }
        }
        self.advance().await;
    }

    /// Records a call's result (with the repeat notice, if any) and shows
    /// its outcome.
    async fn finish_call(&mut self, id: &str, mut result: ToolResult) {
        let Some(round) = self.turn.round() else {
            return;
        };
        let Some(index) = round.position(id) else {
            return;
        };
        let call = &round.calls[index];
        result.notice = call.repeat.as_ref().and_then(|r| r.notice.clone());
        let shown = call.repeat.as_ref().and_then(|r| r.shown(&call.name));
        let status = outcome::status(&result.outcome);
        self.setup
            .log
            .line(|| format!("tool {} {}: {status:?}", call.name, call.id));
        let event = AgentEvent::ToolResult {
            id: call.id.clone(),
            status,
            excerpt: outcome::excerpt(&result.outcome),
        };
        let answer = self
            .saving
            .on()
            .then(|| self.saved_answer(&call.id, &result));
        if let Some(round) = self.turn.round_mut() {
            round.calls[index].state = CallState::Done(result);
            if let Some(answer) = answer {
                round.answers[index] = answer;
            }
        }
        self.emit(event).await;
        if let Some(shown) = shown {
            self.system(Severity::Notice, shown).await;
        }
        self.save().await;
    }

    /// A call's answer as a saved session holds it: cut as it will be
    /// sent, should a crash make this the answer a resumed session sends.
    fn saved_answer(&self, id: &str, result: &ToolResult) -> Message {
        let mut kept = result.clone();
        self.fit_result(&mut kept, result.to_json().len());
        tool_message(id.to_owned(), &kept)
    }

    /// Starts what can start now, in call order; ends the round when every
    /// call is answered.
    async fn advance(&mut self) {
        let hooks = self.call_hooks();
        let Some(round) = self.turn.round_mut() else {
            return;
        };
        // The files the person named are read as they asked: no hook of
        // the model's calls is run for them.
        let hooks = hooks.filter(|_| !round.for_person);
        let mut executing = false;
        // The row of a command started unasked in a sandbox, marked so.
        let mut allowed = None;
        while !round.cancelling && round.cursor < round.calls.len() {
            let index = round.cursor;
            let blocked = round.outstanding(index);
            let call = &mut round.calls[index];
            match &call.state {
                CallState::Done(_) => round.cursor += 1,
                CallState::Ready(tool) => {
                    let tool = tool.clone();
                    let read_only = !tool.mutates();
                    // A mutation waits for every earlier call; reads do not
                    // wait for each other.
                    if !read_only && blocked {
                        break;
                    }
                    // Its hooks before anything is shown or run: the
                    // person is never asked about a call a hook denies.
                    if let Some(hooks) = hooks
                        .as_ref()
                        .filter(|h| !call.hooked && h.runs_for(HookEvent::PreToolUse, &call.name))
                    {
                        let ticket = self.tickets.next_preview();
                        let task = spawn_pre_hooks(
                            &self.tool_tx,
                            hooks.clone(),
                            call.tool_use(),
                            (call.id.clone(), ticket),
                        );
                        call.state = CallState::Hooking(tool, ticket, task);
                        break;
                    }
                    // Judged again now that the earlier calls have run: one
                    // of them may have put a link where this write lands.
                    let approvals = &self.setup.approval;
                    call.needs_confirmation |=
                        approvals.needs_confirmation(&tool, &self.setup.tools);
                    if call.needs_confirmation {
                        let ticket = self.tickets.next_preview();
                        call.state = CallState::Previewing(tool.clone(), ticket);
                        spawn_preview(
                            &self.tool_tx,
                            &self.setup.tools,
                            self.setup.read_only.as_ref(),
                            (call.id.clone(), ticket),
                            tool,
                        );
                        break;
                    }
                    let sandbox = approvals.sandbox(&tool, false);
                    let marked = unasked_mark(approvals, &tool, sandbox);
                    let run = (Approved::Call(tool), FileGuard::Unguarded, sandbox);
                    call.start(run, (&self.tool_tx, hooks.as_ref()), &self.setup.tools);
                    allowed =
                        marked.map(|mark| (call.id.clone(), format!("{} · {mark}", call.summary)));
                    executing = true;
                    if !read_only {
                        break;
                    }
                    round.cursor += 1;
                }
                CallState::Hooking(..)
                | CallState::Previewing(..)
                | CallState::Confirming(..)
                | CallState::Running(_) => {
                    break;
                }
            }
        }
        let outstanding = round.outstanding(round.calls.len());
        if let Some((id, summary)) = allowed {
            self.emit(AgentEvent::ToolAllowed { id, summary }).await;
        }
        if outstanding {
            if executing {
                self.emit(AgentEvent::Phase(Phase::Executing)).await;
            }
            return;
        }
        if let Some(round) = self.turn.end_running() {
            self.finish_round(round).await;
        }
    }

    /// Every call is answered: the results join the conversation in call
    /// order, and the next episode starts — unless the turn was cancelled
    /// or reached its step limit.
    async fn finish_round(&mut self, round: Round) {
        let was_cancelled = round.cancelling;
        let mut said = Vec::new();
        for call in round.calls {
            let mut result = match call.state {
                CallState::Done(result) => result,
                // Unreachable by construction (the round ends only when no
                // call is outstanding); answered rather than left dangling.
                _ => cancelled(&call.name),
            };
            if let Err(ToolFailure::Redirected {
                words: Some(words), ..
            }) = &result.outcome
            {
                said.push(words.clone());
            }
            if let Some(repeat) = &call.repeat {
                // In call order, so "see it above" holds for parallel
                // calls too; the notice is not part of what is compared.
                let notice = result.notice.take();
                let unchanged = self.repeats.unchanged(&repeat.key, &result.to_json());
                result.notice = notice;
                if unchanged && result.outcome.is_err() && repeat.count <= FAILED_REPEAT_RETRIES {
                    // The error again, whole: it says how to recover.
                    result
                        .notice
                        .get_or_insert_with(|| FAILED_REPEAT_NOTICE.to_owned());
                } else {
                    // The model keeps asking for what it has: its next
                    // reply is asked to be an answer.
                    result.unchanged = unchanged;
                    self.progress.answer_now |= unchanged;
                }
            }
            self.progress.searches.record(result.search_found());
            self.progress.unseen.retain(|name| !name.shown_by(&result));
            // Kept as the tool returned it until the turn's first wall:
            // the window that error states may be smaller than the one
            // this cut is made for.
            let size = result.to_json().len();
            let whole = (!self.progress.wall_retried && self.progress.results.would_keep(size))
                .then(|| result.clone());
            let cut = self.fit_result(&mut result, size);
            if let Some(limit) = cut {
                let name = &call.name;
                self.setup.log.line(|| {
                    format!("context: {name} result of {size} bytes cut to about {limit} bytes")
                });
            }
            if let Some(whole) = whole {
                let conversation = &self.conversation;
                self.progress.results.keep(Kept {
                    offset: conversation.messages().len() - conversation.turn_start(),
                    id: call.id.clone(),
                    size,
                    whole,
                });
            }
            self.conversation.push_tool_result(call.id, &result);
        }
        // What the person wrote instead of an answer is their message, after
        // every result of the round, and starts a turn as a prompt does,
        // saved as a prompt is.
        let redirected = !said.is_empty();
        for words in said {
            self.take_words(words, None, Vec::new());
        }
        if redirected {
            self.save().await;
        }
        if was_cancelled {
            self.end_turn().await;
        } else if self.progress.steps >= self.setup.max_steps {
            self.progress.ending(StopReason::MaxSteps);
            self.system(
                Severity::Notice,
                format!(
                    "stopped after {} model steps in this turn (--max-steps); every call was answered. Send a message (e.g. \"continue\") to let it go on",
                    self.progress.steps
                ),
            )
            .await;
            self.end_turn().await;
        } else {
            self.next_request().await;
        }
    }
}

/// How the row of a command that runs unasked says so: remembered (and
/// by which rule) or run by the `auto` policy, and in which sandbox.
/// `None` for any other call.
fn unasked_mark(approvals: &Approvals, call: &ToolCall, sandbox: Sandbox) -> Option<String> {
    if sandbox == Sandbox::Unconfined {
        return None;
    }
    Some(match approvals.remembered_rule(call) {
        Some(rule) => format!("remembered ({rule}), sandbox {}", sandbox.name()),
        None => format!("ran unasked, sandbox {}", sandbox.name()),
    })
}

/// The lines a command's confirmation ends with: where it will run when
/// that is a sandbox, and what `a` would remember.
fn confinement_lines(sandbox: Sandbox, remember: Option<&Rule>) -> Vec<PreviewLine> {
    let mut lines = Vec::new();
    if sandbox != Sandbox::Unconfined {
        lines.push(PreviewLine {
            kind: PreviewKind::Marker,
            text: format!(
                "runs in the {} sandbox: no network, no writes outside the project",
                sandbox.name()
            ),
        });
    }
    if let Some(rule) = remember {
        lines.push(PreviewLine {
            kind: PreviewKind::Marker,
            text: format!(
                "a: always allow `{rule}` in this project (unasked, in the {} sandbox)",
                Sandbox::WorkspaceWrite.name()
            ),
        });
    }
    lines
}

/// One tool task: runs the call and reports its result, and while it
/// runs, its latest output at most every [`LIVE_OUTPUT_INTERVAL`] (from
/// this one task, so no output follows the result).
fn spawn_run(
    tx: &tokio::sync::mpsc::Sender<ToolEvent>,
    ctx: &tools::ToolContext,
    (id, post): (CallId, Option<(CallHooks, ToolUse)>),
    run: Approved,
    guard: FileGuard,
    token: CancellationToken,
) {
    let tx = tx.clone();
    // Only a command prints as it runs.
    let (live, watched) = if run.effect() == Effect::RunsCommands {
        let (live, watched) = tokio::sync::watch::channel(Vec::new());
        (Some(live), Some(watched))
    } else {
        (None, None)
    };
    let ctx = tools::ToolContext {
        live_output: live,
        ..ctx.clone()
    };
    let name = run.name().to_owned();
    let cancelled = token.clone();
    tokio::spawn(async move {
        // Run in a task of its own so that even a panic in a tool becomes a
        // result: the agent waits for every call it started.
        let run =
            tokio::spawn(async move { tools::execute_approved(&run, &ctx, token, guard).await });
        let joined = match watched {
            Some(watched) => pass_output_on(run, watched, &tx, &id).await,
            None => run.await,
        };
        let result = joined.unwrap_or_else(|e| {
            ToolFailure::ExecutionFailed {
                tool: name,
                message: format!("internal error: the tool task failed: {e}"),
            }
            .into()
        });
        // A call the person interrupted runs no more hooks; Esc during
        // them kills them.
        let hooks = match post.filter(|_| !cancelled.is_cancelled()) {
            Some((hooks, tool)) => {
                let result = ToolDone::new(done_status(&result), result.to_json());
                let event = Event::PostToolUse { tool, result };
                tokio::select! {
                    () = cancelled.cancelled() => Ok(Vec::new()),
                    ran = hooks.run(event) => ran,
                }
            }
            None => Ok(Vec::new()),
        };
        let result = Box::new(result);
        let _ = tx.send(ToolEvent::Finished { id, result, hooks }).await;
    });
}

/// The task running a call's `pre_tool_use` hooks, which reports how
/// they ended; aborting it kills them.
fn spawn_pre_hooks(
    tx: &tokio::sync::mpsc::Sender<ToolEvent>,
    hooks: CallHooks,
    tool: ToolUse,
    (id, ticket): (CallId, u64),
) -> tokio::task::AbortHandle {
    let tx = tx.clone();
    tokio::spawn(async move {
        let ran = hooks.run(Event::PreToolUse { tool }).await;
        let _ = tx.send(ToolEvent::Hooked { id, ticket, ran }).await;
    })
    .abort_handle()
}

/// Waits for a command's task, and while it runs, passes on the lines of
/// its latest output whenever they changed, at most every
/// [`LIVE_OUTPUT_INTERVAL`].
async fn pass_output_on<T>(
    mut run: tokio::task::JoinHandle<T>,
    mut watched: tokio::sync::watch::Receiver<Vec<u8>>,
    tx: &tokio::sync::mpsc::Sender<ToolEvent>,
    id: &CallId,
) -> Result<T, tokio::task::JoinError> {
    let mut tick = tokio::time::interval(LIVE_OUTPUT_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            biased;
            joined = &mut run => return joined,
            _ = tick.tick() => {
                if watched.has_changed().unwrap_or(false) {
                    let tail = tools::live_tail(&watched.borrow_and_update());
                    let _ = tx.send(ToolEvent::Output { id: id.clone(), tail }).await;
                }
            }
        }
    }
}

/// One preview task, off the agent's task (both steps read files): a
/// command line the analyser shows to be read-only is reported to run
/// unasked; any other call gets the preview the person will confirm, a
/// command with the reason it was not allowed.
fn spawn_preview(
    tx: &tokio::sync::mpsc::Sender<ToolEvent>,
    ctx: &tools::ToolContext,
    read_only: Option<&Analyser>,
    (id, ticket): (CallId, u64),
    tool: ToolCall,
) {
    let (tx, ctx, analyser) = (tx.clone(), ctx.clone(), read_only.cloned());
    let name = tool.name().to_owned();
    tokio::spawn(async move {
        let judged =
            tokio::task::spawn_blocking(move || tools::judge(&tool, &ctx, analyser.as_ref()));
        let event = judged.await.unwrap_or_else(|e| {
            Err(ToolFailure::ExecutionFailed {
                tool: name,
                message: format!("internal error: the preview task failed: {e}"),
            })
        });
        let event = match event {
            Ok(Judged::ReadOnly(cleared)) => ToolEvent::ReadOnly {
                id,
                ticket,
                cleared,
            },
            Ok(Judged::Confirm(preview)) => ToolEvent::Preview {
                id,
                ticket,
                preview: Ok(preview),
            },
            Err(failure) => ToolEvent::Preview {
                id,
                ticket,
                preview: Err(failure),
            },
        };
        let _ = tx.send(event).await;
    });
}
