//! The attack table: each case a command that exits 0 only if the attack
//! worked, run through the real spawn at every level it must be refused
//! at, then unsandboxed as the control that shows the same command works.
//! Run as whoever runs the tests and, when that is root, again as an
//! unprivileged user (`setpriv`), where the controls that need root's
//! capabilities are left out. Then what must still work inside, and the
//! escapees of `setsid` and a double fork, killed as ever.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dashfloat::tools::Sandbox;

use crate::{Scene, is_root, run_in};

/// The unprivileged user the table runs as a second time.
const NOBODY: u32 = 65534;

/// The variable naming a set-user-ID program the parent made for the
/// unprivileged run (which cannot make one owned by another user).
const SETUID_VAR: &str = "DASHFLOAT_SANDBOX_TEST_SETUID";

const RO: &[Sandbox] = &[Sandbox::ReadOnly];
const WW: &[Sandbox] = &[Sandbox::WorkspaceWrite];
const BOTH: &[Sandbox] = &[Sandbox::ReadOnly, Sandbox::WorkspaceWrite];

/// Whether the control is meaningful for this user.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Control {
    /// Anyone can do it unsandboxed.
    Anyone,
    /// Only root can (a capability): the case runs only as root.
    Root,
}

/// The exit code of a case that cannot happen on this system (as
/// automake's tests say it): the kernel lacks what it uses.
const NOT_HERE: i32 = 77;

/// One attack.
struct Case {
    name: &'static str,
    levels: &'static [Sandbox],
    command: String,
    control: Control,
    /// A file the attack would make: absent after the sandboxed runs.
    leaves: Option<PathBuf>,
}

/// A path quoted for the shell.
fn q(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// A Python program, quoted for the shell, with its arguments.
fn py(program: &str, args: &[String]) -> String {
    format!(
        "python3 -c '{}' {}",
        program.replace('\'', r"'\''"),
        args.join(" ")
    )
}

/// The Python preamble for raw system calls.
const LIBC: &str = "import ctypes, os, socket, sys\n\
libc = ctypes.CDLL(None, use_errno=True)\n\
libc.syscall.restype = ctypes.c_long\n\
L = ctypes.c_long\n";

/// Listeners the network cases aim at, held while the table runs.
struct Targets {
    tcp: std::net::TcpListener,
    tcp6: Option<std::net::TcpListener>,
    udp: std::net::UdpSocket,
    unix: PathBuf,
    _unix: std::os::unix::net::UnixListener,
}

impl Targets {
    fn new(scene: &Scene) -> Targets {
        let unix = scene.outside.join("docker.sock");
        Targets {
            tcp: std::net::TcpListener::bind("127.0.0.1:0").unwrap(),
            tcp6: std::net::TcpListener::bind("[::1]:0").ok(),
            udp: std::net::UdpSocket::bind("127.0.0.1:0").unwrap(),
            _unix: std::os::unix::net::UnixListener::bind(&unix).unwrap(),
            unix,
        }
    }
}

/// The set-user-ID program: `id`, owned by another user than this one.
fn setuid_program(scene: &Scene) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(SETUID_VAR) {
        return Some(PathBuf::from(path));
    }
    if !is_root() {
        return None;
    }
    // In the project, so that read-only may run it: `no_new_privs` is
    // what must stop it there.
    let path = scene.root.join("setuid-id");
    make_setuid_id(&path, NOBODY);
    Some(path)
}

/// Copies `id` to `path`, owned by `owner`, mode 4755.
fn make_setuid_id(path: &Path, owner: u32) {
    std::fs::copy("/usr/bin/id", path).unwrap();
    std::os::unix::fs::chown(path, Some(owner), Some(owner)).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o4755)).unwrap();
}

fn cases(scene: &Scene, targets: &Targets) -> Vec<Case> {
    let out = &scene.outside;
    let mut cases = vec![
        Case {
            name: "write outside the project (absolute path)",
            levels: BOTH,
            command: format!("echo x > {}", q(&out.join("absolute"))),
            control: Control::Anyone,
            leaves: Some(out.join("absolute")),
        },
        Case {
            name: "write outside the project (`..`)",
            levels: BOTH,
            command: "echo x > ../outside/dotdot".into(),
            control: Control::Anyone,
            leaves: Some(out.join("dotdot")),
        },
        Case {
            name: "write outside through a link planted in the project",
            levels: BOTH,
            command: "echo x > planted-link/through-link".into(),
            control: Control::Anyone,
            leaves: Some(out.join("through-link")),
        },
        Case {
            name: "hard-link a file outside into the project and write it",
            levels: BOTH,
            command: format!("ln {} hard && echo x >> hard", q(&out.join("target"))),
            control: Control::Anyone,
            leaves: Some(scene.root.join("hard")),
        },
        Case {
            name: "read ~/.ssh/id_rsa",
            levels: BOTH,
            command: "cat ~/.ssh/id_rsa".into(),
            control: Control::Anyone,
            leaves: None,
        },
        Case {
            name: "read anything else in the home",
            levels: RO,
            command: "cat ~/notes.txt".into(),
            control: Control::Anyone,
            leaves: None,
        },
        Case {
            name: "TCP connect to 127.0.0.1",
            levels: BOTH,
            command: py(
                "import socket, sys\nsocket.create_connection((\"127.0.0.1\", int(sys.argv[1])), 5)",
                &[targets.tcp.local_addr().unwrap().port().to_string()],
            ),
            control: Control::Anyone,
            leaves: None,
        },
        Case {
            name: "UDP to 127.0.0.1",
            levels: BOTH,
            command: py(
                "import socket, sys\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.sendto(b\"x\", (\"127.0.0.1\", int(sys.argv[1])))",
                &[targets.udp.local_addr().unwrap().port().to_string()],
            ),
            control: Control::Anyone,
            leaves: None,
        },
        Case {
            name: "UDP over IPv6 to ::1",
            levels: BOTH,
            command: py(
                "import socket\ns = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)\ns.sendto(b\"x\", (\"::1\", 9))",
                &[],
            ),
            control: Control::Anyone,
            leaves: None,
        },
        Case {
            name: "bind and listen on a TCP port",
            levels: BOTH,
            command: py(
                "import socket\ns = socket.socket()\ns.bind((\"127.0.0.1\", 0))\ns.listen()",
                &[],
            ),
            control: Control::Anyone,
            leaves: None,
        },
        Case {
            name: "raw socket (ICMP)",
            levels: BOTH,
            command: py(
                "import socket\nsocket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)",
                &[],
            ),
            control: Control::Root,
            leaves: None,
        },
        Case {
            name: "packet socket",
            levels: BOTH,
            command: py(
                "import socket\nsocket.socket(socket.AF_PACKET, socket.SOCK_RAW)",
                &[],
            ),
            control: Control::Root,
            leaves: None,
        },
        Case {
            name: "connect to a Unix socket listening outside (docker.sock)",
            levels: BOTH,
            command: py(
                "import socket, sys\ns = socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])",
                &[q(&targets.unix)],
            ),
            control: Control::Anyone,
            leaves: None,
        },
        Case {
            name: "ptrace dashfloat (PTRACE_SEIZE of the parent)",
            levels: BOTH,
            command: py(
                &format!(
                    "{LIBC}r = libc.ptrace(L(0x4206), L(int(sys.argv[1])), None, None)\nsys.exit(0 if r == 0 else 1)"
                ),
                &["$PPID".into()],
            ),
            control: Control::Anyone,
            leaves: None,
        },
        Case {
            name: "open /proc/$PPID/mem for writing",
            levels: BOTH,
            command: py(
                "import sys\nopen(\"/proc/%s/mem\" % sys.argv[1], \"r+b\")",
                &["$PPID".into()],
            ),
            control: Control::Anyone,
            leaves: None,
        },
        Case {
            name: "read /proc/$PPID/environ",
            levels: BOTH,
            command: "cat /proc/$PPID/environ > /dev/null".into(),
            control: Control::Anyone,
            leaves: None,
        },
        Case {
            name: "signal dashfloat (kill -0 $PPID)",
            levels: BOTH,
            command: "kill -0 $PPID".into(),
            control: Control::Anyone,
            leaves: None,
        },
        Case {
            name: "mount a tmpfs",
            levels: BOTH,
            command: "mount -t tmpfs none mnt && umount mnt".into(),
            control: Control::Root,
            leaves: None,
        },
        Case {
            name: "unshare a user namespace",
            levels: BOTH,
            command: "unshare -U true".into(),
            control: Control::Anyone,
            leaves: None,
        },
        Case {
            name: "widen the sandbox from inside (no_new_privs off, a new Landlock ruleset granting /)",
            levels: BOTH,
            command: py(
                &format!(
                    "{LIBC}libc.prctl(38, L(0), L(0), L(0), L(0))\n\
libc.prctl(38, L(1), L(0), L(0), L(0))\n\
attr = ctypes.c_uint64(2)\n\
fd = libc.syscall(L(444), ctypes.byref(attr), L(8), L(0))\n\
class Beneath(ctypes.Structure):\n    _pack_ = 1\n    _fields_ = [(\"allowed\", ctypes.c_uint64), (\"fd\", ctypes.c_int32)]\n\
rule = Beneath(2, os.open(\"/\", os.O_PATH))\n\
libc.syscall(L(445), L(fd), L(1), ctypes.byref(rule), L(0))\n\
libc.syscall(L(446), L(fd), L(0))\n\
open(sys.argv[1], \"w\").write(\"widened\")"
                ),
                &[q(&out.join("widened"))],
            ),
            control: Control::Anyone,
            leaves: Some(out.join("widened")),
        },
        Case {
            name: "io_uring_setup",
            levels: BOTH,
            command: py(
                &format!(
                    "{LIBC}params = ctypes.create_string_buffer(120)\n\
fd = libc.syscall(L(425), L(4), params)\nsys.exit(0 if fd >= 0 else 1)"
                ),
                &[],
            ),
            control: Control::Anyone,
            leaves: None,
        },
        Case {
            name: "load a kernel module (finit_module: EPERM without CAP_SYS_MODULE)",
            levels: BOTH,
            command: py(
                &format!(
                    "{LIBC}libc.syscall(L(313), L(-1), ctypes.c_char_p(b\"\"), L(0))\n\
e = ctypes.get_errno()\n\
sys.exit(77 if e == 38 else 1 if e == 1 else 0)"
                ),
                &[],
            ),
            control: Control::Root,
            leaves: None,
        },
        Case {
            name: "reboot (EPERM without CAP_SYS_BOOT; bad magic, so never reboots)",
            levels: BOTH,
            command: py(
                &format!(
                    "{LIBC}libc.syscall(L(169), L(0), L(0), L(0), None)\n\
sys.exit(1 if ctypes.get_errno() == 1 else 0)"
                ),
                &[],
            ),
            control: Control::Root,
            leaves: None,
        },
        Case {
            name: "read another user's file in the project (CAP_DAC_OVERRIDE)",
            levels: BOTH,
            command: "cat others-file".into(),
            control: Control::Root,
            leaves: None,
        },
    ];
    if let Some(tcp6) = &targets.tcp6 {
        cases.push(Case {
            name: "TCP connect to ::1",
            levels: BOTH,
            command: py(
                "import socket, sys\nsocket.create_connection((\"::1\", int(sys.argv[1])), 5)",
                &[tcp6.local_addr().unwrap().port().to_string()],
            ),
            control: Control::Anyone,
            leaves: None,
        });
    } else {
        eprintln!("notice: no IPv6 loopback here: the TCP ::1 case is left out");
    }
    match setuid_program(scene) {
        Some(program) => cases.push(Case {
            name: "a set-user-ID program changes who runs",
            levels: BOTH,
            command: format!("u=$({} -u) && test \"$u\" != \"$(id -u)\"", q(&program)),
            control: Control::Anyone,
            leaves: None,
        }),
        None => eprintln!("notice: no set-user-ID program for this user: that case is left out"),
    }
    cases
}

/// What the project holds before the table: a link out, a mount point,
/// a file of another user (as root).
fn plant(scene: &Scene) {
    std::os::unix::fs::symlink(&scene.outside, scene.root.join("planted-link")).unwrap();
    std::fs::create_dir(scene.root.join("mnt")).unwrap();
    let others = scene.root.join("others-file");
    std::fs::write(&others, "another user's\n").unwrap();
    std::fs::set_permissions(&others, std::fs::Permissions::from_mode(0o600)).unwrap();
    if is_root() {
        std::os::unix::fs::chown(&others, Some(NOBODY), Some(NOBODY)).unwrap();
    }
}

/// Runs every case: at each of its levels (must fail, leave nothing),
/// then unsandboxed (must work); prints the table, fails on any row that
/// is not as it should be.
#[tokio::test]
async fn attack_table() {
    let scene = Scene::new();
    plant(&scene);
    let targets = Targets::new(&scene);
    let ws = scene.workspace();
    let who = if is_root() { "root" } else { "unprivileged" };
    let mut rows = Vec::new();
    let mut wrong = Vec::new();
    for case in cases(&scene, &targets) {
        if case.control == Control::Root && !is_root() {
            continue;
        }
        let control = run_in(
            &ws,
            Sandbox::Unconfined,
            &scene.root,
            &case.command,
            scene.env(),
        )
        .await
        .unwrap();
        if let Some(left) = &case.leaves {
            let _ = std::fs::remove_file(left);
        }
        if control.code == Some(NOT_HERE) {
            eprintln!("notice: {}: not on this system, left out", case.name);
            rows.push(format!("| {} | n/a on this kernel | | |", case.name));
            continue;
        }
        let mut cells = Vec::new();
        for level in [Sandbox::ReadOnly, Sandbox::WorkspaceWrite] {
            if !case.levels.contains(&level) {
                cells.push("—".to_owned());
                continue;
            }
            let ran = run_in(&ws, level, &scene.root, &case.command, scene.env())
                .await
                .unwrap();
            let left = case.leaves.as_ref().filter(|p| p.exists());
            if ran.ok() || left.is_some() {
                wrong.push(format!(
                    "{} at {}: NOT refused (exit {:?}, left {left:?}):\n{}",
                    case.name,
                    level.name(),
                    ran.code,
                    ran.output
                ));
                cells.push("**NOT refused**".to_owned());
            } else {
                cells.push(format!("refused: {}", first_line(&ran.output)));
            }
        }
        if control.ok() {
            cells.push("works".to_owned());
        } else {
            wrong.push(format!(
                "{}: the control failed unsandboxed (exit {:?}):\n{}",
                case.name, control.code, control.output
            ));
            cells.push("**control failed**".to_owned());
        }
        if let Some(left) = &case.leaves {
            let _ = std::fs::remove_file(left);
        }
        rows.push(format!("| {} | {} |", case.name, cells.join(" | ")));
    }
    println!(
        "attack table as {who}:\n| case | read-only | workspace-write | unsandboxed |\n|---|---|---|---|"
    );
    for row in &rows {
        println!("{row}");
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// The first line of a refusal, shortened, for the table.
fn first_line(output: &str) -> String {
    let line = output
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("(no output)");
    let line = line.trim();
    let cut: String = line.chars().take(70).collect();
    cut.replace('|', "/")
}

/// As root, the table again as an unprivileged user: this test binary
/// run under `setpriv`, with a set-user-ID-root program made for it.
#[test]
fn attack_table_as_an_unprivileged_user() {
    if !is_root() {
        eprintln!("notice: not root: the table above ran unprivileged already");
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("sandbox-setuid-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let program = dir.path().join("setuid-id");
    make_setuid_id(&program, 0);
    let exe = std::env::current_exe().unwrap();
    let text = crate::child_output(
        std::process::Command::new("setpriv")
            .args([
                &format!("--reuid={NOBODY}"),
                &format!("--regid={NOBODY}"),
                "--clear-groups",
            ])
            .arg(&exe)
            .args([
                "--exact",
                "attacks::attack_table",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(SETUID_VAR, &program)
            .env_remove("HOME"),
    );
    assert!(text.contains("attack table as unprivileged"), "{text}");
}

/// What must still work inside each level.
#[tokio::test]
async fn what_must_still_work_inside() {
    let scene = Scene::new();
    let ws = scene.workspace();
    let allowed: &[(&str, &[Sandbox], &str)] = &[
        (
            "a socket pair",
            BOTH,
            "python3 -c 'import socket; a, b = socket.socketpair(); a.send(b\"x\"); assert b.recv(1) == b\"x\"'",
        ),
        (
            "write the temporary folder",
            BOTH,
            "echo x > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"",
        ),
        ("write /dev/null", BOTH, "echo x > /dev/null"),
        ("read the project", BOTH, "cat README"),
        ("write the project", WW, "echo x > new && rm new"),
        ("read the home but its credentials", WW, "cat ~/notes.txt"),
        (
            "open a pseudo-terminal",
            WW,
            "python3 -c 'import os, pty; m, s = pty.openpty(); os.write(s, b\"x\"); assert os.read(m, 1) == b\"x\"'",
        ),
        ("run git", BOTH, "git --version"),
    ];
    let mut wrong = Vec::new();
    for (name, levels, command) in allowed {
        for &level in *levels {
            let ran = run_in(&ws, level, &scene.root, command, scene.env())
                .await
                .unwrap();
            if !ran.ok() {
                wrong.push(format!(
                    "{name} at {}: {:?}\n{}",
                    level.name(),
                    ran.code,
                    ran.output
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// `setsid` and a double fork leave the sandboxed command's group and
/// session; the subreaper's sweep kills them all the same.
#[tokio::test]
async fn escapees_of_setsid_and_a_double_fork_are_killed() {
    let scene = Scene::new();
    let ws = scene.workspace();
    for level in [Sandbox::ReadOnly, Sandbox::WorkspaceWrite] {
        let command = "setsid sh -c 'sleep 300 & echo PID $!'; (sh -c 'sleep 300 & echo PID $!' &); sleep 0.2";
        let ran = run_in(&ws, level, &scene.root, command, scene.env())
            .await
            .unwrap();
        let pids: Vec<i32> = ran
            .output
            .lines()
            .filter_map(|l| l.strip_prefix("PID "))
            .map(|p| p.trim().parse().unwrap())
            .collect();
        assert_eq!(pids.len(), 2, "{}", ran.output);
        for pid in pids {
            let start = Instant::now();
            while alive(pid) && start.elapsed() < Duration::from_secs(20) {
                std::thread::sleep(Duration::from_millis(20));
            }
            assert!(!alive(pid), "{pid} outlived its call at {}", level.name());
        }
    }
}

/// Whether `pid` runs (a zombie does not).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}
