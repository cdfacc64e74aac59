//! Per-model and per-account response scripts: parsing from JSON and step
//! consumption.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use crate::encoding::Encoding;
use crate::preset;

/// Script key that applies to models (or accounts) without a script of
/// their own.
pub const WILDCARD: &str = "*";

/// When to abort the connection with a TCP RST.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResetMode {
    /// Read the request, then reset without answering.
    BeforeHeaders,
    /// Send the status line, headers and the first body chunk, then reset.
    AfterHeaders,
    /// Send the status line, headers and `reset_after_chunks` chunks (stream
    /// frames, or 64-byte pieces of a plain body), then reset.
    MidBody,
}

/// A step's `compress` field: forces the response's content coding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepCompress {
    Gzip,
    Deflate,
    /// Never compress this step's answer.
    None,
}

impl StepCompress {
    pub fn encoding(self) -> Option<Encoding> {
        match self {
            StepCompress::Gzip => Some(Encoding::Gzip),
            StepCompress::Deflate => Some(Encoding::Deflate),
            StepCompress::None => None,
        }
    }
}

/// A step's `stream_error`: cut a generated 200 stream after `after`
/// content chunks with an error event in the endpoint family's form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamError {
    pub after: usize,
    /// The error object (serialized JSON) placed under `error`; None means
    /// the family's usual overload error.
    pub error: Option<Vec<u8>>,
}

/// What to do for one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Step {
    pub status: Option<u16>,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    pub sse: Option<Vec<String>>,
    pub delay_ms: u64,
    pub ttft_ms: u64,
    pub chunk_delay_ms: u64,
    pub chunks: Option<usize>,
    pub reset: Option<ResetMode>,
    /// For [`ResetMode::MidBody`]: chunks sent before the reset.
    pub reset_after_chunks: usize,
    pub close: bool,
    pub compress: Option<StepCompress>,
    pub stream_error: Option<StreamError>,
    /// Prompt tokens the answer's `usage` reports as read from the provider's cache.
    pub cached_tokens: u64,
}

impl Step {
    /// True when the step's own headers name `name` (case-insensitive).
    pub fn has_header(&self, name: &str) -> bool {
        self.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    /// The step's `content-type` header, if any.
    pub fn content_type(&self) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StreamErrorSpec {
    after: Option<usize>,
    preset: Option<String>,
    payload: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepSpec {
    preset: Option<String>,
    status: Option<u16>,
    headers: Option<serde_json::Map<String, Value>>,
    body: Option<Value>,
    sse: Option<Vec<String>>,
    delay_ms: Option<u64>,
    ttft_ms: Option<u64>,
    chunk_delay_ms: Option<u64>,
    chunks: Option<usize>,
    reset: Option<ResetMode>,
    reset_after_chunks: Option<usize>,
    close: Option<bool>,
    compress: Option<StepCompress>,
    stream_error: Option<StreamErrorSpec>,
    cached_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptSpec {
    model: Option<String>,
    account: Option<String>,
    #[serde(default)]
    steps: Vec<StepSpec>,
    #[serde(default)]
    default: Option<StepSpec>,
    #[serde(default)]
    path_prefix: Option<String>,
}

/// What a script is keyed by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ScriptKey {
    /// A model name (or [`WILDCARD`]).
    Model(String),
    /// A credential (or [`WILDCARD`]), see [`crate::http::account`].
    Account(String),
}

impl ScriptKey {
    /// How records name the script: the model (or `*`), or
    /// `account:<key>` (or `account:*`).
    pub fn label(&self) -> String {
        match self {
            ScriptKey::Model(m) => m.clone(),
            ScriptKey::Account(a) => format!("account:{a}"),
        }
    }

    fn describe(&self) -> String {
        match self {
            ScriptKey::Model(m) => format!("model {m:?}"),
            ScriptKey::Account(a) => format!("account {a:?}"),
        }
    }
}

/// A validated script for one model or account (or [`WILDCARD`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    pub key: ScriptKey,
    pub steps: Vec<Arc<Step>>,
    pub default: Option<Arc<Step>>,
    pub path_prefix: Option<String>,
}

fn valid_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn find_preset(name: &str) -> Result<&'static preset::Preset, String> {
    preset::find(name)
        .ok_or_else(|| format!("unknown preset {name:?} (known: {})", preset::names()))
}

/// The `error` object of a preset's body, serialized.
fn preset_error_object(p: &preset::Preset) -> Result<Vec<u8>, String> {
    p.error_object()
        .map(String::into_bytes)
        .ok_or_else(|| format!("preset {:?} has no error object", p.name))
}

impl StreamErrorSpec {
    fn validate(self) -> Result<StreamError, String> {
        let error = match (self.preset, self.payload) {
            (Some(_), Some(_)) => {
                return Err("stream_error takes preset or payload, not both".to_string())
            }
            (Some(name), None) => Some(preset_error_object(find_preset(&name)?)?),
            (None, Some(payload)) => Some(payload.to_string().into_bytes()),
            (None, None) => None,
        };
        Ok(StreamError {
            after: self.after.unwrap_or(0),
            error,
        })
    }
}

impl StepSpec {
    fn validate(self) -> Result<Step, String> {
        let preset = self.preset.as_deref().map(find_preset).transpose()?;
        let status = self.status.or(preset.map(|p| p.status));
        if let Some(status) = status {
            if !(200..=999).contains(&status) {
                return Err(format!("status {status} out of range 200..=999"));
            }
        }
        let mut headers: Vec<(String, String)> = preset
            .map(|p| {
                p.headers
                    .iter()
                    .map(|(n, v)| (n.to_string(), v.to_string()))
                    .collect()
            })
            .unwrap_or_default();
        for (name, value) in self.headers.unwrap_or_default() {
            if !valid_header_name(&name) {
                return Err(format!("invalid header name {name:?}"));
            }
            let value = match value {
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                other => {
                    return Err(format!(
                        "header {name:?}: value must be a string, not {other}"
                    ))
                }
            };
            if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
                return Err(format!("header {name:?}: value contains CR, LF or NUL"));
            }
            // A step header replaces a preset header of the same name.
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
            headers.push((name, value));
        }
        let body = match self.body {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.into_bytes()),
            Some(other) => Some(other.to_string().into_bytes()),
        };
        if body.is_some() && self.sse.is_some() {
            return Err("a step cannot have both body and sse".to_string());
        }
        // The preset's body unless the step brings its own body or sse.
        let body = match (body, &self.sse, preset) {
            (Some(body), _, _) => Some(body),
            (None, None, Some(p)) => Some(p.body.as_bytes().to_vec()),
            (None, _, _) => None,
        };
        let stream_error = self
            .stream_error
            .map(StreamErrorSpec::validate)
            .transpose()?;
        if stream_error.is_some() {
            if body.is_some() || self.sse.is_some() {
                return Err(
                    "stream_error needs a generated stream (no body, sse or preset)".to_string(),
                );
            }
            if status.is_some_and(|s| s >= 400) {
                return Err("stream_error needs a 2xx answer".to_string());
            }
        }
        let reset_after_chunks = match (self.reset, self.reset_after_chunks) {
            (Some(ResetMode::MidBody), n) => n.unwrap_or(1),
            (_, Some(_)) => {
                return Err("reset_after_chunks needs \"reset\": \"mid_body\"".to_string())
            }
            (_, None) => 0,
        };
        Ok(Step {
            status,
            headers,
            body,
            sse: self.sse,
            delay_ms: self.delay_ms.unwrap_or(0),
            ttft_ms: self.ttft_ms.unwrap_or(0),
            chunk_delay_ms: self.chunk_delay_ms.unwrap_or(0),
            chunks: self.chunks,
            reset: self.reset,
            reset_after_chunks,
            close: self.close.unwrap_or(false),
            compress: self.compress,
            stream_error,
            cached_tokens: self.cached_tokens.unwrap_or(0),
        })
    }
}

impl ScriptSpec {
    fn validate(self) -> Result<Script, String> {
        let key = match (self.model, self.account) {
            (Some(model), None) => ScriptKey::Model(model),
            (None, Some(account)) => ScriptKey::Account(account),
            (Some(_), Some(_)) => return Err("a script has model or account, not both".to_string()),
            (None, None) => return Err("a script needs model or account".to_string()),
        };
        let steps = self
            .steps
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                s.validate()
                    .map(Arc::new)
                    .map_err(|e| format!("{} step {i}: {e}", key.describe()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let default = match self.default {
            Some(s) => Some(Arc::new(
                s.validate()
                    .map_err(|e| format!("{} default: {e}", key.describe()))?,
            )),
            None => None,
        };
        Ok(Script {
            key,
            steps,
            default,
            path_prefix: self.path_prefix.filter(|p| !p.is_empty()),
        })
    }
}

/// Parses one script object.
pub fn parse_script(json: &[u8]) -> Result<Script, String> {
    let spec: ScriptSpec = serde_json::from_slice(json).map_err(|e| e.to_string())?;
    spec.validate()
}

/// Parses an array of script objects (bulk API and `--scenario` files).
pub fn parse_scripts(json: &[u8]) -> Result<Vec<Script>, String> {
    let specs: Vec<ScriptSpec> = serde_json::from_slice(json).map_err(|e| e.to_string())?;
    specs.into_iter().map(ScriptSpec::validate).collect()
}

/// The step chosen for a request.
#[derive(Debug, Clone)]
pub struct Selection {
    pub step: Arc<Step>,
    /// Index into `steps`, or None when the script's `default` was used.
    pub index: Option<usize>,
    /// Label of the script that matched (see [`ScriptKey::label`]).
    pub script: String,
}

#[derive(Debug)]
struct Entry {
    script: Script,
    label: String,
    next: usize,
}

impl Entry {
    fn matches(&self, path: &str) -> bool {
        self.script
            .path_prefix
            .as_deref()
            .is_none_or(|prefix| path.starts_with(prefix))
    }

    fn consume(&mut self) -> Option<Selection> {
        let (step, index) = match self.script.steps.get(self.next) {
            Some(step) => {
                let index = self.next;
                self.next += 1;
                (Arc::clone(step), Some(index))
            }
            None => (Arc::clone(self.script.default.as_ref()?), None),
        };
        Some(Selection {
            step,
            index,
            script: self.label.clone(),
        })
    }
}

/// Picks the script for `key` from `map`: its own when it exists and its
/// `path_prefix` (if any) matches, else the `*` script under the same rule,
/// and consumes its step. None when no script applies or the chosen one is
/// exhausted without a default.
fn select_in(map: &mut HashMap<String, Entry>, key: Option<&str>, path: &str) -> Option<Selection> {
    let own = key.filter(|k| map.get(*k).is_some_and(|e| e.matches(path)));
    let chosen = match own {
        Some(k) => k,
        None if map.get(WILDCARD).is_some_and(|e| e.matches(path)) => WILDCARD,
        None => return None,
    };
    map.get_mut(chosen).and_then(Entry::consume)
}

/// All installed scripts, keyed by model and by account.
#[derive(Debug, Default)]
pub struct ScriptBook {
    models: HashMap<String, Entry>,
    accounts: HashMap<String, Entry>,
}

impl ScriptBook {
    /// Installs `script`, replacing any script with the same key and
    /// restarting at its first step.
    pub fn install(&mut self, script: Script) {
        let label = script.key.label();
        let (map, key) = match &script.key {
            ScriptKey::Model(m) => (&mut self.models, m.clone()),
            ScriptKey::Account(a) => (&mut self.accounts, a.clone()),
        };
        map.insert(
            key,
            Entry {
                script,
                label,
                next: 0,
            },
        );
    }

    pub fn clear(&mut self) {
        self.models.clear();
        self.accounts.clear();
    }

    /// Chooses the step for a request to `path` with credential `account`
    /// for `model`, consuming it. Account scripts come first: the
    /// account's own script (or the `*` account script) shapes the response
    /// when it has a current step or default. Otherwise the model's own
    /// script is used when it exists and its `path_prefix` (if any) matches,
    /// else the `*` model script under the same rule. None means: answer
    /// with the normal generated response.
    pub fn select(&mut self, account: &str, model: Option<&str>, path: &str) -> Option<Selection> {
        if !self.accounts.is_empty() {
            if let Some(selection) = select_in(&mut self.accounts, Some(account), path) {
                return Some(selection);
            }
        }
        select_in(&mut self.models, model, path)
    }

    /// Model names that have scripts (without the wildcard).
    pub fn models(&self) -> impl Iterator<Item = &str> {
        self.models
            .keys()
            .map(String::as_str)
            .filter(|m| *m != WILDCARD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book(json: &str) -> ScriptBook {
        let mut book = ScriptBook::default();
        for s in parse_scripts(json.as_bytes()).unwrap() {
            book.install(s);
        }
        book
    }

    fn pick(
        book: &mut ScriptBook,
        model: &str,
        path: &str,
    ) -> Option<(Option<u16>, Option<usize>, String)> {
        book.select("-", Some(model), path)
            .map(|s| (s.step.status, s.index, s.script))
    }

    #[test]
    fn steps_are_consumed_in_order_then_default() {
        let mut b = book(
            r#"[{"model":"gpt-4o","steps":[{"status":429},{"status":503}],"default":{"status":201}}]"#,
        );
        let p = "/v1/chat/completions";
        assert_eq!(
            pick(&mut b, "gpt-4o", p),
            Some((Some(429), Some(0), "gpt-4o".into()))
        );
        assert_eq!(
            pick(&mut b, "gpt-4o", p),
            Some((Some(503), Some(1), "gpt-4o".into()))
        );
        assert_eq!(
            pick(&mut b, "gpt-4o", p),
            Some((Some(201), None, "gpt-4o".into()))
        );
        assert_eq!(
            pick(&mut b, "gpt-4o", p),
            Some((Some(201), None, "gpt-4o".into()))
        );
        assert_eq!(pick(&mut b, "other", p), None);
    }

    #[test]
    fn exhausted_without_default_is_normal_and_does_not_fall_to_wildcard() {
        let mut b = book(
            r#"[{"model":"a","steps":[{"status":500}]},{"model":"*","steps":[],"default":{"status":502}}]"#,
        );
        assert_eq!(pick(&mut b, "a", "/x").map(|s| s.0), Some(Some(500)));
        assert_eq!(pick(&mut b, "a", "/x"), None);
        assert_eq!(pick(&mut b, "b", "/x").map(|s| s.0), Some(Some(502)));
        assert_eq!(
            b.select("-", None, "/x").map(|s| s.script),
            Some("*".to_string())
        );
    }

    #[test]
    fn wildcard_and_path_prefix() {
        let mut b = book(
            r#"[{"model":"*","steps":[{"status":429},{"status":529}]},
                {"model":"claude","path_prefix":"/v1/messages","steps":[{"status":503}]}]"#,
        );
        // claude's script does not match this path: the wildcard applies.
        assert_eq!(
            pick(&mut b, "claude", "/v1/chat/completions").map(|s| s.0),
            Some(Some(429))
        );
        assert_eq!(
            pick(&mut b, "claude", "/v1/messages").map(|s| s.0),
            Some(Some(503))
        );
        assert_eq!(
            pick(&mut b, "x", "/v1/messages").map(|s| s.0),
            Some(Some(529))
        );
        assert_eq!(pick(&mut b, "x", "/v1/messages"), None);
    }

    #[test]
    fn reinstall_replaces_and_restarts() {
        let mut b = book(r#"[{"model":"m","steps":[{"status":500},{"status":501}]}]"#);
        assert_eq!(pick(&mut b, "m", "/").map(|s| s.0), Some(Some(500)));
        b.install(parse_script(br#"{"model":"m","steps":[{"status":502}]}"#).unwrap());
        assert_eq!(pick(&mut b, "m", "/").map(|s| s.0), Some(Some(502)));
        assert_eq!(pick(&mut b, "m", "/"), None);
        assert_eq!(b.models().collect::<Vec<_>>(), vec!["m"]);
        b.clear();
        assert_eq!(b.models().count(), 0);
    }

    #[test]
    fn step_fields_parse() {
        let s = parse_script(
            br#"{"model":"m","steps":[
                {"status":429,"headers":{"retry-after":3,"x-a":"b"},"body":{"error":{"message":"slow down"}},
                 "delay_ms":5,"close":true},
                {"sse":["data: 1\n\n","data: 2\n\n"],"chunk_delay_ms":10,"reset":"after_headers"},
                {"body":"raw text","reset":"before_headers","chunks":7}]}"#,
        )
        .unwrap();
        let a = &s.steps[0];
        assert_eq!(a.status, Some(429));
        assert_eq!(
            a.headers,
            vec![
                ("retry-after".into(), "3".into()),
                ("x-a".into(), "b".into())
            ]
        );
        assert_eq!(
            a.body.as_deref(),
            Some(&br#"{"error":{"message":"slow down"}}"#[..])
        );
        assert_eq!(a.delay_ms, 5);
        assert!(a.close);
        let b = &s.steps[1];
        assert_eq!(b.sse.as_ref().map(Vec::len), Some(2));
        assert_eq!(b.chunk_delay_ms, 10);
        assert_eq!(b.reset, Some(ResetMode::AfterHeaders));
        let c = &s.steps[2];
        assert_eq!(c.body.as_deref(), Some(&b"raw text"[..]));
        assert_eq!(c.reset, Some(ResetMode::BeforeHeaders));
        assert_eq!(c.chunks, Some(7));
    }

    #[test]
    fn account_scripts_come_first_then_models() {
        let mut b = book(
            r#"[{"account":"sk-a","steps":[{"status":429},{"status":402}]},
                {"account":"*","path_prefix":"/v1/messages","steps":[{"status":529}]},
                {"model":"gpt-4o","default":{"status":503}}]"#,
        );
        let sel = |b: &mut ScriptBook, account: &str, model: &str, path: &str| {
            b.select(account, Some(model), path)
                .map(|s| (s.step.status, s.script))
        };
        let chat = "/v1/chat/completions";
        // The account's steps apply whatever the model, and are shared.
        assert_eq!(
            sel(&mut b, "sk-a", "gpt-4o", chat),
            Some((Some(429), "account:sk-a".into()))
        );
        assert_eq!(
            sel(&mut b, "sk-a", "other", chat),
            Some((Some(402), "account:sk-a".into()))
        );
        // Exhausted without a default: the model script applies again.
        assert_eq!(
            sel(&mut b, "sk-a", "gpt-4o", chat),
            Some((Some(503), "gpt-4o".into()))
        );
        assert_eq!(sel(&mut b, "sk-a", "other", chat), None);
        // Another key: the account wildcard (only on its path), then models.
        assert_eq!(
            sel(&mut b, "sk-b", "other", "/v1/messages"),
            Some((Some(529), "account:*".into()))
        );
        assert_eq!(sel(&mut b, "sk-b", "other", "/v1/messages"), None);
        assert_eq!(
            sel(&mut b, "sk-b", "gpt-4o", chat),
            Some((Some(503), "gpt-4o".into()))
        );
        // Account scripts are not models.
        assert_eq!(b.models().collect::<Vec<_>>(), vec!["gpt-4o"]);
    }

    #[test]
    fn presets_fill_status_headers_body_and_step_fields_override() {
        let s = parse_script(
            br#"{"model":"m","steps":[
                {"preset":"openai_rate_limit"},
                {"preset":"openai_rate_limit","status":503,"headers":{"Retry-After":"9","x-extra":"1"}},
                {"preset":"anthropic_overloaded","body":"custom"},
                {"preset":"openai_insufficient_quota","sse":["data: x\n\n"]}]}"#,
        )
        .unwrap();
        let a = &s.steps[0];
        assert_eq!(a.status, Some(429));
        assert!(a.headers.contains(&("retry-after".into(), "1".into())));
        assert!(a.has_header("x-ratelimit-remaining-tokens"));
        let body = String::from_utf8(a.body.clone().unwrap()).unwrap();
        assert!(body.contains("Please try again in 1s"), "{body}");
        let b = &s.steps[1];
        assert_eq!(b.status, Some(503));
        let retry: Vec<_> = b
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("retry-after"))
            .collect();
        assert_eq!(retry, vec![&("Retry-After".to_string(), "9".to_string())]);
        assert!(b.has_header("x-extra") && b.has_header("x-ratelimit-limit-tokens"));
        assert_eq!(b.body, a.body);
        let c = &s.steps[2];
        assert_eq!(
            (c.status, c.body.as_deref()),
            (Some(529), Some(&b"custom"[..]))
        );
        let d = &s.steps[3];
        assert_eq!(
            (d.status, d.body.is_none(), d.sse.is_some()),
            (Some(429), true, true)
        );
    }

    #[test]
    fn stream_fields_parse() {
        let s = parse_script(
            br#"{"account":"k","steps":[
                {"stream_error":{"after":2,"preset":"anthropic_overloaded"},"ttft_ms":300},
                {"stream_error":{"payload":{"message":"boom"}}},
                {"stream_error":{}},
                {"reset":"mid_body","reset_after_chunks":3,"compress":"gzip"},
                {"reset":"mid_body","compress":"none"}]}"#,
        )
        .unwrap();
        assert_eq!(s.key, ScriptKey::Account("k".into()));
        let a = &s.steps[0];
        assert_eq!(a.ttft_ms, 300);
        let err = a.stream_error.as_ref().unwrap();
        assert_eq!(err.after, 2);
        let obj: Value = serde_json::from_slice(err.error.as_ref().unwrap()).unwrap();
        assert_eq!(obj["type"], "overloaded_error");
        assert_eq!(obj["message"], "Overloaded");
        let b = s.steps[1].stream_error.as_ref().unwrap();
        assert_eq!(b.error.as_deref(), Some(&br#"{"message":"boom"}"#[..]));
        assert_eq!(
            s.steps[2].stream_error,
            Some(StreamError {
                after: 0,
                error: None
            })
        );
        let d = &s.steps[3];
        assert_eq!(
            (d.reset, d.reset_after_chunks),
            (Some(ResetMode::MidBody), 3)
        );
        assert_eq!(d.compress, Some(StepCompress::Gzip));
        let e = &s.steps[4];
        assert_eq!(e.reset_after_chunks, 1);
        assert_eq!(e.compress, Some(StepCompress::None));
    }

    #[test]
    fn invalid_scripts_are_rejected() {
        let bad = [
            r#"{"steps":[]}"#,
            r#"{"model":"m","steps":[{"stauts":429}]}"#,
            r#"{"model":"m","steps":[{"status":99}]}"#,
            r#"{"model":"m","steps":[{"reset":"sometimes"}]}"#,
            r#"{"model":"m","steps":[{"headers":{"bad name":"x"}}]}"#,
            r#"{"model":"m","steps":[{"headers":{"x":"a\r\nb"}}]}"#,
            r#"{"model":"m","steps":[{"body":"x","sse":["y"]}]}"#,
            r#"{"model":"m","default":{"status":"429"}}"#,
            r#"not json"#,
            r#"{"model":"m","account":"k","steps":[]}"#,
            r#"{"model":"m","steps":[{"preset":"no_such_preset"}]}"#,
            r#"{"model":"m","steps":[{"compress":"brotli"}]}"#,
            r#"{"model":"m","steps":[{"reset_after_chunks":2}]}"#,
            r#"{"model":"m","steps":[{"reset":"after_headers","reset_after_chunks":2}]}"#,
            r#"{"model":"m","steps":[{"stream_error":{"after":1,"preset":"capacity","payload":{}}}]}"#,
            r#"{"model":"m","steps":[{"stream_error":{"preset":"nope"}}]}"#,
            r#"{"model":"m","steps":[{"stream_error":{"after":-1}}]}"#,
            r#"{"model":"m","steps":[{"stream_error":{"aftr":1}}]}"#,
            r#"{"model":"m","steps":[{"stream_error":{},"status":429}]}"#,
            r#"{"model":"m","steps":[{"stream_error":{},"preset":"capacity"}]}"#,
            r#"{"model":"m","steps":[{"stream_error":{},"sse":["x"]}]}"#,
            r#"{"model":"m","steps":[{"ttft_ms":"slow"}]}"#,
        ];
        for json in bad {
            assert!(parse_script(json.as_bytes()).is_err(), "{json}");
        }
    }
}
