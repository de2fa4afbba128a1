#![cfg(not(target_arch = "wasm32"))]
//! Property tests: any truncation or byte flip of a real file yields a
//! typed error naming a record and offset, never a panic, and the records
//! before the damage are still summarized.

mod common;

use ovsdb_log::{summarize_records, ErrorKind, Framer};
use proptest::prelude::*;

fn boundaries(bytes: &[u8]) -> Vec<u64> {
    Framer::new(bytes).map(|r| r.unwrap().end()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn truncation_keeps_prefix(cut_frac in 0.0f64..1.0) {
        let bytes = common::sample("election-timer", "s2");
        let ends = boundaries(&bytes);
        let cut = ((bytes.len() as f64) * cut_frac) as usize;
        let s = summarize_records(&bytes[..cut]);
        let complete = ends.iter().filter(|&&e| e as usize <= cut).count();
        prop_assert_eq!(s.records, complete);
        let at_boundary = cut == 0 || ends.contains(&(cut as u64));
        if at_boundary && cut > 0 {
            prop_assert!(s.truncated.is_none());
        } else {
            let e = s.truncated.unwrap();
            prop_assert_eq!(e.record, complete);
            prop_assert!(e.offset as usize <= cut);
        }
    }

    #[test]
    fn byte_flip_is_detected(pos_frac in 0.0f64..1.0, xor in 1u8..=255) {
        let mut bytes = common::sample("election-timer", "s3");
        let ends = boundaries(&bytes);
        let pos = ((bytes.len() as f64 - 1.0) * pos_frac) as usize;
        let orig = bytes[pos];
        bytes[pos] ^= xor;
        // Changing the case of a hex letter in a record's header line (the
        // SHA-1 field) is no damage: the C reader, and ours, accept either
        // case. The file must then read exactly as before.
        let line_start = bytes[..pos].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if bytes[line_start..].starts_with(b"OVSDB ")
            && orig.is_ascii_hexdigit()
            && orig.is_ascii_alphabetic()
            && bytes[pos].eq_ignore_ascii_case(&orig)
        {
            let s = summarize_records(&bytes);
            prop_assert!(s.truncated.is_none());
            prop_assert_eq!(s.records, ends.len());
            return Ok(());
        }
        let s = summarize_records(&bytes);
        let before = ends.iter().filter(|&&e| (e as usize) <= pos).count();
        // Records wholly before the flipped byte are intact.
        prop_assert!(s.records >= before);
        // Salvage: damage followed by a good record is a skipped span (the
        // flipped record, and every later record is read); damage in the
        // last record ends the file as before.
        let e = match s.skipped.first() {
            Some(k) => {
                prop_assert_eq!(s.skipped.len(), 1);
                prop_assert!(s.truncated.is_none());
                prop_assert_eq!(k.record, before);
                let start = if before == 0 { 0 } else { ends[before - 1] };
                prop_assert_eq!(k.offset, start);
                prop_assert_eq!(k.end(), ends[before]);
                prop_assert_eq!(s.records, ends.len() - 1);
                k.error.clone()
            }
            None => {
                let e = s.truncated.expect("damage must be reported");
                prop_assert_eq!(before, ends.len() - 1, "only the last record may end the file");
                e
            }
        };
        prop_assert!(e.record >= before);
        prop_assert!(!matches!(e.kind, ErrorKind::EmptyFile));
    }
}
