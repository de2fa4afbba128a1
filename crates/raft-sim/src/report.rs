//! Figures of a run as dotted paths, JSON output (own small writer, no
//! serde in the core), aggregation over seeds and A/B comparison.

use crate::sim::{Metrics, Sim};
use std::fmt::Write as _;

/// One figure: dotted path (e.g. `txns.latency_ms.p99`) and value.
pub type Figure = (&'static str, Option<f64>);

fn pct(sorted: &[u64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1] as f64)
}

fn pctf(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The figures the CLI prints, in output order.
pub fn figures(m: &Metrics) -> Vec<Figure> {
    let mut lat = m.txn_latencies_us.clone();
    ovsdb::order::sort(&mut lat);
    let ms = |v: Option<f64>| v.map(|x| x / 1000.0);
    let mean = if lat.is_empty() {
        None
    } else {
        Some(lat.iter().sum::<u64>() as f64 / lat.len() as f64)
    };
    let mut figs = vec![
        ("sim_time_ms", Some(m.sim_time_us as f64 / 1000.0)),
        ("txns.count", Some(m.txn_count() as f64)),
        ("txns.total_ms", Some(m.txn_total_us() as f64 / 1000.0)),
        ("txns.latency_ms.mean", ms(mean)),
        ("txns.latency_ms.p50", ms(pct(&lat, 50.0))),
        ("txns.latency_ms.p99", ms(pct(&lat, 99.0))),
        ("txns.latency_ms.max", ms(lat.last().map(|x| *x as f64))),
        ("txns.rejected", Some(m.rejected as f64)),
        ("elections", Some(m.elections as f64)),
        ("terms", Some(m.max_term as f64)),
        ("leaderless_ms", Some(m.leaderless_us as f64 / 1000.0)),
        ("time_to_leader_ms", ms(m.time_to_leader_mean_us())),
        ("bytes.log_written", Some(m.log_written as f64)),
        (
            "bytes.log_written_other_mode",
            Some(m.log_written_alt as f64),
        ),
        ("bytes.sent", Some(m.bytes_sent as f64)),
        ("events", Some(m.events as f64)),
        ("heartbeats", Some(m.heartbeats as f64)),
        ("fsyncs", Some(m.fsyncs as f64)),
        ("prereq_failures", Some(m.prereq_failures as f64)),
        ("timeouts", Some(m.timeouts as f64)),
        ("early_acks", Some(m.early_acks as f64)),
    ];
    if m.relay.relays > 0 {
        figs.extend(relay_figures(m));
    }
    if m.scheduled_compactions > 0 {
        figs.extend(compaction_figures(m));
    }
    if m.sb.chassis > 0 {
        figs.extend(sb_figures(m));
    }
    figs
}

/// The Southbound clients' figures (only for runs with `chassis > 0`).
fn sb_figures(m: &Metrics) -> Vec<Figure> {
    let sb = &m.sb;
    let mut v = sb.bringup_us.clone();
    ovsdb::order::sort(&mut v);
    let mean = (!v.is_empty()).then(|| v.iter().sum::<u64>() as f64 / v.len() as f64);
    let ms = |x: Option<f64>| x.map(|x| x / 1000.0);
    let per = |x: &[u64]| x.iter().copied().max().map(|x| x as f64);
    let mut figs = vec![
        ("sb.chassis", Some(sb.chassis as f64)),
        ("sb.txns", Some(sb.txns as f64)),
        (
            "sb.northd.ports_per_txn.mean",
            (sb.txns > 0).then(|| sb.ports as f64 / sb.txns as f64),
        ),
        ("sb.northd.ports_per_txn.max", Some(sb.ports_max as f64)),
        ("sb.port_binding_bytes", Some(sb.port_binding_bytes as f64)),
        ("sb.update_bytes", Some(sb.update_bytes as f64)),
        ("sb.controller_bytes.max", per(&sb.received)),
        (
            "sb.controller_port_binding_bytes.max",
            per(&sb.port_binding_received),
        ),
        ("sb.cpu_ms", Some(sb.cpu_us / 1000.0)),
    ];
    // The second version's figures, only in runs that use its knobs.
    if sb.extended {
        let txns = sb.txns.max(1) as f64;
        figs.extend([
            ("sb.parse_cpu_ms", Some(sb.parse_us / 1000.0)),
            ("sb.server_cpu_ms", Some((sb.cpu_us + sb.parse_us) / 1000.0)),
            (
                "sb.northd.txn_bytes.mean",
                Some(sb.northd_txn_bytes as f64 / txns),
            ),
            (
                "sb.northd.txn_bytes.max",
                Some(sb.northd_txn_bytes_max as f64),
            ),
            (
                "sb.northd.reply_bytes.mean",
                Some(sb.northd_reply_bytes as f64 / txns),
            ),
            (
                "sb.northd.columns.mean",
                Some(sb.northd_columns as f64 / txns),
            ),
            (
                "sb.northd.build_ms.mean",
                Some(sb.northd_build_us / 1000.0 / txns),
            ),
            ("sb.status_txns", Some(sb.status_txns as f64)),
            ("sb.status_bytes", Some(sb.status_bytes as f64)),
            ("sb.db_bytes", Some(sb.db_bytes as f64)),
            ("sb.peak_mem_bytes", Some(sb.peak_mem_bytes as f64)),
        ]);
    }
    figs.extend([
        ("bringup.ms.mean", ms(mean)),
        ("bringup.ms.p50", ms(pct(&v, 50.0))),
        ("bringup.ms.p99", ms(pct(&v, 99.0))),
        ("reconnect.clients", Some(sb.reconnects as f64)),
        ("reconnect.bytes", Some(sb.download_bytes as f64)),
        (
            "reconnect.converge_ms",
            ms(sb.converge_us.iter().copied().max().map(|x| x as f64)),
        ),
    ]);
    figs
}

/// `compactions.sN` for servers 1..9.
const COMPACTIONS_PER_SERVER: [&str; 9] = [
    "compactions.s1",
    "compactions.s2",
    "compactions.s3",
    "compactions.s4",
    "compactions.s5",
    "compactions.s6",
    "compactions.s7",
    "compactions.s8",
    "compactions.s9",
];

/// Leader changes and compactions (only for runs in which the snapshot
/// scheduler compacted, so that short runs keep their figures).
fn compaction_figures(m: &Metrics) -> Vec<Figure> {
    let changes = m.leader_changes() as f64;
    let hours = m.sim_time_us as f64 / 3.6e9;
    let gaps = m.leader_change_intervals_us();
    let ms = |v: Option<u64>| v.map(|x| x as f64 / 1000.0);
    let mean = (!gaps.is_empty()).then(|| gaps.iter().sum::<u64>() as f64 / gaps.len() as f64);
    let mut figs = vec![
        ("leader.changes", Some(changes)),
        (
            "leader.changes_per_hour",
            (hours > 0.0).then(|| changes / hours),
        ),
        ("leader.interval_ms.mean", mean.map(|x| x / 1000.0)),
        ("leader.interval_ms.min", ms(gaps.iter().min().copied())),
        ("leader.interval_ms.max", ms(gaps.iter().max().copied())),
        (
            "compactions.total",
            Some(m.compactions.iter().sum::<u64>() as f64),
        ),
        (
            "compactions.scheduled",
            Some(m.scheduled_compactions as f64),
        ),
    ];
    for (name, n) in COMPACTIONS_PER_SERVER.iter().zip(&m.compactions) {
        figs.push((name, Some(*n as f64)));
    }
    figs
}

/// The relay hops' figures (only for runs with relays, so that runs
/// without keep their figures).
fn relay_figures(m: &Metrics) -> Vec<Figure> {
    let r = &m.relay;
    let stat = |v: &[u64]| {
        let mut v = v.to_vec();
        ovsdb::order::sort(&mut v);
        let mean = (!v.is_empty()).then(|| v.iter().sum::<u64>() as f64 / v.len() as f64);
        let ms = |x: Option<f64>| x.map(|x| x / 1000.0);
        (ms(mean), ms(pct(&v, 50.0)), ms(pct(&v, 99.0)))
    };
    let (fm, f50, f99) = stat(&r.forward_us);
    let (vm, v50, v99) = stat(&r.visible_us);
    vec![
        ("relay.count", Some(r.relays as f64)),
        ("relay.forward_ms.mean", fm),
        ("relay.forward_ms.p50", f50),
        ("relay.forward_ms.p99", f99),
        ("relay.visible_ms.mean", vm),
        ("relay.visible_ms.p50", v50),
        ("relay.visible_ms.p99", v99),
        ("relay.msgs", Some(r.msgs as f64)),
        ("relay.bytes", Some(r.bytes as f64)),
        ("relay.full_downloads", Some(r.full_downloads as f64)),
        ("relay.resumed", Some(r.resumed as f64)),
        ("relay.reconnects", Some(r.reconnects as f64)),
        ("relay.canceled", Some(r.canceled as f64)),
        ("relay.retransmits", Some(r.retransmits as f64)),
    ]
}

fn num(out: &mut String, v: Option<f64>) {
    match v {
        Some(x) if x.is_finite() => {
            if x == x.trunc() && x.abs() < 1e15 {
                let _ = write!(out, "{}", x as i64);
            } else {
                let _ = write!(out, "{:.3}", x);
            }
        }
        _ => out.push_str("null"),
    }
}

fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Write figures as nested JSON members (no surrounding braces).
fn nested<T>(out: &mut String, items: &[(&str, T)], leaf: &dyn Fn(&mut String, &T)) {
    let refs: Vec<(&str, &T)> = items.iter().map(|(p, v)| (*p, v)).collect();
    nested_ref(out, &refs, leaf);
}

fn nested_ref<T>(out: &mut String, items: &[(&str, &T)], leaf: &dyn Fn(&mut String, &T)) {
    let owned = items;
    let mut i = 0;
    let mut first = true;
    while i < owned.len() {
        let path = owned[i].0;
        let head = path.split('.').next().unwrap_or(path);
        if !first {
            out.push(',');
        }
        first = false;
        string(out, head);
        out.push(':');
        if head.len() == path.len() {
            leaf(out, owned[i].1);
            i += 1;
        } else {
            let mut j = i;
            let mut sub: Vec<(&str, &T)> = Vec::new();
            while j < owned.len()
                && owned[j].0.split('.').next() == Some(head)
                && owned[j].0.len() > head.len()
            {
                sub.push((&owned[j].0[head.len() + 1..], owned[j].1));
                j += 1;
            }
            out.push('{');
            nested_ref(out, &sub, leaf);
            out.push('}');
            i = j;
        }
    }
}

fn invariants_json(out: &mut String, checks: u64, violations: &[String]) {
    let _ = write!(
        out,
        "{{\"checks\":{checks},\"violations\":{},\"first\":",
        violations.len()
    );
    match violations.first() {
        Some(v) => string(out, v),
        None => out.push_str("null"),
    }
    out.push('}');
}

/// JSON object for one run.
pub fn run_json(sim: &Sim, m: &Metrics) -> String {
    let mut out = String::from("{");
    out.push_str("\"scenario\":");
    string(&mut out, &sim.scenario.name);
    out.push_str(",\"profile\":");
    string(&mut out, sim.knobs.profile.name());
    let _ = write!(out, ",\"seed\":{},", sim.seed);
    let figs = figures(m);
    nested(&mut out, &figs, &|o, v| num(o, *v));
    out.push_str(",\"per_server_file_bytes\":[");
    for (i, b) in m.per_server_file_bytes.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{b}");
    }
    let _ = write!(out, "],\"truncated\":{},\"invariants\":", m.truncated);
    invariants_json(&mut out, sim.invariant_checks(), &m.violations);
    let _ = write!(out, ",\"trace_hash\":\"{:016x}\"}}", sim.trace_hash());
    out
}

/// (mean, p50, p99)
pub type Stat = (f64, f64, f64);

/// Mean / p50 / p99 of each figure over several runs.
#[derive(Clone, Debug, Default)]
pub struct Aggregate {
    pub scenario: String,
    pub profile: String,
    pub first_seed: u64,
    pub seeds: u64,
    pub names: Vec<&'static str>,
    pub values: Vec<Vec<f64>>,
    pub violations: Vec<String>,
    pub checks: u64,
}

impl Aggregate {
    /// The width of a table's figure-name column: the longest name
    /// (`bytes.log_written_other_mode`), at least 24, so the numbers stay
    /// in their columns.
    pub fn name_width(&self) -> usize {
        self.names.iter().map(|n| n.len()).fold(24, usize::max)
    }

    pub fn add(&mut self, sim: &Sim, m: &Metrics) {
        if self.seeds == 0 {
            self.scenario = sim.scenario.name.clone();
            self.profile = sim.knobs.profile.name().to_string();
            self.first_seed = sim.seed;
        }
        self.seeds += 1;
        let figs = figures(m);
        if self.names.is_empty() {
            self.names = figs.iter().map(|f| f.0).collect();
            self.values = vec![Vec::new(); figs.len()];
        }
        for (i, (_, v)) in figs.iter().enumerate() {
            if let (Some(v), Some(col)) = (v, self.values.get_mut(i)) {
                col.push(*v);
            }
        }
        self.checks += sim.invariant_checks();
        self.violations.extend(m.violations.iter().cloned());
    }

    /// (mean, p50, p99) of figure `name`.
    pub fn stat(&self, name: &str) -> Option<(f64, f64, f64)> {
        let i = self.names.iter().position(|n| *n == name)?;
        let col = &self.values[i];
        if col.is_empty() {
            return None;
        }
        let mut s = col.clone();
        ovsdb::order::sort_by(&mut s, |a, b| a.total_cmp(b));
        Some((
            s.iter().sum::<f64>() / s.len() as f64,
            pctf(&s, 50.0),
            pctf(&s, 99.0),
        ))
    }

    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"scenario\":");
        string(&mut out, &self.scenario);
        out.push_str(",\"profile\":");
        string(&mut out, &self.profile);
        let _ = write!(
            out,
            ",\"seed\":{},\"seeds\":{},",
            self.first_seed, self.seeds
        );
        let items: Vec<(&str, Option<Stat>)> =
            self.names.iter().map(|n| (*n, self.stat(n))).collect();
        nested(&mut out, &items, &|o, v| match v {
            Some((a, b, c)) => {
                o.push_str("{\"mean\":");
                num(o, Some(*a));
                o.push_str(",\"p50\":");
                num(o, Some(*b));
                o.push_str(",\"p99\":");
                num(o, Some(*c));
                o.push('}');
            }
            None => o.push_str("null"),
        });
        out.push_str(",\"invariants\":");
        invariants_json(&mut out, self.checks, &self.violations);
        out.push('}');
        out
    }
}

/// Run `seeds` seeds starting at `first_seed`.
pub fn run_seeds(
    text: &str,
    profile: Option<&str>,
    overrides: &[(String, String)],
    first_seed: u64,
    seeds: u64,
) -> Result<Aggregate, String> {
    let mut build = |s| Sim::from_text(text, profile, overrides, s);
    let mut agg = Aggregate::default();
    for_seeds(
        &mut [(&mut agg, &mut build)],
        first_seed,
        seeds,
        &mut |_, _| {},
    )?;
    Ok(agg)
}

/// A run's simulator for one seed.
pub type Build<'a> = dyn FnMut(u64) -> Result<Sim, String> + 'a;

/// The one loop over seeds: for each seed from `first_seed`, builds every
/// side's run with its `build`, runs it and adds it to that side's
/// aggregate; `progress(done, total)` after each seed. The CLI's
/// `simulate --seeds` and `compare --seeds` and the web page's A/B over
/// seeds all run here.
pub fn for_seeds(
    sides: &mut [(&mut Aggregate, &mut Build<'_>)],
    first_seed: u64,
    seeds: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), String> {
    for (i, s) in (first_seed..first_seed + seeds).enumerate() {
        for (agg, build) in sides.iter_mut() {
            let mut sim = build(s)?;
            let m = sim.run();
            agg.add(&sim, &m);
        }
        progress(i as u64 + 1, seeds);
    }
    Ok(())
}

/// Side-by-side table of two aggregates with ratio b/a.
pub fn compare_table(a: &Aggregate, b: &Aggregate) -> String {
    let w = a.name_width();
    let mut out = format!(
        "{:<w$} {:>14} {:>14} {:>9}\n",
        "figure (mean)", "A", "B", "B/A"
    );
    for n in &a.names {
        let (Some((x, _, _)), Some((y, _, _))) = (a.stat(n), b.stat(n)) else {
            continue;
        };
        let ratio = if x != 0.0 {
            format!("{:.3}", y / x)
        } else {
            "-".into()
        };
        let _ = writeln!(out, "{n:<w$} {x:>14.3} {y:>14.3} {ratio:>9}");
    }
    let _ = writeln!(
        out,
        "invariant violations: A {} B {}",
        a.violations.len(),
        b.violations.len()
    );
    out
}

pub fn compare_json(a: &Aggregate, b: &Aggregate) -> String {
    let mut out = String::from("{\"a\":");
    out.push_str(&a.to_json());
    out.push_str(",\"b\":");
    out.push_str(&b.to_json());
    out.push_str(",\"ratio\":{");
    let items: Vec<(&str, Option<f64>)> = a
        .names
        .iter()
        .map(|n| {
            let r = match (a.stat(n), b.stat(n)) {
                (Some((x, _, _)), Some((y, _, _))) if x != 0.0 => Some(y / x),
                _ => None,
            };
            (*n, r)
        })
        .collect();
    nested(&mut out, &items, &|o, v| num(o, *v));
    out.push_str("}}");
    out
}

/// A readable, deterministic transcript of one run: the notable events
/// (faults, elections, leaders, step-downs, election-timer changes,
/// membership, snapshots), then the figures and the trace hash. Used by the
/// data-driven expected-transcript tests under `scenarios/`.
pub fn transcript(sim: &mut Sim) -> String {
    use crate::sim::EventKind as K;
    sim.record_events = true;
    let m = sim.run();
    let mut out = format!(
        "scenario {} profile {} seed {}\n",
        sim.scenario.name, sim.knobs.profile, sim.seed
    );
    for e in sim.events() {
        let t = e.t as f64 / 1000.0;
        let line = match &e.kind {
            K::Fault { text } => format!("fault {text}"),
            K::ElectionStarted {
                server,
                term,
                prevote,
                transfer,
            } => format!(
                "s{} starts {} term {term}{}",
                server + 1,
                if *prevote {
                    "pre-vote in"
                } else {
                    "election for"
                },
                if *transfer {
                    " (leadership transfer)"
                } else {
                    ""
                }
            ),
            K::BecameLeader { server, term } => format!("s{} leader of term {term}", server + 1),
            K::SteppedDown { server, term } => format!("s{} steps down in term {term}", server + 1),
            K::ElectionTimerChanged { server, ms } => {
                format!("s{} election timer now {ms} ms", server + 1)
            }
            K::Joined { server } => format!("s{} joined", server + 1),
            K::Left { server } => format!("s{} left", server + 1),
            K::Snapshot { server, index } => format!("s{} snapshot at index {index}", server + 1),
            _ => continue,
        };
        let _ = writeln!(out, "{t:>12.3} ms  {line}");
    }
    for (name, v) in figures(&m) {
        match v {
            Some(v) => {
                let _ = writeln!(out, "{name} = {v:.3}");
            }
            None => {
                let _ = writeln!(out, "{name} = -");
            }
        }
    }
    let _ = writeln!(out, "per_server_file_bytes = {:?}", m.per_server_file_bytes);
    let _ = writeln!(out, "invariant_violations = {}", m.violations.len());
    for v in &m.violations {
        let _ = writeln!(out, "  {v}");
    }
    let _ = writeln!(out, "trace_hash = {:016x}", sim.trace_hash());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// JSON output nests dotted names by their first part, grouping
    /// neighbours only: a group split in two would give an object with a
    /// duplicate key (the second silently wins in a JSON reader).
    #[test]
    fn dotted_figure_groups_are_contiguous() {
        // With the optional groups too (relays, scheduled compactions).
        let mut full = Metrics::default();
        full.relay.relays = 1;
        full.scheduled_compactions = 1;
        full.sb.chassis = 1;
        full.compactions = vec![1, 0, 0];
        for m in [Metrics::default(), full] {
            let names: Vec<&str> = figures(&m)
                .iter()
                .map(|(n, _)| n.split('.').next().unwrap_or(n))
                .collect();
            for (i, head) in names.iter().enumerate() {
                if let Some(j) = names[..i].iter().rposition(|h| h == head) {
                    assert!(
                        names[j..i].iter().all(|h| h == head),
                        "figure group {head} is split: {names:?}"
                    );
                }
            }
        }
    }
}
