//! What the headless driver keeps of a turn as its events go by: the
//! line each event becomes, the counts `turn_end` reports, and whether
//! the turn ended with an answer.

use crate::protocol::{AgentEvent, Phase, ReplyEnd, Severity, Usage};

use super::schema::{self, Line, TurnStatus};

/// The turn so far.
#[derive(Debug, Default)]
pub struct Tally {
    /// Model requests made (`Phase(Streaming)` once each).
    pub steps: u32,
    /// Tool calls made: the model's, and the reads of files the prompt
    /// named (ADR 0038).
    pub tool_calls: u32,
    /// The text of the reply streaming now. Bounded by the agent, which
    /// ends an episode whose reply passes its content cap (ADR 0007).
    reply: String,
    /// How the last reply ended.
    last_reply: Option<ReplyEnd>,
    /// The last reply said something: an empty reply (or one of
    /// reasoning only) answers nothing.
    last_said: bool,
    /// A tool was called, or an error notice came, after the last reply:
    /// the turn did not end on that reply.
    after_reply: bool,
    /// The usage of the latest request: the schema reports the turn's
    /// last one, once, at the end.
    usage: Option<Usage>,
}

impl Tally {
    /// Takes one event of the turn in; returns the line it becomes, if
    /// the output shows it.
    pub fn see(&mut self, event: AgentEvent) -> Option<Line> {
        match event {
            AgentEvent::Phase(Phase::Streaming) => {
                self.steps += 1;
                None
            }
            AgentEvent::AssistantDelta(text) => {
                self.reply.push_str(&text);
                Some(Line::Delta { text })
            }
            AgentEvent::ReasoningDelta(text) => Some(Line::Reasoning { text }),
            AgentEvent::AssistantEnd(end) => {
                self.last_reply = Some(end);
                self.last_said = !self.reply.trim().is_empty();
                self.after_reply = false;
                Some(Line::Message {
                    text: std::mem::take(&mut self.reply),
                    end: end.into(),
                })
            }
            AgentEvent::ToolCall { id, name, summary } => {
                self.tool_calls += 1;
                self.after_reply = true;
                Some(Line::ToolCall { id, name, summary })
            }
            AgentEvent::ToolAllowed { id, summary } => Some(Line::ToolAllowed { id, summary }),
            AgentEvent::ToolResult {
                id,
                status,
                excerpt,
            } => {
                let (status, detail, note) = schema::status_of(status);
                Some(Line::ToolResult {
                    id,
                    status,
                    detail,
                    note,
                    excerpt,
                })
            }
            AgentEvent::System { severity, text } => {
                self.after_reply |= severity == Severity::Error;
                Some(Line::Notice {
                    severity: severity.into(),
                    text,
                })
            }
            AgentEvent::Usage(usage) => {
                self.usage = Some(usage);
                None
            }
            AgentEvent::Phase(_)
            | AgentEvent::Totals(_)
            // The result carries the output: stdout stays the reply's.
            | AgentEvent::ToolOutput { .. }
            | AgentEvent::ToolCallWriting { .. }
            | AgentEvent::ReadingPrompt(_)
            | AgentEvent::SessionFacts { .. }
            | AgentEvent::ProjectFiles(_)
            | AgentEvent::CustomCommands { .. }
            | AgentEvent::Confirm(_)
            | AgentEvent::SessionOpened { .. }
            | AgentEvent::Prompts { .. }
            | AgentEvent::Rewound { .. }
            | AgentEvent::SessionId(_)
            | AgentEvent::Sessions { .. }
            | AgentEvent::McpServers(_)
            | AgentEvent::ApprovalChanged(_)
            | AgentEvent::Compacted { .. }
            | AgentEvent::TurnDone => None,
        }
    }

    /// The `usage` line of the turn's last request, once the turn is done.
    pub fn take_usage(&mut self) -> Option<Line> {
        self.usage.take().map(Line::from)
    }

    /// How a turn that ended by itself ended: answered when its last reply
    /// completed with some text and neither a tool call nor an error
    /// notice came after it; failed otherwise (a failed stream, an empty
    /// reply, the step limit reached with calls still answered, an
    /// endpoint that could not be asked).
    pub fn status(&self) -> TurnStatus {
        if self.last_reply == Some(ReplyEnd::Complete) && self.last_said && !self.after_reply {
            TurnStatus::Answered
        } else {
            TurnStatus::Failed
        }
    }
}
