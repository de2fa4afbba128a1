//! UTC wall-clock text for the `_date` members of log records (milliseconds
//! since the Unix epoch). No clock is read: these only format given values.

/// `(year, month, day)` of the civil (proleptic Gregorian) date `days`
/// days after 1970-01-01.
fn civil(days: i64) -> (i64, u32, u32) {
    // Shift to a calendar whose years start on March 1st, so the leap day
    // is the last day of a year; eras are 400-year cycles of 146097 days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `YYYY-MM-DD` (UTC) of a `_date` in ms.
pub fn utc_date(ms: i64) -> String {
    let (y, m, d) = civil(ms.div_euclid(86_400_000));
    format!("{y:04}-{m:02}-{d:02}")
}

/// `HH:MM:SS` (UTC) of a `_date` in ms.
pub fn utc_clock(ms: i64) -> String {
    let s = ms.div_euclid(1000).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

/// `YYYY-MM-DD HH:MM:SS.mmm` (UTC) of a `_date` in ms.
pub fn utc_datetime(ms: i64) -> String {
    format!(
        "{} {}.{:03}",
        utc_date(ms),
        utc_clock(ms),
        ms.rem_euclid(1000)
    )
}

/// Whether two `_date`s fall on the same UTC day.
pub fn same_day(a: i64, b: i64) -> bool {
    a.div_euclid(86_400_000) == b.div_euclid(86_400_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_of_known_instants() {
        // Expected values from Python's datetime.
        assert_eq!(utc_datetime(0), "1970-01-01 00:00:00.000");
        // A real sample record's _date (acl-portgroup, index 5).
        assert_eq!(utc_datetime(1_795_986_962_030), "2026-11-29 21:16:02.030");
        assert_eq!(utc_datetime(951_782_400_000), "2000-02-29 00:00:00.000");
        assert_eq!(utc_datetime(-1), "1969-12-31 23:59:59.999");
        assert_eq!(utc_datetime(4_102_444_800_000), "2100-01-01 00:00:00.000");
        assert!(same_day(951_782_400_000, 951_868_799_999));
        assert!(!same_day(951_782_399_999, 951_782_400_000));
    }

    #[test]
    fn every_day_of_four_centuries_follows_the_previous_one() {
        let mut prev = civil(-1);
        for d in 0..146_097 * 2 {
            let (y, m, day) = civil(d);
            let next_day = (prev.0, prev.1, prev.2 + 1) == (y, m, day);
            let next_month = prev.0 == y && prev.1 + 1 == m && day == 1;
            let next_year = prev.0 + 1 == y && m == 1 && day == 1 && prev.1 == 12;
            assert!(
                next_day || next_month || next_year,
                "{prev:?} -> {:?}",
                (y, m, day)
            );
            if !next_day {
                // A month ends on its last day (leap years: /4, not /100
                // unless /400).
                let leap = prev.0 % 4 == 0 && (prev.0 % 100 != 0 || prev.0 % 400 == 0);
                let len = [
                    31,
                    if leap { 29 } else { 28 },
                    31,
                    30,
                    31,
                    30,
                    31,
                    31,
                    30,
                    31,
                    30,
                    31,
                ];
                assert_eq!(prev.2, len[prev.1 as usize - 1], "{prev:?}");
            }
            prev = (y, m, day);
        }
    }
}
