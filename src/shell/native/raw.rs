//! The host calls of the shell, made through Envoy's dynamic-module ABI instead of proxy-wasm.
//!
//! Same functions and statuses as the proxy-wasm layer (`shell/raw.rs`), so the shell above
//! runs unchanged. What proxy-wasm keeps per VM is kept here per worker thread (the stream a
//! hook runs for, the configuration being applied); what proxy-wasm shares between VMs (shared
//! data, shared queues) is process memory behind a mutex.

#![allow(unsafe_code)]

use super::abi::{self, EnvoyBuffer, EnvoyHeader, FilterEnvoy, ModuleBuffer, ModuleHeader};
use super::memory::{copy_range, SharedStore};
use super::{queues, Config};
use proxy_wasm::types::{BufferType, LogLevel, MapType, MetricType, Status};
use std::cell::Cell;
use std::collections::HashMap;
use std::ptr::null_mut;
use std::sync::{Mutex, OnceLock};

thread_local! {
    /// The Envoy stream whose hook runs on this thread (null outside hooks).
    static CURRENT: Cell<FilterEnvoy> = const { Cell::new(null_mut()) };
    /// The configuration of the hook or of the configuration step running on this thread.
    static CONFIG: Cell<*const Config> = const { Cell::new(std::ptr::null()) };
    /// Whether the running hook is a body hook (the received body exists only there).
    static IN_BODY: Cell<bool> = const { Cell::new(false) };
    /// A client stream whose request headers changed in this hook: its route is picked again.
    static REROUTE: Cell<FilterEnvoy> = const { Cell::new(null_mut()) };
    /// Per configuration on this thread: the timer period the shell asked for (ms).
    static PERIODS: std::cell::RefCell<HashMap<usize, u32>> = std::cell::RefCell::new(HashMap::new());
}

/// Runs `f` as the hook of `filter` under `config`, restoring the previous stream afterwards
/// (a hook can resume another stream, whose hooks then run nested).
pub fn within<T>(
    filter: FilterEnvoy,
    config: *const Config,
    body: bool,
    f: impl FnOnce() -> T,
) -> T {
    let previous = (CURRENT.get(), CONFIG.get(), IN_BODY.get());
    CURRENT.set(filter);
    CONFIG.set(config);
    IN_BODY.set(body);
    let out = f();
    let reroute = REROUTE.replace(null_mut());
    if !reroute.is_null() {
        // The route (and its cluster, from `x-llm-cluster`) was chosen from the headers as they
        // were: as proxy-wasm does after a request-header change, it is chosen again.
        // SAFETY: a live stream of this worker, in a hook.
        unsafe { abi::envoy_dynamic_module_callback_http_clear_route_cache(reroute) };
    }
    CURRENT.set(previous.0);
    CONFIG.set(previous.1);
    IN_BODY.set(previous.2);
    out
}

fn current() -> Result<FilterEnvoy, Status> {
    let filter = CURRENT.get();
    if filter.is_null() {
        Err(Status::BadArgument)
    } else {
        Ok(filter)
    }
}

fn config<'a>() -> Result<&'a Config, Status> {
    let config = CONFIG.get();
    // SAFETY: a configuration outlives every hook and configuration step that names it
    // (Envoy destroys it only after its filters).
    unsafe { config.as_ref() }.ok_or(Status::BadArgument)
}

/// The timer period the shell asked for under `config` on this thread.
pub fn period_of(config: *const Config) -> Option<u32> {
    PERIODS.with(|p| p.borrow().get(&(config as usize)).copied())
}

fn header_type(map: MapType) -> Result<u32, Status> {
    match map {
        MapType::HttpRequestHeaders => Ok(abi::REQUEST_HEADER),
        MapType::HttpRequestTrailers => Ok(abi::REQUEST_TRAILER),
        MapType::HttpResponseHeaders => Ok(abi::RESPONSE_HEADER),
        MapType::HttpResponseTrailers => Ok(abi::RESPONSE_TRAILER),
        _ => Err(Status::BadArgument),
    }
}

pub fn log(level: LogLevel, message: &str) -> Result<(), Status> {
    // SAFETY: the message outlives the call.
    unsafe {
        abi::envoy_dynamic_module_callback_log(level as u32, ModuleBuffer::of(message.as_bytes()))
    };
    Ok(())
}

/// The lowest level Envoy logs for dynamic modules (0 trace .. 5 critical).
pub fn log_level() -> Result<u32, Status> {
    for level in abi::LOG_TRACE..abi::LOG_CRITICAL {
        // SAFETY: no pointers.
        if unsafe { abi::envoy_dynamic_module_callback_log_enabled(level) } {
            return Ok(level);
        }
    }
    Ok(abi::LOG_CRITICAL)
}

pub fn header(map: MapType, name: &str) -> Result<Option<Vec<u8>>, Status> {
    let (filter, kind) = (current()?, header_type(map)?);
    let mut value = EnvoyBuffer::EMPTY;
    let mut count = 0usize;
    // SAFETY: the key and the locals outlive the call; the value is copied before the hook ends.
    let found = unsafe {
        abi::envoy_dynamic_module_callback_http_get_header(
            filter,
            kind,
            ModuleBuffer::of(name.as_bytes()),
            &mut value,
            0,
            &mut count,
        )
    };
    // SAFETY: Envoy's buffer, valid during this hook.
    Ok((found && count > 0).then(|| unsafe { value.bytes() }.to_vec()))
}

pub fn headers(map: MapType) -> Result<Vec<(String, Vec<u8>)>, Status> {
    let (filter, kind) = (current()?, header_type(map)?);
    // SAFETY: no pointers.
    let size = unsafe { abi::envoy_dynamic_module_callback_http_get_headers_size(filter, kind) };
    let empty = EnvoyHeader {
        key_ptr: std::ptr::null(),
        key_len: 0,
        value_ptr: std::ptr::null(),
        value_len: 0,
    };
    let mut pairs = vec![empty; size];
    // SAFETY: `pairs` has room for `size` headers, as the ABI requires.
    if size > 0
        && !unsafe {
            abi::envoy_dynamic_module_callback_http_get_headers(filter, kind, pairs.as_mut_ptr())
        }
    {
        return Err(Status::NotFound);
    }
    Ok(pairs
        .iter()
        .map(|h| {
            // SAFETY: Envoy's buffers, valid during this hook.
            let (key, value) = unsafe {
                (
                    EnvoyBuffer {
                        ptr: h.key_ptr,
                        len: h.key_len,
                    }
                    .bytes(),
                    EnvoyBuffer {
                        ptr: h.value_ptr,
                        len: h.value_len,
                    }
                    .bytes(),
                )
            };
            (String::from_utf8_lossy(key).into_owned(), value.to_vec())
        })
        .collect())
}

/// A callback's success flag as a status.
fn done(ok: bool) -> Result<(), Status> {
    if ok {
        Ok(())
    } else {
        Err(Status::BadArgument)
    }
}

fn put_header(map: MapType, name: &str, value: ModuleBuffer) -> Result<(), Status> {
    let (filter, kind) = (current()?, header_type(map)?);
    // SAFETY: the key and value outlive the call.
    let set = unsafe {
        abi::envoy_dynamic_module_callback_http_set_header(
            filter,
            kind,
            ModuleBuffer::of(name.as_bytes()),
            value,
        )
    };
    done(set)?;
    if kind == abi::REQUEST_HEADER && config().is_ok_and(|c| c.is_client()) {
        REROUTE.set(filter);
    }
    Ok(())
}

pub fn set_header(map: MapType, name: &str, value: &str) -> Result<(), Status> {
    put_header(map, name, ModuleBuffer::of(value.as_bytes()))
}

pub fn remove_header(map: MapType, name: &str) -> Result<(), Status> {
    put_header(map, name, ModuleBuffer::NULL)
}

/// The chunks of one body type (empty when that body does not exist now).
fn chunks(filter: FilterEnvoy, kind: u32) -> Vec<EnvoyBuffer> {
    // SAFETY: no pointers.
    let n = unsafe { abi::envoy_dynamic_module_callback_http_get_body_chunks_size(filter, kind) };
    let mut out = vec![EnvoyBuffer::EMPTY; n];
    // SAFETY: `out` has room for `n` chunks, as the ABI requires.
    if n == 0
        || !unsafe {
            abi::envoy_dynamic_module_callback_http_get_body_chunks(filter, kind, out.as_mut_ptr())
        }
    {
        out.clear();
    }
    out
}

/// The (buffered, received) body types of the request or the response.
fn body_types(response: bool) -> (u32, u32) {
    if response {
        (abi::BUFFERED_RESPONSE_BODY, abi::RECEIVED_RESPONSE_BODY)
    } else {
        (abi::BUFFERED_REQUEST_BODY, abi::RECEIVED_REQUEST_BODY)
    }
}

/// The body as proxy-wasm presents it: what was buffered so far, then the chunk just received
/// (unless that chunk is the buffered body itself).
fn body_chunks(filter: FilterEnvoy, response: bool) -> Vec<EnvoyBuffer> {
    let (buffered, received) = body_types(response);
    let mut all = chunks(filter, buffered);
    if IN_BODY.get() && !received_is_buffered(filter, response) {
        all.extend(chunks(filter, received));
    }
    all
}

fn received_is_buffered(filter: FilterEnvoy, response: bool) -> bool {
    // SAFETY: no pointers.
    unsafe {
        if response {
            abi::envoy_dynamic_module_callback_http_received_buffered_response_body(filter)
        } else {
            abi::envoy_dynamic_module_callback_http_received_buffered_request_body(filter)
        }
    }
}

/// The size of the body as [`buffer`] presents it.
pub fn body_size(filter: FilterEnvoy, response: bool) -> usize {
    let (buffered, received) = body_types(response);
    // SAFETY: no pointers.
    let size =
        |kind| unsafe { abi::envoy_dynamic_module_callback_http_get_body_size(filter, kind) };
    let mut total = size(buffered);
    if !received_is_buffered(filter, response) {
        total += size(received);
    }
    total
}

pub fn buffer(kind: BufferType, start: usize, size: usize) -> Result<Option<Vec<u8>>, Status> {
    let response = match kind {
        BufferType::PluginConfiguration => {
            let bytes = &config()?.bytes;
            let from = start.min(bytes.len());
            let to = from.saturating_add(size).min(bytes.len());
            return Ok(bytes.get(from..to).map(<[u8]>::to_vec));
        }
        BufferType::HttpRequestBody => false,
        BufferType::HttpResponseBody => true,
        _ => return Err(Status::BadArgument),
    };
    let filter = current()?;
    let chunks = body_chunks(filter, response);
    // SAFETY: Envoy's buffers, valid during this hook; copied at once.
    let bytes = chunks.iter().map(|c| unsafe { c.bytes() });
    Ok(Some(copy_range(bytes, start, size)))
}

/// Replaces the whole body (the only replacement the shell makes: `start` 0, every byte).
pub fn set_buffer(
    kind: BufferType,
    start: usize,
    _size: usize,
    value: &[u8],
) -> Result<(), Status> {
    let (buffered, received) = match kind {
        BufferType::HttpRequestBody => body_types(false),
        BufferType::HttpResponseBody => body_types(true),
        _ => return Err(Status::BadArgument),
    };
    if start != 0 {
        return Err(Status::BadArgument);
    }
    let filter = current()?;
    let target = if IN_BODY.get() { received } else { buffered };
    // SAFETY: the value outlives the call; the drains take no pointers.
    let appended = unsafe {
        abi::envoy_dynamic_module_callback_http_drain_body(filter, buffered, usize::MAX);
        if IN_BODY.get() {
            abi::envoy_dynamic_module_callback_http_drain_body(filter, received, usize::MAX);
        }
        abi::envoy_dynamic_module_callback_http_append_body(filter, target, ModuleBuffer::of(value))
    };
    done(appended)
}

fn attribute_string(filter: FilterEnvoy, attribute: u32) -> Option<Vec<u8>> {
    let mut value = EnvoyBuffer::EMPTY;
    // SAFETY: a pointer to a live local; the value is copied before the hook ends.
    unsafe {
        abi::envoy_dynamic_module_callback_http_filter_get_attribute_string(
            filter, attribute, &mut value,
        )
        .then(|| value.bytes().to_vec())
    }
}

/// The request-scoped property names the shell reads, from their dynamic-module sources.
pub fn property(path: &[&str]) -> Result<Option<Vec<u8>>, Status> {
    match path {
        ["plugin_root_id"] => return Ok(Some(config()?.name.as_bytes().to_vec())),
        ["plugin_vm_id"] => return Ok(Some(b"native".to_vec())),
        _ => {}
    }
    let filter = current()?;
    Ok(match path {
        ["response", "code_details"] => {
            attribute_string(filter, abi::ATTRIBUTE_RESPONSE_CODE_DETAILS)
        }
        ["response", "flags"] => {
            let mut flags = 0u64;
            // SAFETY: a pointer to a live local.
            unsafe {
                abi::envoy_dynamic_module_callback_http_filter_get_attribute_int(
                    filter,
                    abi::ATTRIBUTE_RESPONSE_FLAGS,
                    &mut flags,
                )
            }
            .then(|| flags.to_le_bytes().to_vec())
        }
        ["upstream", "transport_failure_reason"] => {
            attribute_string(filter, abi::ATTRIBUTE_UPSTREAM_TRANSPORT_FAILURE_REASON)
        }
        ["xds", "cluster_name"] => attribute_string(filter, abi::ATTRIBUTE_XDS_CLUSTER_NAME),
        ["xds", "route_metadata", "filter_metadata", namespace] => {
            // The shell reads three string keys of its namespace; proxy-wasm hands them over
            // as a pairs map, so the same map is built here.
            let ns = ModuleBuffer::of(namespace.as_bytes());
            // SAFETY: the name outlives the call.
            if unsafe {
                abi::envoy_dynamic_module_callback_http_get_metadata_keys_count(
                    filter,
                    abi::METADATA_ROUTE,
                    ns,
                )
            } == 0
            {
                return Ok(None);
            }
            let mut pairs: Vec<(&str, Vec<u8>)> = Vec::new();
            for key in ["priority", "task", "retry_safety"] {
                let mut value = EnvoyBuffer::EMPTY;
                // SAFETY: the names and the local outlive the call; the value is copied.
                let found = unsafe {
                    abi::envoy_dynamic_module_callback_http_get_metadata_string(
                        filter,
                        abi::METADATA_ROUTE,
                        ns,
                        ModuleBuffer::of(key.as_bytes()),
                        &mut value,
                    )
                };
                if found {
                    // SAFETY: Envoy's buffer, valid during this hook.
                    pairs.push((key, unsafe { value.bytes() }.to_vec()));
                }
            }
            let borrowed: Vec<(&str, &[u8])> =
                pairs.iter().map(|(k, v)| (*k, v.as_slice())).collect();
            (!pairs.is_empty()).then(|| crate::abi::encode_map(&borrowed))
        }
        [key] => {
            let key = state_key(key);
            let mut value = EnvoyBuffer::EMPTY;
            // SAFETY: the key and the local outlive the call; the value is copied.
            unsafe {
                abi::envoy_dynamic_module_callback_http_get_filter_state_bytes(
                    filter,
                    ModuleBuffer::of(key.as_bytes()),
                    &mut value,
                )
                .then(|| value.bytes().to_vec())
            }
        }
        _ => None,
    })
}

/// A filter-state name as the proxy-wasm build spells it (`wasm.` + name), so that one Envoy
/// configuration (its cluster specifier reads `wasm.llm_fallback_cluster`) serves both builds.
fn state_key(key: &str) -> String {
    format!("wasm.{key}")
}

pub fn set_property(path: &[&str], value: &[u8]) -> Result<(), Status> {
    let [key] = path else {
        return Err(Status::BadArgument);
    };
    let filter = current()?;
    let key = state_key(key);
    // SAFETY: the key and value outlive the call.
    done(unsafe {
        abi::envoy_dynamic_module_callback_http_set_filter_state_bytes(
            filter,
            ModuleBuffer::of(key.as_bytes()),
            ModuleBuffer::of(value),
        )
    })
}

pub fn send_response(status: u32, headers: &[(&str, &[u8])], body: &[u8]) -> Result<(), Status> {
    let filter = current()?;
    let mut pairs: Vec<ModuleHeader> = headers
        .iter()
        .map(|(k, v)| ModuleHeader {
            key_ptr: k.as_ptr(),
            key_len: k.len(),
            value_ptr: v.as_ptr(),
            value_len: v.len(),
        })
        .collect();
    // SAFETY: the headers, body and details outlive the call.
    unsafe {
        abi::envoy_dynamic_module_callback_http_send_response(
            filter,
            status,
            pairs.as_mut_ptr(),
            pairs.len(),
            ModuleBuffer::of(body),
            ModuleBuffer::of(b"llm_fallback"),
        )
    };
    Ok(())
}

pub fn resume_response() -> Result<(), Status> {
    // SAFETY: a live stream of this worker.
    unsafe { abi::envoy_dynamic_module_callback_http_filter_continue_encoding(current()?) };
    Ok(())
}

pub fn resume_request() -> Result<(), Status> {
    // SAFETY: a live stream of this worker.
    unsafe { abi::envoy_dynamic_module_callback_http_filter_continue_decoding(current()?) };
    Ok(())
}

/// Makes another live stream of this worker the one later calls of this hook act on.
pub fn set_effective_context(context_id: u32) -> Result<(), Status> {
    let filter = super::filter_of(context_id).ok_or(Status::BadArgument)?;
    CURRENT.set(filter);
    Ok(())
}

/// Process-wide shared data.
fn shared() -> &'static Mutex<SharedStore> {
    static SHARED: OnceLock<Mutex<SharedStore>> = OnceLock::new();
    SHARED.get_or_init(|| Mutex::new(SharedStore::default()))
}

pub fn shared_data(key: &str) -> Result<(Option<Vec<u8>>, Option<u32>), Status> {
    let store = shared().lock().map_err(|_| Status::InternalFailure)?;
    Ok(store.get(key))
}

pub fn set_shared_data(key: &str, value: &[u8], cas: Option<u32>) -> Result<(), Status> {
    let mut store = shared().lock().map_err(|_| Status::InternalFailure)?;
    store.set(key, value, cas)
}

// Metric ids carry their kind in the low two bits; the rest is Envoy's id.
const KIND_BITS: u32 = 2;

/// The `MetricType` a metric id carries.
fn kind_of(id: u32) -> u32 {
    id & ((1 << KIND_BITS) - 1)
}

/// Metrics of the HTTP connection manager's filter (role `client`) by name: (Envoy config, id).
/// An upstream filter's configuration belongs to its cluster, whose stats scope would name its
/// series `cluster.<name>.wasmcustom...`; its counts go to these instead, so that both builds
/// export the same series.
type Canonical = Mutex<HashMap<String, (usize, u32)>>;

fn canonical() -> &'static Canonical {
    static CANONICAL: OnceLock<Canonical> = OnceLock::new();
    CANONICAL.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Forgets the metrics of a configuration Envoy destroys.
pub fn forget_metrics(config: *const Config) {
    // SAFETY: called once, just before Envoy's configuration goes.
    let Some(config) = (unsafe { config.as_ref() }) else {
        return;
    };
    if let Ok(mut all) = canonical().lock() {
        all.retain(|_, (envoy, _)| *envoy != config.envoy);
    }
}

/// Where a metric of the running configuration is counted: (Envoy config, id).
fn metric_target(config: &Config, id: u32) -> (usize, u32) {
    if config.is_client() {
        return (config.envoy, id);
    }
    if let Some(found) = config.targets.lock().ok().and_then(|t| t.get(&id).copied()) {
        return found;
    }
    let name = config
        .metrics
        .lock()
        .ok()
        .and_then(|m| m.iter().find(|(_, v)| **v == id).map(|(k, _)| k.clone()));
    let target = name
        .and_then(|n| canonical().lock().ok()?.get(&n).copied())
        .unwrap_or((config.envoy, id));
    if let Ok(mut targets) = config.targets.lock() {
        targets.insert(id, target);
    }
    target
}

pub fn define_metric(kind: MetricType, name: &str) -> Result<u32, Status> {
    let config = config()?;
    let mut metrics = config.metrics.lock().map_err(|_| Status::InternalFailure)?;
    if let Some(id) = metrics.get(name) {
        return Ok(*id);
    }
    if !config.defining.load(std::sync::atomic::Ordering::Relaxed) {
        // Envoy takes definitions only while the configuration is created.
        return Err(Status::NotFound);
    }
    let define = match kind {
        MetricType::Counter => abi::envoy_dynamic_module_callback_http_filter_config_define_counter,
        MetricType::Gauge => abi::envoy_dynamic_module_callback_http_filter_config_define_gauge,
        MetricType::Histogram => {
            abi::envoy_dynamic_module_callback_http_filter_config_define_histogram
        }
        _ => return Err(Status::BadArgument),
    };
    let mut envoy_id = 0usize;
    // SAFETY: the name and the local outlive the call; no labels.
    let result = unsafe {
        define(
            config.envoy as abi::ConfigEnvoy,
            ModuleBuffer::of(name.as_bytes()),
            null_mut(),
            0,
            &mut envoy_id,
        )
    };
    done(result == abi::METRICS_SUCCESS)?;
    let id = u32::try_from(envoy_id)
        .ok()
        .and_then(|id| id.checked_shl(KIND_BITS))
        .ok_or(Status::InternalFailure)?
        | kind as u32;
    metrics.insert(name.to_owned(), id);
    if config.is_client() {
        if let Ok(mut all) = canonical().lock() {
            all.insert(name.to_owned(), (config.envoy, id));
        }
    }
    Ok(id)
}

fn metric_call(
    id: u32,
    call: unsafe extern "C" fn(abi::ConfigEnvoy, usize, *mut ModuleBuffer, usize, u64) -> u32,
    value: u64,
) -> Result<(), Status> {
    let (envoy, id) = metric_target(config()?, id);
    // SAFETY: the configuration is live (see `config`; a canonical one is forgotten before it
    // goes); no labels.
    let result = unsafe {
        call(
            envoy as abi::ConfigEnvoy,
            (id >> KIND_BITS) as usize,
            null_mut(),
            0,
            value,
        )
    };
    done(result == abi::METRICS_SUCCESS)
}

pub fn increment_metric(id: u32, delta: i64) -> Result<(), Status> {
    let magnitude = delta.unsigned_abs();
    match (kind_of(id), delta >= 0) {
        (0, true) => metric_call(
            id,
            abi::envoy_dynamic_module_callback_http_filter_config_increment_counter,
            magnitude,
        ),
        (1, true) => metric_call(
            id,
            abi::envoy_dynamic_module_callback_http_filter_config_increment_gauge,
            magnitude,
        ),
        (1, false) => metric_call(
            id,
            abi::envoy_dynamic_module_callback_http_filter_config_decrement_gauge,
            magnitude,
        ),
        _ => Err(Status::BadArgument),
    }
}

pub fn record_metric(id: u32, value: u64) -> Result<(), Status> {
    match kind_of(id) {
        1 => metric_call(
            id,
            abi::envoy_dynamic_module_callback_http_filter_config_set_gauge,
            value,
        ),
        2 => metric_call(
            id,
            abi::envoy_dynamic_module_callback_http_filter_config_record_histogram_value,
            value,
        ),
        _ => Err(Status::BadArgument),
    }
}

pub fn register_shared_queue(name: &str) -> Result<u32, Status> {
    queues::register(name, CONFIG.get())
}

pub fn resolve_shared_queue(_vm_id: &str, name: &str) -> Result<u32, Status> {
    queues::resolve(name)
}

pub fn enqueue_shared_queue(id: u32, value: &[u8]) -> Result<(), Status> {
    queues::enqueue(id, value)
}

pub fn dequeue_shared_queue(id: u32) -> Result<Option<Vec<u8>>, Status> {
    queues::dequeue(id)
}

pub fn now_nanos() -> Result<u64, Status> {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|_| Status::InternalFailure)?;
    u64::try_from(since.as_nanos()).map_err(|_| Status::InternalFailure)
}

pub fn set_tick_period_ms(period_ms: u32) -> Result<(), Status> {
    let config = CONFIG.get();
    if config.is_null() {
        return Err(Status::BadArgument);
    }
    PERIODS.with(|p| p.borrow_mut().insert(config as usize, period_ms));
    Ok(())
}
