//! The filter's counters: a fixed, bounded set decided at configuration time.
//!
//! Each counter is an Envoy stat and a shared-data key with the same name. Labels are written
//! into the name as `;label=value` pairs (`llm_fallback.requests;model=gpt-4o`); the shipped
//! bootstrap's `stats_tags` turn them into Prometheus labels
//! (`llm_fallback_requests{model="gpt-4o"}`). Model labels are limited to the configured
//! models plus `other` and `none`, so a client sending random model names cannot grow the set.

use crate::config::Config;
use crate::model_field::Skip;

/// Label for a model that is not configured.
pub const OTHER_MODEL: &str = "other";
/// Label for a request whose model could not be read (no body, not JSON, no `model` key).
pub const NO_MODEL: &str = "none";

/// Prefix of every stat and shared-data key.
pub const PREFIX: &str = "llm_fallback";

/// Counter families labelled by model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelCounter {
    /// Client requests, counted once in the HTTP connection manager position.
    Requests,
    /// Upstream attempts, counted once per router attempt in the upstream position.
    Attempts,
}

impl ModelCounter {
    pub const ALL: [ModelCounter; 2] = [ModelCounter::Requests, ModelCounter::Attempts];

    pub const fn name(self) -> &'static str {
        match self {
            ModelCounter::Requests => "requests",
            ModelCounter::Attempts => "attempts",
        }
    }
}

/// Why a request body was not read for its model, as a stat label.
pub const SKIP_REASONS: [Skip; 5] = [
    Skip::NotJson,
    Skip::NoModel,
    Skip::NotString,
    Skip::Duplicate,
    Skip::ModelTooLong,
];

/// Extra skip reasons that come from the filter rather than the scanner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodySkip {
    Scan(Skip),
    /// The body is compressed (`content-encoding`), so it is not read.
    Encoded,
}

impl BodySkip {
    pub const fn as_str(self) -> &'static str {
        match self {
            BodySkip::Scan(skip) => skip.as_str(),
            BodySkip::Encoded => "encoded",
        }
    }
}

/// Index of a counter in [`CounterSet::names`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterId(pub usize);

/// All counters of one configuration, in a fixed order.
#[derive(Debug, Clone)]
pub struct CounterSet {
    models: Vec<String>,
    names: Vec<String>,
}

impl CounterSet {
    pub fn new(config: &Config) -> Self {
        let models: Vec<String> = config.models.iter().map(|m| m.name.clone()).collect();
        let mut names = Vec::new();
        for family in ModelCounter::ALL {
            let labels = models.iter().map(String::as_str);
            for label in labels.chain([OTHER_MODEL, NO_MODEL]) {
                names.push(format!("{PREFIX}.{};model={label}", family.name()));
            }
        }
        for reason in SKIP_REASONS
            .iter()
            .map(|s| BodySkip::Scan(*s))
            .chain([BodySkip::Encoded])
        {
            names.push(format!("{PREFIX}.body_skipped;reason={}", reason.as_str()));
        }
        Self { models, names }
    }

    /// Every counter name, in id order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    fn labels_per_family(&self) -> usize {
        self.models.len() + 2
    }

    /// The model label for a model name: itself if configured, else `other`; `none` if unknown.
    pub fn model_label<'a>(&'a self, model: Option<&'a str>) -> &'a str {
        match model {
            None => NO_MODEL,
            Some(m) if self.models.iter().any(|c| c == m) => m,
            Some(_) => OTHER_MODEL,
        }
    }

    fn model_slot(&self, model: Option<&str>) -> usize {
        match model {
            None => self.models.len() + 1,
            Some(m) => self
                .models
                .iter()
                .position(|c| c == m)
                .unwrap_or(self.models.len()),
        }
    }

    /// The counter of `family` for `model` (`None`: the model is unknown).
    pub fn model_counter(&self, family: ModelCounter, model: Option<&str>) -> CounterId {
        let family_index = match family {
            ModelCounter::Requests => 0,
            ModelCounter::Attempts => 1,
        };
        CounterId(family_index * self.labels_per_family() + self.model_slot(model))
    }

    /// The counter of bodies skipped for `reason`.
    pub fn body_skipped(&self, reason: BodySkip) -> CounterId {
        let base = ModelCounter::ALL.len() * self.labels_per_family();
        let offset = match reason {
            BodySkip::Scan(skip) => SKIP_REASONS
                .iter()
                .position(|s| *s == skip)
                .unwrap_or(SKIP_REASONS.len()),
            BodySkip::Encoded => SKIP_REASONS.len(),
        };
        CounterId(base + offset)
    }
}

/// The status document: every counter with its shared (all-worker) value.
pub fn status_json(set: &CounterSet, values: &[u64]) -> String {
    let counters: serde_json::Map<String, serde_json::Value> = set
        .names()
        .iter()
        .zip(values)
        .map(|(name, value)| (name.clone(), serde_json::Value::from(*value)))
        .collect();
    serde_json::json!({ "counters": counters }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ModelConfig;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn set() -> CounterSet {
        CounterSet::new(&Config {
            models: vec![
                ModelConfig {
                    name: "gpt-4.1".into(),
                },
                ModelConfig {
                    name: "mini".into(),
                },
            ],
            ..Config::default()
        })
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn ids_point_at_the_right_names() {
        let s = set();
        let name = |id: CounterId| s.names()[id.0].as_str();
        assert_eq!(
            name(s.model_counter(ModelCounter::Requests, Some("gpt-4.1"))),
            "llm_fallback.requests;model=gpt-4.1"
        );
        assert_eq!(
            name(s.model_counter(ModelCounter::Attempts, Some("mini"))),
            "llm_fallback.attempts;model=mini"
        );
        assert_eq!(
            name(s.model_counter(ModelCounter::Requests, Some("random"))),
            "llm_fallback.requests;model=other"
        );
        assert_eq!(
            name(s.model_counter(ModelCounter::Attempts, None)),
            "llm_fallback.attempts;model=none"
        );
        assert_eq!(
            name(s.body_skipped(BodySkip::Scan(Skip::Duplicate))),
            "llm_fallback.body_skipped;reason=duplicate_model"
        );
        assert_eq!(
            name(s.body_skipped(BodySkip::Encoded)),
            "llm_fallback.body_skipped;reason=encoded"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn names_are_unique_and_bounded() {
        let s = set();
        let mut names = s.names().to_vec();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), s.names().len());
        assert_eq!(s.names().len(), 2 * 4 + 6);
        assert_eq!(s.model_label(Some("zzz")), OTHER_MODEL);
        assert_eq!(s.model_label(Some("mini")), "mini");
        assert_eq!(s.model_label(None), NO_MODEL);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn status_lists_every_counter() {
        let s = set();
        let values: Vec<u64> = (0..s.names().len() as u64).collect();
        let doc: serde_json::Value = serde_json::from_str(&status_json(&s, &values)).unwrap();
        assert_eq!(doc["counters"]["llm_fallback.requests;model=mini"], 1);
        assert_eq!(doc["counters"].as_object().unwrap().len(), s.names().len());
    }
}
