//! Per-request work: read the request's model as the body streams by, count it.
//!
//! Nothing here buffers or changes a byte: every callback returns `Continue` and the body is read
//! chunk by chunk (a copy of each chunk, which the host API requires to look at it).

use super::{host, Plugin, Role};
use crate::model_field::{ModelScanner, Skip};
use crate::stats::{self, BodySkip, ModelCounter};
use proxy_wasm::traits::{Context, HttpContext};
use proxy_wasm::types::{Action, BufferType, MapType};
use std::rc::Rc;

pub struct Stream {
    plugin: Option<Rc<Plugin>>,
    /// The scanner while the model is still unknown; `None` once counted.
    scanner: Option<ModelScanner>,
}

impl Stream {
    pub fn new(plugin: Option<Rc<Plugin>>) -> Self {
        Self {
            plugin,
            scanner: Some(ModelScanner::new()),
        }
    }

    /// Counts this request (or attempt) for `model`; a `skip` says why it is unknown. Callers
    /// take `self.scanner` first, which marks the request as counted.
    fn count(&self, model: Option<&str>, skip: Option<BodySkip>) {
        let Some(plugin) = &self.plugin else { return };
        let family = match plugin.role {
            Role::Client => ModelCounter::Requests,
            Role::Upstream => ModelCounter::Attempts,
        };
        let metrics = &plugin.metrics;
        metrics.increment(metrics.set.model_counter(family, model));
        // Bodies are the same on every attempt: count them once, in the client position.
        if let (Some(skip), Role::Client) = (skip, plugin.role) {
            metrics.increment(metrics.set.body_skipped(skip));
            log::debug!(
                "{family:?}: model not read from body: {}",
                skip.as_str(),
                family = plugin.role
            );
        }
    }

    /// Answers the status path, if this is the client filter and the path matches.
    fn serve_status(&self) -> bool {
        let Some(plugin) = &self.plugin else {
            return false;
        };
        let Some(status_path) = plugin.config.status_path.as_deref() else {
            return false;
        };
        if plugin.role != Role::Client {
            return false;
        }
        let path = host::header(MapType::HttpRequestHeaders, ":path").unwrap_or_default();
        let path = path.split(|b| *b == b'?').next().unwrap_or_default();
        if path != status_path.as_bytes() {
            return false;
        }
        let body = stats::status_json(&plugin.metrics.set, &plugin.metrics.shared_values());
        host::send_response(
            200,
            vec![
                ("content-type", "application/json"),
                ("cache-control", "no-store"),
            ],
            body.as_bytes(),
        )
    }
}

impl Context for Stream {
    fn on_done(&mut self) -> bool {
        // A body with trailers never signals end_of_stream to the body callback.
        if let Some(scanner) = self.scanner.take() {
            self.count(scanner.found().map(|f| f.value.as_str()), None);
        }
        true
    }
}

impl HttpContext for Stream {
    fn on_http_request_headers(&mut self, _num_headers: usize, end_of_stream: bool) -> Action {
        if self.plugin.is_none() {
            self.scanner = None;
            return Action::Continue;
        }
        if self.serve_status() {
            self.scanner = None;
            return Action::Pause;
        }
        if end_of_stream {
            self.scanner = None;
            self.count(None, None);
            return Action::Continue;
        }
        let encoding = host::header(MapType::HttpRequestHeaders, "content-encoding");
        if encoding.is_some_and(|e| !e.eq_ignore_ascii_case(b"identity")) {
            self.scanner = None;
            self.count(None, Some(BodySkip::Encoded));
        }
        Action::Continue
    }

    fn on_http_request_body(&mut self, body_size: usize, end_of_stream: bool) -> Action {
        let Some(mut scanner) = self.scanner.take() else {
            return Action::Continue;
        };
        if let Some(chunk) = host::buffer(BufferType::HttpRequestBody, 0, body_size) {
            scanner.feed(&chunk);
        }
        // Scan to the end even once the model is known: a second top-level `model` makes the
        // body ambiguous (parsers disagree on which wins), and it must be counted as such.
        if scanner.is_invalid() {
            self.count(None, Some(BodySkip::Scan(Skip::NotJson)));
        } else if end_of_stream {
            match scanner.finish() {
                Ok(field) => self.count(Some(&field.value), None),
                Err(skip) => self.count(None, Some(BodySkip::Scan(skip))),
            }
        } else {
            self.scanner = Some(scanner);
        }
        Action::Continue
    }
}
