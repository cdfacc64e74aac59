//! The plugin configuration: parsed from what Envoy hands the plugin, then validated.
//!
//! Envoy passes `configuration` either as a JSON string (`google.protobuf.StringValue`) or, when
//! the operator writes plain YAML, as a serialized `google.protobuf.Struct`. Both end up as one
//! JSON value, deserialized strictly (unknown fields are errors, so a typo never silently turns
//! a feature off) and validated. Every error names the field it is about.

mod pb_struct;

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
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// The model name as clients send it in the request's `model` field.
    pub name: String,
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
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
}

impl Config {
    /// Parses and validates the bytes Envoy passes as the plugin configuration.
    ///
    /// Empty bytes give the default configuration. Bytes whose first non-space character is
    /// `{` are JSON; anything else is read as a serialized `google.protobuf.Struct`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ConfigError> {
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
        let value = match first {
            None => return Ok(Self::default()),
            Some(b'{') => serde_json::from_slice::<Value>(bytes)
                .map_err(|e| ConfigError::new("", format!("not valid JSON: {e}")))?,
            Some(_) => {
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
        }
        Ok(())
    }
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
