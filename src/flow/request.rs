//! What every attempt of one request knows about it, and the bounded per-worker store of it.
//!
//! All attempts of a request run on the worker that owns the downstream stream, and both filter
//! positions run in the same VM, so this state lives in VM memory, keyed by the id the client
//! filter minted for the stream: no shared-data key per request (shared data has no delete). The
//! store is bounded in entries and in bytes, so that a missed removal or a burst of large
//! requests never grows memory without bound: past the byte bound the kept request bodies of the
//! oldest entries go first (they only speed up choosing a fallback), then whole entries.

use crate::classify::ErrorClass;
use crate::inflate::Encoding;
use crate::plan::{Features, Priority};
use std::collections::{HashMap, VecDeque};

/// Entries kept at most per worker; the oldest go first.
pub const MAX_REQUESTS: usize = 16_384;
/// Bytes of kept request bodies at most per worker.
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// Whether a request may be sent twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Safety {
    /// Re-sending cannot act twice: every failure another attempt can help is retried.
    Safe,
    /// The request may act: it is re-sent only after an answer that proves it was rejected
    /// before any processing (`proven_rejection`, about the last attempt only).
    Unsafe { proven_rejection: bool },
}

impl Safety {
    pub fn is_unsafe(self) -> bool {
        matches!(self, Self::Unsafe { .. })
    }

    /// A new attempt, or a success: an earlier attempt's proof says nothing any more.
    pub fn forget_proof(&mut self) {
        if let Self::Unsafe { proven_rejection } = self {
            *proven_rejection = false;
        }
    }

    /// The last attempt's answer proved the request was rejected unprocessed.
    pub fn proven_rejection(self) -> bool {
        matches!(
            self,
            Self::Unsafe {
                proven_rejection: true
            }
        )
    }
}

/// Why another model than the requested one took a request's first attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StandInKind {
    /// A canary (`fallback.canaries`) took the request's conversation.
    Canary,
    /// A share of safe traffic keeps the chain's fallbacks known-good (`fallback.backup_share`).
    Backup,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandIn {
    pub model: String,
    pub kind: StandInKind,
}

impl StandIn {
    /// The header that names it on the final answer.
    pub fn header(&self) -> &'static str {
        match self.kind {
            StandInKind::Canary => "x-llm-canary",
            StandInKind::Backup => "x-llm-backup",
        }
    }
}

/// What the attempts of one request know about it.
#[derive(Debug, Clone)]
pub struct Request {
    /// The model the client asked for.
    pub requested: String,
    pub task: Option<String>,
    pub priority: Priority,
    /// The cluster of the latest attempt (at first, the one the client filter routed to).
    pub cluster: String,
    /// The cluster last named for the router's next attempt (filter state), if any. Every
    /// retry's cluster is named: the routing header is gone after the first attempt (no
    /// provider sees it), so a route that picks the cluster again on retry reads only this.
    pub named_cluster: Option<String>,
    /// Where the router sent retries before the latest judgement named another cluster, when
    /// that judgement had no answer to judge: it ran when Envoy ended the attempt, which may
    /// come after the router has picked the retry's cluster. A retry that lands there raced
    /// the judgement; anywhere else, the route ignored what was named.
    pub early_pick: Option<String>,
    /// The model the next attempt must ask.
    pub next: String,
    /// Models asked so far, in order.
    pub tried: Vec<String>,
    /// Attempts begun so far (the router's, planned by the upstream filter), counting one whose
    /// body is not read yet; numbers them (1 for the first).
    pub attempts: usize,
    /// The model that answered with a success last.
    pub served: Option<String>,
    /// The class that caused the first switch away from the requested model.
    pub fallback_reason: Option<ErrorClass>,
    /// Routed to a lower tier by traffic shaping (`at_limit: downgrade`), not by a failure.
    pub downgraded: bool,
    /// The model that stood in for the requested one on the first attempt (a canary, or a
    /// fallback kept known-good), if any: its chain starts with it, then the requested model.
    pub stand_in: Option<StandIn>,
    /// An attempt's body was rewritten (its content-length changed): every later attempt sends
    /// its own body and length, even one that asks the requested model.
    pub rewritten: bool,
    /// Whether the first attempt is the probe of a half-open circuit.
    pub probe: bool,
    /// Read lazily, at most once, when a fallback is chosen.
    pub features: Option<Features>,
    /// The request body as the client sent it (decoded), kept only when the chain has a
    /// fallback, so that a failure can be matched against fallbacks' capabilities.
    pub body: Option<Vec<u8>>,
    /// Set when the upstream asked for a wait the caller should honour (batch requests).
    pub retry_after_ms: Option<u64>,
    /// The first model chosen, when its health record was clean at that moment: its success
    /// then needs no shared-data read.
    pub first_clean: Option<String>,
    pub safety: Safety,
    /// The client sent the body compressed: every attempt inflates it and sends it plain (the
    /// router replays the original bytes, while header changes carry over between attempts).
    pub body_encoding: Encoding,
    /// Its key, times, use and budget reservations (usage accounting).
    pub metered: crate::meter::Metered,
}

impl Request {
    /// A request routed to `first` on `cluster`, nothing tried yet.
    pub fn new(requested: &str, first: &str, cluster: &str) -> Self {
        Self {
            requested: requested.to_owned(),
            task: None,
            priority: Priority::Normal,
            cluster: cluster.to_owned(),
            named_cluster: None,
            early_pick: None,
            next: first.to_owned(),
            tried: Vec::new(),
            attempts: 0,
            served: None,
            fallback_reason: None,
            downgraded: false,
            stand_in: None,
            rewritten: false,
            probe: false,
            features: None,
            body: None,
            retry_after_ms: None,
            first_clean: None,
            safety: Safety::Safe,
            body_encoding: Encoding::Identity,
            metered: crate::meter::Metered::default(),
        }
    }

    /// A new attempt starts on `self.next`: recorded as tried, and an earlier attempt's proven
    /// rejection says nothing about it.
    pub fn start_attempt(&mut self) -> &str {
        self.tried.push(self.next.clone());
        self.safety.forget_proof();
        &self.next
    }

    /// The cluster of the model the next attempt asks (the latest attempt's, for a model the
    /// configuration does not know).
    pub fn next_cluster<'a>(&'a self, config: &'a crate::config::Config) -> &'a str {
        config
            .model(&self.next)
            .map_or(self.cluster.as_str(), |m| config.cluster_of(m))
    }

    /// The request's chain: the stand-in first (if any), then the requested model's chain
    /// without it, so that a failing stand-in falls back to the model it stood in for.
    pub fn chain<'a>(
        &self,
        config: &'a crate::config::Config,
    ) -> Vec<&'a crate::config::ModelConfig> {
        let mut chain = crate::plan::chain(config, &self.requested, self.task.as_deref());
        if let Some(stand_in) = &self.stand_in {
            chain.retain(|m| m.name != stand_in.model);
            if let Some(model) = config.model(&stand_in.model) {
                chain.insert(0, model);
            }
        }
        chain
    }

    /// The model the client is told served (or was asked last).
    pub fn model_shown(&self) -> &str {
        self.served
            .as_deref()
            .or(self.tried.last().map(String::as_str))
            .unwrap_or(&self.next)
    }

    fn body_bytes(&self) -> usize {
        self.body.as_ref().map_or(0, Vec::capacity)
    }
}

/// The requests in flight on one worker, bounded in entries and in kept body bytes.
#[derive(Debug, Default)]
pub struct RequestStore {
    map: HashMap<String, Request>,
    /// Insertion order, for eviction; ids of removed requests linger until compaction.
    order: VecDeque<String>,
    body_bytes: usize,
}

impl RequestStore {
    /// Keeps a new request. An id is never reused, so a live entry is never overwritten: an
    /// insert for an id already present is refused.
    pub fn insert(&mut self, id: &str, mut request: Request) -> bool {
        if self.map.contains_key(id) {
            log::warn!("request state {id} exists already: not overwritten");
            return false;
        }
        if self.map.len() >= MAX_REQUESTS {
            while let Some(old) = self.order.pop_front() {
                if let Some(gone) = self.map.remove(&old) {
                    self.body_bytes = self.body_bytes.saturating_sub(gone.body_bytes());
                    break;
                }
            }
        }
        if request.body_bytes() > MAX_BODY_BYTES / 4 {
            request.body = None;
        }
        // Oldest bodies go first until the new one fits.
        let mut cursor = 0;
        while self.body_bytes + request.body_bytes() > MAX_BODY_BYTES {
            let Some(old) = self.order.get(cursor) else {
                request.body = None;
                break;
            };
            cursor += 1;
            if let Some(entry) = self.map.get_mut(old) {
                self.body_bytes = self.body_bytes.saturating_sub(entry.body_bytes());
                entry.body = None;
            }
        }
        self.body_bytes += request.body_bytes();
        self.map.insert(id.to_owned(), request);
        self.order.push_back(id.to_owned());
        true
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut Request> {
        self.map.get_mut(id)
    }

    pub fn get(&self, id: &str) -> Option<&Request> {
        self.map.get(id)
    }

    pub fn remove(&mut self, id: &str) -> Option<Request> {
        let request = self.map.remove(id)?;
        self.body_bytes = self.body_bytes.saturating_sub(request.body_bytes());
        // Ids stay in `order` until it is compacted (a scan per removal would cost O(n) with
        // many requests in flight); eviction skips ids that are gone.
        if self.order.len() > 2 * self.map.len() + 64 {
            let map = &self.map;
            self.order.retain(|k| map.contains_key(k));
        }
        Some(request)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Bytes of request bodies kept.
    pub fn body_bytes(&self) -> usize {
        self.body_bytes
    }

    /// Entries in the eviction order (removed ids included until compaction).
    pub fn order_len(&self) -> usize {
        self.order.len()
    }
}
