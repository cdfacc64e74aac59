//! Traffic shaping, the pure part: which pool a request draws a slot from, when it waits, what
//! it gets at its class's limit, when the load trigger engages, and when batch work is deferred
//! to an off-peak window. No host calls: the shell keeps the per-worker queue and moves the
//! shared [`ledger`] through compare-and-swap.
//!
//! - [`admit`]: the admission rules (own pool, borrowing from lower classes, waiters first).
//! - [`ledger`]: the shared record of every worker's slots and queue places, with heartbeats.
//! - [`load`]: the load trigger's windows and its hysteresis.
//! - [`offpeak`]: off-peak windows in the operator's time.
//! - [`refuse`]: the answers at a limit (reject, defer) and the explanation headers.

pub mod admit;
pub mod ledger;
pub mod load;
pub mod offpeak;
pub mod refuse;

#[cfg(test)]
mod tests;

use crate::config::shaping::MAX_CLASSES;
use memchr::memmem::Finder;
use std::sync::LazyLock;

/// Pools: one per class, then the long-task pool.
pub const POOLS: usize = MAX_CLASSES + 1;
/// The long-task pool's index.
pub const LONG_POOL: usize = MAX_CLASSES;

/// Which pools a request may draw from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// Its class's pool, or a lower class's idle one.
    Class = 0,
    /// The long-task pool only.
    Long = 1,
}

/// A request as shaping sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ask {
    /// Index into `shaping.classes` (0 is the highest).
    pub class: usize,
    pub lane: Lane,
}

/// Slots held and places queued, per pool and per (lane, class): one worker's, or everyone's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Holdings {
    pub held: [u16; POOLS],
    pub queued: [[u16; MAX_CLASSES]; 2],
}

impl Holdings {
    pub fn add(&mut self, other: &Holdings) {
        for (a, b) in self.held.iter_mut().zip(other.held) {
            *a = a.saturating_add(b);
        }
        for (lane, other_lane) in self.queued.iter_mut().zip(other.queued) {
            for (a, b) in lane.iter_mut().zip(other_lane) {
                *a = a.saturating_add(b);
            }
        }
    }

    /// The queue places of one lane, per class.
    pub fn lane(&self, lane: Lane) -> &[u16; MAX_CLASSES] {
        match lane {
            Lane::Class => &self.queued[0],
            Lane::Long => &self.queued[1],
        }
    }

    fn lane_mut(&mut self, lane: Lane) -> &mut [u16; MAX_CLASSES] {
        match lane {
            Lane::Class => &mut self.queued[0],
            Lane::Long => &mut self.queued[1],
        }
    }

    /// Requests of `ask`'s class waiting in its lane.
    pub fn queued(&self, ask: Ask) -> u16 {
        self.lane(ask.lane).get(ask.class).copied().unwrap_or(0)
    }

    /// Slots held in `pool`.
    pub fn held(&self, pool: usize) -> u16 {
        self.held.get(pool).copied().unwrap_or(0)
    }

    /// One more (`up`) or one fewer slot held in `pool`.
    pub fn change_held(&mut self, pool: usize, up: bool) {
        if let Some(n) = self.held.get_mut(pool) {
            *n = if up {
                n.saturating_add(1)
            } else {
                n.saturating_sub(1)
            };
        }
    }

    /// One more (`up`) or one fewer place queued for `ask`.
    pub fn change_queued(&mut self, ask: Ask, up: bool) {
        if let Some(n) = self.lane_mut(ask.lane).get_mut(ask.class) {
            *n = if up {
                n.saturating_add(1)
            } else {
                n.saturating_sub(1)
            };
        }
    }

    /// Requests of `class` waiting in either lane.
    pub fn queued_class(&self, class: usize) -> u16 {
        [Lane::Class, Lane::Long]
            .iter()
            .map(|l| self.lane(*l).get(class).copied().unwrap_or(0))
            .fold(0, u16::saturating_add)
    }

    /// Requests waiting in every queue.
    pub fn queue_length(&self) -> u32 {
        self.queued.iter().flatten().map(|n| u32::from(*n)).sum()
    }

    pub fn is_empty(&self) -> bool {
        *self == Holdings::default()
    }
}

/// Why a request did not get a slot at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitReason {
    /// No slot, and no room in its queue.
    QueueFull,
    /// Its queue time ran out.
    QueueTimeout,
    /// Outside its class's off-peak window.
    OffPeak,
    /// The load trigger is engaged (off-peak classes wait it out).
    Load,
}

impl LimitReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::QueueFull => "queue_full",
            Self::QueueTimeout => "queue_timeout",
            Self::OffPeak => "off_peak",
            Self::Load => "load",
        }
    }
}

/// Whether a priority value names a class at or below the default class (what a listener that
/// lets clients only lower their priority allows).
pub fn lowers(config: &crate::config::shaping::ShapingConfig, value: &str) -> bool {
    config
        .class_of(value)
        .is_some_and(|class| class >= config.default_index())
}

/// The class of a request: the policy's priority value (the route's metadata, or the client's
/// header as far as the listener trusts it) when it names a class, else the class the operator
/// mapped the request's credential to (`key_sha256`: hex SHA-256 of the header value), else the
/// default class.
pub fn class_for(
    config: &crate::config::shaping::ShapingConfig,
    priority: Option<&str>,
    key_sha256: Option<&str>,
) -> usize {
    priority
        .and_then(|p| config.class_of(p))
        .or_else(|| {
            let key = key_sha256?;
            let mapped = config
                .keys
                .iter()
                .find(|k| k.sha256.eq_ignore_ascii_case(key))?;
            config.class_index(&mapped.class)
        })
        .unwrap_or_else(|| config.default_index())
}

/// Keys that ask for an output size, in the APIs the filter knows: all end in `okens"`, so one
/// pass over the body finds them.
const MAX_TOKEN_KEYS: [&[u8]; 4] = [
    b"\"max_tokens\"",
    b"\"max_completion_tokens\"",
    b"\"max_output_tokens\"",
    b"\"maxOutputTokens\"",
];

/// Whether a request is long (its own pool): its prompt estimated from its size (bytes / 4),
/// a `max_tokens` above the bound, or tools. A scan for the keys, not a parse: a key inside a
/// string is escaped and never matches, and the same key in a nested object can only make its
/// own request long (the largest value counts), so the shortcut errs only against the client
/// that plays with it.
/// `stated`: the body's [`stated_max_tokens`], asked only when needed (the caller may share one
/// scan with budgets).
pub fn is_long(
    config: &crate::config::shaping::LongTasksConfig,
    body: &[u8],
    stated: impl FnOnce() -> Option<u64>,
) -> bool {
    if (body.len() / 4) as u64 > config.prompt_tokens {
        return true;
    }
    if config.tools && TOOLS.find(body).is_some() {
        return true;
    }
    stated().is_some_and(|n| n > config.max_tokens)
}

/// Searchers built once (a `memmem` searcher's set-up is a good part of a search of 1 KB).
static TOOLS: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"tools\""));
static TOKEN_KEY: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"okens\""));

/// The largest output limit a request body states, in any spelling of `max_tokens` (the same
/// key scan as [`is_long`]).
pub fn stated_max_tokens(body: &[u8]) -> Option<u64> {
    TOKEN_KEY
        .find_iter(body)
        .filter_map(|at| {
            let end = at + b"okens\"".len();
            MAX_TOKEN_KEYS.iter().find_map(|key| {
                let start = end.checked_sub(key.len())?;
                (body.get(start..end)? == *key)
                    .then(|| number_after_colon(body.get(end..).unwrap_or_default()))
                    .flatten()
            })
        })
        .max()
}

/// The unsigned integer after `\s*:\s*`, if that is what follows.
fn number_after_colon(rest: &[u8]) -> Option<u64> {
    let mut bytes = rest.iter().skip_while(|b| b.is_ascii_whitespace());
    if bytes.next() != Some(&b':') {
        return None;
    }
    let digits: Vec<u8> = bytes
        .skip_while(|b| b.is_ascii_whitespace())
        .take_while(|b| b.is_ascii_digit())
        .take(20)
        .copied()
        .collect();
    std::str::from_utf8(&digits)
        .ok()?
        .parse()
        .ok()
        .or(if digits.is_empty() {
            None
        } else {
            Some(u64::MAX)
        })
}
