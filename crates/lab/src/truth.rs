//! Ground truth recorded by the kernel, not by us: `ss -tinm` samples during the run,
//! `nstat` counters before and after, `ip tcp_metrics show`, `/proc/net/sockstat`, and
//! the handshake times in the captures. Raw text is saved as it came; the parsed forms
//! keep every field, including ones this code does not know.

use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// ss sampling period. 50 ms sees each round of a 25 ms-RTT slow start about every other
/// round; faster sampling costs CPU the emulator's timing needs (2 cores).
pub const SS_PERIOD: Duration = Duration::from_millis(50);

/// One socket in one `ss -tinmO` sample.
#[derive(Clone, Debug, Serialize, serde::Deserialize, Default)]
pub struct SsSocket {
    /// Milliseconds since the run's start.
    pub t_ms: f64,
    /// Unix time in seconds (to line up with capture timestamps).
    pub unix_s: f64,
    pub state: String,
    pub local: String,
    pub peer: String,
    /// `key:value` and `key value` fields as printed (`cwnd` → "10", `rtt` → "25.1/3.2").
    pub fields: BTreeMap<String, String>,
    /// Bare words (`ts`, `sack`, `cubic`, `app_limited` …).
    pub flags: Vec<String>,
}

impl SsSocket {
    pub fn num(&self, key: &str) -> Option<f64> {
        let v = self.fields.get(key)?;
        // "rtt:25.1/3.2" → 25.1; "retrans:0/3" → 0 (current), see `retrans_total`;
        // "rwnd_limited:20ms(20.0%)" → 20.
        let head = v.split(['/', '(']).next()?;
        let head = head.trim_end_matches("ms");
        head.parse().ok()
    }

    pub fn cwnd(&self) -> Option<u64> {
        self.num("cwnd").map(|v| v as u64)
    }
}

/// Parses the output of `ss -tinmHO` (one socket per line). Never fails: a line it cannot
/// split keeps what it could.
pub fn parse_ss(text: &str, t_ms: f64, unix_s: f64) -> Vec<SsSocket> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut toks = line.split_whitespace().peekable();
        let Some(state) = toks.next() else { continue };
        // Recv-Q Send-Q Local Peer
        let _recvq = toks.next();
        let _sendq = toks.next();
        let mut s = SsSocket {
            t_ms,
            unix_s,
            state: state.to_string(),
            local: toks.next().unwrap_or("").to_string(),
            peer: toks.next().unwrap_or("").to_string(),
            ..SsSocket::default()
        };
        // Fields printed as "key value" rather than "key:value".
        const SPACED: &[&str] = &["send", "pacing_rate", "delivery_rate"];
        while let Some(tok) = toks.next() {
            if SPACED.contains(&tok) {
                if let Some(v) = toks.next() {
                    s.fields.insert(tok.to_string(), v.to_string());
                }
            } else if let Some((k, v)) = tok.split_once(':') {
                s.fields.insert(k.to_string(), v.to_string());
            } else {
                s.flags.push(tok.to_string());
            }
        }
        out.push(s);
    }
    out
}

/// Samples `ss -tinmO` in one namespace every `SS_PERIOD` on its own thread.
pub struct SsSampler {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Result<Vec<SsSocket>, String>>>,
    raw_path: PathBuf,
}

impl SsSampler {
    /// `ns` is a namespace name under /var/run/netns. The thread joins the namespace
    /// (setns affects only the calling thread) and runs `ss` there: cheaper than
    /// `ip netns exec` every 50 ms.
    pub fn start(ns: &str, raw_path: &Path, t0: Instant) -> Result<SsSampler, String> {
        let nsfile = std::fs::File::open(format!("/var/run/netns/{ns}"))
            .map_err(|e| format!("namespace {ns}: {e}"))?;
        let mut raw =
            std::fs::File::create(raw_path).map_err(|e| format!("{}: {e}", raw_path.display()))?;
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let handle = std::thread::spawn(move || {
            // SAFETY: setns on a valid namespace fd, for this thread only.
            if unsafe { libc::setns(nsfile.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return Err(format!("setns: {}", std::io::Error::last_os_error()));
            }
            let mut samples = Vec::new();
            let mut next = Instant::now();
            loop {
                let done = stop2.load(Ordering::Relaxed);
                let t_ms = t0.elapsed().as_secs_f64() * 1e3;
                let unix_s = unix_now();
                let out = Command::new("ss")
                    .args(["-tinmHO"])
                    .stdin(Stdio::null())
                    .stderr(Stdio::null())
                    .output()
                    .map_err(|e| format!("ss: {e}"))?;
                let text = String::from_utf8_lossy(&out.stdout);
                let _ = writeln!(raw, "# t_ms={t_ms:.1} unix={unix_s:.6}");
                let _ = raw.write_all(text.as_bytes());
                samples.extend(parse_ss(&text, t_ms, unix_s));
                if done {
                    return Ok(samples);
                }
                next += SS_PERIOD;
                let now = Instant::now();
                if next > now {
                    std::thread::sleep(next - now);
                } else {
                    next = now;
                }
            }
        });
        Ok(SsSampler {
            stop,
            handle: Some(handle),
            raw_path: raw_path.to_path_buf(),
        })
    }

    /// Takes a last sample and returns all of them.
    pub fn finish(mut self) -> Result<Vec<SsSocket>, String> {
        self.stop.store(true, Ordering::Relaxed);
        let h = self.handle.take().ok_or("sampler already finished")?;
        h.join()
            .map_err(|_| format!("ss sampler for {} panicked", self.raw_path.display()))?
    }
}

impl Drop for SsSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// `nstat -asz` output → counter name → absolute value.
pub fn parse_nstat(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut t = l.split_whitespace();
            Some((t.next()?.to_string(), t.next()?.parse().ok()?))
        })
        .collect()
}

/// after − before for every counter that moved (saturating: counters never go back).
pub fn nstat_delta(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    after
        .iter()
        .filter_map(|(k, &a)| {
            let d = a.saturating_sub(before.get(k).copied().unwrap_or(0));
            (d > 0).then(|| (k.clone(), d))
        })
        .collect()
}

/// A counter by the name people use (`TCPLossProbes`); nstat prints the TcpExt ones
/// with their table's prefix (`TcpExtTCPLossProbes`).
pub fn counter(m: &BTreeMap<String, u64>, name: &str) -> u64 {
    m.get(name)
        .or_else(|| m.get(&format!("TcpExt{name}")))
        .copied()
        .unwrap_or(0)
}

/// Counters every manifest lists, zero or not, so a reader need not guess.
pub const KEY_COUNTERS: &[&str] = &[
    "TcpRetransSegs",
    "TCPLossProbes",
    "TCPLossProbeRecovery",
    "TCPTimeouts",
    "TCPDSACKRecv",
    "TCPDSACKOldSent",
    "TCPSACKReorder",
    "TCPTSReorder",
    "TCPFastRetrans",
    "TCPSlowStartRetrans",
    "TCPSpuriousRTOs",
    "TCPSpuriousRtxHostQueues",
    "TCPMemoryPressures",
    "TCPSynRetrans",
    "TCPDelivered",
    "DelayedACKs",
    "TCPFromZeroWindowAdv",
    "TCPToZeroWindowAdv",
    "TCPWantZeroWindowAdv",
    "TCPAbortOnMemory",
    "ListenOverflows",
    "ListenDrops",
    "TCPRcvQDrop",
];

/// A TCP handshake seen in a capture: the times of SYN, SYN/ACK and the ACK.
#[derive(Clone, Debug, Serialize)]
pub struct Handshake {
    pub client_port: u16,
    pub syn_s: f64,
    /// Number of SYNs sent for this connection (> 1: the SYN was retransmitted).
    pub syns: u32,
    pub synack_s: Option<f64>,
    pub ack_s: Option<f64>,
}

impl Handshake {
    /// SYN → SYN/ACK from the first SYN (a client-side capture: ≈ RTT, plus any SYN
    /// retransmission wait).
    pub fn syn_to_synack_ms(&self) -> Option<f64> {
        Some((self.synack_s? - self.syn_s) * 1e3)
    }
    /// SYN/ACK → ACK (a server-side capture: ≈ RTT).
    pub fn synack_to_ack_ms(&self) -> Option<f64> {
        Some((self.ack_s? - self.synack_s?) * 1e3)
    }
}

/// Summary of one capture file read with a minimal pcap walker (Ethernet, IPv4, TCP):
/// handshakes, packet count, data segments. Only what the manifest's key numbers need;
/// the analysis proper is tcpwhy's job.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CaptureFacts {
    pub packets: u64,
    pub handshakes: Vec<Handshake>,
    /// Largest TCP payload seen (> MSS: TSO/GRO super-segments in the capture).
    pub max_payload: u32,
    /// Window scale option offered in each SYN direction (None: not offered).
    pub client_wscale: Option<u8>,
    pub server_wscale: Option<u8>,
    pub first_s: Option<f64>,
    pub last_s: Option<f64>,
    /// Per client→server data segment (first transmission; in the order they were
    /// acknowledged): ms from it
    /// to the first server→client ACK that covers its last byte. At the client's capture
    /// that is the RTT plus whatever the server waited before acknowledging (a delayed
    /// ACK); a segment never acknowledged in the capture has no entry.
    pub client_data_ack_ms: Vec<f64>,
    /// Per request (client data after the server's last answer): how many server→client
    /// data segments (first transmissions) the capture saw before the first client ACK of
    /// any of them. At the server's capture that is the server's first flight, bounded by
    /// its congestion window (and the peer's window) whatever the machine's speed: the
    /// ACK cannot come before the flight left. (At the client's capture it is not: the
    /// client ACKs as segments arrive.)
    pub server_first_flights: Vec<u32>,
    /// Client→server data segments (first transmissions) that left while an earlier one of
    /// the same connection was still unacknowledged. With Nagle on and small writes there
    /// are none (Linux holds a small segment while a small one is in flight), whatever
    /// the machine's speed; with TCP_NODELAY, back-to-back writes make some.
    pub client_data_sent_with_data_unacked: u32,
}

pub fn read_capture(path: &Path) -> Result<CaptureFacts, String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if data.len() < 24 {
        return Err(format!("{}: not a pcap file", path.display()));
    }
    let magic = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
    let (nanos, le) = match magic {
        0xa1b2c3d4 => (false, true),
        0xa1b23c4d => (true, true),
        0xd4c3b2a1 => (false, false),
        0x4d3cb2a1 => (true, false),
        _ => return Err(format!("{}: not a pcap file", path.display())),
    };
    let rd32 = |b: &[u8]| {
        let a = [b[0], b[1], b[2], b[3]];
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let linktype = rd32(&data[20..24]);
    let mut facts = CaptureFacts::default();
    let mut open: BTreeMap<u16, Handshake> = BTreeMap::new();
    // Client data not yet acknowledged: (client port, sequence number after it, time).
    let mut unacked: Vec<(u16, u32, f64)> = Vec::new();
    // Per client port: the highest sequence number after data sent (no retransmissions).
    let mut sent_up_to: BTreeMap<u16, u32> = BTreeMap::new();
    // The same for the server's data, per client port.
    let mut server_sent_up_to: BTreeMap<u16, u32> = BTreeMap::new();
    // Per client port, the flight being counted since the last request: (server data
    // segments so far, the sequence number after the first of them).
    let mut flight: BTreeMap<u16, (u32, Option<u32>)> = BTreeMap::new();
    let mut off = 24;
    while off + 16 <= data.len() {
        let ts = rd32(&data[off..]) as f64
            + rd32(&data[off + 4..]) as f64 * if nanos { 1e-9 } else { 1e-6 };
        let caplen = rd32(&data[off + 8..]) as usize;
        let wire_len = rd32(&data[off + 12..]) as usize;
        off += 16;
        let Some(pkt) = data.get(off..off + caplen) else {
            break;
        };
        off += caplen;
        facts.packets += 1;
        facts.first_s.get_or_insert(ts);
        facts.last_s = Some(ts);
        let ip = match linktype {
            1 if pkt.len() >= 14 && pkt[12..14] == [0x08, 0x00] => &pkt[14..],
            113 if pkt.len() >= 16 && pkt[14..16] == [0x08, 0x00] => &pkt[16..],
            _ => continue,
        };
        if ip.len() < 20 || ip[0] >> 4 != 4 || ip[9] != 6 {
            continue;
        }
        let ihl = usize::from(ip[0] & 0x0f) * 4;
        let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
        let Some(tcp) = ip.get(ihl..) else { continue };
        if tcp.len() < 20 {
            continue;
        }
        let sport = u16::from_be_bytes([tcp[0], tcp[1]]);
        let dport = u16::from_be_bytes([tcp[2], tcp[3]]);
        let doff = usize::from(tcp[12] >> 4) * 4;
        let flags = tcp[13];
        let (syn, ack) = (flags & 0x02 != 0, flags & 0x10 != 0);
        // Payload from the IP total length (the capture may be truncated); TSO
        // super-segments carry total 0 on some paths, then fall back to the wire length.
        let ip_len = if total == 0 {
            wire_len.saturating_sub(14)
        } else {
            total
        };
        let payload = ip_len.saturating_sub(ihl + doff) as u32;
        facts.max_payload = facts.max_payload.max(payload);
        if syn {
            let ws = tcp.get(20..doff.min(tcp.len())).and_then(wscale_option);
            if ack {
                facts.server_wscale = ws;
                if let Some(h) = open.get_mut(&dport) {
                    h.synack_s.get_or_insert(ts);
                }
            } else {
                facts.client_wscale = ws;
                // A new connection on this port starts from a new sequence number.
                sent_up_to.remove(&sport);
                server_sent_up_to.remove(&sport);
                flight.remove(&sport);
                unacked.retain(|u| u.0 != sport);
                // A SYN on a port whose handshake finished is a new connection.
                let reuse = open.get(&sport).is_some_and(|h| h.ack_s.is_some());
                if reuse {
                    if let Some(h) = open.remove(&sport) {
                        facts.handshakes.push(h);
                    }
                }
                open.entry(sport)
                    .and_modify(|h| h.syns += 1)
                    .or_insert(Handshake {
                        client_port: sport,
                        syn_s: ts,
                        syns: 1,
                        synack_s: None,
                        ack_s: None,
                    });
            }
        } else if ack {
            if let Some(h) = open.get_mut(&sport) {
                if h.synack_s.is_some() && h.ack_s.is_none() {
                    h.ack_s = Some(ts);
                }
            }
        }
        let seq = u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]);
        let ackno = u32::from_be_bytes([tcp[8], tcp[9], tcp[10], tcp[11]]);
        if open.contains_key(&sport) && ack {
            // A client ACK of the flight's first segment ends the count.
            let acked = flight.get(&sport).and_then(|&(n, first)| {
                first.filter(|&end| (ackno.wrapping_sub(end) as i32) >= 0)?;
                Some(n)
            });
            if let Some(n) = acked {
                facts.server_first_flights.push(n);
                flight.remove(&sport);
            }
        }
        if open.contains_key(&sport) && payload > 0 && !syn && !flight.contains_key(&sport) {
            flight.insert(sport, (0, None));
        }
        if open.contains_key(&dport) && payload > 0 && !syn {
            let end = seq.wrapping_add(payload);
            let newer = server_sent_up_to
                .get(&dport)
                .is_none_or(|&top| (end.wrapping_sub(top) as i32) > 0);
            if newer {
                server_sent_up_to.insert(dport, end);
                if let Some((n, first)) = flight.get_mut(&dport) {
                    *n += 1;
                    first.get_or_insert(end);
                }
            }
        }
        if open.contains_key(&sport) && payload > 0 && !syn {
            let end = seq.wrapping_add(payload);
            let newer = sent_up_to
                .get(&sport)
                .is_none_or(|&top| (end.wrapping_sub(top) as i32) > 0);
            if newer {
                sent_up_to.insert(sport, end);
                if unacked.iter().any(|u| u.0 == sport) {
                    facts.client_data_sent_with_data_unacked += 1;
                }
                unacked.push((sport, end, ts));
            }
        } else if open.contains_key(&dport) && ack {
            unacked.retain(|&(port, end, sent)| {
                let covered = port == dport && (ackno.wrapping_sub(end) as i32) >= 0;
                if covered {
                    facts.client_data_ack_ms.push((ts - sent) * 1e3);
                }
                !covered
            });
        }
    }
    facts.handshakes.extend(open.into_values());
    facts.handshakes.sort_by(|a, b| a.syn_s.total_cmp(&b.syn_s));
    Ok(facts)
}

/// The window scale option's shift count in a SYN's options, if present.
fn wscale_option(opts: &[u8]) -> Option<u8> {
    let mut i = 0;
    while i < opts.len() {
        match opts[i] {
            0 => return None,
            1 => i += 1,
            kind => {
                let len = usize::from(*opts.get(i + 1)?);
                if len < 2 {
                    return None;
                }
                if kind == 3 && len == 3 {
                    return opts.get(i + 2).copied();
                }
                i += len;
            }
        }
    }
    None
}

/// tcpdump's closing statistics ("N packets dropped by kernel").
pub fn tcpdump_dropped(stderr_text: &str) -> Option<u64> {
    stderr_text
        .lines()
        .find(|l| l.contains("dropped by kernel"))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ss_line_with_every_kind_of_field() {
        let line = "ESTAB 0 0 10.81.2.2:8080 10.81.1.2:40312 skmem:(r0,rb131072,t0,tb87040,f0,w0,o0,bl0,d0) ts sack cubic wscale:7,7 rto:228 rtt:25.3/1.2 ato:40 mss:1448 pmtu:1500 rcvmss:536 advmss:1448 cwnd:10 ssthresh:7 bytes_sent:741342 bytes_retrans:1448 segs_out:520 send 4.6Mbps lastsnd:12 pacing_rate 9.1Mbps delivery_rate 3.9Mbps delivered:513 app_limited busy:152ms rwnd_limited:20ms(13.2%) retrans:0/1 rcv_space:14480 minrtt:25.02 snd_wnd:65535 newfield:xyz";
        let s = &parse_ss(line, 1.0, 2.0)[0];
        assert_eq!(s.state, "ESTAB");
        assert_eq!(s.local, "10.81.2.2:8080");
        assert_eq!(s.peer, "10.81.1.2:40312");
        assert_eq!(s.cwnd(), Some(10));
        assert_eq!(s.num("ssthresh"), Some(7.0));
        assert_eq!(s.num("rtt"), Some(25.3));
        assert_eq!(s.num("rwnd_limited"), Some(20.0));
        assert_eq!(s.fields["delivery_rate"], "3.9Mbps");
        assert_eq!(s.fields["newfield"], "xyz");
        assert!(s.flags.iter().any(|f| f == "app_limited"));
    }

    #[test]
    fn nstat_deltas_keep_only_moved_counters() {
        let b = parse_nstat("#kernel\nTCPLossProbes 3 0.0\nTCPTimeouts 1 0.0\n");
        let a = parse_nstat("#kernel\nTCPLossProbes 5 0.0\nTCPTimeouts 1 0.0\n");
        let d = nstat_delta(&b, &a);
        assert_eq!(d.get("TCPLossProbes"), Some(&2));
        assert_eq!(d.get("TCPTimeouts"), None);
    }

    #[test]
    fn tcpdump_statistics() {
        let t = "listening on c0\n120 packets captured\n120 packets received by filter\n3 packets dropped by kernel\n";
        assert_eq!(tcpdump_dropped(t), Some(3));
    }
}
