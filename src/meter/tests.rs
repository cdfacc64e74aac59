use super::budget::{Budget, Fit, Record, Reservation, Scope, Tally};
use super::*;
use crate::config::metering::{BudgetConfig, BudgetWindow, KeyLabel};
use crate::flow::Effects;
use wasm_bindgen_test::wasm_bindgen_test;

/// 2026-12-01T10:30:00Z
const NOW: u64 = 1_796_121_000_000;

fn usage(input: u64, output: u64, cached: Option<u64>) -> Usage {
    Usage {
        input_tokens: Some(input),
        output_tokens: Some(output),
        cached_input_tokens: cached,
    }
}

fn metering(budgets: Vec<BudgetConfig>) -> MeteringConfig {
    MeteringConfig {
        keys: vec![KeyLabel {
            sha256: sha256_hex(b"Bearer team-a"),
            label: "team-a".into(),
        }],
        budgets,
        ..MeteringConfig::default()
    }
}

fn budget(window: BudgetWindow, tokens: u64) -> BudgetConfig {
    BudgetConfig {
        name: "b".into(),
        key: None,
        task: None,
        model: None,
        usd: None,
        tokens: Some(tokens),
        window,
        utc_offset: "+00:00".into(),
        until: None,
        shadow: false,
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn now_is_the_time_the_tests_say() {
    assert_eq!(
        crate::classify::wait::rfc3339_utc(NOW),
        "2026-12-01T10:30:00Z"
    );
    assert_eq!(
        crate::classify::wait::rfc3339_unix_ms("2026-12-01T10:30:00Z"),
        Some(NOW)
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn cost_counts_uncached_cached_and_output_tokens_at_their_prices() {
    let price = Price {
        input: 2.5,
        output: 10.0,
        cached_input: Some(1.25),
    };
    // 1000 input of which 400 cached, 200 output:
    // 600 * 2500 + 400 * 1250 + 200 * 10000 nano-USD.
    assert_eq!(
        cost_nanos(&price, &usage(1000, 200, Some(400))),
        1_500_000 + 500_000 + 2_000_000
    );
    let no_cache_price = Price {
        cached_input: None,
        ..price
    };
    assert_eq!(
        cost_nanos(&no_cache_price, &usage(1000, 0, Some(400))),
        2_500_000
    );
    // More cached than input (a confused upstream) is cut to the input.
    assert_eq!(cost_nanos(&price, &usage(10, 0, Some(50))), 12_500);
    assert_eq!(cost_nanos(&price, &Usage::default()), 0);
    // Sub-nano prices round once per answer.
    let cheap = Price {
        input: 0.0375,
        output: 0.0,
        cached_input: None,
    };
    assert_eq!(cost_nanos(&cheap, &usage(3, 0, None)), 113);
}

#[wasm_bindgen_test(unsupported = test)]
fn keys_are_labelled_other_or_none_and_nothing_else() {
    let config = metering(vec![]);
    let known = sha256_hex(b"Bearer team-a");
    assert_eq!(key_slot(&config, Some(&known)), KeySlot(0));
    assert_eq!(key_slot(&config, Some(&known.to_uppercase())), KeySlot(0));
    assert_eq!(
        key_slot(&config, Some(&sha256_hex(b"Bearer x"))),
        KeySlot(1)
    );
    assert_eq!(key_slot(&config, None), KeySlot(2));
    let labels: Vec<&str> = key_labels(&config).collect();
    assert_eq!(labels, ["team-a", OTHER_KEY, NO_KEY]);
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn an_estimate_takes_the_stated_max_tokens_else_the_models_else_the_default() {
    let body = br#"{"model":"m","max_completion_tokens": 300,"messages":[{"role":"user","content":"hi"}]}"#;
    let stated = crate::shaping::stated_max_tokens(body);
    let e = Estimate::of(body, stated, Some(4000), 1024);
    assert_eq!(e.output_tokens, 300);
    assert_eq!(e.input_tokens, (body.len() as u64).div_ceil(4));
    assert_eq!(
        Estimate::of(b"{}", None, Some(4000), 1024).output_tokens,
        4000
    );
    assert_eq!(Estimate::of(b"{}", None, None, 1024).output_tokens, 1024);
}

#[wasm_bindgen_test(unsupported = test)]
fn windows_follow_the_calendar_in_the_budgets_offset() {
    let config = metering(vec![budget(BudgetWindow::Hour, 10)]);
    let hour = &Budget::all(&config)[0];
    let at = |s: &str| crate::classify::wait::rfc3339_unix_ms(s).unwrap();
    assert_eq!(
        hour.window_at(NOW),
        (at("2026-12-01T10:00:00Z"), at("2026-12-01T11:00:00Z"))
    );
    let mut day = budget(BudgetWindow::Day, 10);
    day.utc_offset = "+08:00".into();
    let day = &Budget::all(&metering(vec![day]))[0];
    // 10:30Z is 18:30 in +08:00: the day began at 16:00Z.
    assert_eq!(
        day.window_at(NOW),
        (at("2026-11-30T16:00:00Z"), at("2026-12-01T16:00:00Z"))
    );
    let month = &Budget::all(&metering(vec![budget(BudgetWindow::Month, 10)]))[0];
    assert_eq!(
        month.window_at(NOW),
        (at("2026-12-01T00:00:00Z"), at("2027-01-01T00:00:00Z"))
    );
    assert_eq!(
        month.window_at(at("2028-02-29T23:59:59Z")),
        (at("2028-02-01T00:00:00Z"), at("2028-03-01T00:00:00Z"))
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn a_request_that_would_cross_the_cap_is_refused_and_reservations_count() {
    let b = &Budget::all(&metering(vec![budget(BudgetWindow::Hour, 1000)]))[0];
    let Fit::Reserved(first) = b.reserve(None, NOW, 600) else {
        panic!("fits")
    };
    assert_eq!(first.reserved, 600);
    // 600 reserved in flight + 500 > 1000, though nothing is spent yet.
    let Fit::Over { resets_at_ms, .. } = b.reserve(Some(first), NOW, 500) else {
        panic!("over")
    };
    assert_eq!(resets_at_ms, b.window_at(NOW).1);
    // The first settles at 300 used: 300 spent, nothing reserved; 700 more fit exactly.
    let reservation = Reservation {
        budget: 0,
        window_ms: first.window_ms,
        amount: 600,
    };
    let settled = b.settle(Some(first), NOW, reservation, 300);
    assert_eq!((settled.spent, settled.reserved), (300, 0));
    assert!(matches!(
        b.reserve(Some(settled), NOW, 700),
        Fit::Reserved(_)
    ));
    assert!(matches!(
        b.reserve(Some(settled), NOW, 701),
        Fit::Over { .. }
    ));
}

#[wasm_bindgen_test(unsupported = test)]
fn a_shadow_budgets_workers_keep_their_changes_and_fold_them_into_the_shared_record() {
    let b = &Budget::all(&metering(vec![budget(BudgetWindow::Hour, 1000)]))[0];
    let (mut one, mut two) = (Tally::default(), Tally::default());
    let mut shared: Option<Record> = None;
    let fold = |tally: &mut Tally, shared: &mut Option<Record>, now: u64| {
        let written = b.fold(tally, *shared, now);
        if written.is_some() {
            *shared = written;
        }
        b.folded(tally, written.or(*shared));
    };
    // Worker one admits 600 and worker two 500 before either folds: each judges on what it
    // has seen, so neither would refuse (the enforced reading would refuse the second).
    assert!(matches!(
        b.reserve_locally(&mut one, NOW, 600),
        Fit::Reserved(_)
    ));
    assert!(matches!(
        b.reserve_locally(&mut two, NOW, 500),
        Fit::Reserved(_)
    ));
    assert_eq!(shared, None, "nothing written per request");
    fold(&mut one, &mut shared, NOW);
    fold(&mut two, &mut shared, NOW);
    assert_eq!(shared.map(|r| (r.spent, r.reserved)), Some((0, 1100)));
    // Worker one saw 600 when it folded; its next tick sees two's 500 as well, and the next
    // request would be refused (it is still reserved: a shadow budget counts what happens).
    assert!(matches!(
        b.reserve(Some(b.view(&one, NOW)), NOW, 400),
        Fit::Reserved(_)
    ));
    fold(&mut one, &mut shared, NOW);
    assert!(matches!(
        b.reserve_locally(&mut one, NOW, 1),
        Fit::Over { .. }
    ));
    // Settlements give back the reservations and charge the use, at the next fold.
    let window_ms = b.window_at(NOW).0;
    let held = |amount| Reservation {
        budget: 0,
        window_ms,
        amount,
    };
    b.settle_locally(&mut one, NOW, held(600), 300);
    b.settle_locally(&mut one, NOW, held(1), 1);
    b.settle_locally(&mut two, NOW, held(500), 200);
    assert_eq!(
        b.view(&one, NOW).reserved,
        500,
        "its own changes count at once"
    );
    fold(&mut one, &mut shared, NOW);
    fold(&mut two, &mut shared, NOW);
    assert_eq!(shared.map(|r| (r.spent, r.reserved)), Some((501, 0)));
    // A fold with nothing pending writes nothing and sees the others' changes.
    assert_eq!(b.fold(&one, shared, NOW), None);
    fold(&mut one, &mut shared, NOW);
    assert_eq!(b.view(&one, NOW).spent, 501);
    // Changes of a window that is over go with it; the new window starts from this one's.
    assert!(matches!(
        b.reserve_locally(&mut two, NOW, 100),
        Fit::Reserved(_)
    ));
    let later = NOW + 3_600_000;
    b.settle_locally(&mut two, later, held(100), 40);
    fold(&mut two, &mut shared, later);
    let now = shared.unwrap_or_default();
    assert_eq!(
        (now.window_ms, now.spent, now.reserved),
        (b.window_at(later).0, 40, 0)
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn a_new_window_starts_empty_and_a_late_settlement_charges_it() {
    let b = &Budget::all(&metering(vec![budget(BudgetWindow::Hour, 1000)]))[0];
    let old = Record {
        window_ms: b.window_at(NOW).0,
        spent: 1000,
        reserved: 200,
    };
    let later = NOW + 3_600_000;
    assert!(matches!(b.reserve(Some(old), later, 1000), Fit::Reserved(r) if r.spent == 0));
    let reservation = Reservation {
        budget: 0,
        window_ms: old.window_ms,
        amount: 200,
    };
    let settled = b.settle(Some(old), later, reservation, 150);
    assert_eq!(settled.window_ms, b.window_at(later).0);
    assert_eq!((settled.spent, settled.reserved), (150, 0));
}

#[wasm_bindgen_test(unsupported = test)]
fn budgets_match_their_scope_and_a_temporary_one_ends() {
    let mut scoped = budget(BudgetWindow::Day, 10);
    scoped.key = Some("team-a".into());
    scoped.task = Some("agent".into());
    scoped.until = Some("2026-12-01T12:00:00Z".into());
    let b = &Budget::all(&metering(vec![scoped]))[0];
    let scope = Scope {
        key: KeySlot(0),
        task: Some("agent"),
        model: "gpt-4o",
    };
    assert!(b.applies(scope, NOW));
    assert!(!b.applies(
        Scope {
            key: KeySlot(1),
            ..scope
        },
        NOW
    ));
    assert!(!b.applies(
        Scope {
            task: None,
            ..scope
        },
        NOW
    ));
    let noon = crate::classify::wait::rfc3339_unix_ms("2026-12-01T12:00:00Z").unwrap();
    assert!(!b.applies(scope, noon), "ended");
    // Refused before noon: told to come back at noon, not at midnight.
    assert_eq!(b.resets_at(NOW), noon);
    let mut other = budget(BudgetWindow::Day, 10);
    other.key = Some("other".into());
    let b = &Budget::all(&metering(vec![other]))[0];
    assert_eq!(b.key, Some(KeySlot(1)));
}

#[wasm_bindgen_test(unsupported = test)]
fn records_round_trip_and_foreign_bytes_read_as_none() {
    let r = Record {
        window_ms: 7,
        spent: u64::MAX,
        reserved: 3,
    };
    assert_eq!(Record::decode(&r.encode()), Some(r));
    assert_eq!(Record::decode(b"garbage"), None);
    assert_eq!(Record::decode(&[0; 8]), None);
}

#[wasm_bindgen_test(unsupported = test)]
fn a_refusal_says_which_budget_when_it_resets_and_not_to_retry() {
    let mut cost = budget(BudgetWindow::Hour, 1);
    cost.tokens = None;
    cost.usd = Some(2.0);
    let b = &Budget::all(&metering(vec![cost]))[0];
    assert_eq!(b.limit, 2_000_000_000);
    let record = Record {
        window_ms: b.window_at(NOW).0,
        spent: 1_999_000_000,
        reserved: 0,
    };
    let mut out = Effects::default();
    budget::refuse(b, record, b.resets_at(NOW), NOW, &mut out);
    let (status, headers, body) = out.local_reply().unwrap();
    assert_eq!(status, 429);
    let header = |n: &str| {
        headers
            .iter()
            .find(|(k, _)| *k == n)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(header("retry-after"), Some("1800"));
    assert_eq!(header("x-should-retry"), Some("false"));
    assert_eq!(header("x-llm-budget"), Some("refused b"));
    let body: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(body["error"]["type"], "budget_exceeded");
    assert_eq!(body["error"]["resets_at"], "2026-12-01T11:00:00Z");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("2.000000 USD"));
}

#[wasm_bindgen_test(unsupported = test)]
fn a_success_without_usage_is_charged_its_estimate_and_a_failure_nothing() {
    assert_eq!(charge(30, true, true, 500), 30);
    assert_eq!(
        charge(30, true, false, 500),
        30,
        "a cut stream's partial usage"
    );
    assert_eq!(
        charge(0, false, true, 500),
        500,
        "a stream without include_usage"
    );
    assert_eq!(charge(0, false, false, 500), 0);
}
