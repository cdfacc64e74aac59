//! Link-time stand-ins for the proxy-wasm ABI imports, in native test builds only.
//!
//! The SDK's trait default methods (never called by this filter, which goes through
//! [`super::raw`]) reference the host's imports, so a native test binary needs symbols for them.
//! Each answers `BadArgument` without touching its arguments; nothing calls them.

#![allow(unsafe_code)]

macro_rules! absent {
    ($($name:ident),* $(,)?) => {$(
        #[no_mangle]
        extern "C" fn $name() -> u32 {
            2
        }
    )*};
}

absent!(
    proxy_add_header_map_value,
    proxy_close_stream,
    proxy_get_buffer_bytes,
    proxy_get_current_time_nanoseconds,
    proxy_get_header_map_pairs,
    proxy_get_header_map_value,
    proxy_get_property,
    proxy_get_shared_data,
    proxy_get_status,
    proxy_grpc_call,
    proxy_grpc_cancel,
    proxy_grpc_close,
    proxy_grpc_stream,
    proxy_grpc_send,
    proxy_http_call,
    proxy_remove_header_map_value,
    proxy_replace_header_map_value,
    proxy_set_buffer_bytes,
    proxy_set_header_map_pairs,
    proxy_set_property,
    proxy_set_shared_data,
    proxy_log,
    proxy_send_local_response,
    proxy_continue_stream,
    proxy_set_effective_context,
    proxy_define_metric,
    proxy_increment_metric,
    proxy_record_metric,
    proxy_get_metric,
    proxy_set_tick_period_milliseconds,
    proxy_get_log_level,
    proxy_done,
    proxy_call_foreign_function,
    proxy_register_shared_queue,
    proxy_resolve_shared_queue,
    proxy_enqueue_shared_queue,
    proxy_dequeue_shared_queue,
);
