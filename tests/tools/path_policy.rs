//! The path-escape corpus: each case with real files and links in a tempdir.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use dashfloat::tools::{PathError, resolve};

use crate::Tree;

/// The [`Tree`] with `root/src/main.rs`.
fn tree() -> Tree {
    let t = Tree::new();
    std::fs::create_dir_all(t.root.join("src")).unwrap();
    std::fs::write(t.root.join("src/main.rs"), "fn main() {}\n").unwrap();
    t
}

fn escapes(root: &Path, path: &str) {
    assert_eq!(
        resolve(root, path),
        Err(PathError::Escapes(path.to_owned())),
        "{path}"
    );
    assert_eq!(
        PathError::Escapes(path.to_owned()).to_string(),
        format!("path escapes the working directory: {path}")
    );
}

#[test]
fn a_relative_path_inside_resolves_to_its_real_path() {
    let t = tree();
    assert_eq!(
        resolve(&t.root, "src/main.rs").unwrap(),
        t.root.join("src/main.rs")
    );
}

#[test]
fn dot_resolves_to_the_root() {
    let t = tree();
    assert_eq!(resolve(&t.root, ".").unwrap(), t.root);
}

#[test]
fn an_absolute_path_inside_is_accepted() {
    let t = tree();
    let abs = t.root.join("src/main.rs");
    assert_eq!(resolve(&t.root, abs.to_str().unwrap()).unwrap(), abs);
}

#[test]
fn a_not_yet_existing_path_inside_is_accepted() {
    let t = tree();
    assert_eq!(
        resolve(&t.root, "new/dir/file.txt").unwrap(),
        t.root.join("new/dir/file.txt")
    );
}

#[test]
fn dot_dot_inside_the_tree_is_collapsed() {
    let t = tree();
    assert_eq!(
        resolve(&t.root, "src/../src/./main.rs").unwrap(),
        t.root.join("src/main.rs")
    );
}

#[test]
fn a_dot_dot_chain_out_is_refused() {
    let t = tree();
    escapes(&t.root, "../outside/secret.txt");
    escapes(&t.root, "src/../../outside/secret.txt");
    escapes(&t.root, "../../../../../../etc/passwd");
    escapes(&t.root, "..");
}

#[test]
fn an_absolute_outside_path_is_refused() {
    let t = tree();
    escapes(&t.root, "/etc/passwd");
    escapes(&t.root, t.outside.join("secret.txt").to_str().unwrap());
    escapes(&t.root, "/");
}

#[test]
fn a_sibling_directory_sharing_the_root_prefix_is_refused() {
    let t = tree();
    let evil = PathBuf::from(format!("{}-evil", t.root.display()));
    std::fs::create_dir_all(&evil).unwrap();
    std::fs::write(evil.join("x"), "x").unwrap();
    escapes(&t.root, evil.join("x").to_str().unwrap());
    escapes(&t.root, "../root-evil/x");
}

#[test]
fn a_symlinked_file_leading_out_is_refused() {
    let t = tree();
    symlink(t.outside.join("secret.txt"), t.root.join("innocent.txt")).unwrap();
    escapes(&t.root, "innocent.txt");
}

#[test]
fn a_relative_symlink_leading_out_is_refused() {
    let t = tree();
    symlink("../outside/secret.txt", t.root.join("rel.txt")).unwrap();
    escapes(&t.root, "rel.txt");
}

#[test]
fn a_symlink_staying_inside_resolves_to_its_target() {
    let t = tree();
    symlink("src/main.rs", t.root.join("main-link.rs")).unwrap();
    assert_eq!(
        resolve(&t.root, "main-link.rs").unwrap(),
        t.root.join("src/main.rs")
    );
}

/// `/proc/self/...` and `/dev/fd/...` mean something else to the command
/// that opens the path later (its own working directory, its own files):
/// a path through them is refused even when it would lead back inside.
#[test]
fn a_link_through_a_process_own_files_is_refused() {
    let t = tree();
    let back_in = format!("/proc/self/root{}", t.root.join("src/main.rs").display());
    symlink(&back_in, t.root.join("via-proc")).unwrap();
    symlink("/proc/self/cwd/src/main.rs", t.root.join("via-cwd")).unwrap();
    symlink("/dev/fd/0", t.root.join("via-fd")).unwrap();
    for path in ["via-proc", "via-cwd", "via-fd"] {
        escapes(&t.root, path);
    }
}

#[test]
fn a_symlinked_intermediate_directory_leading_out_is_refused() {
    let t = tree();
    symlink(&t.outside, t.root.join("src/vendor")).unwrap();
    escapes(&t.root, "src/vendor/secret.txt");
    escapes(&t.root, "src/vendor");
}

#[test]
fn a_symlink_loop_is_refused() {
    let t = tree();
    symlink("b", t.root.join("a")).unwrap();
    symlink("a", t.root.join("b")).unwrap();
    assert_eq!(
        resolve(&t.root, "a/x"),
        Err(PathError::LinkLoop("a/x".to_owned()))
    );
    assert_eq!(
        resolve(&t.root, "a"),
        Err(PathError::LinkLoop("a".to_owned()))
    );
}

#[test]
fn a_self_referencing_link_is_refused() {
    let t = tree();
    symlink("self", t.root.join("self")).unwrap();
    assert!(matches!(
        resolve(&t.root, "self"),
        Err(PathError::LinkLoop(_))
    ));
}

#[test]
fn a_dangling_symlink_leading_out_is_refused() {
    let t = tree();
    symlink(t.outside.join("not-yet.txt"), t.root.join("dangling")).unwrap();
    escapes(&t.root, "dangling");
}

#[test]
fn a_dangling_symlink_inside_resolves_to_its_future_target() {
    let t = tree();
    symlink("src/later.rs", t.root.join("later")).unwrap();
    assert_eq!(
        resolve(&t.root, "later").unwrap(),
        t.root.join("src/later.rs")
    );
}

#[test]
fn a_link_to_the_filesystem_root_is_refused() {
    let t = tree();
    symlink("/", t.root.join("slash")).unwrap();
    escapes(&t.root, "slash");
    escapes(&t.root, "slash/etc/passwd");
}

#[test]
fn a_deep_nonexistent_path_under_an_escaping_link_is_refused() {
    let t = tree();
    symlink(&t.outside, t.root.join("out")).unwrap();
    escapes(&t.root, "out/a/b/c/d/new.txt");
}

#[test]
fn a_link_out_and_back_in_is_accepted() {
    let t = tree();
    symlink(t.root.join("src"), t.outside.join("back")).unwrap();
    symlink(t.outside.join("back"), t.root.join("roundtrip")).unwrap();
    assert_eq!(
        resolve(&t.root, "roundtrip/main.rs").unwrap(),
        t.root.join("src/main.rs")
    );
}

#[test]
fn a_tilde_path_is_refused_rather_than_taken_literally() {
    let t = tree();
    escapes(&t.root, "~");
    escapes(&t.root, "~/.ssh/id_rsa");
    escapes(&t.root, "~root/.bashrc");
}

#[test]
fn a_name_that_merely_starts_with_a_tilde_is_an_ordinary_file() {
    let t = tree();
    assert_eq!(
        resolve(&t.root, "~backup.txt").unwrap(),
        t.root.join("~backup.txt")
    );
    assert_eq!(resolve(&t.root, "~root").unwrap(), t.root.join("~root"));
    // A home directory is still a home directory with a trailing slash.
    escapes(&t.root, "~/");
    escapes(&t.root, "~root/");
    // A project directory named `~dir` is reached as `./~dir/...`.
    assert_eq!(resolve(&t.root, "./~dir/x").unwrap(), t.root.join("~dir/x"));
}

#[test]
fn a_tilde_inside_a_name_is_an_ordinary_character() {
    let t = tree();
    assert_eq!(
        resolve(&t.root, "src/backup~").unwrap(),
        t.root.join("src/backup~")
    );
}

#[test]
fn the_empty_path_is_refused() {
    let t = tree();
    assert_eq!(resolve(&t.root, ""), Err(PathError::Empty));
}

#[test]
fn a_nul_byte_in_the_path_is_refused() {
    let t = tree();
    assert_eq!(
        resolve(&t.root, "src/main.rs\0.txt"),
        Err(PathError::Nul("src/main.rs\0.txt".to_owned()))
    );
}

#[test]
fn a_root_given_through_a_symlink_still_confines() {
    let t = tree();
    let alias = t.outside.join("alias");
    symlink(&t.root, &alias).unwrap();
    assert_eq!(
        resolve(&alias, "src/main.rs").unwrap(),
        t.root.join("src/main.rs")
    );
    escapes(&alias, "../secret.txt");
    // The alias's own spelling and the real spelling are both inside.
    let via_alias = alias.join("src/main.rs");
    assert_eq!(
        resolve(&alias, via_alias.to_str().unwrap()).unwrap(),
        t.root.join("src/main.rs")
    );
}

#[test]
fn a_path_through_a_file_as_directory_is_accepted_lexically_and_fails_later() {
    let t = tree();
    // Not an escape: the operation itself reports "not a directory".
    assert_eq!(
        resolve(&t.root, "src/main.rs/x").unwrap(),
        t.root.join("src/main.rs/x")
    );
}

/// The issue 7 tree: `esc -> outside` at the root, `docs/` and a file
/// `f.txt` to be (mis)used as a directory.
fn escape_tree() -> Tree {
    let t = tree();
    symlink(&t.outside, t.root.join("esc")).unwrap();
    std::fs::create_dir(t.root.join("docs")).unwrap();
    std::fs::write(t.root.join("f.txt"), "f\n").unwrap();
    t
}

fn unresolvable(root: &Path, path: &str) {
    assert_eq!(
        resolve(root, path),
        Err(PathError::Unresolvable(path.to_owned())),
        "{path}"
    );
}

#[test]
fn a_link_climbing_back_out_of_a_missing_directory_is_refused() {
    let t = escape_tree();
    symlink("nonexistent/../../esc/secret.txt", t.root.join("docs/l")).unwrap();
    // The kernel never resolves `nonexistent/..`; the policy used to pop
    // it lexically and walk `esc` unchecked, straight to outside/.
    unresolvable(&t.root, "docs/l");
    symlink(
        "nonexistent/../../esc/planted.txt",
        t.root.join("docs/lnew"),
    )
    .unwrap();
    unresolvable(&t.root, "docs/lnew");
}

#[test]
fn a_link_climbing_back_out_of_a_file_used_as_a_directory_is_refused() {
    let t = escape_tree();
    symlink("../f.txt/x/../../esc/secret.txt", t.root.join("docs/f")).unwrap();
    unresolvable(&t.root, "docs/f");
    // `..` straight after a file fails in the kernel too (ENOTDIR).
    symlink("../f.txt/../src/main.rs", t.root.join("docs/g")).unwrap();
    unresolvable(&t.root, "docs/g");
}

#[test]
fn a_missing_directory_under_a_link_is_still_created_inside() {
    let t = escape_tree();
    symlink("../src", t.root.join("docs/s")).unwrap();
    assert_eq!(
        resolve(&t.root, "docs/s/new/deeper/x.rs").unwrap(),
        t.root.join("src/new/deeper/x.rs")
    );
}
