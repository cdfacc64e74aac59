//! Per-model response scripts: parsing from JSON and step consumption.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

/// Model key that applies to models without a script of their own.
pub const WILDCARD: &str = "*";

/// When to abort the connection with a TCP RST.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResetMode {
    /// Read the request, then reset without answering.
    BeforeHeaders,
    /// Send the status line, headers and the first body chunk, then reset.
    AfterHeaders,
}

/// What to do for one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Step {
    pub status: Option<u16>,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    pub sse: Option<Vec<String>>,
    pub delay_ms: u64,
    pub chunk_delay_ms: u64,
    pub chunks: Option<usize>,
    pub reset: Option<ResetMode>,
    pub close: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepSpec {
    status: Option<u16>,
    headers: Option<serde_json::Map<String, Value>>,
    body: Option<Value>,
    sse: Option<Vec<String>>,
    delay_ms: Option<u64>,
    chunk_delay_ms: Option<u64>,
    chunks: Option<usize>,
    reset: Option<ResetMode>,
    close: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptSpec {
    model: String,
    #[serde(default)]
    steps: Vec<StepSpec>,
    #[serde(default)]
    default: Option<StepSpec>,
    #[serde(default)]
    path_prefix: Option<String>,
}

/// A validated script for one model (or [`WILDCARD`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    pub model: String,
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

impl StepSpec {
    fn validate(self) -> Result<Step, String> {
        if let Some(status) = self.status {
            if !(200..=999).contains(&status) {
                return Err(format!("status {status} out of range 200..=999"));
            }
        }
        let mut headers = Vec::new();
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
        Ok(Step {
            status: self.status,
            headers,
            body,
            sse: self.sse,
            delay_ms: self.delay_ms.unwrap_or(0),
            chunk_delay_ms: self.chunk_delay_ms.unwrap_or(0),
            chunks: self.chunks,
            reset: self.reset,
            close: self.close.unwrap_or(false),
        })
    }
}

impl ScriptSpec {
    fn validate(self) -> Result<Script, String> {
        let model = self.model;
        let steps = self
            .steps
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                s.validate()
                    .map(Arc::new)
                    .map_err(|e| format!("model {model:?} step {i}: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let default = match self.default {
            Some(s) => Some(Arc::new(
                s.validate()
                    .map_err(|e| format!("model {model:?} default: {e}"))?,
            )),
            None => None,
        };
        Ok(Script {
            model,
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
    /// Key of the script that matched (a model name or `*`).
    pub script: String,
}

#[derive(Debug)]
struct Entry {
    script: Script,
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
            script: self.script.model.clone(),
        })
    }
}

/// All installed scripts, keyed by model.
#[derive(Debug, Default)]
pub struct ScriptBook {
    scripts: HashMap<String, Entry>,
}

impl ScriptBook {
    /// Installs `script`, replacing any script for the same model and
    /// restarting at its first step.
    pub fn install(&mut self, script: Script) {
        self.scripts
            .insert(script.model.clone(), Entry { script, next: 0 });
    }

    pub fn clear(&mut self) {
        self.scripts.clear();
    }

    /// Chooses the step for a request to `path` for `model`, consuming it.
    /// The model's own script is used when it exists and its `path_prefix`
    /// (if any) matches; otherwise the `*` script under the same rule.
    /// None means: answer with the normal generated response.
    pub fn select(&mut self, model: Option<&str>, path: &str) -> Option<Selection> {
        if let Some(entry) = model
            .and_then(|m| self.scripts.get_mut(m))
            .filter(|e| e.matches(path))
        {
            return entry.consume();
        }
        self.scripts
            .get_mut(WILDCARD)
            .filter(|e| e.matches(path))
            .and_then(Entry::consume)
    }

    /// Model names that have scripts (without the wildcard).
    pub fn models(&self) -> impl Iterator<Item = &str> {
        self.scripts
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
        book.select(Some(model), path)
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
            b.select(None, "/x").map(|s| s.script),
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
        ];
        for json in bad {
            assert!(parse_script(json.as_bytes()).is_err(), "{json}");
        }
    }
}
