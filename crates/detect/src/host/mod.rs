//! Host findings (`host.*`) from one host's state, and the join of a capture's findings
//! with that state (design.md "tcpwhy host", mechanisms.md "Host state that confirms or
//! refutes a capture diagnosis"). No I/O: the binary reads the bundle with
//! `tcpwhy-hoststate`, this module only judges the values.
//!
//! Host findings have no stream: they are about a host's settings and counters, each with
//! the values read (`values`) and the exact command that changes them (`fix`). Each rule
//! is one module, whose doc says what it reads and when it fires.
//!
//! Counters count since boot (or since the namespace was created). With two snapshots
//! the rules judge the deltas (confidence medium or high); with one they judge the totals
//! and say so (confidence low).
//!
//! [`join()`] confirms or contradicts capture findings with the host's state, but only for
//! the side of the connection the bundle comes from (its addresses, from ss and `ip
//! addr`): a bundle from the client says nothing about the server's sysctls.
//!
//! Layout: [`view`] (what the rules read), one module per rule (`host.*`, each declaring
//! its catalogue entry and, where it has one, the rule that judges the capture findings
//! it decides), and [`mod@join`] (capture findings × the host).

pub mod join;
pub mod view;

pub mod accept_queue_overflow;
pub mod buffer_below_bdp;
pub mod metrics_cached_ssthresh;
pub mod reordering;
pub mod slow_start_after_idle;
pub mod spurious_retransmissions;
pub mod tail_loss_probes;
pub mod tcp_mem_pressure;
pub mod window_scaling_off;

#[cfg(test)]
mod tests;

pub use join::{join, BundleSide, Correlation, HostJoin, Judge, Judging, Relation, Verdict};
pub use view::{HostView, LiveSocket, MetricsEntry};

use crate::catalogue::HostEntry;
use crate::finding::Confidence;
use view::Count;

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

/// Generates, from one line per rule (`module: Variant`, the module declaring `ENTRY`
/// and a function of its own name that runs the rule), [`HostFindingId`] in the order
/// written (its `Ord`, the audit's tie-breaker) and `RULES`, the rules in that order.
macro_rules! rules {
    ($($module:ident: $variant:ident),+ $(,)?) => {
        /// Host finding ids (stable, like [`crate::FindingId`]), declared by the rules.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum HostFindingId {
            $($variant,)+
        }

        impl HostFindingId {
            /// Every id, in order.
            pub const ALL: &'static [HostFindingId] = &[$(HostFindingId::$variant,)+];

            /// The id's catalogue entry, declared by its rule.
            pub const fn entry(self) -> &'static HostEntry {
                match self {
                    $(HostFindingId::$variant => &$module::ENTRY,)+
                }
            }
        }

        /// Every host rule, in order.
        const RULES: &[fn(&HostView) -> Option<HostFinding>] = &[$($module::$module,)+];
    };
}

rules! {
    slow_start_after_idle: SlowStartAfterIdle,
    metrics_cached_ssthresh: MetricsCachedSsthresh,
    tcp_mem_pressure: TcpMemPressure,
    window_scaling_off: WindowScalingOff,
    buffer_below_bdp: BufferBelowBdp,
    accept_queue_overflow: AcceptQueueOverflow,
    spurious_retransmissions: SpuriousRetransmissions,
    tail_loss_probes: TailLossProbes,
    reordering: Reordering,
}

impl HostFindingId {
    pub const fn as_str(self) -> &'static str {
        self.entry().id
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
    for rule in RULES {
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

pub(crate) fn sysctl_value(h: &HostView, key: &str) -> Option<HostValue> {
    Some(HostValue {
        name: key.to_string(),
        value: h.get(key)?.to_string(),
        source: "sysctl.txt",
    })
}

pub(crate) fn counter_value(h: &HostView, name: &str) -> Option<HostValue> {
    let c = h.counter(name)?;
    Some(HostValue {
        name: name.to_string(),
        value: count_text(h, c),
        source: "nstat.txt",
    })
}

pub(crate) fn count_text(h: &HostView, c: Count) -> String {
    match (c, h.interval_s) {
        (Count::Delta(n), Some(s)) if s > 0.0 => {
            format!("+{n} in {s:.1} s ({:.2}/s)", n as f64 / s)
        }
        (Count::Delta(n), _) => format!("+{n}"),
        (Count::Total(n), _) => format!("{n} since boot"),
    }
}

/// Confidence of a counter rule: deltas are what happens now, totals since boot may be
/// last month's.
pub(crate) fn counter_confidence(c: Count, strong: bool) -> Confidence {
    match (c, strong) {
        (Count::Delta(_), true) => Confidence::High,
        (Count::Delta(_), false) => Confidence::Medium,
        (Count::Total(_), _) => Confidence::Low,
    }
}

pub(crate) fn since_boot_note(c: Count) -> &'static str {
    match c {
        Count::Total(_) => {
            " These are totals since boot: run with --interval to see whether it happens now."
        }
        Count::Delta(_) => "",
    }
}

pub(crate) fn per_segment(h: &HostView, n: u64) -> Option<f64> {
    let out = h.counter("TcpOutSegs")?.n();
    (out > 0).then(|| n as f64 / out as f64)
}
