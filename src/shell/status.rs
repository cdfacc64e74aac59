//! The status filter (`root_id: status`): answers `status_path` with the shared health and
//! counters as JSON, and lets every other request through untouched.
//!
//! It is meant for an internal listener: whoever can reach a listener that loads it can read
//! the document. The public listener's filter (`root_id: client`) never answers it.

use super::{host, shared_health, Plugin};
use proxy_wasm::traits::{Context, HttpContext};
use proxy_wasm::types::{Action, MapType};
use std::rc::Rc;

pub struct StatusContext {
    plugin: Rc<Plugin>,
}

impl StatusContext {
    pub fn new(plugin: Rc<Plugin>) -> Self {
        Self { plugin }
    }
}

impl Context for StatusContext {}

impl HttpContext for StatusContext {
    fn on_http_request_headers(&mut self, _num_headers: usize, _end_of_stream: bool) -> Action {
        let plugin = &self.plugin;
        let Some(status_path) = plugin.config.status_path.as_deref() else {
            return Action::Continue;
        };
        let path = host::header(MapType::HttpRequestHeaders, ":path").unwrap_or_default();
        let path = path.split(|b| *b == b'?').next().unwrap_or_default();
        if path != status_path.as_bytes() {
            return Action::Continue;
        }
        let health: Vec<_> = plugin
            .config
            .models
            .iter()
            .map(|m| (m.name.clone(), shared_health::read(&m.name)))
            .collect();
        let mut body = crate::stats::status_json(
            &plugin.metrics.set,
            &plugin.metrics.shared_values(),
            &health,
            host::now_unix_ms(),
        );
        let shaping = plugin.config.shaping.as_ref();
        let budgets = !plugin.meter.budgets.is_empty();
        if let Ok(serde_json::Value::Object(mut doc)) = serde_json::from_str(&body) {
            // Each model's switch conditions in force.
            if let Some(serde_json::Value::Object(models)) = doc.get_mut("models") {
                for (name, model) in models.iter_mut() {
                    let rule = plugin.config.switch_rule(name);
                    // The latency condition's state: the P95 now, from the shared record.
                    let latency = rule.latency.map(|l| {
                        use crate::flow::latency::{key, Kind, LatencyRecord};
                        let read = |kind| {
                            let bytes = host::shared_data(&key(name, kind)).and_then(|(b, _)| b);
                            LatencyRecord::decode(bytes.as_deref())
                        };
                        let per_token = l.per_token().map(|t| {
                            serde_json::json!({
                                "baseline_us": t.baseline_ms, "threshold_us": t.threshold_ms(),
                                "p95_us": read(Kind::PerToken).p95(&t, Kind::PerToken),
                            })
                        });
                        serde_json::json!({
                            "baseline_ms": l.baseline_ms, "threshold_ms": l.threshold_ms(),
                            "release_ms": l.release_ms(), "for_ms": l.for_ms,
                            "window_ms": l.window_ms, "p95_ms": read(Kind::Head).p95_ms(&l),
                            "per_token": per_token,
                        })
                    });
                    if let Some(model) = model.as_object_mut() {
                        model.insert(
                            "switch_on".into(),
                            serde_json::json!({
                                "consecutive_failures": rule.consecutive_failures,
                                "wait_over_ms": rule.wait_over_ms,
                                "error_rate": {"over": rule.error_rate, "window_ms": rule.window_ms,
                                               "min_requests": rule.min_requests,
                                               "classes": rule.rate_classes.names()},
                                "latency": latency,
                            }),
                        );
                    }
                }
            }
            if !plugin.config.fallback.canaries.is_empty() {
                let now = host::now_unix_ms();
                let canaries = plugin.config.fallback.canaries.iter().map(|c| {
                    let health = shared_health::read(&c.model);
                    let state = match health.admission(now) {
                        crate::health::Admission::Healthy => "serving",
                        crate::health::Admission::Probe => "probe_due",
                        crate::health::Admission::Cooling { .. } => "halted",
                    };
                    serde_json::json!({
                        "model": c.model, "of": c.of, "share": c.share, "state": state,
                        "halted_for_ms": health.cooldown_until_ms.saturating_sub(now),
                    })
                });
                doc.insert("canaries".into(), canaries.collect());
            }
            if let Some(config) = shaping {
                doc.insert("shaping".into(), super::shaping::status(config));
            }
            if budgets {
                let now = host::now_unix_ms();
                doc.insert("budgets".into(), super::meter::status(plugin, now));
            }
            body = serde_json::Value::Object(doc).to_string();
        }
        host::send_response(
            200,
            vec![
                ("content-type", "application/json"),
                ("cache-control", "no-store"),
            ],
            body.as_bytes(),
        );
        Action::Pause
    }
}
