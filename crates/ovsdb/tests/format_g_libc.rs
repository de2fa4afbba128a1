//! `json::format_g` against the C library's `snprintf("%.*g")`, the
//! function OVS itself formats reals with, over random doubles: any bit
//! pattern, subnormals, huge and tiny exponents, integers as doubles, and
//! values near the rounding boundaries of 15 digits.
#![cfg(not(target_arch = "wasm32"))]

use ovsdb::json::format_g;
use proptest::prelude::*;

fn c_format_g(v: f64, precision: usize) -> String {
    let mut buf = [0u8; 64];
    let fmt = b"%.*g\0";
    // SAFETY: the buffer is 64 bytes and its size is passed; "%.*g" takes
    // an int precision and a double; %g output of a double is < 40 bytes.
    let n = unsafe {
        libc::snprintf(
            buf.as_mut_ptr().cast(),
            buf.len(),
            fmt.as_ptr().cast(),
            precision as libc::c_int,
            v,
        )
    };
    assert!(n > 0 && (n as usize) < buf.len());
    String::from_utf8(buf[..n as usize].to_vec()).unwrap()
}

fn check(v: f64, p: usize) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        format_g(v, p),
        c_format_g(v, p),
        "{:e} (bits {:#x}) %.{}g",
        v,
        v.to_bits(),
        p
    );
    Ok(())
}

fn doubles() -> impl Strategy<Value = f64> {
    prop_oneof![
        // Any bit pattern (NaNs, infinities and zeros included).
        any::<u64>().prop_map(f64::from_bits),
        // Subnormals.
        (1u64..(1 << 52), any::<bool>())
            .prop_map(|(m, neg)| f64::from_bits(m | (u64::from(neg) << 63))),
        // Huge and tiny exponents.
        (any::<u64>(), prop_oneof![0u64..40, 2007u64..2047])
            .prop_map(|(m, e)| f64::from_bits((m & ((1 << 52) - 1)) | (e << 52))),
        // Integers as doubles, small and large.
        (-1_000_000i64..1_000_000).prop_map(|i| i as f64),
        any::<i64>().prop_map(|i| i as f64),
        // Short decimals and 15/16/17-digit values (rounding boundaries).
        (-99_999i64..99_999, -30i32..30).prop_map(|(m, e)| m as f64 * 10f64.powi(e)),
        (1e14f64..1e17).prop_map(|x| x.trunc() / 1e16),
        (0.0f64..1.0).prop_map(|x| x + 0.5e-15),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn format_g_15_matches_libc(v in doubles()) {
        check(v, 15)?;
    }

    #[test]
    fn format_g_other_precisions_match_libc(v in doubles(), p in 1usize..=17) {
        check(v, p)?;
    }
}

#[test]
fn format_g_edge_values_match_libc() {
    for v in [
        0.0,
        -0.0,
        f64::MIN_POSITIVE,
        f64::MIN_POSITIVE / 2.0,
        f64::from_bits(1),
        f64::MAX,
        f64::MIN,
        f64::EPSILON,
        1e15,
        1e16,
        999_999_999_999_999.0,
        9_999_999_999_999_999.0,
        0.1,
        1e-5,
        1e-4,
        123_456_789_012_345_680.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ] {
        for p in [1, 6, 10, 15, 17] {
            assert_eq!(format_g(v, p), c_format_g(v, p), "{v:e} %.{p}g");
        }
    }
}
