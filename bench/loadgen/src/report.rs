//! Per-connection counters and the JSON report.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::hist::Histogram;
use crate::http::{ErrorKind, Response};

/// Everything one connection task measured; merged at the end.
#[derive(Debug, Clone)]
pub struct Stats {
    pub latency: Histogram,
    pub ttfb: Option<Histogram>,
    /// Open mode: actual send start minus intended send time.
    pub lag: Option<Histogram>,
    pub ok: u64,
    pub non_2xx: u64,
    pub statuses: Vec<u64>,
    pub errors: [u64; ErrorKind::ALL.len()],
    pub late_starts: u64,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Stats {
    pub fn new(ttfb: bool, open: bool) -> Self {
        Self {
            latency: Histogram::new(),
            ttfb: ttfb.then(Histogram::new),
            lag: open.then(Histogram::new),
            ok: 0,
            non_2xx: 0,
            statuses: vec![0; 1000],
            errors: [0; ErrorKind::ALL.len()],
            late_starts: 0,
        }
    }

    pub fn error(&mut self, kind: ErrorKind) {
        if let Some(c) = self.errors.get_mut(kind as usize) {
            *c += 1;
        }
    }

    /// Record one request whose latency counts from `origin`.
    #[inline]
    pub fn record(&mut self, result: &Result<Response, ErrorKind>, origin: Instant, done: Instant) {
        match result {
            Ok(resp) => {
                if let Some(c) = self.statuses.get_mut(usize::from(resp.status)) {
                    *c += 1;
                }
                if (200..300).contains(&resp.status) {
                    self.ok += 1;
                } else {
                    self.non_2xx += 1;
                }
                self.latency
                    .record(nanos(done.saturating_duration_since(origin)));
                if let Some(ttfb) = &mut self.ttfb {
                    let first = resp.first_body.unwrap_or(done);
                    ttfb.record(nanos(first.saturating_duration_since(origin)));
                }
            }
            Err(kind) => self.error(*kind),
        }
    }

    /// Open mode: how late the request started against its schedule.
    #[inline]
    pub fn record_lag(&mut self, lag: Duration) {
        if let Some(h) = &mut self.lag {
            h.record(nanos(lag));
        }
        if lag > Duration::from_millis(1) {
            self.late_starts += 1;
        }
    }

    pub fn merge(&mut self, other: &Stats) {
        self.latency.merge(&other.latency);
        if let (Some(a), Some(b)) = (&mut self.ttfb, &other.ttfb) {
            a.merge(b);
        }
        if let (Some(a), Some(b)) = (&mut self.lag, &other.lag) {
            a.merge(b);
        }
        self.ok += other.ok;
        self.non_2xx += other.non_2xx;
        for (a, b) in self.statuses.iter_mut().zip(&other.statuses) {
            *a += b;
        }
        for (a, b) in self.errors.iter_mut().zip(&other.errors) {
            *a += b;
        }
        self.late_starts += other.late_starts;
    }

    pub fn error_total(&self) -> u64 {
        self.errors.iter().sum()
    }
}

/// Latency summary in microseconds (`null`s when there were no samples).
#[derive(Debug, Serialize)]
pub struct Summary {
    pub min: Option<f64>,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p99: Option<f64>,
    pub p999: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
}

fn us(ns: Option<u64>) -> Option<f64> {
    ns.map(|v| v as f64 / 1000.0)
}

impl Summary {
    pub fn of(h: &Histogram) -> Self {
        Self {
            min: us(h.min()),
            p50: us(h.percentile(50.0)),
            p90: us(h.percentile(90.0)),
            p99: us(h.percentile(99.0)),
            p999: us(h.percentile(99.9)),
            max: us(h.max()),
            mean: us(h.mean().map(|m| m.round() as u64)),
        }
    }
}

/// The one JSON object printed on stdout.
#[derive(Debug, Serialize)]
pub struct Report {
    pub mode: &'static str,
    pub url: String,
    pub connections: usize,
    pub threads: usize,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub elapsed_s: f64,
    pub requests: u64,
    pub ok: u64,
    pub non_2xx: u64,
    pub errors: u64,
    pub error_kinds: BTreeMap<&'static str, u64>,
    pub statuses: BTreeMap<String, u64>,
    pub rps: f64,
    pub latency_us: Summary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttfb_us: Option<Summary>,
    pub late_starts: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_lag_us: Option<Summary>,
    pub target_rate: Option<f64>,
}

pub struct RunInfo<'a> {
    pub mode: &'static str,
    pub url: &'a str,
    pub connections: usize,
    pub threads: usize,
    pub duration: Duration,
    pub warmup: Duration,
    pub elapsed: Duration,
    pub target_rate: Option<f64>,
}

impl Report {
    pub fn new(info: &RunInfo<'_>, stats: &Stats) -> Self {
        let errors = stats.error_total();
        let requests = stats.ok + stats.non_2xx + errors;
        let duration_s = info.duration.as_secs_f64();
        Self {
            mode: info.mode,
            url: info.url.to_string(),
            connections: info.connections,
            threads: info.threads,
            duration_s,
            warmup_s: info.warmup.as_secs_f64(),
            elapsed_s: (info.elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
            requests,
            ok: stats.ok,
            non_2xx: stats.non_2xx,
            errors,
            error_kinds: ErrorKind::ALL
                .iter()
                .zip(&stats.errors)
                .filter(|(_, &n)| n > 0)
                .map(|(k, &n)| (k.name(), n))
                .collect(),
            statuses: stats
                .statuses
                .iter()
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(|(code, &n)| (code.to_string(), n))
                .collect(),
            rps: (requests as f64 / duration_s * 10.0).round() / 10.0,
            latency_us: Summary::of(&stats.latency),
            ttfb_us: stats.ttfb.as_ref().map(Summary::of),
            late_starts: stats.late_starts,
            start_lag_us: stats.lag.as_ref().map(Summary::of),
            target_rate: info.target_rate,
        }
    }
}
