//! `host.buffer_below_bdp`: a live connection's bandwidth-delay product (ss delivery
//! rate × RTT) is above the `tcp_rmem`/`tcp_wmem` maximum, or the connection spends
//! ≥ 20 % of its busy time limited by a buffer already at that maximum.
//!
//! Declares its catalogue entry, and the host-join rule of the capture findings whose
//! host setting it reads (named in their entries).

use super::join::first_sentence;
use super::tcp_mem_pressure::tcp_mem_pressure;
use super::*;
use crate::catalogue::HostEntry;
use crate::finding::{Finding, Fix};
use tcpwhy_hoststate::BufferTriple;

/// `host.buffer_below_bdp` in the catalogue (crate::catalogue).
pub const ENTRY: HostEntry = HostEntry {
    id: "host.buffer_below_bdp",
    title: "buffer maximum below the BDP",
    meaning: "a live connection's bandwidth-delay product is above the `tcp_rmem`/`tcp_wmem` maximum, or it is limited by a buffer already at that maximum",
    fix_goes_to: "`tcp_rmem`/`tcp_wmem` maxima; the application's fixed SO_SNDBUF / SO_RCVBUF",
};

/// (the `tcp_rmem` max, the `tcp_wmem` max) in bytes.
pub(crate) fn buffer_maxima(h: &HostView) -> (Option<u64>, Option<u64>) {
    let max = |t: Option<BufferTriple>| t.map(|t| t.max_bytes);
    (max(h.sysctl.tcp_rmem()), max(h.sysctl.tcp_wmem()))
}

pub(crate) fn buffer_below_bdp(h: &HostView) -> Option<HostFinding> {
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

/// `analyze --host` on the receive-window findings: TCP memory pressure, else the receive buffer.
pub(crate) fn judge_receive_window(j: &Judging<'_>) -> Verdict {
    let Judging {
        f,
        h,
        socket,
        sibling,
        ..
    } = *j;
    let on = |action: String| j.on(action);
    if let Some(m) = tcp_mem_pressure(h).filter(|m| m.confidence >= Confidence::Medium) {
        return (
            Relation::Confirms,
            format!(
                "TCP memory is under pressure: {}",
                first_sentence(&m.explanation)
            ),
            on(m.fix[0].clone()),
        );
    }
    buffer_judgement(f, h, socket.or(sibling), BufferKind::Receive, on)
}

/// `analyze --host` on `sndbuf.limited`: the send buffer.
pub(crate) fn judge_send_buffer(j: &Judging<'_>) -> Verdict {
    let Judging {
        f,
        h,
        socket,
        sibling,
        ..
    } = *j;
    let on = |action: String| j.on(action);
    buffer_judgement(f, h, socket.or(sibling), BufferKind::Send, on)
}
