//! The syntax check after a write (ADR 0047): for each language a broken
//! edit is reported at its line with the line's text, a good one says
//! nothing, errors the file had before are not blamed, and what the check
//! does not parse (an unknown extension, a file over the size cap) says
//! nothing.

use dashfloat::bounds::{SYNTAX_ERRORS_SHOWN, SYNTAX_EXCERPT_MAX_BYTES, SYNTAX_MAX_FILE_BYTES};
use serde_json::{Value, json};

use crate::{plant, run, run_after_reading};

/// One language's case: a file that parses, an edit that breaks it, and
/// where the check must say it broke.
struct Case {
    path: &'static str,
    content: &'static str,
    /// A good edit: `(search_block, replace_block)`.
    good: (&'static str, &'static str),
    /// A breaking edit.
    broken: (&'static str, &'static str),
    /// The 1-based line the first error is reported at, and its text.
    line: u64,
    text: &'static str,
}

const CASES: &[Case] = &[
    Case {
        path: "calc.py",
        content: "def add(a, b):\n    return a + b\n\n\ndef main():\n    print(add(1, 2))\n",
        good: ("print(add(1, 2))", "print(add(3, 4))"),
        broken: ("print(add(1, 2))", "print(add(1, 2)"),
        line: 6,
        text: "    print(add(1, 2)",
    },
    Case {
        path: "stub.pyi",
        content: "def add(a: int, b: int) -> int: ...\n",
        good: ("b: int)", "b: float)"),
        broken: ("b: int)", "b: int"),
        line: 1,
        text: "def add(a: int, b: int -> int: ...",
    },
    Case {
        path: "src/main.rs",
        content: "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\nfn main() {\n    let x = add(1, 2);\n    println!(\"{x}\");\n}\n",
        good: ("add(1, 2);", "add(3, 4);"),
        broken: ("add(1, 2);", "add(1, 2;"),
        line: 6,
        text: "    let x = add(1, 2;",
    },
    Case {
        path: "web/app.js",
        content: "function add(a, b) {\n  return a + b;\n}\n\nconst total = add(1, 2);\nconsole.log(total);\n",
        good: ("add(1, 2);", "add(3, 4);"),
        broken: ("return a + b;", "return a + ;"),
        line: 2,
        text: "  return a + ;",
    },
    Case {
        path: "web/widget.jsx",
        content: "export function Widget() {\n  return <p>hi</p>;\n}\n",
        good: ("<p>hi</p>", "<p>hello</p>"),
        broken: ("<p>hi</p>", "<p>hi</p"),
        line: 2,
        text: "  return <p>hi</p;",
    },
    Case {
        path: "web/lib.ts",
        content: "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
        good: ("return a + b;", "return b + a;"),
        broken: ("b: number)", "b: )"),
        line: 1,
        text: "export function add(a: number, b: ): number {",
    },
    Case {
        path: "web/view.tsx",
        content: "export function View(props: { label: string }) {\n  return <div>{props.label}</div>;\n}\n",
        good: ("<div>", "<div className=\"view\">"),
        broken: ("{props.label}", "{props.label"),
        line: 2,
        text: "  return <div>{props.label</div>;",
    },
    Case {
        path: "cmd/main.go",
        content: "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(1 + 2)\n}\n",
        good: ("1 + 2", "3 + 4"),
        broken: ("fmt.Println(1 + 2)", "fmt.Println(1 + 2"),
        line: 6,
        text: "\tfmt.Println(1 + 2",
    },
    Case {
        path: "package.json",
        content: "{\n  \"name\": \"app\",\n  \"version\": \"1.0.0\"\n}\n",
        good: ("1.0.0", "1.1.0"),
        broken: ("\"name\": \"app\",", "\"name\": \"app\""),
        line: 3,
        text: "  \"version\": \"1.0.0\"",
    },
    Case {
        path: "Cargo.toml",
        content: "[package]\nname = \"app\"\nversion = \"1.0.0\"\n",
        good: ("1.0.0", "1.1.0"),
        broken: ("name = \"app\"", "name = \"app"),
        line: 2,
        text: "name = \"app",
    },
];

fn edit(path: &str, (search, replace): (&str, &str)) -> Value {
    json!({"path": path, "search_block": search, "replace_block": replace})
}

#[tokio::test]
async fn a_broken_edit_is_reported_at_its_line_in_every_language() {
    let dir = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    for case in CASES {
        plant(dir.path(), &[(case.path, case.content)]);
        let v = run(dir.path(), "edit_file", edit(case.path, case.broken)).await;
        assert_eq!(v["ok"], true, "{}: {v}", case.path);
        let found = &v["syntax_errors"];
        assert_eq!(found["errors"][0]["line"], case.line, "{}: {v}", case.path);
        assert_eq!(found["errors"][0]["text"], case.text, "{}: {v}", case.path);
        seen.push(json!({"path": case.path, "syntax_errors": found}));
    }
    // Each with what is wrong there and the hint.
    insta::assert_json_snapshot!("broken_edits", seen);
}

#[tokio::test]
async fn a_good_edit_or_write_says_nothing_in_every_language() {
    let dir = tempfile::tempdir().unwrap();
    for case in CASES {
        plant(dir.path(), &[(case.path, case.content)]);
        let v = run(dir.path(), "edit_file", edit(case.path, case.good)).await;
        assert_eq!(v["ok"], true, "{}: {v}", case.path);
        assert_eq!(v.get("syntax_errors"), None, "{}: {v}", case.path);
        let fresh = format!("new/{}", case.path);
        let v = run(
            dir.path(),
            "write_file",
            json!({"path": fresh, "content": case.content}),
        )
        .await;
        assert_eq!(v["action"], "created", "{fresh}: {v}");
        assert_eq!(v.get("syntax_errors"), None, "{fresh}: {v}");
    }
}

/// A Python file already broken at line 2 (`def f(x)` lacks its colon).
const BROKEN_PY: &str = "def f(x)\n    return x\n\n\ndef g(y):\n    return y * 2\n";

/// A Rust file already broken at its end: `other` is never closed, so
/// the parser gives up on all of it, from line 5 on.
const BROKEN_RS: &str = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n\nfn other() -> u32 {\n    if true { 1 } else { 2 }\n";

#[tokio::test]
async fn errors_a_file_had_before_an_edit_elsewhere_are_not_blamed_on_it() {
    let dir = tempfile::tempdir().unwrap();
    plant(dir.path(), &[("old.py", BROKEN_PY), ("old.rs", BROKEN_RS)]);
    let v = run(dir.path(), "edit_file", edit("old.py", ("y * 2", "y * 3"))).await;
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v.get("syntax_errors"), None, "{v}");
    let v = run(
        dir.path(),
        "edit_file",
        edit("old.rs", ("let x = 1;", "let x = 2;")),
    )
    .await;
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v.get("syntax_errors"), None, "{v}");
    // A write that keeps the broken line is not blamed for it either.
    let v = run_after_reading(
        dir.path(),
        "old.py",
        "write_file",
        json!({"path": "old.py", "content": "def f(x)\n    return x\n"}),
    )
    .await;
    assert_eq!(v["action"], "replaced", "{v}");
    assert_eq!(v.get("syntax_errors"), None, "{v}");
}

#[tokio::test]
async fn an_edit_that_breaks_a_broken_file_further_is_told_only_its_own_error() {
    let dir = tempfile::tempdir().unwrap();
    plant(dir.path(), &[("old.py", BROKEN_PY)]);
    let v = run(
        dir.path(),
        "edit_file",
        edit("old.py", ("return y * 2", "return (y * 2")),
    )
    .await;
    let found = &v["syntax_errors"];
    assert_eq!(found["errors"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(found["errors"][0]["line"], 6, "{v}");
    assert_eq!(found["errors"][0]["text"], "    return (y * 2", "{v}");
    assert_eq!(found["there_before"], 1, "{v}");
}

#[tokio::test]
async fn a_new_file_written_broken_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let v = run(
        dir.path(),
        "write_file",
        json!({"path": "new.py", "content": BROKEN_PY}),
    )
    .await;
    assert_eq!(v["action"], "created", "{v}");
    let found = &v["syntax_errors"];
    assert_eq!(found["errors"][0]["line"], 1, "{v}");
    assert_eq!(found["errors"][0]["text"], "def f(x)", "{v}");
    assert_eq!(found.get("there_before"), None, "{v}");
}

#[tokio::test]
async fn many_errors_list_the_first_few_and_count_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let content: String = (1..=SYNTAX_ERRORS_SHOWN + 2)
        .map(|i| format!("let v{i} = (;\n"))
        .collect();
    let v = run(
        dir.path(),
        "write_file",
        json!({"path": "many.js", "content": content}),
    )
    .await;
    let found = &v["syntax_errors"];
    let lines: Vec<u64> = found["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["line"].as_u64().unwrap())
        .collect();
    assert_eq!(
        lines,
        (1..=SYNTAX_ERRORS_SHOWN as u64).collect::<Vec<_>>(),
        "{v}"
    );
    assert_eq!(found["more"], 2, "{v}");
}

#[tokio::test]
async fn a_file_of_a_language_not_checked_says_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for path in ["notes.txt", "main.c", "Makefile", "settings.yaml", "py"] {
        let v = run(
            dir.path(),
            "write_file",
            json!({"path": path, "content": "def f(x)\n  {[(\n"}),
        )
        .await;
        assert_eq!(v["action"], "created", "{path}: {v}");
        assert_eq!(v.get("syntax_errors"), None, "{path}: {v}");
    }
}

#[tokio::test]
async fn a_file_over_the_size_cap_is_not_checked_and_one_at_it_is() {
    let dir = tempfile::tempdir().unwrap();
    // Broken at line 2, padded with white space to the cap (JSON parses
    // fast in any build: no timing in this test).
    let broken = "{\n  \"a\": 1,,\n}";
    let at_cap = format!(
        "{broken}{}",
        " ".repeat(SYNTAX_MAX_FILE_BYTES - broken.len())
    );
    let v = run(
        dir.path(),
        "write_file",
        json!({"path": "at.json", "content": at_cap}),
    )
    .await;
    assert_eq!(
        v["syntax_errors"]["errors"][0]["line"], 2,
        "{}",
        v["syntax_errors"]
    );
    let over = format!("{at_cap} ");
    let v = run(
        dir.path(),
        "write_file",
        json!({"path": "over.json", "content": over}),
    )
    .await;
    assert_eq!(v["action"], "created");
    assert_eq!(v.get("syntax_errors"), None);
    let v = run(
        dir.path(),
        "write_file",
        json!({"path": "over.py", "content": format!("def f(x)\n{}", "#".repeat(SYNTAX_MAX_FILE_BYTES))}),
    )
    .await;
    assert_eq!(v["action"], "created");
    assert_eq!(v.get("syntax_errors"), None);
}

#[tokio::test]
async fn json_and_toml_errors_name_their_line_and_the_parsers_words() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        // Cut short: placed at its last line, not past its line break.
        (
            "cut.json",
            "{\n  \"a\": [1, 2\n",
            2,
            "  \"a\": [1, 2",
            "EOF while parsing a list",
        ),
        ("comma.json", "[\n  1,\n  2,\n]\n", 4, "]", "expected value"),
        (
            "table.toml",
            "[a]\nx = 1\n[a]\ny = 2\n",
            3,
            "[a]",
            "duplicate key",
        ),
        (
            "value.toml",
            "name = \"app\"\nport = \n",
            2,
            "port =",
            "string values must be quoted, expected literal string",
        ),
    ];
    for (path, content, line, text, problem) in cases {
        let v = run(
            dir.path(),
            "write_file",
            json!({"path": path, "content": content}),
        )
        .await;
        let error = &v["syntax_errors"]["errors"][0];
        assert_eq!(error["line"], line, "{path}: {v}");
        assert_eq!(error["text"], text, "{path}: {v}");
        assert_eq!(error["problem"], problem, "{path}: {v}");
    }
}

#[tokio::test]
async fn a_long_line_is_quoted_cut() {
    let dir = tempfile::tempdir().unwrap();
    let long = format!("x = f({}\n", "a, ".repeat(100));
    let v = run(
        dir.path(),
        "write_file",
        json!({"path": "long.py", "content": long}),
    )
    .await;
    let text = v["syntax_errors"]["errors"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.ends_with('…'), "{text}");
    assert_eq!(
        text.len(),
        SYNTAX_EXCERPT_MAX_BYTES + '…'.len_utf8(),
        "{text}"
    );
    assert!(long.starts_with(text.trim_end_matches('…')));
}

#[tokio::test]
async fn an_insertion_is_checked_as_a_replacement_is() {
    let dir = tempfile::tempdir().unwrap();
    plant(dir.path(), &[("calc.py", CASES[0].content)]);
    let v = run(
        dir.path(),
        "edit_file",
        json!({"path": "calc.py", "insert_at": "end", "replace_block": "def mode(values:\n    return values[0]\n"}),
    )
    .await;
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["syntax_errors"]["errors"][0]["line"], 7, "{v}");
    assert_eq!(
        v["syntax_errors"]["errors"][0]["text"], "def mode(values:",
        "{v}"
    );
}
