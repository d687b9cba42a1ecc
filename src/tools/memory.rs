//! [`MemoryWorkspace`]: a project held in memory — folders and files
//! under a root, no links, no processes. The second kind of workspace:
//! the tools run on it unchanged, which keeps the seam honest (ADR 0026),
//! and the tests of the tools' own logic (reading windows, matching
//! edits, listing, globbing) run on it beside the local one. Security and
//! confinement are the local workspace's and are tested there. Its
//! errors are the system's own, so the model reads the same words.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io::{self, Cursor};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use nix::errno::Errno;
use tokio_util::sync::CancellationToken;

use super::PathError;
use super::walk::SEARCH_SKIPPED_DIRS;
use super::workspace::{
    FileKind, FileReader, Listed, Listing, Opener, Parents, ProbeError, Probed, Sandbox, ScanError,
    ScanStep, Seen, SpawnError, Spawned, Stat, Visitor, WalkError, Workspace, WriteError,
};

/// The mode a file is written with when it had none (as the umask 022
/// leaves a new file).
const NEW_FILE_MODE: u32 = 0o644;

/// One entry of the tree.
#[derive(Debug, Clone)]
enum Node {
    /// A folder.
    Dir,
    /// A file: its bytes and permission bits.
    File(Vec<u8>, u32),
}

/// A project held in memory, rooted at an absolute path that exists only
/// here. Clones share the tree.
#[derive(Debug, Clone)]
pub struct MemoryWorkspace {
    root: PathBuf,
    tree: Arc<Mutex<BTreeMap<PathBuf, Node>>>,
}

impl MemoryWorkspace {
    /// An empty project at `root` (an absolute path).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let tree = BTreeMap::from([(root.clone(), Node::Dir)]);
        MemoryWorkspace {
            root,
            tree: Arc::new(Mutex::new(tree)),
        }
    }

    /// The same project with a file at `path` (relative to the root)
    /// holding `content`, its folders made.
    pub fn with_file(self, path: &str, content: &[u8]) -> Self {
        let real = self.root.join(path);
        let mut tree = self.tree();
        for dir in real
            .ancestors()
            .skip(1)
            .take_while(|d| d.starts_with(&self.root))
        {
            tree.insert(dir.to_path_buf(), Node::Dir);
        }
        tree.insert(real, Node::File(content.to_vec(), NEW_FILE_MODE));
        drop(tree);
        self
    }

    /// The bytes of the file at `path` (relative to the root), if there
    /// is one.
    pub fn file(&self, path: &str) -> Option<Vec<u8>> {
        match self.tree().get(&self.root.join(path)) {
            Some(Node::File(data, _)) => Some(data.clone()),
            _ => None,
        }
    }

    fn tree(&self) -> MutexGuard<'_, BTreeMap<PathBuf, Node>> {
        self.tree.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn node(&self, path: &Path) -> io::Result<Node> {
        self.tree()
            .get(path)
            .cloned()
            .ok_or_else(|| io::Error::from(Errno::ENOENT))
    }
}

/// What a node is, as the tools look at it.
fn stat_of(node: &Node) -> Stat {
    match node {
        Node::Dir => Stat {
            kind: FileKind::Dir,
            len: 0,
            mode: 0o40755,
        },
        Node::File(data, mode) => Stat {
            kind: FileKind::File,
            len: data.len() as u64,
            mode: 0o100000 | mode,
        },
    }
}

/// Whether `path` lies directly in `dir`.
fn is_child(dir: &Path, path: &Path) -> bool {
    path.parent() == Some(dir)
}

impl Workspace for MemoryWorkspace {
    fn root(&self) -> &Path {
        &self.root
    }

    fn resolve(&self, path: &str) -> Result<PathBuf, PathError> {
        if path.is_empty() {
            return Err(PathError::Empty);
        }
        if path.contains('\0') {
            return Err(PathError::Nul(path.to_owned()));
        }
        // No links: the lexical reading is the real one.
        let mut resolved = PathBuf::from("/");
        for part in self.root.join(path).components() {
            match part {
                Component::ParentDir => {
                    resolved.pop();
                }
                Component::Normal(name) => resolved.push(name),
                Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            }
        }
        if resolved.starts_with(&self.root) && !path.starts_with('~') {
            Ok(resolved)
        } else {
            Err(PathError::Escapes(path.to_owned()))
        }
    }

    fn redirected(&self, _path: &str, _real: &Path) -> Option<PathBuf> {
        None
    }

    fn real_path(&self, path: &Path) -> io::Result<PathBuf> {
        self.node(path).map(|_| path.to_path_buf())
    }

    fn stat(&self, path: &Path) -> io::Result<Stat> {
        self.node(path).map(|node| stat_of(&node))
    }

    fn lstat(&self, path: &Path) -> io::Result<Stat> {
        self.stat(path)
    }

    fn opener(&self) -> io::Result<Box<dyn Opener>> {
        Ok(Box::new(self.clone()))
    }

    fn list(&self, real: &Path, keep: usize) -> io::Result<Listing> {
        if !matches!(self.node(real)?, Node::Dir) {
            return Err(io::Error::from(Errno::ENOTDIR));
        }
        let tree = self.tree();
        let children: Vec<(&PathBuf, &Node)> = tree
            .iter()
            .filter(|(path, _)| is_child(real, path))
            .collect();
        let entries = children
            .iter()
            .take(keep)
            .map(|(path, node)| Listed {
                name: path.file_name().map(OsString::from).unwrap_or_default(),
                stat: Some(stat_of(node)),
                target: None,
            })
            .collect();
        Ok(Listing {
            entries,
            total: children.len(),
        })
    }

    fn write_atomic(
        &self,
        real: &Path,
        data: &[u8],
        mode: Option<u32>,
        parents: Parents,
    ) -> Result<(), WriteError> {
        let mut tree = self.tree();
        let folders: Vec<PathBuf> = real
            .ancestors()
            .skip(1)
            .take_while(|d| d.starts_with(&self.root))
            .map(Path::to_path_buf)
            .collect();
        for folder in &folders {
            match (tree.get(folder), parents) {
                (Some(Node::Dir), _) => {}
                (Some(Node::File(..)), _) => {
                    return Err(WriteError::Parents(io::Error::from(Errno::ENOTDIR)));
                }
                (None, Parents::Create) => {
                    tree.insert(folder.clone(), Node::Dir);
                }
                (None, Parents::Existing) => {
                    return Err(WriteError::Write(io::Error::from(Errno::ENOENT)));
                }
            }
        }
        if matches!(tree.get(real), Some(Node::Dir)) {
            return Err(WriteError::Write(io::Error::from(Errno::EISDIR)));
        }
        let mode = mode.map_or(NEW_FILE_MODE, |m| m & 0o7777);
        tree.insert(real.to_path_buf(), Node::File(data.to_vec(), mode));
        Ok(())
    }

    fn remove_file(&self, real: &Path) -> io::Result<()> {
        let mut tree = self.tree();
        match tree.get(real) {
            Some(Node::File(..)) => {
                tree.remove(real);
                Ok(())
            }
            Some(Node::Dir) => Err(io::Error::from(Errno::EISDIR)),
            None => Err(io::Error::from(Errno::ENOENT)),
        }
    }

    fn remove_empty_dir(&self, real: &Path) -> io::Result<()> {
        let mut tree = self.tree();
        if !matches!(tree.get(real), Some(Node::Dir)) {
            return Err(io::Error::from(Errno::ENOTDIR));
        }
        if tree.keys().any(|path| is_child(real, path)) {
            return Err(io::Error::from(Errno::ENOTEMPTY));
        }
        tree.remove(real);
        Ok(())
    }

    fn read_small(&self, path: &Path, max: u64) -> io::Result<Option<String>> {
        match self.tree().get(path) {
            None => Ok(None),
            Some(Node::Dir) => Err(io::Error::other("not a regular file")),
            Some(Node::File(data, _)) if data.len() as u64 > max => {
                Err(io::Error::other(format!("larger than {max} bytes")))
            }
            Some(Node::File(data, _)) => Ok(Some(String::from_utf8_lossy(data).into_owned())),
        }
    }

    /// Every file under `target`, in path order, skipping the search
    /// tools' skipped folders below it; no ignore file is read.
    fn walk<'v>(
        &self,
        target: &Path,
        cancel: &CancellationToken,
        make: &mut dyn FnMut() -> Visitor<'v>,
    ) -> Result<(), WalkError> {
        let files: Vec<PathBuf> = self
            .tree()
            .iter()
            .filter(|(path, node)| matches!(node, Node::File(..)) && path.starts_with(target))
            .filter(|(path, _)| {
                path.strip_prefix(target).is_ok_and(|rest| {
                    !rest.components().rev().skip(1).any(|c| {
                        c.as_os_str()
                            .to_str()
                            .is_some_and(|name| SEARCH_SKIPPED_DIRS.contains(&name))
                    })
                })
            })
            .map(|(path, _)| path.clone())
            .collect();
        let mut visit = make();
        for file in &files {
            if cancel.is_cancelled() {
                return Err(WalkError::Cancelled);
            }
            visit(Seen::File(file));
        }
        Ok(())
    }

    fn spawn(
        &self,
        _dir: &Path,
        _command: &str,
        _env: Vec<(OsString, OsString)>,
        _sandbox: Sandbox,
    ) -> Result<Spawned, SpawnError> {
        Err(SpawnError::Start(no_processes()))
    }

    fn probe(
        &self,
        _dir: &Path,
        _program: &Path,
        _args: &[&str],
        _env: &[(OsString, OsString)],
        _timeout: Duration,
        _output: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<Probed, ProbeError> {
        Err(ProbeError::Start(no_processes()))
    }

    fn scan(
        &self,
        dir: &Path,
        max_entries: usize,
        judge: &mut dyn FnMut(&Path, &OsStr, FileKind) -> ScanStep,
    ) -> Result<Option<PathBuf>, ScanError> {
        // Taken out of the lock first: `judge` may look at the tree.
        // The map's order puts each folder's entries right after it.
        let under: Vec<(PathBuf, FileKind)> = self
            .tree()
            .iter()
            .filter(|(path, _)| path.starts_with(dir) && *path != dir)
            .map(|(path, node)| (path.clone(), stat_of(node).kind))
            .collect();
        let mut passed: Option<PathBuf> = None;
        let mut seen = 0usize;
        for (path, kind) in under {
            if passed
                .as_ref()
                .is_some_and(|folder| path.starts_with(folder))
            {
                continue;
            }
            seen += 1;
            if seen > max_entries {
                return Err(ScanError::TooMany(max_entries));
            }
            let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
                continue;
            };
            match judge(folder, name, kind) {
                ScanStep::Found => return Ok(Some(path)),
                ScanStep::Enter => passed = None,
                ScanStep::Pass => passed = Some(path),
            }
        }
        Ok(None)
    }

    fn take_notice(&self) -> Option<&'static str> {
        None
    }
}

impl Opener for MemoryWorkspace {
    fn open_regular(&self, real: &Path) -> io::Result<FileReader> {
        match self.node(real)? {
            Node::File(data, _) => Ok(FileReader::new(Cursor::new(data))),
            Node::Dir => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            )),
        }
    }
}

/// Why a memory workspace runs nothing.
fn no_processes() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "this workspace is held in memory and runs no processes",
    )
}
