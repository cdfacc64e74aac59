//! Waiting requests: released when a slot frees or their limit lifts, downgraded or answered
//! when their time runs out (root context: timer and queue-ready callback).

use super::super::apply::{apply, HostClock};
use super::super::requests;
use super::arrive::{at_limit, refusal, Arrival};
use super::*;
use crate::config::shaping::AtLimit;
use crate::flow::{route, Effect, Effects};
use crate::shaping::admit::Admit;
use crate::shaping::LimitReason;
use proxy_wasm::types::MapType;

/// What the timer does to one waiting request.
enum Release {
    /// Resume it (with a slot of `pool`, or none when its limit is no longer in force).
    Resume { pool: Option<usize> },
    /// Its time is up.
    TimedOut,
}

/// Releases waiting requests that can go (slots free, limits lifted) and times out the others
/// (the root context's timer and queue-ready callback).
pub(super) fn pump(plugin: &Plugin) {
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
        let _ = write_entry(plugin, me, now, local);
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
            match at_limit(plugin, config, ask, LimitReason::QueueTimeout, now, seed) {
                Arrival::Downgrade(reason) => {
                    let clock = HostClock::default();
                    let cx = plugin.cx(&clock);
                    let cluster = gone
                        .request
                        .as_deref()
                        .and_then(|id| requests::with(id, |r| route::downgrade(&cx, r)))
                        .flatten();
                    let Some(cluster) = cluster else {
                        let out = refusal(plugin, config, ask, AtLimit::Reject, reason, now, seed);
                        answer(plugin, context, out);
                        return;
                    };
                    count(plugin, ask.class, ShapingEvent::Downgraded);
                    treatment.downgraded = Some(reason);
                    resume_with = Some(cluster);
                }
                Arrival::Refused(out) => {
                    answer(plugin, context, out);
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

/// A wake-up from a worker that freed a slot or flipped the load trigger: the trigger's state
/// is read again, and waiting requests are tried.
pub fn woken(plugin: &Plugin, queue_id: u32) {
    while let Ok(Some(_)) = raw::dequeue_shared_queue(queue_id) {}
    if shaping(plugin).is_none() {
        return;
    }
    let engaged = read_ledger().engaged;
    with(|w| w.engaged = engaged);
    pump(plugin);
}
