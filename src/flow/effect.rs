//! What the request flow asks the shell to do: values, applied in order by the shell.

use crate::stats::Counter;

/// Headers of a local reply.
pub type ReplyHeaders = Vec<(&'static str, String)>;

/// One thing the shell must do for the flow. Header effects apply to the map of the phase the
/// flow was called in (request headers before routing, response headers after an answer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Sets (replaces) a header.
    SetHeader(&'static str, String),
    /// Removes a header (names from the configuration are owned).
    RemoveHeader(String),
    /// Answers the request locally instead of forwarding it (nothing reaches an upstream).
    LocalReply {
        status: u16,
        headers: ReplyHeaders,
        body: String,
    },
    /// Adds to a counter (folded into the Envoy stats by the shell's timer).
    Count(Counter, u64),
    /// Names the cluster the router's next attempt goes to (filter state read by the route's
    /// matcher cluster specifier; `fallback.providers.switch: in_request`). `replacing` is the
    /// name it replaces (`None`: nothing named yet): what the route still holds if the host
    /// cannot write the new one (see [`crate::flow::attempt::not_named`]).
    RouteNext {
        cluster: String,
        replacing: Option<String>,
    },
}

/// The effects of one flow step, in order.
#[must_use]
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Effects(Vec<Effect>);

impl Effects {
    pub fn set_header(&mut self, name: &'static str, value: impl Into<String>) {
        self.0.push(Effect::SetHeader(name, value.into()));
    }

    pub fn remove_header(&mut self, name: impl Into<String>) {
        self.0.push(Effect::RemoveHeader(name.into()));
    }

    pub fn count(&mut self, counter: Counter) {
        self.0.push(Effect::Count(counter, 1));
    }

    pub fn add(&mut self, counter: Counter, delta: u64) {
        if delta > 0 {
            self.0.push(Effect::Count(counter, delta));
        }
    }

    pub fn route_next(&mut self, cluster: impl Into<String>, replacing: Option<String>) {
        self.0.push(Effect::RouteNext {
            cluster: cluster.into(),
            replacing,
        });
    }

    pub fn reply(&mut self, status: u16, headers: ReplyHeaders, body: String) {
        self.0.push(Effect::LocalReply {
            status,
            headers,
            body,
        });
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The effects, for the shell to apply.
    pub fn into_vec(self) -> Vec<Effect> {
        self.0
    }

    pub fn iter(&self) -> impl Iterator<Item = &Effect> {
        self.0.iter()
    }

    /// The last value set for `name`, if it is set and not removed afterwards (for tests and
    /// logs).
    pub fn header(&self, name: &str) -> Option<&str> {
        let mut value = None;
        for effect in &self.0 {
            match effect {
                Effect::SetHeader(n, v) if n.eq_ignore_ascii_case(name) => value = Some(v.as_str()),
                Effect::RemoveHeader(n) if n.eq_ignore_ascii_case(name) => value = None,
                _ => {}
            }
        }
        value
    }

    /// Whether `name` is removed (and not set again after).
    pub fn removes(&self, name: &str) -> bool {
        let mut removed = false;
        for effect in &self.0 {
            match effect {
                Effect::SetHeader(n, _) if n.eq_ignore_ascii_case(name) => removed = false,
                Effect::RemoveHeader(n) if n.eq_ignore_ascii_case(name) => removed = true,
                _ => {}
            }
        }
        removed
    }

    /// How much `counter` was added.
    pub fn counted(&self, counter: Counter) -> u64 {
        self.0
            .iter()
            .map(|e| match e {
                Effect::Count(c, n) if *c == counter => *n,
                _ => 0,
            })
            .sum()
    }

    /// The cluster the next attempt was sent to last, if any.
    pub fn routed_next(&self) -> Option<&str> {
        self.0.iter().rev().find_map(|e| match e {
            Effect::RouteNext { cluster, .. } => Some(cluster.as_str()),
            _ => None,
        })
    }

    /// A header of the local reply, if the flow answered itself (for tests and logs).
    pub fn reply_header(&self, name: &str) -> Option<&str> {
        let (_, headers, _) = self.local_reply()?;
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The local reply, if the flow answered itself.
    pub fn local_reply(&self) -> Option<(u16, &ReplyHeaders, &str)> {
        self.0.iter().find_map(|e| match e {
            Effect::LocalReply {
                status,
                headers,
                body,
            } => Some((*status, headers, body.as_str())),
            _ => None,
        })
    }
}
