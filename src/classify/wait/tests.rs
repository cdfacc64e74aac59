//! Wait hints from every source, with nonsense and edge cases.
use super::*;
use serde_json::json;
use wasm_bindgen_test::wasm_bindgen_test;

/// 2024-11-04T19:00:00Z
const NOW: u64 = 1_730_746_800_000;
/// 1994-11-06T08:49:37Z, the RFC 9110 example date.
const RFC_EXAMPLE_MS: i128 = 784_111_777_000;

#[wasm_bindgen_test(unsupported = test)]
fn days_from_civil_known_dates() {
    for (y, m, d, days) in [
        (1970, 1, 1, 0),
        (1969, 12, 31, -1),
        (2000, 3, 1, 11_017),
        (2024, 2, 29, 19_782),
        (1, 1, 1, -719_162),
        (9999, 12, 31, 2_932_896),
    ] {
        assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn year_from_days_inverts_days_from_civil() {
    let mut day = -719_162; // 0001-01-01
    while day < 2_932_897 {
        let y = year_from_days(day);
        assert!(
            days_from_civil(y, 1, 1) <= day && day < days_from_civil(y + 1, 1, 1),
            "day {day} -> year {y}"
        );
        day += 97;
    }
    assert_eq!(year_from_days(0), 1970);
    assert_eq!(year_from_days(-1), 1969);
    assert_eq!(year_from_days(19_782), 2024);
}

#[wasm_bindgen_test(unsupported = test)]
fn http_dates_all_three_forms() {
    for v in [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        "sun, 6 nov 1994 08:49:37 gmt",
    ] {
        assert_eq!(http_date_ms(v, NOW), Some(RFC_EXAMPLE_MS), "{v}");
    }
    // Two-digit years: at most 50 years ahead of now (2024).
    let year = |yy: &str| {
        let v = format!("Monday, 01-Jan-{yy} 00:00:00 GMT");
        http_date_ms(&v, NOW).map(|ms| year_from_days((ms / MS_PER_DAY) as i64))
    };
    assert_eq!(year("94"), Some(1994));
    assert_eq!(year("30"), Some(2030));
    assert_eq!(year("74"), Some(2074));
    assert_eq!(year("75"), Some(1975));
    assert_eq!(year("2030"), Some(2030));
}

use Stated::{Nonsense as N, Wait as W};

/// One year (366 days) in seconds: the longest plausible wait.
const MAX_S: &str = "31622400";

#[wasm_bindgen_test(unsupported = test)]
fn retry_after_cases() {
    let cases: &[(&str, Stated)] = &[
        ("20", W(20_000)),
        ("  20\t", W(20_000)),
        ("0", W(0)),
        ("1.5", W(1_500)),
        ("0.0005", W(1)),
        ("0.0004", W(0)),
        (MAX_S, W(MAX_WAIT_MS)),
        ("Mon, 04 Nov 2024 19:00:30 GMT", W(30_000)),
        ("Monday, 04-Nov-24 19:01:00 GMT", W(60_000)),
        ("Mon Nov  4 19:00:05 2024", W(5_000)),
        // A date a few seconds past (one-second resolution, clock skew) means now.
        ("Mon, 04 Nov 2024 18:59:57 GMT", W(0)),
        // Nonsense: further in the past, more than a year ahead, overflowing, negative,
        // not a number.
        ("Mon, 04 Nov 2024 18:59:50 GMT", N),
        ("Thu, 29 Feb 2024 00:00:00 GMT", N),
        ("Sun, 06 Nov 1994 08:49:37 GMT", N),
        ("Sunday, 06-Nov-94 08:49:37 GMT", N),
        ("Sun Nov  6 08:49:37 1994", N),
        ("Fri, 31 Dec 9999 23:59:59 GMT", N),
        ("Wed, 05 Nov 2025 19:00:01 GMT", N),
        ("Wed, 05 Nov 2025 19:00:00 GMT", W(MAX_WAIT_MS)),
        ("31622401", N),
        ("1000000000000", N),
        ("99999999999999999999999999999999", N),
        ("", N),
        ("abc", N),
        ("-5", N),
        ("-0", N),
        ("+5", N),
        ("1e3", N),
        ("NaN", N),
        ("inf", N),
        ("20s", N),
        (".", N),
        ("1.2.3", N),
        ("Sun, 06 Nov 1994 08:49:37 PST", N),
        ("Sun, 32 Nov 1994 08:49:37 GMT", N),
        ("Wed, 29 Feb 2023 00:00:00 GMT", N),
        ("Sun, 06 Foo 1994 08:49:37 GMT", N),
        ("Sun, 06 Nov 1994 24:00:00 GMT", N),
        ("Sun, 06 Nov 1994 08:60:00 GMT", N),
        ("Xyz, 06 Nov 1994 08:49:37 GMT", N),
        ("Sun 06 Nov 1994 08:49:37 GMT", N),
        ("Sun, 06 Nov 94 08:49:37 GMT", N),
        ("Sun, 06 Nov 1994 08:49 GMT", N),
        ("Sunday, 06-Nov-94 08:49:37", N),
        ("Sun Nov  6 08:49:37", N),
    ];
    for (v, want) in cases {
        assert_eq!(retry_after(v, NOW), *want, "{v:?}");
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn retry_after_ms_cases() {
    let cases: &[(&str, Stated)] = &[
        ("250", W(250)),
        (" 30 ", W(30)),
        ("0", W(0)),
        ("1.5", W(2)),
        ("1.4", W(1)),
        ("31622400000", W(MAX_WAIT_MS)),
        ("31622400001", N),
        ("99999999999999999999999999", N),
        ("1e309", N),
        ("NaN", N),
        ("Infinity", N),
        ("", N),
        ("abc", N),
        ("-1", N),
        ("1e2", N),
        ("10ms", N),
    ];
    for (v, want) in cases {
        assert_eq!(retry_after_ms(v), *want, "{v:?}");
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn duration_cases() {
    let cases: &[(&str, Option<Stated>)] = &[
        ("6m0s", Some(W(360_000))),
        ("1.5s", Some(W(1_500))),
        ("20ms", Some(W(20))),
        ("1h2m3.5s", Some(W(3_723_500))),
        ("2m59.56s", Some(W(179_560))),
        ("0.5s", Some(W(500))),
        ("23s", Some(W(23_000))),
        ("7.66s", Some(W(7_660))),
        ("1m", Some(W(60_000))),
        ("18.403112549s", Some(W(18_403))),
        (" 2s ", Some(W(2_000))),
        (".5s", Some(W(500))),
        ("0s", Some(W(0))),
        ("1H", Some(W(3_600_000))),
        ("500us", Some(W(1))),
        ("2000µs", Some(W(2))),
        ("1500000ns", Some(W(2))),
        ("8784h", Some(W(MAX_WAIT_MS))),
        ("8784h1s", Some(N)),
        ("9999999999999999999999999h", Some(N)),
        ("", None),
        ("   ", None),
        ("23", None),
        ("0", None),
        ("1.5", None),
        ("-1s", None),
        ("+1s", None),
        ("1d", None),
        ("1 s", None),
        ("1m 30s", None),
        ("s", None),
        ("ms", None),
        ("1.2.3s", None),
        (".s", None),
        ("1x", None),
        ("1s2", None),
    ];
    for (v, want) in cases {
        assert_eq!(duration(v), *want, "{v:?}");
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn reset_time_cases() {
    let cases: &[(&str, Option<Stated>)] = &[
        ("2024-11-04T19:10:00Z", Some(W(600_000))),
        ("2024-11-04T19:10:00.5Z", Some(W(600_500))),
        ("2024-11-04T19:10:00.123456789Z", Some(W(600_123))),
        ("2024-11-04T21:10:00+02:00", Some(W(600_000))),
        ("2024-11-04T14:10:00-05:00", Some(W(600_000))),
        ("2024-11-04T21:10:00+0200", Some(W(600_000))),
        ("2024-11-04T19:10:00", Some(W(600_000))),
        ("2024-11-04t19:10:00z", Some(W(600_000))),
        ("2024-11-04 19:10:00Z", Some(W(600_000))),
        (" 2024-11-04T19:10:00Z ", Some(W(600_000))),
        ("2024-11-04T18:59:58Z", Some(W(0))),
        ("1730747400", Some(W(600_000))),
        ("1730747400000", Some(W(600_000))),
        ("1730747400.5", Some(W(600_500))),
        // In the past, years ahead, overflowing: nonsense.
        ("2024-11-04T18:00:00Z", Some(N)),
        ("1730000000", Some(N)),
        ("2034-11-04T19:00:00Z", Some(N)),
        ("2046322800", Some(N)),
        ("9999-12-31T23:59:59Z", Some(N)),
        ("99999999999999999999999999", Some(N)),
        // Not an absolute time at all.
        ("60", None),
        ("1000000000", None),
        ("", None),
        ("garbage", None),
        ("-1730747400", None),
        ("2024-13-04T19:10:00Z", None),
        ("2024-02-30T19:10:00Z", None),
        ("2024-11-04T19:10Z", None),
        ("2024-11-04T19:10:00.Z", None),
        ("2024-11-04T19:10:00+2:00", None),
        ("2024-11-04T19:10:00+24:00", None),
        ("2024-11-04T19:10:00Zjunk", None),
        ("24-11-04T19:10:00Z", None),
    ];
    for (v, want) in cases {
        assert_eq!(reset_time(v, NOW), *want, "{v:?}");
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn reset_header_cases() {
    let cases: &[(&str, Stated)] = &[
        ("6m0s", W(360_000)),
        ("1s", W(1_000)),
        ("2024-11-04T19:10:00Z", W(600_000)),
        ("1730747400", W(600_000)),
        ("1730747400000", W(600_000)),
        ("60", W(60_000)),
        ("0.5", W(500)),
        ("0", W(0)),
        ("Mon, 04 Nov 2024 19:00:30 GMT", W(30_000)),
        // Ten years ahead (unix seconds, RFC 3339), in the past, unparseable.
        ("2046322800", N),
        ("2034-11-04T19:00:00Z", N),
        ("1730000000", N),
        ("999999999", N),
        ("soon", N),
        ("", N),
        ("-5", N),
        ("NaN", N),
    ];
    for (v, want) in cases {
        assert_eq!(reset_header(v, NOW), *want, "{v:?}");
    }
}

/// Each message reads as its wait in ms, or as no wait.
fn assert_waits(cases: &[(&str, Option<u64>)]) {
    for (v, want) in cases {
        assert_eq!(from_message(v), want.map(W), "{v:?}");
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn from_message_cases() {
    let cases: &[(&str, Option<u64>)] = &[
        ("Please try again in 20s.", Some(20_000)),
        ("Please try again in 399ms.", Some(399)),
        ("try again in 1.5s", Some(1_500)),
        ("Please try again in 6m0s.", Some(360_000)),
        ("Please try again in 1m30.5s", Some(90_500)),
        ("Please retry in 18.403112549s.", Some(18_403)),
        ("retry after 5 seconds", Some(5_000)),
        ("Please retry after 20 seconds.", Some(20_000)),
        ("try again in 2 minutes", Some(120_000)),
        ("in 30 sec", Some(30_000)),
        ("Retry after 60s", Some(60_000)),
        ("Please wait 10 seconds before retrying", Some(10_000)),
        ("Please try again after 1 hour", Some(3_600_000)),
        ("Try Again In 5 Seconds", Some(5_000)),
        ("Retrying in 2h30m", Some(9_000_000)),
        ("or try again in 4 days 2 hours 1 minute.", Some(352_860_000)),
        ("请在 2 天后重试", Some(172_800_000)),
        ("Please wait for 1 minute and 30 seconds", Some(90_000)),
        ("try again in 5 seconds 3 times", Some(5_000)),
        ("retry after 5s or wait 10s", Some(5_000)),
        ("Too many requests. In 2 hrs the quota resets", Some(7_200_000)),
        (
            "Rate limit reached for gpt-4 in organization org-abc on tokens per min (TPM): \
             Limit 10000, Used 9000, Requested 1766. Please try again in 7.66s. \
             Visit https://platform.openai.com/account/rate-limits to learn more.",
            Some(7_660),
        ),
        (
            "You exceeded your current quota, please check your plan and billing details. \
             For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n\
             * Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, \
             limit: 10\nPlease retry in 18.403112549s.",
            Some(18_403),
        ),
        (
            "Rate limited (error 429). Please try again in 20s; limit 10000 per 1m",
            Some(20_000),
        ),
        ("请在 5 秒后重试", Some(5_000)),
        ("请在5秒后重试", Some(5_000)),
        ("请 30 秒后再试", Some(30_000)),
        ("已达到费用限制 ($5)，将在 12 分钟后重置", Some(720_000)),
        ("tente novamente em 12 segundos", Some(12_000)),
        ("réessayez dans 8 secondes", Some(8_000)),
        ("silakan coba lagi dalam 2 menit", Some(120_000)),
        ("повторите через 30 секунд", Some(30_000)),
        ("vui lòng thử lại sau 5 phút", Some(300_000)),
        ("请求过多，请在 1 分钟后重试", Some(60_000)),
        ("请等待 2 小时", Some(7_200_000)),
        ("rate limited请在 5 秒后重试", Some(5_000)),
        // The number first, "after" and a retry next (Japanese, Korean, Chinese without "请").
        ("リクエストが多すぎます。1分後に再試行してください。", Some(60_000)),
        ("30秒後に再度お試しください", Some(30_000)),
        ("利用上限に達しました。24時間後にリセットされます", Some(86_400_000)),
        ("요청이 너무 많습니다. 1분 후 다시 시도해 주세요.", Some(60_000)),
        ("30초 후에 재시도하세요", Some(30_000)),
        ("월간 한도 초과: 3일 후 초기화됩니다", Some(259_200_000)),
        ("当前请求过多，5分钟后再试", Some(300_000)),
        ("額度已用盡，1 個月後恢復", Some(2_592_000_000)),
        ("クォータは 00:00:38 後に補充されます。", Some(38_000)),
        // An "after" with no retry or reset is no wait; nor a count before "after".
        ("空闲连接 5 秒后断开", None),
        ("5分後にログアウトします", None),
        ("1月後に再試行", None),
        ("100回後に再試行", None),
        // An absurd wait is skipped for a later plausible one.
        ("try again in 99999h, or retry after 5s", Some(5_000)),
        // Clock-style: hours, minutes, seconds (Azure API Management's quota policy).
        ("Token quota is exceeded. Try again in 11:42:07.", Some(42_127_000)),
        ("try again in 0:00:30", Some(30_000)),
        // .NET's TimeSpan: days before the dot.
        ("Try again in 5.02:11:09.", Some(439_869_000)),
        // Two parts say nothing of their unit; minutes of 60 or more are no clock.
        ("try again in 05:30", None),
        ("try again in 1:75:00", None),
        ("请稍后重试", None),
        ("limit: 10000 tokens per min", None),
        ("model gpt-4-0613", None),
        ("error 429", None),
        ("", None),
        ("Please try again later.", None),
        ("try again in a few seconds", None),
        ("try again in 20", None),
        ("try again in 20%", None),
        ("You exceeded 100 requests in 1 minute", None),
        ("We await 5 seconds", None),
        ("retry in -5s", None),
    ];
    assert_waits(cases);
    // Stated, but more than a year: nonsense.
    for v in [
        "Please try again in 99999999999999999999999h",
        "retry after 9000h",
        "Please wait 9000 hours",
    ] {
        assert_eq!(from_message(v), Some(N), "{v:?}");
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn waits_in_smaller_languages() {
    let cases: &[(&str, Option<u64>)] = &[
        ("Försök igen om 45 sekunder.", Some(45_000)),
        ("Prøv igjen om 2 minutter.", Some(120_000)),
        ("Probeer het over 15 seconden opnieuw.", Some(15_000)),
        ("Zkuste to znovu za 3 minuty.", Some(180_000)),
        ("Spróbuj ponownie za 30 sekund.", Some(30_000)),
        ("Reîncercați peste 25 de secunde.", Some(25_000)),
        ("Pokušajte ponovno za 1 sat.", Some(3_600_000)),
        // Messages reach the reader lowercased (`evidence::normalize`), in every script.
        ("δοκιμάστε ξανά σε 12 δευτερόλεπτα.", Some(12_000)),
        ("опитайте отново след 20 секунди.", Some(20_000)),
        ("спробуйте через 2 хвилини.", Some(120_000)),
        ("נסו שוב בעוד 3 דקות", Some(180_000)),
        ("حاول مرة أخرى بعد 30 ثانية", Some(30_000)),
        ("Odota 10 sekuntia.", Some(10_000)),
        (
            "Käyttöraja saavutettu. Yritä uudelleen 4 tunnin kuluttua.",
            Some(14_400_000),
        ),
        ("Yritä uudelleen 30 sekunnin kuluttua.", Some(30_000)),
        ("Yritä uudelleen 3 kertaa.", None),
        ("Bitte warten Sie 20 Sekunden.", Some(20_000)),
        // Hungarian and Turkish write the wait before "after" (múlva, sonra).
        (
            "túl sok kérés, 45 másodperc múlva próbálja újra.",
            Some(45_000),
        ),
        ("lütfen 20 saniye sonra tekrar deneyin.", Some(20_000)),
        (
            "cok fazla istek: 20 saniye sonra tekrar deneyin.",
            Some(20_000),
        ),
        ("2 óra 15 perc múlva próbálja újra.", Some(8_100_000)),
        ("30 saniye sonra bağlantı kesilecek.", None),
        // No anchor: a count of seconds is no wait.
        ("Limit 20 sekund na żądanie.", None),
    ];
    assert_waits(cases);
}

#[wasm_bindgen_test(unsupported = test)]
fn body_fields_cases() {
    let retry_info = "type.googleapis.com/google.rpc.RetryInfo";
    let nest =
        |levels: usize| (0..levels).fold(json!({"retry_after": 1}), |inner, _| json!({"x": inner}));
    let many: Vec<Value> = (0..2000).map(|_| json!({})).collect();
    let mut late = many.clone();
    late.push(json!({"retry_after": 3}));
    let cases: Vec<(Value, Option<Stated>)> = vec![
        (
            json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
                {"@type": retry_info, "retryDelay": "23s"}
            ]}}),
            Some(W(23_000)),
        ),
        (
            json!({"@type": retry_info, "retryDelay": {"seconds": 23, "nanos": 500_000_000}}),
            Some(W(23_500)),
        ),
        (
            json!({"@type": retry_info, "retryDelay": {"seconds": "23"}}),
            Some(W(23_000)),
        ),
        (
            json!({"@type": retry_info, "retryDelay": {"nanos": 1_000_000}}),
            Some(W(1)),
        ),
        (json!({"@type": retry_info, "retryDelay": {}}), Some(N)),
        (
            json!({"@type": retry_info, "retryDelay": {"seconds": -1}}),
            Some(N),
        ),
        (json!({"@type": retry_info, "retryDelay": "soon"}), Some(N)),
        (
            json!({"@type": retry_info, "retryDelay": "99999999h"}),
            Some(N),
        ),
        (json!({"@type": retry_info, "retryDelay": null}), None),
        (json!({"retryDelay": "23s"}), None),
        (
            json!({"retry_after": 5, "error": {"details": [{"@type": retry_info, "retryDelay": "2s"}]}}),
            Some(W(2_000)),
        ),
        (
            json!({"retry_after_ms": 1500, "retry_after": 5}),
            Some(W(1_500)),
        ),
        (json!({"retry_after_ms": "250"}), Some(W(250))),
        (
            json!({"error": {"retry_after": 5, "resets_in_seconds": 100}}),
            Some(W(5_000)),
        ),
        (json!({"retryAfter": 2.5}), Some(W(2_500))),
        (json!({"retry_after_seconds": "7"}), Some(W(7_000))),
        (json!({"retry_after": "20s"}), Some(W(20_000))),
        (
            json!({"retry_after": "Mon, 04 Nov 2024 19:00:30 GMT"}),
            Some(W(30_000)),
        ),
        (
            json!({"error": {"type": "usage_limit_reached", "resets_in_seconds": 3600}}),
            Some(W(3_600_000)),
        ),
        (json!({"resets_at": 1_730_747_400}), Some(W(600_000))),
        (
            json!({"resets_at": 1_730_747_400_000_u64}),
            Some(W(600_000)),
        ),
        (
            json!({"resets_at": "2024-11-04T19:10:00Z"}),
            Some(W(600_000)),
        ),
        (
            json!({"resets_at": 1_730_747_400, "resets_in_seconds": 10}),
            Some(W(10_000)),
        ),
        (
            json!({"a": {"retry_after": 1}, "b": {"retry_after": 2}}),
            Some(W(1_000)),
        ),
        (json!([{"retry_after": 3}]), Some(W(3_000))),
        // Nonsense in a more trusted field gives way to a plausible one elsewhere.
        (
            json!({"retry_after_ms": -1, "retry_after": 3}),
            Some(W(3_000)),
        ),
        (
            json!({"a": {"retry_after": 1e300}, "b": {"resets_in_seconds": 4}}),
            Some(W(4_000)),
        ),
        // Nonsense alone.
        (json!({"resets_at": 1}), Some(N)),
        (json!({"resets_at": 2_046_322_800}), Some(N)),
        (json!({"resets_at": "soon"}), Some(N)),
        (json!({"retry_after": 1e300}), Some(N)),
        (json!({"retry_after": u64::MAX}), Some(N)),
        (json!({"retry_after": -5}), Some(N)),
        (json!({"retry_after": -0.5}), Some(N)),
        (json!({"retry_after": true}), Some(N)),
        (json!({"retry_after": "soon"}), Some(N)),
        (json!({"retry_after": [1]}), Some(N)),
        (json!({"retry_after": null}), None),
        (json!({"message": "Please try again in 20s"}), None),
        (json!("retry_after"), None),
        (json!(null), None),
        (nest(6), Some(W(1_000))),
        (nest(7), None),
        (Value::Array(late), None),
    ];
    for (v, want) in cases {
        assert_eq!(body_fields(&v, NOW), want, "{v}");
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn estimated_time_cases() {
    let cases: Vec<(Value, Option<Stated>)> = vec![
        (json!({"estimated_time": 35.6677131652832}), Some(W(35_668))),
        (json!({"estimated_time": 0}), Some(W(0))),
        (json!({"estimated_time": -1.0}), Some(N)),
        (json!({"estimated_time": 1e300}), Some(N)),
        (json!({"estimated_time": "x"}), Some(N)),
        (json!({"estimated_time": null}), None),
        (json!({"error": "loading"}), None),
    ];
    for (v, want) in cases {
        assert_eq!(estimated_time(&v), want, "{v}");
    }
}
