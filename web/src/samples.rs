//! The real sample files bundled with the app (copied from ovsdb-server 3.1
//! runs into static/samples/ and served by trunk under samples/).

pub const DEFAULT: &str = "leader-failover";

pub const SAMPLES: &[(&str, &[&str])] = &[
    ("leader-failover", &["s1.db", "s2.db", "s3.db"]),
    ("ls-add-follower", &["s1.db", "s2.db", "s3.db"]),
    ("acl-portgroup-diff", &["s1.db", "s2.db", "s3.db"]),
    ("acl-portgroup-full", &["s1.db", "s2.db", "s3.db"]),
    ("election-timer", &["s1.db", "s2.db", "s3.db"]),
    ("compacted", &["s1.db", "s2.db", "s3.db"]),
    ("membership", &["s1.db", "s2.db", "s3.db"]),
    ("sb-scale", &["s1.db", "s2.db", "s3.db"]),
    ("standalone", &["nb.db"]),
];

/// Incidents with the operator's evidence next to the files (copies of
/// `tests/fixtures/incidents/<name>/`, under `samples/incidents/<name>/`).
pub const INCIDENTS: &[(&str, &[&str])] = &[(
    "leader-pause",
    &[
        "s1.db",
        "s2.db",
        "s3.db",
        "s1.ovsdb-server.log",
        "s2.ovsdb-server.log",
        "s3.ovsdb-server.log",
        "s1.cluster-status.txt",
        "s2.cluster-status.txt",
        "s3.cluster-status.txt",
        "s1.memory-show.txt",
        "s2.memory-show.txt",
        "s3.memory-show.txt",
        "s1.coverage-show.txt",
        "s2.coverage-show.txt",
        "s3.coverage-show.txt",
    ],
)];

pub fn files(name: &str) -> Option<&'static [&'static str]> {
    SAMPLES
        .iter()
        .chain(INCIDENTS)
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
}

/// URL of one file of a sample.
pub fn url(name: &str, file: &str) -> String {
    if INCIDENTS.iter().any(|(n, _)| *n == name) {
        format!("samples/incidents/{name}/{file}")
    } else {
        format!("samples/{name}/{file}")
    }
}
