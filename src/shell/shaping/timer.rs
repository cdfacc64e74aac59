//! The timer (heartbeat, load trigger, gauges, queue) and what the filters observe for the
//! load trigger.

use super::queue::pump;
use super::*;

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
    let Some(book) = write_entry(plugin, me, now, local) else {
        return;
    };
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

/// Counts an upstream answer of the load trigger's model (upstream filter; VM memory only).
pub fn observe_attempt(plugin: &Plugin, model: Option<&str>, status: u16) {
    let Some(load_config) = shaping(plugin).and_then(|s| s.load.as_ref()) else {
        return;
    };
    if model != Some(load_config.model.as_str()) {
        return;
    }
    // Windows of seconds: the time of the last callback or tick is close enough.
    let now = super::super::apply::coarse_now_ms();
    with(|w| w.window.record(load_config, now, status));
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
    let now = super::super::apply::coarse_now_ms();
    with(|w| w.window.record_time(load_config, now, time_ms));
}
