//! A small learned tie-breaker for answers that no rule decided.
//!
//! When nothing but the status code (or a generic "invalid request" code) speaks for an
//! answer, its words still do: "your workspace has reached its allocation", "服务暂时不可用".
//! A softmax regression over the answer's word tokens, code values and status, trained offline
//! on the development part of the corpus (`scripts/train_tiebreaker.py`; its weights are
//! compiled in from [`weights`]), picks the class when it is confident enough, and the reason
//! names the tokens that weighed most. It never runs when a rule, a decisive phrase, a concept
//! or a specific code decided: it only breaks the tie the status prior would otherwise settle
//! blindly.
//!
//! The tokens are the same here and in the trainer (it asks `llm-fallback features` for them):
//! - each ASCII word of a message (letters and digits, 2 to 24 bytes, not all digits), and each
//!   pair of adjacent ASCII words (`"per day"`);
//! - each pair of adjacent letters of a non-ASCII run (CJK, kana, hangul: `"余额"`, `"不足"`),
//!   or the letter alone when the run is one letter long;
//! - each code value as `=value`, and the words its separators part (`free_usage_limit`:
//!   `free`, `usage`, `limit`; codes arrive lowercased, so camel case does not split);
//! - the status as `#429` and its family as `#4xx` (an envelope's own status too).

mod weights;

use super::evidence::Evidence;
use super::ErrorClass;
use crate::fnv::Fnv;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::OnceLock;

/// What settled an answer before the tie-breaker looked at it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Only the status code (or an envelope's own status).
    Status,
    /// A generic code such as `invalid_request_error` or `INVALID_ARGUMENT`.
    GenericCode,
}

/// At most this many tokens are read from one answer (bounded work on huge bodies).
const MAX_TOKENS: usize = 512;

/// The answer's tokens, sorted and without repeats.
pub fn tokens(evidence: &Evidence, status: u16) -> Vec<String> {
    let mut out = Vec::new();
    for message in &evidence.messages {
        message_tokens(message, &mut out);
        if out.len() >= MAX_TOKENS {
            break;
        }
    }
    for code in &evidence.codes {
        out.push(joined(&["=", &code.value]));
        code_words(&code.value, &mut out);
    }
    for status in std::iter::once(status).chain(evidence.inner_status) {
        out.push(format!("#{status}"));
        out.push(format!("#{}xx", status / 100));
    }
    out.truncate(MAX_TOKENS);
    out.sort_unstable();
    out.dedup();
    out
}

/// Pieces joined into one token (cheaper than `format!`, which a weak answer's words and pairs
/// would pay about a hundred times).
fn joined(pieces: &[&str]) -> String {
    let mut token = String::with_capacity(pieces.iter().map(|p| p.len()).sum());
    for piece in pieces {
        token.push_str(piece);
    }
    token
}

fn message_tokens(message: &str, out: &mut Vec<String>) {
    let mut previous: Option<&str> = None;
    let mut run: Vec<char> = Vec::new();
    let mut word_start: Option<usize> = None;
    let flush_run = |run: &mut Vec<char>, out: &mut Vec<String>| {
        match run.as_slice() {
            [] => {}
            [one] => out.push(one.to_string()),
            letters => out.extend(letters.windows(2).map(|pair| pair.iter().collect())),
        }
        run.clear();
    };
    for (at, c) in message
        .char_indices()
        .chain(std::iter::once((message.len(), ' ')))
    {
        if c.is_ascii_alphanumeric() {
            flush_run(&mut run, out);
            word_start.get_or_insert(at);
            continue;
        }
        if let Some(start) = word_start.take() {
            let word = message.get(start..at).unwrap_or("");
            if is_word(word) {
                out.push(word.to_owned());
                if let Some(before) = previous {
                    out.push(joined(&[before, " ", word]));
                }
                previous = Some(word);
            } else if word.len() != 1 {
                // A number or a long id breaks a pair; a lone letter ("organization's") does not.
                previous = None;
            }
        }
        if c.is_alphabetic() {
            run.push(c);
            previous = None;
        } else {
            flush_run(&mut run, out);
            // Words separated by a space (or an apostrophe, "organization's") stay adjacent.
            if c != ' ' && c != '\'' {
                previous = None;
            }
        }
    }
}

/// An ASCII run worth a token: 2 to 24 bytes, not all digits.
fn is_word(run: &str) -> bool {
    (2..=24).contains(&run.len()) && !run.bytes().all(|b| b.is_ascii_digit())
}

/// The words a code is made of, split at anything but letters and digits (`_`, `.`, `-`, ...).
fn code_words(code: &str, out: &mut Vec<String>) {
    let words = code
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| is_word(w));
    out.extend(words.map(str::to_owned));
}

/// Token -> its row in [`weights::WEIGHTS`], built on first use: a lookup hashes one token
/// (FNV-1a: the keys are short and compiled in) instead of comparing it with ten in a binary
/// search.
fn index() -> &'static HashMap<&'static str, usize, BuildHasherDefault<Fnv>> {
    static INDEX: OnceLock<HashMap<&'static str, usize, BuildHasherDefault<Fnv>>> = OnceLock::new();
    INDEX.get_or_init(|| {
        weights::WEIGHTS
            .iter()
            .enumerate()
            .map(|(at, (name, _))| (*name, at))
            .collect()
    })
}

/// The class the weights prefer for these tokens, when they prefer it over the runner-up by at
/// least the trained margin, with the three tokens that weighed most for it.
fn predict(tokens: &[String]) -> Option<(ErrorClass, Vec<&'static str>)> {
    let mut scores = weights::BIAS.map(i32::from);
    let mut known = 0usize;
    let mut rows: Vec<(&'static str, &'static [i16; weights::CLASSES.len()])> = Vec::new();
    for token in tokens {
        let Some(&at) = index().get(token.as_str()) else {
            continue;
        };
        let Some((name, row)) = weights::WEIGHTS.get(at) else {
            continue;
        };
        if !name.starts_with('#') {
            known += 1;
        }
        for (score, weight) in scores.iter_mut().zip(row.iter()) {
            *score += i32::from(*weight);
        }
        rows.push((name, row));
    }
    // Nothing but the status is known: the status prior is all there is.
    if known == 0 {
        return None;
    }
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(scores.get(i).copied().unwrap_or(i32::MIN)));
    let (&best, &second) = (order.first()?, order.get(1)?);
    let margin = scores.get(best)? - scores.get(second)?;
    if margin < weights::MARGIN {
        return None;
    }
    let class = *weights::CLASSES.get(best)?;
    rows.retain(|(name, _)| !name.starts_with('#'));
    rows.sort_by_key(|(_, row)| std::cmp::Reverse(row.get(best).copied().unwrap_or(0)));
    let top = rows.iter().take(3).map(|(name, _)| *name).collect();
    Some((class, top))
}

/// The tie-breaker's decision for an answer the status prior (or a generic code) would have
/// decided as `prior`: `None` keeps the prior.
pub fn tie_break(
    evidence: &Evidence,
    status: u16,
    prior: ErrorClass,
    basis: Basis,
) -> Option<(ErrorClass, String)> {
    // A web server's or a proxy's page: the status it chose says more than its words, which
    // are the server's boilerplate ("The requested URL could not be retrieved").
    if (basis == Basis::GenericCode && !weights::ON_GENERIC_CODES) || evidence.html_page {
        return None;
    }
    let (class, top) = predict(&tokens(evidence, status))?;
    // An error the rules found (MiniMax's `base_resp` "token limit" in a 200) is never read as
    // a success: that would hand a failure to the client with no fallback.
    if class == prior || class == ErrorClass::Ok {
        return None;
    }
    let words = top
        .iter()
        .map(|t| format!("\"{t}\""))
        .collect::<Vec<_>>()
        .join(", ");
    Some((
        class,
        format!("learned tie-breaker ({words}) over {}", prior.as_str()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens_of(body: &str, status: u16) -> Vec<String> {
        tokens(&Evidence::from_body(body.as_bytes()), status)
    }

    #[test]
    fn words_pairs_cjk_codes_and_status() {
        let t = tokens_of(
            r#"{"error":{"code":"free_usage_limit","message":"Daily limit reached: 余额不足"}}"#,
            429,
        );
        for want in [
            "daily",
            "limit",
            "reached",
            "daily limit",
            "limit reached",
            "余额",
            "额不",
            "不足",
            "=free_usage_limit",
            "free",
            "usage",
            "#429",
            "#4xx",
        ] {
            assert!(t.iter().any(|x| x == want), "{want} missing from {t:?}");
        }
        // A punctuation mark breaks a pair; digits alone are no word.
        assert!(!t.iter().any(|x| x == "reached 余额" || x == "reached:"));
        let t = tokens_of(
            r#"{"error":{"message":"retry in 30 s. Organization's quota"}}"#,
            500,
        );
        assert!(t.iter().any(|x| x == "organization quota"), "{t:?}");
        assert!(!t.iter().any(|x| x == "30"));
        assert!(t.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
    }

    #[test]
    fn bounded_on_huge_messages() {
        let body = format!(
            r#"{{"error":{{"message":"{}"}}}}"#,
            (0..5000)
                .map(|i| format!("w{i}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        assert!(tokens_of(&body, 500).len() <= MAX_TOKENS);
    }

    #[test]
    fn weights_are_sorted_for_binary_search() {
        assert!(weights::WEIGHTS.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn status_alone_never_decides() {
        assert_eq!(predict(&["#429".into(), "#4xx".into()]), None);
        let e = Evidence::from_body(b"");
        assert_eq!(
            tie_break(&e, 503, ErrorClass::Overloaded, Basis::Status),
            None
        );
    }
}
