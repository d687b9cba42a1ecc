//! The seccomp programs every sandboxed command runs under: what
//! Landlock cannot refuse. No socket but netlink (TCP and UDP over IPv4
//! and IPv6, raw and packet sockets, and Unix sockets — a Docker or
//! SSH-agent socket is an escape; `socketpair` stays); no new namespace
//! (`unshare`, `setns`, `clone` with a namespace flag) and no mount call;
//! no kernel keyring, BPF, perf or userfaultfd; and no `io_uring`, which
//! would run system calls this filter never sees. Built once, installed
//! in each child before exec.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// System calls refused with `EPERM` whatever their arguments.
const REFUSED: &[libc::c_long] = &[
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
];

/// System calls answered `ENOSYS`, as a kernel without them would:
/// `io_uring` (a program falls back to plain calls), and `clone3`, whose
/// flags lie in memory a filter cannot read (the C library falls back to
/// `clone`, whose flags it can).
const ABSENT: &[libc::c_long] = &[
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_clone3,
];

/// The `clone` flags that make a new namespace.
const NAMESPACE_FLAGS: &[libc::c_int] = &[
    libc::CLONE_NEWNS,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWCGROUP,
];

/// The bit an x32 system call's number carries on x86_64: the same calls
/// under other numbers, refused the same.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// Why the programs could not be built.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FilterError {
    /// seccompiler does not know this architecture.
    #[error("seccomp filters are not built for {0}")]
    Architecture(&'static str),
    /// seccompiler refused a rule (a bug here).
    #[error("the seccomp filter could not be built: {0}")]
    Build(String),
}

/// The programs, built on first use.
pub(super) fn programs() -> Result<&'static [BpfProgram], FilterError> {
    static PROGRAMS: OnceLock<Result<Vec<BpfProgram>, FilterError>> = OnceLock::new();
    PROGRAMS
        .get_or_init(build)
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
}

fn build() -> Result<Vec<BpfProgram>, FilterError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|_| FilterError::Architecture(std::env::consts::ARCH))?;
    let built = |e: seccompiler::BackendError| FilterError::Build(e.to_string());
    let mut refused: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for &call in REFUSED {
        refused.insert(call.into(), Vec::new());
    }
    // Every socket family but netlink (which reaches only this kernel).
    let not_netlink = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        libc::AF_NETLINK as u64,
    )
    .map_err(built)?;
    refused.insert(
        libc::SYS_socket.into(),
        vec![SeccompRule::new(vec![not_netlink]).map_err(built)?],
    );
    let mut clone_rules = Vec::new();
    for &flag in NAMESPACE_FLAGS {
        let flag = u64::from(flag.unsigned_abs());
        let has_flag = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(flag),
            flag,
        )
        .map_err(built)?;
        clone_rules.push(SeccompRule::new(vec![has_flag]).map_err(built)?);
    }
    refused.insert(libc::SYS_clone.into(), clone_rules);
    let mut absent: BTreeMap<i64, Vec<SeccompRule>> =
        ABSENT.iter().map(|&call| (call.into(), Vec::new())).collect();
    with_x32(&mut refused);
    with_x32(&mut absent);
    let program = |rules, errno: i32| -> Result<BpfProgram, FilterError> {
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno.unsigned_abs()),
            arch,
        )
        .map_err(built)?;
        BpfProgram::try_from(filter).map_err(built)
    };
    Ok(vec![
        program(refused, libc::EPERM)?,
        program(absent, libc::ENOSYS)?,
    ])
}

/// Adds each rule again under its x32 number (x86_64 only).
fn with_x32(rules: &mut BTreeMap<i64, Vec<SeccompRule>>) {
    #[cfg(target_arch = "x86_64")]
    {
        let x32: Vec<(i64, Vec<SeccompRule>)> = rules
            .iter()
            .map(|(call, rule)| (call | X32_SYSCALL_BIT, rule.clone()))
            .collect();
        rules.extend(x32);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = rules;
}
