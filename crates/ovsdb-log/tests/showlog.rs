#![allow(dead_code)]
//! A parser for `ovsdb-tool -mm show-log` output (used to compare with the
//! real tool's view of a file).

use ovsdb_log::FileSummary;

#[derive(Debug, Default)]
pub struct Shown {
    pub records: usize,
    pub clustered: bool,
    pub kinds: std::collections::BTreeMap<String, usize>,
    pub terms: std::collections::BTreeSet<u64>,
    pub last_index: Option<u64>,
    pub max_commit: Option<u64>,
    pub prev_index: Option<u64>,
    pub votes: Vec<(u64, String)>,
    pub leaders: Vec<(u64, String)>,
    pub name: Option<String>,
}

pub fn parse(text: &str) -> Shown {
    let mut s = Shown::default();
    // Split into record blocks.
    let mut blocks: Vec<Vec<&str>> = Vec::new();
    for line in text.lines() {
        if line.starts_with("record ") && line.contains(':') {
            blocks.push(vec![line]);
        } else if let Some(b) = blocks.last_mut() {
            b.push(line);
        }
    }
    s.records = blocks.len();
    s.clustered = blocks
        .first()
        .map(|b| b.iter().any(|l| l.starts_with(" name: ")))
        .unwrap_or(false);
    for (i, b) in blocks.iter().enumerate() {
        if !s.clustered {
            *s.kinds
                .entry(if i == 0 { "schema" } else { "txn" }.into())
                .or_default() += 1;
            continue;
        }
        if i == 0 {
            *s.kinds.entry("header".into()).or_default() += 1;
            for l in b {
                if let Some(v) = l.strip_prefix(" prev_index: ") {
                    s.prev_index = v.trim().parse().ok();
                }
                if let Some(v) = l.strip_prefix(" prev_term: ") {
                    s.terms.insert(v.trim().parse().unwrap());
                }
                if let Some(v) = l.strip_prefix(" name: \"") {
                    s.name = Some(v.trim_end_matches('\'').to_string());
                }
            }
            continue;
        }
        let field = |name: &str| -> Option<String> {
            b.iter().find_map(|l| {
                l.strip_prefix(&format!(" {name}: "))
                    .map(|v| v.trim().to_string())
            })
        };
        let term: Option<u64> = field("term").and_then(|t| t.parse().ok());
        if let Some(t) = term {
            s.terms.insert(t);
        }
        let kind = if field("note").is_some() {
            "note"
        } else if let Some(ci) = field("commit_index") {
            let ci: u64 = ci.parse().unwrap();
            s.max_commit = Some(s.max_commit.unwrap_or(0).max(ci));
            "commit_index"
        } else if let Some(l) = field("leader") {
            s.leaders.push((term.unwrap(), l));
            "leader"
        } else if let Some(v) = field("vote") {
            s.votes.push((term.unwrap(), v));
            "vote"
        } else if let Some(ix) = field("index") {
            s.last_index = Some(ix.parse().unwrap());
            "entry"
        } else {
            "term"
        };
        *s.kinds.entry(kind.into()).or_default() += 1;
    }
    s
}

pub fn assert_agrees(sum: &FileSummary, shown: &Shown, what: &str) {
    assert_eq!(sum.records, shown.records, "{what}: records");
    let k = &sum.record_kinds;
    let get = |n: &str| shown.kinds.get(n).copied().unwrap_or(0);
    if shown.clustered {
        assert_eq!(k.header, get("header"), "{what}: header");
        assert_eq!(k.entry, get("entry"), "{what}: entry");
        assert_eq!(k.term, get("term"), "{what}: term");
        assert_eq!(k.vote, get("vote"), "{what}: vote");
        assert_eq!(k.leader, get("leader"), "{what}: leader");
        assert_eq!(k.commit_index, get("commit_index"), "{what}: commit_index");
        assert_eq!(k.note, get("note"), "{what}: note");
        let terms: Vec<u64> = shown.terms.iter().copied().collect();
        assert_eq!(sum.terms, terms, "{what}: terms");
        assert_eq!(sum.snapshot_index, shown.prev_index, "{what}: prev_index");
        assert_eq!(
            sum.last_index,
            shown.last_index.or(shown.prev_index),
            "{what}: last_index"
        );
        assert_eq!(sum.commit_index, shown.max_commit, "{what}: commit_index");
        assert_eq!(sum.database, shown.name, "{what}: name");
        let votes: Vec<(u64, String)> =
            sum.votes.iter().map(|v| (v.term, v.sid.short4())).collect();
        assert_eq!(votes, shown.votes, "{what}: votes");
        let leaders: Vec<(u64, String)> = sum
            .leaders
            .iter()
            .map(|v| (v.term, v.sid.short4()))
            .collect();
        assert_eq!(leaders, shown.leaders, "{what}: leaders");
    } else {
        assert_eq!(k.schema, get("schema"), "{what}: schema");
        assert_eq!(k.txn, get("txn"), "{what}: txn");
    }
}
