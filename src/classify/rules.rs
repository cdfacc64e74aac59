//! Operator rules: classify answers from providers the built-in knowledge does not cover.
//!
//! A rule matches when every condition it states holds (status, a JSON field, a header, a
//! message phrase) and then decides the class. Rules are checked in order, before everything
//! built in.
//!
//! ```yaml
//! classifier:
//!   rules:
//!   - name: acme-credits
//!     status: [402, 429]
//!     json: {path: error.kind, equals: credits_depleted}
//!     class: quota_exhausted
//!     scope: account        # or `model`; quota_exhausted rules only, `account` when absent
//!   - name: acme-busy
//!     header: {name: x-acme-state, equals: busy}
//!     message: try later
//!     class: overloaded
//! ```

use super::evidence::{normalize, Evidence};
use super::{Answer, ErrorClass, Scope};
use serde::Deserialize;
use serde_json::Value;

/// A JSON field condition: `path` is dot-separated (`error.details.0.reason`); the value at that
/// path, as text, must equal `equals` (case-insensitive).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonMatch {
    pub path: String,
    pub equals: String,
}

/// A header condition: the header must be present and, if given, equal `equals` or contain
/// `contains` (case-insensitive).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeaderMatch {
    pub name: String,
    #[serde(default)]
    pub equals: Option<String>,
    #[serde(default)]
    pub contains: Option<String>,
}

/// One rule as written in the configuration.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Shown in the verdict's reason (`rule=acme-credits`) and in logs.
    pub name: String,
    /// Any of these statuses (all when absent).
    #[serde(default)]
    pub status: Vec<u16>,
    #[serde(default)]
    pub json: Option<JsonMatch>,
    #[serde(default)]
    pub header: Option<HeaderMatch>,
    /// A phrase that must appear, as whole words, in the error message (case-insensitive).
    #[serde(default)]
    pub message: Option<String>,
    pub class: ErrorClass,
    /// What a `quota_exhausted` rule's stop covers: `account` (the default: a rule an operator
    /// writes for a quota answer is most often about the key's credit or plan) or `model`.
    /// Meaningless, and refused, on rules of any other class.
    #[serde(default)]
    pub scope: Option<Scope>,
}

impl Rule {
    /// Checks the rule's own consistency; returns the problem and the sub-field it concerns.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.name.trim().is_empty() {
            return Err(("name", "must not be empty".into()));
        }
        let conditions = [
            self.json.is_some(),
            self.header.is_some(),
            self.message.is_some(),
        ];
        if !conditions.contains(&true) && self.status.is_empty() {
            return Err((
                "",
                "needs at least one of status, json, header, message".into(),
            ));
        }
        if let Some(bad) = self.status.iter().find(|s| !(100..=599).contains(*s)) {
            return Err(("status", format!("{bad} is not an HTTP status")));
        }
        if let Some(json) = &self.json {
            if json.path.is_empty() || json.path.split('.').any(str::is_empty) {
                return Err((
                    "json.path",
                    format!("`{}` is not a dot-separated path", json.path),
                ));
            }
        }
        if let Some(header) = &self.header {
            if header.name.is_empty() {
                return Err(("header.name", "must not be empty".into()));
            }
        }
        if self
            .message
            .as_deref()
            .is_some_and(|m| normalize(m).is_empty())
        {
            return Err(("message", "must not be empty".into()));
        }
        if self.scope.is_some() && self.class != ErrorClass::QuotaExhausted {
            return Err((
                "scope",
                format!(
                    "only quota_exhausted rules have a scope (this rule's class is {})",
                    self.class.as_str()
                ),
            ));
        }
        Ok(())
    }

    fn matches(&self, answer: &Answer, evidence: &Evidence) -> bool {
        if !self.status.is_empty() && !self.status.contains(&answer.status) {
            return false;
        }
        if let Some(json) = &self.json {
            let found = evidence
                .json
                .as_ref()
                .and_then(|root| lookup(root, &json.path))
                .is_some_and(|v| value_text(v).eq_ignore_ascii_case(&json.equals));
            if !found {
                return false;
            }
        }
        if let Some(header) = &self.header {
            let Some(value) = answer.header(&header.name) else {
                return false;
            };
            let value = value.to_ascii_lowercase();
            if header
                .equals
                .as_ref()
                .is_some_and(|e| value != e.to_ascii_lowercase())
            {
                return false;
            }
            if header
                .contains
                .as_ref()
                .is_some_and(|c| !value.contains(&c.to_ascii_lowercase()))
            {
                return false;
            }
        }
        if let Some(message) = &self.message {
            let phrase = normalize(message);
            if !evidence
                .messages
                .iter()
                .any(|m| super::has_phrase(m, &phrase))
            {
                return false;
            }
        }
        true
    }
}

/// The operator's rules, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Rules(pub Vec<Rule>);

impl Rules {
    /// The first matching rule's class, reason and, for a quota rule, scope.
    pub(super) fn check(
        &self,
        answer: &Answer,
        evidence: &Evidence,
    ) -> Option<(ErrorClass, String, Option<Scope>)> {
        self.0
            .iter()
            .find(|rule| rule.matches(answer, evidence))
            .map(|rule| {
                let scope = (rule.class == ErrorClass::QuotaExhausted)
                    .then(|| rule.scope.unwrap_or(Scope::Account));
                (rule.class, format!("rule={}", rule.name), scope)
            })
    }
}

fn lookup<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(root, |value, key| match value {
        Value::Object(map) => map.get(key),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::classify_with;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn rules() -> Rules {
        serde_json::from_value(serde_json::json!([
            {"name": "acme-credits", "status": [402, 429],
             "json": {"path": "error.kind", "equals": "CREDITS_DEPLETED"}, "class": "quota_exhausted"},
            {"name": "acme-busy", "header": {"name": "x-acme-state", "equals": "busy"},
             "message": "try later", "class": "overloaded"},
            {"name": "first-detail", "json": {"path": "error.details.0.reason", "equals": "x"},
             "class": "timeout"}
        ]))
        .unwrap()
    }

    fn verdict(status: u16, headers: &[(&str, &str)], body: &str) -> (ErrorClass, String) {
        let answer = Answer {
            status,
            headers,
            body: body.as_bytes(),
            code_details: None,
            now_unix_ms: 0,
        };
        let v = classify_with(&answer, &rules());
        (v.class, v.reason)
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn rules_come_before_built_in_knowledge() {
        let body = r#"{"error":{"kind":"credits_depleted","type":"rate_limit_error"}}"#;
        assert_eq!(
            verdict(429, &[], body),
            (ErrorClass::QuotaExhausted, "rule=acme-credits".into())
        );
        // Wrong status: the rule does not apply, the built-in code decides.
        assert_eq!(verdict(400, &[], body).0, ErrorClass::RateLimited);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn every_condition_must_hold() {
        let body = r#"{"message":"Busy, please try later."}"#;
        let busy = [("x-acme-state", "BUSY")];
        assert_eq!(verdict(400, &busy, body).1, "rule=acme-busy");
        assert_ne!(verdict(400, &[], body).1, "rule=acme-busy");
        let other = r#"{"message":"please try\u2019 again"}"#;
        assert_ne!(verdict(400, &busy, other).1, "rule=acme-busy");
        let detail = r#"{"error":{"details":[{"reason":"x"}]}}"#;
        assert_eq!(verdict(500, &[], detail).0, ErrorClass::Timeout);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn validation_names_the_problem() {
        let rule = |v: serde_json::Value| serde_json::from_value::<Rule>(v).unwrap().validate();
        assert!(rule(serde_json::json!({"name": "x", "class": "auth"})).is_err());
        assert_eq!(
            rule(serde_json::json!({"name": "x", "status": [99], "class": "auth"}))
                .unwrap_err()
                .0,
            "status"
        );
        assert_eq!(
            rule(serde_json::json!({"name": "x", "json": {"path": "a..b", "equals": "1"}, "class": "auth"}))
                .unwrap_err()
                .0,
            "json.path"
        );
        assert!(
            rule(serde_json::json!({"name": "x", "status": [520], "class": "overloaded"})).is_ok()
        );
        // A scope belongs to quota rules only, and is `account` or `model`.
        assert!(rule(
            serde_json::json!({"name": "x", "status": [402], "class": "quota_exhausted", "scope": "model"})
        )
        .is_ok());
        assert_eq!(
            rule(serde_json::json!({"name": "x", "status": [429], "class": "rate_limited", "scope": "account"}))
                .unwrap_err()
                .0,
            "scope"
        );
        let bad = serde_json::from_value::<Rule>(
            serde_json::json!({"name": "x", "status": [402], "class": "quota_exhausted", "scope": "key"}),
        );
        assert!(bad
            .unwrap_err()
            .to_string()
            .contains("unknown variant `key`"));
    }
}
