//! Absolute times: HTTP-dates (RFC 9110, all three forms) and RFC 3339, as unix milliseconds.

use super::*;

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days-from-civil).
pub(super) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let m = i64::from(month);
    let d = i64::from(day);
    let y = if m <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Gregorian year containing the given day since 1970-01-01 (inverse of [`days_from_civil`]).
pub(super) fn year_from_days(days: i64) -> i64 {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let y = yoe + era * 400;
    if mp >= 10 {
        y + 1
    } else {
        y
    }
}

pub(super) fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => 31,
    }
}

/// Unix milliseconds of a validated UTC civil time (seconds may be 60, a leap second).
pub(super) fn civil_ms(year: i64, month: u32, day: u32, h: u32, mi: u32, s: u32) -> Option<i128> {
    let valid = (1..=9999).contains(&year)
        && (1..=12).contains(&month)
        && day >= 1
        && day <= days_in_month(year, month)
        && h <= 23
        && mi <= 59
        && s <= 60;
    if !valid {
        return None;
    }
    let secs = i128::from(h) * 3600 + i128::from(mi) * 60 + i128::from(s);
    Some(i128::from(days_from_civil(year, month, day)) * MS_PER_DAY + secs * 1000)
}

/// `min..=max` ASCII digits as a number.
pub(super) fn digits(s: &str, min: usize, max: usize) -> Option<u32> {
    if s.len() < min || s.len() > max || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(
        s.bytes()
            .fold(0u32, |acc, b| acc * 10 + u32::from(b - b'0')),
    )
}

pub(super) fn month_number(name: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    (1..)
        .zip(MONTHS)
        .find(|(_, m)| m.eq_ignore_ascii_case(name))
        .map(|(n, _)| n)
}

pub(super) fn is_weekday(name: &str) -> bool {
    const DAYS: [&str; 7] = [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ];
    DAYS.iter().any(|d| {
        d.eq_ignore_ascii_case(name) || d.get(..3).is_some_and(|s| s.eq_ignore_ascii_case(name))
    })
}

/// `HH:MM:SS` (one or two digits each).
pub(super) fn hms(s: &str) -> Option<(u32, u32, u32)> {
    let (h, rest) = s.split_once(':')?;
    let (m, sec) = rest.split_once(':')?;
    Some((digits(h, 1, 2)?, digits(m, 1, 2)?, digits(sec, 1, 2)?))
}

pub(super) fn is_gmt(tz: &str) -> bool {
    tz.eq_ignore_ascii_case("GMT") || tz.eq_ignore_ascii_case("UTC")
}

/// An RFC 9110 HTTP-date as unix milliseconds. Two-digit RFC 850 years are placed in the
/// century that puts them no more than 50 years after `now_unix_ms`.
pub(super) fn http_date_ms(v: &str, now_unix_ms: u64) -> Option<i128> {
    let tokens: Vec<&str> = v.split_ascii_whitespace().take(7).collect();
    match tokens.as_slice() {
        // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
        [wd, day, mon, year, time, tz] => {
            if !is_weekday(wd.strip_suffix(',')?) || !is_gmt(tz) {
                return None;
            }
            let (h, mi, s) = hms(time)?;
            let year = i64::from(digits(year, 4, 4)?);
            civil_ms(year, month_number(mon)?, digits(day, 1, 2)?, h, mi, s)
        }
        // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
        [wd, date, time, tz] => {
            if !is_weekday(wd.strip_suffix(',')?) || !is_gmt(tz) {
                return None;
            }
            let (day, rest) = date.split_once('-')?;
            let (mon, year) = rest.split_once('-')?;
            let year = match year.len() {
                2 => expand_two_digit_year(digits(year, 2, 2)?, now_unix_ms),
                _ => i64::from(digits(year, 4, 4)?),
            };
            let (h, mi, s) = hms(time)?;
            civil_ms(year, month_number(mon)?, digits(day, 1, 2)?, h, mi, s)
        }
        // asctime: Sun Nov  6 08:49:37 1994
        [wd, mon, day, time, year] => {
            if !is_weekday(wd) {
                return None;
            }
            let (h, mi, s) = hms(time)?;
            let year = i64::from(digits(year, 4, 4)?);
            civil_ms(year, month_number(mon)?, digits(day, 1, 2)?, h, mi, s)
        }
        _ => None,
    }
}

pub(super) fn expand_two_digit_year(yy: u32, now_unix_ms: u64) -> i64 {
    let now_days = i64::try_from(now_unix_ms / 86_400_000).unwrap_or(0);
    let current = year_from_days(now_days);
    let year = current - current.rem_euclid(100) + i64::from(yy);
    if year > current + 50 {
        year - 100
    } else {
        year
    }
}

/// A byte cursor for fixed-layout formats.
pub(super) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn eat(&mut self, set: &[u8]) -> Option<u8> {
        let b = *self.bytes.get(self.pos)?;
        if set.contains(&b) {
            self.pos += 1;
            Some(b)
        } else {
            None
        }
    }

    /// Exactly `n` digits.
    fn num(&mut self, n: usize) -> Option<u32> {
        let end = self.pos.checked_add(n)?;
        let v = self
            .bytes
            .get(self.pos..end)?
            .iter()
            .try_fold(0u32, |acc, b| {
                b.is_ascii_digit().then(|| acc * 10 + u32::from(b - b'0'))
            })?;
        self.pos = end;
        Some(v)
    }

    /// A run of digits (possibly empty): its first three digits as milliseconds.
    fn fraction_ms(&mut self) -> u32 {
        let mut ms = 0;
        let mut scale = 100;
        while let Some(b) = self.bytes.get(self.pos).filter(|b| b.is_ascii_digit()) {
            ms += u32::from(b - b'0') * scale;
            scale /= 10;
            self.pos += 1;
        }
        ms
    }

    fn done(&self) -> bool {
        self.pos >= self.bytes.len()
    }
}

/// RFC 3339 `YYYY-MM-DDTHH:MM:SS[.frac](Z|±hh:mm)` as unix milliseconds.
pub(super) fn rfc3339_ms(v: &str) -> Option<i128> {
    let mut c = Cursor {
        bytes: v.as_bytes(),
        pos: 0,
    };
    let year = c.num(4)?;
    c.eat(b"-")?;
    let month = c.num(2)?;
    c.eat(b"-")?;
    let day = c.num(2)?;
    c.eat(b"Tt ")?;
    let h = c.num(2)?;
    c.eat(b":")?;
    let mi = c.num(2)?;
    c.eat(b":")?;
    let s = c.num(2)?;
    let mut frac_ms = 0;
    if c.eat(b".").is_some() {
        let start = c.pos;
        frac_ms = c.fraction_ms();
        if c.pos == start {
            return None;
        }
    }
    let mut offset_ms: i128 = 0;
    if !c.done() && c.eat(b"Zz").is_none() {
        let sign = c.eat(b"+-")?;
        let oh = c.num(2)?;
        c.eat(b":");
        let om = c.num(2)?;
        if oh > 23 || om > 59 {
            return None;
        }
        offset_ms = (i128::from(oh) * 60 + i128::from(om)) * 60_000;
        if sign == b'-' {
            offset_ms = -offset_ms;
        }
    }
    if !c.done() {
        return None;
    }
    let local = civil_ms(i64::from(year), month, day, h, mi, s)?;
    Some(local + i128::from(frac_ms) - offset_ms)
}

// ---------------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// Calendar windows (budgets)
// ---------------------------------------------------------------------------------------------

/// Year, month and day of a day since 1970-01-01.
pub(super) fn civil_of_days(days: i64) -> (i64, u32, u32) {
    let year = year_from_days(days);
    let mut month = 12;
    while month > 1 && days_from_civil(year, month, 1) > days {
        month -= 1;
    }
    let day = days - days_from_civil(year, month, 1) + 1;
    (year, month, u32::try_from(day).unwrap_or(1))
}

/// The first milliseconds of the month containing `ms` and of the next one.
pub(super) fn month_bounds(ms: i64) -> (i64, i64) {
    let day_ms = i64::try_from(MS_PER_DAY).unwrap_or(86_400_000);
    let (year, month, _) = civil_of_days(ms.div_euclid(day_ms));
    let start = days_from_civil(year, month, 1) * day_ms;
    let (ny, nm) = if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    };
    (start, days_from_civil(ny, nm, 1) * day_ms)
}
