//! The only place where the flow's effects become host calls, and the clock the flow reads.

use super::{host, Plugin};
use crate::flow::{Clock, Effect, Effects};
use proxy_wasm::types::MapType;
use std::cell::Cell;

thread_local! {
    /// The last wall-clock time any callback or timer read: the coarse clock.
    static LAST_NOW: Cell<u64> = const { Cell::new(0) };
}

/// The host clock, read at most once per `HostClock` (one is made for each flow decision) and
/// only when that decision asks for it: a healthy request reads none.
#[derive(Default)]
pub struct HostClock(Cell<Option<u64>>);

impl Clock for HostClock {
    fn now_ms(&self) -> u64 {
        if let Some(now) = self.0.get() {
            return now;
        }
        let now = host::now_unix_ms();
        self.0.set(Some(now));
        LAST_NOW.with(|last| last.set(now));
        now
    }

    fn coarse_ms(&self) -> u64 {
        match (self.0.get(), LAST_NOW.with(Cell::get)) {
            (Some(now), _) => now,
            (None, 0) => self.now_ms(),
            (None, last) => last,
        }
    }
}

/// A recent time (at most a timer period old), read from the host only when none is known.
pub fn coarse_now_ms() -> u64 {
    HostClock::default().coarse_ms()
}

/// Records a time read outside a callback's clock (the timer's).
pub fn saw_time(now_ms: u64) {
    LAST_NOW.with(|last| last.set(now_ms));
}

/// What applying one step's effects came to, beyond the effects themselves.
#[derive(Debug, Default)]
pub struct Applied {
    /// One effect was a local reply (the stream then belongs to that reply: its callbacks
    /// must not be paused again).
    pub replied: bool,
    /// The next attempt's cluster could not be named: the name the route still holds
    /// (`Some(None)`: nothing named). The request's state must be told
    /// ([`crate::flow::attempt::not_named`]).
    pub unnamed: Option<Option<String>>,
}

/// Applies `effects` in order; header effects go to `map`.
pub fn apply(plugin: &Plugin, map: MapType, effects: Effects) -> Applied {
    let mut applied = Applied::default();
    for effect in effects.into_vec() {
        match effect {
            Effect::SetHeader(name, value) => host::set_header(map, name, &value),
            Effect::RemoveHeader(name) => host::remove_header(map, &name),
            Effect::Count(counter, delta) => plugin.metrics.add(counter, delta),
            Effect::RouteNext { cluster, replacing } => {
                let key = &plugin.config.fallback.providers.filter_state_key;
                if host::set_property(key, cluster.as_bytes()) {
                    applied.unnamed = None;
                } else {
                    // After an earlier failure in this step, what the route holds is older.
                    let kept = applied.unnamed.get_or_insert(replacing);
                    log::warn!(
                        "could not name cluster {cluster} for the next attempt: it goes to {}",
                        kept.as_deref().unwrap_or("the route's default")
                    );
                }
            }
            Effect::LocalReply {
                status,
                headers,
                body,
            } => {
                let headers: Vec<(&str, &str)> =
                    headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
                applied.replied |= host::send_response(u32::from(status), headers, body.as_bytes());
            }
        }
    }
    applied
}
