//! Transactions shaped like the ones `ovn-nbctl` sends against the real
//! OVN_Northbound schema, and the on-disk record sizes of §1.2.
//!
//! The JSON text of every transaction is built here with the exact shape and
//! member order seen in the real 3.1 sample files (`static/samples/*/s*.db`),
//! for both storage modes: full rows (`--disable-file-column-diff`) and column
//! diffs (`"_is_diff":true`, sets stored as the symmetric difference). The
//! byte sizes are therefore measured from real-shaped text, not guessed.
//! (When the `ovsdb` crate's Database/diff code is ready this module is the
//! place to swap in real execution against the schema.)

use crate::rng::Rng;
use std::fmt::Write as _;
use std::rc::Rc;

pub type Uuid = [u8; 36];

fn us(u: &Uuid) -> &str {
    // Uuids are produced by Rng::uuid and are always ASCII hex + '-'.
    std::str::from_utf8(u).unwrap_or("00000000-0000-0000-0000-000000000000")
}

/// One workload operation, as typed on the ovn-nbctl command line.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Init,
    LsAdd(u64),
    PgAdd,
    AclAdd(u64),
    /// Delete up to `batch` ACLs, lowest priorities first, in one transaction.
    AclDelBatch(u64),
    PgDel,
    LspAdd(u64),
}

impl Op {
    pub fn args(&self) -> String {
        match self {
            Op::Init => "init".into(),
            Op::LsAdd(k) => format!("ls-add ls{k}"),
            Op::PgAdd => "pg-add pg1".into(),
            Op::AclAdd(p) => format!("--log acl-add pg1 from-lport {p} udp drop"),
            Op::AclDelBatch(_) => "acl-del".into(),
            Op::PgDel => "pg-del pg1".into(),
            Op::LspAdd(k) => format!("lsp-add sw lsp{k}"),
        }
    }
}

/// Tiny model of the OVN_Northbound rows the workloads touch; every server
/// keeps one and applies committed transactions to it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NbState {
    pub nb_global: Option<Uuid>,
    /// (uuid, k) of each Logical_Switch "lsK".
    pub switches: Vec<(Uuid, u64)>,
    pub last_switch: Option<Uuid>,
    pub switch_ports: Vec<Uuid>,
    /// (uuid, k, switch) of each Logical_Switch_Port "lspK".
    pub ports: Vec<(Uuid, u64, Uuid)>,
    pub pg: Option<Uuid>,
    /// (priority, uuid) of ACLs in the port group.
    pub acls: Vec<(u64, Uuid)>,
    /// Approximate JSON size of all rows (for snapshot sizes).
    pub rows_bytes: u64,
}

/// A composed transaction: what it changes and its JSON text in both modes.
#[derive(Clone, Debug)]
pub struct Txn {
    pub op: Op,
    pub inserted: Option<Uuid>,
    pub removed: Vec<(u64, Uuid)>,
    pub full: String,
    pub diff: String,
    /// Bytes of `full`/`diff` that are not table data (`_comment`, `_date`,
    /// `_is_diff` members): `text.len() - extras` is the size of the bare
    /// table object, which the core database can compute independently.
    pub extras_full: usize,
    pub extras_diff: usize,
    /// The text of the storage mode in use, parsed once (core database).
    pub parsed: std::cell::OnceCell<Option<ovsdb::Json>>,
    /// Sizes already cross-checked against the core database (the text is
    /// the same for every server, so once is enough).
    pub size_checked: std::cell::Cell<bool>,
}

/// The OVN_Northbound 7.0.0 schema exactly as ovsdb-server 3.1 stores it in
/// a clustered header (`prev_data[0]`): extracted byte for byte from the
/// real `static/samples/ls-add-follower/s2.db` (ephemeral columns already
/// made persistent, members in the server's order).
pub const NB_SCHEMA: &str = include_str!("../data/ovn-nb.clustered-schema.json");

/// An empty core database (`ovsdb::Database`) with the NB schema; the
/// schema is parsed once per process.
pub fn empty_core_db() -> Option<ovsdb::Database> {
    use std::sync::{Arc, OnceLock};
    static SCHEMA: OnceLock<Option<Arc<ovsdb::DatabaseSchema>>> = OnceLock::new();
    let schema = SCHEMA.get_or_init(|| {
        ovsdb::DatabaseSchema::parse(NB_SCHEMA.as_bytes())
            .ok()
            .map(Arc::new)
    });
    schema.clone().map(ovsdb::Database::new)
}

impl Txn {
    /// Parsed JSON of `text(column_diff)` (cached; the mode never changes
    /// within one simulation).
    pub fn json(&self, column_diff: bool) -> Option<&ovsdb::Json> {
        self.parsed
            .get_or_init(|| ovsdb::json::parse(self.text(column_diff).as_bytes()).ok())
            .as_ref()
    }

    /// Size of the bare table object (without `_comment`/`_date`/`_is_diff`).
    pub fn tables_len(&self, column_diff: bool) -> usize {
        if column_diff {
            self.diff.len() - self.extras_diff
        } else {
            self.full.len() - self.extras_full
        }
    }

    pub fn text(&self, column_diff: bool) -> &str {
        if column_diff {
            &self.diff
        } else {
            &self.full
        }
    }
}

fn uuid_set(out: &mut String, set: &[&Uuid]) {
    if set.len() == 1 {
        let _ = write!(out, "[\"uuid\",\"{}\"]", us(set[0]));
        return;
    }
    out.push_str("[\"set\",[");
    for (i, u) in set.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "[\"uuid\",\"{}\"]", us(u));
    }
    out.push_str("]]");
}

fn finish(out: &mut String, comment: &str, date_ms: u64, diff: bool) {
    out.push_str(",\"_comment\":\"");
    for ch in comment.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    let _ = write!(out, "\",\"_date\":{date_ms}");
    if diff {
        out.push_str(",\"_is_diff\":true");
    }
    out.push('}');
}

impl NbState {
    /// Compose `op` against this state (the proposing server's applied
    /// database), choosing new row UUIDs from `rng`.
    pub fn compose(&self, op: &Op, comment_prefix: &str, date_ms: u64, rng: &mut Rng) -> Txn {
        let mut inserted = None;
        let mut removed = Vec::new();
        let mut texts = [String::new(), String::new()];
        let mut extras = [0usize; 2];
        let comment = match op {
            Op::AclDelBatch(b) => {
                let mut sorted = self.acls.clone();
                sorted.sort();
                let mut c = comment_prefix.to_string();
                for (p, _) in sorted.iter().take(*b as usize) {
                    let _ = write!(c, " -- acl-del pg1 from-lport {p} udp");
                }
                c
            }
            _ => format!("{comment_prefix} {}", op.args()),
        };
        let new_uuid = match op {
            Op::Init | Op::LsAdd(_) | Op::PgAdd | Op::AclAdd(_) | Op::LspAdd(_) => {
                let u = rng.uuid();
                inserted = Some(u);
                Some(u)
            }
            _ => None,
        };
        for (mode, out) in texts.iter_mut().enumerate() {
            let diff = mode == 1;
            out.push('{');
            match op {
                Op::Init => {
                    let _ = write!(
                        out,
                        "\"NB_Global\":{{\"{}\":{{}}}}",
                        us(&new_uuid.unwrap_or([b'0'; 36]))
                    );
                }
                Op::LsAdd(k) => {
                    let _ = write!(
                        out,
                        "\"Logical_Switch\":{{\"{}\":{{\"name\":\"ls{k}\"}}}}",
                        us(&new_uuid.unwrap_or([b'0'; 36]))
                    );
                }
                Op::PgAdd => {
                    let _ = write!(
                        out,
                        "\"Port_Group\":{{\"{}\":{{\"name\":\"pg1\"}}}}",
                        us(&new_uuid.unwrap_or([b'0'; 36]))
                    );
                }
                Op::AclAdd(p) => {
                    let u = new_uuid.unwrap_or([b'0'; 36]);
                    let _ = write!(
                        out,
                        "\"ACL\":{{\"{}\":{{\"action\":\"drop\",\"direction\":\"from-lport\",\"log\":true,\"match\":\"udp\",\"priority\":{p}}}}}",
                        us(&u)
                    );
                    if let Some(pg) = &self.pg {
                        let _ = write!(out, ",\"Port_Group\":{{\"{}\":{{\"acls\":", us(pg));
                        if diff {
                            uuid_set(out, &[&u]);
                        } else {
                            let mut all: Vec<&Uuid> = self.acls.iter().map(|(_, u)| u).collect();
                            all.push(&u);
                            all.sort();
                            uuid_set(out, &all);
                        }
                        out.push_str("}}");
                    }
                }
                Op::AclDelBatch(b) => {
                    let mut sorted = self.acls.clone();
                    sorted.sort();
                    let (gone, keep) = sorted.split_at((*b as usize).min(sorted.len()));
                    let mut gone_u: Vec<&Uuid> = gone.iter().map(|(_, u)| u).collect();
                    gone_u.sort();
                    out.push_str("\"ACL\":{");
                    for (i, u) in gone_u.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        let _ = write!(out, "\"{}\":null", us(u));
                    }
                    out.push('}');
                    if let Some(pg) = &self.pg {
                        let _ = write!(out, ",\"Port_Group\":{{\"{}\":{{\"acls\":", us(pg));
                        if diff {
                            uuid_set(out, &gone_u);
                        } else {
                            let mut k: Vec<&Uuid> = keep.iter().map(|(_, u)| u).collect();
                            k.sort();
                            uuid_set(out, &k);
                        }
                        out.push_str("}}");
                    }
                    if !diff {
                        removed = gone.to_vec();
                    }
                }
                Op::PgDel => {
                    // ACLs still in the group lose their only (strong)
                    // reference and are garbage-collected in the same
                    // transaction (ACL is not a root table).
                    let mut left = self.acls.clone();
                    left.sort_by_key(|x| x.1);
                    if !left.is_empty() {
                        out.push_str("\"ACL\":{");
                        for (i, (_, u)) in left.iter().enumerate() {
                            if i > 0 {
                                out.push(',');
                            }
                            let _ = write!(out, "\"{}\":null", us(u));
                        }
                        out.push_str("},");
                        if !diff {
                            removed = left.clone();
                        }
                    }
                    let pg = self.pg.unwrap_or([b'0'; 36]);
                    let _ = write!(out, "\"Port_Group\":{{\"{}\":null}}", us(&pg));
                }
                Op::LspAdd(k) => {
                    let u = new_uuid.unwrap_or([b'0'; 36]);
                    let _ = write!(
                        out,
                        "\"Logical_Switch_Port\":{{\"{}\":{{\"name\":\"lsp{k}\"}}}}",
                        us(&u)
                    );
                    if let Some(sw) = &self.last_switch {
                        let _ = write!(out, ",\"Logical_Switch\":{{\"{}\":{{\"ports\":", us(sw));
                        if diff {
                            uuid_set(out, &[&u]);
                        } else {
                            let mut all: Vec<&Uuid> = self.switch_ports.iter().collect();
                            all.push(&u);
                            all.sort();
                            uuid_set(out, &all);
                        }
                        out.push_str("}}");
                    }
                }
            }
            let before = out.len();
            finish(out, &comment, date_ms, diff);
            extras[mode] = out.len() - before - 1;
        }
        let [full, diff] = texts;
        Txn {
            op: op.clone(),
            inserted,
            removed,
            full,
            diff,
            extras_full: extras[0],
            extras_diff: extras[1],
            parsed: std::cell::OnceCell::new(),
            size_checked: std::cell::Cell::new(false),
        }
    }

    /// Apply a committed transaction.
    pub fn apply(&mut self, t: &Txn) {
        match &t.op {
            Op::Init => {
                self.nb_global = t.inserted;
                self.rows_bytes += 60;
            }
            Op::LsAdd(k) => {
                if let Some(u) = t.inserted {
                    self.switches.push((u, *k));
                }
                self.last_switch = t.inserted;
                self.switch_ports.clear();
                self.rows_bytes += 70;
            }
            Op::PgAdd => {
                self.pg = t.inserted;
                self.acls.clear();
                self.rows_bytes += 70;
            }
            Op::AclAdd(p) => {
                if let Some(u) = t.inserted {
                    self.acls.push((*p, u));
                    self.rows_bytes += 160;
                }
            }
            Op::AclDelBatch(b) => {
                self.acls.sort();
                let k = (*b as usize).min(self.acls.len());
                self.acls.drain(..k);
                self.rows_bytes = self.rows_bytes.saturating_sub(160 * k as u64);
            }
            Op::PgDel => {
                self.pg = None;
                self.acls.clear();
            }
            Op::LspAdd(k) => {
                if let Some(u) = t.inserted {
                    self.switch_ports.push(u);
                    if let Some(sw) = self.last_switch {
                        self.ports.push((u, *k, sw));
                    }
                    self.rows_bytes += 110;
                }
            }
        }
    }

    /// The whole database as the `data` half of a snapshot (`prev_data[1]`),
    /// JSON text with one object per table (rows with their non-default
    /// columns, as ovsdb-server writes them).
    pub fn snapshot_json(&self) -> String {
        let mut tables: Vec<(&str, Vec<(String, String)>)> = Vec::new();
        if !self.acls.is_empty() {
            let rows = self
                .acls
                .iter()
                .map(|(p, u)| {
                    (
                        us(u).to_string(),
                        format!("{{\"action\":\"drop\",\"direction\":\"from-lport\",\"log\":true,\"match\":\"udp\",\"priority\":{p}}}"),
                    )
                })
                .collect();
            tables.push(("ACL", rows));
        }
        if !self.switches.is_empty() {
            let rows = self
                .switches
                .iter()
                .map(|(u, k)| {
                    let mut row = format!("{{\"name\":\"ls{k}\"");
                    let refs: Vec<&Uuid> = self
                        .ports
                        .iter()
                        .filter(|p| p.2 == *u)
                        .map(|p| &p.0)
                        .collect();
                    if !refs.is_empty() {
                        row.push_str(",\"ports\":");
                        uuid_set(&mut row, &refs);
                    }
                    row.push('}');
                    (us(u).to_string(), row)
                })
                .collect();
            tables.push(("Logical_Switch", rows));
        }
        if !self.ports.is_empty() {
            let rows = self
                .ports
                .iter()
                .map(|(u, k, _)| (us(u).to_string(), format!("{{\"name\":\"lsp{k}\"}}")))
                .collect();
            tables.push(("Logical_Switch_Port", rows));
        }
        if let Some(u) = &self.nb_global {
            tables.push(("NB_Global", vec![(us(u).to_string(), "{}".to_string())]));
        }
        if let Some(pg) = &self.pg {
            let mut row = "{\"name\":\"pg1\"".to_string();
            if !self.acls.is_empty() {
                let refs: Vec<&Uuid> = self.acls.iter().map(|(_, u)| u).collect();
                row.push_str(",\"acls\":");
                uuid_set(&mut row, &refs);
            }
            row.push('}');
            tables.push(("Port_Group", vec![(us(pg).to_string(), row)]));
        }
        let mut out = String::from("{");
        for (i, (t, rows)) in tables.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "\"{t}\":{{");
            for (j, (u, r)) in rows.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                let _ = write!(out, "\"{u}\":{r}");
            }
            out.push('}');
        }
        out.push('}');
        out
    }
}

/// Shared handle used inside log entries.
pub type TxnRef = Rc<Txn>;

// ---------------------------------------------------------------- record sizes

/// Decimal digits of n.
pub fn digits(mut n: u64) -> u64 {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// Bytes of one framed record whose JSON (including the trailing newline) is
/// `json_len` bytes: `OVSDB CLUSTER <len> <40 hex>\n` + JSON.
pub fn framed(json_len: u64) -> u64 {
    14 + digits(json_len) + 1 + 40 + 1 + json_len
}

/// `{"eid":"…","data":[null,TXN],"term":T,"index":I}\n`
pub fn data_entry_len(txn_len: u64, term: u64, index: u64) -> u64 {
    framed(8 + 36 + 15 + txn_len + 9 + digits(term) + 9 + digits(index) + 2)
}
/// `{"term":T,"index":I}\n`
pub fn noop_entry_len(term: u64, index: u64) -> u64 {
    framed(8 + digits(term) + 9 + digits(index) + 2)
}
/// `{"servers":{"<sid>":"tcp:127.0.0.1:NNNNN",…},"term":T,"index":I}\n`
pub fn servers_entry_len(n_servers: u64, term: u64, index: u64) -> u64 {
    let per = 1 + 36 + 3 + 19 + 1; // "sid":"tcp:127.0.0.1:17641"
    framed(
        12 + n_servers * per
            + n_servers.saturating_sub(1)
            + 1
            + 8
            + digits(term)
            + 9
            + digits(index)
            + 2,
    )
}
/// `{"election_timer":MS,"term":T,"index":I}\n`
pub fn et_entry_len(ms: u64, term: u64, index: u64) -> u64 {
    framed(18 + digits(ms) + 8 + digits(term) + 9 + digits(index) + 2)
}
/// `{"commit_index":N}\n`
pub fn commit_len(index: u64) -> u64 {
    framed(16 + digits(index) + 2)
}
/// `{"term":T}\n`
pub fn term_len(term: u64) -> u64 {
    framed(8 + digits(term) + 2)
}
/// `{"vote":"<sid>","term":T}\n` and `{"leader":"<sid>","term":T}\n`
pub fn vote_len(term: u64) -> u64 {
    framed(9 + 36 + 9 + digits(term) + 2)
}
pub fn leader_len(term: u64) -> u64 {
    framed(11 + 36 + 9 + digits(term) + 2)
}
/// `{"note":"transfer leadership","comment":"…"}\n` (comment is short text)
pub fn note_len() -> u64 {
    framed(60)
}
/// JSON size of the snapshot header of a fresh OVN_Northbound cluster
/// (the schema inside `prev_data` dominates). Measured on the real 3.1
/// samples: 14779 bytes of JSON for `s1.db` of every NB scenario; joiners'
/// headers carry `"prev_election_timer":1000` in addition (+25 bytes).
pub const NB_HEADER_JSON: u64 = 14_779;

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn record_lengths_match_sample_records() {
        // Lengths of real records from static/samples/acl-portgroup-diff/s2.db
        assert_eq!(noop_entry_len(1, 2), 58 + 21);
        assert_eq!(commit_len(2), 58 + 19);
        assert_eq!(commit_len(170), 58 + 21);
        assert_eq!(term_len(1), 58 + 11);
        assert_eq!(vote_len(2), 58 + 57);
        assert_eq!(leader_len(2), 58 + 59);
        assert_eq!(servers_entry_len(2, 1, 3), 59 + 155);
        assert_eq!(servers_entry_len(3, 1, 4), 59 + 216);
        assert_eq!(framed(14779), 61 + 14779);
    }

    #[test]
    fn acl_add_text_matches_sample_sizes() {
        let mut rng = Rng::new(1);
        let mut db = NbState::default();
        let pfx = "ovn-nbctl: ovn-nbctl --db=unix:s1.sock,unix:s2.sock,unix:s3.sock";
        let t = db.compose(&Op::Init, pfx, 1795986962030, &mut rng);
        // real: diff 259 / full 243 bytes of JSON for the whole entry at index 5
        assert_eq!(data_entry_len(t.diff.len() as u64, 1, 5), 59 + 259);
        assert_eq!(data_entry_len(t.full.len() as u64, 1, 5), 59 + 243);
        db.apply(&t);
        let t = db.compose(&Op::PgAdd, pfx, 1795986962037, &mut rng);
        assert_eq!(data_entry_len(t.diff.len() as u64, 1, 6), 59 + 278);
        db.apply(&t);
        let t = db.compose(&Op::AclAdd(1001), pfx, 1795986962046, &mut rng);
        assert_eq!(data_entry_len(t.diff.len() as u64, 1, 7), 59 + 483);
        assert_eq!(data_entry_len(t.full.len() as u64, 1, 7), 59 + 467);
        db.apply(&t);
        let t = db.compose(&Op::AclAdd(1002), pfx, 1795986962051, &mut rng);
        assert_eq!(data_entry_len(t.full.len() as u64, 1, 8), 59 + 525);
    }
}
