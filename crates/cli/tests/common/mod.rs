#![allow(dead_code)]
//! Shared helpers of the interop tests: locating (or installing) the real
//! OVS tools, temp dirs, running our binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn sample_path(scen: &str, stem: &str) -> PathBuf {
    repo_root().join(format!("static/samples/{scen}/{stem}.db"))
}

pub const CLUSTERS: &[&str] = &[
    "acl-portgroup-diff",
    "acl-portgroup-full",
    "compacted",
    "election-timer",
    "leader-failover",
    "ls-add-follower",
    "membership",
    "sb-scale",
];

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn tools_present() -> bool {
    have("ovsdb-tool")
        && have("ovsdb-client")
        && (have("ovsdb-server") || have("/usr/sbin/ovsdb-server"))
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.trim_ascii() == b"0")
        .unwrap_or(false)
}

/// The Debian packages the interop tests of this workspace install (the
/// same set as the IDL interop tests).
pub const PACKAGES: &[&str] = &[
    "openvswitch-switch",
    "openvswitch-common",
    "ovn-central",
    "ovn-common",
];

/// Whether the real OVS tools are usable, installing the Debian packages
/// (apt-get update + install, as root only) when they are missing. Checked
/// once per test binary.
fn tools_available() -> bool {
    use std::io::Write;
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        if tools_present() {
            return true;
        }
        if !is_root() {
            let _ = writeln!(
                std::io::stderr(),
                "OVS tools missing and not root: not running apt-get"
            );
            return false;
        }
        let apt = |args: &[&str]| {
            let ok = Command::new("apt-get")
                .args(args)
                .env("DEBIAN_FRONTEND", "noninteractive")
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            if !ok {
                let _ = writeln!(std::io::stderr(), "apt-get {} failed", args.join(" "));
            }
        };
        apt(&["update"]);
        let mut install = vec!["install", "-y"];
        install.extend(PACKAGES);
        apt(&install);
        tools_present()
    })
}

/// Call first in every test that needs the real tools:
/// `if !ovs_tools("test_name") { return; }`. True when the tools are there
/// (installed if need be). Otherwise: panics under `CI=true`, and elsewhere
/// prints one `SKIPPED <test>: ...` line to stderr and returns false.
pub fn ovs_tools(test: &str) -> bool {
    if tools_available() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "{test}: CI=true but ovsdb-tool/ovsdb-server/ovsdb-client are missing \
             and apt-get install {} did not provide them",
            PACKAGES.join(" ")
        );
    }
    // Straight to the process's stderr: libtest captures eprintln! of
    // passing tests, which would hide the skip.
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: ovsdb-tool/ovsdb-server/ovsdb-client not available \
         (install {} or run as root; under CI=true this fails)",
        PACKAGES.join(" ")
    );
    false
}

pub fn ovsdb_server_bin() -> &'static str {
    if have("ovsdb-server") {
        "ovsdb-server"
    } else {
        "/usr/sbin/ovsdb-server"
    }
}

pub fn ours(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ovsdb-scope"))
        .args(args)
        .output()
        .expect("run ovsdb-scope")
}

pub fn tool(args: &[&str]) -> Output {
    Command::new("ovsdb-tool")
        .args(args)
        .output()
        .expect("run ovsdb-tool")
}

/// A fresh temporary directory (removed on drop).
pub struct TempDir(pub PathBuf);
impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let p = std::env::temp_dir().join(format!("ovsdb-scope-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
