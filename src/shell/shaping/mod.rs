//! Traffic shaping in the shell: this worker's queue of held requests, its slots, and the
//! shared ledger they are mirrored into (compare-and-swap on one shared-data key), the wake-up
//! queues between workers, and the load trigger's windows.
//!
//! Everything here is per worker (VM memory): a request's callbacks, the root context's timer
//! and its queue-ready callback run on the same thread. The decisions come from
//! [`crate::shaping`]; this module only moves state and applies them. Effects on another
//! stream (resume, local reply) are collected first and applied after the worker state is put
//! down, so a host call that re-enters the filter never meets a borrowed state.
//!
//! - [`arrive`]: a request read and routed: deferred, admitted, queued or refused; and its end.
//! - [`queue`]: waiting requests released, downgraded or answered (root context).
//! - [`timer`]: heartbeat, the load trigger, gauges; what the filters observe for the trigger.

mod arrive;
mod queue;
mod timer;

pub use arrive::{arrive, downgraded, finish, rejection, treatment, was_replied, Arrival};
pub use queue::woken;
pub use timer::{observe_attempt, observe_time, tick};

use super::{host, raw, Plugin};
use crate::config::shaping::ShapingConfig;
use crate::shaping::admit;
use crate::shaping::ledger::{self, Ledger};
use crate::shaping::refuse::Treatment;
use crate::shaping::{load, Ask, Holdings, Lane, LONG_POOL};
use crate::stats::{Counter, ShapingEvent};
use proxy_wasm::types::{LogLevel, MetricType};
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::BuildHasher;

const WAKE_PREFIX: &str = "llm_fallback.shaping.wake.";
/// The client filter's timer period while requests wait (queue times are kept to it).
pub const WAITING_TICK_MS: u32 = 50;
/// ... and while none does.
pub const IDLE_TICK_MS: u32 = 1_000;

/// A request held in this worker's queue.
pub(super) struct Waiting {
    context: u32,
    /// Its request-state id, for a downgrade.
    request: Option<String>,
    ask: Ask,
    since_ms: u64,
    deadline_ms: u64,
}

/// Stat ids: gauges set from the ledger's totals (all workers), histograms of queue waits.
#[derive(Default)]
pub(super) struct Stats {
    queue_length: Vec<Option<u32>>,
    in_use: Vec<Option<u32>>,
    wait_ms: Vec<Option<u32>>,
}

#[derive(Default)]
pub(super) struct Worker {
    /// This VM's nonce in the ledger (0: not registered; shaping then admits everything).
    me: u32,
    vm_id: String,
    wake: Option<u32>,
    /// What this worker holds and queues: the truth its ledger entry is written from.
    local: Holdings,
    /// Highest class first, then oldest first.
    waiting: Vec<Waiting>,
    /// Contexts holding a slot, and its pool.
    holding: HashMap<u32, usize>,
    /// How shaping treated each admitted request (for its answer's headers).
    treated: HashMap<u32, Treatment>,
    /// Contexts the timer answered itself.
    replied: Vec<u32>,
    /// The load trigger as last read (the ledger holds the truth).
    engaged: bool,
    window: load::Window,
    stats: Stats,
    waiting_tick: bool,
}

thread_local! {
    static WORKER: RefCell<Worker> = RefCell::new(Worker::default());
}

pub(super) fn with<T>(f: impl FnOnce(&mut Worker) -> T) -> Option<T> {
    WORKER.with(|w| w.try_borrow_mut().ok().map(|mut w| f(&mut w)))
}

/// Rewrites the ledger: `step` sees it (dead VMs' entries already dropped) and returns a value,
/// or `None` to leave it. Returns the value, the ledger as written and what was taken back from
/// dead VMs; `None` when the host failed or the key stayed contended.
pub(super) fn transact<T>(
    me: u32,
    now_ms: u64,
    mut step: impl FnMut(&mut Ledger) -> Option<T>,
) -> Option<(T, Ledger, Holdings)> {
    let mut out = None;
    let outcome = host::cas_update(ledger::KEY, |bytes| {
        let mut book = Ledger::read(bytes);
        let taken = book.reclaim(me, now_ms);
        let value = step(&mut book)?;
        let encoded = book.encode();
        out = Some((value, book, taken));
        Some(encoded)
    });
    match outcome {
        host::CasOutcome::Written => out,
        host::CasOutcome::Unchanged | host::CasOutcome::Failed => None,
    }
}

/// Writes this VM's entry from what it holds (heartbeat, a freed slot or place), taking back
/// dead VMs' slots on the way. Returns the ledger as written.
pub(super) fn write_entry(plugin: &Plugin, me: u32, now_ms: u64, mine: Holdings) -> Option<Ledger> {
    let ((), book, taken) = transact(me, now_ms, |book| {
        book.put(me, now_ms, mine);
        Some(())
    })?;
    took_back(plugin, &taken);
    Some(book)
}

/// The ledger as stored now (read without writing: the status document, a wake-up).
fn read_ledger() -> Ledger {
    Ledger::read(
        host::shared_data(ledger::KEY)
            .and_then(|(b, _)| b)
            .as_deref(),
    )
}

pub(super) fn count(plugin: &Plugin, class: usize, event: ShapingEvent) {
    plugin.metrics.increment(Counter::Shaping(class, event));
}

pub(super) fn shaping(plugin: &Plugin) -> Option<&ShapingConfig> {
    plugin.config.shaping.as_ref()
}

/// Registers this VM in the ledger and its wake-up queue (client filter, at configuration).
pub fn configure(plugin: &Plugin) {
    let Some(config) = shaping(plugin) else {
        return;
    };
    let now = host::now_unix_ms();
    // Random per VM (WASI random_get), never 0.
    let nonce = (std::collections::hash_map::RandomState::new().hash_one(now) as u32).max(1);
    let vm_id = host::property(vec!["plugin_vm_id"])
        .and_then(|b| String::from_utf8(b).ok())
        .unwrap_or_default();
    let wake = match raw::register_shared_queue(&format!("{WAKE_PREFIX}{nonce}")) {
        Ok(id) => Some(id),
        Err(status) => {
            host::log(
                LogLevel::Warn,
                &format!(
                    "no shaping wake-up queue ({status:?}): queued requests wait for the timer"
                ),
            );
            None
        }
    };
    let define = |kind, name: String| raw::define_metric(kind, &name).ok();
    let classes = &config.classes;
    let stats = Stats {
        queue_length: classes
            .iter()
            .map(|c| {
                define(
                    MetricType::Gauge,
                    format!("llm_fallback.queue_length;priority={}", c.name),
                )
            })
            .collect(),
        in_use: classes
            .iter()
            .map(|c| c.name.as_str())
            .chain(config.long_tasks.iter().map(|_| "long"))
            .map(|pool| {
                define(
                    MetricType::Gauge,
                    format!("llm_fallback.pool_in_use;pool={pool}"),
                )
            })
            .collect(),
        wait_ms: classes
            .iter()
            .map(|c| {
                define(
                    MetricType::Histogram,
                    format!("llm_fallback.queue_wait_ms;priority={}", c.name),
                )
            })
            .collect(),
    };
    let registered = write_entry(plugin, nonce, now, Holdings::default()).is_some();
    if !registered {
        host::log(
            LogLevel::Error,
            "traffic shaping could not register in shared data: requests pass unshaped",
        );
    }
    with(|w| {
        w.me = if registered { nonce } else { 0 };
        w.vm_id = vm_id;
        w.wake = wake;
        w.stats = stats;
    });
}

/// Wakes the workers with waiting requests, this one included (its queue-ready callback
/// releases them outside of any stream's callback).
pub(super) fn wake(book: &Ledger, me: u32) {
    let (vm_id, own, waiting_here) =
        with(|w| (w.vm_id.clone(), w.wake, !w.waiting.is_empty())).unwrap_or_default();
    if waiting_here {
        if let Some(id) = own {
            let _ = raw::enqueue_shared_queue(id, b"w");
        }
    }
    for nonce in book.waiting_elsewhere(me) {
        wake_vm(&vm_id, nonce);
    }
}

/// Enqueues a wake-up on the queue of the VM with `nonce`.
fn wake_vm(vm_id: &str, nonce: u32) {
    if let Ok(id) = raw::resolve_shared_queue(vm_id, &format!("{WAKE_PREFIX}{nonce}")) {
        let _ = raw::enqueue_shared_queue(id, b"w");
    }
}

pub(super) fn took_back(plugin: &Plugin, taken: &Holdings) {
    if taken.is_empty() {
        return;
    }
    for (pool, n) in taken.held.iter().enumerate() {
        if *n > 0 && pool < LONG_POOL {
            plugin.metrics.add(
                Counter::Shaping(pool, ShapingEvent::Reclaimed),
                u64::from(*n),
            );
        }
    }
    let slots: u32 = taken.held.iter().map(|n| u32::from(*n)).sum();
    host::log(
        LogLevel::Warn,
        &format!(
            "traffic shaping took back {slots} slot(s) and {} queue place(s) of a VM that \
             stopped (no heartbeat for {} ms)",
            taken.queue_length(),
            ledger::STALE_MS
        ),
    );
}

pub(super) fn set_tick(waiting: bool) {
    let change = with(|w| {
        let change = w.waiting_tick != waiting;
        w.waiting_tick = waiting;
        change
    })
    .unwrap_or(false);
    if change {
        let period = if waiting {
            WAITING_TICK_MS
        } else {
            IDLE_TICK_MS
        };
        let _ = raw::set_tick_period_ms(period);
    }
}

/// Wakes every worker in the ledger, this one included.
pub(super) fn wake_all(book: &Ledger) {
    let vm_id = with(|w| w.vm_id.clone()).unwrap_or_default();
    for entry in &book.entries {
        wake_vm(&vm_id, entry.nonce);
    }
}

/// The status document's shaping section: the ledger as every worker sees it.
pub fn status(config: &ShapingConfig) -> serde_json::Value {
    use serde_json::json;
    let book = read_ledger();
    let totals = book.totals(0, &Holdings::default());
    let pools: Vec<_> = config
        .classes
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({
                "pool": c.name,
                "max_concurrency": admit::pool_limit(config, i, book.engaged),
                "in_use": totals.held(i),
                "queued": totals.lane(Lane::Class).get(i),
                "queued_long": totals.lane(Lane::Long).get(i),
            })
        })
        .chain(config.long_tasks.iter().map(|l| {
            json!({
                "pool": "long",
                "max_concurrency": l.max_concurrency,
                "in_use": totals.held(LONG_POOL),
            })
        }))
        .collect();
    json!({
        "load_engaged": book.engaged,
        "load_changed_ms": book.changed_ms,
        "workers": book.entries.len(),
        "pools": pools,
    })
}
