//! Reads an upstream answer (status, headers, body) and says what kind of failure it is.
//!
//! Status codes alone are a poor predictor: a 429 can mean an exhausted quota, a rate limit or
//! an overloaded provider, and quota stops also arrive as 400, 401, 402, 403, 412 or inside a
//! 200. [`classify`] weighs the evidence in a fixed order, first decisive signal wins:
//!
//! 1. operator rules from the configuration ([`rules`]);
//! 2. Envoy's own local replies (`response.code_details`, or Envoy's exact reply texts when an
//!    Envoy-based proxy upstream produced them);
//! 3. decisive message phrases that no code overrides ("credit balance is too low", "request
//!    too large", "prompt is too long", "content management policy", "model ... does not
//!    exist");
//! 4. specific machine-readable codes (`error.type`, `error.code`, `status`, `details[].reason`,
//!    Google quota ids, Bedrock's `x-amzn-errortype`, Tencent/Baidu/Zhipu/DashScope codes);
//! 5. indicative message phrases ("rate limit", "overloaded", "timed out", "api key");
//! 6. generic codes (`invalid_request_error`, `INVALID_ARGUMENT`, ...);
//! 7. the status code.
//!
//! Then one adjustment: a rate limit over a daily or monthly window, or one that asks for a
//! wait of an hour or more, is a quota stop. Phrases match whole words inside the error's
//! message fields, never a loose substring of the body; numbers in messages are only ever read
//! as waits, after a phrase that introduces one ([`wait::from_message`]).
//!
//! Three more things are part of every verdict:
//! - a quota stop's [`Scope`]: the whole account (out of credit, billing stops, spend caps) or
//!   one model (Google `...PerModel...` quota ids, per-model daily limits); see `quota_scope`;
//! - what became of a stated wait ([`WaitHint`]): nonsense (unparseable, negative, overflowing,
//!   in the past, more than a year ahead) is ignored, never clamped into a wait;
//! - `model_unavailable` only on evidence about the model: a bare 404, or a "not found" that
//!   names no model (a mistyped path), is a `bad_request` and cools nothing.
//!
//! Bodies are often cut at `classifier.max_body_bytes`; [`evidence`] reads a cut JSON body up
//! to the cut, so codes and messages that arrived whole still count.

mod concepts;
pub mod evidence;
pub mod learned;
mod pairs;
pub mod rules;
pub mod wait;

use evidence::Evidence;
use serde::{Deserialize, Serialize};

/// What kind of answer the upstream gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// A success.
    Ok,
    /// Out of credit, balance or a daily/monthly quota: retrying soon never helps.
    QuotaExhausted,
    /// A short-window rate limit: waiting helps.
    RateLimited,
    /// The provider or model lacks capacity now (or failed on its side): back off or switch.
    Overloaded,
    /// The upstream took too long.
    Timeout,
    /// The model does not exist, was retired, is not enabled for this account, or is loading.
    ModelUnavailable,
    /// The prompt (plus requested output) does not fit the model's window.
    ContextOverflow,
    /// A safety or content filter refused the request.
    ContentPolicy,
    /// Bad, missing or unauthorized credentials.
    Auth,
    /// Any other invalid request.
    BadRequest,
}

impl ErrorClass {
    pub const ALL: [ErrorClass; 10] = [
        ErrorClass::Ok,
        ErrorClass::QuotaExhausted,
        ErrorClass::RateLimited,
        ErrorClass::Overloaded,
        ErrorClass::Timeout,
        ErrorClass::ModelUnavailable,
        ErrorClass::ContextOverflow,
        ErrorClass::ContentPolicy,
        ErrorClass::Auth,
        ErrorClass::BadRequest,
    ];

    /// The stable name used in headers, stats and configuration.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Ok => "ok",
            ErrorClass::QuotaExhausted => "quota_exhausted",
            ErrorClass::RateLimited => "rate_limited",
            ErrorClass::Overloaded => "overloaded",
            ErrorClass::Timeout => "timeout",
            ErrorClass::ModelUnavailable => "model_unavailable",
            ErrorClass::ContextOverflow => "context_overflow",
            ErrorClass::ContentPolicy => "content_policy",
            ErrorClass::Auth => "auth",
            ErrorClass::BadRequest => "bad_request",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// Whether re-sending the same request to the same model can succeed (after a wait).
    /// `x-should-retry: false` is sent where it cannot.
    pub const fn same_model_retry_helps(self) -> bool {
        matches!(
            self,
            ErrorClass::RateLimited | ErrorClass::Overloaded | ErrorClass::Timeout
        )
    }

    /// Whether asking another model can succeed where this one failed (after the others the
    /// request itself, or its credentials, is what fails).
    pub const fn another_model_may_help(self) -> bool {
        !matches!(
            self,
            ErrorClass::Ok | ErrorClass::Auth | ErrorClass::BadRequest | ErrorClass::ContentPolicy
        )
    }
}

/// An upstream answer, as the filter sees it.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    pub status: u16,
    /// Response headers with lowercase names.
    pub headers: &'a [(&'a str, &'a str)],
    /// The body, possibly truncated to the inspection cap.
    pub body: &'a [u8],
    /// Envoy's `response.code_details` (`via_upstream` for real upstream answers).
    pub code_details: Option<&'a str>,
    pub now_unix_ms: u64,
}

impl<'a> Answer<'a> {
    pub fn header(&self, name: &str) -> Option<&'a str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    }
}

/// The classifier's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub class: ErrorClass,
    /// How long the upstream asked us to wait, normalized to milliseconds.
    pub retry_after_ms: Option<u64>,
    /// The signal that decided, e.g. `error.code=insufficient_quota` or `status=529`.
    pub reason: String,
    /// For a quota stop: whether it stops the whole account (every model served with the same
    /// key) or this one model. Meaningless for other classes ([`Scope::Model`] there).
    pub scope: Scope,
    /// Whether the upstream stated a wait, and whether it was usable.
    pub wait_hint: WaitHint,
}

impl Verdict {
    /// A success: nothing to classify.
    pub fn ok() -> Self {
        Self {
            class: ErrorClass::Ok,
            retry_after_ms: None,
            reason: String::new(),
            scope: Scope::Model,
            wait_hint: WaitHint::Absent,
        }
    }
}

/// What a quota stop covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Every model of the account (OpenAI `insufficient_quota`, Anthropic "credit balance is too
    /// low", DeepSeek "Insufficient Balance"): the key is out of money or quota.
    Account,
    /// This model only (Google `...PerModel...` quota ids, per-model daily token limits).
    #[default]
    Model,
}

impl Scope {
    pub const fn as_str(self) -> &'static str {
        match self {
            Scope::Account => "account",
            Scope::Model => "model",
        }
    }
}

/// What became of the wait an answer stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitHint {
    /// No wait stated.
    #[default]
    Absent,
    /// A plausible wait, in `retry_after_ms`.
    Used,
    /// A wait was stated but made no sense (unparseable, negative, in the past, absurdly far):
    /// ignored, `retry_after_ms` is `None` unless another source gave one.
    Ignored,
}

/// Classifies an answer with the built-in knowledge only.
pub fn classify(answer: &Answer) -> Verdict {
    classify_with(answer, &rules::Rules::default())
}

/// Classifies an answer, checking the operator's rules first.
pub fn classify_with(answer: &Answer, rules: &rules::Rules) -> Verdict {
    judge(answer, rules, Learned::Used)
}

/// Whether the learned tie-breaker speaks (the trainer asks what the rules alone say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Learned {
    Used,
    Unused,
}

fn judge(answer: &Answer, rules: &rules::Rules, learned: Learned) -> Verdict {
    let evidence = evidence_of(answer);
    pairs::indexed(&evidence.messages, || {
        judge_evidence(answer, &evidence, rules, learned)
    })
}

fn judge_evidence(
    answer: &Answer,
    evidence: &Evidence,
    rules: &rules::Rules,
    learned: Learned,
) -> Verdict {
    let (decision, rule_scope) = decide(answer, evidence, rules, learned);
    // A success states no wait worth reading (and walking a whole completion for one costs).
    let (retry_after_ms, wait_hint) = if decision.0 == ErrorClass::Ok {
        (None, WaitHint::Absent)
    } else {
        wait_hint(answer, evidence, decision.0)
    };
    let (class, reason) = adjust_quota_window(decision, evidence, retry_after_ms);
    let (class, reason) = match (class, rule_scope) {
        (ErrorClass::Overloaded, None) => callers_window_over_load((class, reason), evidence),
        _ => (class, reason),
    };
    let (class, reason) = match (class, rule_scope) {
        (ErrorClass::RateLimited, None) => match token_window_untouched(answer) {
            Some(why) => (ErrorClass::ContextOverflow, why),
            None => (class, reason),
        },
        _ => (class, reason),
    };
    let scope = match (class, rule_scope) {
        (ErrorClass::QuotaExhausted, Some(scope)) => scope,
        (ErrorClass::QuotaExhausted, None) => quota_scope(answer, evidence),
        _ => Scope::Model,
    };
    let (class, reason) = match (class, rule_scope, scope) {
        (ErrorClass::QuotaExhausted, None, Scope::Model) => {
            quota_reset_soon((class, reason), answer, evidence)
        }
        _ => (class, reason),
    };
    Verdict {
        class,
        retry_after_ms,
        reason,
        scope,
        wait_hint,
    }
}

/// A rate limit whose own headers show the tokens window untouched (`remaining` equal to
/// `limit`: `x-ratelimit-remaining-tokens-minute: 2000000` beside its limit of 2000000,
/// Anthropic's `anthropic-ratelimit-input-tokens-remaining` beside its `-limit`) while no
/// request window is spent: nothing was counted, the request alone is larger than the window, and
/// no wait lets it through.
fn token_window_untouched(answer: &Answer) -> Option<String> {
    let number = |v: &str| v.trim().parse::<u64>().ok();
    let requests_spent = answer.headers.iter().any(|(name, value)| {
        let name = name.to_ascii_lowercase();
        name.contains("remaining") && name.contains("request") && number(value) == Some(0)
    });
    if requests_spent {
        return None;
    }
    answer.headers.iter().find_map(|(name, value)| {
        let lower = name.to_ascii_lowercase();
        if !(lower.contains("remaining") && lower.contains("token")) {
            return None;
        }
        let limit_name = lower.replacen("remaining", "limit", 1);
        let limit = answer.header(&limit_name).and_then(number)?;
        (limit > 0 && number(value) == Some(limit)).then(|| {
            format!("header {lower} = {limit_name} (the window untouched: the request alone is above it)")
        })
    })
}

/// What the body and the headers that carry codes say.
fn evidence_of(answer: &Answer) -> Evidence {
    let mut evidence = Evidence::from_body(answer.body);
    if let Some(kind) = answer.header("x-amzn-errortype") {
        // `ThrottlingException:http://internal.amazon.com/coral/...`
        let name = kind.split(':').next().unwrap_or(kind);
        evidence.push_header_code("x-amzn-errortype", name);
        // AWS names an error in the header (and a stream's exception event in its name), even
        // where the payload is only `{"message": ...}`.
        evidence.has_error_envelope = true;
    }
    // A gateway that blocks a request as a chat completion under an error status (APISIX's
    // moderation at 400): the completion's text is the reason.
    if answer.status >= 400 && evidence.messages.is_empty() {
        if let Some(text) = evidence.completion.take() {
            evidence.messages.push(evidence::normalize(&text));
        }
    }
    // An error envelope whose keys are in another language (`{"erro": {"mensagem": ...}}`,
    // `{"hata": {"mesaj": ...}}`), or whose message only says "Error" (Connect's
    // `{"code": "resource_exhausted", "message": "Error", "details": [{"debug": {...}}]}`):
    // under an error status, its sentences are the message.
    const SAYS_NOTHING: &[&str] = &["error", "unknown error", "an error occurred"];
    let says_nothing = evidence
        .messages
        .iter()
        .all(|m| SAYS_NOTHING.contains(&m.trim_end_matches(['.', '!'])));
    if (answer.status >= 400 || evidence.said_failed) && says_nothing {
        let before = evidence.messages.len();
        evidence.read_sentences();
        if evidence.messages.len() > before {
            evidence.has_error_envelope = true;
        }
    }
    evidence
}

type Decision = (ErrorClass, String);

/// How far the signals went: a decisive one (with the scope an operator rule gave it, quota
/// rules only), or only weak ones (a generic code, the status) and which. A stop a message
/// states outright decides over the weak ones ([`allowance_over_weak`]).
enum Settled {
    Strong(Decision, Option<Scope>),
    Weak(Decision, learned::Basis),
}

/// The decision, and the scope an operator rule gave it (quota rules only). Where only weak
/// signals speak, the answer's words may break the tie ([`learned`]).
fn decide(
    answer: &Answer,
    evidence: &Evidence,
    rules: &rules::Rules,
    learned: Learned,
) -> (Decision, Option<Scope>) {
    match settle(answer, evidence, rules) {
        Settled::Strong(decision, scope) => (decision, scope),
        Settled::Weak(prior, basis) => {
            let broken = (learned == Learned::Used)
                .then(|| learned::tie_break(evidence, answer.status, prior.0, basis))
                .flatten();
            (broken.unwrap_or(prior), None)
        }
    }
}

/// A limit over a long window ("You've reached your 5-hour usage limit"), one only an upgrade
/// lifts ("usage limit ... upgrade your plan") or a grant used up ("exceeds your quota"), stated
/// under nothing stronger than a generic code or the
/// status (a 403 `invalid_request_error`): a stop. Reading it as a bad request fails a request
/// that another account's model serves. `Err` gives the prior back.
fn allowance_over_weak(
    (class, reason): Decision,
    evidence: &Evidence,
) -> Result<Decision, Decision> {
    if matches!(class, ErrorClass::QuotaExhausted | ErrorClass::Ok) {
        return Err((class, reason));
    }
    let limit = || {
        evidence.messages.iter().find_map(|m| {
            let window = long_window_in(m)
                .or_else(|| {
                    NO_RESET
                        .iter()
                        .chain(LONG_WINDOW)
                        .find(|p| has_phrase(m, p))
                        .map(|p| p.to_string())
                })
                .or_else(|| period_limit_in(m))
                .filter(|_| {
                    // "the maximum number of requests for today": a limit named with its window.
                    // "월간 토큰 한도를 초과했습니다": a month's 한도 (limit), which alone is any
                    // bound.
                    // "you have run out of agent runs for this 24-hour period": a window's
                    // worth used up, whatever it counts.
                    concepts::allowance_word_in(m)
                        || has_phrase(m, "maximum number of")
                        || has_phrase(m, "한도")
                        || ["run out of", "ran out of", "used up", "used all"]
                            .iter()
                            .any(|p| has_phrase(m, p))
                })?;
            Some(format!("a limit over \"{window}\""))
        })
    };
    // Not any "limit exceeded": under a 400 that is as often an array or a field's bound.
    let stated = limit()
        .or_else(|| evidence.messages.iter().find_map(|m| plan_limit_in(m)))
        .or_else(|| concepts::grant_used_up_in(&evidence.messages));
    match stated {
        Some(p) => Ok((ErrorClass::QuotaExhausted, format!("{reason}, {p}"))),
        None => Err((class, reason)),
    }
}

fn settle(answer: &Answer, evidence: &Evidence, rules: &rules::Rules) -> Settled {
    if let Some((class, reason, scope)) = rules.check(answer, evidence) {
        return Settled::Strong((class, reason), scope);
    }
    if let Some(decision) = envoy_local_reply(answer, evidence) {
        return Settled::Strong(decision, None);
    }
    if is_success(answer.status) && !evidence.has_error_envelope {
        return Settled::Strong(plain_soft_error(answer.status, evidence), None);
    }
    let messages = &evidence.messages;
    let strong = decisive_phrase(evidence, answer.status)
        .or_else(|| google_quota_window(evidence, answer.now_unix_ms))
        .or_else(|| concepts::quota_in(messages).map(|r| (ErrorClass::QuotaExhausted, r)))
        .or_else(|| specific_code(evidence, answer.now_unix_ms, answer.status))
        .or_else(|| prompt_too_large(evidence).map(|p| (ErrorClass::ContextOverflow, p)))
        .or_else(|| concepts::class_of(messages))
        .or_else(|| unlisted_code(evidence, answer.status))
        .or_else(|| indicative_phrase(evidence, answer.status))
        .or_else(|| concepts::capacity_in(messages).map(|r| (ErrorClass::Overloaded, r)));
    if let Some(decision) = strong {
        return Settled::Strong(decision, None);
    }
    // "Something failed on our side" (`server_error`, "Upstream service unavailable") under a
    // 504 says less than the 504, and under a 413 less than the 413 (a body too large).
    let timeout_status = matches!(answer.status, 408 | 504 | 524);
    // The same under a client error the body states again as its own code (`"type":
    // "api_error", "code": 400` at 400): two statuses agree on the request's fault.
    let restated =
        (400..500).contains(&answer.status) && evidence.inner_status == Some(answer.status);
    let says_more = timeout_status || answer.status == 413 || restated;
    // A wrapper's own reason phrase for its 5xx around an upstream's 4xx (Spring's `"error":
    // "Internal Server Error"` over `"message": "400 - {...}"`): the upstream's status speaks.
    let wraps_4xx = answer.status >= 500
        && evidence
            .inner_status
            .is_some_and(|inner| (400..500).contains(&inner));
    if !timeout_status && !wraps_4xx {
        if let Some(decision) = unnamed_failure(evidence, answer.status) {
            return Settled::Strong(decision, None);
        }
    }
    // `stated`: the prior is an upstream's status that the body states (openai-python's
    // "error code: 524" inside a relay's 500, "Error: 429 status code (no body)"), the
    // upstream's own word, not a prior for words to overturn.
    let from_status = || {
        let (prior, stated) = status_prior(answer.status, evidence);
        (prior, learned::Basis::Status, stated)
    };
    let (prior, basis, stated) = match generic_code(evidence) {
        // A relay's `server_error` around "upstream returned 401": its own failure is the
        // upstream's refusal, which the status it names tells.
        Some((ErrorClass::Overloaded, _)) if says_more || wraps_4xx => from_status(),
        // A client's fault (`invalid_request_error`) under a server's failure (a 503 "server
        // shutting down"): the code contradicts the status, and the status's reading costs
        // less when wrong (one request moved along its chain, not a failure handed back).
        // The same under a 401: "You must be a member of an organization to use the API" typed
        // `invalid_request_error` is a credential the server refused; under a 408 ("Request
        // didn't generate first token before the given deadline"), a time ran out.
        Some((ErrorClass::BadRequest, _))
            if answer.status >= 500 || matches!(answer.status, 401 | 402) || timeout_status =>
        {
            from_status()
        }
        // The reverse: a server's failure (`server_error`) under a client error whose words
        // say what the request did wrong ("Upstream request failed: [400] Invalid request
        // parameters"): the status and the words agree, the generic code stands alone.
        Some((ErrorClass::Overloaded, code))
            if matches!(answer.status, 400 | 422)
                && concepts::request_fault_in(&evidence.messages).is_some() =>
        {
            (
                (
                    ErrorClass::BadRequest,
                    format!(
                        "status={}, words of a bad request over {code}",
                        answer.status
                    ),
                ),
                learned::Basis::Status,
                false,
            )
        }
        Some(d) => (
            not_found_path(d, answer.status, evidence),
            learned::Basis::GenericCode,
            false,
        ),
        None => from_status(),
    };
    if stated {
        return Settled::Strong(prior, None);
    }
    match allowance_over_weak(prior, evidence) {
        Ok(stop) => Settled::Strong(stop, None),
        Err(prior) => Settled::Weak(prior, basis),
    }
}

/// The decision of a code a table lists. A numeric code means what its provider's table says
/// (Zhipu's 1301 is a refusal), and another provider may use the number for something else:
/// where the words and the status agree on another class ("Tokens per minute limit exceeded" at
/// 429 under `"code": "1301"`; a 429 is a stop's status too: "Monthly tokens limit exceeded"),
/// they decide.
fn code_decides(
    class: ErrorClass,
    code: &evidence::Code,
    evidence: &Evidence,
    status: u16,
) -> Decision {
    let decision = (class, format!("{}={}", code.field, code.value));
    // JSON-RPC's reserved codes say only which side failed (`-32602` invalid params, MCP's
    // `-32001`): any words that decide ("Prompt exceeds maximum context", "Session token
    // expired") say more.
    if code.value.starts_with("-32") {
        return match by_words(evidence, status) {
            Some((class, words)) if class != decision.0 => {
                (class, format!("{words} over {}", decision.1))
            }
            _ => decision,
        };
    }
    if !code.value.bytes().all(|b| b.is_ascii_digit()) {
        return decision;
    }
    match by_words(evidence, status) {
        Some((class, words))
            if class != decision.0
                && (by_status(status, evidence).0 == class
                    || (status == 429 && class == ErrorClass::QuotaExhausted)) =>
        {
            (
                class,
                format!("{words} and status={status} over {}", decision.1),
            )
        }
        // A limit of a day or a month at 429 ("Monthly tokens limit exceeded"): a stop, whatever
        // another provider's number means.
        _ if status == 429
            && decision.0 != ErrorClass::QuotaExhausted
            && long_window_stated(evidence) =>
        {
            (
                ErrorClass::QuotaExhausted,
                format!("status=429 and a long window over {}", decision.1),
            )
        }
        _ => decision,
    }
}

/// A success status without an error envelope is a success, unless the whole body is one short
/// line of plain text in which the words of a stop, an overload or a refusal speak: relays answer
/// "200 OK but actually an error" that way, and no completion is one line of plain text.
fn plain_soft_error(status: u16, evidence: &Evidence) -> Decision {
    let ok = || (ErrorClass::Ok, format!("status={status}"));
    // A gateway's block or error sent as a 200 completion that no model wrote ("Error: Rate
    // limit reached ...", "您的余额不足", "サーバーが混雑しています"): its text is the message.
    if let (true, Some(text)) = (evidence.unsigned_completion, evidence.completion.as_deref()) {
        let words = Evidence {
            messages: vec![evidence::normalize(text)],
            ..Evidence::default()
        };
        let read = words
            .messages
            .first()
            .and_then(|t| concepts::refusal(t))
            .map(|r| (ErrorClass::ContentPolicy, r))
            .or_else(|| by_words(&words, status));
        if let Some((class, r)) = read {
            let reason = format!("status={status}, a completion no model wrote, {r}");
            return (class, reason);
        }
    }
    if evidence.html_page {
        return html_page_at_success(status, evidence).unwrap_or_else(ok);
    }
    if !evidence.plain_line {
        return ok();
    }
    by_words(evidence, status)
        .map(|(class, r)| (class, format!("status={status}, plain-text body, {r}")))
        .unwrap_or_else(ok)
}

/// An HTML page where an API's answer should be: no model wrote it. A single sign-on proxy's
/// or a captive portal's sign-in page is a credential the call lacks; a maintenance page, the
/// service down for now. Any other page says nothing of a failure.
fn html_page_at_success(status: u16, evidence: &Evidence) -> Option<Decision> {
    const SIGN_IN: &[&str] = &[
        "sign in",
        "sign-in",
        "log in",
        "login",
        "single sign-on",
        "anmeldung",
        "anmelden",
        "iniciar sesión",
        "connexion",
        "ログイン",
        "登录",
        "登錄",
        "로그인",
    ];
    const MAINTENANCE: &[&str] = &[
        "maintenance",
        "维护",
        "維護",
        "メンテナンス",
        "점검",
        "wartung",
        "mantenimiento",
    ];
    // A proxy's error page served with a 200 ("504 Gateway Time-out", "502 Bad Gateway"): the
    // status it names.
    // Only a status the page's title names: an answer's page may explain a 504 in its text.
    let titled = |s: &u16| {
        evidence
            .messages
            .first()
            .is_some_and(|title| title.contains(&s.to_string()))
    };
    if let Some(named) = evidence.inner_status.filter(|s| *s >= 500 && titled(s)) {
        let (class, reason) = by_status(named, evidence);
        return Some((class, format!("{reason}, an HTML page at {status}")));
    }
    let page = |class, word: &str| (class, format!("status={status}, an HTML page, \"{word}\""));
    matched_phrase(evidence, SIGN_IN)
        .map(|w| page(ErrorClass::Auth, w))
        .or_else(|| matched_phrase(evidence, MAINTENANCE).map(|w| page(ErrorClass::Overloaded, w)))
}

/// What the words alone say, in the order `settle` reads them (without the codes it reads
/// between them): a decisive phrase, a quota concept, any other concept, an indicative phrase,
/// capacity. For text that has no envelope to carry codes: a 200's plain line, a completion no
/// model wrote.
fn by_words(evidence: &Evidence, status: u16) -> Option<Decision> {
    let messages = &evidence.messages;
    decisive_phrase(evidence, status)
        .or_else(|| concepts::quota_in(messages).map(|r| (ErrorClass::QuotaExhausted, r)))
        .or_else(|| concepts::class_of(messages))
        .or_else(|| indicative_phrase(evidence, status))
        .or_else(|| concepts::capacity_in(messages).map(|r| (ErrorClass::Overloaded, r)))
}

/// What the learned tie-breaker's trainer needs of an answer (`llm-fallback features`).
pub struct TieBreakInput {
    pub tokens: Vec<String>,
    /// When only weak signals decide the answer: which, and the class they give.
    pub weak: Option<(ErrorClass, learned::Basis)>,
    /// The verdict of the rules alone (without the tie-breaker).
    pub rules_only: Verdict,
}

pub fn tie_break_input(answer: &Answer) -> TieBreakInput {
    let evidence = evidence_of(answer);
    let rules = rules::Rules::default();
    // A page the tie-breaker never reads (`learned::tie_break`) is no candidate either.
    let weak = match settle(answer, &evidence, &rules) {
        Settled::Weak((class, _), basis) if !evidence.html_page => Some((class, basis)),
        _ => None,
    };
    TieBreakInput {
        tokens: learned::tokens(&evidence, answer.status),
        weak,
        rules_only: judge(answer, &rules, Learned::Unused),
    }
}

/// The status prior, when nothing else decided: an envelope's own error status (a relay's 200
/// or a gateway's 500 around a provider's 429) speaks for the error it carries, else the
/// answer's status does. True when the envelope's status decided.
fn status_prior(status: u16, evidence: &Evidence) -> (Decision, bool) {
    match evidence.inner_status.filter(|inner| *inner != status) {
        Some(inner) => {
            let (class, reason) = by_status(inner, evidence);
            ((class, format!("inner {reason} (answer {status})")), true)
        }
        None => (by_status(status, evidence), false),
    }
}

/// A generic "invalid request" code on a 404/410 is decided like the bare status: the model is
/// gone when a message names it, else the path or resource is wrong (OpenAI's `Invalid URL
/// (POST /v1/chat/completion)`), and the reason says it is not about the model.
fn not_found_path((class, reason): Decision, status: u16, evidence: &Evidence) -> Decision {
    if class != ErrorClass::BadRequest || !matches!(status, 404 | 410) {
        return (class, reason);
    }
    if names_model(evidence) {
        (
            ErrorClass::ModelUnavailable,
            format!("{reason}, status={status}, message names the model"),
        )
    } else {
        (
            class,
            format!("{reason}, status={status} (not about the model)"),
        )
    }
}

/// Envoy's own local replies: `code_details` tells them apart; the same texts also arrive from
/// Envoy-based proxies in front of providers, where only the body shows them.
fn envoy_local_reply(answer: &Answer, evidence: &Evidence) -> Option<Decision> {
    let details = answer.code_details.filter(|d| *d != "via_upstream");
    if let Some(details) = details {
        let class = if details.contains("timeout") {
            ErrorClass::Timeout
        } else if details.starts_with("upstream_reset")
            || details.starts_with("no_healthy_upstream")
            || details.starts_with("upstream_overflow")
            || details.contains("connection_failure")
            || details.starts_with("maintenance_mode")
            || details.starts_with("cluster_not_found")
        {
            ErrorClass::Overloaded
        } else {
            // Other local replies (413 request too large, 431, ...) fall through to the body and
            // status like any answer.
            return None;
        };
        return Some((class, format!("envoy={details}")));
    }
    let [message] = evidence.messages.as_slice() else {
        return None;
    };
    let class = match message.as_str() {
        "upstream request timeout" | "upstream per-try timeout" => ErrorClass::Timeout,
        "no healthy upstream" => ErrorClass::Overloaded,
        m if m.starts_with("upstream connect error or disconnect/reset before headers") => {
            ErrorClass::Overloaded
        }
        _ => return None,
    };
    Some((class, format!("envoy body \"{message}\"")))
}

/// Whole-word (for ASCII) phrase search in a normalized message.
fn has_phrase(message: &str, phrase: &str) -> bool {
    phrase_offsets(message, phrase).next().is_some()
}

/// Byte offsets where `phrase` occurs in `message`, as a whole word for ASCII phrases (CJK has
/// no spaces: any occurrence counts).
fn phrase_offsets<'m>(message: &'m str, phrase: &'m str) -> impl Iterator<Item = usize> + 'm {
    let held = pairs::may_hold(message, phrase);
    word_offsets(if held { message } else { "" }, phrase)
}

/// [`phrase_offsets`] by a scan alone, for a caller that has already ruled `phrase` in by the
/// message's pairs ([`pairs::with`]).
fn word_offsets<'m>(message: &'m str, phrase: &'m str) -> impl Iterator<Item = usize> + 'm {
    let bytes = message.as_bytes();
    let alnum = |i: Option<&u8>| i.is_some_and(u8::is_ascii_alphanumeric);
    occurrences(bytes, phrase.as_bytes()).filter(move |&i| {
        !phrase.is_ascii()
            || (!alnum(i.checked_sub(1).and_then(|j| bytes.get(j)))
                && !alnum(bytes.get(i + phrase.len())))
    })
}

/// Where `needle` starts in `haystack` (overlapping starts included). Messages are short (a
/// few hundred bytes) and phrases many: a scan for the first byte and a compare costs less
/// than the set-up of `str::match_indices`' two-way searcher, which was most of the time of an
/// answer that no phrase decides. On UTF-8 input every start is a character boundary.
pub(crate) fn occurrences<'a>(
    haystack: &'a [u8],
    needle: &'a [u8],
) -> impl Iterator<Item = usize> + 'a {
    let mut from = 0;
    std::iter::from_fn(move || {
        let (&first, rest) = needle.split_first()?;
        loop {
            let at = from + memchr::memchr(first, haystack.get(from..)?)?;
            from = at + 1;
            let after = haystack.get(at + 1..)?;
            // The second byte first, inline: most first-byte hits end there, before a call.
            let second_matches = match rest.split_first() {
                Some((second, _)) => after.first() == Some(second),
                None => true,
            };
            if second_matches && after.starts_with(rest) {
                return Some(at);
            }
        }
    })
}

fn phrase_in(evidence: &Evidence, phrases: &[&str]) -> Option<String> {
    matched_phrase(evidence, phrases).map(|p| format!("message \"{p}\""))
}

/// The first of `phrases` that a message holds as words.
fn matched_phrase<'p>(evidence: &Evidence, phrases: &[&'p str]) -> Option<&'p str> {
    evidence.messages.iter().find_map(|m| phrase_of(m, phrases))
}

/// The first of `phrases` that `message` holds as words, after the byte-pair pre-filter.
fn phrase_of<'p>(message: &str, phrases: &[&'p str]) -> Option<&'p str> {
    pairs::with(message, |held| {
        phrases
            .iter()
            .find(|p| held.may_hold(p) && word_offsets(message, p).next().is_some())
            .copied()
    })
}

/// Phrases that decide even against a code: providers put billing stops under
/// `invalid_request_error` and too-large requests under `rate_limit_exceeded`.
fn decisive_phrase(evidence: &Evidence, status: u16) -> Option<Decision> {
    const QUOTA: &[&str] = &[
        "credit balance is too low",
        "insufficient balance",
        "insufficient account balance",
        "balance is insufficient",
        "balance insufficient",
        "insufficient credits",
        "requires more credits",
        "can only afford",
        "maximum billing reached",
        "billing hard limit",
        "suspended due to insufficient balance",
        "please recharge",
        "top up and try again",
        "out of credits",
        "payment required",
        "payment method required",
        // Bedrock: "Model access is denied due to INVALID_PAYMENT_INSTRUMENT: A valid payment
        // instrument must be provided" (the account's, not the model's).
        "invalid_payment_instrument",
        "valid payment instrument",
        // Budgets and spend caps set by gateways and accounts (LiteLLM, relays, teams).
        "budget has been exceeded",
        "exceeded budget",
        "budget exceeded",
        "exceeded token budget",
        "crossed budget",
        "over budget",
        "max budget",
        "spending limit",
        "spend limit",
        "credits or licenses",
        // Not "no credits" alone: "No credits were charged" ends OpenRouter's moderation refusal.
        "no credits left",
        "no credit left",
        "no credits remaining",
        "no credit remaining",
        "no balance left",
        // Higress's ai-quota: "Request denied by ai quota check, No token left" (its token and
        // cost budgets), beside "No quota left".
        "no token left",
        "no tokens left",
        "no cost left",
        "no budget left",
        "no remaining credits",
        "have no credits",
        "has no credits",
        "out of credit",
        "account is overdue",
        "overdue",
        "in arrears",
        "quota is not enough",
        "quota not enough",
        "extra usage is required",
        "billing cycle",
        "额度不足",
        "额度已用尽",
        "specified api usage limits",
        "workspace api usage limits",
        // "billing is not enabled for project p-1187", "account blocked for non-payment".
        "billing is not enabled",
        "billing not enabled",
        "for non-payment",
        "余额不足",
        "欠费",
        "欠費",
        "资源包余量已用尽",
        "账户余额",
        "请充值",
        // Arrears in Russian ("заблокировано из-за задолженности").
        "задолженност",
        // Add credits in pt, es, fr, it, de, id.
        "adicione créditos",
        "adicionar créditos",
        "añade créditos",
        "agrega créditos",
        "ajoutez des crédits",
        "aggiungi crediti",
        "guthaben aufladen",
        "tambahkan kredit",
    ];
    const CONTEXT: &[&str] = &[
        "maximum context length",
        // The engines' own names for the window, compared with a prompt's tokens
        // ("len(prompt_token_ids)=8300 > max_model_len=8192", "prompt tokens 33025 > n_ctx").
        "> max_model_len",
        "> n_ctx",
        "context length exceeded",
        "context_length_exceeded",
        "exceeds the context window",
        "context size",
        "context limit",
        "exceed context limit",
        "context window",
        "prompt is too long",
        // llama.cpp: "Input prompt is too big compared to KV size".
        "prompt is too big",
        "input is too long",
        "reduce the length of the messages",
        "exceeds the maximum number of tokens",
        "maximum allowed number of output tokens",
        // OpenAI: "Could not finish the message because max_tokens or model output limit was
        // reached".
        "model output limit",
        "tokens + `max_new_tokens` must be",
        "tokens + 'max_new_tokens' must be",
        "too many input tokens",
        "input token count",
        // DashScope: "Range of input length should be [1, 30720]".
        "range of input length",
        "上下文长度",
        "超长",
    ];
    const CONTENT: &[&str] = &[
        "content management policy",
        "content policy",
        "content_filter",
        "safety system",
        "flagged as potentially violating",
        "violating our usage policy",
        "content exists risk",
        "inappropriate content",
        "sensitive words",
        "blocked due to safety",
        "不安全或敏感内容",
        "敏感内容",
        // A refusal in the first person as an error's message (an app's or gateway's guard
        // answering `{"error": "I can't help with that."}`); a completion saying it is text.
        "i cannot help with",
        "i cannot assist with",
    ];
    if let Some(p) = phrase_in(evidence, QUOTA) {
        // "Tokens per minute budget exceeded": a budget of a minute is a rate.
        if p.contains("budget") && concepts::per_minute_limit_in(&evidence.messages) {
            return Some((ErrorClass::RateLimited, format!("{p} of a minute")));
        }
        return Some((ErrorClass::QuotaExhausted, p));
    }
    if let Some(p) = allowance_used_up(evidence) {
        return Some((ErrorClass::QuotaExhausted, p));
    }
    // "Request too large" in English, zh, ja, ko, ru, pl, tr, es, fr, de, it, pt, id, vi; not
    // "Request too large: the request body exceeds 6291456 bytes", a body in bytes.
    const TOO_LARGE: &[&str] = &[
        "request too large",
        "request is too large",
        // "This request alone exceeds your tokens per minute limit".
        "request alone",
        // zh-Hans, zh-Hant, ja, ko, pt ("pedido grande demais").
        "请求过大",
        "请求太大",
        "請求過大",
        "請求太大",
        "リクエストが大きすぎ",
        "요청이 너무 큽",
        "요청이 너무 커",
        "pedido grande demais",
        "pedido muito grande",
        "запрос слишком большой",
        "żądanie jest zbyt duże",
        "istek çok büyük",
        "solicitud demasiado grande",
        "requête trop volumineuse",
        "anfrage ist zu groß",
        "anfrage zu groß",
        "richiesta troppo grande",
        "solicitação muito grande",
        "requisição muito grande",
        "permintaan terlalu besar",
        "yêu cầu quá lớn",
    ];
    let body_in_bytes = || payload_limit(evidence);
    if let Some(p) = matched_phrase(evidence, CONTEXT)
        .or_else(|| matched_phrase(evidence, TOO_LARGE).filter(|_| !body_in_bytes()))
    {
        return Some((ErrorClass::ContextOverflow, format!("message \"{p}\"")));
    }
    // "Payload is too big. Max payload size is 32MB." under a 500 (KoboldCpp): the body, in
    // bytes, is over what the server takes; sent again, it fails again.
    const OVER: &[&str] = &["too big", "too large", "exceeds", "exceeded", "max payload"];
    let body_named =
        || matched_phrase(evidence, &["payload", "request body", "body size"]).is_some();
    if status >= 500 && body_named() && body_in_bytes() {
        if let Some(p) = matched_phrase(evidence, OVER) {
            return Some((
                ErrorClass::BadRequest,
                format!("message \"{p}\", a body size limit, status={status}"),
            ));
        }
    }
    if let Some(p) = evidence
        .messages
        .iter()
        .find_map(|m| request_above_limit(m))
        .or_else(|| single_request_over_window(evidence))
    {
        return Some((ErrorClass::ContextOverflow, p));
    }
    // The provider saying its own servers, engine or model are full ("Too many requests: the
    // model claude-4-sonnet is at capacity", "Too many concurrent requests for this model. Our
    // servers are at capacity"): capacity, not the caller's limit, unless a window of the
    // caller's is stated too.
    if let Some(p) = phrase_in(evidence, CAPACITY_STATED)
        .filter(|_| !concepts::short_window_in(&evidence.messages))
    {
        return Some((ErrorClass::Overloaded, p));
    }
    // A limit on the caller's own requests in flight, whatever code carries it (Kimi's
    // `permission_error`): a wait helps. (A relay's "负载已饱和" is not read here: one-api
    // rewrites every upstream 429 to it and keeps the upstream's code, `billing_not_active`
    // or `insufficient_quota`, which tells more.)
    if let Some(p) = phrase_in(evidence, CONCURRENCY) {
        // Under a 5xx, with no word for the caller ("Too many concurrent requests" from a
        // gateway's one cap for everyone, "All available accounts have reached their
        // concurrency limit" from a relay's pool): the server's own limit, its load.
        // An upstream's 429 named in the text ("raised RateLimitError('Error code: 429 - Too
        // many concurrent requests ...')") is the caller's limit there.
        if status >= 500
            && !upstream_429_named(evidence)
            && !evidence.messages.iter().any(|m| addresses_caller(m))
        {
            return Some((
                ErrorClass::Overloaded,
                format!("{p} on the server, status={status}"),
            ));
        }
        return Some((ErrorClass::RateLimited, p));
    }
    // "Your organization has been suspended for violating our Usage Policy": the account is
    // refused, whatever it asked (read with the other concepts).
    let account_blocked = || {
        evidence
            .messages
            .iter()
            .any(|m| concepts::account_blocked(m).is_some())
    };
    // "Unrecognized request argument supplied: content_filter_policy": a field's name.
    const UNKNOWN_FIELD: &[&str] = &[
        "unrecognized request argument",
        "unrecognized argument",
        "unrecognized parameter",
        "unknown parameter",
        "unexpected keyword argument",
    ];
    let field_named = || phrase_in(evidence, UNKNOWN_FIELD).is_some();
    if let Some(p) = phrase_in(evidence, CONTENT).filter(|_| !account_blocked() && !field_named()) {
        return Some((ErrorClass::ContentPolicy, p));
    }
    if let Some(p) = wrong_path(evidence) {
        return Some((ErrorClass::BadRequest, p));
    }
    // Google's deadline, whatever status carries it (`503 UNAVAILABLE`: "Deadline expired
    // before operation could complete").
    if let Some(p) = phrase_in(evidence, &["deadline expired", "deadline exceeded"]) {
        return Some((ErrorClass::Timeout, p));
    }
    model_missing(evidence)
}

/// A provider stating that it is full, with its servers, engine or model as the subject (not
/// Cloudflare's guess that "the origin is overloaded" behind a connection timeout).
const CAPACITY_STATED: &[&str] = &[
    "is at capacity",
    "are at capacity",
    "engine is overloaded",
    "model is overloaded",
    "model is currently overloaded",
    "servers are overloaded",
    "servers are currently overloaded",
    // A model server that says it can take no more ("Cannot handle more concurrent requests
    // for model", Codeium's inference server behind gRPC's `ResourceExhausted`).
    "cannot handle more concurrent requests",
    "cannot handle more requests",
];

/// Limits on the caller's requests in flight.
const CONCURRENCY: &[&str] = &[
    "concurrent request limit",
    "concurrent requests limit",
    "concurrency limit",
    "too many concurrent requests",
    // "Number of concurrent connections for the account exceeded" (Kluster).
    "concurrent connections",
    // A relay's queue: "Request timed out waiting for concurrency slot".
    "concurrency slot",
    // The caller's own work still running on what it asks again ("Thread x already has an
    // active run", "Another process is currently operating on this conversation", "another
    // in-progress request using this idempotency key"): it ends by itself, a wait helps.
    "already has an active run",
    "already in progress",
    "another in-progress request",
    "currently operating on",
    "currently processing another",
    "still being processed",
];

/// One request larger than the whole window's limit ("on tokens per minute (TPM): Limit 7000,
/// Used 0, Requested 7895"): no wait lets it through, a model with a larger limit might.
fn request_above_limit(message: &str) -> Option<String> {
    // "Request of 96,512 tokens exceeds your tokens per minute limit of 64,000" says it too.
    let requested =
        number_after(message, "requested").or_else(|| number_after(message, "request of"))?;
    // "Requested 9000 tokens, but the model supports at most 8192": a bound of tokens (not
    // "requested 5 images, at most 4").
    let tokens = has_phrase(message, "tokens");
    let (word, limit) = ["limit", "limit of", "at most", "maximum of", "up to"]
        .iter()
        .filter(|w| w.starts_with("limit") || tokens)
        .find_map(|w| number_after(message, w).map(|n| (*w, n)))?;
    (requested > limit).then(|| format!("message \"requested {requested}\" > \"{word} {limit}\""))
}

/// One request said to exceed a minute's limit of tokens by itself ("a single request", "단일
/// 요청", "单次请求", "単一リクエスト", "a requisição sozinha", "por sí sola"): no wait lets it
/// through, a model with a larger limit might.
fn single_request_over_window(evidence: &Evidence) -> Option<String> {
    const ALONE: &[&str] = &[
        "single request",
        "request by itself",
        "request on its own",
        "단일 요청",
        "요청 하나",
        "单次请求",
        "單次請求",
        "单个请求",
        "單個請求",
        "単一リクエスト",
        "1回のリクエスト",
        "requisição sozinha",
        "pedido sozinho",
        "por sí sola",
        "por sí solo",
        "una sola solicitud",
        "una sola petición",
        // "Request of 58,000 tokens is larger than your org's 40,000 TPM limit and can never
        // be served".
        "never be served",
        "never succeed",
    ];
    if !concepts::per_minute_limit_in(&evidence.messages) {
        return None;
    }
    // "请降低单次请求 token 数或稍后重试": a wait is offered, so the window is what is full.
    const LATER: &[&str] = &["稍后", "稍後", "later"];
    evidence.messages.iter().find_map(|m| {
        let alone = phrase_of(m, ALONE)?;
        if phrase_of(m, LATER).is_some() {
            return None;
        }
        concepts::token_stem_in(m)
            .map(|_| format!("message \"{alone}\" over a minute's limit of tokens"))
    })
}

/// The number that follows `word` (after spaces, `:`, `~`, `=`), thousands separators and all.
fn number_after(message: &str, word: &str) -> Option<u64> {
    word_offsets(message, word).find_map(|at| {
        let rest = message.get(at + word.len()..)?;
        let rest = rest.trim_start_matches([' ', ':', '~', '=']);
        let digits: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ',')
            .filter(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    })
}

/// A web framework's own "no such route" page, whatever status a gateway wraps it in
/// (Express: `Cannot POST /messages`; LM Studio's server: `Unexpected endpoint or method. (POST
/// /chat/completions)`): the request's path is wrong, no model is at fault.
fn wrong_path(evidence: &Evidence) -> Option<String> {
    const METHODS: &[&str] = &[
        "cannot get /",
        "cannot post /",
        "cannot put /",
        "cannot patch /",
        "unexpected endpoint or method",
    ];
    evidence.messages.iter().find_map(|m| {
        let method = METHODS.iter().find(|p| m.contains(*p))?;
        Some(format!(
            "message \"{}\" (a wrong path)",
            method.trim_end_matches(" /")
        ))
    })
}

/// A prompt too large for the model, phrased as a token count or a length ("too many tokens:
/// size limit exceeded", "prompt too long; exceeded max context length", "Input Tokens Exceeded",
/// "the total length of all messages is too long"), unless the message speaks of a rate window
/// or a wait ("too many tokens per minute", "too many tokens, please wait" are rate limits).
fn prompt_too_large(evidence: &Evidence) -> Option<String> {
    const SIZE: &[&str] = &[
        "too many tokens",
        "prompt too long",
        "max context length",
        "context length",
        "input tokens exceeded",
        "input tokens exceeds",
        "number of input tokens",
        "messages is too long",
        "messages are too long",
        // Qianfan: "the max length of current question is 11200 characters".
        "max length of current question",
        "max length of current prompt",
    ];
    const RATE: &[&str] = &[
        "per min",
        "per minute",
        "per second",
        "per day",
        "per hour",
        // "token_per_minute=10000 exceeded".
        "per_minute",
        "per_second",
        "tpm",
        "rpm",
        "tpd",
        "rate limit",
        "wait",
        "slow down",
        "throttled",
    ];
    evidence.messages.iter().find_map(|m| {
        // "rate_limited by ai-token-ratelimit: ..., limit 20000 tokens/minute".
        let window = concepts::short_window_in(std::slice::from_ref(m));
        if window || RATE.iter().any(|r| has_phrase(m, r)) {
            return None;
        }
        SIZE.iter()
            .find(|p| has_phrase(m, p))
            .map(|p| format!("message \"{p}\""))
            .or_else(|| token_count_over_limit(m))
            .or_else(|| output_limit_over_bound(m))
    })
}

/// Words of a limit, a long window or money: a token count beside them is an allowance, not
/// the size of one request.
const ALLOWANCE_WORDS: &[&str] = &[
    "quota",
    "usage",
    "budget",
    "balance",
    "credit",
    "credits",
    "plan",
    "daily",
    "weekly",
    "monthly",
    "per day",
    "per week",
    "per month",
    "per hour",
];

/// A token count stated against a bound ("`inputs` must have less than 4096 tokens", "max
/// 300000 tokens per request").
fn token_count_over_limit(message: &str) -> Option<String> {
    const BOUND: &[&str] = &[
        "less than",
        "fewer than",
        "at most",
        "no more than",
        "up to",
        "max",
        "maximum",
        "limit",
        "limit of",
        "exceeds",
        "exceed",
    ];
    if ALLOWANCE_WORDS.iter().any(|w| has_phrase(message, w)) {
        return None;
    }
    ["tokens", "token"].iter().find_map(|unit| {
        phrase_offsets(message, unit).find_map(|at| {
            let before = message.get(..at)?.trim_end();
            let digits = before.len() - before.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            if digits < 3 {
                return None;
            }
            let head = before.get(..before.len() - digits)?.trim_end();
            let window = head.get(head.len().saturating_sub(16)..).unwrap_or(head);
            BOUND
                .iter()
                .find(|b| window.ends_with(*b) && has_phrase(window, b))
                .map(|b| format!("message \"{b} <n> {unit}\""))
        })
    })
}

/// A requested output above the model's bound ("the valid range of max_tokens is [1, 393216]",
/// "does not support max tokens > 196608"); a lower bound ("must be at least 1") is a bad value.
fn output_limit_over_bound(message: &str) -> Option<String> {
    const PARAM: &[&str] = &[
        "max_tokens",
        "max tokens",
        "max_output_tokens",
        "maxoutputtokens",
        "max_completion_tokens",
        "max_new_tokens",
        "max output tokens",
        "maxtokens",
        "maxtokencount",
    ];
    const BOUND: &[&str] = &[
        "range",
        "less or equal",
        "> ",
        "<=",
        "less than",
        "at most",
        "no more than",
        "exceed",
        "exceeds",
        "too large",
        "up to",
        "between",
        // Too large, above and at most in zh, ja, ko, de, fr, es, pt, it, ru ("max_tokens
        // 参数超出范围", "max_tokens 값이 너무 큽니다", "Der Wert für max_tokens ist zu hoch").
        "超出",
        "超过",
        "超過",
        "过大",
        "過大",
        "最多",
        "最大",
        "大きすぎ",
        "너무 큽",
        "최대",
        "zu hoch",
        "zu groß",
        "maximal",
        "trop élevé",
        "trop grand",
        "demasiado alto",
        "demasiado grande",
        "máximo",
        "troppo alto",
        "massimo",
        "слишком больш",
        "превыша",
        // Too high and the maximum in cs, ar, nl, pl, tr/id/ms, vi.
        "příliš",
        "أكبر",
        "الحد الأقصى",
        "te hoog",
        "te groot",
        "za duż",
        "maksimum",
        "quá lớn",
        "terlalu besar",
    ];
    // The bound is read near the parameter it bounds, mostly after it ("max_tokens ... is not
    // valid: integer above maximum value, expected a value <= 32768"): a traceback's `in
    // <module>` a line before a `max_tokens=64000` argument bounds nothing.
    const BEFORE: usize = 32;
    const AFTER: usize = 128;
    let (param, at) = PARAM
        .iter()
        .find_map(|p| phrase_offsets(message, p).next().map(|at| (p, at)))?;
    let from = floor_char_boundary(message, at.saturating_sub(BEFORE));
    let to = floor_char_boundary(message, at + param.len() + AFTER);
    let near = message.get(from..to)?;
    let bound = BOUND.iter().find(|b| near.contains(*b))?;
    let upper = message
        .split(|c: char| !c.is_ascii_digit())
        .any(|n| n.len() >= 3);
    upper.then(|| format!("message \"{param}\" + \"{}\"", bound.trim()))
}

/// The largest char boundary at or below `at` (clamped to the text's length).
fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A free or trial allowance that is used up ("the free tier of the model has been exhausted",
/// "trial quota exceeded"): nothing but a plan change or a reset helps.
fn allowance_used_up(evidence: &Evidence) -> Option<String> {
    const ALLOWANCE: &[&str] = &["free tier", "free quota", "free allowance", "trial"];
    const USED_UP: &[&str] = &["exhausted", "used up", "exceeded", "reached", "run out"];
    evidence.messages.iter().find_map(|m| {
        // "trial token rate limit exceeded, limit is 100000 tokens per minute": a wait helps.
        if concepts::per_minute_limit_in(std::slice::from_ref(m)) {
            return None;
        }
        // "Free tier rate limit exceeded for x. Slow down and retry shortly": the free tier's
        // rate, not its allowance (a day's window, if named, is read with the rate limit).
        if has_phrase(m, "rate limit") {
            return None;
        }
        let allowance = ALLOWANCE.iter().find(|a| has_phrase(m, a))?;
        let used = USED_UP.iter().find(|u| has_phrase(m, u))?;
        Some(format!("message \"{allowance}\" + \"{used}\""))
    })
}

/// "The model `x` does not exist", "model 'llama3' not found", "No endpoints found for ...",
/// "models/gemini-1.0-pro is not found for API version v1beta", "is currently loading".
fn model_missing(evidence: &Evidence) -> Option<Decision> {
    const ABOUT_MODEL: &[&str] = &[
        "does not exist",
        // A router with no provider left for the model ("No available providers for the
        // requested models", "no endpoints available for this model under your current plan").
        "no available providers",
        "no available provider",
        "no endpoints available",
        // A local server's model or adapter not in memory ("Model qwen2.5 is not loaded").
        "not loaded",
        "not found",
        "decommissioned",
        "has been deprecated",
        "is deprecated",
        "retired",
        "no longer available",
        "no longer supported",
        "is currently loading",
        "not allowed to use",
        "have access to the model",
        "access to the model",
        "access to this model",
        "access to model",
        // Hugging Face's gated repositories: a model's licence not yet accepted.
        "gated model",
        "gated repo",
        "model access is denied",
        "on-demand throughput is not supported",
        "is not supported for generatecontent",
        "not available in your region",
        "is missing conversation_config",
        "模型不存在",
        // Discontinued ("서비스가 종료되었습니다", "提供を終了しました", "已停止服务").
        "서비스가 종료",
        "서비스 종료",
        "提供を終了",
        "停止服务",
        "停止服務",
        // Still starting ("NIM is still starting: downloading model profile ..."): it is
        // being loaded.
        "still starting",
        "downloading model",
        // Still loading ("モデル 'x' を読み込み中です", "模型加载中").
        "読み込み中",
        "ロード中",
        "加载中",
        "載入中",
        "로딩 중",
        "로드 중",
    ];
    const ALONE: &[&str] = &[
        "no endpoints found",
        // OpenRouter's newer words: "0 endpoints out of 1 requested are available matching
        // your guardrail restrictions and data policy".
        "0 endpoints out of",
        // OpenRouter: "There is no available model provider that meets your routing requirements".
        "no available model provider",
        // Zhipu 1221: "API glm-4 已下线" (taken offline).
        "已下线",
        "已下線",
        "no available channel",
        "no available channels",
        // "no upstream channel serves model qwen-max for group 'default'".
        "no upstream channel",
        "no channel serves",
        "无可用渠道",
        // No available channel (es, pt): "No hay canales disponibles para el modelo x".
        "brak dostępnego kanału",
        "no hay canales disponibles",
        "sin canales disponibles",
        "não há canais disponíveis",
        "nenhum canal disponível",
        "deployment for this resource does not exist",
        "model not exist",
        "location is not supported",
        // "image_url is only supported by certain models": a capability this model lacks.
        "only supported by certain models",
        // vLLM's "Qwen/Qwen2.5-7B-Instruct is not a multimodal model" (images sent to a text
        // model).
        "not a multimodal model",
        "not a vision model",
        // A local server with nothing loaded (LM Studio, text-generation-webui).
        "no model is loaded",
        "no model loaded",
        "no models loaded",
        // A serving endpoint starting from nothing ("scaled to zero and is starting up"), or
        // put to sleep (vLLM's and lmdeploy's sleep mode: "Engine is sleeping; call POST
        // /wakeup"): someone must wake it.
        "scaled to zero",
        "is sleeping",
    ];
    // "has no remaining credits. Deployments have been scaled to zero": the stop is why.
    if let Some(p) = phrase_in(evidence, ALONE) {
        if concepts::quota_in(&evidence.messages).is_none() {
            return Some((ErrorClass::ModelUnavailable, p));
        }
    }
    if let Some(p) = evidence.messages.iter().find_map(|m| {
        concepts::geo_blocked(m)
            .or_else(|| concepts::serving_stopped(m))
            .or_else(|| access_to_model_id(m))
            .or_else(|| named_model_refused(m))
    }) {
        return Some((ErrorClass::ModelUnavailable, p));
    }
    // The phrase first (ruled out by the message's pairs, usually), then whether the message
    // speaks of a model.
    evidence.messages.iter().find_map(|m| {
        let p = pairs::with(m, |held| {
            ABOUT_MODEL
                .iter()
                .find(|p| held.may_hold(p) && has_phrase(m, p))
        })?;
        if !mentions_model(m)
            || concepts::parameter_refused(m).is_some()
            || concepts::field_required(m)
        {
            return None;
        }
        Some((ErrorClass::ModelUnavailable, format!("message \"{p}\"")))
    })
}

/// No access to a model named by its id ("Your organization does not have access to
/// claude-opus-4-1-20250805"), whatever permission code the answer carries: another model
/// serves the caller.
fn access_to_model_id(message: &str) -> Option<String> {
    if !pairs::may_hold(message, "access to ") {
        return None;
    }
    message.match_indices("access to ").find_map(|(i, p)| {
        let next = message.get(i + p.len()..)?.split(' ').next()?;
        let id = concepts::model_id_in(next)?.trim_end_matches(['.', ',', ';', ':']);
        Some(format!("message \"access to\" + \"{id}\""))
    })
}

/// A model named and refused ("Model 'gpt-5.6-terra' is not allowed for this virtual key",
/// `model "anthropic/claude-2" is not allowed, allowed: [...]`, "Model gemini-1.0-pro is not
/// supported"): a gateway's list of the models it serves or a key may use, another of which
/// serves. The name is quoted, or one word shaped like an id (a digit, `-`, `/`, `:` or `.` in
/// it), so "Model field is not allowed" names no model. A parameter refused "with this model"
/// names no model before its verb.
fn named_model_refused(message: &str) -> Option<String> {
    const REFUSED: &[&str] = &[
        " is not allowed",
        " is not supported",
        " not supported",
        " is unsupported",
        " is not enabled",
    ];
    if !["not allowed", "supported", "not enabled"]
        .iter()
        .any(|p| pairs::may_hold(message, p))
    {
        return None;
    }
    // "model X", or a field's label ("model: X", "model_id: X", "model id X"): one scan for
    // "model", then its labels.
    const LABELS: &[&str] = &[" ", ": ", "_id: ", " id "];
    let mut labelled = occurrences(message.as_bytes(), b"model").flat_map(|at| {
        let after = message.get(at + "model".len()..).unwrap_or_default();
        LABELS
            .iter()
            .filter_map(move |label| after.strip_prefix(label))
    });
    labelled.find_map(|rest| {
        let (name, after) = match rest.chars().next() {
            // Quoted, or in parentheses ("the requested base model (auto) is not allowed").
            Some(open @ ('\'' | '"' | '`' | '(')) => {
                let quote = if open == '(' { ')' } else { open };
                let close = rest.get(1..)?.find(quote)? + 1;
                (rest.get(1..close)?, rest.get(close + 1..)?)
            }
            _ => {
                let end = rest.find(' ').unwrap_or(rest.len());
                let word = rest.get(..end)?;
                let id_like = word
                    .bytes()
                    .any(|b| b.is_ascii_digit() || b"-/:.".contains(&b))
                    && word.bytes().any(|b| b.is_ascii_alphabetic());
                (id_like.then_some(word)?, rest.get(end..)?)
            }
        };
        let named = !name.is_empty() && name.len() <= 128 && !name.contains(' ');
        let verb = REFUSED.iter().find(|v| after.starts_with(**v))?;
        named.then(|| format!("message model \"{name}\" + \"{}\"", verb.trim_start()))
    })
}

/// Whether a message speaks of a model ("the model `x`", "models/gemini-1.0-pro", "模型").
fn mentions_model(message: &str) -> bool {
    has_phrase(message, "model")
        || message.contains("models/")
        || concepts::model_word_in(message)
        || concepts::model_id_in(message).is_some()
        || deployed_endpoint_named(message)
}

/// Whether any message names a model as a word ("model: claude-x", "unknown model"); a path
/// such as `/v1/models/x` in a wrong-URL message does not count.
fn names_model(evidence: &Evidence) -> bool {
    evidence.messages.iter().any(|m| {
        concepts::model_word_as_word_in(m) || model_id_outside_path(m) || deployed_endpoint_named(m)
    })
}

/// A model's deployment named by its resource: Vertex's "Endpoint `projects/5/locations/
/// us-east4/endpoints/8841207765` not found", SageMaker's "Endpoint llm-7b of account
/// 903355118201 not found". Not an endpoint of an API's paths ("The requested endpoint was not
/// found", "No API found for 'POST /serving-endpoints/chat-bot/invocation'").
fn deployed_endpoint_named(message: &str) -> bool {
    let google = message.match_indices("/endpoints/").any(|(at, found)| {
        message
            .get(..at)
            .is_some_and(|before| before.contains("projects/"))
            && message
                .get(at + found.len()..)
                .is_some_and(|id| id.starts_with(|c: char| c.is_ascii_digit()))
    });
    let sagemaker = phrase_offsets(message, "endpoint").any(|at| {
        let rest = message.get(at + "endpoint".len()..).unwrap_or_default();
        let mut words = rest.split_whitespace();
        let named = words.next().is_some_and(|name| !name.contains('/'));
        named
            && words.next() == Some("of")
            && words.next() == Some("account")
            && words
                .next()
                .is_some_and(|id| id.bytes().all(|b| b.is_ascii_digit()))
    });
    google || sagemaker
}

/// A model named by its id ("codellama:34b-python is not on this server"), not as a part of a
/// path a proxy could not route ("Could not route to /client/v4/.../@cf/meta/llama-3.1-8b").
fn model_id_outside_path(message: &str) -> bool {
    const PATH: &[&str] = &["url", "uri", "route", "path", "proxy"];
    concepts::model_id_in(message).is_some()
        && !message.contains("/v1")
        && !PATH.iter().any(|w| has_phrase(message, w))
}

/// "Not found" codes say nothing about what was not found: a model only when a message names
/// one (Anthropic `not_found_error` "model: claude-x", Google `NOT_FOUND` "models/x is not
/// found"); else a mistyped path or resource, which must not cool the model for everyone.
const NOT_FOUND_CODES: &[&str] = &[
    "not_found_error",
    "notfounderror",
    "not_found",
    "resourcenotfoundexception",
];

/// Alibaba Cloud Model Studio (DashScope) sends its tokens-per-minute limit as
/// `Throttling.AllocationQuota` "Allocated quota exceeded", and in its OpenAI-compatible mode as
/// OpenAI's quota stop word for word (`insufficient_quota`, "You exceeded your current quota"),
/// with a link to its own error-code page. Its rate-limit page says both clear within a minute:
/// a wait, not a stop. ("Free allocated quota exceeded", a free tier used up, stays a stop.)
fn model_studio_throttle(code: &evidence::Code, evidence: &Evidence) -> Option<Decision> {
    is_model_studio_throttle(code, evidence).then(|| {
        (
            ErrorClass::RateLimited,
            format!(
                "{}={} (Model Studio's per-minute limit)",
                code.field, code.value
            ),
        )
    })
}

fn is_model_studio_throttle(code: &evidence::Code, evidence: &Evidence) -> bool {
    let messages = &evidence.messages;
    let listed = match code.value.as_str() {
        // Model Studio's `limit_requests` ("You have exceeded your current request limit"):
        // its requests per minute.
        "throttling.allocationquota" | "limit_requests" => true,
        "insufficient_quota" => messages
            .iter()
            .any(|m| m.contains("aliyun.com/") || m.contains("alibabacloud.com/")),
        _ => false,
    };
    // "week allocated quota exceeded", "Free allocated quota exceeded": a window or a free tier
    // named is what ran out.
    let named = || {
        ["free", "day", "week", "month"]
            .iter()
            .any(|w| messages.iter().any(|m| has_phrase(m, w)))
    };
    listed && !named() && !long_window_stated(evidence)
}

/// Codes that mean one thing wherever they appear (compared lowercased).
const SPECIFIC_CODES: &[(&str, ErrorClass)] = &[
    // Quota, billing, balance.
    ("insufficient_quota", ErrorClass::QuotaExhausted),
    ("billing_hard_limit_reached", ErrorClass::QuotaExhausted),
    ("billing_not_active", ErrorClass::QuotaExhausted),
    ("insufficient_balance", ErrorClass::QuotaExhausted),
    ("insufficient_user_quota", ErrorClass::QuotaExhausted),
    ("exceeded_current_quota_error", ErrorClass::QuotaExhausted),
    ("quota_exhausted", ErrorClass::QuotaExhausted),
    ("payment_required", ErrorClass::QuotaExhausted),
    ("arrearage", ErrorClass::QuotaExhausted),
    ("servicequotaexceededexception", ErrorClass::QuotaExhausted),
    // Azure's management plane: a deployment asks for more of a quota (even one counted per
    // minute) than the subscription has left; only a quota increase helps.
    ("insufficientquota", ErrorClass::QuotaExhausted),
    (
        "failedoperation.resourcepackexhausted",
        ErrorClass::QuotaExhausted,
    ),
    (
        "resourceinsufficient.chargestatusexception",
        ErrorClass::QuotaExhausted,
    ),
    (
        "failedoperation.servicenotactivated",
        ErrorClass::QuotaExhausted,
    ),
    ("failedoperation.serviceStop", ErrorClass::QuotaExhausted),
    ("1113", ErrorClass::QuotaExhausted), // Zhipu: balance exhausted
    ("30011", ErrorClass::QuotaExhausted), // SiliconFlow: paid balance insufficient
    // Rate limits.
    ("rate_limit_exceeded", ErrorClass::RateLimited),
    ("rate_limit_error", ErrorClass::RateLimited),
    ("rate_limit_reached_error", ErrorClass::RateLimited),
    ("rpm_rate_limit_exceeded", ErrorClass::RateLimited),
    ("tpm_rate_limit_exceeded", ErrorClass::RateLimited),
    ("ratelimitexceeded", ErrorClass::RateLimited),
    ("rate_limited", ErrorClass::RateLimited),
    ("too_many_requests", ErrorClass::RateLimited),
    ("throttlingexception", ErrorClass::RateLimited),
    ("throttling", ErrorClass::RateLimited),
    ("throttling.ratequota", ErrorClass::RateLimited),
    ("throttling.user", ErrorClass::RateLimited),
    ("limitexceeded", ErrorClass::RateLimited),
    ("requestlimitexceeded", ErrorClass::RateLimited),
    (
        "failedoperation.engineserverlimitexceeded",
        ErrorClass::RateLimited,
    ),
    ("1302", ErrorClass::RateLimited), // Zhipu: concurrency / rate limit
    ("336501", ErrorClass::RateLimited), // Baidu Qianfan: RPM
    ("336502", ErrorClass::RateLimited), // Baidu Qianfan: TPM
    // Overload and upstream-side failures.
    ("overloaded_error", ErrorClass::Overloaded),
    ("overloaded", ErrorClass::Overloaded),
    ("server_overloaded", ErrorClass::Overloaded),
    ("engine_overloaded", ErrorClass::Overloaded),
    ("engine_overloaded_error", ErrorClass::Overloaded),
    ("service_unavailable", ErrorClass::Overloaded),
    ("serviceunavailable", ErrorClass::Overloaded),
    ("serviceunavailableexception", ErrorClass::Overloaded),
    ("unavailable", ErrorClass::Overloaded),
    // OpenAI's flex processing: "429 Resource Unavailable" when no capacity is free for the
    // cheaper tier (not charged); the standard tier, or a wait, serves.
    ("resource_unavailable", ErrorClass::Overloaded),
    ("internalserverexception", ErrorClass::Overloaded),
    ("modelstreamerrorexception", ErrorClass::Overloaded),
    ("cf_bad_gateway", ErrorClass::Overloaded),
    ("throttling.allocationquota", ErrorClass::RateLimited),
    ("modelerrorexception", ErrorClass::Overloaded),
    ("1305", ErrorClass::Overloaded),        // Zhipu: model busy
    ("1311", ErrorClass::ModelUnavailable),  // Zhipu: the plan does not include the model
    ("336007", ErrorClass::ContextOverflow), // Qianfan: "the max length of current question is N"
    ("336103", ErrorClass::ContextOverflow), // Qianfan: the prompt is too long
    // Volcengine Ark: the account has not activated the model's service (403 and 404).
    (
        "operationdenied.servicenotopen",
        ErrorClass::ModelUnavailable,
    ),
    ("modelnotopen", ErrorClass::ModelUnavailable),
    // Ark's Safe Experience Mode: the spend cap the account set on a model is reached (429,
    // typed `TooManyRequests` or `Forbidden`); it holds until the owner lifts it.
    ("setlimitexceeded", ErrorClass::QuotaExhausted),
    ("50603", ErrorClass::Overloaded), // SiliconFlow: system too busy
    ("resourceinsufficient", ErrorClass::Overloaded),
    // Timeouts.
    ("timeout", ErrorClass::Timeout),
    ("request_timeout", ErrorClass::Timeout),
    ("deadline_exceeded", ErrorClass::Timeout),
    ("modeltimeoutexception", ErrorClass::Timeout),
    ("cf_gateway_timeout", ErrorClass::Timeout),
    ("user_request_timeout", ErrorClass::Timeout),
    ("gateway_timeout", ErrorClass::Timeout),
    // Models.
    ("model_not_found", ErrorClass::ModelUnavailable),
    // OpenAI's region block, whatever language a relay words it in.
    (
        "unsupported_country_region_territory",
        ErrorClass::ModelUnavailable,
    ),
    ("model_not_accessible", ErrorClass::ModelUnavailable),
    ("model_not_available", ErrorClass::ModelUnavailable),
    ("model_decommissioned", ErrorClass::ModelUnavailable),
    ("model_deprecated", ErrorClass::ModelUnavailable),
    ("deploymentnotfound", ErrorClass::ModelUnavailable),
    ("modelnotreadyexception", ErrorClass::ModelUnavailable),
    (
        "dedicated_endpoint_not_running",
        ErrorClass::ModelUnavailable,
    ),
    // Context windows.
    ("context_length_exceeded", ErrorClass::ContextOverflow),
    ("too_many_tokens", ErrorClass::ContextOverflow),
    ("too_many_prompt_tokens", ErrorClass::ContextOverflow),
    ("context_window_exceeded", ErrorClass::ContextOverflow),
    // Anthropic's 413: "Request exceeds the maximum allowed number of bytes", a body size no
    // model takes (a prompt too large for the window is `invalid_request_error` there).
    ("request_too_large", ErrorClass::BadRequest),
    // OpenAI's per-field cap (10 MiB strings), checked before any model: a larger window does
    // not help, the request must be cut.
    ("string_above_max_length", ErrorClass::BadRequest),
    // ... and its cap on arrays ("Invalid 'tools': array too long").
    ("array_above_max_length", ErrorClass::BadRequest),
    // Content policy.
    ("content_policy_violation", ErrorClass::ContentPolicy),
    ("hooks_failed", ErrorClass::ContentPolicy), // Portkey: a guardrail's check failed
    ("content_filter", ErrorClass::ContentPolicy),
    // OpenAI's image edits: "Your request was blocked ... public figures is not supported".
    ("moderation_blocked", ErrorClass::ContentPolicy),
    // DashScope's image models: "Input data is suspected of being involved in IP infringement".
    ("ipinfringementsuspect", ErrorClass::ContentPolicy),
    ("schema_violation", ErrorClass::BadRequest),
    ("responsibleaipolicyviolation", ErrorClass::ContentPolicy),
    ("data_inspection_failed", ErrorClass::ContentPolicy),
    ("datainspectionfailed", ErrorClass::ContentPolicy),
    ("safety", ErrorClass::ContentPolicy),
    ("prohibited_content", ErrorClass::ContentPolicy),
    ("refusal", ErrorClass::ContentPolicy), // Anthropic `stop_reason`
    ("blocklist", ErrorClass::ContentPolicy),
    // Stop reasons of refused answers (`evidence::REFUSED_STOPS`).
    ("content_filtered", ErrorClass::ContentPolicy),
    ("content-filter", ErrorClass::ContentPolicy), // the AI SDK's finishReason
    ("sensitive", ErrorClass::ContentPolicy),
    ("spii", ErrorClass::ContentPolicy),
    ("recitation", ErrorClass::ContentPolicy),
    ("image_safety", ErrorClass::ContentPolicy),
    ("image_prohibited_content", ErrorClass::ContentPolicy),
    ("image_recitation", ErrorClass::ContentPolicy),
    ("guardrail_intervened", ErrorClass::ContentPolicy),
    ("error_toxic", ErrorClass::ContentPolicy),
    // Stop reasons of answers cut for another cause (`evidence::FAILED_STOPS`).
    ("model_context_window_exceeded", ErrorClass::ContextOverflow),
    ("model_length", ErrorClass::ContextOverflow),
    ("error_limit", ErrorClass::ContextOverflow),
    ("insufficient_system_resource", ErrorClass::Overloaded),
    ("network_error", ErrorClass::Overloaded),
    ("malformed_function_call", ErrorClass::BadRequest),
    ("unexpected_tool_call", ErrorClass::BadRequest),
    ("blacklist", ErrorClass::ContentPolicy), // GigaChat: a topic it does not answer
    ("prompt_blocked", ErrorClass::ContentPolicy), // Gemini's promptFeedback, any blockReason
    ("1301", ErrorClass::ContentPolicy),      // Zhipu: unsafe content
    // Credentials.
    ("invalid_api_key", ErrorClass::Auth),
    // OpenAI: "Your access was terminated due to violation of our policies".
    ("access_terminated", ErrorClass::Auth),
    ("incorrect_api_key", ErrorClass::Auth),
    ("invalidapikey", ErrorClass::Auth),
    ("authentication_error", ErrorClass::Auth),
    ("permission_error", ErrorClass::Auth),
    ("permission_denied", ErrorClass::Auth),
    ("unauthenticated", ErrorClass::Auth),
    ("unauthorized", ErrorClass::Auth),
    ("accessdeniedexception", ErrorClass::Auth),
    ("unrecognizedclientexception", ErrorClass::Auth),
    ("account_deactivated", ErrorClass::Auth),
    // Slack's `{"ok": false, "error": "invalid_auth"}` and its kin.
    ("invalid_auth", ErrorClass::Auth),
    ("not_authed", ErrorClass::Auth),
    ("missing_scope", ErrorClass::Auth),
    ("token_revoked", ErrorClass::Auth),
    ("api_key_invalid", ErrorClass::Auth),
];

/// Codes too broad to decide before the message is read.
const GENERIC_CODES: &[(&str, ErrorClass)] = &[
    ("invalid_request_error", ErrorClass::BadRequest),
    ("invalid_argument", ErrorClass::BadRequest),
    ("validationexception", ErrorClass::BadRequest),
    ("badrequesterror", ErrorClass::BadRequest),
    ("bad_request", ErrorClass::BadRequest),
    ("invalid_parameter", ErrorClass::BadRequest),
    ("invalid_param", ErrorClass::BadRequest),
    ("invalidparameter", ErrorClass::BadRequest),
    ("failed_precondition", ErrorClass::BadRequest),
    // A 403's reason phrase as a code says no more than the 403: "The model x requires a
    // subscription", "you must first accept the model's terms" say what.
    ("forbidden", ErrorClass::Auth),
    // "Something failed on our side": the message says what (Anthropic `api_error` with
    // "Unauthorized", OpenAI `server_error` with "The model is overloaded").
    ("server_error", ErrorClass::Overloaded),
    ("api_error", ErrorClass::Overloaded),
    ("internal_server_error", ErrorClass::Overloaded),
    ("internalservererror", ErrorClass::Overloaded),
    ("internal", ErrorClass::Overloaded),
];

/// Baidu's small numeric `error_code`s mean something only in that field.
/// MiniMax's `base_resp.status_code` (its error-code reference), only in that envelope: the
/// numbers mean other things elsewhere. Its messages are a word or two ("token limit"). Not 2013,
/// "invalid params": its message says which ("invalid params, unknown model 'x'") and decides.
const MINIMAX_CODES: &[(&str, ErrorClass)] = &[
    ("1001", ErrorClass::Timeout),
    ("1002", ErrorClass::RateLimited),
    ("1004", ErrorClass::Auth),
    ("1008", ErrorClass::QuotaExhausted),
    ("1013", ErrorClass::Overloaded),
    ("1026", ErrorClass::ContentPolicy),
    ("1027", ErrorClass::ContentPolicy),
    ("1039", ErrorClass::RateLimited), // token limit (per minute)
    ("1041", ErrorClass::RateLimited), // connection limit
    ("1042", ErrorClass::BadRequest),  // too many illegal characters
    ("2045", ErrorClass::RateLimited), // rate growth limit
    ("2049", ErrorClass::Auth),        // invalid API key
];

const BAIDU_ERROR_CODES: &[(&str, ErrorClass)] = &[
    ("4", ErrorClass::Overloaded),      // cluster over capacity
    ("17", ErrorClass::QuotaExhausted), // daily request limit reached
    ("18", ErrorClass::RateLimited),    // QPS limit reached
    ("19", ErrorClass::QuotaExhausted), // total request limit reached
];

/// JSON-RPC 2.0's reserved codes (MCP servers, JSON-RPC gateways), negative and so no other
/// table's: a request the server could not take, its own failure, MCP's request timeout.
const JSON_RPC_CODES: &[(&str, ErrorClass)] = &[
    ("-32700", ErrorClass::BadRequest), // parse error
    ("-32600", ErrorClass::BadRequest), // invalid request
    ("-32601", ErrorClass::BadRequest), // method not found
    ("-32602", ErrorClass::BadRequest), // invalid params
    ("-32603", ErrorClass::Overloaded), // internal error
    ("-32001", ErrorClass::Timeout),    // MCP: request timed out
];

/// Numeric codes read only in the envelope field that gives them their meaning.
const FIELD_CODES: &[(&str, &[(&str, ErrorClass)])] = &[
    ("error_code", BAIDU_ERROR_CODES),
    ("base_resp.status_code", MINIMAX_CODES),
    ("error.code", JSON_RPC_CODES),
];

fn specific_code(evidence: &Evidence, now_unix_ms: u64, status: u16) -> Option<Decision> {
    // Google's `ErrorInfo.reason` says more than its canonical status: `BILLING_DISABLED` under
    // `PERMISSION_DENIED` is a billing stop, not a bad key.
    const GOOGLE_REASONS: &[(&str, ErrorClass)] = &[
        ("billing_disabled", ErrorClass::QuotaExhausted),
        ("api_key_invalid", ErrorClass::Auth),
        ("api_key_expired", ErrorClass::Auth),
    ];
    // A code that refuses the model (Google's reason `MODEL_NOT_ALLOWLISTED` under
    // `PERMISSION_DENIED`, `model_not_allowed` beside `permission_error`): the model is kept
    // from this caller, another serves; read before the codes that only say "refused".
    let reason_class = |c: &evidence::Code| {
        let listed = GOOGLE_REASONS
            .iter()
            .find(|(r, _)| c.field == "error.details.reason" && *r == c.value);
        if listed.is_none() && !c.value.contains("model") {
            return None;
        }
        listed.map(|(_, class)| *class).or_else(|| {
            concepts::code_class(&c.value, false)
                .map(|(class, _)| class)
                .filter(|class| *class == ErrorClass::ModelUnavailable)
        })
    };
    if let Some((code, class)) = evidence
        .codes
        .iter()
        .find_map(|c| reason_class(c).map(|class| (c, class)))
    {
        return Some((class, format!("{}={}", code.field, code.value)));
    }
    // An HTTP reason phrase as a code (`"type": "Forbidden"`) says no more than a status: any
    // other code speaks first (Ark's `SetLimitExceeded` typed `Forbidden`).
    let named = |status_name: bool| {
        evidence
            .codes
            .iter()
            .filter(move |c| concepts::is_status_name(&c.value) == status_name)
    };
    for code in named(false).chain(named(true)) {
        let scoped = FIELD_CODES
            .iter()
            .filter(|(field, _)| *field == code.field)
            .flat_map(|(_, codes)| codes.iter())
            .find(|(name, _)| *name == code.value);
        if let Some((_, class)) = scoped {
            return Some(code_decides(*class, code, evidence, status));
        }
        if code.value == "resource_exhausted" {
            // Google says which: `ErrorInfo.reason` MODEL_CAPACITY_EXHAUSTED is its capacity.
            if evidence
                .codes
                .iter()
                .any(|c| c.value == "model_capacity_exhausted")
            {
                return Some((
                    ErrorClass::Overloaded,
                    "reason=MODEL_CAPACITY_EXHAUSTED".into(),
                ));
            }
            return Some(google_resource_exhausted(evidence, now_unix_ms));
        }
        if NOT_FOUND_CODES.contains(&code.value.as_str()) {
            if names_model(evidence) {
                return Some((
                    ErrorClass::ModelUnavailable,
                    format!("{}={}", code.field, code.value),
                ));
            }
            continue;
        }
        // A code that names the model as not found (`InvalidEndpointOrModel.NotFound`,
        // `ModelNotFound`, `model_not_exist`).
        let v = code.value.as_str();
        // Or, starting with the model, as not supported (Dify's `model_currently_not_support`).
        let unsupported = v.starts_with("model")
            && ["not_support", "notsupport", "unsupported"]
                .iter()
                .any(|n| v.contains(n));
        if unsupported
            || v.contains("model")
                && ["notfound", "not_found", "notexist", "not_exist"]
                    .iter()
                    .any(|n| v.contains(n))
        {
            return Some((
                ErrorClass::ModelUnavailable,
                format!("{}={}", code.field, code.value),
            ));
        }
        // DashScope's `AllocationQuota.*` family: a free or allotted quota is used up.
        if v.starts_with("allocationquota") {
            return Some((
                ErrorClass::QuotaExhausted,
                format!("{}={}", code.field, code.value),
            ));
        }
        // Tencent's `AuthFailure.*`, `ResourceInsufficient.*` families.
        if code.value.starts_with("authfailure") {
            return Some((ErrorClass::Auth, format!("{}={}", code.field, code.value)));
        }
        // A request too large that counts tokens ("excede a janela de contexto do modelo:
        // 1.200.000 tokens", "70.000 tokens, acima do limite de 40.000 tokens por minuto") is a
        // prompt too large, whatever its code says of the body; one that counts bytes is not.
        if v == "request_too_large" {
            let counted = prompt_too_large(evidence).or_else(|| {
                evidence.messages.iter().find_map(|m| {
                    concepts::too_large(m).or_else(|| {
                        concepts::token_stem_in(m).map(|t| format!("counted in \"{t}\""))
                    })
                })
            });
            if let Some(p) = counted {
                let reason = format!("{}={}, {p}", code.field, code.value);
                return Some((ErrorClass::ContextOverflow, reason));
            }
        }
        if let Some(decision) = model_studio_throttle(code, evidence) {
            return Some(decision);
        }
        let found = SPECIFIC_CODES
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(&code.value));
        if let Some((_, class)) = found {
            let reason = format!("{}={}", code.field, code.value);
            let messages = &evidence.messages;
            // A permission code is not always a refused key. The message may say the model is
            // refused ("gemini-2.5-pro is not available on the free tier", "您没有权限访问模型
            // step-2-16k"): another model serves. Or it may state a rate ("Too many requests: 61 requests in the last 60
            // seconds"): a refused key states no window; waiting helps.
            if *class == ErrorClass::Auth {
                let permission = code.value.contains("permission");
                let model = permission
                    .then(|| {
                        messages.iter().find_map(|m| {
                            concepts::model_missing(m)
                                .or_else(|| concepts::model_permission_denied(m))
                        })
                    })
                    .flatten();
                if let Some(m) = model {
                    return Some((ErrorClass::ModelUnavailable, format!("{reason}, {m}")));
                }
                let rate = ["too many requests", "rate limit"]
                    .iter()
                    .find(|p| messages.iter().any(|m| has_phrase(m, p)));
                if let Some(p) = rate.filter(|_| concepts::short_window_in(messages)) {
                    return Some((ErrorClass::RateLimited, format!("{reason}, \"{p}\"")));
                }
                // Or, as a permission refused, a plan's window used up ("You've reached your
                // 5-hour usage limit"): a refused permission states no allowance. Not under
                // a failed authentication ("all accounts exhausted (dead session tokens)").
                if permission {
                    if let Ok(stop) = allowance_over_weak((*class, reason.clone()), evidence) {
                        return Some(stop);
                    }
                }
            }
            // A rate code over the provider's load ("The engine is currently overloaded",
            // "throttled due to system capacity limits"): its load.
            if *class == ErrorClass::RateLimited && !concepts::short_window_in(messages) {
                if let Some(c) = concepts::load_in(messages) {
                    return Some((ErrorClass::Overloaded, format!("{reason}, {c}")));
                }
            }
            return Some(code_decides(*class, code, evidence, status));
        }
    }
    None
}

/// A quota violation whose limit is zero ("Quota exceeded for metric: x, limit: 0", "The
/// following quotas are exceeded: ... Quota 'custom_model_serving_nvidia_h100_gpus' has limit
/// 0 in region europe-west4"); not a usage count ("Minute limit: 0 / 1600000 tokens") nor a
/// fraction ("limit: 0.5").
fn granted_none(message: &str) -> bool {
    const ZERO: &[&str] = &["limit: 0", "has limit 0", "limit of 0"];
    let zero = ZERO.iter().any(|z| {
        phrase_offsets(message, z).any(|at| {
            let rest = message.get(at + z.len()..).unwrap_or("");
            let fraction = rest
                .strip_prefix('.')
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()));
            !rest.trim_start().starts_with('/') && !fraction
        })
    });
    zero && ["quota exceeded", "quotas are exceeded", "quota is exceeded"]
        .iter()
        .any(|q| has_phrase(message, q))
}

/// Google's free-tier request quota named with a limit above any free tier's requests per
/// minute (at most 30 in Google's published tables; a day's are 20 to thousands): "Quota
/// exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests,
/// limit: 500" is a day's requests used up, whatever "Please retry in 39s" beside it says (Google
/// states a retry delay for every window). A relay that drops the quota id leaves only this.
fn free_tier_daily_requests(evidence: &Evidence) -> Option<String> {
    const METRIC: &str = "free_tier_requests, limit: ";
    evidence.messages.iter().find_map(|m| {
        let at = m.find(METRIC)? + METRIC.len();
        let rest = m.get(at..)?;
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let limit: u64 = rest.get(..end)?.parse().ok()?;
        (limit > 30).then(|| format!("a free tier's {limit} requests (a day's)"))
    })
}

/// Google's `RESOURCE_EXHAUSTED` with a quota id whose window is known (or a limit of zero):
/// read before the words, which are the same for every window ("You exceeded your current
/// quota, please check your plan and billing details" over a per-minute free-tier limit of 10
/// is a wait of seconds).
fn google_quota_window(evidence: &Evidence, now_unix_ms: u64) -> Option<Decision> {
    let exhausted = resource_exhausted(evidence);
    let known = evidence
        .quota_ids
        .iter()
        .any(|id| quota_window(id).is_some());
    (exhausted && known).then(|| google_resource_exhausted(evidence, now_unix_ms))
}

/// Whether a code is Google's `RESOURCE_EXHAUSTED`.
fn resource_exhausted(evidence: &Evidence) -> bool {
    evidence
        .codes
        .iter()
        .any(|c| c.value == "resource_exhausted")
}

/// Google's `RESOURCE_EXHAUSTED` covers per-minute limits, daily quotas and shared capacity;
/// the quota ids, retry info and message tell them apart.
fn google_resource_exhausted(evidence: &Evidence, now_unix_ms: u64) -> Decision {
    // "Quota exceeded for metric: ..., limit: 0": the plan grants none of it, whatever window
    // the quota id names; no wait helps until the plan changes.
    if evidence.messages.iter().any(|m| granted_none(m)) {
        let reason = "message \"limit: 0\" (none granted)".to_owned();
        return (ErrorClass::QuotaExhausted, reason);
    }
    if evidence.quota_granted_none {
        let reason = "quota limit value 0 (none granted)".to_owned();
        return (ErrorClass::QuotaExhausted, reason);
    }
    let window = evidence
        .quota_ids
        .iter()
        .find_map(|id| quota_window(id).map(|w| (w, id)));
    match window {
        Some((Window::Long, id)) => {
            return (ErrorClass::QuotaExhausted, format!("quotaId={id}"));
        }
        Some((Window::Short, id)) => return (ErrorClass::RateLimited, format!("quotaId={id}")),
        None => {}
    }
    if let Some(day) = free_tier_daily_requests(evidence) {
        return (
            ErrorClass::QuotaExhausted,
            format!("RESOURCE_EXHAUSTED, {day}"),
        );
    }
    let plausible = |s: Option<wait::Stated>| s.and_then(wait::Stated::ms).is_some();
    let retry_info = evidence
        .json
        .as_ref()
        .is_some_and(|j| plausible(wait::body_fields(j, now_unix_ms)))
        || evidence
            .messages
            .iter()
            .any(|m| plausible(wait::from_message(m)));
    if retry_info {
        return (
            ErrorClass::RateLimited,
            "status=RESOURCE_EXHAUSTED with a retry delay".into(),
        );
    }
    if let Some(p) = phrase_in(evidence, &["per minute", "per_minute", "per second"]) {
        return (ErrorClass::RateLimited, format!("RESOURCE_EXHAUSTED, {p}"));
    }
    if let Some(p) = phrase_in(
        evidence,
        &["exceeded your current quota", "exceeded its current quota"],
    ) {
        return (
            ErrorClass::QuotaExhausted,
            format!("RESOURCE_EXHAUSTED, {p}"),
        );
    }
    if let Some(p) = phrase_in(
        evidence,
        &[
            "resource exhausted. please try again later",
            "resource exhausted, please try again later",
        ],
    ) {
        // Vertex AI's shared (dynamic) capacity is exhausted, not the caller's quota.
        return (ErrorClass::Overloaded, format!("RESOURCE_EXHAUSTED, {p}"));
    }
    // "insufficient capacity in the shared pool": the provider's, said in other words.
    if let Some(c) = concepts::capacity_in(&evidence.messages) {
        return (ErrorClass::Overloaded, format!("RESOURCE_EXHAUSTED, {c}"));
    }
    // Connect's `resource_exhausted` over a plan's words (Cursor's "You've hit your usage
    // limit ... Your usage limits will reset on 06/28/2026").
    if long_window_stated(evidence) {
        let reason = "RESOURCE_EXHAUSTED, a long window".to_owned();
        return (ErrorClass::QuotaExhausted, reason);
    }
    (ErrorClass::RateLimited, "status=RESOURCE_EXHAUSTED".into())
}

enum Window {
    Short,
    Long,
}

/// The window of a quota id or metric: `...PerMinute...` is short, `...PerDay...` long.
fn quota_window(id: &str) -> Option<Window> {
    const LONG: &[&str] = &[
        "perday",
        "per_day",
        "daily",
        "permonth",
        "per_month",
        "monthly",
    ];
    const SHORT: &[&str] = &[
        "perminute",
        "per_minute",
        "persecond",
        "per_second",
        "perhour",
        "per_hour",
    ];
    if LONG.iter().any(|w| id.contains(w)) {
        Some(Window::Long)
    } else if SHORT.iter().any(|w| id.contains(w)) {
        Some(Window::Short)
    } else {
        None
    }
}

/// Words that say a quota is used up, whatever the status or code beside them (a wrapper's
/// rate exception included); billing and CJK quota words are not this sure.
const QUOTA_USED_UP: &[&str] = &[
    "exceeded your current quota",
    "exceeded current quota",
    // OpenAI's code quoted in a wrapper's message ("Provider returned error:
    // insufficient_quota").
    "insufficient_quota",
    // n8n's "Insufficient quota detected" (its description of OpenAI's `insufficient_quota`).
    "insufficient quota",
    "quota is insufficient",
    "quota exceeded",
    // Azure API Management: "Token quota is exceeded. Try again in 11:42:07."
    "quota is exceeded",
    "quota has been exhausted",
];

fn indicative_phrase(evidence: &Evidence, status: u16) -> Option<Decision> {
    const TABLE: &[(&[&str], ErrorClass)] = &[
        // First: a quota used up beside a wrapper's rate words ("The service is receiving too
        // many requests from you" over "You exceeded your current quota") is the stop; read
        // as a rate limit it would be re-sent to a model that cannot answer. A short window
        // stated beside it still makes it a rate limit (below).
        (QUOTA_USED_UP, ErrorClass::QuotaExhausted),
        (
            &[
                "rate limit",
                "rate-limit",
                "rate limited",
                "ratelimit",
                "rate limiting",
                "rate-limiting",
                // Cloudflare's page for a rate limiting rule.
                "error 1015",
                "too many requests",
                // OpenAI's 503 "Slow Down": a sudden rise in the caller's rate.
                "slow down",
                "requests per min",
                "tokens per min",
                "per minute",
                "reduce concurrency",
                "high concurrency",
                "too many concurrent",
                "too many parallel",
                "too many simultaneous",
                "throttled",
                "throttling",
                // Apigee's SpikeArrest policy: "Spike arrest violation. Allowed rate : 5ps".
                "spike arrest",
                "per second",
                "request rate",
                "too frequent",
                "too frequently",
                "too often",
                // "Your call frequency is too high. Please try again later."; "The request
                // frequency exceeds the limit".
                "request frequency",
                "call frequency",
                "frequency is too high",
                "frequency too high",
                "qps",
                "rpm",
                "tpm",
                "速率限制",
                "请求频率",
                "请求过于频繁",
                // "请求限频，请稍后重试" (Hunyuan 2003).
                "限频",
                "过于频繁",
                "太频繁",
                // "您当前使用该API的频率过高，请降低频率" (Zhipu 1303).
                "频率过高",
                // "主账号超过频率限制" (Tencent Cloud's `RequestLimitExceeded`).
                "频率限制",
                "頻率限制",
                "頻率過高",
                "過於頻繁",
                "流量受限",
                // Flow control: "日流控超限" (a daily window, read as a stop after).
                "流控",
                // iFlytek Spark 11202: "licc failed: second-level flow control exceeded" (its
                // 11201 "day-level" is a day's window, read as a stop after).
                "flow control",
                "限流",
                "并发",
                // Batches in flight: "Enqueued token limit reached for gpt-4o ... Please try
                // again once some in_progress batches have been completed".
                "enqueued token",
                "tokens enqueued",
                "in-progress batch",
                "in_progress batch",
                // Requests in flight in ja and ko: "同時実行数の上限に達しています".
                "同時実行数",
                "同時リクエスト数",
                "동시 요청",
                "超过限额",
                "слишком много запросов",
                // Too many requests in es, pt, fr, de, it, id, tr, vi, pl.
                "demasiadas solicitudes",
                "demasiadas peticiones",
                "muitas requisições",
                "muitas solicitações",
                "trop de requêtes",
                "trop de demandes",
                "zu viele anfragen",
                "troppe richieste",
                "terlalu banyak permintaan",
                "çok fazla istek",
                "quá nhiều yêu cầu",
                "zbyt wiele żądań",
                // Per second in es/pt, fr, de, it (not per minute: "supera el máximo de tokens
                // por minuto" is one request above a window no wait opens).
                "por segundo",
                "par seconde",
                "pro sekunde",
                "al secondo",
                // Call frequency too high (fr, it) and slow down (it, es, pt, fr, de, nl, pl).
                // Not "too many messages": "Zu viele Nachrichten: messages darf höchstens 1000
                // Einträge enthalten" counts a list.
                "fréquence d'appel",
                "frequenza delle chiamate",
                "rallenta",
                "más despacio",
                "mais devagar",
                "ralentissez",
                "langsamer",
                "rustiger aan",
                "zwolnij",
                // Call frequency too high (es, pt): "Frecuencia de llamadas demasiado alta".
                "frecuencia de llamadas",
                "frecuencia de solicitudes",
                "frequência de chamadas",
                "frequência de requisições",
                "zbyt wiele zapytań",
                "лимит запросов",
                "частота запросов",
                "частоты запросов",
                // Too many requests, or calls too often, in zh, ja and ko ("请求过多，请稍后再试",
                // "リクエストが多すぎます", "요청이 너무 많습니다", "调用频率超限").
                "请求过多",
                "請求過多",
                "请求太多",
                "請求太多",
                "请求次数过多",
                "請求次數過多",
                "调用频率",
                "調用頻率",
                "访问频率",
                "訪問頻率",
                "频率超",
                "頻率超",
                "リクエストが多すぎ",
                "リクエスト数が多すぎ",
                "リクエストの頻度",
                "呼び出し頻度",
                "요청이 너무 많",
                "요청 수가 너무 많",
                "요청 빈도",
                "호출 빈도",
                "속도 제한",
                "처리율 제한",
                // And in nl, sv, da, nb, fi, uk, hr, sr, cs, sk, hu, ro, el, he, th, ar, hi, bn,
                // sw, tl, vi, id.
                "te veel verzoeken",
                "te veel aanvragen",
                "för många förfrågningar",
                "för många anrop",
                "for mange forespørgsler",
                "for mange forespørsler",
                "for mange anmodninger",
                "liian monta pyyntöä",
                "liikaa pyyntöjä",
                "забагато запитів",
                "previše zahtjeva",
                "previše zahteva",
                "za dużo żądań",
                "za dużo zapytań",
                "příliš mnoho požadavků",
                "príliš veľa požiadaviek",
                "túl sok kérés",
                "prea multe solicitări",
                "prea multe cereri",
                "πάρα πολλά αιτήματα",
                "יותר מדי בקשות",
                "คำขอมากเกินไป",
                "طلبات كثيرة",
                "बहुत अधिक अनुरोध",
                "অনেক বেশি অনুরোধ",
                "maombi mengi",
                "masyadong maraming request",
                "masyadong maraming kahilingan",
                "yêu cầu quá nhanh",
                "quá thường xuyên",
                "terlalu sering",
                "terlalu kerap",
                "太頻繁",
                "ถี่เกินไป",
                "одновременных запросов",
                "muitos pedidos",
                // Requests in flight (de): not "zu viele gleichzeitige Nutzer" (everyone's load).
                "zu viele gleichzeitige anfragen",
                "gleichzeitige anfragen",
                // Sent too fast or too often, in en, zh, fr, pl, ru, es, pt, de, it ("You're going
                // a bit fast", "操作太快了", "Vous envoyez des messages trop rapidement", "Za
                // często wysyłasz wiadomości").
                "too fast",
                "too quickly",
                "a bit fast",
                "faster than your",
                "in a short time",
                "太快",
                "过快",
                "過快",
                "trop rapidement",
                "trop vite",
                "za często",
                "zbyt często",
                "zbyt szybko",
                "слишком часто",
                "слишком быстро",
                "demasiado rápido",
                "muito rápido",
                "zu schnell",
                "troppo velocemente",
                "troppo in fretta",
                // Requests in flight, in en words ("only 2 requests run at the same time").
                "run at the same time",
                "requests at the same time",
                "requests at once",
                // "Your key is cooling off for 30 seconds after a sudden burst".
                "cooling off",
                "rate exceeded",
                // "Too many calls in a row", "Please wait 1 minute before your next message".
                "too many calls",
                "before your next message",
                "before your next request",
                "before sending again",
            ],
            ErrorClass::RateLimited,
        ),
        (
            &[
                "overloaded",
                "at capacity",
                "over capacity",
                "no capacity",
                "capacity exhausted",
                "capacity available",
                "high demand",
                "high load",
                "high system load",
                "model busy",
                "is busy",
                "saturated",
                "负载已饱和",
                "capacity exceeded",
                "too busy",
                "server is busy",
                "访问量过大",
                "请求量过大",
                "繁忙",
                "перегружен",
                // Load shed to stay up ("We're turning away some traffic right now"); no free
                // capacity (de).
                "shedding",
                "turning away",
                "freien kapazitäten",
                "keine kapazität",
            ],
            ErrorClass::Overloaded,
        ),
        (
            // A sign-in to renew ("登录状态已超时，请重新登录"): the session, not the call, ran
            // out of time.
            &[
                "not logged in",
                "重新登录",
                "重新登錄",
                // Taiwan's sign-in ("登入逾時，請重新登入"); a WeChat-style access token timed out
                // ("access_token 超时，请刷新后重试").
                "重新登入",
                "access_token 超时",
                "access_token 超時",
                // A token's time ran out (hi), not the call's.
                "टोकन की समय सीमा",
                "再ログイン",
                "다시 로그인",
                "log in again",
                "sign in again",
            ],
            ErrorClass::Auth,
        ),
        (
            &[
                "timed out",
                "timeout",
                // Python's `httpx.ReadTimeout('')` named in a relay's text.
                "readtimeout",
                // Java's and .NET's exceptions, Ruby's `Net::OpenTimeout: execution expired`.
                "timeoutexception",
                "sockettimeoutexception",
                "opentimeout",
                "execution expired",
                "time-out",
                "time out",
                "deadline exceeded",
                "took too long",
                "taking too long",
                "took longer than",
                // "did not respond to Cloudflare within the allowed time".
                "allowed time",
                "too long to respond",
                // Not "did not respond" alone: "Service temporarily unavailable. The model did
                // not respond to this request" names no time.
                "not respond within",
                "respond in time",
                "no response within",
                "processing time",
                "execution time",
                "execution exceeded",
                // "stream idle for 300s": no byte came for longer than the gateway waits.
                "idle for",
                "stream idle",
                "超时",
                "逾時",
                "时间过长",
                "時間過長",
                "処理時間",
                "응답 시간",
                "超時",
                "time limit",
                "タイムアウト",
                "時間切れ",
                "시간이 초과",
                "시간 초과",
                "타임아웃",
                "время ожидания",
                "таймаут",
                "тайм-аут",
                // Timed out in de, pt, es, fr, it, id, tr, vi, pl, cs, sv, fi, hu, uk, ar, he,
                // hi, th ("Die Zeitüberschreitung der Anfrage wurde erreicht").
                "zeitüberschreitung",
                "tempo limite",
                "tiempo de espera agotado",
                "se agotó el tiempo de espera",
                "délai d'attente dépassé",
                "délai d'expiration",
                "tempo scaduto",
                "waktu habis",
                "zaman aşımı",
                "hết thời gian chờ",
                "limit czasu",
                "časový limit",
                "tidsgräns",
                "aikakatkaisu",
                "időtúllépés",
                "час очікування",
                "انتهت المهلة",
                "זמן קצוב",
                "टाइमआउट",
                "หมดเวลา",
                // The wait ran out (it, id, ar, nl: "Tempo di attesa scaduto", "Waktu permintaan
                // habis", "انتهت مهلة الطلب", "De aanvraag duurde te lang").
                "attesa scaduto",
                "waktu permintaan habis",
                "انتهت مهلة",
                "duurde te lang",
                // Not answered in time (es, pt, fr, de, it, nl, pl).
                "a tiempo",
                "a tempo",
                "à temps",
                "rechtzeitig",
                "in tempo",
                "op tijd",
                "na czas",
                // The reply waited for ran out (uk, ru: "після 60 с очікування відповіді").
                "очікування відповіді",
                "ожидания ответа",
                // The time allowed ran out (vi, id, fa, de, fr, pt, el, he, ro, hi: "Yêu cầu đã
                // hết thời gian", "Permintaan melebihi batas waktu", "Die Anfrage hat das
                // Zeitlimit überschritten", "Λήξη χρονικού ορίου αιτήματος").
                "yêu cầu đã hết thời gian",
                "quá thời gian chờ",
                "melebihi batas waktu",
                "مهلت درخواست",
                "زمان انتظار",
                "zeitlimit überschritten",
                "zeitlimit wurde überschritten",
                "la requête a expiré",
                "tempo esgotado",
                "λήξη χρονικού ορίου",
                "υπέρβαση χρονικού ορίου",
                "הזמן שהוקצב",
                "cererea a expirat",
                "timpul de așteptare",
                "समय सीमा समाप्त",
                "का समय समाप्त",
                // The wait ran out, in plain words: "No reply from the model in time", "ran out of
                // time", "ran longer than the 120 seconds we
                // allow", "The stream went quiet for 30 seconds", and in de, es, pt, fr, ru, ja
                // ("Die Anfrage hat zu lange gedauert", "La solicitud tardó demasiado", "Модель не
                // ответила вовремя", "応答が一定時間内にありませんでした").
                "reply in time",
                "response in time",
                "answer in time",
                "from the model in time",
                "ran out of time",
                "ran longer than",
                "went quiet",
                "clock ran out",
                "still running after",
                "zu lange gedauert",
                "tardó demasiado",
                "demorou demais",
                "demorou muito",
                "trop de temps",
                "вовремя",
                "一定時間内",
                "longer than usual",
                // "the answer didn't arrive before my time was up", "it never got back to me".
                "time was up",
                "never got back",
                // "No tokens arrived within 90s", "never sent a response before our cut-off",
                // "ran past its wall-clock allowance", "ran for longer than its 300-second
                // limit", "Went over the maximum run time", "We stopped waiting", "the CPU time
                // it is allowed", "didn't get back to us in time", "deadline ran out".
                "arrived within",
                "never sent a response",
                "wall-clock",
                "ran for longer than",
                "maximum run time",
                "stopped waiting",
                "cpu time",
                "back to us in time",
                "deadline ran out",
                // The wait for an answer ran out (rw, sw: "Igihe cyo gutegereza igisubizo
                // cyarangiye", "Muda umeisha").
                "gutegereza igisubizo",
                "muda umeisha",
                // The wait for an answer ran out (pl: "Upłynął czas oczekiwania na odpowiedź").
                "upłynął czas oczekiwania",
                // Did not answer within (ru, uk: "Нейросеть не ответила за 30 секунд").
                "не ответила за",
                "не ответил за",
                "не відповіла за",
                "не відповів за",
            ],
            ErrorClass::Timeout,
        ),
        (
            &[
                // "Gemini API free tier is not available in your country. Please enable billing".
                "enable billing",
                // "No messages left on your plan until Jan 3".
                "no messages left",
                "no requests left",
                "no credits left",
                "no generations left",
                "额度",
                "配额",
            ],
            ErrorClass::QuotaExhausted,
        ),
        (
            &[
                "api key",
                "api-key",
                "x-api-key",
                "authentication",
                "unauthorized",
                "unauthenticated",
                // An SDK without credentials ("Unable to locate credentials").
                "locate credentials",
                "load credentials",
                "permission denied",
                "access denied",
                "ip whitelist",
                "ip allowlist",
                "ip白名单",
                "blacklisted",
                // iFlytek Spark 10015: "appid in blacklist".
                "in blacklist",
                "黑名单",
                // Baidu's error 14: "IAM Certification failed".
                "certification failed",
                // A proxy that wants the caller's TLS certificate (nginx's "400 No required SSL
                // certificate was sent").
                "no required ssl certificate",
                "client certificate",
                "access terminated",
                "invalid token",
                // AWS IAM: "User: arn:... is not authorized to perform: bedrock:InvokeModel".
                "not authorized to perform",
                // A web firewall's block of where the call comes from ("Request blocked by AWS
                // WAF (rule ...IpReputationList)"), not of what it says.
                "aws waf",
                "azure waf",
                "web application firewall",
                "blocked by waf",
                "authorization header",
                "authorization 헤더",
                "request not allowed",
                "user not found",
                "鉴权",
                "认证",
                "身份验证",
                "身份驗證",
                "авторизац",
                "аутентификац",
            ],
            ErrorClass::Auth,
        ),
        (
            &[
                "no handler found",
                "unsupported parameter",
                "unrecognized request argument",
                // A field's value outside its range ("batchSize value of 251 but the supported
                // range is ..."); a requested output above the model's is read before.
                "supported range",
                "valid range",
                "invalid json",
                "malformed",
                "parameter error",
                "参数错误",
                // A file or image the request points to could not be fetched ("Failed to
                // download image from https://...", "Error while downloading https://..."):
                // the caller's URL, whatever status carries it.
                "failed to download",
                "error while downloading",
                "unable to download",
                "could not download",
                "cannot fetch content",
                "could not be fetched",
            ],
            ErrorClass::BadRequest,
        ),
    ];
    let (class, matched) = TABLE
        .iter()
        .find_map(|(phrases, class)| matched_phrase(evidence, phrases).map(|p| (*class, p)))?;
    // A timeout status (or Cloudflare's 522, a connection that timed out) whose words name the
    // time run out beside a guess at the cause ("did not respond within the allowed time. This
    // typically means the origin is overloaded"): the time is what the answer reports.
    let timed_out = || {
        TABLE
            .iter()
            .filter(|(_, c)| *c == ErrorClass::Timeout)
            .find_map(|(phrases, _)| matched_phrase(evidence, phrases))
    };
    let (class, matched) = match class {
        ErrorClass::Overloaded if matches!(status, 408 | 504 | 522 | 524) => {
            timed_out().map_or((class, matched), |p| (ErrorClass::Timeout, p))
        }
        _ => (class, matched),
    };
    let phrase = format!("message \"{matched}\"");
    // "Invalid token in prompt: 123456": a token of text, not a credential; "Token quota
    // exhausted for this API key": the key names whose grant is used up; "This API key is
    // sending requests too quickly" under a 429: the key names whose rate it is (a key refused
    // is read before, by its rejection word; an IP allowlist stays `auth`).
    // "Unrecognized request argument supplied: timeout", "invalid grpc-timeout header value":
    // `timeout` named as a field of the request, not a time that ran out.
    if matched == "timeout" && concepts::request_fault_in(&evidence.messages).is_some() {
        return None;
    }
    // "Failed to fetch image from https://...: Connection timeout", "Timeout while downloading
    // url=...": the file the request points to did not come in time, not the model's answer;
    // another model would fetch it no faster. Not under a timeout status, which says the call
    // itself ran out of time ("Timed out waiting for the remote audio URL" at 408).
    if class == ErrorClass::Timeout
        && !matches!(status, 408 | 504 | 524)
        && evidence.messages.iter().any(|m| fetch_of_file(m))
    {
        return Some((
            ErrorClass::BadRequest,
            format!("{phrase} fetching the request's file"),
        ));
    }
    let names_a_key = ["api key", "api-key", "x-api-key"].contains(&matched);
    if class == ErrorClass::Auth
        && ((status == 429 && names_a_key)
            || evidence.messages.iter().any(|m| concepts::text_token(m))
            || concepts::grant_used_up_in(&evidence.messages).is_some())
    {
        return None;
    }
    // "The server is currently handling too many requests" under a 5xx: everyone's requests,
    // the provider's load; "You have sent too many requests" stays the caller's rate.
    // A wrapper's "429 Too Many Requests from POST ..." (Spring's `WebClientResponseException`
    // under its 500) names the upstream's status: the caller's rate there, not the load.
    if matched == "too many requests"
        && status >= 500
        && !upstream_429_named(evidence)
        && load_on_server(evidence)
    {
        return Some((ErrorClass::Overloaded, format!("{phrase} on the server")));
    }
    // The same in Chinese with the API or the model as the subject ("当前API请求过多，请稍后重试",
    // Zhipu's 1305): everyone's requests to it.
    if matched == "请求过多" && matched_phrase(evidence, &["当前api请求", "当前模型请求"]).is_some()
    {
        return Some((ErrorClass::Overloaded, format!("{phrase} on the service")));
    }
    // A rate word about the provider's own shortage ("throttled due to system capacity
    // limits", "no workers available ... throttled"): its load, not the caller's rate.
    // So does a load word with no window ("Too Many Requests: the shared pool for free-tier
    // inference is saturated"), as under a rate code.
    if class == ErrorClass::RateLimited {
        let load = || {
            let messages = &evidence.messages;
            (!concepts::short_window_in(messages) && !messages.iter().any(|m| addresses_caller(m)))
                .then(|| concepts::load_in(messages))
                .flatten()
        };
        if let Some(c) = concepts::provider_short_in(&evidence.messages).or_else(load) {
            return Some((ErrorClass::Overloaded, format!("{phrase}, {c}")));
        }
    }
    // "Quota exceeded for ...tokens_per_minute...": a quota word of a short window is waited out;
    // so is a quota of sessions in flight ("Concurrent Quota Exceeded"), which the caller's own
    // finished work frees, unless a long window is stated beside it.
    if class == ErrorClass::QuotaExhausted {
        if let Some(day) = free_tier_daily_requests(evidence) {
            return Some((class, format!("{phrase}, {day}")));
        }
        if concepts::short_window_in(&evidence.messages) {
            return Some((
                ErrorClass::RateLimited,
                format!("{phrase} of a short window"),
            ));
        }
        if concepts::concurrency_in(&evidence.messages) && !long_window_named(evidence) {
            return Some((
                ErrorClass::RateLimited,
                format!("{phrase} of requests in flight"),
            ));
        }
    }
    Some((class, phrase))
}

/// Whether a message speaks of fetching a file the request points to by its URL: a download,
/// or a fetch of an image, a file or media (not a gateway's fetch of its upstream, which names
/// none, nor a traceback's `_fetch_response` in `File "..."`).
fn fetch_of_file(message: &str) -> bool {
    const DOWNLOAD: &[&str] = &["download", "downloading"];
    const FETCH: &[&str] = &["fetch", "fetching"];
    const FILE: &[&str] = &[
        "image",
        "image_url",
        "file",
        "file_url",
        "media",
        "audio",
        "video",
        "document",
    ];
    let url = message.contains("http") || has_phrase(message, "url");
    url && (DOWNLOAD.iter().any(|w| has_phrase(message, w))
        || (FETCH.iter().any(|w| has_phrase(message, w))
            && FILE.iter().any(|w| has_phrase(message, w))))
}

/// Whether a message speaks of the server's load, not the caller's requests: the server is
/// its subject and no word addresses the caller.
fn load_on_server(evidence: &Evidence) -> bool {
    evidence.messages.iter().any(|m| {
        ["server", "we are", "we're", "service is"]
            .iter()
            .any(|w| has_phrase(m, w))
            && !addresses_caller(m)
    })
}

/// Whether the text names an upstream's 429 ("429 Too Many Requests from POST ...", "raised
/// RateLimitError"): the caller's limit there, whatever the wrapper's own 5xx says.
fn upstream_429_named(evidence: &Evidence) -> bool {
    evidence.inner_status == Some(429)
}

/// A load read from a 5xx or a load word, when the message states the caller's own window
/// ("You blew through your per-minute allowance", "overloaded by your traffic from key k_82.
/// Per-key limit 120 RPM", "このキーでは1秒あたり2回まで"): the caller's rate, which a wait
/// clears, not the provider's load (which would cool the model for everyone). Not when the
/// provider names its own capacity short.
fn callers_window_over_load(decision: Decision, evidence: &Evidence) -> Decision {
    let messages = &evidence.messages;
    let callers = concepts::per_minute_limit_in(messages)
        && messages.iter().any(|m| addresses_caller(m))
        && concepts::provider_short_in(messages).is_none();
    if callers {
        (
            ErrorClass::RateLimited,
            format!("{}, the caller's own window", decision.1),
        )
    } else {
        decision
    }
}

/// Whether a message addresses the caller: you, your key, your plan.
fn addresses_caller(message: &str) -> bool {
    [
        "you",
        "your",
        "api key",
        "this key",
        "per key",
        "user",
        "plan",
        // Yours and this key in zh, ja, ko ("您的调用过于繁忙，当前密钥进行中的请求 8/8").
        "您的",
        "你的",
        "当前密钥",
        "此密钥",
        "该密钥",
        "あなたの",
        "このキー",
        "이 키",
    ]
    .iter()
    .any(|w| has_phrase(message, w))
}

/// A failure on the provider's side that names no cause ("internal error", "service
/// unavailable"): read after everything that names one ("function execution timed out" under
/// "internal error" is a timeout).
fn unnamed_failure(evidence: &Evidence, status: u16) -> Option<Decision> {
    const NO_CAUSE: &[&str] = &[
        "temporarily unavailable",
        "service unavailable",
        "currently unavailable",
        "bad gateway",
        "internal server error",
        "internal error",
        "unable to process your request",
        "experienced an error",
        "error was encountered while running the model",
        // A gateway that got nothing back ("Failed to get response from provider").
        "failed to get response from",
        "failed to get a response from",
        "服务不可用",
        // A relay's transport failure to its upstream ("read tcp ...: connection reset by
        // peer", "dial tcp ...: connection refused"): the upstream is down or shedding load.
        "connection reset",
        "reset by peer",
        "connection refused",
        "broken pipe",
        "unexpected eof",
    ];
    let phrase = phrase_in(evidence, NO_CAUSE)?;
    // "Service unavailable for account" under a 401 or 403 (Workers AI's 3023): a service
    // withheld from the caller's account, not a provider short of capacity.
    if matches!(status, 401 | 403) {
        const FOR_ACCOUNT: &[&str] = &["for account", "for your account", "for this account"];
        if let Some(w) = phrase_in(evidence, FOR_ACCOUNT) {
            return Some((ErrorClass::Auth, format!("{phrase} + {w}, status={status}")));
        }
    }
    Some((ErrorClass::Overloaded, phrase))
}

/// A code no list names, read by the words it is made of (`FreeUsageLimitError`). A code that
/// only spells the status's name (`TooManyRequests` beside `ServerOverloaded`) says less than
/// any other, so it speaks last.
fn unlisted_code(evidence: &Evidence, status: u16) -> Option<Decision> {
    let short_window = concepts::short_window_in(&evidence.messages);
    // A quota word in a code yields to a short window, or to a wait asked for with no long
    // window named (Bedrock's `ServiceQuotaExceededException`: "Too many tokens, please wait
    // before trying again"; "Too many tokens per day, please wait" stays a stop).
    // A quota code over sessions in flight ("Concurrent Quota Exceeded") yields as well.
    let waited_out = short_window
        || concepts::concurrency_in(&evidence.messages)
        || (phrase_in(evidence, &["please wait", "wait before"]).is_some()
            && phrase_in(evidence, LONG_WINDOW).is_none());
    // An exception's name at the head of a message (`AppIdNoAuthError:(11201)授权错误：日流控超限`)
    // names the family, the words after it what happened: where the words speak, they decide.
    let words_speak = std::cell::OnceCell::new();
    let read = |code: &evidence::Code| {
        if code.field == "message.code"
            && *words_speak.get_or_init(|| indicative_phrase(evidence, status).is_some())
        {
            return None;
        }
        let listed = SPECIFIC_CODES
            .iter()
            .chain(GENERIC_CODES)
            .any(|(name, _)| *name == code.value);
        if listed {
            return None;
        }
        concepts::code_class(&code.value, waited_out)
            .map(|(class, word)| (class, format!("{}={} (\"{word}\")", code.field, code.value)))
    };
    let (names, others): (Vec<_>, Vec<_>) = evidence
        .codes
        .iter()
        .partition(|code| concepts::is_status_name(&code.value));
    let decision = others.into_iter().chain(names).find_map(read).or_else(|| {
        // A message that is one identifier is a code by another name (iFlytek's
        // `"message":"AppIdQpsOverFlowError"` beside a numeric code). Not a status's reason
        // phrase beside other words (`"error": "Forbidden"` beside a `detail` that says why),
        // which say more than the status.
        evidence.messages.iter().find_map(|m| {
            let identifier = (4..=64).contains(&m.len())
                && m.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
                && (evidence.messages.len() == 1 || !concepts::is_status_name(m));
            identifier
                .then(|| concepts::code_class(m, short_window))
                .flatten()
                .map(|(class, word)| (class, format!("message {m} (\"{word}\")")))
        })
    });
    // A relay's rate code over a message that speaks of the upstream's load ("当前分组上游负载
    // 已饱和" under `RateLimitReached`) or of a quota used up with no short window
    // (`litellm.RateLimitError: ... You exceeded your current quota`): the words are the more
    // specific, and reading a stop as a rate is the costlier mistake.
    // A capacity code over a whole billing period or a longer window (watsonx's
    // `capacity_unit_hours_exceeded`: "used all available Capacity Unit Hours for this billing
    // period") is an allowance used up, not the provider's load.
    if let Some((ErrorClass::Overloaded, reason)) = &decision {
        if let Some(p) = phrase_in(evidence, LONG_WINDOW) {
            return Some((ErrorClass::QuotaExhausted, format!("{reason}, {p}")));
        }
    }
    match decision {
        Some((ErrorClass::RateLimited, reason)) if !short_window => {
            if let Some(q) = phrase_in(evidence, QUOTA_USED_UP) {
                return Some((ErrorClass::QuotaExhausted, format!("{reason}, {q}")));
            }
            match concepts::capacity_in(&evidence.messages) {
                Some(c) => Some((ErrorClass::Overloaded, format!("{reason}, {c}"))),
                None => Some((ErrorClass::RateLimited, reason)),
            }
        }
        other => other,
    }
}

fn generic_code(evidence: &Evidence) -> Option<Decision> {
    evidence.codes.iter().find_map(|code| {
        GENERIC_CODES
            .iter()
            .find(|(name, _)| *name == code.value)
            .map(|(_, class)| (*class, format!("{}={}", code.field, code.value)))
    })
}

/// A status that says the call went through: a 2xx, or a 101 whose upgraded socket (a
/// real-time API's WebSocket) carries the events and error events that say the rest.
fn is_success(status: u16) -> bool {
    (200..300).contains(&status) || status == 101
}

fn by_status(status: u16, evidence: &Evidence) -> Decision {
    let class = match status {
        // An error envelope in a success: its words stand in for the status it lacks.
        _ if is_success(status) => {
            // A window of seconds or minutes, in any language ("Limite de 20 requisições por
            // minuto atingido"): the caller's rate.
            if concepts::short_window_in(&evidence.messages) {
                return (
                    ErrorClass::RateLimited,
                    format!("status={status}, an error envelope, a short window"),
                );
            }
            // The caller's requests in flight ("4 requests in flight; your key allows 4
            // concurrent"): finishing one frees a slot.
            if concepts::concurrency_in(&evidence.messages) {
                return (
                    ErrorClass::RateLimited,
                    format!("status={status}, an error envelope, requests in flight"),
                );
            }
            return match concepts::request_fault_in(&evidence.messages) {
                Some(w) => (
                    ErrorClass::BadRequest,
                    format!("status={status}, an error envelope, \"{w}\""),
                ),
                // Nothing else explained it: the server's own failure.
                None => (ErrorClass::Overloaded, format!("status={status}")),
            };
        }
        402 => ErrorClass::QuotaExhausted,
        429 => ErrorClass::RateLimited,
        408 | 504 | 524 | 598 | 599 => ErrorClass::Timeout,
        401 | 403 | 407 => ErrorClass::Auth,
        // A 404 is a model gone only when the answer speaks of the model; a bare 404, an HTML
        // "Not Found" page or "Invalid URL" is a wrong path, and must not cool the model.
        404 | 410 if names_model(evidence) => {
            return (
                ErrorClass::ModelUnavailable,
                format!("status={status}, message names the model"),
            );
        }
        404 | 410 => {
            return (
                ErrorClass::BadRequest,
                format!("status={status} (not about the model)"),
            );
        }
        // 413 is a prompt too large for the model, unless the message speaks of the HTTP body's
        // bytes ("Request body too large. Maximum size is 50 MB") or a web server's page says it
        // (nginx's "413 Request Entity Too Large"): no model takes that body.
        413 if evidence.html_page || payload_limit(evidence) => {
            return (
                ErrorClass::BadRequest,
                format!("status={status}, a body size limit"),
            );
        }
        413 => ErrorClass::ContextOverflow,
        // 446: the guardrail status of API gateways (WSO2, Portkey `hooks_failed`, Bifrost).
        446 | 451 => ErrorClass::ContentPolicy,
        // 501 Not Implemented: the server lacks what was asked ("This server does not support
        // reranking. Start it with `--reranking`"); asking again gets the same.
        501 => ErrorClass::BadRequest,
        // 424 Failed Dependency: the server's own backend failed (TEI, Hugging Face endpoints).
        // 499: Google's `CANCELLED` (and nginx's client gone): the server ended the call, not
        // the request's content; another attempt may finish.
        424 | 499 | 500..=599 => ErrorClass::Overloaded,
        400..=499 => match concepts::model_unavailable_in(&evidence.messages) {
            Some(c) => {
                return (
                    ErrorClass::ModelUnavailable,
                    format!("status={status}, {c}"),
                )
            }
            None => ErrorClass::BadRequest,
        },
        _ => ErrorClass::BadRequest,
    };
    (class, format!("status={status}"))
}

/// Whether a message speaks of the request body's size in bytes, not of tokens: a body word
/// with a number ("Request body too large. Maximum size is 50 MB"), a size in bytes ("supera
/// la dimensione massima consentita (20 MB)"), or a request too large that names nothing a
/// model counts (AWS API Gateway's "Request Too Long", "Request size limit exceeded").
fn payload_limit(evidence: &Evidence) -> bool {
    const BODY: &[&str] = &[
        "request body",
        "payload",
        "body size",
        // A proxy's own words: "Content-Length 9000000 exceeds max_request_body_size".
        "content-length",
        "request_body",
        "request size",
        "content size",
        "请求体",
        "請求體",
        "リクエストボディ",
        "요청 본문",
    ];
    const WHOLE: &[&str] = &[
        "request too long",
        "request too large",
        "request was too large",
        "request size limit",
        "request entity too large",
        "entity too large",
        "payload too large",
        "maximum size",
        // TEI: "batch size 256 > maximum allowed batch size 32" (inputs per call).
        "batch size",
    ];
    const COUNTED: &[&str] = &[
        "token",
        "tokens",
        "context",
        "prompt",
        "model",
        "characters",
    ];
    evidence.messages.iter().any(|m| {
        if COUNTED.iter().any(|w| has_phrase(m, w)) {
            return false;
        }
        let sized = concepts::bytes_stated(m);
        let body = BODY.iter().any(|b| has_phrase(m, b))
            && (concepts::byte_unit_in(m) || m.bytes().any(|b| b.is_ascii_digit()));
        sized || body || WHOLE.iter().any(|w| has_phrase(m, w))
    })
}

/// The wait the upstream asked for, in the order a careful client trusts them: explicit
/// millisecond headers, `Retry-After`, the body's retry fields, the message text, then the
/// reset time of the rate limit that was hit. The first plausible one is [`WaitHint::Used`];
/// nonsense is skipped, and when nothing plausible is left the hint is [`WaitHint::Ignored`]
/// (stated, but unusable) or [`WaitHint::Absent`] (nothing stated).
fn wait_hint(answer: &Answer, evidence: &Evidence, class: ErrorClass) -> (Option<u64>, WaitHint) {
    let now = answer.now_unix_ms;
    let header_ms = |name: &str| answer.header(name).map(wait::retry_after_ms);
    let messages = || message_wait(evidence);
    let is_limit = matches!(class, ErrorClass::RateLimited | ErrorClass::QuotaExhausted);
    let sources: [&dyn Fn() -> Option<wait::Stated>; 7] = [
        &|| header_ms("retry-after-ms"),
        &|| header_ms("x-ms-retry-after-ms"),
        &|| {
            answer
                .header("retry-after")
                .map(|v| wait::retry_after(v, now))
        },
        &|| {
            evidence
                .json
                .as_ref()
                .and_then(|j| wait::body_fields(j, now))
        },
        &|| evidence.json.as_ref().and_then(wait::estimated_time),
        &messages,
        &|| {
            if is_limit {
                exhausted_limit_reset(answer)
            } else {
                None
            }
        },
    ];
    let mut ignored = false;
    for source in sources {
        match source() {
            Some(wait::Stated::Wait(ms)) => return (Some(ms), WaitHint::Used),
            Some(wait::Stated::Nonsense) => ignored = true,
            None => {}
        }
    }
    let hint = if ignored {
        WaitHint::Ignored
    } else {
        WaitHint::Absent
    };
    (None, hint)
}

/// The first plausible wait the messages state ("try again in 8.64s").
fn message_wait(evidence: &Evidence) -> Option<wait::Stated> {
    wait::first_plausible(
        evidence
            .messages
            .iter()
            .filter_map(|m| wait::from_message(m)),
    )
}

/// The reset time of whichever limit reports zero remaining (OpenAI/Groq `x-ratelimit-*`,
/// Anthropic `anthropic-ratelimit-*`): the soonest plausible one.
fn exhausted_limit_reset(answer: &Answer) -> Option<wait::Stated> {
    const LIMITS: &[(&str, &str)] = &[
        (
            "x-ratelimit-remaining-requests",
            "x-ratelimit-reset-requests",
        ),
        ("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
        (
            "anthropic-ratelimit-requests-remaining",
            "anthropic-ratelimit-requests-reset",
        ),
        (
            "anthropic-ratelimit-tokens-remaining",
            "anthropic-ratelimit-tokens-reset",
        ),
        (
            "anthropic-ratelimit-input-tokens-remaining",
            "anthropic-ratelimit-input-tokens-reset",
        ),
        (
            "anthropic-ratelimit-output-tokens-remaining",
            "anthropic-ratelimit-output-tokens-reset",
        ),
        ("x-ratelimit-remaining", "x-ratelimit-reset"),
    ];
    let stated: Vec<wait::Stated> = LIMITS
        .iter()
        .filter(|(remaining, _)| {
            answer
                .header(remaining)
                .is_some_and(|v| v.trim().parse::<f64>().is_ok_and(|n| n <= 0.0))
        })
        .filter_map(|(_, reset)| {
            answer
                .header(reset)
                .map(|v| wait::reset_header(v, answer.now_unix_ms))
        })
        .collect();
    let soonest = stated.iter().filter_map(|s| s.ms()).min();
    soonest
        .map(wait::Stated::Wait)
        .or_else(|| (!stated.is_empty()).then_some(wait::Stated::Nonsense))
}

/// A rate limit that only resets after a day (or asks for a wait of an hour or more) is, for
/// every practical purpose, an exhausted quota: nothing should wait for it.
fn adjust_quota_window(
    (class, reason): Decision,
    evidence: &Evidence,
    wait_ms: Option<u64>,
) -> Decision {
    const HOUR_MS: u64 = 3_600_000;
    // "本站已开启限流...请下周重试": whatever the cause, a retry a day or more away is a stop.
    if matches!(class, ErrorClass::RateLimited | ErrorClass::Overloaded) {
        if let Some(p) = evidence
            .messages
            .iter()
            .find_map(|m| concepts::retry_days_later(m))
        {
            return (ErrorClass::QuotaExhausted, format!("{reason}, {p}"));
        }
        // "You've hit your usage limit ... try again in 4 days 2 hours" inside a wrapper's 500:
        // a provider's load never asks for hours, a grant does.
        let overloaded = class == ErrorClass::Overloaded;
        if let Some(ms) = wait_ms.filter(|ms| overloaded && *ms >= HOUR_MS) {
            let limit = || matched_phrase(evidence, &["limit"]);
            if let Some(g) = concepts::grant_named_in(&evidence.messages).or_else(limit) {
                return (
                    ErrorClass::QuotaExhausted,
                    format!("{reason}, \"{g}\" with a wait of {} s", ms / 1000),
                );
            }
        }
        // An allowance used up, with no wait and no rate window stated: reading a quota stop as
        // a rate limit or an overload re-sends to a model that cannot answer (the costliest
        // mistake); the opposite mistake only moves this request along its chain. (Google's
        // RESOURCE_EXHAUSTED is read by its own quota ids and retry info.)
        let google = resource_exhausted(evidence);
        // "Capacity limits reached for this model": a bare limit beside a capacity word is the
        // provider's; only a grant used up (quota, credits, usage limit) is the caller's.
        let capacity =
            class == ErrorClass::Overloaded && concepts::capacity_in(&evidence.messages).is_some();
        let used_up = if capacity {
            concepts::grant_used_up_in
        } else {
            concepts::allowance_used_up_in
        };
        // "max_tokens (32768) + prompt tokens (104772) exceeds model limit of 131072": a size.
        let size = || prompt_too_large(evidence).is_some();
        // Model Studio's per-minute limit, in quota words ([`model_studio_throttle`]).
        let throttle = || {
            evidence
                .codes
                .iter()
                .any(|c| is_model_studio_throttle(c, evidence))
        };
        // "Please wait for some in-progress batches to finish": a limit on work in flight,
        // which the caller's own work frees.
        let in_flight = || {
            evidence.messages.iter().any(|m| {
                has_phrase(m, "wait for")
                    && ["to finish", "to complete", "to be completed"]
                        .iter()
                        .any(|w| has_phrase(m, w))
            })
        };
        // A code of a minute's window (`rpm_quota`): its words of a limit reached are a rate's.
        let short_code = || {
            evidence
                .codes
                .iter()
                .any(|c| concepts::code_names_short_window(&c.value))
        };
        if let (None, false) = (wait_ms, google || throttle() || in_flight() || short_code()) {
            if let Some(p) = used_up(&evidence.messages).filter(|_| !size()) {
                return (
                    ErrorClass::QuotaExhausted,
                    format!("{reason}, {p} with no wait stated"),
                );
            }
        }
        // The same under a 5xx with a reset minutes away ("Saatlik limit aşıldı, 10 dakika
        // içinde sıfırlanacak"): the caller's allowance, which a wait restores; not the
        // provider's load.
        if let Some(ms) = wait_ms.filter(|ms| overloaded && !capacity && *ms < HOUR_MS) {
            if let Some(p) = concepts::allowance_used_up_in(&evidence.messages).filter(|_| !size())
            {
                return (
                    ErrorClass::RateLimited,
                    format!("{reason}, {p}, resets in {} s", ms.div_ceil(1000)),
                );
            }
        }
    }
    if class != ErrorClass::RateLimited || concepts::concurrency_in(&evidence.messages) {
        return (class, reason);
    }
    if let Some(p) = phrase_in(evidence, LONG_WINDOW) {
        return (ErrorClass::QuotaExhausted, format!("{reason}, {p}"));
    }
    if let Some(window) = evidence.messages.iter().find_map(|m| {
        long_window_in(m)
            .or_else(|| period_limit_in(m))
            .or_else(|| plan_limit_in(m))
            .or_else(|| concepts::reset_date_in(m))
    }) {
        return (
            ErrorClass::QuotaExhausted,
            format!("{reason}, a {window} window"),
        );
    }
    if let Some(id) = evidence
        .quota_ids
        .iter()
        .find(|id| matches!(quota_window(id), Some(Window::Long)))
    {
        return (
            ErrorClass::QuotaExhausted,
            format!("{reason}, quotaId={id}"),
        );
    }
    // A wait of hours for a limit per minute is the provider's arithmetic, not the limit's
    // window (OpenAI: "on tokens per min (TPM) ... Please try again in 114h18m0s").
    let per_minute = concepts::per_minute_limit_in(&evidence.messages);
    match wait_ms {
        Some(ms) if ms >= HOUR_MS && !per_minute => (
            ErrorClass::QuotaExhausted,
            format!("{reason}, wait of {} s", ms / 1000),
        ),
        _ => (class, reason),
    }
}

/// Whether a message states a window of hours or more ("per day", "weekly", "5-hour", "your
/// monthly plan", "retry tomorrow").
fn long_window_stated(evidence: &Evidence) -> bool {
    // "concurrent agent session limit reached": sessions in flight, not a session's window.
    !concepts::concurrency_in(&evidence.messages) && long_window_named(evidence)
}

/// Whether a message names a window of hours or more, whatever else it speaks of.
fn long_window_named(evidence: &Evidence) -> bool {
    phrase_in(evidence, LONG_WINDOW).is_some()
        || evidence.messages.iter().any(|m| {
            long_window_in(m).is_some()
                || period_limit_in(m).is_some()
                || plan_limit_in(m).is_some()
                || concepts::retry_days_later(m).is_some()
                || concepts::reset_date_in(m).is_some()
        })
}

/// A limit that the answer's own body says resets within minutes ("Quota will be replenished in
/// 00:04:12", `"resets_in_seconds": 540`): waiting helps, so it is a rate limit. Only the body
/// counts (a gateway's `Retry-After` rides on every 429), never a balance or credit (those do not
/// reset: [`Scope::Account`]) nor a stop that asks for a payment, and not Google's quota errors,
/// whose `RetryInfo` rides on daily quotas too.
fn quota_reset_soon((class, reason): Decision, answer: &Answer, evidence: &Evidence) -> Decision {
    const SOON_MS: u64 = 15 * 60 * 1000;
    // A free tier's day of requests passed on by a relay without the code or the quota id
    // ([`free_tier_daily_requests`]) is Google's as well.
    let google = resource_exhausted(evidence)
        || !evidence.quota_ids.is_empty()
        || free_tier_daily_requests(evidence).is_some();
    // "on requests per day (RPD) ... Please try again in 8.64s": the wait is until one more
    // request fits the day's count, but the day's limit is what stops the caller.
    // "You're out of extra usage. Add more at ... (reset after 30s)": a gateway's lock on the
    // account, not the stop's reset.
    // A rate limit's own words beside it (a gateway's fallback that hit one) still speak.
    let payment = || {
        concepts::pay_asked_in(&evidence.messages)
            && indicative_phrase(evidence, answer.status)
                .is_none_or(|(class, _)| class != ErrorClass::RateLimited)
    };
    if google || long_window_stated(evidence) || payment() {
        return (class, reason);
    }
    let stated = evidence
        .json
        .as_ref()
        .and_then(|j| wait::body_fields(j, answer.now_unix_ms))
        .or_else(|| message_wait(evidence));
    match stated {
        Some(wait::Stated::Wait(ms)) if ms <= SOON_MS => (
            ErrorClass::RateLimited,
            format!("{reason}, resets in {} s", ms.div_ceil(1000)),
        ),
        _ => (class, reason),
    }
}

/// Limits that never reset: only a top-up or a new key helps.
const NO_RESET: &[&str] = &[
    "total limit",
    "lifetime limit",
    "lifetime quota",
    "lifetime cap",
];

/// Message phrases of a window of hours or more (a wait of minutes does not help).
const LONG_WINDOW: &[&str] = &[
    // "runs for this 24-hour period", "until the 1st" (the next month).
    "24-hour",
    "until the 1st",
    "on the 1st",
    "per day",
    // A gateway's setting named in its words (`token_per_day=10000000 exhausted`).
    "per_day",
    // "The limit resets at midnight Pacific time".
    "midnight",
    "午夜",
    "자정",
    // Not "today" alone: "Upgrade to Dev Tier today" ends Groq's per-minute limits.
    "tokens today",
    "requests today",
    "for today",
    // "taking a breather until tomorrow — you've used today's 100 answers".
    "until tomorrow",
    "used today's",
    // iFlytek Spark 11201: "licc failed: day-level flow control exceeded".
    "day-level",
    "per-day",
    "tokens per day",
    "requests per day",
    "free-models-per-day",
    "rpd",
    "tpd",
    "daily",
    "per week",
    "weekly",
    // Today's, daily and monthly in mr, gu, kn, ml, or, bn, ur and Hinglish.
    "आजचा",
    "आजची",
    "દૈનિક",
    "માસિક",
    "ದೈನಂದಿನ",
    "ಮಾಸಿಕ",
    "പ്രതിദിന",
    "പ്രതിമാസ",
    "ଦୈନିକ",
    "ମାସିକ",
    "মাসিক",
    "روزانہ",
    "ماہانہ",
    "aaj ka",
    "aaj ki",
    "is mahine",
    // Today's, in es, pt, fr, de, it, nl, pl ("todas las consultas de hoy").
    "de hoy",
    "de hoje",
    "pour aujourd'hui",
    "für heute",
    "di oggi",
    "per oggi",
    "voor vandaag",
    "na dziś",
    "na dzisiaj",
    "annual",
    "annually",
    "yearly",
    "per year",
    "this year",
    "per month",
    "monthly",
    "billing cycle",
    "billing period",
    "calendar day",
    "calendar week",
    "calendar month",
    // "limited to 1000 API calls / month".
    "/ day",
    "/day",
    "/ week",
    "/week",
    "/ month",
    "/month",
    // No reset at all: "Key limit exceeded (total limit)".
    "total limit",
    "lifetime limit",
    "lifetime quota",
    "this week",
    "this month",
    // "You've reached your write unit limit for the current month".
    "current month",
    // "used its 1,000 calls for the month. The allowance comes back at the start of next month".
    "for the month",
    "next month",
    "本月",
    "本周",
    "本週",
    "当月",
    "今月",
    "今週",
    "이번 달",
    "이번 주",
    "for today",
    "session limit",
    "本日",
    "当天",
    "오늘",
    "每周",
    "每日",
    "每天",
    "当日",
    "每月",
    "в сутки",
    "в день",
    "в месяц",
    "ежедневн",
    "ежемесячн",
    "на сегодня",
    "今日",
    "今天",
    // Traditional Chinese, Japanese, Korean.
    "每週",
    "當日",
    "毎日",
    "毎月",
    "日次",
    "月間",
    "1日あたり",
    "일일",
    "매일",
    "하루",
    "매월",
    "월간",
    "주간",
    // Windows of a day or more in es, pt, fr, de, it, id, tr, vi, pl, uk, th, ar, hi.
    "diario",
    "diaria",
    "mensual",
    "semanal",
    "por día",
    "al día",
    "por mes",
    "al mes",
    "este mes",
    "diário",
    "diária",
    "mensal",
    "por dia",
    "por mês",
    "este mês",
    "quotidien",
    "quotidienne",
    "mensuel",
    "mensuelle",
    "hebdomadaire",
    "par jour",
    "par mois",
    "ce mois",
    "täglich",
    "tageslimit",
    "monatlich",
    "monatliche",
    "monatlichen",
    "monatliches",
    "monatslimit",
    "maandlimiet",
    "daglimiet",
    "tageskontingent",
    "monatskontingent",
    // nl: daily, monthly.
    "dagelijks",
    "dagelijkse",
    "maandelijks",
    "maandelijkse",
    "per dag",
    "per maand",
    "wöchentlich",
    "pro tag",
    "pro monat",
    "giornaliero",
    "giornaliera",
    "mensile",
    "settimanale",
    "al giorno",
    "al mese",
    "harian",
    "bulanan",
    "mingguan",
    "per hari",
    "per bulan",
    "günlük",
    "aylık",
    "haftalık",
    "hàng ngày",
    "hằng ngày",
    "hàng tháng",
    "hằng tháng",
    "tháng này",
    "mỗi ngày",
    "trong ngày",
    "суточн",
    "месячн",
    "на текущий месяц",
    "еженедельн",
    "добов",
    "місячн",
    "на день",
    "на місяць",
    "dzienny",
    "dzienna",
    "dziennego",
    "dziennej",
    "miesięczn",
    "รายวัน",
    "รายเดือน",
    "ต่อวัน",
    "ต่อเดือน",
    // Daily and monthly in Thai's other word, Filipino and Urdu ("โควตาประจำวัน", "libreng
    // quota mo para sa araw na ito", "buwanang limitasyon", "آج کی مفت حد").
    "ประจำวัน",
    "ประจำเดือน",
    "araw na ito",
    "araw-araw",
    "buwanang",
    "bumalik ka bukas",
    "آج کی",
    "آج کا",
    "اليومي",
    "الشهري",
    "दैनिक",
    "मासिक",
    // Windows of a day or more in el, cs, sk, hu, ro, sv, nl, fa, he, bn, ta, sw and more ar, hi,
    // th, ru, uk.
    "ημερήσι",
    "μηνιαί",
    "εβδομαδιαί",
    "ανά ημέρα",
    "ανά μήνα",
    "denní",
    "měsíční",
    "týdenní",
    "za den",
    "za měsíc",
    "denný",
    "denná",
    "mesačn",
    "týždenn",
    "napi",
    "zilnic",
    "zilnică",
    "lunară",
    "săptămânal",
    "pe zi",
    "pe lună",
    "daglig",
    "dagliga",
    "månads",
    "månatlig",
    "per månad",
    "روزانه",
    "ماهانه",
    "هفتگی",
    "יומי",
    "יומית",
    "חודשי",
    "חודשית",
    "שבועי",
    "দৈনিক",
    "মাসিক",
    "সাপ্তাহিক",
    "தினசரி",
    "மாதாந்திர",
    "வாராந்திர",
    "kila siku",
    "kwa siku",
    "kwa mwezi",
    "يومي",
    "شهري",
    "أسبوعي",
    "प्रतिदिन",
    "साप्ताहिक",
    "รายสัปดาห์",
    "в неделю",
    "недельн",
    "щоденн",
    "щомісячн",
    "на добу",
    "тижнев",
    // Windows of a day or a month in sr, hr, sl, pl, fa, he.
    "mesečn",
    "mjesečn",
    "dnevni",
    "dnevna",
    "dnevno",
    "dnevne",
    "na miesiąc",
    "na dzień",
    "dziennie",
    "در روز",
    "در ماه",
    "החודש",
    "היומית",
    // Windows of a day or a month in da, no, fi, ta ("Dagsgrænsen ... er nået", "Kvoten for
    // denne måneden", "Päivittäinen kiintiösi").
    "dagsgrænse",
    "daglige",
    "dagligt",
    "månedlig",
    "denne måned",
    "päivittäi",
    "kuukausi",
    "kuukauden",
    "kuukausittai",
    "மாதத்திற்கான",
    // Daily and monthly in uz and kk.
    "kunlik",
    "oylik",
    "айлық",
    // Windows of a day, a week or a month in et, lv, lt, sl, hu, ro, bg, sk, cs, sv ("Teie kuu
    // limiit", "dienos užklausų limitas", "tedensko omejitev", "napi keret").
    "kuu limiit",
    "päevane",
    "päeva limiit",
    "dienas limit",
    "mēneša",
    "dienos",
    "mėnesio",
    "savaitės",
    "tedensko",
    "tedenska",
    "tedenski",
    "napi keret",
    "napi limit",
    "havi keret",
    "havi limit",
    "heti keret",
    "heti limit",
    "zilnică",
    "lunară",
    "дневен",
    "дневния",
    "месечен",
    "месечния",
    "седмичен",
    "denný",
    "denného",
    "mesačný",
    "mesačného",
    "denní",
    "měsíční",
    "daglig",
    "månatlig",
    "veckovis",
    // A day-level limit in Chinese ("日级流控超限").
    "日级",
    "日級",
    "日最大",
    // Daily or today's, and monthly, in pa, ka, ha, si, km, my, am, ne, mn, lo, yo, zu, uz, kk,
    // az, hy, ta, te ("დღიური ლიმიტი ამოწურულია", "Gündəlik limitiniz bitib").
    "ਰੋਜ਼ਾਨਾ",
    "ਅੱਜ ਦੇ",
    "დღიური",
    "დღეში",
    "na yau",
    "kullum",
    "දෛනික",
    "අද දින",
    "ប្រចាំថ្ងៃ",
    "နေ့စဉ်",
    "ယနေ့",
    "የዕለቱ",
    "ዕለታዊ",
    "आजको",
    "өдрийн",
    "өдөрт",
    "ປະຈຳວັນ",
    "ojoojumọ",
    "wanamuhla",
    "nsuku zonke",
    "bugungi",
    "күнделікті",
    "тәуліктік",
    "бүгінгі",
    "gündəlik",
    "bugünkü",
    "օրական",
    "այսօրվա",
    "இன்றைய",
    "రోజువారీ",
    "ఈరోజు",
    "ਮਹੀਨਾਵਾਰ",
    "თვიური",
    "wata-wata",
    "මාසික",
    "ប្រចាំខែ",
    "လစဉ်",
    "ወርሃዊ",
    "сарын",
    "ປະຈຳເດືອນ",
    "oṣooṣu",
    "yanyanga",
    "aylıq",
    "ամսական",
    "నెలవారీ",
    // Today (yo), this month and next month (ha), of the month (zu), every day (rw).
    "fún òní",
    "wannan wata",
    "wata mai zuwa",
    "wenyanga",
    "ngenyanga",
    "buri munsi",
    // Daily and monthly, plural (es, pt).
    "diarias",
    "diarios",
    "diárias",
    "diários",
    "mensuales",
    "mensais",
    // A contract's period; a whole month (zu).
    "contract period",
    "nyanga zonke",
];

/// A window of three hours or more stated as a number and a unit ("5-hour", "5 hours", "5h",
/// "7 days", "5 小时"), as rate-limit messages of subscription plans put it.
/// Hours in the languages a window is stated in ("5-घंटे की उपयोग सीमा", "Limit von 24
/// Stunden"). Not "saat": hours in Turkish, seconds in Malay.
const HOUR_UNITS: &[&str] = &[
    "hours",
    "hour",
    "hrs",
    "hr",
    "h",
    "小时",
    "小時",
    "時間",
    "시간",
    "stunden",
    "heures",
    "horas",
    "ore",
    "часов",
    "часа",
    "godzin",
    "giờ",
    "jam",
    "घंटे",
    "ساعت",
    "ساعات",
    "ساعة",
];

/// The other units a number of a window is followed by: days, weeks and months (days in de,
/// fr, es, pt, it, tr, ru, pl, vi, id, hi, fa, ar), seconds and minutes.
const OTHER_UNITS: &[&str] = &[
    "days",
    "day",
    // "5000 requests per 1d", "1440分钟内最多请求500次", "86400秒内".
    "d",
    "分钟",
    "分鐘",
    "秒",
    "天",
    "일",
    "tage",
    "jours",
    "días",
    "dias",
    "giorni",
    "gün",
    "дней",
    "дня",
    "dni",
    "ngày",
    "hari",
    "दिन",
    "روز",
    "أيام",
    "يوم",
    "weeks",
    "week",
    "周",
    "週",
    "주",
    "months",
    "month",
    "个月",
    "個月",
    "ヶ月",
    "か月",
    "개월",
    "seconds",
    "second",
    "secs",
    "sec",
    "s",
    "minutes",
    "minute",
    "mins",
    "min",
];

fn long_window_in(message: &str) -> Option<String> {
    let bytes = message.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            i += 1;
            continue;
        }
        let before_byte = start.checked_sub(1).and_then(|b| bytes.get(b));
        let preceded_by_word = before_byte.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'.');
        let after_hyphen = before_byte == Some(&b'-');
        // "try again in 5 hours" is a wait (read by the wait hints), not a window.
        let before = message.get(..start).unwrap_or_default().trim_end();
        let is_wait = ["in", "after", "within"]
            .iter()
            .any(|w| before.ends_with(w) && has_phrase(before, w));
        let number: u64 = message.get(start..i)?.parse().unwrap_or(0);
        let rest = message.get(i..).unwrap_or_default();
        let rest = rest.trim_start_matches([' ', '-']);
        let unit = HOUR_UNITS.iter().chain(OTHER_UNITS).copied().find(|u| {
            let after = rest.as_bytes().get(u.len());
            // Not the first letters of a longer word in any script ("20 hēkona", seconds in
            // Māori, is no 20 hours).
            let next = rest.get(u.len()..).and_then(|r| r.chars().next());
            rest.starts_with(u)
                && (!u.is_ascii() || next.is_none_or(|c| !c.is_alphanumeric()))
                // A bare `d` ("per 1d") only as a word of its own: not a segment of a hex id
                // ("0137b15c-16bf-490d-9f90"; a digit after a letter is ruled out below).
                && (*u != "d" || (after.is_none_or(|b| b" .,;)".contains(b)) && !after_hyphen))
        });
        if let (Some(unit), false, false) = (unit, preceded_by_word, is_wait) {
            let hours = HOUR_UNITS.contains(&unit);
            // A window stated in seconds or minutes ("per 86400s window"): three hours or more.
            let least = match unit {
                "seconds" | "second" | "secs" | "sec" | "s" | "秒" => 3 * 3600,
                "minutes" | "minute" | "mins" | "min" | "分钟" | "分鐘" => 3 * 60,
                _ if hours => 3,
                _ => 1,
            };
            if number >= least {
                return Some(format!("{number} {unit}"));
            }
        }
    }
    None
}

/// A CJK period glued to a limit word ("日限额已用完", "月間上限", "일일 한도"): the limit of a
/// day, a week or a month.
fn period_limit_in(message: &str) -> Option<String> {
    const PERIOD: &[&str] = &["日", "月", "周", "週", "일", "월", "주"];
    const LIMIT: &[&str] = &[
        "限额",
        "限額",
        "配额",
        "配額",
        "额度",
        "額度",
        "上限",
        "限制",
        "한도",
        "할당량",
    ];
    if message.is_ascii() {
        return None;
    }
    PERIOD.iter().find_map(|period| {
        message.match_indices(period).find_map(|(i, _)| {
            let rest = message.get(i + period.len()..)?.trim_start_matches(' ');
            let limit = LIMIT.iter().find(|l| rest.starts_with(*l))?;
            Some(format!("{period}{limit}"))
        })
    })
}

/// A usage limit that only a plan change lifts ("you have reached your session usage limit,
/// please wait or upgrade to continue"), unless the limit is a short window ("... per minute.
/// Upgrade to increase your rate limit").
fn plan_limit_in(message: &str) -> Option<String> {
    const UPGRADE: &[&str] = &["upgrade", "升级", "升級", "アップグレード", "업그레이드"];
    const USAGE: &[&str] = &[
        "usage limit",
        "usage cap",
        "allocation",
        "allowance",
        "用量",
        "使用量",
        "사용량",
    ];
    const SHORT: &[&str] = &[
        "per min",
        "per minute",
        "per second",
        "tpm",
        "rpm",
        "rps",
        "rate limit",
        "try again in",
        "hourly",
        "per hour",
        "an hour",
    ];
    if SHORT.iter().any(|s| has_phrase(message, s)) {
        return None;
    }
    let usage = USAGE.iter().find(|u| has_phrase(message, u))?;
    let upgrade = UPGRADE.iter().find(|u| has_phrase(message, u))?;
    Some(format!("\"{usage}\" + \"{upgrade}\""))
}

/// Codes of stops that cover the whole account or key: out of credit or balance, billing
/// stopped or never set up, arrears, a spent resource pack.
const ACCOUNT_CODES: &[&str] = &[
    "insufficient_quota",
    "billing_hard_limit_reached",
    "billing_not_active",
    "insufficient_balance",
    "insufficient_user_quota",
    "exceeded_current_quota_error",
    "payment_required",
    "arrearage",
    "failedoperation.resourcepackexhausted",
    "resourceinsufficient.chargestatusexception",
    "failedoperation.servicenotactivated",
    "failedoperation.servicestop",
    "1113",  // Zhipu: balance exhausted or no resource package
    "30011", // SiliconFlow: paid balance insufficient
];

/// Message phrases of money and of the account: credit, balance, billing, spend caps, arrears.
const ACCOUNT_PHRASES: &[&str] = &[
    "credit balance",
    "credit",
    "credits",
    "balance",
    "billing",
    "payment",
    "recharge",
    "top up",
    "arrears",
    "in good standing",
    "spend limit",
    "spending limit",
    "spend cap",
    "budget",
    "api usage limits",
    "is not active",
    "欠费",
    "余额",
    "充值",
    "资源包",
    "后付费",
];

/// Message phrases that say the limit is counted per model.
const PER_MODEL_PHRASES: &[&str] = &["for model", "per model", "permodel", "model:"];

/// What a quota stop covers, from the evidence, first decisive signal wins:
///
/// 1. an account code (`insufficient_quota`, `billing_hard_limit_reached`, `Arrearage`, Zhipu
///    `1113`, SiliconFlow `30011`, ...): [`Scope::Account`];
/// 2. the limit is counted per model: a Google quota id with `PerModel`, a `QuotaFailure`
///    violation whose `quotaDimensions` name a model, "for model `x`", "model: gemini-x", or
///    OpenAI's "Rate limit reached for gpt-4o in organization ..." (which names the model it
///    counts for): [`Scope::Model`]. This comes before the money phrases because such messages
///    also carry billing links ("add a payment method to increase your rate limit");
/// 3. money and account phrases (credit, balance, billing, payment, spend limits, budgets,
///    arrears) or a monthly window (spend caps and monthly organization limits are set per
///    account): [`Scope::Account`];
/// 4. status 402: [`Scope::Account`];
/// 5. otherwise [`Scope::Model`]: daily limits turned into quota stops (`tokens per day`,
///    `...PerDay...`, an hour-long wait), Bedrock service quotas and Baidu daily limits, which
///    providers count per model.
///
/// The default is `Model` because the two mistakes are not alike: a stop wrongly taken for the
/// whole account takes every model on the key out of service for the whole quota cooldown
/// although they would answer, while a stop wrongly taken for one model costs one fast failed
/// attempt per sibling model, each of which then records its own stop. The second mistake
/// corrects itself within a few requests; the first does not.
fn quota_scope(answer: &Answer, evidence: &Evidence) -> Scope {
    let account_code = evidence
        .codes
        .iter()
        .any(|c| ACCOUNT_CODES.contains(&c.value.as_str()));
    if account_code {
        return Scope::Account;
    }
    let per_model = evidence.quota_per_model
        || evidence.quota_ids.iter().any(|id| id.contains("permodel"))
        || phrase_in(evidence, PER_MODEL_PHRASES).is_some()
        || evidence
            .messages
            .iter()
            .any(|m| names_model_in_rate_limit(m));
    if per_model {
        return Scope::Model;
    }
    let monthly = phrase_in(evidence, &["per month", "monthly", "每月"]).is_some()
        || evidence.quota_ids.iter().any(|id| {
            ["permonth", "per_month", "monthly"]
                .iter()
                .any(|w| id.contains(w))
        });
    if monthly || phrase_in(evidence, ACCOUNT_PHRASES).is_some() || answer.status == 402 {
        return Scope::Account;
    }
    Scope::Model
}

/// OpenAI's "rate limit reached for <model> in organization <org> on ...": the word after "for"
/// is the model the limit counts for ("gpt-4o", "default-gpt-3.5-turbo").
fn names_model_in_rate_limit(message: &str) -> bool {
    const LEAD: &str = "rate limit reached for ";
    message.match_indices(LEAD).any(|(i, _)| {
        let Some(rest) = message.get(i + LEAD.len()..) else {
            return false;
        };
        let after_name = rest.trim_start_matches(|c: char| !c.is_whitespace());
        ["in organization", "in project", "in workspace"]
            .iter()
            .any(|p| after_name.trim_start().starts_with(p))
    })
}

#[cfg(test)]
mod tests;
