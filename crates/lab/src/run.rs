//! Runs scenarios: builds the topology, starts the emulator, captures, samples the
//! kernel's state, runs the workload, stops everything in order (tcpdump last, with
//! SIGINT, so its file is complete), checks the ground truth and writes the manifest.

use crate::bundle;
use crate::cli::{RunArgs, VantageArg};
use crate::holder;
use crate::manifest::{self, Manifest};
use crate::scenario::{self, Evidence, Outcome, Scenario, Status};
use crate::topology::{self, Lab, Proc, Side, NAMESPACE_SYSCTLS, QUEUE_NUM};
use crate::truth::{self, SsSampler};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// Snaplen of the big scenarios: every header, no payload (as the benchmark captures).
const SNAPLEN_HEADERS: u32 = 128;
/// How long to wait for a started program to say it is ready.
const READY_TIMEOUT: Duration = Duration::from_secs(5);
/// After the client ends: let the closing FIN/ACKs cross the emulated path and land in
/// the capture and in the last ss samples.
const SETTLE: Duration = Duration::from_millis(400);
/// Extra time the client gets past its own deadline before it is killed.
const CLIENT_GRACE: Duration = Duration::from_secs(10);

pub enum Verdict {
    Passed,
    /// The run completed but the kernel's evidence did not show what was intended.
    ChecksFailed(Vec<String>),
}

pub fn run(args: RunArgs) -> Result<bool, String> {
    topology::can_run()?;
    topology::install_signal_cleanup()?;
    for ns in topology::remove_leftovers() {
        eprintln!("tcpwhy-lab: removed leftover namespace {ns} (its run is gone)");
    }
    let mut scenarios: Vec<Scenario> = if args.all {
        scenario::all()
    } else {
        let name = args.scenario.as_deref().unwrap_or("");
        vec![scenario::find(name)
            .ok_or_else(|| format!("no scenario {name:?} (see `tcpwhy-lab list`)"))?]
    };
    if let Some(n) = args.requests {
        for s in &mut scenarios {
            let kind = &mut s.workload["kind"];
            if kind["type"] == "http" && kind["requests"].as_u64().is_some_and(|r| r > n.into()) {
                kind["requests"] = n.into();
            }
        }
    }
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let out = args
        .out
        .canonicalize()
        .map_err(|e| format!("{}: {e}", args.out.display()))?;
    let mut summary = Vec::new();
    for s in &scenarios {
        let started = Instant::now();
        eprintln!("== {}", s.name);
        let r = run_one(s, &out, &args);
        let secs = started.elapsed().as_secs_f64();
        let line = match &r {
            Ok(Verdict::Passed) => format!("ok      {:<28} {secs:5.1} s", s.name),
            Ok(Verdict::ChecksFailed(why)) => {
                format!("FAILED  {:<28} {secs:5.1} s  {}", s.name, why.join("; "))
            }
            Err(e) => format!("ERROR   {:<28} {secs:5.1} s  {e}", s.name),
        };
        eprintln!("{line}");
        summary.push((r.is_ok_and(|v| matches!(v, Verdict::Passed)), line));
    }
    if scenarios.len() > 1 {
        println!("\nsummary ({} scenarios):", summary.len());
        for (_, l) in &summary {
            println!("  {l}");
        }
    }
    Ok(summary.iter().all(|(ok, _)| *ok))
}

fn wait_for_text(file: &Path, needle: &str, proc_: &mut Proc) -> Result<String, String> {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        if text.contains(needle) {
            return Ok(text);
        }
        if proc_.exited().is_some() {
            return Err(format!("{} exited before it was ready", proc_.name));
        }
        if Instant::now() >= deadline {
            return Err(format!("{} not ready after {READY_TIMEOUT:?}", proc_.name));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn with_stderr(e: String, stderr: &Path) -> String {
    let tail: String = std::fs::read_to_string(stderr)
        .unwrap_or_default()
        .lines()
        .rev()
        .take(5)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join(" | ");
    if tail.is_empty() {
        e
    } else {
        format!("{e}: {tail}")
    }
}

fn write_json(path: &Path, v: &impl serde::Serialize) -> Result<(), String> {
    let text = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
}

fn read_json(path: &Path) -> Value {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}

struct Snapshot {
    nstat: BTreeMap<String, u64>,
    sockstat: String,
}

fn snapshot(lab: &Lab, side: Side) -> Snapshot {
    // -s: do not touch nstat's history file; -a absolute; -z zeros too.
    // A reading can fail (s69-099: the client's after the run came back empty); once
    // more, and an empty one is left for the labels to see (`Records::nstat_recorded`).
    let read = || {
        lab.exec_in(side, &["nstat", "-asz"])
            .map(|t| truth::parse_nstat(&t))
            .unwrap_or_default()
    };
    let mut nstat = read();
    if nstat.is_empty() {
        nstat = read();
    }
    let sockstat = lab
        .exec_in(side, &["cat", "/proc/net/sockstat"])
        .unwrap_or_default();
    Snapshot { nstat, sockstat }
}

/// tcpdump's `-s` for a scenario: `--snaplen`, else the scenario's own (a cut it is
/// about), else whole packets (0) for the small scenarios and headers for the others.
fn snaplen(s: &Scenario, args: &RunArgs) -> u32 {
    args.snaplen
        .or(s.topology.snaplen)
        .unwrap_or(if s.full_snaplen { 0 } else { SNAPLEN_HEADERS })
}

pub(crate) fn run_one(s: &Scenario, out: &Path, args: &RunArgs) -> Result<Verdict, String> {
    let (vantage, keep, no_emulator) = (args.vantage, args.keep, args.no_emulator);
    let snap = snaplen(s, args);
    let dir = out.join(s.name);
    let tdir = dir.join("truth");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(&tdir).map_err(|e| format!("{}: {e}", tdir.display()))?;
    let f = |name: &str| tdir.join(name);
    let path_cfg = f("path.json");
    let work_cfg = f("workload.json");
    write_json(&path_cfg, &s.path)?;
    write_json(&work_cfg, &s.workload)?;
    let exe = std::env::current_exe().map_err(|e| format!("own executable: {e}"))?;
    let exe = exe.to_string_lossy().into_owned();
    let s_ = |p: &Path| p.to_string_lossy().into_owned();
    let date_unix = truth::unix_now();

    let lab = Lab::create(&s.topology, keep)?;
    let t0 = Instant::now();
    let mut notes: Vec<String> = lab.warnings.clone();
    if let Status::Caveat(why) = s.status {
        notes.push(format!("caveat: {why}"));
    }
    let table = scenario::find(s.name).map(|t| t.workload["kind"]["requests"].clone());
    // (A sweep's generated scenario is not in the table.)
    if table
        .as_ref()
        .is_some_and(|t| t != &s.workload["kind"]["requests"])
    {
        notes.push(format!(
            "run with --requests: {} requests instead of the scenario's {}",
            s.workload["kind"]["requests"],
            table.unwrap_or_default()
        ));
    }

    // 1. The path emulator, bound to the router's queue before any packet flows.
    let mut emulator = None;
    if no_emulator {
        lab.exec_in(Side::Router, &["iptables", "-F", "FORWARD"])?;
        notes.push("run with --no-emulator: no delay, loss or reordering was applied".into());
    } else {
        let log = f("emulator-decisions.jsonl");
        let mut p = lab.spawn(
            Side::Router,
            "emulator",
            &[
                &exe,
                "emulate",
                "--queue",
                &QUEUE_NUM.to_string(),
                "--config",
                &s_(&path_cfg),
                "--log",
                &s_(&log),
            ],
            &f("emulator.stdout"),
            &f("emulator.stderr"),
        )?;
        // It prints `ready` once bound to the queue (packets queued before are dropped).
        wait_for_text(&f("emulator.stdout"), "ready", &mut p)
            .map_err(|e| with_stderr(e, &f("emulator.stderr")))?;
        emulator = Some(p);
    }

    // 2. Captures.
    let sides: &[(Side, &str)] = match vantage {
        VantageArg::Client => &[(Side::Client, "client")],
        VantageArg::Server => &[(Side::Server, "server")],
        VantageArg::Both => &[(Side::Client, "client"), (Side::Server, "server")],
        VantageArg::Router => &[(Side::Router, "router")],
        VantageArg::All => &[
            (Side::Client, "client"),
            (Side::Server, "server"),
            (Side::Router, "router"),
        ],
    };
    let mut dumps = Vec::new();
    for &(side, label) in sides {
        let dev = match side {
            Side::Client => lab.client_dev(),
            Side::Server => lab.server_dev(),
            Side::Router => lab.router_client_side_dev(),
        };
        let pcap = dir.join(format!("{label}.pcap"));
        let err = f(&format!("tcpdump-{label}.stderr"));
        let snap = snap.to_string();
        let mut p = lab.spawn(
            side,
            &format!("tcpdump ({label})"),
            &[
                "tcpdump",
                // Deliver each packet at once: with the default 1 s ring-block timeout,
                // the last packets before SIGINT never reached the file.
                "--immediate-mode",
                "-n",
                "-i",
                &dev,
                "-s",
                &snap,
                "-Z",
                "root",
                "-w",
                &s_(&pcap),
                "tcp",
            ],
            &f(&format!("tcpdump-{label}.stdout")),
            &err,
        )?;
        wait_for_text(&err, "listening on", &mut p).map_err(|e| with_stderr(e, &err))?;
        dumps.push((label, p, pcap, err));
    }

    // 3. The kernel's state before, and samplers during.
    let before_c = snapshot(&lab, Side::Client);
    let before_s = snapshot(&lab, Side::Server);
    // Host bundles (tcpwhy collect in each namespace), when tcpwhy is built alongside.
    let tcpwhy = bundle::tcpwhy_exe();
    if tcpwhy.is_none() {
        notes.push("no tcpwhy binary next to tcpwhy-lab: no host bundles".into());
    }
    // Hosts only: the router runs no TCP end.
    let bundle_sides: Vec<(Side, &str)> = sides
        .iter()
        .copied()
        .filter(|&(side, _)| side != Side::Router)
        .collect();
    for &(side, label) in &bundle_sides {
        if let Some(exe) = &tcpwhy {
            if let Err(e) = bundle::collect(&lab, side, exe, &bundle::dir(&tdir, label), false) {
                notes.push(format!("host bundle ({label}): {e}"));
            }
        }
    }
    let ss_c = SsSampler::start(&lab.ns(Side::Client), &f("ss-client.txt"), t0)?;
    let ss_s = SsSampler::start(&lab.ns(Side::Server), &f("ss-server.txt"), t0)?;

    // 4. The workload: server first, the client once it listens.
    let mut server = lab.spawn(
        Side::Server,
        "workload server",
        &[
            &exe,
            "workload",
            "--config",
            &s_(&work_cfg),
            "--role",
            "server",
            "--out",
            &s_(&f("server-timings.json")),
        ],
        &f("server.stdout"),
        &f("server.stderr"),
    )?;
    wait_for_text(&f("server.stdout"), "listening", &mut server)
        .map_err(|e| with_stderr(e, &f("server.stderr")))?;
    // Machine-wide settings (tcp_mem) for the workload's seconds only.
    if !s.topology.workload_root_sysctls.is_empty() {
        if let Some(pid) = other_sweep() {
            return Err(format!(
                "a sweep runs (pid {pid}): a root sysctl such as tcp_mem would change its \
                 runs too; run this scenario when it is done"
            ));
        }
    }
    // Before the client starts, so that filling it does not disturb the workload's timing;
    // harmless until tcp_mem is lowered. Freed once the sysctls are back.
    let holder = match s.topology.hold_tcp_memory_above_pages {
        Some(pressure) => {
            let h = holder::TcpMemoryHolder::fill(holder::pages_to_hold(pressure), pressure)?;
            notes.push(format!(
                "other sockets: a loopback connection in the lab's namespace held {} B \
                 unread during the workload (sockstat TCP mem {} → {} pages)",
                h.bytes, h.pages_before, h.pages_after
            ));
            Some(h)
        }
        None => None,
    };
    let root_after = Duration::from_millis(s.topology.workload_root_sysctls_after_ms);
    let set_root = || -> Result<(), String> {
        for (name, value) in &s.topology.workload_root_sysctls {
            lab.set_root_sysctl(name, value)?;
        }
        Ok(())
    };
    if root_after.is_zero() {
        set_root()?;
    }
    let mut client = lab.spawn(
        Side::Client,
        "workload client",
        &[
            &exe,
            "workload",
            "--config",
            &s_(&work_cfg),
            "--role",
            "client",
            "--out",
            &s_(&f("client-timings.json")),
        ],
        &f("client.stdout"),
        &f("client.stderr"),
    )?;
    let deadline =
        Duration::from_millis(s.workload["deadline_ms"].as_u64().unwrap_or(60_000)) + CLIENT_GRACE;
    if !root_after.is_zero() {
        // Timed from the connection, not from the client's start: starting a process
        // in a namespace takes 10 to 100 ms, a spread of several RTTs of the transfer.
        wait_for_text(&f("server.stdout"), "accepted", &mut server)
            .map_err(|e| with_stderr(e, &f("server.stderr")))?;
        std::thread::sleep(root_after);
        set_root()?;
    }
    let client_status = client.wait_timeout(deadline);
    let restored = lab.restore_root_sysctls();
    drop(holder);
    let client_err = match client_status {
        Some(st) if st.success() => None,
        Some(st) => Some(with_stderr(
            format!("the client failed ({st})"),
            &f("client.stderr"),
        )),
        None => {
            client.stop(libc::SIGTERM);
            Some(format!("the client did not finish within {deadline:?}"))
        }
    };
    std::thread::sleep(SETTLE);

    // 5. Stop in order: samplers, server, captures, emulator; then the state after.
    let ss_client = ss_c.finish()?;
    let ss_server = ss_s.finish()?;
    server.stop(libc::SIGTERM);
    let mut dropped = BTreeMap::new();
    let mut files = vec!["manifest.json".to_string()];
    for (label, mut p, _pcap, err) in dumps {
        p.stop(libc::SIGINT);
        let text = std::fs::read_to_string(&err).unwrap_or_default();
        dropped.insert(label.to_string(), truth::tcpdump_dropped(&text));
        files.push(format!("{label}.pcap"));
    }
    if let Some(mut e) = emulator.take() {
        e.stop(libc::SIGTERM);
    }
    let after_c = snapshot(&lab, Side::Client);
    let after_s = snapshot(&lab, Side::Server);
    let metrics_s = lab
        .exec_in(Side::Server, &["ip", "tcp_metrics", "show"])
        .unwrap_or_default();
    let metrics_c = lab
        .exec_in(Side::Client, &["ip", "tcp_metrics", "show"])
        .unwrap_or_default();
    for &(side, label) in &bundle_sides {
        if let Some(exe) = &tcpwhy {
            let d = bundle::dir(&tdir, label);
            let raw = format!("ss-{label}.txt");
            let metrics = if side == Side::Client {
                &metrics_c
            } else {
                &metrics_s
            };
            let r = bundle::collect(&lab, side, exe, &d, true)
                .and_then(|_| match bundle::last_sample_with(&f(&raw), scenario::PORT) {
                    Some((when, text)) => bundle::replace(
                        &d,
                        "ss.txt",
                        &text,
                        "ss -tinmHO",
                        &format!("the last sample ({when}) that showed the workload's connection established, from truth/{raw}"),
                    ),
                    None => Ok(()),
                })
                .and_then(|_| {
                    bundle::replace(
                        &d,
                        "tcp_metrics.txt",
                        metrics,
                        "ip tcp_metrics show",
                        "read after the workload (the cache fills when connections close)",
                    )
                });
            if let Err(e) = r {
                notes.push(format!("host bundle ({label}): {e}"));
            }
        }
    }
    let sysctls = effective_sysctls(&lab);
    drop(lab);

    // 6. Save the raw evidence.
    let save =
        |name: &str, text: &str| std::fs::write(f(name), text).map_err(|e| format!("{name}: {e}"));
    save("sockstat-client-before.txt", &before_c.sockstat)?;
    save("sockstat-client-after.txt", &after_c.sockstat)?;
    save("sockstat-server-before.txt", &before_s.sockstat)?;
    save("sockstat-server-after.txt", &after_s.sockstat)?;
    save("tcp_metrics-server.txt", &metrics_s)?;
    save("tcp_metrics-client.txt", &metrics_c)?;
    write_json(&f("nstat-client-before.json"), &before_c.nstat)?;
    write_json(&f("nstat-client-after.json"), &after_c.nstat)?;
    write_json(&f("nstat-server-before.json"), &before_s.nstat)?;
    write_json(&f("nstat-server-after.json"), &after_s.nstat)?;
    let jsonl = |name: &str, v: &[truth::SsSocket]| -> Result<(), String> {
        let mut text = String::new();
        for x in v {
            text += &serde_json::to_string(x).map_err(|e| e.to_string())?;
            text.push('\n');
        }
        save(name, &text)
    };
    jsonl("ss-client.jsonl", &ss_client)?;
    jsonl("ss-server.jsonl", &ss_server)?;
    for entry in std::fs::read_dir(&tdir)
        .map_err(|e| e.to_string())?
        .flatten()
    {
        files.push(format!("truth/{}", entry.file_name().to_string_lossy()));
    }
    files.sort();

    let cap = |label: &str| -> Option<truth::CaptureFacts> {
        truth::read_capture(&dir.join(format!("{label}.pcap"))).ok()
    };
    let ev = Evidence {
        rtt_configured_ms: rtt_configured_ms(&s.path),
        workload: s.workload.clone(),
        client: read_json(&f("client-timings.json")),
        server: read_json(&f("server-timings.json")),
        nstat_client: truth::nstat_delta(&before_c.nstat, &after_c.nstat),
        nstat_server: truth::nstat_delta(&before_s.nstat, &after_s.nstat),
        ss_server,
        tcp_metrics_server: metrics_s,
        capture_client: cap("client"),
        capture_server: cap("server"),
    };
    let mut outcome = Outcome::default();
    if let Some(e) = &client_err {
        outcome.check("the client workload completed", false, e);
    }
    for (name, old, now) in &restored {
        outcome.check(
            &format!("root {name} restored to {old} when the client ended"),
            now == old,
            now,
        );
    }
    (s.check)(&ev, &mut outcome);
    for c in outcome.checks.iter().filter(|c| !c.ok) {
        notes.push(format!(
            "the kernel did not behave as intended: expected {}, measured {}",
            c.what, c.measured
        ));
    }
    for (label, d) in &dropped {
        match d {
            Some(0) => {}
            Some(n) => notes.push(format!(
                "tcpdump ({label}) dropped {n} packets in the kernel"
            )),
            None => notes.push(format!("tcpdump ({label}) printed no drop statistics")),
        }
    }
    let m = Manifest::build(manifest::Inputs {
        s,
        date_unix,
        vantage,
        files,
        sysctls,
        ev: &ev,
        outcome: &outcome,
        tcpdump_dropped: dropped,
        notes,
        duration_s: t0.elapsed().as_secs_f64(),
        snaplen: if snap == 0 { 262_144 } else { snap },
    });
    write_json(&dir.join("manifest.json"), &m)?;
    if let Some(e) = client_err {
        return Err(e);
    }
    Ok(if outcome.passed() {
        Verdict::Passed
    } else {
        Verdict::ChecksFailed(
            outcome
                .checks
                .iter()
                .filter(|c| !c.ok)
                .map(|c| format!("{} (measured {})", c.what, c.measured))
                .collect(),
        )
    })
}

/// A `tcpwhy-lab sweep` other than this process, if one runs (its pid).
fn other_sweep() -> Option<u32> {
    let own = std::process::id();
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
        let mut args = cmd.split(|&b| b == 0);
        let exe = args.next()?;
        let is_lab = exe.ends_with(b"tcpwhy-lab");
        let is_sweep = args.next().is_some_and(|a| a == b"sweep");
        (pid != own && is_lab && is_sweep).then_some(pid)
    })
}

/// Base RTT of the path: the two one-way delays.
pub fn rtt_configured_ms(path: &Value) -> f64 {
    let d = |dir: &str| path[dir]["delay_ms"].as_f64().unwrap_or(0.0);
    d("to_server") + d("to_client")
}

/// The namespace sysctls as the kernel reports them after setup, per end.
fn effective_sysctls(lab: &Lab) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut all = BTreeMap::new();
    for (side, label) in [(Side::Client, "client"), (Side::Server, "server")] {
        let mut cmd = vec!["sysctl", "-e"];
        cmd.extend_from_slice(NAMESPACE_SYSCTLS);
        let text = lab.exec_in(side, &cmd).unwrap_or_default();
        let m: BTreeMap<String, String> = text
            .lines()
            .filter_map(|l| {
                let (k, v) = l.split_once(" = ")?;
                Some((
                    k.trim().to_string(),
                    v.split_whitespace().collect::<Vec<_>>().join(" "),
                ))
            })
            .collect();
        all.insert(label.to_string(), m);
    }
    all
}
