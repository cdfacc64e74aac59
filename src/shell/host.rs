//! The host calls the filter uses, failures turned into `None`/`false`.
//!
//! The SDK's `Context` convenience methods `unwrap()` host results, and its `hostcalls`
//! functions `panic!` on statuses they do not expect; a panic traps the VM for every request on
//! the worker. These wrappers go through [`super::raw`] (the ABI itself) and turn every failure
//! into `None`/`false`, logged at debug level, so a host surprise degrades one request's
//! bookkeeping, never the proxy.

use super::raw;
use proxy_wasm::types::{BufferType, LogLevel, MapType, MetricType, Status};

/// Logs through the host, ignoring failures (there is nowhere else to report them).
pub fn log(level: LogLevel, message: &str) {
    let _ = raw::log(level, message);
}

fn debug_failure(what: &str, status: Status) {
    if log::log_enabled!(log::Level::Debug) {
        log(LogLevel::Debug, &format!("{what} failed: {status:?}"));
    }
}

/// Reads `[start, start + size)` of a body or configuration buffer.
pub fn buffer(kind: BufferType, start: usize, size: usize) -> Option<Vec<u8>> {
    match raw::buffer(kind, start, size) {
        Ok(bytes) => bytes,
        Err(status) => {
            debug_failure("get_buffer", status);
            None
        }
    }
}

/// Reads a header as raw bytes (values need not be UTF-8).
pub fn header(map: MapType, name: &str) -> Option<Vec<u8>> {
    match raw::header(map, name) {
        Ok(value) => value,
        Err(status) => {
            debug_failure("get_map_value", status);
            None
        }
    }
}

/// Reads a property such as `["plugin_root_id"]`.
pub fn property(path: Vec<&str>) -> Option<Vec<u8>> {
    match raw::property(&path) {
        Ok(value) => value,
        Err(status) => {
            debug_failure("get_property", status);
            None
        }
    }
}

/// Sends a local reply instead of forwarding the request.
pub fn send_response(status: u32, headers: Vec<(&str, &str)>, body: &[u8]) -> bool {
    let headers: Vec<(&str, &[u8])> = headers.iter().map(|(k, v)| (*k, v.as_bytes())).collect();
    match raw::send_response(status, &headers, body) {
        Ok(()) => true,
        Err(status) => {
            debug_failure("send_http_response", status);
            false
        }
    }
}

/// Defines a counter stat (`wasmcustom.<name>` in Envoy).
pub fn define_counter(name: &str) -> Option<u32> {
    match raw::define_metric(MetricType::Counter, name) {
        Ok(id) => Some(id),
        Err(status) => {
            debug_failure("define_metric", status);
            None
        }
    }
}

pub fn increment_metric(id: u32, delta: i64) {
    if let Err(status) = raw::increment_metric(id, delta) {
        debug_failure("increment_metric", status);
    }
}

/// Reads a little-endian u64 from shared data, with its CAS token.
pub fn shared_u64(key: &str) -> Option<(u64, Option<u32>)> {
    match raw::shared_data(key) {
        Ok((bytes, cas)) => {
            let value = bytes
                .and_then(|b| <[u8; 8]>::try_from(b.as_slice()).ok())
                .map_or(0, u64::from_le_bytes);
            Some((value, cas))
        }
        Err(status) => {
            debug_failure("get_shared_data", status);
            None
        }
    }
}

/// What a compare-and-swap update of a shared-data key did.
#[derive(Debug, PartialEq, Eq)]
pub enum CasOutcome {
    /// The new value was written.
    Written,
    /// `change` chose to leave the value as it was.
    Unchanged,
    /// The host refused the write, or the key stayed contended.
    Failed,
}

/// Rewrites a shared-data key with compare-and-swap: `change` sees the current value (`None`
/// when missing or unreadable) and returns the new one, or `None` to leave it. Retries a few
/// times when another worker wrote in between.
pub fn cas_update(
    key: &str,
    mut change: impl FnMut(Option<&[u8]>) -> Option<Vec<u8>>,
) -> CasOutcome {
    const ATTEMPTS: usize = 16;
    for _ in 0..ATTEMPTS {
        let (current, cas) = match raw::shared_data(key) {
            Ok(found) => found,
            Err(status) => {
                debug_failure("get_shared_data", status);
                return CasOutcome::Failed;
            }
        };
        let Some(next) = change(current.as_deref()) else {
            return CasOutcome::Unchanged;
        };
        match raw::set_shared_data(key, &next, cas) {
            Ok(()) => return CasOutcome::Written,
            Err(Status::CasMismatch) => continue,
            Err(status) => {
                debug_failure("set_shared_data", status);
                return CasOutcome::Failed;
            }
        }
    }
    log(
        LogLevel::Warn,
        &format!("shared key {key} stayed contended; update deferred"),
    );
    CasOutcome::Failed
}

/// Adds `delta` to a shared u64. Returns whether the update landed.
pub fn shared_add(key: &str, delta: u64) -> bool {
    let outcome = cas_update(key, |current| {
        let value = current
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map_or(0, u64::from_le_bytes);
        Some(value.saturating_add(delta).to_le_bytes().to_vec())
    });
    outcome == CasOutcome::Written
}

/// Creates a shared u64 key with value 0 if it does not exist yet, so that later updates always
/// carry a CAS token (a write to a missing key always succeeds, which would race).
pub fn shared_init(key: &str) {
    if let Some((_, None)) = shared_u64(key) {
        if let Err(status) = raw::set_shared_data(key, &0u64.to_le_bytes(), None) {
            debug_failure("set_shared_data", status);
        }
    }
}

/// Sets (replaces) a header.
pub fn set_header(map: MapType, name: &str, value: &str) {
    if let Err(status) = raw::set_header(map, name, value) {
        debug_failure("set_map_value", status);
    }
}

/// All headers of a map, values as lossy UTF-8 (only used on error answers).
pub fn headers(map: MapType) -> Vec<(String, String)> {
    match raw::headers(map) {
        Ok(pairs) => lossy(pairs),
        Err(status) => {
            debug_failure("get_map", status);
            Vec::new()
        }
    }
}

/// Header values as text (lossy UTF-8), for the classifier.
pub fn lossy(pairs: Vec<(String, Vec<u8>)>) -> Vec<(String, String)> {
    pairs
        .into_iter()
        .map(|(k, v)| (k, String::from_utf8_lossy(&v).into_owned()))
        .collect()
}

/// Borrowed views of owned header pairs (what [`crate::classify::Answer`] takes).
pub fn borrowed(pairs: &[(String, String)]) -> Vec<(&str, &str)> {
    pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

/// The host's wall clock in unix milliseconds (0 if unavailable).
pub fn now_unix_ms() -> u64 {
    raw::now_nanos().map_or(0, |nanos| nanos / 1_000_000)
}

/// Removes a header.
pub fn remove_header(map: MapType, name: &str) {
    if let Err(status) = raw::remove_header(map, name) {
        debug_failure("remove header", status);
    }
}

/// Replaces a whole body buffer of `size` bytes with `value`.
pub fn set_body(kind: BufferType, size: usize, value: &[u8]) -> bool {
    match raw::set_buffer(kind, 0, size, value) {
        Ok(()) => true,
        Err(status) => {
            debug_failure("set_buffer", status);
            false
        }
    }
}

/// Sets a filter-state property of this stream.
pub fn set_property(name: &str, value: &[u8]) -> bool {
    match raw::set_property(&[name], value) {
        Ok(()) => true,
        Err(status) => {
            debug_failure("set_property", status);
            false
        }
    }
}

/// Shared data with its CAS token, failures as `None`.
pub fn shared_data(key: &str) -> Option<(Option<Vec<u8>>, Option<u32>)> {
    match raw::shared_data(key) {
        Ok(found) => Some(found),
        Err(status) => {
            debug_failure("get_shared_data", status);
            None
        }
    }
}

/// Writes shared data without a CAS check (creation of fixed keys at configuration time).
pub fn shared_create(key: &str, value: &[u8]) {
    if let Err(status) = raw::set_shared_data(key, value, None) {
        debug_failure("set_shared_data", status);
    }
}

/// Releases a held response of another stream of this worker (timer context): `false` when
/// that stream is gone or cannot be resumed.
pub fn resume_response_of(context_id: u32) -> bool {
    raw::set_effective_context(context_id).is_ok() && raw::resume_response().is_ok()
}
