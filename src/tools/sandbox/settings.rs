//! Where a sandboxed command may never read: the credential locations of
//! the person's home, the system's own secrets, dashfloat's own
//! configuration and sessions, and what the config file adds
//! (`sandbox_deny_read`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The credential locations in a home, relative to it: keys, tokens and
/// the files that name them. A sandboxed command reads none of them.
pub const HOME_CREDENTIALS: &[&str] = &[
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gh",
    ".config/gcloud",
    ".docker",
    ".kube",
    ".local/share/keyrings",
    ".password-store",
];

/// The system's own secrets: readable by root's uid even without a
/// capability, so a command running as root would read them.
pub const SYSTEM_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
];

/// What the sandbox of this workspace keeps from every sandboxed command:
/// the paths it may not read (nor write), each an absolute path, denied
/// with everything beneath it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    deny_read: Vec<PathBuf>,
}

impl SandboxSettings {
    /// The defaults for the person whose home is `home` and whose
    /// dashfloat configuration (and sessions) live in `own`:
    /// [`HOME_CREDENTIALS`] beneath the home, [`SYSTEM_SECRETS`] and
    /// `own`.
    pub fn for_home(home: Option<&Path>, own: Option<&Path>) -> SandboxSettings {
        let mut deny_read: Vec<PathBuf> = SYSTEM_SECRETS.iter().map(PathBuf::from).collect();
        if let Some(home) = home.filter(|h| h.is_absolute()) {
            deny_read.extend(HOME_CREDENTIALS.iter().map(|c| home.join(c)));
        }
        deny_read.extend(own.filter(|o| o.is_absolute()).map(Path::to_path_buf));
        SandboxSettings { deny_read }
    }

    /// The defaults for this process's `HOME` and dashfloat's directory
    /// in `XDG_CONFIG_HOME` (`~/.config/dashfloat` when unset), as the
    /// config file and sessions are found (ADR 0005, 0022).
    pub fn from_env() -> SandboxSettings {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let home = var("HOME").map(PathBuf::from);
        let config = var("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".config")));
        let own = config.map(|c| c.join("dashfloat"));
        SandboxSettings::for_home(home.as_deref(), own.as_deref())
    }

    /// These settings with `paths` denied too (the config file's
    /// `sandbox_deny_read`); a path that is not absolute is left out.
    pub fn with_deny_read(mut self, paths: impl IntoIterator<Item = PathBuf>) -> SandboxSettings {
        self.deny_read
            .extend(paths.into_iter().filter(|p| p.is_absolute()));
        self
    }

    /// Every path denied, as given.
    pub fn deny_read(&self) -> &[PathBuf] {
        &self.deny_read
    }

    /// Every path denied as the kernel will see it: each one's real path
    /// (the part that exists resolved, links followed), and the path as
    /// given besides when they differ.
    pub(super) fn denied_real(&self) -> Vec<PathBuf> {
        let mut out = Vec::with_capacity(self.deny_read.len());
        for path in &self.deny_read {
            let real = real_path(path);
            if real != *path {
                out.push(path.clone());
            }
            out.push(real);
        }
        out
    }
}

/// `path` with the longest part of it that exists resolved (links
/// followed), the rest appended as it is.
pub(super) fn real_path(path: &Path) -> PathBuf {
    let mut rest: Vec<OsString> = Vec::new();
    let mut base = path;
    loop {
        if let Ok(real) = base.canonicalize() {
            return rest.iter().rev().fold(real, |acc, part| acc.join(part));
        }
        match (base.parent(), base.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                base = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}
