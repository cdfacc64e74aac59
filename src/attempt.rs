//! How an upstream attempt ended when it did not end with a complete answer.
//!
//! The upstream filter sees an attempt end (`on_done`) without an answer, or with an answer that
//! never finished. What Envoy recorded about it tells the cases apart (seen on Envoy 1.40, in
//! the upstream filter position):
//! - the client went away: `response.code_details` is `downstream_remote_disconnect` and
//!   `response.flags` has `DC` (0x4000). Not the model's fault: counted on its own, no health
//!   change, no retry (nobody is waiting);
//! - the connection to the provider failed: `upstream.transport_failure_reason` is set
//!   (`delayed connect error: Connection refused`). The provider is overloaded or down;
//! - neither, and no answer: a per-try timeout or a reset before the answer's headers;
//! - an answer whose headers arrived but whose body never ended: the provider cut it short
//!   (reset in the middle of a 200). A failure of the model, never retried, since bytes already
//!   went to the client.

use crate::classify::{ErrorClass, Scope, Verdict, WaitHint};

/// Envoy's `DC` response flag (downstream connection termination).
pub const FLAG_DOWNSTREAM_TERMINATION: u64 = 0x4000;

/// What the filter knows when an attempt ends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndFacts<'a> {
    /// `response.flags`.
    pub flags: u64,
    /// `response.code_details`, when set.
    pub code_details: Option<&'a str>,
    /// `upstream.transport_failure_reason`, when set.
    pub transport_failure: Option<&'a str>,
    /// Response headers arrived (and were judged).
    pub answered: bool,
    /// The answer's body reached its end.
    pub complete: bool,
}

/// How an attempt ended, when it did not end with a complete answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The client gave up: not a failure of the model.
    ClientGone,
    /// No connection to the provider.
    ConnectFailure,
    /// Sent, but no answer: a per-try timeout or a reset before the answer's headers.
    NoAnswer,
    /// The answer started and was cut short by the upstream.
    CutShort,
}

impl Ending {
    /// Classifies an attempt's end; `None` when it ended normally (a complete answer).
    pub fn of(facts: &EndFacts) -> Option<Ending> {
        let client_gone = facts.flags & FLAG_DOWNSTREAM_TERMINATION != 0
            || facts
                .code_details
                .is_some_and(|d| d.starts_with("downstream_remote_disconnect"));
        if facts.answered && facts.complete {
            return None;
        }
        if client_gone {
            return Some(Ending::ClientGone);
        }
        if facts.answered {
            return Some(Ending::CutShort);
        }
        if facts.transport_failure.is_some_and(|r| !r.is_empty()) {
            return Some(Ending::ConnectFailure);
        }
        Some(Ending::NoAnswer)
    }

    /// What the ending says about the model: `None` when nothing (the client left).
    pub fn verdict(self) -> Option<Verdict> {
        let (class, reason) = match self {
            Ending::ClientGone => return None,
            Ending::ConnectFailure => (ErrorClass::Overloaded, "connect failure"),
            Ending::NoAnswer => (
                ErrorClass::Timeout,
                "no answer (per-try timeout or reset before headers)",
            ),
            Ending::CutShort => (ErrorClass::Overloaded, "answer cut short by the upstream"),
        };
        Some(Verdict {
            class,
            retry_after_ms: None,
            reason: reason.into(),
            scope: Scope::Model,
            wait_hint: WaitHint::Absent,
        })
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            Ending::ClientGone => "client_gone",
            Ending::ConnectFailure => "connect_failure",
            Ending::NoAnswer => "no_answer",
            Ending::CutShort => "cut_short",
        }
    }
}

/// Reads `response.flags` as Envoy encodes it for proxy-wasm (a little-endian u64).
pub fn flags_from_property(bytes: &[u8]) -> u64 {
    crate::health::le_u64(bytes, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn endings_as_envoy_reports_them() {
        // What Envoy 1.40 reported in the upstream position (see the module documentation).
        let cancel = EndFacts {
            flags: 0x4000,
            code_details: Some("downstream_remote_disconnect"),
            ..EndFacts::default()
        };
        assert_eq!(Ending::of(&cancel), Some(Ending::ClientGone));
        assert_eq!(Ending::ClientGone.verdict(), None);
        let refused = EndFacts {
            transport_failure: Some("delayed connect error: Connection refused"),
            ..EndFacts::default()
        };
        assert_eq!(Ending::of(&refused), Some(Ending::ConnectFailure));
        assert_eq!(
            Ending::ConnectFailure.verdict().map(|v| v.class),
            Some(ErrorClass::Overloaded)
        );
        assert_eq!(
            Ending::of(&EndFacts::default()),
            Some(Ending::NoAnswer),
            "per-try timeout: no flags, no details"
        );
        assert_eq!(
            Ending::NoAnswer.verdict().map(|v| v.class),
            Some(ErrorClass::Timeout)
        );
        let cut = EndFacts {
            code_details: Some("via_upstream"),
            answered: true,
            ..EndFacts::default()
        };
        assert_eq!(Ending::of(&cut), Some(Ending::CutShort));
        let done = EndFacts {
            answered: true,
            complete: true,
            ..cut
        };
        assert_eq!(Ending::of(&done), None);
        // A client that leaves in the middle of a stream is still the client's doing.
        let left_mid_stream = EndFacts {
            flags: 0x4000,
            answered: true,
            ..EndFacts::default()
        };
        assert_eq!(Ending::of(&left_mid_stream), Some(Ending::ClientGone));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn flags_decode_little_endian() {
        assert_eq!(flags_from_property(&[0, 0x40, 0, 0, 0, 0, 0, 0]), 0x4000);
        assert_eq!(flags_from_property(&[1, 2]), 0);
    }
}
