//! The guided training tour as data: each step is a run (preset, profile,
//! knobs), the moment and window it opens at, a caption, and what the
//! window must show ([`Shows`]). The web page renders the steps; the tests
//! beside them run every step and check that its caption matches its
//! profile and that its effect is inside the window it opens.

use crate::{Profile, RunSpec};
use ovsdb::StorageMode;

/// What a step's window must make visible (checked by [`TourStep::check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shows {
    /// An election won inside the window; `prevote`: it began with a
    /// pre-vote round (the profile must have one).
    Election { prevote: bool },
    /// A client write through a follower: the forwarded command and its
    /// reply, the leader's append and the client's answer, all in view.
    FollowerWrite,
    /// At least one whole write that took longer than `min_ms`.
    SlowWrite { min_ms: u64 },
    /// Full-value entries that keep growing: at least `min_entries` in view
    /// on the leader, the last at least `factor` times the first.
    GrowingEntries { min_entries: usize, factor: u64 },
    /// A leader change: the leader before the window is gone and another
    /// leads a higher term by its end; the client writes before the kill
    /// and, after it, writes that the new leader completes.
    Failover,
}

/// One step of the tour.
#[derive(Clone, Copy, Debug)]
pub struct TourStep {
    pub title: &'static str,
    pub caption: &'static str,
    pub preset: &'static str,
    /// `None` = the preset's own profile.
    pub profile: Option<&'static str>,
    pub sets: &'static [(&'static str, &'static str)],
    /// Where the playhead opens, ms of simulated time.
    pub at_ms: u64,
    /// Width of the visible window, ms.
    pub window_ms: f64,
    pub shows: Shows,
}

/// The visible span `[t0, t1)` (µs) of a window of `width_us` whose
/// playhead is `now`: most of it lies before the playhead, as on a
/// scrolling recorder. The page's timeline uses the same span.
pub fn window_around(now: u64, width_us: f64) -> (f64, f64) {
    let t0 = now as f64 - width_us * 0.8;
    (t0, t0 + width_us)
}

pub const STEPS: &[TourStep] = &[
    TourStep {
        title: "1. Election",
        caption: "Three servers start as followers. When a follower hears nothing for an election \
                  timeout (here 1 s plus a random part), it first asks the others for a pre-vote \
                  (since 3.3; this run is v3.4), which costs no term, and only with a majority of \
                  pre-votes asks for real votes (red lines). The first to get a majority becomes \
                  leader (gold band) and starts sending heartbeats (ticks).",
        preset: "leader-kill",
        profile: Some("v3.4"),
        sets: &[],
        at_ms: 1578,
        window_ms: 6.0,
        shows: Shows::Election { prevote: true },
    },
    TourStep {
        title: "2. A write through a follower",
        caption: "The client talks to a follower, not to the leader (gold). The follower forwards \
                  the transaction to the leader (green), the leader appends it to its log and \
                  replicates it (blue); once a majority has it on disk, it is committed (green \
                  step line) and the reply travels back.",
        preset: "ls-add-follower",
        profile: Some("v2.12"),
        sets: &[("n", "10")],
        at_ms: 1676,
        window_ms: 16.0,
        shows: Shows::FollowerWrite,
    },
    TourStep {
        title: "3. Why the follower waits for the commit index",
        caption: "The follower may answer its client only once it knows the entry is committed. \
                  Before the fix (v2.12-pre-sync) it learnt the new commit index only from the \
                  next heartbeat, so each write waited about a third of a second: look at the \
                  client lane. The A/B tab compares 100 such writes: about 34 s against half a \
                  second.",
        preset: "ls-add-follower",
        profile: Some("v2.12-pre-sync"),
        sets: &[("n", "10")],
        at_ms: 2000,
        window_ms: 700.0,
        shows: Shows::SlowWrite { min_ms: 200 },
    },
    TourStep {
        title: "4. Diff against full storage",
        caption: "Each acl-add rewrites a port group's acls column. With full values (this run, \
                  column_diff=false) every log entry carries the whole growing set: the entry \
                  bars grow from write to write. Switch the bars to diffs and they stay flat: \
                  with column diffs only the added ACL is written (messages are hidden here). \
                  The A/B 'full-vs-diff' compares the bytes.",
        preset: "acl-portgroup",
        profile: None,
        sets: &[("n", "150"), ("column_diff", "false")],
        at_ms: 2310,
        window_ms: 850.0,
        shows: Shows::GrowingEntries {
            min_entries: 100,
            factor: 2,
        },
    },
    TourStep {
        title: "5. Leader failover",
        caption: "The leader is killed (dark band). The followers stop hearing heartbeats, wait \
                  one election timeout, and elect a new leader in a higher term. Clients see no \
                  leader meanwhile: that gap is the leaderless time. The client, which wrote \
                  through the leader, reconnects to another server, and its writes wait there \
                  (the long bars of the client lane) until the new leader commits them.",
        preset: "election-timer",
        profile: None,
        // Writes go on past the kill (the preset's 40 end before it).
        sets: &[("n", "80")],
        at_ms: 14_300,
        window_ms: 3500.0,
        shows: Shows::Failover,
    },
];

impl TourStep {
    /// Whether the step's diagram draws the messages: a step about entry
    /// sizes leaves them out, as their lines would hide the bars.
    pub fn draws_messages(&self) -> bool {
        !matches!(self.shows, Shows::GrowingEntries { .. })
    }

    pub fn spec(&self) -> RunSpec {
        let mut s = RunSpec::preset(self.preset);
        s.profile = self.profile.map(str::to_string);
        s.sets = crate::owned_sets(self.sets);
        s
    }

    /// Checks the step against its run: the caption speaks of a pre-vote
    /// exactly when the run's profile has one, and the window shows what
    /// [`TourStep::shows`] names. Returns what is wrong, if anything.
    pub fn check(&self, run: &crate::RunResult) -> Result<(), String> {
        let profile = Profile::parse(&run.profile)
            .ok_or_else(|| format!("unknown profile {}", run.profile))?;
        let speaks = self.caption.contains("pre-vote");
        let has = run.trace.notes.iter().any(|n| n.text.contains("pre-vote"));
        if speaks && !profile.has_prevote() {
            return Err(format!(
                "the caption describes a pre-vote but {} has none",
                run.profile
            ));
        }
        if !speaks && has && matches!(self.shows, Shows::Election { .. }) {
            return Err(format!(
                "the run ({}) holds pre-votes the caption does not mention",
                run.profile
            ));
        }
        let (t0, t1) = window_around(self.at_ms * 1000, self.window_ms * 1000.0);
        let inside = |t: u64| (t as f64) >= t0 && (t as f64) < t1;
        let tr = &run.trace;
        let kind = |name: &str| tr.kinds.iter().position(|k| k == name);
        let sent_in = |name: &str| {
            kind(name).is_some_and(|k| {
                tr.messages
                    .iter()
                    .any(|m| m.kind as usize == k && inside(m.send))
            })
        };
        match self.shows {
            Shows::Election { prevote } => {
                let won = tr
                    .notes
                    .iter()
                    .any(|n| inside(n.t) && n.text.contains(" leads term "));
                if !won {
                    return Err("no election is won inside the window".into());
                }
                if prevote != sent_in("prevote_request") {
                    return Err(format!(
                        "pre-vote requests in the window: expected {prevote}"
                    ));
                }
                if !sent_in("vote_request") {
                    return Err("no vote request inside the window".into());
                }
            }
            Shows::FollowerWrite => {
                for k in [
                    "execute_command_request",
                    "append_request",
                    "execute_command_reply",
                ] {
                    if !sent_in(k) {
                        return Err(format!("no {k} inside the window"));
                    }
                }
                let whole = tr.writes.iter().any(|w| inside(w.start) && inside(w.end));
                if !whole {
                    return Err("no whole client write inside the window".into());
                }
            }
            Shows::SlowWrite { min_ms } => {
                let slow = tr
                    .writes
                    .iter()
                    .any(|w| inside(w.start) && inside(w.end) && w.end - w.start >= min_ms * 1000);
                if !slow {
                    return Err(format!("no whole write over {min_ms} ms in the window"));
                }
            }
            Shows::GrowingEntries {
                min_entries,
                factor,
            } => {
                let leader = tr
                    .leader_at(self.at_ms * 1000)
                    .ok_or("no leader at the step's moment")?;
                let seen: Vec<_> = tr
                    .entries
                    .iter()
                    .filter(|e| e.server as usize == leader && inside(e.t))
                    .collect();
                let full: Vec<u64> = seen
                    .iter()
                    .map(|e| e.bytes_as(StorageMode::Full, tr.storage))
                    .collect();
                if full.len() < min_entries {
                    return Err(format!(
                        "{} entries in the window, wanted {min_entries}",
                        full.len()
                    ));
                }
                let (first, last) = (full[0], full[full.len() - 1]);
                if last < first * factor {
                    return Err(format!(
                        "entries grow from {first} to {last} bytes only, wanted ×{factor}"
                    ));
                }
                let diffs: Vec<u64> = seen
                    .iter()
                    .map(|e| e.bytes_as(StorageMode::Diff, tr.storage))
                    .collect();
                let spread = diffs.iter().max().unwrap_or(&0) - diffs.iter().min().unwrap_or(&0);
                if spread * 4 > last - first {
                    return Err("the diff entries grow as much as the full ones".into());
                }
            }
            Shows::Failover => {
                let down = tr
                    .states
                    .iter()
                    .enumerate()
                    .flat_map(|(i, pts)| pts.iter().map(move |p| (i, p)))
                    .filter(|(_, p)| p.life == crate::trace::DOWN && inside(p.t))
                    .min_by_key(|(_, p)| p.t)
                    .map(|(i, p)| (i, p.t));
                let Some((killed, t_down)) = down else {
                    return Err("no server goes down inside the window".into());
                };
                // The window shows the leader leading before it dies.
                if (t_down as f64) - t0 < 0.1 * (t1 - t0) {
                    return Err("the window opens as the leader goes down".into());
                }
                let before = t_down.saturating_sub(1);
                if tr.leader_at(before) != Some(killed) {
                    return Err(format!(
                        "s{} was not the leader when it went down",
                        killed + 1
                    ));
                }
                let after = tr.leader_at(t1 as u64);
                if after.is_none_or(|a| a == killed)
                    || tr.max_term_at(t1 as u64) <= tr.max_term_at(before)
                {
                    return Err("no new leader in a higher term inside the window".into());
                }
                // What the client sees: writes done before the kill, and
                // writes sent after it that complete in the window.
                let done_before = tr.writes.iter().any(|w| inside(w.end) && w.end < t_down);
                let done_after = tr.writes.iter().any(|w| w.start > t_down && inside(w.end));
                if !done_before || !done_after {
                    return Err("the window shows no client write on one side of the kill".into());
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_shows_what_its_caption_says() {
        for step in STEPS {
            let run = crate::run(&step.spec(), &mut |_, _| {}).expect(step.title);
            if let Err(e) = step.check(&run) {
                panic!("{} ({}): {e}", step.title, run.profile);
            }
        }
    }

    #[test]
    fn a_prevote_caption_on_a_profile_without_one_is_refused() {
        let mut step = STEPS[0];
        step.profile = Some("v3.1");
        let run = crate::run(&step.spec(), &mut |_, _| {}).unwrap();
        let err = step.check(&run).unwrap_err();
        assert!(err.contains("has none"), "{err}");
    }

    #[test]
    fn only_the_entry_size_step_hides_the_messages() {
        let hidden: Vec<&str> = STEPS
            .iter()
            .filter(|s| !s.draws_messages())
            .map(|s| s.title)
            .collect();
        assert_eq!(hidden, ["4. Diff against full storage"]);
    }

    #[test]
    fn a_failover_without_client_writes_is_refused() {
        // The preset's own 40 writes end before its leader is killed.
        let mut step = STEPS[4];
        step.sets = &[];
        let run = crate::run(&step.spec(), &mut |_, _| {}).unwrap();
        let err = step.check(&run).unwrap_err();
        assert!(err.contains("client write"), "{err}");
    }

    #[test]
    fn a_window_that_misses_the_growth_is_refused() {
        let mut step = STEPS[3];
        step.window_ms = 30.0;
        let run = crate::run(&step.spec(), &mut |_, _| {}).unwrap();
        assert!(step.check(&run).is_err());
    }
}
