//! simulate, compare (owned by the simulator area).
//!
//! `SCENARIO` is a preset name (`raft_sim::PRESETS`, listed in the help by
//! [`with_presets`]) or a path to a scenario file.

use raft_sim::report::{self, Aggregate};
use raft_sim::{preset, Sim};
use simview::RunSpec;

/// The command line with the `SCENARIO` help of `simulate` and `compare`
/// naming every preset, from the presets themselves (a hand-written list
/// fell behind when presets were added).
pub fn with_presets(cmd: clap::Command) -> clap::Command {
    let names: Vec<&str> = raft_sim::PRESETS.iter().map(|p| p.0).collect();
    let help = format!("A preset ({}) or a scenario file", names.join(", "));
    let ab: Vec<&str> = simview::ab::AB_PRESETS.iter().map(|p| p.name).collect();
    let compare = format!(
        "{help}; without --a and --b, an A/B preset ({})",
        ab.join(", ")
    );
    cmd.mut_subcommand("simulate", |c| c.mut_arg("scenario", |a| a.help(help)))
        .mut_subcommand("compare", |c| c.mut_arg("scenario", |a| a.help(compare)))
}

fn load(name: &str) -> Result<String, String> {
    if let Some(t) = preset(name) {
        return Ok(t.to_string());
    }
    std::fs::read_to_string(name).map_err(|e| {
        let names: Vec<&str> = raft_sim::PRESETS.iter().map(|p| p.0).collect();
        let list = names.join(", ");
        if e.kind() != std::io::ErrorKind::NotFound {
            return format!("cannot read scenario '{name}': {e} (presets: {list})");
        }
        format!(
            "'{name}' is neither a preset nor a file{} (presets: {list})",
            did_you_mean(name, &names)
        )
    })
}

/// "; did you mean 'x'?" when one of `names` is a typo away from `name`
/// (`raft_sim::knobs::closest_in`, the knobs' own rule), else nothing.
pub(crate) fn did_you_mean(name: &str, names: &[&str]) -> String {
    raft_sim::knobs::closest_in(name, names)
        .map_or(String::new(), |n| format!("; did you mean '{n}'?"))
}

fn parse_set(v: &str) -> Result<(String, String), String> {
    v.split_once('=')
        .map(|(a, b)| (a.trim().to_string(), b.trim().to_string()))
        .ok_or_else(|| format!("expected KNOB=VALUE, got '{v}'"))
}

/// A list of knobs: `'prevote=false,election_timer=2000'` or `profile=v2.12`.
#[derive(Clone, Debug, Default)]
pub struct KnobList(Vec<(String, String)>);

fn knob_list(v: &str) -> Result<KnobList, String> {
    let list: Vec<(String, String)> = v
        .split([',', ' '])
        .filter(|s| !s.is_empty())
        .map(parse_set)
        .collect::<Result<_, _>>()?;
    // One side's list saying two things of one knob is a slip, not an
    // override: which one was meant?
    for (i, (k, v)) in list.iter().enumerate() {
        if let Some((_, w)) = list[..i].iter().find(|(j, w)| j == k && w != v) {
            return Err(format!("{k} is given twice ({w} and {v})"));
        }
    }
    Ok(KnobList(list))
}

/// The knobs a side runs with, each once with the value that wins (the
/// last given), in the order first given, each after a space:
/// ` n=100 column_diff=false`.
fn effective(sets: &[(String, String)]) -> String {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for (k, v) in sets {
        match out.iter_mut().find(|(j, _)| j == k) {
            Some(e) => e.1 = v,
            None => out.push((k, v)),
        }
    }
    out.iter().map(|(k, v)| format!(" {k}={v}")).collect()
}

/// What `simulate` and `compare` share.
#[derive(clap::Args, Debug)]
pub struct RunOpts {
    /// A preset or a scenario file (the presets are listed here at run time
    /// by `with_presets`)
    #[arg(required_unless_present = "list_knobs")]
    scenario: Option<String>,
    /// Version profile: which ovsdb-server release the servers behave like
    /// (default: the scenario's; differences in scenarios/README.md)
    #[arg(long, value_name = "P", value_parser = clap::builder::PossibleValuesParser::new(raft_sim::Profile::ALL.map(raft_sim::Profile::name)))]
    profile: Option<String>,
    /// Set a knob (repeatable; --list-knobs lists them)
    #[arg(long = "set", value_name = "KNOB=VALUE", value_parser = parse_set)]
    sets: Vec<(String, String)>,
    /// List every knob with its value (under --profile, else the scenario's
    /// profile or main; with SCENARIO's knobs and --set applied), kind and
    /// meaning, and run nothing
    #[arg(long)]
    list_knobs: bool,
    /// Seed of the run (the first seed with --seeds)
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// Run N seeds and aggregate
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    seeds: Option<u64>,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

/// `simulate SCENARIO [options]`
#[derive(clap::Args, Debug)]
#[command(
    about = "Run a scenario on the simulated ovsdb-server Raft cluster",
    long_about = "Runs SCENARIO (a preset or a scenario file) on the deterministic simulator \
of ovsdb-server's Raft (virtual clock, seeded randomness) and prints its figures: commit \
latencies, elections, messages, file bytes, and the safety invariants checked.",
    after_help = "Examples:\n  ovsdb-scope simulate leader-kill --profile v3.1 --seeds 100\n  ovsdb-scope simulate --list-knobs --profile v2.17   (the knobs --set takes)\n\nExit codes: 0 ok, 1 an invariant was violated, 2 bad input or usage."
)]
pub struct SimulateArgs {
    #[command(flatten)]
    run: RunOpts,
    /// Write each server's .db file (readable by ovsdb-tool) into DIR
    #[arg(long, value_name = "DIR")]
    write_logs: Option<String>,
    /// Write every event as JSON lines
    #[arg(long, value_name = "FILE.jsonl")]
    trace: Option<String>,
}

/// `compare SCENARIO --a KNOBS --b KNOBS [options]`, or `compare AB_PRESET`
#[derive(clap::Args, Debug)]
#[command(
    about = "A/B: the same scenario and seeds with two sets of knobs",
    after_help = "Examples:\n  ovsdb-scope compare ls-add-follower --a 'profile=v2.12' --b 'profile=v3.1' --seeds 50\n  ovsdb-scope compare write-changed-only --set chassis=60\n  ovsdb-scope compare --list-knobs   (the knobs --set, --a and --b take)\n\nExit codes: 0 ok, 1 an invariant was violated, 2 bad input or usage."
)]
pub struct CompareArgs {
    #[command(flatten)]
    run: RunOpts,
    /// Knobs of side A, comma-separated KNOB=VALUE (profile=P allowed; they
    /// win over --profile and --set)
    #[arg(long = "a", value_name = "KNOBS", value_parser = knob_list, requires = "b")]
    a: Option<KnobList>,
    /// Knobs of side B
    #[arg(long = "b", value_name = "KNOBS", value_parser = knob_list, requires = "a")]
    b: Option<KnobList>,
}

fn print_human(sim: &Sim, m: &raft_sim::Metrics) {
    outln!(
        "scenario {} profile {} seed {}",
        sim.scenario.name,
        sim.knobs.profile,
        sim.seed
    );
    let figures = report::figures(m);
    let w = figures
        .iter()
        .map(|(n, _)| n.len())
        .max()
        .unwrap_or(0)
        .max(24);
    for (name, v) in figures {
        match v {
            // Counts as integers, measures with three decimals.
            Some(v) if v.fract() == 0.0 && v.abs() < 1e15 => outln!("  {name:<w$} {v:.0}"),
            Some(v) => outln!("  {name:<w$} {v:.3}"),
            None => outln!("  {name:<w$} -"),
        }
    }
    let bytes: Vec<String> = m.per_server_file_bytes.iter().map(u64::to_string).collect();
    outln!("  {:<w$} {}", "per-server file bytes", bytes.join(" "));
    if m.violations.is_empty() {
        outln!(
            "  {:<w$} ok ({} checks)",
            "invariants",
            sim.invariant_checks()
        );
    } else {
        for v in &m.violations {
            outln!("  INVARIANT VIOLATION: {v}");
        }
    }
}

fn print_agg(agg: &Aggregate) {
    outln!(
        "scenario {} profile {} seeds {}..{}",
        agg.scenario,
        agg.profile,
        agg.first_seed,
        agg.first_seed + agg.seeds - 1
    );
    let w = agg.name_width();
    outln!(
        "  {:<w$} {:>12} {:>12} {:>12}",
        "figure",
        "mean",
        "p50",
        "p99"
    );
    for n in &agg.names {
        if let Some((a, b, c)) = agg.stat(n) {
            outln!("  {n:<w$} {a:>12.3} {b:>12.3} {c:>12.3}");
        }
    }
    outln!("  invariant violations: {}", agg.violations.len());
    for v in agg.violations.iter().take(5) {
        outln!("    {v}");
    }
}

fn trace_line(e: &raft_sim::SimEvent) -> String {
    use raft_sim::EventKind as K;
    let body = match &e.kind {
        K::Message { from, to, kind, bytes, send, recv, dropped } => format!(
            "\"kind\":\"message\",\"msg\":\"{}\",\"from\":{},\"to\":{},\"bytes\":{bytes},\"send_us\":{send},\"recv_us\":{recv},\"dropped\":{dropped}",
            kind.name(),
            from + 1,
            to + 1
        ),
        K::RelayMessage { from, to, kind, bytes, send, recv, dropped } => format!(
            "\"kind\":\"relay_message\",\"msg\":\"{kind}\",\"from\":\"{from}\",\"to\":\"{to}\",\"bytes\":{bytes},\"send_us\":{send},\"recv_us\":{recv},\"dropped\":{dropped}"
        ),
        K::ElectionStarted { server, term, prevote, transfer } => format!(
            "\"kind\":\"election\",\"server\":{},\"term\":{term},\"prevote\":{prevote},\"transfer\":{transfer}",
            server + 1
        ),
        K::BecameLeader { server, term } => format!("\"kind\":\"leader\",\"server\":{},\"term\":{term}", server + 1),
        K::SteppedDown { server, term } => format!("\"kind\":\"step_down\",\"server\":{},\"term\":{term}", server + 1),
        K::TermChanged { server, term } => format!("\"kind\":\"term\",\"server\":{},\"term\":{term}", server + 1),
        K::Commit { server, index } => format!("\"kind\":\"commit\",\"server\":{},\"index\":{index}", server + 1),
        K::ClientWrite { req, server, start, end } => format!(
            "\"kind\":\"client_write\",\"req\":{req},\"server\":{},\"start_us\":{start},\"end_us\":{end}",
            server + 1
        ),
        K::EntryWritten { server, bytes, alt_bytes } => format!(
            "\"kind\":\"entry_written\",\"server\":{},\"bytes\":{bytes},\"other_mode_bytes\":{alt_bytes}",
            server + 1
        ),
        K::ElectionTimerChanged { server, ms } => {
            format!("\"kind\":\"election_timer\",\"server\":{},\"ms\":{ms}", server + 1)
        }
        K::Fault { text } => format!("\"kind\":\"fault\",\"text\":{text:?}"),
        K::Joined { server } => format!("\"kind\":\"joined\",\"server\":{}", server + 1),
        K::Left { server } => format!("\"kind\":\"left\",\"server\":{}", server + 1),
        K::Snapshot { server, index } => format!("\"kind\":\"snapshot\",\"server\":{},\"index\":{index}", server + 1),
        K::SbUpdate { served, last, bytes, bindings } => {
            let bindings: Vec<String> = bindings
                .iter()
                .map(|b| {
                    format!(
                        "{{\"chassis\":{},\"start_us\":{},\"seen_us\":{}}}",
                        b.chassis + 1,
                        b.start,
                        b.seen.map_or("null".to_string(), |t| t.to_string())
                    )
                })
                .collect();
            let bindings = bindings.join(",");
            format!("\"kind\":\"sb_update\",\"served\":{served},\"last_us\":{last},\"bytes\":{bytes},\"bindings\":[{bindings}]")
        }
        K::SbDownload { chassis, ready, bytes } => format!(
            "\"kind\":\"sb_download\",\"chassis\":{},\"ready_us\":{ready},\"bytes\":{bytes}",
            chassis + 1
        ),
        K::TxnRejected { server, op, error } => {
            let s = |x: &str| ovsdb::json::Json::String(x.to_string()).to_string_compact();
            format!(
                "\"kind\":\"txn_rejected\",\"server\":{},\"op\":{},\"error\":{}",
                server + 1,
                s(op),
                error.as_deref().map(s).unwrap_or_else(|| "null".into())
            )
        }
    };
    format!("{{\"t_us\":{},{body}}}", e.t)
}

/// Where a knob error names an unknown knob, how to see them all: the
/// core's error (with its "did you mean") has no front end's words.
fn with_knob_hint(cmd: &str, r: Result<u8, String>) -> Result<u8, String> {
    r.map_err(|e| {
        if e.contains("unknown knob '") {
            format!("{e} (ovsdb-scope {cmd} --list-knobs lists them all)")
        } else if let Some(rest) = e.strip_prefix("unknown profile '") {
            // `profile=` in --a/--b (--profile itself is checked by clap).
            let names: Vec<&str> = raft_sim::Profile::ALL.iter().map(|p| p.name()).collect();
            let asked = rest.split('\'').next().unwrap_or_default();
            format!(
                "{e}{} (profiles: {})",
                did_you_mean(asked, &names),
                names.join(", ")
            )
        } else {
            e
        }
    })
}

/// `--list-knobs`: every knob of `raft_sim::knobs::KNOBS` with the value a
/// run with these options would start from, its kind and its meaning.
/// `scenario_text` finds the scenario's text when one is named.
fn list_knobs(
    o: &RunOpts,
    scenario_text: impl Fn(&str) -> Result<String, String>,
) -> Result<u8, String> {
    use ovsdb::{Json, Object};
    use raft_sim::{knobs::KNOBS, Knobs, Profile};
    let profile = o.profile.as_deref().and_then(Profile::parse);
    let (knobs, scenario) = match &o.scenario {
        Some(name) => {
            let sc = raft_sim::Scenario::parse(&scenario_text(name)?)?;
            (sc.knobs(profile, &o.sets)?, Some(sc.name))
        }
        None => {
            let mut k = Knobs::for_profile(profile.unwrap_or(Profile::Main));
            for (n, v) in &o.sets {
                k.set(n, v)?;
            }
            (k, None)
        }
    };
    let value = |d: &raft_sim::knobs::KnobDoc| (d.value)(&knobs);
    let text = if o.json {
        let s = |v: &str| Json::String(v.to_string());
        let list = KNOBS
            .iter()
            .map(|d| {
                let mut r = Object::new();
                r.push_unchecked("name", s(d.name));
                r.push_unchecked("value", value(d).map_or(Json::Null, Json::String));
                r.push_unchecked("kind", s(d.kind));
                r.push_unchecked("about", s(d.about));
                Json::Object(r)
            })
            .collect();
        let mut top = Object::new();
        top.push_unchecked("profile", s(knobs.profile.name()));
        top.push_unchecked("scenario", scenario.map_or(Json::Null, Json::String));
        top.push_unchecked("knobs", Json::Array(list));
        Json::Object(top).to_string_compact() + "\n"
    } else {
        let rows: Vec<[String; 4]> = KNOBS
            .iter()
            .map(|d| {
                let v = value(d).unwrap_or_else(|| "-".into());
                [d.name.into(), v, d.kind.into(), d.about.into()]
            })
            .collect();
        let width = |i: usize| rows.iter().map(|r| r[i].len()).max().unwrap_or(0);
        let (wn, wv, wk) = (width(0), width(1).max(5), width(2));
        let mut t = match &scenario {
            Some(name) => format!("knobs of scenario {name}, profile {}\n", knobs.profile),
            None => format!("knobs of profile {}\n", knobs.profile),
        };
        t += "(set with --set KNOB=VALUE; ms: milliseconds, fractions allowed; -: not set)\n";
        t += &format!(
            "  {:<wn$}  {:<wv$}  {:<wk$}  WHAT IT DOES\n",
            "KNOB", "VALUE", "KIND"
        );
        for [name, value, kind, about] in &rows {
            t += &format!("  {name:<wn$}  {value:<wv$}  {kind:<wk$}  {about}\n");
        }
        t
    };
    use std::io::Write;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        // Piped into `head`: the reader has seen what it wanted.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(141),
        r => r.map_err(|e| format!("cannot print: {e}"))?,
    }
    Ok(0)
}

pub fn simulate(args: SimulateArgs) -> u8 {
    let r = with_knob_hint("simulate", simulate_inner(args));
    crate::exit_code(r)
}

fn simulate_inner(args: SimulateArgs) -> Result<u8, String> {
    let SimulateArgs {
        run: o,
        write_logs,
        trace,
    } = args;
    if o.list_knobs {
        return list_knobs(&o, load);
    }
    let text = load(o.scenario.as_deref().unwrap_or_default())?;
    if let Some(n) = o.seeds {
        if trace.is_some() || write_logs.is_some() {
            return Err(
                "--trace and --write-logs describe one run: use --seed, not --seeds".into(),
            );
        }
        let agg = report::run_seeds(&text, o.profile.as_deref(), &o.sets, o.seed, n)?;
        if o.json {
            outln!("{}", agg.to_json());
        } else {
            print_agg(&agg);
        }
        return Ok(if agg.violations.is_empty() { 0 } else { 1 });
    }
    let mut sim = Sim::from_text(&text, o.profile.as_deref(), &o.sets, o.seed)?;
    sim.record_events = trace.is_some();
    if write_logs.is_some() {
        sim.capture_logs();
    }
    let m = sim.run();
    if let Some(dir) = &write_logs {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {dir}: {e}"))?;
        for (name, bytes) in raft_sim::logs::write_logs(&sim)? {
            let path = std::path::Path::new(dir).join(&name);
            std::fs::write(&path, bytes)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    if let Some(path) = &trace {
        let mut s = String::new();
        for e in sim.events() {
            s.push_str(&trace_line(e));
            s.push('\n');
        }
        std::fs::write(path, s).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    if o.json {
        outln!("{}", report::run_json(&sim, &m));
    } else {
        print_human(&sim, &m);
    }
    // The process ends here: freeing the simulation's every row, log entry
    // and message one by one was 4 % of the Southbound hour's instructions.
    // Nothing in it writes on drop (the logs and trace are written above).
    std::mem::forget(sim);
    Ok(if m.violations.is_empty() { 0 } else { 1 })
}

pub fn compare(args: CompareArgs) -> u8 {
    let r = with_knob_hint("compare", compare_inner(args));
    crate::exit_code(r)
}

/// A scenario by name for `compare --list-knobs`: a preset, a file, or the
/// scenario an A/B preset runs.
fn compare_scenario(name: &str) -> Result<String, String> {
    load(name).or_else(|e| {
        simview::ab::ab_preset(name)
            .and_then(|p| preset(p.scenario).or_else(|| simview::ab::ab_scenario(p.scenario)))
            .map(str::to_string)
            .ok_or(e)
    })
}

fn split_profile(
    knobs: &[(String, String)],
    default: Option<&str>,
) -> (Option<String>, Vec<(String, String)>) {
    let mut p = default.map(str::to_string);
    let mut rest = Vec::new();
    for (k, v) in knobs {
        if k == "profile" {
            p = Some(v.clone());
        } else {
            rest.push((k.clone(), v.clone()));
        }
    }
    (p, rest)
}

/// An A/B preset's two sides (`simview::ab::AB_PRESETS`) with the command
/// line's `--profile` and `--set` (after each side's own, so they win).
fn ab_sides(o: &RunOpts) -> Result<(RunSpec, RunSpec), String> {
    let names: Vec<&str> = simview::ab::AB_PRESETS.iter().map(|p| p.name).collect();
    let scenario = o.scenario.as_deref().unwrap_or_default();
    let p = simview::ab::ab_preset(scenario).ok_or_else(|| {
        format!(
            "'{}' is not an A/B preset{} ({}); give --a and --b to compare a scenario",
            scenario,
            did_you_mean(scenario, &names),
            names.join(", ")
        )
    })?;
    if !o.json {
        outln!(
            "{}: {}\nA = {}, B = {}",
            p.name,
            p.words().title,
            p.a_label,
            p.b_label
        );
    }
    Ok(p.sides_with(o.seed, o.profile.as_deref(), &o.sets))
}

fn compare_inner(args: CompareArgs) -> Result<u8, String> {
    let CompareArgs { run: o, a, b } = args;
    if o.list_knobs {
        return list_knobs(&o, compare_scenario);
    }
    let seeds = o.seeds.unwrap_or(1);
    let (sa, sb) = match (a, b) {
        (Some(a), Some(b)) => {
            let text = load(o.scenario.as_deref().unwrap_or_default())?;
            let side = |kv: &[(String, String)]| {
                let (profile, mut sets) = split_profile(kv, o.profile.as_deref());
                let mut common = o.sets.clone();
                common.append(&mut sets);
                RunSpec {
                    scenario: "custom".into(),
                    text: Some(text.clone()),
                    profile,
                    sets: common,
                    seed: o.seed,
                    ..RunSpec::default()
                }
            };
            (side(&a.0), side(&b.0))
        }
        _ => ab_sides(&o)?,
    };
    let (a, b) = simview::ab::run_sides(&sa, &sb, seeds, &mut |_, _| {})?;
    if o.json {
        outln!("{}", report::compare_json(&a, &b));
    } else {
        outln!(
            "A: profile={}{}\nB: profile={}{}",
            a.profile,
            effective(&sa.sets),
            b.profile,
            effective(&sb.sets)
        );
        out!("{}", report::compare_table(&a, &b));
    }
    Ok(if a.violations.is_empty() && b.violations.is_empty() {
        0
    } else {
        1
    })
}
