//! A small native JSON-RPC-over-unix-socket adapter used by the interop
//! tests. It lives outside the sans-IO core on purpose: the core only sees
//! parsed `Json` messages; this file owns sockets, processes and timeouts.

#![allow(dead_code)]

use ovsdb::json::{self, Json, Object};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Splits a byte stream into complete top-level JSON texts (objects or
/// arrays written back to back, as JSON-RPC over a stream does).
#[derive(Default)]
pub struct Splitter {
    buf: Vec<u8>,
    scanned: usize,
    depth: usize,
    in_string: bool,
    escape: bool,
    start: Option<usize>,
}

impl Splitter {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Returns the next complete JSON text, if one is buffered.
    pub fn next_text(&mut self) -> Option<Vec<u8>> {
        while self.scanned < self.buf.len() {
            let c = self.buf[self.scanned];
            let i = self.scanned;
            self.scanned += 1;
            if self.in_string {
                if self.escape {
                    self.escape = false;
                } else if c == b'\\' {
                    self.escape = true;
                } else if c == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match c {
                b'"' => self.in_string = true,
                b'{' | b'[' => {
                    if self.depth == 0 {
                        self.start = Some(i);
                    }
                    self.depth += 1;
                }
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        let start = self.start.take().unwrap_or(0);
                        let text = self.buf[start..self.scanned].to_vec();
                        self.buf.drain(..self.scanned);
                        self.scanned = 0;
                        return Some(text);
                    }
                }
                _ => {}
            }
        }
        None
    }
}

/// One JSON-RPC connection to a unix socket.
pub struct Conn {
    stream: UnixStream,
    splitter: Splitter,
    next_id: i64,
    /// Notifications and replies received while waiting for something else.
    pub backlog: Vec<Json>,
}

impl Conn {
    pub fn connect(path: &Path) -> std::io::Result<Conn> {
        let stream = UnixStream::connect(path)?;
        stream.set_read_timeout(Some(Duration::from_millis(200)))?;
        Ok(Conn {
            stream,
            splitter: Splitter::default(),
            next_id: 1,
            backlog: Vec::new(),
        })
    }

    pub fn send(&mut self, msg: &Json) -> std::io::Result<()> {
        self.stream.write_all(&msg.to_bytes())
    }

    /// Sends a request and returns its id.
    pub fn request(&mut self, method: &str, params: Json) -> std::io::Result<Json> {
        let id = Json::Integer(self.next_id);
        self.next_id += 1;
        let mut o = Object::new();
        o.insert("method", Json::from(method));
        o.insert("params", params);
        o.insert("id", id.clone());
        self.send(&Json::Object(o))?;
        Ok(id)
    }

    /// Receives one message, answering `echo` requests transparently.
    pub fn recv(&mut self, timeout: Duration) -> std::io::Result<Option<Json>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(text) = self.splitter.next_text() {
                let msg = json::parse(&text).map_err(|e| {
                    std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string())
                })?;
                if msg.get("method").and_then(Json::as_str) == Some("echo") {
                    if let Some(id) = msg.get("id").filter(|i| !i.is_null()) {
                        let mut o = Object::new();
                        o.insert("result", msg.get("params").cloned().unwrap_or(Json::Null));
                        o.insert("error", Json::Null);
                        o.insert("id", id.clone());
                        self.send(&Json::Object(o))?;
                        continue;
                    }
                }
                return Ok(Some(msg));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let left = (deadline - now).clamp(Duration::from_millis(1), Duration::from_millis(200));
            self.stream.set_read_timeout(Some(left))?;
            let mut buf = [0u8; 65536];
            match self.stream.read(&mut buf) {
                Ok(0) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "connection closed",
                    ))
                }
                Ok(n) => self.splitter.push(&buf[..n]),
                Err(e)
                    if e.kind() == std::io::ErrorKind::WouldBlock
                        || e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Sends a request and waits for its reply; messages received meanwhile
    /// (notifications) are kept in `backlog` in arrival order.
    pub fn call(&mut self, method: &str, params: Json) -> std::io::Result<Json> {
        let id = self.request(method, params)?;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no reply to {method}"),
                ));
            }
            if let Some(msg) = self.recv(left)? {
                if msg.get("id") == Some(&id) && msg.get("method").is_none() {
                    return Ok(msg);
                }
                self.backlog.push(msg);
            }
        }
    }

    /// Collects notifications until none arrives for `quiet`.
    pub fn drain(&mut self, quiet: Duration) -> std::io::Result<Vec<Json>> {
        let mut out = std::mem::take(&mut self.backlog);
        while let Some(msg) = self.recv(quiet)? {
            out.push(msg);
        }
        Ok(out)
    }
}

/// Makes sure the Debian packages are installed (interop tests need the
/// real tools). Returns false if they cannot be made available.
pub fn ensure_packages() -> bool {
    let have = |b: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {b}"))
            .stdout(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    if have("ovsdb-server") && have("ovsdb-client") && have("ovn-nbctl") && have("ovsdb-tool") {
        return true;
    }
    let _ = Command::new("apt-get").arg("update").status();
    let _ = Command::new("apt-get")
        .args([
            "install",
            "-y",
            "openvswitch-switch",
            "openvswitch-common",
            "ovn-central",
            "ovn-common",
        ])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status();
    have("ovsdb-server") && have("ovsdb-client") && have("ovn-nbctl") && have("ovsdb-tool")
}

/// A temporary directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let base = std::env::temp_dir();
        let mut n = 0u32;
        loop {
            let p = base.join(format!("idl-{tag}-{}-{n}", std::process::id()));
            if std::fs::create_dir(&p).is_ok() {
                return TempDir(p);
            }
            n += 1;
        }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A real ovsdb-server started on a unix socket in a temp dir.
pub struct Server {
    pub child: Child,
    pub sock: PathBuf,
    pub db: PathBuf,
}

impl Server {
    /// Starts ovsdb-server on `db` (already created) with a unix socket in
    /// `dir`. Waits until the socket accepts connections.
    /// Creates database file `name` in `dir` from the schema file `schema`
    /// with the real `ovsdb-tool`, then starts a server on it.
    pub fn create(dir: &Path, name: &str, schema: &Path) -> std::io::Result<Server> {
        let db = dir.join(name);
        run(
            "ovsdb-tool",
            &["create", db.to_str().unwrap(), schema.to_str().unwrap()],
        );
        Server::start(dir, &db)
    }

    pub fn start(dir: &Path, db: &Path) -> std::io::Result<Server> {
        let sock = dir.join("db.sock");
        let _ = std::fs::remove_file(&sock);
        let child = Command::new("ovsdb-server")
            .arg(format!("--remote=punix:{}", sock.display()))
            .arg("--no-chdir")
            .arg(format!("--unixctl={}", dir.join("ctl").display()))
            .arg(format!(
                "--log-file={}",
                dir.join("ovsdb-server.log").display()
            ))
            .arg(db)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if UnixStream::connect(&sock).is_ok() {
                return Ok(Server {
                    child,
                    sock,
                    db: db.to_path_buf(),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "ovsdb-server did not start",
        ))
    }

    pub fn remote(&self) -> String {
        format!("unix:{}", self.sock.display())
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs a command and returns its stdout, panicking with stderr on failure.
pub fn run(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd}: {e}"));
    if !out.status.success() {
        panic!(
            "{cmd} {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}
