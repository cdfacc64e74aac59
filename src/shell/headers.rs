//! The request headers the client filter needs, read in one host call.
//!
//! The client filter consults about ten headers per request (method, path, encoding, task, priority, retry safety, idempotency key, credential); fetching the whole map
//! once is cheaper than ten separate calls into the host.

use crate::config::Config;
use proxy_wasm::types::MapType;

#[derive(Debug, Default, Clone)]
pub struct RequestHeaders {
    pub method: String,
    pub path: String,
    pub content_encoding: Option<Vec<u8>>,
    pub task: Option<String>,
    pub priority: Option<String>,
    /// The retry-safety declaration (`retry_safety.header`).
    pub declared_safety: Option<String>,
    pub idempotency_key: Option<Vec<u8>>,
    /// `authorization`, else `x-api-key`: scopes idempotency keys per credential.
    pub credential: Option<Vec<u8>>,
    /// The provider credential headers present (`fallback.providers.credential_headers`), when
    /// the client's credentials must not go upstream.
    pub credentials_to_remove: Vec<String>,
    /// The canaries' `sticky_header`s present (a conversation id).
    pub sticky: Vec<(String, Vec<u8>)>,
}

impl RequestHeaders {
    pub fn read(config: &Config) -> Self {
        let pairs = match super::raw::headers(MapType::HttpRequestHeaders) {
            Ok(pairs) => pairs,
            Err(status) => {
                log::debug!("request headers unreadable: {status:?}");
                return Self::default();
            }
        };
        let text = |v: Vec<u8>| String::from_utf8(v).ok();
        let mut out = Self::default();
        let mut api_key = None;
        let providers = &config.fallback.providers;
        let strip = !providers.forwards_client_credentials();
        for (name, value) in pairs {
            if strip && providers.credential_headers.contains(&name) {
                out.credentials_to_remove.push(name.clone());
            }
            match name.as_str() {
                ":method" => out.method = text(value).unwrap_or_default(),
                ":path" => out.path = text(value).unwrap_or_default(),
                "content-encoding" => out.content_encoding = Some(value),
                "idempotency-key" => out.idempotency_key = Some(value),
                "authorization" => out.credential = Some(value),
                "x-api-key" => api_key = Some(value),
                n if n == config.fallback.task_header => out.task = text(value),
                n if n == config.fallback.priority_header => out.priority = text(value),
                n if n == config.retry_safety.header => out.declared_safety = text(value),
                n if config
                    .fallback
                    .canaries
                    .iter()
                    .any(|c| c.sticky_header.as_deref() == Some(n)) =>
                {
                    out.sticky.push((name, value));
                }
                _ => {}
            }
        }
        if out.credential.is_none() {
            out.credential = api_key;
        }
        out
    }
}
