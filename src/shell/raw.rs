//! The host calls, made directly through the proxy-wasm ABI.
//!
//! The SDK's `hostcalls` functions `panic!` on every status they do not expect (a header set
//! after the map is gone answers `BadArgument`; a resume of a stream that moved on, a buffer
//! read out of range, a shared-data write the host refuses), and a panic traps the VM for every
//! request on the worker. These wrappers return every status to the caller instead. This is the
//! only module with `unsafe`: each block passes pointers to live local buffers, and takes back
//! ownership of memory the host allocated through the SDK's `proxy_on_memory_allocate` (a boxed
//! slice of exactly `size` bytes), as the SDK itself does.

#![allow(unsafe_code)]

use crate::abi;
use proxy_wasm::types::{BufferType, LogLevel, MapType, MetricType, Status};
use std::ptr::null_mut;

extern "C" {
    fn proxy_log(level: u32, message_data: *const u8, message_size: usize) -> u32;
    fn proxy_get_header_map_value(
        map_type: u32,
        key_data: *const u8,
        key_size: usize,
        return_value_data: *mut *mut u8,
        return_value_size: *mut usize,
    ) -> u32;
    fn proxy_get_header_map_pairs(
        map_type: u32,
        return_map_data: *mut *mut u8,
        return_map_size: *mut usize,
    ) -> u32;
    fn proxy_replace_header_map_value(
        map_type: u32,
        key_data: *const u8,
        key_size: usize,
        value_data: *const u8,
        value_size: usize,
    ) -> u32;
    fn proxy_remove_header_map_value(map_type: u32, key_data: *const u8, key_size: usize) -> u32;
    fn proxy_get_buffer_bytes(
        buffer_type: u32,
        start: usize,
        max_size: usize,
        return_buffer_data: *mut *mut u8,
        return_buffer_size: *mut usize,
    ) -> u32;
    fn proxy_set_buffer_bytes(
        buffer_type: u32,
        start: usize,
        size: usize,
        buffer_data: *const u8,
        buffer_size: usize,
    ) -> u32;
    fn proxy_get_property(
        path_data: *const u8,
        path_size: usize,
        return_value_data: *mut *mut u8,
        return_value_size: *mut usize,
    ) -> u32;
    fn proxy_set_property(
        path_data: *const u8,
        path_size: usize,
        value_data: *const u8,
        value_size: usize,
    ) -> u32;
    fn proxy_send_local_response(
        status_code: u32,
        status_code_details_data: *const u8,
        status_code_details_size: usize,
        body_data: *const u8,
        body_size: usize,
        headers_data: *const u8,
        headers_size: usize,
        grpc_status: i32,
    ) -> u32;
    fn proxy_continue_stream(stream_type: u32) -> u32;
    fn proxy_set_effective_context(context_id: u32) -> u32;
    fn proxy_get_shared_data(
        key_data: *const u8,
        key_size: usize,
        return_value_data: *mut *mut u8,
        return_value_size: *mut usize,
        return_cas: *mut u32,
    ) -> u32;
    fn proxy_set_shared_data(
        key_data: *const u8,
        key_size: usize,
        value_data: *const u8,
        value_size: usize,
        cas: u32,
    ) -> u32;
    fn proxy_define_metric(
        metric_type: u32,
        name_data: *const u8,
        name_size: usize,
        return_id: *mut u32,
    ) -> u32;
    fn proxy_increment_metric(metric_id: u32, offset: i64) -> u32;
    fn proxy_get_current_time_nanoseconds(return_time: *mut u64) -> u32;
    fn proxy_set_tick_period_milliseconds(period: u32) -> u32;
    fn proxy_get_log_level(return_level: *mut u32) -> u32;
    fn proxy_record_metric(metric_id: u32, value: u64) -> u32;
    fn proxy_register_shared_queue(
        name_data: *const u8,
        name_size: usize,
        return_id: *mut u32,
    ) -> u32;
    fn proxy_resolve_shared_queue(
        vm_id_data: *const u8,
        vm_id_size: usize,
        name_data: *const u8,
        name_size: usize,
        return_id: *mut u32,
    ) -> u32;
    fn proxy_enqueue_shared_queue(queue_id: u32, value_data: *const u8, value_size: usize) -> u32;
    fn proxy_dequeue_shared_queue(
        queue_id: u32,
        return_value_data: *mut *mut u8,
        return_value_size: *mut usize,
    ) -> u32;
}

/// The ABI's status codes; anything unknown is an internal failure.
fn status(code: u32) -> Status {
    match code {
        0 => Status::Ok,
        1 => Status::NotFound,
        2 => Status::BadArgument,
        3 => Status::SerializationFailure,
        4 => Status::ParseFailure,
        7 => Status::Empty,
        8 => Status::CasMismatch,
        _ => Status::InternalFailure,
    }
}

/// `StreamType::HttpRequest` in the ABI.
const HTTP_REQUEST: u32 = 0;
/// `StreamType::HttpResponse` in the ABI.
const HTTP_RESPONSE: u32 = 1;

/// Takes ownership of bytes the host allocated for a return value.
fn take(data: *mut u8, size: usize) -> Vec<u8> {
    if data.is_null() || size == 0 {
        return Vec::new();
    }
    // SAFETY: the host allocated `size` bytes at `data` through `proxy_on_memory_allocate`
    // (a boxed slice of exactly that length) and handed them to us; nobody else owns them.
    unsafe { Vec::from_raw_parts(data, size, size) }
}

fn ok(code: u32) -> Result<(), Status> {
    match status(code) {
        Status::Ok => Ok(()),
        other => Err(other),
    }
}

pub fn log(level: LogLevel, message: &str) -> Result<(), Status> {
    // SAFETY: the message slice outlives the call.
    ok(unsafe { proxy_log(level as u32, message.as_ptr(), message.len()) })
}

/// A header's raw value (`Ok(None)`: not present).
pub fn header(map: MapType, name: &str) -> Result<Option<Vec<u8>>, Status> {
    let (mut data, mut size) = (null_mut(), 0usize);
    // SAFETY: pointers to live locals; the name slice outlives the call.
    let code = unsafe {
        proxy_get_header_map_value(map as u32, name.as_ptr(), name.len(), &mut data, &mut size)
    };
    match status(code) {
        Status::Ok => Ok(Some(take(data, size))),
        Status::NotFound => Ok(None),
        other => Err(other),
    }
}

/// Every header of a map, values as raw bytes.
pub fn headers(map: MapType) -> Result<Vec<(String, Vec<u8>)>, Status> {
    let (mut data, mut size) = (null_mut(), 0usize);
    // SAFETY: pointers to live locals.
    ok(unsafe { proxy_get_header_map_pairs(map as u32, &mut data, &mut size) })?;
    let bytes = take(data, size);
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    let pairs = abi::decode_map(&bytes).ok_or(Status::SerializationFailure)?;
    Ok(pairs
        .into_iter()
        .map(|(k, v)| (String::from_utf8_lossy(k).into_owned(), v.to_vec()))
        .collect())
}

pub fn set_header(map: MapType, name: &str, value: &str) -> Result<(), Status> {
    // SAFETY: the name and value slices outlive the call.
    ok(unsafe {
        proxy_replace_header_map_value(
            map as u32,
            name.as_ptr(),
            name.len(),
            value.as_ptr(),
            value.len(),
        )
    })
}

pub fn remove_header(map: MapType, name: &str) -> Result<(), Status> {
    // SAFETY: the name slice outlives the call.
    ok(unsafe { proxy_remove_header_map_value(map as u32, name.as_ptr(), name.len()) })
}

/// `[start, start + size)` of a body or configuration buffer (`Ok(None)`: no such buffer).
pub fn buffer(kind: BufferType, start: usize, size: usize) -> Result<Option<Vec<u8>>, Status> {
    let (mut data, mut len) = (null_mut(), 0usize);
    // SAFETY: pointers to live locals.
    let code = unsafe { proxy_get_buffer_bytes(kind as u32, start, size, &mut data, &mut len) };
    match status(code) {
        Status::Ok => Ok(Some(take(data, len))),
        Status::NotFound => Ok(None),
        other => Err(other),
    }
}

pub fn set_buffer(kind: BufferType, start: usize, size: usize, value: &[u8]) -> Result<(), Status> {
    // SAFETY: the value slice outlives the call.
    ok(unsafe { proxy_set_buffer_bytes(kind as u32, start, size, value.as_ptr(), value.len()) })
}

/// A property (`Ok(None)`: not set).
pub fn property(path: &[&str]) -> Result<Option<Vec<u8>>, Status> {
    let path = abi::encode_path(path);
    let (mut data, mut size) = (null_mut(), 0usize);
    // SAFETY: the path buffer and the locals outlive the call.
    let code = unsafe { proxy_get_property(path.as_ptr(), path.len(), &mut data, &mut size) };
    match status(code) {
        Status::Ok => Ok(Some(take(data, size))),
        Status::NotFound => Ok(None),
        other => Err(other),
    }
}

/// Sets a filter-state property of this stream (`wasm.<name>` in Envoy).
pub fn set_property(path: &[&str], value: &[u8]) -> Result<(), Status> {
    let path = abi::encode_path(path);
    // SAFETY: the path and value buffers outlive the call.
    ok(unsafe { proxy_set_property(path.as_ptr(), path.len(), value.as_ptr(), value.len()) })
}

pub fn send_response(status: u32, headers: &[(&str, &[u8])], body: &[u8]) -> Result<(), Status> {
    let headers = abi::encode_map(headers);
    // SAFETY: the headers and body buffers outlive the call.
    ok(unsafe {
        proxy_send_local_response(
            status,
            null_mut(),
            0,
            body.as_ptr(),
            body.len(),
            headers.as_ptr(),
            headers.len(),
            -1,
        )
    })
}

/// Resumes the response of the effective context.
pub fn resume_response() -> Result<(), Status> {
    // SAFETY: no pointers.
    ok(unsafe { proxy_continue_stream(HTTP_RESPONSE) })
}

/// Resumes the request of the effective context (a request held by the client filter).
pub fn resume_request() -> Result<(), Status> {
    // SAFETY: no pointers.
    ok(unsafe { proxy_continue_stream(HTTP_REQUEST) })
}

pub fn set_effective_context(context_id: u32) -> Result<(), Status> {
    // SAFETY: no pointers.
    ok(unsafe { proxy_set_effective_context(context_id) })
}

/// A shared-data value and its CAS token (`(None, None)`: the key does not exist).
pub fn shared_data(key: &str) -> Result<(Option<Vec<u8>>, Option<u32>), Status> {
    let (mut data, mut size, mut cas) = (null_mut(), 0usize, 0u32);
    // SAFETY: the key slice and the locals outlive the call.
    let code =
        unsafe { proxy_get_shared_data(key.as_ptr(), key.len(), &mut data, &mut size, &mut cas) };
    match status(code) {
        Status::Ok => Ok((Some(take(data, size)), (cas != 0).then_some(cas))),
        Status::NotFound => Ok((None, None)),
        other => Err(other),
    }
}

/// Writes shared data; with a CAS token, only if nobody wrote since it was read
/// (`Err(CasMismatch)` otherwise).
pub fn set_shared_data(key: &str, value: &[u8], cas: Option<u32>) -> Result<(), Status> {
    // SAFETY: the key and value slices outlive the call.
    ok(unsafe {
        proxy_set_shared_data(
            key.as_ptr(),
            key.len(),
            value.as_ptr(),
            value.len(),
            cas.unwrap_or(0),
        )
    })
}

pub fn define_metric(kind: MetricType, name: &str) -> Result<u32, Status> {
    let mut id = 0u32;
    // SAFETY: the name slice and the local outlive the call.
    ok(unsafe { proxy_define_metric(kind as u32, name.as_ptr(), name.len(), &mut id) })?;
    Ok(id)
}

pub fn increment_metric(id: u32, delta: i64) -> Result<(), Status> {
    // SAFETY: no pointers.
    ok(unsafe { proxy_increment_metric(id, delta) })
}

/// Sets a gauge, or records a histogram sample.
pub fn record_metric(id: u32, value: u64) -> Result<(), Status> {
    // SAFETY: no pointers.
    ok(unsafe { proxy_record_metric(id, value) })
}

/// Registers this VM's shared queue `name` (its `on_queue_ready` fires on enqueue).
pub fn register_shared_queue(name: &str) -> Result<u32, Status> {
    let mut id = 0u32;
    // SAFETY: the name slice and the local outlive the call.
    ok(unsafe { proxy_register_shared_queue(name.as_ptr(), name.len(), &mut id) })?;
    Ok(id)
}

/// The id of the shared queue `name` registered under `vm_id`.
pub fn resolve_shared_queue(vm_id: &str, name: &str) -> Result<u32, Status> {
    let mut id = 0u32;
    // SAFETY: the slices and the local outlive the call.
    ok(unsafe {
        proxy_resolve_shared_queue(
            vm_id.as_ptr(),
            vm_id.len(),
            name.as_ptr(),
            name.len(),
            &mut id,
        )
    })?;
    Ok(id)
}

pub fn enqueue_shared_queue(id: u32, value: &[u8]) -> Result<(), Status> {
    // SAFETY: the value slice outlives the call.
    ok(unsafe { proxy_enqueue_shared_queue(id, value.as_ptr(), value.len()) })
}

/// The next item of a shared queue (`Ok(None)`: empty).
pub fn dequeue_shared_queue(id: u32) -> Result<Option<Vec<u8>>, Status> {
    let (mut data, mut size) = (null_mut(), 0usize);
    // SAFETY: pointers to live locals.
    let code = unsafe { proxy_dequeue_shared_queue(id, &mut data, &mut size) };
    match status(code) {
        Status::Ok => Ok(Some(take(data, size))),
        Status::Empty | Status::NotFound => Ok(None),
        other => Err(other),
    }
}

/// The host's wall clock in unix nanoseconds.
pub fn now_nanos() -> Result<u64, Status> {
    let mut nanos = 0u64;
    // SAFETY: a pointer to a live local.
    ok(unsafe { proxy_get_current_time_nanoseconds(&mut nanos) })?;
    Ok(nanos)
}

pub fn set_tick_period_ms(period_ms: u32) -> Result<(), Status> {
    // SAFETY: no pointers.
    ok(unsafe { proxy_set_tick_period_milliseconds(period_ms) })
}

/// The host's log level (0 trace .. 5 critical).
pub fn log_level() -> Result<u32, Status> {
    let mut level = 0u32;
    // SAFETY: a pointer to a live local.
    ok(unsafe { proxy_get_log_level(&mut level) })?;
    Ok(level)
}
