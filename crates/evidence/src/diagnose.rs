//! One diagnosis from everything collected: the database files' timeline,
//! each server's joined log, last `cluster/status` and `memory/show`, which
//! input belongs to which server, and the findings.
//!
//! Matching inputs to servers goes by what they say, in this order:
//! 1. a database file's header names its server (full server ID) and cluster;
//! 2. `cluster/status` names its server, address and cluster;
//! 3. a log names its server in `local server ID is 5db5` (or, when that
//!    line was rotated away, it is the one known server whose address the
//!    log never dials); rotated parts (`x.log`, `x.log.1`, `x.log.2.gz`) are
//!    joined in time order first;
//! 4. what names nothing (`memory/show`, a log part without that line) joins
//!    the server whose other inputs sit in the same folder, or share its name
//!    stem (`s1.memory-show.txt` with `s1.db`).
//!
//! Identical inputs (the same database file as `leader_nbdb.gz` and inside
//! `cluster.tar.gz`) are used once; the copies are listed as ignored.

use std::collections::BTreeMap;

use ovsdb::json::{Json, Object};

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

use crate::collect::{Collected, Hostname, Ignored, InputKind, Item};
use crate::databases::{Databases, DatabasesRead};
use crate::events::{Event, EventKind};
use crate::findings::{self, Finding, Knobs, ServerInput, Severity};
use crate::log::{self, LogFile};
use crate::memory;
use crate::status::{self, ClusterStatus};

/// One input that was used, and whose it is.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct InputUse {
    pub path: String,
    pub kind: InputKind,
    /// Index into [`Diagnosis::servers`].
    pub server: Option<usize>,
    pub bytes: u64,
}

/// What is known of one server.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, Default)]
pub struct Server {
    /// 4-hex short ID ("" when no input names it).
    pub short: String,
    /// Full server ID, from a file header or `cluster/status`.
    pub server_id: Option<String>,
    pub address: Option<String>,
    /// Display name: the file the server's inputs came from, or the host
    /// name or folder of a well-known file (`ovnnb_db.db` in a sosreport).
    pub name: String,
    /// Lane of its database file in [`Diagnosis::timeline`].
    pub lane: Option<usize>,
    /// Its log parts in time order (paths), and the joined log.
    pub log_parts: Vec<String>,
    pub log: Option<LogFile>,
    /// The joined log's bytes, for the lines findings cite (not serialized:
    /// the web worker keeps them and serves lines on request).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub log_text: Vec<u8>,
    /// Where each part (in the joined order) starts in `log_text`.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub log_part_base: Vec<usize>,
    pub status: Option<ClusterStatus>,
    pub memory: Option<Vec<(String, u64)>>,
    /// Index into [`Diagnosis::clusters`]: the cluster its inputs name
    /// (`None` when nothing ties it to one).
    pub cluster: Option<usize>,
}

impl Server {
    /// Role and term: from `cluster/status`, else the log's last word on
    /// them, else the last term the server's database file records (a
    /// server writes each new term to its file before it acts in it; a
    /// file does not say the role).
    pub fn role_term(&self, timeline: &timeline::Timeline) -> (Option<String>, Option<u64>) {
        if let Some(st) = &self.status {
            return (Some(st.role.clone()), Some(st.term));
        }
        let mut role = None;
        let mut term = None;
        for e in self.log.iter().flat_map(|l| &l.events) {
            match &e.kind {
                EventKind::ElectionWon { term: t, .. } => {
                    role = Some("leader");
                    term = Some(*t);
                }
                EventKind::ElectionStarted { term: t, .. } => {
                    role = Some("candidate");
                    term = Some(*t);
                }
                EventKind::LeaderIs { sid, term: t } => {
                    role = Some(if *sid == self.short {
                        "leader"
                    } else {
                        "follower"
                    });
                    term = Some(*t);
                }
                _ => {}
            }
        }
        if term.is_none() {
            term = self
                .lane
                .and_then(|l| timeline.lanes.get(l))
                .filter(|l| l.clustered)
                .and_then(|l| l.bands.iter().map(|b| b.term).max());
        }
        (role.map(str::to_string), term)
    }

    /// How the server is named in output: its short ID, or its name when
    /// no input says its ID.
    pub fn label(&self) -> String {
        if self.short.is_empty() {
            self.name.clone()
        } else {
            self.short.clone()
        }
    }

    /// Text of line `line` of the joined log (at most 4 KiB), read back
    /// through the log's line index.
    pub fn line_text(&self, line: u64) -> Option<String> {
        let log = self.log.as_ref()?;
        let li = log.index.get(usize::try_from(line).ok()?)?;
        let start = self.log_part_base.get(li.part as usize)? + usize::try_from(li.offset).ok()?;
        let end = start.checked_add((li.len as usize).min(4096))?;
        let bytes = self.log_text.get(start..end.min(self.log_text.len()))?;
        Some(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// One Raft cluster of the inputs (a must-gather holds the Northbound and
/// the Southbound clusters): the servers whose inputs name it, analysed
/// together and apart from every other cluster.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cluster {
    /// The full cluster ID when a file header or `cluster/status` gives it,
    /// else the 4-hex short ID a log names.
    pub id: String,
    /// The database (`OVN_Northbound`), when an input names it.
    pub database: Option<String>,
    /// Indexes into [`Diagnosis::servers`].
    pub servers: Vec<usize>,
}

impl Cluster {
    /// `196d OVN_Northbound`, or `196d` when the database is unknown.
    pub fn label(&self) -> String {
        let short = short_of(&self.id);
        match &self.database {
            Some(db) => format!("{short} {db}"),
            None => short,
        }
    }
}

/// The whole diagnosis.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug)]
pub struct Diagnosis {
    pub inputs: Vec<InputUse>,
    pub ignored: Vec<Ignored>,
    pub servers: Vec<Server>,
    /// The clusters the inputs name, each with its servers; every finding
    /// about a cluster says which ([`Finding::cluster`]).
    pub clusters: Vec<Cluster>,
    pub timeline: timeline::Timeline,
    pub findings: Vec<Finding>,
}

fn stem(path: &str) -> &str {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.split('.').next().unwrap_or(file)
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// The first path component below an archive or folder that differs
/// between servers (`cluster.tar.gz/s1/var/...` → `cluster.tar.gz/s1`):
/// the longest common prefix of two paths, as folders.
fn common_dirs(a: &str, b: &str) -> usize {
    a.split('/')
        .zip(b.split('/'))
        .take_while(|(x, y)| x == y)
        .count()
}

fn short_of(s: &str) -> String {
    s.chars().take(4).collect()
}

fn generic_stem(s: &str) -> bool {
    matches!(
        s,
        "ovnnb_db" | "ovnsb_db" | "conf" | "ovsdb-server-nb" | "ovsdb-server-sb" | "ovsdb-server"
    ) || s.starts_with("ovs-appctl")
}

/// A display name for a server from one of its paths: the file's own
/// name (`s1` of `s1.db`), else (a well-known name such as `ovnnb_db.db`)
/// the host name of the folder it sits in (a sosreport's `etc/hostname`),
/// else that folder's name.
fn name_for(path: &str, hostnames: &[Hostname]) -> String {
    let s = stem(path);
    if !generic_stem(s) {
        return s.to_string();
    }
    if let Some(host) = Hostname::of(hostnames, path) {
        return host.to_string();
    }
    // Name it by the first folder that is not a well-known system path.
    let parts: Vec<&str> = path.split('/').collect();
    for p in parts.iter().rev().skip(1) {
        if !matches!(
            *p,
            "var"
                | "lib"
                | "log"
                | "ovn"
                | "openvswitch"
                | "etc"
                | "run"
                | "sos_commands"
                | "ovn_central"
                | ""
        ) {
            return p.to_string();
        }
    }
    s.to_string()
}

/// How [`diagnose`] runs.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub knobs: Knobs,
    /// Leave the cluster check of the files out (it runs in the files' one
    /// walk otherwise).
    pub skip_check: bool,
}

/// Builds the diagnosis with default knobs. `progress` gets the database
/// bytes read so far.
pub fn diagnose(collected: Collected, knobs: &Knobs, progress: &mut dyn FnMut(u64)) -> Diagnosis {
    diagnose_with(
        collected,
        &Options {
            knobs: knobs.clone(),
            skip_check: false,
        },
        progress,
    )
}

/// Builds the diagnosis of inputs collected in memory: their database
/// files are read here, one walk each (see [`diagnose_read`] for files
/// streamed by the collector into a [`Databases`]).
pub fn diagnose_with(
    collected: Collected,
    opts: &Options,
    progress: &mut dyn FnMut(u64),
) -> Diagnosis {
    let Collected {
        items,
        ignored,
        streamed,
        hostnames,
    } = collected;
    let mut dbs = Databases::new(!opts.skip_check);
    let mut rest = Vec::with_capacity(items.len());
    let mut done = 0u64;
    for it in items {
        if it.kind == InputKind::Database {
            let base = done;
            dbs.add_bytes(&it.path, &it.bytes, &mut |n| progress(base + n));
            done += it.bytes.len() as u64;
        } else {
            rest.push(it);
        }
    }
    diagnose_read(
        Collected {
            items: rest,
            ignored,
            streamed,
            hostnames,
        },
        dbs.finish(),
        opts,
    )
}

/// Builds the diagnosis from the database files already read (`read`) and
/// the other inputs (`collected`; database items in it are not read).
pub fn diagnose_read(collected: Collected, read: DatabasesRead, opts: &Options) -> Diagnosis {
    let knobs = &opts.knobs;
    let Collected {
        items,
        mut ignored,
        hostnames,
        ..
    } = collected;
    let name_for = |path: &str| name_for(path, &hostnames);
    // Identical copies: use the first.
    let mut seen: BTreeMap<(u64, [u8; 20]), String> = BTreeMap::new();
    let mut unique: Vec<Item> = Vec::new();
    for it in items {
        if it.kind == InputKind::Database {
            continue;
        }
        // memory/show and coverage/show carry no identity: two servers may
        // well print the same figures.
        if matches!(it.kind, InputKind::MemoryShow | InputKind::CoverageShow) {
            unique.push(it);
            continue;
        }
        let key = (it.bytes.len() as u64, ovsdb_log::framing::sha1(&it.bytes));
        if let Some(first) = seen.get(&key) {
            ignored.push(Ignored {
                path: it.path,
                reason: format!("same content as {first}, used once"),
            });
            continue;
        }
        seen.insert(key, it.path.clone());
        unique.push(it);
    }

    let mut servers: Vec<Server> = Vec::new();
    let mut inputs: Vec<InputUse> = Vec::new();
    let find_short = |servers: &[Server], sid: &str| {
        servers.iter().position(|s| {
            !s.short.is_empty()
                && !sid.is_empty()
                && (s.short.starts_with(sid) || sid.starts_with(&s.short))
        })
    };

    // 1. Database files.
    let DatabasesRead {
        timeline,
        files,
        ignored: db_ignored,
        ..
    } = read;
    ignored.extend(db_ignored);
    for f in &files {
        let lane_i = f.lane;
        let Some(lane) = timeline.lanes.get(lane_i) else {
            continue;
        };
        // A file of which not even the first record could be read (a
        // damaged header, CRLF line ends) gave nothing: it is listed as
        // unreadable with where and why, not as used (its damaged-file
        // finding stays).
        if lane.summary.records == 0 {
            let why = lane.truncated.as_ref().map_or(String::new(), |t| {
                format!(
                    ": record {} at byte offset {}: {}",
                    t.record, t.offset, t.reason
                )
            });
            ignored.push(Ignored {
                path: f.path.clone(),
                reason: format!("damaged, unreadable{why}"),
            });
            continue;
        }
        let server = match &lane.summary.server_id {
            Some(id) => {
                let short = short_of(id);
                let k = match find_short(&servers, &short) {
                    Some(k) => k,
                    None => {
                        servers.push(Server {
                            short,
                            server_id: Some(id.clone()),
                            name: name_for(&f.path),
                            ..Default::default()
                        });
                        servers.len() - 1
                    }
                };
                let s = &mut servers[k];
                s.lane.get_or_insert(lane_i);
                if s.address.is_none() {
                    s.address = lane.summary.local_address.clone();
                }
                Some(k)
            }
            None => None,
        };
        inputs.push(InputUse {
            path: f.path.clone(),
            kind: InputKind::Database,
            server,
            bytes: f.bytes,
        });
    }

    // 2. cluster/status.
    for item in unique.iter().filter(|i| i.kind == InputKind::ClusterStatus) {
        let text = String::from_utf8_lossy(&item.bytes);
        if text.matches("Cluster ID:").count() > 1 {
            ignored.push(Ignored {
                path: item.path.clone(),
                reason: "several cluster/status outputs in one file; give each server's last one"
                    .into(),
            });
            continue;
        }
        let Some(st) = status::parse_cluster_status(&text) else {
            ignored.push(Ignored {
                path: item.path.clone(),
                reason: "cluster/status text that could not be read (an error reply?)".into(),
            });
            continue;
        };
        let k = match find_short(&servers, &st.sid) {
            Some(k) => k,
            None => {
                servers.push(Server {
                    short: st.sid.clone(),
                    name: name_for(&item.path),
                    ..Default::default()
                });
                servers.len() - 1
            }
        };
        let s = &mut servers[k];
        if s.server_id.is_none() {
            s.server_id = st.server_id.clone();
        }
        if s.address.is_none() && !st.address.is_empty() {
            s.address = Some(st.address.clone());
        }
        s.status = Some(st);
        inputs.push(InputUse {
            path: item.path.clone(),
            kind: InputKind::ClusterStatus,
            server: Some(k),
            bytes: item.bytes.len() as u64,
        });
    }

    // 3. Logs: group rotated parts (oldest first), read each part once,
    // join them in time order, match.
    for group in crate::collect::log_groups(&unique) {
        let items: Vec<&Item> = group.parts.iter().map(|&i| &unique[i]).collect();
        let joined = log::join(items.iter().map(|i| log::read_log(&i.bytes)).collect());
        // The joined text, part after part in the joined order, so that
        // line n of the joined log is where its index says.
        let mut text = Vec::new();
        let mut part_base = Vec::with_capacity(joined.parts.len());
        let mut paths = Vec::with_capacity(joined.parts.len());
        let mut sizes = Vec::with_capacity(joined.parts.len());
        for p in &joined.parts {
            let item = items[p.source];
            part_base.push(text.len());
            paths.push(item.path.clone());
            sizes.push(item.bytes.len() as u64);
            text.extend_from_slice(&item.bytes);
            if !item.bytes.is_empty() && !item.bytes.ends_with(b"\n") {
                text.push(b'\n');
            }
        }
        let k = match joined.server_id.clone() {
            Some(sid) => find_short(&servers, &sid).unwrap_or_else(|| {
                servers.push(Server {
                    short: sid.clone(),
                    name: name_for(&paths[0]),
                    ..Default::default()
                });
                servers.len() - 1
            }),
            None => by_peer_addresses(&servers, &joined)
                .or_else(|| nearest_server(&servers, &inputs, &paths[0]))
                .unwrap_or_else(|| {
                    servers.push(Server {
                        name: name_for(&paths[0]),
                        ..Default::default()
                    });
                    servers.len() - 1
                }),
        };
        for (p, bytes) in paths.iter().zip(sizes) {
            inputs.push(InputUse {
                path: p.clone(),
                kind: InputKind::ServerLog,
                server: Some(k),
                bytes,
            });
        }
        let s = &mut servers[k];
        s.log_parts = paths;
        s.log = Some(joined);
        s.log_text = text;
        s.log_part_base = part_base;
    }

    // 4. memory/show and coverage/show: by folder or name stem.
    for item in unique
        .iter()
        .filter(|i| matches!(i.kind, InputKind::MemoryShow | InputKind::CoverageShow))
    {
        let k = nearest_server(&servers, &inputs, &item.path);
        if item.kind == InputKind::MemoryShow {
            if let (Some(k), Some(m)) = (
                k,
                memory::parse_memory_show(&String::from_utf8_lossy(&item.bytes)),
            ) {
                servers[k].memory = Some(m);
            }
        }
        inputs.push(InputUse {
            path: item.path.clone(),
            kind: item.kind,
            server: k,
            bytes: item.bytes.len() as u64,
        });
    }

    let clusters = group_clusters(&mut servers, &timeline);
    let empty: Vec<Event> = Vec::new();
    let all: Vec<ServerInput<'_>> = servers
        .iter()
        .map(|s| ServerInput {
            short: s.short.clone(),
            name: s.name.clone(),
            address: s.address.clone(),
            events: s.log.as_ref().map_or(&empty[..], |l| &l.events[..]),
            status: s.status.as_ref(),
            lane: s.lane.and_then(|i| timeline.lanes.get(i)),
        })
        .collect();
    // Each cluster on its own: a leader of one cluster never follows a
    // leader of another. A server nothing ties to a cluster is analysed
    // alone when clusters are known (with none known, all are one).
    let mut groups: Vec<(Option<usize>, Vec<usize>)> = clusters
        .iter()
        .enumerate()
        .map(|(c, cl)| (Some(c), cl.servers.clone()))
        .collect();
    let untied = (0..servers.len()).filter(|&k| servers[k].cluster.is_none());
    if clusters.is_empty() {
        groups.push((None, untied.collect()));
    } else {
        groups.extend(untied.map(|k| (None, vec![k])));
    }
    let mut found = Vec::new();
    for (cluster, members) in groups {
        let views: Vec<ServerInput<'_>> = members.iter().map(|&k| all[k].clone()).collect();
        for mut f in findings::find(&views, knobs) {
            f.server = f.server.map(|i| members[i]);
            for r in &mut f.evidence {
                r.server = members[r.server];
            }
            f.cluster = cluster;
            found.push(f);
        }
    }
    found.extend(findings::damaged_files(
        timeline
            .lanes
            .iter()
            .enumerate()
            .map(|(l, lane)| (lane, servers.iter().position(|s| s.lane == Some(l)))),
    ));
    findings::sort(&mut found);
    drop(all);
    Diagnosis {
        inputs,
        ignored,
        servers,
        clusters,
        timeline,
        findings: found,
    }
}

/// What a server's inputs say of its cluster, best first: its file's
/// header, its `cluster/status`, its log (`learned cluster ID`, or the
/// cluster a membership line names). With the database's name when known.
fn named_cluster(s: &Server, tl: &timeline::Timeline) -> Option<(String, Option<String>)> {
    let lane = s.lane.and_then(|l| tl.lanes.get(l));
    let db = lane
        .map(|l| l.summary.database.clone())
        .filter(|d| !d.is_empty())
        .or_else(|| s.status.as_ref().map(|st| st.name.clone()))
        .filter(|d| !d.is_empty());
    let id = lane
        .and_then(|l| l.summary.cluster_id.clone())
        .or_else(|| {
            let st = s.status.as_ref()?;
            st.cluster_id
                .clone()
                .or_else(|| (!st.cluster_sid.is_empty()).then(|| st.cluster_sid.clone()))
        })
        .or_else(|| s.log.as_ref()?.cluster_id.clone())?;
    Some((id, db))
}

/// Who a server says its cluster's members are, as short IDs and
/// addresses: itself, its file's configurations, its status, its log.
fn member_names(s: &Server, tl: &timeline::Timeline) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    if !s.short.is_empty() {
        v.push(s.short.clone());
    }
    if let Some(a) = &s.address {
        v.push(a.clone());
    }
    if let Some(l) = s.lane.and_then(|l| tl.lanes.get(l)) {
        for e in &l.entries {
            for (sid, addr) in e.servers.iter().flatten() {
                v.push(short_of(sid));
                v.push(addr.clone());
            }
        }
    }
    if let Some(st) = &s.status {
        for p in &st.servers {
            v.push(p.sid.clone());
            v.push(p.address.clone());
        }
    }
    if let Some(log) = &s.log {
        for (sid, addr) in &log.servers {
            v.push(sid.clone());
            v.push(addr.clone());
        }
    }
    v
}

/// Two cluster IDs are the same cluster when one is a prefix of the other
/// (a log names the 4-hex short ID, a file header the full UUID).
fn same_id(a: &str, b: &str) -> bool {
    !a.is_empty() && !b.is_empty() && (a.starts_with(b) || b.starts_with(a))
}

/// Groups the servers by cluster and sets each server's `cluster`. A server
/// whose inputs name no cluster joins the one cluster whose members (server
/// IDs and addresses, from the files' configurations, the statuses and the
/// logs) include it or the peers its log names.
fn group_clusters(servers: &mut [Server], tl: &timeline::Timeline) -> Vec<Cluster> {
    let mut clusters: Vec<Cluster> = Vec::new();
    for (k, server) in servers.iter_mut().enumerate() {
        let Some((id, db)) = named_cluster(server, tl) else {
            continue;
        };
        let c = match clusters.iter().position(|c| same_id(&c.id, &id)) {
            Some(c) => c,
            None => {
                clusters.push(Cluster::default());
                clusters.len() - 1
            }
        };
        let cl = &mut clusters[c];
        if id.len() > cl.id.len() {
            cl.id = id;
        }
        if cl.database.is_none() {
            cl.database = db;
        }
        cl.servers.push(k);
        server.cluster = Some(c);
    }
    let names = |s: &Server| member_names(s, tl);
    let mut members: Vec<Vec<String>> = Vec::new();
    for c in &clusters {
        let mut m = Vec::new();
        for &k in &c.servers {
            m.extend(names(&servers[k]));
        }
        members.push(m);
    }
    for (k, server) in servers.iter_mut().enumerate() {
        if server.cluster.is_some() {
            continue;
        }
        let own = names(server);
        let mut hits = (0..clusters.len()).filter(|&c| own.iter().any(|n| members[c].contains(n)));
        if let (Some(c), None) = (hits.next(), hits.next()) {
            clusters[c].servers.push(k);
            server.cluster = Some(c);
        }
    }
    clusters
}

/// A log that never names its own server (its first rotated part is gone)
/// still names the peers it connects to: the one known server whose
/// address it never dials is the log's own.
fn by_peer_addresses(servers: &[Server], log: &LogFile) -> Option<usize> {
    let dialed: Vec<&str> = log
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Connecting { peer } | EventKind::Connected { peer } => Some(peer.as_str()),
            EventKind::LearnedRemoteAddress { address, .. } => Some(address.as_str()),
            _ => None,
        })
        .collect();
    if dialed.is_empty() {
        return None;
    }
    let with_addr: Vec<usize> = (0..servers.len())
        .filter(|&k| servers[k].address.is_some())
        .collect();
    // Only when the log's peers are all servers we know.
    if !dialed.iter().all(|d| {
        with_addr
            .iter()
            .any(|&k| servers[k].address.as_deref() == Some(d))
    }) {
        return None;
    }
    let mut own = with_addr
        .into_iter()
        .filter(|&k| !dialed.contains(&servers[k].address.as_deref().unwrap_or("")));
    match (own.next(), own.next()) {
        (Some(k), None) => Some(k),
        _ => None,
    }
}

/// The server named by `path`'s stem (`s1.memory-show.txt` with `s1.db`),
/// else the one whose inputs share the most folders with `path`. Several
/// servers of one name (`s1` of two clusters) are told apart by folders.
fn nearest_server(servers: &[Server], inputs: &[InputUse], path: &str) -> Option<usize> {
    let st = stem(path);
    let named = |k: usize| !generic_stem(st) && servers[k].name == st;
    let mut by_stem = (0..servers.len()).filter(|&k| named(k));
    match (by_stem.next(), by_stem.next()) {
        (Some(k), None) => return Some(k),
        (Some(_), Some(_)) => return nearest_by_folder(inputs, path, &named),
        _ => {}
    }
    nearest_by_folder(inputs, path, &|_| true)
}

/// Among the servers `keep` accepts, the one whose inputs share the most
/// folders with `path` (none on a tie).
fn nearest_by_folder(
    inputs: &[InputUse],
    path: &str,
    keep: &dyn Fn(usize) -> bool,
) -> Option<usize> {
    let dir = parent(path);
    let mut best: Option<(usize, usize)> = None;
    let mut tie = false;
    for i in inputs {
        let Some(k) = i.server.filter(|&k| keep(k)) else {
            continue;
        };
        let d = common_dirs(dir, parent(&i.path));
        if d == 0 {
            continue;
        }
        match best {
            Some((bd, bk)) if d == bd && bk != k => tie = true,
            Some((bd, _)) if d <= bd => {}
            _ => {
                best = Some((d, k));
                tie = false;
            }
        }
    }
    if tie {
        return None;
    }
    best.map(|(_, k)| k)
}

impl Diagnosis {
    /// Exit status of `ovsdb-scope diagnose`: 1 when a finding is at
    /// warning or above, else 0.
    pub fn exit_code(&self) -> u8 {
        u8::from(
            self.findings
                .iter()
                .any(|f| f.severity >= Severity::Warning),
        )
    }

    /// The cluster a finding is about, as `196d OVN_Northbound` (or `""`).
    pub fn cluster_label(&self, f: &Finding) -> String {
        f.cluster
            .and_then(|c| self.clusters.get(c))
            .map_or(String::new(), Cluster::label)
    }

    /// Short ID of a finding's server (or `""`).
    pub fn server_short(&self, f: &Finding) -> String {
        f.server
            .and_then(|i| self.servers.get(i))
            .map_or(String::new(), Server::label)
    }

    /// The JSON of `ovsdb-scope diagnose --json`.
    pub fn to_json(&self) -> Json {
        let s = |v: Option<String>| v.map_or(Json::Null, Json::String);
        let u = |v: Option<u64>| v.map_or(Json::Null, |x| Json::Integer(x as i64));
        let mut o = Object::new();
        let inputs = self
            .inputs
            .iter()
            .map(|i| {
                let mut x = Object::new();
                x.push_unchecked("path", Json::String(i.path.clone()));
                x.push_unchecked("kind", Json::String(i.kind.name().into()));
                x.push_unchecked(
                    "server",
                    s(i.server
                        .map(|k| self.servers[k].short.clone())
                        .filter(|x| !x.is_empty())),
                );
                x.push_unchecked("bytes", Json::Integer(i.bytes as i64));
                Json::Object(x)
            })
            .collect();
        o.push_unchecked("inputs", Json::Array(inputs));
        let ignored = self
            .ignored
            .iter()
            .map(|i| {
                let mut x = Object::new();
                x.push_unchecked("path", Json::String(i.path.clone()));
                x.push_unchecked("reason", Json::String(i.reason.clone()));
                Json::Object(x)
            })
            .collect();
        o.push_unchecked("ignored", Json::Array(ignored));
        let servers = self
            .servers
            .iter()
            .map(|sv| {
                let (role, term) = sv.role_term(&self.timeline);
                let mut x = Object::new();
                x.push_unchecked("server_id", s(sv.server_id.clone()));
                x.push_unchecked("short", Json::String(sv.short.clone()));
                x.push_unchecked("name", Json::String(sv.name.clone()));
                x.push_unchecked("address", s(sv.address.clone()));
                x.push_unchecked("role", s(role));
                x.push_unchecked("term", u(term));
                x.push_unchecked(
                    "cluster",
                    s(sv.cluster.map(|c| self.clusters[c].id.clone())),
                );
                Json::Object(x)
            })
            .collect();
        o.push_unchecked("servers", Json::Array(servers));
        let clusters = self
            .clusters
            .iter()
            .map(|c| {
                let mut x = Object::new();
                x.push_unchecked("id", Json::String(c.id.clone()));
                x.push_unchecked("database", s(c.database.clone()));
                let members = c
                    .servers
                    .iter()
                    .map(|&k| Json::String(self.servers[k].label()))
                    .collect();
                x.push_unchecked("servers", Json::Array(members));
                Json::Object(x)
            })
            .collect();
        o.push_unchecked("clusters", Json::Array(clusters));
        let findings = self
            .findings
            .iter()
            .map(|f| {
                let mut x = Object::new();
                x.push_unchecked("kind", Json::String(f.kind.clone()));
                x.push_unchecked("severity", Json::String(f.severity.name().into()));
                let sv = self.server_short(f);
                x.push_unchecked(
                    "server",
                    if sv.is_empty() {
                        Json::Null
                    } else {
                        Json::String(sv)
                    },
                );
                let cl = f.cluster.and_then(|c| self.clusters.get(c));
                x.push_unchecked("cluster", s(cl.map(|c| c.id.clone())));
                x.push_unchecked("database", s(cl.and_then(|c| c.database.clone())));
                x.push_unchecked("time_ms", f.time_ms.map_or(Json::Null, Json::Integer));
                x.push_unchecked("term", u(f.term));
                x.push_unchecked("cause", s(f.cause.clone()));
                x.push_unchecked("duration_ms", u(f.duration_ms));
                x.push_unchecked("from", s(f.from.clone()));
                x.push_unchecked("to", s(f.to.clone()));
                x.push_unchecked("index", u(f.index));
                x.push_unchecked("summary", Json::String(f.summary.clone()));
                let ev = f
                    .evidence
                    .iter()
                    .map(|r| {
                        let sv = &self.servers[r.server];
                        let mut e = Object::new();
                        e.push_unchecked("server", Json::String(sv.label()));
                        e.push_unchecked("line", Json::Integer(r.line as i64 + 1));
                        e.push_unchecked("text", s(sv.line_text(r.line)));
                        Json::Object(e)
                    })
                    .collect();
                x.push_unchecked("evidence", Json::Array(ev));
                Json::Object(x)
            })
            .collect();
        o.push_unchecked("findings", Json::Array(findings));
        Json::Object(o)
    }

    /// The text `ovsdb-scope diagnose` prints.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "inputs ({} used, {} ignored):",
            self.inputs.len(),
            self.ignored.len()
        );
        let who = |i: &InputUse| {
            i.server
                .map(|k| {
                    let s = &self.servers[k];
                    if s.short.is_empty() {
                        s.name.clone()
                    } else {
                        format!("{} ({})", s.short, s.name)
                    }
                })
                .unwrap_or_else(|| "no server".into())
        };
        // Columns as wide as their longest value (a sosreport's folder
        // name is a server's name), so the paths and addresses line up.
        let ww = self
            .inputs
            .iter()
            .map(|i| who(i).len())
            .fold(10, usize::max);
        for i in &self.inputs {
            let _ = writeln!(out, "  {:<14} {:<ww$} {}", i.kind.name(), who(i), i.path);
        }
        for i in &self.ignored {
            let _ = writeln!(out, "  ignored        {}: {}", i.path, i.reason);
        }
        let _ = writeln!(out, "\nservers:");
        let nw = self
            .servers
            .iter()
            .map(|s| s.name.len())
            .fold(12, usize::max);
        for s in &self.servers {
            let (role, term) = s.role_term(&self.timeline);
            let _ = writeln!(
                out,
                "  {:<5} {:<nw$} {:<24} {:<10} term {}",
                if s.short.is_empty() { "?" } else { &s.short },
                s.name,
                s.address.as_deref().unwrap_or("-"),
                role.as_deref().unwrap_or("-"),
                term.map_or("-".to_string(), |t| t.to_string())
            );
        }
        if !self.clusters.is_empty() {
            let _ = writeln!(out, "\nclusters:");
            for c in &self.clusters {
                let members: Vec<String> =
                    c.servers.iter().map(|&k| self.servers[k].label()).collect();
                let _ = writeln!(out, "  {:<20} {}", c.label(), members.join(" "));
            }
        }
        // Each finding names its cluster when there is more than one.
        let several = self.clusters.len() > 1
            || (!self.clusters.is_empty() && self.servers.iter().any(|s| s.cluster.is_none()));
        let _ = writeln!(out, "\nfindings ({}):", self.findings.len());
        for f in &self.findings {
            let when = f
                .time_ms
                .map_or("-".to_string(), timeline::time::utc_datetime);
            let cluster = match f.cluster.and_then(|c| self.clusters.get(c)) {
                Some(c) if several => format!("[{}] ", c.label()),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "  {when}  {:<7} {:<19} {:<5} {cluster}{}",
                f.severity.name(),
                f.kind,
                self.server_short(f),
                f.summary
            );
            for r in f.evidence.iter().take(3) {
                let sv = &self.servers[r.server];
                if let Some(t) = sv.line_text(r.line) {
                    let _ = writeln!(out, "      {}:{}: {}", sv.name, r.line + 1, t);
                }
            }
        }
        out
    }
}
