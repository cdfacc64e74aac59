use super::admit::{self, Admit};
use super::ledger::{Ledger, STALE_MS};
use super::load::{self, Signals};
use super::offpeak::{parse_offset, Schedule, Window};
use super::refuse::{self, Refusal, Treatment};
use super::*;
use crate::config::shaping::{AtLimit, LimitWhen, ShapingConfig};
use crate::config::Config;
use crate::flow::Effects;
use wasm_bindgen_test::wasm_bindgen_test;

fn config(shaping: &str) -> Config {
    let text = format!(
        r#"{{"models": [{{"name": "m", "tier": "flagship"}}, {{"name": "s", "tier": "light"}}],
            "fallback": {{"chains": {{"m": ["s"]}}}}, "shaping": {shaping}}}"#
    );
    match Config::from_bytes(text.as_bytes()) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    }
}

fn shaping(text: &str) -> ShapingConfig {
    config(text).shaping.unwrap_or_else(|| panic!("no shaping"))
}

/// critical 1 slot, internal 2, batch 1; queues of 4.
fn three() -> ShapingConfig {
    shaping(
        r#"{"classes": [
            {"name": "critical", "fallback": "critical", "max_concurrency": 1, "max_queue": 4},
            {"name": "internal", "max_concurrency": 2, "max_queue": 4, "at_limit": "downgrade"},
            {"name": "batch", "fallback": "batch", "max_concurrency": 1, "max_queue": 4, "at_limit": "defer"}],
           "long_tasks": {"max_concurrency": 1, "max_queue": 2, "prompt_tokens": 100, "max_tokens": 500, "tools": true}}"#,
    )
}

fn ask(class: usize) -> Ask {
    Ask {
        class,
        lane: Lane::Class,
    }
}

fn holding(held: &[(usize, u16)], queued: &[(usize, u16)]) -> Holdings {
    let mut h = Holdings::default();
    for (pool, n) in held {
        h.held[*pool] = *n;
    }
    for (class, n) in queued {
        h.queued[0][*class] = *n;
    }
    h
}

#[wasm_bindgen_test(unsupported = test)]
fn a_request_takes_its_own_pool_then_borrows_only_downwards() {
    let c = three();
    let empty = Holdings::default();
    assert_eq!(
        admit::arrive(&c, false, &empty, ask(1)),
        Admit::Slot {
            pool: 1,
            borrowed: false
        }
    );
    // internal full: batch's idle slot.
    let full = holding(&[(1, 2)], &[]);
    assert_eq!(
        admit::arrive(&c, false, &full, ask(1)),
        Admit::Slot {
            pool: 2,
            borrowed: true
        }
    );
    // batch full: never critical's idle slot; it waits.
    let all = holding(&[(1, 2), (2, 1)], &[]);
    assert_eq!(admit::arrive(&c, false, &all, ask(1)), Admit::Queue);
    // critical borrows internal's idle slots.
    let crit = holding(&[(0, 1)], &[]);
    assert_eq!(
        admit::arrive(&c, false, &crit, ask(0)),
        Admit::Slot {
            pool: 1,
            borrowed: true
        }
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn a_freed_slot_goes_to_its_own_class_first_then_to_higher_classes() {
    let c = three();
    // internal's slot is free, a critical request and an internal one wait.
    let t = holding(&[(0, 1), (1, 1)], &[(0, 1), (1, 1)]);
    // The waiting internal request takes its own pool's slot, despite the higher waiter.
    assert!(admit::slot(&c, false, &t, ask(1), true).is_some());
    // A new internal arrival queues behind the waiting internal request (first in, first out).
    assert_eq!(admit::slot(&c, false, &t, ask(1), false), None);
    // batch full as well, then batch's slot frees: the critical waiter borrows it, a waiting
    // internal request may not borrow while a higher class waits.
    let t = holding(&[(0, 1), (1, 1), (2, 1)], &[(0, 1), (1, 1)]);
    assert_eq!(admit::slot(&c, false, &t, ask(0), true), None);
    let t = holding(&[(0, 1), (1, 2)], &[(0, 1), (1, 1)]);
    assert_eq!(
        admit::slot(&c, false, &t, ask(0), true),
        Some(Admit::Slot {
            pool: 2,
            borrowed: true
        })
    );
    assert_eq!(admit::slot(&c, false, &t, ask(1), true), None);
}

#[wasm_bindgen_test(unsupported = test)]
fn a_full_queue_meets_the_limit_and_unlimited_classes_never_wait() {
    let c = three();
    let t = holding(&[(1, 2), (2, 1)], &[(1, 4)]);
    assert_eq!(admit::arrive(&c, false, &t, ask(1)), Admit::Full);
    let open = shaping(
        r#"{"classes": [{"name": "critical", "fallback": "critical"},
             {"name": "internal", "max_concurrency": 0, "limit_when": "under_load", "at_limit": "downgrade"}]}"#,
    );
    assert_eq!(
        admit::arrive(&open, false, &Holdings::default(), ask(0)),
        Admit::Free
    );
    // Not under load: internal's limit is not in force.
    assert_eq!(
        admit::arrive(&open, false, &Holdings::default(), ask(1)),
        Admit::Free
    );
    assert_eq!(
        admit::arrive(&open, true, &Holdings::default(), ask(1)),
        Admit::Full
    );
    assert!(admit::no_longer_limited(&open, false, ask(1)));
    assert!(!admit::no_longer_limited(&open, true, ask(1)));
}

#[wasm_bindgen_test(unsupported = test)]
fn long_tasks_take_the_long_pool_by_class() {
    let c = three();
    let long = |class| Ask {
        class,
        lane: Lane::Long,
    };
    assert_eq!(
        admit::arrive(&c, false, &Holdings::default(), long(2)),
        Admit::Slot {
            pool: LONG_POOL,
            borrowed: false
        }
    );
    let mut t = Holdings::default();
    t.held[LONG_POOL] = 1;
    assert_eq!(admit::arrive(&c, false, &t, long(2)), Admit::Queue);
    t.queued[1][2] = 2;
    assert_eq!(admit::arrive(&c, false, &t, long(0)), Admit::Full);
    // A free long slot goes to the higher class waiting first.
    t.held[LONG_POOL] = 0;
    t.queued[1] = [0; 8];
    t.queued[1][0] = 1;
    t.queued[1][2] = 1;
    assert_eq!(admit::slot(&c, false, &t, long(2), true), None);
    assert!(admit::slot(&c, false, &t, long(0), true).is_some());
    let tools = br#"{"model":"m","tools":[{"type":"function"}],"messages":[]}"#;
    let limits = c.long_tasks.as_ref().unwrap_or_else(|| panic!("long"));
    assert!(is_long_body(limits, tools));
    assert!(is_long_body(
        limits,
        br#"{"model":"m","max_tokens" : 4096}"#
    ));
    assert!(!is_long_body(limits, br#"{"model":"m","max_tokens":400}"#));
    // The same key elsewhere (a nested object) only makes its own request long (the largest
    // counts); quoted inside a string it is escaped and never matches.
    assert!(is_long_body(
        limits,
        br#"{"max_tokens":10,"metadata":{"max_tokens": 9999}}"#
    ));
    assert!(!is_long_body(
        limits,
        br#"{"max_tokens":10,"messages":[{"content":"\"max_tokens\": 9999"}]}"#
    ));
    assert!(is_long_body(limits, &[b' '; 404]));
}

#[wasm_bindgen_test(unsupported = test)]
fn the_ledger_round_trips_and_takes_a_dead_vms_slots_back_once() {
    let mut book = Ledger::default();
    book.put(7, 1_000, holding(&[(1, 2)], &[(2, 3)]));
    book.put(9, 1_000, holding(&[(0, 1)], &[]));
    book.engaged = true;
    book.changed_ms = 42;
    let bytes = book.encode();
    assert_eq!(Ledger::read(Some(&bytes)), book);
    assert_eq!(
        Ledger::read(Some(&bytes[..bytes.len() - 1])),
        Ledger::default()
    );
    assert_eq!(Ledger::read(Some(b"garbage")), Ledger::default());
    assert_eq!(Ledger::read(None), Ledger::default());
    let totals = book.totals(9, &Holdings::default());
    assert_eq!(totals.held[1], 2);
    assert_eq!(totals.held[0], 0);
    assert_eq!(book.waiting_elsewhere(9).collect::<Vec<_>>(), [7]);
    // 7 stops heartbeating; 9 keeps writing.
    let later = 1_000 + STALE_MS + 1;
    book.put(9, later, holding(&[(0, 1)], &[]));
    let taken = book.reclaim(9, later);
    assert_eq!(taken.held[1], 2);
    assert_eq!(taken.queue_length(), 3);
    assert!(book.reclaim(9, later).is_empty(), "taken back once");
    // Never one's own entry, however old.
    assert!(book.reclaim(9, later + 10 * STALE_MS).is_empty());
    assert_eq!(book.entries.len(), 1);
    // A VM whose entry was dropped writes it back whole.
    book.put(7, later, holding(&[(1, 1)], &[]));
    assert_eq!(book.totals(9, &Holdings::default()).held[1], 1);
}

fn load_config() -> crate::config::shaping::LoadConfig {
    shaping(
        r#"{"load": {"model": "m", "window_ms": 10000, "min_answers": 4,
             "engage_429_rate": 0.5, "release_429_rate": 0.1, "engage_p95_ms": 4000, "hold_ms": 2000}}"#,
    )
    .load
    .unwrap_or_else(|| panic!("load"))
}

#[wasm_bindgen_test(unsupported = test)]
fn the_load_window_slides_and_the_trigger_holds_between_thresholds() {
    let c = load_config();
    let mut w = load::Window::default();
    for i in 0..4 {
        w.record(&c, 1_000 + i, 429);
        w.record_time(&c, 1_000 + i, 300);
    }
    let mut record = load::Record::default();
    record.put(&c, 1_010, 1, w);
    let total = record.total(&c, 1_010);
    let s = Signals::of(&total, 0);
    assert_eq!((s.answers, s.rate_429), (4, 1.0));
    assert_eq!(s.p95_ms, Some(500));
    assert_eq!(
        load::next(&c, false, 0, &s, 1_010),
        Some((true, "429_rate"))
    );
    // Engaged: 3 of 10 is below engage but above release: it holds.
    let between = Signals {
        answers: 10,
        rate_429: 0.3,
        p95_ms: Some(100),
        queue: 0,
    };
    assert_eq!(load::next(&c, true, 1_000, &between, 9_000), None);
    let calm = Signals {
        rate_429: 0.05,
        ..between
    };
    // Not before hold_ms.
    assert_eq!(load::next(&c, true, 8_000, &calm, 9_000), None);
    assert_eq!(
        load::next(&c, true, 1_000, &calm, 9_000),
        Some((false, "released"))
    );
    // Too few answers: no rate, no trigger.
    let few = Signals {
        answers: 3,
        rate_429: 1.0,
        p95_ms: Some(10_000),
        queue: 0,
    };
    assert_eq!(load::next(&c, false, 0, &few, 9_000), None);
    // Slow answers engage it by P95.
    let slow = Signals {
        answers: 20,
        rate_429: 0.0,
        p95_ms: Some(8_000),
        queue: 0,
    };
    assert_eq!(load::next(&c, false, 0, &slow, 9_000), Some((true, "p95")));
    // The window forgets: two half windows later nothing counts.
    let bytes = record.encode();
    assert_eq!(load::Record::read(Some(&bytes)), record);
    assert_eq!(record.total(&c, 1_010 + 10_000).answers, 0);
    assert_eq!(record.total(&c, 1_010 + 5_000).answers, 4);
}

#[wasm_bindgen_test(unsupported = test)]
fn off_peak_windows_in_the_operators_time() {
    assert_eq!(
        Window::parse("22:00-06:00"),
        Ok(Window {
            start_s: 79_200,
            end_s: 21_600
        })
    );
    assert!(Window::parse("25:00-01:00").is_err());
    assert!(Window::parse("2200-0600").is_err());
    assert!(Window::parse("9:00-10:00").is_err());
    assert_eq!(parse_offset("+08:00"), Ok(8 * 3600));
    assert_eq!(parse_offset("-05:30"), Ok(-(5 * 3600 + 1800)));
    assert!(parse_offset("08:00").is_err());
    let night = Schedule::new(&["22:00-06:00".into()], "+08:00");
    // 2026-12-01T13:00:00Z is 21:00 at +08:00: an hour to go.
    let t = 1_796_130_000_000u64;
    assert!(!night.inside(t));
    assert_eq!(night.until_next_ms(t), 3_600_000);
    // 23:30 local, and 05:59 local next day: inside.
    assert!(night.inside(t + 9_000_000));
    assert!(night.inside(t + 32_340_000));
    assert_eq!(night.until_next_ms(t + 9_000_000), 0);
    // 06:00 local: the next window opens at 22:00.
    assert_eq!(night.until_next_ms(t + 32_400_000), 16 * 3_600_000);
}

#[wasm_bindgen_test(unsupported = test)]
fn refusals_say_when_to_come_back_and_long_waits_say_do_not_retry_blindly() {
    let c = shaping(
        r#"{"classes": [{"name": "critical", "fallback": "critical"},
             {"name": "batch", "fallback": "batch", "max_concurrency": 1, "max_queue": 2,
              "max_queue_ms": 7000, "at_limit": "defer"}],
           "off_peak": {"windows": ["22:00-06:00"], "utc_offset": "+08:00", "jitter_ms": 60000}}"#,
    );
    let t = 1_796_130_000_000u64;
    let off = refuse::retry_after_ms(&c, ask(1), AtLimit::Defer, LimitReason::OffPeak, t, "id");
    assert!((3_600_000..3_660_000).contains(&off), "{off}");
    let other = refuse::retry_after_ms(&c, ask(1), AtLimit::Defer, LimitReason::OffPeak, t, "id2");
    assert_ne!(off, other, "jittered per request");
    let queue = refuse::retry_after_ms(
        &c,
        ask(1),
        AtLimit::Reject,
        LimitReason::QueueTimeout,
        t,
        "id",
    );
    assert_eq!(queue, 7_000);
    let mut out = Effects::default();
    refuse::reply(
        "batch",
        Refusal {
            action: AtLimit::Defer,
            reason: LimitReason::OffPeak,
            retry_after_ms: off,
        },
        &mut out,
    );
    let (status, _, body) = out.local_reply().unwrap_or_else(|| panic!("no reply"));
    assert_eq!(status, 429);
    let header = |n: &str| out.reply_header(n);
    assert_eq!(header("x-should-retry"), Some("false"));
    assert_eq!(header("x-llm-shaping"), Some("deferred off_peak"));
    assert_eq!(
        header("retry-after"),
        Some(off.div_ceil(1000).to_string().as_str())
    );
    assert!(body.contains(r#""code":"off_peak""#), "{body}");
    let mut out = Effects::default();
    refuse::explain(
        &c,
        &Treatment {
            class: 1,
            waited_ms: Some(120),
            downgraded: None,
            pool: Some(LONG_POOL),
        },
        &mut out,
    );
    assert_eq!(out.header("x-llm-class"), Some("batch"));
    assert_eq!(out.header("x-llm-shaping"), Some("queued 120ms; pool long"));
}

#[wasm_bindgen_test(unsupported = test)]
fn classes_come_from_the_operator() {
    let c = shaping(
        r#"{"classes": [{"name": "paid", "fallback": "critical"}, {"name": "internal"},
             {"name": "bulk", "fallback": "batch"}],
           "keys": [{"sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "class": "bulk"}]}"#,
    );
    assert_eq!(c.default_index(), 1);
    assert_eq!(class_for(&c, Some("paid"), None), 0);
    assert_eq!(class_for(&c, Some("critical"), None), 0, "priority words");
    assert_eq!(class_for(&c, Some("batch"), None), 2);
    assert_eq!(class_for(&c, Some("nonsense"), None), 1);
    let key = "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08";
    assert_eq!(class_for(&c, None, Some(key)), 2);
    assert_eq!(class_for(&c, Some("paid"), Some(key)), 0, "the route wins");
    // A listener that lets clients only lower their priority.
    assert!(lowers(&c, "bulk") && lowers(&c, "internal") && lowers(&c, "normal"));
    assert!(!lowers(&c, "paid") && !lowers(&c, "critical") && !lowers(&c, "nonsense"));
}

#[wasm_bindgen_test(unsupported = test)]
fn configuration_errors_name_their_field() {
    let err = |text: &str| match Config::from_bytes(
        format!(r#"{{"models": [{{"name": "m"}}], "shaping": {text}}}"#).as_bytes(),
    ) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    };
    assert!(err(
        r#"{"classes": [{"name": "c", "fallback": "critical", "at_limit": "downgrade"}]}"#
    )
    .contains("shaping.classes[0].at_limit"));
    assert!(err(r#"{"classes": [{"name": "c", "max_queue": 3}]}"#)
        .contains("shaping.classes[0].max_queue"));
    assert!(err(
        r#"{"classes": [{"name": "c", "max_concurrency": 1, "max_queue": 3, "max_queue_ms": 299000}]}"#
    )
    .contains("stream_idle_timeout"));
    assert!(
        err(r#"{"load": {"model": "m", "engage_429_rate": 0.1, "release_429_rate": 0.5}}"#)
            .contains("shaping.load.release_429_rate")
    );
    assert!(
        err(r#"{"load": {"model": "x", "engage_429_rate": 0.1}}"#).contains("shaping.load.model")
    );
    assert!(
        err(r#"{"keys": [{"sha256": "abc", "class": "internal"}]}"#).contains("shaping.keys[0]")
    );
    assert!(err(r#"{"off_peak": {"windows": ["22-06"]}}"#).contains("shaping.off_peak.windows[0]"));
    assert!(err(r#"{"classes": [{"name": "a"}, {"name": "a"}]}"#).contains("listed twice"));
    // Defaults: three classes, critical / internal / batch, nothing limited.
    let c = shaping("{}");
    let names: Vec<&str> = c.classes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["critical", "internal", "batch"]);
    assert_eq!(c.classes[1].limit_when, LimitWhen::Always);
    assert_eq!(
        admit::arrive(&c, false, &Holdings::default(), ask(1)),
        Admit::Free
    );
}

/// [`is_long`] with the body's own scan.
fn is_long_body(limits: &crate::config::shaping::LongTasksConfig, body: &[u8]) -> bool {
    is_long(limits, body, || stated_max_tokens(body))
}
