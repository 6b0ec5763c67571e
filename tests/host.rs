//! `tcpwhy collect`, `tcpwhy host` and `tcpwhy analyze --host` (issue 7), on this machine
//! and on the lab's host bundles (examples/lab/*/truth/bundle-{client,server}/, written by
//! `tcpwhy collect` in each end's namespace during a run with the same parameters as the
//! captures next to them; examples/lab/README.md "Host bundles").
//!
//! Values checked by hand in the bundle files:
//! - cached-ssthresh/truth/bundle-server/tcp_metrics.txt: `10.81.1.2 … ssthresh 23 …
//!   source 10.81.2.2`; its sysctl.txt `net.ipv4.tcp_no_ssthresh_metrics_save = 0` (every
//!   other bundle: 1). bundle-client/tcp_metrics.txt has no ssthresh.
//! - tail-loss/truth/bundle-server: netstat.txt TCPLossProbes 0 → after/netstat.txt 1,
//!   TCPLossProbeRecovery 0 → 1; snmp.txt Tcp OutSegs 0 → 24: 1/24 = 41.7 per 1000.
//! - reordering/truth/bundle-server: TCPSACKReorder 0 → 19, TCPTSReorder 0 → 1,
//!   TCPRenoReorder 0 → 0, OutSegs 0 → 2900: 20/2900 = 6.9 per 1000.
//! - idle-restart-*/truth/bundle-server/sysctl.txt: `tcp_congestion_control = bbr` (the
//!   namespace default), `tcp_slow_start_after_idle = 1` (idle-restart-off: 0); ss.txt shows
//!   the server socket 10.81.2.2:8080 with `cubic` (idle-restart-cubic, -off) or `bbr`
//!   (idle-restart-bbr): the workload sets TCP_CONGESTION per socket.

use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::Command;

fn tcpwhy() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
}

fn lab(scenario: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/lab")
        .join(scenario)
}

fn bundle(scenario: &str, side: &str) -> PathBuf {
    lab(scenario).join(format!("truth/bundle-{side}"))
}

// Independent types for the documented JSON (docs/json.md "tcpwhy host").
#[derive(Deserialize, Debug)]
struct HostDoc {
    schema_version: u32,
    command: String,
    host: HostInfo,
    findings: Vec<HostFinding>,
    sockets: Vec<Socket>,
    counters: Vec<Counter>,
    unread: Vec<String>,
}

#[derive(Deserialize, Debug)]
struct HostInfo {
    source: String,
    hostname: Option<String>,
    kernel: Option<String>,
    interval_s: Option<f64>,
    addresses: Vec<String>,
}

#[derive(Deserialize, Debug)]
struct HostFinding {
    id: String,
    confidence: String,
    explanation: String,
    fix: Vec<String>,
    values: Vec<Value>,
}

#[derive(Deserialize, Debug)]
struct Value {
    name: String,
    value: String,
    source: String,
}

#[derive(Deserialize, Debug)]
struct Socket {
    local: String,
    peer: String,
    cc: Option<String>,
    limit: String,
}

#[derive(Deserialize, Debug)]
struct Counter {
    name: String,
    total: u64,
    delta: Option<u64>,
}

fn host_json(dir: &Path) -> (HostDoc, i32) {
    let out = tcpwhy()
        .args(["host", "--format", "json", "--bundle"])
        .arg(dir)
        .output()
        .expect("run tcpwhy host");
    let doc: HostDoc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("JSON: {e}\n{}", String::from_utf8_lossy(&out.stderr)));
    (doc, out.status.code().unwrap_or(-1))
}

fn finding<'a>(d: &'a HostDoc, id: &str) -> &'a HostFinding {
    d.findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no {id} in {:#?}", d.findings))
}

fn value<'a>(f: &'a HostFinding, name: &str) -> &'a str {
    &f.values
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no value {name} in {:#?}", f.values))
        .value
}

fn ids(d: &HostDoc) -> Vec<&str> {
    d.findings.iter().map(|f| f.id.as_str()).collect()
}

#[test]
fn cached_ssthresh_bundle_names_the_peer_and_its_ssthresh() {
    let (d, code) = host_json(&bundle("cached-ssthresh", "server"));
    assert_eq!(code, 1);
    assert_eq!(d.schema_version, 1);
    assert_eq!(d.command, "host");
    let f = finding(&d, "host.metrics_cached_ssthresh");
    assert_eq!(f.confidence, "high");
    assert_eq!(value(f, "tcp_metrics 10.81.1.2 ssthresh"), "23");
    assert_eq!(value(f, "net.ipv4.tcp_no_ssthresh_metrics_save"), "0");
    let v = f
        .values
        .iter()
        .find(|v| v.name.starts_with("tcp_metrics"))
        .unwrap();
    assert_eq!(v.source, "tcp_metrics.txt");
    assert!(
        f.explanation.contains("10.81.1.2 (ssthresh 23)"),
        "{}",
        f.explanation
    );
    assert_eq!(
        f.fix[0],
        "ip tcp_metrics delete 10.81.1.2   (or: ip tcp_metrics flush all)"
    );
    assert!(f
        .fix
        .iter()
        .any(|x| x == "sysctl -w net.ipv4.tcp_no_ssthresh_metrics_save=1"));
    // The bundle's own address, from tcp_metrics' `source` and the ss socket.
    assert!(d.host.addresses.contains(&"10.81.2.2".to_string()));
    assert_eq!(
        d.host.source,
        bundle("cached-ssthresh", "server").display().to_string()
    );
    // The client caches no ssthresh (and does not apply one: save flag 1).
    let (c, _) = host_json(&bundle("cached-ssthresh", "client"));
    assert!(
        !ids(&c).contains(&"host.metrics_cached_ssthresh"),
        "{:?}",
        ids(&c)
    );
}

#[test]
fn tail_loss_bundle_counts_the_probe_between_snapshots() {
    let (d, code) = host_json(&bundle("tail-loss", "server"));
    assert_eq!(code, 1);
    assert!(d.host.interval_s.is_some_and(|s| s > 0.5 && s < 10.0));
    let f = finding(&d, "host.tail_loss_probes");
    // One probe that recovered a real loss, between snapshots: high.
    assert_eq!(f.confidence, "high");
    assert!(value(f, "TcpExtTCPLossProbes").starts_with("+1 in "));
    assert!(value(f, "TcpExtTCPLossProbeRecovery").starts_with("+1 in "));
    assert!(value(f, "TcpOutSegs").starts_with("+24 in "));
    assert_eq!(value(f, "net.ipv4.tcp_early_retrans"), "3");
    assert!(f.explanation.contains("41.7 per 1000"), "{}", f.explanation);
    let c = d
        .counters
        .iter()
        .find(|c| c.name == "TcpExtTCPLossProbes")
        .unwrap();
    assert_eq!((c.total, c.delta), (1, Some(1)));
    // The client sent no probe.
    let (c, _) = host_json(&bundle("tail-loss", "client"));
    assert!(!ids(&c).contains(&"host.tail_loss_probes"));
}

#[test]
fn reordering_bundle_reports_reorder_detections_and_veth_without_rps() {
    let (d, _) = host_json(&bundle("reordering", "server"));
    let f = finding(&d, "host.reordering");
    assert!(value(f, "TcpExtTCPSACKReorder").starts_with("+19 in "));
    assert!(value(f, "TcpExtTCPTSReorder").starts_with("+1 in "));
    assert_eq!(value(f, "net.ipv4.tcp_reordering"), "3");
    assert!(
        f.explanation
            .contains("reordering 20 time(s) (6.9 per 1000"),
        "{}",
        f.explanation
    );
    // 6.9 per 1000 is under ten times the threshold: a lead, medium.
    assert_eq!(f.confidence, "medium");
    // The lab's veth has RPS off (rps/*/rx-0 = 0): seed 03's fix is offered.
    assert!(f.fix.iter().any(|x| x.contains("rps_cpus")), "{:?}", f.fix);
}

#[test]
fn slow_start_after_idle_follows_the_sockets_congestion_control() {
    // sysctl default bbr, but the server's socket runs cubic (ss): the restart applies.
    let (d, _) = host_json(&bundle("idle-restart-cubic", "server"));
    let f = finding(&d, "host.slow_start_after_idle");
    assert_eq!(value(f, "net.ipv4.tcp_slow_start_after_idle"), "1");
    assert_eq!(value(f, "net.ipv4.tcp_congestion_control"), "bbr");
    assert_eq!(
        value(
            f,
            "ss: connections whose congestion control restarts after idle"
        ),
        "1 of 1"
    );
    assert_eq!(f.fix[0], "sysctl -w net.ipv4.tcp_slow_start_after_idle=0");
    let s = &d.sockets[0];
    assert_eq!(
        (s.local.as_str(), s.cc.as_deref()),
        ("10.81.2.2:8080", Some("cubic"))
    );
    assert!(s.peer.starts_with("10.81.1.2:"));
    assert!(!s.limit.is_empty());
    // BBR socket: exempt; slow start after idle off: nothing to say. Exit status 0.
    for control in ["idle-restart-bbr", "idle-restart-off"] {
        let (d, code) = host_json(&bundle(control, "server"));
        assert!(d.findings.is_empty(), "{control}: {:?}", ids(&d));
        assert_eq!(code, 0, "{control}");
    }
}

#[test]
fn host_text_says_what_was_not_read() {
    let out = tcpwhy()
        .args(["host", "--bundle"])
        .arg(bundle("tail-loss", "server"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("[host.tail_loss_probes] confidence high"),
        "{text}"
    );
    assert!(text.contains("two snapshots"), "{text}");
    // nstat.txt was removed from the shipped bundles; the manifest says why.
    assert!(text.contains("Not read, or only in part"), "{text}");
    assert!(
        text.contains("nstat.txt (nstat -asz): removed for the repository"),
        "{text}"
    );
    let (d, _) = host_json(&bundle("tail-loss", "server"));
    assert_eq!(d.unread.len(), 2, "{:?}", d.unread);
}

#[test]
fn missing_bundle_is_an_error() {
    let out = tcpwhy()
        .args(["host", "--bundle", "/nonexistent/tcpwhy-bundle"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a directory"));
    let out = tcpwhy()
        .args(["analyze", "--host", "/nonexistent/tcpwhy-bundle"])
        .arg(lab("tail-loss").join("server.pcap"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

#[test]
fn collect_writes_the_bundle_layout_and_host_reads_it_back() {
    if !is_root() {
        eprintln!("not root: collect's layout test skipped");
        return;
    }
    let dir = std::env::temp_dir().join(format!("tcpwhy-test-collect-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = tcpwhy()
        .args(["collect", "--interval", "200ms", "-o"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in [
        "manifest.json",
        "sockstat.txt",
        "sockstat6.txt",
        "netstat.txt",
        "snmp.txt",
        "after/sockstat.txt",
        "after/netstat.txt",
        "after/snmp.txt",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["bundle_version"], 1);
    assert_eq!(m["root"], true);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(m["kernel"], kernel.trim());
    assert!(m["time"].as_str().unwrap().ends_with('Z'));
    assert!(m["after"]["time_unix"].as_f64().unwrap() >= m["time_unix"].as_f64().unwrap() + 0.2);
    // Every input says what was read or why not.
    for (file, i) in m["inputs"].as_object().unwrap() {
        match i["status"].as_str().unwrap() {
            "ok" => assert!(i["bytes"].is_u64(), "{file}"),
            "missing" => assert!(i["reason"].is_string(), "{file}"),
            s => panic!("{file}: status {s}"),
        }
    }
    // sysctl is installed here: its file, not the /proc/sys/net copy.
    if m["inputs"]["sysctl.txt"]["status"] == "ok" {
        let t = std::fs::read_to_string(dir.join("sysctl.txt")).unwrap();
        assert!(t.contains("net.ipv4.tcp_mem = "));
    }
    let (d, code) = host_json(&dir);
    assert!(code == 0 || code == 1);
    assert_eq!(d.host.kernel.as_deref(), Some(kernel.trim()));
    assert!(d.host.hostname.is_some());
    assert!(d.host.interval_s.is_some());
    assert!(d
        .counters
        .iter()
        .any(|c| c.name == "TcpOutSegs" && c.delta.is_some()));
    let _ = std::fs::remove_dir_all(&dir);
}

/// No sysctl, ss, ip or nstat on PATH: /proc/sys/net is copied instead, and every missing
/// command is named with the reason. Changing the copy's tcp_window_scaling to 0 shows the
/// audit reads the copy.
#[test]
fn collect_without_commands_copies_proc_sys_net_and_says_why() {
    let dir = std::env::temp_dir().join(format!("tcpwhy-test-nopath-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = tcpwhy()
        .env("PATH", "/nonexistent")
        .args(["collect", "-o"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let sysctl = &m["inputs"]["sysctl.txt"];
    assert_eq!(sysctl["status"], "missing");
    assert_eq!(
        sysctl["reason"],
        "command not found: sysctl (read /proc/sys/net into proc-sys-net/ instead)"
    );
    assert_eq!(m["inputs"]["proc-sys-net/"]["status"], "ok");
    assert_eq!(m["inputs"]["ss.txt"]["reason"], "command not found: ss");
    let scaling = dir.join("proc-sys-net/ipv4/tcp_window_scaling");
    assert_eq!(std::fs::read_to_string(&scaling).unwrap().trim(), "1");
    std::fs::write(&scaling, "0\n").unwrap();
    let (d, code) = host_json(&dir);
    assert_eq!(code, 1);
    assert!(
        ids(&d).contains(&"host.window_scaling_off"),
        "{:?}",
        ids(&d)
    );
    assert!(d
        .unread
        .contains(&"ss.txt (ss -tinmO): command not found: ss".to_string()));
    assert!(
        !d.unread.iter().any(|u| u.starts_with("sysctl.txt")),
        "{:?}",
        d.unread
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// `analyze --format json` with the `host` section (docs/json.md).
#[derive(Deserialize)]
struct AnalyzeDoc {
    files: Vec<AnalyzeFile>,
}

#[derive(Deserialize)]
struct AnalyzeFile {
    findings: Vec<AFinding>,
    #[serde(default)]
    hosts: Vec<Join>,
}

#[derive(Deserialize, Debug)]
struct AFinding {
    id: String,
    stream: u64,
    explanation: String,
    fix: Vec<AFix>,
    confidence: String,
}

#[derive(Deserialize, Debug)]
struct AFix {
    host: String,
    action: String,
}

#[derive(Deserialize, Debug)]
struct Join {
    bundle: String,
    addresses: Vec<String>,
    correlations: Vec<Correlation>,
}

#[derive(Deserialize, Debug)]
struct Correlation {
    stream: u64,
    id: String,
    side: String,
    relation: String,
    note: String,
    confidence_before: String,
    confidence_after: String,
}

fn analyze_with(capture: &Path, dir: &Path) -> AnalyzeFile {
    let out = tcpwhy()
        .args(["analyze", "--format", "json", "--host"])
        .arg(dir)
        .arg(capture)
        .output()
        .unwrap();
    let mut doc: AnalyzeDoc = serde_json::from_slice(&out.stdout).expect("JSON");
    doc.files.remove(0)
}

fn correlation<'a>(j: &'a Join, id: &str) -> &'a Correlation {
    j.correlations
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no {id} in {j:#?}"))
}

/// idle-restart-cubic's server.pcap: slow_start.restart_after_idle on stream 0 (frames
/// 991/1002, tests/analyze_slow_start_app.rs). The server's bundle has
/// slow_start_after_idle = 1 and its 8080 socket runs cubic.
#[test]
fn server_bundle_confirms_the_idle_restart_with_the_exact_setting() {
    let cap = lab("idle-restart-cubic").join("server.pcap");
    let r = analyze_with(&cap, &bundle("idle-restart-cubic", "server"));
    let j = r.hosts.first().expect("host section");
    assert!(j.bundle.ends_with("bundle-server"));
    assert!(j.addresses.contains(&"10.81.2.2".to_string()));
    let c = correlation(j, "slow_start.restart_after_idle");
    assert_eq!((c.stream, c.side.as_str()), (0, "server"));
    assert_eq!(c.relation, "confirms");
    assert!(
        c.note.contains("tcp_slow_start_after_idle = 1 and cubic"),
        "{}",
        c.note
    );
    assert_eq!(c.confidence_after, "high");
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "slow_start.restart_after_idle")
        .unwrap();
    assert_eq!(f.confidence, "high");
    assert_eq!(f.fix[0].host, "server");
    assert_eq!(
        f.fix[0].action,
        "sysctl -w net.ipv4.tcp_slow_start_after_idle=0 on 10.81.2.2 (vm)"
    );
    assert!(f
        .explanation
        .contains("Host state (vm, the server) confirms"));
}

/// The same capture with the client's bundle: the client's sysctls say nothing about the
/// server's restart, and the join says so instead of guessing.
#[test]
fn client_bundle_is_silent_about_the_servers_restart() {
    let cap = lab("idle-restart-cubic").join("server.pcap");
    let r = analyze_with(&cap, &bundle("idle-restart-cubic", "client"));
    let j = &r.hosts[0];
    assert!(j.addresses.contains(&"10.81.1.2".to_string()));
    let c = correlation(j, "slow_start.restart_after_idle");
    assert_eq!((c.side.as_str(), c.relation.as_str()), ("client", "silent"));
    assert!(c.note.contains("decided on the server"), "{}", c.note);
    assert_eq!(c.confidence_before, c.confidence_after);
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "slow_start.restart_after_idle")
        .unwrap();
    assert!(!f.fix[0].action.contains(" on 10.81."), "{:?}", f.fix);
}

/// Deliberately mismatched pairs (same addresses and port in every lab scenario): the
/// CUBIC capture joined with the server bundles of the controls. With BBR on the server
/// socket, or slow_start_after_idle = 0, the host state contradicts the restart.
#[test]
fn control_bundles_contradict_a_restart() {
    let cap = lab("idle-restart-cubic").join("server.pcap");
    for (control, says) in [
        ("idle-restart-bbr", "the sender runs bbr"),
        ("idle-restart-off", "tcp_slow_start_after_idle = 0"),
    ] {
        let r = analyze_with(&cap, &bundle(control, "server"));
        let c = correlation(&r.hosts[0], "slow_start.restart_after_idle");
        assert_eq!(c.relation, "contradicts", "{control}");
        assert!(c.note.contains(says), "{control}: {}", c.note);
        // The detector's high, one step down.
        assert_eq!(
            (c.confidence_before.as_str(), c.confidence_after.as_str()),
            ("high", "medium"),
            "{control}"
        );
        let f = r
            .findings
            .iter()
            .find(|f| f.id == "slow_start.restart_after_idle")
            .unwrap();
        assert!(f.explanation.contains("contradicts"), "{control}");
    }
}

/// cached-ssthresh's server.pcap: slow_start.early_exit on stream 1 (the clean second
/// connection). The server bundle caches ssthresh 23 for the client 10.81.1.2.
#[test]
fn cached_ssthresh_bundle_confirms_the_early_exit() {
    let cap = lab("cached-ssthresh").join("server.pcap");
    let r = analyze_with(&cap, &bundle("cached-ssthresh", "server"));
    let c = correlation(&r.hosts[0], "slow_start.early_exit");
    assert_eq!((c.stream, c.relation.as_str()), (1, "confirms"));
    assert!(c.note.contains("ssthresh 23 for 10.81.1.2"), "{}", c.note);
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "slow_start.early_exit")
        .unwrap();
    assert_eq!((f.stream, f.confidence.as_str()), (1, "high"));
    assert_eq!(
        f.fix[0].action,
        "ip tcp_metrics delete 10.81.1.2; sysctl -w net.ipv4.tcp_no_ssthresh_metrics_save=1 on 10.81.2.2 (vm)"
    );
    // A server bundle with no cached ssthresh (idle-restart-cubic's: no ssthresh in
    // tcp_metrics, save flag 1) contradicts the cache as the cause.
    let r = analyze_with(&cap, &bundle("idle-restart-cubic", "server"));
    let c = correlation(&r.hosts[0], "slow_start.early_exit");
    assert_eq!(c.relation, "contradicts");
    assert!(
        c.note.contains("tcp_no_ssthresh_metrics_save = 1"),
        "{}",
        c.note
    );
}

#[test]
fn analyze_without_host_has_no_host_section() {
    let cap = lab("idle-restart-cubic").join("server.pcap");
    let out = tcpwhy()
        .args(["analyze", "--format", "json"])
        .arg(&cap)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["files"][0].get("hosts").is_none());
}

/// Both ends' bundles at once (`--host client/ --host server/`): the client's is silent on
/// the server's restart, the server's confirms it; the finding carries one host sentence
/// and one host fix.
#[test]
fn both_bundles_each_judge_their_own_side() {
    let cap = lab("idle-restart-cubic").join("client.pcap");
    let out = tcpwhy()
        .args(["analyze", "--format", "json", "--host"])
        .arg(bundle("idle-restart-cubic", "client"))
        .arg("--host")
        .arg(bundle("idle-restart-cubic", "server"))
        .arg(&cap)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let mut doc: AnalyzeDoc = serde_json::from_slice(&out.stdout).unwrap();
    let r = doc.files.remove(0);
    assert_eq!(r.hosts.len(), 2);
    assert!(r.hosts[0].bundle.ends_with("bundle-client"));
    let id = "slow_start.restart_after_idle";
    let (c, s) = (correlation(&r.hosts[0], id), correlation(&r.hosts[1], id));
    assert_eq!((c.side.as_str(), c.relation.as_str()), ("client", "silent"));
    assert_eq!(
        (s.side.as_str(), s.relation.as_str()),
        ("server", "confirms")
    );
    let f = r.findings.iter().find(|f| f.id == id).unwrap();
    assert_eq!(f.explanation.matches("Host state").count(), 1);
    assert_eq!(
        f.fix
            .iter()
            .filter(|x| x.action.contains(" on 10.81."))
            .count(),
        1,
        "{:?}",
        f.fix
    );
}
