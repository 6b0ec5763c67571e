//! The host view: everything the host rules and the join read from one host, and how
//! it is built from a parsed bundle.

use super::{COUNTER_EVENTS_MIN, MAX_NAMED, MAX_SOCKET_ROWS};
use std::net::IpAddr;
use tcpwhy_hoststate::{Sysctl, TcpSockstat};
use tcpwhy_track::Endpoint;

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
    pub(crate) fn idle_past_rto(&self) -> bool {
        matches!((self.lastsnd_ms, self.rto_ms), (Some(l), Some(r)) if l as f64 > r)
    }

    pub(crate) fn addr(ep: &str) -> Option<IpAddr> {
        let (a, _) = ep.rsplit_once(':')?;
        let a = a.trim_start_matches('[').trim_end_matches(']');
        // `10.0.0.1%eth0`, and IPv4-mapped IPv6 as the kernel prints it.
        let a = a.split('%').next()?;
        let ip: IpAddr = a.parse().ok()?;
        Some(unmap(ip))
    }
    pub(crate) fn port(ep: &str) -> Option<u16> {
        ep.rsplit_once(':')?.1.parse().ok()
    }
    pub fn local_addr(&self) -> Option<IpAddr> {
        Self::addr(&self.local)
    }
    pub fn peer_addr(&self) -> Option<IpAddr> {
        Self::addr(&self.peer)
    }
    /// True when this socket is one end of the connection between `a` and `b`.
    pub(crate) fn is_conn(&self, a: &Endpoint, b: &Endpoint) -> bool {
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
    pub(crate) fn share(&self, ms: Option<u64>) -> Option<f64> {
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

pub(crate) fn unmap(ip: IpAddr) -> IpAddr {
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
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.sysctl.get(key)
    }
    /// The sockstat "TCP:" line, typed.
    pub(crate) fn tcp_sockstat(&self) -> TcpSockstat {
        TcpSockstat::from_fields(&self.sockstat_tcp)
    }
    /// The counter's increase between snapshots, or (second) its total since boot.
    pub(crate) fn counter(&self, name: &str) -> Option<Count> {
        match &self.deltas {
            Some(d) => d.get(name).map(|v| Count::Delta(*v)),
            None => self.counters.get(name).map(|v| Count::Total(*v)),
        }
    }
    pub(crate) fn label(&self) -> String {
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
pub(crate) enum Count {
    /// Since the first snapshot.
    Delta(u64),
    /// Since boot (one snapshot).
    Total(u64),
}

impl Count {
    pub(crate) fn n(self) -> u64 {
        match self {
            Count::Delta(n) | Count::Total(n) => n,
        }
    }
    /// Whether `n` events of this kind are worth a rule (see [`COUNTER_EVENTS_MIN`]).
    pub(crate) fn enough(self, n: u64) -> bool {
        match self {
            Count::Delta(_) => n >= 1,
            Count::Total(_) => n >= COUNTER_EVENTS_MIN,
        }
    }
}

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
