//! Real provider error answers for a step's `preset` field.
//!
//! Bodies are the bytes providers sent (pretty-printing included), taken from
//! the repository's `tests/fixtures/provider_errors.jsonl` or from the public
//! report named beside each one; where a capture lacked part of the answer,
//! the comment says what was filled in and from where.

/// One preset answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    pub status: u16,
    pub headers: &'static [(&'static str, &'static str)],
    pub body: &'static str,
}

/// All presets, by name.
pub const PRESETS: &[Preset] = &[
    // Fixture openai-429-insufficient-quota (github.com/ChatGPTNextWeb/NextChat/issues/4101).
    Preset {
        name: "openai_insufficient_quota",
        status: 429,
        headers: &[],
        body: "{\n  \"error\": {\n    \"message\": \"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.\",\n    \"type\": \"insufficient_quota\",\n    \"param\": null,\n    \"code\": \"insufficient_quota\"\n  }\n}",
    },
    // TPM message as in github.com/BuilderIO/micro-agent/issues/86 and fixture openai-429-tpm-try-again-ms
    // (type "tokens", code "rate_limit_exceeded"); numbers and wait set to 1s; x-ratelimit-* as OpenAI documents them.
    Preset {
        name: "openai_rate_limit",
        status: 429,
        headers: &[
            ("retry-after", "1"),
            ("x-ratelimit-limit-requests", "500"),
            ("x-ratelimit-limit-tokens", "30000"),
            ("x-ratelimit-remaining-requests", "499"),
            ("x-ratelimit-remaining-tokens", "0"),
            ("x-ratelimit-reset-requests", "120ms"),
            ("x-ratelimit-reset-tokens", "1s"),
        ],
        body: "{\n  \"error\": {\n    \"message\": \"Rate limit reached for gpt-4o in organization org-mock on tokens per min (TPM): Limit 30000, Used 29937, Requested 385. Please try again in 1s. Visit https://platform.openai.com/account/rate-limits to learn more.\",\n    \"type\": \"tokens\",\n    \"param\": null,\n    \"code\": \"rate_limit_exceeded\"\n  }\n}",
    },
    // OpenAI's per-day wording ("... on requests per day (RPD): Limit 1000, Used 1000, Requested 1. Please try
    // again in 1m26.4s.", github.com/openai/openai-agents-js/issues/1022) for tokens (TPD) on gpt-4o; TPM envelope above.
    Preset {
        name: "openai_tokens_per_day",
        status: 429,
        headers: &[],
        body: "{\n  \"error\": {\n    \"message\": \"Rate limit reached for gpt-4o in organization org-mock on tokens per day (TPD): Limit 90000, Used 89663, Requested 1385. Please try again in 16m46.08s. Visit https://platform.openai.com/account/rate-limits to learn more.\",\n    \"type\": \"tokens\",\n    \"param\": null,\n    \"code\": \"rate_limit_exceeded\"\n  }\n}",
    },
    // Fixture openai-500-server-error (github.com/acheong08/ChatGPT/issues/607).
    Preset {
        name: "openai_server_error",
        status: 500,
        headers: &[],
        body: "{\n  \"error\": {\n    \"message\": \"The server experienced an error while processing your request. Sorry about that! You can retry your request, or contact us through our help center at help.openai.com if the error persists.\",\n    \"type\": \"server_error\",\n    \"param\": null,\n    \"code\": null\n  }\n}",
    },
    // Message from github.com/openai/codex/issues/39571 (and many alike); error type/code from fixture
    // openai-sse-200-responses-server-is-overloaded (openai/codex/issues/43337), in OpenAI's plain error envelope.
    Preset {
        name: "capacity",
        status: 503,
        headers: &[],
        body: "{\n  \"error\": {\n    \"message\": \"Selected model is at capacity. Please try a different model.\",\n    \"type\": \"service_unavailable_error\",\n    \"param\": null,\n    \"code\": \"server_is_overloaded\"\n  }\n}",
    },
    // Fixture anthropic-400-credit-balance-too-low (github.com/anthropics/claude-code/issues/66314).
    Preset {
        name: "anthropic_credit_balance",
        status: 400,
        headers: &[],
        body: "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.\"},\"request_id\":\"req_011CbrFTcXhtiMzr3s6EocF7\"}",
    },
    // Fixture anthropic-529-overloaded-with-headers (github.com/anthropics/anthropic-sdk-typescript/issues/616).
    Preset {
        name: "anthropic_overloaded",
        status: 529,
        headers: &[("x-should-retry", "true")],
        body: "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
    },
    // Fixture anthropic-429-input-tpm-rate-limit (github.com/cline/cline/issues/252); retry-after and
    // anthropic-ratelimit-* headers as Anthropic documents them for 429s (not in that capture).
    Preset {
        name: "anthropic_rate_limit",
        status: 429,
        headers: &[
            ("retry-after", "1"),
            ("anthropic-ratelimit-input-tokens-limit", "40000"),
            ("anthropic-ratelimit-input-tokens-remaining", "0"),
        ],
        body: "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of request tokens has exceeded your per-minute rate limit (https://docs.anthropic.com/en/api/rate-limits); see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase.\"}}",
    },
    // Fixture deepseek-402-insufficient-balance (github.com/Aider-AI/aider/issues/4851).
    Preset {
        name: "deepseek_insufficient_balance",
        status: 402,
        headers: &[],
        body: "{\"error\":{\"message\":\"Insufficient Balance\",\"type\":\"unknown_error\",\"param\":null,\"code\":\"invalid_request_error\"}}",
    },
    // Details from github.com/googleapis/python-genai/issues/2044 (Python repr turned into JSON, QuotaFailure cut to
    // its per-day violation, RetryInfo 47s); message and layout as in fixture gemini-429-free-tier-input-tpm-retryinfo.
    Preset {
        name: "google_per_model_quota",
        status: 429,
        headers: &[],
        body: "{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\",\n    \"status\": \"RESOURCE_EXHAUSTED\",\n    \"details\": [\n      {\n        \"@type\": \"type.googleapis.com/google.rpc.Help\",\n        \"links\": [\n          {\n            \"description\": \"Learn more about Gemini API quotas\",\n            \"url\": \"https://ai.google.dev/gemini-api/docs/rate-limits\"\n          }\n        ]\n      },\n      {\n        \"@type\": \"type.googleapis.com/google.rpc.QuotaFailure\",\n        \"violations\": [\n          {\n            \"quotaMetric\": \"generativelanguage.googleapis.com/generate_content_free_tier_requests\",\n            \"quotaId\": \"GenerateRequestsPerDayPerProjectPerModel-FreeTier\",\n            \"quotaDimensions\": {\n              \"location\": \"global\",\n              \"model\": \"gemini-2.0-flash\"\n            }\n          }\n        ]\n      },\n      {\n        \"@type\": \"type.googleapis.com/google.rpc.RetryInfo\",\n        \"retryDelay\": \"47s\"\n      }\n    ]\n  }\n}\n",
    },
    // Fixture gemini-429-free-tier-input-tpm-retryinfo (github.com/RooCodeInc/Roo-Code/issues/3883): per-minute.
    Preset {
        name: "google_rate_limit",
        status: 429,
        headers: &[],
        body: "{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\",\n    \"status\": \"RESOURCE_EXHAUSTED\",\n    \"details\": [\n      {\n        \"@type\": \"type.googleapis.com/google.rpc.QuotaFailure\",\n        \"violations\": [\n          {\n            \"quotaMetric\": \"generativelanguage.googleapis.com/generate_content_free_tier_input_token_count\",\n            \"quotaId\": \"GenerateContentInputTokensPerModelPerMinute-FreeTier\",\n            \"quotaDimensions\": {\n              \"location\": \"global\",\n              \"model\": \"gemini-2.5-flash\"\n            },\n            \"quotaValue\": \"250000\"\n          }\n        ]\n      },\n      {\n        \"@type\": \"type.googleapis.com/google.rpc.Help\",\n        \"links\": [\n          {\n            \"description\": \"Learn more about Gemini API quotas\",\n            \"url\": \"https://ai.google.dev/gemini-api/docs/rate-limits\"\n          }\n        ]\n      },\n      {\n        \"@type\": \"type.googleapis.com/google.rpc.RetryInfo\",\n        \"retryDelay\": \"26s\"\n      }\n    ]\n  }\n}\n",
    },
    // Fixture gemini-503-model-overloaded (github.com/google-gemini/gemini-cli/issues/7392).
    Preset {
        name: "google_overloaded",
        status: 503,
        headers: &[],
        body: "{\"error\":{\"code\":503,\"message\":\"The model is overloaded. Please try again later.\",\"status\":\"UNAVAILABLE\"}}",
    },
];

impl Preset {
    /// The body's top-level `error` object as one line of JSON, in the
    /// body's own key order (what a mid-stream error event carries).
    pub fn error_object(&self) -> Option<String> {
        let body = compact(self.body);
        let start = body.find("\"error\":{")? + "\"error\":".len();
        let end = object_end(&body, start)?;
        body.get(start..end).map(str::to_string)
    }
}

/// `json` without the whitespace outside strings.
fn compact(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if c.is_ascii_whitespace() {
            continue;
        }
        out.push(c);
    }
    out
}

/// The end (exclusive) of the JSON object starting at `json[start]`.
fn object_end(json: &str, start: usize) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, b) in json.bytes().enumerate().skip(start) {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The preset called `name`.
pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// Comma-separated preset names, for error messages.
pub fn names() -> String {
    PRESETS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn every_preset_is_a_json_error_with_a_real_status() {
        for p in PRESETS {
            let v: Value =
                serde_json::from_str(p.body).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert!(v["error"].is_object(), "{}", p.name);
            assert!((400..=599).contains(&p.status), "{}", p.name);
            assert_eq!(find(p.name), Some(p));
        }
        let mut names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PRESETS.len(), "names are unique");
        assert!(find("nope").is_none());
    }

    #[test]
    fn error_objects_keep_key_order_on_one_line() {
        for p in PRESETS {
            let obj = p.error_object().unwrap_or_else(|| panic!("{}", p.name));
            assert!(!obj.contains('\n'), "{}", p.name);
            let body: Value = serde_json::from_str(p.body).unwrap();
            let parsed: Value = serde_json::from_str(&obj).unwrap();
            assert_eq!(parsed, body["error"], "{}", p.name);
        }
        let anthropic = find("anthropic_overloaded").and_then(Preset::error_object);
        assert_eq!(
            anthropic.as_deref(),
            Some(r#"{"type":"overloaded_error","message":"Overloaded"}"#)
        );
        // Whitespace inside strings and escaped quotes survive.
        assert_eq!(
            compact("{ \"a b\" : \"x\\\" }\" }"),
            "{\"a b\":\"x\\\" }\"}"
        );
        assert_eq!(object_end(r#"{"a":"}"}"#, 0), Some(9));
        assert_eq!(object_end("{", 0), None);
    }

    #[test]
    fn bodies_say_what_they_should() {
        let body = |name| find(name).map(|p| p.body).unwrap_or_default();
        assert!(body("openai_insufficient_quota").contains("\"code\": \"insufficient_quota\""));
        assert!(body("openai_rate_limit").contains("Please try again in 1s"));
        assert!(body("openai_tokens_per_day").contains("on tokens per day (TPD)"));
        assert!(body("google_per_model_quota").contains("PerDayPerProjectPerModel"));
        assert!(body("google_per_model_quota").contains("RetryInfo"));
        assert!(body("capacity").contains("Selected model is at capacity"));
        assert!(body("deepseek_insufficient_balance").contains("Insufficient Balance"));
    }
}
