//! Usage accounting's effects: budgets reserved and settled in shared data, latency and token
//! histograms, and the budgets' gauges. The decisions are in [`crate::meter`].

use super::{host, raw, Plugin};
use crate::config::Config;
use crate::flow::Effects;
use crate::meter::budget::{self, Budget, Fit, Record, Reservation, Scope, Tally};
use crate::meter::{Estimate, Metered};
use crate::sse::Usage;
use crate::stats::{BudgetEvent, Counter, CounterSet, ModelSlot};
use proxy_wasm::types::{LogLevel, MetricType};
use std::cell::RefCell;

/// Histogram and gauge ids, and the parsed budgets.
pub struct Meter {
    pub budgets: Vec<Budget>,
    /// Per model slot: request duration (ms), time to first token (ms), time per output token
    /// (µs).
    latency: Vec<[Option<u32>; 3]>,
    /// Per model slot: `gen_ai.client.token.usage` for input and output.
    token_usage: Vec<[Option<u32>; 2]>,
    /// Per budget: spent, reserved, limit.
    gauges: Vec<[Option<u32>; 3]>,
    /// Per budget: the window whose first refusal this worker logged.
    logged: RefCell<Vec<u64>>,
    /// Per budget: this worker's changes to a shadow budget, folded into its shared record by
    /// the timer ([`publish`]).
    tallies: RefCell<Vec<Tally>>,
    /// Per configured model: 1 while its circuit is open (cooling down or being probed).
    circuit_open: Vec<(String, Option<u32>)>,
    /// Per model with a latency condition: its P95 answer time now (0: too few answers).
    latency_p95: Vec<(String, Option<u32>)>,
}

impl Meter {
    pub fn new(config: &Config, set: &CounterSet) -> Self {
        let define = |kind, name: String| raw::define_metric(kind, &name).ok();
        let histogram = |name: String| define(MetricType::Histogram, name);
        let provider = |model: &str| config.model(model).map_or("unknown", |m| m.provider_name());
        let latency = set
            .model_slots()
            .map(|slot| {
                let model = set.label(slot);
                let provider = provider(model);
                [
                    format!("llm_fallback.request_duration_ms;model={model};provider={provider}"),
                    format!("llm_fallback.ttft_ms;model={model};provider={provider}"),
                    format!("llm_fallback.tpot_us;model={model};provider={provider}"),
                ]
                .map(|name| config.metering.latency.then(|| histogram(name)).flatten())
            })
            .collect();
        let token_usage = set
            .model_slots()
            .map(|slot| {
                let model = set.label(slot);
                let provider = provider(model);
                ["input", "output"].map(|kind| {
                    histogram(format!(
                        "gen_ai.client.token.usage;gen_ai_request_model={model};\
                         gen_ai_provider_name={provider};gen_ai_token_type={kind}"
                    ))
                })
            })
            .collect();
        let budgets = Budget::all(&config.metering);
        let gauges = budgets
            .iter()
            .map(|b| {
                ["budget_spent", "budget_reserved", "budget_limit"].map(|family| {
                    define(
                        MetricType::Gauge,
                        format!("llm_fallback.{family};budget={}", b.name),
                    )
                })
            })
            .collect();
        let logged = RefCell::new(vec![0; budgets.len()]);
        let tallies = RefCell::new(vec![Tally::default(); budgets.len()]);
        let gauge = |family: &str, model: &str| {
            define(
                MetricType::Gauge,
                format!("llm_fallback.{family};model={model}"),
            )
        };
        let circuit_open = config
            .models
            .iter()
            .map(|m| (m.name.clone(), gauge("circuit_open", &m.name)))
            .collect();
        let latency_p95 = config
            .models
            .iter()
            .filter(|m| config.switch_rule(&m.name).latency.is_some())
            .map(|m| (m.name.clone(), gauge("latency_p95_ms", &m.name)))
            .collect();
        Self {
            budgets,
            latency,
            token_usage,
            gauges,
            logged,
            tallies,
            circuit_open,
            latency_p95,
        }
    }
}

/// What the budgets say of a request about to be sent.
pub enum Admission {
    /// Send it; these reservations settle when it ends (`shadow`: the shadow budget that would
    /// have refused it).
    Go {
        reservations: Vec<Reservation>,
        shadow: Option<usize>,
    },
    /// Over a budget: this local answer.
    Refused(Effects),
}

/// Reserves the request's estimate in every budget that applies to it, or refuses it at the
/// first budget it would cross (giving back what the others reserved). A budget whose record
/// cannot be updated (the host refused, or it stayed contended) lets the request through:
/// accounting never stops traffic on its own failure. Shadow budgets are judged and reserved
/// on this worker's tally, without touching shared data.
pub fn admit(
    plugin: &Plugin,
    scope: Scope<'_>,
    estimate: Estimate,
    routed: &str,
    now_ms: u64,
) -> Admission {
    let price = plugin.config.metering.prices.get(routed);
    let mut reservations = Vec::new();
    let mut shadow = None;
    for (index, b) in plugin.meter.budgets.iter().enumerate() {
        if !b.applies(scope, now_ms) {
            continue;
        }
        let amount = b.amount_of(estimate, price);
        let mut over = None;
        let reserved = if b.shadow {
            let mut tallies = plugin.meter.tallies.try_borrow_mut().ok();
            let fit = tallies
                .as_mut()
                .and_then(|t| t.get_mut(index))
                .map(|tally| b.reserve_locally(tally, now_ms, amount));
            if let Some(Fit::Over {
                resets_at_ms,
                record,
            }) = fit
            {
                over = Some((resets_at_ms, record));
            }
            fit.is_some()
        } else {
            let outcome = host::cas_update(&budget::record_key(b), |current| {
                let record = current.and_then(Record::decode);
                match b.reserve(record, now_ms, amount) {
                    Fit::Reserved(next) => {
                        over = None;
                        Some(next.encode())
                    }
                    Fit::Over {
                        resets_at_ms,
                        record: seen,
                    } => {
                        over = Some((resets_at_ms, seen));
                        None
                    }
                }
            });
            outcome == host::CasOutcome::Written
        };
        if let Some((resets_at_ms, seen)) = over {
            log_refusal(plugin, index, b, seen, amount);
            log::debug!(
                "budget {}{} refuses a request of {} for {}: {} spent, {} reserved, cap {}",
                b.name,
                if b.shadow { " (shadow)" } else { "" },
                scope.model,
                b.show(amount),
                b.show(seen.spent),
                b.show(seen.reserved),
                b.show(b.limit)
            );
            if b.shadow {
                plugin
                    .metrics
                    .increment(Counter::Budget(index, BudgetEvent::ShadowRefused));
                shadow = shadow.or(Some(index));
            } else {
                plugin
                    .metrics
                    .increment(Counter::Budget(index, BudgetEvent::Refused));
                let held = Metered {
                    reservations,
                    ..Metered::default()
                };
                settle(plugin, &held, false, now_ms);
                let mut out = Effects::default();
                budget::refuse(b, seen, resets_at_ms, now_ms, &mut out);
                return Admission::Refused(out);
            }
        }
        if reserved {
            plugin
                .metrics
                .increment(Counter::Budget(index, BudgetEvent::Admitted));
            reservations.push(Reservation {
                budget: index,
                window_ms: b.current(None, now_ms).window_ms,
                amount,
            });
        }
    }
    Admission::Go {
        reservations,
        shadow,
    }
}

/// One line per budget and window on the worker that first refuses in it.
fn log_refusal(plugin: &Plugin, index: usize, b: &Budget, seen: Record, amount: u64) {
    let Ok(mut logged) = plugin.meter.logged.try_borrow_mut() else {
        return;
    };
    let Some(last) = logged.get_mut(index) else {
        return;
    };
    if *last == seen.window_ms {
        return;
    }
    *last = seen.window_ms;
    host::log(
        LogLevel::Info,
        &format!(
            "budget {} {}: {} spent + {} reserved + {} for this request > {} per {}",
            b.name,
            if b.shadow {
                "(shadow) would refuse requests"
            } else {
                "refuses requests"
            },
            b.show(seen.spent),
            b.show(seen.reserved),
            b.show(amount),
            b.show(b.limit),
            b.window.as_str()
        ),
    );
}

/// Gives back a request's reservations and charges it ([`crate::meter::charge`]; `served`:
/// its final answer was a success).
pub fn settle(plugin: &Plugin, metered: &Metered, served: bool, now_ms: u64) {
    for r in &metered.reservations {
        let Some(b) = plugin.meter.budgets.get(r.budget) else {
            continue;
        };
        let reported = b.spent_of(metered.spend);
        let used = crate::meter::charge(reported, metered.usage_seen, served, r.amount);
        if b.shadow {
            if let Ok(mut tallies) = plugin.meter.tallies.try_borrow_mut() {
                if let Some(tally) = tallies.get_mut(r.budget) {
                    b.settle_locally(tally, now_ms, *r, used);
                }
            }
            continue;
        }
        host::cas_update(&budget::record_key(b), |current| {
            Some(
                b.settle(current.and_then(Record::decode), now_ms, *r, used)
                    .encode(),
            )
        });
    }
}

/// A request refused after its budgets reserved (traffic shaping refused it): nothing was
/// sent, so nothing is charged.
pub fn give_back(plugin: &Plugin, metered: &Metered) {
    if !metered.reservations.is_empty() {
        settle(plugin, metered, false, host::now_unix_ms());
    }
}

/// A request's latencies, at its end: duration from arrival; for a stream that succeeded
/// (`served`), time to its first event and per output token after it.
pub fn record_latency(
    plugin: &Plugin,
    slot: ModelSlot,
    metered: &Metered,
    served: bool,
    now_ms: u64,
) {
    let Some(ids) = plugin.meter.latency.get(slot.index()) else {
        return;
    };
    let Some(arrived) = metered.arrived_ms else {
        return;
    };
    let record = |id: Option<u32>, value: u64| {
        if let Some(id) = id {
            let _ = raw::record_metric(id, value);
        }
    };
    record(ids[0], now_ms.saturating_sub(arrived));
    if let Some(first) = metered.first_byte_ms.filter(|_| served) {
        record(ids[1], first.saturating_sub(arrived));
        if metered.output_tokens >= 2 {
            let per_token =
                now_ms.saturating_sub(first).saturating_mul(1000) / (metered.output_tokens - 1);
            record(ids[2], per_token);
        }
    }
}

/// An answer's tokens in `gen_ai.client.token.usage`.
pub fn record_tokens(plugin: &Plugin, slot: ModelSlot, usage: &Usage) {
    let Some(ids) = plugin.meter.token_usage.get(slot.index()) else {
        return;
    };
    for (id, tokens) in ids.iter().zip([usage.input_tokens, usage.output_tokens]) {
        if let (Some(id), Some(tokens)) = (id, tokens) {
            let _ = raw::record_metric(*id, tokens);
        }
    }
}

/// Folds this worker's shadow-budget changes into their shared records, and sets the
/// budgets' gauges from those records (any worker's value is the truth).
pub fn publish(plugin: &Plugin, now_ms: u64) {
    let Ok(mut tallies) = plugin.meter.tallies.try_borrow_mut() else {
        return;
    };
    for ((b, ids), tally) in plugin
        .meter
        .budgets
        .iter()
        .zip(&plugin.meter.gauges)
        .zip(tallies.iter_mut())
    {
        let key = budget::record_key(b);
        let record = if b.shadow {
            let mut now = None;
            let outcome = host::cas_update(&key, |current| {
                let shared = current.and_then(Record::decode);
                let folded = b.fold(tally, shared, now_ms);
                now = folded.or(shared);
                folded.map(Record::encode)
            });
            if outcome != host::CasOutcome::Failed {
                b.folded(tally, now);
            }
            now
        } else {
            host::shared_data(&key)
                .and_then(|(bytes, _)| bytes)
                .and_then(|bytes| Record::decode(&bytes))
        };
        let (spent, reserved, limit) = if b.active(now_ms) {
            let r = b.current(record, now_ms);
            (r.spent, r.reserved, b.limit)
        } else {
            (0, 0, 0)
        };
        for (id, value) in ids.iter().zip([spent, reserved, limit]) {
            if let Some(id) = id {
                let _ = raw::record_metric(*id, value);
            }
        }
    }
}

/// Sets each model's switch-condition gauges from shared data: whether its circuit is open,
/// and the P95 its latency condition reads.
pub fn publish_conditions(plugin: &Plugin, now_ms: u64) {
    for (model, id) in &plugin.meter.circuit_open {
        let open = super::shared_health::read(model).admission(now_ms)
            != crate::health::Admission::Healthy;
        if let Some(id) = id {
            let _ = raw::record_metric(*id, u64::from(open));
        }
    }
    for (model, id) in &plugin.meter.latency_p95 {
        let Some(rule) = plugin.config.switch_rule(model).latency else {
            continue;
        };
        let bytes = host::shared_data(&crate::flow::latency::key(
            model,
            crate::flow::latency::Kind::Head,
        ))
        .and_then(|(b, _)| b);
        let p95 = crate::flow::latency::LatencyRecord::decode(bytes.as_deref())
            .p95_ms(&rule)
            .filter(|p| *p != u64::MAX)
            .unwrap_or(0);
        if let Some(id) = id {
            let _ = raw::record_metric(*id, p95);
        }
    }
}

/// The budgets in the status document.
pub fn status(plugin: &Plugin, now_ms: u64) -> serde_json::Value {
    let budgets = plugin.meter.budgets.iter().map(|b| {
        let record = host::shared_data(&budget::record_key(b))
            .and_then(|(bytes, _)| bytes)
            .and_then(|bytes| Record::decode(&bytes));
        let r = b.current(record, now_ms);
        let (start, _) = b.window_at(now_ms);
        serde_json::json!({
            "name": b.name,
            "state": if !b.active(now_ms) { "expired" } else if b.shadow { "shadow" } else { "enforced" },
            "window": b.window.as_str(),
            "window_start": crate::classify::wait::rfc3339_utc(start),
            "resets_at": crate::classify::wait::rfc3339_utc(b.resets_at(now_ms)),
            "until": b.until_ms.map(crate::classify::wait::rfc3339_utc),
            "unit": b.unit.as_str(),
            "limit": b.limit,
            "spent": r.spent,
            "reserved": r.reserved,
            "used_ratio": if b.limit == 0 { 0.0 } else { r.spent as f64 / b.limit as f64 },
            "scope": {"key": b.key_label, "task": b.task, "model": b.model},
        })
    });
    serde_json::Value::Array(budgets.collect())
}
