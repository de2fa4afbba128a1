//! The only module that talks to the core: it calls `ovsdb_log::summarize`
//! (compiled to wasm with the rest of the app) and turns its answer into the
//! strings and numbers the page shows. No parsing happens here.

use ovsdb_log::{summarize as core_summarize, FileSummary, Format};

/// What the page shows about one file.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryView {
    /// `"standalone"` or `"clustered"`.
    pub format: &'static str,
    pub database: String,
    /// Number of good records (header/schema record included).
    pub records: usize,
    /// Further rows: (label, test id, raw value for `data-value`, shown text).
    pub details: Vec<Detail>,
    /// Set when the file has a damaged tail: everything before it is shown.
    pub warning: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Detail {
    pub label: &'static str,
    pub test_id: &'static str,
    pub value: String,
    pub text: String,
}

impl SummaryView {
    pub fn format_label(&self) -> &'static str {
        match self.format {
            "clustered" => "clustered (Raft)",
            "standalone" => "standalone",
            _ => "unknown",
        }
    }
}

fn detail(label: &'static str, test_id: &'static str, value: String) -> Detail {
    Detail {
        label,
        test_id,
        text: value.clone(),
        value,
    }
}

fn opt_u64(v: Option<u64>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

/// Summarizes a file, or explains why it is not an OVSDB database file.
pub fn summarize(bytes: &[u8]) -> Result<SummaryView, String> {
    view_of(&core_summarize(bytes))
}

fn view_of(s: &FileSummary) -> Result<SummaryView, String> {
    let format = match (s.format, s.records) {
        (Some(f), n) if n > 0 => f,
        _ => {
            let why = s
                .truncated
                .as_ref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default();
            return Err(format!(
                "This is not an OVSDB database file: it does not start with a valid \
                 \"OVSDB JSON\" or \"OVSDB CLUSTER\" record{why}."
            ));
        }
    };
    let clustered = format == Format::Clustered;
    let k = &s.record_kinds;
    let entries = if clustered { k.entry } else { k.txn };
    let mut details = vec![detail(
        if clustered {
            "Log entries"
        } else {
            "Transactions"
        },
        "summary-entries",
        entries.to_string(),
    )];
    if clustered {
        let terms: Vec<String> = s.terms.iter().map(u64::to_string).collect();
        details.push(detail("Terms", "summary-terms", terms.join(",")));
        details.push(detail(
            "Last index",
            "summary-last-index",
            opt_u64(s.last_index),
        ));
        details.push(detail(
            "Commit index",
            "summary-commit-index",
            opt_u64(s.commit_index),
        ));
        if let Some(sid) = s.server_id {
            details.push(detail("Server ID", "summary-server-id", sid.to_string()));
        }
        if let Some(cid) = s.cluster_id {
            details.push(detail("Cluster ID", "summary-cluster-id", cid.to_string()));
        }
        if let Some(addr) = &s.local_address {
            details.push(detail("Address", "summary-address", addr.clone()));
        }
    }
    if let Some(v) = &s.schema_version {
        details.push(detail(
            "Schema version",
            "summary-schema-version",
            v.clone(),
        ));
    }
    details.push(detail(
        "Entry bytes (as stored)",
        "summary-entry-bytes",
        s.entry_bytes.stored.to_string(),
    ));
    details.push(detail("File bytes", "summary-bytes", s.bytes.to_string()));
    let warning = s.truncated.as_ref().map(|e| {
        format!(
            "The file is damaged at record {} (byte offset {}): {}. The {} records before it are shown.",
            e.record, e.offset, e.kind, s.records
        )
    });
    Ok(SummaryView {
        format: format.name(),
        database: s.database.clone().unwrap_or_default(),
        records: s.records,
        details,
        warning,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_ovsdb_bytes_are_rejected_with_a_clear_message() {
        let err = summarize(b"{\"name\": \"not a log\"}\n").unwrap_err();
        assert!(err.contains("not an OVSDB database file"), "{err}");
        let err = summarize(b"").unwrap_err();
        assert!(err.contains("not an OVSDB database file"), "{err}");
    }
}
