//! Which model each attempt asks, and whether a failure deserves another attempt.
//!
//! Pure decisions over the configuration, the request's facts and each model's health; the
//! shell reads and writes the health records and tells Envoy what to do.

use crate::body_facts::BodyFacts;
use crate::classify::{ErrorClass, Verdict, WaitHint};
use crate::config::{Config, MaxTokensPolicy, ModelConfig};
use crate::health::Admission;
use crate::stats::WaitHintOutcome;

/// How a request may be treated when its model cannot serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// Never served by a weaker tier; it may fail instead.
    Critical,
    /// May fall back along its chain.
    Normal,
    /// Never falls back; fails fast with a `Retry-After` so the caller can defer it.
    Batch,
}

impl Priority {
    pub fn from_header(value: Option<&str>) -> Self {
        match value.map(str::trim) {
            Some(v) if v.eq_ignore_ascii_case("critical") => Priority::Critical,
            Some(v) if v.eq_ignore_ascii_case("batch") => Priority::Batch,
            _ => Priority::Normal,
        }
    }
}

/// What a request uses, as far as choosing a fallback is concerned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Features {
    pub tools: bool,
    pub json_schema: bool,
    pub images: bool,
    pub max_tokens: Option<u64>,
    /// A rough prompt size: body bytes / 4.
    pub prompt_tokens: u64,
}

impl Features {
    /// Reads the features of a JSON request body (OpenAI chat/Responses, Anthropic, Gemini),
    /// in one pass that keeps nothing else ([`BodyFacts`]). Read only when a fallback is being
    /// chosen, never on the healthy path.
    pub fn of_body(body: &[u8]) -> Self {
        let prompt_tokens = (body.len() / 4) as u64;
        let facts = BodyFacts::read(body).unwrap_or_default();
        Self {
            tools: facts.tools,
            json_schema: facts.json_schema,
            images: facts.images,
            max_tokens: facts.max_tokens,
            prompt_tokens,
        }
    }
}

/// Why a model was passed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    Drained,
    Cooling,
    LowerTier,
    NoTools,
    NoJsonSchema,
    NoImages,
    WindowTooSmall,
    OutputTooSmall,
}

/// The models a request may use, strongest preference first: the task's chain if the task
/// header names one, else the requested model followed by its configured chain.
pub fn chain<'a>(config: &'a Config, requested: &str, task: Option<&str>) -> Vec<&'a ModelConfig> {
    let names: Vec<&str> = match task.and_then(|t| config.fallback.tasks.get(t)) {
        Some(chain) => chain.iter().map(String::as_str).collect(),
        None => std::iter::once(requested)
            .chain(
                config
                    .fallback
                    .chains
                    .get(requested)
                    .into_iter()
                    .flatten()
                    .map(String::as_str),
            )
            .collect(),
    };
    names.into_iter().filter_map(|n| config.model(n)).collect()
}

/// Every chain a request can follow, with where it is configured: each model of
/// `fallback.chains` followed by its fallbacks, and each task's chain.
pub fn every_chain(config: &Config) -> Vec<(String, Vec<&ModelConfig>)> {
    let by_model = config.fallback.chains.keys().map(|model| {
        (
            format!("fallback.chains.{model}"),
            chain(config, model, None),
        )
    });
    let by_task = config.fallback.tasks.keys().map(|task| {
        (
            format!("fallback.tasks.{task}"),
            chain(config, "", Some(task)),
        )
    });
    by_model.chain(by_task).collect()
}

pub fn tier_rank(config: &Config, model: &ModelConfig) -> usize {
    model
        .tier
        .as_ref()
        .and_then(|t| config.fallback.tiers.iter().position(|x| x == t))
        .unwrap_or(usize::MAX)
}

/// Whether `candidate` can take a request that asked for `requested` (capabilities, tier,
/// drain). `features` is `None` when the request was not parsed (the healthy path).
pub fn fits(
    config: &Config,
    candidate: &ModelConfig,
    requested: &ModelConfig,
    priority: Priority,
    features: Option<&Features>,
) -> Result<(), Pass> {
    if candidate.drain {
        return Err(Pass::Drained);
    }
    if candidate.name == requested.name {
        return Ok(());
    }
    if priority == Priority::Critical && tier_rank(config, candidate) > tier_rank(config, requested)
    {
        return Err(Pass::LowerTier);
    }
    let Some(f) = features else { return Ok(()) };
    if f.tools && !candidate.tools {
        return Err(Pass::NoTools);
    }
    if f.json_schema && !candidate.json_schema {
        return Err(Pass::NoJsonSchema);
    }
    if f.images && !candidate.images {
        return Err(Pass::NoImages);
    }
    if let Some(window) = candidate.context_window {
        let needed = f.prompt_tokens + f.max_tokens.unwrap_or(0);
        if needed > window {
            return Err(Pass::WindowTooSmall);
        }
    }
    if let (Some(asked), Some(limit), MaxTokensPolicy::Skip) = (
        f.max_tokens,
        candidate.max_output_tokens,
        config.fallback.max_tokens,
    ) {
        if asked > limit {
            return Err(Pass::OutputTooSmall);
        }
    }
    Ok(())
}

/// What to do after an attempt's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Done: success, or nothing another attempt could change.
    Stop,
    /// Ask the same model again (after the upstream's wait, when it gave one).
    Retry,
    /// Ask another model.
    Switch(String),
}

/// The decision after a failed attempt on `current`. `opened` says whether this failure opened
/// (or extended) the model's circuit; `admission` gives another model's health now.
#[allow(clippy::too_many_arguments)]
pub fn after_failure(
    config: &Config,
    chain: &[&ModelConfig],
    current: &ModelConfig,
    tried: &[String],
    verdict: &Verdict,
    opened: bool,
    priority: Priority,
    features: Option<&Features>,
    admission: &dyn Fn(&ModelConfig) -> Admission,
) -> Next {
    if !verdict.class.another_model_may_help() {
        return Next::Stop;
    }
    // A short stated wait, or a model whose circuit is still closed, is worth asking again; not
    // a model cooling down, whoever's failure opened its circuit (another request's, on this
    // worker or another).
    // The class decides first: the health read is paid only when asking again is on the table.
    let retry_here = match verdict.class {
        ErrorClass::RateLimited => {
            !opened
                && verdict
                    .retry_after_ms
                    .is_none_or(|w| w <= config.switch_rule(&current.name).wait_over_ms)
        }
        ErrorClass::Overloaded | ErrorClass::Timeout => !opened,
        ErrorClass::QuotaExhausted
        | ErrorClass::ModelUnavailable
        | ErrorClass::ContextOverflow
        | ErrorClass::Ok
        | ErrorClass::Auth
        | ErrorClass::BadRequest
        | ErrorClass::ContentPolicy => false,
    } && !matches!(admission(current), Admission::Cooling { .. });
    if retry_here {
        return Next::Retry;
    }
    if priority == Priority::Batch {
        return Next::Stop;
    }
    let requested = chain.first().copied().unwrap_or(current);
    let start = chain
        .iter()
        .position(|m| m.name == current.name)
        .map_or(0, |i| i + 1);
    let next = chain.iter().skip(start).find(|candidate| {
        if tried.contains(&candidate.name) {
            return false;
        }
        if verdict.class == ErrorClass::ContextOverflow {
            let larger = match (candidate.context_window, current.context_window) {
                (Some(c), Some(cur)) => c > cur,
                _ => false,
            };
            if !larger {
                return false;
            }
        }
        fits(config, candidate, requested, priority, features).is_ok()
            && !matches!(admission(candidate), Admission::Cooling { .. })
    });
    match next {
        Some(model) => Next::Switch(model.name.clone()),
        None => Next::Stop,
    }
}

/// Bounds the wait an answer stated: above `max_ms` it is cut to `max_ms`. Returns what was
/// done with a stated wait that could not be used as stated.
pub fn bound_wait(verdict: &mut Verdict, max_ms: u64) -> Option<WaitHintOutcome> {
    if let Some(wait) = verdict.retry_after_ms {
        if wait > max_ms {
            verdict.retry_after_ms = Some(max_ms);
            return Some(WaitHintOutcome::Capped);
        }
    }
    (verdict.wait_hint == WaitHint::Ignored).then_some(WaitHintOutcome::Ignored)
}

/// Why a chain model could not take a request at routing time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Out {
    /// Cooling down after an answer of this class (`None`: no reason recorded), until then.
    Cooling {
        reason: Option<ErrorClass>,
        until_ms: u64,
    },
    /// Drained by configuration.
    Drained,
}

/// What to do when no model of a request's chain can take it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exhausted {
    /// Every model is out for a reason that a request now cannot change (quota, a long rate
    /// limit, missing or drained): answer locally, without calling the upstream.
    Answer {
        status: u16,
        class: ErrorClass,
        /// Until the soonest model may serve again (`None`: not known, e.g. all drained).
        retry_after_ms: Option<u64>,
    },
    /// Some model is out for a transient reason (overload, timeouts, a probe in flight): ask
    /// the requested model once, as a probe.
    Probe,
}

/// Decides what a request gets when every model of its chain is out. `outs` has one entry per
/// chain model that was out (models passed over for the request's own needs are not in it).
pub fn when_exhausted(outs: &[Out], now_ms: u64) -> Exhausted {
    let settled = |out: &Out| match out {
        Out::Drained => true,
        Out::Cooling { reason, .. } => matches!(
            reason,
            Some(
                ErrorClass::QuotaExhausted | ErrorClass::ModelUnavailable | ErrorClass::RateLimited
            )
        ),
    };
    if outs.is_empty() || !outs.iter().all(settled) {
        return Exhausted::Probe;
    }
    let reason_of = |out: &Out| match out {
        Out::Drained => ErrorClass::ModelUnavailable,
        Out::Cooling { reason, .. } => reason.unwrap_or(ErrorClass::ModelUnavailable),
    };
    let class = [ErrorClass::QuotaExhausted, ErrorClass::RateLimited]
        .into_iter()
        .find(|c| outs.iter().any(|o| reason_of(o) == *c))
        .unwrap_or(ErrorClass::ModelUnavailable);
    let retry_after_ms = outs
        .iter()
        .filter_map(|o| match o {
            Out::Cooling { until_ms, .. } => Some(until_ms.saturating_sub(now_ms)),
            Out::Drained => None,
        })
        .min();
    let status = match class {
        ErrorClass::ModelUnavailable => 503,
        _ => 429,
    };
    Exhausted::Answer {
        status,
        class,
        retry_after_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn config() -> Config {
        Config::from_value(json!({
            "models": [
                {"name": "big", "tier": "flagship", "context_window": 100000},
                {"name": "mid", "tier": "general", "tools": false, "context_window": 200000},
                {"name": "small", "tier": "light", "context_window": 16000, "max_output_tokens": 1000},
                {"name": "big2", "tier": "flagship", "context_window": 300000}
            ],
            "fallback": {"chains": {"big": ["mid", "small", "big2"]},
                         "tasks": {"code": ["big2", "big"]}}
        }))
        .unwrap()
    }

    fn verdict(class: ErrorClass, wait: Option<u64>) -> Verdict {
        Verdict {
            class,
            retry_after_ms: wait,
            reason: String::new(),
            scope: crate::classify::Scope::Model,
            wait_hint: crate::classify::WaitHint::Absent,
        }
    }

    fn decide(
        class: ErrorClass,
        wait: Option<u64>,
        opened: bool,
        priority: Priority,
        features: Option<&Features>,
    ) -> Next {
        let c = config();
        let chain = chain(&c, "big", None);
        after_failure(
            &c,
            &chain,
            chain[0],
            &["big".into()],
            &verdict(class, wait),
            opened,
            priority,
            features,
            &|_| Admission::Healthy,
        )
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn chains_come_from_the_model_or_the_task() {
        let c = config();
        let names = |v: Vec<&ModelConfig>| v.iter().map(|m| m.name.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(chain(&c, "big", None)),
            ["big", "mid", "small", "big2"]
        );
        assert_eq!(names(chain(&c, "big", Some("code"))), ["big2", "big"]);
        assert_eq!(
            names(chain(&c, "big", Some("unknown-task"))),
            ["big", "mid", "small", "big2"]
        );
        assert_eq!(names(chain(&c, "unlisted", None)), Vec::<String>::new());
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn each_class_gets_its_decision() {
        use ErrorClass::*;
        let n = Priority::Normal;
        assert_eq!(
            decide(QuotaExhausted, None, true, n, None),
            Next::Switch("mid".into())
        );
        assert_eq!(decide(RateLimited, Some(1000), false, n, None), Next::Retry);
        assert_eq!(
            decide(RateLimited, Some(120_000), true, n, None),
            Next::Switch("mid".into())
        );
        assert_eq!(decide(Overloaded, None, false, n, None), Next::Retry);
        assert_eq!(
            decide(Overloaded, None, true, n, None),
            Next::Switch("mid".into())
        );
        assert_eq!(
            decide(Timeout, None, true, n, None),
            Next::Switch("mid".into())
        );
        assert_eq!(
            decide(ModelUnavailable, None, true, n, None),
            Next::Switch("mid".into())
        );
        // Only a larger window helps a context overflow.
        assert_eq!(
            decide(ContextOverflow, None, false, n, None),
            Next::Switch("mid".into())
        );
        for stop in [Auth, BadRequest, ContentPolicy, Ok] {
            assert_eq!(decide(stop, None, true, n, None), Next::Stop);
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn priorities_and_capabilities_limit_the_choice() {
        use ErrorClass::*;
        assert_eq!(
            decide(QuotaExhausted, None, true, Priority::Batch, None),
            Next::Stop
        );
        assert_eq!(
            decide(QuotaExhausted, None, true, Priority::Critical, None),
            Next::Switch("big2".into())
        );
        let tools = Features {
            tools: true,
            ..Features::default()
        };
        assert_eq!(
            decide(QuotaExhausted, None, true, Priority::Normal, Some(&tools)),
            Next::Switch("small".into())
        );
        let long = Features {
            prompt_tokens: 150_000,
            ..Features::default()
        };
        assert_eq!(
            decide(QuotaExhausted, None, true, Priority::Normal, Some(&long)),
            Next::Switch("mid".into())
        );
        let huge = Features {
            prompt_tokens: 250_000,
            ..Features::default()
        };
        assert_eq!(
            decide(QuotaExhausted, None, true, Priority::Normal, Some(&huge)),
            Next::Switch("big2".into())
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn cooling_and_tried_models_are_skipped() {
        let c = config();
        let chain = chain(&c, "big", None);
        let next = after_failure(
            &c,
            &chain,
            chain[0],
            &["big".into(), "mid".into()],
            &verdict(ErrorClass::QuotaExhausted, None),
            true,
            Priority::Normal,
            None,
            &|m| {
                if m.name == "small" {
                    Admission::Cooling { until_ms: 9 }
                } else {
                    Admission::Healthy
                }
            },
        );
        assert_eq!(next, Next::Switch("big2".into()));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_model_another_request_cooled_is_not_asked_again() {
        // Its circuit was opened by other requests' failures (this one's failure opened
        // nothing): asking it again would spend the route's retries on a model known down.
        let c = config();
        let chain = chain(&c, "big", None);
        let cooling_big = |m: &ModelConfig| {
            if m.name == "big" {
                Admission::Cooling { until_ms: 9 }
            } else {
                Admission::Healthy
            }
        };
        for (class, wait) in [
            (ErrorClass::Overloaded, None),
            (ErrorClass::Timeout, None),
            (ErrorClass::RateLimited, Some(1000)),
        ] {
            let next = after_failure(
                &c,
                &chain,
                chain[0],
                &["big".into()],
                &verdict(class, wait),
                false,
                Priority::Normal,
                None,
                &cooling_big,
            );
            assert_eq!(next, Next::Switch("mid".into()), "{class:?}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn features_are_read_from_real_bodies() {
        let f = Features::of_body(br#"{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}],"tools":[{"type":"function"}],"response_format":{"type":"json_schema"},"max_tokens":50,"model":"m"}"#);
        assert!(f.tools && f.json_schema && f.images);
        assert_eq!(f.max_tokens, Some(50));
        let f = Features::of_body(
            br#"{"contents":[{"parts":[{"inline_data":{"mime_type":"image/png","data":""}}]}]}"#,
        );
        assert!(f.images && !f.tools);
        let f = Features::of_body(
            br#"{"messages":[{"role":"user","content":"tools image_url"}],"tools":[]}"#,
        );
        assert!(!f.tools && !f.images);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn stated_waits_are_bounded() {
        let mut v = verdict(ErrorClass::RateLimited, Some(1_000_000_000_000));
        assert_eq!(
            bound_wait(&mut v, 86_400_000),
            Some(WaitHintOutcome::Capped)
        );
        assert_eq!(v.retry_after_ms, Some(86_400_000));
        let mut v = verdict(ErrorClass::RateLimited, Some(2000));
        assert_eq!(bound_wait(&mut v, 86_400_000), None);
        assert_eq!(v.retry_after_ms, Some(2000));
        let mut v = verdict(ErrorClass::RateLimited, None);
        v.wait_hint = WaitHint::Ignored;
        assert_eq!(bound_wait(&mut v, 1000), Some(WaitHintOutcome::Ignored));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn an_exhausted_chain_is_answered_by_why() {
        let quota = |until_ms| Out::Cooling {
            reason: Some(ErrorClass::QuotaExhausted),
            until_ms,
        };
        let overload = Out::Cooling {
            reason: Some(ErrorClass::Overloaded),
            until_ms: 5000,
        };
        assert_eq!(
            when_exhausted(&[quota(60_000), quota(9_000), Out::Drained], 1000),
            Exhausted::Answer {
                status: 429,
                class: ErrorClass::QuotaExhausted,
                retry_after_ms: Some(8000)
            }
        );
        assert_eq!(
            when_exhausted(&[quota(60_000), overload], 1000),
            Exhausted::Probe
        );
        assert_eq!(
            when_exhausted(&[Out::Drained], 1000),
            Exhausted::Answer {
                status: 503,
                class: ErrorClass::ModelUnavailable,
                retry_after_ms: None
            }
        );
        assert_eq!(when_exhausted(&[], 1000), Exhausted::Probe);
        let missing = Out::Cooling {
            reason: Some(ErrorClass::ModelUnavailable),
            until_ms: 3000,
        };
        assert_eq!(
            when_exhausted(&[missing], 1000),
            Exhausted::Answer {
                status: 503,
                class: ErrorClass::ModelUnavailable,
                retry_after_ms: Some(2000)
            }
        );
    }
}
