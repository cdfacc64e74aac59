//! A fake Envoy behind the same functions as [`raw`](super::raw), for native tests of the shell.
//!
//! Natively (tests only) this module *is* `super::raw`: every host call the shell makes lands
//! here, in a thread-local [`Fake`]: one stream's header maps and bodies, the request's filter
//! state and Envoy properties, shared data with CAS tokens, stats, the clock, local replies and
//! a log of every call. A test sets up what Envoy would hold, drives a context's callbacks, and
//! reads back what the filter did. Statuses follow the ABI: `NotFound` for absent values,
//! `BadArgument` for a header map the phase does not have (as Envoy answers it), `CasMismatch`
//! for a stale token.

use proxy_wasm::types::{BufferType, LogLevel, MapType, MetricType, Status};
use std::cell::RefCell;
use std::collections::HashMap;

/// Header pairs in order.
pub type Pairs = Vec<(String, String)>;

/// One HTTP stream as Envoy holds it for a filter.
#[derive(Debug, Default, Clone)]
pub struct Stream {
    pub request_headers: Option<Pairs>,
    pub response_headers: Option<Pairs>,
    pub request_body: Vec<u8>,
    pub response_body: Vec<u8>,
    /// A local reply the filter sent: status, headers, body.
    pub reply: Option<(u32, Pairs, Vec<u8>)>,
}

/// Everything the fake host holds.
#[derive(Debug, Default)]
pub struct Fake {
    pub stream: Stream,
    /// Filter state and Envoy properties, by dotted path (`response.code_details`).
    pub properties: HashMap<String, Vec<u8>>,
    /// Shared data: value and CAS token.
    pub shared: HashMap<String, (Vec<u8>, u32)>,
    pub now_ms: u64,
    /// Metric id -> (name, value).
    pub metrics: Vec<(String, i64)>,
    /// Every call, as `name arguments`.
    pub calls: Vec<String>,
    /// Writes that fail with a CAS mismatch before succeeding (contention).
    pub cas_conflicts: u32,
    /// The plugin's configuration (`PluginConfiguration` buffer).
    pub plugin_config: Vec<u8>,
    /// Shared queues (id = index + 1): name and items.
    pub queues: Vec<(String, Vec<Vec<u8>>)>,
}

thread_local! {
    static FAKE: RefCell<Fake> = RefCell::new(Fake::default());
}

/// Runs `f` on the fake host's state.
pub fn with<T>(f: impl FnOnce(&mut Fake) -> T) -> T {
    FAKE.with(|fake| f(&mut fake.borrow_mut()))
}

/// Swaps the current stream (the client's and an attempt's are separate streams of one
/// request; filter state and shared data are common).
pub fn swap_stream(stream: Stream) -> Stream {
    with(|f| std::mem::replace(&mut f.stream, stream))
}

fn record(call: String) {
    with(|f| f.calls.push(call));
}

fn map_of(f: &mut Fake, map: MapType) -> Result<&mut Pairs, Status> {
    let map = match map {
        MapType::HttpRequestHeaders => f.stream.request_headers.as_mut(),
        MapType::HttpResponseHeaders => f.stream.response_headers.as_mut(),
        _ => None,
    };
    map.ok_or(Status::BadArgument)
}

pub fn log(level: LogLevel, message: &str) -> Result<(), Status> {
    record(format!("log {level:?} {message}"));
    Ok(())
}

pub fn header(map: MapType, name: &str) -> Result<Option<Vec<u8>>, Status> {
    record(format!("header {map:?} {name}"));
    with(|f| {
        let map = map_of(f, map)?;
        Ok(map
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone().into_bytes()))
    })
}

pub fn headers(map: MapType) -> Result<Vec<(String, Vec<u8>)>, Status> {
    record(format!("headers {map:?}"));
    with(|f| {
        let map = map_of(f, map)?;
        Ok(map
            .iter()
            .map(|(k, v)| (k.clone(), v.clone().into_bytes()))
            .collect())
    })
}

pub fn set_header(map: MapType, name: &str, value: &str) -> Result<(), Status> {
    record(format!("set_header {map:?} {name}: {value}"));
    with(|f| {
        let map = map_of(f, map)?;
        map.retain(|(k, _)| k != name);
        map.push((name.to_owned(), value.to_owned()));
        Ok(())
    })
}

pub fn remove_header(map: MapType, name: &str) -> Result<(), Status> {
    record(format!("remove_header {map:?} {name}"));
    with(|f| {
        map_of(f, map)?.retain(|(k, _)| k != name);
        Ok(())
    })
}

fn body_of(f: &mut Fake, kind: BufferType) -> Result<&mut Vec<u8>, Status> {
    match kind {
        BufferType::HttpRequestBody => Ok(&mut f.stream.request_body),
        BufferType::HttpResponseBody => Ok(&mut f.stream.response_body),
        BufferType::PluginConfiguration => Ok(&mut f.plugin_config),
        _ => Err(Status::NotFound),
    }
}

pub fn buffer(kind: BufferType, start: usize, size: usize) -> Result<Option<Vec<u8>>, Status> {
    record(format!("buffer {kind:?} {start}+{size}"));
    with(|f| {
        let body = body_of(f, kind)?;
        let end = start.saturating_add(size).min(body.len());
        Ok(body.get(start.min(end)..end).map(<[u8]>::to_vec))
    })
}

pub fn set_buffer(kind: BufferType, start: usize, size: usize, value: &[u8]) -> Result<(), Status> {
    record(format!(
        "set_buffer {kind:?} {start}+{size} ({} bytes)",
        value.len()
    ));
    with(|f| {
        let body = body_of(f, kind)?;
        let end = start.saturating_add(size).min(body.len());
        body.splice(start.min(end)..end, value.iter().copied());
        Ok(())
    })
}

pub fn property(path: &[&str]) -> Result<Option<Vec<u8>>, Status> {
    let key = path.join(".");
    record(format!("property {key}"));
    with(|f| Ok(f.properties.get(&key).cloned()))
}

pub fn set_property(path: &[&str], value: &[u8]) -> Result<(), Status> {
    let key = path.join(".");
    record(format!("set_property {key}"));
    with(|f| {
        f.properties.insert(key, value.to_vec());
        Ok(())
    })
}

pub fn send_response(status: u32, headers: &[(&str, &[u8])], body: &[u8]) -> Result<(), Status> {
    record(format!("send_response {status}"));
    with(|f| {
        let headers = headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), String::from_utf8_lossy(v).into_owned()))
            .collect();
        f.stream.reply = Some((status, headers, body.to_vec()));
        Ok(())
    })
}

pub fn resume_response() -> Result<(), Status> {
    record("resume_response".to_owned());
    Ok(())
}

pub fn resume_request() -> Result<(), Status> {
    record("resume_request".to_owned());
    Ok(())
}

pub fn record_metric(id: u32, value: u64) -> Result<(), Status> {
    with(|f| {
        let metric = f.metrics.get_mut(id as usize).ok_or(Status::NotFound)?;
        metric.1 = i64::try_from(value).unwrap_or(i64::MAX);
        Ok(())
    })
}

pub fn register_shared_queue(name: &str) -> Result<u32, Status> {
    record(format!("register_shared_queue {name}"));
    with(|f| {
        f.queues.push((name.to_owned(), Vec::new()));
        u32::try_from(f.queues.len()).map_err(|_| Status::InternalFailure)
    })
}

pub fn resolve_shared_queue(_vm_id: &str, name: &str) -> Result<u32, Status> {
    with(|f| {
        let index = f
            .queues
            .iter()
            .rposition(|(n, _)| n == name)
            .ok_or(Status::NotFound)?;
        u32::try_from(index + 1).map_err(|_| Status::InternalFailure)
    })
}

pub fn enqueue_shared_queue(id: u32, value: &[u8]) -> Result<(), Status> {
    record(format!("enqueue_shared_queue {id}"));
    with(|f| {
        let queue = f
            .queues
            .get_mut((id as usize).wrapping_sub(1))
            .ok_or(Status::NotFound)?;
        queue.1.push(value.to_vec());
        Ok(())
    })
}

pub fn dequeue_shared_queue(id: u32) -> Result<Option<Vec<u8>>, Status> {
    with(|f| {
        let queue = f
            .queues
            .get_mut((id as usize).wrapping_sub(1))
            .ok_or(Status::NotFound)?;
        Ok((!queue.1.is_empty()).then(|| queue.1.remove(0)))
    })
}

pub fn set_effective_context(context_id: u32) -> Result<(), Status> {
    record(format!("set_effective_context {context_id}"));
    Ok(())
}

pub fn shared_data(key: &str) -> Result<(Option<Vec<u8>>, Option<u32>), Status> {
    with(|f| {
        Ok(match f.shared.get(key) {
            Some((value, cas)) => (Some(value.clone()), Some(*cas)),
            None => (None, None),
        })
    })
}

pub fn set_shared_data(key: &str, value: &[u8], cas: Option<u32>) -> Result<(), Status> {
    with(|f| {
        let current = f.shared.get(key).map(|(_, c)| *c);
        if cas.is_some() && f.cas_conflicts > 0 {
            f.cas_conflicts -= 1;
            return Err(Status::CasMismatch);
        }
        if let (Some(asked), Some(current)) = (cas, current) {
            if asked != current {
                return Err(Status::CasMismatch);
            }
        }
        let next = current.unwrap_or(0) + 1;
        f.shared.insert(key.to_owned(), (value.to_vec(), next));
        Ok(())
    })
}

pub fn define_metric(_kind: MetricType, name: &str) -> Result<u32, Status> {
    with(|f| {
        f.metrics.push((name.to_owned(), 0));
        u32::try_from(f.metrics.len() - 1).map_err(|_| Status::InternalFailure)
    })
}

pub fn increment_metric(id: u32, delta: i64) -> Result<(), Status> {
    with(|f| {
        let metric = f.metrics.get_mut(id as usize).ok_or(Status::NotFound)?;
        metric.1 += delta;
        Ok(())
    })
}

pub fn now_nanos() -> Result<u64, Status> {
    record("now".to_owned());
    with(|f| Ok(f.now_ms * 1_000_000))
}

pub fn set_tick_period_ms(_period_ms: u32) -> Result<(), Status> {
    Ok(())
}

pub fn log_level() -> Result<u32, Status> {
    Ok(2)
}
