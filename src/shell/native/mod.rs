//! The native shell: the same shell, loaded by Envoy as a dynamic module (`libllm_fallback.so`)
//! instead of a proxy-wasm VM.
//!
//! Envoy calls the `envoy_dynamic_module_on_*` hooks below; each runs the shell's context for
//! its stream exactly as the proxy-wasm SDK would (`on_http_request_headers`, ...), with the
//! host calls of [`raw`] going to the dynamic-module ABI. What proxy-wasm keeps per VM (the
//! root context, the request store, counters not yet flushed) is kept per worker thread, so the
//! shell's single-threaded code is unchanged; shared data and shared queues are process memory.
//!
//! Timers: proxy-wasm ticks every root context; here a worker runs its roots' due ticks when a
//! stream starts and, while one of its streams is held (a stream-start hold, a queued request),
//! from a timer thread that schedules an event on that stream (`scheduler_commit`, which Envoy
//! delivers on the worker). Counters and the gauges kept in shared data are published once a
//! second from the main thread (see `flushers`), so an idle worker strands nothing.

#![allow(unsafe_code)]

pub mod abi;
pub mod memory;
pub mod raw;

use super::{PassThrough, Root};
use abi::{FilterEnvoy, Scheduler};
use proxy_wasm::traits::{HttpContext, RootContext};
use proxy_wasm::types::Action;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

/// One filter configuration (`filter_name` is the role, `filter_config` the plugin's JSON).
pub struct Config {
    /// Envoy's `DynamicModuleHttpFilterConfig` (for metrics).
    envoy: usize,
    name: String,
    bytes: Vec<u8>,
    /// Metric name -> id, defined while Envoy creates the configuration.
    metrics: Mutex<HashMap<String, u32>>,
    /// Whether metrics may still be defined (only inside `config_new`).
    defining: AtomicBool,
    /// The configuration's scheduler: events on the main thread (counter flushes).
    scheduler: usize,
    /// Metric id -> where it is counted (see `raw::metric_target`), resolved on first use.
    targets: Mutex<HashMap<u32, (usize, u32)>>,
}

impl Config {
    /// Whether this is the HTTP connection manager's filter (`filter_name: client`).
    fn is_client(&self) -> bool {
        super::Role::from_root_id(&self.name) == Some(super::Role::Client)
    }
}

/// One stream of one configuration on a worker.
struct Filter {
    config: *const Config,
    id: u32,
    envoy: FilterEnvoy,
    context: Box<dyn HttpContext>,
    /// Created when the stream is held, so that the timer thread can reach this worker.
    scheduler: Scheduler,
    /// Whether the shell was told the stream is done (`on_done`).
    done: bool,
}

impl Filter {
    /// Tells the shell the stream is done, once.
    fn finish(&mut self) {
        if !self.done {
            self.done = true;
            self.context.on_done();
            self.context.on_log();
        }
    }
}

/// The filter name of a module filter that does nothing (no root, no timer, every hook passes):
/// the floor a benchmark compares the filter with (`bench/cpu.py`'s `native-floor` arm).
const FLOOR: &str = "floor";

/// A configuration's root context on one worker.
struct Slot {
    config: *const Config,
    root: Rc<RefCell<Root>>,
    next_tick_ms: u64,
}

#[derive(Default)]
struct Worker {
    slots: Vec<Slot>,
    /// Live streams by context id (what `set_effective_context` switches to).
    live: HashMap<u32, FilterEnvoy>,
    next_id: u32,
}

thread_local! {
    static WORKER: RefCell<Worker> = RefCell::new(Worker::default());
    static THREAD_KEY: u64 = {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        NEXT.fetch_add(1, Ordering::Relaxed)
    };
}

fn thread_key() -> u64 {
    THREAD_KEY.with(|k| *k)
}

/// The live stream with this context id on this worker.
pub fn filter_of(context_id: u32) -> Option<FilterEnvoy> {
    WORKER.with(|w| w.try_borrow().ok()?.live.get(&context_id).copied())
}

fn now_ms() -> u64 {
    raw::now_nanos().map_or(0, |n| n / 1_000_000)
}

/// Runs `f`, turning a panic into `fallback` (a panic must not cross into Envoy).
fn guarded<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// Configures a root for `config` on this thread (no stream: only configuration-time calls).
fn configure(config: &Config) -> Option<Root> {
    let mut root = Root::default();
    let ok = raw::within(std::ptr::null_mut(), config, false, || {
        root.on_configure(config.bytes.len())
    });
    ok.then_some(root)
}

/// This thread's root for `config`, if it has one.
fn root_of(config: *const Config) -> Option<Rc<RefCell<Root>>> {
    WORKER.with(|w| {
        let worker = w.try_borrow().ok()?;
        let slot = worker.slots.iter().find(|s| s.config == config)?;
        Some(slot.root.clone())
    })
}

/// Runs `f` on `root` as a configuration step of `config` (no stream).
fn on_root(config: *const Config, root: &RefCell<Root>, f: impl FnOnce(&mut Root)) {
    raw::within(std::ptr::null_mut(), config, false, || {
        if let Ok(mut root) = root.try_borrow_mut() {
            f(&mut root);
        }
    });
}

/// This worker's root for `config`, configured on first use.
fn root_for(config: *const Config) -> Option<Rc<RefCell<Root>>> {
    if let Some(root) = root_of(config) {
        return Some(root);
    }
    WORKER.with(|w| {
        let mut worker = w.try_borrow_mut().ok()?;
        // SAFETY: Envoy keeps the configuration alive while it creates filters from it.
        let native = unsafe { config.as_ref() }?;
        let root = configure(native)?;
        if let Some(plugin) = &root.plugin {
            flushers::add(config, native.scheduler, &plugin.metrics);
        }
        let root = Rc::new(RefCell::new(root));
        worker.slots.push(Slot {
            config,
            root: root.clone(),
            next_tick_ms: 0,
        });
        Some(root)
    })
}

/// Runs the due ticks of this worker's roots.
fn tick() {
    let now = now_ms();
    let due: Vec<(*const Config, Rc<RefCell<Root>>)> = WORKER.with(|w| {
        let Ok(mut worker) = w.try_borrow_mut() else {
            return Vec::new();
        };
        worker
            .slots
            .iter_mut()
            .filter(|s| now >= s.next_tick_ms)
            .map(|s| {
                let period = raw::period_of(s.config).unwrap_or(1000);
                s.next_tick_ms = now + u64::from(period.max(1));
                (s.config, s.root.clone())
            })
            .collect()
    });
    for (config, root) in due {
        on_root(config, &root, Root::on_tick);
    }
}

/// Delivers the shared-queue items waiting for this worker's roots.
fn deliver_queues() {
    for (id, config) in queues::ready_for(thread_key()) {
        let config = config as *const Config;
        if let Some(root) = root_of(config) {
            on_root(config, &root, |root| root.on_queue_ready(id));
        }
    }
}

/// The shared queues: process-wide, the last registrant of a name owns it (as in proxy-wasm).
pub mod queues {
    use super::Status;
    use std::collections::VecDeque;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Mutex, OnceLock};

    struct Queue {
        name: String,
        items: VecDeque<Vec<u8>>,
        owner: u64,
        config: usize,
    }

    fn all() -> &'static Mutex<Vec<Queue>> {
        static QUEUES: OnceLock<Mutex<Vec<Queue>>> = OnceLock::new();
        QUEUES.get_or_init(|| Mutex::new(Vec::new()))
    }

    /// Items waiting in all queues: lets a stream start skip the lock when there are none.
    static WAITING: AtomicUsize = AtomicUsize::new(0);

    fn id_of(index: usize) -> Result<u32, Status> {
        u32::try_from(index + 1).map_err(|_| Status::InternalFailure)
    }

    fn queue_mut(queues: &mut [Queue], id: u32) -> Result<&mut Queue, Status> {
        (id as usize)
            .checked_sub(1)
            .and_then(|i| queues.get_mut(i))
            .ok_or(Status::NotFound)
    }

    pub fn register(name: &str, config: *const super::Config) -> Result<u32, Status> {
        let mut queues = all().lock().map_err(|_| Status::InternalFailure)?;
        let owner = super::thread_key();
        if let Some(i) = queues.iter().position(|q| q.name == name) {
            if let Some(q) = queues.get_mut(i) {
                q.owner = owner;
                q.config = config as usize;
            }
            return id_of(i);
        }
        queues.push(Queue {
            name: name.to_owned(),
            items: VecDeque::new(),
            owner,
            config: config as usize,
        });
        id_of(queues.len() - 1)
    }

    pub fn resolve(name: &str) -> Result<u32, Status> {
        let queues = all().lock().map_err(|_| Status::InternalFailure)?;
        let i = queues.iter().position(|q| q.name == name);
        i.map_or(Err(Status::NotFound), id_of)
    }

    pub fn enqueue(id: u32, value: &[u8]) -> Result<(), Status> {
        let owner = {
            let mut queues = all().lock().map_err(|_| Status::InternalFailure)?;
            let q = queue_mut(&mut queues, id)?;
            q.items.push_back(value.to_vec());
            WAITING.fetch_add(1, Ordering::Release);
            q.owner
        };
        super::wake(owner);
        Ok(())
    }

    pub fn dequeue(id: u32) -> Result<Option<Vec<u8>>, Status> {
        let mut queues = all().lock().map_err(|_| Status::InternalFailure)?;
        let item = queue_mut(&mut queues, id)?.items.pop_front();
        if item.is_some() {
            WAITING.fetch_sub(1, Ordering::Release);
        }
        Ok(item)
    }

    /// Queues owned by `owner` with items waiting: (id, configuration).
    pub fn ready_for(owner: u64) -> Vec<(u32, usize)> {
        if WAITING.load(Ordering::Acquire) == 0 {
            return Vec::new();
        }
        let Ok(queues) = all().lock() else {
            return Vec::new();
        };
        queues
            .iter()
            .enumerate()
            .filter(|(_, q)| q.owner == owner && !q.items.is_empty())
            .filter_map(|(i, q)| Some((id_of(i).ok()?, q.config)))
            .collect()
    }
}

use proxy_wasm::types::Status;

/// Every worker's counters, by configuration: the main thread folds them into Envoy's stats
/// (Envoy's per-increment cost is paid once a second, not per request, and an idle worker's
/// last counts are never stranded).
mod flushers {
    use super::{abi, raw, Config, Metrics};
    use std::sync::{Arc, Mutex, OnceLock, Weak};

    struct Entry {
        config: usize,
        scheduler: usize,
        metrics: Weak<Metrics>,
    }

    fn all() -> &'static Mutex<Vec<Entry>> {
        static ALL: OnceLock<Mutex<Vec<Entry>>> = OnceLock::new();
        ALL.get_or_init(|| Mutex::new(Vec::new()))
    }

    pub fn add(config: *const Config, scheduler: usize, metrics: &Arc<Metrics>) {
        if let Ok(mut all) = all().lock() {
            all.retain(|e| e.metrics.strong_count() > 0);
            all.push(Entry {
                config: config as usize,
                scheduler,
                metrics: Arc::downgrade(metrics),
            });
        }
    }

    /// Forgets a configuration that Envoy destroys.
    pub fn remove(config: *const Config) {
        if let Ok(mut all) = all().lock() {
            all.retain(|e| e.config != config as usize);
        }
    }

    /// Timer thread: asks the main thread to flush and publish, for every configuration.
    pub fn request() {
        let Ok(all) = all().lock() else {
            return;
        };
        let mut asked: Vec<usize> = Vec::new();
        for e in all.iter() {
            if e.scheduler != 0 && !asked.contains(&e.config) {
                asked.push(e.config);
                // SAFETY: the scheduler lives until its configuration is destroyed, which
                // removes this entry under this lock first.
                unsafe {
                    abi::envoy_dynamic_module_callback_http_filter_config_scheduler_commit(
                        e.scheduler as abi::Scheduler,
                        super::EVENT_FLUSH,
                    )
                };
            }
        }
    }

    /// Main thread: folds every worker's counters of `config` into the stats.
    pub fn flush(config: *const Config) {
        let metrics: Vec<Arc<Metrics>> = match all().lock() {
            Ok(all) => all
                .iter()
                .filter(|e| e.config == config as usize)
                .filter_map(|e| e.metrics.upgrade())
                .collect(),
            Err(_) => return,
        };
        raw::within(std::ptr::null_mut(), config, false, || {
            for m in metrics {
                m.flush();
            }
        });
    }
}

use super::metrics::Metrics;

/// Held streams' schedulers by worker: how the timer thread and other workers reach a worker.
struct Wakers {
    entries: Mutex<Vec<(u64, usize)>>,
    changed: Condvar,
}

fn wakers() -> &'static Wakers {
    static WAKERS: OnceLock<Wakers> = OnceLock::new();
    WAKERS.get_or_init(|| {
        let spawned = std::thread::Builder::new()
            .name("llm-fallback-timer".into())
            .spawn(timer_loop);
        if spawned.is_err() {
            let _ = raw::log(
                proxy_wasm::types::LogLevel::Warn,
                "no timer thread; held streams are released by traffic only",
            );
        }
        Wakers {
            entries: Mutex::new(Vec::new()),
            changed: Condvar::new(),
        }
    })
}

const EVENT_TICK: u64 = 1;
const EVENT_FLUSH: u64 = 2;
/// How often the timer thread wakes workers that hold streams (their roots' own periods apply).
const TIMER_PERIOD: Duration = Duration::from_millis(25);
/// How often counters are folded into Envoy's stats (as the proxy-wasm build's flush).
const FLUSH_PERIOD: Duration = Duration::from_secs(1);

fn timer_loop() {
    let mut flushed = std::time::Instant::now();
    loop {
        let wakers = wakers();
        let Ok(entries) = wakers.entries.lock() else {
            return;
        };
        let wait = if entries.is_empty() {
            FLUSH_PERIOD.saturating_sub(flushed.elapsed())
        } else {
            TIMER_PERIOD
        };
        let Ok((entries, _)) = wakers.changed.wait_timeout(entries, wait) else {
            return;
        };
        drop(entries);
        if !wait.is_zero() {
            std::thread::sleep(TIMER_PERIOD.min(wait));
        }
        if flushed.elapsed() >= FLUSH_PERIOD {
            flushed = std::time::Instant::now();
            flushers::request();
        }
        let Ok(entries) = wakers.entries.lock() else {
            return;
        };
        let mut woken: Vec<u64> = Vec::new();
        for (thread, scheduler) in entries.iter() {
            if !woken.contains(thread) {
                woken.push(*thread);
                // SAFETY: registered schedulers are deleted only after leaving the list, under
                // this lock.
                unsafe {
                    abi::envoy_dynamic_module_callback_http_filter_scheduler_commit(
                        *scheduler as Scheduler,
                        EVENT_TICK,
                    )
                };
            }
        }
    }
}

/// Wakes `thread` (a shared-queue item for it) if one of its streams is held.
fn wake(thread: u64) {
    let Ok(entries) = wakers().entries.lock() else {
        return;
    };
    if let Some((_, scheduler)) = entries.iter().find(|(t, _)| *t == thread) {
        // SAFETY: as in `timer_loop`.
        unsafe {
            abi::envoy_dynamic_module_callback_http_filter_scheduler_commit(
                *scheduler as Scheduler,
                EVENT_TICK,
            )
        };
    }
}

impl Filter {
    /// The status for Envoy of what the shell answered; a held stream lets the timer reach it.
    fn answer(&mut self, action: Action) -> u32 {
        if action == Action::Continue {
            return abi::CONTINUE;
        }
        self.hold();
        abi::STOP
    }

    /// Lets the timer thread reach this worker while this stream is held.
    fn hold(&mut self) {
        if !self.scheduler.is_null() {
            return;
        }
        // SAFETY: a live stream, in its own hook.
        let scheduler =
            unsafe { abi::envoy_dynamic_module_callback_http_filter_scheduler_new(self.envoy) };
        if scheduler.is_null() {
            return;
        }
        self.scheduler = scheduler;
        let wakers = wakers();
        if let Ok(mut entries) = wakers.entries.lock() {
            entries.push((thread_key(), scheduler as usize));
            wakers.changed.notify_one();
        }
    }

    fn release_scheduler(&mut self) {
        if self.scheduler.is_null() {
            return;
        }
        if let Ok(mut entries) = wakers().entries.lock() {
            entries.retain(|(_, s)| *s != self.scheduler as usize);
        }
        // SAFETY: no longer reachable by other threads (removed under the lock above).
        unsafe { abi::envoy_dynamic_module_callback_http_filter_scheduler_delete(self.scheduler) };
        self.scheduler = std::ptr::null_mut();
    }
}

/// Runs one hook of the stream behind `module`.
fn on_stream<T>(
    envoy: FilterEnvoy,
    module: *const c_void,
    body: bool,
    fallback: T,
    f: impl FnOnce(&mut Filter) -> T,
) -> T {
    // SAFETY: `module` is the `Filter` this module created for this stream and Envoy calls
    // its hooks one at a time on its worker.
    let Some(filter) = (unsafe { (module as *mut Filter).as_mut() }) else {
        return fallback;
    };
    let config = filter.config;
    guarded(fallback, || raw::within(envoy, config, body, || f(filter)))
}

fn status(action: Action) -> u32 {
    match action {
        Action::Continue => abi::CONTINUE,
        _ => abi::STOP,
    }
}

// ---- hooks ------------------------------------------------------------------------------------

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_program_init() -> *const c_char {
    abi::ABI_VERSION.as_ptr().cast()
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_config_new(
    envoy: *mut c_void,
    name: abi::EnvoyBuffer,
    config: abi::EnvoyBuffer,
) -> *const c_void {
    guarded(std::ptr::null(), || {
        // SAFETY: Envoy's buffers, valid during this hook; copied.
        let (name, bytes) = unsafe { (name.bytes(), config.bytes()) };
        // SAFETY: Envoy's configuration, in its creation hook.
        let scheduler =
            unsafe { abi::envoy_dynamic_module_callback_http_filter_config_scheduler_new(envoy) };
        let config = Box::new(Config {
            envoy: envoy as usize,
            name: String::from_utf8_lossy(name).into_owned(),
            bytes: bytes.to_vec(),
            metrics: Mutex::new(HashMap::new()),
            defining: AtomicBool::new(true),
            scheduler: scheduler as usize,
            targets: Mutex::new(HashMap::new()),
        });
        if config.name == FLOOR {
            return Box::into_raw(config).cast_const().cast();
        }
        // Starts the timer thread.
        let _ = wakers();
        // Configured once here (Envoy takes metric definitions only now); workers configure
        // their own roots on their first stream, finding the metrics defined. This root stays,
        // on the main thread: once a second it publishes what lives in shared data (gauges of
        // budgets, circuits, latency, shaping), whether or not any worker has traffic.
        let root = configure(&config);
        config.defining.store(false, Ordering::Relaxed);
        let Some(root) = root else {
            return std::ptr::null();
        };
        let scheduler = config.scheduler;
        let config = Box::into_raw(config).cast_const();
        if let Some(plugin) = &root.plugin {
            flushers::add(config, scheduler, &plugin.metrics);
        }
        WORKER.with(|w| {
            if let Ok(mut worker) = w.try_borrow_mut() {
                worker.slots.push(Slot {
                    config,
                    root: Rc::new(RefCell::new(root)),
                    next_tick_ms: 0,
                });
            }
        });
        config.cast()
    })
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_config_destroy(config: *const c_void) {
    guarded((), || {
        WORKER.with(|w| {
            if let Ok(mut worker) = w.try_borrow_mut() {
                worker.slots.retain(|s| s.config.cast() != config);
            }
        });
        if !config.is_null() {
            flushers::remove(config.cast());
            raw::forget_metrics(config.cast());
            // SAFETY: created by `config_new`; Envoy destroys it once, after its filters.
            let config = unsafe { Box::from_raw(config.cast_mut().cast::<Config>()) };
            if config.scheduler != 0 {
                // SAFETY: no longer reachable (its flusher entries are gone).
                unsafe {
                    abi::envoy_dynamic_module_callback_http_filter_config_scheduler_delete(
                        config.scheduler as Scheduler,
                    )
                };
            }
        }
    })
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_per_route_config_new(
    _name: abi::EnvoyBuffer,
    _config: abi::EnvoyBuffer,
) -> *const c_void {
    // No per-route configuration: the route steers through its metadata.
    std::ptr::null()
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_per_route_config_destroy(_c: *const c_void) {}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_new(
    config: *const c_void,
    envoy: FilterEnvoy,
) -> *const c_void {
    guarded(std::ptr::null(), || {
        let config = config.cast::<Config>();
        // SAFETY: Envoy keeps the configuration alive while it creates filters from it.
        if unsafe { config.as_ref() }.is_some_and(|c| c.name == FLOOR) {
            return Box::into_raw(Box::new(Filter {
                config,
                id: 0,
                envoy,
                context: Box::new(PassThrough),
                scheduler: std::ptr::null_mut(),
                done: false,
            }))
            .cast_const()
            .cast();
        }
        tick();
        // What other workers told this one (a load trigger flip, a freed slot) is known before
        // this stream is judged.
        deliver_queues();
        let id = WORKER.with(|w| {
            w.try_borrow_mut().ok().map(|mut worker| {
                worker.next_id = worker.next_id.wrapping_add(1).max(1);
                let id = worker.next_id;
                worker.live.insert(id, envoy);
                id
            })
        });
        let Some(id) = id else {
            return std::ptr::null();
        };
        let context = root_for(config)
            .and_then(|root| {
                let root = root.try_borrow().ok()?;
                raw::within(envoy, config, false, || root.create_http_context(id))
            })
            .unwrap_or_else(|| Box::new(PassThrough));
        let filter = Box::new(Filter {
            config,
            id,
            envoy,
            context,
            scheduler: std::ptr::null_mut(),
            done: false,
        });
        Box::into_raw(filter).cast_const().cast()
    })
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_request_headers(
    envoy: FilterEnvoy,
    module: *const c_void,
    end_of_stream: bool,
) -> u32 {
    on_stream(envoy, module, false, abi::CONTINUE, |f| {
        status(f.context.on_http_request_headers(0, end_of_stream))
    })
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_request_body(
    envoy: FilterEnvoy,
    module: *const c_void,
    end_of_stream: bool,
) -> u32 {
    on_stream(envoy, module, true, abi::CONTINUE, |f| {
        let size = raw::body_size(envoy, false);
        match f.context.on_http_request_body(size, end_of_stream) {
            // Buffering until the body ends is no hold: the rest of the body ends it.
            action if !end_of_stream => status(action),
            action => f.answer(action),
        }
    })
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_request_trailers(
    envoy: FilterEnvoy,
    module: *const c_void,
) -> u32 {
    on_stream(envoy, module, false, abi::CONTINUE, |f| {
        let action = f.context.on_http_request_trailers(0);
        f.answer(action)
    })
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_response_headers(
    envoy: FilterEnvoy,
    module: *const c_void,
    end_of_stream: bool,
) -> u32 {
    on_stream(envoy, module, false, abi::CONTINUE, |f| {
        let action = f.context.on_http_response_headers(0, end_of_stream);
        f.answer(action)
    })
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_response_body(
    envoy: FilterEnvoy,
    module: *const c_void,
    end_of_stream: bool,
) -> u32 {
    on_stream(envoy, module, true, abi::CONTINUE, |f| {
        let size = raw::body_size(envoy, true);
        let action = f.context.on_http_response_body(size, end_of_stream);
        f.answer(action)
    })
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_response_trailers(
    envoy: FilterEnvoy,
    module: *const c_void,
) -> u32 {
    on_stream(envoy, module, false, abi::CONTINUE, |f| {
        status(f.context.on_http_response_trailers(0))
    })
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_stream_complete(
    envoy: FilterEnvoy,
    module: *const c_void,
) {
    on_stream(envoy, module, false, (), Filter::finish)
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_destroy(module: *const c_void) {
    guarded((), || {
        if module.is_null() {
            return;
        }
        // SAFETY: created by `filter_new`; Envoy destroys it once, after its last hook.
        let mut filter = unsafe { Box::from_raw(module.cast_mut().cast::<Filter>()) };
        filter.release_scheduler();
        WORKER.with(|w| {
            if let Ok(mut worker) = w.try_borrow_mut() {
                worker.live.remove(&filter.id);
            }
        });
        let (config, envoy) = (filter.config, filter.envoy);
        // An upstream attempt that ended without an answer (a reset, a per-try timeout, a
        // client gone) gets no `stream_complete`: it is done now, while Envoy's filter lives.
        raw::within(envoy, config, false, || {
            filter.finish();
            drop(filter);
        });
    })
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_scheduled(
    envoy: FilterEnvoy,
    module: *const c_void,
    _event_id: u64,
) {
    on_stream(envoy, module, false, (), |_| {
        tick();
        deliver_queues();
    })
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_config_scheduled(
    _envoy: *mut c_void,
    config: *const c_void,
    _event_id: u64,
) {
    guarded((), || {
        let config = config.cast::<Config>();
        flushers::flush(config);
        deliver_queues();
        if let Some(root) = root_of(config) {
            on_root(config, &root, Root::on_tick);
        }
    })
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_local_reply(
    _envoy: FilterEnvoy,
    _module: *const c_void,
    _response_code: u32,
    _details: abi::EnvoyBuffer,
    _reset_imminent: bool,
) -> u32 {
    0 // Continue: send the local reply as usual.
}

/// Hooks of features this filter does not use (HTTP callouts and streams, watermarks, the
/// configuration's scheduler): Envoy requires them to exist. They return nothing and read none
/// of their arguments, which the C calling convention allows.
macro_rules! unused_hooks {
    ($($name:ident),* $(,)?) => {$(
        #[no_mangle]
        pub extern "C" fn $name() {}
    )*};
}

unused_hooks!(
    envoy_dynamic_module_on_http_filter_http_callout_done,
    envoy_dynamic_module_on_http_filter_http_stream_headers,
    envoy_dynamic_module_on_http_filter_http_stream_data,
    envoy_dynamic_module_on_http_filter_http_stream_trailers,
    envoy_dynamic_module_on_http_filter_http_stream_complete,
    envoy_dynamic_module_on_http_filter_http_stream_reset,
    envoy_dynamic_module_on_http_filter_config_http_callout_done,
    envoy_dynamic_module_on_http_filter_config_http_stream_headers,
    envoy_dynamic_module_on_http_filter_config_http_stream_data,
    envoy_dynamic_module_on_http_filter_config_http_stream_trailers,
    envoy_dynamic_module_on_http_filter_config_http_stream_complete,
    envoy_dynamic_module_on_http_filter_config_http_stream_reset,
    envoy_dynamic_module_on_http_filter_downstream_above_write_buffer_high_watermark,
    envoy_dynamic_module_on_http_filter_downstream_below_write_buffer_low_watermark,
);
