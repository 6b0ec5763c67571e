//! The tcpwhy binary as a user meets it: exit status, error messages, stdin, and the
//! JSON contract (docs/json.md) read back with types of its own.

mod common;

use common::tcpwhy;

use serde::Deserialize;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn public(name: &str) -> String {
    root()
        .join("../shared/captures/public")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// `tcpwhy ARGS -` with the file at `path` on standard input (read as a stream, never
/// mapped, whatever stdin is).
fn tcpwhy_stdin(args: &[&str], path: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(args)
        .arg("-")
        .stdin(std::fs::File::open(path).expect("capture"))
        .output()
        .expect("run tcpwhy")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[derive(Deserialize)]
struct Doc {
    schema_version: u32,
    command: String,
    files: Vec<File>,
}

#[derive(Deserialize)]
struct File {
    frames: u64,
    tcp_frames: u64,
    skipped: std::collections::BTreeMap<String, u64>,
    error: Option<ErrorInfo>,
    connections: Vec<Conn>,
}

#[derive(Deserialize)]
struct ErrorInfo {
    frame: u64,
    offset: u64,
}

#[derive(Deserialize)]
struct Conn {
    stream: u64,
    client: String,
    server: String,
    vantage: String,
    handshake_rtt_ms: Option<f64>,
    client_to_server: Dir,
    server_to_client: Dir,
}

#[derive(Deserialize)]
struct Dir {
    packets: u64,
    window_scale: serde_json::Value,
    syn: Option<Syn>,
}

#[derive(Deserialize)]
struct Syn {
    mss: Option<u16>,
}

fn json(args: &[&str]) -> Doc {
    let mut a = vec!["flows", "--format", "json"];
    a.extend_from_slice(args);
    let out = tcpwhy(&a);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

#[test]
fn not_a_capture_is_a_one_line_error_with_exit_2() {
    let out = tcpwhy(&["flows", root().join("Cargo.toml").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not a pcap or pcapng file"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn missing_file_is_exit_2_and_other_files_are_still_reported() {
    let out = tcpwhy(&["flows", "/nonexistent.pcap", &public("tcptrace-6syns.pcap")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("/nonexistent.pcap: No such file"));
    assert!(text(&out.stdout).contains("2 connections; 68 frames"));
}

/// wireshark-sample-emergesync-cut-short.pcap: tshark reads 2,587 frames and then
/// reports the file "appears to have been cut short in the middle of a packet".
#[test]
fn a_file_cut_short_is_analysed_up_to_the_cut_and_the_cut_reported() {
    let out = tcpwhy(&[
        "flows",
        &public("wireshark-sample-emergesync-cut-short.pcap"),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let s = text(&out.stdout);
    assert!(s.contains("2 connections; 2587 frames"), "{s}");
    assert!(s.contains("file ends in the middle of frame 2588"), "{s}");
    let d = json(&[&public("wireshark-sample-emergesync-cut-short.pcap")]);
    let e = d.files[0].error.as_ref().expect("error reported");
    assert_eq!(e.frame, 2588);
    assert!(e.offset > 3_000_000);
}

#[test]
fn stdin_gives_the_same_result_as_the_file() {
    let file = root().join("examples/bulk.pcap");
    let from_file = tcpwhy(&["flows", file.to_str().unwrap()]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(["flows", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&std::fs::read(&file).unwrap())
        .unwrap();
    let from_stdin = child.wait_with_output().unwrap();
    assert!(from_stdin.status.success());
    assert_eq!(text(&from_stdin.stdout), text(&from_file.stdout));
}

#[test]
fn json_contract_accounts_for_every_frame() {
    let d = json(&[
        &public("wireshark-sample-vlan.pcap"),
        &public("zeek-echo-connections.pcap.gz"),
    ]);
    assert_eq!(d.schema_version, 1);
    assert_eq!(d.command, "flows");
    assert_eq!(d.files.len(), 2);
    for f in &d.files {
        assert_eq!(f.frames, f.tcp_frames + f.skipped.values().sum::<u64>());
        assert!(f.connections.windows(2).all(|w| w[0].stream < w[1].stream));
    }
    // tshark-reference.json: 395 frames, 185 with TCP, 2 streams; 82,582 frames and
    // 500 streams in the gzip-compressed file.
    assert_eq!((d.files[0].frames, d.files[0].tcp_frames), (395, 185));
    assert_eq!(d.files[0].connections.len(), 2);
    assert_eq!(d.files[1].frames, 82_582);
    assert_eq!(d.files[1].connections.len(), 500);
}

/// wireshark-sample-win-scale-examples.pcapng stream 1, in Wireshark: SYN with MSS 1460
/// and window scale 8, SYN/ACK without window scale.
#[test]
fn json_shows_window_scaling_not_negotiated() {
    let d = json(&[
        "--stream",
        "1",
        &public("wireshark-sample-win-scale-examples.pcapng"),
    ]);
    let c = &d.files[0].connections[0];
    assert_eq!(c.stream, 1);
    assert_eq!(c.client, "192.168.200.135:6712");
    assert_eq!(c.server, "192.168.200.21:2000");
    assert_eq!(c.client_to_server.window_scale, "not_negotiated");
    assert_eq!(c.client_to_server.syn.as_ref().unwrap().mss, Some(1460));
    assert_eq!(c.client_to_server.packets + c.server_to_client.packets, 9);
    assert_eq!(c.vantage, "client");
    assert!(c.handshake_rtt_ms.is_some());
}

/// `flows --stream N` shows one connection, and its footer counts that one (stream 3 of
/// this capture has no ACK of unseen data, while 7 of its 68 connections do: checked with
/// `tshark -Y "tcp.stream eq 3"` and the unfiltered footer).
#[test]
fn flows_of_one_stream_count_that_stream_in_the_footer() {
    let name = "suricata-verify-tls-subjectaltname.pcap";
    let all = text(&tcpwhy(&["flows", &public(name)]).stdout);
    assert!(all.contains("68 connections;"), "{all}");
    assert!(all.contains("on 7 connection(s) acknowledged"), "{all}");
    let one = text(&tcpwhy(&["flows", "--stream", "3", &public(name)]).stdout);
    assert!(one.contains("1 connections;"), "{one}");
    assert!(!one.contains("acked_unseen"), "{one}");
}

#[test]
fn help_teaches_with_examples() {
    let out = tcpwhy(&["--help"]);
    let s = text(&out.stdout);
    assert!(s.contains("flows") && s.contains("Examples:") && s.contains("tcp.stream"));
}

/// Sharding by 4-tuple across threads must not change a byte of the output: stream
/// numbering (port reuse included), roles, counts and where reading stopped are the same
/// as with one thread, from a file (frames handed to the workers by position in its
/// memory map) and from standard input (their bytes copied).
#[test]
fn threads_do_not_change_the_output() {
    for name in [
        "zeek-echo-connections.pcap.gz",
        "tcptrace-fast-reuse.pcap",
        "suricata-verify-tls-subjectaltname.pcap",
        // Skipped frames are counted by one thread each; IPv6, tunnels-free cooked
        // captures, a damaged file and cut headers take the threads' other paths.
        "wireshark-sample-obsolete-packets-sll.pcap",
        "tcptrace-ipv6-ftp-nasa.pcap",
        "zeek-tcp-truncated-header-snaplen68.pcap",
        "suricata-verify-smtp-to-comma-damaged.pcap",
        "zeek-http-qinq-0.pcap",
    ] {
        let one = tcpwhy(&["flows", "--format", "json", "-j", "1", &public(name)]);
        let three = tcpwhy(&["flows", "--format", "json", "-j", "3", &public(name)]);
        assert_eq!(one.status.code(), three.status.code(), "{name}");
        assert_eq!(text(&one.stdout), text(&three.stdout), "{name}");
        assert_eq!(text(&one.stderr), text(&three.stderr), "{name}");
        let one = tcpwhy_stdin(&["flows", "--format", "json", "-j", "1"], &public(name));
        for j in ["2", "3"] {
            let more = tcpwhy_stdin(&["flows", "--format", "json", "-j", j], &public(name));
            assert_eq!(one.status.code(), more.status.code(), "{name} - -j {j}");
            assert_eq!(text(&one.stdout), text(&more.stdout), "{name} - -j {j}");
            assert_eq!(text(&one.stderr), text(&more.stderr), "{name} - -j {j}");
        }
    }
}

/// The same for `analyze`: the shards' detectors see each connection whole, the findings
/// get the final stream numbers, and the cross-connection detectors (short_lived,
/// idle_close, new_connection's warm windows, early_exit's peers) merge their state, so
/// every capture shipped with the repo and every public one gives the same report with
/// 1, 2 and 3 threads, and with 2 from standard input (`--min-cost 0ms --exchanges`:
/// everything, however small).
#[test]
fn threads_do_not_change_the_analysis() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    for dir in [
        root.join("../shared/captures/public"),
        root.join("examples"),
    ] {
        for e in std::fs::read_dir(&dir).expect("capture dir").flatten() {
            files.push(e.path());
        }
    }
    for e in std::fs::read_dir(root.join("examples/lab"))
        .expect("lab dir")
        .flatten()
    {
        for side in ["client.pcap", "server.pcap"] {
            files.push(e.path().join(side));
        }
    }
    files.retain(|p| {
        let n = p.to_string_lossy();
        p.is_file() && (n.ends_with(".pcap") || n.ends_with(".pcapng") || n.ends_with(".gz"))
    });
    assert!(files.len() > 80, "{} captures", files.len());
    let mut with_findings = 0;
    for p in &files {
        let p = p.to_string_lossy();
        let args = |j| {
            [
                "analyze",
                "--format",
                "json",
                "--min-cost",
                "0ms",
                "--exchanges",
                "-j",
                j,
            ]
        };
        let run = |j| tcpwhy(&[&args(j)[..], &[&p]].concat());
        let one = run("1");
        with_findings += usize::from(one.status.code() == Some(1));
        for j in ["2", "3"] {
            let other = run(j);
            assert_eq!(one.status.code(), other.status.code(), "{p} -j {j}");
            assert_eq!(text(&one.stdout), text(&other.stdout), "{p} -j {j}");
        }
        // Standard input names the file "-".
        let streamed = tcpwhy_stdin(&args("2"), &p);
        assert_eq!(one.status.code(), streamed.status.code(), "{p} - -j 2");
        assert_eq!(
            text(&one.stdout).replace(&format!("{:?}", p.as_ref()), "\"-\""),
            text(&streamed.stdout),
            "{p} - -j 2"
        );
    }
    // The comparison means something only if findings were made.
    assert!(with_findings > 20, "{with_findings} captures with findings");
}
