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

pub fn files(name: &str) -> Option<&'static [&'static str]> {
    SAMPLES.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}
