//! Scenario files: plain text, `key = value` lines, `#` comments, and three
//! sections: `[knobs]` (any knob, see [`Knobs::set`]), `[workload]` and
//! `[faults]`. Top-level keys: `name`, `description`, `profile`, `until_ms`,
//! `settle_ms`.
//!
//! ```text
//! name = leader-kill
//! profile = v3.1
//! until_ms = 20000
//! [knobs]
//! election_timer = 1000
//! [workload]
//! type = none
//! [faults]
//! kill_leader_random 5000 10000
//! ```
//!
//! Workload keys: `type = closed | open | none`, `via = leader | follower |
//! sN | relay | rN` (`relay` is r1; `--set via=…` overrides it), `rate` (writes/s, open loop), `start_ms` (default: 50 ms after the
//! first leader), `comment_prefix`, and one `op = …` line per step, in order:
//! `op = init`, `op = pg-add`, `op = ls-add * n` (n = the knob or a number,
//! `forever` for open loops), `op = acl-add * n`, `op = acl-del-all 10`,
//! `op = pg-del`, `op = lsp-add * n`.
//!
//! Fault lines (times in ms of simulated time): `at T kill TARGET`,
//! `at T restart TARGET`, `at T partition A,B | C,D`, `at T cut A -> B`
//! (one way), `at T link_delay A -> B MS` (extra one-way delay), `at T heal`
//! (all links up, no loss, no extra delay), `at T loss P`, `at T pause TARGET MS`,
//! `at T slow_disk TARGET FACTOR`, `at T transfer`, `at T election_timer MS`,
//! `at T join sN`, `at T leave TARGET`, `at T compact TARGET`,
//! `kill_leader_random T1 T2` (kill the leader at a uniform time in [T1,T2)).
//! TARGET is `sN` (1-based), `leader` or `follower`; `kill` and `restart`
//! also take a relay `rN`.
//!
//! Relays (`crate::relay`): the knob `relays = N` puts N relay servers in
//! front of the cluster. Relay k's remotes are all members, starting at
//! member k mod n (round-robin); with `relay_chain = true` relay k+1's only
//! remote is relay k instead (r1 still uses the members), so a client via
//! the last relay crosses every hop. A relay whose source dies connects to
//! its next remote and asks for the changes since its last transaction.

use crate::knobs::{Knobs, Profile};
use crate::relay::Node;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    Server(usize),
    Leader,
    Follower,
    /// A relay server (`rN`); only `kill` and `restart` act on one.
    Relay(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub enum FaultAction {
    Kill(Target),
    Restart(Target),
    /// Every link between the two groups, both ways. Members (`sN`) and
    /// relays (`rN`) alike.
    Partition(Vec<Node>, Vec<Node>),
    /// The link A -> B only.
    Cut(Node, Node),
    Heal,
    /// Each message is lost with this probability: on a member link a lost
    /// message resets the connection, on a relay hop it costs
    /// retransmission time.
    Loss(f64),
    /// Extra one-way delay on the link A -> B, µs.
    LinkDelay(Node, Node, u64),
    Pause(Target, u64),
    SlowDisk(Target, f64),
    Transfer,
    ElectionTimer(u64),
    Join(usize),
    Leave(Target),
    Compact(Target),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// Time in µs, or a random window [at, at_max).
    pub at: u64,
    pub at_max: Option<u64>,
    pub action: FaultAction,
}

#[derive(Clone, Debug, PartialEq)]
pub enum OpSpec {
    Init,
    PgAdd,
    PgDel,
    LsAdd(Count),
    AclAdd(Count),
    AclDelAll(u64),
    LspAdd(Count),
    /// ovn-heater's pod: `lsp-add` on the switches in turn (port k on the
    /// (k-1) mod S-th of the S switches made so far), as each node's pods go
    /// to that node's own switch.
    PodAdd(Count),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Count {
    N,
    Fixed(u64),
    Forever,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Via {
    Leader,
    Follower,
    Server(usize),
    /// Through relay `rN` (0-based here; `relay` is r1).
    Relay(usize),
}

impl Via {
    /// `leader`, `follower`, `sN`, `relay` (= `r1`) or `rN`.
    pub fn parse(s: &str) -> Result<Via, String> {
        match s {
            "leader" => Ok(Via::Leader),
            "follower" => Ok(Via::Follower),
            "relay" => Ok(Via::Relay(0)),
            s if s.starts_with('r') => relay(s).map(Via::Relay),
            s => server(s).map(Via::Server),
        }
    }
}

fn relay(s: &str) -> Result<usize, String> {
    let n: usize = s
        .strip_prefix('r')
        .and_then(|x| x.parse().ok())
        .ok_or_else(|| format!("'{s}' is not a relay name like r1"))?;
    if !(1..=crate::relay::MAX_RELAYS).contains(&n) {
        return Err(format!("relay {s} out of range r1..r16"));
    }
    Ok(n - 1)
}

#[derive(Clone, Debug, PartialEq)]
pub enum WorkloadKind {
    None,
    Closed,
    Open { rate: f64 },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    pub kind: WorkloadKind,
    pub via: Via,
    pub start_ms: Option<u64>,
    pub comment_prefix: String,
    pub ops: Vec<OpSpec>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub profile: Profile,
    /// Knob overrides in file order (applied on top of the profile).
    pub knobs: Vec<(String, String)>,
    pub workload: Workload,
    pub faults: Vec<Fault>,
    pub until_ms: u64,
    pub settle_ms: u64,
}

fn target(s: &str) -> Result<Target, String> {
    match s {
        "leader" => Ok(Target::Leader),
        "follower" => Ok(Target::Follower),
        _ if s.starts_with('r') => relay(s).map(Target::Relay),
        _ => server(s).map(Target::Server),
    }
}

/// A member (`s1`) or a relay (`r1`): one end of a link.
fn node(s: &str) -> Result<Node, String> {
    if s.starts_with('r') {
        relay(s).map(Node::Relay)
    } else {
        server(s).map(Node::Member)
    }
}

fn server(s: &str) -> Result<usize, String> {
    let n: usize = s
        .strip_prefix('s')
        .and_then(|x| x.parse().ok())
        .ok_or_else(|| format!("'{s}' is not a server name like s1"))?;
    if !(1..=16).contains(&n) {
        return Err(format!("server {s} out of range s1..s16"));
    }
    Ok(n - 1)
}

/// `t_us` as milliseconds with up to 3 decimals (`5230.5`), as scenario
/// times are written.
pub fn fmt_ms(t_us: u64) -> String {
    let ms = t_us / 1000;
    let frac = t_us % 1000;
    if frac == 0 {
        ms.to_string()
    } else {
        let f = format!("{frac:03}");
        format!("{ms}.{}", f.trim_end_matches('0'))
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Server(i) => write!(f, "s{}", i + 1),
            Target::Leader => f.write_str("leader"),
            Target::Follower => f.write_str("follower"),
            Target::Relay(k) => write!(f, "r{}", k + 1),
        }
    }
}

impl std::fmt::Display for FaultAction {
    /// The action as a fault line writes it (the scenario parser reads it
    /// back as the same action).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |v: &[Node]| v.iter().map(Node::to_string).collect::<Vec<_>>().join(",");
        match self {
            FaultAction::Kill(t) => write!(f, "kill {t}"),
            FaultAction::Restart(t) => write!(f, "restart {t}"),
            FaultAction::Partition(a, b) => write!(f, "partition {} | {}", list(a), list(b)),
            FaultAction::Cut(a, b) => write!(f, "cut {a} -> {b}"),
            FaultAction::Heal => f.write_str("heal"),
            FaultAction::Loss(p) => write!(f, "loss {p}"),
            FaultAction::LinkDelay(a, b, us) => {
                write!(f, "link_delay {a} -> {b} {}", fmt_ms(*us))
            }
            FaultAction::Pause(t, us) => write!(f, "pause {t} {}", fmt_ms(*us)),
            FaultAction::SlowDisk(t, x) => write!(f, "slow_disk {t} {x}"),
            FaultAction::Transfer => f.write_str("transfer"),
            FaultAction::ElectionTimer(ms) => write!(f, "election_timer {ms}"),
            FaultAction::Join(i) => write!(f, "join s{}", i + 1),
            FaultAction::Leave(t) => write!(f, "leave {t}"),
            FaultAction::Compact(t) => write!(f, "compact {t}"),
        }
    }
}

impl Fault {
    /// An action at `at_us`.
    pub fn at(at_us: u64, action: FaultAction) -> Fault {
        Fault {
            at: at_us,
            at_max: None,
            action,
        }
    }

    /// The fault as a line of a `[faults]` section.
    pub fn to_line(&self) -> String {
        match (self.at_max, &self.action) {
            (Some(max), FaultAction::Kill(Target::Leader)) => {
                format!("kill_leader_random {} {}", fmt_ms(self.at), fmt_ms(max))
            }
            _ => format!("at {} {}", fmt_ms(self.at), self.action),
        }
    }
}

fn ms(s: &str) -> Result<u64, String> {
    let f: f64 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a time in ms"))?;
    if !(0.0..=1e10).contains(&f) {
        return Err(format!("time {s} out of range"));
    }
    Ok((f * 1000.0).round() as u64)
}

fn count(s: Option<&str>) -> Result<Count, String> {
    match s.map(str::trim) {
        None => Ok(Count::Fixed(1)),
        Some("n") => Ok(Count::N),
        Some("forever") => Ok(Count::Forever),
        Some(x) => x
            .parse()
            .map(Count::Fixed)
            .map_err(|_| format!("bad count '{x}'")),
    }
}

impl Scenario {
    pub fn parse(text: &str) -> Result<Scenario, String> {
        let mut sc = Scenario {
            name: String::new(),
            description: String::new(),
            profile: Profile::V3_1,
            knobs: Vec::new(),
            workload: Workload {
                kind: WorkloadKind::None,
                via: Via::Leader,
                start_ms: None,
                comment_prefix: "ovn-nbctl: ovn-nbctl --db=unix:s1.sock,unix:s2.sock,unix:s3.sock"
                    .into(),
                ops: Vec::new(),
            },
            faults: Vec::new(),
            until_ms: 60_000,
            settle_ms: 1_000,
        };
        let mut section = "";
        for (ln, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let err = |m: String| format!("line {}: {m}", ln + 1);
            if line.starts_with('[') && line.ends_with(']') {
                section = match &line[1..line.len() - 1] {
                    "knobs" => "knobs",
                    "workload" => "workload",
                    "faults" => "faults",
                    other => return Err(err(format!("unknown section [{other}]"))),
                };
                continue;
            }
            if section == "faults" {
                sc.faults.push(Self::fault(line).map_err(err)?);
                continue;
            }
            let (k, v) = line
                .split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| err("expected key = value".into()))?;
            match section {
                "knobs" => {
                    // Validate now so errors name the line.
                    let mut probe = Knobs::for_profile(sc.profile);
                    probe.set(k, v).map_err(err)?;
                    sc.knobs.push((k.to_string(), v.to_string()));
                }
                "workload" => match k {
                    "type" => {
                        sc.workload.kind = match v {
                            "none" => WorkloadKind::None,
                            "closed" => WorkloadKind::Closed,
                            "open" => WorkloadKind::Open { rate: 10.0 },
                            _ => return Err(err("type: none|closed|open".into())),
                        }
                    }
                    "rate" => {
                        let r: f64 = v.parse().map_err(|_| err("bad rate".into()))?;
                        if !(r > 0.0 && r < 1e6) {
                            return Err(err("rate out of range".into()));
                        }
                        sc.workload.kind = WorkloadKind::Open { rate: r };
                    }
                    "via" => sc.workload.via = Via::parse(v).map_err(err)?,
                    "start_ms" => sc.workload.start_ms = Some(ms(v).map_err(err)? / 1000),
                    "comment_prefix" => sc.workload.comment_prefix = v.to_string(),
                    "op" => {
                        let (name, rest) = match v.split_once('*') {
                            Some((a, b)) => (a.trim(), Some(b)),
                            None => (v, None),
                        };
                        let mut words = name.split_whitespace();
                        let op = match words.next() {
                            Some("init") => OpSpec::Init,
                            Some("pg-add") => OpSpec::PgAdd,
                            Some("pg-del") => OpSpec::PgDel,
                            Some("ls-add") => OpSpec::LsAdd(count(rest).map_err(err)?),
                            Some("acl-add") => OpSpec::AclAdd(count(rest).map_err(err)?),
                            Some("lsp-add") => OpSpec::LspAdd(count(rest).map_err(err)?),
                            Some("pod-add") => OpSpec::PodAdd(count(rest).map_err(err)?),
                            Some("acl-del-all") => {
                                let b = words
                                    .next()
                                    .and_then(|x| x.parse().ok())
                                    .filter(|b| *b > 0)
                                    .ok_or_else(|| err("acl-del-all BATCH".into()))?;
                                OpSpec::AclDelAll(b)
                            }
                            _ => return Err(err(format!("unknown op '{v}'"))),
                        };
                        sc.workload.ops.push(op);
                    }
                    _ => return Err(err(format!("unknown workload key '{k}'"))),
                },
                _ => match k {
                    "name" => sc.name = v.to_string(),
                    "description" => sc.description = v.to_string(),
                    "profile" => {
                        sc.profile = Profile::parse(v)
                            .ok_or_else(|| err(format!("unknown profile '{v}'")))?
                    }
                    "until_ms" => sc.until_ms = ms(v).map_err(err)? / 1000,
                    "settle_ms" => sc.settle_ms = ms(v).map_err(err)? / 1000,
                    _ => return Err(err(format!("unknown key '{k}'"))),
                },
            }
        }
        Ok(sc)
    }

    /// Reads one line of a `[faults]` section (what [`Fault::to_line`]
    /// writes).
    pub fn fault(line: &str) -> Result<Fault, String> {
        let w: Vec<&str> = line.split_whitespace().collect();
        let arg = |i: usize| {
            w.get(i)
                .copied()
                .ok_or_else(|| format!("missing argument in '{line}'"))
        };
        if w.first() == Some(&"kill_leader_random") {
            return Ok(Fault {
                at: ms(arg(1)?)?,
                at_max: Some(ms(arg(2)?)?),
                action: FaultAction::Kill(Target::Leader),
            });
        }
        if w.first() != Some(&"at") {
            return Err(format!(
                "fault lines start with 'at T' or 'kill_leader_random': '{line}'"
            ));
        }
        let at = ms(arg(1)?)?;
        let action = match arg(2)? {
            "kill" => FaultAction::Kill(target(arg(3)?)?),
            "restart" => FaultAction::Restart(target(arg(3)?)?),
            "partition" => {
                let rest = w[3..].join(" ");
                let (a, b) = rest
                    .split_once('|')
                    .ok_or_else(|| "partition A,B | C".to_string())?;
                let list = |s: &str| -> Result<Vec<Node>, String> {
                    s.split([',', ' '])
                        .filter(|x| !x.is_empty())
                        .map(node)
                        .collect()
                };
                FaultAction::Partition(list(a)?, list(b)?)
            }
            "cut" => {
                if arg(4)? != "->" {
                    return Err("cut A -> B".into());
                }
                FaultAction::Cut(node(arg(3)?)?, node(arg(5)?)?)
            }
            "heal" => FaultAction::Heal,
            "link_delay" => {
                if arg(4)? != "->" {
                    return Err("link_delay A -> B MS".into());
                }
                FaultAction::LinkDelay(node(arg(3)?)?, node(arg(5)?)?, ms(arg(6)?)?)
            }
            "loss" => {
                let p: f64 = arg(3)?.parse().map_err(|_| "bad loss probability")?;
                if !(0.0..=1.0).contains(&p) {
                    return Err("loss must be within 0..1".into());
                }
                FaultAction::Loss(p)
            }
            "pause" => FaultAction::Pause(target(arg(3)?)?, ms(arg(4)?)?),
            "slow_disk" => {
                let f: f64 = arg(4)?.parse().map_err(|_| "bad factor")?;
                if !(0.0..=1e6).contains(&f) {
                    return Err("slow_disk factor out of range".into());
                }
                FaultAction::SlowDisk(target(arg(3)?)?, f)
            }
            "transfer" => FaultAction::Transfer,
            "election_timer" => FaultAction::ElectionTimer(ms(arg(3)?)? / 1000),
            "join" => FaultAction::Join(server(arg(3)?)?),
            "leave" => FaultAction::Leave(target(arg(3)?)?),
            "compact" => FaultAction::Compact(target(arg(3)?)?),
            other => return Err(format!("unknown fault '{other}'")),
        };
        Ok(Fault {
            at,
            at_max: None,
            action,
        })
    }

    /// Knobs for this scenario: the profile's (or `profile` override's)
    /// defaults, then the file's `[knobs]`, then `overrides` (CLI `--set`).
    pub fn knobs(
        &self,
        profile: Option<Profile>,
        overrides: &[(String, String)],
    ) -> Result<Knobs, String> {
        let mut k = Knobs::for_profile(profile.unwrap_or(self.profile));
        for (n, v) in self.knobs.iter().chain(overrides) {
            k.set(n, v)?;
        }
        Ok(k)
    }
}

/// One list of the preset scenario files (scenarios/NAME.scn), seen two
/// ways: [`PRESETS`] with their texts, embedded so that the web build needs
/// no file access, and [`PRESET_NAMES`] alone, for the page, which lists
/// them and gets a text from the worker's run (`simview::RunResult`), so
/// that it carries none of the texts.
macro_rules! presets {
    ($($name:literal),* $(,)?) => {
        pub const PRESETS: &[(&str, &str)] = &[
            $(($name, include_str!(concat!("../../../scenarios/", $name, ".scn"))),)*
        ];
        pub const PRESET_NAMES: &[&str] = &[$($name),*];
    };
}

presets!(
    "ls-add-follower",
    "ls-add-leader",
    "acl-portgroup",
    "leader-kill",
    "leader-kill-5",
    "election-timer",
    "membership",
    "relay-write",
    "relay-write-5",
    "relay-chain",
    "compaction-hours",
    "sb-bringup",
    "write-changed-only",
    "route-status",
);

pub fn preset(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}
