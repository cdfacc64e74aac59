//! Wait hints: how long an upstream asks us to wait before retrying, normalized to milliseconds.
//!
//! Sources, each with its own parser:
//! - `Retry-After` ([`retry_after`]): delta-seconds (decimals tolerated) or an HTTP-date.
//! - `retry-after-ms` / `x-ms-retry-after-ms` ([`retry_after_ms`]): milliseconds.
//! - `x-ratelimit-reset-requests` / `-tokens` (OpenAI, Groq) and Google `RetryInfo.retryDelay`
//!   ([`duration`]): Go/Protobuf durations such as `6m0s`, `1.5s`, `20ms`.
//! - `anthropic-ratelimit-*-reset` and unix-timestamp `x-ratelimit-reset` ([`reset_time`]):
//!   absolute times (RFC 3339, unix seconds or unix milliseconds).
//! - Generic `x-ratelimit-reset*` of unknown format ([`reset_header`]).
//! - Error messages ([`from_message`]): "Please try again in 20s.", "请在 5 秒后重试", ...
//! - JSON error bodies ([`body_fields`]): `RetryInfo`, `retry_after`, `resets_at`, ...
//!
//! Everything is pure (the current time is a parameter), never panics, and every result is
//! capped at [`MAX_WAIT_MS`]. Fractions are rounded to the nearest millisecond; a time in the
//! past gives `Some(0)`.

use serde_json::{Map, Number, Value};

/// Upper bound of every wait returned by this module: 366 days in milliseconds.
pub const MAX_WAIT_MS: u64 = 366 * 24 * 60 * 60 * 1000;

const NS_PER_MS: u128 = 1_000_000;
const NS_PER_S: u128 = 1_000_000_000;
const NS_PER_MIN: u128 = 60 * NS_PER_S;
const NS_PER_H: u128 = 60 * NS_PER_MIN;
const MS_PER_DAY: i128 = 86_400_000;
/// Integer parts are clamped to 1e20 before scaling, so products stay far below `u128::MAX`.
const INT_CLAMP: u128 = 100_000_000_000_000_000_000;
/// Fraction digits beyond this are validated but ignored (they are below a nanosecond anyway).
const MAX_FRAC_DIGITS: usize = 18;
/// Numbers above this many seconds are unix timestamps in seconds (2001-09-09).
const UNIX_S_MIN: u128 = 1_000_000_000;
/// Numbers above this are unix timestamps in milliseconds.
const UNIX_MS_MIN: u128 = 1_000_000_000_000;
/// `body_fields` looks no deeper than this (the root is depth 0).
const MAX_DEPTH: usize = 6;
/// `body_fields` inspects at most this many JSON containers.
const MAX_NODES: usize = 1024;

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

/// `Retry-After`: delta-seconds (`"20"`, also `"1.5"`) or an HTTP-date in any of the three
/// RFC 9110 forms (IMF-fixdate, RFC 850, asctime). A date in the past gives `Some(0)`.
pub fn retry_after(value: &str, now_unix_ms: u64) -> Option<u64> {
    let v = value.trim();
    if let Some(ns) = decimal_ns(v, NS_PER_S) {
        return Some(cap_ns(ns));
    }
    http_date_ms(v, now_unix_ms).map(|at| until(at, now_unix_ms))
}

/// `retry-after-ms` / `x-ms-retry-after-ms`: integer or decimal milliseconds.
pub fn retry_after_ms(value: &str) -> Option<u64> {
    decimal_ns(value.trim(), NS_PER_MS).map(cap_ns)
}

/// A Go/Protobuf duration: one or more `<number><unit>` parts with units `ns`, `us`/`µs`, `ms`,
/// `s`, `m`, `h` (`"6m0s"`, `"1.5s"`, `"1h2m3.5s"`). A bare number, a sign or spaces give `None`.
pub fn duration(value: &str) -> Option<u64> {
    let mut rest = value.trim();
    if rest.is_empty() {
        return None;
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let num_len = rest
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'.')
            .count();
        let (num, after) = rest.split_at_checked(num_len)?;
        let unit_len = after
            .char_indices()
            .find(|(_, c)| c.is_ascii_digit() || *c == '.')
            .map_or(after.len(), |(i, _)| i);
        let (unit, next) = after.split_at_checked(unit_len)?;
        total = total.saturating_add(decimal_ns(num, go_unit_ns(unit)?)?);
        rest = next;
    }
    Some(cap_ns(total))
}

/// An absolute reset time, as milliseconds from now (`Some(0)` if past): RFC 3339
/// (`2024-11-04T19:10:00Z`, optional fraction, `Z` or `±hh:mm`; a missing offset is read as
/// UTC), unix seconds (> 1e9) or unix milliseconds (> 1e12). Smaller numbers give `None`.
pub fn reset_time(value: &str, now_unix_ms: u64) -> Option<u64> {
    let v = value.trim();
    if let Some(ns) = decimal_ns(v, NS_PER_S) {
        if ns <= UNIX_S_MIN * NS_PER_S {
            return None;
        }
        return Some(until(unix_number_ms(ns), now_unix_ms));
    }
    rfc3339_ms(v).map(|at| until(at, now_unix_ms))
}

/// A generic `x-ratelimit-reset*` header: a [`duration`], else a [`reset_time`], else a bare
/// number of seconds from now (≤ 1e9, e.g. `"60"`, `"0.5"`), else an HTTP-date.
pub fn reset_header(value: &str, now_unix_ms: u64) -> Option<u64> {
    let v = value.trim();
    duration(v)
        .or_else(|| reset_time(v, now_unix_ms))
        .or_else(|| {
            let ns = decimal_ns(v, NS_PER_S)?;
            (ns <= UNIX_S_MIN * NS_PER_S).then(|| cap_ns(ns))
        })
        .or_else(|| http_date_ms(v, now_unix_ms).map(|at| until(at, now_unix_ms)))
}

/// A wait stated in an error message, read only right after a phrase that introduces it
/// ("try again in", "retry after", "wait", "请在", ...), never from a loose number.
/// A number needs a unit (`ms`, `s`, `sec`, `seconds`, `m`, `min`, `minutes`, `h`, `hr`, `hours`,
/// `秒`, `分钟`, `小时`); Go-style `1m30s` and spoken `1 minute 30 seconds` are summed.
/// A bare "in 30 sec" counts only where "in" starts a clause, so "100 requests in 1 minute"
/// is not read as a wait. The earliest anchored wait in the message wins.
pub fn from_message(message: &str) -> Option<u64> {
    // ASCII lowercasing keeps byte offsets, so positions in `lower` are valid in `message`.
    let lower = message.to_ascii_lowercase();
    let mut candidates: Vec<(usize, usize)> = STRONG_ANCHORS
        .iter()
        .flat_map(|anchor| {
            lower
                .match_indices(anchor)
                .map(move |(i, a)| (i, i.saturating_add(a.len())))
        })
        .filter(|&(start, end)| {
            // Chinese anchors need no word boundary.
            let ascii = lower.get(start..end).is_some_and(|a| a.is_ascii());
            !ascii || word_start(&lower, start)
        })
        .collect();
    candidates.sort_unstable();
    let strong = candidates
        .iter()
        .find_map(|&(_, end)| lower.get(end..).and_then(spoken_duration));
    strong.or_else(|| {
        lower
            .match_indices("in")
            .filter(|&(start, _)| word_start(&lower, start) && clause_start(&lower, start))
            .find_map(|(start, _)| {
                lower
                    .get(start.saturating_add(2)..)
                    .and_then(spoken_duration)
            })
    })
}

/// Wait hints stated as JSON fields anywhere (depth ≤ 6) in an error body. Priority:
/// Google `RetryInfo.retryDelay` (string duration or `{seconds, nanos}`), `retry_after_ms`,
/// `retry_after` / `retry_after_seconds` / `retryAfter` (seconds), `resets_in_seconds`,
/// `resets_at` (unix seconds, or RFC 3339 string). Numeric strings are accepted as numbers.
pub fn body_fields(value: &Value, now_unix_ms: u64) -> Option<u64> {
    let mut best: Option<(u8, u64)> = None;
    let mut budget = MAX_NODES;
    walk(value, 0, now_unix_ms, &mut best, &mut budget);
    best.map(|(_, ms)| ms)
}

// ---------------------------------------------------------------------------------------------
// Numbers and units
// ---------------------------------------------------------------------------------------------

/// Nanoseconds to milliseconds, rounded to nearest and capped at [`MAX_WAIT_MS`].
fn cap_ns(ns: u128) -> u64 {
    let ms = ns.saturating_add(NS_PER_MS / 2) / NS_PER_MS;
    u64::try_from(ms).map_or(MAX_WAIT_MS, |ms| ms.min(MAX_WAIT_MS))
}

/// Milliseconds from now until `target_ms` (unix ms), 0 if past, capped.
fn until(target_ms: i128, now_unix_ms: u64) -> u64 {
    let diff = target_ms.saturating_sub(i128::from(now_unix_ms));
    if diff <= 0 {
        0
    } else {
        u64::try_from(diff).map_or(MAX_WAIT_MS, |d| d.min(MAX_WAIT_MS))
    }
}

/// `digits[.digits]` (either side may be empty, not both) times `unit_ns`, in nanoseconds.
/// No sign, exponent or spaces. Saturates instead of overflowing.
fn decimal_ns(num: &str, unit_ns: u128) -> Option<u128> {
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let int_val = int.bytes().fold(0u128, |acc, b| {
        acc.saturating_mul(10)
            .saturating_add(u128::from(b - b'0'))
            .min(INT_CLAMP)
    });
    let (frac_num, frac_den) = frac
        .bytes()
        .take(MAX_FRAC_DIGITS)
        .fold((0u128, 1u128), |(n, d), b| {
            (n * 10 + u128::from(b - b'0'), d * 10)
        });
    let frac_ns = frac_num.saturating_mul(unit_ns) / frac_den;
    Some(int_val.saturating_mul(unit_ns).saturating_add(frac_ns))
}

/// Unit of a Go duration part, in nanoseconds.
fn go_unit_ns(unit: &str) -> Option<u128> {
    let ns = match unit.to_ascii_lowercase().as_str() {
        "ns" => 1,
        "us" | "µs" | "μs" => 1_000,
        "ms" => NS_PER_MS,
        "s" => NS_PER_S,
        "m" => NS_PER_MIN,
        "h" => NS_PER_H,
        _ => return None,
    };
    Some(ns)
}

/// A JSON number times `unit_ns`, in nanoseconds; negative or non-finite gives `None`.
fn number_ns(n: &Number, unit_ns: u128) -> Option<u128> {
    if let Some(u) = n.as_u64() {
        return Some(u128::from(u).min(INT_CLAMP).saturating_mul(unit_ns));
    }
    if n.is_i64() {
        return None;
    }
    let f = n.as_f64()?;
    if !f.is_finite() || f < 0.0 {
        return None;
    }
    // Float-to-int `as` saturates; the clamp keeps the value meaningful.
    Some((f * unit_ns as f64).min(1e30) as u128)
}

/// A unix timestamp given as `seconds × 1e9` (as [`decimal_ns`] returns it) to unix ms;
/// values above 1e12 were milliseconds already.
fn unix_number_ms(ns_of_seconds: u128) -> i128 {
    let ms = if ns_of_seconds > UNIX_MS_MIN * NS_PER_S {
        ns_of_seconds / NS_PER_S
    } else {
        ns_of_seconds / NS_PER_MS
    };
    i128::try_from(ms).unwrap_or(i128::MAX)
}

// ---------------------------------------------------------------------------------------------
// Calendar
// ---------------------------------------------------------------------------------------------

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days-from-civil).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
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
fn year_from_days(days: i64) -> i64 {
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

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => 31,
    }
}

/// Unix milliseconds of a validated UTC civil time (seconds may be 60, a leap second).
fn civil_ms(year: i64, month: u32, day: u32, h: u32, mi: u32, s: u32) -> Option<i128> {
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
fn digits(s: &str, min: usize, max: usize) -> Option<u32> {
    if s.len() < min || s.len() > max || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(
        s.bytes()
            .fold(0u32, |acc, b| acc * 10 + u32::from(b - b'0')),
    )
}

fn month_number(name: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    (1..)
        .zip(MONTHS)
        .find(|(_, m)| m.eq_ignore_ascii_case(name))
        .map(|(n, _)| n)
}

fn is_weekday(name: &str) -> bool {
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
fn hms(s: &str) -> Option<(u32, u32, u32)> {
    let (h, rest) = s.split_once(':')?;
    let (m, sec) = rest.split_once(':')?;
    Some((digits(h, 1, 2)?, digits(m, 1, 2)?, digits(sec, 1, 2)?))
}

fn is_gmt(tz: &str) -> bool {
    tz.eq_ignore_ascii_case("GMT") || tz.eq_ignore_ascii_case("UTC")
}

/// An RFC 9110 HTTP-date as unix milliseconds. Two-digit RFC 850 years are placed in the
/// century that puts them no more than 50 years after `now_unix_ms`.
fn http_date_ms(v: &str, now_unix_ms: u64) -> Option<i128> {
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

fn expand_two_digit_year(yy: u32, now_unix_ms: u64) -> i64 {
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
struct Cursor<'a> {
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
fn rfc3339_ms(v: &str) -> Option<i128> {
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

/// Phrases that introduce a wait (lowercase). Chinese: "请在 5 秒后重试", "请 30 秒后再试".
const STRONG_ANCHORS: &[&str] = &[
    "try again in",
    "try again after",
    "retry again in",
    "retry again after",
    "retry in",
    "retry after",
    "retrying in",
    "retry-after",
    "wait",
    "resets in",
    "reset in",
    "reset after",
    "请在",
    "请于",
    "请",
    "等待",
];

/// Words allowed between an anchor and the number ("wait for about 5 seconds").
const FILLERS: &[&str] = &[
    "for ",
    "about ",
    "approximately ",
    "roughly ",
    "at least ",
    "~",
];

/// A word must not start inside another word ("await" is not "wait").
fn word_start(text: &str, start: usize) -> bool {
    let prev = text
        .get(..start)
        .and_then(|before| before.chars().next_back());
    !matches!(prev, Some(c) if c.is_ascii_alphanumeric() || c == '_')
}

/// True when position `start` begins a clause: start of text, after punctuation, or "please".
fn clause_start(text: &str, start: usize) -> bool {
    let Some(before) = text.get(..start).map(str::trim_end) else {
        return false;
    };
    before.is_empty()
        || before.ends_with("please")
        || before.ends_with(['.', ',', ';', ':', '!', '?', '(', '，', '。', '；', '：'])
}

/// A spoken duration at the start of `s` (after optional whitespace and a filler word).
fn spoken_duration(s: &str) -> Option<u64> {
    let mut rest = s.trim_start();
    if let Some(after) = FILLERS.iter().find_map(|f| rest.strip_prefix(f)) {
        rest = after.trim_start();
    }
    let (mut total, mut rest) = spoken_part(rest)?;
    loop {
        // Go-style "1m30s" continues directly; "1 minute 30 seconds" / "... and 30 seconds" too.
        let next = rest.trim_start();
        let next = next.strip_prefix("and ").map_or(next, str::trim_start);
        match spoken_part(next) {
            Some((ns, after)) => {
                total = total.saturating_add(ns);
                rest = after;
            }
            None => break,
        }
    }
    Some(cap_ns(total))
}

/// `<number>[space]<unit>` at the start of `s`: nanoseconds and the rest.
fn spoken_part(s: &str) -> Option<(u128, &str)> {
    let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
    if int_len == 0 {
        return None;
    }
    let mut num_len = int_len;
    if let Some(after_dot) = s.get(int_len..).and_then(|r| r.strip_prefix('.')) {
        let frac_len = after_dot.bytes().take_while(u8::is_ascii_digit).count();
        if frac_len > 0 {
            num_len = int_len + 1 + frac_len;
        }
    }
    let (num, rest) = s.split_at_checked(num_len)?;
    let (unit_ns, rest) = message_unit(rest.trim_start())?;
    Some((decimal_ns(num, unit_ns)?, rest))
}

/// A time unit at the start of lowercase `s`: nanoseconds and the rest.
fn message_unit(s: &str) -> Option<(u128, &str)> {
    const CJK: [(&str, u128); 6] = [
        ("毫秒", NS_PER_MS),
        ("秒钟", NS_PER_S),
        ("秒", NS_PER_S),
        ("分钟", NS_PER_MIN),
        ("分", NS_PER_MIN),
        ("小时", NS_PER_H),
    ];
    if let Some(found) = CJK
        .iter()
        .find_map(|(u, ns)| s.strip_prefix(u).map(|rest| (*ns, rest)))
    {
        return Some(found);
    }
    let len = s.bytes().take_while(u8::is_ascii_alphabetic).count();
    let (word, rest) = s.split_at_checked(len)?;
    let ns = match word {
        "ms" | "msec" | "msecs" | "millisecond" | "milliseconds" => NS_PER_MS,
        "s" | "sec" | "secs" | "second" | "seconds" => NS_PER_S,
        "m" | "min" | "mins" | "minute" | "minutes" => NS_PER_MIN,
        "h" | "hr" | "hrs" | "hour" | "hours" => NS_PER_H,
        _ => return None,
    };
    Some((ns, rest))
}

// ---------------------------------------------------------------------------------------------
// JSON bodies
// ---------------------------------------------------------------------------------------------

fn walk(v: &Value, depth: usize, now: u64, best: &mut Option<(u8, u64)>, budget: &mut usize) {
    if depth > MAX_DEPTH || *budget == 0 || matches!(best, Some((0, _))) {
        return;
    }
    match v {
        Value::Object(map) => {
            *budget -= 1;
            if let Some((prio, ms)) = object_hint(map, now) {
                if !matches!(best, Some((p, _)) if *p <= prio) {
                    *best = Some((prio, ms));
                }
            }
            for child in map.values() {
                walk(child, depth + 1, now, best, budget);
            }
        }
        Value::Array(items) => {
            *budget -= 1;
            for child in items {
                walk(child, depth + 1, now, best, budget);
            }
        }
        _ => {}
    }
}

/// The highest-priority hint stated directly in one object: (priority, ms), 0 is best.
fn object_hint(map: &Map<String, Value>, now: u64) -> Option<(u8, u64)> {
    let is_retry_info = map
        .get("@type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"));
    if is_retry_info {
        let delay = map.get("retryDelay").or_else(|| map.get("retry_delay"));
        if let Some(ms) = delay.and_then(retry_delay) {
            return Some((0, ms));
        }
    }
    if let Some(ms) = map
        .get("retry_after_ms")
        .and_then(|v| json_relative(v, NS_PER_MS))
    {
        return Some((1, ms));
    }
    let retry_after = ["retry_after", "retry_after_seconds", "retryAfter"]
        .iter()
        .filter_map(|k| map.get(*k))
        .find_map(|v| match v {
            Value::String(s) => retry_after(s, now).or_else(|| duration(s)),
            _ => json_relative(v, NS_PER_S),
        });
    if let Some(ms) = retry_after {
        return Some((2, ms));
    }
    if let Some(ms) = map
        .get("resets_in_seconds")
        .and_then(|v| json_relative(v, NS_PER_S))
    {
        return Some((3, ms));
    }
    let resets_at = map.get("resets_at").and_then(|v| match v {
        Value::Number(n) => Some(until(unix_number_ms(number_ns(n, NS_PER_S)?), now)),
        Value::String(s) => reset_time(s, now),
        _ => None,
    });
    resets_at.map(|ms| (4, ms))
}

/// A relative wait given as a JSON number (or numeric string, or duration string) of `unit_ns`.
fn json_relative(v: &Value, unit_ns: u128) -> Option<u64> {
    match v {
        Value::Number(n) => number_ns(n, unit_ns).map(cap_ns),
        Value::String(s) => decimal_ns(s.trim(), unit_ns)
            .map(cap_ns)
            .or_else(|| duration(s)),
        _ => None,
    }
}

/// `RetryInfo.retryDelay`: a duration string (`"23s"`) or `{"seconds": 23, "nanos": 5e8}`.
fn retry_delay(v: &Value) -> Option<u64> {
    match v {
        Value::String(s) => duration(s),
        Value::Object(obj) => {
            let part = |key: &str, unit_ns: u128| match obj.get(key) {
                None => Some(None),
                Some(Value::Number(n)) => number_ns(n, unit_ns).map(Some),
                Some(Value::String(s)) => decimal_ns(s.trim(), unit_ns).map(Some),
                Some(_) => None,
            };
            let secs = part("seconds", NS_PER_S)?;
            let nanos = part("nanos", 1)?;
            if secs.is_none() && nanos.is_none() {
                return None;
            }
            let total = secs.unwrap_or(0).saturating_add(nanos.unwrap_or(0));
            Some(cap_ns(total))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wasm_bindgen_test::wasm_bindgen_test;

    /// 2024-11-04T19:00:00Z
    const NOW: u64 = 1_730_746_800_000;
    /// 1994-11-06T08:49:37Z, the RFC 9110 example date.
    const RFC_EXAMPLE_MS: i128 = 784_111_777_000;

    #[wasm_bindgen_test(unsupported = test)]
    fn days_from_civil_known_dates() {
        for (y, m, d, days) in [
            (1970, 1, 1, 0),
            (1969, 12, 31, -1),
            (2000, 3, 1, 11_017),
            (2024, 2, 29, 19_782),
            (1, 1, 1, -719_162),
            (9999, 12, 31, 2_932_896),
        ] {
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn year_from_days_inverts_days_from_civil() {
        let mut day = -719_162; // 0001-01-01
        while day < 2_932_897 {
            let y = year_from_days(day);
            assert!(
                days_from_civil(y, 1, 1) <= day && day < days_from_civil(y + 1, 1, 1),
                "day {day} -> year {y}"
            );
            day += 97;
        }
        assert_eq!(year_from_days(0), 1970);
        assert_eq!(year_from_days(-1), 1969);
        assert_eq!(year_from_days(19_782), 2024);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn http_dates_all_three_forms() {
        for v in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            "sun, 6 nov 1994 08:49:37 gmt",
        ] {
            assert_eq!(http_date_ms(v, NOW), Some(RFC_EXAMPLE_MS), "{v}");
        }
        // Two-digit years: at most 50 years ahead of now (2024).
        let year = |yy: &str| {
            let v = format!("Monday, 01-Jan-{yy} 00:00:00 GMT");
            http_date_ms(&v, NOW).map(|ms| year_from_days((ms / MS_PER_DAY) as i64))
        };
        assert_eq!(year("94"), Some(1994));
        assert_eq!(year("30"), Some(2030));
        assert_eq!(year("74"), Some(2074));
        assert_eq!(year("75"), Some(1975));
        assert_eq!(year("2030"), Some(2030));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn retry_after_cases() {
        let cases: &[(&str, Option<u64>)] = &[
            ("20", Some(20_000)),
            ("  20\t", Some(20_000)),
            ("0", Some(0)),
            ("1.5", Some(1_500)),
            ("0.0005", Some(1)),
            ("0.0004", Some(0)),
            ("Mon, 04 Nov 2024 19:00:30 GMT", Some(30_000)),
            ("Monday, 04-Nov-24 19:01:00 GMT", Some(60_000)),
            ("Mon Nov  4 19:00:05 2024", Some(5_000)),
            ("Thu, 29 Feb 2024 00:00:00 GMT", Some(0)),
            ("Sun, 06 Nov 1994 08:49:37 GMT", Some(0)),
            ("Sunday, 06-Nov-94 08:49:37 GMT", Some(0)),
            ("Sun Nov  6 08:49:37 1994", Some(0)),
            ("Fri, 31 Dec 9999 23:59:59 GMT", Some(MAX_WAIT_MS)),
            ("99999999999999999999999999999999", Some(MAX_WAIT_MS)),
            ("", None),
            ("abc", None),
            ("-5", None),
            ("+5", None),
            ("1e3", None),
            ("20s", None),
            (".", None),
            ("1.2.3", None),
            ("Sun, 06 Nov 1994 08:49:37 PST", None),
            ("Sun, 32 Nov 1994 08:49:37 GMT", None),
            ("Wed, 29 Feb 2023 00:00:00 GMT", None),
            ("Sun, 06 Foo 1994 08:49:37 GMT", None),
            ("Sun, 06 Nov 1994 24:00:00 GMT", None),
            ("Sun, 06 Nov 1994 08:60:00 GMT", None),
            ("Xyz, 06 Nov 1994 08:49:37 GMT", None),
            ("Sun 06 Nov 1994 08:49:37 GMT", None),
            ("Sun, 06 Nov 94 08:49:37 GMT", None),
            ("Sun, 06 Nov 1994 08:49 GMT", None),
            ("Sunday, 06-Nov-94 08:49:37", None),
            ("Sun Nov  6 08:49:37", None),
        ];
        for (v, want) in cases {
            assert_eq!(retry_after(v, NOW), *want, "{v:?}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn retry_after_ms_cases() {
        let cases: &[(&str, Option<u64>)] = &[
            ("250", Some(250)),
            (" 30 ", Some(30)),
            ("0", Some(0)),
            ("1.5", Some(2)),
            ("1.4", Some(1)),
            ("99999999999999999999999999", Some(MAX_WAIT_MS)),
            ("", None),
            ("abc", None),
            ("-1", None),
            ("1e2", None),
            ("10ms", None),
        ];
        for (v, want) in cases {
            assert_eq!(retry_after_ms(v), *want, "{v:?}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn duration_cases() {
        let cases: &[(&str, Option<u64>)] = &[
            ("6m0s", Some(360_000)),
            ("1.5s", Some(1_500)),
            ("20ms", Some(20)),
            ("1h2m3.5s", Some(3_723_500)),
            ("2m59.56s", Some(179_560)),
            ("0.5s", Some(500)),
            ("23s", Some(23_000)),
            ("7.66s", Some(7_660)),
            ("1m", Some(60_000)),
            ("18.403112549s", Some(18_403)),
            (" 2s ", Some(2_000)),
            (".5s", Some(500)),
            ("0s", Some(0)),
            ("1H", Some(3_600_000)),
            ("500us", Some(1)),
            ("2000µs", Some(2)),
            ("1500000ns", Some(2)),
            ("9999999999999999999999999h", Some(MAX_WAIT_MS)),
            ("", None),
            ("   ", None),
            ("23", None),
            ("0", None),
            ("1.5", None),
            ("-1s", None),
            ("+1s", None),
            ("1d", None),
            ("1 s", None),
            ("1m 30s", None),
            ("s", None),
            ("ms", None),
            ("1.2.3s", None),
            (".s", None),
            ("1x", None),
            ("1s2", None),
        ];
        for (v, want) in cases {
            assert_eq!(duration(v), *want, "{v:?}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn reset_time_cases() {
        let cases: &[(&str, Option<u64>)] = &[
            ("2024-11-04T19:10:00Z", Some(600_000)),
            ("2024-11-04T19:10:00.5Z", Some(600_500)),
            ("2024-11-04T19:10:00.123456789Z", Some(600_123)),
            ("2024-11-04T21:10:00+02:00", Some(600_000)),
            ("2024-11-04T14:10:00-05:00", Some(600_000)),
            ("2024-11-04T21:10:00+0200", Some(600_000)),
            ("2024-11-04T19:10:00", Some(600_000)),
            ("2024-11-04t19:10:00z", Some(600_000)),
            ("2024-11-04 19:10:00Z", Some(600_000)),
            (" 2024-11-04T19:10:00Z ", Some(600_000)),
            ("2024-11-04T18:00:00Z", Some(0)),
            ("1730747400", Some(600_000)),
            ("1730747400000", Some(600_000)),
            ("1730747400.5", Some(600_500)),
            ("1730000000", Some(0)),
            ("9999-12-31T23:59:59Z", Some(MAX_WAIT_MS)),
            ("99999999999999999999999999", Some(MAX_WAIT_MS)),
            ("60", None),
            ("1000000000", None),
            ("", None),
            ("garbage", None),
            ("-1730747400", None),
            ("2024-13-04T19:10:00Z", None),
            ("2024-02-30T19:10:00Z", None),
            ("2024-11-04T19:10Z", None),
            ("2024-11-04T19:10:00.Z", None),
            ("2024-11-04T19:10:00+2:00", None),
            ("2024-11-04T19:10:00+24:00", None),
            ("2024-11-04T19:10:00Zjunk", None),
            ("24-11-04T19:10:00Z", None),
        ];
        for (v, want) in cases {
            assert_eq!(reset_time(v, NOW), *want, "{v:?}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn reset_header_cases() {
        let cases: &[(&str, Option<u64>)] = &[
            ("6m0s", Some(360_000)),
            ("1s", Some(1_000)),
            ("2024-11-04T19:10:00Z", Some(600_000)),
            ("1730747400", Some(600_000)),
            ("1730747400000", Some(600_000)),
            ("60", Some(60_000)),
            ("0.5", Some(500)),
            ("0", Some(0)),
            ("Mon, 04 Nov 2024 19:00:30 GMT", Some(30_000)),
            ("soon", None),
            ("", None),
            ("-5", None),
        ];
        for (v, want) in cases {
            assert_eq!(reset_header(v, NOW), *want, "{v:?}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn from_message_cases() {
        let cases: &[(&str, Option<u64>)] = &[
            ("Please try again in 20s.", Some(20_000)),
            ("Please try again in 399ms.", Some(399)),
            ("try again in 1.5s", Some(1_500)),
            ("Please try again in 6m0s.", Some(360_000)),
            ("Please try again in 1m30.5s", Some(90_500)),
            ("Please retry in 18.403112549s.", Some(18_403)),
            ("retry after 5 seconds", Some(5_000)),
            ("Please retry after 20 seconds.", Some(20_000)),
            ("try again in 2 minutes", Some(120_000)),
            ("in 30 sec", Some(30_000)),
            ("Retry after 60s", Some(60_000)),
            ("Please wait 10 seconds before retrying", Some(10_000)),
            ("Please try again after 1 hour", Some(3_600_000)),
            ("Try Again In 5 Seconds", Some(5_000)),
            ("Retrying in 2h30m", Some(9_000_000)),
            ("Please wait for 1 minute and 30 seconds", Some(90_000)),
            ("try again in 5 seconds 3 times", Some(5_000)),
            ("retry after 5s or wait 10s", Some(5_000)),
            ("Too many requests. In 2 hrs the quota resets", Some(7_200_000)),
            ("Please try again in 99999999999999999999999h", Some(MAX_WAIT_MS)),
            (
                "Rate limit reached for gpt-4 in organization org-abc on tokens per min (TPM): \
                 Limit 10000, Used 9000, Requested 1766. Please try again in 7.66s. \
                 Visit https://platform.openai.com/account/rate-limits to learn more.",
                Some(7_660),
            ),
            (
                "You exceeded your current quota, please check your plan and billing details. \
                 For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n\
                 * Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, \
                 limit: 10\nPlease retry in 18.403112549s.",
                Some(18_403),
            ),
            (
                "Rate limited (error 429). Please try again in 20s; limit 10000 per 1m",
                Some(20_000),
            ),
            ("请在 5 秒后重试", Some(5_000)),
            ("请在5秒后重试", Some(5_000)),
            ("请 30 秒后再试", Some(30_000)),
            ("请求过多，请在 1 分钟后重试", Some(60_000)),
            ("请等待 2 小时", Some(7_200_000)),
            ("rate limited请在 5 秒后重试", Some(5_000)),
            ("请稍后重试", None),
            ("limit: 10000 tokens per min", None),
            ("model gpt-4-0613", None),
            ("error 429", None),
            ("", None),
            ("Please try again later.", None),
            ("try again in a few seconds", None),
            ("try again in 20", None),
            ("try again in 20%", None),
            ("You exceeded 100 requests in 1 minute", None),
            ("We await 5 seconds", None),
            ("retry in -5s", None),
        ];
        for (v, want) in cases {
            assert_eq!(from_message(v), *want, "{v:?}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn body_fields_cases() {
        let retry_info = "type.googleapis.com/google.rpc.RetryInfo";
        let nest = |levels: usize| {
            (0..levels).fold(json!({"retry_after": 1}), |inner, _| json!({"x": inner}))
        };
        let many: Vec<Value> = (0..2000).map(|_| json!({})).collect();
        let mut late = many.clone();
        late.push(json!({"retry_after": 3}));
        let cases: Vec<(Value, Option<u64>)> = vec![
            (
                json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [
                    {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
                    {"@type": retry_info, "retryDelay": "23s"}
                ]}}),
                Some(23_000),
            ),
            (
                json!({"@type": retry_info, "retryDelay": {"seconds": 23, "nanos": 500_000_000}}),
                Some(23_500),
            ),
            (
                json!({"@type": retry_info, "retryDelay": {"seconds": "23"}}),
                Some(23_000),
            ),
            (
                json!({"@type": retry_info, "retryDelay": {"nanos": 1_000_000}}),
                Some(1),
            ),
            (json!({"@type": retry_info, "retryDelay": {}}), None),
            (
                json!({"@type": retry_info, "retryDelay": {"seconds": -1}}),
                None,
            ),
            (json!({"@type": retry_info, "retryDelay": "soon"}), None),
            (json!({"retryDelay": "23s"}), None),
            (
                json!({"retry_after": 5, "error": {"details": [{"@type": retry_info, "retryDelay": "2s"}]}}),
                Some(2_000),
            ),
            (
                json!({"retry_after_ms": 1500, "retry_after": 5}),
                Some(1_500),
            ),
            (json!({"retry_after_ms": "250"}), Some(250)),
            (
                json!({"error": {"retry_after": 5, "resets_in_seconds": 100}}),
                Some(5_000),
            ),
            (json!({"retryAfter": 2.5}), Some(2_500)),
            (json!({"retry_after_seconds": "7"}), Some(7_000)),
            (json!({"retry_after": "20s"}), Some(20_000)),
            (
                json!({"error": {"type": "usage_limit_reached", "resets_in_seconds": 3600}}),
                Some(3_600_000),
            ),
            (json!({"resets_at": 1_730_747_400}), Some(600_000)),
            (json!({"resets_at": 1_730_747_400_000_u64}), Some(600_000)),
            (json!({"resets_at": "2024-11-04T19:10:00Z"}), Some(600_000)),
            (json!({"resets_at": 1}), Some(0)),
            (
                json!({"resets_at": 1_730_747_400, "resets_in_seconds": 10}),
                Some(10_000),
            ),
            (
                json!({"a": {"retry_after": 1}, "b": {"retry_after": 2}}),
                Some(1_000),
            ),
            (json!([{"retry_after": 3}]), Some(3_000)),
            (json!({"retry_after": 1e300}), Some(MAX_WAIT_MS)),
            (json!({"retry_after": u64::MAX}), Some(MAX_WAIT_MS)),
            (json!({"retry_after": -5}), None),
            (json!({"retry_after": -0.5}), None),
            (json!({"retry_after": true}), None),
            (json!({"retry_after": "soon"}), None),
            (json!({"retry_after": null}), None),
            (json!({"message": "Please try again in 20s"}), None),
            (json!("retry_after"), None),
            (json!(null), None),
            (nest(6), Some(1_000)),
            (nest(7), None),
            (Value::Array(late), None),
        ];
        for (v, want) in cases {
            assert_eq!(body_fields(&v, NOW), want, "{v}");
        }
    }
}
