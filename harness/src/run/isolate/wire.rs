//! The two messages between the harness and a run's child process, and
//! their checks.
//!
//! - **Spec** (parent → child, on the child's stdin): JSON with a `version`,
//!   the runtime, the workload and the run options.
//! - **Result** (child → parent, the child's whole stdout): one frame,
//!   `wsbench-run-result <version> <length>\n`, then exactly `length` bytes
//!   of JSON, then `\n`. The JSON is `{"ok": output}` or `{"error": text}`;
//!   histograms travel as base64 of HdrHistogram's V2 encoding, in full.
//!
//! Decoding is strict: a wrong magic word, version or length, unknown or
//! missing fields, a histogram that does not decode, a counter name this
//! harness does not know, or any byte outside the frame is an error naming
//! what was wrong, so a child that wrote garbage becomes a failed row.

use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};
use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use wsbench_schedulers::knobs::KnobSet;
use wsbench_workloads::api::{CpuUsage, RunOptions, RunOutput, RuntimeSpec, Sched, Throttle, WorkloadSpec};

use crate::data::record::counter_names;

/// Version of both messages; a child of another version is refused.
pub const WIRE_VERSION: u32 = 1;
/// The first word of a result frame.
pub const RESULT_MAGIC: &str = "wsbench-run-result";
/// The longest result frame accepted (a few full histograms are ~100 KiB).
pub const MAX_RESULT_BYTES: usize = 64 << 20;

/// What the child runs.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecMsg {
    version: u32,
    sched: String,
    workers: usize,
    knobs: Vec<(String, String)>,
    worker_cores: Vec<usize>,
    loadgen_cores: Vec<usize>,
    /// `--topology` as `GROUPSxSIZE`.
    topology: Option<String>,
    workload: String,
    params: Vec<(String, String)>,
    rate_per_s: Option<f64>,
    duration_ns: u64,
    warmup_ns: u64,
    seed: u64,
}

/// One run to perform, decoded.
#[derive(Debug, Clone)]
pub struct ChildSpec {
    /// The runtime under test.
    pub runtime: RuntimeSpec,
    /// The workload.
    pub workload: WorkloadSpec,
    /// Duration, warm-up and seed.
    pub options: RunOptions,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Encodes a run's spec for the child's stdin.
pub fn encode_spec(runtime: &RuntimeSpec, workload: &WorkloadSpec, options: &RunOptions) -> Result<Vec<u8>> {
    let msg = SpecMsg {
        version: WIRE_VERSION,
        sched: runtime.sched().name().to_string(),
        workers: runtime.workers(),
        knobs: runtime.knobs().pairs().map(|(n, v)| (n.to_string(), v.to_string())).collect(),
        worker_cores: runtime.worker_cores.clone(),
        loadgen_cores: runtime.loadgen_cores.clone(),
        topology: runtime.topology.map(|t| t.to_string()),
        workload: workload.name.clone(),
        params: workload.params.clone(),
        rate_per_s: workload.rate_per_s,
        duration_ns: nanos(options.duration),
        warmup_ns: nanos(options.warmup),
        seed: options.seed,
    };
    serde_json::to_vec(&msg).context("cannot encode the run spec")
}

/// Decodes the spec a parent sent.
pub fn decode_spec(bytes: &[u8]) -> Result<ChildSpec> {
    let msg: SpecMsg = serde_json::from_slice(bytes).context("the run spec on stdin is not valid")?;
    ensure!(msg.version == WIRE_VERSION, "run spec version {} differs from this binary's {WIRE_VERSION}", msg.version);
    // The parent resolved and checked all of this; the text crosses a
    // process boundary, so the child reads it back through the same
    // constructors (a different binary would be refused here).
    let knobs = KnobSet::parse(&msg.knobs).context("the run spec's knobs")?;
    let sched = Sched::parse(&msg.sched).context("the run spec's scheduler")?;
    let mut runtime = RuntimeSpec::new(sched, msg.workers, knobs).context("the run spec's runtime")?;
    runtime.worker_cores = msg.worker_cores;
    runtime.loadgen_cores = msg.loadgen_cores;
    runtime.topology = msg.topology.as_deref().map(str::parse).transpose().context("the run spec's topology")?;
    Ok(ChildSpec {
        runtime,
        workload: WorkloadSpec { name: msg.workload, params: msg.params, rate_per_s: msg.rate_per_s },
        options: RunOptions {
            duration: Duration::from_nanos(msg.duration_ns),
            warmup: Duration::from_nanos(msg.warmup_ns),
            seed: msg.seed,
        },
    })
}

/// [`RunOutput`] as it travels.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputMsg {
    ops: u64,
    failed: Option<u64>,
    sent: Option<u64>,
    elapsed_ns: u64,
    offered_per_s: Option<f64>,
    latency_ns: String,
    uncorrected_ns: Option<String>,
    queue_wait_ns: Option<String>,
    service_ns: Option<String>,
    /// Absent when not measured (and from children before schema 9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sched_delay_ns: Option<String>,
    counters: Vec<(String, Option<u64>)>,
    schedule_slipped: bool,
    notes: Vec<String>,
    params: Vec<(String, String)>,
    extras: Vec<(String, f64)>,
    cpu: Option<CpuMsg>,
}

/// [`CpuUsage`] as it travels.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CpuMsg {
    cpu_ns: u64,
    window_ns: u64,
    ctx_switches_voluntary: u64,
    ctx_switches_involuntary: u64,
    /// `[nr_periods, nr_throttled, throttled_ns]` of the run's cgroup;
    /// absent from a child outside any (and from older children).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    throttle: Option<[u64; 3]>,
}

/// The child's answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "lowercase")]
enum ReplyMsg {
    Ok(Box<OutputMsg>),
    Error(String),
}

fn encode_histogram(h: &Histogram<u64>) -> Result<String> {
    let mut bytes = Vec::new();
    V2Serializer::new().serialize(h, &mut bytes).map_err(|e| anyhow::anyhow!("cannot encode a histogram: {e:?}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn decode_histogram(name: &str, text: &str) -> Result<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .with_context(|| format!("histogram `{name}` is not base64"))?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| anyhow::anyhow!("histogram `{name}` does not decode: {e:?}"))
}

fn encode_output(out: &RunOutput) -> Result<OutputMsg> {
    let opt = |h: &Option<Histogram<u64>>| h.as_ref().map(encode_histogram).transpose();
    Ok(OutputMsg {
        ops: out.ops,
        failed: out.failed,
        sent: out.sent,
        elapsed_ns: nanos(out.elapsed),
        offered_per_s: out.offered_per_s,
        latency_ns: encode_histogram(&out.latency_ns)?,
        uncorrected_ns: opt(&out.uncorrected_ns)?,
        queue_wait_ns: opt(&out.queue_wait_ns)?,
        service_ns: opt(&out.service_ns)?,
        sched_delay_ns: opt(&out.sched_delay_ns)?,
        counters: out.counters.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        schedule_slipped: out.schedule_slipped,
        notes: out.notes.clone(),
        params: out.params.clone(),
        extras: out.extras.clone(),
        cpu: out.cpu.map(|c| CpuMsg {
            cpu_ns: c.cpu_ns,
            window_ns: nanos(c.window),
            ctx_switches_voluntary: c.ctx_switches_voluntary,
            ctx_switches_involuntary: c.ctx_switches_involuntary,
            throttle: c.throttle.map(|t| [t.nr_periods, t.nr_throttled, t.throttled_ns]),
        }),
    })
}

fn decode_output(msg: OutputMsg) -> Result<RunOutput> {
    let known = counter_names();
    let counters = msg
        .counters
        .into_iter()
        .map(|(name, v)| match known.iter().find(|k| **k == name) {
            Some(k) => Ok((*k, v)),
            None => bail!("unknown counter `{name}`"),
        })
        .collect::<Result<Vec<_>>>()?;
    let opt = |name: &str, h: Option<String>| h.map(|t| decode_histogram(name, &t)).transpose();
    Ok(RunOutput {
        ops: msg.ops,
        failed: msg.failed,
        sent: msg.sent,
        elapsed: Duration::from_nanos(msg.elapsed_ns),
        offered_per_s: msg.offered_per_s,
        latency_ns: decode_histogram("latency_ns", &msg.latency_ns)?,
        uncorrected_ns: opt("uncorrected_ns", msg.uncorrected_ns)?,
        queue_wait_ns: opt("queue_wait_ns", msg.queue_wait_ns)?,
        service_ns: opt("service_ns", msg.service_ns)?,
        sched_delay_ns: opt("sched_delay_ns", msg.sched_delay_ns)?,
        counters,
        schedule_slipped: msg.schedule_slipped,
        notes: msg.notes,
        params: msg.params,
        extras: msg.extras,
        cpu: msg.cpu.map(|c| CpuUsage {
            cpu_ns: c.cpu_ns,
            window: Duration::from_nanos(c.window_ns),
            ctx_switches_voluntary: c.ctx_switches_voluntary,
            ctx_switches_involuntary: c.ctx_switches_involuntary,
            throttle: c.throttle.map(|[nr_periods, nr_throttled, throttled_ns]| Throttle {
                nr_periods,
                nr_throttled,
                throttled_ns,
            }),
        }),
    })
}

/// Checks a decoded result's fields against each other: a frame whose
/// numbers cannot all be true is garbage, not a measurement.
///
/// - the measured window is longer than zero;
/// - open loop (`sent` is there): every finished request, ok or failed,
///   has exactly one latency sample (the load generator records each), and
///   no more requests finished than were sent;
/// - `failed` and `sent` come together (both open loop, or neither);
/// - an offered rate is a finite number, 0 or more.
///
/// (Throughput is not in the frame: the parent derives it from `ops` and
/// the window, so it is consistent with them by construction.)
fn check_consistent(out: &RunOutput) -> Result<()> {
    ensure!(!out.elapsed.is_zero(), "elapsed_ns is 0: a run measures over a window longer than zero");
    if let Some(rate) = out.offered_per_s {
        ensure!(rate.is_finite() && rate >= 0.0, "offered_per_s is {rate}, not a rate (a finite number, 0 or more)");
    }
    match (out.sent, out.failed) {
        (Some(sent), Some(failed)) => {
            let finished = out.ops.checked_add(failed).context("ops + failed overflows")?;
            ensure!(
                out.latency_ns.len() == finished,
                "{} latency samples for ops={} + failed={failed}: an open-loop run records one sample per finished \
                 request",
                out.latency_ns.len(),
                out.ops
            );
            ensure!(finished <= sent, "ops={} + failed={failed} finished, more than the {sent} sent", out.ops);
        }
        (None, None) => {}
        (sent, failed) => {
            bail!("sent={sent:?} with failed={failed:?}: an open-loop run reports both, a closed-loop neither")
        }
    }
    Ok(())
}

fn frame(reply: &ReplyMsg) -> Result<Vec<u8>> {
    let body = serde_json::to_vec(reply).context("cannot encode the run result")?;
    let mut out = format!("{RESULT_MAGIC} {WIRE_VERSION} {}\n", body.len()).into_bytes();
    out.extend_from_slice(&body);
    out.push(b'\n');
    Ok(out)
}

/// The frame of a finished run.
pub fn encode_ok(out: &RunOutput) -> Result<Vec<u8>> {
    frame(&ReplyMsg::Ok(Box::new(encode_output(out)?)))
}

/// The frame of a run that returned an error or panicked.
pub fn encode_error(message: &str) -> Vec<u8> {
    frame(&ReplyMsg::Error(message.to_string())).expect("a string always encodes")
}

/// A child's stdout, decoded: `Ok(Ok(output))` for a finished run,
/// `Ok(Err(message))` for a run the child reported as failed, `Err` when
/// the bytes are not one valid frame.
pub fn decode_result(bytes: &[u8]) -> Result<std::result::Result<RunOutput, String>> {
    let newline = bytes.iter().position(|&b| b == b'\n').context("no header line")?;
    let header = std::str::from_utf8(&bytes[..newline]).context("the header line is not UTF-8")?;
    let shown: String = header.chars().take(60).collect();
    let fields: Vec<&str> = header.split(' ').collect();
    let [magic, version, length] = fields[..] else { bail!("header `{shown}` is not `{RESULT_MAGIC} VERSION LENGTH`") };
    ensure!(magic == RESULT_MAGIC, "header `{shown}` does not start with `{RESULT_MAGIC}`");
    let version: u32 = version.parse().with_context(|| format!("version `{version}` is not a number"))?;
    ensure!(version == WIRE_VERSION, "result version {version} differs from this harness's {WIRE_VERSION}");
    let length: usize = length.parse().with_context(|| format!("length `{length}` is not a number"))?;
    let body = &bytes[newline + 1..];
    ensure!(
        body.len() == length + 1 && body[length] == b'\n',
        "the frame announces {length} bytes but {} follow the header",
        body.len().saturating_sub(1)
    );
    let reply: ReplyMsg = serde_json::from_slice(&body[..length]).context("the result is not valid")?;
    match reply {
        ReplyMsg::Ok(msg) => {
            let out = decode_output(*msg).context("the result is not valid")?;
            check_consistent(&out).context("the result does not add up")?;
            Ok(Ok(out))
        }
        ReplyMsg::Error(e) => Ok(Err(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output() -> RunOutput {
        let mut latency = Histogram::<u64>::new(3).unwrap();
        for v in [1_000u64, 2_000, 3_000, 1_000_000] {
            latency.record(v).unwrap();
        }
        let mut counters: Vec<(&'static str, Option<u64>)> = counter_names().into_iter().map(|n| (n, None)).collect();
        counters[0].1 = Some(7);
        let mut delays = Histogram::<u64>::new(3).unwrap();
        delays.record_n(88, 40).unwrap();
        RunOutput {
            ops: 3,
            failed: Some(1),
            sent: Some(5),
            elapsed: Duration::from_millis(500),
            offered_per_s: Some(10.0),
            latency_ns: latency.clone(),
            uncorrected_ns: Some(latency),
            queue_wait_ns: None,
            service_ns: None,
            sched_delay_ns: Some(delays),
            counters,
            schedule_slipped: true,
            notes: vec!["a note".into()],
            params: vec![("rate".into(), "10".into())],
            extras: vec![("sent_per_s".into(), 10.0)],
            cpu: Some(CpuUsage {
                cpu_ns: 123_456_789,
                window: Duration::from_millis(501),
                ctx_switches_voluntary: 17,
                ctx_switches_involuntary: 3,
                throttle: Some(Throttle { nr_periods: 9, nr_throttled: 4, throttled_ns: 12_345 }),
            }),
        }
    }

    #[test]
    fn a_result_round_trips_with_its_full_histograms() {
        let out = output();
        let back = decode_result(&encode_ok(&out).unwrap()).unwrap().unwrap();
        assert_eq!(back.latency_ns, out.latency_ns);
        assert_eq!(back.latency_ns.len(), 4);
        assert_eq!(back.latency_ns.max(), out.latency_ns.max());
        assert_eq!(back.uncorrected_ns, out.uncorrected_ns);
        assert!(back.queue_wait_ns.is_none());
        assert_eq!(back.sched_delay_ns, out.sched_delay_ns);
        assert_eq!(back.counters, out.counters);
        assert_eq!((back.ops, back.failed, back.sent, back.elapsed), (3, Some(1), Some(5), Duration::from_millis(500)));
        assert_eq!((back.notes, back.params, back.extras), (out.notes, out.params, out.extras));
        assert!(back.schedule_slipped);
        assert_eq!(back.cpu, out.cpu);
    }

    #[test]
    fn a_reported_error_is_not_garbage() {
        assert_eq!(decode_result(&encode_error("boom")).unwrap().unwrap_err(), "boom");
    }

    /// `frame` with `from` replaced by `to` in its body and the length fixed.
    fn reframe(frame: &str, from: &str, to: &str) -> Vec<u8> {
        let body = frame.split_once('\n').unwrap().1.trim_end_matches('\n');
        assert!(body.contains(from), "{from} not in the frame");
        let body = body.replacen(from, to, 1);
        format!("{RESULT_MAGIC} {WIRE_VERSION} {}\n{body}\n", body.len()).into_bytes()
    }

    #[test]
    fn garbage_is_refused_with_what_was_wrong() {
        let good = String::from_utf8(encode_ok(&output()).unwrap()).unwrap();
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"hello\n".to_vec(), "is not `wsbench-run-result"),
            (Vec::new(), "no header line"),
            (good.replacen(RESULT_MAGIC, "other-magic-word!", 1).into_bytes(), "does not start with"),
            (good.replacen(&format!("{RESULT_MAGIC} 1 "), &format!("{RESULT_MAGIC} 9 "), 1).into_bytes(), "version 9"),
            (format!("noise\n{good}").into_bytes(), "is not `wsbench-run-result"),
            (format!("{good}trailing").into_bytes(), "follow the header"),
            (good.as_bytes()[..good.len() - 10].to_vec(), "follow the header"),
            (good.replacen("\"polls\"", "\"pulls\"", 1).into_bytes(), "unknown counter `pulls`"),
            (reframe(&good, "\"ops\":3", "\"ops\":100000"), "4 latency samples for ops=100000 + failed=1"),
            (reframe(&good, "\"elapsed_ns\":500000000", "\"elapsed_ns\":0"), "elapsed_ns is 0"),
            (reframe(&good, "\"sent\":5", "\"sent\":3"), "more than the 3 sent"),
            (reframe(&good, "\"sent\":5", "\"sent\":null"), "an open-loop run reports both"),
        ];
        for (bytes, expected) in cases {
            let err = format!("{:#}", decode_result(&bytes).unwrap_err());
            assert!(err.contains(expected), "{expected:?} not in {err:?}");
        }
    }

    #[test]
    fn a_spec_round_trips() {
        let mut rt = RuntimeSpec::new(
            Sched::parse("steal-half").unwrap(),
            3,
            KnobSet::parse(&[("lifo", "off"), ("steal", "one")]).unwrap(),
        )
        .unwrap();
        rt.worker_cores = vec![0, 1];
        rt.loadgen_cores = vec![2];
        rt.topology = Some("3x1".parse().unwrap());
        let w = WorkloadSpec {
            name: "rpc-fanout".into(),
            params: vec![("fanout".into(), "2".into())],
            rate_per_s: Some(5e3),
        };
        let o = RunOptions { duration: Duration::from_millis(250), warmup: Duration::from_millis(50), seed: 43 };
        let back = decode_spec(&encode_spec(&rt, &w, &o).unwrap()).unwrap();
        assert_eq!((back.runtime.sched(), back.runtime.workers()), (rt.sched(), 3));
        assert_eq!(
            (back.runtime.knobs(), &back.runtime.worker_cores, &back.runtime.loadgen_cores),
            (rt.knobs(), &rt.worker_cores, &rt.loadgen_cores)
        );
        assert_eq!(back.runtime.topology, rt.topology);
        assert_eq!(
            (back.workload.name, back.workload.params, back.workload.rate_per_s),
            (w.name, w.params, w.rate_per_s)
        );
        assert_eq!((back.options.duration, back.options.warmup, back.options.seed), (o.duration, o.warmup, o.seed));
        assert!(decode_spec(br#"{"version":2}"#).is_err());
    }
}
