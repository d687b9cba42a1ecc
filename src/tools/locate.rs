//! Where a path that does not exist may have been meant: the places in
//! the project that hold its name, or else the nearest folder of it that
//! exists. A small model guesses folders (`tests/test_app.py` for a test
//! at the top) and, told only "not found", guesses again or lists `..`;
//! told where the name is, it uses that. ADR 0011.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

use super::walk;
use super::workspace::{Seen, Visitor, Workspace};

/// Files a search for a missing name looks at before it gives up: it runs
/// before the failure is answered, so it must stay short on a large tree.
pub const LOCATE_MAX_FILES: usize = 20_000;

/// Places named in the hint; more are only said to exist.
pub const LOCATE_MAX_SHOWN: usize = 3;

/// What the failure for the missing `path` adds after its error: where in
/// the project its name is (a file or folder of that name, case aside),
/// or that nothing the searches see holds it, or else which folder to
/// list.
pub(super) fn hint(ws: &dyn Workspace, path: &str) -> String {
    let Some(name) = Path::new(path).file_name() else {
        return list_hint(ws, path);
    };
    let name_shown = name.to_string_lossy();
    match places(ws, name) {
        Places::Found(mut head) => {
            let others = head.len() > LOCATE_MAX_SHOWN;
            head.truncate(LOCATE_MAX_SHOWN);
            let others = if others { " and elsewhere" } else { "" };
            format!(
                "; the project has {name_shown} at {}{others}",
                head.join(", ")
            )
        }
        Places::Nowhere => format!(
            "; nothing in the project is named {name_shown} (ignored and build folders aside); list_directory {} to see what is there",
            nearest_folder(ws, path)
        ),
        Places::NotSearched => list_hint(ws, path),
    }
}

fn list_hint(ws: &dyn Workspace, path: &str) -> String {
    format!(
        "; list_directory {} to find the right name",
        nearest_folder(ws, path)
    )
}

/// The longest leading part of `path` that is a folder in the project, as
/// written (`.` when none is).
fn nearest_folder(ws: &dyn Workspace, path: &str) -> String {
    Path::new(path)
        .ancestors()
        .skip(1)
        .take_while(|folder| !folder.as_os_str().is_empty())
        .find(|folder| {
            ws.resolve(&folder.to_string_lossy())
                .ok()
                .and_then(|real| ws.stat(&real).ok())
                .is_some_and(|meta| meta.is_dir())
        })
        .map_or_else(
            || ".".to_owned(),
            |folder| folder.to_string_lossy().into_owned(),
        )
}

/// What a search of the project for one name found.
enum Places {
    /// The shallowest paths holding it, one more than
    /// [`LOCATE_MAX_SHOWN`] when there are more.
    Found(Vec<String>),
    /// The whole project was searched and nothing holds it.
    Nowhere,
    /// The search could not finish within [`LOCATE_MAX_FILES`].
    NotSearched,
}

/// The files and folders named `name` (ASCII case aside) in the project,
/// walked as the search tools walk it.
fn places(ws: &dyn Workspace, name: &OsStr) -> Places {
    // The first distinct places seen, the shallowest first (a top-level
    // `conftest.py` before `a_pkg/conftest.py`): one that is dropped for
    // coming later is dropped again when seen again, so the set stays
    // exact.
    let head = Mutex::new(BTreeSet::<(usize, PathBuf)>::new());
    let whole = each_file(ws, &|relative: &Path| {
        let mut head = head.lock().unwrap_or_else(PoisonError::into_inner);
        for place in relative.ancestors().filter(|place| {
            place.file_name().is_some_and(|own| {
                own.as_encoded_bytes()
                    .eq_ignore_ascii_case(name.as_encoded_bytes())
            })
        }) {
            head.insert((place.components().count(), place.to_path_buf()));
            if head.len() > LOCATE_MAX_SHOWN + 1 {
                head.pop_last();
            }
        }
    });
    let head = head.into_inner().unwrap_or_else(PoisonError::into_inner);
    match (whole, head.is_empty()) {
        (true, true) => Places::Nowhere,
        (false, true) => Places::NotSearched,
        (_, false) => Places::Found(head.iter().map(|(_, place)| walk::shown(place).0).collect()),
    }
}

/// The project's files and the folders that hold them, as the search
/// tools see them and relative to the root (folders end with `/`), listed
/// the shallowest first, then by name: the first [`LOCATE_MAX_FILES`]
/// files the walk reaches, which in a larger tree need not be the
/// shallowest. A path that a prompt could not name (a quote or a line
/// break in it, or bytes that are not UTF-8) is left out; one with spaces
/// is named in quotes. What the input box completes `@` with (ADR 0038).
pub fn project_files(ws: &dyn Workspace) -> Vec<String> {
    let found = Mutex::new(BTreeSet::<(usize, String)>::new());
    each_file(ws, &|relative: &Path| {
        let (file, lossy) = walk::shown(relative);
        if lossy || file.contains(['"', '\n', '\r']) {
            return;
        }
        let mut found = found.lock().unwrap_or_else(PoisonError::into_inner);
        found.insert((relative.components().count(), file));
        for folder in relative.ancestors().skip(1) {
            if folder.as_os_str().is_empty() {
                break;
            }
            let depth = folder.components().count();
            found.insert((depth, format!("{}/", walk::shown(folder).0)));
        }
    });
    let found = found.into_inner().unwrap_or_else(PoisonError::into_inner);
    found.into_iter().map(|(_, path)| path).collect()
}

/// The top of the project's tree as the search tools see it: every file
/// and folder at most `depth` levels down that is, or holds, a file they
/// walk.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProjectTop {
    /// Each path relative to the root, with whether it is a folder.
    pub entries: BTreeMap<PathBuf, bool>,
    /// Whether the walk saw every file (it stops after
    /// [`LOCATE_MAX_FILES`], and in a larger tree what it saw first need
    /// not be the shallowest).
    pub whole: bool,
}

/// The files and folders of the project at most `depth` levels down, as
/// [`ProjectTop`] says: what the project overview shows of the tree
/// (ADR 0048). Folders that hold no file the search tools walk (empty,
/// or ignored throughout) are not among them.
pub fn project_top(ws: &dyn Workspace, depth: usize) -> ProjectTop {
    let found = Mutex::new(BTreeMap::<PathBuf, bool>::new());
    let whole = each_file(ws, &|relative: &Path| {
        let parts = relative.components().count();
        let mut found = found.lock().unwrap_or_else(PoisonError::into_inner);
        let mut prefix = PathBuf::new();
        for (at, part) in relative.components().take(depth).enumerate() {
            prefix.push(part);
            found.entry(prefix.clone()).or_insert(at + 1 < parts);
        }
    });
    ProjectTop {
        entries: found.into_inner().unwrap_or_else(PoisonError::into_inner),
        whole,
    }
}

/// Walks the project's files as the search tools do, handing each one's
/// path relative to the root to `visit`, and stops after
/// [`LOCATE_MAX_FILES`]; whether the walk saw every file.
fn each_file(ws: &dyn Workspace, visit: &(dyn Fn(&Path) + Sync)) -> bool {
    let Ok(root) = ws.real_path(ws.root()) else {
        return false;
    };
    let seen = AtomicUsize::new(0);
    let stop = CancellationToken::new();
    let walked = ws.walk(&root, &stop, &mut || {
        Box::new(|entry: Seen<'_>| {
            let Seen::File(real) = entry else { return };
            if seen.fetch_add(1, Ordering::Relaxed) >= LOCATE_MAX_FILES {
                stop.cancel();
                return;
            }
            visit(real.strip_prefix(&root).unwrap_or(real));
        }) as Visitor<'_>
    });
    walked.is_ok()
}
