//! A path that is not there: the failure says where in the project its
//! name is, or that nothing holds it, or which folder to list.

use serde_json::json;

use dashfloat::bounds::{LOCATE_MAX_FILES, LOCATE_MAX_SHOWN};

use crate::plant;

/// The error `tool` gives for `args` in a project of `files`.
async fn error(files: &[(&str, &str)], tool: &str, args: serde_json::Value) -> String {
    let dir = tempfile::tempdir().unwrap();
    plant(dir.path(), files);
    let v = crate::run(dir.path(), tool, args).await;
    assert_eq!(v["code"], "execution_failed", "{v}");
    v["error"].as_str().unwrap().to_owned()
}

/// The 1.5B read `./tests/test_inventory.py` for a test at the top, then
/// listed `..` when told to list the parent.
#[tokio::test]
async fn a_file_looked_for_in_the_wrong_folder_is_found_by_its_name() {
    let project = [
        ("test_inventory.py", ""),
        ("inventory.py", ""),
        ("README.md", ""),
    ];
    for (tool, args, hint) in [
        (
            "read_file",
            json!({"path": "./tests/test_inventory.py"}),
            "; the project has test_inventory.py at test_inventory.py",
        ),
        (
            "edit_file",
            json!({"path": "src/inventory.py", "search_block": "a", "replace_block": "b"}),
            "; the project has inventory.py at inventory.py",
        ),
        // Case aside.
        (
            "read_file",
            json!({"path": "readme.md"}),
            "; the project has readme.md at README.md",
        ),
    ] {
        let error = error(&project, tool, args.clone()).await;
        assert!(
            error.starts_with("cannot ") && error.ends_with(hint),
            "{tool} {args}: {error}"
        );
    }
}

#[tokio::test]
async fn a_folder_is_found_by_its_name_for_a_listing_a_search_or_a_command() {
    let project = [("src/utils/text.rs", ""), ("src/utils/num.rs", "")];
    for (tool, args) in [
        ("list_directory", json!({"path": "utils"})),
        ("glob", json!({"pattern": "*.rs", "path": "utils/"})),
        ("execute_command", json!({"command": "ls", "cwd": "utils"})),
    ] {
        let error = error(&project, tool, args.clone()).await;
        assert!(
            error.ends_with("; the project has utils at src/utils"),
            "{tool} {args}: {error}"
        );
    }
    // A grep searches the whole project instead, and says where the
    // name is beside why (ADR 0049).
    let dir = tempfile::tempdir().unwrap();
    plant(dir.path(), &project);
    let v = crate::run(
        dir.path(),
        "grep",
        json!({"pattern": "x", "path": "lib/utils"}),
    )
    .await;
    assert_eq!(
        v["searched_first"],
        "lib/utils does not exist, so the whole project was searched; the project has utils at \
         src/utils",
        "{v}"
    );
}

/// The places are the shallowest paths, at most `LOCATE_MAX_SHOWN`; more
/// are said to exist, not counted.
#[tokio::test]
async fn many_places_of_a_name_show_the_first_few() {
    assert_eq!(LOCATE_MAX_SHOWN, 3);
    let four = [
        ("d/mod.rs", ""),
        ("b/mod.rs", ""),
        ("a/mod.rs", ""),
        ("c/mod.rs", ""),
    ];
    let error3 = error(&four[1..], "read_file", json!({"path": "mod.rs"})).await;
    assert!(
        error3.ends_with("; the project has mod.rs at a/mod.rs, b/mod.rs, c/mod.rs"),
        "{error3}"
    );
    let error4 = error(&four, "read_file", json!({"path": "mod.rs"})).await;
    assert!(
        error4.ends_with("; the project has mod.rs at a/mod.rs, b/mod.rs, c/mod.rs and elsewhere"),
        "{error4}"
    );
    // The shallowest come first, whatever their names.
    let deep_first = [
        ("aa/x/mod.rs", ""),
        ("ab/mod.rs", ""),
        ("zz/mod.rs", ""),
        ("mod.rs", ""),
    ];
    let error = error(&deep_first, "read_file", json!({"path": "src/mod.rs"})).await;
    assert!(
        error.ends_with("; the project has mod.rs at mod.rs, ab/mod.rs, zz/mod.rs and elsewhere"),
        "{error}"
    );
}

/// A name held nowhere the search tools look (build output, ignored
/// files) is said to be nowhere, with the nearest folder of the path that
/// exists to list.
#[tokio::test]
async fn a_name_held_nowhere_names_the_nearest_folder_that_exists() {
    let project = [
        ("src/lib.rs", ""),
        ("target/debug/app.log", ""),
        ("secret.env", ""),
        (".gitignore", "*.env\n"),
    ];
    for (path, hint) in [
        (
            "src/missing/app.log",
            "; nothing in the project is named app.log (ignored and build folders aside); list_directory src to see what is there",
        ),
        (
            "config/secret.env",
            "; nothing in the project is named secret.env (ignored and build folders aside); list_directory . to see what is there",
        ),
        (
            "./src/nope.rs",
            "; nothing in the project is named nope.rs (ignored and build folders aside); list_directory ./src to see what is there",
        ),
    ] {
        let error = error(&project, "read_file", json!({ "path": path })).await;
        assert!(error.ends_with(hint), "{path}: {error}");
    }
}

/// The search looks at `LOCATE_MAX_FILES` files, all of a project that
/// size, and gives up past them: the failure then only names the folder
/// to list.
#[tokio::test]
async fn the_search_for_a_name_stops_at_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..LOCATE_MAX_FILES {
        let folder = dir.path().join(format!("d{}", i / 1000));
        if i % 1000 == 0 {
            std::fs::create_dir(&folder).unwrap();
        }
        std::fs::write(folder.join(format!("f{i}")), "").unwrap();
    }
    let error = |v: serde_json::Value| v["error"].as_str().unwrap().to_owned();
    let args = json!({"path": "src/absent.rs"});
    let at_bound = error(crate::run(dir.path(), "read_file", &args).await);
    assert!(
        at_bound.contains("; nothing in the project is named absent.rs"),
        "{at_bound}"
    );
    std::fs::write(dir.path().join("one_more"), "").unwrap();
    let past = error(crate::run(dir.path(), "read_file", &args).await);
    assert!(
        past.ends_with("; list_directory . to find the right name"),
        "{past}"
    );
}
