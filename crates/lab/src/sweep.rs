//! `tcpwhy-lab sweep --seed S --count N -o DIR`: random scenarios per family from a seed,
//! run with the real kernel like the table's scenarios (`run::run_one`, captured at the
//! client, the server and the router), labelled from the kernel's records
//! (`labels::label_run`), and scored against `tcpwhy analyze --format json --min-cost 0`:
//! precision and recall per finding id, the cost error against the measured cost, and
//! every miss and false finding with the capture to open.
//!
//! Deterministic: case `i` of seed `S` draws its parameters from its own generator
//! (seeded from S and i), so the same seed gives the same parameters whatever `--count`
//! is; they are printed, saved in `DIR/sweep-params.json` and next to each capture
//! (`DIR/CASE/sweep-case.json`). `--score-only` labels and scores the runs already in DIR
//! again (after a detector change) without running anything.

use crate::cli::{RunArgs, VantageArg};
use crate::labels::{self, Label, Records, Want};
use crate::run::{self, Verdict};
use crate::scenario::{Scenario, Status, PORT};
use crate::topology::{self, TopologySpec, CLIENT_IP, NAMESPACE_SYSCTLS, SERVER_IP};
use clap::Args;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Seed of the parameters.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of scenarios (families in turn).
    #[arg(long, default_value_t = 10)]
    pub count: u32,
    /// Only these cases of the seed (comma-separated indices: `--case 64` is sS-064 of a
    /// sweep of any `--count` above 64), to run one capture again.
    #[arg(long = "case", value_delimiter = ',', value_name = "INDEX")]
    pub cases: Vec<u32>,
    /// Output directory: one sub-directory per scenario, sweep-params.json,
    /// sweep-results.json.
    #[arg(short, long, default_value = "sweep-out")]
    pub out: PathBuf,
    /// Only these families (comma-separated; see FAMILIES in sweep.rs).
    #[arg(long, value_delimiter = ',')]
    pub families: Vec<String>,
    /// Run nothing: label and score the runs already in the output directory again.
    #[arg(long)]
    pub score_only: bool,
    /// Only print the parameters (and write sweep-params.json); run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The tcpwhy binary to score (default: the one next to tcpwhy-lab).
    #[arg(long)]
    pub tcpwhy: Option<PathBuf>,
}

/// The families, each a parameterised form of some of the table's scenarios.
pub const FAMILIES: &[&str] = &[
    "bulk", // clean-bulk, deep-queue, small-sndbuf, fixed-rcvbuf, no-window-scaling, app-limited
    "http", // new-connection-per-request, keepalive-warm, idle-restart-*, idle-close, server-think-time
    "reorder", // reordering
    "loss", // fast-retransmit, tail-loss, rto, syn-drop
    "echo", // nagle-delayed-ack, nagle-nodelay
    "slow_reader", // slow-reader
    "rtt_step", // rtt-step
    "control", // clean-bulk (issue 12 class 10: no reordering of its own)
];

/// Snaplens drawn (0: whole packets).
const SNAPLENS: &[u32] = &[64, 96, 128, 0];
/// Congestion control of the data sender (all three are loaded on the lab kernel).
const CONGESTION: &[&str] = &["cubic", "reno", "bbr"];

/// SplitMix64: a small generator whose sequence is fixed by its definition, so a seed's
/// parameters do not change with a crate's version.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, index: u32) -> Rng {
        let mut r = Rng(seed ^ (u64::from(index) << 32 | 0x5eed));
        r.next();
        r
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    /// Uniform in lo..=hi.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
    /// Log-uniform in [lo, hi].
    fn log(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + self.unit() * (hi.ln() - lo.ln())).exp()
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[(self.next() % v.len() as u64) as usize]
    }
}

/// One generated scenario: every parameter it was run with.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Case {
    pub name: String,
    pub seed: u64,
    pub index: u32,
    pub family: String,
    /// The path's base RTT (the emulator's two one-way delays, whole ms each).
    pub rtt_ms: u32,
    pub snaplen: u32,
    pub congestion: String,
    pub tso_at_server: bool,
    pub gro_at_client: bool,
    pub rate_mbit: Option<u32>,
    pub queue_packets: Option<u32>,
    pub client_sysctls: Vec<(String, String)>,
    pub server_sysctls: Vec<(String, String)>,
    /// `emulator::PathConfig` and `workload::WorkloadConfig` as JSON.
    pub path: Value,
    pub workload: Value,
    /// What the family varied, in words.
    pub summary: String,
}

fn sock(congestion: &str) -> Value {
    json!({ "nodelay": false, "congestion": congestion })
}

fn workload(kind: Value, client: Value, server: Value, deadline_ms: u64) -> Value {
    json!({
        "server": format!("{SERVER_IP}:{PORT}"),
        "client_sock": client,
        "server_sock": server,
        "deadline_ms": deadline_ms,
        "kind": kind,
    })
}

/// Generates case `index` of `seed`; `families` restricts the families taken in turn.
pub fn generate(seed: u64, index: u32, families: &[&str]) -> Case {
    let mut r = Rng::new(seed, index);
    let family = families[index as usize % families.len()];
    let control = family == "control";
    // RTT 0.5–300 ms, log-uniform; the emulator's delays are whole ms each way.
    let rtt_drawn = r.log(0.5, 300.0);
    let rtt = rtt_drawn.round() as u32;
    let to_server = rtt / 2;
    let to_client = rtt - to_server;
    let mut path = json!({
        "client": CLIENT_IP,
        "server": SERVER_IP,
        "seed": r.next() % 1_000_000,
        "to_server": { "delay_ms": to_server },
        "to_client": { "delay_ms": to_client },
    });
    let snaplen = r.pick(SNAPLENS);
    let congestion = if control { "cubic" } else { r.pick(CONGESTION) };
    let tso_at_server = !control && r.chance(0.3);
    let gro_at_client = !control && r.chance(0.3);
    let mut case = Case {
        name: format!("s{seed}-{index:03}-{family}"),
        seed,
        index,
        family: family.to_string(),
        rtt_ms: rtt,
        snaplen,
        congestion: congestion.to_string(),
        tso_at_server,
        gro_at_client,
        rate_mbit: None,
        queue_packets: None,
        client_sysctls: Vec::new(),
        server_sysctls: Vec::new(),
        path: Value::Null,
        workload: Value::Null,
        summary: String::new(),
    };
    let client = sock("cubic");
    let server = sock(congestion);
    let mut words = vec![format!(
        "RTT {rtt} ms, snaplen {snaplen}, {congestion}{}{}",
        if tso_at_server { ", TSO at server" } else { "" },
        if gro_at_client { ", GRO at client" } else { "" }
    )];
    let kb = |b: f64| b.round() as u64 * 1024;
    let wl = match family {
        "bulk" => {
            let mut client = client;
            let mut server = server;
            let mut bytes = kb(r.log(256.0, 4096.0));
            let mut kind = json!({"type": "bulk", "bytes": bytes, "direction": "download", "write_size": 65536});
            if r.chance(0.35) {
                let rate = r.log(5.0, 100.0).round() as u32;
                let q = r.log(10.0, 1000.0).round() as u32;
                case.rate_mbit = Some(rate);
                case.queue_packets = Some(q);
                words.push(format!("{rate} Mbit/s, {q}-packet FIFO"));
            }
            if r.chance(0.2) {
                let b = kb(r.log(16.0, 128.0)) as u32;
                server["sndbuf"] = json!(b);
                kind["write_size"] = json!(1448);
                words.push(format!("server SO_SNDBUF {b}, 1448-byte writes"));
            }
            if r.chance(0.2) {
                let b = kb(r.log(16.0, 256.0)) as u32;
                client["rcvbuf"] = json!(b);
                words.push(format!("client SO_RCVBUF {b}"));
            }
            if r.chance(0.1) {
                case.client_sysctls
                    .push(("net.ipv4.tcp_window_scaling".into(), "0".into()));
                words.push("no window scaling at the client".into());
            }
            if r.chance(0.2) {
                let w = kb(r.log(4.0, 32.0));
                let n = r.range(20, 50);
                let every = r.range(10, 100);
                bytes = w * n;
                kind["bytes"] = json!(bytes);
                kind["write_size"] = json!(w);
                kind["write_interval_ms"] = json!(every);
                words.push(format!("{n} writes of {w} B every {every} ms"));
            }
            if r.chance(0.15) {
                kind["direction"] = json!("upload");
                // The client sends: it gets the sender's congestion control and send
                // buffer.
                client["congestion"] = json!(congestion);
                server["congestion"] = json!("cubic");
                if let Some(b) = server.as_object_mut().and_then(|o| o.remove("sndbuf")) {
                    client["sndbuf"] = b;
                }
                words.push("upload (the send buffer is the client's)".into());
            }
            words.push(format!("{bytes} B"));
            workload(kind, client, server, 40_000)
        }
        "control" => {
            words.push("4 MiB download, clean path".into());
            workload(
                json!({"type": "bulk", "bytes": 4 << 20, "direction": "download", "write_size": 65536}),
                client,
                server,
                40_000,
            )
        }
        "http" => {
            let requests = r.range(2, 5);
            let resp = r.log(1_000.0, 1_000_000.0).round() as u64;
            let new_conn = r.chance(0.3);
            let interval = if r.chance(0.5) { 0 } else { r.range(100, 2500) };
            let think = if r.chance(0.3) { r.range(5, 300) } else { 0 };
            let mut kind = json!({"type": "http", "requests": requests, "interval_ms": interval,
                "new_connection_per_request": new_conn, "request_bytes": 400,
                "response_bytes": resp, "think_ms": think});
            words.push(format!(
                "{requests} requests every {interval} ms, {resp} B responses, think {think} ms{}",
                if new_conn { ", a connection each" } else { "" }
            ));
            if !new_conn && r.chance(0.4) {
                let idle = r.log(100.0, 3000.0).round() as u64;
                let side = if r.chance(0.5) { "server" } else { "client" };
                kind[format!("{side}_idle_close_ms")] = json!(idle);
                words.push(format!("{side} closes after {idle} ms idle"));
            }
            let ssai = if r.chance(0.5) { "1" } else { "0" };
            case.server_sysctls
                .push(("net.ipv4.tcp_slow_start_after_idle".into(), ssai.into()));
            words.push(format!("server tcp_slow_start_after_idle={ssai}"));
            workload(kind, client, server, 40_000)
        }
        "reorder" => {
            let bytes = kb(r.log(1024.0, 4096.0));
            if r.chance(0.7) {
                let every = r.range(10, 100);
                let extra = r.range(1, 20);
                let count = r.range(5, 60);
                path["to_client"]["reorder_every"] =
                    json!({"every": every, "extra_delay_ms": extra, "count": count});
                words.push(format!(
                    "every {every}th data packet {extra} ms late ({count} times)"
                ));
            } else {
                let n = r.range(1, 5);
                let mut list = Vec::new();
                for _ in 0..n {
                    list.push(
                        json!({"data_packet": r.range(20, 500), "extra_delay_ms": r.range(1, 10)}),
                    );
                }
                words.push(format!(
                    "{n} chosen data packets late: {}",
                    Value::Array(list.clone())
                ));
                path["to_client"]["reorder"] = Value::Array(list);
            }
            words.push(format!("{bytes} B download"));
            workload(
                json!({"type": "bulk", "bytes": bytes, "direction": "download", "write_size": 65536}),
                client,
                server,
                40_000,
            )
        }
        "loss" => {
            let http = r.chance(0.5);
            let kind = if http {
                let resp = r.log(1_000.0, 500_000.0).round() as u64;
                words.push(format!("3 keep-alive requests of {resp} B, 300 ms apart"));
                json!({"type": "http", "requests": 3, "interval_ms": 300,
                    "new_connection_per_request": false, "request_bytes": 400,
                    "response_bytes": resp, "think_ms": 0})
            } else {
                let bytes = kb(r.log(256.0, 2048.0));
                words.push(format!("{bytes} B download"));
                json!({"type": "bulk", "bytes": bytes, "direction": "download", "write_size": 65536})
            };
            match r.range(0, 3) {
                0 => {
                    let n = r.range(1, 3);
                    let mut v: Vec<u64> = (0..n).map(|_| r.range(5, 400)).collect();
                    v.sort_unstable();
                    v.dedup();
                    words.push(format!("data packets {v:?} dropped"));
                    path["to_client"]["drop_data"] = json!(v);
                }
                1 => {
                    let p = r.log(0.002, 0.02);
                    words.push(format!("random loss {:.2} % to the client", p * 100.0));
                    path["to_client"]["loss"] = json!((p * 1e4).round() / 1e4);
                }
                2 => {
                    // The tail of the first burst; the gap must stay ≤ the delay.
                    let gap = to_client.clamp(1, 10);
                    words.push(format!("tail of the first burst dropped (gap {gap} ms)"));
                    path["to_client"]["drop_tail"] = json!({"gap_ms": gap, "bursts": [1]});
                }
                _ => {
                    words.push("the first SYN dropped".into());
                    path["to_server"]["drop_syn"] = json!(1);
                }
            }
            workload(kind, client, server, 40_000)
        }
        "echo" => {
            let rounds = r.range(3, 6);
            let writes = r.range(2, 4);
            let bytes = r.range(50, 600);
            let interval = r.range(200, 500);
            let mut c = client;
            let mut s = server;
            let cn = r.chance(0.4);
            let sn = r.chance(0.4);
            c["nodelay"] = json!(cn);
            s["nodelay"] = json!(sn);
            words.push(format!(
                "echo: {rounds} rounds of {writes} × {bytes} B every {interval} ms, nodelay client {cn} server {sn}"
            ));
            workload(
                json!({"type": "echo", "rounds": rounds, "writes": writes,
                    "write_bytes": bytes, "round_interval_ms": interval}),
                c,
                s,
                40_000,
            )
        }
        "slow_reader" => {
            let read = kb(r.log(4.0, 32.0));
            let reads = r.range(15, 60);
            let interval = r.range(20, 100);
            let rcvbuf = kb(r.log(32.0, 128.0));
            let mut c = client;
            c["rcvbuf"] = json!(rcvbuf);
            words.push(format!(
                "client reads {read} B every {interval} ms ({reads} reads), SO_RCVBUF {rcvbuf}"
            ));
            workload(
                json!({"type": "slow_reader", "bytes": read * reads, "read_size": read,
                    "read_interval_ms": interval}),
                c,
                server,
                40_000,
            )
        }
        _ => {
            // rtt_step: the server→client delay steps up right after the SYN/ACK.
            let resp = r.log(20_000.0, 200_000.0).round() as u64;
            let new_delay = (to_client.max(1) * r.range(4, 20) as u32).min(300);
            path["to_client"]["delay_change"] = json!({"after_packets": 1, "delay_ms": new_delay});
            words.push(format!(
                "to-client delay {to_client} → {new_delay} ms after the SYN/ACK; 2 requests of {resp} B 1.5 s apart"
            ));
            workload(
                json!({"type": "http", "requests": 2, "interval_ms": 1500,
                    "new_connection_per_request": false, "request_bytes": 400,
                    "response_bytes": resp, "think_ms": 0}),
                client,
                server,
                40_000,
            )
        }
    };
    case.path = path;
    case.workload = wl;
    case.summary = words.join("; ");
    case
}

fn static_sysctl(name: &str) -> Option<&'static str> {
    NAMESPACE_SYSCTLS.iter().copied().find(|n| *n == name)
}

fn leak(s: &str) -> &'static str {
    // A sweep is one process running at most thousands of cases: the names live as long.
    Box::leak(s.to_string().into_boxed_str())
}

impl Case {
    fn scenario(&self) -> Result<Scenario, String> {
        let conv = |v: &[(String, String)]| -> Result<Vec<(&'static str, String)>, String> {
            v.iter()
                .map(|(k, val)| {
                    static_sysctl(k)
                        .map(|k| (k, val.clone()))
                        .ok_or_else(|| format!("sysctl {k} is not one the lab sets"))
                })
                .collect()
        };
        Ok(Scenario {
            name: leak(&self.name),
            summary: leak(&self.summary),
            description: leak(&format!("sweep family {}: {}", self.family, self.summary)),
            path: self.path.clone(),
            workload: self.workload.clone(),
            topology: TopologySpec {
                rate_mbit: self.rate_mbit,
                queue_packets: self.queue_packets,
                tso_at_server: self.tso_at_server,
                gro_at_client: self.gro_at_client,
                client_sysctls: conv(&self.client_sysctls)?,
                server_sysctls: conv(&self.server_sysctls)?,
                client_initcwnd: None,
                snaplen: None,
                workload_root_sysctls: Vec::new(),
                workload_root_sysctls_after_ms: 0,
                hold_tcp_memory_above_pages: None,
            },
            must: &[],
            must_not: &[],
            full_snaplen: self.snaplen == 0,
            status: Status::Ready,
            check: |_, _| {},
        })
    }
}

/// The vantages captured, and their pcap names.
const VANTAGES: &[&str] = &["client", "server", "router"];

/// One finding id's outcome on one capture.
#[derive(Clone, Debug, Serialize)]
pub struct Scored {
    pub case: String,
    pub family: String,
    pub snaplen: u32,
    pub vantage: String,
    pub capture: String,
    pub id: String,
    pub want: Want,
    pub found: bool,
    pub found_cost_ms: Option<f64>,
    pub truth_cost_ms: Option<f64>,
    /// The records' upper bound when they bound the cost from below only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truth_cost_upto_ms: Option<f64>,
    pub why: String,
}

/// Per id: the counts and the cost errors.
#[derive(Default, Debug, Serialize)]
pub struct IdScore {
    pub positives: u32,
    pub negatives: u32,
    pub true_pos: u32,
    pub false_neg: u32,
    pub false_pos: u32,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    /// |found − truth| / truth over true positives with a truth cost.
    pub cost_rel_err_median: Option<f64>,
    pub cost_rel_err_p90: Option<f64>,
    pub cost_within_25pct: Option<f64>,
    pub costs_compared: u32,
}

/// `tcpwhy analyze --format json --min-cost 0` of one capture → (id → summed cost), and
/// the raw JSON saved next to it.
fn analyze(tcpwhy: &Path, pcap: &Path, save: &Path) -> Result<BTreeMap<String, f64>, String> {
    let out = Command::new(tcpwhy)
        .args(["analyze", "--format", "json", "--min-cost", "0"])
        .arg(pcap)
        .output()
        .map_err(|e| format!("{}: {e}", tcpwhy.display()))?;
    let _ = std::fs::write(save, &out.stdout);
    let v: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "tcpwhy analyze {}: {e} ({})",
            pcap.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )
    })?;
    let mut ids = BTreeMap::new();
    for f in v["files"].as_array().into_iter().flatten() {
        for key in ["findings", "below_min_cost"] {
            for x in f[key].as_array().into_iter().flatten() {
                if let Some(id) = x["id"].as_str() {
                    *ids.entry(id.to_string()).or_insert(0.0) +=
                        x["cost_ms"].as_f64().unwrap_or(0.0);
                }
            }
        }
    }
    Ok(ids)
}

/// Out-of-order data packets `tcpwhy flows` counts in a capture (class 10's control).
fn flows_out_of_order(tcpwhy: &Path, pcap: &Path) -> Option<u64> {
    let out = Command::new(tcpwhy)
        .args(["flows", "--format", "json"])
        .arg(pcap)
        .output()
        .ok()?;
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    let mut n = 0;
    for f in v["files"].as_array()? {
        for c in f["connections"].as_array().into_iter().flatten() {
            for d in [
                "to_server",
                "to_client",
                "client_to_server",
                "server_to_client",
            ] {
                n += c[d]["out_of_order"].as_u64().unwrap_or(0);
            }
            n += c["out_of_order"].as_u64().unwrap_or(0);
        }
    }
    Some(n)
}

/// The emulator's own view of the to-client data: packets that arrived at it with a
/// sequence number below an earlier one's (reordered before it), and verdicts issued in
/// such an order (reordered by it).
fn emulator_inversions(run_dir: &Path) -> (u64, u64) {
    let text =
        std::fs::read_to_string(run_dir.join("truth/emulator-decisions.jsonl")).unwrap_or_default();
    let mut rows: Vec<(u64, u64, u32, String)> = Vec::new();
    for l in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(l) else {
            continue;
        };
        if v["dir"] != "to_client"
            || v["len"].as_u64().unwrap_or(0) == 0
            || v["verdict"] != "accept"
        {
            continue;
        }
        let (Some(id), Some(at), Some(seq)) = (
            v["id"].as_u64(),
            v["verdict_us"].as_u64(),
            v["seq"].as_u64(),
        ) else {
            continue;
        };
        let flow = format!("{}", v["dport"]);
        rows.push((id, at, seq as u32, flow));
    }
    let count = |rows: &[(u64, u64, u32, String)]| {
        let mut top: BTreeMap<&str, u32> = BTreeMap::new();
        let mut n = 0;
        for (_, _, seq, flow) in rows {
            match top.get(flow.as_str()) {
                Some(&t) if (seq.wrapping_sub(t) as i32) < 0 => n += 1,
                _ => {
                    top.insert(flow.as_str(), *seq);
                }
            }
        }
        n
    };
    rows.sort_by_key(|r| r.0);
    let arrival = count(&rows);
    rows.sort_by_key(|r| (r.1, r.0));
    let verdict = count(&rows);
    (arrival, verdict)
}

fn write_json(path: &Path, v: &impl Serialize) -> Result<(), String> {
    let text = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
}

pub fn run(args: SweepArgs) -> Result<(), String> {
    let families: Vec<&str> =
        if args.families.is_empty() {
            FAMILIES.to_vec()
        } else {
            let mut v = Vec::new();
            for f in &args.families {
                v.push(FAMILIES.iter().copied().find(|x| x == f).ok_or_else(|| {
                    format!("no family {f:?} (families: {})", FAMILIES.join(", "))
                })?);
            }
            v
        };
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let out = args
        .out
        .canonicalize()
        .map_err(|e| format!("{}: {e}", args.out.display()))?;
    let params = out.join("sweep-params.json");
    let cases: Vec<Case> = if args.score_only {
        let text =
            std::fs::read_to_string(&params).map_err(|e| format!("{}: {e}", params.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", params.display()))?
    } else {
        let indices: Vec<u32> = if args.cases.is_empty() {
            (0..args.count).collect()
        } else {
            args.cases.clone()
        };
        indices
            .into_iter()
            .map(|i| generate(args.seed, i, &families))
            .collect()
    };
    for c in &cases {
        println!("{:<24} {}", c.name, c.summary);
    }
    if args.dry_run {
        return write_json(&params, &cases);
    }
    let tcpwhy = args
        .tcpwhy
        .clone()
        .or_else(crate::bundle::tcpwhy_exe)
        .ok_or(
            "no tcpwhy binary next to tcpwhy-lab (cargo build --release -p tcpwhy) and no --tcpwhy",
        )?;
    if !args.score_only {
        write_json(&params, &cases)?;
        topology::can_run()?;
        topology::install_signal_cleanup()?;
        for ns in topology::remove_leftovers() {
            eprintln!("tcpwhy-lab: removed leftover namespace {ns} (its run is gone)");
        }
    }
    let mut scored: Vec<Scored> = Vec::new();
    let mut errors: Vec<(String, String)> = Vec::new();
    // Captures whose tcpdump lost packets: what the capture lacks is not the detector's
    // to see, so none of their labels is scored (s5-009's client lost 336 of 1,195).
    let mut unscorable: Vec<Value> = Vec::new();
    let mut controls: Vec<Value> = Vec::new();
    for c in &cases {
        let dir = out.join(&c.name);
        if !args.score_only {
            eprintln!("== {}: {}", c.name, c.summary);
            let s = c.scenario()?;
            let ra = RunArgs {
                scenario: None,
                all: false,
                out: out.clone(),
                vantage: VantageArg::All,
                keep: false,
                snaplen: Some(c.snaplen),
                requests: None,
                no_emulator: false,
            };
            match run::run_one(&s, &out, &ra) {
                Ok(Verdict::Passed) | Ok(Verdict::ChecksFailed(_)) => {}
                Err(e) => {
                    eprintln!("   error: {e}");
                    errors.push((c.name.clone(), e));
                }
            }
            topology::cleanup_all();
            write_json(&dir.join("sweep-case.json"), c)?;
        }
        if !dir.join("truth").is_dir() {
            continue;
        }
        let records = Records::read(&dir);
        let labels = labels::label_run(&records);
        write_json(&dir.join("labels.json"), &labels)?;
        let syn_client_only = labels::client_syn_retrans_only(&records);
        let data_sender = labels::data_sender(&records);
        let (arrival, verdict) = emulator_inversions(&dir);
        let mut ooo = BTreeMap::new();
        for v in VANTAGES {
            let pcap = dir.join(format!("{v}.pcap"));
            if !pcap.is_file() {
                continue;
            }
            let lost = tcpdump_lost(&dir, v);
            if lost > 0 {
                unscorable.push(json!({
                    "case": c.name,
                    "vantage": v,
                    "capture": pcap.display().to_string(),
                    "tcpdump_dropped": lost,
                }));
                continue;
            }
            let found = match analyze(&tcpwhy, &pcap, &dir.join(format!("analyze-{v}.json"))) {
                Ok(f) => f,
                Err(e) => {
                    errors.push((c.name.clone(), e));
                    continue;
                }
            };
            if c.family == "control" {
                ooo.insert(v.to_string(), flows_out_of_order(&tcpwhy, &pcap));
            }
            let seen = labels::for_capture(&labels, v, c.snaplen, syn_client_only, data_sender);
            score_capture(c, v, &pcap, &seen, &found, &mut scored);
        }
        if c.family == "control" {
            controls.push(json!({
                "case": c.name,
                "out_of_order_per_capture": ooo,
                "emulator_arrival_inversions": arrival,
                "emulator_verdict_inversions": verdict,
            }));
        }
    }
    let table = summarise(&scored);
    print_table(&table, &scored, &controls, &errors);
    if !unscorable.is_empty() {
        println!(
            "\nnot scored (tcpdump dropped packets, so the capture lacks some of the traffic):"
        );
        for u in &unscorable {
            println!(
                "  {}  {} packets dropped",
                u["capture"].as_str().unwrap_or(""),
                u["tcpdump_dropped"]
            );
        }
    }
    write_json(
        &out.join("sweep-results.json"),
        &json!({
            "seed": args.seed,
            "count": cases.len(),
            "per_id": table,
            "misses": scored.iter().filter(|s| s.want == Want::Must && !s.found).collect::<Vec<_>>(),
            "false_findings": scored.iter().filter(|s| s.want == Want::MustNot && s.found).collect::<Vec<_>>(),
            "controls": controls,
            "errors": errors,
            "unscorable": unscorable,
            "scored": scored,
        }),
    )?;
    eprintln!("results: {}", out.join("sweep-results.json").display());
    Ok(())
}

/// Packets tcpdump reported "dropped by kernel" at `vantage`, from the run's manifest
/// (`key_numbers.tcpdump_dropped`); 0 when the manifest does not say.
fn tcpdump_lost(dir: &Path, vantage: &str) -> u64 {
    std::fs::read(dir.join("manifest.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .map_or(0, |m| dropped_at(&m, vantage))
}

fn dropped_at(manifest: &Value, vantage: &str) -> u64 {
    manifest["key_numbers"]["tcpdump_dropped"][vantage]
        .as_u64()
        .unwrap_or(0)
}

fn score_capture(
    c: &Case,
    vantage: &str,
    pcap: &Path,
    labels: &[Label],
    found: &BTreeMap<String, f64>,
    scored: &mut Vec<Scored>,
) {
    for l in labels {
        if l.want == Want::Unknown {
            continue;
        }
        let cost = found.get(l.id).copied();
        // A must-not's records may leave room for a cost below their resolution.
        let agrees =
            l.want == Want::MustNot && cost.is_some_and(|c| l.max_cost_ms.is_some_and(|m| c <= m));
        scored.push(Scored {
            case: c.name.clone(),
            family: c.family.clone(),
            snaplen: c.snaplen,
            vantage: vantage.to_string(),
            capture: pcap.display().to_string(),
            id: l.id.to_string(),
            want: l.want,
            found: cost.is_some() && !agrees,
            found_cost_ms: cost,
            truth_cost_ms: l.truth_cost_ms,
            truth_cost_upto_ms: l.truth_cost_upto_ms,
            why: l.why.clone(),
        });
    }
}

fn quantile(v: &mut [f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v.get(i).copied()
}

/// Relative error of a found cost against the records' cost `truth`, or against the range
/// `truth ..= upto` where they bound it from below only: 0 inside it, else relative to
/// the bound passed.
fn cost_error(found: f64, truth: f64, upto: Option<f64>) -> f64 {
    match upto {
        Some(hi) if found > hi => (found - hi) / hi,
        Some(_) if found >= truth => 0.0,
        _ => (found - truth).abs() / truth,
    }
}

pub fn summarise(scored: &[Scored]) -> BTreeMap<String, IdScore> {
    let mut t: BTreeMap<String, IdScore> = BTreeMap::new();
    let mut errs: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for s in scored {
        let e = t.entry(s.id.clone()).or_default();
        match (s.want, s.found) {
            (Want::Must, true) => {
                e.positives += 1;
                e.true_pos += 1;
                if let (Some(f), Some(tr)) = (s.found_cost_ms, s.truth_cost_ms) {
                    if tr > 0.0 {
                        errs.entry(s.id.clone()).or_default().push(cost_error(
                            f,
                            tr,
                            s.truth_cost_upto_ms,
                        ));
                    }
                }
            }
            (Want::Must, false) => {
                e.positives += 1;
                e.false_neg += 1;
            }
            (Want::MustNot, true) => {
                e.negatives += 1;
                e.false_pos += 1;
            }
            (Want::MustNot, false) => e.negatives += 1,
            (Want::Unknown, _) => {}
        }
    }
    for (id, e) in t.iter_mut() {
        let tp = f64::from(e.true_pos);
        if e.true_pos + e.false_pos > 0 {
            e.precision = Some(tp / f64::from(e.true_pos + e.false_pos));
        }
        if e.positives > 0 {
            e.recall = Some(tp / f64::from(e.positives));
        }
        if let Some(v) = errs.get_mut(id) {
            e.costs_compared = v.len() as u32;
            e.cost_within_25pct =
                Some(v.iter().filter(|&&x| x <= 0.25).count() as f64 / v.len() as f64);
            e.cost_rel_err_median = quantile(v, 0.5);
            e.cost_rel_err_p90 = quantile(v, 0.9);
        }
    }
    t
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{:.0} %", x * 100.0))
}

fn print_table(
    t: &BTreeMap<String, IdScore>,
    scored: &[Scored],
    controls: &[Value],
    errors: &[(String, String)],
) {
    println!();
    println!(
        "| finding id | must | must not | found (TP) | missed | false | precision | recall | cost err median | p90 | within 25 % |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (id, e) in t {
        println!(
            "| {id} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            e.positives,
            e.negatives,
            e.true_pos,
            e.false_neg,
            e.false_pos,
            pct(e.precision),
            pct(e.recall),
            pct(e.cost_rel_err_median),
            pct(e.cost_rel_err_p90),
            e.cost_within_25pct.map_or("-".into(), |x| format!(
                "{:.0} % of {}",
                x * 100.0,
                e.costs_compared
            )),
        );
    }
    println!("\nmisses (must, not found):");
    for s in scored.iter().filter(|s| s.want == Want::Must && !s.found) {
        println!(
            "  {:<28} {:<6} -s {:<3} {}  [{}]",
            s.id, s.vantage, s.snaplen, s.capture, s.why
        );
    }
    println!("\nfalse findings (must not, found):");
    for s in scored.iter().filter(|s| s.want == Want::MustNot && s.found) {
        println!(
            "  {:<28} {:<6} -s {:<3} {}  cost {:.1} ms  [{}]",
            s.id,
            s.vantage,
            s.snaplen,
            s.capture,
            s.found_cost_ms.unwrap_or(0.0),
            s.why
        );
    }
    if !controls.is_empty() {
        println!("\ncontrols (clean bulk; out-of-order packets per capture, emulator inversions):");
        for c in controls {
            println!("  {c}");
        }
    }
    if !errors.is_empty() {
        println!("\nerrors:");
        for (n, e) in errors {
            println!("  {n}: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// s5-009-http's manifest (seed 5, session 6): the client's tcpdump dropped 336
    /// packets, the others none; an older manifest without the numbers drops nothing.
    #[test]
    fn captures_whose_tcpdump_dropped_packets_are_found_from_the_manifest() {
        let m =
            json!({"key_numbers": {"tcpdump_dropped": {"client": 336, "router": 0, "server": 0}}});
        assert_eq!(dropped_at(&m, "client"), 336);
        assert_eq!(dropped_at(&m, "server"), 0);
        assert_eq!(dropped_at(&json!({"key_numbers": {}}), "client"), 0);
    }

    #[test]
    fn the_same_seed_gives_the_same_parameters_whatever_the_count() {
        let a: Vec<String> = (0..16)
            .map(|i| serde_json::to_string(&generate(7, i, FAMILIES)).unwrap())
            .collect();
        let b: Vec<String> = (0..16)
            .map(|i| serde_json::to_string(&generate(7, i, FAMILIES)).unwrap())
            .collect();
        assert_eq!(a, b);
        assert_ne!(
            serde_json::to_string(&generate(8, 0, FAMILIES)).unwrap(),
            a[0]
        );
        // Families in turn.
        assert_eq!(generate(7, 0, FAMILIES).family, "bulk");
        assert_eq!(generate(7, 9, FAMILIES).family, "http");
    }

    #[test]
    fn every_generated_case_parses_with_the_emulator_and_workload_types() {
        for seed in 1..4 {
            for i in 0..64 {
                let c = generate(seed, i, FAMILIES);
                let p: crate::emulator::PathConfig = serde_json::from_value(c.path.clone())
                    .unwrap_or_else(|e| panic!("{}: path: {e}", c.name));
                p.validate()
                    .unwrap_or_else(|e| panic!("{}: path: {e}", c.name));
                let _: crate::workload::WorkloadConfig = serde_json::from_value(c.workload.clone())
                    .unwrap_or_else(|e| panic!("{}: workload: {e}", c.name));
                assert!((0..=300).contains(&c.rtt_ms), "{}", c.name);
                c.scenario().unwrap();
            }
        }
    }

    #[test]
    fn precision_recall_and_cost_error_per_id() {
        let mk = |want, found, cost: Option<f64>, truth: Option<f64>| Scored {
            case: "c".into(),
            family: "f".into(),
            snaplen: 0,
            vantage: "client".into(),
            capture: "x.pcap".into(),
            id: "rwnd.limited".into(),
            want,
            found,
            found_cost_ms: cost,
            truth_cost_ms: truth,
            truth_cost_upto_ms: None,
            why: String::new(),
        };
        let s = vec![
            mk(Want::Must, true, Some(110.0), Some(100.0)),
            mk(Want::Must, true, Some(150.0), Some(100.0)),
            mk(Want::Must, false, None, Some(100.0)),
            mk(Want::MustNot, true, Some(5.0), None),
            mk(Want::MustNot, false, None, None),
        ];
        let t = summarise(&s);
        let e = &t["rwnd.limited"];
        assert_eq!(
            (
                e.positives,
                e.negatives,
                e.true_pos,
                e.false_neg,
                e.false_pos
            ),
            (3, 2, 2, 1, 1)
        );
        assert_eq!(e.precision, Some(2.0 / 3.0));
        assert_eq!(e.recall, Some(2.0 / 3.0));
        // Errors 0.1 and 0.5: median (index round(0.5)) = 0.5, one of two within 25 %.
        assert_eq!(e.cost_within_25pct, Some(0.5));
        assert_eq!(e.costs_compared, 2);
    }

    /// Records that bound a cost from below only (a paced sender's rwnd chrono) agree with
    /// any cost up to their upper bound, and a cost beyond it errs relative to that bound.
    #[test]
    fn a_cost_range_agrees_inside_and_errs_from_the_bound_passed() {
        assert_eq!(cost_error(150.0, 100.0, Some(300.0)), 0.0);
        assert_eq!(cost_error(100.0, 100.0, Some(300.0)), 0.0);
        assert_eq!(cost_error(450.0, 100.0, Some(300.0)), 0.5);
        assert_eq!(cost_error(50.0, 100.0, Some(300.0)), 0.5);
        assert_eq!(cost_error(150.0, 100.0, None), 0.5);
    }
}
