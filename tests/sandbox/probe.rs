//! The probe on a kernel without Landlock: this test binary runs itself
//! under a seccomp filter answering `ENOSYS` to Landlock's calls, as a
//! kernel built without it does.

use dashfloat::tools::sandbox::{Landlock, probe, support};
use dashfloat::tools::{Sandbox, SpawnError};

use crate::no_landlock;
use crate::{Scene, run, run_in};

/// Set in the child that runs without Landlock.
const CHILD: &str = "DASHFLOAT_SANDBOX_TEST_NO_LANDLOCK";

#[test]
fn without_landlock_workspace_write_is_refused_and_says_why() {
    if std::env::var_os(CHILD).is_some() {
        without_landlock();
        return;
    }
    let text = crate::child_output(
        std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "probe::without_landlock_workspace_write_is_refused_and_says_why",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1"),
    );
    assert!(text.contains("CHILD DONE"), "{text}");
}

/// In the child: Landlock answered `ENOSYS`, then the probe, the notice,
/// a workspace-write spawn refused and a read-only one run with what is
/// left (seccomp).
fn without_landlock() {
    seccompiler::apply_filter(&no_landlock::without_landlock()).unwrap();

    let probed = probe();
    assert_eq!(probed.landlock, Landlock::NotImplemented);
    assert_eq!(probed.seccomp, Ok(()));
    let refusal = probed.workspace_write().unwrap_err();
    assert_eq!(
        refusal,
        "the workspace-write sandbox is unavailable: this kernel has no Landlock"
    );
    let notice = probed.notice().unwrap();
    println!("notice: {notice}");
    assert!(
        notice.contains("files are not confined (this kernel has no Landlock)")
            && notice.contains(&refusal),
        "{notice}"
    );
    assert_eq!(support(), &probed);

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let scene = Scene::new();
    let refused = rt.block_on(run_in(
        &scene.workspace(),
        Sandbox::WorkspaceWrite,
        &scene.root,
        "echo ran",
        scene.env(),
    ));
    match refused {
        Err(SpawnError::Sandbox(e)) => assert_eq!(e.to_string(), refusal),
        other => panic!("workspace-write without Landlock: {other:?}"),
    }
    // Read-only keeps what it has: seccomp still refuses a socket; the
    // home is readable, as the notice says.
    let ran = rt.block_on(run(
        &scene,
        Sandbox::ReadOnly,
        "cat ~/notes.txt && python3 -c 'import socket; socket.socket()'",
    ));
    assert!(ran.output.contains("notes"), "{}", ran.output);
    assert!(ran.output.contains("PermissionError"), "{}", ran.output);
    println!("CHILD DONE");
}

/// Where the kernel has everything (Landlock ABI 6 or newer, seccomp, user
/// and mount namespaces), every level is whole and there is nothing to
/// say at start.
#[test]
fn a_kernel_with_everything_needs_no_notice() {
    let probed = probe();
    println!("{probed:?}");
    if probed.landlock.abi() < dashfloat::tools::sandbox::SIGNAL_SCOPE_MIN_ABI
        || probed.seccomp.is_err()
        || probed.namespaces.is_err()
    {
        println!("notice: this kernel lacks a part: {:?}", probed.notice());
        assert!(probed.notice().is_some());
        return;
    }
    assert_eq!(probed.workspace_write(), Ok(()));
    assert!(probed.read_only_gaps().is_empty());
    assert_eq!(probed.notice(), None);
}
