//! The analyser on repository metadata a cloned or unpacked project can
//! carry (`support::crafted`): for each layout git itself is asked which
//! repository and which `core.fsmonitor` a git stage would use, and the
//! analyser must agree — it asks whenever git would use a repository
//! outside the project or a configuration that runs a program, and lets a
//! clean one run (ADR 0025).

use std::path::Path;

use dashfloat::tools::{Analyser, Verdict};

use crate::support;
use support::crafted::{LAYOUTS, Tree, git_would_reach_out};

#[test]
fn git_and_the_analyser_agree_on_every_crafted_layout() {
    let mut failures = Vec::new();
    for layout in LAYOUTS {
        let tree = Tree::new();
        (layout.build)(&tree);
        let dir = tree.root.join(layout.dir);
        let reaches_out = git_would_reach_out(&tree.root, &dir);
        if reaches_out != layout.reaches_out {
            failures.push(format!(
                "{}: git reaches out: {reaches_out}, the layout says {}",
                layout.name, layout.reaches_out
            ));
            continue;
        }
        let analyser = Analyser::new(&tree.root)
            .with_command_env(support::command_env(Path::new("/dev/null")));
        let verdict = analyser.analyse(".", layout.line);
        let asked = matches!(verdict, Verdict::Ask { .. });
        if asked != reaches_out {
            failures.push(format!("{}: `{}` → {verdict:?}", layout.name, layout.line));
        }
        assert!(!tree.marker().exists(), "{}", layout.name);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
