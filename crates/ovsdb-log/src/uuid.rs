//! UUIDs as the log formats write them (36-char canonical text).
//!
//! One UUID type for the whole core: this is `ovsdb`'s [`ovsdb::Uuid`]
//! (a `u128` in textual order), re-exported so `ovsdb_log::Uuid` and
//! `ovsdb_log::uuid::Uuid` keep working. Parsing, formatting, `short4`,
//! `short8`, `word0`, `from_seed` and the byte accessors live there.

pub use ovsdb::uuid::Uuid;

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn roundtrip() {
        let s = "6406d516-5d1a-46fc-84a6-77eefe27fd14";
        let u = Uuid::parse(s).unwrap();
        assert_eq!(u.to_string(), s);
        assert_eq!(Uuid::parse(&s.to_uppercase()), Some(u));
        assert_eq!(u.short4(), "6406");
        assert!(Uuid::parse("6406d516-5d1a-46fc-84a6-77eefe27fd1").is_none());
        assert!(Uuid::parse("6406d516x5d1a-46fc-84a6-77eefe27fd14").is_none());
        assert!(Uuid::parse("6406d516-5d1a-46fc-84a6-77eefe27fd1g").is_none());
        // The same type as the data model's.
        let v: ovsdb::Uuid = u;
        assert_eq!(v, u);
    }
}
