//! UUID text form, order and helpers (cf. ovs tests/uuid.at).

use ovsdb::Uuid;

#[test]
fn parse_format_order() {
    let s = "550e8400-e29b-41d4-a716-446655440000";
    let u = Uuid::parse(s).unwrap();
    assert_eq!(u.to_string(), s);
    assert_eq!(Uuid::parse("550E8400-E29B-41D4-A716-446655440000"), Some(u));
    assert_eq!(u.first_word(), 0x550e8400);
    assert_eq!(u.prefix(4), "550e");
    for bad in [
        "",
        "550e8400e29b41d4a716446655440000",
        "550e8400-e29b-41d4-a716-44665544000",
        "550e8400-e29b-41d4-a716-4466554400000",
        "550e8400-e29b-41d4-a716_446655440000",
        "g50e8400-e29b-41d4-a716-446655440000",
        "+50e8400-e29b-41d4-a716-446655440000",
    ] {
        assert!(Uuid::parse(bad).is_none(), "{bad}");
    }
    // textual order == numeric order
    let a = Uuid::parse("00000000-0000-0000-0000-000000000001").unwrap();
    let b = Uuid::parse("00000000-0000-0000-0001-000000000000").unwrap();
    let c = Uuid::parse("00000001-0000-0000-0000-000000000000").unwrap();
    assert!(a < b && b < c);
    assert!(Uuid::NIL.is_nil());
}

#[test]
fn new_v4_sets_version_and_variant() {
    for bits in [0u128, u128::MAX, 0x0123_4567_89ab_cdef_0123_4567_89ab_cdef] {
        let s = Uuid::new_v4(bits).to_string();
        assert_eq!(&s[14..15], "4", "{s}");
        assert!(matches!(&s[19..20], "8" | "9" | "a" | "b"), "{s}");
    }
}
