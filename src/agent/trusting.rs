//! `/mcp trust` and `/hooks trust`: a file a project brings, trusted as
//! it is now when the person asks (ADR 0045, 0054).

use crate::protocol::Severity;
use crate::trust::{ProjectTrust, TrustStore};

use super::Agent;

impl Agent {
    /// Trusts the project's file `trust` keeps, as it is now, and reads
    /// it with `parse`, saying each problem `parse` finds: what `parse`
    /// made of it. `None`, with a notice saying why, when the project has
    /// none, it is trusted already, it cannot be read, or the trust
    /// cannot be kept.
    pub(super) async fn trust_project_file<T, E: ToString>(
        &mut self,
        trust: &TrustStore,
        parse: impl FnOnce(&str, &mut Vec<E>) -> T,
    ) -> Option<T> {
        let file = trust.file();
        let text = match trust.read() {
            ProjectTrust::Absent => {
                let text = format!("this project has no {file}");
                self.system(Severity::Notice, text).await;
                return None;
            }
            ProjectTrust::Trusted(_) => {
                let text = format!("this project's {file} is trusted already");
                self.system(Severity::Notice, text).await;
                return None;
            }
            ProjectTrust::Unreadable(why) => {
                let text = format!("cannot read this project's {file}: {why}");
                self.system(Severity::Error, text).await;
                return None;
            }
            ProjectTrust::Untrusted(text) => text,
        };
        let mut problems = Vec::new();
        let made = parse(&text, &mut problems);
        for problem in problems {
            self.system(Severity::Error, problem.to_string()).await;
        }
        if let Err(e) = trust.trust(&text) {
            self.system(Severity::Error, e.to_string()).await;
            return None;
        }
        Some(made)
    }
}
