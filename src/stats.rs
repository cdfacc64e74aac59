//! The filter's counters: a fixed, bounded set decided at configuration time.
//!
//! Each counter is an Envoy stat and a shared-data key with the same name. Labels are written
//! into the name as `;label=value` pairs (`llm_fallback.responses;model=gpt-4o;class=ok`); the
//! shipped bootstrap's `stats_tags` turn them into Prometheus labels
//! (`llm_fallback_responses{model="gpt-4o",class="ok"}`). Model labels are limited to the
//! configured models plus `other` and `none`, so a client sending random model names cannot grow
//! the set.

use crate::classify::ErrorClass;
use crate::config::Config;
use crate::meter::KeySlot;
use crate::model_field::Skip;

/// Label for a model that is not configured.
pub const OTHER_MODEL: &str = "other";
/// Label for a request whose model could not be read (no body, not JSON, no `model` key).
pub const NO_MODEL: &str = "none";

/// Prefix of every stat and shared-data key.
pub const PREFIX: &str = "llm_fallback";

/// Why a request body was not read for its model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodySkip {
    Scan(Skip),
    /// The body is compressed (`content-encoding`), so it is not read.
    Encoded,
}

impl BodySkip {
    pub const ALL: [BodySkip; 6] = [
        BodySkip::Scan(Skip::NotJson),
        BodySkip::Scan(Skip::NoModel),
        BodySkip::Scan(Skip::NotString),
        BodySkip::Scan(Skip::Duplicate),
        BodySkip::Scan(Skip::ModelTooLong),
        BodySkip::Encoded,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            BodySkip::Scan(skip) => skip.as_str(),
            BodySkip::Encoded => "encoded",
        }
    }

    fn index(self) -> usize {
        Self::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }
}

/// Token direction for usage counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Input,
    Output,
}

impl Direction {
    const ALL: [Direction; 2] = [Direction::Input, Direction::Output];

    const fn as_str(self) -> &'static str {
        match self {
            Direction::Input => "input",
            Direction::Output => "output",
        }
    }
}

/// A model's label slot: a configured model, `other`, or `none`. Resolve once per request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModelSlot(usize);

impl ModelSlot {
    /// Its position among [`CounterSet::model_slots`].
    pub fn index(self) -> usize {
        self.0
    }
}

/// One counter, with its labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// Client requests, counted once in the HTTP connection manager position.
    Requests(ModelSlot),
    /// Upstream attempts, counted once per router attempt in the upstream position.
    Attempts(ModelSlot),
    /// Answers per model and class: every upstream attempt's answer, plus Envoy's own local
    /// replies (timeouts, connect failures), which only the client position sees.
    Responses(ModelSlot, ErrorClass),
    /// Error events inside 200 streams (the stream itself was counted `ok` at its headers).
    StreamErrors(ModelSlot, ErrorClass),
    /// Tokens reported in `usage`.
    Tokens(ModelSlot, Direction),
    /// Request bodies the filter could not read, passed through untouched.
    BodySkipped(BodySkip),
    /// Switches from one model to another inside a request's retry loop, by the class that
    /// caused them.
    Fallbacks {
        from: ModelSlot,
        to: ModelSlot,
        class: ErrorClass,
    },
    /// Circuits opened (or cooldowns extended) per model and class.
    CooldownsOpened(ModelSlot, ErrorClass),
    /// Requests sent to a model whose cooldown had ended, to probe it.
    Probes(ModelSlot),
    /// Probes that succeeded: the model is back and traffic switches back to it.
    SwitchBacks(ModelSlot),
    /// Attempts that skipped a model because it was cooling down (zero attempts wasted).
    Skipped(ModelSlot),
    /// Requests judged unsafe to send twice.
    UnsafeRequests(ModelSlot),
    /// Failed answers to unsafe requests that were not re-sent (and told the client not to).
    RetriesBlocked(ModelSlot),
    /// Requests refused because their `Idempotency-Key` was in flight or recently finished.
    DuplicatesRefused(ModelSlot),
    /// Attempts that ended because the client went away: not a failure of the model.
    ClientCancels(ModelSlot),
    /// 200 answers the upstream cut short (reset in the middle of the body): a failure of the
    /// model, never retried once bytes reached the client.
    AnswersCut(ModelSlot),
    /// Requests answered locally because every model of their chain was out (quota, missing).
    ChainUnavailable(ModelSlot),
    /// Stated waits longer than `fallback.max_stated_wait_ms` (cut to it), or nonsense (ignored).
    WaitHints(WaitHintOutcome),
    /// Account-wide quota stops: every model of the account cooled down at once.
    AccountQuotaStops(AccountSlot),
    /// Attempts that reached another cluster than the one the filter named for them (the
    /// route's matcher does not list it, or the route does not pick clusters again on retry):
    /// asked a model of the cluster they reached instead. By the model planned.
    Misrouted(ModelSlot),
    /// Traffic shaping, by priority class (index into `shaping.classes`) and what happened.
    Shaping(usize, ShapingEvent),
    /// Requests served by another model than asked, or switched on the way, by the model asked
    /// and whether the final answer was a success (`true`): the fallback success rate.
    FallbackOutcomes(ModelSlot, bool),
    /// Tokens reported in `usage`, by the request's task (the configured tasks, `other`, `none`).
    TaskTokens(TaskSlot, Direction),
    /// Tokens reported in `usage`, by the request's API-key label.
    KeyTokens(KeySlot, Direction),
    /// Cost in nano-USD at the configured prices, by the model asked, the task and the key
    /// label; `None` as an id for a model without a price.
    Cost(ModelSlot, TaskSlot, KeySlot),
    /// What a budget did with a request, by budget (index into `metering.budgets`).
    Budget(usize, BudgetEvent),
    /// Circuits opened per model by the switch condition that held.
    SwitchConditions(ModelSlot, crate::health::Condition),
    /// What a canary (index into `fallback.canaries`) did: requests it took, halts.
    Canary(usize, CanaryEvent),
    /// Requests sent to a fallback to keep it known-good (`fallback.backup_share`), by model.
    Backups(ModelSlot),
}

/// What happened with a canary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CanaryEvent {
    /// A request of its base model was routed to it.
    Routed,
    /// Its error rate was worse than its base's: halted for its cooldown.
    Halted,
}

impl CanaryEvent {
    pub const ALL: [CanaryEvent; 2] = [CanaryEvent::Routed, CanaryEvent::Halted];

    pub const fn as_str(self) -> &'static str {
        match self {
            CanaryEvent::Routed => "routed",
            CanaryEvent::Halted => "halted",
        }
    }
}

/// What a budget did with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetEvent {
    /// Reserved and sent.
    Admitted,
    /// Refused: it would have crossed the cap.
    Refused,
    /// A shadow budget would have refused it (it was sent).
    ShadowRefused,
}

impl BudgetEvent {
    pub const ALL: [BudgetEvent; 3] = [
        BudgetEvent::Admitted,
        BudgetEvent::Refused,
        BudgetEvent::ShadowRefused,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            BudgetEvent::Admitted => "admitted",
            BudgetEvent::Refused => "refused",
            BudgetEvent::ShadowRefused => "shadow_refused",
        }
    }
}

/// A task's label slot: a task of `fallback.tasks` (in its order), `other`, or `none`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskSlot(usize);

/// What traffic shaping did with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapingEvent {
    /// Took a slot of its own class's pool at once (or held none: no limit in force).
    Admitted,
    /// Took an idle slot of a lower class's pool.
    Borrowed,
    /// Took a slot of the long-task pool.
    Long,
    /// Waited in its queue.
    Queued,
    /// Left its queue with a slot.
    Released,
    /// The client went away while it waited.
    Abandoned,
    /// Answered 429 at its limit.
    Rejected,
    /// Routed to a lower tier at its limit.
    Downgraded,
    /// Answered 429 with `Retry-After` to an off-peak window, the load's end, or its queue time.
    Deferred,
    /// Slots of a dead VM taken back (counted under the class whose pool it was).
    Reclaimed,
}

impl ShapingEvent {
    pub const ALL: [ShapingEvent; 10] = [
        ShapingEvent::Admitted,
        ShapingEvent::Borrowed,
        ShapingEvent::Long,
        ShapingEvent::Queued,
        ShapingEvent::Released,
        ShapingEvent::Abandoned,
        ShapingEvent::Rejected,
        ShapingEvent::Downgraded,
        ShapingEvent::Deferred,
        ShapingEvent::Reclaimed,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            ShapingEvent::Admitted => "admitted",
            ShapingEvent::Borrowed => "borrowed",
            ShapingEvent::Long => "long",
            ShapingEvent::Queued => "queued",
            ShapingEvent::Released => "released",
            ShapingEvent::Abandoned => "abandoned",
            ShapingEvent::Rejected => "rejected",
            ShapingEvent::Downgraded => "downgraded",
            ShapingEvent::Deferred => "deferred",
            ShapingEvent::Reclaimed => "reclaimed",
        }
    }
}

/// What was done with an upstream's stated wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitHintOutcome {
    Capped,
    Ignored,
}

impl WaitHintOutcome {
    const ALL: [WaitHintOutcome; 2] = [WaitHintOutcome::Capped, WaitHintOutcome::Ignored];

    const fn as_str(self) -> &'static str {
        match self {
            WaitHintOutcome::Capped => "capped",
            WaitHintOutcome::Ignored => "ignored",
        }
    }
}

/// An account's label slot (the configured accounts, in order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AccountSlot(usize);

/// Index of a counter in [`CounterSet::names`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterId(pub usize);

/// All counters of one configuration, in a fixed order.
#[derive(Debug, Clone)]
pub struct CounterSet {
    models: Vec<String>,
    /// Per model (same order): its account's slot.
    model_accounts: Vec<usize>,
    accounts: Vec<String>,
    /// The (from, to) model slots a configured chain can switch between, sorted: only these
    /// get `fallbacks` counters (not every pair of models).
    switches: Vec<(usize, usize)>,
    /// Priority classes of traffic shaping (none when it is off).
    classes: usize,
    /// The configured tasks (`fallback.tasks`), in order.
    tasks: Vec<String>,
    /// Key labels (`metering.keys`, then `other`, `none`).
    keys: usize,
    /// Model slots with a price, in slot order: only these get cost counters.
    priced: Vec<usize>,
    /// Budgets (`metering.budgets`).
    budgets: usize,
    /// Canaries (`fallback.canaries`).
    canaries: usize,
    names: Vec<String>,
}

/// The classes after which a request can switch models (the others stop it).
pub fn switch_classes() -> impl Iterator<Item = ErrorClass> {
    ErrorClass::ALL
        .into_iter()
        .filter(|c| c.another_model_may_help())
}

impl CounterSet {
    pub fn new(config: &Config) -> Self {
        let models: Vec<String> = config.models.iter().map(|m| m.name.clone()).collect();
        let labels: Vec<&str> = models
            .iter()
            .map(String::as_str)
            .chain([OTHER_MODEL, NO_MODEL])
            .collect();
        let mut names = Vec::new();
        for family in ["requests", "attempts"] {
            for model in &labels {
                names.push(format!("{PREFIX}.{family};model={model}"));
            }
        }
        for family in ["responses", "stream_errors"] {
            for model in &labels {
                for class in ErrorClass::ALL {
                    names.push(format!(
                        "{PREFIX}.{family};model={model};class={}",
                        class.as_str()
                    ));
                }
            }
        }
        for model in &labels {
            for direction in Direction::ALL {
                names.push(format!(
                    "{PREFIX}.tokens;model={model};direction={}",
                    direction.as_str()
                ));
            }
        }
        for reason in BodySkip::ALL {
            names.push(format!("{PREFIX}.body_skipped;reason={}", reason.as_str()));
        }
        for model in &labels {
            for class in ErrorClass::ALL {
                names.push(format!(
                    "{PREFIX}.cooldowns_opened;model={model};class={}",
                    class.as_str()
                ));
            }
        }
        for family in [
            "probes",
            "switch_backs",
            "skipped_cooling",
            "unsafe_requests",
            "retries_blocked",
            "duplicates_refused",
            "client_cancels",
            "answers_cut",
            "chain_unavailable",
            "misrouted",
        ] {
            for model in &labels {
                names.push(format!("{PREFIX}.{family};model={model}"));
            }
        }
        for outcome in WaitHintOutcome::ALL {
            names.push(format!("{PREFIX}.wait_hints;outcome={}", outcome.as_str()));
        }
        let accounts: Vec<String> = config.accounts().into_iter().map(String::from).collect();
        let model_accounts = config
            .models
            .iter()
            .map(|m| {
                let account = config.account_of(m);
                accounts.iter().position(|a| a == account).unwrap_or(0)
            })
            .collect();
        for account in &accounts {
            names.push(format!("{PREFIX}.account_quota_stops;account={account}"));
        }
        let mut switches = Vec::new();
        for (_, chain) in crate::plan::every_chain(config) {
            for (i, from) in chain.iter().enumerate() {
                for to in chain.iter().skip(i + 1) {
                    let from = models.iter().position(|m| *m == from.name);
                    let to = models.iter().position(|m| *m == to.name);
                    if let (Some(f), Some(t)) = (from, to) {
                        if f != t {
                            switches.push((f, t));
                        }
                    }
                }
            }
        }
        switches.sort_unstable();
        switches.dedup();
        for (from, to) in &switches {
            let (Some(from), Some(to)) = (models.get(*from), models.get(*to)) else {
                continue;
            };
            let account = config
                .model(from)
                .map_or(OTHER_MODEL, |m| config.account_of(m));
            for class in switch_classes() {
                names.push(format!(
                    "{PREFIX}.fallbacks;model={from};to={to};class={};account={account}",
                    class.as_str()
                ));
            }
        }
        let classes: Vec<&str> = config
            .shaping
            .iter()
            .flat_map(|s| s.classes.iter().map(|c| c.name.as_str()))
            .collect();
        for class in &classes {
            for event in ShapingEvent::ALL {
                names.push(format!(
                    "{PREFIX}.shaping;priority={class};event={}",
                    event.as_str()
                ));
            }
        }
        for model in &labels {
            for outcome in ["success", "failure"] {
                names.push(format!(
                    "{PREFIX}.fallback_outcomes;model={model};outcome={outcome}"
                ));
            }
        }
        let tasks: Vec<String> = config.fallback.tasks.keys().cloned().collect();
        for task in tasks
            .iter()
            .map(String::as_str)
            .chain([OTHER_MODEL, NO_MODEL])
        {
            for direction in Direction::ALL {
                names.push(format!(
                    "{PREFIX}.task_tokens;task={task};direction={}",
                    direction.as_str()
                ));
            }
        }
        let metering = &config.metering;
        let keys: Vec<&str> = crate::meter::key_labels(metering).collect();
        for key in &keys {
            for direction in Direction::ALL {
                names.push(format!(
                    "{PREFIX}.key_tokens;key={key};direction={}",
                    direction.as_str()
                ));
            }
        }
        let priced: Vec<usize> = models
            .iter()
            .enumerate()
            .filter(|(_, m)| metering.prices.contains_key(*m))
            .map(|(i, _)| i)
            .collect();
        let task_labels: Vec<&str> = tasks
            .iter()
            .map(String::as_str)
            .chain([OTHER_MODEL, NO_MODEL])
            .collect();
        for model in priced.iter().filter_map(|i| models.get(*i)) {
            // A model has one account: the label adds no series, and lets cost add up by it.
            let account = config
                .model(model)
                .map_or(OTHER_MODEL, |m| config.account_of(m));
            for task in &task_labels {
                for key in &keys {
                    names.push(format!(
                        "{PREFIX}.cost_nanousd;model={model};task={task};key={key};account={account}"
                    ));
                }
            }
        }
        for budget in &metering.budgets {
            for event in BudgetEvent::ALL {
                names.push(format!(
                    "{PREFIX}.budget;budget={};event={}",
                    budget.name,
                    event.as_str()
                ));
            }
        }
        for model in &labels {
            for condition in crate::health::Condition::ALL {
                names.push(format!(
                    "{PREFIX}.switch_conditions;model={model};condition={}",
                    condition.as_str()
                ));
            }
        }
        for canary in &config.fallback.canaries {
            for event in CanaryEvent::ALL {
                names.push(format!(
                    "{PREFIX}.canary;model={};of={};event={}",
                    canary.model,
                    canary.of,
                    event.as_str()
                ));
            }
        }
        for model in &labels {
            names.push(format!("{PREFIX}.backups;model={model}"));
        }
        let keys = keys.len();
        Self {
            models,
            model_accounts,
            accounts,
            switches,
            classes: classes.len(),
            tasks,
            keys,
            priced,
            budgets: metering.budgets.len(),
            canaries: config.fallback.canaries.len(),
            names,
        }
    }

    /// The label slot of a configured account (`None` when unknown).
    pub fn account_slot(&self, account: &str) -> Option<AccountSlot> {
        self.accounts
            .iter()
            .position(|a| a == account)
            .map(AccountSlot)
    }

    /// The account a configured model is billed to.
    pub fn account_of(&self, model: &str) -> Option<&str> {
        let index = self.models.iter().position(|m| m == model)?;
        let account = self.model_accounts.get(index)?;
        self.accounts.get(*account).map(String::as_str)
    }

    /// The configured accounts, in slot order.
    pub fn accounts(&self) -> &[String] {
        &self.accounts
    }

    /// Every counter name, in id order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    fn slots(&self) -> usize {
        self.models.len() + 2
    }

    /// Every model label slot: the configured models, `other`, `none`.
    pub fn model_slots(&self) -> impl Iterator<Item = ModelSlot> {
        (0..self.slots()).map(ModelSlot)
    }

    /// The label slot of a model name (`None`: the model is unknown).
    pub fn slot(&self, model: Option<&str>) -> ModelSlot {
        ModelSlot(match model {
            None => self.models.len() + 1,
            Some(m) => self
                .models
                .iter()
                .position(|c| c == m)
                .unwrap_or(self.models.len()),
        })
    }

    /// The label slot of a request's task (`None`: it has none; unknown tasks are `other`).
    pub fn task_slot(&self, task: Option<&str>) -> TaskSlot {
        TaskSlot(match task {
            None => self.tasks.len() + 1,
            Some(t) => self
                .tasks
                .iter()
                .position(|c| c == t)
                .unwrap_or(self.tasks.len()),
        })
    }

    /// The label a slot stands for.
    pub fn label(&self, slot: ModelSlot) -> &str {
        self.models.get(slot.0).map_or_else(
            || {
                if slot.0 == self.models.len() {
                    OTHER_MODEL
                } else {
                    NO_MODEL
                }
            },
            String::as_str,
        )
    }

    /// The counter's index in [`Self::names`]; `None` for a switch no configured chain can make.
    pub fn id(&self, counter: Counter) -> Option<CounterId> {
        let slots = self.slots();
        let classes = ErrorClass::ALL.len();
        let class_index = |c: ErrorClass| ErrorClass::ALL.iter().position(|x| *x == c).unwrap_or(0);
        let per_model_class = slots * classes;
        let base_responses = 2 * slots;
        let base_stream = base_responses + per_model_class;
        let base_tokens = base_stream + per_model_class;
        let base_skipped = base_tokens + slots * Direction::ALL.len();
        let base_cooldowns = base_skipped + BodySkip::ALL.len();
        let base_probes = base_cooldowns + per_model_class;
        let base_accounts =
            base_cooldowns + per_model_class + 10 * slots + WaitHintOutcome::ALL.len();
        let base_fallbacks = base_accounts + self.accounts.len();
        let base_shaping = base_fallbacks + self.switches.len() * switch_classes().count();
        let base_outcomes = base_shaping + self.classes * ShapingEvent::ALL.len();
        let base_tasks = base_outcomes + 2 * slots;
        let tasks = self.tasks.len() + 2;
        let base_keys = base_tasks + tasks * Direction::ALL.len();
        let base_cost = base_keys + self.keys * Direction::ALL.len();
        let base_budget = base_cost + self.priced.len() * tasks * self.keys;
        let base_conditions = base_budget + self.budgets * BudgetEvent::ALL.len();
        let base_canaries = base_conditions + slots * crate::health::Condition::ALL.len();
        let base_backups = base_canaries + self.canaries * CanaryEvent::ALL.len();
        Some(CounterId(match counter {
            Counter::Requests(m) => m.0,
            Counter::Attempts(m) => slots + m.0,
            Counter::Responses(m, c) => base_responses + m.0 * classes + class_index(c),
            Counter::StreamErrors(m, c) => base_stream + m.0 * classes + class_index(c),
            Counter::Tokens(m, d) => {
                base_tokens + m.0 * Direction::ALL.len() + (d == Direction::Output) as usize
            }
            Counter::BodySkipped(reason) => base_skipped + reason.index(),
            Counter::Fallbacks { from, to, class } => {
                let pair = self.switches.binary_search(&(from.0, to.0)).ok()?;
                let class = switch_classes().position(|c| c == class)?;
                base_fallbacks + pair * switch_classes().count() + class
            }
            Counter::CooldownsOpened(m, c) => base_cooldowns + m.0 * classes + class_index(c),
            Counter::Probes(m) => base_probes + m.0,
            Counter::SwitchBacks(m) => base_probes + slots + m.0,
            Counter::Skipped(m) => base_probes + 2 * slots + m.0,
            Counter::UnsafeRequests(m) => base_probes + 3 * slots + m.0,
            Counter::RetriesBlocked(m) => base_probes + 4 * slots + m.0,
            Counter::DuplicatesRefused(m) => base_probes + 5 * slots + m.0,
            Counter::ClientCancels(m) => base_probes + 6 * slots + m.0,
            Counter::AnswersCut(m) => base_probes + 7 * slots + m.0,
            Counter::ChainUnavailable(m) => base_probes + 8 * slots + m.0,
            Counter::Misrouted(m) => base_probes + 9 * slots + m.0,
            Counter::WaitHints(o) => base_probes + 10 * slots + o as usize,
            Counter::AccountQuotaStops(a) => base_accounts + a.0,
            Counter::Shaping(class, event) => {
                if class >= self.classes {
                    return None;
                }
                let event = ShapingEvent::ALL.iter().position(|e| *e == event)?;
                base_shaping + class * ShapingEvent::ALL.len() + event
            }
            Counter::FallbackOutcomes(m, success) => {
                base_outcomes + 2 * m.0 + usize::from(!success)
            }
            Counter::TaskTokens(t, d) => {
                base_tasks + t.0 * Direction::ALL.len() + usize::from(d == Direction::Output)
            }
            Counter::KeyTokens(k, d) => {
                if k.0 >= self.keys {
                    return None;
                }
                base_keys + k.0 * Direction::ALL.len() + usize::from(d == Direction::Output)
            }
            Counter::Cost(m, t, k) => {
                let model = self.priced.iter().position(|p| *p == m.0)?;
                if t.0 >= tasks || k.0 >= self.keys {
                    return None;
                }
                base_cost + (model * tasks + t.0) * self.keys + k.0
            }
            Counter::Budget(b, e) => {
                if b >= self.budgets {
                    return None;
                }
                let event = BudgetEvent::ALL.iter().position(|x| *x == e)?;
                base_budget + b * BudgetEvent::ALL.len() + event
            }
            Counter::SwitchConditions(m, c) => {
                let all = crate::health::Condition::ALL;
                base_conditions + m.0 * all.len() + all.iter().position(|x| *x == c)?
            }
            Counter::Canary(index, event) => {
                if index >= self.canaries {
                    return None;
                }
                let all = CanaryEvent::ALL;
                base_canaries + index * all.len() + all.iter().position(|x| *x == event)?
            }
            Counter::Backups(m) => base_backups + m.0,
        }))
    }
}

/// The status document: each configured model's health and answers per class, and every
/// counter with its shared (all-worker) value.
pub fn status_json(
    set: &CounterSet,
    values: &[u64],
    health: &[(String, crate::health::Health)],
    now_ms: u64,
) -> String {
    use crate::health::Admission;
    use serde_json::{json, Map, Value};
    let value_of = |c: Counter| {
        set.id(c)
            .and_then(|id| values.get(id.0))
            .copied()
            .unwrap_or(0)
    };
    let mut models = Map::new();
    for (name, h) in health {
        let slot = set.slot(Some(name));
        let (state, remaining) = match h.admission(now_ms) {
            Admission::Healthy => ("healthy", 0),
            Admission::Probe => ("probe_due", 0),
            Admission::Cooling { until_ms } if now_ms < h.cooldown_until_ms => {
                ("cooling_down", until_ms.saturating_sub(now_ms))
            }
            Admission::Cooling { until_ms } => ("probing", until_ms.saturating_sub(now_ms)),
        };
        let answers: Map<String, Value> = ErrorClass::ALL
            .iter()
            .map(|c| {
                (
                    c.as_str().to_owned(),
                    Value::from(value_of(Counter::Responses(slot, *c))),
                )
            })
            .collect();
        models.insert(
            name.clone(),
            json!({
                "account": set.account_of(name),
                "state": state,
                "cooldown_remaining_ms": remaining,
                "consecutive_failures": h.consecutive_failures,
                "circuit_opens": h.opens,
                "last_reason": h.reason.map(ErrorClass::as_str),
                "requests": value_of(Counter::Requests(slot)),
                "attempts": value_of(Counter::Attempts(slot)),
                "answers": answers,
                "fallbacks_from": set.names().iter().zip(values).filter(|(n, _)| n.starts_with(&format!("{PREFIX}.fallbacks;model={name};"))).map(|(_, v)| *v).sum::<u64>(),
                "retries_blocked": value_of(Counter::RetriesBlocked(slot)),
            }),
        );
    }
    let mut accounts = Map::new();
    for (index, account) in set.accounts().iter().enumerate() {
        let members: Vec<&str> = health
            .iter()
            .filter(|(name, _)| set.account_of(name) == Some(account.as_str()))
            .map(|(name, _)| name.as_str())
            .collect();
        let quota_cooling = health
            .iter()
            .filter(|(name, _)| set.account_of(name) == Some(account.as_str()))
            .all(|(_, h)| {
                now_ms < h.cooldown_until_ms && h.reason == Some(ErrorClass::QuotaExhausted)
            });
        accounts.insert(
            account.clone(),
            json!({
                "models": members,
                "state": if quota_cooling && !members.is_empty() { "quota_exhausted" } else { "serving" },
                "quota_stops": value_of(Counter::AccountQuotaStops(AccountSlot(index))),
            }),
        );
    }
    let counters: Map<String, Value> = set
        .names()
        .iter()
        .zip(values)
        .map(|(name, value)| (name.clone(), Value::from(*value)))
        .collect();
    json!({ "models": models, "accounts": accounts, "counters": counters }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ModelConfig;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn set() -> CounterSet {
        let model = |name: &str| ModelConfig {
            name: name.into(),
            ..ModelConfig::default()
        };
        let mut mini = model("mini");
        mini.account = Some("acme".into());
        let mut config = Config {
            models: vec![model("gpt-4.1"), mini],
            ..Config::default()
        };
        config
            .fallback
            .chains
            .insert("gpt-4.1".into(), vec!["mini".into()]);
        config
            .fallback
            .tasks
            .insert("agent".into(), vec!["mini".into()]);
        config.metering = serde_json::from_value(serde_json::json!({
            "keys": [{"sha256": "ab".repeat(32), "label": "team-a"}],
            "prices": {"mini": {"input": 0.15, "output": 0.6}},
            "budgets": [{"name": "day", "tokens": 100, "window": "day"}],
        }))
        .unwrap();
        CounterSet::new(&config)
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn cost_counters_exist_for_priced_models_only_and_keys_are_bounded() {
        let s = set();
        let name = |c: Counter| s.id(c).map(|id| s.names()[id.0].as_str());
        let (gpt, mini) = (s.slot(Some("gpt-4.1")), s.slot(Some("mini")));
        let (agent, none) = (s.task_slot(Some("agent")), s.task_slot(None));
        let (team, other, nokey) = (KeySlot(0), KeySlot(1), KeySlot(2));
        assert_eq!(
            name(Counter::Cost(mini, agent, team)),
            Some("llm_fallback.cost_nanousd;model=mini;task=agent;key=team-a;account=acme")
        );
        assert_eq!(
            name(Counter::Cost(mini, none, nokey)),
            Some("llm_fallback.cost_nanousd;model=mini;task=none;key=none;account=acme")
        );
        assert_eq!(name(Counter::Cost(gpt, agent, team)), None, "no price");
        assert_eq!(
            name(Counter::KeyTokens(other, Direction::Output)),
            Some("llm_fallback.key_tokens;key=other;direction=output")
        );
        assert_eq!(name(Counter::KeyTokens(KeySlot(3), Direction::Input)), None);
        assert_eq!(
            name(Counter::Budget(0, BudgetEvent::ShadowRefused)),
            Some("llm_fallback.budget;budget=day;event=shadow_refused")
        );
        assert_eq!(name(Counter::Budget(1, BudgetEvent::Refused)), None);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn every_counter_id_points_at_its_own_name() {
        let s = set();
        let name = |c: Counter| s.names()[s.id(c).unwrap().0].as_str();
        let gpt = s.slot(Some("gpt-4.1"));
        let mini = s.slot(Some("mini"));
        let other = s.slot(Some("random"));
        let none = s.slot(None);
        assert_eq!(
            name(Counter::Requests(gpt)),
            "llm_fallback.requests;model=gpt-4.1"
        );
        assert_eq!(
            name(Counter::Attempts(mini)),
            "llm_fallback.attempts;model=mini"
        );
        assert_eq!(
            name(Counter::Requests(other)),
            "llm_fallback.requests;model=other"
        );
        assert_eq!(
            name(Counter::Attempts(none)),
            "llm_fallback.attempts;model=none"
        );
        assert_eq!(
            name(Counter::Responses(mini, ErrorClass::QuotaExhausted)),
            "llm_fallback.responses;model=mini;class=quota_exhausted"
        );
        assert_eq!(
            name(Counter::StreamErrors(none, ErrorClass::BadRequest)),
            "llm_fallback.stream_errors;model=none;class=bad_request"
        );
        assert_eq!(
            name(Counter::Tokens(other, Direction::Output)),
            "llm_fallback.tokens;model=other;direction=output"
        );
        assert_eq!(
            name(Counter::BodySkipped(BodySkip::Encoded)),
            "llm_fallback.body_skipped;reason=encoded"
        );
        assert_eq!(
            name(Counter::Fallbacks {
                from: gpt,
                to: mini,
                class: ErrorClass::QuotaExhausted
            }),
            "llm_fallback.fallbacks;model=gpt-4.1;to=mini;class=quota_exhausted;account=llm"
        );
        assert_eq!(
            name(Counter::SwitchBacks(gpt)),
            "llm_fallback.switch_backs;model=gpt-4.1"
        );
        assert_eq!(
            name(Counter::Skipped(none)),
            "llm_fallback.skipped_cooling;model=none"
        );
        assert_eq!(s.label(other), OTHER_MODEL);
        assert_eq!(s.label(mini), "mini");
        assert_eq!(s.label(none), NO_MODEL);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn fallback_counters_exist_only_for_switches_a_chain_can_make() {
        let s = set();
        let (gpt, mini) = (s.slot(Some("gpt-4.1")), s.slot(Some("mini")));
        let switch = |from, to, class| s.id(Counter::Fallbacks { from, to, class });
        assert!(switch(gpt, mini, ErrorClass::QuotaExhausted).is_some());
        assert!(
            switch(mini, gpt, ErrorClass::QuotaExhausted).is_none(),
            "not in a chain"
        );
        assert!(
            switch(gpt, mini, ErrorClass::Auth).is_none(),
            "auth never switches"
        );
        let fallbacks = s
            .names()
            .iter()
            .filter(|n| n.contains(".fallbacks;"))
            .count();
        assert_eq!(fallbacks, switch_classes().count());
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn ids_cover_every_name_exactly_once() {
        let s = set();
        let mut ids = Vec::new();
        for model in [Some("gpt-4.1"), Some("mini"), Some("zz"), None] {
            let m = s.slot(model);
            ids.extend(s.id(Counter::Requests(m)).map(|i| i.0));
            ids.extend(s.id(Counter::Attempts(m)).map(|i| i.0));
            for class in ErrorClass::ALL {
                ids.extend(s.id(Counter::Responses(m, class)).map(|i| i.0));
                ids.extend(s.id(Counter::StreamErrors(m, class)).map(|i| i.0));
            }
            ids.extend(s.id(Counter::Tokens(m, Direction::Input)).map(|i| i.0));
            ids.extend(s.id(Counter::Tokens(m, Direction::Output)).map(|i| i.0));
        }
        for reason in BodySkip::ALL {
            ids.extend(s.id(Counter::BodySkipped(reason)).map(|i| i.0));
        }
        let models = [Some("gpt-4.1"), Some("mini"), Some("zz"), None].map(|m| s.slot(m));
        for m in models {
            for to in models {
                for class in ErrorClass::ALL {
                    ids.extend(s.id(Counter::Fallbacks { from: m, to, class }).map(|i| i.0));
                }
            }
            for class in ErrorClass::ALL {
                ids.extend(s.id(Counter::CooldownsOpened(m, class)).map(|i| i.0));
            }
            ids.extend(s.id(Counter::Probes(m)).map(|i| i.0));
            ids.extend(s.id(Counter::SwitchBacks(m)).map(|i| i.0));
            ids.extend(s.id(Counter::Skipped(m)).map(|i| i.0));
            ids.extend(s.id(Counter::UnsafeRequests(m)).map(|i| i.0));
            ids.extend(s.id(Counter::RetriesBlocked(m)).map(|i| i.0));
            ids.extend(s.id(Counter::DuplicatesRefused(m)).map(|i| i.0));
            ids.extend(s.id(Counter::ClientCancels(m)).map(|i| i.0));
            ids.extend(s.id(Counter::AnswersCut(m)).map(|i| i.0));
            ids.extend(s.id(Counter::ChainUnavailable(m)).map(|i| i.0));
            ids.extend(s.id(Counter::Misrouted(m)).map(|i| i.0));
            for success in [true, false] {
                ids.extend(s.id(Counter::FallbackOutcomes(m, success)).map(|i| i.0));
            }
        }
        for outcome in WaitHintOutcome::ALL {
            ids.extend(s.id(Counter::WaitHints(outcome)).map(|i| i.0));
        }
        let tasks: Vec<String> = s.tasks.clone();
        for task in tasks
            .iter()
            .map(|t| Some(t.as_str()))
            .chain([Some("unknown"), None])
        {
            for direction in Direction::ALL {
                ids.extend(
                    s.id(Counter::TaskTokens(s.task_slot(task), direction))
                        .map(|i| i.0),
                );
            }
        }
        for key in 0..4 {
            for direction in Direction::ALL {
                ids.extend(
                    s.id(Counter::KeyTokens(KeySlot(key), direction))
                        .map(|i| i.0),
                );
            }
            for model in [Some("gpt-4.1"), Some("mini"), Some("zz"), None] {
                for task in [Some("agent"), Some("unknown"), None] {
                    let c = Counter::Cost(s.slot(model), s.task_slot(task), KeySlot(key));
                    ids.extend(s.id(c).map(|i| i.0));
                }
            }
        }
        for budget in 0..2 {
            for event in BudgetEvent::ALL {
                ids.extend(s.id(Counter::Budget(budget, event)).map(|i| i.0));
            }
        }
        for model in [Some("gpt-4.1"), Some("mini"), Some("zz"), None] {
            for condition in crate::health::Condition::ALL {
                let c = Counter::SwitchConditions(s.slot(model), condition);
                ids.extend(s.id(c).map(|i| i.0));
            }
            ids.extend(s.id(Counter::Backups(s.slot(model))).map(|i| i.0));
        }
        for account in s.accounts().to_vec() {
            ids.extend(
                s.id(Counter::AccountQuotaStops(
                    s.account_slot(&account).unwrap(),
                ))
                .map(|i| i.0),
            );
        }
        ids.sort_unstable();
        assert_eq!(ids, (0..s.names().len()).collect::<Vec<_>>());
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn status_shows_health_and_every_counter() {
        use crate::health::Health;
        let s = set();
        let mut values = vec![0u64; s.names().len()];
        values[s.id(Counter::Requests(s.slot(Some("mini")))).unwrap().0] = 7;
        values[s
            .id(Counter::Responses(
                s.slot(Some("mini")),
                ErrorClass::QuotaExhausted,
            ))
            .unwrap()
            .0] = 2;
        let cooling = Health {
            cooldown_until_ms: 5000,
            opens: 1,
            reason: Some(ErrorClass::QuotaExhausted),
            ..Health::default()
        };
        let health = vec![
            ("gpt-4.1".to_owned(), Health::default()),
            ("mini".to_owned(), cooling),
        ];
        let doc: serde_json::Value =
            serde_json::from_str(&status_json(&s, &values, &health, 1000)).unwrap();
        assert_eq!(doc["models"]["gpt-4.1"]["state"], "healthy");
        assert_eq!(doc["models"]["mini"]["state"], "cooling_down");
        assert_eq!(doc["models"]["mini"]["cooldown_remaining_ms"], 4000);
        assert_eq!(doc["models"]["mini"]["last_reason"], "quota_exhausted");
        assert_eq!(doc["models"]["mini"]["requests"], 7);
        assert_eq!(doc["models"]["mini"]["account"], "acme");
        assert_eq!(doc["models"]["gpt-4.1"]["account"], "llm");
        assert_eq!(doc["accounts"]["acme"]["models"][0], "mini");
        assert_eq!(doc["models"]["mini"]["answers"]["quota_exhausted"], 2);
        assert_eq!(doc["counters"]["llm_fallback.requests;model=mini"], 7);
        assert_eq!(doc["counters"].as_object().unwrap().len(), s.names().len());
    }
}
