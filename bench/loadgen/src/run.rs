//! The two load modes.
//!
//! Closed: every connection sends its next request as soon as the previous
//! answer is read; latency = send start to last byte.
//!
//! Open: a pacer thread releases request slots on a constant-rate schedule
//! (slot `i` is due at `t0 + i / rate`) into a queue that free connections
//! take from in order. Latency counts from the slot's intended time, so time
//! spent waiting for a free connection (coordinated omission) is included.
//!
//! Waking a sleeping thread and handing the slot to the runtime takes tens of
//! microseconds on a VM. The pacer therefore releases each slot early by a
//! learned lead (an average of the observed hand-over delay, times 1.5), and
//! the connection that takes it yields (`yield_now`, other connections keep
//! running) until the exact intended time. Nothing spins when the client is
//! busy, and at most the lead per request when it is idle.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpStream;
use tokio::sync::mpsc::{self, UnboundedReceiver};
use tokio::sync::Mutex;

use crate::args::{build_request, Config, Mode};
use crate::http::{connect, Conn, ErrorKind, Response};
use crate::report::{Report, RunInfo, Stats};

/// Pause after a failed connect in closed mode, so a dead target does not
/// turn the run into a busy loop.
const CONNECT_BACKOFF: Duration = Duration::from_millis(10);
/// Initial estimate of the pacer-to-connection hand-over delay.
const INITIAL_HANDOVER_NS: u64 = 50_000;
/// Upper bound of the early release.
const MAX_LEAD_NS: u64 = 1_000_000;

/// An open-mode request slot as the pacer releases it.
#[derive(Debug, Clone, Copy)]
struct Slot {
    index: u64,
    /// When the pacer meant to release it (intended time minus the lead).
    release: Instant,
}

/// Early release to use for an estimated hand-over delay.
fn lead_ns(handover_ns: u64) -> u64 {
    (handover_ns + handover_ns / 2 + 5_000).min(MAX_LEAD_NS)
}

struct Job {
    addr: SocketAddr,
    request: Vec<u8>,
    head_only: bool,
    want_ttfb: bool,
    timeout: Duration,
    t0: Instant,
    /// Requests (closed: started, open: due) before this are not recorded.
    measure_start: Instant,
    /// Closed: no request starts after this. Open: the schedule ends here.
    end: Instant,
    /// Open: queued slots not started by this time are counted as unsent.
    drain_deadline: Instant,
    rate: f64,
    /// Open: moving average of (slot taken - slot released), in ns, measured
    /// only when a connection was already waiting for the slot.
    handover_ns: AtomicU64,
}

/// Offset of open-mode slot `i` from `t0`.
fn slot_offset(i: u64, rate: f64) -> Duration {
    Duration::from_nanos((i as f64 * 1e9 / rate).round() as u64)
}

async fn exchange(job: &Job, conn: &mut Conn) -> Result<Response, ErrorKind> {
    let request = conn.request(job.addr, &job.request, job.head_only, job.want_ttfb);
    match tokio::time::timeout(job.timeout, request).await {
        Ok(result) => result,
        Err(_) => {
            conn.close();
            Err(ErrorKind::Timeout)
        }
    }
}

async fn closed_worker(job: Arc<Job>, mut conn: Conn) -> Stats {
    let mut stats = Stats::new(job.want_ttfb, false);
    loop {
        let start = Instant::now();
        if start >= job.end {
            break;
        }
        let result = exchange(&job, &mut conn).await;
        let done = Instant::now();
        if start >= job.measure_start {
            stats.record(&result, start, done);
        }
        if matches!(result, Err(ErrorKind::Connect)) {
            tokio::time::sleep(CONNECT_BACKOFF).await;
        }
    }
    stats
}

async fn open_worker(
    job: Arc<Job>,
    queue: Arc<Mutex<UnboundedReceiver<Slot>>>,
    mut conn: Conn,
) -> Stats {
    let mut stats = Stats::new(job.want_ttfb, true);
    let warmup = job.measure_start.saturating_duration_since(job.t0);
    loop {
        // One task at a time waits on the queue; the others wait (FIFO) for
        // the lock, so a released slot wakes exactly one free connection.
        let waiting_since = Instant::now();
        let slot = {
            let mut rx = queue.lock().await;
            rx.recv().await
        };
        let Some(slot) = slot else { break };
        let taken = Instant::now();
        if waiting_since <= slot.release {
            // Idle connection: the delay is pure hand-over cost; learn it.
            let sample = taken.saturating_duration_since(slot.release).as_nanos();
            let sample = u64::try_from(sample)
                .unwrap_or(MAX_LEAD_NS)
                .min(MAX_LEAD_NS);
            let old = job.handover_ns.load(Ordering::Relaxed);
            let new = (old * 15 + sample) / 16;
            job.handover_ns.store(new, Ordering::Relaxed);
        }
        let offset = slot_offset(slot.index, job.rate);
        let intended = job.t0 + offset;
        while Instant::now() < intended {
            tokio::task::yield_now().await;
        }
        let record = offset >= warmup;
        let start = Instant::now();
        if start > job.drain_deadline {
            if record {
                stats.error(ErrorKind::Unsent);
            }
            continue;
        }
        let result = exchange(&job, &mut conn).await;
        let done = Instant::now();
        if record {
            stats.record_lag(start.saturating_duration_since(intended));
            stats.record(&result, intended, done);
        }
    }
    stats
}

/// Ask the kernel for precise sleeps (default timer slack is 50 µs) in this
/// thread and the threads it starts later. Best effort.
fn reduce_timer_slack() {
    if std::fs::write("/proc/self/timerslack_ns", "1000").is_err() {
        eprintln!("loadgen: could not lower timer slack; open-mode pacing may be ~50 us late");
    }
}

/// Sleep (no spinning) until `due`.
fn sleep_until(due: Instant) {
    loop {
        let now = Instant::now();
        if now >= due {
            return;
        }
        std::thread::sleep(due - now);
    }
}

pub fn run(cfg: &Config, addr: SocketAddr) -> Result<Report, String> {
    if cfg.mode == Mode::Open {
        reduce_timer_slack();
    }
    let runtime = if cfg.threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cfg.threads)
            .enable_all()
            .build()
    }
    .map_err(|e| format!("cannot start runtime: {e}"))?;
    runtime.block_on(run_async(cfg, addr))
}

async fn run_async(cfg: &Config, addr: SocketAddr) -> Result<Report, String> {
    // Connect everything before the clock starts.
    let mut streams: Vec<Option<TcpStream>> = Vec::with_capacity(cfg.connections);
    let mut failed = 0usize;
    for _ in 0..cfg.connections {
        match tokio::time::timeout(cfg.timeout, connect(addr)).await {
            Ok(Ok(s)) => streams.push(Some(s)),
            _ => {
                failed += 1;
                streams.push(None);
            }
        }
    }
    if failed > 0 {
        eprintln!(
            "loadgen: {failed} of {} initial connections to {addr} failed; retrying during the run",
            cfg.connections
        );
    }

    let t0 = Instant::now();
    let end = t0 + cfg.warmup + cfg.duration;
    let rate = cfg.rate.unwrap_or(0.0);
    let job = Arc::new(Job {
        addr,
        request: build_request(cfg),
        head_only: cfg.method == "HEAD",
        want_ttfb: cfg.stream,
        timeout: cfg.timeout,
        t0,
        measure_start: t0 + cfg.warmup,
        end,
        drain_deadline: end + cfg.timeout,
        rate,
        handover_ns: AtomicU64::new(INITIAL_HANDOVER_NS),
    });

    let mut handles = Vec::with_capacity(cfg.connections);
    let mut pacer = None;
    match cfg.mode {
        Mode::Closed => {
            for s in streams {
                handles.push(tokio::spawn(closed_worker(job.clone(), Conn::new(s))));
            }
        }
        Mode::Open => {
            let (tx, rx) = mpsc::unbounded_channel::<Slot>();
            let total = cfg.warmup + cfg.duration;
            let pacer_job = job.clone();
            let thread = std::thread::Builder::new()
                .name("loadgen-pacer".into())
                .spawn(move || {
                    let mut i = 0u64;
                    loop {
                        let offset = slot_offset(i, rate);
                        if offset >= total {
                            break;
                        }
                        let due = t0 + offset;
                        let handover = pacer_job.handover_ns.load(Ordering::Relaxed);
                        let lead = Duration::from_nanos(lead_ns(handover));
                        let release = due.checked_sub(lead).unwrap_or(due);
                        sleep_until(release);
                        if tx.send(Slot { index: i, release }).is_err() {
                            break;
                        }
                        i += 1;
                    }
                    i
                })
                .map_err(|e| format!("cannot start pacer thread: {e}"))?;
            pacer = Some(thread);
            let queue = Arc::new(Mutex::new(rx));
            for s in streams {
                handles.push(tokio::spawn(open_worker(
                    job.clone(),
                    queue.clone(),
                    Conn::new(s),
                )));
            }
        }
    }

    let mut total = Stats::new(cfg.stream, cfg.mode == Mode::Open);
    for h in handles {
        let stats = h.await.map_err(|e| format!("worker failed: {e}"))?;
        total.merge(&stats);
    }
    let elapsed = t0.elapsed();
    if let Some(thread) = pacer {
        // All workers are done, so the queue is closed and the pacer has ended.
        thread
            .join()
            .map_err(|_| "pacer thread failed".to_string())?;
    }

    Ok(Report::new(
        &RunInfo {
            mode: cfg.mode.name(),
            url: &cfg.url,
            connections: cfg.connections,
            threads: cfg.threads,
            duration: cfg.duration,
            warmup: cfg.warmup,
            elapsed,
            target_rate: cfg.rate,
        },
        &total,
    ))
}
