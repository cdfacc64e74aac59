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

mod body;
mod date;
mod duration;
mod message;
#[cfg(test)]
mod tests;

pub use body::body_fields;
use body::*;
use date::*;
use duration::*;
use message::*;
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
const NS_PER_DAY: u128 = 24 * NS_PER_H;
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
    // Every wait this reads is written in ASCII digits.
    if !message.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    // ASCII lowercasing keeps byte offsets, so positions in `lower` are valid in `message`.
    let lower = message.to_ascii_lowercase();
    // An anchor whose byte pairs a judged message lacks is not scanned for (the messages being
    // judged are lowercase already; any other text is scanned whole).
    let mut candidates: Vec<(usize, usize)> = crate::classify::pairs::with(message, |held| {
        STRONG_ANCHORS
            .iter()
            .filter(|anchor| held.may_hold(anchor))
            .flat_map(|anchor| {
                crate::classify::occurrences(lower.as_bytes(), anchor.as_bytes())
                    .map(move |i| (i, i.saturating_add(anchor.len())))
            })
            .filter(|&(start, end)| {
                // Chinese anchors need no word boundary.
                let ascii = lower.get(start..end).is_some_and(|a| a.is_ascii());
                !ascii || word_start(&lower, start)
            })
            .collect()
    });
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
    // "1分後に再試行", "30초 후 다시", "20 saniye sonra tekrar deneyin": the number comes first.
    // Each run of digits is a start; none is looked at in a message without a word for "after"
    // (in an ASCII message, only an ASCII one is looked for).
    let ascii = lower.is_ascii();
    let after_word = AFTER_MARKERS
        .iter()
        .filter(|m| !ascii || m.is_ascii())
        .any(|m| lower.contains(m));
    let scanned = if after_word { lower.as_str() } else { "" };
    let before_after = scanned
        .char_indices()
        .filter(|&(i, c)| {
            c.is_ascii_digit()
                && !scanned
                    .get(..i)
                    .is_some_and(|b| b.ends_with(|p: char| p.is_ascii_digit() || p == '.'))
        })
        .filter_map(|(i, _)| scanned.get(i..).and_then(wait_before_after));
    first_plausible(strong.chain(clause_in).chain(before_after).map(relative))
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

/// An RFC 3339 time as unix milliseconds (`None`: not one, or before 1970).
pub fn rfc3339_unix_ms(value: &str) -> Option<u64> {
    date::rfc3339_ms(value.trim()).and_then(|ms| u64::try_from(ms).ok())
}

/// Unix milliseconds as RFC 3339 in UTC, to the second (`2026-12-02T00:00:00Z`).
pub fn rfc3339_utc(unix_ms: u64) -> String {
    let secs = i64::try_from(unix_ms / 1000).unwrap_or(i64::MAX);
    let (year, month, day) = date::civil_of_days(secs.div_euclid(86_400));
    let of_day = secs.rem_euclid(86_400);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

/// The first milliseconds of the calendar month containing `ms` and of the next one (`ms` in
/// any fixed offset's local time).
pub fn month_bounds_ms(ms: i64) -> (i64, i64) {
    date::month_bounds(ms)
}
