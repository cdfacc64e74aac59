//! What a client may decide about its own request, and what only the operator decides.
//!
//! Clients send policy headers (`x-llm-priority`, `x-llm-task`, `x-llm-retry-safe`); a client
//! that could name `critical` or a task chain could move its request to another provider or
//! ahead of everyone else. Each listener's filter configuration says how far its clients are
//! trusted (a public listener and an internal one carry different settings), and the operator
//! can set the same policy per route, in the route's metadata
//! (`metadata.filter_metadata.llm_fallback: {priority: critical, task: code}`), which always wins
//! over the client.

use serde::Deserialize;

/// How far a client's priority header is honoured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PriorityTrust {
    /// Ignored.
    None,
    /// A client may lower its own request (`normal`, `batch`), never raise it to `critical`.
    #[default]
    Lower,
    /// Any priority.
    Any,
}

/// How far a client's retry-safety declaration is honoured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SafetyTrust {
    /// A client may declare its own request unsafe, never safe.
    #[default]
    Unsafe,
    /// Both.
    Any,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustConfig {
    #[serde(default)]
    pub priority: PriorityTrust,
    /// Whether the task header may pick a task's chain (default false: a chain can move the
    /// request to another provider).
    #[serde(default)]
    pub task: bool,
    #[serde(default)]
    pub retry_safety: SafetyTrust,
    /// Read the operator's per-route policy from the route's metadata (default true).
    #[serde(default = "yes")]
    pub route_metadata: bool,
}

fn yes() -> bool {
    true
}

impl Default for TrustConfig {
    fn default() -> Self {
        Self {
            priority: PriorityTrust::default(),
            task: false,
            retry_safety: SafetyTrust::default(),
            route_metadata: true,
        }
    }
}

/// Policy values, as a client sent them or as the route's metadata sets them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    pub priority: Option<String>,
    pub task: Option<String>,
    pub retry_safety: Option<String>,
}

/// The policy a request is handled with, and which client values were not honoured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decided {
    pub policy: Policy,
    /// Names of the client headers' values that were ignored (`priority`, `task`,
    /// `retry_safety`), for the log line.
    pub ignored: Vec<&'static str>,
}

impl TrustConfig {
    /// The route's values win; the client's count only as far as this listener trusts them.
    /// `lower(value)`: whether a priority value lowers the request (or keeps its default), the
    /// most a `lower` listener allows: `normal`/`batch`, or with traffic shaping a class at or
    /// below the default class.
    pub fn decide(&self, client: Policy, route: Policy, lower: &dyn Fn(&str) -> bool) -> Decided {
        let mut ignored = Vec::new();
        let priority = route.priority.or_else(|| {
            let asked = client.priority?;
            let allowed = match self.priority {
                PriorityTrust::None => false,
                PriorityTrust::Lower => lower(asked.trim()),
                PriorityTrust::Any => true,
            };
            if allowed {
                Some(asked)
            } else {
                ignored.push("priority");
                None
            }
        });
        let task = route.task.or_else(|| {
            let asked = client.task?;
            if self.task {
                Some(asked)
            } else {
                ignored.push("task");
                None
            }
        });
        let retry_safety = route.retry_safety.or_else(|| {
            let asked = client.retry_safety?;
            let allowed = match self.retry_safety {
                SafetyTrust::Unsafe => {
                    let v = asked.trim();
                    v.eq_ignore_ascii_case("unsafe") || v.eq_ignore_ascii_case("false")
                }
                SafetyTrust::Any => true,
            };
            if allowed {
                Some(asked)
            } else {
                ignored.push("retry_safety");
                None
            }
        });
        Decided {
            policy: Policy {
                priority,
                task,
                retry_safety,
            },
            ignored,
        }
    }
}

/// Reads the policy out of route metadata as the host hands a `Struct` of strings to
/// proxy-wasm (a serialized map, see [`crate::abi`]). Unknown keys are ignored; anything
/// malformed reads as no policy.
pub fn policy_from_pairs(bytes: &[u8]) -> Policy {
    let mut policy = Policy::default();
    for (key, value) in crate::abi::decode_map(bytes).unwrap_or_default() {
        let Ok(value) = std::str::from_utf8(value) else {
            continue;
        };
        let value = Some(value.to_owned());
        match key {
            b"priority" => policy.priority = value,
            b"task" => policy.task = value,
            b"retry_safety" => policy.retry_safety = value,
            _ => {}
        }
    }
    policy
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    /// What a `lower` listener allows without traffic shaping.
    fn lower(v: &str) -> bool {
        v.eq_ignore_ascii_case("normal") || v.eq_ignore_ascii_case("batch")
    }

    fn client(priority: &str, task: &str, safety: &str) -> Policy {
        let some = |v: &str| (!v.is_empty()).then(|| v.to_owned());
        Policy {
            priority: some(priority),
            task: some(task),
            retry_safety: some(safety),
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn clients_are_trusted_only_as_far_as_the_listener_says() {
        let default = TrustConfig::default();
        let d = default.decide(
            client("critical", "code", "safe"),
            Policy::default(),
            &lower,
        );
        assert_eq!(d.policy, Policy::default());
        assert_eq!(d.ignored, ["priority", "task", "retry_safety"]);
        let d = default.decide(client("batch", "", "unsafe"), Policy::default(), &lower);
        assert_eq!(d.policy, client("batch", "", "unsafe"));
        assert!(d.ignored.is_empty());
        let open = TrustConfig {
            priority: PriorityTrust::Any,
            task: true,
            retry_safety: SafetyTrust::Any,
            route_metadata: true,
        };
        let d = open.decide(
            client("critical", "code", "safe"),
            Policy::default(),
            &lower,
        );
        assert_eq!(d.policy, client("critical", "code", "safe"));
        let none = TrustConfig {
            priority: PriorityTrust::None,
            ..default
        };
        assert_eq!(
            none.decide(client("batch", "", ""), Policy::default(), &lower)
                .policy
                .priority,
            None
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn the_route_wins() {
        let d = TrustConfig::default().decide(
            client("batch", "quick", ""),
            client("critical", "code", "safe"),
            &lower,
        );
        assert_eq!(d.policy, client("critical", "code", "safe"));
        assert!(d.ignored.is_empty());
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn route_metadata_as_the_host_serializes_it() {
        // What Envoy 1.40 returned for {priority: critical, task: code}.
        let bytes = [
            2, 0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, b'p', b'r', b'i', b'o',
            b'r', b'i', b't', b'y', 0, b'c', b'r', b'i', b't', b'i', b'c', b'a', b'l', 0, b't',
            b'a', b's', b'k', 0, b'c', b'o', b'd', b'e', 0,
        ];
        assert_eq!(policy_from_pairs(&bytes), client("critical", "code", ""));
        assert_eq!(policy_from_pairs(&bytes[..30]), Policy::default());
        assert_eq!(policy_from_pairs(b""), Policy::default());
        assert_eq!(policy_from_pairs(&[255, 255, 255, 255]), Policy::default());
    }
}
