//! A request read and routed: off-peak deferral, a slot, a queue place, or its class's answer
//! at the limit; and what its end gives back.

use super::*;
use crate::config::shaping::{AtLimit, LimitWhen};
use crate::flow::Effects;
use crate::shaping::admit::Admit;
use crate::shaping::offpeak::Schedule;
use crate::shaping::refuse::{self, Refusal};
use crate::shaping::LimitReason;

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

/// The class's answer at its limit, counted (a downgrade is counted where it is made: it may
/// find no lower tier and be rejected instead).
pub(super) fn at_limit(
    plugin: &Plugin,
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
    Arrival::Refused(refusal(plugin, config, ask, action, reason, now, seed))
}

/// The local answer refusing a request (`Reject` or `Defer`), counted.
pub(super) fn refusal(
    plugin: &Plugin,
    config: &ShapingConfig,
    ask: Ask,
    action: AtLimit,
    reason: LimitReason,
    now: u64,
    seed: &str,
) -> Effects {
    let event = if action == AtLimit::Defer {
        ShapingEvent::Deferred
    } else {
        ShapingEvent::Rejected
    };
    count(plugin, ask.class, event);
    let refusal = Refusal {
        action,
        reason,
        retry_after_ms: refuse::retry_after_ms(config, ask, action, reason, now, seed),
    };
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
                let out = refusal(plugin, config, ask, AtLimit::Defer, reason, now, seed);
                return Arrival::Refused(out);
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
            at_limit(plugin, config, ask, reason, now, seed)
        }
    }
}

/// The rejection of a request whose downgrade found no lower tier.
pub fn rejection(plugin: &Plugin, ask: Ask, reason: LimitReason, seed: &str) -> Effects {
    let Some(config) = shaping(plugin) else {
        return Effects::default();
    };
    let now = host::now_unix_ms();
    refusal(plugin, config, ask, AtLimit::Reject, reason, now, seed)
}

/// Records a downgrade the client filter made at arrival (it rewrote the chain).
pub fn downgraded(plugin: &Plugin, context: u32, class: usize, reason: LimitReason) {
    count(plugin, class, ShapingEvent::Downgraded);
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
    if let Some(book) = write_entry(plugin, me, host::now_unix_ms(), local) {
        if freed.is_some() {
            wake(&book, me);
        }
    }
}
