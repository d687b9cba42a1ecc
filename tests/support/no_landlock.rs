//! A seccomp filter under which the kernel seems to have no Landlock:
//! its three system calls answer `ENOSYS`, everything else is allowed.
//! For the tests of what dashfloat does on such a kernel (the sandbox's
//! probe, `auto` refused); included on its own by the sandbox tests.

use std::collections::BTreeMap;

use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch};

/// The filter, compiled for this machine; installed with
/// `seccompiler::apply_filter` in the process (or child) to be fooled.
pub fn without_landlock() -> BpfProgram {
    let arch = TargetArch::try_from(std::env::consts::ARCH).unwrap();
    let rules = [
        libc::SYS_landlock_create_ruleset,
        libc::SYS_landlock_add_rule,
        libc::SYS_landlock_restrict_self,
    ]
    .into_iter()
    .map(|call| (call, Vec::new()))
    .collect::<BTreeMap<_, _>>();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS.unsigned_abs()),
        arch,
    )
    .unwrap();
    BpfProgram::try_from(filter).unwrap()
}
