//! The proxy-wasm shell: moves bytes and state between Envoy and the pure core.
//!
//! One plugin binary runs in two places, told apart by the plugin's `root_id`:
//! - `client`: in the HTTP connection manager's filter chain; sees each client request once.
//! - `upstream`: an upstream HTTP filter of the LLM cluster, inside the router's retry loop;
//!   sees every attempt.
//!
//! Both use the same `vm_id`, so they share one VM per worker and the same shared data.

#[cfg(not(all(target_arch = "wasm32", target_os = "wasi")))]
mod abi_stubs;
mod apply;
mod client;
mod count;
mod headers;
mod holds;
mod host;
mod idempotency;
mod identity;
mod meter;
mod metrics;
/// The native build: the shell as an Envoy dynamic module.
#[cfg(all(not(target_arch = "wasm32"), feature = "native"))]
mod native;
mod observe;
#[cfg(all(target_arch = "wasm32", target_os = "wasi"))]
mod raw;
/// Natively (tests) the host is a fake with the same functions as the ABI layer.
#[cfg(all(
    not(all(target_arch = "wasm32", target_os = "wasi")),
    not(feature = "native")
))]
#[path = "fake_host.rs"]
pub(crate) mod raw;
#[cfg(all(not(target_arch = "wasm32"), feature = "native"))]
use native::raw;
/// The native build's host-free parts, tested natively without it.
#[cfg(all(test, not(feature = "native")))]
#[path = "native/memory.rs"]
mod native_memory;
mod requests;
mod shaping;
mod shared_health;
mod status;
mod upstream;

#[cfg(test)]
mod tests;

use crate::classify::rules::Rules;
use crate::config::Config;
use crate::flow::{Clock, Cx};
use metrics::Metrics;
use proxy_wasm::traits::{Context, HttpContext, RootContext};
use proxy_wasm::types::{BufferType, ContextType, LogLevel};
use shared_health::SharedHealth;
use std::rc::Rc;
use std::time::Duration;

/// How often local counter deltas are folded into the Envoy stats and shared data.
const FLUSH_PERIOD: Duration = Duration::from_secs(1);
/// The upstream filter's timer period when it holds stream starts (it releases expired holds).
const HOLD_TICK: Duration = Duration::from_millis(50);

/// Where this plugin instance sits in Envoy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Client,
    Upstream,
    Status,
}

impl Role {
    fn from_root_id(root_id: &str) -> Option<Self> {
        match root_id {
            "client" => Some(Role::Client),
            "upstream" => Some(Role::Upstream),
            "status" => Some(Role::Status),
            _ => None,
        }
    }
}

/// What every HTTP context of a configured plugin needs.
pub struct Plugin {
    pub role: Role,
    pub config: Config,
    pub rules: Rules,
    /// Shared with the native build's flusher, which folds counters in from the main thread.
    pub metrics: std::sync::Arc<Metrics>,
    /// Budgets, latency and token histograms.
    pub meter: meter::Meter,
    /// Per configured model (same order): this worker's error-rate window.
    pub windows: std::cell::RefCell<Vec<crate::health::ErrorWindow>>,
    /// Per configured canary (same order): this worker's tally of it and its base.
    pub canaries: std::cell::RefCell<Vec<crate::flow::canary::CanaryWindow>>,
}

impl Plugin {
    /// What the request flow reads, with `clock` as its time.
    pub fn cx<'a>(&'a self, clock: &'a dyn Clock) -> Cx<'a> {
        Cx {
            config: &self.config,
            rules: &self.rules,
            counters: &self.metrics.set,
            health: &SharedHealth,
            windows: &self.windows,
            canaries: &self.canaries,
            clock,
        }
    }
}

// No host calls here: Envoy refuses them (`restricted_callback`) while `_initialize` runs.
#[cfg(all(target_arch = "wasm32", target_os = "wasi"))]
proxy_wasm::main! {{
    proxy_wasm::set_root_context(|_| -> Box<dyn RootContext> { Box::new(Root::default()) });
}}

#[derive(Default)]
struct Root {
    plugin: Option<Rc<Plugin>>,
    /// Unix ms of the last counter flush.
    flushed_ms: u64,
}

impl Context for Root {}

impl RootContext for Root {
    fn on_configure(&mut self, size: usize) -> bool {
        logger::install();
        install_panic_hook();
        let root_id = host::property(vec!["plugin_root_id"])
            .and_then(|b| String::from_utf8(b).ok())
            .unwrap_or_default();
        let Some(role) = Role::from_root_id(&root_id) else {
            host::log(
                LogLevel::Critical,
                &format!(
                    "invalid llm-fallback configuration: field `root_id`: `{root_id}` is not \
                     `client` (HTTP connection manager filter), `upstream` (cluster filter) or \
                     `status` (status endpoint on an internal listener)"
                ),
            );
            return false;
        };
        let bytes = host::buffer(BufferType::PluginConfiguration, 0, size).unwrap_or_default();
        let config = match Config::from_bytes(&bytes) {
            Ok(config) => config,
            Err(e) => {
                host::log(LogLevel::Critical, &e.to_string());
                return false;
            }
        };
        if role == Role::Status && config.status_path.is_none() {
            host::log(
                LogLevel::Critical,
                "invalid llm-fallback configuration: field `status_path`: required by the status \
                 filter (root_id `status`), e.g. /llm-fallback/status",
            );
            return false;
        }
        let metrics = std::sync::Arc::new(Metrics::new(&config));
        let meter = meter::Meter::new(&config, &metrics.set);
        for model in &config.models {
            shared_health::init(&model.name);
        }
        host::log(
            LogLevel::Info,
            &format!(
                "configured as {role:?} filter with {} model(s)",
                config.models.len()
            ),
        );
        let plugin = Rc::new(Plugin {
            role,
            rules: config.classifier.rules(),
            windows: std::cell::RefCell::new(vec![Default::default(); config.models.len()]),
            canaries: std::cell::RefCell::new(vec![
                Default::default();
                config.fallback.canaries.len()
            ]),
            config,
            metrics,
            meter,
        });
        if role == Role::Client {
            idempotency::init_slots(&plugin);
            shaping::configure(&plugin);
        }
        let fallback = &plugin.config.fallback;
        let holding = fallback.stream_start.enabled || fallback.json_body.enabled;
        let period = if role == Role::Upstream && holding {
            HOLD_TICK
        } else {
            FLUSH_PERIOD
        };
        self.plugin = Some(plugin);
        let period_ms = u32::try_from(period.as_millis()).unwrap_or(1000);
        if let Err(status) = raw::set_tick_period_ms(period_ms) {
            host::log(
                LogLevel::Warn,
                &format!("no timer ({status:?}); shared counters will lag"),
            );
        }
        true
    }

    fn on_tick(&mut self) {
        let now = host::now_unix_ms();
        apply::saw_time(now);
        if holds::any() {
            holds::release_expired(now);
        }
        if let Some(plugin) = self.plugin.as_ref().filter(|p| p.role == Role::Client) {
            shaping::tick(plugin);
        }
        let flush_ms = u64::try_from(FLUSH_PERIOD.as_millis()).unwrap_or(1000);
        if now.saturating_sub(self.flushed_ms) + 10 >= flush_ms {
            self.flushed_ms = now;
            if let Some(plugin) = &self.plugin {
                plugin.metrics.flush();
                if plugin.role == Role::Client {
                    meter::publish(plugin, now);
                    meter::publish_conditions(plugin, now);
                }
            }
        }
    }

    fn on_queue_ready(&mut self, queue_id: u32) {
        if let Some(plugin) = self.plugin.as_ref().filter(|p| p.role == Role::Client) {
            shaping::woken(plugin, queue_id);
        }
    }

    fn create_http_context(&self, context_id: u32) -> Option<Box<dyn HttpContext>> {
        // Returning None makes the SDK panic; an unconfigured plugin passes traffic through.
        let Some(plugin) = self.plugin.clone() else {
            return Some(Box::new(PassThrough));
        };
        Some(match plugin.role {
            Role::Client => Box::new(client::ClientContext::new(plugin, context_id)),
            Role::Upstream => Box::new(upstream::UpstreamContext::new(plugin, context_id)),
            Role::Status => Box::new(status::StatusContext::new(plugin)),
        })
    }

    fn get_type(&self) -> Option<ContextType> {
        Some(ContextType::HttpContext)
    }
}

/// A stream of a plugin whose configuration failed: untouched.
struct PassThrough;

impl Context for PassThrough {}

impl HttpContext for PassThrough {}

/// Says so, at critical level, if the filter ever panics (the VM then traps and
/// `failure_policy` decides what follows): a trap must never be silent.
fn install_panic_hook() {
    // Natively (tests) the test harness reports panics itself.
    if cfg!(not(all(target_arch = "wasm32", target_os = "wasi"))) {
        return;
    }
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            host::log(
                LogLevel::Critical,
                &format!("llm-fallback panicked, the VM traps: {info}"),
            );
        }));
    });
}

mod logger {
    //! Routes the `log` crate to the host without the SDK's logger, which `unwrap()`s.
    use super::host;
    use proxy_wasm::types::LogLevel;

    struct HostLogger;

    static LOGGER: HostLogger = HostLogger;

    impl log::Log for HostLogger {
        fn enabled(&self, metadata: &log::Metadata) -> bool {
            metadata.level() <= log::max_level()
        }

        fn log(&self, record: &log::Record) {
            if !self.enabled(record.metadata()) {
                return;
            }
            let level = match record.level() {
                log::Level::Error => LogLevel::Error,
                log::Level::Warn => LogLevel::Warn,
                log::Level::Info => LogLevel::Info,
                log::Level::Debug => LogLevel::Debug,
                log::Level::Trace => LogLevel::Trace,
            };
            host::log(level, &record.args().to_string());
        }

        fn flush(&self) {}
    }

    /// Installs the logger (once) and follows the host's current log level.
    pub fn install() {
        let _ = log::set_logger(&LOGGER);
        let level = match super::raw::log_level() {
            Ok(0) => log::LevelFilter::Trace,
            Ok(1) => log::LevelFilter::Debug,
            Ok(2) => log::LevelFilter::Info,
            Ok(3) => log::LevelFilter::Warn,
            Ok(_) => log::LevelFilter::Error,
            Err(_) => log::LevelFilter::Info,
        };
        log::set_max_level(level);
    }
}
