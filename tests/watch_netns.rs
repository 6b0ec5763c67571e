//! Issue 15: `tcpwhy watch` on real kernel sockets. Two network namespaces joined by a
//! veth pair (10.231.0.1 ↔ 10.231.0.2), a python3 sender in the first and receiver in
//! the second, `tcpwhy watch --netns … --format json` on one side and `ss -tinmO` read
//! right after it in the same namespace. Each case asserts the mechanism the kernel's
//! own counters prove (the chrono time grew, the retransmission counters, cwnd after
//! idle) and that what watch reported agrees with ss at the same moment. Every case is
//! skipped with a note without root, `ip netns`, iptables or python3.

mod common;

use common::netns::{self, have, run};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{ChildStdout, Command, Stdio};
use std::sync::RwLock;
use std::time::{Duration, Instant};
use tcpwhy_hoststate::{parse_ss, SsSocket};

/// The pair's /24 (tests/common/netns.rs gives `.1` to the sender's end, `.2` to the
/// receiver's).
const SUBNET: &str = "10.231.0";
const SENDER: &str = "10.231.0.1";
const RECEIVER: &str = "10.231.0.2";

/// The workload: `server PORT RCVBUF CHUNK SLEEP_MS` accepts one connection (with
/// SO_RCVBUF set before listen when RCVBUF > 0, so the accepted socket has it) and reads
/// CHUNK bytes every SLEEP_MS; `client HOST PORT STEPS` connects and runs STEPS
/// (`bulk:N` writes N bytes, `send:N` one write of N bytes, `sleep:S`), printing a line
/// per step done, then holds the connection until killed.
const WORKLOAD: &str = r#"
import socket, sys, time
def server(port, rcvbuf, chunk, sleep_ms, bind="0.0.0.0"):
    s = socket.socket(socket.AF_INET6 if ":" in bind else socket.AF_INET)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if rcvbuf > 0:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.bind((bind, port)); s.listen(1)
    print("listening", flush=True)
    c, _ = s.accept()
    while True:
        d = c.recv(chunk)
        if not d:
            time.sleep(3600)
        if sleep_ms:
            time.sleep(sleep_ms / 1000)
def client(host, port, steps):
    # CUBIC, as most senders run (set per socket: a namespace default may only be one
    # of tcp_allowed_congestion_control); this machine's default may be BBR, which has
    # its own cong_control and never restarts after idle.
    c = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
    c.connect((host, port))
    print("connected", flush=True)
    for step in steps.split(","):
        kind, n = step.split(":")
        if kind == "bulk":
            left, buf = int(n), b"x" * 65536
            while left > 0:
                left -= c.send(buf[:min(left, len(buf))])
        elif kind == "send":
            c.sendall(b"y" * int(n))
        else:
            time.sleep(float(n))
        print("done", step, flush=True)
    time.sleep(3600)
def hold(nbytes):
    # Loopback pair whose receiver never reads, buffers forced past rmem_max/wmem_max
    # (SO_RCVBUFFORCE 33, SO_SNDBUFFORCE 32; root): TCP memory held by "other sockets".
    l = socket.socket()
    l.setsockopt(socket.SOL_SOCKET, 33, nbytes)
    l.bind(("127.0.0.1", 0)); l.listen(1)
    c = socket.socket()
    c.setsockopt(socket.SOL_SOCKET, 32, nbytes)
    c.connect(l.getsockname())
    a, _ = l.accept()
    c.setblocking(False)
    sent, buf, idle = 0, b"h" * 65536, 0
    while idle < 20:
        try:
            sent += c.send(buf); idle = 0
        except BlockingIOError:
            idle += 1; time.sleep(0.005)
    print("held", sent, flush=True)
    time.sleep(3600)
if sys.argv[1] == "hold":
    hold(int(sys.argv[2]))
elif sys.argv[1] == "server":
    server(*map(int, sys.argv[2:6]), *sys.argv[6:7])
else:
    client(sys.argv[2], int(sys.argv[3]), sys.argv[4])
"#;

fn ok(cmd: &str, args: &[&str]) -> String {
    let o = run(cmd, args);
    assert!(
        o.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn usable() -> Result<(), String> {
    netns::root_and_netns()?;
    for (cmd, arg) in [
        ("ss", "-V"),
        ("iptables", "--version"),
        ("python3", "--version"),
    ] {
        if !have(cmd, arg) {
            return Err(format!("no {cmd}"));
        }
    }
    Ok(())
}

/// The memory-pressure case lowers the machine-wide tcp_mem: it runs alone (write
/// lock), the other cases beside each other (read locks).
static PRESSURE: RwLock<()> = RwLock::new(());

macro_rules! require_lab {
    () => {
        if let Err(why) = usable() {
            eprintln!("skipped: {why} (watch_netns needs root, ip netns, ss, iptables, python3)");
            return;
        }
    };
}

fn shared() -> std::sync::RwLockReadGuard<'static, ()> {
    PRESSURE.read().unwrap_or_else(|e| e.into_inner())
}

/// The namespace pair (tests/common/netns.rs: veth `u0`, [`SENDER`] and [`RECEIVER`];
/// deleted with the processes started in it on every exit, a failed assertion
/// included) and the workload script.
struct Lab {
    pair: netns::Lab,
    script: tempfile::NamedTempFile,
}

impl Lab {
    fn new(case: &str) -> Lab {
        let mut script = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut script, WORKLOAD.as_bytes()).unwrap();
        Lab {
            pair: netns::Lab::new("tww", case, SUBNET),
            script,
        }
    }

    fn sender(&self) -> &str {
        &self.pair.ns[0]
    }

    fn receiver(&self) -> &str {
        &self.pair.ns[1]
    }

    fn exec(&self, ns: &str, cmd: &[&str]) -> String {
        let mut args = vec!["netns", "exec", ns];
        args.extend_from_slice(cmd);
        ok("ip", &args)
    }

    /// Starts the workload in `ns` and waits for its first line ("listening" /
    /// "connected"); returns the rest of its output.
    fn spawn(&mut self, ns: &str, args: &[&str]) -> BufReader<ChildStdout> {
        let script = self.script.path().to_str().unwrap().to_string();
        let mut child = Command::new("ip")
            .args(["netns", "exec", ns, "python3", "-u", &script])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        self.pair.children.push(child);
        let mut first = String::new();
        out.read_line(&mut first).unwrap();
        assert!(!first.is_empty(), "workload {args:?} ended before starting");
        out
    }

    /// `tcpwhy watch --netns NS --format json` with these options; its JSON lines.
    fn watch(&self, ns: &str, opts: &[&str]) -> Vec<Value> {
        let o = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
            .args(["watch", "--netns", ns, "--format", "json"])
            .args(opts)
            .output()
            .unwrap();
        assert!(
            o.status.code().is_some_and(|c| c == 0 || c == 1),
            "watch: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    /// `ss -tinmO` in `ns`, the socket whose peer is `peer`.
    fn ss(&self, ns: &str, peer: &str) -> SsSocket {
        let text = self.exec(ns, &["ss", "-tinmO", "dst", peer]);
        let parsed = parse_ss(&text, "ss");
        let socks: Vec<SsSocket> = parsed.value.sockets().cloned().collect();
        assert_eq!(socks.len(), 1, "ss {peer}: {text}");
        socks.into_iter().next().unwrap()
    }
}

fn findings<'a>(lines: &'a [Value], id: &str, remote: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "finding" && l["id"] == id && l["remote"] == remote)
        .collect()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn watch_names_rwnd_limited_for_a_small_slow_receive_buffer_as_ss_counts_it() {
    require_lab!();
    let _shared = shared();
    let mut lab = Lab::new("rw");
    let (snd, rcv) = (lab.sender().to_string(), lab.receiver().to_string());
    // 4 KB receive buffer, 1 KB read every 20 ms: the sender's window stays full.
    lab.spawn(&rcv, &["server", "5001", "4096", "1024", "20"]);
    lab.spawn(&snd, &["client", RECEIVER, "5001", "bulk:1000000000"]);
    std::thread::sleep(Duration::from_millis(300));
    let peer = format!("{RECEIVER}:5001");
    let lines = lab.watch(
        &snd,
        &[
            "--count",
            "3",
            "--interval",
            "300ms",
            "--filter",
            "port 5001",
        ],
    );
    let ss = lab.ss(&snd, &peer);
    let rw = findings(&lines, "rwnd.limited", &peer);
    assert_eq!(
        rw.len(),
        3,
        "one rwnd.limited line per interval: {lines:#?}"
    );
    for l in &rw {
        let share = l["share"].as_f64().unwrap();
        assert!(share > 0.0 && share <= 1.0, "{l}");
        assert!(u(&l["evidence"]["rwnd_limited_us_delta"]) > 0);
    }
    let last = rw.last().unwrap();
    let t = &last["tcp_info"];
    // The same counters, a few ms apart: ss's rwnd_limited (ms) is at least watch's and
    // grew by no more than the time between the two reads.
    let watch_ms = u(&t["rwnd_limited_us"]) / 1000;
    let ss_ms = ss.info.rwnd_limited_ms.expect("ss shows rwnd_limited");
    assert!(
        ss_ms >= watch_ms && ss_ms - watch_ms < 1000,
        "ss rwnd_limited {ss_ms} ms, watch {watch_ms} ms"
    );
    // Window-limited, not congestion-limited: cwnd does not move between the reads.
    assert_eq!(ss.info.cwnd, Some(u(&t["snd_cwnd"]) as u32), "cwnd: {last}");
    assert_eq!(ss.info.mss, Some(u(&t["snd_mss"]) as u32));
    let summary = lines.last().unwrap();
    assert_eq!(summary["type"], "summary");
    assert!(summary["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["id"] == "rwnd.limited" && f["sockets"] == 1));
    eprintln!(
        "rwnd: watch {} | ss rwnd_limited {ss_ms} ms cwnd {:?} snd_wnd {:?}",
        last["note"], ss.info.cwnd, ss.info.snd_wnd
    );
}

#[test]
fn watch_reads_ipv6_sockets_too() {
    require_lab!();
    let _shared = shared();
    let mut lab = Lab::new("v6");
    let ns = lab.sender().to_string();
    lab.spawn(&ns, &["server", "5005", "4096", "1024", "20", "::1"]);
    lab.spawn(&ns, &["client", "::1", "5005", "bulk:1000000000"]);
    std::thread::sleep(Duration::from_millis(300));
    let lines = lab.watch(
        &ns,
        &[
            "--count",
            "2",
            "--interval",
            "300ms",
            "--filter",
            "port 5005",
        ],
    );
    let ss = lab.ss(&ns, "[::1]:5005");
    let rw = findings(&lines, "rwnd.limited", "[::1]:5005");
    assert_eq!(rw.len(), 2, "{lines:#?}");
    let t = &rw[1]["tcp_info"];
    assert_eq!(ss.info.cwnd, Some(u(&t["snd_cwnd"]) as u32));
    assert_eq!(ss.info.mss, Some(u(&t["snd_mss"]) as u32));
}

#[test]
fn watch_names_restart_after_idle_when_cwnd_falls_after_an_rto_of_idle() {
    require_lab!();
    let _shared = shared();
    let mut lab = Lab::new("ri");
    let (snd, rcv) = (lab.sender().to_string(), lab.receiver().to_string());
    lab.exec(
        &snd,
        &["sysctl", "-qw", "net.ipv4.tcp_slow_start_after_idle=1"],
    );
    lab.spawn(&rcv, &["server", "5002", "0", "65536", "0"]);
    let peer = format!("{RECEIVER}:5002");
    // Watch from before the transfer: bulk (cwnd grows), 1.5 s idle (≫ the 200 ms
    // minimum RTO), one 20 KB write, then nothing.
    let mut client = lab.spawn(
        &snd,
        &[
            "client",
            RECEIVER,
            "5002",
            "sleep:0.6,bulk:8000000,sleep:1.5,send:20000",
        ],
    );
    let lines = lab.watch(
        &snd,
        &[
            "--count",
            "14",
            "--interval",
            "250ms",
            "--filter",
            "port 5002",
        ],
    );
    let mut done = String::new();
    for _ in 0..4 {
        client.read_line(&mut done).unwrap();
    }
    assert!(done.contains("send:20000"), "workload: {done}");
    let ss = lab.ss(&snd, &peer);
    let rs = findings(&lines, "slow_start.restart_after_idle", &peer);
    assert_eq!(rs.len(), 1, "one restart: {lines:#?}");
    let l = rs[0];
    let ev = &l["evidence"];
    assert!(u(&ev["idle_ms"]) * 1000 >= u(&ev["rto_us"]), "{l}");
    assert!(u(&ev["snd_cwnd"]) < u(&ev["cwnd_before"]), "{l}");
    // tcp_cwnd_restart: never below min(IW, cwnd); the idle was long enough to halve
    // down to it.
    assert!(u(&ev["snd_cwnd"]) >= 10, "{l}");
    // Nothing was sent after the 20 KB, so ss shows the cwnd and ssthresh watch saw.
    let t = &l["tcp_info"];
    assert_eq!(ss.info.cwnd, Some(u(&t["snd_cwnd"]) as u32), "{l}");
    assert_eq!(
        ss.info.ssthresh,
        t["snd_ssthresh"].as_u64().map(|s| s as u32),
        "{l}"
    );
    assert_eq!(
        ss.info.retrans_total.unwrap_or(0),
        0,
        "no loss to explain the fall"
    );
    eprintln!(
        "restart: watch {} | ss cwnd {:?} ssthresh {:?} lastsnd {:?} ms",
        l["note"], ss.info.cwnd, ss.info.ssthresh, ss.info.lastsnd_ms
    );
    // The same transfer with the sysctl off: no restart is named.
    drop(lab);
    let mut lab = Lab::new("rn");
    let (snd, rcv) = (lab.sender().to_string(), lab.receiver().to_string());
    lab.exec(
        &snd,
        &["sysctl", "-qw", "net.ipv4.tcp_slow_start_after_idle=0"],
    );
    lab.spawn(&rcv, &["server", "5002", "0", "65536", "0"]);
    lab.spawn(
        &snd,
        &[
            "client",
            RECEIVER,
            "5002",
            "sleep:0.6,bulk:8000000,sleep:1.5,send:20000",
        ],
    );
    let lines = lab.watch(
        &snd,
        &[
            "--count",
            "14",
            "--interval",
            "250ms",
            "--filter",
            "port 5002",
        ],
    );
    assert!(findings(&lines, "slow_start.restart_after_idle", &peer).is_empty());
}

#[test]
fn watch_names_retransmissions_by_kind_as_the_namespace_counters_count_them() {
    require_lab!();
    let _shared = shared();
    let mut lab = Lab::new("lo");
    let (snd, rcv) = (lab.sender().to_string(), lab.receiver().to_string());
    // Every 40th full-sized data packet into the receiver is dropped: real losses,
    // the same every run.
    lab.exec(
        &rcv,
        &[
            "iptables",
            "-A",
            "INPUT",
            "-p",
            "tcp",
            "--dport",
            "5003",
            "-m",
            "length",
            "--length",
            "1000:65535",
            "-m",
            "statistic",
            "--mode",
            "nth",
            "--every",
            "40",
            "--packet",
            "0",
            "-j",
            "DROP",
        ],
    );
    lab.spawn(&rcv, &["server", "5003", "0", "65536", "0"]);
    let peer = format!("{RECEIVER}:5003");
    let mut client = lab.spawn(
        &snd,
        &["client", RECEIVER, "5003", "sleep:0.5,bulk:4000000"],
    );
    let lines = lab.watch(
        &snd,
        &[
            "--count",
            "8",
            "--interval",
            "250ms",
            "--filter",
            "port 5003",
        ],
    );
    let mut done = String::new();
    for _ in 0..2 {
        client.read_line(&mut done).unwrap();
    }
    let ss = lab.ss(&snd, &peer);
    let nstat = lab.exec(
        &snd,
        &[
            "nstat",
            "-az",
            "TcpRetransSegs",
            "TcpExtTCPTimeouts",
            "TcpExtTCPFastRetrans",
            "TcpExtTCPLossProbes",
        ],
    );
    let counter = |name: &str| -> u64 {
        nstat
            .lines()
            .find_map(|l| {
                let mut w = l.split_whitespace();
                (w.next() == Some(name)).then(|| w.next()?.parse().ok())?
            })
            .unwrap_or(0)
    };
    let fast = findings(&lines, "loss.fast_retransmit", &peer);
    let rto = findings(&lines, "loss.rto", &peer);
    assert!(!fast.is_empty() || !rto.is_empty(), "{lines:#?}");
    // The namespace is new: its counters are this connection's. A kind is named only
    // when the kernel counted that kind.
    if counter("TcpExtTCPTimeouts") == 0 {
        assert!(rto.is_empty(), "loss.rto without a timeout: {rto:#?}");
    }
    if counter("TcpExtTCPFastRetrans") == 0 {
        assert!(fast.is_empty());
    }
    // The retransmission count watch last saw is ss's (nothing is retransmitted once the
    // transfer is over), and the lines add up to it.
    let all: Vec<&Value> = fast.iter().chain(rto.iter()).copied().collect();
    let last_total = all
        .iter()
        .map(|l| u(&l["tcp_info"]["total_retrans"]))
        .max()
        .unwrap();
    let ss_total = u64::from(ss.info.retrans_total.unwrap_or(0));
    assert_eq!(last_total, ss_total, "watch vs ss retrans total");
    assert_eq!(ss_total, counter("TcpRetransSegs"), "ss vs nstat");
    let spurious: u64 = findings(&lines, "retransmit.spurious", &peer)
        .iter()
        .map(|l| u(&l["evidence"]["dsack_dups_delta"]))
        .sum();
    let lost: u64 = all.iter().map(|l| u(&l["evidence"]["retrans_delta"])).sum();
    assert!(
        lost <= ss_total && lost + spurious >= ss_total,
        "lost {lost} spurious {spurious} total {ss_total}"
    );
    eprintln!(
        "loss: {} fast-retransmit line(s), {} rto line(s), total {ss_total}; nstat {nstat:?}; ss dsack {:?}",
        fast.len(),
        rto.len(),
        ss.info.dsack_dups
    );
}

#[test]
fn watch_counts_intervals_and_exits_with_a_summary_when_nothing_happens() {
    require_lab!();
    let _shared = shared();
    let lab = Lab::new("em");
    let started = Instant::now();
    let lines = lab.watch(lab.sender(), &["--count", "2", "--interval", "100ms"]);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["type"], "summary");
    assert_eq!(lines[0]["samples"], 3);
    // Ctrl-C (SIGINT) ends an unbounded watch with the summary, and the process exits.
    let child = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(["watch", "--netns", lab.sender(), "--interval", "100ms"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    ok("kill", &["-INT", &child.id().to_string()]);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("summary:") && text.contains("no socket lost time"),
        "{text}"
    );
    // A namespace that does not exist is an error with the reason, exit status 2.
    let o = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(["watch", "--netns", "tww-no-such-namespace", "--count", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("ip netns list"));
}

const TCP_MEM: &str = "/proc/sys/net/ipv4/tcp_mem";

/// Puts tcp_mem back as it was, on every exit (a failed assertion included), and checks
/// that it did.
struct RestoreTcpMem(String);

impl Drop for RestoreTcpMem {
    fn drop(&mut self) {
        let _ = std::fs::write(TCP_MEM, &self.0);
        let now = std::fs::read_to_string(TCP_MEM).unwrap_or_default();
        if now != self.0 && !std::thread::panicking() {
            panic!("tcp_mem not restored: {now:?} instead of {:?}", self.0);
        }
    }
}

#[test]
fn watch_names_rwnd_not_growing_when_tcp_memory_pressure_clamps_the_window() {
    require_lab!();
    let _alone = PRESSURE.write().unwrap_or_else(|e| e.into_inner());
    let mut lab = Lab::new("mp");
    let (snd, rcv) = (lab.sender().to_string(), lab.receiver().to_string());
    // An autotuned receiver that reads 16 KB every 2 ms: its queue is often more than
    // half full, where __tcp_select_window clamps rcv_ssthresh under pressure.
    lab.spawn(&rcv, &["server", "5004", "0", "16384", "2"]);
    lab.spawn(&snd, &["client", RECEIVER, "5004", "bulk:1000000000"]);
    std::thread::sleep(Duration::from_millis(300));
    // The kernel compares the machine's counter (sockstat mem) with tcp_mem[1], and each
    // CPU adds to that counter in batches of net.core.mem_pcpu_rsv (256) pages, so on a
    // quiet machine it can read 0 while this transfer runs (crates/lab/src/holder.rs).
    // 16 MB held by a loopback pair keeps it above the lowered threshold in every run.
    lab.spawn(&snd, &["hold", "8388608"]);
    let before = std::fs::read_to_string(TCP_MEM).unwrap();
    let restore = RestoreTcpMem(before.clone());
    let high = before.split_whitespace().nth(2).unwrap().to_string();
    // Pressure from one page on, the hard limit unchanged (nothing fails to allocate):
    // the machine's counter (sockstat mem) is above it for as long as it lasts.
    std::fs::write(TCP_MEM, format!("1 1 {high}")).unwrap();
    let lines = lab.watch(
        &rcv,
        &[
            "--count",
            "3",
            "--interval",
            "300ms",
            "--filter",
            "port 5004",
        ],
    );
    let ss = lab.ss(&rcv, SENDER);
    drop(restore);
    assert_eq!(std::fs::read_to_string(TCP_MEM).unwrap(), before);
    let local = format!("{RECEIVER}:5004");
    let ng: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "finding" && l["id"] == "rwnd.not_growing" && l["local"] == local)
        .collect();
    assert!(!ng.is_empty(), "{lines:#?}");
    for l in &ng {
        let ev = &l["evidence"];
        assert!(u(&ev["rcv_ssthresh"]) <= 4 * u(&ev["advmss"]), "{l}");
        assert_eq!(ev["under_pressure"], 1, "{l}");
        assert!(
            u(&ev["tcp_mem_pages"]) > u(&ev["tcp_mem_pressure_pages"]),
            "{l}"
        );
    }
    // ss, read while the pressure still held, shows the clamped ceiling too.
    let last = ng.last().unwrap();
    let ss_rcv_ssthresh = ss.info.rcv_ssthresh.expect("ss shows rcv_ssthresh");
    let advmss = u(&last["tcp_info"]["advmss"]);
    assert!(
        ss_rcv_ssthresh <= 4 * advmss,
        "ss rcv_ssthresh {ss_rcv_ssthresh}"
    );
    assert_eq!(ss.info.advmss, Some(advmss as u32));
    eprintln!(
        "pressure: watch {} | ss rcv_ssthresh {ss_rcv_ssthresh} advmss {:?} skmem {:?}",
        last["note"], ss.info.advmss, ss.info.skmem
    );
}
