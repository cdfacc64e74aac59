//! The plugin configuration: parsed from what Envoy hands the plugin, then validated.
//!
//! Envoy passes `configuration` either as a JSON string (`google.protobuf.StringValue`) or, when
//! the operator writes plain YAML, as a serialized `google.protobuf.Struct`. Both end up as one
//! JSON value, deserialized strictly (unknown fields are errors, so a typo never silently turns
//! a feature off) and validated. Every error names the field it is about.

pub mod canary;
pub mod metering;
mod pb_struct;
pub mod shaping;
pub mod switch;
pub mod trust;

use crate::classify::rules::{Rule, Rules};
use serde::Deserialize;
use serde_json::Value;
use std::fmt;

/// Longest model name accepted in the configuration.
pub const MAX_MODEL_NAME: usize = 200;

/// A configuration problem, naming the field (`models[1].name`) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub field: String,
    pub message: String,
}

impl ConfigError {
    fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "invalid llm-fallback configuration: {}", self.message)
        } else {
            write!(
                f,
                "invalid llm-fallback configuration: field `{}`: {}",
                self.field, self.message
            )
        }
    }
}

impl std::error::Error for ConfigError {}

/// A model the operator configured.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// The model name as clients send it in the request's `model` field.
    pub name: String,
    /// Its tier (one of `fallback.tiers`); `critical` requests never go to a lower tier.
    #[serde(default)]
    pub tier: Option<String>,
    /// The name sent upstream, where it differs (a dated version, an Azure deployment).
    #[serde(default)]
    pub upstream_name: Option<String>,
    /// The Envoy cluster that serves it (default: `fallback.default_cluster`).
    #[serde(default)]
    pub cluster: Option<String>,
    /// The provider account (API key, organization) it is billed to; an account-wide quota stop
    /// cools down every model of the account at once. Default: its cluster, since a cluster
    /// usually carries one credential; name accounts when one cluster carries several keys.
    #[serde(default)]
    pub account: Option<String>,
    /// Context window in tokens; requests estimated larger skip this model.
    #[serde(default)]
    pub context_window: Option<u64>,
    /// Largest `max_tokens` it accepts.
    #[serde(default)]
    pub max_output_tokens: Option<u64>,
    /// Whether it supports tool calling (default true).
    #[serde(default = "yes")]
    pub tools: bool,
    /// Whether it supports structured output / JSON schema (default true).
    #[serde(default = "yes")]
    pub json_schema: bool,
    /// Whether it accepts image input (default true).
    #[serde(default = "yes")]
    pub images: bool,
    /// Drained: treated as unavailable, so traffic falls back (to rehearse a bad day).
    #[serde(default)]
    pub drain: bool,
    /// The request format its endpoint speaks. The filter rewrites `model` only, never the
    /// format: `llm-fallback check` warns when a chain mixes families.
    #[serde(default)]
    pub api: ApiFamily,
    /// The provider's name in the OpenTelemetry GenAI metrics (`gen_ai.provider.name`:
    /// `openai`, `anthropic`, `gcp.gemini`, `groq`, ...). Default: from `api`.
    #[serde(default)]
    pub provider: Option<String>,
}

/// The request format a model's endpoint speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiFamily {
    /// OpenAI chat completions / Responses, and every OpenAI-compatible endpoint (Groq,
    /// Together, Gemini's and Anthropic's OpenAI-compatible endpoints, vLLM, ...).
    #[default]
    Openai,
    /// Anthropic's native Messages API.
    Anthropic,
    /// Google's native `generateContent` API.
    Gemini,
}

impl ApiFamily {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
        }
    }
}

fn yes() -> bool {
    true
}

impl ModelConfig {
    /// Its `gen_ai.provider.name`.
    pub fn provider_name(&self) -> &str {
        self.provider.as_deref().unwrap_or(match self.api {
            ApiFamily::Openai => "openai",
            ApiFamily::Anthropic => "anthropic",
            ApiFamily::Gemini => "gcp.gemini",
        })
    }

    /// The name to send upstream.
    pub fn upstream(&self) -> &str {
        self.upstream_name.as_deref().unwrap_or(&self.name)
    }

    /// The cluster that serves it, given the configured default.
    pub fn cluster_or<'a>(&'a self, default_cluster: &'a str) -> &'a str {
        self.cluster.as_deref().unwrap_or(default_cluster)
    }

    /// The account it is billed to: its own `account`, else its cluster.
    pub fn account_or<'a>(&'a self, default_cluster: &'a str) -> &'a str {
        self.account
            .as_deref()
            .unwrap_or_else(|| self.cluster_or(default_cluster))
    }
}

/// What to do when `max_tokens` exceeds a fallback's output limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensPolicy {
    /// Lower `max_tokens` to the fallback's limit.
    #[default]
    Clamp,
    /// Skip that fallback.
    Skip,
}

/// How requests fall back between models.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FallbackConfig {
    /// Tier names, strongest first.
    #[serde(default = "default_tiers")]
    pub tiers: Vec<String>,
    /// Per requested model: the models to try after it, in order.
    #[serde(default)]
    pub chains: std::collections::BTreeMap<String, Vec<String>>,
    /// Per task type (the `task_header` value): the whole chain, in order.
    #[serde(default)]
    pub tasks: std::collections::BTreeMap<String, Vec<String>>,
    #[serde(default = "default_task_header")]
    pub task_header: String,
    #[serde(default = "default_priority_header")]
    pub priority_header: String,
    /// The cluster of models that name none; the client filter routes with `cluster_header`.
    #[serde(default = "default_cluster")]
    pub default_cluster: String,
    /// The request header carrying the chosen cluster (the route's `cluster_header`).
    #[serde(default = "default_cluster_header")]
    pub cluster_header: String,
    /// A rate limit asking for at most this wait is waited out on the same model.
    #[serde(default = "default_max_wait_ms")]
    pub max_wait_ms: u64,
    /// Cooldown after a quota stop that states no reset time.
    #[serde(default = "default_quota_cooldown_ms")]
    pub quota_cooldown_ms: u64,
    /// Cooldown after the model was reported missing or retired.
    #[serde(default = "default_unavailable_cooldown_ms")]
    pub unavailable_cooldown_ms: u64,
    /// Consecutive overload/timeout failures that open a model's circuit.
    #[serde(default = "default_failure_threshold")]
    pub failure_threshold: u32,
    /// Error rate (0..1) over `window_ms` that opens the circuit (with at least
    /// `min_requests` attempts in the window).
    #[serde(default = "default_error_rate", deserialize_with = "f64_or_text")]
    pub error_rate_threshold: f64,
    #[serde(default = "default_window_ms")]
    pub window_ms: u64,
    #[serde(default = "default_min_requests")]
    pub min_requests: u32,
    /// First circuit cooldown; doubled on each re-open, with jitter, up to `max_cooldown_ms`.
    #[serde(default = "default_base_cooldown_ms")]
    pub base_cooldown_ms: u64,
    #[serde(default = "default_max_cooldown_ms")]
    pub max_cooldown_ms: u64,
    #[serde(default)]
    pub max_tokens: MaxTokensPolicy,
    /// Longest wait an upstream may impose through `Retry-After`, reset headers or body hints;
    /// longer stated waits are cut to this (a `Retry-After: 1000000000000` must not cool a model
    /// until the next restart). Quota cooldowns with a stated reset are cut to it too: the model
    /// is then probed once when it ends.
    #[serde(default = "default_max_stated_wait_ms")]
    pub max_stated_wait_ms: u64,
    /// How long a 200 event stream's headers may be held while its first event is awaited.
    #[serde(default)]
    pub stream_start: StreamStartConfig,
    /// How a small 200 JSON answer is held whole before its headers go.
    #[serde(default)]
    pub json_body: JsonBodyConfig,
    /// How a request moves between provider clusters, and whose credentials reach them.
    #[serde(default)]
    pub providers: ProvidersConfig,
    /// Switch conditions per tier or per model (a model's over its tier's, over the defaults
    /// above).
    #[serde(default)]
    pub switch_on: std::collections::BTreeMap<String, switch::SwitchOn>,
    /// Models that take a share of another model's requests (a new release on part of a tier).
    #[serde(default)]
    pub canaries: Vec<canary::CanaryConfig>,
    /// Share (0..=0.2) of safe, normal-priority requests sent to one of their chain's fallbacks
    /// instead of a healthy primary, so that a broken fallback is seen before it is needed.
    #[serde(default, deserialize_with = "f64_or_text")]
    pub backup_share: f64,
}

/// When a fallback on another cluster (another provider) is asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderSwitch {
    /// Inside the same request: the upstream filter names each retry's cluster in filter state,
    /// read by the route's matcher cluster specifier with `refresh_cluster_on_retry` (Envoy
    /// >= 1.39).
    InRequest,
    /// From the client's next request: the failing answer says `x-should-retry: true` and
    /// `x-llm-fallback-next`, and retries stay on the routed cluster. What a `cluster_header`
    /// route (any Envoy) supports; the default, since it is right whatever the route.
    #[default]
    NextRequest,
}

/// Provider clusters and their credentials.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProvidersConfig {
    #[serde(default)]
    pub switch: ProviderSwitch,
    /// The filter-state key (without Envoy's `wasm.` prefix) naming the next attempt's cluster.
    #[serde(default = "default_filter_state_key")]
    pub filter_state_key: String,
    /// Credential headers of every provider. In `in_request` mode the client's are removed
    /// before routing (unless `forward_client_credentials`), and every one of them is removed
    /// before an attempt on another cluster than the last (header changes carry over between
    /// attempts: provider A's key must never reach provider B); each provider cluster injects
    /// its own (Envoy's `credential_injector`).
    #[serde(default = "default_credential_headers")]
    pub credential_headers: Vec<String>,
    /// Forward the client's own credential headers to the provider. Default: only in
    /// `next_request` mode, where the clusters may expect the client's key.
    #[serde(default)]
    pub forward_client_credentials: Option<bool>,
}

impl ProvidersConfig {
    pub fn in_request(&self) -> bool {
        self.switch == ProviderSwitch::InRequest
    }

    /// Whether the client's credential headers go upstream as they came.
    pub fn forwards_client_credentials(&self) -> bool {
        self.forward_client_credentials
            .unwrap_or(self.switch == ProviderSwitch::NextRequest)
    }
}

impl Default for ProvidersConfig {
    fn default() -> Self {
        Self {
            switch: ProviderSwitch::default(),
            filter_state_key: default_filter_state_key(),
            credential_headers: default_credential_headers(),
            forward_client_credentials: None,
        }
    }
}

fn default_filter_state_key() -> String {
    "llm_fallback_cluster".into()
}
fn default_credential_headers() -> Vec<String> {
    ["authorization", "x-api-key", "api-key", "x-goog-api-key"]
        .map(String::from)
        .to_vec()
}

/// Holding a 200 event stream's start, so that an error in its first event can still fall back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamStartConfig {
    /// Hold at all (default true).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Longest hold; then the stream is released as it is.
    #[serde(default = "default_stream_hold_ms")]
    pub max_hold_ms: u64,
    /// Most bytes held while waiting for the first event.
    #[serde(default = "default_stream_hold_bytes")]
    pub max_bytes: usize,
}

impl Default for StreamStartConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            max_hold_ms: default_stream_hold_ms(),
            max_bytes: default_stream_hold_bytes(),
        }
    }
}

/// Holding a 200 JSON answer's headers while its body is read, up to a few KiB: relays, task
/// APIs and some providers answer 200 with an error inside (`{"code": 336501, "msg": ...}`,
/// `{"status": "failed", ...}`, a refusal), which must fall back like the same error at 4xx.
/// A longer body is a real answer and is let go at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonBodyConfig {
    /// Hold at all (default true).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Longest hold; then the answer is let go as it is.
    #[serde(default = "default_stream_hold_ms")]
    pub max_hold_ms: u64,
    /// Longest body read whole; a longer one is let go as soon as it is.
    #[serde(default = "default_json_hold_bytes")]
    pub max_bytes: usize,
}

impl Default for JsonBodyConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            max_hold_ms: default_stream_hold_ms(),
            max_bytes: default_json_hold_bytes(),
        }
    }
}

fn default_json_hold_bytes() -> usize {
    4 * 1024
}

/// A hold of `fallback.<name>`: at most a minute, between 64 and `most_bytes` bytes.
fn check_hold(
    name: &str,
    max_hold_ms: u64,
    max_bytes: usize,
    most_bytes: usize,
) -> Result<(), ConfigError> {
    if max_hold_ms > 60_000 {
        return Err(ConfigError::new(
            format!("fallback.{name}.max_hold_ms"),
            format!("{max_hold_ms} is above 60000"),
        ));
    }
    if !(64..=most_bytes).contains(&max_bytes) {
        return Err(ConfigError::new(
            format!("fallback.{name}.max_bytes"),
            format!("{max_bytes} is outside 64..={most_bytes}"),
        ));
    }
    Ok(())
}

fn default_stream_hold_ms() -> u64 {
    2_000
}
fn default_stream_hold_bytes() -> usize {
    16 * 1024
}
fn default_max_stated_wait_ms() -> u64 {
    86_400_000
}

fn default_tiers() -> Vec<String> {
    ["flagship", "general", "light"].map(String::from).to_vec()
}
fn default_task_header() -> String {
    "x-llm-task".into()
}
fn default_priority_header() -> String {
    "x-llm-priority".into()
}
fn default_cluster() -> String {
    "llm".into()
}
fn default_cluster_header() -> String {
    "x-llm-cluster".into()
}
fn default_max_wait_ms() -> u64 {
    30_000
}
fn default_quota_cooldown_ms() -> u64 {
    3_600_000
}
fn default_unavailable_cooldown_ms() -> u64 {
    600_000
}
fn default_failure_threshold() -> u32 {
    2
}
/// A number, also when it arrives as text: Envoy's YAML loader hands fractions such as
/// `error_rate_threshold: 0.05` to the plugin's `Struct` as strings (seen on Envoy 1.40).
pub(crate) fn f64_or_text<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<f64, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| serde::de::Error::custom("not a number")),
        Value::String(text) => text
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .ok_or_else(|| serde::de::Error::custom(format!("`{text}` is not a number"))),
        other => Err(serde::de::Error::custom(format!(
            "expected a number, got {other}"
        ))),
    }
}

pub(crate) fn f64_or_text_opt<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<f64>, D::Error> {
    f64_or_text(deserializer).map(Some)
}

fn default_error_rate() -> f64 {
    0.05
}
fn default_window_ms() -> u64 {
    60_000
}
fn default_min_requests() -> u32 {
    20
}
fn default_base_cooldown_ms() -> u64 {
    10_000
}
fn default_max_cooldown_ms() -> u64 {
    300_000
}

impl Default for FallbackConfig {
    fn default() -> Self {
        Self {
            tiers: default_tiers(),
            chains: Default::default(),
            tasks: Default::default(),
            task_header: default_task_header(),
            priority_header: default_priority_header(),
            default_cluster: default_cluster(),
            cluster_header: default_cluster_header(),
            max_wait_ms: default_max_wait_ms(),
            quota_cooldown_ms: default_quota_cooldown_ms(),
            unavailable_cooldown_ms: default_unavailable_cooldown_ms(),
            failure_threshold: default_failure_threshold(),
            error_rate_threshold: default_error_rate(),
            window_ms: default_window_ms(),
            min_requests: default_min_requests(),
            base_cooldown_ms: default_base_cooldown_ms(),
            max_cooldown_ms: default_max_cooldown_ms(),
            max_tokens: MaxTokensPolicy::Clamp,
            max_stated_wait_ms: default_max_stated_wait_ms(),
            stream_start: StreamStartConfig::default(),
            json_body: JsonBodyConfig::default(),
            providers: ProvidersConfig::default(),
            switch_on: Default::default(),
            canaries: Vec::new(),
            backup_share: 0.0,
        }
    }
}

/// Default cap on the error-body bytes the classifier reads.
pub const DEFAULT_MAX_BODY_BYTES: usize = 16 * 1024;

/// How the filter reads upstream answers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassifierConfig {
    /// At most this many bytes of an error body are held and read (the rest streams on). Error
    /// bodies are small; the cap bounds memory and latency whatever an upstream sends.
    #[serde(default = "default_max_body_bytes")]
    pub max_body_bytes: usize,
    /// Operator rules, checked in order before the built-in knowledge.
    #[serde(default)]
    pub rules: Vec<Rule>,
}

fn default_max_body_bytes() -> usize {
    DEFAULT_MAX_BODY_BYTES
}

impl Default for ClassifierConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            rules: Vec::new(),
        }
    }
}

impl ClassifierConfig {
    pub fn rules(&self) -> Rules {
        Rules(self.rules.clone())
    }
}

/// The validated plugin configuration.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Models the filter knows. Stats carry these names as the `model` label; any other model
    /// is counted as `other`, so the label set stays bounded whatever clients send.
    #[serde(default)]
    pub models: Vec<ModelConfig>,
    /// Path at which the filter in the client position answers `GET` with its shared counters
    /// as JSON. Off when absent. Meant for an internal listener only: whoever can reach this
    /// path on a listener that loads the filter can read it.
    #[serde(default)]
    pub status_path: Option<String>,
    #[serde(default)]
    pub classifier: ClassifierConfig,
    #[serde(default)]
    pub fallback: FallbackConfig,
    #[serde(default)]
    pub retry_safety: crate::safety::SafetyConfig,
    /// How far this listener's clients may steer their own requests.
    #[serde(default)]
    pub trust: trust::TrustConfig,
    /// Priority classes, concurrency pools, queues and off-peak deferral (off when absent).
    #[serde(default)]
    pub shaping: Option<shaping::ShapingConfig>,
    /// API-key labels, prices, budgets and latency histograms.
    #[serde(default)]
    pub metering: metering::MeteringConfig,
}

impl Config {
    /// Parses and validates the bytes Envoy passes as the plugin configuration.
    ///
    /// Empty bytes give the default configuration. Bytes shaped like a serialized
    /// `google.protobuf.Struct` (a run of complete map entries) are one, whatever their first
    /// byte (a first entry of 123 bytes starts with `0x0a 0x7b`, i.e. `\n{`); other bytes whose
    /// first non-space character is `{` are JSON.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ConfigError> {
        let value = match pb_struct::detect(bytes) {
            pb_struct::Format::Empty => return Ok(Self::default()),
            pb_struct::Format::Json => serde_json::from_slice::<Value>(bytes)
                .map_err(|e| ConfigError::new("", format!("not valid JSON: {e}")))?,
            pb_struct::Format::Struct => {
                pb_struct::decode_struct(bytes).map_err(|e| ConfigError::new("", e.to_string()))?
            }
        };
        Self::from_value(value)
    }

    /// Deserializes and validates an already-parsed JSON value.
    pub fn from_value(value: Value) -> Result<Self, ConfigError> {
        if !value.is_object() {
            return Err(ConfigError::new("", "expected an object at the top level"));
        }
        let config: Self = serde_path_to_error::deserialize(value).map_err(|e| {
            let field = e.path().to_string();
            let field = if field == "." { String::new() } else { field };
            ConfigError::new(field, e.into_inner().to_string())
        })?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let max = self.classifier.max_body_bytes;
        if !(256..=1024 * 1024).contains(&max) {
            return Err(ConfigError::new(
                "classifier.max_body_bytes",
                format!("{max} is outside 256..=1048576"),
            ));
        }
        for (i, rule) in self.classifier.rules.iter().enumerate() {
            rule.validate().map_err(|(sub, message)| {
                let field = if sub.is_empty() {
                    format!("classifier.rules[{i}]")
                } else {
                    format!("classifier.rules[{i}].{sub}")
                };
                ConfigError::new(field, message)
            })?;
        }
        if let Some(path) = &self.status_path {
            if !path.starts_with('/') || path.contains(['?', '#', ' ']) {
                return Err(ConfigError::new(
                    "status_path",
                    format!("`{path}` must be a plain path starting with `/`"),
                ));
            }
        }
        for (i, model) in self.models.iter().enumerate() {
            let field = format!("models[{i}].name");
            validate_model_name(&model.name).map_err(|m| ConfigError::new(&field, m))?;
            if self.models.iter().take(i).any(|m| m.name == model.name) {
                return Err(ConfigError::new(
                    field,
                    format!("model `{}` is listed twice", model.name),
                ));
            }
            if let Some(tier) = &model.tier {
                if !self.fallback.tiers.contains(tier) {
                    return Err(ConfigError::new(
                        format!("models[{i}].tier"),
                        format!(
                            "`{tier}` is not one of fallback.tiers {:?}",
                            self.fallback.tiers
                        ),
                    ));
                }
            }
            if let Some(upstream) = &model.upstream_name {
                validate_model_name(upstream)
                    .map_err(|m| ConfigError::new(format!("models[{i}].upstream_name"), m))?;
            }
            if let Some(cluster) = &model.cluster {
                validate_cluster(cluster)
                    .map_err(|m| ConfigError::new(format!("models[{i}].cluster"), m))?;
            }
            if let Some(account) = &model.account {
                validate_label(account)
                    .map_err(|m| ConfigError::new(format!("models[{i}].account"), m))?;
            }
            if let Some(provider) = &model.provider {
                validate_label(provider)
                    .map_err(|m| ConfigError::new(format!("models[{i}].provider"), m))?;
            }
            for (field, value) in [
                ("context_window", model.context_window),
                ("max_output_tokens", model.max_output_tokens),
            ] {
                if value == Some(0) {
                    return Err(ConfigError::new(
                        format!("models[{i}].{field}"),
                        "must be greater than 0",
                    ));
                }
            }
        }
        if let Some(shaping) = &self.shaping {
            shaping.validate(&self.models)?;
        }
        let tasks: Vec<&String> = self.fallback.tasks.keys().collect();
        self.metering.validate(&self.models, &tasks)?;
        self.validate_fallback()
    }

    fn validate_fallback(&self) -> Result<(), ConfigError> {
        let f = &self.fallback;
        let known = |name: &str| self.models.iter().any(|m| m.name == name);
        switch::validate(f, &known)?;
        canary::validate(f, &known)?;
        if !(0.0..=0.2).contains(&f.backup_share) {
            return Err(ConfigError::new(
                "fallback.backup_share",
                format!("{} is outside 0..=0.2", f.backup_share),
            ));
        }
        for (model, chain) in &f.chains {
            let field = format!("fallback.chains.{model}");
            if !known(model) {
                return Err(ConfigError::new(
                    field,
                    format!("`{model}` is not in `models`"),
                ));
            }
            validate_chain(chain, &field, &known)?;
            if chain.contains(model) {
                return Err(ConfigError::new(
                    field,
                    format!("`{model}` falls back to itself (a cycle)"),
                ));
            }
        }
        for (task, chain) in &f.tasks {
            let field = format!("fallback.tasks.{task}");
            if chain.is_empty() {
                return Err(ConfigError::new(field, "must list at least one model"));
            }
            validate_chain(chain, &field, &known)?;
        }
        validate_cluster(&f.default_cluster)
            .map_err(|m| ConfigError::new("fallback.default_cluster", m))?;
        for (field, header) in [
            ("fallback.task_header", &f.task_header),
            ("fallback.priority_header", &f.priority_header),
            ("fallback.cluster_header", &f.cluster_header),
        ]
        .into_iter()
        .chain(
            f.providers
                .credential_headers
                .iter()
                .map(|h| ("fallback.providers.credential_headers", h)),
        ) {
            let ok = !header.is_empty()
                && header
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
            if !ok {
                return Err(ConfigError::new(
                    field,
                    format!("`{header}` must be a lowercase header name"),
                ));
            }
        }
        let key = &f.providers.filter_state_key;
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            return Err(ConfigError::new(
                "fallback.providers.filter_state_key",
                format!("`{key}` must be letters, digits, `_`, `-` or `.`"),
            ));
        }
        let safety = &self.retry_safety;
        if safety.duplicates.slots == 0 || safety.duplicates.slots > 1 << 20 {
            return Err(ConfigError::new(
                "retry_safety.duplicates.slots",
                format!("{} is outside 1..=1048576", safety.duplicates.slots),
            ));
        }
        if safety.header.is_empty()
            || !safety
                .header
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(ConfigError::new(
                "retry_safety.header",
                format!("`{}` must be a lowercase header name", safety.header),
            ));
        }
        for (field, paths) in [
            ("retry_safety.safe_paths", &safety.safe_paths),
            ("retry_safety.unsafe_paths", &safety.unsafe_paths),
        ] {
            if let Some((i, p)) = paths
                .iter()
                .enumerate()
                .find(|(_, p)| !p.starts_with(['/', '*']))
            {
                return Err(ConfigError::new(
                    format!("{field}[{i}]"),
                    format!("`{p}` must start with `/` or `*`"),
                ));
            }
        }
        if f.tiers.is_empty() {
            return Err(ConfigError::new("fallback.tiers", "must not be empty"));
        }
        if f.failure_threshold == 0 {
            return Err(ConfigError::new(
                "fallback.failure_threshold",
                "must be at least 1",
            ));
        }
        if !(f.error_rate_threshold > 0.0 && f.error_rate_threshold <= 1.0) {
            return Err(ConfigError::new(
                "fallback.error_rate_threshold",
                format!("{} is not in (0, 1]", f.error_rate_threshold),
            ));
        }
        if f.window_ms == 0 {
            return Err(ConfigError::new(
                "fallback.window_ms",
                "must be greater than 0",
            ));
        }
        if f.max_stated_wait_ms < f.max_wait_ms {
            return Err(ConfigError::new(
                "fallback.max_stated_wait_ms",
                format!(
                    "{} must be at least max_wait_ms ({})",
                    f.max_stated_wait_ms, f.max_wait_ms
                ),
            ));
        }
        let start = &f.stream_start;
        check_hold(
            "stream_start",
            start.max_hold_ms,
            start.max_bytes,
            1024 * 1024,
        )?;
        let json = &f.json_body;
        check_hold("json_body", json.max_hold_ms, json.max_bytes, 64 * 1024)?;
        if f.base_cooldown_ms == 0 || f.base_cooldown_ms > f.max_cooldown_ms {
            return Err(ConfigError::new(
                "fallback.base_cooldown_ms",
                format!(
                    "{} must be > 0 and at most max_cooldown_ms ({})",
                    f.base_cooldown_ms, f.max_cooldown_ms
                ),
            ));
        }
        Ok(())
    }

    /// The configured model of that name.
    pub fn model(&self, name: &str) -> Option<&ModelConfig> {
        self.models.iter().find(|m| m.name == name)
    }

    /// The canary that takes a share of `model`'s requests, and its index.
    pub fn canary_of(&self, model: &str) -> Option<(usize, &canary::CanaryConfig)> {
        self.fallback
            .canaries
            .iter()
            .enumerate()
            .find(|(_, c)| c.of == model)
    }

    /// The canary entry `model` is the canary of, and its index.
    pub fn canary_entry(&self, model: &str) -> Option<(usize, &canary::CanaryConfig)> {
        self.fallback
            .canaries
            .iter()
            .enumerate()
            .find(|(_, c)| c.model == model)
    }

    /// The switch conditions in force for `model`: its own `fallback.switch_on` entry over its
    /// tier's, over the global defaults. Read on failures only.
    pub fn switch_rule(&self, model: &str) -> switch::SwitchRule {
        let f = &self.fallback;
        let mut rule = switch::SwitchRule::defaults(f);
        let tier = self.model(model).and_then(|m| m.tier.as_deref());
        for name in tier.into_iter().chain([model]) {
            if let Some(on) = f.switch_on.get(name) {
                rule = rule.with(on);
            }
        }
        rule
    }

    /// The cluster that serves `model`.
    pub fn cluster_of<'a>(&'a self, model: &'a ModelConfig) -> &'a str {
        model.cluster_or(&self.fallback.default_cluster)
    }

    /// The account `model` is billed to.
    pub fn account_of<'a>(&'a self, model: &'a ModelConfig) -> &'a str {
        model.account_or(&self.fallback.default_cluster)
    }

    /// Every account, once each, in the order models name them.
    pub fn accounts(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for model in &self.models {
            let account = self.account_of(model);
            if !out.contains(&account) {
                out.push(account);
            }
        }
        out
    }

    /// The models billed to `account`.
    pub fn models_of_account<'a>(
        &'a self,
        account: &'a str,
    ) -> impl Iterator<Item = &'a ModelConfig> + 'a {
        self.models
            .iter()
            .filter(move |m| self.account_of(m) == account)
    }
}

fn validate_chain(
    chain: &[String],
    field: &str,
    known: &dyn Fn(&str) -> bool,
) -> Result<(), ConfigError> {
    for (j, name) in chain.iter().enumerate() {
        if !known(name) {
            return Err(ConfigError::new(
                format!("{field}[{j}]"),
                format!("`{name}` is not in `models`"),
            ));
        }
        if chain.iter().take(j).any(|n| n == name) {
            return Err(ConfigError::new(
                format!("{field}[{j}]"),
                format!("`{name}` appears twice (a cycle)"),
            ));
        }
    }
    Ok(())
}

/// Account names become stat labels: the characters of cluster and model names, no `;`.
pub(crate) fn validate_label(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_MODEL_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-:/@+".contains(c));
    if !ok {
        return Err(format!(
            "`{name}` must be 1..={MAX_MODEL_NAME} letters, digits or `. _ - : / @ +`"
        ));
    }
    Ok(())
}

fn validate_cluster(name: &str) -> Result<(), String> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_graphic()) {
        return Err(format!("`{name}` is not a valid Envoy cluster name"));
    }
    Ok(())
}

/// Model names become stat labels and header values, so they are kept to the characters real
/// model names use (`gpt-4.1`, `models/gemini-2.5-pro`, `anthropic.claude-3-5-sonnet-v2:0`,
/// `accounts/fireworks/models/llama-v3p1-70b-instruct`, `Qwen/Qwen2.5-72B@latest`).
fn validate_model_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("must not be empty".into());
    }
    if name.len() > MAX_MODEL_NAME {
        return Err(format!("is longer than {MAX_MODEL_NAME} bytes"));
    }
    if let Some(bad) = name.chars().find(|c| !is_model_name_char(*c)) {
        return Err(format!(
            "`{name}` contains {bad:?}; model names may use letters, digits and . _ - : / @ +"
        ));
    }
    Ok(())
}

pub(crate) fn is_model_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':' | '/' | '@' | '+')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn empty_configuration_is_the_default() {
        assert_eq!(Config::from_bytes(b"").unwrap(), Config::default());
        assert_eq!(Config::from_bytes(b"  {}  ").unwrap(), Config::default());
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn json_and_protobuf_struct_give_the_same_config() {
        let value = json!({"models": [{"name": "gpt-4o"}, {"name": "gpt-4o-mini"}]});
        let from_json = Config::from_bytes(value.to_string().as_bytes()).unwrap();
        let pb = pb_struct::tests::encode_struct(value.as_object().unwrap());
        let from_pb = Config::from_bytes(&pb).unwrap();
        assert_eq!(from_json, from_pb);
        assert_eq!(from_json.models[1].name, "gpt-4o-mini");
    }

    fn error(value: Value) -> String {
        Config::from_value(value).unwrap_err().to_string()
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn errors_name_the_field() {
        let e = error(json!({"modles": []}));
        assert!(e.contains("unknown field `modles`"), "{e}");
        let e = error(json!({"models": [{"name": "a"}, {"name": 3}]}));
        assert!(e.contains("field `models[1].name`"), "{e}");
        let e = error(json!({"models": [{"name": "a"}, {"name": "a"}]}));
        assert!(
            e.contains("field `models[1].name`") && e.contains("twice"),
            "{e}"
        );
        let e = error(json!({"models": [{"name": ""}]}));
        assert!(
            e.contains("field `models[0].name`: must not be empty"),
            "{e}"
        );
        let e = error(json!({"models": [{"name": "a;b"}]}));
        assert!(e.contains("contains ';'"), "{e}");
        let e = error(json!({"models": [{"name": "a", "teir": "x"}]}));
        assert!(
            e.contains("models[0]") && e.contains("unknown field `teir`"),
            "{e}"
        );
        let models = json!([{"name": "a", "tier": "flagship"}, {"name": "b"}]);
        let e = error(json!({"models": models, "fallback": {"chains": {"a": ["b", "zz"]}}}));
        assert!(
            e.contains("field `fallback.chains.a[1]`: `zz` is not in `models`"),
            "{e}"
        );
        let e = error(json!({"models": models, "fallback": {"chains": {"a": ["b", "a"]}}}));
        assert!(
            e.contains("fallback.chains.a") && e.contains("cycle"),
            "{e}"
        );
        let e = error(json!({"models": models, "fallback": {"tasks": {"code": []}}}));
        assert!(e.contains("field `fallback.tasks.code`"), "{e}");
        let e = error(json!({"models": [{"name": "a", "tier": "gold"}]}));
        assert!(e.contains("field `models[0].tier`"), "{e}");
        let e = error(json!({"fallback": {"base_cooldown_ms": 10, "max_cooldown_ms": 5}}));
        assert!(e.contains("field `fallback.base_cooldown_ms`"), "{e}");
        let e = error(json!({"fallback": {"error_rate_threshold": 1.5}}));
        assert!(e.contains("field `fallback.error_rate_threshold`"), "{e}");
        // Envoy's YAML loader passes fractions as text.
        let text = Config::from_value(json!({"fallback": {"error_rate_threshold": "0.3"}}));
        assert_eq!(text.map(|c| c.fallback.error_rate_threshold), Ok(0.3));
        let e = error(json!({"fallback": {"error_rate_threshold": "lots"}}));
        assert!(e.contains("field `fallback.error_rate_threshold`"), "{e}");
        let e = error(json!({"fallback": {"max_stated_wait_ms": 10}}));
        assert!(e.contains("field `fallback.max_stated_wait_ms`"), "{e}");
        let e = error(json!({"fallback": {"stream_start": {"max_bytes": 1}}}));
        assert!(e.contains("field `fallback.stream_start.max_bytes`"), "{e}");
        let e = error(json!({"fallback": {"json_body": {"max_bytes": 1000000}}}));
        assert!(e.contains("field `fallback.json_body.max_bytes`"), "{e}");
        let e = error(json!({"models": [{"name": "a", "account": "a;b"}]}));
        assert!(e.contains("field `models[0].account`"), "{e}");
        let e = error(json!({"fallback": {"failure_threshold": 0}}));
        assert!(e.contains("field `fallback.failure_threshold`"), "{e}");
        let e = error(json!({"models": [{"name": "a", "context_window": 0}]}));
        assert!(e.contains("field `models[0].context_window`"), "{e}");
        let e = error(json!({"models": [{"name": "a", "cluster": "bad cluster"}]}));
        assert!(e.contains("field `models[0].cluster`"), "{e}");
        let e = error(json!({"classifier": {"rules": [{"name": "x", "class": "slow"}]}}));
        assert!(e.contains("field `classifier.rules[0].class`"), "{e}");
        let e = error(json!({"classifier": {"rules": [{"name": "x", "class": "auth"}]}}));
        assert!(
            e.contains("field `classifier.rules[0]`: needs at least one"),
            "{e}"
        );
        let e = error(json!({"classifier": {"max_body_bytes": 10}}));
        assert!(e.contains("field `classifier.max_body_bytes`"), "{e}");
        let e = error(json!({"status_path": "status"}));
        assert!(e.contains("field `status_path`"), "{e}");
        let e = error(json!([1]));
        assert!(e.contains("object at the top level"), "{e}");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn broken_bytes_are_errors_not_panics() {
        assert!(Config::from_bytes(b"{not json").is_err());
        assert!(Config::from_bytes(b"\x0a\x10").is_err());
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn real_model_names_are_accepted() {
        for name in [
            "gpt-4.1",
            "models/gemini-2.5-pro",
            "anthropic.claude-3-5-sonnet-20241022-v2:0",
            "accounts/fireworks/models/llama-v3p1-70b-instruct",
            "Qwen/Qwen2.5-72B-Instruct",
        ] {
            assert_eq!(validate_model_name(name), Ok(()), "{name}");
        }
    }
}
