//! What a request gets at its class's limit, and the headers that say how shaping treated it.

use super::{admit, Ask, LimitReason};
use crate::config::shaping::{AtLimit, ShapingConfig};
use crate::flow::Effects;

/// Header saying how shaping treated the request: `queued 1200ms`, `rejected queue_full`,
/// `deferred off_peak`, `downgraded queue_timeout`.
pub const SHAPING_HEADER: &str = "x-llm-shaping";
/// The request's priority class.
pub const CLASS_HEADER: &str = "x-llm-class";
/// Waits longer than this are not honoured by the OpenAI and Anthropic SDKs (they back off on
/// their own instead): such answers say `x-should-retry: false`, and the caller schedules the
/// retry from `Retry-After`.
pub const SDK_MAX_RETRY_AFTER_MS: u64 = 60_000;

/// A refusal to send the request now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    /// `Reject` or `Defer` (a downgrade is routed, not refused).
    pub action: AtLimit,
    pub reason: LimitReason,
    pub retry_after_ms: u64,
}

/// The wait a refused request is told: to the next off-peak window, the load trigger's hold,
/// or its queue time; deferrals get up to `off_peak.jitter_ms` more so that clients spread out.
pub fn retry_after_ms(
    config: &ShapingConfig,
    ask: Ask,
    action: AtLimit,
    reason: LimitReason,
    now_ms: u64,
    seed: &str,
) -> u64 {
    let queue_s = (admit::queue_ms(config, ask) / 1000).clamp(1, 60) * 1000;
    let off = config.off_peak.as_ref();
    let base = match reason {
        LimitReason::OffPeak => off.map_or(queue_s, |o| {
            super::offpeak::Schedule::new(&o.windows, &o.utc_offset).until_next_ms(now_ms)
        }),
        LimitReason::Load => config.load.as_ref().map_or(queue_s, |l| l.hold_ms),
        LimitReason::QueueFull | LimitReason::QueueTimeout => queue_s,
    };
    if action != AtLimit::Defer {
        return base;
    }
    let spread = off.map_or(0, |o| o.jitter_ms);
    let jitter = if spread == 0 {
        0
    } else {
        crate::flow::jitter(seed, now_ms) % spread
    };
    base.saturating_add(jitter)
}

/// The local answer for a refusal.
pub fn reply(class: &str, refusal: Refusal, out: &mut Effects) {
    let seconds = refusal.retry_after_ms.div_ceil(1000).max(1);
    let verb = match refusal.action {
        AtLimit::Defer => "deferred",
        AtLimit::Reject | AtLimit::Downgrade => "rejected",
    };
    let reason = refusal.reason.as_str();
    let why = match refusal.reason {
        LimitReason::QueueFull => "its concurrency limit is reached and its queue is full",
        LimitReason::QueueTimeout => "it waited its longest queue time for a free slot",
        LimitReason::OffPeak => "it runs in off-peak windows only",
        LimitReason::Load => "the primary model is under load",
    };
    let message = format!(
        "request of priority class `{class}` {verb}: {why}; retry after {seconds} s \
         (Retry-After)"
    );
    let body = serde_json::json!({
        "error": {
            "message": message,
            "type": "shaping",
            "code": reason,
            "param": null,
        }
    })
    .to_string();
    let should_retry = refusal.retry_after_ms <= SDK_MAX_RETRY_AFTER_MS;
    out.reply(
        429,
        vec![
            ("content-type", "application/json".into()),
            ("retry-after", seconds.to_string()),
            ("x-should-retry", should_retry.to_string()),
            (SHAPING_HEADER, format!("{verb} {reason}")),
            (CLASS_HEADER, class.to_owned()),
        ],
        body,
    );
}

/// How shaping treated a request that was sent upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Treatment {
    pub class: usize,
    /// How long it waited for its slot.
    pub waited_ms: Option<u64>,
    /// Downgraded, and why.
    pub downgraded: Option<LimitReason>,
    /// It took a lower class's slot, or the long-task pool's.
    pub pool: Option<usize>,
}

/// The headers for an answer to a shaped request.
pub fn explain(config: &ShapingConfig, t: &Treatment, out: &mut Effects) {
    if let Some(class) = config.classes.get(t.class) {
        out.set_header(CLASS_HEADER, class.name.clone());
    }
    let mut parts: Vec<String> = Vec::new();
    if let Some(ms) = t.waited_ms {
        parts.push(format!("queued {ms}ms"));
    }
    if let Some(reason) = t.downgraded {
        parts.push(format!("downgraded {}", reason.as_str()));
    }
    if let Some(pool) = t.pool {
        let name = if pool == super::LONG_POOL {
            "long"
        } else {
            config.classes.get(pool).map_or("?", |c| c.name.as_str())
        };
        parts.push(format!("pool {name}"));
    }
    if !parts.is_empty() {
        out.set_header(SHAPING_HEADER, parts.join("; "));
    }
}
