//! Issue 12 class 5 with the real kernel: `tcp-mem-pressure` lowers the machine-wide
//! `net.ipv4.tcp_mem` for its workload, so TCP enters memory pressure and the client's
//! window collapses to 4 × MSS; the current code must name `rwnd.not_growing` as memory
//! pressure. And the value must be back afterwards, also when the run is interrupted.
//!
//! tcp_mem is global to the machine, so these tests are their own test binary (cargo runs
//! test binaries one after another, never beside `scenarios`), one at a time (the lock),
//! and a guard puts the value back even if the lab process itself died without its
//! cleanup (SIGKILL). Needs root and `ip netns`; without them each test prints a note and
//! passes (CI is root).

mod common;

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

static LOCK: Mutex<()> = Mutex::new(());

const SCENARIO: &str = "tcp-mem-pressure";
const TCP_MEM: &str = "/proc/sys/net/ipv4/tcp_mem";

fn usable() -> bool {
    let ok = common::root_and_netns();
    if !ok {
        eprintln!("note: skipped, the lab needs root and `ip netns`");
    }
    ok
}

fn tcp_mem() -> String {
    std::fs::read_to_string(TCP_MEM)
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Puts tcp_mem back as it was when the test began, whatever happened (a panic here, a
/// lab process killed before its own cleanup).
struct Restore(String);

impl Drop for Restore {
    fn drop(&mut self) {
        if tcp_mem() != self.0 {
            let _ = std::fs::write(TCP_MEM, &self.0);
        }
    }
}

fn out_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcpwhy-lab-test-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn lab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tcpwhy-lab"))
}

/// A number written in `text` after `label`: "fell from 3,145,728 B" → 3145728.
fn number_after(text: &str, label: &str) -> u64 {
    let i = text
        .find(label)
        .unwrap_or_else(|| panic!("{label:?} in {text}"))
        + label.len();
    text[i..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or_else(|e| panic!("{label:?} in {text}: {e}"))
}

/// The run's kernel evidence (pressure entered, the window fell in ss, tcp_mem restored
/// and read back) and the current code's verdict on both captures: rwnd.not_growing as
/// memory pressure, its window values in the order the kernel made them.
#[test]
fn tcp_mem_pressure_is_named_from_the_window_collapse() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let before = tcp_mem();
    let _restore = Restore(before.clone());
    let dir = out_dir(SCENARIO);
    // The lab holds TCP memory in other sockets so that pressure begins as soon as
    // tcp_mem is lowered and lasts (without them a fresh CI machine's counter stayed
    // below it: TCPMemoryPressures 0); 11 runs of 11 here then showed the collapse. Should
    // a run still not show it in ss, the run's own checks say so and only then is it run
    // again, at most [`ATTEMPTS`] times. Any other failed check fails at once.
    const ATTEMPTS: usize = 3;
    let mut attempt = 0;
    let (m, run) = loop {
        attempt += 1;
        let _ = std::fs::remove_dir_all(&dir);
        let out = lab()
            .args(["run", SCENARIO, "-o"])
            .arg(&dir)
            .output()
            .unwrap();
        assert_eq!(tcp_mem(), before, "tcp_mem not restored by the lab");
        let run = dir.join(SCENARIO);
        let m: Value = serde_json::from_str(
            &std::fs::read_to_string(run.join("manifest.json")).unwrap_or_else(|e| {
                panic!(
                    "no manifest ({e}): {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            }),
        )
        .unwrap();
        if out.status.success() {
            break (m, run);
        }
        let failed: Vec<&str> = m["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["ok"] != true)
            .filter_map(|c| c["what"].as_str())
            .collect();
        let not_reproduced = !failed.is_empty()
            && failed
                .iter()
                .all(|w| w.starts_with("the client's window fell"));
        assert!(
            not_reproduced && attempt < ATTEMPTS,
            "checks failed (attempt {attempt}): {:#}",
            m["checks"]
        );
        eprintln!("attempt {attempt}: the window did not collapse in this run; running it again");
    };
    let restored = m["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["what"]
                .as_str()
                .unwrap()
                .starts_with("root net.ipv4.tcp_mem restored")
        })
        .expect("the run checked tcp_mem after the client");
    assert_eq!(restored["measured"].as_str(), Some(before.as_str()));
    let pressures = ["client", "server"]
        .iter()
        .map(|s| {
            m["nstat_delta"][s]["TCPMemoryPressures"]
                .as_u64()
                .unwrap_or(0)
        })
        .sum::<u64>();
    assert!(pressures >= 1, "TCPMemoryPressures {pressures}");

    for side in ["client", "server"] {
        let pcap = run.join(format!("{side}.pcap"));
        let (_, findings, _) = tcpwhy_pipeline::analyze(
            pcap.to_str().unwrap(),
            &tcpwhy_pipeline::Options {
                threads: 1,
                ..Default::default()
            },
            &tcpwhy_detect::Config::default(),
        )
        .unwrap();
        let findings: Vec<tcpwhy_detect::Finding> =
            findings.iter().collect::<Result<_, _>>().unwrap();
        let ids: Vec<&str> = findings.iter().map(|f| f.id.as_str()).collect();
        assert!(ids.contains(&"rwnd.limited"), "{side}: {ids:?}");
        assert!(!ids.contains(&"rwnd.zero_window"), "{side}: {ids:?}");
        let f = findings
            .iter()
            .find(|f| f.id.as_str() == "rwnd.not_growing")
            .unwrap_or_else(|| panic!("{side}: no rwnd.not_growing in {ids:?}"));
        let e = &f.explanation;
        assert!(e.contains("TCP memory pressure"), "{side}: {e}");
        // The lab's SYNs: MSS 1460, window scale 10 (tcp_rmem max 32 MB): the clamp is
        // 4 × 1460 rounded up to 1,024 B, 6,144 B; autotuning had grown the window past
        // the initial 64 KB before tcp_mem was lowered (304,128 B in the example run).
        assert_eq!(number_after(e, "stayed at or below"), 6_144, "{side}: {e}");
        assert!(number_after(e, "fell from") > 65_536, "{side}: {e}");
        assert!(number_after(e, "B to") <= 6_144, "{side}: {e}");
        // Cited: the largest window, the first and the last ACK at the clamp, in order.
        let frames: Vec<u64> = f.evidence.iter().take(3).map(|c| c.frame).collect();
        assert!(
            frames[0] < frames[1] && frames[1] < frames[2],
            "{side}: {frames:?}"
        );
        assert!(f.fix[0].action.contains("tcp_mem"), "{side}: {:?}", f.fix);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// SIGTERM while the workload runs (tcp_mem lowered): the lab's handler restores it
/// before it exits, and leaves no namespace.
#[test]
fn an_interrupted_pressure_run_restores_tcp_mem() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let before = tcp_mem();
    let _restore = Restore(before.clone());
    let dir = out_dir("interrupted");
    std::fs::create_dir_all(&dir).unwrap();
    let stderr = dir.join("lab.stderr");
    let mut child = lab()
        .args(["run", SCENARIO, "-o"])
        .arg(&dir)
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    // Wait for the lowered value (150 ms after the client started).
    let deadline = Instant::now() + Duration::from_secs(30);
    while tcp_mem() == before && Instant::now() < deadline && child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(5));
    }
    let lowered = tcp_mem();
    // SAFETY: kill(2) on the child we started and have not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_ne!(
        lowered,
        before,
        "the run never lowered tcp_mem ({status}): {}",
        std::fs::read_to_string(&stderr).unwrap_or_default()
    );
    assert_eq!(tcp_mem(), before, "not restored after SIGTERM ({status})");
    let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let prefix = format!("twl{}-", child.id());
    assert!(
        !String::from_utf8_lossy(&ns.stdout).contains(&prefix),
        "namespaces left after SIGTERM"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
