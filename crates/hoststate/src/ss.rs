//! `ss -tin` / `ss -tinm` / `ss -tinmO` output: per live TCP socket, the kernel's
//! tcp_info (cwnd, ssthresh, rtt, retrans, time spent limited by the receive window or the
//! send buffer, rates) as typed fields.
//!
//! iproute2 adds fields in most releases (delivery_rate 4.10, busy/rwnd_limited/
//! sndbuf_limited 4.19, dsack_dups/reord_seen 5.x, rcv_wnd 6.x …) and older releases lack
//! them, so every field is optional and a field this parser does not know is kept in
//! [`SsSocket::unknown`] rather than failing the line. Both layouts are read: one line
//! per socket (`-O`/`--oneline`) and the default two lines (socket, then a line
//! starting with whitespace with the details). Lines `# t_ms=… unix=…` (written by the
//! lab between repeated `ss` runs) start a new [`SsSnapshot`].

use crate::diag::{Diags, Parsed};

/// Most sockets kept over all snapshots. A socket takes under 1 KiB here, so the cap
/// bounds memory near 100 MiB on a host with a huge connection table; the rest are
/// counted in a diagnostic.
pub const MAX_SS_SOCKETS: usize = 100_000;

/// Most snapshots (`# t_ms=` blocks) kept.
pub const MAX_SS_SNAPSHOTS: usize = 10_000;

/// Most tokens read from one socket's lines. Real lines have about 45 (iproute2 6.x
/// with -e -m -p); past this a line is not ss output.
pub const MAX_SS_TOKENS: usize = 256;

/// Most unknown fields kept per socket.
pub const MAX_SS_UNKNOWN: usize = 32;

/// Longest token kept as a string (process lists can be long; bytes).
pub const MAX_SS_TOKEN_LEN: usize = 512;

/// Congestion control names ss prints as a bare word (net/ipv4/tcp_*.c modules in
/// mainline Linux, plus bbr2/bbr3 from Google's out-of-tree trees).
const CC_NAMES: &[&str] = &[
    "cubic",
    "reno",
    "bbr",
    "bbr2",
    "bbr3",
    "dctcp",
    "vegas",
    "westwood",
    "htcp",
    "bic",
    "highspeed",
    "hybla",
    "illinois",
    "lp",
    "nv",
    "scalable",
    "veno",
    "yeah",
    "cdg",
];

/// Socket-table identifiers (`ss -a` without `-t` prints this column first).
const NETIDS: &[&str] = &[
    "tcp", "udp", "raw", "u_str", "u_dgr", "u_seq", "p_raw", "p_dgr", "nl", "mptcp", "sctp",
    "dccp", "tipc", "vsock", "xdp",
];

/// `skmem:(r…,rb…,t…,tb…,f…,w…,o…,bl…,d…)`: socket memory (bytes), from -m
/// (`inet_diag` SK_MEMINFO_*). `rb`/`tb` are the receive/send buffer sizes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Skmem {
    /// Receive queue memory in use (`r`, rmem_alloc).
    pub rmem_alloc: Option<u64>,
    /// Receive buffer size (`rb`, sk_rcvbuf).
    pub rcvbuf: Option<u64>,
    /// Transmit memory in flight (`t`, wmem_alloc).
    pub wmem_alloc: Option<u64>,
    /// Send buffer size (`tb`, sk_sndbuf).
    pub sndbuf: Option<u64>,
    /// Forward-allocated memory (`f`).
    pub fwd_alloc: Option<u64>,
    /// Queued write memory (`w`, wmem_queued).
    pub wmem_queued: Option<u64>,
    /// Option memory (`o`).
    pub optmem: Option<u64>,
    /// Backlog queue (`bl`).
    pub backlog: Option<u64>,
    /// Drops (`d`, sk_drops; iproute2 ≥ 4.? prints it).
    pub drops: Option<u64>,
}

/// The tcp_info fields ss prints, typed. Times in ms as ss prints them, rates in bits
/// per second, sizes in bytes, windows and cwnd in segments (as ss prints them).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TcpInfo {
    /// Congestion control (`cubic`, `bbr`, …).
    pub cc: Option<String>,
    pub ts: bool,
    pub sack: bool,
    pub ecn: bool,
    pub ecnseen: bool,
    pub fastopen: bool,
    /// The sender was application-limited at the last rate sample.
    pub app_limited: bool,
    /// `wscale:snd,rcv` — the peer's and our window scale shifts.
    pub snd_wscale: Option<u8>,
    pub rcv_wscale: Option<u8>,
    pub rto_ms: Option<f64>,
    /// Exponential backoff count of the RTO timer.
    pub backoff: Option<u32>,
    /// Smoothed RTT and its variance (`rtt:avg/var`).
    pub rtt_ms: Option<f64>,
    pub rttvar_ms: Option<f64>,
    pub ato_ms: Option<f64>,
    pub mss: Option<u32>,
    pub pmtu: Option<u32>,
    pub rcvmss: Option<u32>,
    pub advmss: Option<u32>,
    pub cwnd: Option<u32>,
    /// Absent while ssthresh is still "infinite" (slow start never ended).
    pub ssthresh: Option<u32>,
    pub bytes_sent: Option<u64>,
    pub bytes_retrans: Option<u64>,
    pub bytes_acked: Option<u64>,
    pub bytes_received: Option<u64>,
    pub segs_out: Option<u64>,
    pub segs_in: Option<u64>,
    pub data_segs_out: Option<u64>,
    pub data_segs_in: Option<u64>,
    /// `send Nbps`: cwnd × mss / srtt.
    pub send_bps: Option<u64>,
    pub lastsnd_ms: Option<u64>,
    pub lastrcv_ms: Option<u64>,
    pub lastack_ms: Option<u64>,
    pub pacing_rate_bps: Option<u64>,
    pub max_pacing_rate_bps: Option<u64>,
    pub delivery_rate_bps: Option<u64>,
    pub delivered: Option<u64>,
    pub delivered_ce: Option<u64>,
    /// Time the socket had data to send (tcpi_busy_time).
    pub busy_ms: Option<u64>,
    /// Time limited by the receiver's window (tcpi_rwnd_limited), and its share of busy.
    pub rwnd_limited_ms: Option<u64>,
    pub rwnd_limited_pct: Option<f64>,
    /// Time limited by the send buffer (tcpi_sndbuf_limited), and its share of busy.
    pub sndbuf_limited_ms: Option<u64>,
    pub sndbuf_limited_pct: Option<f64>,
    pub unacked: Option<u32>,
    /// `retrans:now/total`: segments currently retransmitted, total retransmissions.
    pub retrans_now: Option<u32>,
    pub retrans_total: Option<u32>,
    pub lost: Option<u32>,
    pub sacked: Option<u32>,
    pub fackets: Option<u32>,
    pub dsack_dups: Option<u32>,
    /// Current reordering degree (segments).
    pub reordering: Option<u32>,
    pub reord_seen: Option<u32>,
    pub rcv_rtt_ms: Option<f64>,
    pub rcv_space: Option<u64>,
    pub rcv_ssthresh: Option<u64>,
    pub minrtt_ms: Option<f64>,
    pub snd_wnd: Option<u64>,
    pub rcv_wnd: Option<u64>,
    pub notsent: Option<u64>,
    pub rcv_ooopack: Option<u64>,
    pub skmem: Option<Skmem>,
    /// `timer:(on,200ms,0)` as printed (-o).
    pub timer: Option<String>,
}

/// One socket.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SsSocket {
    /// 1-based line of the socket's first line.
    pub line: usize,
    /// `tcp` when ss printed the Netid column.
    pub netid: Option<String>,
    /// `ESTAB`, `LISTEN`, … (`None` when a state filter hid the column).
    pub state: Option<String>,
    pub recv_q: u64,
    pub send_q: u64,
    /// `addr:port` as printed (`10.0.0.1:22`, `[::1]:22`, `*:22`).
    pub local: String,
    pub peer: String,
    /// `users:((…))` (-p), as printed.
    pub process: Option<String>,
    pub info: TcpInfo,
    /// Fields this parser does not know: (`name`, value after ':' if any), in order.
    pub unknown: Vec<(String, Option<String>)>,
}

/// Splits `addr:port` (`[v6]:port`, `v4%dev:port`) into address and port text.
pub fn split_endpoint(s: &str) -> (&str, &str) {
    match s.rsplit_once(':') {
        Some((a, p)) => (a.trim_start_matches('[').trim_end_matches(']'), p),
        None => (s, ""),
    }
}

impl SsSocket {
    /// The local port, when numeric.
    pub fn local_port(&self) -> Option<u16> {
        split_endpoint(&self.local).1.parse().ok()
    }
    /// The peer port, when numeric.
    pub fn peer_port(&self) -> Option<u16> {
        split_endpoint(&self.peer).1.parse().ok()
    }
}

/// One run of ss (or the whole file when it has no `# t_ms=` marks).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SsSnapshot {
    /// From a `# t_ms=…` mark: ms since the lab's start.
    pub t_ms: Option<f64>,
    /// From a `# … unix=…` mark: Unix time in seconds.
    pub unix_s: Option<f64>,
    pub sockets: Vec<SsSocket>,
}

/// A whole ss file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SsOutput {
    pub snapshots: Vec<SsSnapshot>,
}

impl SsOutput {
    /// Every socket of every snapshot, in file order.
    pub fn sockets(&self) -> impl Iterator<Item = &SsSocket> {
        self.snapshots.iter().flat_map(|s| s.sockets.iter())
    }
}

/// Splits a line into tokens at whitespace, keeping `(…)` groups and `"…"` strings
/// (process names may contain spaces) whole. At most [`MAX_SS_TOKENS`] tokens.
fn tokens(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut quoted = false;
    let mut start: Option<usize> = None;
    for (i, c) in line.char_indices() {
        if out.len() >= MAX_SS_TOKENS {
            return out;
        }
        match c {
            '"' => quoted = !quoted,
            '(' if !quoted => depth = depth.saturating_add(1),
            ')' if !quoted => depth = depth.saturating_sub(1),
            _ => {}
        }
        if c.is_whitespace() && depth == 0 && !quoted {
            if let Some(s) = start.take() {
                out.push(&line[s..i]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        if out.len() < MAX_SS_TOKENS {
            out.push(&line[s..]);
        }
    }
    out
}

fn finite(s: &str) -> Option<f64> {
    let v: f64 = s.parse().ok()?;
    v.is_finite().then_some(v)
}

/// `228`, `204.5`, `1234ms` → ms.
fn ms(s: &str) -> Option<f64> {
    finite(s.strip_suffix("ms").unwrap_or(s))
}

/// `1234ms` → whole ms.
fn ms_u64(s: &str) -> Option<u64> {
    s.strip_suffix("ms").unwrap_or(s).parse().ok()
}

/// `4572511bps`, `4.57Mbps`, `1.2Gbps`, `800Kbps`, `10Bps` (bytes) → bits per second.
fn rate_bps(s: &str) -> Option<u64> {
    let (num, unit_bits) = if let Some(n) = s.strip_suffix("bps") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix("Bps") {
        (n, 8.0)
    } else {
        (s, 1.0)
    };
    let (num, mult) = match num.as_bytes().last() {
        Some(b'K' | b'k') => (&num[..num.len() - 1], 1e3),
        Some(b'M') => (&num[..num.len() - 1], 1e6),
        Some(b'G') => (&num[..num.len() - 1], 1e9),
        Some(b'T') => (&num[..num.len() - 1], 1e12),
        _ => (num, 1.0),
    };
    let v = finite(num)? * mult * unit_bits;
    (0.0..1.8e19).contains(&v).then(|| v.round() as u64)
}

/// `100ms(8.1%)` → (100, 8.1).
fn limited(s: &str) -> Option<(u64, Option<f64>)> {
    match s.split_once('(') {
        Some((t, pct)) => Some((
            ms_u64(t)?,
            pct.trim_end_matches(')')
                .trim_end_matches('%')
                .parse()
                .ok()
                .filter(|p: &f64| p.is_finite()),
        )),
        None => Some((ms_u64(s)?, None)),
    }
}

fn skmem(s: &str) -> Option<Skmem> {
    let inner = s.strip_prefix('(')?.strip_suffix(')')?;
    let mut m = Skmem::default();
    for part in inner.split(',') {
        let split = part.find(|c: char| c.is_ascii_digit())?;
        let (k, v) = part.split_at(split);
        let v: u64 = v.parse().ok()?;
        match k {
            "r" => m.rmem_alloc = Some(v),
            "rb" => m.rcvbuf = Some(v),
            "t" => m.wmem_alloc = Some(v),
            "tb" => m.sndbuf = Some(v),
            "f" => m.fwd_alloc = Some(v),
            "w" => m.wmem_queued = Some(v),
            "o" => m.optmem = Some(v),
            "bl" => m.backlog = Some(v),
            "d" => m.drops = Some(v),
            _ => {} // a future skmem member: the known ones still count
        }
    }
    Some(m)
}

fn pair<T: std::str::FromStr>(s: &str, sep: char) -> Option<(T, T)> {
    let (a, b) = s.split_once(sep)?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Applies one detail token to the socket. `next` is the following token, for the
/// fields ss prints as two words (`send 10Mbps`); returns whether it was consumed.
/// A known field with a value it cannot read is kept as unknown (and counted as a
/// problem by the caller through the returned error).
fn apply(sock: &mut SsSocket, tok: &str, next: Option<&str>) -> (bool, Result<(), String>) {
    let i = &mut sock.info;
    // Two-word fields.
    let two: Option<&mut Option<u64>> = match tok {
        "send" => Some(&mut i.send_bps),
        "pacing_rate" => Some(&mut i.pacing_rate_bps),
        "max_pacing_rate" => Some(&mut i.max_pacing_rate_bps),
        "delivery_rate" => Some(&mut i.delivery_rate_bps),
        _ => None,
    };
    if let Some(slot) = two {
        // A rate starts with a digit; anything else is the next field, not ours.
        let Some(v) = next.filter(|v| v.starts_with(|c: char| c.is_ascii_digit())) else {
            return (false, Err(format!("{tok} without a value")));
        };
        // Old BBR-era ss printed `pacing_rate 10Mbps/5Mbps` (rate/max).
        let first = v.split('/').next().unwrap_or(v);
        return match rate_bps(first) {
            Some(r) => {
                *slot = Some(r);
                (true, Ok(()))
            }
            None => (true, Err(format!("{tok}: {v:?} is not a rate"))),
        };
    }
    let (key, val) = match tok.split_once(':') {
        Some((k, v)) => (k, Some(v)),
        None => (tok, None),
    };
    let ok = match (key, val) {
        ("ts", None) => {
            i.ts = true;
            true
        }
        ("sack", None) => {
            i.sack = true;
            true
        }
        ("ecn", None) => {
            i.ecn = true;
            true
        }
        ("ecnseen", None) => {
            i.ecnseen = true;
            true
        }
        ("fastopen", None) => {
            i.fastopen = true;
            true
        }
        ("app_limited", None) => {
            i.app_limited = true;
            true
        }
        (k, None) if i.cc.is_none() && CC_NAMES.contains(&k) => {
            i.cc = Some(k.to_string());
            true
        }
        ("users", Some(v)) => {
            sock.process = Some(cap(v));
            true
        }
        ("skmem", Some(v)) => set(&mut i.skmem, skmem(v)),
        ("timer", Some(v)) => {
            i.timer = Some(cap(v));
            true
        }
        ("wscale", Some(v)) => match pair::<u8>(v, ',') {
            Some((s, r)) => {
                i.snd_wscale = Some(s);
                i.rcv_wscale = Some(r);
                true
            }
            None => false,
        },
        ("rto", Some(v)) => set(&mut i.rto_ms, ms(v)),
        ("backoff", Some(v)) => set(&mut i.backoff, v.parse().ok()),
        ("rtt", Some(v)) => match v.split_once('/') {
            Some((a, b)) => match (ms(a), ms(b)) {
                (Some(a), Some(b)) => {
                    i.rtt_ms = Some(a);
                    i.rttvar_ms = Some(b);
                    true
                }
                _ => false,
            },
            None => set(&mut i.rtt_ms, ms(v)),
        },
        ("ato", Some(v)) => set(&mut i.ato_ms, ms(v)),
        ("mss", Some(v)) => set(&mut i.mss, v.parse().ok()),
        ("pmtu", Some(v)) => set(&mut i.pmtu, v.parse().ok()),
        ("rcvmss", Some(v)) => set(&mut i.rcvmss, v.parse().ok()),
        ("advmss", Some(v)) => set(&mut i.advmss, v.parse().ok()),
        ("cwnd", Some(v)) => set(&mut i.cwnd, v.parse().ok()),
        ("ssthresh", Some(v)) => set(&mut i.ssthresh, v.parse().ok()),
        ("bytes_sent", Some(v)) => set(&mut i.bytes_sent, v.parse().ok()),
        ("bytes_retrans", Some(v)) => set(&mut i.bytes_retrans, v.parse().ok()),
        ("bytes_acked", Some(v)) => set(&mut i.bytes_acked, v.parse().ok()),
        ("bytes_received", Some(v)) => set(&mut i.bytes_received, v.parse().ok()),
        ("segs_out", Some(v)) => set(&mut i.segs_out, v.parse().ok()),
        ("segs_in", Some(v)) => set(&mut i.segs_in, v.parse().ok()),
        ("data_segs_out", Some(v)) => set(&mut i.data_segs_out, v.parse().ok()),
        ("data_segs_in", Some(v)) => set(&mut i.data_segs_in, v.parse().ok()),
        ("lastsnd", Some(v)) => set(&mut i.lastsnd_ms, ms_u64(v)),
        ("lastrcv", Some(v)) => set(&mut i.lastrcv_ms, ms_u64(v)),
        ("lastack", Some(v)) => set(&mut i.lastack_ms, ms_u64(v)),
        ("delivered", Some(v)) => set(&mut i.delivered, v.parse().ok()),
        ("delivered_ce", Some(v)) => set(&mut i.delivered_ce, v.parse().ok()),
        ("busy", Some(v)) => set(&mut i.busy_ms, ms_u64(v)),
        ("rwnd_limited", Some(v)) => match limited(v) {
            Some((t, p)) => {
                i.rwnd_limited_ms = Some(t);
                i.rwnd_limited_pct = p;
                true
            }
            None => false,
        },
        ("sndbuf_limited", Some(v)) => match limited(v) {
            Some((t, p)) => {
                i.sndbuf_limited_ms = Some(t);
                i.sndbuf_limited_pct = p;
                true
            }
            None => false,
        },
        ("unacked", Some(v)) => set(&mut i.unacked, v.parse().ok()),
        ("retrans", Some(v)) => match pair::<u32>(v, '/') {
            Some((a, b)) => {
                i.retrans_now = Some(a);
                i.retrans_total = Some(b);
                true
            }
            None => false,
        },
        ("lost", Some(v)) => set(&mut i.lost, v.parse().ok()),
        ("sacked", Some(v)) => set(&mut i.sacked, v.parse().ok()),
        ("fackets", Some(v)) => set(&mut i.fackets, v.parse().ok()),
        ("dsack_dups", Some(v)) => set(&mut i.dsack_dups, v.parse().ok()),
        ("reordering", Some(v)) => set(&mut i.reordering, v.parse().ok()),
        ("reord_seen", Some(v)) => set(&mut i.reord_seen, v.parse().ok()),
        ("rcv_rtt", Some(v)) => set(&mut i.rcv_rtt_ms, ms(v)),
        ("rcv_space", Some(v)) => set(&mut i.rcv_space, v.parse().ok()),
        ("rcv_ssthresh", Some(v)) => set(&mut i.rcv_ssthresh, v.parse().ok()),
        ("minrtt", Some(v)) => set(&mut i.minrtt_ms, ms(v)),
        ("snd_wnd", Some(v)) => set(&mut i.snd_wnd, v.parse().ok()),
        ("rcv_wnd", Some(v)) => set(&mut i.rcv_wnd, v.parse().ok()),
        ("notsent", Some(v)) => set(&mut i.notsent, v.parse().ok()),
        ("rcv_ooopack", Some(v)) => set(&mut i.rcv_ooopack, v.parse().ok()),
        _ => {
            keep_unknown(sock, key, val);
            return (false, Ok(()));
        }
    };
    if ok {
        (false, Ok(()))
    } else {
        keep_unknown(sock, key, val);
        (
            false,
            Err(format!(
                "{key}: value {:?} not understood",
                val.unwrap_or("")
            )),
        )
    }
}

fn set<T>(slot: &mut Option<T>, v: Option<T>) -> bool {
    match v {
        Some(v) => {
            *slot = Some(v);
            true
        }
        None => false,
    }
}

fn cap(s: &str) -> String {
    crate::diag::truncate_to(s, MAX_SS_TOKEN_LEN).to_string()
}

fn keep_unknown(sock: &mut SsSocket, key: &str, val: Option<&str>) {
    if sock.unknown.len() < MAX_SS_UNKNOWN {
        sock.unknown.push((cap(key), val.map(cap)));
    }
}

fn is_state(s: &str) -> bool {
    s.len() <= 16
        && !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b == b'-' || b.is_ascii_digit())
        && s.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
}

/// Reads ss output; see the module doc for the layouts.
pub fn parse_ss(text: &str, source: &str) -> Parsed<SsOutput> {
    let mut diags = Diags::new(source);
    let mut out = SsOutput::default();
    let mut total = 0usize;
    let mut dropped = 0usize;
    // Whether the last socket line was kept, so its detail lines attach to it.
    let mut current = false;
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('#') {
            current = false;
            let mut snap = SsSnapshot::default();
            let mut marked = false;
            for w in rest.split_whitespace() {
                if let Some(v) = w.strip_prefix("t_ms=") {
                    snap.t_ms = finite(v);
                    marked = true;
                } else if let Some(v) = w.strip_prefix("unix=") {
                    snap.unix_s = finite(v);
                    marked = true;
                }
            }
            if marked {
                if out.snapshots.len() < MAX_SS_SNAPSHOTS {
                    out.snapshots.push(snap);
                } else {
                    diags.line(lineno, line, "more than MAX_SS_SNAPSHOTS snapshots");
                }
            }
            continue;
        }
        let toks = tokens(line);
        let continuation = line.starts_with(char::is_whitespace);
        if continuation {
            if !current {
                diags.line(lineno, line, "detail line without a socket line");
                continue;
            }
            let Some(sock) = out.snapshots.last_mut().and_then(|s| s.sockets.last_mut()) else {
                continue;
            };
            details(sock, &toks, lineno, line, &mut diags);
            continue;
        }
        if matches!(toks.first(), Some(&("State" | "Netid" | "Recv-Q"))) {
            current = false;
            continue; // the header
        }
        let mut sock = SsSocket {
            line: lineno,
            ..SsSocket::default()
        };
        let mut k = 0;
        if let Some(t) = toks.first() {
            if NETIDS.contains(t) {
                sock.netid = Some(t.to_string());
                k += 1;
            }
        }
        if let Some(t) = toks.get(k) {
            if is_state(t) {
                sock.state = Some(t.to_string());
                k += 1;
            }
        }
        let q = (
            toks.get(k).and_then(|t| t.parse::<u64>().ok()),
            toks.get(k + 1).and_then(|t| t.parse::<u64>().ok()),
            toks.get(k + 2),
            toks.get(k + 3),
        );
        let (Some(rq), Some(sq), Some(l), Some(p)) = q else {
            current = false;
            diags.line(
                lineno,
                line,
                "not an ss socket line (state recv-q send-q local peer)",
            );
            continue;
        };
        sock.recv_q = rq;
        sock.send_q = sq;
        sock.local = cap(l);
        sock.peer = cap(p);
        details(
            &mut sock,
            &toks[(k + 4).min(toks.len())..],
            lineno,
            line,
            &mut diags,
        );
        if total >= MAX_SS_SOCKETS {
            dropped = dropped.saturating_add(1);
            current = false;
            continue;
        }
        if out.snapshots.is_empty() {
            out.snapshots.push(SsSnapshot::default());
        }
        if let Some(s) = out.snapshots.last_mut() {
            s.sockets.push(sock);
            total += 1;
            current = true;
        }
    }
    if dropped > 0 {
        diags.whole(format!("{dropped} sockets past MAX_SS_SOCKETS not kept"));
    }
    diags.wrap(out)
}

fn details(sock: &mut SsSocket, toks: &[&str], lineno: usize, line: &str, diags: &mut Diags) {
    let mut j = 0;
    while j < toks.len() {
        let (used_next, res) = apply(sock, toks[j], toks.get(j + 1).copied());
        if let Err(e) = res {
            diags.line(lineno, line, e);
        }
        j += if used_next { 2 } else { 1 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_in_every_unit() {
        assert_eq!(rate_bps("4572511bps"), Some(4_572_511));
        assert_eq!(rate_bps("4.57Mbps"), Some(4_570_000));
        assert_eq!(rate_bps("1.2Gbps"), Some(1_200_000_000));
        assert_eq!(rate_bps("800Kbps"), Some(800_000));
        assert_eq!(rate_bps("10Bps"), Some(80));
        assert_eq!(rate_bps("nanbps"), None);
        assert_eq!(rate_bps("-5bps"), None);
        assert_eq!(rate_bps("1e30bps"), None);
    }

    #[test]
    fn tokens_keep_groups_and_quotes() {
        let t = tokens(r#"a users:(("x y",pid=1,fd=2)) skmem:(r0,rb1) b"#);
        assert_eq!(
            t,
            vec!["a", r#"users:(("x y",pid=1,fd=2))"#, "skmem:(r0,rb1)", "b"]
        );
        // An unbalanced group runs to the end of the line instead of failing.
        assert_eq!(tokens("a (b c"), vec!["a", "(b c"]);
    }

    /// `ss -tuin` prints a Netid column; `ss -tin state established` drops State.
    #[test]
    fn netid_and_state_columns_are_optional() {
        let p = parse_ss(
            "Netid State Recv-Q Send-Q Local Address:Port Peer Address:Port\n\
             tcp ESTAB 0 0 10.0.0.1:22 10.0.0.2:5000 cwnd:10\n",
            "t",
        );
        let s = p.value.sockets().next().unwrap();
        assert_eq!(
            (s.netid.as_deref(), s.state.as_deref(), s.info.cwnd),
            (Some("tcp"), Some("ESTAB"), Some(10))
        );
        let p = parse_ss(
            "Recv-Q Send-Q Local Address:Port Peer Address:Port\n\
             0      5      10.0.0.1:22 10.0.0.2:5000\n\
             \t cubic cwnd:7 ssthresh:5\n",
            "t",
        );
        assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
        let s = p.value.sockets().next().unwrap();
        assert_eq!(
            (s.state.as_deref(), s.send_q, s.info.ssthresh),
            (None, 5, Some(5))
        );
    }

    /// A known field with a value it cannot read is a diagnostic with the line, kept
    /// as unknown; a detail line with no socket before it is a diagnostic too.
    #[test]
    fn bad_values_are_diagnostics() {
        let p = parse_ss(
            "\t cwnd:1\nESTAB 0 0 a:1 b:2 cwnd:many rtt:1/x mss:1448\n",
            "ss.txt",
        );
        let s = p.value.sockets().next().unwrap();
        assert_eq!(s.info.mss, Some(1448));
        assert_eq!(s.info.cwnd, None);
        assert_eq!(s.unknown.len(), 2);
        let lines: Vec<Option<usize>> = p.diagnostics.iter().map(|d| d.line).collect();
        assert_eq!(lines, vec![Some(1), Some(2), Some(2)]);
        assert_eq!(
            p.diagnostics[1].message,
            "cwnd: value \"many\" not understood"
        );
    }

    /// `send` without its rate does not swallow the next field.
    #[test]
    fn two_word_field_without_value() {
        let p = parse_ss("ESTAB 0 0 a:1 b:2 send cwnd:3\n", "ss.txt");
        let s = p.value.sockets().next().unwrap();
        assert_eq!((s.info.send_bps, s.info.cwnd), (None, Some(3)));
        assert_eq!(p.diagnostics.len(), 1);
        assert_eq!(p.diagnostics[0].message, "send without a value");
    }
}
