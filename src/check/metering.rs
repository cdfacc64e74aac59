//! Usage accounting against the bootstrap: the stats tags its series need for their labels, the
//! histogram buckets its latencies need (and the GenAI recording rules assume), and cost
//! budgets over models that have no price.

use super::{warning, Report};
use crate::config::Config;
use serde_json::Value;

/// The latency histograms and the bucket bound the shipped GenAI rules start from.
const HISTOGRAMS: [&str; 3] = [
    "wasmcustom.llm_fallback.request_duration_ms",
    "wasmcustom.llm_fallback.ttft_ms",
    "wasmcustom.llm_fallback.tpot_us",
];

pub(super) fn check_metering(document: &Value, client: Option<&Config>, report: &mut Report) {
    // Checked once the operator configures metering (keys, prices or budgets).
    let configured = |c: &&Config| {
        let m = &c.metering;
        !m.keys.is_empty() || !m.prices.is_empty() || !m.budgets.is_empty()
    };
    let Some(config) = client.filter(|c| !c.models.is_empty()).filter(configured) else {
        return;
    };
    let metering = &config.metering;
    let text = document.to_string();
    let mut tags = vec![";key=", ";provider="];
    if !metering.budgets.is_empty() {
        tags.push(";budget=");
    }
    tags.extend([
        ";gen_ai_request_model=",
        ";gen_ai_provider_name=",
        ";gen_ai_token_type=",
    ]);
    let missing: Vec<&str> = tags.into_iter().filter(|t| !text.contains(t)).collect();
    if !missing.is_empty() {
        report.findings.push(warning(
            "stats_config.stats_tags",
            format!(
                "no tags for {}: the usage, latency and GenAI series reach Prometheus without \
                 those labels",
                missing
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    if metering.latency {
        let buckets = document
            .pointer("/stats_config/histogram_bucket_settings")
            .and_then(Value::as_array)
            .map(|settings| settings.iter().map(Value::to_string).collect::<String>())
            .unwrap_or_default();
        let unset: Vec<&str> = HISTOGRAMS
            .into_iter()
            .filter(|h| !buckets.contains(h))
            .collect();
        if !unset.is_empty() {
            report.findings.push(warning(
                "stats_config.histogram_bucket_settings",
                format!(
                    "no buckets for {}: Envoy's defaults are coarse for LLM answers, and the \
                     GenAI recording rules (docker/rules) expect the shipped bounds",
                    unset.join(", ")
                ),
            ));
        }
    }
    for (i, budget) in metering.budgets.iter().enumerate() {
        if budget.usd.is_none() {
            continue;
        }
        let unpriced: Vec<&str> = config
            .models
            .iter()
            .filter(|m| budget.model.as_ref().is_none_or(|b| *b == m.name))
            .filter(|m| !metering.prices.contains_key(&m.name))
            .map(|m| m.name.as_str())
            .collect();
        if !unpriced.is_empty() {
            report.findings.push(warning(
                format!("metering.budgets[{i}].usd"),
                format!(
                    "budget `{}` counts USD, but {} have no price in metering.prices: their \
                     answers cost nothing in it",
                    budget.name,
                    unpriced.join(", ")
                ),
            ));
        }
    }
}
