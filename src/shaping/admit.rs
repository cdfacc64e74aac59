//! Who gets a slot. A request takes a slot from its class's pool; failing that, from the idle
//! pool of a lower class (borrowing), never from a higher class's. A freed slot goes back to its
//! own class's waiters first, then to the highest class waiting to borrow it: higher classes are
//! never queued behind lower ones, and within a class the queue is first in, first out.

use super::{Ask, Holdings, Lane, LONG_POOL};
use crate::config::shaping::{LimitWhen, ShapingConfig};

/// What a request may do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Take a slot of `pool` (`borrowed`: a lower class's).
    Slot { pool: usize, borrowed: bool },
    /// No limit is in force for it: go, holding nothing.
    Free,
    /// Wait in its queue.
    Queue,
    /// No slot and no room to wait: its class's `at_limit` applies.
    Full,
}

/// The concurrency limit of `pool` now (`None`: unlimited, or not in force).
pub fn pool_limit(config: &ShapingConfig, pool: usize, engaged: bool) -> Option<u32> {
    if pool == LONG_POOL {
        return config.long_tasks.as_ref().map(|l| l.max_concurrency);
    }
    let class = config.classes.get(pool)?;
    match class.limit_when {
        LimitWhen::UnderLoad if !engaged => None,
        _ => class.max_concurrency,
    }
}

/// The most requests of `ask`'s queue (0: it never waits).
pub fn queue_limit(config: &ShapingConfig, ask: Ask) -> u32 {
    match ask.lane {
        Lane::Long => config.long_tasks.as_ref().map_or(0, |l| l.max_queue),
        Lane::Class => config.classes.get(ask.class).map_or(0, |c| c.max_queue),
    }
}

/// How long `ask` may wait in its queue.
pub fn queue_ms(config: &ShapingConfig, ask: Ask) -> u64 {
    match ask.lane {
        Lane::Long => config.long_tasks.as_ref().map_or(0, |l| l.max_queue_ms),
        Lane::Class => config.classes.get(ask.class).map_or(0, |c| c.max_queue_ms),
    }
}

/// A slot for `ask` given everyone's `totals`, if one is free to take. `waiting`: the request
/// is itself in the queue (counted in `totals`), so earlier requests of its class do not hold
/// it back. Its own pool: first in, first out within the class. A lower class's pool: only
/// when nobody of that class waits for it (it is given back first) and nobody of a higher class
/// waits to borrow. The long-task pool: by class, then first in, first out.
pub fn slot(
    config: &ShapingConfig,
    engaged: bool,
    totals: &Holdings,
    ask: Ask,
    waiting: bool,
) -> Option<Admit> {
    let lane = totals.lane(ask.lane);
    let queued = |class: usize| lane.get(class).copied().unwrap_or(0);
    let own_turn = waiting || queued(ask.class) == 0;
    let higher_waiting = lane.iter().take(ask.class).any(|n| *n > 0);
    let free = |pool: usize| {
        pool_limit(config, pool, engaged).is_some_and(|max| u32::from(totals.held(pool)) < max)
    };
    match ask.lane {
        Lane::Long => (own_turn && !higher_waiting && free(LONG_POOL)).then_some(Admit::Slot {
            pool: LONG_POOL,
            borrowed: false,
        }),
        Lane::Class => {
            if !own_turn {
                return None;
            }
            if free(ask.class) {
                return Some(Admit::Slot {
                    pool: ask.class,
                    borrowed: false,
                });
            }
            if higher_waiting {
                return None;
            }
            (ask.class + 1..config.classes.len())
                .find(|&pool| free(pool) && queued(pool) == 0)
                .map(|pool| Admit::Slot {
                    pool,
                    borrowed: true,
                })
        }
    }
}

/// What a request arriving now does.
pub fn arrive(config: &ShapingConfig, engaged: bool, totals: &Holdings, ask: Ask) -> Admit {
    let limited = match ask.lane {
        Lane::Long => config.long_tasks.is_some(),
        Lane::Class => pool_limit(config, ask.class, engaged).is_some(),
    };
    if !limited {
        return Admit::Free;
    }
    if let Some(slot) = slot(config, engaged, totals, ask, false) {
        return slot;
    }
    let room = queue_limit(config, ask);
    let length: u32 = match ask.lane {
        Lane::Long => totals.lane(Lane::Long).iter().map(|n| u32::from(*n)).sum(),
        Lane::Class => u32::from(totals.queued(ask)),
    };
    if length < room {
        Admit::Queue
    } else {
        Admit::Full
    }
}

/// Whether a waiting request may stop waiting without a slot: its class's limit is no longer in
/// force (the load trigger released).
pub fn no_longer_limited(config: &ShapingConfig, engaged: bool, ask: Ask) -> bool {
    ask.lane == Lane::Class && pool_limit(config, ask.class, engaged).is_none()
}
