//! Usage accounting, pure: the label a request's API key is shown under, what an answer cost at
//! the configured prices, what a request may cost before it is sent, and budgets
//! ([`budget`]).

pub mod budget;

use crate::config::metering::{MeteringConfig, Price};
use crate::sse::Usage;

/// Label of a credential that is not a labelled key.
pub const OTHER_KEY: &str = "other";
/// Label of a request without a credential.
pub const NO_KEY: &str = "none";

/// A key's label slot: a labelled key (in `metering.keys` order), `other`, or `none`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeySlot(pub usize);

/// Hex SHA-256 of a credential header's value, as `metering.keys` and `shaping.keys` name keys.
pub fn sha256_hex(value: &[u8]) -> String {
    use sha2::Digest;
    use std::fmt::Write;
    let digest = sha2::Sha256::digest(value);
    digest.iter().fold(String::with_capacity(64), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// The label slot of a request's key, from the hash of its credential (`None`: it sent none).
/// Without labelled keys no hash is needed: every credential is `other`.
pub fn key_slot(config: &MeteringConfig, hash: Option<&str>) -> KeySlot {
    let labelled = config.keys.len();
    KeySlot(match hash {
        None => labelled + 1,
        Some(hash) => config
            .keys
            .iter()
            .position(|k| k.sha256.eq_ignore_ascii_case(hash))
            .unwrap_or(labelled),
    })
}

/// Every key label, in slot order (`other` and `none` last).
pub fn key_labels(config: &MeteringConfig) -> impl Iterator<Item = &str> {
    config
        .keys
        .iter()
        .map(|k| k.label.as_str())
        .chain([OTHER_KEY, NO_KEY])
}

/// Nano-USD (1e-9 USD) per token at `usd_per_million`.
fn nanos_per_token(usd_per_million: f64) -> f64 {
    usd_per_million * 1_000.0
}

fn to_nanos(value: f64) -> u64 {
    if value.is_finite() && value > 0.0 {
        // Saturates at u64::MAX (18 billion USD).
        value.round() as u64
    } else {
        0
    }
}

/// What an answer's `usage` cost at `price`, in nano-USD: uncached input, cached input (at its
/// own price where one is set) and output. Rounded once per answer (an error below 1e-9 USD).
pub fn cost_nanos(price: &Price, usage: &Usage) -> u64 {
    let input = usage.input_tokens.unwrap_or(0);
    let cached = usage.cached_input_tokens.unwrap_or(0).min(input);
    let output = usage.output_tokens.unwrap_or(0);
    let cached_price = price.cached_input.unwrap_or(price.input);
    to_nanos(
        (input - cached) as f64 * nanos_per_token(price.input)
            + cached as f64 * nanos_per_token(cached_price)
            + output as f64 * nanos_per_token(price.output),
    )
}

/// What a request may use before it is sent: its prompt from its size, its output from what it
/// states (any spelling of `max_tokens`), else its model's `max_output_tokens`, else the
/// configured default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Estimate {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Estimate {
    /// `stated`: the body's own output limit ([`crate::shaping::stated_max_tokens`]).
    pub fn of(
        body: &[u8],
        stated: Option<u64>,
        model_max_output: Option<u64>,
        default_output: u64,
    ) -> Self {
        Self {
            input_tokens: (body.len() as u64).div_ceil(4),
            output_tokens: stated.or(model_max_output).unwrap_or(default_output),
        }
    }

    pub fn tokens(self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// At `price` (no cache discount: an estimate errs high).
    pub fn cost_nanos(self, price: &Price) -> u64 {
        to_nanos(
            self.input_tokens as f64 * nanos_per_token(price.input)
                + self.output_tokens as f64 * nanos_per_token(price.output),
        )
    }
}

/// What a request is charged in a budget at its end: what its answers reported; a success that
/// reported no usage (an OpenAI stream without `stream_options.include_usage`) is charged its
/// reservation, the estimate, so that no request is free; a failure without usage, nothing.
pub fn charge(reported: u64, usage_seen: bool, served: bool, reserved: u64) -> u64 {
    match (usage_seen, served) {
        (true, _) => reported,
        (false, true) => reserved,
        (false, false) => 0,
    }
}

/// What a request used, summed over its attempts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spend {
    pub tokens: u64,
    pub nanos: u64,
}

impl Spend {
    pub fn add(&mut self, usage: &Usage, price: Option<&Price>) {
        let tokens = usage
            .input_tokens
            .unwrap_or(0)
            .saturating_add(usage.output_tokens.unwrap_or(0));
        self.tokens = self.tokens.saturating_add(tokens);
        if let Some(price) = price {
            self.nanos = self.nanos.saturating_add(cost_nanos(price, usage));
        }
    }
}

/// What usage accounting knows of one request, from its arrival to its end.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Metered {
    pub key: KeySlot,
    /// When the client filter read it (unix ms), when latency is measured.
    pub arrived_ms: Option<u64>,
    /// When the body of the answer that served it began (a stream's first event).
    pub first_byte_ms: Option<u64>,
    /// Output tokens of the answer that served it.
    pub output_tokens: u64,
    /// What its attempts used.
    pub spend: Spend,
    /// Some answer reported `usage` (an OpenAI stream does only when asked to).
    pub usage_seen: bool,
    /// What budgets hold for it until it ends.
    pub reservations: Vec<budget::Reservation>,
    /// The shadow budget that would have refused it.
    pub shadow_over: Option<usize>,
}

#[cfg(test)]
mod tests;
