//! Traffic shaping in the shell: this worker's queue of held requests, its slots, and the
//! shared ledger they are mirrored into (compare-and-swap on one shared-data key), the wake-up
//! queues between workers, and the load trigger's windows.
//!
//! Everything here is per worker (VM memory): a request's callbacks, the root context's timer
//! and its queue-ready callback run on the same thread. The decisions come from
//! [`crate::shaping`]; this module only moves state and applies them. Effects on another
//! stream (resume, local reply) are collected first and applied after the worker state is put
//! down, so a host call that re-enters the filter never meets a borrowed state.

use super::apply::{apply, HostClock};
use super::{host, raw, requests, Plugin};
use crate::config::shaping::{AtLimit, LimitWhen, ShapingConfig};
use crate::flow::{route, Effect, Effects};
use crate::shaping::admit::{self, Admit};
use crate::shaping::ledger::{self, Ledger};
use crate::shaping::offpeak::Schedule;
use crate::shaping::refuse::{self, Refusal, Treatment};
use crate::shaping::{load, Ask, Holdings, Lane, LimitReason, LONG_POOL};
use crate::stats::{Counter, ShapingEvent};
use proxy_wasm::types::{LogLevel, MapType, MetricType};
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::BuildHasher;

const WAKE_PREFIX: &str = "llm_fallback.shaping.wake.";
/// The client filter's timer period while requests wait (queue times are kept to it).
pub const WAITING_TICK_MS: u32 = 50;
/// ... and while none does.
pub const IDLE_TICK_MS: u32 = 1_000;

/// A request held in this worker's queue.
struct Waiting {
    context: u32,
    /// Its request-state id, for a downgrade.
    request: Option<String>,
    ask: Ask,
    since_ms: u64,
    deadline_ms: u64,
}

/// Stat ids: gauges set from the ledger's totals (all workers), histograms of queue waits.
#[derive(Default)]
struct Stats {
    queue_length: Vec<Option<u32>>,
    in_use: Vec<Option<u32>>,
    wait_ms: Vec<Option<u32>>,
}

#[derive(Default)]
struct Worker {
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

fn with<T>(f: impl FnOnce(&mut Worker) -> T) -> Option<T> {
    WORKER.with(|w| w.try_borrow_mut().ok().map(|mut w| f(&mut w)))
}

/// Rewrites the ledger: `step` sees it (dead VMs' entries already dropped) and returns a value,
/// or `None` to leave it. Returns the value, the ledger as written and what was taken back from
/// dead VMs; `None` when the host failed or the key stayed contended.
fn transact<T>(
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

fn count(plugin: &Plugin, class: usize, event: ShapingEvent) {
    plugin.metrics.increment(Counter::Shaping(class, event));
}

fn shaping(plugin: &Plugin) -> Option<&ShapingConfig> {
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
    let registered = transact(nonce, now, |book| {
        book.put(nonce, now, Holdings::default());
        Some(())
    })
    .is_some();
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

/// What the client filter does with a request shaping has seen.
#[derive(Debug)]
pub enum Arrival {
    /// Send it now.
    Go,
    /// Held in the queue: return `Pause`; the timer or a wake-up releases it.
    Wait,
    /// Answer it locally (the effects hold the reply).
    Refused(Effects),
    /// Route it to a lower tier (the caller rewrites its chain; a chain without one rejects).
    Downgrade(LimitReason),
}

/// The class's answer at its limit.
fn at_limit(
    config: &ShapingConfig,
    ask: Ask,
    reason: LimitReason,
    now: u64,
    seed: &str,
) -> Arrival {
    let action = config
        .classes
        .get(ask.class)
        .map_or(AtLimit::Reject, |c| c.at_limit);
    if action == AtLimit::Downgrade {
        return Arrival::Downgrade(reason);
    }
    let refusal = Refusal {
        action,
        reason,
        retry_after_ms: refuse::retry_after_ms(config, ask, action, reason, now, seed),
    };
    Arrival::Refused(reply(config, ask, refusal))
}

fn reply(config: &ShapingConfig, ask: Ask, refusal: Refusal) -> Effects {
    let class = config
        .classes
        .get(ask.class)
        .map_or("?", |c| c.name.as_str());
    let mut out = Effects::default();
    refuse::reply(class, refusal, &mut out);
    out
}

/// A request read and routed: off-peak deferral, then a slot, a queue place, or its class's
/// answer at the limit. `seed` spreads deferred clients' `Retry-After`.
pub fn arrive(
    plugin: &Plugin,
    context: u32,
    request: Option<&str>,
    ask: Ask,
    seed: &str,
) -> Arrival {
    let Some(config) = shaping(plugin) else {
        return Arrival::Go;
    };
    let (me, engaged) = with(|w| (w.me, w.engaged)).unwrap_or((0, false));
    let class = config.classes.get(ask.class);
    if let (Some(off), Some(class)) = (&config.off_peak, class) {
        if off.classes.contains(&class.name) {
            let now = host::now_unix_ms();
            let reason = if !Schedule::new(&off.windows, &off.utc_offset).inside(now) {
                Some(LimitReason::OffPeak)
            } else if off.under_load && engaged {
                Some(LimitReason::Load)
            } else {
                None
            };
            if let Some(reason) = reason {
                count(plugin, ask.class, ShapingEvent::Deferred);
                let refusal = Refusal {
                    action: AtLimit::Defer,
                    reason,
                    retry_after_ms: refuse::retry_after_ms(
                        config,
                        ask,
                        AtLimit::Defer,
                        reason,
                        now,
                        seed,
                    ),
                };
                return Arrival::Refused(reply(config, ask, refusal));
            }
        }
    }
    if me == 0 || admit::arrive(config, engaged, &Holdings::default(), ask) == Admit::Free {
        count(plugin, ask.class, ShapingEvent::Admitted);
        return Arrival::Go;
    }
    let now = host::now_unix_ms();
    let local = with(|w| w.local).unwrap_or_default();
    let decided = transact(me, now, |book| {
        let decision = admit::arrive(config, book.engaged, &book.totals(me, &local), ask);
        let mut mine = local;
        match decision {
            Admit::Slot { pool, .. } => mine.change_held(pool, true),
            Admit::Queue => {
                mine.change_queued(ask, true);
            }
            Admit::Free | Admit::Full => {}
        }
        book.put(me, now, mine);
        Some((decision, mine))
    });
    let Some(((decision, mine), book, taken)) = decided else {
        // Shared data failed: never stall the data plane.
        host::log(
            LogLevel::Warn,
            "shaping ledger unavailable: request admitted unshaped",
        );
        count(plugin, ask.class, ShapingEvent::Admitted);
        return Arrival::Go;
    };
    took_back(plugin, &taken);
    with(|w| {
        w.local = mine;
        w.engaged = book.engaged;
        match decision {
            Admit::Slot { pool, borrowed } => {
                w.holding.insert(context, pool);
                let lent = borrowed || pool == LONG_POOL;
                w.treated.insert(
                    context,
                    Treatment {
                        class: ask.class,
                        pool: lent.then_some(pool),
                        ..Treatment::default()
                    },
                );
            }
            Admit::Queue => {
                let deadline_ms = now.saturating_add(admit::queue_ms(config, ask));
                let at = w
                    .waiting
                    .iter()
                    .position(|x| x.ask.class > ask.class)
                    .unwrap_or(w.waiting.len());
                w.waiting.insert(
                    at,
                    Waiting {
                        context,
                        request: request.map(str::to_owned),
                        ask,
                        since_ms: now,
                        deadline_ms,
                    },
                );
            }
            Admit::Free | Admit::Full => {}
        }
    });
    match decision {
        Admit::Slot { pool, borrowed } => {
            let event = if pool == LONG_POOL {
                ShapingEvent::Long
            } else if borrowed {
                ShapingEvent::Borrowed
            } else {
                ShapingEvent::Admitted
            };
            count(plugin, ask.class, event);
            Arrival::Go
        }
        Admit::Free => {
            count(plugin, ask.class, ShapingEvent::Admitted);
            Arrival::Go
        }
        Admit::Queue => {
            count(plugin, ask.class, ShapingEvent::Queued);
            set_tick(true);
            Arrival::Wait
        }
        Admit::Full => {
            // A limit in force only under load says so.
            let reason = match class.map(|c| c.limit_when) {
                Some(LimitWhen::UnderLoad) if ask.lane == Lane::Class => LimitReason::Load,
                _ => LimitReason::QueueFull,
            };
            let arrival = at_limit(config, ask, reason, now, seed);
            count_refusal(plugin, ask.class, &arrival);
            arrival
        }
    }
}

/// The rejection of a request whose downgrade found no lower tier.
pub fn rejection(plugin: &Plugin, ask: Ask, reason: LimitReason, seed: &str) -> Effects {
    let Some(config) = shaping(plugin) else {
        return Effects::default();
    };
    count(plugin, ask.class, ShapingEvent::Rejected);
    let now = host::now_unix_ms();
    let refusal = Refusal {
        action: AtLimit::Reject,
        reason,
        retry_after_ms: refuse::retry_after_ms(config, ask, AtLimit::Reject, reason, now, seed),
    };
    reply(config, ask, refusal)
}

fn count_refusal(plugin: &Plugin, class: usize, arrival: &Arrival) {
    let event = match arrival {
        Arrival::Refused(out) => match out.local_reply() {
            Some((_, headers, _)) if headers.iter().any(|(_, v)| v.starts_with("deferred")) => {
                ShapingEvent::Deferred
            }
            _ => ShapingEvent::Rejected,
        },
        Arrival::Downgrade(_) => ShapingEvent::Downgraded,
        Arrival::Go | Arrival::Wait => return,
    };
    count(plugin, class, event);
}

/// Records a downgrade (the client filter rewrote the chain at arrival).
pub fn downgraded(context: u32, class: usize, reason: LimitReason) {
    with(|w| {
        w.treated.insert(
            context,
            Treatment {
                class,
                downgraded: Some(reason),
                ..Treatment::default()
            },
        );
    });
}

/// How shaping treated this request (for its answer's headers).
pub fn treatment(context: u32) -> Option<Treatment> {
    with(|w| w.treated.get(&context).copied()).flatten()
}

/// Whether the timer answered this request itself (it was refused while queued).
pub fn was_replied(context: u32) -> bool {
    with(|w| w.replied.contains(&context)).unwrap_or(false)
}

/// The request's stream ended: its queue place or its slot is given back at once, and a
/// freed slot wakes the workers whose requests wait.
pub fn finish(plugin: &Plugin, context: u32) {
    if shaping(plugin).is_none() {
        return;
    }
    let Some((me, left, freed, local)) = with(|w| {
        w.treated.remove(&context);
        w.replied.retain(|c| *c != context);
        let mut left = None;
        if let Some(i) = w.waiting.iter().position(|x| x.context == context) {
            let gone = w.waiting.remove(i);
            w.local.change_queued(gone.ask, false);
            left = Some(gone.ask.class);
        }
        let freed = w.holding.remove(&context);
        if let Some(pool) = freed {
            w.local.change_held(pool, false);
        }
        (w.me, left, freed, w.local)
    }) else {
        return;
    };
    if let Some(class) = left {
        count(plugin, class, ShapingEvent::Abandoned);
    }
    if me == 0 || (left.is_none() && freed.is_none()) {
        return;
    }
    let now = host::now_unix_ms();
    let written = transact(me, now, |book| {
        book.put(me, now, local);
        Some(())
    });
    if let Some(((), book, taken)) = written {
        took_back(plugin, &taken);
        if freed.is_some() {
            wake(&book, me);
        }
    }
}

/// Wakes the workers with waiting requests, this one included (its queue-ready callback
/// releases them outside of any stream's callback).
fn wake(book: &Ledger, me: u32) {
    let (vm_id, own, waiting_here) =
        with(|w| (w.vm_id.clone(), w.wake, !w.waiting.is_empty())).unwrap_or_default();
    if waiting_here {
        if let Some(id) = own {
            let _ = raw::enqueue_shared_queue(id, b"w");
        }
    }
    for nonce in book.waiting_elsewhere(me) {
        if let Ok(id) = raw::resolve_shared_queue(&vm_id, &format!("{WAKE_PREFIX}{nonce}")) {
            let _ = raw::enqueue_shared_queue(id, b"w");
        }
    }
}

fn took_back(plugin: &Plugin, taken: &Holdings) {
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

fn set_tick(waiting: bool) {
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

/// What the timer does to one waiting request.
enum Release {
    /// Resume it (with a slot of `pool`, or none when its limit is no longer in force).
    Resume { pool: Option<usize> },
    /// Its time is up.
    TimedOut,
}

/// Releases waiting requests that can go (slots free, limits lifted) and times out the others
/// (the root context's timer and queue-ready callback).
pub fn pump(plugin: &Plugin) {
    let Some(config) = shaping(plugin) else {
        return;
    };
    let Some((me, candidates)) = with(|w| {
        let c: Vec<(u32, Ask, u64)> = w
            .waiting
            .iter()
            .map(|x| (x.context, x.ask, x.deadline_ms))
            .collect();
        (w.me, c)
    }) else {
        return;
    };
    if candidates.is_empty() {
        set_tick(false);
        return;
    }
    let now = host::now_unix_ms();
    // A class whose first waiter found no slot: its later waiters would not find one either.
    let mut stuck: u32 = 0;
    for (context, ask, deadline) in candidates {
        let bit = 1u32 << ((ask.lane as u32) * 8 + (ask.class as u32 & 7));
        let release = if now >= deadline {
            Some(Release::TimedOut)
        } else if stuck & bit != 0 {
            None
        } else {
            let engaged = with(|w| w.engaged).unwrap_or(false);
            if admit::no_longer_limited(config, engaged, ask) {
                Some(Release::Resume { pool: None })
            } else {
                let pool = take_slot(plugin, config, me, ask, now);
                if pool.is_none() {
                    stuck |= bit;
                }
                pool.map(|pool| Release::Resume { pool: Some(pool) })
            }
        };
        if let Some(release) = release {
            leave_queue(plugin, config, me, context, ask, release, now);
        }
    }
    let empty = with(|w| w.waiting.is_empty()).unwrap_or(true);
    set_tick(!empty);
}

/// One CAS: a slot for a waiting request, moved from its queue place.
fn take_slot(
    plugin: &Plugin,
    config: &ShapingConfig,
    me: u32,
    ask: Ask,
    now: u64,
) -> Option<usize> {
    if me == 0 {
        return Some(ask.class);
    }
    let local = with(|w| w.local)?;
    let decided = transact(me, now, |book| {
        let Some(Admit::Slot { pool, .. }) =
            admit::slot(config, book.engaged, &book.totals(me, &local), ask, true)
        else {
            return None;
        };
        let mut mine = local;
        mine.change_queued(ask, false);
        mine.change_held(pool, true);
        book.put(me, now, mine);
        Some((pool, mine))
    });
    let ((pool, mine), book, taken) = decided?;
    took_back(plugin, &taken);
    with(|w| {
        w.local = mine;
        w.engaged = book.engaged;
    });
    Some(pool)
}

/// Takes a request out of the queue and resumes, downgrades or answers it.
fn leave_queue(
    plugin: &Plugin,
    config: &ShapingConfig,
    me: u32,
    context: u32,
    ask: Ask,
    release: Release,
    now: u64,
) {
    let Some(Some(gone)) = with(|w| {
        let i = w.waiting.iter().position(|x| x.context == context)?;
        let gone = w.waiting.remove(i);
        if let Release::Resume { pool: Some(pool) } = release {
            w.holding.insert(context, pool);
        } else {
            w.local.change_queued(ask, false);
        }
        Some(gone)
    }) else {
        return;
    };
    let waited = now.saturating_sub(gone.since_ms);
    let mut treatment = Treatment {
        class: ask.class,
        waited_ms: Some(waited),
        ..Treatment::default()
    };
    if !matches!(release, Release::Resume { pool: Some(_) }) && me != 0 {
        // The queue place goes back to the ledger (a slot taken already moved it).
        let local = with(|w| w.local).unwrap_or_default();
        let _ = transact(me, now, |book| {
            book.put(me, now, local);
            Some(())
        });
    }
    if let Some(id) = with(|w| w.stats.wait_ms.get(ask.class).copied().flatten()).flatten() {
        let _ = raw::record_metric(id, waited);
    }
    let mut resume_with: Option<String> = None;
    match release {
        Release::Resume { pool } => {
            treatment.pool = pool.filter(|p| *p != ask.class);
            count(plugin, ask.class, ShapingEvent::Released);
        }
        Release::TimedOut => {
            let seed = gone.request.as_deref().unwrap_or("");
            match at_limit(config, ask, LimitReason::QueueTimeout, now, seed) {
                Arrival::Downgrade(reason) => {
                    let clock = HostClock::default();
                    let cx = plugin.cx(&clock);
                    let cluster = gone
                        .request
                        .as_deref()
                        .and_then(|id| requests::with(id, |r| route::downgrade(&cx, r)))
                        .flatten();
                    match cluster {
                        Some(cluster) => {
                            count(plugin, ask.class, ShapingEvent::Downgraded);
                            treatment.downgraded = Some(reason);
                            resume_with = Some(cluster);
                        }
                        None => {
                            let refusal = Refusal {
                                action: AtLimit::Reject,
                                reason,
                                retry_after_ms: refuse::retry_after_ms(
                                    config,
                                    ask,
                                    AtLimit::Reject,
                                    reason,
                                    now,
                                    seed,
                                ),
                            };
                            count(plugin, ask.class, ShapingEvent::Rejected);
                            answer(plugin, context, reply(config, ask, refusal));
                            return;
                        }
                    }
                }
                arrival @ Arrival::Refused(_) => {
                    count_refusal(plugin, ask.class, &arrival);
                    if let Arrival::Refused(out) = arrival {
                        answer(plugin, context, out);
                    }
                    return;
                }
                Arrival::Go | Arrival::Wait => {}
            }
        }
    }
    with(|w| w.treated.insert(context, treatment));
    let resumed = raw::set_effective_context(context).is_ok()
        && resume_with.as_deref().is_none_or(|cluster| {
            raw::set_header(
                MapType::HttpRequestHeaders,
                &plugin.config.fallback.cluster_header,
                cluster,
            )
            .is_ok()
        })
        && raw::resume_request().is_ok();
    if !resumed {
        // The stream is gone (its on_done gives the slot back).
        log::debug!("queued request {context} could not be resumed");
    }
}

/// Answers a queued request locally (its time ran out at a reject or defer class).
fn answer(plugin: &Plugin, context: u32, out: Effects) {
    if !out.iter().any(|e| matches!(e, Effect::LocalReply { .. })) {
        return;
    }
    with(|w| w.replied.push(context));
    if raw::set_effective_context(context).is_ok() {
        apply(plugin, MapType::HttpRequestHeaders, out);
    }
}

/// The timer: heartbeat (and dead VMs' slots taken back), the load trigger, the gauges, and
/// the queue.
pub fn tick(plugin: &Plugin) {
    let Some(config) = shaping(plugin) else {
        return;
    };
    let Some((me, local, window)) = with(|w| (w.me, w.local, w.window)) else {
        return;
    };
    if me == 0 {
        return;
    }
    let now = host::now_unix_ms();
    let Some(((), book, taken)) = transact(me, now, |book| {
        book.put(me, now, local);
        Some(())
    }) else {
        return;
    };
    took_back(plugin, &taken);
    let totals = book.totals(me, &local);
    let mut engaged = book.engaged;
    if let Some(load_config) = &config.load {
        let mut window = window;
        window.roll(load_config, now);
        let mut total = load::Sample::default();
        let _ = host::cas_update(load::KEY, |bytes| {
            let mut record = load::Record::read(bytes);
            record.put(load_config, now, me, window);
            total = record.total(load_config, now);
            Some(record.encode())
        });
        let signals = load::Signals::of(&total, totals.queue_length());
        if let Some((next, why)) =
            load::next(load_config, book.engaged, book.changed_ms, &signals, now)
        {
            let flipped = transact(me, now, |book| {
                if book.engaged == next {
                    return None;
                }
                book.engaged = next;
                book.changed_ms = now;
                Some(())
            });
            if let Some(((), book, _)) = flipped {
                engaged = next;
                // Every worker learns it now, not at its next tick.
                wake_all(&book);
                host::log(
                    LogLevel::Info,
                    &format!(
                        "load trigger {} on {} ({why}: 429 rate {:.2}, p95 {} ms, queue {}, {} answers)",
                        if next { "engaged" } else { "released" },
                        load_config.model,
                        signals.rate_429,
                        signals.p95_ms.map_or("-".to_owned(), |p| p.to_string()),
                        signals.queue,
                        signals.answers,
                    ),
                );
            }
        }
        with(|w| w.window = window);
    }
    let stats = with(|w| {
        w.engaged = engaged;
        (w.stats.queue_length.clone(), w.stats.in_use.clone())
    });
    if let Some((queue_length, in_use)) = stats {
        for (class, id) in queue_length.iter().enumerate() {
            if let Some(id) = id {
                let _ = raw::record_metric(*id, u64::from(totals.queued_class(class)));
            }
        }
        for (pool, id) in in_use.iter().enumerate() {
            let pool = if pool >= config.classes.len() {
                LONG_POOL
            } else {
                pool
            };
            if let Some(id) = id {
                let _ = raw::record_metric(*id, u64::from(totals.held(pool)));
            }
        }
    }
    pump(plugin);
}

/// A wake-up from a worker that freed a slot or flipped the load trigger: the trigger's state
/// is read again, and waiting requests are tried.
pub fn woken(plugin: &Plugin, queue_id: u32) {
    while let Ok(Some(_)) = raw::dequeue_shared_queue(queue_id) {}
    if shaping(plugin).is_none() {
        return;
    }
    let book = Ledger::read(
        host::shared_data(ledger::KEY)
            .and_then(|(b, _)| b)
            .as_deref(),
    );
    with(|w| w.engaged = book.engaged);
    pump(plugin);
}

/// Wakes every worker in the ledger, this one included.
fn wake_all(book: &Ledger) {
    let vm_id = with(|w| w.vm_id.clone()).unwrap_or_default();
    for entry in &book.entries {
        if let Ok(id) = raw::resolve_shared_queue(&vm_id, &format!("{WAKE_PREFIX}{}", entry.nonce))
        {
            let _ = raw::enqueue_shared_queue(id, b"w");
        }
    }
}

/// Counts an upstream answer of the load trigger's model (upstream filter; VM memory only).
pub fn observe_attempt(plugin: &Plugin, model: Option<&str>, status: u16) {
    let Some(load_config) = shaping(plugin).and_then(|s| s.load.as_ref()) else {
        return;
    };
    if model != Some(load_config.model.as_str()) {
        return;
    }
    // Windows of seconds: the time of the last callback or tick is close enough.
    let now = super::apply::coarse_now_ms();
    with(|w| w.window.record(load_config, now, status, None));
}

/// Counts the answer time of a request first routed to the load trigger's model (client
/// filter, only when the trigger watches P95).
pub fn observe_time(plugin: &Plugin, model: &str, time_ms: u64) {
    let Some(load_config) = shaping(plugin).and_then(|s| s.load.as_ref()) else {
        return;
    };
    if load_config.engage_p95_ms.is_none() || model != load_config.model {
        return;
    }
    let now = host::now_unix_ms();
    with(|w| {
        w.window.roll(load_config, now);
        let bucket = load::BUCKETS_MS
            .iter()
            .position(|b| time_ms <= *b)
            .unwrap_or(load::BUCKETS_MS.len() - 1);
        if let Some(t) = w.window.current.times.get_mut(bucket) {
            *t = t.saturating_add(1);
        }
    });
}

/// The status document's shaping section: the ledger as every worker sees it.
pub fn status(config: &ShapingConfig) -> serde_json::Value {
    use serde_json::json;
    let book = Ledger::read(
        host::shared_data(ledger::KEY)
            .and_then(|(b, _)| b)
            .as_deref(),
    );
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
