//! Every capture under tests/data/malformed (its README says what is wrong with each):
//! `analyze` and `flows`, on one thread and two, end cleanly with a report (analyze's exit
//! status 0 or 1: no finding, findings; a panic exits 101). Untrusted input never crashes
//! the tool.

mod common;

use std::path::PathBuf;

fn malformed() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/malformed");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/data/malformed")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "pcap" || x == "pcapng"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no capture in {}", dir.display());
    files
}

#[test]
fn malformed_captures_are_analysed_without_a_crash() {
    for path in malformed() {
        let p = path.to_string_lossy();
        for threads in ["1", "2"] {
            for command in ["analyze", "flows"] {
                let out = common::tcpwhy(&[command, "-j", threads, "--format", "json", &p]);
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(
                    matches!(out.status.code(), Some(0 | 1)) && !stderr.contains("panicked"),
                    "{command} -j {threads} {p}: {:?}\n{stderr}",
                    out.status
                );
                let json: serde_json::Value =
                    serde_json::from_slice(&out.stdout).expect("a JSON report");
                // analyze counts the connections, flows lists them.
                let conns = &json["files"][0]["connections"];
                let n = conns
                    .as_array()
                    .map_or(conns.as_u64(), |a| Some(a.len() as u64));
                assert_eq!(n, Some(1), "{command} {p}: {json}");
            }
        }
    }
}
