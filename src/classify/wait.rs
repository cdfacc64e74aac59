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
//! - JSON error bodies ([`body_fields`], [`estimated_time`]): `RetryInfo`, `retry_after`,
//!   `resets_at`, ...
//!
//! Everything an upstream states is untrusted, so every result is a [`Stated`]: a plausible
//! wait ([`Stated::Wait`], 0..=[`MAX_WAIT_MS`]) or [`Stated::Nonsense`]: a value that does not
//! parse, is negative, not finite, overflows, lies more than [`MAX_WAIT_MS`] ahead, or names a
//! time more than [`PAST_TOLERANCE_MS`] in the past. Nonsense is never clamped into a wait: the
//! caller ignores it (and may fall back to a less trusted source). A time in the past by at most
//! [`PAST_TOLERANCE_MS`] (second-resolution dates, clock skew) means "now", `Wait(0)`.
//! Everything is pure (the current time is a parameter) and never panics. Fractions are rounded
//! to the nearest millisecond.

use serde_json::{Map, Number, Value};

/// The longest wait taken seriously: 366 days in milliseconds. Anything further ahead is
/// nonsense.
pub const MAX_WAIT_MS: u64 = 366 * 24 * 60 * 60 * 1000;
/// How far in the past an absolute time may lie and still mean "now" (dates of one-second
/// resolution, clock skew between the provider and this host).
pub const PAST_TOLERANCE_MS: u64 = 5_000;

/// What a stated wait comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stated {
    /// A plausible wait in milliseconds, at most [`MAX_WAIT_MS`].
    Wait(u64),
    /// Stated, but not a usable wait: unparseable, negative, not finite, overflowing, too far
    /// ahead or in the past.
    Nonsense,
}

impl Stated {
    /// The wait, if plausible.
    pub const fn ms(self) -> Option<u64> {
        match self {
            Stated::Wait(ms) => Some(ms),
            Stated::Nonsense => None,
        }
    }
}

const NS_PER_MS: u128 = 1_000_000;
const NS_PER_S: u128 = 1_000_000_000;
const NS_PER_MIN: u128 = 60 * NS_PER_S;
const NS_PER_H: u128 = 60 * NS_PER_MIN;
const MS_PER_DAY: i128 = 86_400_000;
/// Integer parts are clamped to 1e20 before scaling, so products stay far below `u128::MAX`
/// (and far above [`MAX_WAIT_MS`], so a clamped value is always nonsense).
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
/// RFC 9110 forms (IMF-fixdate, RFC 850, asctime). Anything else is nonsense (`"-5"`, `"abc"`,
/// `"1e3"`, `"20s"`), as are more than [`MAX_WAIT_MS`] of seconds and dates in the past.
pub fn retry_after(value: &str, now_unix_ms: u64) -> Stated {
    let v = value.trim();
    seconds(v)
        .or_else(|| http_date(v, now_unix_ms))
        .unwrap_or(Stated::Nonsense)
}

/// `retry-after-ms` / `x-ms-retry-after-ms`: integer or decimal milliseconds; anything else
/// (signs, exponents, `NaN`, units) is nonsense.
pub fn retry_after_ms(value: &str) -> Stated {
    decimal_ns(value.trim(), NS_PER_MS).map_or(Stated::Nonsense, relative)
}

/// A Go/Protobuf duration: one or more `<number><unit>` parts with units `ns`, `us`/`µs`, `ms`,
/// `s`, `m`, `h` (`"6m0s"`, `"1.5s"`, `"1h2m3.5s"`). `None` when the text is not a duration (a
/// bare number, a sign, spaces); `Some(Nonsense)` when it is one longer than [`MAX_WAIT_MS`].
pub fn duration(value: &str) -> Option<Stated> {
    duration_ns(value).map(relative)
}

/// An absolute reset time, as the wait from now: RFC 3339 (`2024-11-04T19:10:00Z`, optional
/// fraction, `Z` or `±hh:mm`; a missing offset is read as UTC), unix seconds (> 1e9) or unix
/// milliseconds (> 1e12). `None` when the text is none of these (smaller numbers included);
/// `Some(Nonsense)` for a time in the past or more than [`MAX_WAIT_MS`] ahead.
pub fn reset_time(value: &str, now_unix_ms: u64) -> Option<Stated> {
    let v = value.trim();
    if let Some(ns) = decimal_ns(v, NS_PER_S) {
        if ns <= UNIX_S_MIN * NS_PER_S {
            return None;
        }
        return Some(absolute(unix_number_ms(ns), now_unix_ms));
    }
    rfc3339_ms(v).map(|at| absolute(at, now_unix_ms))
}

/// A generic `x-ratelimit-reset*` header: a [`duration`], else a [`reset_time`], else a bare
/// number of seconds from now (≤ 1e9, e.g. `"60"`, `"0.5"`), else an HTTP-date; anything else
/// is nonsense.
pub fn reset_header(value: &str, now_unix_ms: u64) -> Stated {
    let v = value.trim();
    duration(v)
        .or_else(|| reset_time(v, now_unix_ms))
        .or_else(|| seconds(v))
        .or_else(|| http_date(v, now_unix_ms))
        .unwrap_or(Stated::Nonsense)
}

/// A wait stated in an error message, read only right after a phrase that introduces it
/// ("try again in", "retry after", "wait", "请在", ...), never from a loose number.
/// A number needs a unit (`ms`, `s`, `sec`, `seconds`, `m`, `min`, `minutes`, `h`, `hr`, `hours`,
/// `秒`, `分钟`, `小时`); Go-style `1m30s` and spoken `1 minute 30 seconds` are summed.
/// A bare "in 30 sec" counts only where "in" starts a clause, so "100 requests in 1 minute"
/// is not read as a wait. The earliest plausible anchored wait in the message wins; `None` when
/// the message states no wait, `Some(Nonsense)` when every wait it states is absurdly long.
pub fn from_message(message: &str) -> Option<Stated> {
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
        .filter_map(|&(_, end)| lower.get(end..).and_then(spoken_duration));
    let clause_in = lower
        .match_indices("in")
        .filter(|&(start, _)| word_start(&lower, start) && clause_start(&lower, start))
        .filter_map(|(start, _)| {
            lower
                .get(start.saturating_add(2)..)
                .and_then(spoken_duration)
        });
    first_plausible(strong.chain(clause_in).map(relative))
}

/// Wait hints stated as JSON fields anywhere (depth ≤ 6) in an error body. Priority:
/// Google `RetryInfo.retryDelay` (string duration or `{seconds, nanos}`), `retry_after_ms`,
/// `retry_after` / `retry_after_seconds` / `retryAfter` (seconds), `resets_in_seconds`,
/// `resets_at` (unix seconds, or RFC 3339 string). Numeric strings are accepted as numbers;
/// `null` counts as not stated. `None` when no such field is present; `Some(Nonsense)` when
/// every one present is nonsense.
pub fn body_fields(value: &Value, now_unix_ms: u64) -> Option<Stated> {
    let mut walk = Walk {
        now: now_unix_ms,
        best: None,
        nonsense: false,
        budget: MAX_NODES,
    };
    walk.visit(value, 0);
    match walk.best {
        Some((_, ms)) => Some(Stated::Wait(ms)),
        None => walk.nonsense.then_some(Stated::Nonsense),
    }
}

/// Hugging Face's "model is currently loading" carries a top-level `estimated_time` in seconds.
pub fn estimated_time(json: &Value) -> Option<Stated> {
    json.get("estimated_time")
        .filter(|v| !v.is_null())
        .map(|v| json_relative(v, NS_PER_S))
}

// ---------------------------------------------------------------------------------------------
// Plausibility
// ---------------------------------------------------------------------------------------------

/// A relative wait in nanoseconds: rounded to the nearest millisecond, nonsense above
/// [`MAX_WAIT_MS`].
fn relative(ns: u128) -> Stated {
    let ms = ns.saturating_add(NS_PER_MS / 2) / NS_PER_MS;
    match u64::try_from(ms) {
        Ok(ms) if ms <= MAX_WAIT_MS => Stated::Wait(ms),
        _ => Stated::Nonsense,
    }
}

/// An absolute time (unix ms) as the wait from now: nonsense when more than
/// [`PAST_TOLERANCE_MS`] in the past or more than [`MAX_WAIT_MS`] ahead.
fn absolute(target_ms: i128, now_unix_ms: u64) -> Stated {
    let diff = target_ms.saturating_sub(i128::from(now_unix_ms));
    if diff < -i128::from(PAST_TOLERANCE_MS) {
        return Stated::Nonsense;
    }
    match u64::try_from(diff.max(0)) {
        Ok(ms) if ms <= MAX_WAIT_MS => Stated::Wait(ms),
        _ => Stated::Nonsense,
    }
}

/// The first plausible wait of several; else nonsense if anything was stated; else `None`.
pub fn first_plausible(stated: impl IntoIterator<Item = Stated>) -> Option<Stated> {
    let mut nonsense = false;
    for s in stated {
        match s {
            Stated::Wait(_) => return Some(s),
            Stated::Nonsense => nonsense = true,
        }
    }
    nonsense.then_some(Stated::Nonsense)
}

/// Delta-seconds (`"20"`, `"1.5"`), if the text is a plain decimal.
fn seconds(v: &str) -> Option<Stated> {
    decimal_ns(v, NS_PER_S).map(relative)
}

/// An HTTP-date, if the text is one.
fn http_date(v: &str, now_unix_ms: u64) -> Option<Stated> {
    http_date_ms(v, now_unix_ms).map(|at| absolute(at, now_unix_ms))
}

/// A Go/Protobuf duration in nanoseconds (saturating).
fn duration_ns(value: &str) -> Option<u128> {
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
    Some(total)
}

// ---------------------------------------------------------------------------------------------
// Numbers and units
// ---------------------------------------------------------------------------------------------

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

/// A spoken duration at the start of `s` (after optional whitespace and a filler word), in
/// nanoseconds (saturating).
fn spoken_duration(s: &str) -> Option<u128> {
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
    Some(total)
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

/// The state of one [`body_fields`] walk.
struct Walk {
    now: u64,
    /// The best plausible hint so far: (priority, ms), 0 is best.
    best: Option<(u8, u64)>,
    /// Whether a wait field held nonsense.
    nonsense: bool,
    /// Containers still allowed to be inspected.
    budget: usize,
}

impl Walk {
    fn visit(&mut self, v: &Value, depth: usize) {
        if depth > MAX_DEPTH || self.budget == 0 || matches!(self.best, Some((0, _))) {
            return;
        }
        match v {
            Value::Object(map) => {
                self.budget -= 1;
                self.object(map);
                for child in map.values() {
                    self.visit(child, depth + 1);
                }
            }
            Value::Array(items) => {
                self.budget -= 1;
                for child in items {
                    self.visit(child, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// Records the hints stated directly in one object, best priority first.
    fn object(&mut self, map: &Map<String, Value>) {
        for (prio, stated) in object_hints(map, self.now) {
            match stated {
                Stated::Wait(ms) => {
                    if !matches!(self.best, Some((p, _)) if p <= prio) {
                        self.best = Some((prio, ms));
                    }
                    return;
                }
                Stated::Nonsense => self.nonsense = true,
            }
        }
    }
}

/// A field that is present and not `null`.
fn stated<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    map.get(key).filter(|v| !v.is_null())
}

/// The hints stated directly in one object, in priority order (0 is best).
fn object_hints(map: &Map<String, Value>, now: u64) -> Vec<(u8, Stated)> {
    let mut hints = Vec::new();
    let is_retry_info = map
        .get("@type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"));
    if is_retry_info {
        if let Some(delay) = stated(map, "retryDelay").or_else(|| stated(map, "retry_delay")) {
            hints.push((0, retry_delay(delay)));
        }
    }
    if let Some(v) = stated(map, "retry_after_ms") {
        hints.push((1, json_relative(v, NS_PER_MS)));
    }
    for key in ["retry_after", "retry_after_seconds", "retryAfter"] {
        if let Some(v) = stated(map, key) {
            let hint = match v {
                Value::String(s) => {
                    let s = s.trim();
                    seconds(s)
                        .or_else(|| duration(s))
                        .or_else(|| http_date(s, now))
                        .unwrap_or(Stated::Nonsense)
                }
                _ => json_relative(v, NS_PER_S),
            };
            hints.push((2, hint));
        }
    }
    if let Some(v) = stated(map, "resets_in_seconds") {
        hints.push((3, json_relative(v, NS_PER_S)));
    }
    if let Some(v) = stated(map, "resets_at") {
        let hint = match v {
            Value::Number(n) => number_ns(n, NS_PER_S)
                .map_or(Stated::Nonsense, |ns| absolute(unix_number_ms(ns), now)),
            Value::String(s) => reset_time(s, now).unwrap_or(Stated::Nonsense),
            _ => Stated::Nonsense,
        };
        hints.push((4, hint));
    }
    hints
}

/// A relative wait given as a JSON number (or numeric string, or duration string) of `unit_ns`.
fn json_relative(v: &Value, unit_ns: u128) -> Stated {
    match v {
        Value::Number(n) => number_ns(n, unit_ns).map_or(Stated::Nonsense, relative),
        Value::String(s) => decimal_ns(s.trim(), unit_ns)
            .map(relative)
            .or_else(|| duration(s))
            .unwrap_or(Stated::Nonsense),
        _ => Stated::Nonsense,
    }
}

/// `RetryInfo.retryDelay`: a duration string (`"23s"`) or `{"seconds": 23, "nanos": 5e8}`.
fn retry_delay(v: &Value) -> Stated {
    match v {
        Value::String(s) => duration(s).unwrap_or(Stated::Nonsense),
        Value::Object(obj) => {
            let part = |key: &str, unit_ns: u128| match stated(obj, key) {
                None => Some(None),
                Some(Value::Number(n)) => number_ns(n, unit_ns).map(Some),
                Some(Value::String(s)) => decimal_ns(s.trim(), unit_ns).map(Some),
                Some(_) => None,
            };
            let (Some(secs), Some(nanos)) = (part("seconds", NS_PER_S), part("nanos", 1)) else {
                return Stated::Nonsense;
            };
            if secs.is_none() && nanos.is_none() {
                return Stated::Nonsense;
            }
            relative(secs.unwrap_or(0).saturating_add(nanos.unwrap_or(0)))
        }
        _ => Stated::Nonsense,
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

    use Stated::{Nonsense as N, Wait as W};

    /// One year (366 days) in seconds: the longest plausible wait.
    const MAX_S: &str = "31622400";

    #[wasm_bindgen_test(unsupported = test)]
    fn retry_after_cases() {
        let cases: &[(&str, Stated)] = &[
            ("20", W(20_000)),
            ("  20\t", W(20_000)),
            ("0", W(0)),
            ("1.5", W(1_500)),
            ("0.0005", W(1)),
            ("0.0004", W(0)),
            (MAX_S, W(MAX_WAIT_MS)),
            ("Mon, 04 Nov 2024 19:00:30 GMT", W(30_000)),
            ("Monday, 04-Nov-24 19:01:00 GMT", W(60_000)),
            ("Mon Nov  4 19:00:05 2024", W(5_000)),
            // A date a few seconds past (one-second resolution, clock skew) means now.
            ("Mon, 04 Nov 2024 18:59:57 GMT", W(0)),
            // Nonsense: further in the past, more than a year ahead, overflowing, negative,
            // not a number.
            ("Mon, 04 Nov 2024 18:59:50 GMT", N),
            ("Thu, 29 Feb 2024 00:00:00 GMT", N),
            ("Sun, 06 Nov 1994 08:49:37 GMT", N),
            ("Sunday, 06-Nov-94 08:49:37 GMT", N),
            ("Sun Nov  6 08:49:37 1994", N),
            ("Fri, 31 Dec 9999 23:59:59 GMT", N),
            ("Wed, 05 Nov 2025 19:00:01 GMT", N),
            ("Wed, 05 Nov 2025 19:00:00 GMT", W(MAX_WAIT_MS)),
            ("31622401", N),
            ("1000000000000", N),
            ("99999999999999999999999999999999", N),
            ("", N),
            ("abc", N),
            ("-5", N),
            ("-0", N),
            ("+5", N),
            ("1e3", N),
            ("NaN", N),
            ("inf", N),
            ("20s", N),
            (".", N),
            ("1.2.3", N),
            ("Sun, 06 Nov 1994 08:49:37 PST", N),
            ("Sun, 32 Nov 1994 08:49:37 GMT", N),
            ("Wed, 29 Feb 2023 00:00:00 GMT", N),
            ("Sun, 06 Foo 1994 08:49:37 GMT", N),
            ("Sun, 06 Nov 1994 24:00:00 GMT", N),
            ("Sun, 06 Nov 1994 08:60:00 GMT", N),
            ("Xyz, 06 Nov 1994 08:49:37 GMT", N),
            ("Sun 06 Nov 1994 08:49:37 GMT", N),
            ("Sun, 06 Nov 94 08:49:37 GMT", N),
            ("Sun, 06 Nov 1994 08:49 GMT", N),
            ("Sunday, 06-Nov-94 08:49:37", N),
            ("Sun Nov  6 08:49:37", N),
        ];
        for (v, want) in cases {
            assert_eq!(retry_after(v, NOW), *want, "{v:?}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn retry_after_ms_cases() {
        let cases: &[(&str, Stated)] = &[
            ("250", W(250)),
            (" 30 ", W(30)),
            ("0", W(0)),
            ("1.5", W(2)),
            ("1.4", W(1)),
            ("31622400000", W(MAX_WAIT_MS)),
            ("31622400001", N),
            ("99999999999999999999999999", N),
            ("1e309", N),
            ("NaN", N),
            ("Infinity", N),
            ("", N),
            ("abc", N),
            ("-1", N),
            ("1e2", N),
            ("10ms", N),
        ];
        for (v, want) in cases {
            assert_eq!(retry_after_ms(v), *want, "{v:?}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn duration_cases() {
        let cases: &[(&str, Option<Stated>)] = &[
            ("6m0s", Some(W(360_000))),
            ("1.5s", Some(W(1_500))),
            ("20ms", Some(W(20))),
            ("1h2m3.5s", Some(W(3_723_500))),
            ("2m59.56s", Some(W(179_560))),
            ("0.5s", Some(W(500))),
            ("23s", Some(W(23_000))),
            ("7.66s", Some(W(7_660))),
            ("1m", Some(W(60_000))),
            ("18.403112549s", Some(W(18_403))),
            (" 2s ", Some(W(2_000))),
            (".5s", Some(W(500))),
            ("0s", Some(W(0))),
            ("1H", Some(W(3_600_000))),
            ("500us", Some(W(1))),
            ("2000µs", Some(W(2))),
            ("1500000ns", Some(W(2))),
            ("8784h", Some(W(MAX_WAIT_MS))),
            ("8784h1s", Some(N)),
            ("9999999999999999999999999h", Some(N)),
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
        let cases: &[(&str, Option<Stated>)] = &[
            ("2024-11-04T19:10:00Z", Some(W(600_000))),
            ("2024-11-04T19:10:00.5Z", Some(W(600_500))),
            ("2024-11-04T19:10:00.123456789Z", Some(W(600_123))),
            ("2024-11-04T21:10:00+02:00", Some(W(600_000))),
            ("2024-11-04T14:10:00-05:00", Some(W(600_000))),
            ("2024-11-04T21:10:00+0200", Some(W(600_000))),
            ("2024-11-04T19:10:00", Some(W(600_000))),
            ("2024-11-04t19:10:00z", Some(W(600_000))),
            ("2024-11-04 19:10:00Z", Some(W(600_000))),
            (" 2024-11-04T19:10:00Z ", Some(W(600_000))),
            ("2024-11-04T18:59:58Z", Some(W(0))),
            ("1730747400", Some(W(600_000))),
            ("1730747400000", Some(W(600_000))),
            ("1730747400.5", Some(W(600_500))),
            // In the past, years ahead, overflowing: nonsense.
            ("2024-11-04T18:00:00Z", Some(N)),
            ("1730000000", Some(N)),
            ("2034-11-04T19:00:00Z", Some(N)),
            ("2046322800", Some(N)),
            ("9999-12-31T23:59:59Z", Some(N)),
            ("99999999999999999999999999", Some(N)),
            // Not an absolute time at all.
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
        let cases: &[(&str, Stated)] = &[
            ("6m0s", W(360_000)),
            ("1s", W(1_000)),
            ("2024-11-04T19:10:00Z", W(600_000)),
            ("1730747400", W(600_000)),
            ("1730747400000", W(600_000)),
            ("60", W(60_000)),
            ("0.5", W(500)),
            ("0", W(0)),
            ("Mon, 04 Nov 2024 19:00:30 GMT", W(30_000)),
            // Ten years ahead (unix seconds, RFC 3339), in the past, unparseable.
            ("2046322800", N),
            ("2034-11-04T19:00:00Z", N),
            ("1730000000", N),
            ("999999999", N),
            ("soon", N),
            ("", N),
            ("-5", N),
            ("NaN", N),
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
            // An absurd wait is skipped for a later plausible one.
            ("try again in 99999h, or retry after 5s", Some(5_000)),
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
            assert_eq!(from_message(v), want.map(W), "{v:?}");
        }
        // Stated, but more than a year: nonsense.
        for v in [
            "Please try again in 99999999999999999999999h",
            "retry after 9000h",
            "Please wait 9000 hours",
        ] {
            assert_eq!(from_message(v), Some(N), "{v:?}");
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
        let cases: Vec<(Value, Option<Stated>)> = vec![
            (
                json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [
                    {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
                    {"@type": retry_info, "retryDelay": "23s"}
                ]}}),
                Some(W(23_000)),
            ),
            (
                json!({"@type": retry_info, "retryDelay": {"seconds": 23, "nanos": 500_000_000}}),
                Some(W(23_500)),
            ),
            (
                json!({"@type": retry_info, "retryDelay": {"seconds": "23"}}),
                Some(W(23_000)),
            ),
            (
                json!({"@type": retry_info, "retryDelay": {"nanos": 1_000_000}}),
                Some(W(1)),
            ),
            (json!({"@type": retry_info, "retryDelay": {}}), Some(N)),
            (
                json!({"@type": retry_info, "retryDelay": {"seconds": -1}}),
                Some(N),
            ),
            (json!({"@type": retry_info, "retryDelay": "soon"}), Some(N)),
            (
                json!({"@type": retry_info, "retryDelay": "99999999h"}),
                Some(N),
            ),
            (json!({"@type": retry_info, "retryDelay": null}), None),
            (json!({"retryDelay": "23s"}), None),
            (
                json!({"retry_after": 5, "error": {"details": [{"@type": retry_info, "retryDelay": "2s"}]}}),
                Some(W(2_000)),
            ),
            (
                json!({"retry_after_ms": 1500, "retry_after": 5}),
                Some(W(1_500)),
            ),
            (json!({"retry_after_ms": "250"}), Some(W(250))),
            (
                json!({"error": {"retry_after": 5, "resets_in_seconds": 100}}),
                Some(W(5_000)),
            ),
            (json!({"retryAfter": 2.5}), Some(W(2_500))),
            (json!({"retry_after_seconds": "7"}), Some(W(7_000))),
            (json!({"retry_after": "20s"}), Some(W(20_000))),
            (
                json!({"retry_after": "Mon, 04 Nov 2024 19:00:30 GMT"}),
                Some(W(30_000)),
            ),
            (
                json!({"error": {"type": "usage_limit_reached", "resets_in_seconds": 3600}}),
                Some(W(3_600_000)),
            ),
            (json!({"resets_at": 1_730_747_400}), Some(W(600_000))),
            (
                json!({"resets_at": 1_730_747_400_000_u64}),
                Some(W(600_000)),
            ),
            (
                json!({"resets_at": "2024-11-04T19:10:00Z"}),
                Some(W(600_000)),
            ),
            (
                json!({"resets_at": 1_730_747_400, "resets_in_seconds": 10}),
                Some(W(10_000)),
            ),
            (
                json!({"a": {"retry_after": 1}, "b": {"retry_after": 2}}),
                Some(W(1_000)),
            ),
            (json!([{"retry_after": 3}]), Some(W(3_000))),
            // Nonsense in a more trusted field gives way to a plausible one elsewhere.
            (
                json!({"retry_after_ms": -1, "retry_after": 3}),
                Some(W(3_000)),
            ),
            (
                json!({"a": {"retry_after": 1e300}, "b": {"resets_in_seconds": 4}}),
                Some(W(4_000)),
            ),
            // Nonsense alone.
            (json!({"resets_at": 1}), Some(N)),
            (json!({"resets_at": 2_046_322_800}), Some(N)),
            (json!({"resets_at": "soon"}), Some(N)),
            (json!({"retry_after": 1e300}), Some(N)),
            (json!({"retry_after": u64::MAX}), Some(N)),
            (json!({"retry_after": -5}), Some(N)),
            (json!({"retry_after": -0.5}), Some(N)),
            (json!({"retry_after": true}), Some(N)),
            (json!({"retry_after": "soon"}), Some(N)),
            (json!({"retry_after": [1]}), Some(N)),
            (json!({"retry_after": null}), None),
            (json!({"message": "Please try again in 20s"}), None),
            (json!("retry_after"), None),
            (json!(null), None),
            (nest(6), Some(W(1_000))),
            (nest(7), None),
            (Value::Array(late), None),
        ];
        for (v, want) in cases {
            assert_eq!(body_fields(&v, NOW), want, "{v}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn estimated_time_cases() {
        let cases: Vec<(Value, Option<Stated>)> = vec![
            (json!({"estimated_time": 35.6677131652832}), Some(W(35_668))),
            (json!({"estimated_time": 0}), Some(W(0))),
            (json!({"estimated_time": -1.0}), Some(N)),
            (json!({"estimated_time": 1e300}), Some(N)),
            (json!({"estimated_time": "x"}), Some(N)),
            (json!({"estimated_time": null}), None),
            (json!({"error": "loading"}), None),
        ];
        for (v, want) in cases {
            assert_eq!(estimated_time(&v), want, "{v}");
        }
    }
}
