//! The request log: a ring buffer of the most recent requests plus counters.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::encoding::Encoding;
use crate::http::AccountAt;

/// How a request was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// Normal generated response (no script step applied).
    Ok,
    /// A script step (or a script's default) shaped the response.
    Scripted,
    ResetBeforeHeaders,
    ResetAfterHeaders,
    ResetMidBody,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Scripted => "scripted",
            Outcome::ResetBeforeHeaders => "reset_before_headers",
            Outcome::ResetAfterHeaders => "reset_after_headers",
            Outcome::ResetMidBody => "reset_mid_body",
        }
    }
}

/// One recorded request.
#[derive(Debug, Clone)]
pub struct Record {
    pub seq: u64,
    pub t_ms: u64,
    pub method: String,
    /// Request target: path plus query.
    pub path: String,
    /// Lowercase names in arrival order (merged when serialized).
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub body_truncated: bool,
    pub body_len: usize,
    pub model: Option<String>,
    pub stream: bool,
    pub step: Option<usize>,
    pub script: Option<String>,
    pub outcome: Outcome,
    /// The request's credential, as offsets into `headers` / `path`.
    pub account: AccountAt,
    /// The content coding of the response body, if any.
    pub response_encoding: Option<Encoding>,
}

impl Record {
    /// The request's account (`-` without a credential).
    pub fn account(&self) -> &str {
        self.account.resolve(&self.headers, &self.path)
    }
}

/// Converts a request body for the record: truncated to `limit` bytes, then
/// decoded as lossy UTF-8. Reuses the allocation when possible.
pub fn record_body(mut body: Vec<u8>, limit: usize) -> (String, bool, usize) {
    let len = body.len();
    let truncated = len > limit;
    if truncated {
        body.truncate(limit);
    }
    let text = match String::from_utf8(body) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    (text, truncated, len)
}

/// Serializes headers as an object; repeated names are joined with ", ".
struct HeaderMap<'a>(&'a [(String, String)]);

impl Serialize for HeaderMap<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut merged: Vec<(&str, String)> = Vec::with_capacity(self.0.len());
        for (name, value) in self.0 {
            match merged.iter_mut().find(|(n, _)| *n == name.as_str()) {
                Some((_, v)) => {
                    v.push_str(", ");
                    v.push_str(value);
                }
                None => merged.push((name.as_str(), value.clone())),
            }
        }
        let mut map = serializer.serialize_map(Some(merged.len()))?;
        for (name, value) in &merged {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl Serialize for Record {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(15))?;
        map.serialize_entry("seq", &self.seq)?;
        map.serialize_entry("t_ms", &self.t_ms)?;
        map.serialize_entry("method", &self.method)?;
        map.serialize_entry("path", &self.path)?;
        map.serialize_entry("headers", &HeaderMap(&self.headers))?;
        map.serialize_entry("body", &self.body)?;
        map.serialize_entry("body_truncated", &self.body_truncated)?;
        map.serialize_entry("body_len", &self.body_len)?;
        map.serialize_entry("model", &self.model)?;
        map.serialize_entry("stream", &self.stream)?;
        map.serialize_entry("step", &self.step)?;
        map.serialize_entry("script", &self.script)?;
        map.serialize_entry("outcome", self.outcome.as_str())?;
        map.serialize_entry("account", self.account())?;
        map.serialize_entry(
            "response_encoding",
            &self.response_encoding.map(Encoding::as_str),
        )?;
        map.end()
    }
}

/// Ring buffer of recent requests and running counters.
#[derive(Debug)]
pub struct Recorder {
    limit: usize,
    records: VecDeque<Arc<Record>>,
    last_seq: u64,
    by_model: BTreeMap<String, u64>,
    by_account: BTreeMap<String, u64>,
    by_outcome: BTreeMap<Outcome, u64>,
}

/// Adds one to `map[key]`, allocating the key only the first time.
fn count(map: &mut BTreeMap<String, u64>, key: &str) {
    match map.get_mut(key) {
        Some(n) => *n += 1,
        None => {
            map.insert(key.to_string(), 1);
        }
    }
}

impl Recorder {
    pub fn new(limit: usize) -> Self {
        Recorder {
            limit,
            records: VecDeque::with_capacity(limit.min(4096)),
            last_seq: 0,
            by_model: BTreeMap::new(),
            by_account: BTreeMap::new(),
            by_outcome: BTreeMap::new(),
        }
    }

    /// Assigns the next sequence number (starting at 1) to `record`, stores
    /// it (evicting the oldest beyond the limit) and counts it.
    pub fn push(&mut self, mut record: Record) -> u64 {
        self.last_seq += 1;
        record.seq = self.last_seq;
        if let Some(model) = &record.model {
            count(&mut self.by_model, model);
        }
        count(&mut self.by_account, record.account());
        *self.by_outcome.entry(record.outcome).or_insert(0) += 1;
        if self.limit > 0 {
            if self.records.len() >= self.limit {
                self.records.pop_front();
            }
            self.records.push_back(Arc::new(record));
        }
        self.last_seq
    }

    /// Records with `seq > since`, oldest first.
    pub fn since(&self, since: u64) -> Vec<Arc<Record>> {
        let start = self.records.partition_point(|r| r.seq <= since);
        self.records.range(start..).cloned().collect()
    }

    /// The `/_mock/stats` document.
    pub fn stats(&self) -> serde_json::Value {
        let by_outcome: serde_json::Map<String, serde_json::Value> = self
            .by_outcome
            .iter()
            .map(|(o, n)| (o.as_str().to_string(), (*n).into()))
            .collect();
        serde_json::json!({
            "requests": self.last_seq,
            "recorded": self.records.len(),
            "by_model": self.by_model,
            "by_account": self.by_account,
            "by_outcome": by_outcome,
        })
    }

    /// Forgets all records and counters; sequence numbers restart at 1.
    pub fn clear(&mut self) {
        self.records.clear();
        self.last_seq = 0;
        self.by_model.clear();
        self.by_account.clear();
        self.by_outcome.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(model: Option<&str>, outcome: Outcome) -> Record {
        Record {
            seq: 0,
            t_ms: 1,
            method: "POST".into(),
            path: "/v1/chat/completions?x=1".into(),
            headers: vec![
                ("x-a".into(), "1".into()),
                ("host".into(), "h".into()),
                ("x-a".into(), "2".into()),
            ],
            body: "{}".into(),
            body_truncated: false,
            body_len: 2,
            model: model.map(str::to_string),
            stream: false,
            step: Some(0),
            script: model.map(str::to_string),
            outcome,
            account: AccountAt::Header {
                index: 1,
                start: 0,
                end: 1,
            },
            response_encoding: None,
        }
    }

    #[test]
    fn ring_buffer_keeps_most_recent() {
        let mut r = Recorder::new(3);
        for _ in 0..5 {
            r.push(rec(Some("m"), Outcome::Ok));
        }
        let seqs: Vec<u64> = r.since(0).iter().map(|x| x.seq).collect();
        assert_eq!(seqs, vec![3, 4, 5]);
        let seqs: Vec<u64> = r.since(4).iter().map(|x| x.seq).collect();
        assert_eq!(seqs, vec![5]);
        assert!(r.since(5).is_empty());
        let stats = r.stats();
        assert_eq!(stats["requests"], 5);
        assert_eq!(stats["recorded"], 3);
        assert_eq!(stats["by_model"]["m"], 5);
        assert_eq!(stats["by_account"]["h"], 5);
        r.clear();
        assert_eq!(r.push(rec(None, Outcome::Scripted)), 1);
        assert_eq!(r.stats()["by_outcome"]["scripted"], 1);
    }

    #[test]
    fn zero_limit_counts_but_keeps_nothing() {
        let mut r = Recorder::new(0);
        r.push(rec(Some("m"), Outcome::Ok));
        assert!(r.since(0).is_empty());
        assert_eq!(r.stats()["requests"], 1);
    }

    #[test]
    fn serialization_merges_headers() {
        let mut r = Recorder::new(10);
        r.push(rec(Some("m"), Outcome::ResetAfterHeaders));
        let v = serde_json::to_value(&*r.since(0)[0]).unwrap();
        assert_eq!(v["headers"]["x-a"], "1, 2");
        assert_eq!(v["headers"]["host"], "h");
        assert_eq!(v["seq"], 1);
        assert_eq!(v["outcome"], "reset_after_headers");
        assert_eq!(v["model"], "m");
        assert_eq!(v["step"], 0);
        assert_eq!(v["path"], "/v1/chat/completions?x=1");
        assert_eq!(v["account"], "h");
        assert_eq!(v["response_encoding"], serde_json::Value::Null);
        let mut gz = rec(None, Outcome::Ok);
        gz.account = AccountAt::None;
        gz.response_encoding = Some(Encoding::Gzip);
        r.push(gz);
        let v = serde_json::to_value(&*r.since(1)[0]).unwrap();
        assert_eq!(
            (v["account"].as_str(), v["response_encoding"].as_str()),
            (Some("-"), Some("gzip"))
        );
        assert_eq!(r.stats()["by_account"]["-"], 1);
    }

    #[test]
    fn body_truncation() {
        assert_eq!(
            record_body(b"hello".to_vec(), 10),
            ("hello".into(), false, 5)
        );
        assert_eq!(record_body(b"hello".to_vec(), 3), ("hel".into(), true, 5));
        let (s, t, n) = record_body(vec![b'a', 0xff, b'b'], 10);
        assert_eq!((s.as_str(), t, n), ("a\u{fffd}b", false, 3));
    }
}
