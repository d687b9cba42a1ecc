//! The path policy checked against the kernel, not against itself: random
//! trees of directories, files, dangling and looping links, links to
//! outside and back, links whose targets climb with `..`, files used as
//! directories; random relative and absolute paths over them. For every
//! path the policy accepts, the kernel must agree that what the tools will
//! touch is inside the root.
//!
//! Deterministic by default; `DASHFLOAT_PATH_SEED=<u64>` picks another run
//! and `DASHFLOAT_PATH_CASES=<n>` another number of paths. A failure prints
//! the seed, the tree and the path.

use std::os::fd::OwnedFd;
use std::os::unix::fs::symlink;
use std::path::{Component, Path, PathBuf};

use dashfloat::tools::resolve;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat2};
use nix::sys::stat::Mode;

use crate::{Rng, env_or};

/// The run CI does: the seed and how many paths it checks.
const DEFAULT_SEED: u64 = 0x0da5_f10a_7000_0007;
const DEFAULT_CASES: usize = 10_000;
/// Paths checked per generated tree.
const PATHS_PER_TREE: usize = 50;
/// Names everything in a tree is called, so paths meet entries often.
const NAMES: [&str; 4] = ["a", "b", "c", "d"];

/// One generated world: `base/root` (the working directory) and
/// `base/outside` (secret, a directory, and a link back into root).
struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    root_fd: OwnedFd,
    /// What was made, for the failure message.
    made: Vec<String>,
}

/// A random relative path of 1..=max components over the names, `..`,
/// `.` and a name that never exists.
fn relative(rng: &mut Rng, max: usize) -> String {
    let n = 1 + rng.below(max);
    (0..n)
        .map(|_| match rng.below(10) {
            0..=5 => rng.pick(&NAMES),
            6 | 7 => "..",
            8 => ".",
            _ => "missing",
        })
        .collect::<Vec<_>>()
        .join("/")
}

impl World {
    fn generate(rng: &mut Rng) -> World {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        let outside = base.join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(outside.join("odir")).unwrap();
        std::fs::write(outside.join("secret"), "s").unwrap();
        std::fs::write(outside.join("odir/f"), "f").unwrap();
        symlink(&root, outside.join("back")).unwrap();
        let root_fd = nix::fcntl::open(
            &root,
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .unwrap();
        let mut world = World {
            _dir: dir,
            root,
            outside,
            root_fd,
            made: Vec::new(),
        };
        let mut dirs = vec![PathBuf::new()];
        for _ in 0..6 + rng.below(10) {
            let parent = dirs[rng.below(dirs.len())].clone();
            let rel = parent.join(rng.pick(&NAMES));
            let full = world.root.join(&rel);
            if full.symlink_metadata().is_ok() {
                continue;
            }
            match rng.below(10) {
                0..=2 => {
                    std::fs::create_dir(&full).unwrap();
                    world.made.push(format!("dir  {}", rel.display()));
                    dirs.push(rel);
                }
                3 | 4 => {
                    std::fs::write(&full, "x").unwrap();
                    world.made.push(format!("file {}", rel.display()));
                }
                _ => {
                    let target = world.link_target(rng, &rel);
                    symlink(&target, &full).unwrap();
                    world
                        .made
                        .push(format!("link {} -> {target}", rel.display()));
                }
            }
        }
        world
    }

    /// Where a link at `rel` points: inside, outside, back in, the
    /// filesystem root, a magic link, itself, or through a missing name or
    /// a file and back up with `..`.
    fn link_target(&self, rng: &mut Rng, rel: &Path) -> String {
        let outside_parts = ["secret", "odir", "odir/f", "back", "back/a", "missing"];
        let depth = rel.components().count();
        match rng.below(12) {
            0..=3 => relative(rng, 4),
            4 => format!(
                "{}outside/{}",
                "../".repeat(depth),
                rng.pick(&outside_parts)
            ),
            5 => format!("{}/{}", self.outside.display(), rng.pick(&outside_parts)),
            6 => format!("{}/{}", self.root.display(), relative(rng, 3)),
            7 => rng
                .pick(&["/", "/etc", "/proc/self/root", "/proc/self/cwd"])
                .to_owned(),
            8 => rel.file_name().unwrap().to_string_lossy().into_owned(),
            9 => format!("missing/{}", relative(rng, 4)),
            10 => format!("{}/x/{}", rng.pick(&NAMES), relative(rng, 4)),
            _ => format!(
                "{}/../{}outside/secret",
                rng.pick(&NAMES),
                "../".repeat(depth)
            ),
        }
    }

    /// A random path as a model might give it.
    fn path(&self, rng: &mut Rng) -> String {
        let mut path = relative(rng, 6);
        if rng.percent(10) {
            path.push('/');
        }
        match rng.below(20) {
            0..=2 => format!("{}/{path}", self.root.display()),
            3 => format!("{}/{path}", self.outside.display()),
            4 => format!("/{path}"),
            _ => path,
        }
    }

    /// The path as the policy reads the model's `..`: lexically, against
    /// the root. `None` when it leaves the root that way.
    fn lexical(&self, path: &str) -> Option<PathBuf> {
        let mut out = PathBuf::from("/");
        for comp in self.root.join(path).components() {
            match comp {
                Component::ParentDir => {
                    out.pop();
                }
                Component::Normal(name) => out.push(name),
                _ => {}
            }
        }
        out.strip_prefix(&self.root).ok().map(Path::to_path_buf)
    }

    /// Opens `rel` beneath the root with no link allowed anywhere: the
    /// kernel's word that `rel` is a link-free path inside the root.
    fn kernel_beneath(&self, rel: &Path) -> nix::Result<OwnedFd> {
        let rel = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        openat2(
            &self.root_fd,
            rel,
            OpenHow::new()
                .flags(OFlag::O_PATH | OFlag::O_CLOEXEC)
                .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS),
        )
    }

    /// Checks one path and returns whether the policy accepted it; the
    /// error names what disagreed.
    fn check(&self, path: &str) -> Result<bool, String> {
        let verdict = resolve(&self.root, path);
        if let Ok(real) = &verdict {
            // What the tools will touch: the deepest part of the answer
            // that exists must be, by the kernel's own resolution, itself
            // and inside the root; the rest is names to be created.
            let rel = real
                .strip_prefix(&self.root)
                .map_err(|_| format!("accepted {} outside the root", real.display()))?;
            let mut existing = rel.to_path_buf();
            while self.root.join(&existing).symlink_metadata().is_err() {
                existing.pop();
            }
            let full = self.root.join(&existing);
            let canonical = full.canonicalize().map_err(|e| {
                format!(
                    "accepted {}, but realpath({}) fails: {e}",
                    real.display(),
                    full.display()
                )
            })?;
            if canonical != full {
                return Err(format!(
                    "accepted {}, but {} is really {}",
                    real.display(),
                    full.display(),
                    canonical.display()
                ));
            }
            self.kernel_beneath(&existing).map_err(|e| {
                format!(
                    "accepted {}, but openat2 beneath the root fails on {}: {e}",
                    real.display(),
                    existing.display()
                )
            })?;
        }
        // Where the path fully resolves, the kernel's answer decides.
        let Some(lexical) = self.lexical(path) else {
            return match verdict {
                Ok(real) => Err(format!(
                    "accepted {} though it leaves the root",
                    real.display()
                )),
                Err(_) => Ok(false),
            };
        };
        if let Ok(kernel) = self.root.join(&lexical).canonicalize() {
            let inside = kernel.starts_with(&self.root);
            match &verdict {
                Ok(real) if !inside => {
                    return Err(format!(
                        "accepted as {}, but the kernel resolves it to {} outside",
                        real.display(),
                        kernel.display()
                    ));
                }
                Ok(real) if *real != kernel => {
                    return Err(format!(
                        "resolved to {}, but the kernel resolves it to {}",
                        real.display(),
                        kernel.display()
                    ));
                }
                Err(e) if inside => {
                    return Err(format!(
                        "refused ({e}), but the kernel resolves it inside, to {}",
                        kernel.display()
                    ));
                }
                _ => {}
            }
        }
        Ok(verdict.is_ok())
    }
}

#[test]
fn every_accepted_path_is_inside_the_root_by_the_kernels_resolution() {
    let seed: u64 = env_or("DASHFLOAT_PATH_SEED", DEFAULT_SEED);
    let cases: usize = env_or("DASHFLOAT_PATH_CASES", DEFAULT_CASES);
    let mut rng = Rng(seed);
    let mut checked = 0;
    let mut accepted = 0;
    while checked < cases {
        let world = World::generate(&mut rng);
        for _ in 0..PATHS_PER_TREE.min(cases - checked) {
            let path = world.path(&mut rng);
            match world.check(&path) {
                Ok(yes) => accepted += usize::from(yes),
                Err(why) => panic!(
                    "path {path:?}: {why}\n\
                     case {checked} of seed {seed} (rerun with DASHFLOAT_PATH_SEED={seed})\n\
                     root {}\noutside {}\ntree:\n  {}",
                    world.root.display(),
                    world.outside.display(),
                    world.made.join("\n  ")
                ),
            }
            checked += 1;
        }
    }
    // A generator that only produced refusals would prove nothing.
    assert!(
        accepted * 10 > checked,
        "only {accepted} of {checked} paths were accepted"
    );
    eprintln!("seed {seed}: {checked} paths checked, {accepted} accepted");
}
