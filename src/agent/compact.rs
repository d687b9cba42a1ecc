//! Compaction: keeping the conversation inside the model's window. Before
//! a request whose estimate passes the threshold, the oldest tool results
//! are pruned deep (down to half the window) in one go; if that is not
//! enough, older turns are summarised by the model in a request of their
//! own, cancellable, and replaced by one summary message. The same two
//! stages run on `/compact` and after the provider's context-exceeded
//! error (then the turn's own results are cut again to the window the
//! error taught, and the request is retried once). Nothing changes until
//! a compaction succeeds. ADR 0021.

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::hooks::StopReason;
use crate::llm::stream;
use crate::llm::tool_calls::MadeUpIds;
use crate::llm::wire::{ChatRequest, Message, Role, StreamOptions};
use crate::protocol::{AgentEvent, Phase, Severity, StreamEvent};
use crate::tools::ToolResult;

use super::budget::Budget;
use super::conversation::{Conversation, SUMMARY_PREFIX, answered_call, is_summary};
use super::turn::Wanted;
use super::{Agent, STREAM_QUEUE, task_failure};

/// What the model is asked to do with the older turns. ADR 0021.
pub const SUMMARY_PROMPT: &str = "You summarise a conversation between a person and dashfloat, a coding agent \
working in the person's project, so that the agent can go on with only your summary and the latest messages. \
Write a concise summary in markdown: what the person asked for and wants; what was done (files read, written \
or edited, commands run, with their exact paths and names); what was learned (facts, decisions, errors and \
their fixes); what is in progress and what comes next. Keep paths, names and numbers exact. Invent nothing. \
Answer with the summary only.";
/// Bytes of one tool result (or one argument list) the summary request
/// shows, at most: the gist, not the output. ADR 0021.
const SUMMARY_RESULT_MAX_BYTES: usize = 1024;
/// The share of the prompt budget the summary request's transcript may
/// take; the rest is for its instructions and the estimate's error.
/// ADR 0021.
const SUMMARY_INPUT_SHARE: f64 = 0.75;
/// A summary keeps at most this fraction (1/4) of the prompt budget; a
/// longer one is cut, so the summary and the kept turns (half the budget)
/// leave room for the turn to go on. ADR 0021.
pub const SUMMARY_MAX_DIVISOR: u64 = 4;
/// A result cut to fit the budget keeps at least this many bytes, however
/// full the window. ADR 0021.
pub const RESULT_CUT_MIN_BYTES: usize = 1024;

/// Why a compaction runs.
pub(super) enum Trigger {
    /// The next request's estimate passed the threshold.
    Threshold,
    /// The provider said the last request did not fit.
    Wall,
    /// The person asked (`/compact`), perhaps with a focus.
    Asked,
}

/// What to do once a summary is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum After {
    /// Send the turn's next request.
    Request,
    /// End the turn (`/compact`).
    Done,
}

/// A compaction worked out on a copy of the conversation: nothing changes
/// until it is committed.
pub(super) struct Plan {
    /// The conversation, pruned.
    candidate: Conversation,
    /// Tool results pruned.
    pruned: usize,
    /// Tool results of the turn in progress cut again, to a window learnt
    /// at the wall.
    recut: usize,
    /// Where the turns kept verbatim start, when older ones are to be
    /// summarised.
    summarise: Option<usize>,
    /// The estimate before, in tokens.
    before: u64,
}

impl Plan {
    fn does_nothing(&self) -> bool {
        self.pruned == 0 && self.recut == 0 && self.summarise.is_none()
    }
}

/// A summary request in flight.
pub(super) struct Compaction {
    events: mpsc::Receiver<StreamEvent>,
    task: JoinHandle<()>,
    summary: String,
    plan: Plan,
    keep_from: usize,
    after: After,
}

impl Compaction {
    /// Stops the summary request.
    pub(super) fn abort(&self) {
        self.task.abort();
    }

    /// The summary request's next event; `None` once it ended.
    pub(super) async fn next_event(&mut self) -> Option<StreamEvent> {
        self.events.recv().await
    }
}

impl Agent {
    /// The size of the request `conversation` makes, as the budget
    /// counts it.
    pub(super) fn request_len(&self, conversation: &Conversation) -> usize {
        self.encode(conversation, None)
            .map_or(0, |body| conversation.counted_len(body.len()))
    }

    /// Before a request: compacts when the estimate passes the threshold,
    /// then sends it (or starts the summary that sends it when done). The
    /// body measured is the body sent, encoded once, unless compacting
    /// changed the conversation in between (ADR 0042).
    pub(super) async fn next_request(&mut self) {
        let answer_now = self.answers_now();
        let encoded = self.encode(&self.conversation, answer_now);
        let Some(body) = self.body_or_end_turn(encoded).await else {
            return;
        };
        let estimate = self
            .budget
            .estimate(self.conversation.counted_len(body.len()));
        if estimate > self.budget.threshold() {
            self.setup.log.line(|| {
                format!(
                    "context: about {estimate} tokens of {}, past the threshold of {}",
                    self.budget.window(),
                    self.budget.threshold()
                )
            });
            let plan = self.plan(&Trigger::Threshold);
            if let Some(keep_from) = plan.summarise {
                self.start_summary(plan, keep_from, None, After::Request)
                    .await;
                return;
            }
            if !plan.does_nothing() {
                self.commit(plan, 0).await;
                self.start_episode().await;
                return;
            }
        }
        self.send(body, answer_now.is_some()).await;
    }

    /// `/compact [focus]`: prunes and summarises now, whatever the
    /// estimate; refused while a turn runs or when there is nothing to
    /// compact.
    pub(super) async fn compact_now(&mut self, focus: Option<String>) {
        if !self.admit(Wanted::Compact).await {
            return;
        }
        let plan = self.plan(&Trigger::Asked);
        match plan.summarise {
            Some(keep_from) => {
                self.start_summary(plan, keep_from, focus, After::Done)
                    .await;
            }
            None if plan.does_nothing() => {
                self.system(
                    Severity::Notice,
                    "nothing to compact yet: the conversation holds no earlier turn to summarise",
                )
                .await;
                self.end_turn().await;
            }
            None => {
                self.commit(plan, 0).await;
                self.warm_cache();
                self.end_turn().await;
            }
        }
    }

    /// The provider refused the request as too long for its window:
    /// compacts (prune, cut the turn's own results to the window as it
    /// now stands, then summarise) and retries once. When there is
    /// nothing to compact, the entry `error` is shown instead.
    pub(super) async fn recover_from_wall(&mut self, error: String) {
        self.progress.wall_retried = true;
        let plan = self.plan(&Trigger::Wall);
        // Planned: the turn's results are of no more use whole, as no
        // later wall of the turn is recovered from.
        self.progress.results.clear();
        if plan.does_nothing() {
            self.system(Severity::Error, error).await;
            self.progress.ending(StopReason::Failed);
            self.end_turn().await;
            return;
        }
        self.system(
            Severity::Notice,
            "the request did not fit the model's context window; compacting the conversation and trying again",
        )
        .await;
        match plan.summarise {
            Some(keep_from) => {
                self.start_summary(plan, keep_from, None, After::Request)
                    .await;
            }
            None => {
                self.commit(plan, 0).await;
                self.start_episode().await;
            }
        }
    }

    /// Works out a compaction on a copy: prunes the oldest results before
    /// the current turn down to the prune target (every one of them at the
    /// wall, where the current turn's own results are cut again too), then
    /// decides whether older turns are to be summarised and which turns
    /// stay verbatim.
    fn plan(&self, trigger: &Trigger) -> Plan {
        let before = self.budget.estimate(self.request_len(&self.conversation));
        let mut candidate = self.conversation.clone();
        let turn = candidate.turn_start();
        let free = match trigger {
            Trigger::Wall => usize::MAX,
            Trigger::Threshold | Trigger::Asked => self
                .budget
                .bytes(before.saturating_sub(self.budget.prune_target())),
        };
        let pruned = if free > 0 {
            candidate.prune(turn, free).results
        } else {
            0
        };
        let recut = match trigger {
            Trigger::Wall => self.recut_turn(&mut candidate),
            Trigger::Threshold | Trigger::Asked => 0,
        };
        let after = self.budget.estimate(self.request_len(&candidate));
        let keep_from = match trigger {
            Trigger::Threshold if after <= self.budget.threshold() => None,
            Trigger::Threshold | Trigger::Wall => {
                Some(candidate.tail_start(self.budget.bytes(self.budget.keep())))
            }
            Trigger::Asked => Some(turn),
        };
        Plan {
            summarise: keep_from.filter(|&k| candidate.summarisable(k)),
            candidate,
            pruned,
            recut,
            before,
        }
    }

    /// Starts the summary request over the plan's older turns.
    async fn start_summary(
        &mut self,
        plan: Plan,
        keep_from: usize,
        focus: Option<String>,
        after: After,
    ) {
        self.stop_warming();
        let Some(endpoint) = self.endpoint_or_end_turn().await else {
            return;
        };
        let max_bytes = summary_input_bytes(&self.budget);
        let older = plan.candidate.messages().get(1..keep_from).unwrap_or(&[]);
        let request = summary_request(older, focus.as_deref(), max_bytes);
        let encoded = serde_json::to_vec(&ChatRequest {
            model: &self.setup.model,
            messages: request.as_slice().into(),
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
            tools: &Value::Array(Vec::new()),
            sampling: self.sampling(),
            tool_choice: None,
        });
        let Some(body) = self.body_or_end_turn(encoded).await else {
            return;
        };
        self.setup.log.line(|| {
            format!(
                "compaction: summarising {} messages, {} bytes",
                keep_from.saturating_sub(1),
                body.len()
            )
        });
        let (tx, rx) = mpsc::channel(STREAM_QUEUE);
        let task = tokio::spawn(stream::run(
            endpoint,
            body,
            // A summary offers no tools: no call of its reply is kept.
            stream::EpisodeSetup::native(MadeUpIds::calls(0)),
            tx,
        ));
        self.turn.compact(Compaction {
            events: rx,
            task,
            summary: String::new(),
            plan,
            keep_from,
            after,
        });
        self.emit(AgentEvent::Phase(Phase::Compacting)).await;
    }

    /// One event of the summary request; `None`: its task ended without
    /// saying how.
    pub(super) async fn on_summary_event(&mut self, event: Option<StreamEvent>) {
        let Some(compaction) = self.turn.compaction_mut() else {
            return;
        };
        match event {
            Some(StreamEvent::Content(text)) => {
                compaction.summary.push_str(&text);
                // What passes the bound would be cut anyway: the summary
                // stops there, neither buffered nor waited for.
                if compaction.summary.len() > summary_max_bytes(&self.budget) {
                    self.finish_summary(Ok(())).await;
                }
            }
            Some(StreamEvent::Done { .. }) => self.finish_summary(Ok(())).await,
            Some(StreamEvent::Failed(err)) => self.finish_summary(Err(err.to_string())).await,
            Some(StreamEvent::Retrying {
                attempt, reason, ..
            }) => {
                let text = format!(
                    "{reason} — retrying the summary (retry {attempt} of {})",
                    stream::RETRY_MAX
                );
                self.system(Severity::Notice, text).await;
            }
            Some(
                StreamEvent::Reasoning(_)
                | StreamEvent::Usage(_)
                | StreamEvent::Finish(_)
                | StreamEvent::ToolCallStarted { .. }
                | StreamEvent::ToolCallProgress { .. }
                | StreamEvent::ToolCallHeld { .. }
                | StreamEvent::PromptProgress(_)
                | StreamEvent::Looping { .. }
                | StreamEvent::Carried(_),
            ) => {}
            None => {
                let why = match (&mut compaction.task).await {
                    Err(err) => task_failure("stream", &err),
                    Ok(()) => "the stream task ended unexpectedly".into(),
                };
                self.finish_summary(Err(why)).await;
            }
        }
    }

    /// The summary is in (or failed): commits the compaction and goes on,
    /// or leaves the conversation as it was and ends the turn.
    async fn finish_summary(&mut self, outcome: Result<(), String>) {
        let Some(compaction) = self.turn.end_compacting() else {
            return;
        };
        compaction.abort();
        let outcome = outcome.and_then(|()| {
            if compaction.summary.trim().is_empty() {
                Err("the model returned an empty summary".to_string())
            } else {
                Ok(())
            }
        });
        if let Err(why) = outcome {
            self.system(
                Severity::Error,
                format!(
                    "compaction failed: {why}; the conversation is unchanged. Try /compact again, or /clear to start afresh"
                ),
            )
            .await;
            self.progress.ending(StopReason::Failed);
            self.end_turn().await;
            return;
        }
        let mut plan = compaction.plan;
        let summary = shortened(compaction.summary.trim(), summary_max_bytes(&self.budget));
        plan.candidate.summarise(compaction.keep_from, &summary);
        let summarised = compaction.keep_from.saturating_sub(1);
        self.commit(plan, summarised).await;
        match compaction.after {
            After::Request => self.start_episode().await,
            After::Done => {
                self.warm_cache();
                self.end_turn().await;
            }
        }
    }

    /// Esc during a summary: it stops, and the conversation stays exactly
    /// as it was.
    pub(super) async fn cancel_compaction(&mut self) {
        if let Some(compaction) = self.turn.end_compacting() {
            compaction.abort();
        }
        self.system(
            Severity::Notice,
            "compaction cancelled; the conversation is unchanged",
        )
        .await;
        self.end_turn().await;
    }

    /// The plan's conversation becomes the conversation; a notice says
    /// what was done.
    async fn commit(&mut self, plan: Plan, summarised: usize) {
        let after = self.budget.estimate(self.request_len(&plan.candidate));
        self.conversation = plan.candidate;
        // The prompts summarised away can no longer be rewound to.
        let prompts = self.conversation.prompts().count();
        self.setup.tools.checkpoints.lock().align(prompts);
        // What the model saw of files before this turn may be pruned or
        // summarised: replacing one of them needs another read (ADR 0030).
        self.setup.tools.known.forget_earlier_turns();
        let mut done = Vec::new();
        if plan.pruned > 0 {
            done.push(format!("pruned {} old tool results", plan.pruned));
        }
        if plan.recut > 0 {
            done.push(format!(
                "cut {} tool results of this turn to fit the window",
                plan.recut
            ));
        }
        if summarised > 0 {
            done.push(format!("summarised {summarised} earlier messages"));
        }
        let text = format!(
            "compacted the conversation: {}; about {} → {} tokens of {}",
            done.join(", "),
            plan.before,
            after,
            self.budget.window()
        );
        self.system(Severity::Notice, text).await;
        self.emit(AgentEvent::Compacted { estimate: after }).await;
        self.save().await;
    }

    /// Cuts a result that would not fit the budget after the conversation
    /// as it stands ([`Agent::cut_limit`]), before it is ever sent or
    /// saved; `size` is the bytes of its JSON. Returns the limit when it
    /// cut.
    pub(super) fn fit_result(&self, result: &mut ToolResult, size: usize) -> Option<usize> {
        self.cut_limit(&self.conversation, size)
            .filter(|&limit| result.cut(limit))
    }

    /// The limit a result of `size` bytes joining `before` is cut to: when
    /// it would not fit what is left of the budget, were the turns before
    /// this one compacted to the prune target, half of that room (at
    /// least [`RESULT_CUT_MIN_BYTES`]); `None` when it fits. The turn in
    /// progress is never compacted, so what it holds already (the results
    /// before this one) always counts whole.
    fn cut_limit(&self, before: &Conversation, size: usize) -> Option<usize> {
        let whole = self.request_len(before);
        let this_turn = self.budget.estimate(self.request_len(&before.this_turn()));
        let used = self
            .budget
            .estimate(whole)
            .min(self.budget.prune_target())
            .max(this_turn);
        let room = self.budget.usable().saturating_sub(used);
        if self.budget.tokens(size) <= room {
            return None;
        }
        Some(self.budget.bytes(room / 2).max(RESULT_CUT_MIN_BYTES))
    }

    /// At the wall: cuts the turn's own results in `candidate` again, in
    /// the order they came, each as if it joined the conversation now,
    /// with the budget's window (just learnt, when the error stated it):
    /// by its own tool's cut of the result as the tool returned it. A
    /// result first cut smaller stays as it was: none grows. The number
    /// cut.
    fn recut_turn(&self, candidate: &mut Conversation) -> usize {
        let start = candidate.turn_start();
        let mut cut = 0;
        for kept in self.progress.results.iter() {
            let at = start + kept.offset;
            let Some(limit) = self.cut_limit(&candidate.before(at), kept.size) else {
                continue;
            };
            let mut result = kept.whole.clone();
            if result.cut(limit) && candidate.replace_result(at, &kept.id, &result) {
                cut += 1;
            }
        }
        cut
    }
}

/// The most bytes of transcript a summary request carries:
/// [`SUMMARY_INPUT_SHARE`] of the prompt budget.
fn summary_input_bytes(budget: &Budget) -> usize {
    (budget.bytes(budget.usable()) as f64 * SUMMARY_INPUT_SHARE) as usize
}

/// The most bytes of summary kept: [`SUMMARY_MAX_DIVISOR`] of the prompt
/// budget.
fn summary_max_bytes(budget: &Budget) -> usize {
    budget.bytes(budget.usable() / SUMMARY_MAX_DIVISOR)
}

/// The summary request's messages: its instructions, and the older turns
/// as one transcript in one user message (so the request is valid
/// whatever calls they hold), at most `max_bytes` of it, the newest kept
/// when it must be cut.
fn summary_request(older: &[Message], focus: Option<&str>, max_bytes: usize) -> Vec<Message> {
    let mut entries: Vec<String> = older
        .iter()
        .enumerate()
        .map(|(at, message)| render(message, older, at))
        .collect();
    let mut size: usize = entries.iter().map(String::len).sum();
    let mut dropped = 0;
    // The earlier summary, if any, is first and stays; the oldest turns
    // after it go first.
    let first = usize::from(older.first().is_some_and(is_summary));
    while size > max_bytes && entries.len() > first + 1 {
        size -= entries.remove(first).len();
        dropped += 1;
    }
    if dropped > 0 {
        entries.insert(first, format!("[{dropped} older messages left out]"));
    }
    let mut transcript = format!("The conversation so far:\n\n{}", entries.join("\n\n"));
    if let Some(focus) = focus.map(str::trim).filter(|f| !f.is_empty()) {
        transcript.push_str(&format!(
            "\n\nThe person asks the summary to keep this in focus: {focus}"
        ));
    }
    vec![
        Message::new(Role::System, SUMMARY_PROMPT),
        Message::new(Role::User, transcript),
    ]
}

/// `message`, at `at` in `all`, as the summary request shows it.
fn render(message: &Message, all: &[Message], at: usize) -> String {
    let content = message.content.as_deref().unwrap_or("");
    match message.role {
        Role::User if is_summary(message) => format!(
            "Summary of what came before:\n{}",
            content.strip_prefix(SUMMARY_PREFIX).unwrap_or(content)
        ),
        Role::User => {
            let mut text = format!("Person: {content}");
            for image in &message.images {
                text.push_str(&format!("\n[with the image {}]", image.name));
            }
            text
        }
        Role::System => format!("Instructions: {content}"),
        Role::Assistant => {
            let mut text = format!("Agent: {content}");
            for call in &message.tool_calls {
                text.push_str(&format!(
                    "\nAgent called {} {}",
                    call.function.name,
                    shortened(&call.function.arguments, SUMMARY_RESULT_MAX_BYTES)
                ));
            }
            text
        }
        Role::Tool => {
            let name = answered_call(all, at).map_or("the call", |c| c.name.as_str());
            format!(
                "Result of {name}: {}",
                shortened(content, SUMMARY_RESULT_MAX_BYTES)
            )
        }
    }
}

/// At most `max_bytes` of `text`, marked when cut.
fn shortened(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_string();
    }
    let end = text.floor_char_boundary(max_bytes);
    format!("{}… [{} bytes in all]", &text[..end], text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Message {
        Message::new(Role::User, text)
    }

    #[test]
    fn a_summary_names_the_images_it_leaves_out() {
        let mut prompt = user("look at this");
        prompt.images.push(crate::llm::wire::Image {
            name: "shot.png".to_owned(),
            media_type: "image/png".to_owned(),
            data: "iVBORw0K".into(),
        });
        let request = summary_request(&[prompt], None, 10_000);
        let transcript = request[1].content.as_deref().unwrap_or_default();
        assert!(transcript.ends_with("Person: look at this\n[with the image shot.png]"));
        assert!(request.iter().all(|m| m.images.is_empty()));
    }

    #[test]
    fn the_transcript_takes_three_quarters_of_the_prompt_budget() {
        let budget = Budget::new(10_000, Some(2_000), 0.8);
        assert_eq!(summary_input_bytes(&budget), 21_000);
    }

    #[test]
    fn the_transcript_names_who_said_what_and_keeps_the_focus() {
        let older = [user("fix the bug"), Message::new(Role::Assistant, "done")];
        let request = summary_request(&older, Some(" the parser "), 10_000);
        assert_eq!(request[0].content.as_deref(), Some(SUMMARY_PROMPT));
        assert_eq!(
            request[1].content.as_deref(),
            Some(
                "The conversation so far:\n\nPerson: fix the bug\n\nAgent: done\n\nThe person asks the summary to keep this in focus: the parser"
            )
        );
    }

    #[test]
    fn a_long_result_is_shown_only_in_part() {
        let long = "r".repeat(SUMMARY_RESULT_MAX_BYTES + 10);
        assert_eq!(
            shortened(&long, SUMMARY_RESULT_MAX_BYTES),
            format!(
                "{}… [{} bytes in all]",
                "r".repeat(SUMMARY_RESULT_MAX_BYTES),
                SUMMARY_RESULT_MAX_BYTES + 10
            )
        );
        let fits = "r".repeat(SUMMARY_RESULT_MAX_BYTES);
        assert_eq!(shortened(&fits, SUMMARY_RESULT_MAX_BYTES), fits);
        assert_eq!(
            shortened("aé", 2),
            "a… [3 bytes in all]",
            "never inside a character"
        );
    }

    #[test]
    fn past_its_bound_the_transcript_drops_the_oldest_turns_but_not_the_earlier_summary() {
        let older = [
            user(&format!("{SUMMARY_PREFIX}before")),
            user(&"a".repeat(500)),
            user(&"b".repeat(500)),
            user("newest"),
        ];
        let request = summary_request(&older, None, 400);
        let transcript = request[1].content.as_deref().unwrap_or_default();
        assert!(transcript.contains("Summary of what came before:\nbefore"));
        assert!(transcript.contains("[2 older messages left out]"));
        assert!(!transcript.contains("aaa") && !transcript.contains("bbb"));
        assert!(transcript.ends_with("Person: newest"));
    }
}
