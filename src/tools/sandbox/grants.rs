//! What each level lets a command read and write, as Landlock rules.
//! Landlock grants and never subtracts, so "everything but `~/.ssh`" is
//! granted as every entry on the way to it but the denied one, listed
//! when the rules are made ([`Grants::ruleset`]).

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetError, Scope,
};

/// The Landlock ABI these rules are written and tested for (Linux 6.15).
/// An older kernel enforces what it has (the crate's best effort), and
/// the probe names the rest; a newer one enforces these.
const TARGET: ABI = ABI::V7;

/// The system's own directories a read-only command may read: its
/// programs and libraries, their configuration, installed software and
/// `/proc` (where `ps` and the shell look).
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix/store",
    "/proc",
];

/// The devices every sandboxed command may read and write: the ones
/// programs open on their own. No disk, no memory device.
const PLAIN_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];

/// Devices every sandboxed command may read.
const RANDOM_DEVICES: &[&str] = &["/dev/random", "/dev/urandom"];

/// Devices a workspace-write command may also use: pseudo-terminals, for
/// the test suites that open one.
const TERMINAL_DEVICES: &[&str] = &["/dev/ptmx", "/dev/pts"];

/// The most entries of one `PATH` folder in the home looked at for links
/// to where a toolchain really lives.
const PATH_LINKS_MAX: usize = 256;

/// What a level grants beneath which paths.
#[derive(Debug, Default)]
pub(super) struct Grants {
    /// Read (and run) beneath each.
    read: Vec<PathBuf>,
    /// Everything beneath each: read, write, make, remove, rename.
    write: Vec<PathBuf>,
    /// Each device file and what it may be used for.
    devices: Vec<(PathBuf, BitFlags<AccessFs>)>,
    /// Not read beneath these, besides the denied paths: `/dev`, whose
    /// devices are granted one by one.
    unread: Vec<PathBuf>,
}

impl Grants {
    /// Read-only: the project, the system's own directories, the
    /// toolchains on the command's `PATH` (with the installs they run
    /// from) and git's global configuration, plus `outside` (a linked
    /// worktree's git folder); writes only in `temp`.
    pub(super) fn read_only(
        root: &Path,
        temp: &Path,
        env: &[(OsString, OsString)],
        outside: &[PathBuf],
    ) -> Grants {
        let home = var(env, "HOME").map(PathBuf::from);
        let mut read = vec![root.to_path_buf()];
        read.extend(SYSTEM_DIRS.iter().map(PathBuf::from));
        read.extend(toolchains(env, home.as_deref()));
        read.extend(git_config(env, home.as_deref()));
        read.extend(outside.iter().cloned());
        Grants {
            read,
            write: vec![temp.to_path_buf()],
            devices: devices(false),
            unread: Vec::new(),
        }
    }

    /// Workspace-write: reads everywhere (but the denied paths, and
    /// devices but the plain ones), writes in the project and `temp`.
    pub(super) fn workspace_write(root: &Path, temp: &Path) -> Grants {
        Grants {
            read: vec![PathBuf::from("/")],
            write: vec![root.to_path_buf(), temp.to_path_buf()],
            devices: devices(true),
            unread: vec![PathBuf::from("/dev")],
        }
    }

    /// The Landlock ruleset: every file system access handled (as far as
    /// [`TARGET`] knows them), the grants with `deny` (real paths) taken
    /// out, TCP bind and connect handled with no port allowed, and the
    /// command scoped from abstract Unix sockets and signals outside it.
    /// `None` when the kernel has no Landlock.
    pub(super) fn ruleset(&self, deny: &[PathBuf]) -> Result<Option<OwnedFd>, RulesetError> {
        let mut ruleset = Ruleset::default()
            .handle_access(AccessFs::from_all(TARGET))?
            .handle_access(AccessNet::from_all(TARGET))?
            .scope(Scope::from_all(TARGET))?
            .create()?;
        let read = AccessFs::from_read(TARGET);
        let all = AccessFs::from_all(TARGET);
        let mut unread: Vec<PathBuf> = deny.to_vec();
        unread.extend(self.unread.iter().cloned());
        for path in dedup(&self.read) {
            ruleset = beneath(ruleset, &path, read, &unread)?;
        }
        for path in dedup(&self.write) {
            ruleset = beneath(ruleset, &path, all, deny)?;
        }
        for (device, access) in &self.devices {
            ruleset = one(ruleset, device, *access)?;
        }
        Ok(ruleset.into())
    }
}

/// The device grants; `terminals` adds the pseudo-terminals.
fn devices(terminals: bool) -> Vec<(PathBuf, BitFlags<AccessFs>)> {
    let use_it = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
    let mut devices: Vec<(PathBuf, BitFlags<AccessFs>)> = PLAIN_DEVICES
        .iter()
        .map(|d| (PathBuf::from(d), use_it))
        .collect();
    devices.extend(
        RANDOM_DEVICES
            .iter()
            .map(|d| (PathBuf::from(d), BitFlags::from(AccessFs::ReadFile))),
    );
    if terminals {
        devices.extend(
            TERMINAL_DEVICES
                .iter()
                .map(|d| (PathBuf::from(d), use_it | AccessFs::ReadDir)),
        );
    }
    devices
}

/// The real paths of `paths` that exist, each once.
fn dedup(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::with_capacity(paths.len());
    for path in paths {
        if let Ok(real) = path.canonicalize()
            && !out.contains(&real)
        {
            out.push(real);
        }
    }
    out
}

/// Grants `access` beneath `path` (a real path), except beneath each of
/// `deny`: where a denied path lies beneath it, each entry of it is
/// granted instead (links left out: they lead where a rule of their own
/// decides), down to the denied one, which is not.
fn beneath(
    ruleset: RulesetCreated,
    path: &Path,
    access: BitFlags<AccessFs>,
    deny: &[PathBuf],
) -> Result<RulesetCreated, RulesetError> {
    if deny.iter().any(|d| path.starts_with(d)) {
        return Ok(ruleset);
    }
    let within: Vec<PathBuf> = deny
        .iter()
        .filter(|d| d.starts_with(path))
        .cloned()
        .collect();
    if within.is_empty() {
        return one(ruleset, path, access);
    }
    // A folder that cannot be listed is granted none of.
    let Ok(entries) = std::fs::read_dir(path) else {
        return Ok(ruleset);
    };
    let mut ruleset = ruleset;
    for entry in entries.flatten() {
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        if !is_link {
            ruleset = beneath(ruleset, &entry.path(), access, &within)?;
        }
    }
    Ok(ruleset)
}

/// Grants `access` beneath `path` (only the rights a file takes, when it
/// is not a folder); a path that does not exist is left out.
fn one(
    ruleset: RulesetCreated,
    path: &Path,
    access: BitFlags<AccessFs>,
) -> Result<RulesetCreated, RulesetError> {
    let Ok(fd) = PathFd::new(path) else {
        return Ok(ruleset);
    };
    let is_dir = nix::sys::stat::fstat(fd.as_fd())
        .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR);
    let access = if is_dir {
        access
    } else {
        access & AccessFs::from_file(TARGET)
    };
    if access.is_empty() {
        return Ok(ruleset);
    }
    ruleset.add_rule(PathBeneath::new(fd, access))
}

/// The value of `name` in `env`, when set and not empty.
fn var<'e>(env: &'e [(OsString, OsString)], name: &str) -> Option<&'e OsStr> {
    env.iter()
        .rev()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_os_str())
        .filter(|v| !v.is_empty())
}

/// The toolchains on `PATH`: each absolute entry; the install it belongs
/// to (the folder above a `bin`, `sbin` or `shims`: `~/.cargo`,
/// `~/.pyenv`, `/opt/node`), unless that is the home, above it or a
/// top-level folder; for an entry in the home, where its links lead
/// (`~/.local/bin/x` → its install); and rustup's home where a `rustup`
/// is on `PATH` (its proxies run the toolchains there).
fn toolchains(env: &[(OsString, OsString)], home: Option<&Path>) -> Vec<PathBuf> {
    let Some(path) = var(env, "PATH") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in std::env::split_paths(path).filter(|p| p.is_absolute()) {
        let Ok(real) = entry.canonicalize() else {
            continue;
        };
        out.extend(install_of(&real, home));
        if home.is_some_and(|h| real.starts_with(h)) {
            out.extend(linked_installs(&real, home));
        }
        if real.join("rustup").exists() {
            let rustup = var(env, "RUSTUP_HOME")
                .map(PathBuf::from)
                .or_else(|| home.map(|h| h.join(".rustup")));
            out.extend(rustup);
        }
        out.push(real);
    }
    out
}

/// The install a `PATH` folder belongs to, as [`toolchains`] says.
fn install_of(dir: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let name = dir.file_name()?;
    if !["bin", "sbin", "shims"].iter().any(|n| name == *n) {
        return None;
    }
    let parent = dir.parent()?;
    // `/`, `/usr`, `/home`: never a whole top-level folder.
    if parent.components().count() < 3 {
        return None;
    }
    if home.is_some_and(|h| h.starts_with(parent)) {
        return None;
    }
    Some(parent.to_path_buf())
}

/// Where the links in the `PATH` folder `dir` lead: each target's folder,
/// or its install.
fn linked_installs(dir: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten().take(PATH_LINKS_MAX) {
        if !entry.file_type().is_ok_and(|t| t.is_symlink()) {
            continue;
        }
        let Ok(target) = entry.path().canonicalize() else {
            continue;
        };
        if let Some(folder) = target.parent()
            && folder != dir
        {
            out.push(install_of(folder, home).unwrap_or_else(|| folder.to_path_buf()));
        }
    }
    out
}

/// git's global configuration: `GIT_CONFIG_GLOBAL` when set, else
/// `~/.gitconfig` and the `git` folder of `XDG_CONFIG_HOME` (or
/// `~/.config`).
fn git_config(env: &[(OsString, OsString)], home: Option<&Path>) -> Vec<PathBuf> {
    if let Some(global) = var(env, "GIT_CONFIG_GLOBAL") {
        return vec![PathBuf::from(global)];
    }
    let config = var(env, "XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".config")));
    home.map(|h| h.join(".gitconfig"))
        .into_iter()
        .chain(config.map(|c| c.join("git")))
        .collect()
}
