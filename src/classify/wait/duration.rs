//! Durations: Go/Protobuf (`6m0s`, `1.5s`), decimals with a unit, JSON numbers, unix times.

use super::*;

/// A Go/Protobuf duration in nanoseconds (saturating).
pub(super) fn duration_ns(value: &str) -> Option<u128> {
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
pub(super) fn decimal_ns(num: &str, unit_ns: u128) -> Option<u128> {
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
pub(super) fn go_unit_ns(unit: &str) -> Option<u128> {
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
pub(super) fn number_ns(n: &Number, unit_ns: u128) -> Option<u128> {
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
pub(super) fn unix_number_ms(ns_of_seconds: u128) -> i128 {
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
