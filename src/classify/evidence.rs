//! What an error body says, pulled out of whatever shape it came in.
//!
//! Provider error bodies are JSON objects (`{"error": {...}}`, `{"type": "error", ...}`, Tencent's
//! `{"Response": {"Error": ...}}`, Baidu's `{"error_code": 17, ...}`), JSON arrays wrapping one of
//! those (Gemini, Vertex), bare JSON strings, SSE frames, HTML pages or plain text. This module
//! turns any of them into [`Evidence`]: the machine-readable codes (with where they came from),
//! the human-readable messages, and the parsed JSON for wait hints. The classifier decides on
//! evidence, never on a raw substring of the body.
//!
//! The filter reads at most `classifier.max_body_bytes` of a body, so a long JSON body arrives
//! cut off anywhere: in a key, inside a huge message or `param` string, between two fields.
//! Such a body is read up to the cut ([`prefix`]): every key/value pair that arrived whole
//! counts, a message cut in the middle keeps its whole words, a code, number or key cut in the
//! middle is dropped (a cut `not_found_error` must not read as `not_found`). Linear in the
//! body; at most `MAX_ITEMS` codes, messages and quota ids are kept.

use super::concepts;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// Longest message kept (bytes); error messages are short, HTML pages are not.
const MAX_MESSAGE: usize = 2048;
/// How deep provider envelopes are followed (OpenRouter's `metadata.raw` holds another body).
const MAX_NESTING: usize = 2;
/// At most this many codes, messages and quota ids are kept: real error bodies carry a handful,
/// and a body with thousands of `details[]` must not cost thousands of comparisons each.
const MAX_ITEMS: usize = 32;

/// A machine-readable code found in the body or headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Code {
    /// Where it was found, for the verdict's reason (`error.type`, `x-amzn-errortype`, ...).
    pub field: &'static str,
    /// The code, lowercased.
    pub value: String,
}

/// Longest body read as a one-line plain-text soft error: a completion is never one short
/// line of plain text, but a relay's error page of a paragraph might be a real text answer.
const PLAIN_LINE_MAX: usize = 256;

/// Everything the classifier looks at in a body.
#[derive(Debug, Default, Clone)]
pub struct Evidence {
    pub codes: Vec<Code>,
    /// Messages, normalized with [`normalize`].
    pub messages: Vec<String>,
    /// Google `QuotaFailure.violations[].quotaId` values (and quota metric names), lowercased.
    pub quota_ids: Vec<String>,
    /// The parsed JSON body (the first element of an array envelope; of a cut body, what
    /// arrived whole), for wait hints and operator rules.
    pub json: Option<Value>,
    /// Whether the body has an error envelope at all (matters for 2xx answers).
    pub has_error_envelope: bool,
    /// Whether a Google `QuotaFailure` violation names the model it counts for
    /// (`quotaDimensions.model`).
    pub quota_per_model: bool,
    /// Whether a Google quota the answer names grants nothing (`"quota_limit_value": "0"`,
    /// `"quotaValue": "0"`): no wait helps until the plan changes.
    pub quota_granted_none: bool,
    /// Whether (some of) the body was JSON cut off before its end and read up to the cut.
    pub truncated: bool,
    /// The HTTP status an envelope states for the error it carries (`"code": 429` inside a 200
    /// from a relay, `Error from provider(429): {...}` inside a gateway's 500): the innermost
    /// one, a weak prior like the answer's own status.
    pub inner_status: Option<u16>,
    /// Whether the whole body is one short line of plain text (no JSON, stream or page): what
    /// a relay sends as a "200 OK but actually an error" ("当前模型负载过高，请稍后再试").
    pub plain_line: bool,
    /// Whether the body is an HTML page: a web server's or a proxy's, never a model's.
    pub html_page: bool,
    /// The text of a chat completion's first choice (raw, when short): what a gateway that
    /// blocks a request as a completion ("Request contains forbidden content") says, read only
    /// under an error status (`classify::evidence_of`).
    pub completion: Option<String>,
    /// A gateway wrote the completion, not a model: it counts no tokens (`usage` all zero: a
    /// model that read a prompt counts it), or it has neither an `id` (an empty one is none) nor
    /// `usage` (APISIX blocks with a 200 completion by default; every model server's
    /// completion has an `id`).
    pub unsigned_completion: bool,
    /// The body says it failed (`"status": false`, `"success": false`) but holds no message
    /// under a key any reader knows.
    pub said_failed: bool,
}

impl Evidence {
    /// Reads a body of any shape.
    pub fn from_body(body: &[u8]) -> Self {
        let mut evidence = Evidence::default();
        evidence.read_body(body, 0);
        evidence
    }

    fn read_body(&mut self, body: &[u8], depth: usize) {
        // Valid UTF-8 (nearly every body) is checked by the fast validator, not copied.
        let text = match std::str::from_utf8(body) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(body),
        };
        let trimmed = text.trim_start_matches('\u{feff}').trim();
        if trimmed.is_empty() {
            return;
        }
        match serde_json::from_str::<Value>(trimmed) {
            Ok(value) => {
                self.read_whole_json(value, depth);
                return;
            }
            // One JSON object and a few stray bytes after it (a terminal's `%`, a proxy's
            // leftover `0` of a chunked body): the object is the answer.
            Err(e) if e.is_syntax() && trimmed.starts_with('{') => {
                let mut values = serde_json::Deserializer::from_str(trimmed).into_iter::<Value>();
                if let Some(Ok(value @ Value::Object(_))) = values.next() {
                    let rest = trimmed.get(values.byte_offset()..).unwrap_or_default();
                    if rest.trim().len() <= STRAY_BYTES && !rest.contains(['{', '[']) {
                        self.read_whole_json(value, depth);
                        return;
                    }
                }
            }
            // Valid JSON up to where the text ends: a body cut at the inspection cap.
            Err(e) if e.is_eof() => {
                if let Some(value) = prefix::parse(trimmed) {
                    self.truncated = true;
                    self.read_whole_json(value, depth);
                    return;
                }
            }
            Err(_) => {}
        }
        if looks_like_sse(trimmed) {
            self.read_sse(trimmed, depth);
            return;
        }
        if looks_like_ndjson(trimmed) {
            // Ollama streams NDJSON; an error arrives as its last line.
            // Bedrock's stream exceptions and stops as a relay writes them
            // (`{"throttlingException": {...}}`, `{"messageStop": {"stopReason": ...}}`), Cohere's
            // `stream-end`: the last line that holds one.
            if let Some(line) = trimmed
                .lines()
                .rev()
                .find(|l| STREAM_MARKERS.iter().any(|k| l.contains(k)))
            {
                self.read_body(line.as_bytes(), depth);
            }
            return;
        }
        // A SOAP fault or a gateway's XML error (`<faultcode>wsse:FailedAuthentication</faultcode>
        // <faultstring>...</faultstring>`, WSO2's `<amt:code>900800</amt:code>`): its codes
        // and words, as an error envelope's, before the text around them (which may carry
        // an upstream's JSON body, read below).
        if let Some(fault) = xml_fault(trimmed) {
            self.has_error_envelope = true;
            for code in fault.codes {
                self.push_code("fault.code", code);
            }
            for text in &fault.texts {
                self.push_message(text);
            }
        }
        // gRPC-Web's trailers written into the body (`grpc-status: 8\r\ngrpc-message:
        // ...`): the status's canonical name is the code, its message the words.
        if let Some((code, message)) = grpc_trailers(trimmed) {
            self.has_error_envelope = true;
            self.push_code("grpc-status", code.to_owned());
            if let Some(message) = message {
                self.push_message(&message);
            }
            return;
        }
        if let Some(texts) = html_texts(trimmed) {
            self.html_page = depth == 0;
            if texts.is_empty() {
                self.push_message("");
            }
            for text in &texts {
                self.push_message(text);
            }
            return;
        }
        self.plain_line = depth == 0 && trimmed.len() <= PLAIN_LINE_MAX && !trimmed.contains('\n');
        // An exception's text with the body it got (`anthropic.NotFoundError: Error code: 404 -
        // {'type': 'error', ...}`): the body's codes first, as in a message field.
        let text = without_stack_frames(trimmed);
        let words = if depth < MAX_NESTING {
            self.read_embedded(&text, depth)
        } else {
            Cow::Borrowed(text.as_ref())
        };
        self.push_message(&words);
    }

    /// Reads a body that is one JSON value and keeps it (its first element, for an array) as the
    /// answer's JSON, unless a reader kept a part of it first.
    fn read_whole_json(&mut self, value: Value, depth: usize) {
        let before = self.items_read();
        self.read_json(&value, depth);
        // .NET's and Go's serializers keep a type's field names by default (`{"Successful":
        // false, "Error": {"Code": "insufficient_quota", "Message": ...}}`): where nothing was
        // read, the body is read again with its names in camelCase.
        if self.items_read() == before && !self.has_error_envelope && has_pascal_keys(&value, 0) {
            self.read_json(&camel_case_keys(&value, 0), depth);
        }
        if self.json.is_none() {
            self.json = Some(first_element(value));
        }
    }

    /// The first event of a stream that carries an error (an `error` or `response.failed`
    /// event, a payload with a non-null `error`, a refusal). Payloads that only mention
    /// `"error": null` (OpenAI Responses' `response.created`) are passed over.
    fn read_sse(&mut self, text: &str, depth: usize) {
        let mut event_is_error = false;
        // Bedrock's stream exceptions name themselves as events (`event: throttlingException`).
        let mut exception: Option<&str> = None;
        let mut offset = 0;
        for raw in text.split('\n') {
            let line = raw.trim_end_matches('\r');
            let at = offset;
            offset += raw.len() + 1;
            let (payload, named_error, bare) = if let Some(name) = line.strip_prefix("event:") {
                let name = name.trim();
                exception = name.ends_with("Exception").then_some(name);
                event_is_error = exception.is_some() || matches!(name, "error" | "response.failed");
                continue;
            } else if let Some(data) = line.strip_prefix("data:") {
                if data.trim() == "{" {
                    // A gateway that pretty-prints its event's JSON after one `data:`.
                    let rest = text.get(at + "data:".len()..).unwrap_or_default();
                    (rest.trim(), event_is_error, true)
                } else {
                    (data.trim(), event_is_error, false)
                }
            } else if let Some(data) = line.strip_prefix("error:") {
                // llama.cpp's server once wrote its stream errors as `error: {...}` lines.
                (data.trim(), true, false)
            } else if line.trim_start().starts_with('{') {
                // Gemini has ended a stream with a bare, pretty-printed JSON error object.
                (text.get(at..).unwrap_or_default().trim(), false, true)
            } else {
                if line.is_empty() {
                    event_is_error = false;
                    exception = None;
                }
                continue;
            };
            // iFlytek's and relays' events carry a status code and its words beside the chunk
            // (`{"code": 10013, "message": "...", "choices": [...]}`; 0 is a success).
            let coded = payload.contains("\"code\"") && payload.contains("\"message\"");
            let worth_reading =
                named_error || coded || STREAM_MARKERS.iter().any(|k| payload.contains(k));
            if !worth_reading {
                continue;
            }
            let mut found = Evidence::default();
            if bare {
                // Only the object itself: the rest of the stream is not read again.
                let Some(object) = first_json_object(payload) else {
                    continue;
                };
                found.read_json(&object, depth);
                found.json = Some(object);
            } else {
                found.read_body(payload.as_bytes(), depth);
            }
            // A payload that mentions an error but is not JSON (one OpenAI stream has an
            // unbalanced `)`) counts as one too.
            if named_error || found.has_error_envelope || (!bare && found.json.is_none()) {
                // An error event in a shape no reader knows (Poe's `{"text": "You have run
                // out of daily points ...", "allow_retry": false}`): its sentences speak.
                if named_error && found.messages.is_empty() {
                    found.read_sentences();
                }
                found.has_error_envelope = true;
                if let Some(name) = exception {
                    found.push_code("exception", name.to_owned());
                }
                self.merge(found);
                return;
            }
        }
    }

    /// Adds what another reading found (within the item caps).
    fn merge(&mut self, other: Evidence) {
        for code in other.codes {
            self.push_code(code.field, code.value);
        }
        for message in other.messages {
            if self.messages.len() < MAX_ITEMS && !self.messages.contains(&message) {
                self.messages.push(message);
            }
        }
        for id in other.quota_ids {
            if self.quota_ids.len() < MAX_ITEMS {
                self.quota_ids.push(id);
            }
        }
        self.json = self.json.take().or(other.json);
        self.has_error_envelope |= other.has_error_envelope;
        self.quota_per_model |= other.quota_per_model;
        self.quota_granted_none |= other.quota_granted_none;
        self.truncated |= other.truncated;
        self.inner_status = self.inner_status.or(other.inner_status);
        if self.completion.is_none() {
            self.completion = other.completion;
            self.unsigned_completion = other.unsigned_completion;
        }
    }

    fn read_json(&mut self, value: &Value, depth: usize) {
        match value {
            Value::Array(items) => {
                // Gemini and Vertex wrap the error object in a one-element array; a streamed
                // array (`streamGenerateContent` without SSE) ends with it after candidates.
                let error = items
                    .iter()
                    .take(MAX_ITEMS)
                    .find(|item| item.get("error").is_some());
                // ... or with a chunk whose candidates stopped for safety.
                let refused = || {
                    items.iter().take(MAX_ITEMS).find(|item| {
                        item.as_object()
                            .is_some_and(|map| refused_stop(map, false).is_some())
                    })
                };
                if let Some(item) = error.or_else(refused).or_else(|| items.first()) {
                    self.read_json(item, depth);
                }
            }
            // A body encoded twice (`"{\"error\": ...}"`): the body inside is read.
            Value::String(s) => self.read_text(s, depth),
            Value::Object(map) => self.read_object(map, depth),
            _ => {}
        }
    }

    /// Reads one JSON object of an answer: its error envelopes, its own fields, then what the
    /// answer says of itself.
    fn read_object(&mut self, map: &Map<String, Value>, depth: usize) {
        for read in ENVELOPES {
            read(self, map, depth);
        }
        self.mark_error_fields(map, depth);
        self.read_top_level_fields(map, depth);
        self.read_failed_task(map, depth);
        for read in INSIDE_ANSWERS {
            read(self, map, depth);
        }
        self.read_completion(map);
        // Hugging Face's model still loading: `{"error": "Model x is currently loading",
        // "estimated_time": 44.8}`, in whatever language the words are.
        let loading = map.get("estimated_time").is_some_and(Value::is_number)
            && map.get("error").is_some_and(Value::is_string);
        if depth == 0 && loading {
            self.has_error_envelope = true;
            self.push_code("estimated_time", "model_loading".to_owned());
        }
        if depth == 0 && !self.has_error_envelope && self.messages.is_empty() {
            self.read_buried_error(map);
            // Only where no buried error was found either.
            if !self.has_error_envelope && self.messages.is_empty() {
                self.read_home_grown(map);
            }
        }
    }

    /// A home-grown envelope, read when nothing else held an error: a field named for a code
    /// that fails (`respCode`, `rtn_cd`, `rc`, `returnCode`, a `state` of `E102`, a `flag` of
    /// `false`) beside one named for words (`respDesc`, `rtn_msg`, `rm`, `returnMessage`,
    /// `desc`, `note`): `{"respCode": "6002", "respDesc": "商户账户可用额度不足"}`. The body says
    /// it failed, so its sentences are read (`classify::evidence_of`), as under an error
    /// status; where it has none, the words field's short text is the message. Its code, one
    /// product's own, is not read as another provider's.
    fn read_home_grown(&mut self, map: &Map<String, Value>) {
        if map.contains_key("object") || !map.iter().any(|(k, v)| home_grown_failure(k, v)) {
            return;
        }
        let words = map.iter().find_map(|(k, v)| match v {
            Value::String(t) if words_key(k) && t.chars().any(char::is_alphabetic) => Some(t),
            _ => None,
        });
        let Some(text) = words else {
            return;
        };
        if map.values().filter_map(Value::as_str).any(is_sentence) {
            self.said_failed = true;
        } else {
            self.has_error_envelope = true;
            self.push_message(text);
        }
    }

    /// An error object buried under keys no reader knows (`{"code": 0, "data": {"result":
    /// null, "upstream_error": {"error": {...}}}}`, `{"response": {"ok": false, "payload":
    /// {"error": {...}}}}`), read when nothing else held an error. Only objects are walked, a
    /// few levels down (not arrays, where a completion's choices are); not a resource fetched
    /// by its id nor a batch's line (`"object"`, `"custom_id"`): the job failed, not the call.
    fn read_buried_error(&mut self, map: &Map<String, Value>) {
        const LEVELS: usize = 3;
        if map.contains_key("object") || map.contains_key("custom_id") {
            return;
        }
        let mut level: Vec<&Map<String, Value>> = vec![map];
        for depth in 1..=LEVELS {
            let mut next = Vec::new();
            for object in level {
                for value in object.values().take(MAX_ITEMS) {
                    let Value::Object(inner) = value else {
                        continue;
                    };
                    let error = inner.get("error").filter(|e| {
                        e.as_object().is_some_and(|e| {
                            !holds_nothing(e)
                                && ["message", "type"]
                                    .iter()
                                    .any(|k| e.get(*k).is_some_and(Value::is_string))
                        })
                    });
                    if error.is_some() {
                        self.read_error_envelope(error, depth);
                        return;
                    }
                    // A GraphQL field's `errorMessage` beside the result it did not get
                    // (`{"data": {"chatCompletion": {"content": null, "errorMessage": "Error
                    // code: 429 - {...}"}}}`); not a report's note beside its figures.
                    let unanswered = inner.values().any(Value::is_null);
                    let message = ["errorMessage", "error_message"].iter().find_map(|k| {
                        inner
                            .get(*k)
                            .and_then(Value::as_str)
                            .filter(|m| !m.trim().is_empty())
                    });
                    if let (Some(message), true) = (message, unanswered) {
                        self.has_error_envelope = true;
                        self.read_text(message, depth);
                        return;
                    }
                    next.push(inner);
                }
            }
            level = next;
        }
    }

    /// `{"error": {...}}`, `{"error": "text"}`, Tencent `{"Response": {"Error": {...}}}`,
    /// OpenAI Responses API `{"response": {"error": {...}}}` (response.failed).
    fn read_error_key(&mut self, map: &Map<String, Value>, depth: usize) {
        let wrapped = map
            .get("response")
            .and_then(|r| r.get("error"))
            .filter(|e| e.is_object());
        // An app's own words over the provider's answer it keeps whole (`{"error": "Gemini API
        // error", "response": {"error": {...}}}`): both are read, the answer's first.
        if let (Some(Value::String(words)), Some(answer)) = (map.get("error"), wrapped) {
            self.read_error_envelope(Some(answer), depth);
            self.push_message(words);
            return;
        }
        let envelope = map
            .get("error")
            // `{"result": null, "error_info": {"code": "BILLING_HARD_LIMIT", "detail": ...}}`.
            .or_else(|| map.get("error_info").filter(|e| e.is_object()))
            .or_else(|| map.get("Response").and_then(|r| r.get("Error")))
            .or_else(|| map.get("response").and_then(|r| r.get("error")))
            // The Realtime API's `response.done` that failed: `{"response": {"status_details":
            // {"error": {...}}}}`.
            .or_else(|| {
                map.get("response")
                    .and_then(|r| r.get("status_details"))
                    .and_then(|d| d.get("error"))
            })
            // A stream event that wraps its payload: `{"type": ..., "data": {"error": {...}}}`.
            .or_else(|| map.get("data").and_then(|d| d.get("error")));
        self.read_error_envelope(envelope, depth);
    }

    /// The error a body holds under one of the keys [`Self::read_error_key`] knows.
    fn read_error_envelope(&mut self, envelope: Option<&Value>, depth: usize) {
        match envelope {
            // `"error": {}` (a fine-tuning job that succeeded) holds no error, nor `"error":
            // {"code": 0, "message": ""}` beside a completion.
            Some(Value::Object(error)) if !holds_nothing(error) => {
                self.has_error_envelope = true;
                // A relay's doubled envelope: `{"error": {"error": {"message": ..., "code":
                // 402}}}`.
                match error.get("error") {
                    Some(Value::Object(inner))
                        if depth < MAX_NESTING && !error.contains_key("message") =>
                    {
                        self.read_error_object(inner, depth + 1);
                    }
                    _ => {}
                }
                self.read_error_object(error, depth);
            }
            Some(Value::String(name)) if is_enum_name(name) => {
                self.has_error_envelope = true;
                self.push_code("error", name.clone());
            }
            Some(Value::String(message)) if !message.is_empty() => {
                self.has_error_envelope = true;
                // Slack's `"error": "invalid_auth"`: a code in lower snake case, read as one
                // too.
                if is_code_word(message) {
                    self.push_code("error", message.clone());
                }
                self.push_message(message);
            }
            // A list of error objects (Cloudflare's AI Gateway: `"error": [{"code": 2016,
            // "message": "Prompt blocked ..."}]`).
            Some(Value::Array(list)) => self.read_error_objects(list, depth),
            _ => {}
        }
    }

    /// Each error object of a list (non-objects are passed over), up to [`MAX_ITEMS`].
    fn read_error_objects(&mut self, list: &[Value], depth: usize) {
        for error in list.iter().take(MAX_ITEMS) {
            if let Value::Object(error) = error {
                self.has_error_envelope = true;
                self.read_error_object(error, depth);
            }
        }
    }

    /// NAVER CLOVA Studio: `{"status": {"code": "40003", "message": "..."}}`.
    /// Its successes say `{"status": {"code": "20000", "message": "OK"}}`.
    fn read_status_object(&mut self, map: &Map<String, Value>, depth: usize) {
        if let Some(Value::Object(status)) = map.get("status") {
            let succeeded = status
                .get("code")
                .and_then(code_text)
                .is_some_and(|c| matches!(c.trim(), "0" | "200" | "20000"));
            if !succeeded && status.contains_key("code") && status.contains_key("message") {
                self.has_error_envelope = true;
                self.read_error_object(status, depth);
            }
        }
    }

    /// FastAPI's `HTTPException` with an object for `detail` (ElevenLabs:
    /// `{"detail": {"status": "quota_exceeded", "message": "..."}}`).
    /// A whole provider body inside `detail` (a gateway's `{"detail": {"type": "error",
    /// "error": {...}}}`) is read as a body.
    /// FastAPI's validation errors (and guards that borrow their shape): `{"detail": [{"loc":
    /// [...], "msg": "...", "type": "..."}]}`.
    fn read_detail(&mut self, map: &Map<String, Value>, depth: usize) {
        match map.get("detail") {
            Some(Value::Array(items)) => {
                for item in items.iter().take(MAX_ITEMS) {
                    if let Some(Value::String(message)) = item.get("msg") {
                        self.has_error_envelope = true;
                        self.push_message(message);
                    }
                }
            }
            // Also `{"detail": {"msg": "No model is loaded ..."}}` (text-generation-webui).
            Some(Value::Object(detail)) => {
                let text = |k: &str| detail.get(k).is_some_and(Value::is_string);
                if text("message") || text("msg") {
                    self.has_error_envelope = true;
                    self.read_error_object(detail, depth);
                } else if detail.contains_key("error") && depth < MAX_NESTING {
                    self.read_object(detail, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// iFlytek Spark: `{"header": {"code": 10003, "message": "...", "sid": ...}}` (0: success).
    /// DashScope's real-time sockets: `{"header": {"event": "task-failed", "error_code":
    /// "Throttling.RateQuota", "error_message": "..."}, "payload": {}}`.
    fn read_header(&mut self, map: &Map<String, Value>, depth: usize) {
        let Some(Value::Object(header)) = map.get("header") else {
            return;
        };
        let failed = failing_code(header, "code").is_some();
        if failed && header.get("message").is_some_and(Value::is_string) {
            self.has_error_envelope = true;
            self.read_error_object(header, depth);
        }
        // Alibaba Cloud's speech gateway: `{"header": {"name": "TaskFailed", "status": 40000005,
        // "status_text": "Gateway:TOO_MANY_REQUESTS:Too many requests!"}}`: its code between
        // colons, its words after them.
        let task_failed = header.get("name").and_then(Value::as_str) == Some("TaskFailed");
        if let (true, Some(Value::String(text))) = (task_failed, header.get("status_text")) {
            self.has_error_envelope = true;
            let mut parts = text.splitn(3, ':');
            if let (Some(_), Some(code), Some(words)) = (parts.next(), parts.next(), parts.next()) {
                self.push_code("header.status_text", code.to_owned());
                self.push_message(words);
            } else {
                self.push_message(text);
            }
        }
        if header.get("event").and_then(Value::as_str) == Some("task-failed") {
            self.has_error_envelope = true;
            self.said_failed = true;
            if let Some(code) = header.get("error_code").and_then(code_text) {
                self.push_code("header.error_code", code);
            }
            if let Some(Value::String(message)) = header.get("error_message") {
                self.push_message(message);
            }
        }
    }

    /// RFC 9457 problem details (NVIDIA's functions; the RFC's own example): `{"type":
    /// "https://example.com/errors/out-of-credit", "title": "You do not have enough credit.",
    /// "status": 403, "detail": "..."}`. The title is a message (the `detail` is read with the
    /// other top-level fields); the type's last path segment is a code.
    fn read_problem_details(&mut self, map: &Map<String, Value>, _: usize) {
        let status = map.get("status").and_then(Value::as_u64);
        let (Some(Value::String(kind)), Some(Value::String(title)), Some(400..=599)) =
            (map.get("type"), map.get("title"), status)
        else {
            return;
        };
        self.has_error_envelope = true;
        self.push_message(title);
        if kind.starts_with("http") {
            let segment = kind
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or_default();
            if !segment.is_empty() && !segment.contains('.') {
                self.push_code("type", segment.to_owned());
            }
        }
    }

    /// MiniMax: `{"base_resp": {"status_code": 1008, "status_msg": "insufficient balance"}}`
    /// (0: success), beside or instead of the answer.
    fn read_base_resp(&mut self, map: &Map<String, Value>, _: usize) {
        if let Some(Value::Object(base)) = map.get("base_resp") {
            let failed = failing_code(base, "status_code");
            if let (Some(code), Some(Value::String(message))) = (failed, base.get("status_msg")) {
                self.has_error_envelope = true;
                self.push_message(message);
                self.push_code("base_resp.status_code", code);
            }
        }
    }

    /// Cloudflare's API envelope (`{"errors": [{"code": 3036, "message": "..."}], "success":
    /// false}`) and GraphQL-style `errors` lists: each entry is an error object.
    /// One error as an object under `errors` (`{"errors": {"message": "..."}}`); not a
    /// batch's list of its lines' errors (`{"errors": {"object": "list", "data": [...]}}`).
    fn read_errors(&mut self, map: &Map<String, Value>, depth: usize) {
        match map.get("errors") {
            Some(Value::Array(list)) => {
                for error in list.iter().take(MAX_ITEMS) {
                    match error {
                        Value::Object(error) => {
                            self.has_error_envelope = true;
                            self.read_error_object(error, depth);
                        }
                        // Stability: `{"errors": ["Your request was flagged ..."], "name":
                        // "content_moderation"}`.
                        Value::String(message) if !message.is_empty() => {
                            self.has_error_envelope = true;
                            self.push_message(message);
                            if let Some(name) = map.get("name").and_then(code_text) {
                                self.push_code("name", name);
                            }
                        }
                        _ => {}
                    }
                }
            }
            Some(Value::Object(error)) if error.get("message").is_some_and(Value::is_string) => {
                self.has_error_envelope = true;
                self.read_error_object(error, depth);
            }
            // Rails' validation errors: each field with its messages (`{"errors": {"model":
            // ["is not enabled for this workspace"]}}`), the field named before a message that
            // goes on from it.
            Some(Value::Object(fields)) => {
                for (field, messages) in fields.iter().take(MAX_ITEMS) {
                    // Each field's messages are a list (an OpenAI batch's `"errors": {"object":
                    // "list", "data": []}` is no field's).
                    let Value::Array(messages) = messages else {
                        continue;
                    };
                    for message in messages.iter().take(MAX_ITEMS).filter_map(Value::as_str) {
                        self.has_error_envelope = true;
                        if message.starts_with(|c: char| c.is_lowercase()) {
                            self.push_message(&format!("{field} {message}"));
                        } else {
                            self.push_message(message);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// A proxy that passes the upstream's answer on as a string beside its own words:
    /// `{"error": "upstream_error", "upstream_status": 429, "upstream_body": "{...}"}`.
    /// Also `"upstream_error": "{...}"`, and a plain `"body": "{...}"` (or `responseBody`) beside
    /// an error status of its own (`{"ok": false, "status": 402, "body": "{...}"}`), and the
    /// upstream's words alone as `upstream_message`.
    fn read_upstream_body(&mut self, map: &Map<String, Value>, depth: usize) {
        if depth >= MAX_NESTING {
            return;
        }
        if let Some(passed) = PassedOn::find(map) {
            self.has_error_envelope = true;
            if passed.text.trim_start().starts_with('<') {
                self.read_body(passed.text.as_bytes(), depth + 1);
            } else {
                self.read_embedded(passed.text, depth);
            }
            if self.inner_status.is_none() {
                self.inner_status = passed.status;
            }
        } else if let Some(Value::String(text)) = map.get("upstream_message") {
            // Or only the upstream's words: `{"error": "Upstream error", "upstream_status": 401,
            // "upstream_message": "invalid x-api-key"}`.
            self.has_error_envelope = true;
            self.read_text(text, depth);
            if self.inner_status.is_none() {
                self.inner_status = map.get("upstream_status").and_then(http_status);
            }
        }
    }

    /// An HTTP client's error with the response it got (axios: `{"name": "AxiosError",
    /// "message": "Request failed with status code 429", "status": 429, "response": {"status":
    /// 429, "data": {"error": {...}}}}`): the response's data is the upstream's body, its status
    /// the inner one.
    fn read_client_response(&mut self, map: &Map<String, Value>, depth: usize) {
        let Some(Value::Object(response)) = map.get("response") else {
            return;
        };
        let Some(status) = stated_status(response).or_else(|| stated_status(map)) else {
            return;
        };
        if depth >= MAX_NESTING || status < 400 {
            return;
        }
        match response.get("data") {
            Some(Value::Object(data)) => {
                self.has_error_envelope = true;
                self.inner_status.get_or_insert(status);
                self.read_object(data, depth + 1);
            }
            Some(Value::String(text)) if !text.trim().is_empty() => {
                self.has_error_envelope = true;
                self.inner_status.get_or_insert(status);
                self.read_body(text.as_bytes(), depth + 1);
            }
            _ => {}
        }
    }

    /// A wrapper that keeps the upstream's answer whole under a key of its own making
    /// (`"vendor_error": {"type": "error", "error": {...}}`, `"raw_upstream": "{...}"`,
    /// `"origin": {"status": 413, "body": {...}}`, `"upstream": {"status": 400, "message":
    /// "..."}`, `"cause": {"message": "Error code: 429 - {...}"}`, `"inner": "anthropic.
    /// BadRequestError: Error code: 400 - {...}"`), beside its own words or inside its own
    /// `error` object: that answer is read as a body, its status as the inner one. Keys other
    /// readers know are left to them; objects of the wrapper's own are looked into, a few
    /// levels down.
    fn read_nested_answer(&mut self, map: &Map<String, Value>, depth: usize) {
        if let Some(Value::Object(error)) = map.get("error") {
            self.read_nested_in(error, depth, false);
        }
        self.read_nested_in(map, depth, true);
    }

    /// [`Self::read_nested_answer`] on one object's own keys. When `others_read` (the object's
    /// own readers ran on it), the strings they already looked into ([`read_by_others`]) are
    /// not read twice.
    fn read_nested_in(&mut self, map: &Map<String, Value>, depth: usize, others_read: bool) {
        const KNOWN: &[&str] = &[
            "error",
            "errors",
            "response",
            "data",
            "detail",
            "choices",
            "output",
            "Response",
            "header",
            "base_resp",
            "result",
            "results",
            "candidates",
            "message",
            "metadata",
            "last_error",
            "usage",
            "usageMetadata",
        ];
        // A completion is the answer: what else it carries (a gateway's note of an earlier
        // attempt's error) is its own metadata.
        let answered = ["choices", "candidates"].iter().any(|k| {
            map.get(*k)
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
        });
        if depth >= MAX_NESTING || map.len() > MAX_ITEMS * 2 || answered {
            return;
        }
        for (key, value) in map.iter().filter(|(k, _)| !KNOWN.contains(&k.as_str())) {
            match value {
                Value::Object(inner) => {
                    let status = stated_status(inner);
                    let text = |k: &str| inner.get(k).is_some_and(Value::is_string);
                    match (status, inner.get("body")) {
                        (Some(status), Some(body)) => {
                            self.has_error_envelope = true;
                            self.inner_status.get_or_insert(status);
                            match body {
                                Value::Object(body) => self.read_object(body, depth + 1),
                                Value::String(text) => self.read_body(text.as_bytes(), depth + 1),
                                _ => {}
                            }
                        }
                        (Some(status), None) if text("message") => {
                            self.has_error_envelope = true;
                            self.inner_status.get_or_insert(status);
                            self.read_object(inner, depth + 1);
                        }
                        _ if holds_an_error(inner) => {
                            self.has_error_envelope = true;
                            self.read_object(inner, depth + 1);
                        }
                        _ if key == "cause" && text("message") => {
                            self.has_error_envelope = true;
                            self.read_object(inner, depth + 1);
                        }
                        _ => self.read_nested_in(inner, depth + 1, false),
                    }
                }
                Value::String(text)
                    if text.contains('{')
                        && text.contains("rror")
                        && !(others_read && read_by_others(map, key)) =>
                {
                    self.read_embedded_answer(text, depth);
                }
                _ => {}
            }
        }
    }

    /// Gemini Code Assist (the Gemini CLI's backend) wraps each answer or chunk of the Gemini
    /// API: `{"response": {"candidates": [...], "promptFeedback": ...}, "traceId": "..."}`.
    fn read_wrapped_gemini(&mut self, map: &Map<String, Value>, depth: usize) {
        if let (Some(Value::Object(inner)), true) = (map.get("response"), depth < MAX_NESTING) {
            if inner.contains_key("candidates") || inner.contains_key("promptFeedback") {
                self.read_object(inner, depth + 1);
            }
        }
    }

    /// OpenRouter: an upstream's failure inside a 200 completion, `{"choices": [{"finish_reason":
    /// "error", "error": {"code": 429, "message": "..."}}]}`.
    fn read_choice_errors(&mut self, map: &Map<String, Value>, depth: usize) {
        if let Some(list) = map.get("choices").and_then(Value::as_array) {
            for choice in list.iter().take(MAX_ITEMS) {
                if let Some(Value::Object(error)) = choice.get("error") {
                    self.has_error_envelope = true;
                    self.read_error_object(error, depth);
                }
            }
        }
    }

    /// Korean and Japanese enterprise envelopes: `{"resultCode": "E429", "resultMsg": "..."}`
    /// (`"0"`, `"00"`, `"SUCCESS"`: success).
    fn read_result_code(&mut self, map: &Map<String, Value>, _: usize) {
        if let Some(code) = map.get("resultCode").and_then(code_text) {
            let message = ["resultMsg", "resultMessage"]
                .iter()
                .find_map(|k| map.get(*k).and_then(Value::as_str));
            let succeeded = success_word(&code) || message.is_some_and(success_word);
            if let (false, Some(message)) = (succeeded || says_succeeded(map), message) {
                self.has_error_envelope = true;
                self.push_code("resultCode", code);
                self.push_message(message);
            }
        }
    }

    /// Bedrock's stream exceptions as its SDKs hand them over: `{"throttlingException":
    /// {"message": "Too many tokens ..."}}`, `{"modelStreamErrorException": {...}}`.
    fn read_stream_exception(&mut self, map: &Map<String, Value>, depth: usize) {
        if map.len() == 1 {
            if let Some((name, Value::Object(exception))) = map.iter().next() {
                if name.ends_with("Exception") && exception.contains_key("message") {
                    self.has_error_envelope = true;
                    // `modelStreamErrorException` passes on what the model answered
                    // (`"originalStatusCode": 400`): a request fault is not the stream's.
                    let original = exception.get("originalStatusCode").and_then(http_status);
                    if original.is_some() && self.inner_status.is_none() {
                        self.inner_status = original;
                    }
                    if !original.is_some_and(|s| s < 500 && s != 429) {
                        self.push_code("exception", name.clone());
                    }
                    self.read_error_object(exception, depth);
                }
            }
        }
    }

    /// Coze: a chat that failed, `{"status": "failed", "last_error": {"code": 4028, "msg":
    /// "..."}}` (`code: 0` on success). OpenAI's Assistants runs and run steps that failed:
    /// `{"object": "thread.run", "status": "failed", "last_error": {"code":
    /// "rate_limit_exceeded", "message": "..."}}`; the run's error is what the caller gets
    /// instead of an answer, so the answer is read by it.
    fn read_last_error(&mut self, map: &Map<String, Value>, depth: usize) {
        if let Some(Value::Object(last)) = map.get("last_error") {
            if failing_code(last, "code").is_some() || says_failed(map) {
                self.has_error_envelope = true;
                self.read_error_object(last, depth);
            }
        }
    }

    /// OpenAI's Batch API: a batch that failed lists why (`{"object": "batch", "status":
    /// "failed", "errors": {"object": "list", "data": [{"code": "token_limit_exceeded",
    /// "message": "..."}]}}`). The lines of a batch's output file are not read: a file
    /// downloaded is a success whatever its lines say.
    fn read_failed_batch(&mut self, map: &Map<String, Value>, depth: usize) {
        let Some(listed) = map
            .get("errors")
            .and_then(|e| e.get("data"))
            .and_then(Value::as_array)
        else {
            return;
        };
        if says_failed(map) {
            self.read_error_objects(listed, depth);
        }
    }

    /// A Google quota's id and its granted value, under the given keys.
    fn read_quota_limit(&mut self, quota: &Value, id_key: &str, value_key: &str) {
        if let Some(id) = quota.get(id_key).and_then(Value::as_str) {
            if self.quota_ids.len() < MAX_ITEMS {
                self.quota_ids.push(id.to_ascii_lowercase());
            }
            if quota.get(value_key).and_then(code_text).as_deref() == Some("0") {
                self.quota_granted_none = true;
            }
        }
    }

    /// Alibaba Cloud's API envelope: `{"RequestId": ..., "Code": "SignatureDoesNotMatch",
    /// "Message": "..."}`.
    fn read_cloud_api_error(&mut self, map: &Map<String, Value>, _: usize) {
        if let (Some(code), Some(Value::String(text))) =
            (map.get("Code").and_then(code_text), map.get("Message"))
        {
            if !success_code(&code) {
                self.has_error_envelope = true;
                self.push_code("Code", code);
                self.push_message(text);
            }
        }
    }

    /// Azure Resource Manager's inner errors, under a generic outer one (`{"code":
    /// "InvalidTemplateDeployment", "message": "... See inner errors for details.", "details":
    /// [{"code": "InsufficientQuota", "message": "..."}]}`): each code and message.
    fn read_inner_error(&mut self, detail: &Value) {
        if let (Some(code), Some(Value::String(message))) = (
            detail.get("code").and_then(Value::as_str),
            detail.get("message"),
        ) {
            self.push_code("error.details.code", code.to_owned());
            self.push_message(message);
        }
    }

    /// ARM's envelope without an `error` key: its inner errors.
    fn read_arm_details(&mut self, map: &Map<String, Value>, _: usize) {
        if !(map.contains_key("code") && map.contains_key("message")) {
            return;
        }
        if let Some(Value::Array(details)) = map.get("details") {
            for detail in details.iter().take(MAX_ITEMS) {
                self.read_inner_error(detail);
            }
        }
    }

    /// An error envelope whose keys are in another language (`{"success": false, "錯誤":
    /// {"代碼": "TOO_MANY_REQUESTS", "訊息": "..."}}`, `{"basari": false, "hata": {"kod": ...,
    /// "mesaj": ...}}`): the error object under a local word for "error", and the codes under a
    /// local word for "code" beside a failure flag. (Their sentences are read by
    /// `classify::evidence_of` when nothing else spoke.)
    fn read_local_envelope(&mut self, map: &Map<String, Value>, depth: usize) {
        let local_word = |key: &String| {
            LOCAL_CODE_KEYS.contains(&key.as_str()) || LOCAL_MESSAGE_KEYS.contains(&key.as_str())
        };
        // The codes and messages under local words.
        let read = |evidence: &mut Self, fields: &Map<String, Value>| {
            for (key, value) in fields {
                let message_key = LOCAL_MESSAGE_KEYS.contains(&key.as_str());
                if !message_key && !LOCAL_CODE_KEYS.contains(&key.as_str()) {
                    continue;
                }
                match value {
                    Value::String(text) if message_key => evidence.read_text(text, depth),
                    _ => {
                        if let Some(code) = code_text(value) {
                            evidence.push_code("code", code);
                        }
                    }
                }
            }
        };
        // A body has a few keys and the words are many: its keys are looked up in the words.
        let local = map
            .iter()
            .filter(|(key, _)| LOCAL_ERROR_KEYS.contains(&key.as_str()));
        // The local words beside an error key that holds a string (`{"fehler": "...",
        // "meldung": "..."}`), read once after the keys.
        let mut local_beside = false;
        for (_, value) in local {
            match value {
                Value::Object(error) if !holds_nothing(error) => {
                    self.has_error_envelope = true;
                    read(self, error);
                }
                // `{"erreur": "service_surcharge", "message": "..."}`: a code, and the local
                // words beside it (`{"fehler": "ZAHLUNGSRUECKSTAND", "meldung": "..."}`).
                Value::String(text) if is_code_word(text) => {
                    self.has_error_envelope = true;
                    self.push_code("code", text.clone());
                    local_beside = true;
                }
                Value::String(text) if !text.trim().is_empty() => {
                    self.has_error_envelope = true;
                    self.read_text(text, depth);
                    local_beside = true;
                }
                _ => {}
            }
        }
        if local_beside {
            read(self, map);
        }
        // `{"error": {"codigo": "VELOCIDAD_EXCEDIDA", "mensaje": "..."}}`: local words under
        // the English key.
        if let Some(Value::Object(error)) = map.get("error") {
            if error.keys().any(local_word) {
                self.has_error_envelope = true;
                read(self, error);
            }
        }
        // `{"codigo": 4002, "mensaje": "Saldo de la cuenta insuficiente", "datos": null}`: a
        // local code that is neither 0 nor a 2xx, beside a local message, is a failure said.
        let failing_local_code = || {
            LOCAL_CODE_KEYS.iter().any(|key| {
                failing_code(map, key)
                    .and_then(|code| code.trim().parse::<i64>().ok())
                    .is_some_and(|n| !(200..300).contains(&n))
            }) && LOCAL_MESSAGE_KEYS
                .iter()
                .any(|key| map.get(*key).is_some_and(Value::is_string))
        };
        if map.keys().any(local_word) && (says_failed(map) || failing_local_code()) {
            self.has_error_envelope = true;
            read(self, map);
        }
    }

    /// Apigee's fault: `{"fault": {"faultstring": "Rate limit quota violation. Quota limit
    /// 50000 exceeded for interval 1 day.", "detail": {"errorcode": "policies.ratelimit.
    /// QuotaViolation"}}}`. Its words only: the policy's code names the same "rate limit
    /// quota" whatever the interval.
    fn read_fault(&mut self, map: &Map<String, Value>, depth: usize) {
        let Some(fault) = map.get("fault") else {
            return;
        };
        // A proxy's `detail` beside it: the policy's `cause`, or the upstream's own body it
        // passed on (`upstream_body`), read first, as they say more than the fault's string
        // ("Upstream LLM error").
        if let Some(Value::Object(detail)) = fault.get("detail") {
            for key in ["upstream_body", "cause"] {
                if let Some(Value::String(text)) = detail.get(key) {
                    self.has_error_envelope = true;
                    self.read_text(text, depth + 1);
                }
            }
        }
        if let Some(Value::String(text)) = fault.get("faultstring") {
            self.has_error_envelope = true;
            self.push_message(text);
        }
    }

    /// An agent run's result flagged as an error (Claude Code's `{"type": "result", "subtype":
    /// "success", "is_error": true, "result": "API Error: 429 {...}"}`): its text is the
    /// error, and an upstream body inside it is read.
    fn read_flagged_result(&mut self, map: &Map<String, Value>, depth: usize) {
        if let (Some(Value::Bool(true)), Some(Value::String(text))) =
            (map.get("is_error"), map.get("result"))
        {
            self.has_error_envelope = true;
            self.read_text(text, depth);
        }
        // An answer flagged as blocked (`{"output": null, "blocked": true, "reason": "..."}`):
        // its words say why (content, an address, a debt, a burst). A safety verdict's block
        // (`"safety": {"blocked": true}`), or one that names the content's categories, is a
        // refusal.
        let blocked = |m: &Map<String, Value>| m.get("blocked") == Some(&Value::Bool(true));
        let safety = map
            .get("safety")
            .and_then(Value::as_object)
            .is_some_and(blocked);
        if blocked(map) || safety {
            self.has_error_envelope = true;
            if safety || map.contains_key("category") || map.contains_key("categories") {
                self.push_code("blocked", "content_filter".to_owned());
            }
        }
    }

    /// Agent protocols' results that failed, inside a JSON-RPC envelope: MCP's tool result
    /// flagged as an error (`{"result": {"content": [{"type": "text", "text": "OpenAI API error
    /// 429: {...}"}], "isError": true}}`) and A2A's task that failed or was rejected
    /// (`{"result": {"kind": "task", "status": {"state": "failed", "message": {"parts":
    /// [{"kind": "text", "text": "..."}]}}}}`): a provider's answer in their texts is read.
    fn read_agent_result(&mut self, map: &Map<String, Value>, depth: usize) {
        if depth >= MAX_NESTING {
            return;
        }
        let result = match (map.get("jsonrpc"), map.get("result")) {
            (Some(_), Some(Value::Object(result))) => result,
            _ => map,
        };
        let task = result
            .get("task")
            .and_then(Value::as_object)
            .unwrap_or(result);
        let texts = if result.get("isError").and_then(Value::as_bool) == Some(true) {
            result.get("content")
        } else {
            let status = task.get("status").and_then(Value::as_object);
            let state = status.and_then(|s| s.get("state")).and_then(Value::as_str);
            let ended = state.is_some_and(|s| {
                [
                    "failed",
                    "rejected",
                    "task_state_failed",
                    "task_state_rejected",
                ]
                .iter()
                .any(|w| s.eq_ignore_ascii_case(w))
            });
            status
                .filter(|_| ended)
                .and_then(|s| s.get("message"))
                .and_then(|m| m.get("parts"))
        };
        // Only a provider's answer inside the text counts: a tool's or an agent's own failure
        // ("canceling statement due to statement timeout") is no model's condition.
        for part in texts
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .take(MAX_ITEMS)
        {
            if let Some(Value::String(text)) = part.get("text") {
                self.read_embedded_answer(text, depth);
            }
        }
    }

    /// The Vercel AI SDK's UI stream: `{"type": "error", "errorText": "..."}`.
    fn read_error_text(&mut self, map: &Map<String, Value>, _: usize) {
        if let (Some("error"), Some(Value::String(text))) = (
            map.get("type").and_then(Value::as_str),
            map.get("errorText"),
        ) {
            self.has_error_envelope = true;
            self.push_message(text);
        }
    }

    /// Top-level fields: Anthropic's `type: error`, DashScope/SiliconFlow `code`+`message`,
    /// Baidu `error_code`+`error_msg`, TGI `error_type`, Bedrock/Cohere `message`, FastAPI
    /// `detail`, xAI `code`+`error`.
    fn mark_error_fields(&mut self, map: &Map<String, Value>, depth: usize) {
        // Also Deepgram's agent events: `{"type": "Error", "description": ..., "message": ...}`.
        // Dify's and Flowise's stream events: `{"event": "error", "message": ...}`, `{"event":
        // "error", "data": "Error: 429 Rate limit reached ..."}`; its data is the error.
        let typed_error = ["type", "event"].iter().any(|k| {
            map.get(*k)
                .and_then(Value::as_str)
                .is_some_and(|t| t.eq_ignore_ascii_case("error"))
        });
        if typed_error {
            self.has_error_envelope = true;
            match map.get("data") {
                Some(Value::String(data)) => self.read_text(data, depth + 1),
                Some(data @ Value::Object(_)) if depth < MAX_NESTING => {
                    self.read_json(data, depth + 1);
                }
                _ => {}
            }
        }
        // Speechmatics' real-time errors: `{"message": "Error", "type": "quota_exceeded",
        // "reason": "Concurrent Quota Exceeded"}`: the type is the code, the reason the words.
        if let (Some("Error"), Some(kind), Some(Value::String(reason))) = (
            map.get("message").and_then(Value::as_str),
            map.get("type").and_then(Value::as_str),
            map.get("reason"),
        ) {
            self.has_error_envelope = true;
            self.push_code("type", kind.to_owned());
            self.push_message(reason);
        }
        // AWS's JSON protocol: `{"__type": "ThrottlingException", "message": "..."}`.
        if map.contains_key("__type") && map.get("message").is_some_and(Value::is_string) {
            self.has_error_envelope = true;
        }
        // Mistral's and vLLM's `{"object": "error", "message": ..., "type": ...}`, also as an
        // event inside a 200 stream.
        if map.get("object").and_then(Value::as_str) == Some("error") {
            self.has_error_envelope = true;
        }
        // Baidu's successes carry `"error_code": 0, "error_msg": ""`.
        let error_msg = map
            .get("error_msg")
            .and_then(Value::as_str)
            .is_some_and(|m| !m.is_empty());
        if failing_code(map, "error_code").is_some() || error_msg {
            self.has_error_envelope = true;
        }
        // Java- and .NET-style `{"errorCode": "...", "errorMessage": "..."}` (either case).
        let camel_message = ["errorMessage", "ErrorMessage"].iter().any(|k| {
            map.get(*k)
                .and_then(Value::as_str)
                .is_some_and(|m| !m.is_empty())
        });
        if camel_message {
            self.has_error_envelope = true;
        }
        // Errors inside 200 bodies: `{"code": 336501, "msg": "Rate limit reached for RPM"}`
        // (Baidu Qianfan, relays); their success bodies say `code: 0` (or 200, "success").
        // Success codes vary (`"0000"`, `10000`, `1`): a body whose own words say it succeeded
        // is not failing whatever its code.
        let failed_code = match map.get("code") {
            Some(Value::Number(n)) => n.as_i64().is_some_and(|n| n != 0 && n != 200),
            Some(Value::String(s)) => !success_code(s),
            _ => false,
        } && !says_succeeded(map);
        let has_text = [
            "msg",
            "message",
            "errmsg",
            // `{"success": false, "errorCode": "GATEWAY_TIMEOUT", "errorMsg": "..."}`.
            "errorMsg",
            "errMsg",
            // Baidu speech's `{"err_no": 3305, "err_msg": "..."}`.
            "err_msg",
            "detail",
            "error_message",
            "reason",
            "err",
        ]
        .iter()
        .chain(TASK_FAILURE_TEXT)
        .any(|k| map.get(*k).is_some_and(Value::is_string));
        // `{"status": "434", "msg": "Access to the current AK has been blocked ..."}` (iFlow
        // inside a 200): an error status in the body's own `status`.
        let failed_status = map.get("status").and_then(http_status).is_some();
        // n8n's `NodeApiError`: the upstream's status as `httpCode` ("429"), its words in
        // `message` and `description`.
        let http_code = map.get("httpCode").and_then(http_status);
        if http_code.is_some() && self.inner_status.is_none() {
            self.inner_status = http_code;
        }
        // TGI-style `error_type` beside a message names an error.
        let typed = map
            .get("error_type")
            .and_then(Value::as_str)
            .is_some_and(|t| !t.trim().is_empty());
        let failed = says_failed(map);
        if (failed_code || failed_status || http_code.is_some() || typed || failed) && has_text {
            self.has_error_envelope = true;
        }
        // `{"code": 429, "msg": "...", "success": false}` inside a 200: a failing code that is an
        // HTTP status of one meaning is the status the relay meant. Not 400 or 500, which relays
        // put on any failure (`{"code": 500, "message": "参数校验失败: ..."}`), nor one of their
        // own (455).
        const MEANT: &[u16] = &[401, 402, 403, 404, 408, 413, 429, 502, 503, 504, 529];
        if failed_code && has_text && self.inner_status.is_none() {
            self.inner_status = map
                .get("code")
                .and_then(http_status)
                .filter(|s| MEANT.contains(s));
        }
        // WeChat-style `{"errcode": 40001, "errmsg": "..."}`, `{"ret": -1, "msg": "..."}`,
        // `{"errno": 2, ...}`, `{"err_no": 3305, ...}` (0: success).
        for field in ["errcode", "ret", "errno", "err_no"] {
            if let Some(code) = failing_code(map, field) {
                self.has_error_envelope = true;
                self.push_code(field, code);
            }
        }
        // Zalo's `{"error": -216, "message": "Access token is invalid"}`: a number in `error`
        // beside a message (0: success).
        if map.get("error").is_some_and(Value::is_number) && has_text {
            if let Some(code) = failing_code(map, "error") {
                self.has_error_envelope = true;
                self.push_code("error", code);
            }
        }
        // A body that says it failed in words no reader knows the keys of (`{"status": false,
        // "kode": "...", "pesan": "..."}`): its sentences are read (`classify::evidence_of`).
        // Not an API resource fetched by its id (`"object": "thread.run"`, `"batch"`): the job
        // failed, the call that fetched it did not.
        if failed && !has_text && !map.contains_key("object") {
            self.said_failed = true;
        }
        // `{"code": 24, "description": "可能包含敏感词"}` (midjourney-proxy, Telegram-style APIs).
        if failed_code || http_code.is_some() {
            if let Some(Value::String(description)) = map.get("description") {
                self.has_error_envelope = true;
                self.push_message(description);
            }
        }
        if self.has_error_envelope {
            self.push_reasons(map);
        }
        // An exception serialized with its class as a field (Make's `{"type": "RateLimitError",
        // "message": "[429] ..."}`, a JavaScript error's `{"name": "AxiosError", "message":
        // ...}`): its class is a code, where no envelope of a known shape said so (vLLM's
        // `{"object": "error", "type": "InternalServerError"}` says less than its words).
        let class = ["type", "name"].iter().find_map(|k| {
            map.get(*k)
                .and_then(Value::as_str)
                .filter(|t| error_class_name(t))
        });
        if let (Some(class), true, false) = (
            class,
            map.get("message").is_some_and(Value::is_string),
            self.has_error_envelope,
        ) {
            self.has_error_envelope = true;
            self.push_code("type", class.to_owned());
        }
        // Bedrock and Cohere errors are a lone `message`, FastAPI's a lone `detail`, Go
        // services' a lone `err`; no success body has that shape. Nor has one whose other
        // fields are all empty (`{"reply": null, "err": "Monthly allowance used up."}`), unless
        // one of them is an error field saying there is none (`{"error_type": null,
        // "message": "..."}` is a success's note).
        let empty = |v: &Value| match v {
            Value::Null | Value::Bool(false) => true,
            Value::String(s) => s.is_empty(),
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
            Value::Number(_) | Value::Bool(true) => false,
        };
        let lone = ["message", "detail", "err"]
            .into_iter()
            .find(|k| map.get(*k).is_some_and(Value::is_string));
        // An empty error field beside it says there is none.
        let no_error_said = |k: &str| k != "err" && map.keys().any(|key| key.contains("err"));
        let alone = |k: &str| {
            map.len() == 1
                || !no_error_said(k)
                    && map
                        .iter()
                        .all(|(key, v)| if key == k { !empty(v) } else { empty(v) })
        };
        if lone.is_some_and(alone) {
            self.has_error_envelope = true;
        }
    }

    /// A body embedded in the wrapper's own words (FastAPI's `{"detail": "openai.
    /// BadRequestError: Error code: 400 - {...}"}`): its codes outrank the wrapper's. Also
    /// JavaScript's `cause` beside the wrapper's message ("LLM provider error").
    fn read_top_level_fields(&mut self, map: &Map<String, Value>, depth: usize) {
        // The words around an embedded body, without it, as `read_error_object` reads them.
        let mut own_words: [Option<Cow<'_, str>>; EMBEDDING_FIELDS.len()] = Default::default();
        if depth < MAX_NESTING {
            for (field, words) in EMBEDDING_FIELDS.iter().zip(&mut own_words) {
                if let Some(Value::String(text)) = map.get(*field) {
                    *words = Some(self.read_embedded(text, depth));
                }
            }
            // OpenRouter's error printed without its `error` wrapper (`{"message": "Provider
            // returned error", "code": 400, "metadata": {"raw": "..."}}`): the provider's own
            // answer, read first as under the wrapper.
            if map.get("message").is_some_and(Value::is_string) {
                self.read_passed_on_raw(map, depth);
            }
        }
        for field in [
            "code",
            "error_code",
            "error_type",
            "status",
            "__type",
            "errorCode",
            "ErrorCode",
        ] {
            if let Some(code) = map.get(field).and_then(code_text) {
                self.push_code(static_field(field), code);
            }
        }
        for field in [
            "message",
            // AWS's and .NET's `{"ErrorCode": ..., "Message": ...}` (SageMaker, ...).
            "Message",
            "error_msg",
            "msg",
            "errmsg",
            "err_msg",
            "detail",
            "errorMessage",
            "ErrorMessage",
            "errorMsg",
            "errMsg",
            "error_message",
            // The AI SDK's UI message stream: `{"type": "error", "errorText": "..."}`.
            "errorText",
            // OAuth-style `{"error": "prompt_rejected", "error_description": "..."}`.
            "error_description",
            "errorDescription",
            // Scaleway's `help_message` beside a terse `message`.
            "help_message",
            "err",
            // Telegram-style `{"ok": false, "error_code": 403, "description": "..."}`.
            "description",
        ] {
            let embedding = EMBEDDING_FIELDS.iter().position(|f| *f == field);
            match embedding
                .and_then(|i| own_words.get_mut(i))
                .and_then(Option::take)
            {
                Some(words) => self.push_message(&words),
                None => {
                    if let Some(Value::String(message)) = map.get(field) {
                        self.push_message(message);
                    }
                }
            }
        }
        // A sentence beside the failure (`{"success": false, "reason": "Nothing left on your
        // prepaid plan"}`, `{"error": "Internal Server Error", "details": "LLM provider call
        // failed with status code of 408"}`, `"cause": "LLMError: input length 210000 exceeds
        // ..."`, `"inner": "AuthenticationError: provider rejected our credential"`); a code
        // there (`"reason": "INVALID_ARGUMENT"`) is not words.
        for field in ["reason", "details", "cause", "inner"] {
            if let Some(Value::String(text)) = map.get(field) {
                if text.trim().contains(' ') {
                    self.push_message(text);
                }
            }
        }
    }

    /// A task or job that failed says why in a field of its own (`"failure"`,
    /// `"failure_reason"`, `"task_status_msg"`), an `error` string (RunPod, the upstream's
    /// body as JSON) or `details.error`; one that ran out of time has only its status
    /// (`"status": "TIMED_OUT"`).
    fn read_failed_task(&mut self, map: &Map<String, Value>, depth: usize) {
        let failed = says_failed(map);
        let timed_out = timed_out(map);
        if timed_out || failed {
            let details = map.get("details").and_then(|d| d.get("error"));
            let texts = TASK_FAILURE_TEXT
                .iter()
                .chain(&["error"])
                .filter_map(|field| map.get(*field))
                .chain(details)
                .filter_map(Value::as_str)
                .filter(|text| !text.is_empty());
            for text in texts {
                self.has_error_envelope = true;
                self.read_text(text, depth);
            }
            if timed_out {
                self.has_error_envelope = true;
                self.push_code("status", "timed_out".to_owned());
            }
            // Blip's `{"status": "failure", "reason": {"code": 67, "description": "..."}}`.
            if let Some(Value::Object(reason)) = map.get("reason") {
                self.has_error_envelope = true;
                self.read_error_object(reason, depth);
            }
        }
    }

    /// A task's result that failed, one level down: DashScope's `{"output": {"task_status":
    /// "FAILED", "code": ..., "message": ...}}`, task APIs' `{"data": {"status": "failed",
    /// "error": ...}}`.
    fn read_failed_inner(&mut self, map: &Map<String, Value>, depth: usize) {
        if depth < MAX_NESTING {
            // Tencent Cloud's task status: `{"Response": {"Status": "FAIL", "ErrorCode": ...}}`;
            // Novita's `{"task": {"status": "TASK_STATUS_FAILED", "reason": "..."}}`.
            // ServiceNow's `{"result": {"status": "error", "error": {...}}}`.
            for field in ["output", "data", "Response", "task", "result"] {
                if let Some(Value::Object(inner)) = map.get(field) {
                    if says_failed(inner) {
                        self.read_object(inner, depth + 1);
                    }
                }
            }
        }
    }

    /// A stop reason that is a refusal or a failure (`REFUSED_STOPS`, `FAILED_STOPS`).
    fn read_refused_stop(&mut self, map: &Map<String, Value>, depth: usize) {
        if let Some((field, reason)) = refused_stop(map, depth == 0) {
            self.has_error_envelope = true;
            self.push_code(field, reason.to_owned());
        }
    }

    /// watsonx.ai: a generation not performed because its HAP or PII moderation flagged the
    /// text: `{"results": [{"generated_text": "", "moderations": {"hap": [{"input": true,
    /// ...}]}}]}`.
    fn read_moderations(&mut self, map: &Map<String, Value>, _: usize) {
        let moderated = map
            .get("results")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .take(MAX_ITEMS)
            .any(|result| {
                let empty = result
                    .get("generated_text")
                    .and_then(Value::as_str)
                    .is_some_and(|t| t.trim().is_empty());
                let flagged = result
                    .get("moderations")
                    .and_then(Value::as_object)
                    .is_some_and(|m| {
                        m.values()
                            .any(|v| v.as_array().is_some_and(|a| !a.is_empty()))
                    });
                empty && flagged
            });
        if moderated {
            self.has_error_envelope = true;
            self.push_code("results.moderations", "moderation".to_owned());
        }
    }

    /// Vertex's image and video models report what their safety filters withheld:
    /// `raiMediaFilteredReasons` (Veo, inside an operation's `response`) and Imagen's
    /// predictions' `raiFilteredReason`.
    /// The Gemini API nests Veo's under `response.generateVideoResponse`.
    fn read_filtered_media(&mut self, map: &Map<String, Value>, _: usize) {
        let response = map.get("response").and_then(Value::as_object);
        let media = response
            .and_then(|r| r.get("generateVideoResponse"))
            .and_then(Value::as_object)
            .or(response)
            .unwrap_or(map);
        let filtered = media
            .get("raiMediaFilteredReasons")
            .and_then(Value::as_array)
            .and_then(|r| r.first())
            .or_else(|| {
                media
                    .get("predictions")
                    .and_then(Value::as_array)
                    .and_then(|p| p.first())
                    .and_then(|p| p.get("raiFilteredReason"))
            });
        if let Some(Value::String(reason)) = filtered {
            self.has_error_envelope = true;
            self.push_code("raiFilteredReason", "content_filtered".to_owned());
            self.push_message(reason);
        }
        // fal's and diffusers' safety checker: `"has_nsfw_concepts": [true]` beside an image it
        // blacked out (diffusers' pipelines name it `nsfw_content_detected`).
        let flagged = ["has_nsfw_concepts", "nsfw_content_detected"]
            .into_iter()
            .find(|k| {
                map.get(*k)
                    .and_then(Value::as_array)
                    .is_some_and(|flags| flags.iter().any(|f| f.as_bool() == Some(true)))
            });
        if let Some(key) = flagged {
            self.has_error_envelope = true;
            self.push_code(key, "content_filtered".to_owned());
        }
    }

    /// A task's status that is a refusal (BFL's `"status": "Content Moderated"` and
    /// "Request Moderated"), where an answer would be.
    fn read_moderated_status(&mut self, map: &Map<String, Value>, _: usize) {
        if let Some(Value::String(status)) = map.get("status") {
            if status.len() <= 64 && concepts::refusal(&normalize(status)).is_some() {
                self.has_error_envelope = true;
                self.push_message(status);
            }
        }
    }

    /// OpenAI refuses a structured answer in `refusal` (`message.refusal`, stream deltas'
    /// `delta.refusal`; the Responses API's `response.refusal.delta` events); an empty or
    /// null `refusal` is every ordinary answer's.
    fn read_refusal(&mut self, map: &Map<String, Value>, _: usize) {
        let choices = map.get("choices").and_then(Value::as_array);
        let refused = choices.into_iter().flatten().take(MAX_ITEMS).any(|c| {
            ["delta", "message"].iter().any(|k| {
                c.get(*k)
                    .and_then(|m| m.get("refusal"))
                    .and_then(Value::as_str)
                    .is_some_and(|r| !r.is_empty())
            })
        }) || map
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.starts_with("response.refusal."));
        if refused {
            self.has_error_envelope = true;
            self.push_code("refusal", "refusal".to_owned());
        }
    }

    /// OpenRouter ends a stream that failed midway with `finish_reason: "error"`; SGLang an
    /// aborted one with `finish_reason: {"type": "abort", "message": "KV cache pool is full ..."}`
    /// (in `choices[]`, or in its native answer's `meta_info`).
    fn read_failed_stop(&mut self, map: &Map<String, Value>, _: usize) {
        let choices = map.get("choices").and_then(Value::as_array);
        let stops = choices
            .into_iter()
            .flatten()
            .take(MAX_ITEMS)
            .filter_map(|c| c.get("finish_reason"))
            .chain(map.get("meta_info").and_then(|m| m.get("finish_reason")));
        for stop in stops {
            match stop {
                Value::String(reason) if reason == "error" => {
                    self.has_error_envelope = true;
                    self.push_code("finish_reason", "error".to_owned());
                }
                Value::Object(abort)
                    if abort.get("type").and_then(Value::as_str) == Some("abort") =>
                {
                    if let Some(Value::String(text)) = abort.get("message") {
                        self.has_error_envelope = true;
                        self.push_code("finish_reason", "abort".to_owned());
                        self.push_message(text);
                    }
                }
                _ => {}
            }
        }
    }

    /// The completion's text: a gateway that blocks a request as a completion under an
    /// error status gives its reason there.
    fn read_completion(&mut self, map: &Map<String, Value>) {
        let choices = map.get("choices").and_then(Value::as_array);
        if self.completion.is_none() {
            let content = choices
                .and_then(|c| c.first())
                .and_then(|c| c.get("message"))
                .and_then(|m| m.get("content"))
                .and_then(Value::as_str);
            // A block message is a sentence; a long completion is an answer, not copied.
            self.completion = content
                .filter(|c| c.len() <= PLAIN_LINE_MAX)
                .map(str::to_owned);
            self.unsigned_completion = self.completion.is_some() && unsigned(map);
        }
    }

    /// Gemini answers 200 with `promptFeedback.blockReason` and no candidates when it blocks
    /// a prompt.
    fn read_blocked_prompt(&mut self, map: &Map<String, Value>, _: usize) {
        // Also as google-genai's Python SDK dumps its response (`prompt_feedback.block_reason`).
        if let Some(reason) = map
            .get("promptFeedback")
            .or_else(|| map.get("prompt_feedback"))
            .and_then(|f| f.get("blockReason").or_else(|| f.get("block_reason")))
            .and_then(Value::as_str)
        {
            let answered = map
                .get("candidates")
                .and_then(Value::as_array)
                .is_some_and(|c| !c.is_empty());
            if !answered && !reason.eq_ignore_ascii_case("block_reason_unspecified") {
                self.has_error_envelope = true;
                self.push_code("promptFeedback.blockReason", reason.to_owned());
                // Whatever the reason (`OTHER` too), a blocked prompt is a refusal.
                self.push_code("promptFeedback", "prompt_blocked".to_owned());
            }
        }
    }

    /// Relays that move the upstream's reason into `param` ("message": "Param Incorrect",
    /// "param": "max_tokens is too large: ..."), and envelopes that give it as a `reason` (IBM:
    /// `extensions.reason`): a sentence there is a message; a field name (`messages[2].content`)
    /// or a code (`RATE_LIMIT_EXCEEDED`) is not.
    fn push_reasons(&mut self, envelope: &Map<String, Value>) {
        // `{"result": "error", "reason": "Insufficient credits"}`: a reason in words is the
        // message of an envelope that has no other (a code-like reason has no space).
        let alone = !["message", "msg", "errmsg", "error_msg", "detail", "error"]
            .iter()
            .any(|k| envelope.contains_key(*k));
        let extensions = envelope.get("extensions").and_then(Value::as_object);
        for (text, alone) in [
            (envelope.get("param"), false),
            (envelope.get("reason"), alone),
            // `{"ret": -2, "info": "帳戶已欠費停機"}`: a failing `ret`'s words.
            (envelope.get("info"), alone),
            (envelope.get("cause"), false),
            (extensions.and_then(|e| e.get("reason")), false),
        ] {
            if let Some(Value::String(text)) = text {
                if is_sentence(text) || (alone && text.trim().contains(' ')) {
                    self.push_message(text);
                }
            }
        }
    }

    fn read_error_object(&mut self, error: &Map<String, Value>, depth: usize) {
        // A wrapper's own words are generic (`api_error`, "Provider returned error"): the body
        // it embeds in a message (JSON, or an SDK's Python repr, often after "Error from
        // provider(429): ") is read first, so that its codes outrank the wrapper's.
        // The words of each without the body they embed, read below as their messages.
        let mut own_words: [Option<Cow<str>>; 2] = [None, None];
        if depth < MAX_NESTING {
            for (field, words) in ["message", "detail"].into_iter().zip(&mut own_words) {
                if let Some(Value::String(text)) = error.get(field) {
                    *words = Some(self.read_embedded(text, depth));
                }
            }
        }
        // JSON-RPC's `data`, where a bridge says what went wrong under a bare "Internal error"
        // (`{"code": -32603, "message": "Internal error", "data": {"details": "..."}}`).
        let data = match error.get("data") {
            Some(Value::Object(data)) => ["details", "detail", "message"]
                .iter()
                .find_map(|k| data.get(*k).and_then(Value::as_str)),
            Some(Value::String(text)) => Some(text.as_str()),
            _ => None,
        };
        if let Some(text) = data.filter(|t| !t.is_empty()) {
            self.read_text(text, depth);
        }
        // ... or passes the upstream's answer on there (`"data": {"upstream": "deepseek",
        // "status": 402, "body": "{...}"}`).
        if let Some(Value::Object(data)) = error.get("data") {
            self.read_upstream_body(data, depth);
        }
        // `{"error": {"message": "upstream responded 429", "upstream_status": 429, "body":
        // "{...}"}}`: the upstream's body beside the wrapper's words.
        self.read_upstream_body(error, depth);
        if self.inner_status.is_none() {
            self.inner_status = ["code", "status"]
                .iter()
                .find_map(|f| error.get(*f).and_then(http_status));
        }
        for (field, name) in [
            ("type", "error.type"),
            ("code", "error.code"),
            ("status", "error.status"),
            ("Code", "error.code"),
        ] {
            if let Some(code) = error.get(field).and_then(code_text) {
                self.push_code(name, code);
            }
        }
        // `raw_message`: the upstream's own words beside a task API's generic message
        // (PiAPI's "failed to generate image" over "You have run out of fast hours").
        // A gateway's `{"error": {"error": "Too many tokens, ...", "error_code": 4001}}`.
        for field in [
            "message",
            "Message",
            "msg",
            // VK's `{"error": {"error_code": 6, "error_msg": "Too many requests per second"}}`.
            "error_msg",
            "detail",
            "description",
            "raw_message",
            "error",
        ] {
            match error.get(field) {
                // An enum's name in `error` (Cursor's `"error": "ERROR_RATE_LIMITED_CHANGEABLE"`
                // over "You've hit your usage limit"): a code, whose words are no message.
                Some(Value::String(name)) if field == "error" && is_enum_name(name) => {
                    self.push_code("error.error", name.clone());
                }
                Some(Value::String(message)) => {
                    let words = match field {
                        "message" => own_words[0].take(),
                        "detail" => own_words[1].take(),
                        _ => None,
                    };
                    self.push_message(words.as_deref().unwrap_or(message));
                    if let Some(code) = leading_code(message) {
                        self.push_code("message.code", code.to_owned());
                    }
                }
                // LiteLLM's guardrails put an object in `message` (`{"error": "Violated
                // guardrail policy", ...}`): read as a body of its own.
                Some(Value::Object(inner)) if depth < MAX_NESTING => {
                    self.read_object(inner, depth + 1);
                }
                _ => {}
            }
        }
        // A JavaScript error passed on by its name alone (`{"name": "ProviderModelNotFoundError",
        // "data": {...}}`): the name's words speak.
        if !error.contains_key("message") {
            if let Some(Value::String(name)) = error.get("name") {
                self.push_message(name);
            }
        }
        self.push_reasons(error);
        // Azure's content filter: `innererror.code` / `inner_error.code`.
        for inner in ["innererror", "inner_error"] {
            if let Some(code) = error
                .get(inner)
                .and_then(|i| i.get("code"))
                .and_then(code_text)
            {
                self.push_code("error.innererror.code", code);
            }
        }
        // GraphQL's `extensions.code` (`"RATE_LIMITED"`) beside the error's message.
        if let Some(code) = error
            .get("extensions")
            .and_then(|e| e.get("code"))
            .and_then(code_text)
        {
            self.push_code("extensions.code", code);
        }
        // Cursor's `details` object: `{"title": "You've hit your usage limit", "detail": "..."}`.
        if let Some(Value::Object(details)) = error.get("details") {
            for field in ["title", "detail", "message"] {
                if let Some(Value::String(text)) = details.get(field) {
                    self.push_message(text);
                }
            }
        }
        // Google `details[]`: ErrorInfo.reason, QuotaFailure.violations[].quotaId;
        // `errors[].reason` in older Google envelopes.
        for list in ["details", "errors"] {
            for detail in error
                .get(list)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .take(MAX_ITEMS)
            {
                if let Some(reason) = detail.get("reason").and_then(code_text) {
                    self.push_code("error.details.reason", reason);
                }
                // Connect's error details carry their message decoded in `debug` (Cursor's
                // `{"error": "ERROR_USAGE_LIMIT_EXCEEDED", "details": {"title": ...}}`).
                if let (Some(Value::Object(debug)), true) =
                    (detail.get("debug"), depth < MAX_NESTING)
                {
                    self.read_error_object(debug, depth + 1);
                }
                // A validation error in FastAPI's shape under a generic message (`"message":
                // "invalid input error", "details": [{"loc": [...], "msg": "This model's
                // maximum context length is ..."}]`).
                if let Some(Value::String(message)) = detail.get("msg") {
                    self.push_message(message);
                }
                self.read_inner_error(detail);
                // ErrorInfo's quota metadata (`"quota_limit":
                // "GenerateContentRequestsPerMinutePerProjectPerRegion", "quota_limit_value":
                // "0"`), as QuotaFailure's violations (`quotaId`, `quotaValue`).
                if let Some(metadata) = detail.get("metadata") {
                    self.read_quota_limit(metadata, "quota_limit", "quota_limit_value");
                }
                let violations = detail.get("violations").and_then(Value::as_array);
                for violation in violations.into_iter().flatten() {
                    for key in ["quotaId", "quotaMetric"] {
                        self.read_quota_limit(violation, key, "quotaValue");
                    }
                    // `{"subject": "project:...", "description": "Daily Limit Exceeded"}`:
                    // the violation in words, where no id names it.
                    if let Some(text) = violation.get("description").and_then(Value::as_str) {
                        self.push_message(text);
                    }
                    if violation
                        .get("quotaDimensions")
                        .and_then(|d| d.get("model"))
                        .is_some_and(|m| m.as_str().is_some_and(|m| !m.is_empty()))
                    {
                        self.quota_per_model = true;
                    }
                }
            }
        }
        if depth < MAX_NESTING {
            self.read_passed_on_raw(error, depth);
        }
    }

    /// OpenRouter passes the provider's own answer in `metadata.raw` (a string, often JSON).
    fn read_passed_on_raw(&mut self, error: &Map<String, Value>, depth: usize) {
        let raw = error
            .get("metadata")
            .and_then(|m| m.get("raw"))
            .and_then(Value::as_str);
        if let Some(raw) = raw {
            self.read_body(raw.as_bytes(), depth + 1);
        }
    }

    /// A text that is the error and may carry the upstream's body: the body is read first, so
    /// that its codes outrank the text's, then the text.
    fn read_text(&mut self, text: &str, depth: usize) {
        let words = if depth < MAX_NESTING {
            self.read_embedded(text, depth)
        } else {
            Cow::Borrowed(text)
        };
        self.push_message(&words);
    }

    /// Reads an error body embedded in a message: Vertex's Anthropic JSON, a relay's
    /// `Error from provider(429): {...}` (a stack trace may follow), an SDK's
    /// `Error code: 429 - {'error': {...}}`. A status in the words before it counts as the
    /// inner status unless the embedded body states its own.
    ///
    /// Returns the text's own words: the text without the body when the body said something
    /// (its words are messages already; read again in the wrapper's text, its
    /// `rate_limit_error` would speak of a rate over its own "usage limit reached"), else the
    /// whole text.
    fn read_embedded<'t>(&mut self, text: &'t str, depth: usize) -> Cow<'t, str> {
        // A body encoded once more, as a JSON string (`"\"{\\\"error\\\": ...}\""`).
        if text.starts_with('"') {
            if let Ok(Value::String(inner)) = serde_json::from_str::<Value>(text) {
                return Cow::Owned(self.read_embedded(&inner, depth).into_owned());
            }
        }
        let Some(start) = text.find('{') else {
            return Cow::Borrowed(text);
        };
        let (before, body) = text.split_at(start);
        let value =
            first_json_object(body).or_else(|| first_json_object(&python_repr_as_json(body)));
        let Some(Value::Object(inner)) = value else {
            return Cow::Borrowed(text);
        };
        let read = self.items_read();
        self.read_object(&inner, depth + 1);
        let said = self.items_read() != read;
        // An app's own error object with nothing but its type and figures (LibreChat's
        // `{"type": "token_balance", "balance": 214, "tokenCost": 6250}`): the type is its code,
        // and the text around it is still read.
        if !said {
            if let Some(kind) = inner.get("type").and_then(Value::as_str).filter(|t| {
                !["error", "message", "object", "text"].contains(t)
                    && (is_code_word(t)
                        || (t.len() >= 4 && t.bytes().all(|b| b.is_ascii_lowercase())))
            }) {
                self.push_code("type", kind.to_owned());
            }
        }
        if self.inner_status.is_none() {
            self.inner_status = status_in_words(before);
        }
        match object_end(body).and_then(|end| body.get(end..)) {
            Some(after) if said && after.trim().is_empty() => Cow::Borrowed(before),
            // A sentence's end where the body was: words on either side are not near.
            Some(after) if said => Cow::Owned(format!("{before}. {after}")),
            _ => Cow::Borrowed(text),
        }
    }

    /// [`Self::read_embedded`] for a text that is not itself an error's message: it makes the
    /// answer an error envelope only when a body in it said something.
    fn read_embedded_answer(&mut self, text: &str, depth: usize) {
        let before = self.items_read();
        self.read_embedded(text, depth);
        if self.items_read() != before {
            self.has_error_envelope = true;
        } else {
            // The provider's answer in words, not as a body: "upstream llm error
            // (gemini-2.5-flash): 429 RESOURCE_EXHAUSTED. You exceeded your current quota".
            let normalized = normalize(text);
            if relays_a_model_call(&normalized) {
                self.has_error_envelope = true;
                if self.inner_status.is_none() {
                    self.inner_status = status_named_in(&normalized);
                }
                self.push_message(text);
            }
        }
    }

    /// How many messages and codes are read so far: a reader that compares them before and
    /// after knows whether what it read said something.
    fn items_read(&self) -> (usize, usize) {
        (self.messages.len(), self.codes.len())
    }

    fn push_code(&mut self, field: &'static str, value: String) {
        if self.codes.len() >= MAX_ITEMS {
            return;
        }
        let value = value.trim().to_ascii_lowercase();
        if !value.is_empty() && !self.codes.iter().any(|c| c.value == value) {
            self.codes.push(Code { field, value });
        }
    }

    fn push_message(&mut self, message: &str) {
        if self.messages.len() >= MAX_ITEMS {
            return;
        }
        // LiteLLM ends each error it passes on with the model group it routed to ("...
        // Received Model Group=gpt-5\nAvailable Model Group Fallbacks=None"): its words name a
        // model whatever the error was about. What follows them (the fallback's own error)
        // is kept.
        let without_trailer;
        let message = match without_litellm_trailer(message) {
            Some(text) => {
                without_trailer = text;
                without_trailer.as_str()
            }
            None => message,
        };
        // Bedrock heads the errors of the model it invoked with "The model returned the
        // following errors: " ("... Provided S3Location not found"): the wrapper names a model
        // whatever the error was about; the error is what follows.
        let without_lead;
        let message = if message.contains(BEDROCK_LEAD) {
            without_lead = message.replace(BEDROCK_LEAD, "");
            without_lead.as_str()
        } else {
            message
        };
        // An SDK's exception named in the text (boto's "An error occurred (ThrottlingException)
        // when calling ...", Java's `...bedrockruntime.model.ThrottlingException: ...`): its
        // name is a code.
        if let Some(name) = exception_named_in(message) {
            self.push_code("message.exception", name.to_owned());
        }
        // A code that heads the text ("RATE_LIMIT: only 1 in-flight request ...",
        // "deadline_exceeded: inference call to shard-7 ..."), or a logfmt line's
        // (`error=context_overflow prompt_tokens=140112`).
        if let Some(code) = code_heading(message).or_else(|| logfmt_code(message)) {
            self.push_code("message.prefix", code.to_owned());
        }
        // grpc-go's status in the text ("rpc error: code = PermissionDenied desc = ..."): the
        // canonical code, in Google's spelling (`permission_denied`).
        if let Some(code) = grpc_code_in(message) {
            self.push_code("message.grpc", code);
        }
        // Google's Go SDK prints its `APIError` as "Error 429, Message: ..., Status:
        // RESOURCE_EXHAUSTED, Details: [map[... quotaId:GenerateRequestsPerMinute...]]": the
        // status is a code, the quota ids are what the JSON's details would give.
        if let Some(name) = canonical_status_in(message) {
            self.push_code("message.status", name.to_owned());
            for id in go_map_values(message, "quotaId:") {
                if self.quota_ids.len() < MAX_ITEMS {
                    self.quota_ids.push(id.to_ascii_lowercase());
                }
            }
        }
        let normalized = normalize(message);
        if self.inner_status.is_none() {
            self.inner_status = status_named_in(&normalized)
                .or_else(|| sdk_error_status(message))
                .or_else(|| api_core_status(message));
        }
        if !normalized.is_empty() && !self.messages.contains(&normalized) {
            self.messages.push(normalized);
            // An exception's name speaks too ("raised ModelNotReady", "InsufficientQuotaError"):
            // its words, split, are read as one more message.
            if let Some(words) = camel_words(message) {
                self.push_message(&words);
            }
        }
    }

    /// Reads the sentences of a JSON body whose keys no reader knows (a few levels down, a few
    /// sentences at most) as its messages. Only for error statuses: a success's sentences are
    /// its content.
    pub fn read_sentences(&mut self) {
        fn walk(value: &Value, depth: usize, out: &mut Vec<String>) {
            match value {
                Value::String(text) if is_sentence(text) && out.len() < 4 => {
                    out.push(text.clone());
                }
                Value::Object(map) if depth < 5 => {
                    map.values().for_each(|v| walk(v, depth + 1, out));
                }
                Value::Array(items) if depth < 5 => {
                    items.iter().take(4).for_each(|v| walk(v, depth + 1, out));
                }
                _ => {}
            }
        }
        let mut sentences = Vec::new();
        if let Some(json) = &self.json {
            walk(json, 0, &mut sentences);
        }
        for sentence in sentences {
            // "O provedor retornou erro 429: {...}": the upstream's body inside the sentence.
            self.read_text(&sentence, 0);
        }
    }

    /// Adds a code from a response header (e.g. Bedrock's `x-amzn-errortype`).
    pub fn push_header_code(&mut self, field: &'static str, value: &str) {
        self.push_code(field, value.to_owned());
    }
}

/// Where task and job APIs say why a task failed.
const TASK_FAILURE_TEXT: &[&str] = &[
    "failure",
    "failure_reason",
    "failureReason",
    "task_status_msg",
    "fail_reason",
    // midjourney-proxy's `failReason`; task APIs' `errorMessage` (Suno relays, Tencent's
    // `ErrorMessage` beside `"Status": "FAIL"`).
    "failReason",
    "errorMessage",
    "error_message",
    "ErrorMessage",
    "reason",
    // LibreChat's `{"error": true, "text": "{\"type\": \"token_balance\", ...}"}`.
    "text",
];

/// A task or job whose status says it ran out of time (RunPod `TIMED_OUT`).
fn timed_out(map: &Map<String, Value>) -> bool {
    ["status", "state", "task_status"].iter().any(|k| {
        map.get(*k).and_then(Value::as_str).is_some_and(|s| {
            s.eq_ignore_ascii_case("timed_out") || s.eq_ignore_ascii_case("timeout")
        })
    })
}

/// A code string that means success: empty, all zeros, `200`, `ok`, `success`.
fn success_code(code: &str) -> bool {
    let code = code.trim();
    code.bytes().all(|b| b == b'0')
        || ["200", "ok", "success"]
            .iter()
            .any(|w| code.eq_ignore_ascii_case(w))
}

/// Whether `text` ends with `suffix`, ASCII case ignored.
fn ends_with_ignore_case(text: &str, suffix: &str) -> bool {
    let text = text.as_bytes();
    text.len()
        .checked_sub(suffix.len())
        .and_then(|from| text.get(from..))
        .is_some_and(|tail| tail.eq_ignore_ascii_case(suffix.as_bytes()))
}

/// Whether a body says in so many words that the call succeeded: its message or status is
/// `success`, `succeeded`, `ok`, `成功` (`操作成功`, `请求成功`), or `"success": true`; or
/// its message's first sentence ends so ("Statement executed successfully.", "Asynchronous
/// execution in progress. Use the query id ...": Snowflake's SQL API codes `090001`, `333334`).
fn says_succeeded(map: &Map<String, Value>) -> bool {
    let word = |key: &str| {
        map.get(key).and_then(Value::as_str).is_some_and(|s| {
            let s = s.trim().trim_end_matches(['.', '!', '。', '!']);
            let first = s.split(['.', '。']).next().unwrap_or(s).trim();
            ["success", "succeeded", "succeed", "successful", "ok"]
                .iter()
                .any(|w| s.eq_ignore_ascii_case(w))
                || (s.chars().count() <= 6 && s.ends_with("成功"))
                || ends_with_ignore_case(first, " successfully")
                || ends_with_ignore_case(first, " in progress")
        })
    };
    map.get("success").and_then(Value::as_bool) == Some(true)
        // midjourney-proxy's `{"code": 1, "description": "提交成功"}` (submitted).
        || ["msg", "message", "status", "errmsg", "status_msg", "description"]
            .iter()
            .any(|k| word(k))
}

/// A key's bytes without `_` and `-`, ASCII lowercased (`rtn_cd` as `rtncd`, `respCode` as
/// `respcode`), compared without allocating: this runs on every success body's keys.
fn key_letters(key: &str) -> impl DoubleEndedIterator<Item = u8> + '_ {
    key.bytes()
        .filter(|b| !matches!(b, b'_' | b'-'))
        .map(|b| b.to_ascii_lowercase())
}

/// Whether a key's letters (`key_letters`) end with `suffix` (lowercase ASCII).
fn key_ends_with(key: &str, suffix: &str) -> bool {
    let mut letters = key_letters(key).rev();
    suffix.bytes().rev().all(|b| letters.next() == Some(b))
}

/// Whether a key's letters (`key_letters`) are one of `words` (lowercase ASCII).
fn key_is(key: &str, words: &[&str]) -> bool {
    words.iter().any(|w| key_letters(key).eq(w.bytes()))
}

/// Whether a field of a home-grown envelope is a code or a result flag that says the call
/// failed: a number other than 0 and 200, a code with a digit (`"E102"`, not `"0000"`) or in
/// capitals joined by `-` or `_` (`"AX-QUOTA"`), or `false`. A word is no error code
/// (`"languageCode": "en"`, `"currencyCode": "USD"`, a job's `"state": "queued"`).
fn home_grown_failure(key: &str, value: &Value) -> bool {
    let code_key = key_ends_with(key, "code")
        || key_ends_with(key, "cd")
        || key_is(key, &["rc", "ret", "retcode", "state", "flag", "result"]);
    code_key
        && match value {
            Value::Number(n) => n.as_i64().is_some_and(|n| n != 0 && n != 200),
            Value::String(s) => {
                let digit = s.bytes().any(|b| b.is_ascii_digit());
                let joined = s.bytes().any(|b| b == b'-' || b == b'_')
                    && s.bytes().all(|b| {
                        b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-' || b == b'_'
                    });
                (digit || joined) && !success_code(s)
            }
            Value::Bool(flag) => !flag,
            _ => false,
        }
}

/// Whether a code or a result word says success: a success code, or `S`, `Y`, `done`,
/// `成功`, `성공` and the like (`{"resultCode": "S", "resultMsg": "success"}`).
fn success_word(text: &str) -> bool {
    const SUCCESS: &[&str] = &[
        "s",
        "y",
        "succeeded",
        "done",
        "completed",
        "normal",
        "true",
        "成功",
        "성공",
        "正常",
    ];
    success_code(text) || SUCCESS.iter().any(|w| text.trim().eq_ignore_ascii_case(w))
}

/// Whether a field of a home-grown envelope is named for its words (`respDesc`, `rtn_msg`,
/// `returnMessage`, `rm`, `note`).
fn words_key(key: &str) -> bool {
    ["msg", "message", "desc", "description"]
        .iter()
        .any(|end| key_ends_with(key, end))
        || key_is(key, &["rm", "note", "info"])
}

/// The words Bedrock puts before the errors of the model it invoked.
const BEDROCK_LEAD: &str = "The model returned the following errors: ";

/// `message` without LiteLLM's routing lines (`Received Model Group=...`, `Available Model
/// Group Fallbacks=...`), when it has them.
fn without_litellm_trailer(message: &str) -> Option<String> {
    const LINES: [&str; 2] = ["Received Model Group=", "Available Model Group Fallbacks="];
    let start = message.find(LINES[0])?;
    let (head, rest) = message.split_at(start);
    let mut out = head.to_owned();
    for line in rest.split_inclusive('\n') {
        if !LINES.iter().any(|l| line.starts_with(l)) {
            out.push_str(line);
        }
    }
    Some(out)
}

/// Whether a body says in so many words that the call failed: `"success"`, `"ok"`, `"status"`
/// or `"result"` of `false`, `"error": true`, `"status"`, `"state"` or `"result"` of
/// `error`/`fail`/`failed`/`failure`.
fn says_failed(map: &Map<String, Value>) -> bool {
    let flag = |key: &str, failed: bool| map.get(key).and_then(Value::as_bool) == Some(failed);
    let word = |key: &str| {
        map.get(key).and_then(Value::as_str).is_some_and(|s| {
            // And in other words: Japanese systems' `NG`, Indonesian `gagal`.
            [
                "error", "fail", "failed", "failure", "ng", "gagal", "失败", "失敗", "erro", "errore",
                "erreur", "fehler", "ошибка", "błąd", "blad", "hata", "chyba", "fout",
                // Failed or an error in ko, th, ar, vi, fr, it.
                "실패", "ผิดพลาด", "خطأ", "فشل", "lỗi", "thất bại", "échec", "fallito",
                // A request turned away (`{"status": "rejected", "reason": "nsfw", ...}`).
                "rejected", "refused", "denied", "blocked",
            ]
                .iter()
                .any(|w| s.eq_ignore_ascii_case(w))
                // A status that names what failed: `SENSITIVE_WORD_ERROR`,
                // `GENERATE_AUDIO_FAILED`.
                || ["_error", "_failed"]
                    .iter()
                    .any(|w| s.len() > w.len() && ends_with_ignore_case(s, w))
        })
    };
    [
        "success",
        // Portuguese and Spanish envelopes: `{"sucesso": false, "erro": {...}}`; Vietnamese,
        // Indonesian, Turkish, German, French, Polish and Italian ones.
        "sucesso",
        "exito",
        "éxito",
        "thanh_cong",
        "sukses",
        "berhasil",
        "basari",
        "basarili",
        "başarılı",
        "erfolg",
        "succes",
        "succès",
        "sukces",
        "successo",
        // Success in ko, zh/ja, ar.
        "성공",
        "成功",
        "نجاح",
        "ok",
        "status",
        "result",
        "isSuccess",
        "is_success",
        "succeeded",
    ]
    .iter()
    .any(|k| flag(k, false))
        || flag("error", true)
        || flag("failed", true)
        || [
            "status",
            // Tencent Cloud's capitalised keys; status in es, pt, it, fr, ru.
            "Status",
            "estado",
            "stato",
            "statut",
            "статус",
            "state",
            "result",
            // Task APIs (image, video, music): `{"task_status": "FAILED", "message": ...}`.
            "task_status",
            "taskStatus",
            // In-house gateways' own words: `{"outcome": "error", "problem": {...}}`.
            "outcome",
            "response_status",
            // Outcome, result or status in it, ko, ja, zh, th.
            "esito",
            "결과",
            "結果",
            "结果",
            "สถานะ",
        ]
        .iter()
        .any(|k| word(k))
        // `{"meta": {"status": "error"}, "data": null, "notices": [...]}`.
        || map
            .get("meta")
            .and_then(|m| m.get("status"))
            .and_then(Value::as_str)
            .is_some_and(|s| ["error", "failed"].iter().any(|w| s.eq_ignore_ascii_case(w)))
}

/// Whether an object is an error answer of its own: an `error` that holds something, or a
/// `type` or `object` of `"error"`.
fn holds_an_error(map: &Map<String, Value>) -> bool {
    let typed = |k: &str| map.get(k).and_then(Value::as_str) == Some("error");
    typed("type")
        || typed("object")
        || match map.get("error") {
            Some(Value::Object(error)) => !holds_nothing(error),
            Some(Value::String(text)) => !text.trim().is_empty(),
            _ => false,
        }
}

/// Whether an error object says nothing: empty, or only zero codes and empty texts (`{"code":
/// 0, "message": ""}`, which some servers put beside every success).
fn holds_nothing(error: &Map<String, Value>) -> bool {
    error.values().all(|v| match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty() || s.trim() == "0",
        Value::Number(n) => n.as_i64() == Some(0),
        _ => false,
    })
}

/// A reader of one shape of envelope or field, given the object and its nesting depth.
type Reader = fn(&mut Evidence, &Map<String, Value>, usize);

/// "Error" as envelopes in other languages name it (pt, es, de, tr, id, fi, da, no, pl, cs, fr,
/// it, nl, ru, ar, zh, ja, ko, vi).
const LOCAL_ERROR_KEYS: &[&str] = &[
    "erro",
    "fehler",
    "hata",
    "kesalahan",
    "virhe",
    "fejl",
    "feil",
    "błąd",
    "blad",
    "chyba",
    "erreur",
    "errore",
    "fout",
    "ошибка",
    "خطأ",
    "错误",
    "錯誤",
    "エラー",
    "오류",
    "loi",
    // sv, sl, lt, et, lv, hu, ro, bg/sr, hr/sr, uk, fa, he.
    "fel",
    "napaka",
    "klaida",
    "viga",
    "kļūda",
    "hiba",
    "eroare",
    "грешка",
    "greška",
    "помилка",
    "خطا",
    "שגיאה",
    // uz, az, kk.
    "xato",
    "xəta",
    "қате",
    // sw
    "kosa",
];

/// "Code" in those languages.
const LOCAL_CODE_KEYS: &[&str] = &[
    "codigo",
    "código",
    "kod",
    "kode",
    "koodi",
    "kodas",
    "код",
    "رمز",
    "代码",
    "代碼",
    "コード",
    "코드",
    "ma_loi",
    // it, th, tr, nl, de.
    "codice",
    "รหัส",
    "hata_kodu",
    "foutcode",
    "fehlercode",
];

/// "Message" in those languages.
const LOCAL_MESSAGE_KEYS: &[&str] = &[
    "mensagem",
    "mensaje",
    "meldung",
    "nachricht",
    "mesaj",
    "pesan",
    "viesti",
    "besked",
    "melding",
    "komunikat",
    "zpráva",
    "messaggio",
    "bericht",
    "сообщение",
    "رسالة",
    "消息",
    "信息",
    "訊息",
    "メッセージ",
    "메시지",
    "thong_bao",
    // sv, lt, et, lv, hu, ro, bg, hr/sr, uk.
    "meddelande",
    "pranešimas",
    "sõnum",
    "ziņojums",
    "üzenet",
    "mesaj_eroare",
    "съобщение",
    "poruka",
    "повідомлення",
    // th; "content" under a Japanese or Chinese error (`{"エラー": {"コード": "B001", "内容":
    // "..."}}`).
    "ข้อความ",
    "内容",
    // uz, kk.
    "xabar",
    "хабар",
    // The detail or cause beside the error's words (pt, es, fr, it): `{"erro": "Requisição
    // inválida", "detalhe": "This model's maximum context length is 16385 tokens. ..."}`.
    "detalhe",
    "detalhes",
    "detalle",
    "detalles",
    "causa",
    "motivo",
    "détail",
    "dettaglio",
    // sw
    "ujumbe",
];

/// Error envelopes, each a provider's or a family's, read in this order (the first code and
/// the first inner status read win).
const ENVELOPES: &[Reader] = &[
    Evidence::read_error_key,
    Evidence::read_status_object,
    Evidence::read_detail,
    Evidence::read_header,
    Evidence::read_base_resp,
    Evidence::read_problem_details,
    Evidence::read_errors,
    Evidence::read_upstream_body,
    Evidence::read_nested_answer,
    Evidence::read_client_response,
    Evidence::read_choice_errors,
    Evidence::read_wrapped_gemini,
    Evidence::read_result_code,
    Evidence::read_stream_exception,
    Evidence::read_last_error,
    Evidence::read_failed_batch,
    Evidence::read_cloud_api_error,
    Evidence::read_fault,
    Evidence::read_local_envelope,
    Evidence::read_arm_details,
    Evidence::read_error_text,
    Evidence::read_flagged_result,
    Evidence::read_agent_result,
];

/// What an answer (or a task's state) says of itself: a failed result one level down, stop
/// reasons, moderation results, refusals, blocked prompts.
const INSIDE_ANSWERS: &[Reader] = &[
    Evidence::read_failed_inner,
    Evidence::read_refused_stop,
    Evidence::read_moderations,
    Evidence::read_filtered_media,
    Evidence::read_moderated_status,
    Evidence::read_refusal,
    Evidence::read_failed_stop,
    Evidence::read_blocked_prompt,
];

/// The fields whose strings may carry an upstream's body after words of their own (read by
/// `read_top_level_fields`). n8n's `NodeApiError` puts the upstream's status and body in
/// `description` ("402 - {...}").
const EMBEDDING_FIELDS: &[&str] = &["message", "detail", "msg", "err", "cause", "description"];

/// An upstream's answer a proxy passes on as a JSON string: under `upstream_body`,
/// `upstream_error` or `upstream_response`, or under `body` (`responseBody`, `response_body`)
/// beside a status of the proxy's own.
struct PassedOn<'a> {
    key: &'static str,
    text: &'a str,
    status: Option<u16>,
}

impl<'a> PassedOn<'a> {
    /// The keys it is passed on under: named for it, or beside a status.
    const NAMED: [&'static str; 6] = [
        "upstream_body",
        "upstream_error",
        "upstream_response",
        "provider_response",
        "provider_error",
        "original_error",
    ];
    const BESIDE_STATUS: [&'static str; 1] = ["body"];
    /// Named for a response's body: passed on with or without a status (openai-php's
    /// `UnserializableResponse` keeps the page it could not parse).
    const NAMED_RESPONSE: [&'static str; 2] = ["responseBody", "response_body"];

    /// Whether a body could be passed on under `key`.
    fn may_be_under(key: &str) -> bool {
        Self::NAMED.contains(&key)
            || Self::NAMED_RESPONSE.contains(&key)
            || Self::BESIDE_STATUS.contains(&key)
    }

    fn find(map: &'a Map<String, Value>) -> Option<Self> {
        let status = map
            .get("upstream_status")
            .or_else(|| map.get("original_status"))
            .and_then(http_status)
            .or_else(|| stated_status(map));
        let under = |keys: &[&'static str]| {
            keys.iter()
                .find_map(|k| Some((*k, map.get(*k).and_then(Value::as_str)?)))
        };
        let (key, text) = under(&Self::NAMED)
            .or_else(|| under(&Self::NAMED_RESPONSE))
            .or_else(|| status.and(under(&Self::BESIDE_STATUS)))?;
        // A JSON body, or a proxy's page (`<html><head><title>504 Gateway Time-out</title>`).
        text.trim_start()
            .starts_with(['{', '<'])
            .then_some(Self { key, text, status })
    }
}

/// Whether the string under `key` is one `map`'s own readers already looked into for an
/// embedded body: a field of [`EMBEDDING_FIELDS`] or the body a proxy passes on (looked for
/// only when `key` could hold it).
fn read_by_others(map: &Map<String, Value>, key: &str) -> bool {
    EMBEDDING_FIELDS.contains(&key)
        || (PassedOn::may_be_under(key) && PassedOn::find(map).is_some_and(|p| p.key == key))
}

/// The HTTP status an object states of itself (`status`, `status_code` or `statusCode`).
fn stated_status(map: &Map<String, Value>) -> Option<u16> {
    ["status", "status_code", "statusCode"]
        .iter()
        .find_map(|k| map.get(*k).and_then(http_status))
}

/// The code under `key` of an envelope whose code 0 means success, when it is another whole
/// number (`-1`, `40001`, `"10003"`); words such as `"ok"` or `"SUCCESS"` are not failures.
fn failing_code(envelope: &Map<String, Value>, key: &str) -> Option<String> {
    let code = envelope.get(key).and_then(code_text)?;
    let number = code.trim().parse::<i64>().ok()?;
    (number != 0).then_some(code)
}

/// The documented stop reasons with which providers end an answer they refused or cut for
/// safety (lowercase): Anthropic `refusal`; OpenAI, Azure, Moonshot and Ark `content_filter`;
/// Zhipu's and Hunyuan's `sensitive`; Gemini's `SAFETY`, `PROHIBITED_CONTENT`, `BLOCKLIST`,
/// `SPII`, `RECITATION` and their image kinds; Bedrock Converse `guardrail_intervened` and
/// `content_filtered` (also Stability's); Cohere v1 `ERROR_TOXIC`; GigaChat's `blacklist` (a
/// topic it does not answer). `stop`, `length`,
/// `max_tokens`, `OTHER`, ... are not refusals.
pub(crate) const REFUSED_STOPS: &[&str] = &[
    "refusal",
    "content_filter",
    "content_filtered",
    "sensitive",
    "safety",
    "prohibited_content",
    "blocklist",
    "spii",
    "recitation",
    "image_safety",
    "image_prohibited_content",
    "image_recitation",
    "guardrail_intervened",
    "error_toxic",
    "blacklist",
    "alternative_status_content_filter",
    // The AI SDK's spelling.
    "content-filter",
];

/// The documented stop reasons with which providers end an answer they could not finish for
/// another cause than a refusal (lowercase): Anthropic's and Bedrock's
/// `model_context_window_exceeded`, Mistral's `model_length` and Cohere v1's `ERROR_LIMIT` (the
/// context ran out), DeepSeek's `insufficient_system_resource` and Zhipu's `network_error` (the
/// provider's side failed), Cohere v1's bare `ERROR`, Gemini's `MALFORMED_FUNCTION_CALL` and
/// `UNEXPECTED_TOOL_CALL` (a tool call the request's tools did not allow). `length` and
/// `max_tokens` are the caller's own cap: a success.
pub(crate) const FAILED_STOPS: &[&str] = &[
    // Gemini's tool calls that came out wrong: the request's tools or mode do not fit.
    "malformed_function_call",
    "unexpected_tool_call",
    "model_context_window_exceeded",
    "model_length",
    "error_limit",
    "insufficient_system_resource",
    "network_error",
    "error",
];

/// Whether a completion shows no sign of a model having written it (see
/// [`Evidence::unsigned_completion`]).
fn unsigned(map: &Map<String, Value>) -> bool {
    let id = map
        .get("id")
        .is_some_and(|id| !id.is_null() && id.as_str().is_none_or(|id| !id.trim().is_empty()));
    match map.get("usage").and_then(Value::as_object) {
        Some(usage) => !usage.values().any(|v| v.as_f64().is_some_and(|n| n > 0.0)),
        None => !id,
    }
}

/// The refusal a 200 answer ends with, as (field, stop reason), wherever a provider puts its
/// stop reason: `stop_reason` (Anthropic; `delta.stop_reason` in a stream), `stopReason`
/// (Bedrock Converse; `messageStop.stopReason` in a stream), `finish_reason` of `choices`
/// (OpenAI-compatible; `output.choices` for DashScope, top level for Cohere v1),
/// `finishReason` of `candidates` (Gemini), `FinishReason` of `Choices` (Hunyuan, inside
/// `Response`), `incomplete_details.reason` (OpenAI Responses, also inside `response`),
/// YandexGPT's `alternatives[].status`, OpenAI's `message.refusal` and Responses `refusal`
/// parts, ERNIE's `need_clear_history`, and Bedrock InvokeModel's
/// `amazon-bedrock-guardrailAction: INTERVENED`. `top`: `map` is a whole answer, not an
/// object inside one (OpenAI's refusals are looked for only there).
fn refused_stop(map: &Map<String, Value>, top: bool) -> Option<(&'static str, &str)> {
    fn refused(v: Option<&Value>) -> Option<&str> {
        v.and_then(Value::as_str).filter(|r| {
            REFUSED_STOPS
                .iter()
                .chain(FAILED_STOPS)
                .any(|s| r.eq_ignore_ascii_case(s))
        })
    }
    fn in_list<'a>(list: Option<&'a Value>, field: &str) -> Option<&'a str> {
        list.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .take(MAX_ITEMS)
            .find_map(|c| refused(c.get(field)))
    }
    // LangChain's message (`response_metadata`), as LangServe's `/invoke` returns it in
    // `output`: the provider's stop reason, under either provider's name for it.
    let langchain = map
        .get("response_metadata")
        .or_else(|| map.get("output").and_then(|o| o.get("response_metadata")));
    let singles: [(&'static str, Option<&Value>); 13] = [
        ("stop_reason", map.get("stop_reason")),
        // The AI SDK's `finish` part and `generateText` result: `"finishReason": "content-filter"`.
        ("finishReason", map.get("finishReason")),
        (
            "response_metadata.finish_reason",
            langchain.and_then(|m| m.get("finish_reason")),
        ),
        (
            "response_metadata.stop_reason",
            langchain.and_then(|m| m.get("stop_reason")),
        ),
        // Bedrock ApplyGuardrail: `"action": "GUARDRAIL_INTERVENED"`.
        ("action", map.get("action")),
        (
            "stop_reason",
            map.get("delta").and_then(|d| d.get("stop_reason")),
        ),
        // Cohere v2's `message-end` event: `{"delta": {"finish_reason": "ERROR_TOXIC"}}`.
        (
            "finish_reason",
            map.get("delta").and_then(|d| d.get("finish_reason")),
        ),
        ("stopReason", map.get("stopReason")),
        // OCI Generative AI: `{"chatResponse": {"apiFormat": "COHERE", "finishReason": ...}}`.
        (
            "finishReason",
            map.get("chatResponse").and_then(|c| c.get("finishReason")),
        ),
        (
            "stopReason",
            map.get("messageStop").and_then(|m| m.get("stopReason")),
        ),
        ("finish_reason", map.get("finish_reason")),
        (
            "incomplete_details.reason",
            map.get("incomplete_details")
                .or_else(|| {
                    map.get("response")
                        .and_then(|r| r.get("incomplete_details"))
                })
                .and_then(|d| d.get("reason")),
        ),
        // The Realtime API's `response.done`: `{"status_details": {"reason": "content_filter"}}`.
        (
            "status_details.reason",
            map.get("response")
                .and_then(|r| r.get("status_details"))
                .and_then(|d| d.get("reason")),
        ),
    ];
    if let Some(found) = singles
        .into_iter()
        .find_map(|(field, v)| refused(v).map(|r| (field, r)))
    {
        return Some(found);
    }
    let lists: [(&'static str, Option<&Value>); 10] = [
        ("finish_reason", map.get("choices")),
        // Bedrock's Mistral and Titan: `{"outputs": [{"finish_reason": "CONTENT_FILTERED"}]}`.
        ("finish_reason", map.get("outputs")),
        // Cohere v1 generate: `{"generations": [{"finish_reason": "ERROR_TOXIC"}]}`.
        ("finish_reason", map.get("generations")),
        // Bedrock Titan text: `{"results": [{"completionReason": "CONTENT_FILTERED"}]}`.
        ("completionReason", map.get("results")),
        // Stability's image artifacts: `{"artifacts": [{"finishReason": "CONTENT_FILTERED"}]}`.
        ("finishReason", map.get("artifacts")),
        // YandexGPT: `{"result": {"alternatives": [{"status": "ALTERNATIVE_STATUS_CONTENT_FILTER"}]}}`.
        (
            "alternatives.status",
            map.get("result").and_then(|r| r.get("alternatives")),
        ),
        (
            "finish_reason",
            map.get("output").and_then(|o| o.get("choices")),
        ),
        ("finishReason", map.get("candidates")),
        (
            "FinishReason",
            map.get("Response").and_then(|r| r.get("Choices")),
        ),
        // Hunyuan's stream chunks: the same fields, not inside `Response`.
        ("FinishReason", map.get("Choices")),
    ];
    if let Some(found) = lists.into_iter().find_map(|(field, list)| {
        let key = field.rsplit('.').next().unwrap_or(field);
        in_list(list, key).map(|r| (field, r))
    }) {
        return Some(found);
    }
    // OpenAI's own refusal: `choices[].message.refusal` (Chat Completions), a `refusal`
    // content part of `output[]` (Responses); only a whole answer has them.
    let chat_refusal = top
        && map
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
            .and_then(|c| c.get("message"))
            .and_then(|m| m.get("refusal"))
            .and_then(Value::as_str)
            .is_some_and(|r| !r.is_empty());
    let output_refusal = top
        && map
            .get("output")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .take(MAX_ITEMS)
            .filter_map(|item| item.get("content").and_then(Value::as_array))
            .flatten()
            .take(MAX_ITEMS)
            .any(|part| part.get("type").and_then(Value::as_str) == Some("refusal"));
    if chat_refusal || output_refusal {
        return Some(("refusal", "refusal"));
    }
    // Snowflake's Cortex Guard puts its canned text in place of a filtered answer, the whole
    // content of the first choice (`message.content`, or `messages` in Cortex's REST API).
    let guarded = top
        && map
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
            .and_then(|c| {
                c.get("message")
                    .and_then(|m| m.get("content"))
                    .or_else(|| c.get("messages"))
            })
            .and_then(Value::as_str)
            .is_some_and(|text| text.trim() == "Response filtered by Cortex Guard");
    if guarded {
        return Some(("choices.message.content", "guardrail_intervened"));
    }
    // ERNIE: `"need_clear_history": true` says the user's input carried a safety risk and the
    // conversation must be dropped (its canned reply is not an answer).
    if map.get("need_clear_history").and_then(Value::as_bool) == Some(true) {
        return Some(("need_clear_history", "sensitive"));
    }
    // Bedrock InvokeModel's header as a field, and Knowledge Bases' `guardrailAction`.
    ["amazon-bedrock-guardrailAction", "guardrailAction"]
        .into_iter()
        .find(|field| {
            map.get(*field)
                .and_then(Value::as_str)
                .is_some_and(|a| a.eq_ignore_ascii_case("intervened"))
        })
        .map(|field| (field, "guardrail_intervened"))
}

/// Codes are strings (`"insufficient_quota"`) or numbers (`1113`, `17`).
fn code_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The code a message starts with (`AppIdNoAuthError:(16:26:07.442) tokens.total`,
/// `InternalError.Algo.InvalidParameter: Range of ...`): one token of letters, digits, `.` and
/// `_`, with an inner capital, `.` or `_`, before a colon. A lowercase path with dots is the
/// field a validation names (`thinking.enabled.budget_tokens: Field required`), not a code.
fn leading_code(message: &str) -> Option<&str> {
    let (head, _) = message.split_once(':')?;
    let field_path = head.contains('.') && !head.bytes().any(|b| b.is_ascii_uppercase());
    let codelike = !field_path
        && (6..=64).contains(&head.len())
        && head
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_')
        && head.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && head
            .bytes()
            .skip(1)
            .any(|b| b.is_ascii_uppercase() || b == b'.' || b == b'_');
    codelike.then_some(head)
}

/// An enum variant's name in upper snake case (`ERROR_USAGE_LIMIT_EXCEEDED`, `RATE_LIMITED`).
fn is_enum_name(text: &str) -> bool {
    text.len() >= 6
        && is_code_word(text)
        && text.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
        && !text.bytes().any(|b| b.is_ascii_lowercase())
}

/// One word of letters, digits and `_`, with a `_` (`service_surcharge`, `KOTA_ASILDI`).
fn is_code_word(text: &str) -> bool {
    (3..=64).contains(&text.len())
        && text.contains('_')
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// An HTTP error status stated as a number (`429`, `"503"`).
fn http_status(value: &Value) -> Option<u16> {
    let n = match value {
        Value::Number(n) => n.as_u64()?,
        Value::String(s) if s.len() == 3 => s.parse().ok()?,
        _ => return None,
    };
    u16::try_from(n).ok().filter(|s| (400..=599).contains(s))
}

/// Whether a text reads as a sentence (four words or more, or eight letters of a script written
/// without spaces; longer than 24 bytes), not a code or a name.
fn is_sentence(text: &str) -> bool {
    // Chinese, Japanese and Thai write sentences without spaces: eight letters of a script
    // other than Latin make one ("今月の無償枠を使い切りました").
    let unspaced = || {
        text.chars()
            .filter(|c| !c.is_ascii() && c.is_alphabetic())
            .nth(7)
            .is_some()
    };
    text.len() > 24 && (text.split_whitespace().nth(3).is_some() || unspaced())
}

/// The gRPC status code that grpc-go writes into an error's text (`rpc error: code =
/// ResourceExhausted desc = ...`), in snake case (`resource_exhausted`). Only where the text
/// starts with it (or "error: "): deeper in a chain of causes ("could not load model: rpc
/// error: code = Unavailable ...") it is a detail of what the outer words say failed.
fn grpc_code_in(message: &str) -> Option<String> {
    const MARK: &str = "rpc error: code = ";
    let at = message.find(MARK)?;
    if !matches!(&message[..at], "" | "error: " | "Error: ") {
        return None;
    }
    let rest = &message[at + MARK.len()..];
    let name = &rest[..rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len())];
    if name.is_empty() || name.len() > 32 {
        return None;
    }
    let mut code = String::with_capacity(name.len() + 4);
    split_camel(name, '_', &mut code);
    code.make_ascii_lowercase();
    Some(code)
}

/// An exception's class name: letters and digits ending in `Error` or `Exception` after a
/// word of its own (`RateLimitError`, `ModuleTimeoutError`; not `Error`).
fn error_class_name(text: &str) -> bool {
    let head = text
        .strip_suffix("Error")
        .or_else(|| text.strip_suffix("Exception"));
    head.is_some_and(|h| {
        h.len() >= 2
            && h.starts_with(|c: char| c.is_ascii_uppercase())
            && h.bytes().all(|b| b.is_ascii_alphanumeric())
    })
}

/// A canonical status name after "Status: " in a text, as Google's SDKs print it (`Status:
/// RESOURCE_EXHAUSTED`); not a number, not another word.
fn canonical_status_in(message: &str) -> Option<&'static str> {
    const MARK: &str = "Status: ";
    let at = message.find(MARK)? + MARK.len();
    let rest = message.get(at..)?;
    let name = &rest[..rest
        .find(|c: char| !(c.is_ascii_uppercase() || c == '_'))
        .unwrap_or(rest.len())];
    GRPC_STATUS_NAMES
        .iter()
        .find(|n| n.len() == name.len() && n.eq_ignore_ascii_case(name))
        .copied()
}

/// The values Go's `%v` of a map prints after `key` (`quotaId:PerMinute-FreeTier`).
fn go_map_values<'m>(message: &'m str, key: &'m str) -> impl Iterator<Item = &'m str> + 'm {
    message.match_indices(key).filter_map(move |(at, _)| {
        let rest = message.get(at + key.len()..)?;
        let end = rest
            .find(|c: char| c.is_whitespace() || c == ']')
            .unwrap_or(rest.len());
        rest.get(..end).filter(|v| !v.is_empty())
    })
}

/// gRPC's canonical status names by their numbers (1 to 16).
const GRPC_STATUS_NAMES: [&str; 16] = [
    "cancelled",
    "unknown",
    "invalid_argument",
    "deadline_exceeded",
    "not_found",
    "already_exists",
    "permission_denied",
    "resource_exhausted",
    "failed_precondition",
    "aborted",
    "out_of_range",
    "unimplemented",
    "internal",
    "unavailable",
    "data_loss",
    "unauthenticated",
];

/// A failing `grpc-status` trailer in a text (gRPC-Web writes its trailers into the body): the
/// status's canonical name, and the `grpc-message` beside it, percent-decoded.
fn grpc_trailers(text: &str) -> Option<(&'static str, Option<String>)> {
    // Most plain bodies have none: one search rules them out before any line is split.
    memchr::memmem::find(text.as_bytes(), b"grpc-status")?;
    let value = |name: &str| {
        text.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
        })
    };
    let number: usize = value("grpc-status")?.parse().ok()?;
    let code = GRPC_STATUS_NAMES.get(number.checked_sub(1)?)?;
    let message = value("grpc-message").map(percent_decode);
    Some((code, message))
}

/// Appends `name` to `out` with `sep` where a lower-case letter meets an upper-case one
/// (`RateLimitError` -> `Rate Limit Error` with a space, `rate_limit_error` once lowered).
fn split_camel(name: &str, sep: char, out: &mut String) {
    let mut lower = false;
    for c in name.chars() {
        if lower && c.is_ascii_uppercase() {
            out.push(sep);
        }
        lower = c.is_ascii_lowercase();
        out.push(c);
    }
}

/// How deep [`camel_case_keys`] looks.
const PASCAL_DEPTH: usize = 4;

/// A PascalCase key (`Error`, `ErrorMessage`; not `HTTPStatus`).
fn pascal_key(key: &str) -> bool {
    let mut bytes = key.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_uppercase())
        && bytes.next().is_some_and(|b| b.is_ascii_lowercase())
}

/// Whether `value` has a PascalCase key a few levels down: looked for before anything is
/// copied (a success's body has none).
fn has_pascal_keys(value: &Value, depth: usize) -> bool {
    depth < PASCAL_DEPTH
        && match value {
            Value::Object(map) => map
                .iter()
                .any(|(k, v)| pascal_key(k) || has_pascal_keys(v, depth + 1)),
            Value::Array(items) => items
                .iter()
                .take(MAX_ITEMS)
                .any(|v| has_pascal_keys(v, depth + 1)),
            _ => false,
        }
}

/// `value` with its PascalCase keys in camelCase (`ErrorMessage` -> `errorMessage`; `HTTPStatus`
/// stays, and so does a key whose camelCase twin is there too), a few levels down.
fn camel_case_keys(value: &Value, depth: usize) -> Value {
    fn camel(key: &str) -> Option<String> {
        let rest = key.get(1..).filter(|_| pascal_key(key))?;
        let mut out = String::with_capacity(key.len());
        out.extend(key.chars().next().map(|c| c.to_ascii_lowercase()));
        out.push_str(rest);
        Some(out)
    }
    if depth >= PASCAL_DEPTH {
        return value.clone();
    }
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, v) in map {
                let key = camel(key)
                    .filter(|k| !map.contains_key(k))
                    .unwrap_or_else(|| key.clone());
                out.entry(key)
                    .or_insert_with(|| camel_case_keys(v, depth + 1));
            }
            Value::Object(out)
        }
        Value::Array(items) => items
            .iter()
            .take(MAX_ITEMS)
            .map(|v| camel_case_keys(v, depth + 1))
            .collect(),
        other => other.clone(),
    }
}

/// A text without its stack trace's frames (PHP's `#1 /var/www/vendor/...`, Java's `at
/// com.acme.Client.call(Client.java:42)` and `... 12 more`, .NET's `at Acme.Client.Call() in
/// /src/Client.cs:line 42`, Node's `at async post (/app/index.js:1:2)`, Python's `File
/// "app.py", line 3, in main` with the code line under it, Ruby's `from app.rb:3:in 'call'`,
/// Go's `goroutine 1 [running]:`): they name the code that ran, not what went wrong, and
/// their words (`Transporter\Payload`, `raise_for_status`) would speak. The lines that say
/// what happened (the first, `Caused by: ...`, Python's last) are kept.
fn without_stack_frames(text: &str) -> Cow<'_, str> {
    fn frame(line: &str) -> bool {
        let source_line = |l: &str| {
            [".js:", ".ts:", ".mjs:", ".cjs:", ":line "]
                .iter()
                .any(|s| l.contains(s))
        };
        if let Some(rest) = line.strip_prefix('#') {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            return digits > 0 && rest.as_bytes().get(digits) == Some(&b' ');
        }
        if let Some(rest) = line.strip_prefix("at ") {
            return !rest.starts_with(|c: char| c.is_whitespace())
                && (line.ends_with(')') || source_line(rest));
        }
        if let Some(rest) = line.strip_prefix("from ") {
            return rest.contains(":in ");
        }
        (line.starts_with("... ") && line.ends_with(" more"))
            || line == "Stack trace:"
            || line.starts_with("Traceback (most recent call last)")
            || (line.starts_with("goroutine ") && line.ends_with(':'))
    }
    if !text.contains('\n') {
        return Cow::Borrowed(text);
    }
    let mut kept = String::new();
    let mut dropped = false;
    // The indentation of a Python frame's `File "..."` line: the code line under it is deeper.
    let mut python_frame: Option<usize> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if python_frame.take().is_some_and(|at| indent > at) {
            continue;
        }
        if trimmed.starts_with("File \"") && trimmed.contains("\", line ") {
            python_frame = Some(indent);
            dropped = true;
            continue;
        }
        if frame(trimmed.trim_end()) {
            dropped = true;
            continue;
        }
        if !kept.is_empty() {
            kept.push('\n');
        }
        kept.push_str(line);
    }
    if dropped {
        Cow::Owned(kept)
    } else {
        Cow::Borrowed(text)
    }
}

/// The first exception class named in a message (`ThrottlingException`), without its package.
fn exception_named_in(message: &str) -> Option<&str> {
    let name = class_name_ending(message, message.find("Exception")?, "Exception")?;
    (name.len() > "Exception".len()).then_some(name)
}

/// The code before a text's first colon: upper-case words joined by `_` (`RATE_LIMIT`,
/// `RESOURCE_EXHAUSTED`), or lower-case ones that end in a state (`deadline_exceeded`); not a
/// field a validator names (`api_key: Extra inputs are not permitted`).
fn code_heading(message: &str) -> Option<&str> {
    const STATES: &[&str] = &[
        "_exceeded",
        "_exhausted",
        "_limit",
        "_limited",
        "_denied",
        "_unavailable",
        "_timeout",
        "_expired",
        "_failed",
        "_overloaded",
    ];
    let (head, _) = message.split_once(':')?;
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let shaped = (4..=48).contains(&head.len())
        && head.contains('_')
        && head.bytes().all(word)
        && head.bytes().next().is_some_and(|b| b.is_ascii_alphabetic());
    let upper = !head.bytes().any(|b| b.is_ascii_lowercase());
    (shaped && (upper || STATES.iter().any(|s| head.ends_with(s)))).then_some(head)
}

/// The code a logfmt line gives its error (`error=context_overflow`, `code=quota_exceeded`).
fn logfmt_code(message: &str) -> Option<&str> {
    message.split_ascii_whitespace().find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (["error", "code", "err", "reason"].contains(&key) && is_code_word(value)).then_some(value)
    })
}

/// The class name (letters and digits) that ends with `suffix` found at byte `at` of `message`,
/// without its package (`bedrockruntime.model.ThrottlingException` -> `ThrottlingException`);
/// `None` when the word goes on past the suffix (`ErrorCode`).
fn class_name_ending<'m>(message: &'m str, at: usize, suffix: &str) -> Option<&'m str> {
    let end = at + suffix.len();
    if message
        .as_bytes()
        .get(end)
        .is_some_and(u8::is_ascii_alphanumeric)
    {
        return None;
    }
    let head = message.get(..end)?;
    let start = head
        .rfind(|c: char| !c.is_ascii_alphanumeric())
        .map_or(0, |i| i + 1);
    head.get(start..)
}

/// The status an official SDK's error class stands for, named in a message by whoever caught it
/// (tenacity's "RetryError[<Future ... raised AuthenticationError>]", "anthropic.
/// OverloadedError: ..."): the openai and anthropic SDKs raise one class per status (LiteLLM
/// borrows their names and adds its own). A timeout raised by the client (`APITimeoutError`)
/// stands for a 408.
fn sdk_error_status(message: &str) -> Option<u16> {
    const CLASSES: &[(&str, u16)] = &[
        ("BadRequestError", 400),
        ("AuthenticationError", 401),
        ("PermissionDeniedError", 403),
        ("NotFoundError", 404),
        ("APITimeoutError", 408),
        ("ConflictError", 409),
        ("RequestTooLargeError", 413),
        ("UnprocessableEntityError", 422),
        // LiteLLM's parameters a provider does not take.
        ("UnsupportedParamsError", 400),
        ("RateLimitError", 429),
        ("InternalServerError", 500),
        ("ServiceUnavailableError", 503),
        ("GatewayTimeoutError", 504),
        ("DeadlineExceededError", 504),
        ("OverloadedError", 529),
    ];
    super::occurrences(message.as_bytes(), b"Error")
        .filter_map(|at| class_name_ending(message, at, "Error"))
        .find_map(|name| CLASSES.iter().find(|(n, _)| *n == name))
        .map(|(_, status)| *status)
}

/// The status that Google's Python clients print after their exception's name
/// (`google.api_core.exceptions.ResourceExhausted: 429 Resource has been exhausted`).
fn api_core_status(message: &str) -> Option<u16> {
    const PACKAGE: &str = "api_core.exceptions.";
    let rest = &message[message.find(PACKAGE)? + PACKAGE.len()..];
    let name_end = rest.find(|c: char| !c.is_ascii_alphanumeric())?;
    let after = rest[name_end..].strip_prefix(": ")?;
    let status = after.get(..3)?.parse::<u16>().ok()?;
    let spaced = after.as_bytes().get(3).is_none_or(|b| *b == b' ');
    (spaced && (400..=599).contains(&status)).then_some(status)
}

/// Labels a status follows in a message: the Node SDKs' "429 status code (no body)",
/// openai-python's "error code: 524" (any error status), a Python client's "status_code: 403,
/// ..." passed on in an app's stream, axios' "Request failed with status code 401", a router's
/// "Client error: HTTP 400".
const STATUS_LABELS: &[&str] = &[
    "error code: ",
    "status code: ",
    "status code ",
    "status_code: ",
    "status_code=",
    "http ",
    "http/1.1 ",
    "http/2 ",
    // Faraday's "the server responded with status 401", Dio's "has a status code
    // of 401", Firebase's "httpResponseCode: 403".
    "responded with status ",
    "status code of ",
    "httpresponsecode: ",
    // A relay's "upstream returned 429", "upstream 401: key rejected", "provider
    // returned 503", "got status 401 from provider".
    "upstream returned ",
    "upstream ",
    "provider returned ",
    // A request that failed with one ("Request failed with status 400").
    "with status ",
    "got status ",
];

/// Whether a failed tool's or task's text relays a model call that failed, in words ("Model
/// backend busy: ...", "Bedrock InvokeModel failed: ThrottlingException: ...",
/// "AI_APICallError: ...", "Azure OpenAI error 429: ..."): it names a model, a provider or an
/// SDK's error of a provider's call. A tool's own failure ("Error executing tool query_db:
/// canceling statement due to statement timeout", "ENOENT: no such file") names none.
/// `normalized` is the text as [`normalize`] leaves it.
fn relays_a_model_call(normalized: &str) -> bool {
    const CALLED: &[&str] = &[
        "model",
        "llm",
        "sampling",
        "upstream",
        "provider",
        "openai",
        "anthropic",
        "claude",
        "gemini",
        "vertex",
        "bedrock",
        "deepseek",
        "mistral",
        "ollama",
        "workers ai",
        "litellm",
        // Provider SDKs' errors of a call (the AI SDK, OpenAI's and Anthropic's SDKs, AWS).
        "ai_apicallerror",
        "ai_retryerror",
        "ratelimiterror",
        "apitimeouterror",
        "apiconnectionerror",
        "authenticationerror",
        "throttlingexception",
        "servicequotaexceededexception",
        "modeltimeoutexception",
    ];
    let bytes = normalized.as_bytes();
    CALLED.iter().any(|w| {
        // An SDK's error name counts inside a longer one (`openai.RateLimitError`); a word
        // only between non-letters.
        let anywhere = w.ends_with("error") || w.ends_with("exception");
        normalized.match_indices(w).any(|(at, _)| {
            let before = at.checked_sub(1).and_then(|i| bytes.get(i));
            let after = bytes.get(at + w.len());
            anywhere
                || (!before.is_some_and(u8::is_ascii_alphabetic)
                    && !after.is_some_and(u8::is_ascii_alphabetic))
        })
    })
}

/// An error status with its reason phrase in a message ("upstream rejected request: 400 Bad
/// Request - image_url must be ...", "got 402 Payment Required"): the status an upstream gave,
/// which a gateway's own status (a 502 around it) hides.
fn status_named_in(message: &str) -> Option<u16> {
    const NAMED: &[(&str, &str)] = &[
        ("400", " bad request"),
        ("401", " unauthorized"),
        ("402", " payment required"),
        ("403", " forbidden"),
        ("404", " not found"),
        ("408", " request timeout"),
        ("413", " payload too large"),
        ("413", " request entity too large"),
        ("422", " unprocessable entity"),
        ("429", " too many requests"),
        ("500", " internal server error"),
        ("502", " bad gateway"),
        ("503", " service unavailable"),
        ("504", " gateway timeout"),
        // nginx's spelling.
        ("504", " gateway time-out"),
    ];
    let bytes = message.as_bytes();
    let digit = |i: usize| bytes.get(i).is_some_and(u8::is_ascii_digit);
    let numbers = (0..bytes.len().saturating_sub(2))
        .filter(|&i| digit(i) && digit(i + 1) && digit(i + 2) && !digit(i + 3))
        .filter(|&i| i == 0 || !bytes.get(i - 1).is_some_and(u8::is_ascii_alphanumeric));
    // A status a label names ("the server responded with status 402") speaks before a reason
    // phrase anywhere in the text (Rails' "Completed 500 Internal Server Error" above it: the
    // app's own failure, not the upstream's answer), so the first reason phrase waits until the
    // scan has found no label.
    let mut first_named = None;
    for i in numbers {
        let (Some(number), Some(rest), Some(head)) = (
            message.get(i..i + 3),
            message.get(i + 3..),
            message.get(..i),
        ) else {
            continue;
        };
        // Whoever returned it, with its words after a colon ("kimi returned 400: Invalid
        // request"); not a tally ("backend returned 429 then 402").
        let returned = head.ends_with(" returned ") && rest.starts_with(':');
        if rest.starts_with(" status code")
            || returned
            || STATUS_LABELS.iter().any(|l| head.ends_with(l))
        {
            if let Some(status) = number.parse().ok().filter(|s| (400..=599).contains(s)) {
                return Some(status);
            }
            continue;
        }
        if first_named.is_none() {
            first_named = NAMED
                .iter()
                .find(|(n, phrase)| *n == number && rest.starts_with(phrase))
                .and_then(|(status, _)| status.parse().ok());
        }
    }
    first_named
}

/// The last error status standing alone in `words` ("HTTP 429:", "provider(429)", "[503]",
/// "Error code: 500 -").
fn status_in_words(words: &str) -> Option<u16> {
    words
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| w.len() == 3)
        .filter_map(|w| w.parse::<u16>().ok())
        .rfind(|s| (400..=599).contains(s))
}

/// How many bytes may follow a body's one JSON object and still leave it read as JSON.
const STRAY_BYTES: usize = 16;

/// The JSON object at the start of `text`, whatever follows it (a stack trace, " [BYOK]").
fn first_json_object(text: &str) -> Option<Value> {
    let value = serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .next()?
        .ok()?;
    value.is_object().then_some(value)
}

/// Where the object that `text` starts with ends (after its `}`), by its braces outside
/// strings quoted either way (JSON or a Python repr).
fn object_end(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    for (i, b) in text.bytes().enumerate() {
        match (quote, b) {
            (Some(_), _) if escaped => escaped = false,
            (Some(_), b'\\') => escaped = true,
            (Some(q), b) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'{') => depth += 1,
            (None, b'}') => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            (None, _) => {}
        }
    }
    None
}

/// An SDK's Python repr of a body (`{'error': {'code': '1113', 'message': 'x'}}`) as JSON.
/// Python quotes a string that holds `'` with `"` (`"Invalid 'messages[2].content'"`): both
/// quotings are read, and a `"` inside a `'`-quoted string is escaped.
fn python_repr_as_json(repr: &str) -> String {
    let mut out = String::with_capacity(repr.len() + 8);
    let mut quote: Option<char> = None;
    let mut chars = repr.char_indices();
    while let Some((at, c)) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => match chars.next() {
                // `\'` needs no escape in JSON.
                Some((_, '\'')) => out.push('\''),
                Some((_, next)) => {
                    out.push('\\');
                    out.push(next);
                }
                None => {}
            },
            (Some(q), c) if c == q => {
                out.push('"');
                quote = None;
            }
            (Some('\''), '"') => out.push_str("\\\""),
            // A line break printed as itself (a log that unescaped the repr's `\n`).
            (Some(_), '\n') => out.push_str("\\n"),
            (Some(_), c) => out.push(c),
            (None, '\'' | '"') => {
                out.push('"');
                quote = Some(c);
            }
            (None, c) => {
                let rest = repr.get(at..).unwrap_or_default();
                let word = [("None", "null"), ("True", "true"), ("False", "false")]
                    .into_iter()
                    .find(|(w, _)| rest.starts_with(w));
                match word {
                    Some((w, json)) => {
                        out.push_str(json);
                        for _ in 1..w.len() {
                            chars.next();
                        }
                    }
                    None => out.push(c),
                }
            }
        }
    }
    out
}

fn static_field(field: &str) -> &'static str {
    match field {
        "code" => "code",
        "error_code" => "error_code",
        "error_type" => "error_type",
        "__type" => "__type",
        "errorCode" | "ErrorCode" => "errorCode",
        _ => "status",
    }
}

fn first_element(value: Value) -> Value {
    match value {
        Value::Array(mut items) if !items.is_empty() => items.swap_remove(0),
        other => other,
    }
}

fn looks_like_sse(text: &str) -> bool {
    text.lines()
        .take(8)
        .any(|l| l.starts_with("data:") || l.starts_with("event:"))
}

/// What a stream's event or line must hold to be worth parsing: an error, a refusal, a stop
/// reason, an exception, a relay's message.
const STREAM_MARKERS: &[&str] = &[
    "\"error\"",
    // Tencent Cloud's `{"Response": {"Error": {...}}}` as a stream's event.
    "\"Error\"",
    // Cloudflare's envelope (`{"errors": [...], "success": false}`) ending a Workers AI stream.
    "\"errors\"",
    "\"refusal\"",
    "\"content_filter\"",
    "\"base_resp\"",
    // Baidu Qianfan's `{"error_code": 18, "error_msg": "Open api qps request limit reached"}`.
    "\"error_code\"",
    // An agent run's result flagged as an error (Claude Code's `{"type": "result",
    // "is_error": true, ...}`), after the events that led to it.
    "\"is_error\":true",
    "\"is_error\": true",
    // Stop reasons (`REFUSED_STOPS`): Anthropic, Bedrock, Gemini, Zhipu.
    "\"stop_reason\"",
    "\"stopReason\"",
    "\"finishReason\"",
    "\"FinishReason\"",
    // Cohere's last event carries its `finish_reason` (`ERROR_TOXIC`): v1's
    // `stream-end`, v2's `message-end`.
    "\"stream-end\"",
    "\"message-end\"",
    "\"sensitive\"",
    // GigaChat's refused topic and Yandex's filter, as OpenAI-style stop reasons.
    "\"blacklist\"",
    "\"ALTERNATIVE_STATUS_CONTENT_FILTER\"",
    // The Responses API's `response.refusal.delta` events.
    "\"response.refusal.",
    // Gemini's blocked prompt; a relay's `{"code": ..., "msg": ...}`.
    "\"promptFeedback\"",
    "\"msg\"",
    // Failed stops (`FAILED_STOPS`) in OpenAI-style chunks.
    "\"model_length\"",
    "\"model_context_window_exceeded\"",
    "\"insufficient_system_resource\"",
    "\"network_error\"",
    // SGLang's aborted stop (`{"type": "abort", "message": ...}`).
    "\"abort\"",
    // Bedrock's stream exceptions (`{"throttlingException": {...}}`) as a relay
    // passes them on; Coze's `conversation.chat.failed` (`last_error`).
    "Exception\"",
    "\"last_error\"",
];

fn looks_like_ndjson(text: &str) -> bool {
    text.starts_with('{') && text.contains("}\n{")
}

/// The CamelCase names in `message` split into words (`raised ModelNotReady>` -> `Model Not
/// Ready`), when it has any: names of letters only, so a dotted or underscored code
/// (`InternalError.Algo.InvalidParameter`, `GenerateContentRequest.safety_settings`) stays a code.
fn camel_words(message: &str) -> Option<String> {
    let mut out = String::new();
    let names = message
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
        // The AI SDK's names (`AI_NoSuchModelError`, `AI_APICallError`).
        .map(|w| w.strip_prefix("AI_").unwrap_or(w))
        .filter(|w| w.bytes().all(|b| b.is_ascii_alphabetic()))
        // Three words or more: an exception's name (`ModelNotReady`, `RateLimitError`), not a
        // field's (`chatCompletion`, `maxTokens`), which would only cost a second reading.
        .filter(|w| {
            w.as_bytes()
                .windows(2)
                .filter(|p| matches!(p, [a, b] if a.is_ascii_lowercase() && b.is_ascii_uppercase()))
                .count()
                >= 2
        });
    for name in names {
        if !out.is_empty() {
            out.push(' ');
        }
        split_camel(name, ' ', &mut out);
    }
    (!out.is_empty()).then_some(out)
}

/// What an XML error body says: its codes and its sentences.
struct XmlFault {
    codes: Vec<String>,
    texts: Vec<String>,
}

/// Elements of SOAP 1.1 and 1.2 faults and of gateways' XML errors, by local name (any
/// namespace prefix): codes, then words.
const XML_CODES: &[&str] = &["faultcode", "Value", "code", "errorcode", "error_code"];
const XML_TEXTS: &[&str] = &["faultstring", "Text", "message", "description"];

/// The codes and words of an XML body that reports a fault or an error (not a page, not a
/// document that only mentions one). A code keeps its local part (`wsse:FailedAuthentication`
/// -> `FailedAuthentication`).
fn xml_fault(text: &str) -> Option<XmlFault> {
    if !text.starts_with('<') {
        return None;
    }
    let xml = text.starts_with("<?xml") || text.starts_with("<soap") || text.starts_with("<S:");
    if !(xml || text.contains(":Fault>")) {
        return None;
    }
    if !(text.contains("Fault>") || text.contains("fault>") || text.contains("rror>")) {
        return None;
    }
    let mut fault = XmlFault {
        codes: Vec::new(),
        texts: Vec::new(),
    };
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        let after = rest.get(open + 1..)?;
        let Some(end) = after.find('>') else { break };
        let tag = after.get(..end)?;
        rest = after.get(end + 1..)?;
        if tag.starts_with(['/', '?', '!']) || tag.ends_with('/') {
            continue;
        }
        let name = tag.split_whitespace().next().unwrap_or_default();
        let local = name.rsplit(':').next().unwrap_or(name);
        let inner = rest.get(..rest.find('<').unwrap_or(rest.len()))?.trim();
        if inner.is_empty() || fault.codes.len() + fault.texts.len() >= MAX_ITEMS {
            continue;
        }
        let inner = xml_unescape(inner);
        if XML_CODES.contains(&local) {
            // SOAP's own codes say only whose fault it is: the caller's (`Client`, 1.2's
            // `Sender`) or the server's (`Server`, `Receiver`), as the generic codes do.
            let code = match inner.rsplit(':').next().unwrap_or(&inner) {
                "Client" | "Sender" => "bad_request",
                "Server" | "Receiver" => "server_error",
                other => other,
            };
            fault.codes.push(code.to_owned());
        } else if XML_TEXTS.contains(&local) {
            fault.texts.push(inner);
        }
    }
    (!fault.codes.is_empty() || !fault.texts.is_empty()).then_some(fault)
}

/// XML's five named entities.
fn xml_unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The readable texts of an HTML error page: its `<title>`, first `<h1>` and first `<h2>`, inner
/// tags dropped, each once. Cloudflare's block pages put the cause in the `<h2>` ("Access denied
/// | ... used Cloudflare to restrict access", "Error 1015", "You are being rate limited").
/// `None` when the text is not an HTML page.
fn html_texts(text: &str) -> Option<Vec<String>> {
    let lower = text.to_ascii_lowercase();
    if !(lower.starts_with("<!doctype") || lower.starts_with("<html") || lower.contains("<body")) {
        return None;
    }
    let mut texts: Vec<String> = Vec::new();
    for tag in ["title", "h1", "h2", "p"] {
        if let Some(inner) = element_text(text, &lower, tag) {
            if !inner.is_empty() && !texts.contains(&inner) {
                texts.push(inner);
            }
        }
    }
    Some(texts)
}

/// The text inside the first `<tag>` or `<tag attributes>` of a page (`lower` is `text`
/// lowercased, so byte offsets agree), with inner tags dropped and spaces collapsed.
fn element_text(text: &str, lower: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}");
    let close = format!("</{tag}>");
    let mut from = 0;
    let start = loop {
        let at = from + lower.get(from..)?.find(&open)? + open.len();
        match lower.as_bytes().get(at) {
            Some(b'>') => break at + 1,
            Some(b) if b.is_ascii_whitespace() => break at + lower.get(at..)?.find('>')? + 1,
            _ => from = at,
        }
    };
    let len = lower.get(start..)?.find(&close)?;
    let inner = text.get(start..start + len)?;
    let mut out = String::with_capacity(inner.len());
    let mut in_tag = false;
    for c in inner.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    Some(out.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Lowercases, turns curly quotes and full-width punctuation into ASCII, collapses whitespace,
/// decodes `%20`-style escapes (xAI URL-encodes some messages), and caps the length.
pub fn normalize(message: &str) -> String {
    let decoded;
    let message = if message.contains("%20") {
        decoded = percent_decode(message);
        decoded.as_str()
    } else {
        message
    };
    let mut out = String::with_capacity(message.len().min(MAX_MESSAGE));
    let mut space = false;
    for c in message.chars() {
        let c = match c {
            '\u{2018}' | '\u{2019}' | '\u{201b}' | '\u{2032}' | '`' => '\'',
            '\u{201c}' | '\u{201d}' | '\u{201f}' | '\u{2033}' => '"',
            '\u{ff0c}' => ',',
            '\u{ff1a}' => ':',
            '\u{ff08}' => '(',
            '\u{ff09}' => ')',
            c if c.is_whitespace() => ' ',
            c if c.is_ascii() => c.to_ascii_lowercase(),
            // Arabic's short vowels and tanween, which writers add or leave out ("طويل جدًا").
            '\u{064b}'..='\u{065f}' | '\u{0670}' => continue,
            c => ascii_digit(c).unwrap_or_else(|| c.to_lowercase().next().unwrap_or(c)),
        };
        if c == ' ' {
            if space || out.is_empty() {
                continue;
            }
            space = true;
        } else {
            space = false;
        }
        if out.len() + c.len_utf8() > MAX_MESSAGE {
            break;
        }
        out.push(c);
    }
    let out = out.trim_end();
    let out = if out.contains("n't") {
        expand_negations(out)
    } else {
        out.to_owned()
    };
    // Japanese's humble and honorific forms said as the plain polite ones, which the word
    // lists hold: "残高がございません" is "残高がありません", "ご利用いただけません" is "ご利用
    // できません".
    if out.contains("ございま") || out.contains("いただけません") {
        out.replace("ございま", "ありま")
            .replace("いただけません", "できません")
    } else {
        out
    }
}

/// The first digit (zero) of each script whose digits a message may state a number in:
/// Arabic-Indic ("بعد ٢٣ ساعة"), Persian ("۱۸ ساعت دیگر"), the Indic scripts, Thai, Lao,
/// Myanmar, Khmer and full-width ("５分钟"). Each block holds its ten digits in order.
const DIGIT_ZEROS: &[u32] = &[
    0x0660, 0x06f0, 0x0966, 0x09e6, 0x0a66, 0x0ae6, 0x0b66, 0x0be6, 0x0c66, 0x0ce6, 0x0d66, 0x0e50,
    0x0ed0, 0x1040, 0x17e0, 0xff10,
];

/// A digit of another script as its ASCII digit, so that numbers read the same in any script.
fn ascii_digit(c: char) -> Option<char> {
    let code = u32::from(c);
    DIGIT_ZEROS
        .iter()
        .find(|&&zero| (zero..zero + 10).contains(&code))
        .and_then(|&zero| char::from_digit(code - zero, 10))
}

/// Negations written out ("isn't supported" as "is not supported", "can't" as "cannot"), so
/// the word lists hold each wording once.
fn expand_negations(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(at) = rest.find("n't") {
        let (Some(head), Some(after)) = (rest.get(..at), rest.get(at + 3..)) else {
            break;
        };
        let start = head
            .char_indices()
            .rev()
            .find(|(_, c)| !c.is_alphanumeric())
            .map_or(0, |(i, c)| i + c.len_utf8());
        let (before, stem) = (
            head.get(..start).unwrap_or(""),
            head.get(start..).unwrap_or(""),
        );
        out.push_str(before);
        match stem {
            "ca" => out.push_str("cannot"),
            "wo" => out.push_str("will not"),
            _ => {
                out.push_str(stem);
                out.push_str(" not");
            }
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            // Two hex digits: `from_str_radix` alone would also take a sign ("%+5").
            let hex = bytes
                .get(i + 1..i + 3)
                .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                .and_then(|h| std::str::from_utf8(h).ok());
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// JSON cut off before its end, read up to the cut.
pub mod prefix {
    use serde_json::{Map, Number, Value};

    /// Deeper nesting is refused (serde_json's own limit is 128 as well).
    const MAX_DEPTH: usize = 128;

    /// Keys whose string values are prose: a value cut in the middle is kept up to its last
    /// whole word. Every other cut string (codes, ids, keys) is dropped.
    const PROSE_KEYS: &[&str] = &[
        "message",
        "Message",
        "msg",
        "error_msg",
        "errmsg",
        "error_message",
        "detail",
        "errorMessage",
        "error",
        "raw",
    ];

    /// The value of `text`, valid JSON cut off anywhere, holding what arrived whole: complete
    /// key/value pairs and array items, open objects and arrays closed at the cut, and a prose
    /// string cut in the middle up to its last whole word (see `PROSE_KEYS`; a bare string at
    /// the root counts as prose). A cut key, number, literal or non-prose string is dropped with
    /// its key. `None` when `text` is not a prefix of JSON (a syntax error, text after a whole
    /// value) or nothing usable arrived. One pass over `text`.
    pub fn parse(text: &str) -> Option<Value> {
        let mut parser = Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
        };
        match parser.value(0, true).ok()? {
            Read::Whole(value) => {
                parser.skip_ws();
                parser.at_end().then_some(value)
            }
            Read::Cut(value) => value,
        }
    }

    enum Read {
        /// The value ended before the text did.
        Whole(Value),
        /// The text ended inside the value: what of it is usable.
        Cut(Option<Value>),
    }

    /// Not a prefix of JSON.
    struct Syntax;

    struct Parser<'a> {
        text: &'a str,
        bytes: &'a [u8],
        pos: usize,
    }

    fn cut_object(map: Map<String, Value>) -> Read {
        Read::Cut(Some(Value::Object(map)))
    }

    impl Parser<'_> {
        fn peek(&self) -> Option<u8> {
            self.bytes.get(self.pos).copied()
        }

        fn at_end(&self) -> bool {
            self.pos >= self.bytes.len()
        }

        fn skip_ws(&mut self) {
            while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
                self.pos += 1;
            }
        }

        fn value(&mut self, depth: usize, prose: bool) -> Result<Read, Syntax> {
            if depth > MAX_DEPTH {
                return Err(Syntax);
            }
            self.skip_ws();
            match self.peek() {
                None => Ok(Read::Cut(None)),
                Some(b'{') => self.object(depth),
                Some(b'[') => self.array(depth),
                Some(b'"') => Ok(match self.string()? {
                    (s, true) => Read::Whole(Value::String(s)),
                    (s, false) => {
                        Read::Cut(prose.then(|| whole_words(s)).flatten().map(Value::String))
                    }
                }),
                Some(b'-' | b'0'..=b'9') => self.number(),
                Some(b't') => self.literal("true", Value::Bool(true)),
                Some(b'f') => self.literal("false", Value::Bool(false)),
                Some(b'n') => self.literal("null", Value::Null),
                Some(_) => Err(Syntax),
            }
        }

        fn object(&mut self, depth: usize) -> Result<Read, Syntax> {
            self.pos += 1;
            let mut map = Map::new();
            self.skip_ws();
            if self.peek() == Some(b'}') {
                self.pos += 1;
                return Ok(Read::Whole(Value::Object(map)));
            }
            loop {
                self.skip_ws();
                match self.peek() {
                    None => return Ok(cut_object(map)),
                    Some(b'"') => {}
                    Some(_) => return Err(Syntax),
                }
                let (key, whole) = self.string()?;
                if !whole {
                    return Ok(cut_object(map));
                }
                self.skip_ws();
                match self.peek() {
                    None => return Ok(cut_object(map)),
                    Some(b':') => self.pos += 1,
                    Some(_) => return Err(Syntax),
                }
                let prose = PROSE_KEYS.contains(&key.as_str());
                match self.value(depth + 1, prose)? {
                    Read::Whole(value) => {
                        map.insert(key, value);
                    }
                    Read::Cut(value) => {
                        if let Some(value) = value {
                            map.insert(key, value);
                        }
                        return Ok(cut_object(map));
                    }
                }
                self.skip_ws();
                match self.peek() {
                    None => return Ok(cut_object(map)),
                    Some(b',') => self.pos += 1,
                    Some(b'}') => {
                        self.pos += 1;
                        return Ok(Read::Whole(Value::Object(map)));
                    }
                    Some(_) => return Err(Syntax),
                }
            }
        }

        fn array(&mut self, depth: usize) -> Result<Read, Syntax> {
            self.pos += 1;
            let mut items = Vec::new();
            self.skip_ws();
            if self.peek() == Some(b']') {
                self.pos += 1;
                return Ok(Read::Whole(Value::Array(items)));
            }
            loop {
                match self.value(depth + 1, false)? {
                    Read::Whole(value) => items.push(value),
                    Read::Cut(value) => {
                        items.extend(value);
                        return Ok(Read::Cut(Some(Value::Array(items))));
                    }
                }
                self.skip_ws();
                match self.peek() {
                    None => return Ok(Read::Cut(Some(Value::Array(items)))),
                    Some(b',') => self.pos += 1,
                    Some(b']') => {
                        self.pos += 1;
                        return Ok(Read::Whole(Value::Array(items)));
                    }
                    Some(_) => return Err(Syntax),
                }
            }
        }

        /// A string from its opening quote: the text and whether its closing quote arrived.
        fn string(&mut self) -> Result<(String, bool), Syntax> {
            self.pos += 1;
            let mut out = String::new();
            loop {
                let rest = self.bytes.get(self.pos..).unwrap_or_default();
                let Some(offset) = memchr::memchr2(b'"', b'\\', rest) else {
                    self.push_plain(&mut out, self.bytes.len())?;
                    self.pos = self.bytes.len();
                    return Ok((out, false));
                };
                let end = self.pos + offset;
                self.push_plain(&mut out, end)?;
                self.pos = end + 1;
                if rest.get(offset) == Some(&b'"') {
                    return Ok((out, true));
                }
                let Some(escape) = self.peek() else {
                    return Ok((out, false));
                };
                self.pos += 1;
                let c = match (escape, crate::model_field::simple_escape(escape)) {
                    (_, Some(c)) => c,
                    (b'u', None) => match self.unicode_escape()? {
                        Some(c) => c,
                        None => return Ok((out, false)),
                    },
                    _ => return Err(Syntax),
                };
                out.push(c);
            }
        }

        /// Appends `text[pos..end]`, which holds no quote or backslash; control characters are
        /// not allowed raw in JSON strings.
        fn push_plain(&self, out: &mut String, end: usize) -> Result<(), Syntax> {
            let chunk = self.text.get(self.pos..end).ok_or(Syntax)?;
            if chunk.bytes().any(|b| b < 0x20) {
                return Err(Syntax);
            }
            out.push_str(chunk);
            Ok(())
        }

        /// Four hex digits; `None` when the text ends inside them.
        fn hex4(&mut self) -> Result<Option<u32>, Syntax> {
            let rest = self.bytes.get(self.pos..).unwrap_or_default();
            let Some(digits) = rest.get(..4) else {
                if rest.iter().all(u8::is_ascii_hexdigit) {
                    self.pos = self.bytes.len();
                    return Ok(None);
                }
                return Err(Syntax);
            };
            let mut v = 0u32;
            for d in digits {
                v = v * 16 + char::from(*d).to_digit(16).ok_or(Syntax)?;
            }
            self.pos += 4;
            Ok(Some(v))
        }

        /// The character of a `\uXXXX` escape (after `\u`), joining surrogate pairs; a lone
        /// surrogate becomes U+FFFD. `None` when the text ends inside the escape.
        fn unicode_escape(&mut self) -> Result<Option<char>, Syntax> {
            let Some(high) = self.hex4()? else {
                return Ok(None);
            };
            if !(0xD800..0xDC00).contains(&high) {
                return Ok(Some(char::from_u32(high).unwrap_or('\u{fffd}')));
            }
            let rest = self.bytes.get(self.pos..).unwrap_or_default();
            if rest.is_empty() || rest == b"\\" {
                return Ok(None);
            }
            if !rest.starts_with(b"\\u") {
                return Ok(Some('\u{fffd}'));
            }
            self.pos += 2;
            let Some(low) = self.hex4()? else {
                return Ok(None);
            };
            if !(0xDC00..0xE000).contains(&low) {
                return Ok(Some('\u{fffd}'));
            }
            let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
            Ok(Some(char::from_u32(code).unwrap_or('\u{fffd}')))
        }

        /// A number; one that runs to the end of the text may have been cut (`17` of `1713`)
        /// and is dropped.
        fn number(&mut self) -> Result<Read, Syntax> {
            let start = self.pos;
            while matches!(
                self.peek(),
                Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
            ) {
                self.pos += 1;
            }
            if self.at_end() {
                return Ok(Read::Cut(None));
            }
            let token = self.text.get(start..self.pos).ok_or(Syntax)?;
            let number = token.parse::<Number>().map_err(|_| Syntax)?;
            Ok(Read::Whole(Value::Number(number)))
        }

        fn literal(&mut self, word: &str, value: Value) -> Result<Read, Syntax> {
            let rest = self.bytes.get(self.pos..).unwrap_or_default();
            if rest.starts_with(word.as_bytes()) {
                self.pos += word.len();
                return Ok(Read::Whole(value));
            }
            if word.as_bytes().starts_with(rest) {
                self.pos = self.bytes.len();
                return Ok(Read::Cut(None));
            }
            Err(Syntax)
        }
    }

    /// A prose string cut in the middle, up to its last whole word: the cut may have split a
    /// word (or a UTF-8 sequence, now U+FFFD), and half a word must not match a phrase it is
    /// not part of. `None` when no whole word is left.
    fn whole_words(mut text: String) -> Option<String> {
        let keep = text
            .trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '\u{fffd}')
            .trim_end()
            .len();
        text.truncate(keep);
        (!text.is_empty()).then_some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn codes(e: &Evidence) -> Vec<&str> {
        e.codes.iter().map(|c| c.value.as_str()).collect()
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn python_reprs_read_as_json_whichever_quote_they_use() {
        let repr = r#"{'error': {'message': "Invalid 'model'", 'note': 'say "hi"', 'x': 'it\'s', 'ok': True, 'id': None}}"#;
        let json: Value = serde_json::from_str(&python_repr_as_json(repr)).unwrap();
        assert_eq!(json["error"]["message"], "Invalid 'model'");
        assert_eq!(json["error"]["note"], "say \"hi\"");
        assert_eq!(json["error"]["x"], "it's");
        assert_eq!(json["error"]["ok"], true);
        assert!(json["error"]["id"].is_null());
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn statuses_named_with_their_reason_phrase() {
        assert_eq!(
            status_named_in("upstream rejected request: 400 bad request - x"),
            Some(400)
        );
        assert_eq!(
            status_named_in("got 402 payment required from openai"),
            Some(402)
        );
        assert_eq!(status_named_in("order 1400 bad request"), None);
        assert_eq!(status_named_in("400 requests bad"), None);
        assert_eq!(status_named_in("429"), None);
        assert_eq!(
            status_named_in("error: 429 status code (no body)"),
            Some(429)
        );
        assert_eq!(
            status_named_in("internalservererror: error code: 524"),
            Some(524)
        );
        assert_eq!(status_named_in("error code: 200"), None);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn reads_the_common_envelopes() {
        let e = Evidence::from_body(
            br#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
        );
        assert_eq!(codes(&e), ["insufficient_quota"]);
        assert_eq!(e.messages, ["you exceeded your current quota"]);
        assert!(e.has_error_envelope);

        let e = Evidence::from_body(
            br#"[{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"violations":[{"quotaId":"PerDay"}]}]}}]"#,
        );
        assert_eq!(codes(&e), ["429", "resource_exhausted"]);
        assert_eq!(e.quota_ids, ["perday"]);

        let e = Evidence::from_body(
            r#"{"Response":{"Error":{"Code":"LimitExceeded","Message":"超过限额"}}}"#.as_bytes(),
        );
        assert_eq!(codes(&e), ["limitexceeded"]);
        assert_eq!(e.messages, ["超过限额"]);

        let e = Evidence::from_body(
            br#"{"error_code":17,"error_msg":"Open api daily request limit reached"}"#,
        );
        assert_eq!(codes(&e), ["17"]);
        assert!(e.has_error_envelope);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn follows_nested_provider_bodies() {
        let e = Evidence::from_body(
            br#"{"error":{"message":"Provider returned error","code":429,"metadata":{"raw":"{\"error\":{\"type\":\"overloaded_error\"}}"}}}"#,
        );
        assert!(codes(&e).contains(&"overloaded_error"), "{:?}", e.codes);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn reads_sse_html_and_text() {
        let e = Evidence::from_body(
            b"event: message_start\ndata: {}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
        );
        assert_eq!(codes(&e), ["overloaded_error"]);
        let e = Evidence::from_body(b"<html><head><title>502 Bad Gateway</title></head></html>");
        assert_eq!(e.messages, ["502 bad gateway"]);
        // Title, first h1 and first h2, inner tags dropped, each text once.
        let e = Evidence::from_body(
            b"<!DOCTYPE html><html><head><title>Access denied | x used Cloudflare</title></head><body><h1 data-translate=\"block_headline\"><span>Error</span> <span>1015</span></h1><h2 class=\"cf-subheadline\">You are being rate limited</h2><h2>more</h2><header>no</header></body></html>",
        );
        assert_eq!(
            e.messages,
            [
                "access denied | x used cloudflare",
                "error 1015",
                "you are being rate limited"
            ]
        );
        let e = Evidence::from_body(b"<html><title>502</title><h1>502</h1></html>");
        assert_eq!(e.messages, ["502"]);
        let e = Evidence::from_body(b"upstream request timeout");
        assert_eq!(e.messages, ["upstream request timeout"]);
        let e = Evidence::from_body(b"\"Api key is invalid\"");
        assert_eq!(e.messages, ["api key is invalid"]);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn prefix_parser_keeps_what_arrived_whole() {
        use serde_json::json;
        let cases: &[(&str, Option<Value>)] = &[
            (r#"{"a":"b""#, Some(json!({"a": "b"}))),
            (r#"{"a":"b","#, Some(json!({"a": "b"}))),
            (r#"{"a":"b","c"#, Some(json!({"a": "b"}))),
            (r#"{"a":"b","c":"#, Some(json!({"a": "b"}))),
            (r#"{"a":"b","c":"d"#, Some(json!({"a": "b"}))),
            (
                r#"{"a":{"b":[1,2,{"c":true}"#,
                Some(json!({"a": {"b": [1, 2, {"c": true}]}})),
            ),
            (r#"{"a":[1,2"#, Some(json!({"a": [1]}))),
            (r#"{"a":tr"#, Some(json!({}))),
            (r#"{"a":null,"b":fals"#, Some(json!({"a": null}))),
            (r#"{"n":-1.5e3,"m":2"#, Some(json!({"n": -1500.0}))),
            // Prose keeps its whole words; escapes are decoded, a cut escape ends the text.
            (
                r#"{"message":"Rate limit\nreached for mod"#,
                Some(json!({"message": "Rate limit\nreached for"})),
            ),
            (
                r#"{"message":"caf\u00e9 \ud83d\ude00 ok \ud83d"#,
                Some(json!({"message": "café 😀 ok"})),
            ),
            (r#"{"message":"oneword"#, Some(json!({}))),
            (
                r#"{"error":"model 'x' not fo"#,
                Some(json!({"error": "model 'x' not"})),
            ),
            (r#"{"code":"insufficient_quo"#, Some(json!({}))),
            (r#""Api key is inval"#, Some(json!("Api key is"))),
            (
                r#"[{"error":{"code":429,"#,
                Some(json!([{"error": {"code": 429}}])),
            ),
            (r#"["#, Some(json!([]))),
            (r#"{"#, Some(json!({}))),
            // Not a prefix of JSON.
            (r#"{"a" 1"#, None),
            (r#"{"a":1}x"#, None),
            (r#"{"a":"\q"#, None),
            (r#"{"a":[1,]"#, None),
            ("{\"a\":\"x\ny", None),
            (r#"{"a":nul1"#, None),
        ];
        for (text, want) in cases {
            assert_eq!(prefix::parse(text), *want, "{text}");
        }
        // Nesting is bounded (serde_json refuses deeper bodies before this parser sees them).
        assert!(prefix::parse(&"[".repeat(128)).is_some());
        assert_eq!(prefix::parse(&"[".repeat(130)), None);
        assert_eq!(prefix::parse(&r#"{"a":"#.repeat(200)), None);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn huge_bodies_keep_a_bounded_amount_of_evidence() {
        let details: Vec<String> = (0..5000)
            .map(|i| format!(r#"{{"reason":"r{i}"}}"#))
            .collect();
        let body = format!(r#"{{"error":{{"details":[{}]}}}}"#, details.join(","));
        let e = Evidence::from_body(body.as_bytes());
        assert_eq!(e.codes.len(), MAX_ITEMS);
        let e = Evidence::from_body(&body.as_bytes()[..body.len() / 2]);
        assert!(e.truncated);
        assert_eq!(e.codes.len(), MAX_ITEMS);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn normalizes_messages() {
        assert_eq!(
            normalize("  Organization\u{2019}s  RATE\nlimit "),
            "organization's rate limit"
        );
        assert_eq!(normalize("Incorrect%20API%20key"), "incorrect api key");
        assert_eq!(normalize(&"x".repeat(5000)).len(), MAX_MESSAGE);
        assert_eq!(
            normalize("Tools AREN'T supported; I can't; it won’t; don't"),
            "tools are not supported; i cannot; it will not; do not"
        );
        assert_eq!(
            normalize("بعد ٢٣ ساعة، ۱۸ ساعت، २४ घंटे, ๕ นาที, ５分钟"),
            "بعد 23 ساعة، 18 ساعت، 24 घंटे, 5 นาที, 5分钟"
        );
        assert_eq!(normalize("طويل جدًا"), "طويل جدا");
    }
}
