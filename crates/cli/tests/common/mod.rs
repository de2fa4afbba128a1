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

/// True when the real OVS tools are usable. Installs the Debian packages
/// when they are missing (apt-get, as root). Without them: panics under CI
/// (`CI` set), otherwise returns false so the caller skips with a message.
pub fn ovs_tools() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        if tools_present() {
            return true;
        }
        let _ = Command::new("apt-get")
            .args(["install", "-y", "openvswitch-switch", "openvswitch-common"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status();
        if tools_present() {
            return true;
        }
        if std::env::var_os("CI").is_some() {
            panic!("CI is set but ovsdb-tool/ovsdb-server/ovsdb-client are missing and could not be installed");
        }
        eprintln!("SKIPPING interop test: OVS tools missing (set CI=1 to make this fatal)");
        false
    })
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
