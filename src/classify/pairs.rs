//! Which byte pairs a message holds, so that a phrase with a pair the message lacks is ruled out
//! without a scan.
//!
//! An answer that no strong signal decides is read by hundreds of phrases, each looked for in
//! each message; most are not there, and a scan that finds nothing still walks the message. The
//! pairs of a message (4 096 bits, set once per message) rule most of them out in a few bit
//! tests. Only the messages of the answer being judged are indexed, for the length of the
//! judgement ([`indexed`]), and a message is known by its address and length: a slice of it,
//! or any other text, is scanned as before.

use std::cell::RefCell;

const WORDS: usize = 64;

/// A set of byte pairs, hashed into 4 096 bits by the low six bits of each byte (exact for
/// lowercase ASCII letters; a collision only lets a scan happen).
pub struct Pairs([u64; WORDS]);

fn slot(a: u8, b: u8) -> usize {
    (usize::from(a & 0x3f) << 6) | usize::from(b & 0x3f)
}

impl Pairs {
    pub fn of(text: &[u8]) -> Self {
        let mut bits = [0u64; WORDS];
        for pair in text.windows(2) {
            if let [a, b] = *pair {
                let at = slot(a, b);
                if let Some(word) = bits.get_mut(at / 64) {
                    *word |= 1 << (at % 64);
                }
            }
        }
        Pairs(bits)
    }

    fn has(&self, a: u8, b: u8) -> bool {
        let at = slot(a, b);
        self.0
            .get(at / 64)
            .is_some_and(|w| w & (1 << (at % 64)) != 0)
    }

    /// False only when `phrase` cannot occur: one of its pairs is missing. Every pair is
    /// tested (a bit test each): common English pairs let the first and last alone pass too
    /// often.
    pub fn may_hold(&self, phrase: &[u8]) -> bool {
        phrase.windows(2).all(|pair| match *pair {
            [a, b] => self.has(a, b),
            _ => true,
        })
    }
}

thread_local! {
    /// The messages being judged: address, length, pairs.
    static INDEXED: RefCell<Vec<(usize, usize, Pairs)>> = const { RefCell::new(Vec::new()) };
}

/// Runs `judge` with `messages` indexed; the index is dropped when it returns.
pub fn indexed<R>(messages: &[String], judge: impl FnOnce() -> R) -> R {
    let before = INDEXED.with(|index| {
        let Ok(mut index) = index.try_borrow_mut() else {
            return None;
        };
        let before = index.len();
        index.extend(
            messages
                .iter()
                .map(|m| (m.as_ptr() as usize, m.len(), Pairs::of(m.as_bytes()))),
        );
        Some(before)
    });
    let result = judge();
    if let Some(before) = before {
        INDEXED.with(|index| {
            if let Ok(mut index) = index.try_borrow_mut() {
                index.truncate(before);
            }
        });
    }
    result
}

/// The pairs of one text when it is an indexed message; without them any phrase may be there.
#[derive(Clone, Copy)]
pub struct Held<'a>(Option<&'a Pairs>);

impl Held<'_> {
    /// False only when the text cannot hold `phrase`.
    pub fn may_hold(self, phrase: &str) -> bool {
        self.0.is_none_or(|p| p.may_hold(phrase.as_bytes()))
    }
}

/// False only when `text` is an indexed message that cannot hold `phrase`.
pub fn may_hold(text: &str, phrase: &str) -> bool {
    with(text, |held| held.may_hold(phrase))
}

/// Runs `read` with what `text` holds: a loop over a list of phrases looks its pairs up once
/// instead of once per phrase.
pub fn with<R>(text: &str, read: impl FnOnce(Held<'_>) -> R) -> R {
    INDEXED.with(|index| {
        let index = index.try_borrow().ok();
        let pairs = index.as_ref().and_then(|index| {
            index
                .iter()
                .find(|(at, len, _)| *at == text.as_ptr() as usize && *len == text.len())
                .map(|(_, _, pairs)| pairs)
        });
        read(Held(pairs))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn pairs_never_rule_out_a_phrase_that_is_there() {
        let text = "the model `gpt-x` does not exist; 余额不足 (code 1113)";
        let pairs = Pairs::of(text.as_bytes());
        for start in 0..text.len() {
            for end in start + 1..=text.len() {
                if let Some(phrase) = text.get(start..end) {
                    assert!(pairs.may_hold(phrase.as_bytes()), "{phrase:?}");
                }
            }
        }
        assert!(!pairs.may_hold(b"quota"));
        assert!(!pairs.may_hold(b"rate limit"));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn only_the_indexed_messages_and_only_while_judged() {
        let messages = vec!["rate limit reached".to_owned()];
        let message = messages.first().map(String::as_str).unwrap_or_default();
        indexed(&messages, || {
            assert!(!may_hold(message, "quota"));
            assert!(may_hold(message, "limit"));
            // A slice is another text: not ruled out.
            assert!(may_hold(&message[5..], "quota"));
            // Nested judgements keep the outer index.
            indexed(&["x".to_owned()], || assert!(!may_hold(message, "quota")));
            assert!(!may_hold(message, "quota"));
        });
        assert!(may_hold(message, "quota"));
    }
}
