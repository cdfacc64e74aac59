//! What the upstream filter does with an answer: read its head once, then hold, observe or
//! judge it; and, for a held stream start or JSON body, when to let it go.

use super::attempt::{RETRY_AFTER_MARKER, RETRY_MARKER};
use crate::config::{JsonBodyConfig, StreamStartConfig};
use crate::inflate::Encoding;

/// The answer's headers, as far as the decisions go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub status: u16,
    pub kind: Kind,
    pub encoding: Encoding,
    /// The upstream sent a retry marker of its own (only this filter may set them).
    pub markers: bool,
}

/// What the content is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    EventStream,
    Json,
    Other,
}

impl Head {
    /// Reads the head from the answer's header pairs (names lowercase, as Envoy gives them).
    pub fn read<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Self {
        let mut head = Self {
            status: 0,
            kind: Kind::Other,
            encoding: Encoding::Identity,
            markers: false,
        };
        let mut encoding = None;
        for (name, value) in pairs {
            match name {
                ":status" => {
                    head.status = std::str::from_utf8(value)
                        .ok()
                        .and_then(|s| s.trim().parse().ok())
                        .unwrap_or(0);
                }
                "content-type" => {
                    let value = value.to_ascii_lowercase();
                    head.kind = if value.starts_with(b"text/event-stream") {
                        Kind::EventStream
                    } else if value.starts_with(b"application/json") {
                        Kind::Json
                    } else {
                        Kind::Other
                    };
                }
                "content-encoding" => encoding = Some(value),
                RETRY_MARKER | RETRY_AFTER_MARKER => head.markers = true,
                _ => {}
            }
        }
        head.encoding = Encoding::of_header(encoding);
        head
    }

    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// What to do with an answer at its headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// A success with nothing after the headers: done.
    Succeeded,
    /// A 200 event stream: hold its headers until the first event shows how it started.
    HoldStreamStart,
    /// A 200 JSON answer: hold its headers while its body is read whole, if it is short (an
    /// error inside it is judged like an error answer).
    HoldJsonBody,
    /// A success, observed as it flows: an event stream (errors, usage), JSON (usage), or
    /// nothing readable.
    Observe(Kind),
    /// An error answer without a body: judge it now.
    JudgeNow,
    /// An error answer: hold its headers while its body is read up to the cap.
    HoldError,
}

/// How answers may be held: a 200 event stream's start, a 200 JSON body.
#[derive(Debug, Clone, Copy)]
pub struct Holds<'a> {
    pub stream_start: &'a StreamStartConfig,
    pub json_body: &'a JsonBodyConfig,
}

/// The plan for an answer. `attempt_known` says the attempt asks a configured model: only then
/// is a 200 held (a stream's start, a short JSON body), since only then can an error inside be
/// retried elsewhere. Anything else passes unread: an unlisted model's answer, and a read of a
/// resource (a `GET` of a batch, a fine-tuning job or a task, whose `status: failed` and `error`
/// describe that resource, not this request).
pub fn plan(head: &Head, end_of_stream: bool, holds: Holds<'_>, attempt_known: bool) -> Plan {
    match (head.is_success(), end_of_stream) {
        (true, true) => Plan::Succeeded,
        (false, true) => Plan::JudgeNow,
        (false, false) => Plan::HoldError,
        (true, false) => {
            let readable = head.encoding.readable();
            match head.kind {
                Kind::EventStream if holds.stream_start.enabled && attempt_known && readable => {
                    Plan::HoldStreamStart
                }
                Kind::Json if holds.json_body.enabled && attempt_known && readable => {
                    Plan::HoldJsonBody
                }
                kind if readable => Plan::Observe(kind),
                _ => Plan::Observe(Kind::Other),
            }
        }
    }
}

/// What a held stream start has shown so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartSeen {
    /// The timer already released the headers.
    pub released: bool,
    /// The first content event was an error (and one was completed in this chunk).
    pub opened_with_error: bool,
    /// Content events (not a prelude) seen.
    pub started: bool,
    /// Bytes held so far reached the hold's limit.
    pub full: bool,
    /// The stream ended.
    pub end: bool,
}

/// The next step of a held stream start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartStep {
    /// Keep holding: nothing but a prelude yet.
    Hold,
    /// Let it go as an ordinary stream (content came first, the hold ran out, or the timer
    /// released it); errors after this point are errors inside the stream.
    Release,
    /// It opened with an error: judge it like an error answer (the client has seen nothing).
    JudgeOpeningError,
}

pub fn start_step(seen: StartSeen) -> StartStep {
    if seen.released {
        StartStep::Release
    } else if seen.opened_with_error {
        StartStep::JudgeOpeningError
    } else if seen.started || seen.full || seen.end {
        StartStep::Release
    } else {
        StartStep::Hold
    }
}

/// What a held JSON body has shown so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodySeen {
    /// The timer already let the headers go.
    pub released: bool,
    /// Bytes buffered so far.
    pub held: usize,
    /// The body ended.
    pub end: bool,
}

/// The next step of a held JSON body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyStep {
    /// Keep holding: short so far, not ended.
    Hold,
    /// Let it go as a success, observed for usage: longer than an error body, or the timer
    /// let its headers go.
    Release,
    /// Whole and short: judge it (a success unless an error is inside).
    Judge,
}

pub fn body_step(seen: BodySeen, max_bytes: usize) -> BodyStep {
    if seen.released || seen.held > max_bytes {
        BodyStep::Release
    } else if seen.end {
        BodyStep::Judge
    } else {
        BodyStep::Hold
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn head(pairs: &[(&str, &str)]) -> Head {
        Head::read(pairs.iter().map(|(k, v)| (*k, v.as_bytes())))
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn the_head_says_status_kind_encoding_and_foreign_markers() {
        let h = head(&[
            (":status", "200"),
            ("content-type", "Text/Event-Stream; charset=utf-8"),
            ("content-encoding", "gzip"),
        ]);
        assert_eq!(
            (h.status, h.kind, h.encoding, h.markers),
            (200, Kind::EventStream, Encoding::Gzip, false)
        );
        let h = head(&[(":status", "429"), ("x-llm-retry", "true")]);
        assert!(h.markers && !h.is_success());
        assert_eq!(head(&[(":status", "abc")]).status, 0);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn answers_are_held_observed_or_judged_by_what_they_are() {
        let (stream, json) = (StreamStartConfig::default(), JsonBodyConfig::default());
        let hold = Holds {
            stream_start: &stream,
            json_body: &json,
        };
        let ok_stream = head(&[(":status", "200"), ("content-type", "text/event-stream")]);
        assert_eq!(plan(&ok_stream, false, hold, true), Plan::HoldStreamStart);
        assert_eq!(
            plan(&ok_stream, false, hold, false),
            Plan::Observe(Kind::EventStream)
        );
        let stream_off = StreamStartConfig {
            enabled: false,
            ..stream
        };
        let json_off = JsonBodyConfig {
            enabled: false,
            ..json
        };
        let off = Holds {
            stream_start: &stream_off,
            json_body: &json_off,
        };
        assert_eq!(
            plan(&ok_stream, false, off, true),
            Plan::Observe(Kind::EventStream)
        );
        let ok_json = head(&[(":status", "200"), ("content-type", "application/json")]);
        assert_eq!(plan(&ok_json, false, hold, true), Plan::HoldJsonBody);
        assert_eq!(
            plan(&ok_json, false, hold, false),
            Plan::Observe(Kind::Json)
        );
        assert_eq!(plan(&ok_json, false, off, true), Plan::Observe(Kind::Json));
        assert_eq!(plan(&ok_json, true, hold, true), Plan::Succeeded);
        let brotli = head(&[
            (":status", "200"),
            ("content-type", "application/json"),
            ("content-encoding", "br"),
        ]);
        assert_eq!(plan(&brotli, false, hold, true), Plan::Observe(Kind::Other));
        let error = head(&[(":status", "503")]);
        assert_eq!(plan(&error, false, hold, true), Plan::HoldError);
        assert_eq!(plan(&error, true, hold, true), Plan::JudgeNow);
        assert_eq!(
            plan(&head(&[(":status", "204")]), true, hold, true),
            Plan::Succeeded
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_json_body_is_judged_only_when_it_ends_short_and_still_held() {
        let seen = BodySeen {
            released: false,
            held: 100,
            end: false,
        };
        assert_eq!(body_step(seen, 4096), BodyStep::Hold);
        assert_eq!(
            body_step(BodySeen { end: true, ..seen }, 4096),
            BodyStep::Judge
        );
        assert_eq!(
            body_step(
                BodySeen {
                    end: true,
                    held: 4096,
                    ..seen
                },
                4096
            ),
            BodyStep::Judge
        );
        // A body past the bound is an answer, not an error envelope: let go before it ends.
        assert_eq!(
            body_step(BodySeen { held: 4097, ..seen }, 4096),
            BodyStep::Release
        );
        // Headers the timer let go cannot be retried: the rest is observed.
        assert_eq!(
            body_step(
                BodySeen {
                    released: true,
                    end: true,
                    ..seen
                },
                4096
            ),
            BodyStep::Release
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_stream_start_is_held_until_it_shows_how_it_began() {
        let seen = StartSeen {
            released: false,
            opened_with_error: false,
            started: false,
            full: false,
            end: false,
        };
        assert_eq!(start_step(seen), StartStep::Hold);
        assert_eq!(
            start_step(StartSeen {
                started: true,
                ..seen
            }),
            StartStep::Release
        );
        assert_eq!(
            start_step(StartSeen { full: true, ..seen }),
            StartStep::Release
        );
        assert_eq!(
            start_step(StartSeen { end: true, ..seen }),
            StartStep::Release
        );
        assert_eq!(
            start_step(StartSeen {
                opened_with_error: true,
                end: true,
                ..seen
            }),
            StartStep::JudgeOpeningError
        );
        // Once the timer let the headers go, an opening error is an error inside the stream.
        assert_eq!(
            start_step(StartSeen {
                released: true,
                opened_with_error: true,
                ..seen
            }),
            StartStep::Release
        );
    }
}
