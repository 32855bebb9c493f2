//! The workloads' names, each with one line of meaning and every
//! parameter with its default (the schedulers' names are in `sched.rs`).

use crate::api::{ParamInfo, WorkloadInfo};
use crate::dist::{P_BIMODAL_P, P_BIMODAL_RATIO, P_PARETO_SHAPE};

const fn p(name: &'static str, default: &'static str, about: &'static str) -> ParamInfo {
    ParamInfo { name, default, about }
}

// Parameters shared by open-loop workloads.
const ARRIVAL: ParamInfo = p("arrival", "poisson", "inter-arrival times: poisson|uniform");
const LOADGEN: ParamInfo =
    p("loadgen-threads", "auto", "load-generator threads (never runtime workers): auto = 1 per 16 workers, or 1..=256");
const CONNECTIONS: ParamInfo = p(
    "connections",
    "64",
    "client TCP connections, up to `pipeline` requests in flight each: 1..=100000 (a file descriptor each)",
);
const CLIENT_THREADS: ParamInfo = p(
    "client-threads",
    "auto",
    "client threads, each driving connections/threads connections with mio, each pacing its own arrivals: auto = 1 per 1024 connections, at most 16; or 1..=256",
);
const PIPELINE_DEPTH: ParamInfo = p(
    "pipeline",
    "1",
    "requests in flight per client connection, those released together written at once: 1..=1024 (1 = one at a time; h2 takes 1, it multiplexes)",
);
const STALL_MS: ParamInfo =
    p("stall-ms", "0", "fault injection: block one worker once for this long at mid-run: 0..=60000 (0 = off)");
const PANIC_EVERY: ParamInfo = p(
    "panic-every",
    "0",
    "fault injection: every Nth request's handler panics (a failed request): 0 = never, else 1..=1e12",
);
const SIDE_THREADS: ParamInfo = p(
    "side-threads",
    "0",
    "CPU-bound side pool: plain threads beside the runtime (same process and cgroup) that burn CPU in bursts, as a rayon-style pool does: 0..=256 (0 = off)",
);
const SIDE_DUTY: ParamInfo =
    p("side-duty", "0.5", "side pool: fraction of each 10 ms period a side thread works (the rest it sleeps): 0..=1");
const SERVICE: ParamInfo =
    p("service", "exp", "CPU service-time distribution (calibrated spinning): fixed|exp|bimodal|pareto");
const SERVICE_FIXED: ParamInfo =
    p("service", "fixed", "CPU service-time distribution (calibrated spinning): fixed|exp|bimodal|pareto");
const DOWNSTREAM: ParamInfo =
    p("downstream", "exp", "simulated downstream latency (a timer sleep): fixed|exp|bimodal|pareto");
const DOWNSTREAM_US: ParamInfo = p("downstream-us", "1000", "mean downstream latency in us: 0..=1e6");
const FANOUT: ParamInfo =
    p("fanout", "8", "subtasks per request: 0..=1024 (0 = no-op handler, for the load generator's ceiling)");

/// Parameters of `rpc-fanout`.
const RPC_FANOUT: &[ParamInfo] = &[
    FANOUT,
    SERVICE,
    p("service-us", "10", "mean CPU time per subtask in us: 0..=1e6 (one draw is at most 1 s)"),
    P_BIMODAL_P,
    P_BIMODAL_RATIO,
    P_PARETO_SHAPE,
    ARRIVAL,
    LOADGEN,
    STALL_MS,
    PANIC_EVERY,
    SIDE_THREADS,
    SIDE_DUTY,
];

const SKEWED: &[ParamInfo] = &[
    p("mode", "one-worker", "one-worker: every request enters through one dispatcher task (one worker); stragglers: remote spawns, rare long requests"),
    SERVICE_FIXED,
    p("service-us", "20", "mean CPU time per request in us: 0..=1e6"),
    p("straggler-p", "0.01", "stragglers mode: fraction of requests that are stragglers, a number in (0, 1)"),
    p("straggler-factor", "100", "stragglers mode: a straggler's CPU time = factor x its draw, 1..=10000"),
    P_BIMODAL_P,
    P_BIMODAL_RATIO,
    P_PARETO_SHAPE,
    ARRIVAL,
    LOADGEN,
    STALL_MS,
    PANIC_EVERY,
    SIDE_THREADS,
    SIDE_DUTY,
];

const TIMERS: &[ParamInfo] = &[
    DOWNSTREAM,
    DOWNSTREAM_US,
    p("deadline-us", "10000", "deadline per request in us (a miss is a failed request): 1..=6e7"),
    P_BIMODAL_P,
    P_BIMODAL_RATIO,
    P_PARETO_SHAPE,
    ARRIVAL,
    LOADGEN,
    STALL_MS,
    PANIC_EVERY,
    SIDE_THREADS,
    SIDE_DUTY,
];

const TIMEOUTS: &[ParamInfo] = &[
    SERVICE,
    p("service-us", "10", "mean CPU time of the backend call in us: 0..=1e6"),
    p("timeout-ms", "100", "timeout around each call in ms (a fired timeout is a failed request): 1..=60000"),
    P_BIMODAL_P,
    P_BIMODAL_RATIO,
    P_PARETO_SHAPE,
    ARRIVAL,
    LOADGEN,
    STALL_MS,
    PANIC_EVERY,
    SIDE_THREADS,
    SIDE_DUTY,
];

const TCP_RPC: &[ParamInfo] = &[
    SERVICE_FIXED,
    p("service-us", "10", "mean CPU time per request in us: 0..=1e6"),
    P_BIMODAL_P,
    P_BIMODAL_RATIO,
    P_PARETO_SHAPE,
    ARRIVAL,
    CONNECTIONS,
    CLIENT_THREADS,
    PIPELINE_DEPTH,
    STALL_MS,
    PANIC_EVERY,
];

const MIXED: &[ParamInfo] = &[
    p("fanout", "4", "subtasks per request: 0..=1024"),
    SERVICE,
    p("service-us", "10", "mean CPU time per subtask in us: 0..=1e6"),
    DOWNSTREAM,
    DOWNSTREAM_US,
    p("deadline-us", "20000", "deadline on the fan-in in us (a miss is a failed request): 1..=6e7"),
    P_BIMODAL_P,
    P_BIMODAL_RATIO,
    P_PARETO_SHAPE,
    ARRIVAL,
    CONNECTIONS,
    CLIENT_THREADS,
    PIPELINE_DEPTH,
    STALL_MS,
    PANIC_EVERY,
];

const HTTP: &[ParamInfo] = &[
    p("fanout", "0", "subtasks per request: 0 = the handler spins one service draw itself, else 1..=1024 subtasks each spinning a draw, fanned in"),
    SERVICE_FIXED,
    p("service-us", "10", "mean CPU time per request (fanout 0) or per subtask in us: 0..=1e6"),
    p("proto", "h1", "HTTP version the server and client speak: h1 (HTTP/1.1 keep-alive, `pipeline` requests in flight per connection) or h2 (HTTP/2, many streams per connection)"),
    p("response-bytes", "64", "response body length in bytes (checked by the client): 0..=16777216"),
    P_BIMODAL_P,
    P_BIMODAL_RATIO,
    P_PARETO_SHAPE,
    ARRIVAL,
    CONNECTIONS,
    CLIENT_THREADS,
    PIPELINE_DEPTH,
    STALL_MS,
    PANIC_EVERY,
];

const SPAWNS_10K: &[ParamInfo] = &[p("spawns", "10000", "tasks spawned per iteration: 1..=1e7 (tokio: 10000)")];
const BUSY_STALL: ParamInfo = p("stall-us", "10", "CPU time per background step in us: 0..=1e6 (tokio: 10)");
const BUSY1: &[ParamInfo] = &[
    p("spawns", "10000", "tasks spawned per iteration: 1..=1e7 (tokio: 10000)"),
    p("busy-tasks", "auto", "background yield-and-burn tasks: auto = 2 x workers (tokio: 2 x 4), or 0..=100000"),
    BUSY_STALL,
];
const BUSY2: &[ParamInfo] = &[
    p("spawns", "1000", "tasks spawned per iteration: 1..=1e7 (tokio: 1000)"),
    p("busy-tasks", "auto", "background burn-and-respawn chains: auto = workers (tokio: 4), or 0..=100000"),
    BUSY_STALL,
];
const YIELD_MANY: &[ParamInfo] = &[
    p("tasks", "200", "tasks per iteration: 1..=1e6 (tokio: 200)"),
    p("yields", "1000", "yields per task: 1..=1e7 (tokio: 1000)"),
];

const CHANNEL_PING_PONG: &[ParamInfo] = &[
    p("pairs", "1", "pairs bouncing messages at once: 1..=256 (1: most workers idle)"),
    p("rounds", "1000", "round trips per pair per iteration, 2 messages each: 1..=1e7"),
];
const PIPELINE: &[ParamInfo] = &[
    p("stages", "4", "tasks in the ring, each joined to the next by a bounded channel: 2..=1024"),
    p("capacity", "1", "slots of each channel: 1..=65536"),
    p("in-flight", "4", "messages going round at once: 1..=(capacity + 1) x stages - 1 (more can deadlock the ring)"),
    p("messages", "1000", "messages that go all the way round per iteration: 1..=1e7"),
];

const LIFO_STARVATION: &[ParamInfo] = &[
    p("bystanders", "4", "tasks waiting in the run queue behind the pair: 1..=4096"),
    p("yields", "100", "yields per bystander per iteration, each wait recorded: 1..=1e6"),
];
const IDLE_BURST: &[ParamInfo] = &[
    p("jobs", "16", "jobs per burst: 1..=100000"),
    p("job-us", "12", "CPU time per job in us (calibrated spinning): 0..=1e6"),
    p("idle-us", "3000", "idle time after each burst in us (a timer sleep): 0..=1e7"),
    p("bursts", "10", "bursts per iteration: 1..=1e6"),
];
const TASK_CHURN: &[ParamInfo] = &[
    p("spawners", "auto", "churning tasks: auto = workers, or 1..=1024"),
    p("tasks", "1000", "empty tasks each churner spawns and completes per iteration: 1..=1e7"),
    p("batch", "16", "tasks a churner spawns before awaiting them: 1..=65536"),
];
/// `tcp-rpc`'s parameters, the storm's own first.
const ACCEPT_STORM: &[ParamInfo] = &[
    p("connections", "256", "client TCP connections, arriving at once before the load, up to `pipeline` requests in flight each: 1..=100000 (a file descriptor each)"),
    p("client-threads", "auto", "client threads, each connecting its connections 64 at once: auto = 1 per 64 connections (all at once up to 1024), at most 16; or 1..=256"),
    PIPELINE_DEPTH,
    ARRIVAL,
    SERVICE_FIXED,
    p("service-us", "10", "mean CPU time per request in us: 0..=1e6"),
    P_BIMODAL_P,
    P_BIMODAL_RATIO,
    P_PARETO_SHAPE,
    STALL_MS,
    PANIC_EVERY,
];
const BLOCKING_STORM: &[ParamInfo] =
    &[p("spawners", "8", "threads calling spawn_blocking (never runtime workers): 1..=1024")];
const TIMER_CHURN: &[ParamInfo] = &[
    p(
        "tasks",
        "auto",
        "tasks in the ring, each arming timers and cancelling the previous task's: auto = 2 x workers, or 1..=256",
    ),
    p("timers", "100", "timers each task arms (and cancels) per iteration: 1..=1e6"),
    p("timeout-ms", "1000", "length of each timer in ms (almost none fires): 1..=3600000"),
];

/// The parameters of a servable workload that only its client reads:
/// `serve` has no client, so they change nothing there.
pub(crate) const CLIENT_ONLY_PARAMS: &[ParamInfo] =
    &[ARRIVAL, CONNECTIONS, CLIENT_THREADS, PIPELINE_DEPTH, STALL_MS, PANIC_EVERY];

const fn bench(name: &'static str, about: &'static str, params: &'static [ParamInfo]) -> WorkloadInfo {
    WorkloadInfo {
        name,
        about,
        open_loop: false,
        in_default_suite: true,
        params,
        default_rate_per_worker: None,
        servable: false,
        test_only: false,
        aborts_process: false,
        latency_sample: None,
        zoo: false,
    }
}

const fn open(name: &'static str, about: &'static str, params: &'static [ParamInfo], rate: f64) -> WorkloadInfo {
    WorkloadInfo { open_loop: true, default_rate_per_worker: Some(rate), ..bench(name, about, params) }
}

/// An open-loop workload with a separate server and client (`serve`, `load`).
const fn served(name: &'static str, about: &'static str, params: &'static [ParamInfo], rate: f64) -> WorkloadInfo {
    WorkloadInfo { servable: true, ..open(name, about, params, rate) }
}

/// Outside the default suite: named explicitly to run.
const fn not_default(info: WorkloadInfo) -> WorkloadInfo {
    WorkloadInfo { in_default_suite: false, ..info }
}

/// A closed workload whose latency sample is its own, not one iteration.
const fn sampled(latency_sample: &'static str, info: WorkloadInfo) -> WorkloadInfo {
    WorkloadInfo { latency_sample: Some(latency_sample), ..info }
}

/// In the pathology zoo (`--workload zoo`), outside the default suite.
const fn zoo(info: WorkloadInfo) -> WorkloadInfo {
    WorkloadInfo { zoo: true, ..not_default(info) }
}

/// A workload that tests the harness (never in the default suite or `all`).
const fn test_only(name: &'static str, about: &'static str) -> WorkloadInfo {
    WorkloadInfo { test_only: true, ..not_default(bench(name, about, &[])) }
}

/// Every workload, tokio's benches first.
pub static WORKLOADS: &[WorkloadInfo] = &[
    bench("spawn-many-local", "tokio bench: spawn N empty tasks from block_on, wait for the last", SPAWNS_10K),
    bench("spawn-many-remote-idle", "tokio bench: spawn N empty tasks from outside an idle runtime, join all", SPAWNS_10K),
    bench("spawn-many-remote-busy1", "tokio bench: remote spawns while background tasks yield and burn CPU", BUSY1),
    bench("spawn-many-remote-busy2", "tokio bench: remote spawns while background tasks burn CPU and respawn", BUSY2),
    bench("yield-many", "tokio bench: 200 tasks x 1000 yields each", YIELD_MANY),
    bench("ping-pong", "tokio bench: N pings, each a spawned pair exchanging two oneshot messages", &[p("pings", "1000", "pings per iteration: 1..=1e6 (tokio: 1000)")]),
    bench("chained-spawn", "tokio bench: each task spawns the next, N deep", &[p("depth", "1000", "chain length: 1..=1e7 (tokio: 1000)")]),
    open("rpc-fanout", "open loop: each request fans out to k CPU subtasks and fans in (default rate 2000/s per worker)", RPC_FANOUT, 2_000.0),
    open("skewed", "open loop: all requests enter at one worker, or rare 100x stragglers (default rate 1000/s per worker)", SKEWED, 1_000.0),
    open("timers", "open loop: each request sleeps a downstream latency under a deadline; timer lateness (default 2000/s per worker)", TIMERS, 2_000.0),
    open("timeouts", "open loop: each request awaits a backend subtask under a timeout that almost never fires: arm + cancel per request (default 2000/s per worker)", TIMEOUTS, 2_000.0),
    served("tcp-rpc", "open loop over loopback TCP: mio client, server on the runtime (default 1000/s per worker)", TCP_RPC, 1_000.0),
    served("mixed", "open loop over TCP: handlers fan out to CPU subtasks that await timers, with a deadline (default 500/s per worker)", MIXED, 500.0),
    not_default(served("http", "open loop over loopback HTTP/1.1: hyper server on the runtime, mio client (default 1000/s per worker); not in the default suite", HTTP, 1_000.0)),
    not_default(sampled("time per message, send to receive", bench("channel-ping-pong", "message passing: P pairs bounce a message over two bounded(1) channels (async-channel); time, CPU, wake-ups and cross-worker hand-offs per message; not in the default suite", CHANNEL_PING_PONG))),
    not_default(sampled("time per message round the ring", bench("pipeline", "message passing: S stages in a ring of bounded channels, M messages in flight; cross-worker hand-offs per message show its mode; not in the default suite", PIPELINE))),
    zoo(sampled("a bystander's wait per yield", bench("lifo-starvation", "zoo: a pair waking each other through the LIFO slot while bystanders wait in the queue (tokio: injected tasks waited 68 s until LIFO polls were capped); bystander wait p99/max, lifo_hits per poll", LIFO_STARVATION))),
    zoo(sampled("time per burst, first spawn to last job done", bench("idle-burst", "zoo: bursts of short jobs (~200 us serial) then ~3 ms idle, a control loop on which a stealing pool burned CPU searching; CPU per burst outside the jobs, wake-ups per burst", IDLE_BURST))),
    zoo(sampled("time per task (each batch timed as one)", bench("task-churn", "zoo: tasks on every worker spawn and complete empty tasks flat out (a 2026 engine bound by tokio's task-registry lock, 4.6x at 6 cores once removed); ns per task, task-registry lock contention", TASK_CHURN))),
    zoo(sampled("time to arm a timer", bench("timer-churn", "zoo: tasks arm timeouts that another task, usually on another worker, cancels (tokio's timer-lock contention, and its reverted sharding); timer lock contention, cross-thread cancels, CPU per timer", TIMER_CHURN))),
    zoo(sampled("time per spawn_blocking call (each batch of 64 timed as one)", bench("blocking-storm", "zoo: S plain threads outside the runtime call spawn_blocking on tiny closures flat out (tokio's one-mutex blocking queue: 16 threads 247.8 ms, 22.4 ms once sharded); ns per call against spawners, blocking-pool lock contention", BLOCKING_STORM))),
    zoo(open("accept-storm", "zoo: N connections arrive at once on loopback, then open-loop tcp-rpc load over them (accept imbalance in proxies, static SO_REUSEPORT sharding losing to stealing); per-worker share of requests as imbalance_index = max/mean (default 1000/s per worker)", ACCEPT_STORM, 1_000.0)),
    not_default(WorkloadInfo {
        latency_sample: Some("time per spawn call (each batch of 64 timed as one)"),
        ..bench("spawn-storm", "S plain threads outside the runtime spawn tiny tasks flat out; ns per task and inject-lock contention; not in the default suite", &[p("spawners", "8", "spawning threads (never runtime workers): 1..=1024")])
    }),
    test_only("hang", "test-only: never finishes (for testing the harness watchdog); not in the default suite"),
    WorkloadInfo {
        aborts_process: true,
        ..test_only("crash", "test-only: aborts the process from a worker (for testing the harness's child processes); not in the default suite")
    },
];
