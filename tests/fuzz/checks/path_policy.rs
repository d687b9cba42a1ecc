//! The path policy against a tree of directories, files and links (to
//! outside, back in, up with `..`, absolute, dangling, looping): for any
//! path it accepts, what the kernel resolves it to is inside the root.
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use dashfloat::tools::resolve;

/// `base/root`, the working directory, and `base/outside`.
struct World {
    _base: tempfile::TempDir,
    root: PathBuf,
}

static WORLD: LazyLock<World> = LazyLock::new(|| {
    let base = tempfile::tempdir().expect("temp dir");
    let base_path = base.path().canonicalize().expect("real base");
    let root = base_path.join("root");
    let outside = base_path.join("outside");
    for dir in [&root, &root.join("a/b"), &outside.join("secret")] {
        std::fs::create_dir_all(dir).expect("dir");
    }
    std::fs::write(root.join("a/file"), "x").expect("file");
    std::fs::write(outside.join("secret/key"), "k").expect("file");
    let links: [(&str, PathBuf); 9] = [
        ("a/up", "..".into()),
        ("a/b/upup", "../..".into()),
        ("a/out", "../../outside".into()),
        ("a/abs", outside.clone()),
        ("a/loop", "loop".into()),
        ("a/dangling", "nowhere/at/all".into()),
        ("a/in", "b".into()),
        ("a/file_dir", "file/x".into()),
        ("a/etc", "/etc".into()),
    ];
    for (link, target) in links {
        symlink(target, root.join(link)).expect("link");
    }
    symlink(root.join("a"), outside.join("back")).expect("link back");
    symlink(outside.join("back"), root.join("a/round_trip")).expect("link round trip");
    World { _base: base, root }
});

/// The longest existing ancestor of `path`, as the kernel resolves it.
fn kernel_view(path: &Path) -> Option<PathBuf> {
    path.ancestors().find_map(|p| p.canonicalize().ok())
}

/// The path, as the model would give it.
pub fn run(data: &[u8]) {
    let path = String::from_utf8_lossy(data);
    let world = &*WORLD;
    if let Ok(real) = resolve(&world.root, &path) {
        assert!(
            real.starts_with(&world.root),
            "{path:?} resolved to {real:?}"
        );
        let seen = kernel_view(&real).expect("the root exists");
        assert!(
            seen.starts_with(&world.root),
            "{path:?} resolved to {real:?}, which the kernel reads as {seen:?}"
        );
    }
}
