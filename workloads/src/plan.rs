//! Validation: a `RuntimeSpec` + `WorkloadSpec` become a typed [`Plan`] or
//! an error that names the bad value and what is allowed.

use std::time::Duration;

use crate::api::{RunOptions, RuntimeSpec, WorkloadInfo, WorkloadSpec};
use crate::arrivals::{ArrivalKind, ARRIVAL_KINDS};
use crate::bench::{Bench, Shape};
use crate::catalog::WORKLOADS;
use crate::channels::{PingPong, Pipeline, MAX_CAPACITY, MAX_PAIRS, MAX_PER_ITERATION, MAX_STAGES};
use crate::client::ClientShape;
use crate::dist::Dist;
use crate::http::{Http, Proto};
use crate::loadgen::LoadSpec;
use crate::micro::{Fanout, Skewed, Timeouts, Timers};
use crate::openloop::Injection;
use crate::params::Params;
use crate::side::{SidePool, MAX_SIDE_THREADS};
use crate::storm::{Storm, StormKind, MAX_SPAWNERS};
use crate::tcp::{Handler, Mixed, TcpRpc};
use crate::zoo::accept::CONNECTIONS_PER_STORM_THREAD;
use crate::zoo::churn::{TaskChurn, MAX_BATCH, MAX_SPAWNERS as MAX_CHURNERS, MAX_TASKS as MAX_CHURN_TASKS};
use crate::zoo::idle::{IdleBurst, MAX_BURSTS, MAX_IDLE_US, MAX_JOBS, MAX_JOB_US};
use crate::zoo::lifo::{LifoStarvation, MAX_BYSTANDERS, MAX_YIELDS};
use crate::zoo::timers::{TimerChurn, MAX_TASKS as MAX_TIMER_TASKS, MAX_TIMEOUT_MS as MAX_TIMER_MS, MAX_TIMERS};
use crate::Error;

/// Largest offered rate accepted, requests per second.
pub const MAX_RATE_PER_S: f64 = 1e8;
/// Largest worker count accepted (the schedulers crate's limit).
pub use wsbench_schedulers::MAX_WORKERS;
/// `loadgen-threads=auto`: one generator thread per this many workers.
const WORKERS_PER_LOADGEN: usize = 16;
const MAX_LOADGEN_THREADS: u64 = 256;
/// Client connections (a file descriptor each, on both ends in-process).
const MAX_CONNECTIONS: u64 = 100_000;
/// `client-threads=auto`: one client thread per this many connections ...
const CONNECTIONS_PER_CLIENT_THREAD: u64 = 1024;
/// ... and at most this many threads.
const MAX_CLIENT_THREADS: u64 = 256;
const AUTO_CLIENT_THREADS_MAX: u64 = 16;
/// Requests in flight per client connection (`pipeline`).
const MAX_PIPELINE: u64 = 1024;
const MAX_BODY_BYTES: u64 = 16 * 1024 * 1024;
const MAX_STALL_MS: u64 = 60_000;
const MAX_PANIC_EVERY: u64 = 1_000_000_000_000;
const MAX_FANOUT: u64 = 1024;
const MAX_DEADLINE_US: u64 = 60_000_000;
const MAX_TIMEOUT_MS: u64 = 60_000;
const MAX_STRAGGLER_FACTOR: f64 = 10_000.0;
const MAX_SPAWNS: u64 = 10_000_000;
const MAX_TASKS: u64 = 1_000_000;
const MAX_BUSY_TASKS: u64 = 100_000;
const MAX_STALL_US: u64 = 1_000_000;

/// Offered-load settings (open loop), before the run's options are known.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Load {
    pub rate_per_s: f64,
    pub arrival: ArrivalKind,
    pub threads: usize,
    pub stall: Duration,
    pub panic_every: u64,
    pub side: SidePool,
}

impl Load {
    pub(crate) fn spec(&self, rt: &RuntimeSpec, opts: &RunOptions) -> LoadSpec {
        LoadSpec {
            rate_per_s: self.rate_per_s,
            arrival: self.arrival,
            threads: self.threads,
            cores: rt.loadgen_cores.clone(),
            seed: opts.seed,
            warmup: opts.warmup,
            duration: opts.duration,
            stall: self.stall,
            panic_every: self.panic_every,
            side: self.side,
        }
    }
}

/// What to run.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Work {
    Bench(Bench),
    Fanout(Fanout, Load),
    Skewed(Skewed, Injection, Load),
    Timers(Timers, Load),
    Timeouts(Timeouts, Load),
    Tcp(Handler, Load, ClientShape),
    AcceptStorm(TcpRpc, Load, ClientShape),
    Http(Http, Load, ClientShape),
    Storm(Storm),
    PingPong(PingPong),
    Pipeline(Pipeline),
    LifoStarvation(LifoStarvation),
    IdleBurst(IdleBurst),
    TaskChurn(TaskChurn),
    TimerChurn(TimerChurn),
    Hang,
    Crash,
}

/// A validated workload with the parameter values it uses.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub work: Work,
    pub params: Vec<(String, String)>,
    pub notes: Vec<String>,
}

fn check_rate(rate: Option<f64>) -> Result<Option<f64>, Error> {
    match rate {
        Some(r) if !(r.is_finite() && r > 0.0 && r <= MAX_RATE_PER_S) => {
            Err(Error::BadRate { value: r.to_string(), max: MAX_RATE_PER_S })
        }
        r => Ok(r),
    }
}

/// Validates the workload spec against the runtime's worker count.
pub(crate) fn plan(rt: &RuntimeSpec, w: &WorkloadSpec) -> Result<Plan, Error> {
    let info: &'static WorkloadInfo =
        WORKLOADS.iter().find(|i| i.name == w.name).ok_or_else(|| Error::UnknownWorkload {
            name: w.name.clone(),
            allowed: WORKLOADS.iter().map(|i| i.name).collect::<Vec<_>>().join(", "),
        })?;
    let rate = check_rate(w.rate_per_s)?;
    let mut p = Params::new(info, &w.params)?;
    let mut notes = Vec::new();
    let work = match info.default_rate_per_worker {
        None => {
            if let Some(r) = rate {
                notes.push(format!("rate {r}/s ignored: `{}` is not an open-loop workload", info.name));
            }
            closed_work(&mut p, rt.workers())?
        }
        Some(per_worker) => {
            let rate_per_s = rate.unwrap_or(per_worker * rt.workers() as f64);
            open_work(&mut p, rt.workers(), rate_per_s)?
        }
    };
    Ok(Plan { work, params: p.into_resolved(), notes })
}

/// The parameter values a run of `w` on `rt` would use, defaults and
/// `auto` resolved (`client-threads=auto` as its number), without running
/// it: what the harness checks before a sweep.
pub fn resolved_params(rt: &RuntimeSpec, w: &WorkloadSpec) -> Result<Vec<(String, String)>, Error> {
    plan(rt, w).map(|p| p.params)
}

fn closed_work(p: &mut Params<'_>, workers: usize) -> Result<Work, Error> {
    let mut b = Bench { shape: Shape::SpawnManyLocal, size: 0, yields: 0, busy_tasks: 0, stall: Duration::ZERO };
    let workers = workers as u64;
    let busy = |p: &mut Params<'_>, b: &mut Bench, auto: u64| -> Result<(), Error> {
        b.size = p.u64_in("spawns", 1, MAX_SPAWNS)?;
        b.busy_tasks = p.u64_or_auto("busy-tasks", 0, MAX_BUSY_TASKS, auto)?;
        b.stall = Duration::from_micros(p.u64_in("stall-us", 0, MAX_STALL_US)?);
        Ok(())
    };
    match p.workload() {
        "hang" => return Ok(Work::Hang),
        "crash" => return Ok(Work::Crash),
        "spawn-storm" | "blocking-storm" => {
            let spawners = p.u64_in("spawners", 1, MAX_SPAWNERS)? as usize;
            let kind = if p.workload() == "spawn-storm" { StormKind::Tasks } else { StormKind::Blocking };
            return Ok(Work::Storm(Storm { spawners, kind }));
        }
        "channel-ping-pong" => {
            let pairs = p.u64_in("pairs", 1, MAX_PAIRS)?;
            let rounds = p.u64_in("rounds", 1, MAX_PER_ITERATION)?;
            return Ok(Work::PingPong(PingPong { pairs, rounds }));
        }
        "pipeline" => return pipeline(p),
        "lifo-starvation" => {
            let bystanders = p.u64_in("bystanders", 1, MAX_BYSTANDERS)?;
            let yields = p.u64_in("yields", 1, MAX_YIELDS)?;
            return Ok(Work::LifoStarvation(LifoStarvation { bystanders, yields }));
        }
        "task-churn" => {
            let spawners = p.u64_or_auto("spawners", 1, MAX_CHURNERS, workers)?;
            let tasks = p.u64_in("tasks", 1, MAX_CHURN_TASKS)?;
            let batch = p.u64_in("batch", 1, MAX_BATCH)?;
            return Ok(Work::TaskChurn(TaskChurn { spawners, tasks, batch }));
        }
        "timer-churn" => {
            let tasks = p.u64_or_auto("tasks", 1, MAX_TIMER_TASKS, (2 * workers).min(MAX_TIMER_TASKS))?;
            let timers = p.u64_in("timers", 1, MAX_TIMERS)?;
            let timeout = Duration::from_millis(p.u64_in("timeout-ms", 1, MAX_TIMER_MS)?);
            return Ok(Work::TimerChurn(TimerChurn { tasks, timers, timeout }));
        }
        "idle-burst" => {
            let jobs = p.u64_in("jobs", 1, MAX_JOBS)?;
            let job = Duration::from_micros(p.u64_in("job-us", 0, MAX_JOB_US)?);
            let idle = Duration::from_micros(p.u64_in("idle-us", 0, MAX_IDLE_US)?);
            let bursts = p.u64_in("bursts", 1, MAX_BURSTS)?;
            return Ok(Work::IdleBurst(IdleBurst { jobs, job, idle, bursts }));
        }
        "spawn-many-local" | "spawn-many-remote-idle" => {
            b.shape =
                if p.workload() == "spawn-many-local" { Shape::SpawnManyLocal } else { Shape::SpawnManyRemoteIdle };
            b.size = p.u64_in("spawns", 1, MAX_SPAWNS)?;
        }
        "spawn-many-remote-busy1" => {
            b.shape = Shape::SpawnManyRemoteBusy1;
            busy(p, &mut b, 2 * workers)?;
        }
        "spawn-many-remote-busy2" => {
            b.shape = Shape::SpawnManyRemoteBusy2;
            busy(p, &mut b, workers)?;
        }
        "yield-many" => {
            b.shape = Shape::YieldMany;
            b.size = p.u64_in("tasks", 1, MAX_TASKS)?;
            b.yields = p.u64_in("yields", 1, MAX_SPAWNS)?;
        }
        "ping-pong" => {
            b.shape = Shape::PingPong;
            b.size = p.u64_in("pings", 1, MAX_TASKS)?;
        }
        "chained-spawn" => {
            b.shape = Shape::ChainedSpawn;
            b.size = p.u64_in("depth", 1, MAX_SPAWNS)?;
        }
        other => unreachable!("closed workload `{other}` has no plan"),
    }
    Ok(Work::Bench(b))
}

fn pipeline(p: &mut Params<'_>) -> Result<Work, Error> {
    let stages = p.u64_in("stages", 2, MAX_STAGES)?;
    let capacity = p.u64_in("capacity", 1, MAX_CAPACITY)?;
    let most = Pipeline::max_in_flight(stages, capacity);
    let in_flight = p.u64_in("in-flight", 1, most).map_err(|e| match e {
        Error::BadParam { workload, name, value, .. } => Error::BadParam {
            workload,
            name,
            value,
            allowed: format!(
                "an integer in 1..={most}: at most (capacity + 1) x stages - 1 = ({capacity} + 1) x {stages} - 1, \
                 or the ring can fill and deadlock"
            ),
        },
        other => other,
    })?;
    let messages = p.u64_in("messages", 1, MAX_PER_ITERATION)?;
    Ok(Work::Pipeline(Pipeline { stages, capacity, in_flight, messages }))
}

fn load(p: &mut Params<'_>, workers: usize, rate_per_s: f64, over_tcp: bool) -> Result<Load, Error> {
    let arrival = p.choice("arrival", ARRIVAL_KINDS)?;
    // Over TCP the client's shape is read by `client_shape`.
    let threads = if over_tcp {
        1
    } else {
        let auto = workers.div_ceil(WORKERS_PER_LOADGEN) as u64;
        p.u64_or_auto("loadgen-threads", 1, MAX_LOADGEN_THREADS, auto)?
    };
    let stall = Duration::from_millis(p.u64_in("stall-ms", 0, MAX_STALL_MS)?);
    let panic_every = p.u64_in("panic-every", 0, MAX_PANIC_EVERY)?;
    // The side pool runs beside the in-process generator (not a TCP client).
    let side = if over_tcp {
        SidePool::OFF
    } else {
        let threads = p.u64_in("side-threads", 0, MAX_SIDE_THREADS)? as usize;
        SidePool { threads, duty: p.f64_in("side-duty", 0.0, 1.0)? }
    };
    Ok(Load { rate_per_s, arrival, threads: threads as usize, stall, panic_every, side })
}

/// `connections`, `client-threads` and `pipeline` of the TCP workloads;
/// the load's `threads` is the client threads.
/// `auto` threads: one per `per_thread` connections, at most
/// [`AUTO_CLIENT_THREADS_MAX`].
fn client_shape(p: &mut Params<'_>, load: &mut Load, per_thread: u64) -> Result<ClientShape, Error> {
    let connections = p.u64_in("connections", 1, MAX_CONNECTIONS)?;
    let auto = connections.div_ceil(per_thread).min(AUTO_CLIENT_THREADS_MAX);
    let threads = p.u64_or_auto("client-threads", 1, MAX_CLIENT_THREADS, auto)?;
    if threads > connections {
        let allowed = format!("auto or 1..={connections} (at most one client thread per connection)");
        return Err(p.bad("client-threads", &threads.to_string(), allowed));
    }
    let pipeline = p.u64_in("pipeline", 1, MAX_PIPELINE)?;
    load.threads = threads as usize;
    Ok(ClientShape { connections: connections as usize, threads: threads as usize, pipeline: pipeline as usize })
}

fn deadline(p: &mut Params<'_>) -> Result<Duration, Error> {
    Ok(Duration::from_micros(p.u64_in("deadline-us", 1, MAX_DEADLINE_US)?))
}

fn open_work(p: &mut Params<'_>, workers: usize, rate_per_s: f64) -> Result<Work, Error> {
    let work = match p.workload() {
        "rpc-fanout" => {
            let fanout = p.u64_in("fanout", 0, MAX_FANOUT)?;
            let service = Dist::from_params(p, "service", "service-us")?;
            Work::Fanout(Fanout { fanout, service }, load(p, workers, rate_per_s, false)?)
        }
        "skewed" => {
            let injection =
                p.choice("mode", &[("one-worker", Injection::OneWorker), ("stragglers", Injection::Remote)])?;
            let service = Dist::from_params(p, "service", "service-us")?;
            let mut straggler_p = p.f64_open("straggler-p", 0.0, 1.0)?;
            let straggler_factor = p.f64_in("straggler-factor", 1.0, MAX_STRAGGLER_FACTOR)?;
            if injection == Injection::OneWorker {
                straggler_p = 0.0;
            }
            Work::Skewed(
                Skewed { service, straggler_p, straggler_factor },
                injection,
                load(p, workers, rate_per_s, false)?,
            )
        }
        "timers" => {
            let downstream = Dist::from_params(p, "downstream", "downstream-us")?;
            Work::Timers(Timers { downstream, deadline: deadline(p)? }, load(p, workers, rate_per_s, false)?)
        }
        "timeouts" => {
            let service = Dist::from_params(p, "service", "service-us")?;
            let timeout = Duration::from_millis(p.u64_in("timeout-ms", 1, MAX_TIMEOUT_MS)?);
            Work::Timeouts(Timeouts { service, timeout }, load(p, workers, rate_per_s, false)?)
        }
        "tcp-rpc" => {
            let service = Dist::from_params(p, "service", "service-us")?;
            let mut load = load(p, workers, rate_per_s, true)?;
            let shape = client_shape(p, &mut load, CONNECTIONS_PER_CLIENT_THREAD)?;
            Work::Tcp(Handler::Rpc(TcpRpc { service }), load, shape)
        }
        "accept-storm" => {
            let service = Dist::from_params(p, "service", "service-us")?;
            let mut load = load(p, workers, rate_per_s, true)?;
            let shape = client_shape(p, &mut load, CONNECTIONS_PER_STORM_THREAD)?;
            Work::AcceptStorm(TcpRpc { service }, load, shape)
        }
        "mixed" => {
            let fanout = p.u64_in("fanout", 0, MAX_FANOUT)?;
            let service = Dist::from_params(p, "service", "service-us")?;
            let downstream = Dist::from_params(p, "downstream", "downstream-us")?;
            let m = Mixed { fanout, service, downstream, deadline: deadline(p)? };
            let mut load = load(p, workers, rate_per_s, true)?;
            let shape = client_shape(p, &mut load, CONNECTIONS_PER_CLIENT_THREAD)?;
            Work::Tcp(Handler::Mixed(m), load, shape)
        }
        "http" => {
            let fanout = p.u64_in("fanout", 0, MAX_FANOUT)?;
            let service = Dist::from_params(p, "service", "service-us")?;
            let proto = p.choice("proto", &[("h1", Proto::H1), ("h2", Proto::H2)])?;
            let body_bytes = p.u64_in("response-bytes", 0, MAX_BODY_BYTES)? as usize;
            let mut load = load(p, workers, rate_per_s, true)?;
            let shape = client_shape(p, &mut load, CONNECTIONS_PER_CLIENT_THREAD)?;
            if proto == Proto::H2 && shape.pipeline > 1 {
                let allowed = "1 with proto=h2 (HTTP/2 multiplexes: its client keeps many streams in flight on each \
                               connection already)";
                return Err(p.bad("pipeline", &shape.pipeline.to_string(), allowed));
            }
            Work::Http(Http { fanout, service, proto, body_bytes }, load, shape)
        }
        other => unreachable!("open workload `{other}` has no plan"),
    };
    Ok(work)
}
