//! End-to-end lab runs: each test runs one scenario with the real kernel (`tcpwhy-lab run`)
//! and asserts the kernel's own evidence in its manifest (nstat deltas, ss samples, the
//! workload's timings, handshakes in the capture) — not tcpwhy's analysis. And that a run,
//! finished or interrupted, leaves nothing behind.
//!
//! Needs root and `ip netns`; without them each test prints a note and passes (CI is
//! root). Tests share one lock: namespaces and timing-sensitive runs, one at a time.
//! Times are bounded from below (the path's delays, the kernel's timers); a busy 2-core
//! machine only makes them longer.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::rc::Rc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

static LOCK: Mutex<()> = Mutex::new(());

fn usable() -> bool {
    let ok = common::root_and_netns();
    if !ok {
        eprintln!("note: skipped, the lab needs root and `ip netns`");
    }
    ok
}

fn lab() -> &'static str {
    env!("CARGO_BIN_EXE_tcpwhy-lab")
}

fn out_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcpwhy-lab-test-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Namespaces of the lab (twl<pid>-…) that belong to `pid`.
fn namespaces_of(pid: u32) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&format!("twl{pid}-")))
        .map(String::from)
        .collect()
}

/// Runs one scenario, checks nothing is left, and returns its manifest.
fn run(name: &str) -> Value {
    let dir = out_dir(name);
    let m = run_in(name, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    m
}

/// One side's capture of a run as the current code analyzes it (`analyze`, every
/// finding whatever its cost).
struct Analyzed {
    side: &'static str,
    /// Connections the analysis saw: a check that nothing was named means something
    /// only if the capture was read.
    connections: u64,
    findings: Vec<tcpwhy_detect::Finding>,
    /// The largest `rwnd_limited` and `busy` (ms) any socket of the run's ss samples
    /// showed: the kernel's own TCP_CHRONO_RWND_LIMITED for this very run.
    kernel_rwnd_limited_ms: f64,
    kernel_busy_ms: f64,
    /// The largest ratio of a socket's queued bytes to its send buffer (`w` / `tb` in
    /// ss's skmem: sk_wmem_queued / sk_sndbuf) in the run's samples.
    kernel_wmem_over_sndbuf: f64,
    /// The run's captures, kept if the test fails.
    _captures: Rc<Kept>,
}

/// A run's directory, deleted once the test is done with it, unless the test failed:
/// then it stays and the test's output says where. The capture a check failed on is what
/// tells a borderline rule from a flaky run (the sndbuf-capped early exit of a
/// clean-clone CI run at 9ce4516 had to be rebuilt from twelve new runs).
struct Kept(PathBuf);

impl Drop for Kept {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("the run's captures are kept in {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// The largest of `value` over the words of a run's ss samples (`truth/ss-*.txt`), 0 if
/// it gives none.
fn ss_max(run_dir: &Path, value: impl Fn(&str) -> Option<f64>) -> f64 {
    ["ss-client.txt", "ss-server.txt"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(run_dir.join("truth").join(f)).ok())
        .flat_map(|t| t.split_whitespace().filter_map(&value).collect::<Vec<_>>())
        .fold(0.0, f64::max)
}

/// The largest value of `key:Nms` in a run's ss samples, 0 if none.
fn ss_max_ms(run_dir: &Path, key: &str) -> f64 {
    let pat = format!("{key}:");
    ss_max(run_dir, |w| {
        w.strip_prefix(pat.as_str())?
            .split("ms")
            .next()?
            .parse::<f64>()
            .ok()
    })
}

/// The largest `w` / `tb` (sk_wmem_queued / sk_sndbuf) in a run's ss samples, 0 if none.
fn ss_max_wmem_over_sndbuf(run_dir: &Path) -> f64 {
    let field = |fields: &str, key: &str| {
        fields
            .split(',')
            .find_map(|f| f.strip_prefix(key)?.parse::<f64>().ok())
    };
    ss_max(run_dir, |w| {
        let fields = w.strip_prefix("skmem:(")?.strip_suffix(')')?;
        let (queued, sndbuf) = (field(fields, "w")?, field(fields, "tb")?);
        (sndbuf > 0.0).then(|| queued / sndbuf)
    })
}

/// Runs one scenario and analyzes each of its captures with the current code: the
/// rules of issue 12 are checked on captures the real kernel made just now.
fn run_analyzed(name: &str) -> (Value, Vec<Analyzed>) {
    run_analyzed_in(name, name)
}

/// [`run_analyzed`] in its own directory, named by `tag`: runs of one scenario in one
/// test, each kept if the test fails.
fn run_analyzed_in(name: &str, tag: &str) -> (Value, Vec<Analyzed>) {
    let dir = out_dir(tag);
    let kept = Rc::new(Kept(dir.clone()));
    let m = run_in(name, &dir);
    let mut out = Vec::new();
    for side in ["client", "server"] {
        let p = dir.join(name).join(format!("{side}.pcap"));
        if !p.exists() {
            continue;
        }
        let (report, findings, _) = tcpwhy_pipeline::analyze(
            p.to_str().unwrap(),
            &tcpwhy_pipeline::Options {
                threads: 1,
                ..Default::default()
            },
            &tcpwhy_detect::Config::default(),
        )
        .unwrap_or_else(|e| panic!("{name} {side}: {e}"));
        let findings = findings
            .iter()
            .collect::<Result<Vec<_>, _>>()
            .unwrap_or_else(|e| panic!("{name} {side}: {e}"));
        out.push(Analyzed {
            side,
            connections: report.stats.count,
            findings,
            kernel_rwnd_limited_ms: ss_max_ms(&dir.join(name), "rwnd_limited"),
            kernel_busy_ms: ss_max_ms(&dir.join(name), "busy"),
            kernel_wmem_over_sndbuf: ss_max_wmem_over_sndbuf(&dir.join(name)),
            _captures: Rc::clone(&kept),
        });
    }
    (m, out)
}

/// Fails if any capture of the run has a finding of these ids.
/// One tick of tcp_info's chrono times at the lab kernel's CONFIG_HZ=250.
const CHRONO_TICK_NS: u64 = 4_000_000;

fn named_none_of(name: &str, runs: &[Analyzed], ids: &[&str]) {
    for a in runs {
        assert!(
            a.connections > 0,
            "{name} {}: no connection analysed",
            a.side
        );
        let bad: Vec<&tcpwhy_detect::Finding> = a
            .findings
            .iter()
            .filter(|f| ids.contains(&f.id.as_str()))
            // The kernel's window-limited chrono counts jiffies (4 ms at HZ 250): a
            // window-limited time within one tick (and 1 % of busy, as the sweep's
            // labels allow: labels.rs CHRONO_TICK_MS) of what this run's own chrono
            // counted is not one the records rule out. hystart-1ms in fresh-clone CI:
            // rwnd.limited at 0.06 ms; on a loaded machine the client reads late and
            // the kernel itself counts a few ms (5.8 ms found against a 4 ms chrono).
            .filter(|f| {
                let allowed_ms = a.kernel_rwnd_limited_ms + 0.01 * a.kernel_busy_ms;
                !(f.id.as_str() == "rwnd.limited"
                    && f.cost_ns < CHRONO_TICK_NS + (allowed_ms * 1e6) as u64)
            })
            .collect();
        assert!(
            bad.is_empty(),
            "{name} {}: {:#?}",
            a.side,
            bad.iter()
                .map(|f| (f.id.as_str(), f.cost_ns / 1_000_000, &f.explanation))
                .collect::<Vec<_>>()
        );
    }
}

/// Runs one scenario into `dir`, checks nothing is left, and returns its manifest (the
/// run's files stay in `dir`).
fn run_in(name: &str, dir: &Path) -> Value {
    let child = Command::new(lab())
        .args(["run", name, "-o"])
        .arg(dir)
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        namespaces_of(pid),
        Vec::<String>::new(),
        "{name}: left namespaces"
    );
    let m: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(name).join("manifest.json"))
            .unwrap_or_else(|e| panic!("{name}: no manifest ({e}), exit {:?}", out.status)),
    )
    .unwrap();
    for f in m["files"].as_array().unwrap() {
        let p = dir.join(name).join(f.as_str().unwrap());
        assert!(p.exists(), "{name}: {} listed but missing", p.display());
    }
    assert!(
        out.status.success(),
        "{name}: checks failed: {:#}",
        m["checks"]
    );
    // Host bundles (when the tcpwhy binary was built next to the lab): both snapshots,
    // and the state files replaced with the workload's (src/bundle.rs).
    for side in ["client", "server"] {
        let b = dir
            .join(name)
            .join(format!("truth/bundle-{side}/manifest.json"));
        if let Ok(text) = std::fs::read_to_string(&b) {
            let bm: Value = serde_json::from_str(&text).unwrap();
            assert!(
                bm["after"]["time_unix"].is_f64(),
                "{name}: {side} bundle without after/"
            );
            let note = bm["inputs"]["tcp_metrics.txt"]["note"]
                .as_str()
                .unwrap_or("");
            assert!(
                note.starts_with("tcpwhy-lab:"),
                "{name}: {side} tcp_metrics note {note:?}"
            );
        }
    }
    m
}

fn nums(v: &Value) -> Vec<f64> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default()
}

fn counter(m: &Value, side: &str, name: &str) -> u64 {
    m["nstat_delta"][side][name].as_u64().unwrap_or(0)
}

#[test]
fn new_connection_per_request_pays_handshake_and_slow_start_each_time() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let m = run("new-connection-per-request");
    let k = &m["key_numbers"];
    let rtts = nums(&k["rtt_handshake_ms"]);
    assert_eq!(rtts.len(), 5, "{k:#}");
    // The emulator holds the SYN 12 ms and the SYN/ACK 13 ms at least; a busy machine
    // only adds to it, so the bound is from below (the planned delays are the emulator's
    // tests' business: emulator_netns.rs).
    for r in &rtts {
        assert!(*r >= 25.0 - 0.01, "handshake RTT {r} ms, want ≥ 25");
    }
    let lat = nums(&k["request_latency_ms"]);
    assert_eq!(lat.len(), 5);
    // Handshake + ≈ 6 rounds of slow start for 741,342 bytes from IW 10.
    assert!(lat.iter().all(|&l| l >= 5.0 * 25.0), "{lat:?}");
    assert_eq!(k["retransmissions"]["server"], 0);
    assert_eq!(k["tcpdump_dropped"]["client"], 0);
    assert_eq!(
        k["max_payload_bytes"]["server"], 1448,
        "offloads must be off"
    );
}

#[test]
fn idle_restart_resets_cubic_but_not_bbr() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let cubic = run("idle-restart-cubic");
    let flights = nums(&cubic["key_numbers"]["scenario"]["server_first_flight_segments"]);
    let before = &cubic["key_numbers"]["scenario"]["max_cwnd_before_each_response"];
    assert_eq!(flights.len(), 4, "{cubic:#}");
    // After 2 s idle (≈ 9 RTOs of 225 ms) the window is back at the initial 10: each later
    // response's first flight, counted in the server's capture before its first ACK came
    // back, is 10 segments (an ss sample of cwnd would depend on when ss got to run).
    for (i, f) in flights.iter().enumerate().skip(1) {
        assert_eq!(*f, 10.0, "cubic response {i}: first flight {f} after idle");
        // Above 2 × IW before the gap (how far above depends on when HyStart left slow
        // start, which a busy machine's jitter moves: 50 seen under load, 300+ idle).
        let b = before[i].as_f64().unwrap_or(0.0);
        assert!(b > 20.0, "cubic response {i}: window before idle {b}");
    }
    let resp = nums(&cubic["key_numbers"]["response_ms"]);
    assert!(resp[1..].iter().all(|&r| r >= 4.0 * 25.0), "cubic {resp:?}");

    let bbr = run("idle-restart-bbr");
    let b = nums(&bbr["key_numbers"]["scenario"]["cwnd_first_sample_per_response"]);
    // cwnd only grows during a loss-free response, so a late ss sample is no smaller; no
    // bound on the response times (from above they would measure the machine).
    // Above 4 × IW, the scenario's own check (BBR's window follows the bandwidth it
    // measured, which a busy machine lowers).
    for (i, w) in b.iter().enumerate().skip(1) {
        assert!(
            *w > 40.0,
            "bbr response {i}: cwnd {w} after idle, want no drop"
        );
    }
}

#[test]
fn nagle_meets_delayed_ack_without_nodelay_only() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let m = run("nagle-delayed-ack");
    let w = nums(&m["key_numbers"]["echo_max_recv_wait_ms"]);
    assert_eq!(w.len(), 5);
    // Linux's minimum delayed-ACK timer is 40 ms at HZ 250.
    assert!(w[1..].iter().all(|&x| x >= 30.0), "{w:?}");
    // Nagle: never a small segment out while another is unacknowledged (client capture).
    let k = &m["key_numbers"]["scenario"];
    assert_eq!(k["client_data_sent_with_data_unacked"], 0, "{k:#}");
    // With TCP_NODELAY the writes leave back to back. Not "no recv waits ≥ 20 ms": a busy
    // machine wakes a reader that late (25 ms seen beside two busy loops).
    let m = run("nagle-nodelay");
    let k = &m["key_numbers"]["scenario"];
    let n = k["client_data_sent_with_data_unacked"].as_u64().unwrap();
    assert!(n >= 1, "{k:#}");
}

#[test]
fn loss_recovery_tail_probe_and_rto() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let m = run("tail-loss");
    assert!(
        counter(&m, "server", "TCPLossProbes") >= 1,
        "{:#}",
        m["nstat_delta"]
    );
    assert_eq!(counter(&m, "server", "TCPTimeouts"), 0);
    let m = run("rto");
    assert!(
        counter(&m, "server", "TCPTimeouts") >= 2,
        "{:#}",
        m["nstat_delta"]
    );
    let resp = nums(&m["key_numbers"]["response_ms"]);
    assert!(resp[0] >= 600.0, "{resp:?}");
}

#[test]
fn dropped_syn_costs_the_initial_rto() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let m = run("syn-drop");
    let c = nums(&m["key_numbers"]["connect_ms"]);
    assert!(c[0] >= 1000.0, "{c:?}");
    assert!(counter(&m, "client", "TCPSynRetrans") >= 1);
    assert_eq!(m["key_numbers"]["syn_retransmissions"], 1);
}

#[test]
fn reordering_and_rtt_step_cause_spurious_retransmissions() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let m = run("reordering");
    let evidence = counter(&m, "server", "TCPSACKReorder") + counter(&m, "server", "TCPDSACKRecv");
    assert!(evidence >= 1, "{:#}", m["nstat_delta"]["server"]);
    let m = run("rtt-step");
    let spurious = counter(&m, "server", "TCPDSACKRecv") + counter(&m, "server", "TCPSpuriousRTOs");
    assert!(spurious >= 1, "{:#}", m["nstat_delta"]["server"]);
}

#[test]
fn cached_ssthresh_is_used_by_the_next_connection() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let m = run("cached-ssthresh");
    let s = &m["key_numbers"]["scenario"];
    let cached = s["tcp_metrics_ssthresh"].as_u64().expect("ssthresh cached");
    assert!(cached < 100, "cached ssthresh {cached}");
    // The second connection starts with the ssthresh cached when the first closed, as
    // tcp_info shows it at accept (before any byte of its own: nothing else set it); the
    // cache read after the run is the second's own, stored when it closed, so the two
    // may differ, both small.
    let second = s["second_connection_ssthresh_at_accept"]
        .as_u64()
        .expect("second connection's ssthresh at accept");
    assert!(
        second < 100,
        "second connection started with ssthresh {second}"
    );
}

#[test]
fn window_limits_no_scaling_and_zero_window() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let m = run("no-window-scaling");
    let tp = m["key_numbers"]["throughput_bytes_per_s"].as_f64().unwrap();
    assert!(
        tp <= 65_535.0 / 0.150 * 1.1,
        "{tp} B/s above 64 KiB per 150 ms"
    );
    assert!(
        m["key_numbers"]["scenario"]["server_max_snd_wnd"]
            .as_f64()
            .unwrap()
            <= 65_535.0
    );
    let m = run("slow-reader");
    assert!(counter(&m, "client", "TCPToZeroWindowAdv") >= 1);
}

#[test]
fn interrupted_run_leaves_nothing_behind() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    // A leftover of a "crashed" run: a namespace named after a pid that does not exist.
    let dead = (900_000..4_000_000u32)
        .find(|p| !Path::new(&format!("/proc/{p}")).exists())
        .unwrap();
    let fake = format!("twl{dead}-rtr");
    assert!(Command::new("ip")
        .args(["netns", "add", &fake])
        .status()
        .unwrap()
        .success());

    let dir = out_dir("interrupt");
    let mut child = Command::new(lab())
        .args(["run", "idle-restart-off", "-o"])
        .arg(&dir)
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until it is mid-run: its three namespaces exist and both workload ends run in
    // them (the run lasts ≥ 6 s: 4 requests 2 s apart). Polled, not a fixed sleep, so a
    // busy machine only makes it wait longer; the 120 s limit only stops a hung run.
    let inner_pids = |ns: &[String]| -> Vec<u32> {
        let mut pids = Vec::new();
        for n in ns {
            let o = Command::new("ip")
                .args(["netns", "pids", n])
                .output()
                .unwrap();
            pids.extend(
                String::from_utf8_lossy(&o.stdout)
                    .split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
        pids
    };
    let t = Instant::now();
    let (ns, inner) = loop {
        let ns = namespaces_of(pid);
        // One snapshot per namespace: the client and the server namespaces each run a
        // workload process.
        let per_ns: Vec<(String, Vec<u32>)> = ns
            .iter()
            .map(|n| (n.clone(), inner_pids(std::slice::from_ref(n))))
            .collect();
        let ends = per_ns
            .iter()
            .filter(|(n, p)| !n.ends_with("-rtr") && !p.is_empty())
            .count();
        if ns.len() == 3 && ends >= 2 {
            break (
                ns,
                per_ns.into_iter().flat_map(|(_, p)| p).collect::<Vec<_>>(),
            );
        }
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "not mid-run: {ns:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(ns.len(), 3, "{ns:?}");
    assert!(!inner.is_empty());
    // SAFETY: kill(2) on our own child.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGTERM) }, 0);
    let st = child.wait().unwrap();
    assert!(!st.success());
    assert_eq!(namespaces_of(pid), Vec::<String>::new());
    for p in inner {
        let alive = std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
            !s.rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
        });
        assert!(!alive, "process {p} survived the interrupted run");
    }
    let removed = namespaces_of(dead).is_empty();
    let _ = Command::new("ip").args(["netns", "del", &fake]).output();
    assert!(removed, "leftover {fake} not removed at start");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn delayed_ack_holds_a_full_one_segment_window_after_idle() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let m = run("delayed-ack-cwnd");
    let s = &m["key_numbers"]["scenario"];
    let resp = nums(&s["response_ms"]);
    assert_eq!(resp.len(), 4, "{s:#}");
    // Later requests wait for the 40 ms timer once (from below: at any speed). Request 1,
    // early in the connection, is ACKed at once (quick-ACK mode, ≈ 2 RTT), but that is an
    // upper bound on time, which a busy machine breaks (72 ms seen for < 70): not asserted.
    assert!(
        resp[1..].iter().all(|&r| r >= 2.0 * 25.0 + 30.0),
        "{resp:?}"
    );
    // In the client's capture: an ACK per later request came ≥ RTT + 30 ms after its data
    // segment (more only if the machine was busy), and the server's delayed-ACK timer
    // fired for each.
    assert!(s["acks_delayed"].as_u64().unwrap() >= 3, "{s:#}");
    assert!(counter(&m, "server", "DelayedACKs") >= 3);
    assert_eq!(m["key_numbers"]["retransmissions"]["client"], 0);
}

#[test]
fn app_limited_sender_moves_at_the_application_rate() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let m = run("app-limited");
    let s = &m["key_numbers"]["scenario"];
    let tp = s["throughput_bytes_per_s"].as_f64().unwrap();
    let app = 16384.0 / 0.050;
    // At most the application's rate (a late writer only lowers it); tcp_info's busy
    // chrono says the application, not the path, set the pace: each 16 KiB write is
    // acknowledged about one 25 ms RTT after it leaves, and the socket then has nothing
    // to send or in flight until the next write, 50 ms after the last.
    assert!(tp > 0.0 && tp <= 1.15 * app, "{tp} B/s for {app}");
    let (idle, span) = (
        s["server_idle_in_transfer_ms"].as_f64().unwrap(),
        s["server_transfer_span_ms"].as_f64().unwrap(),
    );
    assert!(idle >= 20.0 && idle >= 0.1 * span, "{idle} of {span} ms");
    assert_eq!(m["key_numbers"]["retransmissions"]["server"], 0);
}

#[test]
fn one_lost_packet_is_fast_retransmitted_without_rto() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let m = run("fast-retransmit");
    assert!(
        counter(&m, "server", "TCPFastRetrans") >= 1,
        "{:#}",
        m["nstat_delta"]
    );
    assert!(counter(&m, "server", "TcpExtTCPSackRecovery") >= 1);
    assert_eq!(counter(&m, "server", "TCPTimeouts"), 0);
    assert_eq!(counter(&m, "server", "TcpRetransSegs"), 1);
}

/// Issue 12, class 8. With a 64-byte snaplen the SYN's options stop after MSS and
/// SACK-permitted: window scaling was negotiated (the kernel's ss says so) but the
/// capture cannot show it. Read as "not negotiated", every window looked 128 times
/// smaller than it was and a clean transfer was called receive-window limited.
#[test]
fn snaplen_64_cut_syn_options_are_unknown_not_absent() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let (m, runs) = run_analyzed("snaplen-64");
    assert_eq!(m["parameters"]["snaplen"], 64, "{:#}", m["parameters"]);
    assert_eq!(runs.len(), 2);
    named_none_of(
        "snaplen-64",
        &runs,
        &[
            "rwnd.limited",
            "rwnd.not_growing",
            "rwnd.no_window_scaling",
            "rwnd.zero_window",
            "sndbuf.limited",
        ],
    );
}

/// Runs of sndbuf-capped made at most until one names sndbuf.limited (below). Not a
/// detection threshold: a test's retry count, from the miss rate measured on 6.18.44
/// (5 of 42 runs named nothing, 12 %; crates/lab/README.md) and a bound on how often the
/// test may fail for it: 0.12³ ≈ 1 run in 600, where two runs would fail 1 in 70. It
/// belongs to this scenario alone (150 ms, TSO off, snaplen 128); the detector's gap it
/// stands for is the README's, not a rule of tcpwhy's.
const SNDBUF_ATTEMPTS: u32 = 3;

/// Issue 12, class 3. No ssthresh was cached (the scenarios' own checks: tcp_metrics
/// empty, no ssthresh in the first ss sample), so slow_start.early_exit must not be
/// named: (a) the send buffer's cap, not cwnd, held the flight (sndbuf.limited is the
/// finding); (b) CUBIC's HyStart ended slow start at 1 ms RTT with TSO. Before the fix
/// (b) named it in one of two runs (the server's capture, 24.6 ms) and (a) when the
/// last full round happened to be near the first flat one; the judge's unit tests in
/// early_exit.rs hold those shapes fixed.
#[test]
fn early_exit_needs_a_cwnd_limited_flight_and_no_hystart() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    // sndbuf.limited is how this test knows a run reproduced the capped flight. On
    // 6.18.44 the kernel often lets the write queue run past the buffer (sk_wmem_queued
    // up to 7× sk_sndbuf, flights of up to 204 segments under the 64 KB buffer, the 2 MB
    // in 3.8–6.8 s against 7.5–8.6 s when it holds). tcpwhy names most such runs but
    // named nothing on 5 of 42 (tcp_info sndbuf_limited 604 and 156 ms on two of them):
    // a recall gap, crates/lab/README.md. A run without it is made again, up to
    // SNDBUF_ATTEMPTS times, and kept for a look if none names it; the must-nots hold on
    // every run.
    let mut missed = Vec::new();
    for attempt in 1..=SNDBUF_ATTEMPTS {
        let (_, runs) = run_analyzed_in("sndbuf-capped", &format!("sndbuf-capped-{attempt}"));
        assert_eq!(runs.len(), 2);
        named_none_of(
            "sndbuf-capped",
            &runs,
            &["slow_start.early_exit", "rwnd.limited"],
        );
        let unnamed: Vec<&Analyzed> = runs
            .iter()
            .filter(|a| a.findings.iter().all(|f| f.id.as_str() != "sndbuf.limited"))
            .collect();
        if unnamed.is_empty() {
            break;
        }
        for a in unnamed {
            eprintln!(
                "sndbuf-capped, run {attempt}: no sndbuf.limited at the {} ({} connections; \
                 write queue up to {:.2}× the send buffer): {:?}",
                a.side,
                a.connections,
                a.kernel_wmem_over_sndbuf,
                a.findings.iter().map(|f| f.id.as_str()).collect::<Vec<_>>()
            );
        }
        missed.push(runs);
    }
    assert!(
        missed.len() < SNDBUF_ATTEMPTS as usize,
        "sndbuf-capped: sndbuf.limited named in none of {SNDBUF_ATTEMPTS} runs"
    );
    let (_, runs) = run_analyzed("hystart-1ms");
    named_none_of(
        "hystart-1ms",
        &runs,
        &["slow_start.early_exit", "rwnd.limited"],
    );
}

/// Issue 12, class 6. Keep-alive timeouts shorter than the old 1 s floor: the server's
/// 1 s timeout (its FIN 965–984 ms after the last data on the wire, the timer running
/// from the write's return) and a client pool's 0.7 s at 1 ms RTT. The same idle time
/// before every close is the signal; both must be named from both ends, with the closer
/// right. Before the fix neither was named (only connection.short_lived).
#[test]
fn idle_close_is_the_repeated_idle_time_not_a_floor() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    for (name, closer) in [
        ("idle-close-1s", "server's FIN"),
        ("idle-close-client", "client's FIN"),
    ] {
        let (m, runs) = run_analyzed(name);
        assert_eq!(m["passed"], true, "{name}: {:#}", m["checks"]);
        assert_eq!(runs.len(), 2);
        for a in &runs {
            let f = a
                .findings
                .iter()
                .find(|f| f.id.as_str() == "connection.idle_close")
                .unwrap_or_else(|| {
                    panic!(
                        "{name} {}: {:?}",
                        a.side,
                        a.findings.iter().map(|f| f.id.as_str()).collect::<Vec<_>>()
                    )
                });
            // Every request after the first reconnected because of a close.
            let n = m["parameters"]["workload"]["kind"]["requests"]
                .as_u64()
                .unwrap();
            assert_eq!(f.connections, n - 1, "{name} {}", a.side);
            assert!(
                f.evidence.iter().any(|e| e.note.contains(closer)),
                "{name} {}: {:#?}",
                a.side,
                f.evidence
            );
        }
    }
}

/// Issue 12, class 7. The path's RTT rose from 1 ms to 150 ms between the second and
/// the third request; the server answered each at once (its think times < 5 ms, the
/// scenario's check). Before the fix the client's capture priced the third request's
/// wait as 153 ms of server think time (the 1.18 ms sample of a second earlier taken
/// off); the RTT sample nearest to the request (within its response) must be used.
#[test]
fn think_time_takes_off_the_rtt_of_the_moment() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let (m, runs) = run_analyzed("rtt-rise");
    assert_eq!(m["passed"], true, "rtt-rise: {:#}", m["checks"]);
    assert_eq!(runs.len(), 2);
    named_none_of("rtt-rise", &runs, &["app.server_think_time"]);
}

/// Issue 12: a response of a round or two after an idle gap. The first response's 18
/// segments leave as rounds of 10 and 8, so no round shows the window slow start grew
/// to (≈ 20 segments); the restarted second response goes out as 10 + 8 again where one
/// round would have done. Named from both ends.
#[test]
fn restart_after_idle_on_short_responses() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let (m, runs) = run_analyzed("idle-restart-short");
    assert_eq!(m["passed"], true, "idle-restart-short: {:#}", m["checks"]);
    assert_eq!(runs.len(), 2);
    for a in &runs {
        assert!(
            a.findings
                .iter()
                .any(|f| f.id.as_str() == "slow_start.restart_after_idle"),
            "idle-restart-short {}: {:?}",
            a.side,
            a.findings.iter().map(|f| f.id.as_str()).collect::<Vec<_>>()
        );
    }
}
