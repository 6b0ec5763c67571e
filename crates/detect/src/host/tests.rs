//! The host rules and the join on hand-built views.

use super::*;
use crate::finding::{Finding, FindingId, Fix, Host};
use std::collections::BTreeMap;
use std::net::IpAddr;
use tcpwhy_track::Endpoint;
use tcpwhy_track::Vantage;

fn view(sysctls: &[(&str, &str)]) -> HostView {
    HostView {
        hostname: Some("srv".into()),
        sysctl: sysctls
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..HostView::default()
    }
}

fn counters(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn ep(s: &str) -> Endpoint {
    let (a, p) = s.rsplit_once(':').unwrap();
    Endpoint {
        addr: a.parse().unwrap(),
        port: p.parse().unwrap(),
    }
}

fn finding(id: FindingId) -> Finding {
    Finding {
        id,
        stream: 3,
        endpoints: [ep("10.0.0.1:40000"), ep("10.0.0.2:8080")],
        cost_ns: 50_000_000,
        connections: 1,
        share: None,
        evidence: Vec::new(),
        explanation: "Measured.".into(),
        fix: vec![Fix {
            host: Host::Server,
            action: "generic".into(),
        }],
        confidence: Confidence::Medium,
        vantage: Vantage::Server,
    }
}

fn socket(local: &str, peer: &str) -> LiveSocket {
    LiveSocket {
        state: "ESTAB".into(),
        local: local.into(),
        peer: peer.into(),
        ..LiveSocket::default()
    }
}

fn get(a: &HostAudit, id: HostFindingId) -> &HostFinding {
    a.findings.iter().find(|f| f.id == id).expect("finding")
}

/// Seed 04's machine: tcp_mem 42492 56658 84984, sockstat mem 59932 (above pressure).
#[test]
fn tcp_mem_above_pressure_gives_the_percentages_of_each_threshold() {
    let mut h = view(&[("net.ipv4.tcp_mem", "42492\t56658\t84984")]);
    h.sockstat_tcp = counters(&[
        ("inuse", 7),
        ("orphan", 0),
        ("tw", 1),
        ("alloc", 8),
        ("mem", 59932),
    ]);
    let a = audit(&h);
    let f = get(&a, HostFindingId::TcpMemPressure);
    assert_eq!(f.confidence, Confidence::High);
    // 59932/42492 = 141 %, /56658 = 106 %, /84984 = 71 %; 59932 pages = 234 MiB.
    assert!(
        f.explanation.contains(
            "59932 pages (234 MiB): 141 % of tcp_mem low (42492), 106 % of pressure (56658), 71 % of high (84984)"
        ),
        "{}",
        f.explanation
    );
    assert!(f
        .explanation
        .contains("7 in use, 8 allocated, 0 orphaned, 1 in TIME-WAIT"));
    assert!(f.fix[0].starts_with("sysctl -w net.ipv4.tcp_mem=\"84984 113316 169968\""));
    // Seed 04's "before": mem 1 page, nothing.
    h.sockstat_tcp.insert("mem".into(), 1);
    assert!(audit(&h).findings.is_empty());
    // ... unless TCPMemoryPressures rose between two snapshots.
    h.deltas = Some(counters(&[("TcpExtTCPMemoryPressures", 2)]));
    h.interval_s = Some(10.0);
    let a = audit(&h);
    let f = get(&a, HostFindingId::TcpMemPressure);
    assert_eq!(f.confidence, Confidence::High);
    assert!(f
        .explanation
        .contains("TCPMemoryPressures: +2 in 10.0 s (0.20/s)"));
}

#[test]
fn since_boot_counters_are_low_confidence_and_say_so() {
    let mut h = view(&[("net.core.somaxconn", "4096")]);
    h.counters = counters(&[("TcpExtListenOverflows", 120), ("TcpExtListenDrops", 120)]);
    let a = audit(&h);
    let f = get(&a, HostFindingId::AcceptQueueOverflow);
    assert_eq!(f.confidence, Confidence::Low);
    assert!(f.explanation.contains("ListenOverflows 120 since boot"));
    assert!(f.explanation.contains("run with --interval"));
    h.deltas = Some(counters(&[
        ("TcpExtListenOverflows", 5),
        ("TcpExtListenDrops", 5),
    ]));
    h.interval_s = Some(10.0);
    assert_eq!(
        get(&audit(&h), HostFindingId::AcceptQueueOverflow).confidence,
        Confidence::High
    );
    // Two since boot: below COUNTER_EVENTS_MIN for the spurious rule.
    let mut h = view(&[]);
    h.counters = counters(&[("TcpRetransSegs", 10), ("TcpExtTCPDSACKRecv", 2)]);
    assert!(audit(&h).findings.is_empty());
    h.counters.insert("TcpExtTCPDSACKRecv".into(), 4);
    let a = audit(&h);
    let f = get(&a, HostFindingId::SpuriousRetransmissions);
    assert!(f
        .explanation
        .starts_with("40 % of the segments srv retransmitted"));
}

#[test]
fn window_scaling_off_and_bdp_above_buffer_max() {
    let mut h = view(&[
        ("net.ipv4.tcp_window_scaling", "0"),
        ("net.ipv4.tcp_rmem", "4096 131072 6291456"),
        ("net.ipv4.tcp_wmem", "4096 16384 4194304"),
    ]);
    // 1 Gbit/s × 100 ms = 12.5 MB > both maxima.
    let mut s = socket("10.0.0.2:8080", "10.0.0.1:40000");
    s.delivery_rate_bps = Some(1_000_000_000);
    s.rtt_ms = Some(100.0);
    s.busy_ms = Some(1000);
    s.sndbuf_limited_ms = Some(600);
    h.sockets.push(s);
    let a = audit(&h);
    assert_eq!(
        get(&a, HostFindingId::WindowScalingOff).fix,
        ["sysctl -w net.ipv4.tcp_window_scaling=1"]
    );
    let f = get(&a, HostFindingId::BufferBelowBdp);
    assert!(
        f.explanation
            .contains("BDP 12207 KiB > tcp_wmem max 4096 KiB"),
        "{}",
        f.explanation
    );
    // Twice the BDP, to the next power of two: 25 MB → 32 MiB.
    assert!(
        f.fix[0].contains("tcp_wmem=\"4096 16384 33554432\""),
        "{}",
        f.fix[0]
    );
    assert_eq!(a.sockets[0].limit, "send buffer");
    assert_eq!(a.sockets[0].sndbuf_limited_share, Some(0.6));
}

#[test]
fn slow_start_after_idle_is_likely_with_idle_keepalive_connections() {
    let mut h = view(&[
        ("net.ipv4.tcp_slow_start_after_idle", "1"),
        ("net.ipv4.tcp_congestion_control", "cubic"),
    ]);
    let f = |h: &HostView| audit(h).findings[0].clone();
    assert_eq!(f(&h).confidence, Confidence::Low);
    // ss: lastsnd:1840 rto:228, cubic: idle past its RTO.
    let mut s = socket("10.0.0.2:8080", "10.0.0.1:40000");
    (s.lastsnd_ms, s.rto_ms, s.cc) = (Some(1840), Some(228.0), Some("cubic".into()));
    h.sockets.push(s);
    assert_eq!(f(&h).confidence, Confidence::Medium);
    assert!(f(&h)
        .explanation
        .contains("1 live connection(s) have been idle longer than their RTO"));
    // The same socket on BBR: exempt, and with a BBR default nothing is reported.
    h.sockets[0].cc = Some("bbr".into());
    h.sysctl
        .insert("net.ipv4.tcp_congestion_control".into(), "bbr".into());
    assert!(audit(&h).findings.is_empty());
}

#[test]
fn socket_limits() {
    let mut s = socket("a:1", "b:2");
    s.busy_ms = Some(100);
    s.rwnd_limited_ms = Some(50);
    assert_eq!(socket_limit(&s).limit, "receive window");
    s.rwnd_limited_ms = Some(5);
    s.app_limited = true;
    assert_eq!(socket_limit(&s).limit, "application");
    s.app_limited = false;
    (s.cwnd, s.ssthresh) = (Some(20), Some(30));
    assert_eq!(socket_limit(&s).limit, "slow start");
    (s.cwnd, s.ssthresh) = (Some(40), Some(30));
    assert_eq!(socket_limit(&s).limit, "congestion window");
    s.busy_ms = None;
    assert_eq!(socket_limit(&s).limit, "idle");
}

#[test]
fn join_needs_the_bundle_of_the_deciding_side() {
    let mut h = view(&[
        ("net.ipv4.tcp_slow_start_after_idle", "1"),
        ("net.ipv4.tcp_congestion_control", "cubic"),
    ]);
    // Neither endpoint: silent.
    h.addresses = vec!["192.0.2.9".parse().unwrap()];
    let mut f = vec![finding(FindingId::SlowStartRestartAfterIdle)];
    let j = join(&mut f, &h);
    assert_eq!(j.correlations[0].side, BundleSide::Unknown);
    assert_eq!(j.correlations[0].relation, Relation::Silent);
    assert_eq!(f[0].confidence, Confidence::Medium);
    // The server, no socket in ss: the default congestion control decides.
    h.addresses = vec!["10.0.0.2".parse().unwrap()];
    let j = join(&mut f, &h);
    assert_eq!(j.correlations[0].relation, Relation::Confirms);
    assert_eq!(f[0].confidence, Confidence::High);
    assert_eq!(
        f[0].fix[0].action,
        "sysctl -w net.ipv4.tcp_slow_start_after_idle=0 on 10.0.0.2 (srv)"
    );
    // The socket itself (IPv4-mapped as ss prints it) runs bbr: contradicts.
    h.sockets
        .push(socket("[::ffff:10.0.0.2]:8080", "[::ffff:10.0.0.1]:40000"));
    h.sockets[0].cc = Some("bbr".into());
    let mut f = vec![finding(FindingId::SlowStartRestartAfterIdle)];
    let j = join(&mut f, &h);
    assert_eq!(j.correlations[0].relation, Relation::Contradicts);
    assert!(j.correlations[0]
        .note
        .contains("the connection's socket in ss"));
    assert_eq!(f[0].confidence, Confidence::Low);
}

#[test]
fn join_counters_confirm_only_between_snapshots() {
    let mut h = view(&[("net.ipv4.tcp_reordering", "3")]);
    h.addresses = vec!["10.0.0.2".parse().unwrap()];
    h.counters = counters(&[("TcpExtTCPSACKReorder", 40)]);
    let mut f = vec![finding(FindingId::Reordering)];
    // Totals since boot: not proof for this capture.
    assert_eq!(join(&mut f, &h).correlations[0].relation, Relation::Silent);
    h.deltas = Some(counters(&[("TcpExtTCPSACKReorder", 19)]));
    h.interval_s = Some(2.0);
    h.veth_without_rps = vec!["veth0".into()];
    let j = join(&mut f, &h);
    assert_eq!(j.correlations[0].relation, Relation::Confirms);
    assert!(j.correlations[0]
        .note
        .contains("TcpExtTCPSACKReorder +19 in 2.0 s"));
    assert!(f[0].fix[0]
        .action
        .contains("/sys/class/net/veth0/queues/rx-0/rps_cpus"));
    // A TLP finding with TCPLossProbes flat between snapshots: contradicts.
    h.deltas = Some(counters(&[("TcpExtTCPLossProbes", 0)]));
    let mut f = vec![finding(FindingId::LossTailLossProbe)];
    assert_eq!(
        join(&mut f, &h).correlations[0].relation,
        Relation::Contradicts
    );
}

#[test]
fn window_scaling_join_blames_the_side_that_turned_it_off() {
    let mut h = view(&[("net.ipv4.tcp_window_scaling", "1")]);
    h.addresses = vec!["10.0.0.1".parse().unwrap()];
    let mut f = vec![finding(FindingId::RwndNoWindowScaling)];
    let j = join(&mut f, &h);
    assert_eq!(j.correlations[0].side, BundleSide::Client);
    assert_eq!(j.correlations[0].relation, Relation::Contradicts);
    h.sysctl
        .insert("net.ipv4.tcp_window_scaling".into(), "0".into());
    let mut f = vec![finding(FindingId::RwndNoWindowScaling)];
    let j = join(&mut f, &h);
    assert_eq!(j.correlations[0].relation, Relation::Confirms);
    assert_eq!(f[0].fix[0].host, Host::Client);
}

#[test]
fn from_state_reads_a_parsed_bundle() {
    use tcpwhy_hoststate as hs;
    let mut state = hs::HostState {
        sysctl: Some(hs::parse_sysctl_a("net.ipv4.tcp_window_scaling = 0\n", "sysctl.txt").value),
        tcp_metrics: Some(
            hs::parse_tcp_metrics(
                "10.0.0.1 age 1.0sec ssthresh 7 cwnd 10 rtt 25000us rttvar 12000us source 10.0.0.2\n",
                "tcp_metrics.txt",
            )
            .value,
        ),
        ..hs::HostState::default()
    };
    state.before.sockstat = Some(
        hs::parse_sockstat("TCP: inuse 3 orphan 0 tw 0 alloc 4 mem 9\n", "sockstat.txt").value,
    );
    let v = HostView::from_state(&state);
    assert_eq!(v.get("net.ipv4.tcp_window_scaling"), Some("0"));
    assert_eq!(v.sockstat_tcp.get("mem"), Some(&9));
    assert_eq!(v.metrics[0].ssthresh, Some(7));
    assert_eq!(v.addresses, vec!["10.0.0.2".parse::<IpAddr>().unwrap()]);
    assert!(v.deltas.is_none());
}
