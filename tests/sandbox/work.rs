//! Real work inside the sandbox.

use dashfloat::tools::Sandbox;

use crate::{Scene, run};

#[tokio::test]
async fn smoke() {
    let scene = Scene::new();
    for level in [Sandbox::Unconfined, Sandbox::ReadOnly, Sandbox::WorkspaceWrite] {
        let ran = run(&scene, level, "cat README; echo x > new; cat ~/notes.txt; cat ~/.ssh/id_rsa; echo t > $TMPDIR/t && cat $TMPDIR/t; ls .").await;
        eprintln!("{}: {:?}\n{}", level.name(), ran.code, ran.output);
    }
}
