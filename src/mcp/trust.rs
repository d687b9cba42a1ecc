//! Whether the person trusted a project's `.mcp.json`: a cloned
//! repository must not start programs of its choosing. The choice is kept
//! outside the repository, in dashfloat's configuration directory
//! (`mcp-trust/`, one file per project named by a hash of its real
//! path), and is keyed to the file's content: a `.mcp.json` changed since
//! asks again. ADR 0045.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::own_files;
use crate::stable_hash::{ContentHash, content_hash};

/// The largest `.mcp.json` read (256 KiB): far more than any list of
/// servers; a larger one is refused, not cut.
pub const PROJECT_FILE_MAX_BYTES: u64 = 256 * 1024;
/// The largest trust record read; dashfloat writes a few hundred bytes.
const RECORD_MAX_BYTES: u64 = 4 * 1024;
/// The project file's name, at the project's root.
pub const PROJECT_FILE: &str = ".mcp.json";

/// A project's `.mcp.json` and what the person decided about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProjectServers {
    /// The project has none.
    Absent,
    /// Trusted as it is now: its text.
    Trusted(String),
    /// Never trusted, or changed since: its text, for `/mcp trust` to
    /// show and trust.
    Untrusted(String),
    /// It could not be read.
    Unreadable(String),
}

/// The trust record as written.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    /// The project's real path.
    project: String,
    /// XXH3-64 of the trusted `.mcp.json`'s bytes, in hex.
    content: String,
}

/// Where one project's trust is kept.
#[derive(Debug, Clone)]
pub struct TrustStore {
    dir: PathBuf,
    project: PathBuf,
}

impl TrustStore {
    /// The trust of `project` (its real path) in `config_dir`,
    /// dashfloat's configuration directory.
    pub fn new(config_dir: &Path, project: &Path) -> TrustStore {
        TrustStore {
            dir: config_dir.join("mcp-trust"),
            project: project.to_path_buf(),
        }
    }

    fn record_path(&self) -> PathBuf {
        self.dir.join(format!(
            "{}.json",
            hex(self.project.as_os_str().as_encoded_bytes())
        ))
    }

    /// The project's `.mcp.json` and whether it is trusted as it is.
    pub fn project_servers(&self) -> ProjectServers {
        let path = self.project.join(PROJECT_FILE);
        let text = match own_files::read_bounded(&path, PROJECT_FILE_MAX_BYTES) {
            Ok(None) => return ProjectServers::Absent,
            Ok(Some(bytes)) => match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(_) => return ProjectServers::Unreadable("it is not UTF-8".to_owned()),
            },
            Err(e) => return ProjectServers::Unreadable(e.to_string()),
        };
        if self.trusted_hash().as_deref() == Some(hex(text.as_bytes()).as_str()) {
            ProjectServers::Trusted(text)
        } else {
            ProjectServers::Untrusted(text)
        }
    }

    fn trusted_hash(&self) -> Option<String> {
        let bytes = own_files::read_bounded(&self.record_path(), RECORD_MAX_BYTES)
            .ok()
            .flatten()?;
        let record: Record = serde_json::from_slice(&bytes).ok()?;
        (Path::new(&record.project) == self.project).then_some(record.content)
    }

    /// Trusts `text`, the project's `.mcp.json` as the person saw it.
    pub fn trust(&self, text: &str) -> Result<(), TrustError> {
        let record = Record {
            project: self.project.to_string_lossy().into_owned(),
            content: hex(text.as_bytes()),
        };
        let bytes = serde_json::to_vec(&record).map_err(|e| TrustError(e.to_string()))?;
        own_files::make_dir(&self.dir)
            .and_then(|()| {
                own_files::write_atomically(&self.dir, &self.record_path(), &bytes, ".trust")
            })
            .map_err(|e| TrustError(e.to_string()))
    }
}

/// Why the trust could not be kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot keep the trust of this project's .mcp.json: {0}")]
pub struct TrustError(String);

/// XXH3-64 of `bytes` in hex.
fn hex(bytes: &[u8]) -> String {
    let (ContentHash::Xxh3(key) | ContentHash::Sip13(key)) = content_hash(bytes);
    format!("{key:016x}")
}
