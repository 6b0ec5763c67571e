//! The path emulator with the real kernel: client — router — server namespaces (10.91.x),
//! NFQUEUE in the router's FORWARD chain, the built `tcpwhy-lab emulate` on it. Checks the
//! handshake time through 20 ms each way, a dropped SYN's 1 s retransmission, a dropped data
//! packet recovered by TCP, a dropped tail recovered by a loss probe, and that under 1000
//! packets/s each way verdicts leave in order of due time with nothing lost.
//!
//! Nothing here depends on the machine's speed or load: times are checked from below (the
//! emulator holds a packet at least its delay, the kernel's timers wait at least their
//! timeout), and the rest from the emulator's own log (what it planned and in which order
//! it issued verdicts). How late verdicts leave is measured by `bench/emulator.sh`.
//!
//! Needs root and `ip netns`; without them each test prints a note and passes (CI is root).

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SERVER_PORT: u16 = 8080;
/// Linux's initial RTO (RFC 6298 §2.1: 1 s), which a dropped SYN waits for.
const INITIAL_RTO: Duration = Duration::from_secs(1);

fn usable() -> bool {
    let ok = common::root_and_netns();
    if !ok {
        eprintln!("note: skipped, needs root and `ip netns`");
    }
    ok
}

fn sh(args: &[&str]) {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Three namespaces and an emulator; everything is removed on drop, pass or fail.
struct Lab {
    ns: [String; 3],
    subnet: u8,
    dir: PathBuf,
    emulator: Option<Child>,
}

impl Lab {
    /// `subnet` k gives client 10.91.k.2 and server 10.91.(k+1).2.
    fn new(tag: &str, subnet: u8, path_json: &str) -> Lab {
        let pid = std::process::id();
        let ns = ["c", "r", "s"].map(|r| format!("twemu{pid}{tag}{r}"));
        let dir = std::env::temp_dir().join(format!("twemu-{pid}-{tag}"));
        let mut lab = Lab {
            ns: ns.clone(),
            subnet,
            dir: dir.clone(),
            emulator: None,
        };
        std::fs::create_dir_all(&dir).unwrap();
        let [c, r, s] = &ns;
        let (a, b) = (subnet, subnet + 1);
        for n in &ns {
            sh(&["ip", "netns", "add", n]);
            sh(&["ip", "-n", n, "link", "set", "lo", "up"]);
        }
        sh(&[
            "ip", "link", "add", "vc", "netns", c, "type", "veth", "peer", "name", "vrc", "netns",
            r,
        ]);
        sh(&[
            "ip", "link", "add", "vs", "netns", s, "type", "veth", "peer", "name", "vrs", "netns",
            r,
        ]);
        for (n, dev, addr) in [
            (c, "vc", format!("10.91.{a}.2/24")),
            (r, "vrc", format!("10.91.{a}.1/24")),
            (r, "vrs", format!("10.91.{b}.1/24")),
            (s, "vs", format!("10.91.{b}.2/24")),
        ] {
            sh(&["ip", "-n", n, "addr", "add", &addr, "dev", dev]);
            sh(&["ip", "-n", n, "link", "set", dev, "up"]);
        }
        sh(&[
            "ip",
            "-n",
            c,
            "route",
            "add",
            "default",
            "via",
            &format!("10.91.{a}.1"),
        ]);
        sh(&[
            "ip",
            "-n",
            s,
            "route",
            "add",
            "default",
            "via",
            &format!("10.91.{b}.1"),
        ]);
        sh(&[
            "ip",
            "netns",
            "exec",
            r,
            "sysctl",
            "-qw",
            "net.ipv4.ip_forward=1",
        ]);
        sh(&[
            "ip",
            "netns",
            "exec",
            r,
            "iptables",
            "-A",
            "FORWARD",
            "-p",
            "tcp",
            "-j",
            "NFQUEUE",
            "--queue-num",
            "7",
        ]);

        let config = dir.join("path.json");
        std::fs::write(&config, path_json).unwrap();
        let mut child = Command::new("ip")
            .args([
                "netns",
                "exec",
                r,
                env!("CARGO_BIN_EXE_tcpwhy-lab"),
                "emulate",
            ])
            .args(["--queue", "7", "--config"])
            .arg(&config)
            .arg("--log")
            .arg(lab.log_path())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut ready = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut ready)
            .unwrap();
        lab.emulator = Some(child);
        assert_eq!(ready.trim(), "ready", "emulator did not start");
        lab
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("decisions.jsonl")
    }

    fn server_addr(&self) -> SocketAddr {
        format!("10.91.{}.2:{SERVER_PORT}", self.subnet + 1)
            .parse()
            .unwrap()
    }

    /// Runs `f` on a thread that lives in namespace `which` (0 client, 2 server).
    fn in_ns<T: Send + 'static>(
        &self,
        which: usize,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> std::thread::JoinHandle<T> {
        let path = format!("/run/netns/{}", self.ns[which]);
        std::thread::spawn(move || {
            let ns = std::fs::File::open(&path).unwrap();
            // SAFETY: a valid namespace descriptor; only this thread changes namespace.
            assert_eq!(
                unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) },
                0
            );
            f()
        })
    }

    /// SIGTERM the emulator; returns its exit code and the log's lines.
    fn stop(&mut self) -> (Option<i32>, Vec<serde_json::Value>) {
        let mut child = self.emulator.take().unwrap();
        // SAFETY: our own child's pid (`ip netns exec` execs the emulator in place).
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        let status = child.wait().unwrap();
        let text = std::fs::read_to_string(self.log_path()).unwrap();
        let lines = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (status.code(), lines)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if let Some(mut c) = self.emulator.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        for n in &self.ns {
            let _ = Command::new("ip").args(["netns", "del", n]).output();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn path_json(subnet: u8, to_server: &str, to_client: &str) -> String {
    format!(
        r#"{{"client":"10.91.{subnet}.2","server":"10.91.{}.2","seed":1,
            "to_server":{to_server},"to_client":{to_client}}}"#,
        subnet + 1
    )
}

/// Listens in the server namespace; each connection gets its bytes counted and echoed back
/// only when `echo`.
fn serve(lab: &Lab, echo: bool) -> std::thread::JoinHandle<Vec<u8>> {
    let addr = lab.server_addr();
    let (tx, rx) = std::sync::mpsc::channel();
    let h = lab.in_ns(2, move || {
        let l = TcpListener::bind(addr).unwrap();
        tx.send(()).unwrap();
        let mut received = Vec::new();
        // The test's last connection sends "end" alone.
        for s in l.incoming() {
            let mut s = s.unwrap();
            let mut conn = Vec::new();
            let mut buf = [0u8; 65536];
            loop {
                let n = s.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    break;
                }
                if echo {
                    s.write_all(&buf[..n]).unwrap();
                }
                conn.extend_from_slice(&buf[..n]);
            }
            if conn == b"end" {
                break;
            }
            received.extend_from_slice(&conn);
        }
        received
    });
    rx.recv().unwrap();
    h
}

fn end_server(lab: &Lab) {
    let addr = lab.server_addr();
    lab.in_ns(0, move || {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(b"end").unwrap();
    })
    .join()
    .unwrap();
}

fn connect_times(lab: &Lab, n: usize) -> Vec<Duration> {
    let addr = lab.server_addr();
    lab.in_ns(0, move || {
        (0..n)
            .map(|_| {
                let t = Instant::now();
                let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
                let took = t.elapsed();
                drop(s);
                took
            })
            .collect()
    })
    .join()
    .unwrap()
}

fn rules(lines: &[serde_json::Value]) -> Vec<(String, String, String)> {
    lines
        .iter()
        .filter(|l| l.get("rule").is_some())
        .map(|l| {
            let s = |k: &str| l[k].as_str().unwrap_or_default().to_string();
            (s("dir"), s("flags"), s("rule"))
        })
        .collect()
}

#[test]
fn handshake_through_20ms_each_way_takes_40ms() {
    if !usable() {
        return;
    }
    let mut lab = Lab::new(
        "d",
        10,
        &path_json(10, r#"{"delay_ms":20}"#, r#"{"delay_ms":20}"#),
    );
    let server = serve(&lab, false);
    let times = connect_times(&lab, 3);
    end_server(&lab);
    server.join().unwrap();
    let (code, lines) = lab.stop();
    eprintln!("connect times through 20+20 ms: {times:?}");
    // The SYN and the SYN/ACK are each held 20 ms after the emulator read them: at least
    // 40 ms whatever the load. How much more is lateness (the benchmark's), so no upper
    // bound here; the log shows the plan was exactly 20 ms each way.
    for t in &times {
        assert!(*t >= Duration::from_millis(40), "{times:?}");
    }
    assert_eq!(code, Some(0));
    let handshake: Vec<_> = packets(&lines)
        .into_iter()
        .filter(|l| l["flags"] == "S" || l["flags"] == "SA")
        .collect();
    // Each connection's SYN and SYN/ACK, and those of the closing "end" connection.
    assert_eq!(handshake.len(), 2 * (times.len() + 1));
    for l in &handshake {
        assert_eq!(us(l, "release_us"), us(l, "t_us") + 20_000, "{l}");
        assert!(us(l, "verdict_us") >= us(l, "release_us"), "{l}");
    }
    assert!(lines[0].get("start").is_some());
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(summary["counts"]["dropped_loss"], 0);
    assert_eq!(summary["kernel_queue_dropped"], 0);
    let r = rules(&lines);
    assert!(r.contains(&("to_server".into(), "S".into(), "delay".into())));
    assert!(r.contains(&("to_client".into(), "SA".into(), "delay".into())));
}

#[test]
fn dropped_syn_is_retransmitted_after_the_initial_rto() {
    if !usable() {
        return;
    }
    let mut lab = Lab::new(
        "s",
        20,
        &path_json(20, r#"{"delay_ms":5,"drop_syn":1}"#, r#"{"delay_ms":5}"#),
    );
    let server = serve(&lab, false);
    let times = connect_times(&lab, 1);
    end_server(&lab);
    server.join().unwrap();
    let (code, lines) = lab.stop();
    eprintln!("connect time with the first SYN dropped: {times:?}");
    assert!(times[0] >= INITIAL_RTO, "{times:?}");
    assert_eq!(code, Some(0));
    let r = rules(&lines);
    assert_eq!(r[0], ("to_server".into(), "S".into(), "drop_syn".into()));
    assert_eq!(r[1], ("to_server".into(), "S".into(), "delay".into()));
    // One retransmission was enough: the connection sent two SYNs in all (the next RTO
    // would send a third 3 s after the first; the "end" connection has its own port). No
    // upper bound on the connect time: that would measure the machine.
    let pkts = packets(&lines);
    let first_port = &pkts.iter().find(|l| l["flags"] == "S").unwrap()["sport"];
    let syns = pkts
        .iter()
        .filter(|l| l["flags"] == "S" && l["sport"] == *first_port)
        .count();
    assert_eq!(syns, 2);
    assert_eq!(
        lines.last().unwrap()["summary"]["counts"]["dropped_drop_syn"],
        1
    );
}

#[test]
fn dropped_third_data_packet_is_recovered_and_logged() {
    if !usable() {
        return;
    }
    let mut lab = Lab::new(
        "x",
        30,
        &path_json(
            30,
            r#"{"delay_ms":10,"drop_data":[3]}"#,
            r#"{"delay_ms":10}"#,
        ),
    );
    let server = serve(&lab, false);
    let payload: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let sent = payload.clone();
    let addr = lab.server_addr();
    lab.in_ns(0, move || {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(&sent).unwrap();
    })
    .join()
    .unwrap();
    end_server(&lab);
    let received = server.join().unwrap();
    let (code, lines) = lab.stop();
    assert_eq!(code, Some(0));
    assert!(received == payload, "data corrupted or lost");
    let drops: Vec<_> = lines.iter().filter(|l| l["rule"] == "drop_data").collect();
    assert_eq!(drops.len(), 1);
    assert_eq!(drops[0]["data_index"], 3);
    assert_eq!(drops[0]["dir"], "to_server");
    // The kernel resent those bytes: a later data packet has the dropped one's sequence.
    let seq = &drops[0]["seq"];
    assert!(lines
        .iter()
        .any(|l| l["seq"] == *seq && l["verdict"] == "accept" && l["len"].as_u64() > Some(0)));
}

/// Packet lines of the log (not the start, kernel_drops or summary lines).
fn packets(lines: &[serde_json::Value]) -> Vec<&serde_json::Value> {
    lines.iter().filter(|l| l.get("id").is_some()).collect()
}

fn us(line: &serde_json::Value, key: &str) -> u64 {
    line[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} in {line}"))
}

/// What must hold at any speed: every packet is logged once, none is dropped (by a rule or
/// by the kernel's queue), each held packet's due time is its arrival plus the configured
/// delay, and verdicts leave in order of due time, never before it. How late they leave
/// and how many packets a busy machine manages in 2 s are the benchmark's
/// (`bench/emulator.sh`), not a pass/fail matter.
#[test]
fn a_thousand_writes_per_second_each_way_leave_in_due_order_and_none_is_lost() {
    if !usable() {
        return;
    }
    const DELAY_US: u64 = 20_000;
    const WRITES: u32 = 2000;
    const WRITE_BYTES: usize = 100;
    let mut lab = Lab::new(
        "a",
        40,
        &path_json(40, r#"{"delay_ms":20}"#, r#"{"delay_ms":20}"#),
    );
    let server = serve(&lab, true);
    let addr = lab.server_addr();
    // A 100-byte write every ms for 2 s, echoed: ≈ 1000 data packets/s each way (plus
    // ACKs) when the machine keeps up; fewer, larger packets when it does not.
    let echoed = lab
        .in_ns(0, move || {
            let mut s = TcpStream::connect(addr).unwrap();
            s.set_nodelay(true).unwrap();
            let mut r = s.try_clone().unwrap();
            let reader = std::thread::spawn(move || {
                let mut buf = [0u8; 65536];
                let mut total = 0;
                loop {
                    match r.read(&mut buf) {
                        Ok(0) | Err(_) => return total,
                        Ok(n) => total += n,
                    }
                }
            });
            let start = Instant::now();
            for i in 0..WRITES {
                let next = start + Duration::from_millis(u64::from(i));
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
                s.write_all(&[7u8; WRITE_BYTES]).unwrap();
            }
            s.shutdown(std::net::Shutdown::Write).unwrap();
            reader.join().unwrap()
        })
        .join()
        .unwrap();
    end_server(&lab);
    server.join().unwrap();
    let (code, lines) = lab.stop();
    assert_eq!(code, Some(0));
    assert_eq!(echoed, WRITES as usize * WRITE_BYTES, "bytes echoed back");
    let summary = &lines.last().unwrap()["summary"];
    eprintln!("summary under load: {summary}");
    assert_eq!(summary["kernel_queue_dropped"], 0, "{summary}");
    assert_eq!(summary["kernel_user_dropped"], 0, "{summary}");
    assert_eq!(summary["verdict_errors"], 0, "{summary}");
    let counts = &summary["counts"];
    let n = counts["packets"].as_u64().unwrap();
    assert_eq!(
        counts["accepted"].as_u64().unwrap() + counts["accepted_at_shutdown"].as_u64().unwrap(),
        n,
        "{summary}"
    );

    let pkts = packets(&lines);
    // Every packet logged once: ids 1..=n, each once.
    let mut ids: Vec<u64> = pkts.iter().map(|l| us(l, "id")).collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=n).collect::<Vec<_>>());
    for l in &pkts {
        assert_eq!(l["verdict"], "accept", "{l}");
        // Never released before its due time.
        assert!(us(l, "verdict_us") >= us(l, "release_us"), "{l}");
        // Held packets: due exactly the configured delay after arrival (no jitter, no
        // reordering configured). Those still held at SIGTERM leave at once ("shutdown").
        match l["rule"].as_str() {
            Some("delay") => assert_eq!(us(l, "release_us"), us(l, "t_us") + DELAY_US, "{l}"),
            Some("shutdown") => {}
            _ => panic!("unexpected rule: {l}"),
        }
    }
    // The log is written as verdicts are issued: in order of due time, ties by arrival,
    // and the packets still held at SIGTERM after all of them.
    let held = pkts.iter().take_while(|l| l["rule"] == "delay").count();
    assert!(pkts[held..].iter().all(|l| l["rule"] == "shutdown"));
    let order: Vec<(u64, u64)> = pkts[..held]
        .iter()
        .map(|l| (us(l, "release_us"), us(l, "id")))
        .collect();
    if let Some(w) = order.windows(2).find(|w| w[0] >= w[1]) {
        panic!("verdict for (due, id) {:?} issued before {:?}", w[1], w[0]);
    }
}

#[test]
fn dropped_tail_of_a_response_is_probed_and_recovered() {
    if !usable() {
        return;
    }
    let mut lab = Lab::new(
        "t",
        50,
        &path_json(
            50,
            r#"{"delay_ms":20}"#,
            r#"{"delay_ms":20,"drop_tail":{"gap_ms":10,"bursts":[1]}}"#,
        ),
    );
    const RESPONSE: usize = 10 * 1448;
    let addr = lab.server_addr();
    let (tx, rx) = std::sync::mpsc::channel();
    let server = lab.in_ns(2, move || {
        let l = TcpListener::bind(addr).unwrap();
        tx.send(()).unwrap();
        let (mut s, _) = l.accept().unwrap();
        let mut req = [0u8; 3];
        s.read_exact(&mut req).unwrap();
        s.write_all(&[1u8; RESPONSE]).unwrap();
        // Wait for the client's close so the probe's ACK is not cut short.
        let _ = s.read(&mut req);
    });
    rx.recv().unwrap();
    let got = lab
        .in_ns(0, move || {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(b"GET").unwrap();
            let mut body = vec![0u8; RESPONSE];
            s.read_exact(&mut body).unwrap();
            body.len()
        })
        .join()
        .unwrap();
    server.join().unwrap();
    // The kernel's own word that this was a probe, not an RTO. /proc/net/netstat is per
    // namespace; read directly (nstat would update its per-user history file, which the
    // orchestrator's delta snapshots use).
    let netstat = Command::new("ip")
        .args(["netns", "exec", &lab.ns[2], "cat", "/proc/net/netstat"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let counter = |name: &str| -> Option<u64> {
        // "TcpExt: Name1 Name2 …" followed by "TcpExt: v1 v2 …".
        let mut tcp_ext = netstat.lines().filter(|l| l.starts_with("TcpExt:"));
        let (names, values) = (tcp_ext.next()?, tcp_ext.next()?);
        let at = names.split_whitespace().position(|n| n == name)?;
        values.split_whitespace().nth(at)?.parse().ok()
    };
    let (probes, timeouts) = (counter("TCPLossProbes"), counter("TCPTimeouts"));
    let (code, lines) = lab.stop();
    assert_eq!(code, Some(0));
    assert_eq!(got, RESPONSE);
    eprintln!("server: TCPLossProbes {probes:?}, TCPTimeouts {timeouts:?}");
    assert_eq!(probes, Some(1));
    assert_eq!(timeouts, Some(0));
    let tail: Vec<_> = lines.iter().filter(|l| l["rule"] == "drop_tail").collect();
    assert_eq!(tail.len(), 1, "one tail dropped");
    assert_eq!(
        (&tail[0]["dir"], &tail[0]["burst"]),
        (&"to_client".into(), &1.into())
    );
    // The sender probed: the same sequence number came again, in a burst of its own, with
    // no drop. Only the tail was outstanding when the probe timer was armed, so Linux waited
    // 2 × SRTT (40 ms) + TCP_DELACK_MAX (200 ms) ≈ 280 ms (tcp_schedule_loss_probe).
    let probe = lines
        .iter()
        .find(|l| l["seq"] == tail[0]["seq"] && l["verdict"] == "accept" && l["dir"] == "to_client")
        .expect("tail retransmitted");
    let gap_us = probe["t_us"].as_u64().unwrap() - tail[0]["t_us"].as_u64().unwrap();
    eprintln!("tail loss probe {gap_us} µs after the dropped tail");
    assert!(gap_us >= 40_000, "{gap_us}");
    assert_eq!(probe["burst"], 2);
}
