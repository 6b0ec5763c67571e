//! Issue 15: `tcpwhy analyze -i` on a live veth gives the findings `tcpwhy analyze` gives
//! of the same traffic captured by a tcpdump of its own beside it, frame for frame; and
//! it prints a connection's findings while the capture still runs, once the connection
//! is over. Two network namespaces (10.84.0.0/24); the client writes each message in two
//! small writes without TCP_NODELAY and the server replies only after both, so Nagle
//! holds the second piece until the server's delayed ACK (Linux: TCP_DELACK_MIN, 40 ms).
//! Needs root, `ip netns`, tcpdump and python3; without them it says so and passes.

mod common;

use common::netns::{self, have, Lab};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PORT: &str = "8084";

const SERVER: &str = r#"
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(8)
while True:
    c, _ = s.accept()
    while True:
        a = c.recv(60)
        if not a: break
        b = c.recv(60)
        c.sendall(b'r' * 50)
    c.close()
"#;

/// `rounds` request/responses on one connection, each request in two writes of 60 B.
const CLIENT: &str = r#"
import socket, sys, time
for attempt in range(100):
    try:
        c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10); break
    except OSError:
        time.sleep(0.05)
for i in range(int(sys.argv[3])):
    c.send(b'a' * 60); c.send(b'b' * 60); c.recv(100)
c.close()
"#;

fn usable() -> Result<(), String> {
    netns::root_and_netns()?;
    for (cmd, arg) in [("tcpdump", "--version"), ("python3", "--version")] {
        if !have(cmd, arg) {
            return Err(format!("no {cmd}"));
        }
    }
    Ok(())
}

/// Starts `args` in namespace `ns` with its standard error read line by line until a line
/// contains `ready` (tcpdump's "listening on", tcpwhy's "capturing on").
fn start(ns: &str, args: &[&str], ready: &str) -> (Child, Vec<String>) {
    let mut c = Command::new("ip")
        .args(["netns", "exec", ns])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut seen = Vec::new();
    let mut err = BufReader::new(c.stderr.take().unwrap());
    loop {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            panic!("{args:?} ended before {ready:?}: {seen:?}");
        }
        let ok = line.contains(ready);
        seen.push(line);
        if ok {
            break;
        }
    }
    // Keep draining its standard error so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in err.lines() {});
    (c, seen)
}

/// A process stopped (killed) and reaped if the test ends before it does, a failed
/// assertion included: a namespace's deletion does not end the processes in it.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn client(lab: &Lab, rounds: u32) {
    lab.exec(
        &lab.ns[0],
        &[
            "python3",
            "-c",
            CLIENT,
            "10.84.0.2",
            PORT,
            &rounds.to_string(),
        ],
    );
}

fn findings_json(out: &[u8]) -> Vec<Value> {
    let v: Value = serde_json::from_slice(out).unwrap();
    v["files"][0]["findings"].as_array().unwrap().clone()
}

fn analyze_file(path: &Path) -> Vec<Value> {
    let out = common::tcpwhy(&["analyze", "--format", "json", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    findings_json(&out.stdout)
}

#[test]
fn live_capture_gives_the_findings_of_a_tcpdump_beside_it() {
    if let Err(why) = usable() {
        eprintln!("note: skipped: {why}");
        return;
    }
    let dir = common::scratch("analyze-live");
    let mut lab = Lab::new("twl", "eq", "10.84.0");
    let a = lab.ns[0].clone();
    lab.spawn(1, &["python3", "-c", SERVER, "10.84.0.2", PORT], None);
    let reference = dir.join("reference.pcap");
    let saved = dir.join("saved.pcap");
    let filter = format!("tcp port {PORT}");
    let (tcpdump, _) = start(
        &a,
        &[
            "tcpdump",
            // Each packet delivered at once, so that none is left in a ring block
            // when it is stopped (tests/tunnels_netns.rs).
            "--immediate-mode",
            "-i",
            "u0",
            "-U",
            "--time-stamp-precision",
            "nano",
            "-w",
            reference.to_str().unwrap(),
            &filter,
        ],
        "listening on",
    );
    let mut tcpdump = Running(tcpdump);
    let tcpwhy = env!("CARGO_BIN_EXE_tcpwhy");
    let (live, said) = start(
        &a,
        &[
            tcpwhy,
            "analyze",
            "-i",
            "u0",
            "--duration",
            "4s",
            "--format",
            "json",
            "-w",
            saved.to_str().unwrap(),
            "tcp",
            "port",
            PORT,
        ],
        "capturing on",
    );
    assert!(
        said.last().unwrap().contains("(tcp port 8084) for 4s"),
        "{said:?}"
    );
    client(&lab, 10);
    let out = live.wait_with_output().unwrap();
    sigint(tcpdump.0.id());
    let _ = tcpdump.0.wait();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let live_findings = findings_json(&out.stdout);
    // What it analysed is what it saved, byte for byte.
    assert_eq!(analyze_file(&saved), live_findings);
    // The tcpdump beside it captured the same packets, so the same findings on the same
    // frames; its times of the packets received differ by microseconds (each capturing
    // socket stamps a received packet itself: 10 µs apart here), so costs agree within
    // 1 %, not to the nanosecond.
    let reference_findings = analyze_file(&reference);
    let shape = |fs: &[Value]| -> Vec<(String, u64, String, String, Vec<u64>)> {
        fs.iter()
            .map(|f| {
                (
                    f["id"].as_str().unwrap().to_string(),
                    f["stream"].as_u64().unwrap(),
                    f["client"].as_str().unwrap().to_string(),
                    f["server"].as_str().unwrap().to_string(),
                    f["evidence"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|e| e["frame"].as_u64().unwrap())
                        .collect(),
                )
            })
            .collect()
    };
    assert_eq!(shape(&live_findings), shape(&reference_findings));
    for (l, r) in live_findings.iter().zip(&reference_findings) {
        let (l, r) = (
            l["cost_ms"].as_f64().unwrap(),
            r["cost_ms"].as_f64().unwrap(),
        );
        assert!((l - r).abs() <= r * 0.01, "{l} against {r}");
    }
    let nagle = live_findings
        .iter()
        .find(|f| f["id"] == "delayed_ack.nagle")
        .unwrap_or_else(|| panic!("{live_findings:#?}"));
    assert!(
        nagle["client"].as_str().unwrap().starts_with("10.84.0.1:"),
        "{nagle}"
    );
    assert_eq!(nagle["server"], format!("10.84.0.2:{PORT}"));
    // 9 of the 10 second pieces wait for a delayed ACK of ≥ 40 ms (the first is sent at
    // once: quick-ACK mode at the start of a connection acknowledges the first piece).
    let cost = nagle["cost_ms"].as_f64().unwrap();
    assert!((300.0..600.0).contains(&cost), "{cost}");
}

/// Findings of a connection printed while the capture runs, once the connection is over
/// and capture time has moved on (here: a second connection 1.5 s later), not only at
/// the end.
#[test]
fn live_capture_prints_a_finding_when_its_connection_ends() {
    if let Err(why) = usable() {
        eprintln!("note: skipped: {why}");
        return;
    }
    let mut lab = Lab::new("twl", "now", "10.84.0");
    lab.spawn(1, &["python3", "-c", SERVER, "10.84.0.2", PORT], None);
    let tcpwhy = env!("CARGO_BIN_EXE_tcpwhy");
    let a = lab.ns[0].clone();
    let (mut live, _) = start(
        &a,
        &[
            tcpwhy,
            "analyze",
            "-i",
            "u0",
            "--duration",
            "6s",
            "port",
            PORT,
        ],
        "capturing on",
    );
    let began = Instant::now();
    let stdout = BufReader::new(live.stdout.take().unwrap());
    let lines = std::thread::spawn(move || {
        stdout
            .lines()
            .map_while(Result::ok)
            .map(|l| (began.elapsed(), l))
            .collect::<Vec<_>>()
    });
    client(&lab, 10);
    std::thread::sleep(Duration::from_millis(1500));
    client(&lab, 1);
    let status = live.wait().unwrap();
    let ended = began.elapsed();
    let lines = lines.join().unwrap();
    assert_eq!(status.code(), Some(1), "{lines:?}");
    let (at, first) = lines
        .iter()
        .find(|(_, l)| l.starts_with("delayed_ack.nagle  stream ") && l.contains(" 10.84.0.1:"))
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert!(first.contains(&format!("→ 10.84.0.2:{PORT}")), "{first}");
    assert!(
        *at + Duration::from_secs(2) < ended,
        "printed at {at:?}, the capture ended at {ended:?}"
    );
    // Then the whole report, with the same finding.
    assert!(
        lines
            .iter()
            .any(|(t, l)| l.starts_with("[delayed_ack.nagle] stream ") && *t > *at),
        "{lines:#?}"
    );
}

fn sigint(pid: u32) {
    let _ = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status();
}
