//! The part of Envoy's dynamic-module C ABI (`source/extensions/dynamic_modules/abi/abi.h`,
//! version `v0.1.0`, frozen since Envoy 1.40) that the native shell uses, declared by hand.
//!
//! Envoy resolves these symbols from its own binary when it `dlopen`s the module. Every
//! buffer Envoy returns is valid until the end of the current event hook.

#![allow(unsafe_code)]

use std::ffi::c_void;

/// The ABI version this module was written against (Envoy only warns on a mismatch).
pub const ABI_VERSION: &[u8] = b"v0.1.0\0";

/// Bytes owned by Envoy (valid until the end of the current hook).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct EnvoyBuffer {
    pub ptr: *const u8,
    pub len: usize,
}

impl EnvoyBuffer {
    pub const EMPTY: Self = Self {
        ptr: std::ptr::null(),
        len: 0,
    };

    /// The bytes, empty when null.
    ///
    /// # Safety
    /// `ptr` must point to `len` readable bytes for the returned lifetime (Envoy guarantees
    /// this until the end of the current event hook).
    pub unsafe fn bytes<'a>(&self) -> &'a [u8] {
        if self.ptr.is_null() || self.len == 0 {
            return &[];
        }
        // SAFETY: upheld by the caller (Envoy's guarantee for the hook).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// Bytes owned by the module, lent to Envoy for one call.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ModuleBuffer {
    pub ptr: *const u8,
    pub len: usize,
}

impl ModuleBuffer {
    pub fn of(bytes: &[u8]) -> Self {
        Self {
            ptr: bytes.as_ptr(),
            len: bytes.len(),
        }
    }

    /// A null buffer: `set_header` with it removes the header.
    pub const NULL: Self = Self {
        ptr: std::ptr::null(),
        len: 0,
    };
}

#[repr(C)]
pub struct ModuleHeader {
    pub key_ptr: *const u8,
    pub key_len: usize,
    pub value_ptr: *const u8,
    pub value_len: usize,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct EnvoyHeader {
    pub key_ptr: *const u8,
    pub key_len: usize,
    pub value_ptr: *const u8,
    pub value_len: usize,
}

pub type FilterEnvoy = *mut c_void;
pub type ConfigEnvoy = *mut c_void;
pub type Scheduler = *mut c_void;

// envoy_dynamic_module_type_http_header_type
pub const REQUEST_HEADER: u32 = 0;
pub const REQUEST_TRAILER: u32 = 1;
pub const RESPONSE_HEADER: u32 = 2;
pub const RESPONSE_TRAILER: u32 = 3;

// envoy_dynamic_module_type_http_body_type
pub const RECEIVED_REQUEST_BODY: u32 = 0;
pub const BUFFERED_REQUEST_BODY: u32 = 1;
pub const RECEIVED_RESPONSE_BODY: u32 = 2;
pub const BUFFERED_RESPONSE_BODY: u32 = 3;

// envoy_dynamic_module_type_metadata_source
pub const METADATA_ROUTE: u32 = 1;

// envoy_dynamic_module_type_attribute_id (position in the enum)
pub const ATTRIBUTE_RESPONSE_CODE_DETAILS: u32 = 16;
pub const ATTRIBUTE_RESPONSE_FLAGS: u32 = 17;
pub const ATTRIBUTE_UPSTREAM_TRANSPORT_FAILURE_REASON: u32 = 52;
pub const ATTRIBUTE_XDS_CLUSTER_NAME: u32 = 57;

// envoy_dynamic_module_type_log_level
pub const LOG_TRACE: u32 = 0;
pub const LOG_CRITICAL: u32 = 5;

// envoy_dynamic_module_type_metrics_result
pub const METRICS_SUCCESS: u32 = 0;

// Filter statuses (headers: Continue 0, StopIteration 1; bodies: Continue 0,
// StopIterationAndBuffer 1; trailers: Continue 0, StopIteration 1).
pub const CONTINUE: u32 = 0;
pub const STOP: u32 = 1;

extern "C" {
    pub fn envoy_dynamic_module_callback_log(level: u32, message: ModuleBuffer);
    pub fn envoy_dynamic_module_callback_log_enabled(level: u32) -> bool;

    pub fn envoy_dynamic_module_callback_http_get_header(
        filter: FilterEnvoy,
        header_type: u32,
        key: ModuleBuffer,
        result: *mut EnvoyBuffer,
        index: usize,
        optional_size: *mut usize,
    ) -> bool;
    pub fn envoy_dynamic_module_callback_http_get_headers_size(
        filter: FilterEnvoy,
        header_type: u32,
    ) -> usize;
    pub fn envoy_dynamic_module_callback_http_get_headers(
        filter: FilterEnvoy,
        header_type: u32,
        result: *mut EnvoyHeader,
    ) -> bool;
    pub fn envoy_dynamic_module_callback_http_set_header(
        filter: FilterEnvoy,
        header_type: u32,
        key: ModuleBuffer,
        value: ModuleBuffer,
    ) -> bool;

    pub fn envoy_dynamic_module_callback_http_send_response(
        filter: FilterEnvoy,
        status_code: u32,
        headers: *mut ModuleHeader,
        headers_size: usize,
        body: ModuleBuffer,
        details: ModuleBuffer,
    );

    pub fn envoy_dynamic_module_callback_http_get_body_chunks_size(
        filter: FilterEnvoy,
        body_type: u32,
    ) -> usize;
    pub fn envoy_dynamic_module_callback_http_get_body_chunks(
        filter: FilterEnvoy,
        body_type: u32,
        result: *mut EnvoyBuffer,
    ) -> bool;
    pub fn envoy_dynamic_module_callback_http_get_body_size(
        filter: FilterEnvoy,
        body_type: u32,
    ) -> usize;
    pub fn envoy_dynamic_module_callback_http_append_body(
        filter: FilterEnvoy,
        body_type: u32,
        data: ModuleBuffer,
    ) -> bool;
    pub fn envoy_dynamic_module_callback_http_drain_body(
        filter: FilterEnvoy,
        body_type: u32,
        bytes: usize,
    ) -> bool;
    pub fn envoy_dynamic_module_callback_http_received_buffered_request_body(
        filter: FilterEnvoy,
    ) -> bool;
    pub fn envoy_dynamic_module_callback_http_received_buffered_response_body(
        filter: FilterEnvoy,
    ) -> bool;

    pub fn envoy_dynamic_module_callback_http_get_metadata_string(
        filter: FilterEnvoy,
        source: u32,
        namespace: ModuleBuffer,
        key: ModuleBuffer,
        result: *mut EnvoyBuffer,
    ) -> bool;
    pub fn envoy_dynamic_module_callback_http_get_metadata_keys_count(
        filter: FilterEnvoy,
        source: u32,
        namespace: ModuleBuffer,
    ) -> usize;
    pub fn envoy_dynamic_module_callback_http_set_filter_state_bytes(
        filter: FilterEnvoy,
        key: ModuleBuffer,
        value: ModuleBuffer,
    ) -> bool;
    pub fn envoy_dynamic_module_callback_http_get_filter_state_bytes(
        filter: FilterEnvoy,
        key: ModuleBuffer,
        result: *mut EnvoyBuffer,
    ) -> bool;
    pub fn envoy_dynamic_module_callback_http_filter_get_attribute_string(
        filter: FilterEnvoy,
        attribute: u32,
        result: *mut EnvoyBuffer,
    ) -> bool;
    pub fn envoy_dynamic_module_callback_http_filter_get_attribute_int(
        filter: FilterEnvoy,
        attribute: u32,
        result: *mut u64,
    ) -> bool;

    pub fn envoy_dynamic_module_callback_http_clear_route_cache(filter: FilterEnvoy);
    pub fn envoy_dynamic_module_callback_http_filter_continue_decoding(filter: FilterEnvoy);
    pub fn envoy_dynamic_module_callback_http_filter_continue_encoding(filter: FilterEnvoy);

    pub fn envoy_dynamic_module_callback_http_filter_config_define_counter(
        config: ConfigEnvoy,
        name: ModuleBuffer,
        label_names: *mut ModuleBuffer,
        label_names_length: usize,
        id: *mut usize,
    ) -> u32;
    pub fn envoy_dynamic_module_callback_http_filter_config_define_gauge(
        config: ConfigEnvoy,
        name: ModuleBuffer,
        label_names: *mut ModuleBuffer,
        label_names_length: usize,
        id: *mut usize,
    ) -> u32;
    pub fn envoy_dynamic_module_callback_http_filter_config_define_histogram(
        config: ConfigEnvoy,
        name: ModuleBuffer,
        label_names: *mut ModuleBuffer,
        label_names_length: usize,
        id: *mut usize,
    ) -> u32;
    pub fn envoy_dynamic_module_callback_http_filter_config_increment_counter(
        config: ConfigEnvoy,
        id: usize,
        label_values: *mut ModuleBuffer,
        label_values_length: usize,
        value: u64,
    ) -> u32;
    pub fn envoy_dynamic_module_callback_http_filter_config_increment_gauge(
        config: ConfigEnvoy,
        id: usize,
        label_values: *mut ModuleBuffer,
        label_values_length: usize,
        value: u64,
    ) -> u32;
    pub fn envoy_dynamic_module_callback_http_filter_config_decrement_gauge(
        config: ConfigEnvoy,
        id: usize,
        label_values: *mut ModuleBuffer,
        label_values_length: usize,
        value: u64,
    ) -> u32;
    pub fn envoy_dynamic_module_callback_http_filter_config_set_gauge(
        config: ConfigEnvoy,
        id: usize,
        label_values: *mut ModuleBuffer,
        label_values_length: usize,
        value: u64,
    ) -> u32;
    pub fn envoy_dynamic_module_callback_http_filter_config_record_histogram_value(
        config: ConfigEnvoy,
        id: usize,
        label_values: *mut ModuleBuffer,
        label_values_length: usize,
        value: u64,
    ) -> u32;

    pub fn envoy_dynamic_module_callback_http_filter_scheduler_new(
        filter: FilterEnvoy,
    ) -> Scheduler;
    pub fn envoy_dynamic_module_callback_http_filter_scheduler_commit(
        scheduler: Scheduler,
        event_id: u64,
    );
    pub fn envoy_dynamic_module_callback_http_filter_scheduler_delete(scheduler: Scheduler);

    pub fn envoy_dynamic_module_callback_http_filter_config_scheduler_new(
        config: ConfigEnvoy,
    ) -> Scheduler;
    pub fn envoy_dynamic_module_callback_http_filter_config_scheduler_commit(
        scheduler: Scheduler,
        event_id: u64,
    );
    pub fn envoy_dynamic_module_callback_http_filter_config_scheduler_delete(scheduler: Scheduler);
}
