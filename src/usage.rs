//! Token usage from a non-streaming JSON answer, read as it streams by without buffering it.
//!
//! `usage` sits at the end of OpenAI and Anthropic answers (and `usageMetadata` in Gemini's), so
//! [`UsageTail`] keeps the first bytes of a small body whole and, past that, only a bounded tail;
//! at the end it parses just the `usage` object it finds there.

use crate::sse::Usage;
use memchr::memmem::FinderRev;
use std::sync::LazyLock;

/// Bodies up to this size are kept whole; past it only the last [`TAIL`] bytes are.
const HEAD: usize = 64 * 1024;
pub const TAIL: usize = 8 * 1024;

/// Keeps what is needed to read `usage` at the end of a JSON body.
#[derive(Debug, Default)]
pub struct UsageTail {
    kept: Vec<u8>,
    overflowed: bool,
}

impl UsageTail {
    pub fn feed(&mut self, chunk: &[u8]) {
        self.kept.extend_from_slice(chunk);
        if self.kept.len() > HEAD {
            self.overflowed = true;
        }
        if self.overflowed && self.kept.len() > TAIL {
            let cut = self.kept.len() - TAIL;
            self.kept.drain(..cut);
        }
    }

    pub fn finish(&self) -> Usage {
        tokens_in(&self.kept)
    }
}

/// Searchers built once, not per answer.
static USAGE: LazyLock<FinderRev<'static>> = LazyLock::new(|| FinderRev::new(b"\"usage\""));
static METADATA: LazyLock<FinderRev<'static>> =
    LazyLock::new(|| FinderRev::new(b"\"usageMetadata\""));

/// Finds the last `"usage"` / `"usageMetadata"` object in `bytes` and reads its token counts.
pub fn tokens_in(bytes: &[u8]) -> Usage {
    for (key, finder) in [
        (&b"\"usage\""[..], &*USAGE),
        (&b"\"usageMetadata\""[..], &*METADATA),
    ] {
        let Some(at) = finder.rfind(bytes) else {
            continue;
        };
        let Some(object) = bytes.get(at + key.len()..).and_then(object_after_colon) else {
            continue;
        };
        if let Some(usage) = Usage::parse(object) {
            return usage;
        }
    }
    Usage::default()
}

/// The `{...}` right after `: ` in `rest`, matched by brace depth outside strings.
fn object_after_colon(rest: &[u8]) -> Option<&[u8]> {
    let colon = rest.iter().position(|b| !b.is_ascii_whitespace())?;
    if rest.get(colon) != Some(&b':') {
        return None;
    }
    let start = colon
        + 1
        + rest
            .get(colon + 1..)?
            .iter()
            .position(|b| !b.is_ascii_whitespace())?;
    if rest.get(start) != Some(&b'{') {
        return None;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, &b) in rest.get(start..)?.iter().enumerate() {
        match (in_string, escaped, b) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') => in_string = false,
            (true, false, _) => {}
            (false, _, b'"') => in_string = true,
            (false, _, b'{') => depth += 1,
            (false, _, b'}') => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return rest.get(start..=start + i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn reads_openai_anthropic_and_gemini_usage() {
        let openai = br#"{"id":"x","choices":[{"message":{"content":"\"usage\": {}"}}],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}"#;
        assert_eq!(
            tokens_in(openai),
            Usage {
                input_tokens: Some(12),
                output_tokens: Some(5),
                cached_input_tokens: None,
            }
        );
        let anthropic = br#"{"content":[],"usage":{"input_tokens":7,"output_tokens":3,"cache_read_input_tokens":0}}"#;
        assert_eq!(
            tokens_in(anthropic),
            Usage {
                input_tokens: Some(7),
                output_tokens: Some(3),
                cached_input_tokens: Some(0),
            }
        );
        let gemini =
            br#"{"candidates":[],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":9}}"#;
        assert_eq!(
            tokens_in(gemini),
            Usage {
                input_tokens: Some(4),
                output_tokens: Some(9),
                cached_input_tokens: None,
            }
        );
        // Cache reads and writes are input too (Anthropic counts them beside `input_tokens`);
        // OpenAI's cached tokens are part of `prompt_tokens` already.
        let cached = br#"{"usage":{"input_tokens":7,"output_tokens":3,"cache_read_input_tokens":100,"cache_creation_input_tokens":20}}"#;
        assert_eq!(
            tokens_in(cached),
            Usage {
                input_tokens: Some(127),
                output_tokens: Some(3),
                cached_input_tokens: Some(100),
            }
        );
        let openai_cached = br#"{"usage":{"prompt_tokens":120,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":100,"audio_tokens":0}}}"#;
        assert_eq!(tokens_in(openai_cached).cached_input_tokens, Some(100));
        assert_eq!(tokens_in(openai_cached).input_tokens, Some(120));
        assert_eq!(tokens_in(b"not json"), Usage::default());
        assert_eq!(
            tokens_in(br#"{"usage": {"prompt_tokens": 1"#),
            Usage::default()
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn large_bodies_keep_only_a_bounded_tail() {
        let mut tail = UsageTail::default();
        tail.feed(br#"{"choices":[{"message":{"content":""#);
        for _ in 0..100 {
            tail.feed(&[b'x'; 4096]);
        }
        tail.feed(br#""}}],"usage":{"prompt_tokens":100,"completion_tokens":200}}"#);
        assert!(tail.kept.len() <= TAIL);
        assert_eq!(
            tail.finish(),
            Usage {
                input_tokens: Some(100),
                output_tokens: Some(200),
                cached_input_tokens: None,
            }
        );
    }
}
