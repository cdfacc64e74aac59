//! Budgets: caps on cost or tokens per calendar window, kept exact across workers by
//! reserving an estimate at admission and settling it from the answer's `usage`.
//!
//! Each budget is one shared-data record ([`Record`]: its window, what was spent in it, what
//! in-flight requests reserved), rewritten by compare-and-swap. A request is refused when what
//! is spent, plus what is reserved, plus its own estimate would cross the cap, so concurrent
//! requests cannot all slip under it together; a request whose real use beats its estimate
//! (no `max_tokens`, a stream) overshoots by at most its own difference.

use super::{Estimate, KeySlot, Spend};
use crate::config::metering::{BudgetConfig, BudgetWindow, MeteringConfig, Price};
use crate::flow::Effects;

/// A budget as checked on the request path (parsed once from its configuration).
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    pub name: String,
    pub window: BudgetWindow,
    /// Key label slot it is limited to, and that label.
    pub key: Option<KeySlot>,
    pub key_label: Option<String>,
    pub task: Option<String>,
    pub model: Option<String>,
    /// The cap, in nano-USD or tokens ([`Self::unit`]).
    pub limit: u64,
    pub unit: Unit,
    offset_ms: i64,
    /// Not applied from this unix time on.
    pub until_ms: Option<u64>,
    pub shadow: bool,
}

/// What a budget counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Nanousd,
    Tokens,
}

impl Unit {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Nanousd => "nanousd",
            Self::Tokens => "tokens",
        }
    }
}

/// One budget's shared state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Record {
    /// Start of the window it counts (unix ms).
    pub window_ms: u64,
    pub spent: u64,
    pub reserved: u64,
}

impl Record {
    pub const BYTES: usize = 24;

    pub fn encode(self) -> Vec<u8> {
        [self.window_ms, self.spent, self.reserved]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect()
    }

    /// `None` for a missing or foreign value (treated as an empty window).
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        let word = |i: usize| {
            let b = bytes.get(i * 8..i * 8 + 8)?;
            Some(u64::from_le_bytes(<[u8; 8]>::try_from(b).ok()?))
        };
        if bytes.len() != Self::BYTES {
            return None;
        }
        Some(Self {
            window_ms: word(0)?,
            spent: word(1)?,
            reserved: word(2)?,
        })
    }
}

/// What one budget holds for one request until its answer settles it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reservation {
    /// Index into the configured budgets.
    pub budget: usize,
    pub window_ms: u64,
    pub amount: u64,
}

/// Whether a request fits a budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Reserved: the record to write.
    Reserved(Record),
    /// It would cross the cap; the window resets (or the budget ends) at this unix time.
    Over { resets_at_ms: u64, record: Record },
}

/// The request facts a budget is matched on.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    pub key: KeySlot,
    pub task: Option<&'a str>,
    /// The model the client asked.
    pub model: &'a str,
}

impl Budget {
    /// Parses every configured budget (validated already: a bad field only disables one).
    pub fn all(config: &MeteringConfig) -> Vec<Budget> {
        config
            .budgets
            .iter()
            .map(|b| Self::from_config(config, b))
            .collect()
    }

    fn from_config(config: &MeteringConfig, b: &BudgetConfig) -> Self {
        let key = b.key.as_deref().map(|label| {
            KeySlot(
                config
                    .keys
                    .iter()
                    .position(|k| k.label == label)
                    .unwrap_or(config.keys.len()),
            )
        });
        let (limit, unit) = match (b.usd, b.tokens) {
            (Some(usd), _) => (super::to_nanos(usd * 1e9), Unit::Nanousd),
            (None, tokens) => (tokens.unwrap_or(0), Unit::Tokens),
        };
        Self {
            name: b.name.clone(),
            window: b.window,
            key,
            key_label: b.key.clone(),
            task: b.task.clone(),
            model: b.model.clone(),
            limit,
            unit,
            offset_ms: crate::shaping::offpeak::parse_offset(&b.utc_offset).unwrap_or(0) * 1000,
            until_ms: b
                .until
                .as_deref()
                .and_then(crate::classify::wait::rfc3339_unix_ms),
            shadow: b.shadow,
        }
    }

    /// Whether it applies to a request at `now_ms` (a temporary budget ends at `until`).
    pub fn applies(&self, scope: Scope<'_>, now_ms: u64) -> bool {
        self.active(now_ms)
            && self.key.is_none_or(|k| k == scope.key)
            && self.task.as_deref().is_none_or(|t| Some(t) == scope.task)
            && self.model.as_deref().is_none_or(|m| m == scope.model)
    }

    pub fn active(&self, now_ms: u64) -> bool {
        self.until_ms.is_none_or(|until| now_ms < until)
    }

    /// The window containing `now_ms`: its start and end (unix ms).
    pub fn window_at(&self, now_ms: u64) -> (u64, u64) {
        let local = i64::try_from(now_ms).unwrap_or(i64::MAX) + self.offset_ms;
        let (start, end) = match self.window {
            BudgetWindow::Hour => {
                let start = local - local.rem_euclid(3_600_000);
                (start, start + 3_600_000)
            }
            BudgetWindow::Day => {
                let start = local - local.rem_euclid(86_400_000);
                (start, start + 86_400_000)
            }
            BudgetWindow::Month => crate::classify::wait::month_bounds_ms(local),
        };
        let utc = |ms: i64| u64::try_from(ms - self.offset_ms).unwrap_or(0);
        (utc(start), utc(end))
    }

    /// When a refused request may be tried again: the window's end, or the budget's end if
    /// that comes first.
    pub fn resets_at(&self, now_ms: u64) -> u64 {
        let end = self.window_at(now_ms).1;
        self.until_ms.map_or(end, |until| until.min(end))
    }

    /// The record as it stands in the current window (a record of an earlier one starts over).
    pub fn current(&self, record: Option<Record>, now_ms: u64) -> Record {
        let start = self.window_at(now_ms).0;
        match record {
            Some(r) if r.window_ms == start => r,
            _ => Record {
                window_ms: start,
                ..Record::default()
            },
        }
    }

    /// An estimate in this budget's unit (`price`: of the model the request is routed to).
    pub fn amount_of(&self, estimate: Estimate, price: Option<&Price>) -> u64 {
        match self.unit {
            Unit::Tokens => estimate.tokens(),
            Unit::Nanousd => price.map_or(0, |p| estimate.cost_nanos(p)),
        }
    }

    /// What a request used, in this budget's unit.
    pub fn spent_of(&self, spend: Spend) -> u64 {
        match self.unit {
            Unit::Tokens => spend.tokens,
            Unit::Nanousd => spend.nanos,
        }
    }

    /// Reserves `amount` unless it would cross the cap.
    pub fn reserve(&self, record: Option<Record>, now_ms: u64, amount: u64) -> Fit {
        let record = self.current(record, now_ms);
        let after = record
            .spent
            .saturating_add(record.reserved)
            .saturating_add(amount);
        if after > self.limit {
            return Fit::Over {
                resets_at_ms: self.resets_at(now_ms),
                record,
            };
        }
        Fit::Reserved(Record {
            reserved: record.reserved.saturating_add(amount),
            ..record
        })
    }

    /// Gives back a reservation and charges what the request used to the current window (a
    /// request admitted in the last window is charged to the new one: spend is never lost).
    pub fn settle(
        &self,
        record: Option<Record>,
        now_ms: u64,
        reservation: Reservation,
        used: u64,
    ) -> Record {
        let mut record = self.current(record, now_ms);
        if record.window_ms == reservation.window_ms {
            record.reserved = record.reserved.saturating_sub(reservation.amount);
        }
        record.spent = record.spent.saturating_add(used);
        record
    }

    /// A cap or use in its unit, as people read it (`12.5 USD`, `4000 tokens`).
    pub fn show(&self, amount: u64) -> String {
        match self.unit {
            Unit::Tokens => format!("{amount} tokens"),
            Unit::Nanousd => format!("{:.6} USD", amount as f64 / 1e9),
        }
    }
}

/// A shadow budget's changes on one worker since they were last folded into its shared
/// record, and that record as the worker last saw it.
///
/// A shadow budget refuses nothing, so its verdicts need no exact view of the other workers:
/// each worker keeps its requests' reservations and spend here and folds them into the shared
/// record on its timer (once a second), instead of two compare-and-swap rounds per request.
/// Its "would refuse" verdicts and the shared record lag the other workers by that period.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// The shared record when this worker last folded into it or read it.
    seen: Option<Record>,
    /// The window the changes below belong to.
    window_ms: u64,
    /// Reserved by this worker's requests, less what their settlements gave back.
    reserved: i64,
    /// Charged by this worker's settlements.
    spent: u64,
}

impl Tally {
    /// Whether there is anything to fold.
    pub fn pending(&self) -> bool {
        self.reserved != 0 || self.spent != 0
    }

    fn apply(&self, record: Record) -> Record {
        let reserved = i128::from(record.reserved) + i128::from(self.reserved);
        Record {
            reserved: u64::try_from(reserved.max(0)).unwrap_or(u64::MAX),
            spent: record.spent.saturating_add(self.spent),
            ..record
        }
    }
}

impl Budget {
    /// The changes kept for the window of `now_ms` (those of a window that is over go, as its
    /// shared record does).
    fn tally_at<'a>(&self, tally: &'a mut Tally, now_ms: u64) -> &'a mut Tally {
        let start = self.window_at(now_ms).0;
        if tally.window_ms != start {
            *tally = Tally {
                seen: tally.seen,
                window_ms: start,
                ..Tally::default()
            };
        }
        tally
    }

    /// The record as this worker sees it: the last shared record seen, with its own changes.
    pub fn view(&self, tally: &Tally, now_ms: u64) -> Record {
        let record = self.current(tally.seen, now_ms);
        if tally.window_ms == record.window_ms {
            tally.apply(record)
        } else {
            record
        }
    }

    /// [`Self::reserve`] for a shadow budget, on this worker's view: the amount is reserved
    /// whatever the verdict (a shadow budget counts what really happens).
    pub fn reserve_locally(&self, tally: &mut Tally, now_ms: u64, amount: u64) -> Fit {
        let fit = self.reserve(Some(self.view(tally, now_ms)), now_ms, amount);
        let tally = self.tally_at(tally, now_ms);
        tally.reserved = tally
            .reserved
            .saturating_add(i64::try_from(amount).unwrap_or(i64::MAX));
        fit
    }

    /// [`Self::settle`] for a shadow budget, kept on this worker until its next fold.
    pub fn settle_locally(
        &self,
        tally: &mut Tally,
        now_ms: u64,
        reservation: Reservation,
        used: u64,
    ) {
        let tally = self.tally_at(tally, now_ms);
        if tally.window_ms == reservation.window_ms {
            tally.reserved = tally
                .reserved
                .saturating_sub(i64::try_from(reservation.amount).unwrap_or(i64::MAX));
        }
        tally.spent = tally.spent.saturating_add(used);
    }

    /// The shared record with this worker's changes folded in (`None`: nothing to write, only
    /// to see). Changes of a window the shared record has left are dropped with it.
    pub fn fold(&self, tally: &Tally, shared: Option<Record>, now_ms: u64) -> Option<Record> {
        let record = self.current(shared, now_ms);
        (tally.pending() && tally.window_ms == record.window_ms).then(|| tally.apply(record))
    }

    /// After a fold was written, or found nothing to write: `record` is what the shared
    /// record now holds, with this worker's changes in it (or dropped with their window).
    pub fn folded(&self, tally: &mut Tally, record: Option<Record>) {
        *tally = Tally {
            seen: record,
            window_ms: tally.window_ms,
            ..Tally::default()
        };
    }
}

/// The shared-data key of a budget's record.
pub fn record_key(budget: &Budget) -> String {
    format!("{}.budget.{}", crate::stats::PREFIX, budget.name)
}

/// Header naming the budget that refused a request, or that would have (`shadow`).
pub const BUDGET_HEADER: &str = "x-llm-budget";

/// The local answer to a request over a budget: 429, `Retry-After` at the reset, and
/// `x-should-retry: false` (the SDKs would otherwise retry at once, and waiting minutes is the
/// caller's decision).
pub fn refuse(budget: &Budget, record: Record, resets_at_ms: u64, now_ms: u64, out: &mut Effects) {
    let seconds = resets_at_ms.saturating_sub(now_ms).div_ceil(1000).max(1);
    let resets_at = crate::classify::wait::rfc3339_utc(resets_at_ms);
    let message = format!(
        "budget `{}` ({} per {}) is spent: {} used, {} reserved by requests in flight; it resets \
         at {resets_at}",
        budget.name,
        budget.show(budget.limit),
        budget.window.as_str(),
        budget.show(record.spent),
        budget.show(record.reserved),
    );
    let body = serde_json::json!({
        "error": {
            "message": message,
            "type": "budget_exceeded",
            "code": "budget_exceeded",
            "param": null,
            "budget": budget.name,
            "window": budget.window.as_str(),
            "unit": budget.unit.as_str(),
            "limit": budget.limit,
            "spent": record.spent,
            "reserved": record.reserved,
            "resets_at": resets_at,
        }
    })
    .to_string();
    out.reply(
        429,
        vec![
            ("content-type", "application/json".into()),
            ("retry-after", seconds.to_string()),
            ("x-should-retry", "false".into()),
            (BUDGET_HEADER, format!("refused {}", budget.name)),
        ],
        body,
    );
}
