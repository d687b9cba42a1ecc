//! glob and grep against real trees: matching and order, `**`, .gitignore,
//! skipped directories, the bounds, confinement, binary files, long lines
//! and a line too long to hold.

use std::io::Write;
use std::os::unix::fs::symlink;
use std::path::Path;

use crate::support::calls::validate;
use dashfloat::bounds::{
    GLOB_DEFAULT_MAX_RESULTS, GREP_DEFAULT_MAX_RESULTS, GREP_LINE_MAX_CHARS, GREP_MAX_LINE_BYTES,
    GREP_UNSEARCHED_MAX_LISTED, GREP_WHOLE_FILE_MAX_BYTES, GREP_WIDENED_MAX_RESULTS,
    SEARCH_SKIPPED_DIRS,
};
use dashfloat::tools::{ToolContext, execute};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::{peak_rss_kib, reset_peak_rss};
use crate::{Tree, plant};

async fn glob(root: &Path, args: Value) -> Value {
    crate::run(root, "glob", args).await
}

async fn grep(root: &Path, args: Value) -> Value {
    crate::run(root, "grep", args).await
}

/// The `path:line:text` lines of a grep result.
fn lines(v: &Value) -> Vec<&str> {
    let matches = v["matches"].as_str().unwrap_or_else(|| panic!("{v}"));
    matches.lines().collect()
}

fn files(v: &Value) -> Vec<&str> {
    v["files"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect()
}

/// A small project: sources at two depths, docs, a dotfile.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    plant(
        dir.path(),
        &[
            ("main.rs", "fn main() {}\n"),
            ("src/lib.rs", "pub fn lib() {}\n// TODO: more\n"),
            ("src/tools/mod.rs", "mod tools;\n// todo later\n"),
            ("src/tools/a-b.rs", "fn a_b() {}\n"),
            ("docs/guide.md", "# Guide\nTODO write it\n"),
            (".github/ci.yml", "on: push\n"),
        ],
    );
    dir
}

#[tokio::test]
async fn glob_finds_matching_files_sorted_by_path() {
    let dir = project();
    let v = glob(dir.path(), json!({"pattern": "**/*.rs"})).await;
    assert_eq!(
        v,
        json!({
            "ok": true,
            "pattern": "**/*.rs",
            "path": ".",
            "files": ["main.rs", "src/lib.rs", "src/tools/a-b.rs", "src/tools/mod.rs"],
            "total": 4,
            "truncated": false,
        })
    );
}

#[tokio::test]
async fn a_star_stays_in_one_directory_and_a_double_star_crosses_any_number() {
    let dir = project();
    let cases = [
        ("*.rs", vec!["main.rs"]),
        ("src/*.rs", vec!["src/lib.rs"]),
        (
            "src/**/*.rs",
            vec!["src/lib.rs", "src/tools/a-b.rs", "src/tools/mod.rs"],
        ),
        ("**/mod.rs", vec!["src/tools/mod.rs"]),
        ("**/*.{md,yml}", vec![".github/ci.yml", "docs/guide.md"]),
        ("./src/?ib.rs", vec!["src/lib.rs"]),
        ("nothing/**", vec![]),
    ];
    for (pattern, want) in cases {
        let v = glob(dir.path(), json!({ "pattern": pattern })).await;
        assert_eq!(files(&v), want, "{pattern}");
    }
}

#[tokio::test]
async fn a_glob_in_a_directory_matches_paths_relative_to_it_or_to_the_root() {
    let dir = project();
    for pattern in ["*.rs", "src/*.rs"] {
        let v = glob(dir.path(), json!({"pattern": pattern, "path": "src"})).await;
        assert_eq!(files(&v), ["src/lib.rs"], "{pattern}");
    }
}

#[tokio::test]
async fn gitignore_is_honoured_with_or_without_a_repository() {
    for with_git in [false, true] {
        let dir = project();
        plant(
            dir.path(),
            &[
                (".gitignore", "*.log\n/generated/\n"),
                ("src/.gitignore", "secret.rs\n"),
                ("app.log", "TODO in a log\n"),
                ("generated/out.rs", "// TODO generated\n"),
                ("src/secret.rs", "// TODO hidden\n"),
                ("src/deep/generated/kept.rs", "// TODO kept\n"),
            ],
        );
        if with_git {
            std::fs::create_dir(dir.path().join(".git")).unwrap();
        }
        let v = glob(dir.path(), json!({"pattern": "**/*.{rs,log}"})).await;
        assert_eq!(
            files(&v),
            [
                "main.rs",
                "src/deep/generated/kept.rs",
                "src/lib.rs",
                "src/tools/a-b.rs",
                "src/tools/mod.rs"
            ],
            "with .git: {with_git}"
        );
        let v = grep(dir.path(), json!({"pattern": "TODO"})).await;
        assert_eq!(
            lines(&v),
            [
                "docs/guide.md:2:TODO write it",
                "src/deep/generated/kept.rs:1:// TODO kept",
                "src/lib.rs:2:// TODO: more",
            ],
            "with .git: {with_git}"
        );
        // The root's .gitignore applies to a search of a subdirectory too.
        let v = grep(dir.path(), json!({"pattern": "TODO", "path": "src"})).await;
        assert_eq!(
            lines(&v),
            [
                "src/deep/generated/kept.rs:1:// TODO kept",
                "src/lib.rs:2:// TODO: more"
            ]
        );
    }
}

#[tokio::test]
async fn an_ignored_directory_the_call_names_is_searched() {
    let dir = project();
    plant(
        dir.path(),
        &[
            (".gitignore", "/generated/\n"),
            ("generated/out.rs", "// TODO generated\n"),
        ],
    );
    let v = grep(dir.path(), json!({"pattern": "TODO", "path": "generated"})).await;
    assert_eq!(lines(&v), ["generated/out.rs:1:// TODO generated"]);
    let v = glob(dir.path(), json!({"pattern": "**", "path": "generated"})).await;
    assert_eq!(files(&v), ["generated/out.rs"]);
}

#[tokio::test]
async fn vendored_and_build_directories_are_skipped_unless_named() {
    let dir = project();
    for skipped in SEARCH_SKIPPED_DIRS {
        plant(
            dir.path(),
            &[(&format!("{skipped}/x/dep.rs"), "// TODO dep\n")],
        );
    }
    plant(
        dir.path(),
        &[
            ("src/node_modules/y/dep.rs", "// TODO nested dep\n"),
            ("src/build", "// TODO a file named build is kept\n"),
        ],
    );
    let v = glob(dir.path(), json!({"pattern": "**/dep.rs"})).await;
    assert_eq!(files(&v), Vec::<&str>::new());
    let v = grep(dir.path(), json!({"pattern": "TODO", "include": "dep.rs"})).await;
    assert_eq!(lines(&v), Vec::<&str>::new());
    assert_eq!(v["files_searched"], 0);
    let v = grep(dir.path(), json!({"pattern": "TODO", "path": "src"})).await;
    assert_eq!(
        lines(&v),
        [
            "src/build:1:// TODO a file named build is kept",
            "src/lib.rs:2:// TODO: more"
        ]
    );
    // Named, a skipped directory is walked (and a skipped one inside it is
    // still skipped).
    plant(
        dir.path(),
        &[("node_modules/x/node_modules/z/dep.rs", "// TODO\n")],
    );
    let v = glob(
        dir.path(),
        json!({"pattern": "**/dep.rs", "path": "node_modules"}),
    )
    .await;
    assert_eq!(files(&v), ["node_modules/x/dep.rs"]);
    let v = grep(dir.path(), json!({"pattern": "TODO", "path": "target/x"})).await;
    assert_eq!(lines(&v), ["target/x/dep.rs:1:// TODO dep"]);
}

#[tokio::test]
async fn glob_truncates_to_the_first_paths_and_gives_the_total() {
    let dir = tempfile::tempdir().unwrap();
    for i in (0..30).rev() {
        plant(dir.path(), &[(&format!("d{}/f{i:02}.txt", i % 3), "")]);
    }
    let v = glob(dir.path(), json!({"pattern": "**/*.txt", "max_results": 4})).await;
    assert_eq!(
        files(&v),
        ["d0/f00.txt", "d0/f03.txt", "d0/f06.txt", "d0/f09.txt"]
    );
    assert_eq!(
        (v["total"].as_u64(), v["truncated"].as_bool()),
        (Some(30), Some(true))
    );
    let v = glob(
        dir.path(),
        json!({"pattern": "**/*.txt", "max_results": 30}),
    )
    .await;
    assert_eq!(
        (v["total"].as_u64(), v["truncated"].as_bool()),
        (Some(30), Some(false))
    );
}

#[tokio::test]
async fn grep_truncates_to_the_first_lines_by_path_and_line_and_counts_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let many: String = (1..=50).map(|i| format!("hit {i}\n")).collect();
    plant(
        dir.path(),
        &[
            ("b.txt", &many),
            ("a.txt", "hit a\nmiss\nhit a2\n"),
            ("c/d.txt", &many),
        ],
    );
    let v = grep(dir.path(), json!({"pattern": "hit", "max_results": 4})).await;
    assert_eq!(
        lines(&v),
        [
            "a.txt:1:hit a",
            "a.txt:3:hit a2",
            "b.txt:1:hit 1",
            "b.txt:2:hit 2"
        ]
    );
    assert_eq!(v["shown"], 4);
    assert_eq!(v["total"], 102);
    assert_eq!(v["truncated"], true);
    assert_eq!(v["files_searched"], 3);
    let v = grep(dir.path(), json!({"pattern": "hit", "max_results": 102})).await;
    assert_eq!(
        (v["shown"].as_u64(), v["truncated"].as_bool()),
        (Some(102), Some(false))
    );
}

#[tokio::test]
async fn a_path_outside_the_project_is_refused_as_by_every_tool() {
    let t = Tree::new();
    for (tool, args) in [
        ("glob", json!({"pattern": "**", "path": ".."})),
        ("grep", json!({"pattern": "secret", "path": "../outside"})),
        (
            "grep",
            json!({"pattern": "secret", "path": t.outside.join("secret.txt").to_str().unwrap()}),
        ),
        ("list_directory", json!({"path": ".."})),
    ] {
        let v = crate::run(&t.root, tool, &args).await;
        assert_eq!(v["code"], "path_denied", "{tool} {args}: {v}");
    }
}

#[tokio::test]
async fn links_are_not_followed_out_of_the_project_or_inside_it() {
    let t = Tree::new();
    plant(&t.root, &[("real/inside.txt", "secret inside\n")]);
    symlink(&t.outside, t.root.join("out")).unwrap();
    symlink(t.outside.join("secret.txt"), t.root.join("secret-link.txt")).unwrap();
    symlink("real", t.root.join("again")).unwrap();
    let v = grep(&t.root, json!({"pattern": "secret"})).await;
    assert_eq!(lines(&v), ["real/inside.txt:1:secret inside"]);
    let v = glob(&t.root, json!({"pattern": "**"})).await;
    assert_eq!(files(&v), ["real/inside.txt"]);
    // Named directly, a link out is refused by the path policy; one that
    // stays inside is searched where it leads.
    let v = grep(&t.root, json!({"pattern": "secret", "path": "out"})).await;
    assert_eq!(v["code"], "path_denied");
    let v = grep(&t.root, json!({"pattern": "secret", "path": "again"})).await;
    assert_eq!(lines(&v), ["real/inside.txt:1:secret inside"]);
}

#[tokio::test]
async fn a_binary_file_is_skipped_whole_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut binary = b"needle before the NUL\n".repeat(10_000);
    binary.extend_from_slice(b"\0needle after\n");
    std::fs::write(dir.path().join("blob.bin"), binary).unwrap();
    plant(dir.path(), &[("text.txt", "a needle\n")]);
    let v = grep(dir.path(), json!({"pattern": "needle"})).await;
    assert_eq!(lines(&v), ["text.txt:1:a needle"]);
    assert_eq!(v["total"], 1);
    assert_eq!(v["binary_skipped"], 1);
    assert_eq!(v["files_searched"], 2);
    // Named, it is still binary.
    let v = grep(dir.path(), json!({"pattern": "needle", "path": "blob.bin"})).await;
    assert_eq!(
        (v["total"].as_u64(), v["binary_skipped"].as_u64()),
        (Some(0), Some(1))
    );
}

#[tokio::test]
async fn a_long_line_is_cut_with_its_remaining_size() {
    let dir = tempfile::tempdir().unwrap();
    let long = format!("needle{}", "x".repeat(1_000));
    plant(dir.path(), &[("min.js", &format!("{long}\r\n"))]);
    let v = grep(dir.path(), json!({"pattern": "needle"})).await;
    let rest = long.len() - GREP_LINE_MAX_CHARS;
    assert_eq!(
        lines(&v),
        [format!("min.js:1:{}…(+{rest} bytes)", &long[..GREP_LINE_MAX_CHARS]).as_str()]
    );
}

#[tokio::test]
async fn ignore_case_and_include_narrow_the_search() {
    let dir = project();
    let v = grep(dir.path(), json!({"pattern": "todo"})).await;
    assert_eq!(lines(&v), ["src/tools/mod.rs:2:// todo later"]);
    let v = grep(dir.path(), json!({"pattern": "todo", "ignore_case": true})).await;
    assert_eq!(
        lines(&v),
        [
            "docs/guide.md:2:TODO write it",
            "src/lib.rs:2:// TODO: more",
            "src/tools/mod.rs:2:// todo later"
        ]
    );
    let cases = [
        (
            "*.rs",
            vec![
                "src/lib.rs:2:// TODO: more",
                "src/tools/mod.rs:2:// todo later",
            ],
        ),
        ("*.{md,txt}", vec!["docs/guide.md:2:TODO write it"]),
        ("src/tools/*", vec!["src/tools/mod.rs:2:// todo later"]),
        ("mod.rs", vec!["src/tools/mod.rs:2:// todo later"]),
        ("*.py", vec![]),
    ];
    for (include, want) in cases {
        let v = grep(
            dir.path(),
            json!({"pattern": "todo", "ignore_case": true, "include": include}),
        )
        .await;
        assert_eq!(lines(&v), want, "{include}");
    }
    // With a directory, a path-shaped include may be relative to it.
    let v = grep(
        dir.path(),
        json!({"pattern": "fn", "path": "src", "include": "tools/*.rs"}),
    )
    .await;
    assert_eq!(lines(&v), ["src/tools/a-b.rs:1:fn a_b() {}"]);
}

#[tokio::test]
async fn grep_searches_one_file_when_the_path_names_it() {
    let dir = project();
    let v = grep(dir.path(), json!({"pattern": "fn", "path": "src/lib.rs"})).await;
    assert_eq!(lines(&v), ["src/lib.rs:1:pub fn lib() {}"]);
    assert_eq!(v["files_searched"], 1);
}

/// Anchors hold at the ends of lines ending `\r\n` as of lines ending
/// `\n`, and at the start of a file's first line after a UTF-8 byte-order
/// mark.
#[tokio::test]
async fn grep_anchors_hold_in_crlf_files_and_after_a_byte_order_mark() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("win.txt"), "let a = 1;\r\nend\r\n").unwrap();
    std::fs::write(dir.path().join("unix.txt"), "let b = 2;\nend\n").unwrap();
    let v = grep(dir.path(), json!({"pattern": ";$"})).await;
    assert_eq!(lines(&v), ["unix.txt:1:let b = 2;", "win.txt:1:let a = 1;"]);
    let v = grep(dir.path(), json!({"pattern": "^end$"})).await;
    assert_eq!(lines(&v), ["unix.txt:2:end", "win.txt:2:end"]);
    std::fs::write(dir.path().join("bom.cs"), "\u{feff}using System;\r\n").unwrap();
    let v = grep(dir.path(), json!({"pattern": "^using"})).await;
    assert_eq!(lines(&v), ["bom.cs:1:using System;"]);
}

/// The failure validation gives `args` of `tool`: a pattern is compiled
/// before the call is confirmed or run.
fn invalid(tool: &str, args: &Value) -> Value {
    serde_json::to_value(validate(tool, &args.to_string()).unwrap_err()).unwrap()
}

#[test]
fn an_invalid_pattern_is_an_invalid_argument_with_guidance() {
    let v = invalid("grep", &json!({"pattern": "fn main("}));
    assert_eq!(v["code"], "invalid_argument", "{v}");
    assert_eq!(v["field"], "pattern");
    assert_eq!(v["received"], "string \"fn main(\"");
    let expected = v["expected"].as_str().unwrap();
    assert!(expected.contains("unclosed group"), "{expected}");
    assert!(expected.contains("escape"), "{expected}");
    for (tool, args, field) in [
        ("grep", json!({"pattern": "a\\nb"}), "pattern"),
        (
            "grep",
            json!({"pattern": "x", "include": "[*.rs"}),
            "include",
        ),
        ("glob", json!({"pattern": "src/{a,b"}), "pattern"),
        ("glob", json!({"pattern": "/work/p/src/**/*.rs"}), "pattern"),
        ("glob", json!({"pattern": "../**/*.rs"}), "pattern"),
        (
            "grep",
            json!({"pattern": "x", "include": "/src/*.rs"}),
            "include",
        ),
    ] {
        let v = invalid(tool, &args);
        assert_eq!(v["code"], "invalid_argument", "{args}: {v}");
        assert_eq!(v["field"], field, "{args}");
    }
}

/// A grep of one short file that matches nothing gives the whole file
/// instead, and the model has then seen it: write_file may replace it.
/// A longer file, a binary one, a folder, or a match get no content.
#[tokio::test]
async fn a_grep_of_one_short_file_that_matches_nothing_gives_the_file() {
    let dir = project();
    let config = "[server]\nport = 8421\n";
    let at_limit = "a".repeat(GREP_WHOLE_FILE_MAX_BYTES as usize);
    let over = "a".repeat(GREP_WHOLE_FILE_MAX_BYTES as usize + 1);
    plant(
        dir.path(),
        &[
            ("config.toml", config),
            ("at_limit.txt", &at_limit),
            ("over.txt", &over),
            ("nul.bin", "x\0y"),
        ],
    );
    let ctx = ToolContext::new(dir.path()).unwrap();
    let run = |tool: &str, args: Value| {
        let call = validate(tool, &args.to_string()).unwrap();
        let ctx = &ctx;
        async move { serde_json::to_value(execute(&call, ctx, CancellationToken::new()).await).unwrap() }
    };
    let v = run(
        "grep",
        json!({"pattern": "server_port", "path": "config.toml"}),
    )
    .await;
    assert_eq!(v["content"], config, "{v}");
    assert_eq!(
        v["next"],
        "no line matched in config.toml (its whole text is in content), nor anywhere else in the \
         project: if the answer is not in content, say you did not find it rather than guess"
    );
    assert_eq!(v["total"], 0);
    assert!(v.get("searched_first").is_none(), "{v}");
    let v = run(
        "write_file",
        json!({"path": "config.toml", "content": "port = 9000\n"}),
    )
    .await;
    assert_eq!(v["ok"], true, "{v}");
    let v = run("grep", json!({"pattern": "zz", "path": "at_limit.txt"})).await;
    assert_eq!(v["content"], at_limit);
    for (args, next) in [
        (
            json!({"pattern": "zz", "path": "over.txt"}),
            "say you did not find it rather than guess",
        ),
        (
            json!({"pattern": "zz", "path": "nul.bin"}),
            "say you did not find it rather than guess",
        ),
        (
            json!({"pattern": "nothing_here", "path": "src"}),
            "say you did not find it rather than guess",
        ),
    ] {
        let v = run("grep", args.clone()).await;
        assert!(v.get("content").is_none(), "{args}: {v}");
        assert!(v["next"].as_str().unwrap().ends_with(next), "{args}: {v}");
    }
    // A file that include rules out was not searched, and is not shown.
    let v = run(
        "grep",
        json!({"pattern": "zz", "path": "at_limit.txt", "include": "*.rs"}),
    )
    .await;
    assert!(v.get("content").is_none(), "{v}");
    assert_eq!(v["files_searched"], 0);
    let v = run("grep", json!({"pattern": "port", "path": "config.toml"})).await;
    assert!(v.get("content").is_none() && v.get("next").is_none(), "{v}");
    assert_eq!(lines(&v), ["config.toml:1:port = 9000"]);
}

/// The 1.5B grepped `inventory/config.toml` for a setting no file
/// holds, was told the path did not exist, and grepped it again and
/// again; then it answered with that file. A grep of a path that is not
/// there searches the whole project, and nothing found anywhere says so.
#[tokio::test]
async fn a_grep_of_a_path_that_is_not_there_searches_the_whole_project() {
    let dir = project();
    plant(
        dir.path(),
        &[
            ("config.toml", "[database]\nport = 5432\n"),
            ("inventory/items.py", "class Item:\n    pass\n"),
        ],
    );
    let v = grep(
        dir.path(),
        json!({"pattern": "port", "path": "inventory/config.toml"}),
    )
    .await;
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["path"], ".");
    assert_eq!(lines(&v), ["config.toml:2:port = 5432"]);
    assert_eq!(
        v["searched_first"],
        "inventory/config.toml does not exist, so the whole project was searched; the project \
         has config.toml at config.toml"
    );
    let v = grep(
        dir.path(),
        json!({"pattern": "redis", "path": "inventory/config.toml"}),
    )
    .await;
    assert_eq!(
        (v["ok"].as_bool(), v["total"].as_u64()),
        (Some(true), Some(0)),
        "{v}"
    );
    assert_eq!(
        v["next"],
        "no line matched in inventory/config.toml, nor anywhere else in the project: try a \
         shorter pattern or ignore_case; if it is not in the project, say you did not find it \
         rather than guess"
    );
    // A wildcard in the path is a pattern put in the wrong place, and
    // fails saying so.
    let v = grep(
        dir.path(),
        json!({"pattern": "port", "path": "inventory/*.toml"}),
    )
    .await;
    assert_eq!(v["code"], "execution_failed", "{v}");
}

/// A grep that matched nothing in the file or folder it named searches
/// the whole project, and that search is the result: path `.`, its first
/// lines (at most GREP_WIDENED_MAX_RESULTS), `searched_first` saying why,
/// and the documentation among them named. Nothing anywhere keeps the
/// miss as it was, saying so. A grep of the whole project has nowhere
/// else to look.
#[tokio::test]
async fn a_grep_that_misses_where_it_looked_searches_the_whole_project() {
    let dir = project();
    plant(
        dir.path(),
        &[
            ("inventory/items.py", "class Item:\n    pass\n"),
            (
                "inventory/pricing.py",
                "TAX_RATE = 0.08\n\ndef apply_discount(price):\n    return price\n",
            ),
            ("CHANGELOG.md", "- apply_discount rounds down\n"),
        ],
    );
    let v = grep(
        dir.path(),
        json!({"pattern": "def apply_discount", "path": "inventory/items.py"}),
    )
    .await;
    assert_eq!(
        (v["path"].as_str(), v["total"].as_u64()),
        (Some("."), Some(1)),
        "{v}"
    );
    assert_eq!(
        v["searched_first"],
        "no line matched in inventory/items.py, so the whole project was searched"
    );
    assert_eq!(
        lines(&v),
        ["inventory/pricing.py:3:def apply_discount(price):"]
    );
    assert!(v.get("content").is_none() && v.get("next").is_none(), "{v}");
    let v = grep(
        dir.path(),
        json!({"pattern": "apply_discount", "path": "src"}),
    )
    .await;
    assert_eq!(
        lines(&v),
        [
            "CHANGELOG.md:1:- apply_discount rounds down",
            "inventory/pricing.py:3:def apply_discount(price):"
        ]
    );
    assert!(
        v["documentation"]
            .as_str()
            .unwrap()
            .contains("CHANGELOG.md (1)"),
        "{v}"
    );
    let v = grep(
        dir.path(),
        json!({"pattern": "apply_discount_twice", "path": "inventory/items.py"}),
    )
    .await;
    assert_eq!(v["path"], "inventory/items.py");
    assert!(v.get("searched_first").is_none(), "{v}");
    assert_eq!(v["content"], "class Item:\n    pass\n");
    let v = grep(dir.path(), json!({"pattern": "apply_discount_twice"})).await;
    assert!(v.get("searched_first").is_none(), "{v}");
    let many: Vec<(String, String)> = (0..30)
        .map(|n| (format!("many/f{n:02}.txt"), "needle\n".to_owned()))
        .collect();
    let many: Vec<(&str, &str)> = many.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    plant(dir.path(), &many);
    let v = grep(dir.path(), json!({"pattern": "needle", "path": "src"})).await;
    assert_eq!(lines(&v).len(), GREP_WIDENED_MAX_RESULTS);
    assert_eq!(
        (v["total"].as_u64(), v["truncated"].as_bool()),
        (Some(30), Some(true))
    );
    assert_eq!(lines(&v)[0], "many/f00.txt:1:needle");
}

/// A path with a wildcard that names nothing was meant as a pattern: the
/// error says which argument takes one. A name that holds a `*` is still
/// a name.
#[tokio::test]
async fn a_missing_path_with_a_wildcard_says_where_a_pattern_goes() {
    let dir = project();
    for (tool, args, hint) in [
        (
            "grep",
            json!({"pattern": "x", "path": "src/tools/*.rs"}),
            "; path takes no wildcards: give the folder as path and the file pattern as include",
        ),
        (
            "read_file",
            json!({"path": "src/*.rs"}),
            "; a path takes no wildcards: glob finds files by a pattern",
        ),
        (
            "glob",
            json!({"pattern": "*.rs", "path": "src/?"}),
            "; path takes no wildcards: give the folder as path and the rest as pattern",
        ),
        // `[` is common in names (`app/[id]/page.tsx`): no wildcard.
        (
            "read_file",
            json!({"path": "app/[id].tsx"}),
            "; nothing in the project is named [id].tsx (ignored and build folders aside); list_directory . to see what is there",
        ),
    ] {
        let v = crate::run(dir.path(), tool, &args).await;
        let error = v["error"].as_str().unwrap_or_else(|| panic!("{v}"));
        assert!(error.ends_with(hint), "{tool} {args}: {v}");
    }
    plant(dir.path(), &[("odd/a*b.txt", "star x\n")]);
    let v = grep(dir.path(), json!({"pattern": "x", "path": "odd/a*b.txt"})).await;
    assert_eq!(lines(&v), ["odd/a*b.txt:1:star x"]);
}

#[tokio::test]
async fn a_missing_path_or_a_file_for_glob_says_what_to_do() {
    let dir = project();
    let v = grep(dir.path(), json!({"pattern": "x", "path": "nope"})).await;
    assert!(
        v["searched_first"].as_str().unwrap().ends_with(
            "; nothing in the project is named nope (ignored and build folders aside); list_directory . to see what is there"
        ),
        "{v}"
    );
    let v = glob(dir.path(), json!({"pattern": "*", "path": "main.rs"})).await;
    assert_eq!(v["code"], "execution_failed");
    assert!(
        v["error"].as_str().unwrap().contains("not a directory"),
        "{v}"
    );
}

/// Without `max_results`, grep shows its default number of lines and glob
/// its default number of paths, each with the total.
#[tokio::test]
async fn the_defaults_bound_what_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let many: String = (0..GREP_DEFAULT_MAX_RESULTS + 5)
        .map(|n| format!("hit {n}\n"))
        .collect();
    plant(dir.path(), &[("hits.txt", &many)]);
    let v = grep(dir.path(), json!({"pattern": "hit"})).await;
    assert_eq!(v["shown"], GREP_DEFAULT_MAX_RESULTS);
    assert_eq!(v["total"], GREP_DEFAULT_MAX_RESULTS + 5);
    assert_eq!(v["truncated"], true);
    for n in 0..GLOB_DEFAULT_MAX_RESULTS + 1 {
        std::fs::write(dir.path().join(format!("f{n:04}.rs")), "").unwrap();
    }
    let v = glob(dir.path(), json!({"pattern": "*.rs"})).await;
    assert_eq!(
        v["files"].as_array().unwrap().len(),
        GLOB_DEFAULT_MAX_RESULTS
    );
    assert_eq!(v["total"], GLOB_DEFAULT_MAX_RESULTS + 1);
    assert_eq!(v["truncated"], true);
}

/// Files with a line too long to hold are listed up to the bound; the
/// last entry counts the rest.
#[tokio::test]
async fn unsearched_files_are_listed_up_to_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(GREP_MAX_LINE_BYTES + 1);
    for n in 0..GREP_UNSEARCHED_MAX_LISTED + 2 {
        std::fs::write(dir.path().join(format!("long{n:02}.txt")), &long).unwrap();
    }
    let v = grep(dir.path(), json!({"pattern": "needle"})).await;
    let listed = v["unsearched"].as_array().unwrap();
    assert_eq!(listed.len(), GREP_UNSEARCHED_MAX_LISTED + 1, "{listed:?}");
    assert_eq!(listed.last().unwrap(), "… and 2 more");
}

#[tokio::test]
async fn a_line_too_long_to_hold_stops_that_file_without_holding_it() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut f =
            std::io::BufWriter::new(std::fs::File::create(dir.path().join("huge.txt")).unwrap());
        f.write_all(b"needle on line one\n").unwrap();
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..20 {
            f.write_all(&chunk).unwrap();
        }
        f.write_all(b" needle at the end of the long line\nneedle on line three\n")
            .unwrap();
        f.flush().unwrap();
    }
    plant(dir.path(), &[("small.txt", "needle\n")]);
    // Nextest runs each test in its own process, so the peak is this one's;
    // a first search pays for what every search shares (the compiled
    // schemas, the threads).
    grep(
        dir.path(),
        json!({"pattern": "needle", "path": "small.txt"}),
    )
    .await;
    reset_peak_rss();
    let before = peak_rss_kib();
    let v = grep(dir.path(), json!({"pattern": "needle"})).await;
    let grown = peak_rss_kib().saturating_sub(before);
    assert_eq!(
        lines(&v),
        ["huge.txt:1:needle on line one", "small.txt:1:needle"]
    );
    assert_eq!(
        v["unsearched"],
        json!([format!(
            "huge.txt: a line longer than {} MiB; searched up to it",
            GREP_MAX_LINE_BYTES >> 20
        )])
    );
    assert!(
        grown < 8 * 1024,
        "the search grew the peak RSS by {grown} KiB for a 20 MiB line"
    );
}

#[tokio::test]
async fn a_grep_that_finds_nothing_says_what_to_try_next() {
    let dir = tempfile::tempdir().unwrap();
    plant(dir.path(), &[("app/config.toml", "port = 8421\n")]);
    let v = grep(dir.path(), json!({"pattern": "server_port"})).await;
    assert_eq!(v["matches"], "");
    assert_eq!(
        v["next"],
        "no line matched: try a shorter pattern or ignore_case, or read_file the file; if it is \
         not in the project, say you did not find it rather than guess"
    );
    let v = grep(dir.path(), json!({"pattern": "port", "include": "*.py"})).await;
    assert_eq!(
        v["next"],
        "no file was searched: path and include matched none, or .gitignore skips every file there; list_directory to see the names, read_file to read one"
    );
    // A search that matched has nothing to add.
    let v = grep(dir.path(), json!({"pattern": "port"})).await;
    assert_eq!(lines(&v), vec!["app/config.toml:1:port = 8421"]);
    assert!(v.get("next").is_none(), "{v}");
}

/// Ignore files are read as `read_file` reads a file: a `.gitignore`
/// that is a link (here to an endless device) or a FIFO is not applied,
/// and said so; nothing above the project is read (a FIFO there would
/// hold the search forever), nor what a nested `.git` file points to. The
/// search finishes, and the regular ignore files still apply.
#[test]
fn ignore_files_are_read_only_as_regular_files_in_the_project() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("project");
    plant(
        &root,
        &[
            ("kept.txt", "TODO kept\n"),
            ("sub/inner.txt", "TODO inner\n"),
            ("other/.gitignore", "*.log\n"),
            ("other/a.log", "TODO ignored\n"),
            ("other/b.txt", "TODO shown\n"),
            ("wt/c.txt", "TODO in a worktree\n"),
            (".git/info/exclude", "*.tmp\n"),
            ("scratch.tmp", "TODO excluded\n"),
        ],
    );
    let fifo = |path: &Path| nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).unwrap();
    symlink("/dev/zero", root.join(".gitignore")).unwrap();
    fifo(&root.join("sub/.gitignore"));
    fifo(&base.join(".gitignore"));
    std::fs::create_dir_all(base.join("elsewhere")).unwrap();
    fifo(&base.join("elsewhere/commondir"));
    std::fs::write(
        root.join("wt/.git"),
        format!("gitdir: {}\n", base.join("elsewhere").display()),
    )
    .unwrap();
    // On a thread of its own: a search held by an ignore file fails the
    // test instead of holding it too.
    let (tx, rx) = std::sync::mpsc::channel();
    let searched = root.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let found = rt.block_on(async {
            let grep = grep(&searched, json!({"pattern": "TODO"})).await;
            let glob = glob(&searched, json!({"pattern": "**/*.txt"})).await;
            (grep, glob)
        });
        let _ = tx.send(found);
    });
    let (v, listed) = rx
        .recv_timeout(crate::support::WAIT)
        .expect("the search was held by an ignore file");
    assert_eq!(
        lines(&v),
        [
            "kept.txt:1:TODO kept",
            "other/b.txt:1:TODO shown",
            "sub/inner.txt:1:TODO inner",
            "wt/c.txt:1:TODO in a worktree",
        ]
    );
    let unsearched = v["unsearched"].to_string();
    assert!(
        unsearched.contains(".gitignore: not applied (a symbolic link)"),
        "{v}"
    );
    assert!(
        unsearched.contains("sub/.gitignore: not applied (not a regular file)"),
        "{v}"
    );
    assert_eq!(
        files(&listed),
        ["kept.txt", "other/b.txt", "sub/inner.txt", "wt/c.txt"]
    );
}

/// Matches in documentation and in code both: the result says which are
/// documentation, so a changelog line is not taken for the definition.
/// Matches in one kind only carry no note.
#[tokio::test]
async fn grep_says_which_matches_are_documentation_when_code_matches_too() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(
        root.join("CHANGELOG.md"),
        "- renamed slugify\n- fixed slugify\n",
    )
    .unwrap();
    std::fs::write(root.join("docs/usage.txt"), "call slugify(text)\n").unwrap();
    std::fs::write(root.join("pkg/core.py"), "def slugify(text):\n    pass\n").unwrap();
    let v = grep(root, json!({"pattern": "slugify"})).await;
    assert_eq!(
        v["documentation"],
        "3 of the matches are in documentation, not code: CHANGELOG.md (2), docs/usage.txt (1); \
         the rest (1) are in code or configuration, where a definition or a setting is"
    );
    let v = grep(root, json!({"pattern": "def slugify"})).await;
    assert!(v.get("documentation").is_none(), "{v}");
    let v = grep(root, json!({"pattern": "renamed"})).await;
    assert!(v.get("documentation").is_none(), "{v}");
}
