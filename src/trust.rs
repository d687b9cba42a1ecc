//! Whether the person trusted a file a project brings that would make
//! dashfloat start programs of the project's choosing: a `.mcp.json`
//! (its servers, ADR 0045) or a `.dashfloat/config.toml` (its hooks,
//! ADR 0054). A cloned repository must not run anything by being
//! opened. The choice is kept outside the repository, in dashfloat's
//! configuration directory (one folder per kind of file, one record per
//! project named by a hash of its real path), and holds the file's text
//! as the person trusted it: trust is that text, byte for byte, so a
//! file changed since asks again. (A hash would do only if it could not
//! be collided; the project's author writes both the file trusted and
//! the one swapped in.) Trust covers the file's text, not the programs
//! or scripts it names.
//!
//! The project's file is read as `read_file` reads one: through the path
//! policy and beneath the project, so a link that leads out of the
//! project, a FIFO or a device is refused, never followed or waited on.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::own_files;
use crate::stable_hash::{ContentHash, content_hash};
use crate::tools::{LocalWorkspace, Workspace};

/// A kind of project file that must be trusted before it is used.
#[derive(Debug, PartialEq, Eq)]
pub struct ProjectFile {
    /// Its path relative to the project's root, as notices name it.
    pub path: &'static str,
    /// The folder of dashfloat's configuration directory its trust
    /// records are kept in.
    records: &'static str,
    /// The largest such file read: a larger one is refused, not cut.
    pub max_bytes: u64,
}

/// A project's `.mcp.json`: the MCP servers it asks to start (ADR 0045).
/// 256 KiB is far more than any list of servers.
pub const MCP_JSON: ProjectFile = ProjectFile {
    path: ".mcp.json",
    records: "mcp-trust",
    max_bytes: 256 * 1024,
};

/// A project's `.dashfloat/config.toml`, of which only the hooks are read
/// (ADR 0054). 64 KiB holds far more than the hooks ever allowed.
pub const PROJECT_CONFIG: ProjectFile = ProjectFile {
    path: ".dashfloat/config.toml",
    records: "hooks-trust",
    max_bytes: 64 * 1024,
};

/// Room in a trust record beside the file's text: the project's path
/// and the JSON around them.
const RECORD_ROOM_BYTES: u64 = 8 * 1024;
/// How much longer JSON can make a text: a control character is written
/// `\u00XX`, six bytes for one.
const JSON_ESCAPE_GROWTH: u64 = 6;

/// A project's file and what the person decided about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProjectTrust {
    /// The project has none.
    Absent,
    /// Trusted as it is now: its text.
    Trusted(String),
    /// Never trusted, or changed since: its text, to show and to trust.
    Untrusted(String),
    /// It could not be read: why.
    Unreadable(String),
}

/// The trust record as written.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    /// The project's real path.
    project: String,
    /// The trusted file's text. (Records before it were kept, with a
    /// hash in a field named `content`, no longer parse: trusted files
    /// ask once again.)
    text: String,
}

/// Where one project's trust of one kind of file is kept.
#[derive(Debug, Clone)]
pub struct TrustStore {
    dir: PathBuf,
    project: PathBuf,
    file: &'static ProjectFile,
}

impl TrustStore {
    /// The trust of `project`'s (its real path) `file`, kept in
    /// `config_dir`, dashfloat's configuration directory.
    pub fn new(config_dir: &Path, project: &Path, file: &'static ProjectFile) -> TrustStore {
        TrustStore {
            dir: config_dir.join(file.records),
            project: project.to_path_buf(),
            file,
        }
    }

    /// The file's path relative to the project, as notices name it.
    pub fn file(&self) -> &'static str {
        self.file.path
    }

    fn record_path(&self) -> PathBuf {
        self.dir.join(format!(
            "{}.json",
            hex(self.project.as_os_str().as_encoded_bytes())
        ))
    }

    /// The project's file and whether it is trusted as it is. Blocking
    /// (it reads files): off the async threads where that matters.
    pub fn read(&self) -> ProjectTrust {
        let text = match read_beneath(&self.project, self.file) {
            Ok(None) => return ProjectTrust::Absent,
            Ok(Some(text)) => text,
            Err(why) => return ProjectTrust::Unreadable(why),
        };
        if self.trusted_text().as_deref() == Some(text.as_str()) {
            ProjectTrust::Trusted(text)
        } else {
            ProjectTrust::Untrusted(text)
        }
    }

    /// The text the person trusted, if they trusted one.
    fn trusted_text(&self) -> Option<String> {
        let max = self.file.max_bytes * JSON_ESCAPE_GROWTH + RECORD_ROOM_BYTES;
        let bytes = own_files::read_bounded(&self.record_path(), max)
            .ok()
            .flatten()?;
        let record: Record = serde_json::from_slice(&bytes).ok()?;
        (Path::new(&record.project) == self.project).then_some(record.text)
    }

    /// Trusts `text`, the project's file as the person saw it.
    pub fn trust(&self, text: &str) -> Result<(), TrustError> {
        let failed = |why: String| TrustError {
            file: self.file.path,
            why,
        };
        let record = Record {
            project: self.project.to_string_lossy().into_owned(),
            text: text.to_owned(),
        };
        let bytes = serde_json::to_vec(&record).map_err(|e| failed(e.to_string()))?;
        own_files::make_dir(&self.dir)
            .and_then(|()| {
                own_files::write_atomically(&self.dir, &self.record_path(), &bytes, ".trust")
            })
            .map_err(|e| failed(e.to_string()))
    }
}

/// Why the trust could not be kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot keep the trust of this project's {file}: {why}")]
pub struct TrustError {
    /// The project file, as notices name it.
    file: &'static str,
    /// The OS's words.
    why: String,
}

/// The text of `file` in `project`, `None` when there is none: resolved
/// by the path policy and opened beneath the project, never past
/// `file.max_bytes`; `Err` says why it could not be read.
fn read_beneath(project: &Path, file: &ProjectFile) -> Result<Option<String>, String> {
    let ws = LocalWorkspace::new(project);
    if ws.lstat(&project.join(file.path)).is_err() {
        return Ok(None);
    }
    let real = ws.resolve(file.path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    ws.open_regular(&real)
        .and_then(|f| f.take(file.max_bytes + 1).read_to_end(&mut bytes))
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > file.max_bytes {
        return Err(format!(
            "it holds more than {} KiB, more than such a file ever needs",
            file.max_bytes / 1024
        ));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| "it is not UTF-8".to_owned())
}

/// XXH3-64 of `bytes` in hex: a record's file name, which the record's
/// own `project` confirms.
fn hex(bytes: &[u8]) -> String {
    let (ContentHash::Xxh3(key) | ContentHash::Sip13(key)) = content_hash(bytes);
    format!("{key:016x}")
}
