//! Host findings (`host.*`) from one host's state, and the join of a capture's findings
//! with that state (design.md "tcpwhy host", mechanisms.md "Host state that confirms or
//! refutes a capture diagnosis"). No I/O: the binary reads the bundle with
//! `tcpwhy-hoststate`, this module only judges the values.
//!
//! Host findings have no stream: they are about a host's settings and counters, each with
//! the values read (`values`) and the exact command that changes them (`fix`).
//!
//! - `host.slow_start_after_idle`: `net.ipv4.tcp_slow_start_after_idle = 1` with a
//!   congestion control without its own `cong_control` hook (CUBIC, Reno …; BBR is
//!   exempt: `tcp_slow_start_after_idle_check` returns early for it). Every response
//!   after an idle of one RTO restarts from the restart window (RFC 5681 §4.1, seed 01).
//!   Confidence low for the setting alone, medium when ss shows connections idle longer
//!   than their RTO (`lastsnd` > `rto`) that will pay it on their next send.
//! - `host.metrics_cached_ssthresh`: `ip tcp_metrics show` holds an ssthresh for some
//!   peers and `tcp_no_ssthresh_metrics_save = 0`, so `tcp_init_metrics` starts new
//!   connections to them in congestion avoidance at that ssthresh (seed 02).
//! - `host.tcp_mem_pressure`: `/proc/net/sockstat` "TCP … mem" (pages) above the
//!   `tcp_mem` low or pressure threshold, or TCPMemoryPressures rising: windows stop
//!   growing (`tcp_grow_window` under `tcp_under_memory_pressure`, seed 04).
//! - `host.window_scaling_off`: `tcp_window_scaling = 0`: windows capped at 64 KiB.
//! - `host.buffer_below_bdp`: a live connection's bandwidth-delay product (ss delivery
//!   rate × RTT) is above the `tcp_rmem`/`tcp_wmem` maximum, or the connection spends
//!   ≥ 20 % of its busy time limited by a buffer already at that maximum.
//! - `host.accept_queue_overflow`: ListenOverflows / ListenDrops.
//! - `host.spurious_retransmissions`: D-SACKs received and spurious RTOs as a share of
//!   retransmitted segments.
//! - `host.tail_loss_probes`: TCPLossProbes (RFC 8985 TLP) per segment sent.
//! - `host.reordering`: TCPSACKReorder / TCPTSReorder / TCPRenoReorder per segment sent;
//!   with veth interfaces whose RPS is off (seed 03), the fix is RPS.
//!
//! Counters count since boot (or since the namespace was created). With two snapshots
//! the rules judge the deltas (confidence medium or high); with one they judge the totals
//! and say so (confidence low).
//!
//! [`join`] confirms or contradicts capture findings with the host's state, but only for
//! the side of the connection the bundle comes from (its addresses, from ss and `ip
//! addr`): a bundle from the client says nothing about the server's sysctls.

use crate::finding::{Confidence, Finding, FindingId, Fix, Host};
use std::net::IpAddr;
use tcpwhy_hoststate::{BufferTriple, Sysctl, TcpMemLevel, TcpSockstat};
use tcpwhy_track::Endpoint;

/// Share of a connection's busy time limited by the receive window or the send buffer
/// from which the limit is worth a finding (ss's `rwnd_limited:…(P%)`; below a fifth the
/// connection mostly waits for something else).
pub const LIMITED_SHARE_MIN: f64 = 0.20;
/// Events per segment sent from which TLPs or reordering detections are frequent enough
/// to cost: one per thousand segments is one per ~1.4 MB of full-sized segments, i.e.
/// most responses of a few hundred KB would not see one, a bulk transfer sees several.
pub const EVENTS_PER_SEGMENT_MIN: f64 = 1e-3;
/// Share of retransmitted segments proven unnecessary (D-SACK received, spurious RTO)
/// from which spurious retransmissions are a pattern rather than noise.
pub const SPURIOUS_SHARE_MIN: f64 = 0.10;
/// Fewest events since boot before a counter rule fires on one snapshot (a host that
/// has run for months has a few of everything). Between two snapshots one is enough: it
/// happened while the problem was being looked at.
pub const COUNTER_EVENTS_MIN: u64 = 3;
/// Linux's page size for `tcp_mem` and sockstat "mem" (4 KiB on x86-64 and most arm64).
pub const PAGE_BYTES: u64 = 4096;
/// Most peers named in one explanation (the rest are counted).
const MAX_NAMED: usize = 8;
/// Most socket rows in the live-connection table.
pub const MAX_SOCKET_ROWS: usize = 2_000;

/// Host finding ids (stable, like [`FindingId`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HostFindingId {
    SlowStartAfterIdle,
    MetricsCachedSsthresh,
    TcpMemPressure,
    WindowScalingOff,
    BufferBelowBdp,
    AcceptQueueOverflow,
    SpuriousRetransmissions,
    TailLossProbes,
    Reordering,
}

impl HostFindingId {
    pub const ALL: [HostFindingId; 9] = [
        HostFindingId::SlowStartAfterIdle,
        HostFindingId::MetricsCachedSsthresh,
        HostFindingId::TcpMemPressure,
        HostFindingId::WindowScalingOff,
        HostFindingId::BufferBelowBdp,
        HostFindingId::AcceptQueueOverflow,
        HostFindingId::SpuriousRetransmissions,
        HostFindingId::TailLossProbes,
        HostFindingId::Reordering,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            HostFindingId::SlowStartAfterIdle => "host.slow_start_after_idle",
            HostFindingId::MetricsCachedSsthresh => "host.metrics_cached_ssthresh",
            HostFindingId::TcpMemPressure => "host.tcp_mem_pressure",
            HostFindingId::WindowScalingOff => "host.window_scaling_off",
            HostFindingId::BufferBelowBdp => "host.buffer_below_bdp",
            HostFindingId::AcceptQueueOverflow => "host.accept_queue_overflow",
            HostFindingId::SpuriousRetransmissions => "host.spurious_retransmissions",
            HostFindingId::TailLossProbes => "host.tail_loss_probes",
            HostFindingId::Reordering => "host.reordering",
        }
    }
}

/// One value a host finding is based on, as read.
#[derive(Clone, Debug, PartialEq)]
pub struct HostValue {
    /// `net.ipv4.tcp_mem`, `TcpExtListenOverflows`, `tcp_metrics 10.0.0.2 ssthresh` …
    pub name: String,
    pub value: String,
    /// The bundle file it was read from.
    pub source: &'static str,
}

/// One finding about a host's settings or counters (no stream, no cost in ms).
#[derive(Clone, Debug)]
pub struct HostFinding {
    pub id: HostFindingId,
    /// The mechanism and the values read, in two or three sentences.
    pub explanation: String,
    /// Exact commands, in the order to try them.
    pub fix: Vec<String>,
    pub confidence: Confidence,
    pub values: Vec<HostValue>,
}

/// A tcp_metrics cache entry, as far as the rules need it.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricsEntry {
    pub addr: IpAddr,
    pub ssthresh: Option<u64>,
    pub cwnd: Option<u64>,
    pub rtt_us: Option<u64>,
}

/// A live TCP socket, as far as the rules need it (from `ss -tinmO`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveSocket {
    pub state: String,
    pub local: String,
    pub peer: String,
    pub cc: Option<String>,
    pub cwnd: Option<u32>,
    pub ssthresh: Option<u32>,
    pub mss: Option<u32>,
    pub rtt_ms: Option<f64>,
    pub delivery_rate_bps: Option<u64>,
    pub busy_ms: Option<u64>,
    pub rwnd_limited_ms: Option<u64>,
    pub sndbuf_limited_ms: Option<u64>,
    pub app_limited: bool,
    /// Socket receive / send buffer sizes (skmem rb / tb).
    pub rcvbuf: Option<u64>,
    pub sndbuf: Option<u64>,
    pub retrans_total: Option<u32>,
    /// Milliseconds since the socket last sent data, and its retransmission timeout.
    pub lastsnd_ms: Option<u64>,
    pub rto_ms: Option<f64>,
}

impl LiveSocket {
    /// Idle (nothing sent) for longer than its RTO: its next send restarts slow start
    /// where the restart applies.
    fn idle_past_rto(&self) -> bool {
        matches!((self.lastsnd_ms, self.rto_ms), (Some(l), Some(r)) if l as f64 > r)
    }

    fn addr(ep: &str) -> Option<IpAddr> {
        let (a, _) = ep.rsplit_once(':')?;
        let a = a.trim_start_matches('[').trim_end_matches(']');
        // `10.0.0.1%eth0`, and IPv4-mapped IPv6 as the kernel prints it.
        let a = a.split('%').next()?;
        let ip: IpAddr = a.parse().ok()?;
        Some(unmap(ip))
    }
    fn port(ep: &str) -> Option<u16> {
        ep.rsplit_once(':')?.1.parse().ok()
    }
    pub fn local_addr(&self) -> Option<IpAddr> {
        Self::addr(&self.local)
    }
    pub fn peer_addr(&self) -> Option<IpAddr> {
        Self::addr(&self.peer)
    }
    /// True when this socket is one end of the connection between `a` and `b`.
    fn is_conn(&self, a: &Endpoint, b: &Endpoint) -> bool {
        let me = (self.local_addr(), Self::port(&self.local));
        let them = (self.peer_addr(), Self::port(&self.peer));
        let ep = |e: &Endpoint| (Some(unmap(e.addr)), Some(e.port));
        (me == ep(a) && them == ep(b)) || (me == ep(b) && them == ep(a))
    }
    /// The bandwidth-delay product this socket measured (delivery rate × smoothed RTT).
    pub fn bdp_bytes(&self) -> Option<u64> {
        let rate = self.delivery_rate_bps? as f64 / 8.0;
        let rtt = self.rtt_ms? / 1e3;
        Some((rate * rtt) as u64)
    }
    fn share(&self, ms: Option<u64>) -> Option<f64> {
        let busy = self.busy_ms.filter(|b| *b > 0)? as f64;
        Some(ms? as f64 / busy)
    }
    pub fn rwnd_limited_share(&self) -> Option<f64> {
        self.share(self.rwnd_limited_ms)
    }
    pub fn sndbuf_limited_share(&self) -> Option<f64> {
        self.share(self.sndbuf_limited_ms)
    }
}

fn unmap(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Everything the rules read from one host, gathered in one place (the binary builds it
/// from `tcpwhy_hoststate::HostState`; tests build it by hand).
#[derive(Clone, Debug, Default)]
pub struct HostView {
    pub hostname: Option<String>,
    pub kernel: Option<String>,
    /// Seconds between the two counter snapshots, when there are two.
    pub interval_s: Option<f64>,
    /// Kernel settings, with hoststate's typed accessors (`tcp_mem()`, `tcp_rmem()` …).
    pub sysctl: Sysctl,
    /// `/proc/net/sockstat` "TCP:" fields of the latest snapshot (inuse, orphan, tw,
    /// alloc, mem).
    pub sockstat_tcp: std::collections::BTreeMap<String, u64>,
    /// Counters (nstat names) of the latest snapshot.
    pub counters: std::collections::BTreeMap<String, u64>,
    /// Counter name → increase between the two snapshots.
    pub deltas: Option<std::collections::BTreeMap<String, u64>>,
    pub sockets: Vec<LiveSocket>,
    pub metrics: Vec<MetricsEntry>,
    /// veth interfaces none of whose receive queues has RPS on.
    pub veth_without_rps: Vec<String>,
    /// This host's addresses (from `ip addr`, or the local side of its sockets).
    pub addresses: Vec<IpAddr>,
    /// Inputs that could not be read, and why.
    pub unread: Vec<String>,
}

impl HostView {
    /// A sysctl value as read (for the values a finding cites).
    fn get(&self, key: &str) -> Option<&str> {
        self.sysctl.get(key)
    }
    /// The sockstat "TCP:" line, typed.
    fn tcp_sockstat(&self) -> TcpSockstat {
        TcpSockstat::from_fields(&self.sockstat_tcp)
    }
    /// The counter's increase between snapshots, or (second) its total since boot.
    fn counter(&self, name: &str) -> Option<Count> {
        match &self.deltas {
            Some(d) => d.get(name).map(|v| Count::Delta(*v)),
            None => self.counters.get(name).map(|v| Count::Total(*v)),
        }
    }
    fn label(&self) -> String {
        match &self.hostname {
            Some(h) => h.clone(),
            None => "this host".into(),
        }
    }
    /// Whether this host has `addr`.
    pub fn has_addr(&self, addr: IpAddr) -> bool {
        let a = unmap(addr);
        self.addresses.iter().any(|x| unmap(*x) == a)
            || self.sockets.iter().any(|s| s.local_addr() == Some(a))
    }
}

/// A counter value and what it covers.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Count {
    /// Since the first snapshot.
    Delta(u64),
    /// Since boot (one snapshot).
    Total(u64),
}

impl Count {
    fn n(self) -> u64 {
        match self {
            Count::Delta(n) | Count::Total(n) => n,
        }
    }
    /// Whether `n` events of this kind are worth a rule (see [`COUNTER_EVENTS_MIN`]).
    fn enough(self, n: u64) -> bool {
        match self {
            Count::Delta(_) => n >= 1,
            Count::Total(_) => n >= COUNTER_EVENTS_MIN,
        }
    }
}

/// What `tcpwhy host` reports.
#[derive(Clone, Debug, Default)]
pub struct HostAudit {
    /// Sorted: highest confidence first, then by id.
    pub findings: Vec<HostFinding>,
    /// Live connections and the limit each hits now.
    pub sockets: Vec<SocketLimit>,
    /// Counters the rules read: (name, total, delta when two snapshots).
    pub counters: Vec<(String, u64, Option<u64>)>,
    pub interval_s: Option<f64>,
}

/// What limits one live connection now (ss's tcp_info).
#[derive(Clone, Debug, PartialEq)]
pub struct SocketLimit {
    pub local: String,
    pub peer: String,
    pub cc: Option<String>,
    pub cwnd: Option<u32>,
    pub ssthresh: Option<u32>,
    pub rtt_ms: Option<f64>,
    pub delivery_rate_bps: Option<u64>,
    pub busy_ms: Option<u64>,
    pub rwnd_limited_share: Option<f64>,
    pub sndbuf_limited_share: Option<f64>,
    pub app_limited: bool,
    /// `receive window`, `send buffer`, `application`, `slow start`, `congestion window`
    /// or `idle`.
    pub limit: &'static str,
}

/// Counters listed in the audit's table (mechanisms.md's list).
const COUNTERS: &[&str] = &[
    "TcpExtTCPLossProbes",
    "TcpExtTCPLossProbeRecovery",
    "TcpExtTCPSpuriousRTOs",
    "TcpExtTCPDSACKRecv",
    "TcpExtTCPSACKReorder",
    "TcpExtTCPTSReorder",
    "TcpExtTCPRenoReorder",
    "TcpExtTCPFastRetrans",
    "TcpExtTCPTimeouts",
    "TcpExtTCPMemoryPressures",
    "TcpExtTCPAbortOnMemory",
    "TcpExtListenOverflows",
    "TcpExtListenDrops",
    "TcpExtTCPSynRetrans",
    "TcpRetransSegs",
    "TcpOutSegs",
];

/// Runs every host rule.
pub fn audit(h: &HostView) -> HostAudit {
    let mut findings = Vec::new();
    let rules: [fn(&HostView) -> Option<HostFinding>; 9] = [
        slow_start_after_idle,
        metrics_cached_ssthresh,
        tcp_mem_pressure,
        window_scaling_off,
        buffer_below_bdp,
        accept_queue_overflow,
        spurious_retransmissions,
        tail_loss_probes,
        reordering,
    ];
    for rule in rules {
        findings.extend(rule(h));
    }
    findings.sort_by(|a, b| b.confidence.cmp(&a.confidence).then(a.id.cmp(&b.id)));
    let counters = COUNTERS
        .iter()
        .filter_map(|name| {
            let total = *h.counters.get(*name)?;
            let delta = h.deltas.as_ref().and_then(|d| d.get(*name).copied());
            Some((name.to_string(), total, delta))
        })
        .collect();
    HostAudit {
        findings,
        sockets: h
            .sockets
            .iter()
            .filter(|s| s.state == "ESTAB")
            .take(MAX_SOCKET_ROWS)
            .map(socket_limit)
            .collect(),
        counters,
        interval_s: h.interval_s,
    }
}

/// Which limit a live connection hits now, from its tcp_info.
pub fn socket_limit(s: &LiveSocket) -> SocketLimit {
    let rwnd = s.rwnd_limited_share();
    let sndbuf = s.sndbuf_limited_share();
    let limit = match (rwnd, sndbuf) {
        (Some(r), sb) if r >= LIMITED_SHARE_MIN && r >= sb.unwrap_or(0.0) => "receive window",
        (_, Some(sb)) if sb >= LIMITED_SHARE_MIN => "send buffer",
        _ if s.app_limited => "application",
        _ if s.busy_ms.is_none_or(|b| b == 0) => "idle",
        _ => match (s.cwnd, s.ssthresh) {
            (Some(c), Some(t)) if c < t => "slow start",
            (Some(_), None) => "slow start",
            _ => "congestion window",
        },
    };
    SocketLimit {
        local: s.local.clone(),
        peer: s.peer.clone(),
        cc: s.cc.clone(),
        cwnd: s.cwnd,
        ssthresh: s.ssthresh,
        rtt_ms: s.rtt_ms,
        delivery_rate_bps: s.delivery_rate_bps,
        busy_ms: s.busy_ms,
        rwnd_limited_share: rwnd,
        sndbuf_limited_share: sndbuf,
        app_limited: s.app_limited,
        limit,
    }
}

fn sysctl_value(h: &HostView, key: &str) -> Option<HostValue> {
    Some(HostValue {
        name: key.to_string(),
        value: h.get(key)?.to_string(),
        source: "sysctl.txt",
    })
}

fn counter_value(h: &HostView, name: &str) -> Option<HostValue> {
    let c = h.counter(name)?;
    Some(HostValue {
        name: name.to_string(),
        value: count_text(h, c),
        source: "nstat.txt",
    })
}

fn count_text(h: &HostView, c: Count) -> String {
    match (c, h.interval_s) {
        (Count::Delta(n), Some(s)) if s > 0.0 => {
            format!("+{n} in {s:.1} s ({:.2}/s)", n as f64 / s)
        }
        (Count::Delta(n), _) => format!("+{n}"),
        (Count::Total(n), _) => format!("{n} since boot"),
    }
}

/// Congestion controls whose module has its own `cong_control` hook and so skips the
/// idle restart (`tcp_slow_start_after_idle_check`): BBR and its successors.
fn exempt_from_idle_restart(cc: &str) -> bool {
    cc.starts_with("bbr")
}

fn slow_start_after_idle(h: &HostView) -> Option<HostFinding> {
    if !h.sysctl.tcp_slow_start_after_idle()? {
        return None;
    }
    let default = h.sysctl.tcp_congestion_control();
    // Sockets may choose their own congestion control (TCP_CONGESTION): count the live
    // ones that honour the restart.
    let live: Vec<&LiveSocket> = h.sockets.iter().filter(|s| s.state == "ESTAB").collect();
    let honouring = live
        .iter()
        .filter(|s| {
            s.cc.as_deref()
                .is_some_and(|c| !exempt_from_idle_restart(c))
        })
        .count();
    let default_honours = default.is_some_and(|c| !exempt_from_idle_restart(c));
    if !default_honours && honouring == 0 {
        return None;
    }
    let mut values: Vec<HostValue> = [
        "net.ipv4.tcp_slow_start_after_idle",
        "net.ipv4.tcp_congestion_control",
    ]
    .iter()
    .filter_map(|k| sysctl_value(h, k))
    .collect();
    let mut why = format!(
        "net.ipv4.tcp_slow_start_after_idle = 1 on {}: a connection that sent nothing for one \
         retransmission timeout (≥ 200 ms) restarts from the initial window when it sends \
         again (RFC 5681 §4.1), so every response after an idle keep-alive pays slow start \
         again.",
        h.label()
    );
    match default {
        Some(c) if default_honours => why += &format!(" The default congestion control, {c}, honours it."),
        Some(c) => why += &format!(" The default congestion control, {c}, is exempt, but {honouring} of {} live connection(s) chose one that honours it.", live.len()),
        None => {}
    }
    // The setting costs only connections that go idle and send again (keep-alive): with
    // such connections live it is a likely cost, without them a setting to know about.
    let idle = live
        .iter()
        .filter(|s| {
            s.idle_past_rto() && s.cc.as_deref().is_none_or(|c| !exempt_from_idle_restart(c))
        })
        .count();
    if idle > 0 {
        why += &format!(" {idle} live connection(s) have been idle longer than their RTO: their next response restarts.");
        values.push(HostValue {
            name: "ss: connections idle longer than their RTO (lastsnd > rto)".into(),
            value: idle.to_string(),
            source: "ss.txt",
        });
    }
    if honouring > 0 {
        values.push(HostValue {
            name: "ss: connections whose congestion control restarts after idle".into(),
            value: format!("{honouring} of {}", live.len()),
            source: "ss.txt",
        });
    }
    Some(HostFinding {
        id: HostFindingId::SlowStartAfterIdle,
        explanation: why,
        fix: vec![
            "sysctl -w net.ipv4.tcp_slow_start_after_idle=0".into(),
            "echo net.ipv4.tcp_slow_start_after_idle=0 > /etc/sysctl.d/90-tcp-idle.conf (keeps it after a reboot)".into(),
        ],
        confidence: if idle > 0 {
            Confidence::Medium
        } else {
            Confidence::Low
        },
        values,
    })
}

fn metrics_cached_ssthresh(h: &HostView) -> Option<HostFinding> {
    // tcp_init_metrics uses a cached ssthresh only when this is 0. Not
    // Sysctl::ssthresh_cached(): tcp_no_metrics_save = 1 only stops new entries being
    // saved, the ones ip tcp_metrics shows are still applied.
    if h.sysctl.tcp_no_ssthresh_metrics_save()? {
        return None;
    }
    let cached: Vec<&MetricsEntry> = h.metrics.iter().filter(|m| m.ssthresh.is_some()).collect();
    if cached.is_empty() {
        return None;
    }
    let mut values: Vec<HostValue> = [
        "net.ipv4.tcp_no_metrics_save",
        "net.ipv4.tcp_no_ssthresh_metrics_save",
    ]
    .iter()
    .filter_map(|k| sysctl_value(h, k))
    .collect();
    let mut named = Vec::new();
    for m in cached.iter().take(MAX_NAMED) {
        let s = m.ssthresh.unwrap_or(0);
        named.push(format!("{} (ssthresh {s})", m.addr));
        values.push(HostValue {
            name: format!("tcp_metrics {} ssthresh", m.addr),
            value: s.to_string(),
            source: "tcp_metrics.txt",
        });
    }
    if cached.len() > MAX_NAMED {
        named.push(format!("and {} more", cached.len() - MAX_NAMED));
    }
    let first = cached[0].addr;
    Some(HostFinding {
        id: HostFindingId::MetricsCachedSsthresh,
        explanation: format!(
            "{} caches the ssthresh of closed connections per destination and starts new \
             connections to it there (tcp_no_ssthresh_metrics_save = 0): {}. A connection \
             to these peers leaves slow start at that window and then grows by one segment \
             per round trip, even when the path is idle now.",
            h.label(),
            named.join(", ")
        ),
        fix: vec![
            format!("ip tcp_metrics delete {first}   (or: ip tcp_metrics flush all)"),
            "sysctl -w net.ipv4.tcp_no_ssthresh_metrics_save=1".into(),
        ],
        confidence: Confidence::High,
        values,
    })
}

fn tcp_mem_pressure(h: &HostView) -> Option<HostFinding> {
    let mem = h.sysctl.tcp_mem();
    let st = h.tcp_sockstat();
    let pressures = h.counter("TcpExtTCPMemoryPressures");
    let aborts = h.counter("TcpExtTCPAbortOnMemory");
    // Above high is worse than pressure (allocations fail): the same finding.
    let over = match mem.and_then(|m| st.mem_level(&m)) {
        Some(TcpMemLevel::Pressure | TcpMemLevel::High) => Some(Confidence::High),
        Some(TcpMemLevel::AboveLow) => Some(Confidence::Medium),
        _ => None,
    };
    let rising = matches!(pressures, Some(Count::Delta(n)) if n > 0)
        || matches!(aborts, Some(Count::Delta(n)) if n > 0);
    let since_boot = matches!(pressures, Some(Count::Total(n)) if n > 0);
    let confidence = match (over, rising, since_boot) {
        (Some(c), _, _) => c.max(if rising { Confidence::High } else { c }),
        (None, true, _) => Confidence::High,
        (None, false, true) => Confidence::Low,
        _ => return None,
    };
    let mut why = String::new();
    let mut values = Vec::new();
    if let (Some(m), Some(u)) = (mem, st.mem_pages) {
        let pct = |t: u64| {
            if t == 0 {
                0.0
            } else {
                u as f64 * 100.0 / t as f64
            }
        };
        why += &format!(
            "TCP memory in use on {} is {u} pages ({} MiB): {:.0} % of tcp_mem low ({}), \
             {:.0} % of pressure ({}), {:.0} % of high ({}).",
            h.label(),
            u.saturating_mul(PAGE_BYTES) >> 20,
            pct(m.low_pages),
            m.low_pages,
            pct(m.pressure_pages),
            m.pressure_pages,
            pct(m.high_pages),
            m.high_pages
        );
        values.extend(sysctl_value(h, "net.ipv4.tcp_mem"));
        values.push(HostValue {
            name: "sockstat TCP mem (pages)".into(),
            value: u.to_string(),
            source: "sockstat.txt",
        });
    }
    if let (Some(inuse), Some(alloc)) = (st.inuse, st.alloc) {
        why += &format!(
            " Sockets: {inuse} in use, {alloc} allocated, {} orphaned, {} in TIME-WAIT.",
            st.orphan.unwrap_or(0),
            st.tw.unwrap_or(0)
        );
    }
    if let Some(p) = pressures {
        why += &format!(" TCPMemoryPressures: {}.", count_text(h, p));
        values.extend(counter_value(h, "TcpExtTCPMemoryPressures"));
    }
    if let Some(a) = aborts.filter(|a| a.n() > 0) {
        why += &format!(" TCPAbortOnMemory: {}.", count_text(h, a));
        values.extend(counter_value(h, "TcpExtTCPAbortOnMemory"));
    }
    why += " Above the pressure threshold every connection's receive window stops growing \
            (tcp_grow_window); above high, allocations fail.";
    if since_boot && over.is_none() && !rising {
        why += " The counter is a total since boot: run with --interval to see whether it is rising now.";
    }
    let fix = match mem {
        Some(m) => vec![
            format!(
                "sysctl -w net.ipv4.tcp_mem=\"{} {} {}\"   (double it, if the host has the memory free)",
                m.low_pages.saturating_mul(2),
                m.pressure_pages.saturating_mul(2),
                m.high_pages.saturating_mul(2)
            ),
            "look for socket leaks: many allocated or orphaned sockets (ss -tan state close-wait; lsof -p PID | grep -c TCP)".into(),
        ],
        None => vec!["raise net.ipv4.tcp_mem; look for socket leaks (orphans, close-wait)".into()],
    };
    Some(HostFinding {
        id: HostFindingId::TcpMemPressure,
        explanation: why.trim().to_string(),
        fix,
        confidence,
        values,
    })
}

fn window_scaling_off(h: &HostView) -> Option<HostFinding> {
    if h.sysctl.tcp_window_scaling()? {
        return None;
    }
    Some(HostFinding {
        id: HostFindingId::WindowScalingOff,
        explanation: format!(
            "net.ipv4.tcp_window_scaling = 0 on {}: it neither offers nor accepts window \
             scaling (RFC 7323), so every connection's window is at most 65,535 bytes: \
             ≈ 5 Mbit/s at a 100 ms round trip whatever the bandwidth.",
            h.label()
        ),
        fix: vec!["sysctl -w net.ipv4.tcp_window_scaling=1".into()],
        confidence: Confidence::High,
        values: sysctl_value(h, "net.ipv4.tcp_window_scaling")
            .into_iter()
            .collect(),
    })
}

/// (the `tcp_rmem` max, the `tcp_wmem` max) in bytes.
fn buffer_maxima(h: &HostView) -> (Option<u64>, Option<u64>) {
    let max = |t: Option<BufferTriple>| t.map(|t| t.max_bytes);
    (max(h.sysctl.tcp_rmem()), max(h.sysctl.tcp_wmem()))
}

fn buffer_below_bdp(h: &HostView) -> Option<HostFinding> {
    let (rmax, wmax) = buffer_maxima(h);
    let mut hits = Vec::new();
    for s in h.sockets.iter().filter(|s| s.state == "ESTAB") {
        let bdp = s.bdp_bytes();
        let at_max = |buf: Option<u64>, max: Option<u64>| match (buf, max) {
            // The kernel doubles SO_SNDBUF/SO_RCVBUF for overhead; autotuning stops at max.
            (Some(b), Some(m)) => b >= m,
            _ => false,
        };
        let snd = s.sndbuf_limited_share().unwrap_or(0.0);
        let rcv = s.rwnd_limited_share().unwrap_or(0.0);
        let reason = match (bdp, wmax, rmax) {
            (Some(b), Some(w), _) if b > w => Some(format!(
                "BDP {} KiB > tcp_wmem max {} KiB",
                b >> 10,
                w >> 10
            )),
            (Some(b), _, Some(r)) if b > r => Some(format!(
                "BDP {} KiB > tcp_rmem max {} KiB",
                b >> 10,
                r >> 10
            )),
            _ => None,
        }
        .or_else(|| {
            (snd >= LIMITED_SHARE_MIN && at_max(s.sndbuf, wmax)).then(|| {
                format!(
                    "send-buffer-limited {:.0} % of busy time with its buffer at tcp_wmem max",
                    snd * 100.0
                )
            })
        })
        .or_else(|| {
            (rcv >= LIMITED_SHARE_MIN && at_max(s.rcvbuf, rmax)).then(|| {
                format!(
                    "receive-window-limited {:.0} % of busy time with its buffer at tcp_rmem max",
                    rcv * 100.0
                )
            })
        });
        if let Some(r) = reason {
            hits.push((s, r));
        }
    }
    if hits.is_empty() {
        return None;
    }
    let mut values: Vec<HostValue> = [
        "net.ipv4.tcp_rmem",
        "net.ipv4.tcp_wmem",
        "net.core.rmem_max",
        "net.core.wmem_max",
    ]
    .iter()
    .filter_map(|k| sysctl_value(h, k))
    .collect();
    let mut named = Vec::new();
    for (s, r) in hits.iter().take(MAX_NAMED) {
        let rate = s
            .delivery_rate_bps
            .map_or("?".into(), |b| format!("{:.1} Mbit/s", b as f64 / 1e6));
        let rtt = s.rtt_ms.map_or("?".into(), |r| format!("{r:.1} ms"));
        named.push(format!("{} → {} ({rate} × {rtt}: {r})", s.local, s.peer));
        values.push(HostValue {
            name: format!("ss {} → {}", s.local, s.peer),
            value: format!("delivery_rate {rate}, rtt {rtt}"),
            source: "ss.txt",
        });
    }
    if hits.len() > MAX_NAMED {
        named.push(format!("and {} more", hits.len() - MAX_NAMED));
    }
    // Room for the largest bandwidth-delay product seen, twice (the kernel counts
    // overhead against the buffer: tcp_adv_win_scale).
    let need = hits
        .iter()
        .filter_map(|(s, _)| s.bdp_bytes())
        .max()
        .unwrap_or(0)
        .saturating_mul(2)
        .max(rmax.unwrap_or(0))
        .max(wmax.unwrap_or(0))
        .max(1 << 20)
        .checked_next_power_of_two()
        .unwrap_or(u64::MAX);
    Some(HostFinding {
        id: HostFindingId::BufferBelowBdp,
        explanation: format!(
            "The socket buffers on {} cannot hold a bandwidth-delay product of these \
             connections, so they wait for ACKs with the path idle: {}.",
            h.label(),
            named.join("; ")
        ),
        fix: vec![
            format!("sysctl -w net.ipv4.tcp_wmem=\"4096 16384 {need}\" net.ipv4.tcp_rmem=\"4096 131072 {need}\""),
            "remove fixed SO_SNDBUF / SO_RCVBUF settings in the application (they disable autotuning)".into(),
        ],
        confidence: Confidence::Medium,
        values,
    })
}

fn accept_queue_overflow(h: &HostView) -> Option<HostFinding> {
    let over = h.counter("TcpExtListenOverflows");
    let drops = h.counter("TcpExtListenDrops");
    let n = over.map_or(0, Count::n).max(drops.map_or(0, Count::n));
    if n == 0 {
        return None;
    }
    let delta = matches!(over.or(drops), Some(Count::Delta(_)));
    let mut values: Vec<HostValue> = ["TcpExtListenOverflows", "TcpExtListenDrops"]
        .iter()
        .filter_map(|k| counter_value(h, k))
        .collect();
    values.extend(
        ["net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog"]
            .iter()
            .filter_map(|k| sysctl_value(h, k)),
    );
    let somaxconn = h.get("net.core.somaxconn").unwrap_or("?");
    Some(HostFinding {
        id: HostFindingId::AcceptQueueOverflow,
        explanation: format!(
            "A listening socket's accept queue on {} was full: ListenOverflows {}, \
             ListenDrops {}. The kernel dropped the client's handshake ACK or SYN, and the \
             client waits for its SYN retransmission (1 s, then 2 s, …). net.core.somaxconn \
             = {somaxconn} caps every listen() backlog.{}",
            h.label(),
            over.map_or("-".into(), |c| count_text(h, c)),
            drops.map_or("-".into(), |c| count_text(h, c)),
            if delta { "" } else { " These are totals since boot: run with --interval to see whether it happens now." }
        ),
        fix: vec![
            "sysctl -w net.core.somaxconn=4096 net.ipv4.tcp_max_syn_backlog=4096".into(),
            "raise the server's listen backlog (e.g. nginx `listen … backlog=4096`) and accept faster (more accept threads)".into(),
            "ss -ltn: a listener whose Recv-Q reaches its Send-Q is the one overflowing".into(),
        ],
        confidence: if delta { Confidence::High } else { Confidence::Low },
        values,
    })
}

/// Confidence of a counter rule: deltas are what happens now, totals since boot may be
/// last month's.
fn counter_confidence(c: Count, strong: bool) -> Confidence {
    match (c, strong) {
        (Count::Delta(_), true) => Confidence::High,
        (Count::Delta(_), false) => Confidence::Medium,
        (Count::Total(_), _) => Confidence::Low,
    }
}

fn since_boot_note(c: Count) -> &'static str {
    match c {
        Count::Total(_) => {
            " These are totals since boot: run with --interval to see whether it happens now."
        }
        Count::Delta(_) => "",
    }
}

fn spurious_retransmissions(h: &HostView) -> Option<HostFinding> {
    let retrans = h.counter("TcpRetransSegs")?;
    let dsack = h.counter("TcpExtTCPDSACKRecv");
    let rtos = h.counter("TcpExtTCPSpuriousRTOs");
    let spurious = dsack
        .map_or(0, Count::n)
        .saturating_add(rtos.map_or(0, Count::n));
    if retrans.n() == 0 || !retrans.enough(spurious) {
        return None;
    }
    let share = spurious as f64 / retrans.n() as f64;
    if share < SPURIOUS_SHARE_MIN {
        return None;
    }
    let values = [
        "TcpRetransSegs",
        "TcpExtTCPDSACKRecv",
        "TcpExtTCPSpuriousRTOs",
        "TcpExtTCPFastRetrans",
    ]
    .iter()
    .filter_map(|k| counter_value(h, k))
    .collect();
    Some(HostFinding {
        id: HostFindingId::SpuriousRetransmissions,
        explanation: format!(
            "{:.0} % of the segments {} retransmitted were not lost: the receivers reported \
             {} duplicate(s) with D-SACK and {} RTO(s) were spurious, out of {} \
             retransmitted segments. Each spurious retransmission also cut the congestion \
             window. Reordering (veth without RPS, multipath) or a delay spike longer than \
             the RTO causes this.{}",
            share * 100.0,
            h.label(),
            dsack.map_or(0, Count::n),
            rtos.map_or(0, Count::n),
            retrans.n(),
            since_boot_note(retrans)
        ),
        fix: vec![
            "sysctl -w net.ipv4.tcp_recovery=1 (RACK, the default: tolerates reordering by time)".into(),
            "sysctl -w net.ipv4.tcp_reordering=9 (tolerate more reordering before a fast retransmit)".into(),
            "find the reordering or delay: nstat -az TcpExtTCPSACKReorder TcpExtTCPTSReorder".into(),
        ],
        confidence: counter_confidence(retrans, share >= 2.0 * SPURIOUS_SHARE_MIN),
        values,
    })
}

fn per_segment(h: &HostView, n: u64) -> Option<f64> {
    let out = h.counter("TcpOutSegs")?.n();
    (out > 0).then(|| n as f64 / out as f64)
}

fn tail_loss_probes(h: &HostView) -> Option<HostFinding> {
    let probes = h.counter("TcpExtTCPLossProbes")?;
    if !probes.enough(probes.n()) {
        return None;
    }
    let rate = per_segment(h, probes.n())?;
    if rate < EVENTS_PER_SEGMENT_MIN {
        return None;
    }
    let recovered = h.counter("TcpExtTCPLossProbeRecovery").map_or(0, Count::n);
    let mut values: Vec<HostValue> = [
        "TcpExtTCPLossProbes",
        "TcpExtTCPLossProbeRecovery",
        "TcpOutSegs",
    ]
    .iter()
    .filter_map(|k| counter_value(h, k))
    .collect();
    values.extend(sysctl_value(h, "net.ipv4.tcp_early_retrans"));
    let tlp_on = h.sysctl.tail_loss_probe_enabled().unwrap_or(true);
    Some(HostFinding {
        id: HostFindingId::TailLossProbes,
        explanation: format!(
            "{} sent {} tail loss probe(s) ({:.1} per 1000 segments sent): the last segments \
             of a burst went unacknowledged for about two round trips, so the sender \
             retransmitted one to provoke a SACK (RFC 8985). {recovered} of them recovered a \
             real loss; each costs ≥ 2 RTT of waiting at the end of a response.{}",
            h.label(),
            probes.n(),
            rate * 1e3,
            since_boot_note(probes)
        ),
        fix: if tlp_on {
            vec![
                "find where the tails are dropped: tc -s qdisc (drops, overlimits), ethtool -S IFACE | grep -i drop".into(),
                "keep net.ipv4.tcp_early_retrans=3 (TLP): without it each tail loss waits for the RTO (≥ 200 ms)".into(),
            ]
        } else {
            vec!["sysctl -w net.ipv4.tcp_early_retrans=3 (tail loss probes instead of RTOs)".into()]
        },
        confidence: counter_confidence(probes, recovered > 0),
        values,
    })
}

fn reordering(h: &HostView) -> Option<HostFinding> {
    let names = [
        "TcpExtTCPSACKReorder",
        "TcpExtTCPTSReorder",
        "TcpExtTCPRenoReorder",
    ];
    let counts: Vec<Count> = names.iter().filter_map(|n| h.counter(n)).collect();
    let first = *counts.first()?;
    let n = counts.iter().fold(0u64, |a, c| a.saturating_add(c.n()));
    if !first.enough(n) || per_segment(h, n)? < EVENTS_PER_SEGMENT_MIN {
        return None;
    }
    let mut values: Vec<HostValue> = names
        .iter()
        .chain(&["TcpExtTCPFastRetrans", "TcpExtTCPDSACKRecv"])
        .filter_map(|k| counter_value(h, k))
        .collect();
    values.extend(sysctl_value(h, "net.ipv4.tcp_reordering"));
    let mut why = format!(
        "{} detected reordering {n} time(s) ({:.1} per 1000 segments sent; SACK, \
         timestamp and Reno detections). Packets that arrive out of order look like loss: \
         the sender fast-retransmits and halves its window although nothing was lost.",
        h.label(),
        per_segment(h, n).unwrap_or(0.0) * 1e3
    );
    let mut fix = Vec::new();
    if !h.veth_without_rps.is_empty() {
        why += &format!(
            " veth interface(s) without Receive Packet Steering: {} — if the reordering is \
             on them, a container's packets are queued on whichever CPU the sender runs on \
             and processed out of order (seed 03).",
            h.veth_without_rps.join(", ")
        );
        for v in h.veth_without_rps.iter().take(MAX_NAMED) {
            values.push(HostValue {
                name: format!("/sys/class/net/{v}/queues/rx-*/rps_cpus"),
                value: "0 (RPS off)".into(),
                source: "rps/",
            });
            fix.push(format!(
                "echo <CPU mask, e.g. f for CPUs 0-3> > /sys/class/net/{v}/queues/rx-0/rps_cpus"
            ));
        }
    }
    why += since_boot_note(first);
    fix.push(
        "sysctl -w net.ipv4.tcp_reordering=9 (tolerate more reordering before a fast retransmit)"
            .into(),
    );
    fix.push("find the reordering element (multipath/ECMP, bonding, a veth without RPS)".into());
    Some(HostFinding {
        id: HostFindingId::Reordering,
        explanation: why,
        fix,
        // RPS is off on veth by default, so its absence is a lead, not proof.
        confidence: counter_confidence(
            first,
            per_segment(h, n).unwrap_or(0.0) >= 10.0 * EVENTS_PER_SEGMENT_MIN,
        ),
        values,
    })
}

// ---------------------------------------------------------------------------------------
// The join: capture findings × one host's state.

/// Which side of the capture's connections a bundle comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BundleSide {
    Client,
    Server,
    /// The bundle's addresses match neither endpoint of any finding.
    Unknown,
}

impl BundleSide {
    pub const fn as_str(self) -> &'static str {
        match self {
            BundleSide::Client => "client",
            BundleSide::Server => "server",
            BundleSide::Unknown => "unknown",
        }
    }
}

/// What the host state says about one capture finding.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Relation {
    Confirms,
    Contradicts,
    /// The host state is from the other side, or has nothing to say about this mechanism.
    Silent,
}

impl Relation {
    pub const fn as_str(self) -> &'static str {
        match self {
            Relation::Confirms => "confirms",
            Relation::Contradicts => "contradicts",
            Relation::Silent => "silent",
        }
    }
}

/// The host state's verdict on one capture finding.
#[derive(Clone, Debug)]
pub struct Correlation {
    pub stream: u64,
    pub id: FindingId,
    /// Which end of this connection the bundle is.
    pub side: BundleSide,
    pub relation: Relation,
    /// The values read and what they mean for the finding.
    pub note: String,
    pub confidence_before: Confidence,
    pub confidence_after: Confidence,
}

/// The result of [`join`].
#[derive(Clone, Debug)]
pub struct HostJoin {
    pub hostname: Option<String>,
    /// The addresses the bundle showed for its host.
    pub addresses: Vec<IpAddr>,
    pub correlations: Vec<Correlation>,
}

/// The side of the connection `[client, server]` the host is, if either.
fn side_of(h: &HostView, ends: &[Endpoint; 2]) -> BundleSide {
    if h.has_addr(ends[1].addr) {
        BundleSide::Server
    } else if h.has_addr(ends[0].addr) {
        BundleSide::Client
    } else {
        BundleSide::Unknown
    }
}

fn lower(c: Confidence) -> Confidence {
    match c {
        Confidence::High => Confidence::Medium,
        _ => Confidence::Low,
    }
}

/// Confirms or contradicts each finding with the host's state, in place (confidence,
/// a sentence appended to the explanation, the exact setting first in the fix) and
/// returns what it did for each finding.
pub fn join(findings: &mut [Finding], h: &HostView) -> HostJoin {
    let mut correlations = Vec::new();
    let mut addresses = h.addresses.clone();
    for s in &h.sockets {
        if let Some(a) = s.local_addr() {
            if !a.is_loopback() && !a.is_unspecified() && !addresses.contains(&a) {
                addresses.push(a);
            }
        }
    }
    addresses.truncate(MAX_NAMED * 8);
    for f in findings.iter_mut() {
        let side = side_of(h, &f.endpoints);
        let before = f.confidence;
        let (relation, note, fix) = match (side, f.id.entry().decided_by) {
            (BundleSide::Unknown, _) => (
                Relation::Silent,
                format!(
                    "the host bundle ({}) is neither {} nor {}: it says nothing about this connection",
                    h.label(),
                    f.endpoints[0].addr,
                    f.endpoints[1].addr
                ),
                None,
            ),
            (s, Some(d)) if s != d => (
                Relation::Silent,
                format!(
                    "the host bundle is from the {} ({}); this mechanism is decided on the {}, whose settings it does not show",
                    s.as_str(),
                    h.label(),
                    d.as_str()
                ),
                None,
            ),
            (s, _) => judge(f, h, s),
        };
        match relation {
            Relation::Confirms => f.confidence = Confidence::High,
            Relation::Contradicts => f.confidence = lower(f.confidence),
            Relation::Silent => {}
        }
        if relation != Relation::Silent {
            f.explanation = format!(
                "{} Host state ({}, the {}) {}: {note}.",
                f.explanation.trim_end(),
                h.label(),
                side.as_str(),
                relation.as_str()
            );
        }
        if let Some(fix) = fix {
            f.fix.insert(0, fix);
        }
        correlations.push(Correlation {
            stream: f.stream,
            id: f.id,
            side,
            relation,
            note,
            confidence_before: before,
            confidence_after: f.confidence,
        });
    }
    HostJoin {
        hostname: h.hostname.clone(),
        addresses,
        correlations,
    }
}

fn host_of(side: BundleSide) -> Host {
    match side {
        BundleSide::Client => Host::Client,
        _ => Host::Server,
    }
}

/// The verdict on one finding from the host that decides it.
fn judge(f: &Finding, h: &HostView, side: BundleSide) -> (Relation, String, Option<Fix>) {
    let own = if side == BundleSide::Server {
        f.endpoints[1]
    } else {
        f.endpoints[0]
    };
    let on = |action: String| {
        Some(Fix {
            host: host_of(side),
            action: format!("{action} on {} ({})", own.addr, h.label()),
        })
    };
    let socket = h
        .sockets
        .iter()
        .find(|s| s.is_conn(&f.endpoints[0], &f.endpoints[1]));
    // Without this connection in ss (it closed before the bundle was written), another
    // established connection on the same local address and port is the same application
    // with the same socket options (TCP_CONGESTION, SO_SNDBUF …).
    let sibling = socket.or_else(|| {
        h.sockets.iter().find(|s| {
            s.state == "ESTAB"
                && s.local_addr() == Some(unmap(own.addr))
                && LiveSocket::port(&s.local) == Some(own.port)
        })
    });
    let peer = if side == BundleSide::Server {
        f.endpoints[0].addr
    } else {
        f.endpoints[1].addr
    };
    match f.id {
        FindingId::SlowStartRestartAfterIdle => {
            let (cc, whose) = match (socket.and_then(|s| s.cc.as_deref()), sibling.and_then(|s| s.cc.as_deref())) {
                (Some(c), _) => (Some(c), "the connection's socket in ss".to_string()),
                (None, Some(c)) => (Some(c), format!("ss: another connection on {own}")),
                _ => (h.sysctl.tcp_congestion_control(), "net.ipv4.tcp_congestion_control; ss shows no connection on this port, and an application may choose its own".to_string()),
            };
            let ssai = h.sysctl.tcp_slow_start_after_idle();
            match (ssai, cc) {
                (Some(false), _) => (
                    Relation::Contradicts,
                    "net.ipv4.tcp_slow_start_after_idle = 0: the sender does not restart after idle, so the small window after the gap has another cause (pacing in the application, or a receiver's window)".into(),
                    None,
                ),
                (_, Some(c)) if exempt_from_idle_restart(c) => (
                    Relation::Contradicts,
                    format!("the sender runs {c} ({whose}), which skips the restart after idle (it has its own cong_control), so the gap after idle is not a restart"),
                    None,
                ),
                (Some(true), Some(c)) => (
                    Relation::Confirms,
                    format!("net.ipv4.tcp_slow_start_after_idle = 1 and {c} ({whose}) restarts from the initial window after an idle RTO"),
                    on("sysctl -w net.ipv4.tcp_slow_start_after_idle=0".into()),
                ),
                _ => (Relation::Silent, "the bundle has no tcp_slow_start_after_idle".into(), None),
            }
        }
        FindingId::SlowStartEarlyExit => {
            let save = h.sysctl.tcp_no_ssthresh_metrics_save();
            let entry = h.metrics.iter().find(|m| unmap(m.addr) == unmap(peer));
            match (save, entry.and_then(|m| m.ssthresh)) {
                (Some(false), Some(t)) => (
                    Relation::Confirms,
                    format!("ip tcp_metrics holds ssthresh {t} for {peer} and tcp_no_ssthresh_metrics_save = 0, so new connections to it start in congestion avoidance at {t} segments"),
                    on(format!("ip tcp_metrics delete {peer}; sysctl -w net.ipv4.tcp_no_ssthresh_metrics_save=1")),
                ),
                (Some(true), _) => (
                    Relation::Contradicts,
                    "tcp_no_ssthresh_metrics_save = 1: no cached ssthresh is applied, so the early exit is not the metrics cache (look at HyStart's delay detection or a loss the capture missed)".into(),
                    None,
                ),
                (_, None) => (
                    Relation::Contradicts,
                    format!("ip tcp_metrics shows no ssthresh for {peer}: the early exit is not a cached ssthresh (look at HyStart's delay detection or a loss the capture missed)"),
                    None,
                ),
                _ => (Relation::Silent, "the bundle has no tcp_no_ssthresh_metrics_save".into(), None),
            }
        }
        // The kernel takes any value but 0 as on; tcp_window_scaling() reads only 0 and 1.
        FindingId::RwndNoWindowScaling => match h.sysctl.get_u64("net.ipv4.tcp_window_scaling") {
            Some(0) => (
                Relation::Confirms,
                "net.ipv4.tcp_window_scaling = 0 on this host".into(),
                on("sysctl -w net.ipv4.tcp_window_scaling=1".into()),
            ),
            Some(_) => (
                Relation::Contradicts,
                format!("this host has net.ipv4.tcp_window_scaling = 1: the other end, or a middlebox that rewrote the SYN, turned scaling off (the {} side is not the cause)", side.as_str()),
                None,
            ),
            None => (Relation::Silent, "the bundle has no tcp_window_scaling".into(), None),
        },
        FindingId::RwndNotGrowing | FindingId::RwndLimited | FindingId::RwndZeroWindow => {
            if let Some(m) = tcp_mem_pressure(h).filter(|m| m.confidence >= Confidence::Medium) {
                return (
                    Relation::Confirms,
                    format!("TCP memory is under pressure: {}", first_sentence(&m.explanation)),
                    on(m.fix[0].clone()),
                );
            }
            buffer_judgement(f, h, socket.or(sibling), BufferKind::Receive, on)
        }
        FindingId::SndbufLimited => buffer_judgement(f, h, socket.or(sibling), BufferKind::Send, on),
        FindingId::LossTailLossProbe => counter_judgement(
            h,
            &["TcpExtTCPLossProbes"],
            "tail loss probes",
            on("keep net.ipv4.tcp_early_retrans=3; find the tail drops (tc -s qdisc)".into()),
        ),
        FindingId::Reordering | FindingId::RetransmitSpurious => {
            let (r, mut note, mut fix) = counter_judgement(
                h,
                &["TcpExtTCPSACKReorder", "TcpExtTCPTSReorder", "TcpExtTCPDSACKRecv"],
                "reordering and D-SACK counters",
                on("sysctl -w net.ipv4.tcp_reordering=9".into()),
            );
            if let Some(v) = h.veth_without_rps.first() {
                note += &format!("; veth {v} has RPS off (seed 03)");
                fix = on(format!("echo <CPU mask> > /sys/class/net/{v}/queues/rx-0/rps_cpus"));
            }
            (r, note, fix)
        }
        _ => (Relation::Silent, "no host setting decides this mechanism".into(), None),
    }
}

fn first_sentence(s: &str) -> &str {
    s.split_once(". ").map_or(s, |(a, _)| a)
}

#[derive(Copy, Clone, PartialEq)]
enum BufferKind {
    Receive,
    Send,
}

fn buffer_judgement(
    f: &Finding,
    h: &HostView,
    socket: Option<&LiveSocket>,
    kind: BufferKind,
    on: impl Fn(String) -> Option<Fix>,
) -> (Relation, String, Option<Fix>) {
    let (rmax, wmax) = buffer_maxima(h);
    let (key, max, buf) = match kind {
        BufferKind::Receive => ("net.ipv4.tcp_rmem", rmax, socket.and_then(|s| s.rcvbuf)),
        BufferKind::Send => ("net.ipv4.tcp_wmem", wmax, socket.and_then(|s| s.sndbuf)),
    };
    let Some(max) = max else {
        return (Relation::Silent, format!("the bundle has no {key}"), None);
    };
    let bdp = socket.and_then(LiveSocket::bdp_bytes);
    match (buf, bdp) {
        (_, Some(b)) if b > max => (
            Relation::Confirms,
            format!("the connection's bandwidth-delay product ({} KiB, ss) is above the {key} maximum ({} KiB)", b >> 10, max >> 10),
            on(format!(
                "sysctl -w {key}=\"4096 131072 {}\"",
                b.saturating_mul(2).checked_next_power_of_two().unwrap_or(u64::MAX)
            )),
        ),
        (Some(b), _) if b < max / 2 => (
            Relation::Confirms,
            format!("the connection's buffer is {} KiB, well under the {key} maximum ({} KiB): the application fixed it (SO_{}BUF), which disables autotuning", b >> 10, max >> 10, if kind == BufferKind::Send { "SND" } else { "RCV" }),
            on(format!("remove the application's SO_{}BUF setting (stream {})", if kind == BufferKind::Send { "SND" } else { "RCV" }, f.stream)),
        ),
        (Some(b), _) => (
            Relation::Silent,
            format!("the connection's buffer ({} KiB) is at the {key} maximum ({} KiB) and ss shows no larger bandwidth-delay product", b >> 10, max >> 10),
            None,
        ),
        (None, _) => (
            Relation::Silent,
            format!("{key} max is {} KiB; ss shows no live socket for this connection to compare", max >> 10),
            None,
        ),
    }
}

fn counter_judgement(
    h: &HostView,
    names: &[&str],
    what: &str,
    fix: Option<Fix>,
) -> (Relation, String, Option<Fix>) {
    let counts: Vec<(&str, Count)> = names
        .iter()
        .filter_map(|n| h.counter(n).map(|c| (*n, c)))
        .collect();
    if counts.is_empty() {
        return (Relation::Silent, format!("the bundle has no {what}"), None);
    }
    let text: Vec<String> = counts
        .iter()
        .map(|(n, c)| format!("{n} {}", count_text(h, *c)))
        .collect();
    let rising = counts
        .iter()
        .any(|(_, c)| matches!(c, Count::Delta(n) if *n > 0));
    let any = counts.iter().any(|(_, c)| c.n() > 0);
    match (h.deltas.is_some(), rising, any) {
        (true, true, _) => (Relation::Confirms, text.join(", "), fix),
        (true, false, _) => (
            Relation::Contradicts,
            format!("{} did not move between the snapshots", text.join(", ")),
            None,
        ),
        (false, _, true) => (
            Relation::Silent,
            format!(
                "{} (totals since boot, not proof for this capture: collect with --interval)",
                text.join(", ")
            ),
            None,
        ),
        (false, _, false) => (
            Relation::Contradicts,
            format!("{} since boot", text.join(", ")),
            None,
        ),
    }
}

// ---------------------------------------------------------------------------------------
// From a parsed bundle.

impl HostView {
    /// Gathers what the rules read from a parsed bundle. Live sockets come from the
    /// latest snapshot that shows established ones; counters from the latest snapshot,
    /// with deltas when there are two.
    pub fn from_state(hs: &tcpwhy_hoststate::HostState) -> HostView {
        use std::collections::BTreeMap;
        let m = hs.manifest.as_ref();
        let latest = hs.after.as_ref().unwrap_or(&hs.before);
        let sockstat_tcp = latest
            .sockstat
            .as_ref()
            .or(hs.before.sockstat.as_ref())
            .and_then(|s| s.protocols.get("TCP").cloned())
            .unwrap_or_default();
        let counters = latest
            .counters
            .as_ref()
            .or(hs.before.counters.as_ref())
            .map(|c| c.values.clone())
            .unwrap_or_default();
        let interval_s = m.and_then(|m| m.interval_ms()).map(|ms| ms as f64 / 1e3);
        // A counter that went down (reboot, namespace re-created) has no meaningful delta.
        let deltas = hs.counter_deltas().map(|d| {
            d.deltas
                .into_iter()
                .filter_map(|(k, v)| u64::try_from(v).ok().map(|v| (k, v)))
                .collect::<BTreeMap<_, _>>()
        });
        let established = |snap: &tcpwhy_hoststate::Snapshot| {
            snap.ss
                .as_ref()
                .is_some_and(|ss| ss.sockets().any(|s| s.state.as_deref() == Some("ESTAB")))
        };
        let ss_snap = hs
            .after
            .as_ref()
            .filter(|a| established(a))
            .unwrap_or(&hs.before);
        let sockets: Vec<LiveSocket> = ss_snap
            .ss
            .as_ref()
            .map(|ss| {
                ss.sockets()
                    .take(MAX_SOCKET_ROWS * 8)
                    .map(live_socket)
                    .collect()
            })
            .unwrap_or_default();
        let metrics = hs
            .tcp_metrics
            .as_ref()
            .map(|t| {
                t.entries
                    .iter()
                    .filter_map(|e| {
                        Some(MetricsEntry {
                            addr: unmap(e.peer.parse().ok()?),
                            ssthresh: e.ssthresh.map(u64::from),
                            cwnd: e.cwnd.map(u64::from),
                            rtt_us: e.rtt_us,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        // The address this host used towards each cached peer is its own.
        let mut addresses: Vec<IpAddr> = Vec::new();
        if let Some(t) = &hs.tcp_metrics {
            for e in &t.entries {
                if let Some(a) = e.source.as_deref().and_then(|s| s.parse().ok()) {
                    let a = unmap(a);
                    if !addresses.contains(&a) && addresses.len() < MAX_NAMED * 8 {
                        addresses.push(a);
                    }
                }
            }
        }
        let veth_without_rps = hs
            .links
            .as_ref()
            .map(|l| {
                l.links
                    .iter()
                    .filter(|l| l.kind.as_deref() == Some("veth"))
                    .filter(|l| {
                        let qs: Vec<_> = hs.rps.iter().filter(|q| q.iface == l.name).collect();
                        !qs.is_empty() && qs.iter().all(|q| !q.mask.enabled())
                    })
                    .map(|l| l.name.clone())
                    .collect()
            })
            .unwrap_or_default();
        let mut unread = Vec::new();
        if let Some(m) = m {
            for (prefix, inputs) in [("", &m.inputs), ("after/", &m.after_inputs)] {
                for (file, i) in inputs {
                    // sysctl missing but /proc/sys/net copied: the values are there.
                    let replaced = file == "sysctl.txt"
                        && inputs
                            .get("proc-sys-net/")
                            .is_some_and(|p| p.status.as_deref() == Some("ok"));
                    // Read, but not all of it (not root, cut at the size cap).
                    if let Some(n) = i.note.as_deref().filter(|n| {
                        i.status.as_deref() == Some("ok")
                            && (n.starts_with("not root") || n.starts_with("cut at"))
                    }) {
                        unread.push(format!("{prefix}{file}: partly: {n}"));
                    }
                    if i.status.as_deref() != Some("ok") && !replaced {
                        unread.push(format!(
                            "{prefix}{file} ({}): {}",
                            i.source.as_deref().unwrap_or("?"),
                            i.reason.as_deref().unwrap_or("not collected")
                        ));
                    }
                }
            }
        }
        HostView {
            hostname: m.and_then(|m| m.hostname.clone()),
            kernel: m.and_then(|m| m.kernel.clone()),
            interval_s,
            sysctl: hs.sysctl.clone().unwrap_or_default(),
            sockstat_tcp,
            counters,
            deltas,
            sockets,
            metrics,
            veth_without_rps,
            addresses,
            unread,
        }
    }
}

fn live_socket(s: &tcpwhy_hoststate::SsSocket) -> LiveSocket {
    let i = &s.info;
    LiveSocket {
        state: s.state.clone().unwrap_or_default(),
        local: s.local.clone(),
        peer: s.peer.clone(),
        cc: i.cc.clone(),
        cwnd: i.cwnd,
        ssthresh: i.ssthresh,
        mss: i.mss,
        rtt_ms: i.rtt_ms,
        delivery_rate_bps: i.delivery_rate_bps,
        busy_ms: i.busy_ms,
        rwnd_limited_ms: i.rwnd_limited_ms,
        sndbuf_limited_ms: i.sndbuf_limited_ms,
        app_limited: i.app_limited,
        rcvbuf: i.skmem.and_then(|m| m.rcvbuf),
        sndbuf: i.skmem.and_then(|m| m.sndbuf),
        retrans_total: i.retrans_total,
        lastsnd_ms: i.lastsnd_ms,
        rto_ms: i.rto_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
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
}
