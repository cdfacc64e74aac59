//! The shared record of shaping: for every live worker VM, the slots it holds and the places it
//! queues, with a heartbeat; and whether the load trigger is engaged. One shared-data key,
//! rewritten with compare-and-swap, so that an admission sees every worker's slots at once (the
//! limit is exact across workers).
//!
//! Each worker writes its whole entry from what it knows it holds (its VM memory is the truth
//! about its own requests), so a lost write heals at the next one. A VM that dies (a trap,
//! `FAIL_RELOAD`) never releases its requests' slots: its heartbeat stops, and the first worker
//! that writes after [`STALE_MS`] drops its entry, taking its slots back once.

use super::{Holdings, POOLS};
use crate::config::shaping::MAX_CLASSES;

/// The shared-data key.
pub const KEY: &str = "llm_fallback.shaping.ledger";
/// A worker entry whose heartbeat is older than this is a dead VM's.
pub const STALE_MS: u64 = 5_000;
/// Worker entries at most (Envoy's `--concurrency` plus the main thread, with room for reloads).
pub const MAX_ENTRIES: usize = 64;

const VERSION: u8 = 1;
const HEADER: usize = 1 + 1 + 8 + 1;
const ENTRY: usize = 4 + 8 + 2 * POOLS + 2 * 2 * MAX_CLASSES;

/// One worker VM's entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Entry {
    pub nonce: u32,
    pub heartbeat_ms: u64,
    pub holdings: Holdings,
}

/// A VM's nonce is random (WASI `random_get`), so that two workers configuring at the same
/// moment never share an entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ledger {
    pub engaged: bool,
    /// When the load trigger last changed state.
    pub changed_ms: u64,
    pub entries: Vec<Entry>,
}

impl Ledger {
    /// The record as stored; a missing or unreadable one is empty.
    pub fn read(bytes: Option<&[u8]>) -> Self {
        bytes.and_then(Self::decode).unwrap_or_default()
    }

    fn decode(b: &[u8]) -> Option<Self> {
        let (&version, rest) = b.split_first()?;
        if version != VERSION || b.len() < HEADER {
            return None;
        }
        let engaged = rest.first() == Some(&1);
        let u32_at = |i: usize| Some(u32::from_le_bytes(b.get(i..i + 4)?.try_into().ok()?));
        let u64_at = |i: usize| Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?));
        let u16_at = |i: usize| Some(u16::from_le_bytes(b.get(i..i + 2)?.try_into().ok()?));
        let count = usize::from(*b.get(HEADER - 1)?);
        if b.len() != HEADER + count * ENTRY {
            return None;
        }
        let mut entries = Vec::with_capacity(count);
        for e in 0..count {
            let at = HEADER + e * ENTRY;
            let mut holdings = Holdings::default();
            for (p, held) in holdings.held.iter_mut().enumerate() {
                *held = u16_at(at + 12 + 2 * p)?;
            }
            for (lane, queued) in holdings.queued.iter_mut().enumerate() {
                for (c, n) in queued.iter_mut().enumerate() {
                    *n = u16_at(at + 12 + 2 * POOLS + 2 * (lane * MAX_CLASSES + c))?;
                }
            }
            entries.push(Entry {
                nonce: u32_at(at)?,
                heartbeat_ms: u64_at(at + 4)?,
                holdings,
            });
        }
        Some(Self {
            engaged,
            changed_ms: u64_at(2)?,
            entries,
        })
    }

    pub fn encode(&self) -> Vec<u8> {
        let entries = self
            .entries
            .get(..self.entries.len().min(MAX_ENTRIES))
            .unwrap_or_default();
        let mut b = Vec::with_capacity(HEADER + entries.len() * ENTRY);
        b.push(VERSION);
        b.push(u8::from(self.engaged));
        b.extend_from_slice(&self.changed_ms.to_le_bytes());
        b.push(entries.len() as u8);
        for e in entries {
            b.extend_from_slice(&e.nonce.to_le_bytes());
            b.extend_from_slice(&e.heartbeat_ms.to_le_bytes());
            for held in e.holdings.held {
                b.extend_from_slice(&held.to_le_bytes());
            }
            for n in e.holdings.queued.iter().flatten() {
                b.extend_from_slice(&n.to_le_bytes());
            }
        }
        b
    }

    /// Drops the entries of dead VMs (heartbeat older than [`STALE_MS`]; never `me`'s) and
    /// returns what they held.
    pub fn reclaim(&mut self, me: u32, now_ms: u64) -> Holdings {
        let mut taken = Holdings::default();
        self.entries.retain(|e| {
            let dead = e.nonce != me && now_ms.saturating_sub(e.heartbeat_ms) > STALE_MS;
            if dead {
                taken.add(&e.holdings);
            }
            !dead
        });
        taken
    }

    /// Writes `me`'s entry (added again if it was dropped), with a fresh heartbeat.
    pub fn put(&mut self, me: u32, now_ms: u64, holdings: Holdings) {
        let entry = Entry {
            nonce: me,
            heartbeat_ms: now_ms,
            holdings,
        };
        let full = self.entries.len() >= MAX_ENTRIES;
        match self.entries.iter_mut().find(|e| e.nonce == me) {
            Some(e) => *e = entry,
            None if !full => self.entries.push(entry),
            None => {}
        }
    }

    /// Everyone's holdings, with `mine` in place of `me`'s entry.
    pub fn totals(&self, me: u32, mine: &Holdings) -> Holdings {
        let mut totals = *mine;
        for e in self.entries.iter().filter(|e| e.nonce != me) {
            totals.add(&e.holdings);
        }
        totals
    }

    /// Nonces of the other workers that have requests waiting.
    pub fn waiting_elsewhere(&self, me: u32) -> impl Iterator<Item = u32> + '_ {
        self.entries
            .iter()
            .filter(move |e| e.nonce != me && e.holdings.queue_length() > 0)
            .map(|e| e.nonce)
    }
}
