//! Labels of a run from the kernel's own records, not from what the scenario meant to do:
//! the tcp_info samples (`ss -tinmO`), the nstat deltas of each namespace and the
//! workload's timings. [`label_run`] is the one place where records become "must" /
//! "must not" per finding id; crates/lab/README.md ("Sweep labels") gives each rule with
//! the kernel function or RFC that makes the record mean what the rule says.
//!
//! A rule that cannot decide (the records are ambiguous, or the run did not exercise the
//! mechanism either way) leaves the id unlabelled: the sweep then does not score it.

use crate::scenario::PORT;
use crate::truth::{self, SsSocket};
use crate::workload::TCP_INFINITE_SSTHRESH;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Linux's initial window in segments (RFC 6928; `TCP_INIT_CWND`).
const IW: u64 = 10;
/// A limit (tcp_info's chrono) counts when it held the sender at least this share of the
/// time it was busy, and at least [`LIMITED_MIN_MS`]; below [`LIMITED_NONE_SHARE`] it did
/// not happen; in between the id is not scored.
const LIMITED_SHARE: f64 = 0.10;
const LIMITED_MIN_MS: f64 = 20.0;
const LIMITED_NONE_SHARE: f64 = 0.01;
/// A sender the receiver's window held at least this share of its busy time was paced
/// by the window (late ACKs of a small window set its RTT), not by a queue: the
/// bufferbloat label's "must not" without a bottleneck. Most of the time, so that a
/// window that held a queued transfer only now and then rules nothing out; it moves
/// labels between "must not" and "not decided", never to "must".
const WINDOW_HELD_SHARE: f64 = 0.5;
/// One tick of tcp_info's chrono times (busy, rwnd_limited): they count
/// `tcp_jiffies32`, and the lab's kernel has CONFIG_HZ=250 (every busy time of the
/// session-4 sweeps is a multiple of 4 ms).
const CHRONO_TICK_MS: f64 = 4.0;
/// CoDel's INTERVAL (RFC 8289 §4.2): a queue is standing when its delay stays above
/// target this long (or one minimum RTT, if longer); shorter is a burst a buffer absorbs.
const CODEL_INTERVAL_MS: f64 = 100.0;
/// Server think time that counts: at least this long and at least one RTT.
const THINK_MIN_MS: f64 = 20.0;
/// A recv wait this much above the RTT is a delayed ACK's (Linux's minimum delayed-ACK
/// timeout is 40 ms, `TCP_DELACK_MIN`; 30 leaves room for timer granularity).
const DELACK_WAIT_MS: f64 = 30.0;

/// Must, must not, or not decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Want {
    Must,
    MustNot,
    Unknown,
}

/// One id's label with the records that decided it.
#[derive(Clone, Debug, Serialize)]
pub struct Label {
    pub id: &'static str,
    pub want: Want,
    /// The records, as numbers ("server TCPLossProbes 2, TcpRetransSegs 3").
    pub why: String,
    /// What the mechanism cost by the kernel's or the workload's own clock, where one
    /// exists (ms).
    pub truth_cost_ms: Option<f64>,
    /// For a "must not" of a priced id: the largest cost the records cannot rule out
    /// (their clock's resolution); a finding priced at or below it agrees with them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cost_ms: Option<f64>,
    /// For a "must" whose records bound the cost from below only (`truth_cost_ms`): the
    /// most they allow; a finding priced between the two agrees with them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truth_cost_upto_ms: Option<f64>,
}

/// The records of one run, read from its directory (`DIR/NAME/truth/…`).
pub struct Records {
    pub path: Value,
    /// The run's topology as its manifest recorded it (`parameters.topology`: the
    /// bottleneck's `rate_mbit` and `queue_packets`, offloads), `Null` when absent.
    pub topology: Value,
    /// The namespaces' sysctls as the kernel reported them after setup (manifest
    /// `parameters.sysctls`: `{"client": {name: value}, "server": …}`), `Null` when absent.
    pub sysctls: Value,
    pub workload: Value,
    pub client: Value,
    pub server: Value,
    pub nstat_client: BTreeMap<String, u64>,
    pub nstat_server: BTreeMap<String, u64>,
    /// Both ends' counters were read before and after the run (`nstat -asz` lists every
    /// counter, so an empty reading is a failed one): without them no id is decided.
    pub nstat_recorded: bool,
    pub ss_client: Vec<SsSocket>,
    pub ss_server: Vec<SsSocket>,
}

fn read_json(p: &Path) -> Value {
    std::fs::read_to_string(p)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}

fn read_nstat(p: &Path) -> BTreeMap<String, u64> {
    serde_json::from_value(read_json(p)).unwrap_or_default()
}

fn read_ss(p: &Path) -> Vec<SsSocket> {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

impl Records {
    /// Reads a run's records; missing files give empty records (and unlabelled ids).
    pub fn read(run_dir: &Path) -> Records {
        let t = run_dir.join("truth");
        let mut nstat_recorded = true;
        let mut delta = |side: &str| {
            let before = read_nstat(&t.join(format!("nstat-{side}-before.json")));
            let after = read_nstat(&t.join(format!("nstat-{side}-after.json")));
            nstat_recorded &= !before.is_empty() && !after.is_empty();
            truth::nstat_delta(&before, &after)
        };
        let parameters = read_json(&run_dir.join("manifest.json"))["parameters"].take();
        Records {
            path: read_json(&t.join("path.json")),
            topology: parameters["topology"].clone(),
            sysctls: parameters["sysctls"].clone(),
            workload: read_json(&t.join("workload.json")),
            client: read_json(&t.join("client-timings.json")),
            server: read_json(&t.join("server-timings.json")),
            nstat_client: delta("client"),
            nstat_server: delta("server"),
            nstat_recorded,
            ss_client: read_ss(&t.join("ss-client.jsonl")),
            ss_server: read_ss(&t.join("ss-server.jsonl")),
        }
    }

    fn c(&self, side: Side, name: &str) -> u64 {
        match side {
            Side::Client => truth::counter(&self.nstat_client, name),
            Side::Server => truth::counter(&self.nstat_server, name),
        }
    }

    fn sum(&self, side: Side, names: &[&str]) -> u64 {
        names
            .iter()
            .fold(0u64, |a, n| a.saturating_add(self.c(side, n)))
    }

    fn both(&self, names: &[&str]) -> u64 {
        self.sum(Side::Client, names)
            .saturating_add(self.sum(Side::Server, names))
    }

    fn kind(&self) -> &str {
        self.workload["kind"]["type"].as_str().unwrap_or("")
    }

    /// The end that sends the bulk of the data.
    fn sender(&self) -> Side {
        let k = &self.workload["kind"];
        if k["type"] == "bulk" && k["direction"] == "upload" {
            Side::Client
        } else {
            Side::Server
        }
    }

    /// tcp_info's snd_ssthresh at accept of every server connection, `None` unless all
    /// of them have it (records from before it was kept have none).
    fn server_ssthresh_at_accept(&self) -> Option<Vec<u32>> {
        let v: Option<Vec<u32>> = self.server["connections"]
            .as_array()?
            .iter()
            .map(|c| {
                c["ssthresh_at_accept"]
                    .as_u64()
                    .and_then(|t| u32::try_from(t).ok())
            })
            .collect();
        v.filter(|v| !v.is_empty())
    }

    fn rtt_ms(&self) -> f64 {
        let d = |dir: &str| self.path[dir]["delay_ms"].as_f64().unwrap_or(0.0);
        d("to_server") + d("to_client")
    }

    /// The sender's established sockets of the workload, grouped per connection (peer),
    /// samples in time order.
    fn sender_conns(&self) -> Vec<Conn<'_>> {
        let (samples, local_is_port) = match self.sender() {
            Side::Server => (&self.ss_server, true),
            Side::Client => (&self.ss_client, false),
        };
        let port = format!(":{PORT}");
        let mut by_peer: BTreeMap<&str, Vec<&SsSocket>> = BTreeMap::new();
        for s in samples.iter().filter(|s| carries_data(s)) {
            let ours = if local_is_port {
                s.local.ends_with(&port)
            } else {
                s.peer.ends_with(&port)
            };
            if ours {
                let key = if local_is_port { &s.peer } else { &s.local };
                by_peer.entry(key.as_str()).or_default().push(s);
            }
        }
        by_peer
            .into_values()
            .map(|mut v| {
                v.sort_by(|a, b| a.t_ms.total_cmp(&b.t_ms));
                let least = |key| v.iter().filter_map(|s| s.num(key)).reduce(f64::min);
                let bottleneck = self.topology["rate_mbit"]
                    .as_f64()
                    .zip(least("mss"))
                    .map(|(rate, mss)| payload_per_ms(rate, mss, least("pmtu")));
                Conn {
                    samples: v,
                    bottleneck,
                }
            })
            .collect()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Client,
    Server,
}

impl Side {
    fn other(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }
}

/// One connection's tcp_info samples at the sender.
struct Conn<'a> {
    samples: Vec<&'a SsSocket>,
    /// The emulator's bottleneck as payload bytes per ms of full segments
    /// ([`payload_per_ms`]), when the run had one.
    bottleneck: Option<f64>,
}

impl Conn<'_> {
    /// The largest value of a cumulative field (tcp_info's chrono times, bytes_retrans).
    fn max(&self, key: &str) -> f64 {
        self.samples
            .iter()
            .filter_map(|s| s.num(key))
            .fold(0.0, f64::max)
    }
    fn min(&self, key: &str) -> Option<f64> {
        self.samples
            .iter()
            .filter_map(|s| s.num(key))
            .min_by(f64::total_cmp)
    }
    fn first(&self) -> Option<&SsSocket> {
        self.samples.first().copied()
    }
    /// How long after its last sample the connection may still have been held by the
    /// receiver's window, unseen by its cumulative rwnd_limited: up to one sampling
    /// period (`SS_PERIOD`: a socket still sending at the next tick would have been
    /// sampled again) when that sample shows data not yet sent (`notsent`; ss prints it
    /// and `unacked` only when non-zero), or data in flight on a socket whose application
    /// may still write (ESTAB, CLOSE-WAIT); else nothing: tcp_write_xmit starts
    /// TCP_CHRONO_RWND_LIMITED only for data in the write queue, and after the sender
    /// shut its side (FIN-WAIT-1 …) none comes. A short transfer can have one sample in
    /// all (s6-090: read 21 ms into a 64 ms transfer, busy 24 ms, rwnd_limited 0, and
    /// the window filled after it).
    fn unsampled_tail_ms(&self) -> f64 {
        let queued = self.samples.last().is_some_and(|s| {
            let writable = matches!(s.state.as_str(), "ESTAB" | "CLOSE-WAIT");
            s.num("notsent").is_some_and(|n| n > 0.0)
                || (writable && s.num("unacked").is_some_and(|n| n > 0.0))
        });
        if queued {
            truth::SS_PERIOD.as_secs_f64() * 1e3
        } else {
            0.0
        }
    }
    /// How long after its last sample the connection may still have been busy: up to
    /// one sampling period when that sample shows data unsent or in flight, in any state
    /// — TCP_CHRONO_BUSY runs until the ACK that empties the retransmission queue, and a
    /// socket still holding data at the next tick would have been sampled again (after
    /// that ACK a closed socket becomes a timewait sock, which ss shows without
    /// tcp_info). s13-079: the last sample, FIN-WAIT-1 with 635 segments in flight, had
    /// busy 1,144 ms; the client read its last byte 1,178 ms after it connected.
    fn unsampled_busy_ms(&self) -> f64 {
        let held = self.samples.last().is_some_and(|s| {
            s.num("notsent").is_some_and(|n| n > 0.0) || s.num("unacked").is_some_and(|n| n > 0.0)
        });
        if held {
            truth::SS_PERIOD.as_secs_f64() * 1e3
        } else {
            0.0
        }
    }
}

/// Slow-start rounds (a window doubling each RTT from [`IW`] segments, RFC 6928 / RFC
/// 5681 §3.1) that `bytes` need.
fn slow_start_rounds(bytes: f64, mss: f64) -> u32 {
    let (mut sent, mut window, mut rounds) = (0.0, IW as f64 * mss.max(1.0), 0);
    while sent < bytes && rounds < 64 {
        sent += window;
        window *= 2.0;
        rounds += 1;
    }
    rounds
}

/// What the receiver's window cost one connection, by the sender's records: the time
/// TCP_CHRONO_RWND_LIMITED ran (tcp_write_xmit starts it when tcp_snd_wnd_test fails
/// with room in cwnd), as far as the sender was busy (tcpi_busy_time: data queued or in
/// flight) longer than without any window limit: slow start's rounds for the bytes it
/// sent, one minimum RTT each, the last one ending with its ACK. The same counterfactual
/// as the detector's (windows.rs, "Cost"): no record can show the transfer without the
/// limit, so this checks the wire's measurements, not the model; a bottleneck slower
/// than slow start makes the real saving smaller for both.
fn rwnd_cost_ms(c: &Conn<'_>) -> f64 {
    c.max("rwnd_limited").min(busy_beyond_slow_start_ms(c))
}

/// Payload bytes per ms that an htb `rate_mbit` (the emulator's bottleneck,
/// topology.rs `shape`) carries in segments of `mss`: htb charges each packet its length
/// with the Ethernet header (`qdisc_pkt_len`), and a full segment fills the path's MTU
/// (ss's `pmtu`, 1,500 on the lab's veths) whatever its IP version and TCP options
/// (tcp_info's `mss` is the payload, `tp->mss_cache`): 1,514 B on the wire for 1,448 of
/// payload with timestamps over IPv4.
fn payload_per_ms(rate_mbit: f64, mss: f64, pmtu: Option<f64>) -> f64 {
    const ETHERNET_HEADER: f64 = 14.0;
    let frame = pmtu.unwrap_or(1500.0) + ETHERNET_HEADER;
    rate_mbit * 1e6 / 8.0 / 1e3 * (mss / frame).min(1.0)
}

/// The connection's busy time less the least it could have taken without any limit but
/// the path's: slow start's rounds for its bytes (one minrtt each), or its bytes at the
/// bottleneck's rate when that is longer (a window past the bandwidth-delay product only
/// fills the bottleneck's queue: s10-064, 2.8 MB at 5 Mbit/s took 4.7 s whatever the
/// receiver's window). The most any limit can have cost it, as far as the samples saw.
fn busy_beyond_slow_start_ms(c: &Conn<'_>) -> f64 {
    busy_beyond_rounds_ms(c, c.max("busy"))
}

/// [`busy_beyond_slow_start_ms`] for a busy time of `busy` ms.
fn busy_beyond_rounds_ms(c: &Conn<'_>, busy: f64) -> f64 {
    let bytes = c.max("bytes_sent") - c.max("bytes_retrans");
    let (Some(rtt), Some(mss)) = (c.min("minrtt"), c.min("mss")) else {
        return 0.0;
    };
    let rounds = f64::from(slow_start_rounds(bytes, mss)) * rtt;
    let at_bottleneck = c.bottleneck.filter(|&r| r > 0.0).map_or(0.0, |r| bytes / r);
    (busy - rounds.max(at_bottleneck)).max(0.0)
}

/// The most the receiver's window can have cost one connection, with what its records
/// leave open after the last sample: its chrono as read plus what it may have counted
/// since (`unsampled_tail_ms`), and no more than its busy time beyond slow start's
/// rounds with the busy time it may have had since (`unsampled_busy_ms`). For a paced
/// sender the chrono is no bound (see `label_run`'s rwnd.limited).
fn rwnd_cost_upto_ms(c: &Conn<'_>, paced: bool) -> f64 {
    let beyond = busy_beyond_rounds_ms(c, c.max("busy") + c.unsampled_busy_ms());
    let upto = if paced {
        beyond
    } else {
        (c.max("rwnd_limited") + c.unsampled_tail_ms()).min(beyond)
    };
    upto.max(rwnd_cost_ms(c))
}

/// The longest run of consecutive samples whose smoothed RTT (`rtt`) meets `queued`,
/// first to last sample of the run (ms).
fn standing_ms(samples: &[&SsSocket], queued: impl Fn(f64) -> bool) -> f64 {
    let (mut best, mut start) = (0.0f64, None);
    for s in samples {
        match s.num("rtt") {
            Some(v) if queued(v) => {
                let t0 = *start.get_or_insert(s.t_ms);
                best = best.max(s.t_ms - t0);
            }
            _ => start = None,
        }
    }
    best
}

/// `skmem:(r0,rb131072,t0,tb87040,f0,w0,o0,bl0,d0)` → the value of one of its fields.
fn skmem(s: &SsSocket, key: &str) -> Option<f64> {
    let v = s.fields.get("skmem")?;
    v.trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .find_map(|f| f.strip_prefix(key)?.parse().ok())
}

/// A sample where the send buffer, not cwnd, the peer's window or the application, held
/// the sender: the conditions under which `tcp_cwnd_validate` (net/ipv4/tcp_output.c)
/// starts TCP_CHRONO_SNDBUF_LIMITED, as far as tcp_info shows them:
/// 1. data was sent and 3. the write queue is empty: everything the application handed
///    over has left (`tcp_write_queue_empty`; ss prints `notsent` only when
///    tcpi_notsent_bytes > 0). Unsent data with room in cwnd is pacing, TSQ or the
///    window at work, not the buffer (sweep s3-000, BBR: `notsent` 140–323 KB in the
///    samples the old rule called "full");
/// 2. not cwnd-limited (`tcp_is_cwnd_limited`): fewer packets in flight than cwnd and, in
///    slow start (cwnd below ssthresh; ss prints `ssthresh` only below
///    TCP_INFINITE_SSTHRESH), cwnd at least twice the flight (s3-011: cwnd 151,
///    unacked 82 in slow start is cwnd-limited to the kernel);
/// 4. the application is waiting for memory (SOCK_NOSPACE, set by `sk_stream_wait_memory`):
///    the buffer is full (`w`, sk_wmem_queued, ≥ 90 % of `tb`, sk_sndbuf:
///    `sk_stream_memory_free` false) *and* the application still had data to hand over
///    ([`app_had_more`]). A whole response written in one call overshoots sk_sndbuf
///    without the writer ever waiting (s1-001: 61,487 B written in 61 µs into a 46 KB
///    buffer; tcp_sendmsg_locked checks the memory only before each new skb).
///
/// And the peer's window had room (unacked × mss < snd_wnd).
fn sndbuf_starved(r: &Records, s: &SsSocket) -> bool {
    let (Some(w), Some(tb)) = (skmem(s, "w"), skmem(s, "tb")) else {
        return false;
    };
    let unacked = s.num("unacked").unwrap_or(0.0);
    let cwnd = s.num("cwnd").unwrap_or(0.0);
    let mss = s.num("mss").unwrap_or(1448.0);
    let wnd = s.num("snd_wnd").unwrap_or(f64::MAX);
    let notsent = s.num("notsent").unwrap_or(0.0);
    let in_slow_start = s.num("ssthresh").is_none_or(|t| cwnd < t);
    let cwnd_limited = unacked >= cwnd || (in_slow_start && cwnd < 2.0 * unacked);
    tb > 0.0
        && w >= 0.9 * tb
        && notsent == 0.0
        && !cwnd_limited
        && unacked * mss < wnd
        && app_had_more(r, s)
}

/// Whether the sending application still had data to hand to this socket when the
/// sample was taken (so a full buffer made it wait): an http response whose write had
/// started and not returned (the server's `response_started_ns` ..
/// `response_written_ns`); for a one-transfer workload, fewer bytes handed over
/// (bytes_acked + unacked × mss; nothing unsent) than the application wrote in all
/// (the server's `bytes_sent`, the upload client's `transfer.bytes`). Unknown → false.
fn app_had_more(r: &Records, s: &SsSocket) -> bool {
    let timings = match r.sender() {
        Side::Server => &r.server,
        Side::Client => &r.client,
    };
    let epoch = timings["epoch_ns"].as_f64().unwrap_or(0.0);
    let t = s.unix_s * 1e9 - epoch;
    let conn = timings["connections"].as_array().and_then(|cs| {
        cs.iter()
            .find(|c| c["peer"].as_str() == Some(s.peer.as_str()))
    });
    if r.kind() == "http" {
        let Some(reqs) = conn.and_then(|c| c["requests"].as_array()) else {
            return false;
        };
        return reqs.iter().any(|q| {
            match (
                q["response_started_ns"].as_f64(),
                q["response_written_ns"].as_f64(),
            ) {
                (Some(a), Some(b)) => a <= t && t <= b,
                _ => false,
            }
        });
    }
    let total = match r.sender() {
        Side::Server => conn.and_then(|c| c["bytes_sent"].as_f64()),
        Side::Client => timings["transfer"]["bytes"].as_f64(),
    };
    let handed = s.num("bytes_acked").unwrap_or(0.0)
        + s.num("unacked").unwrap_or(0.0) * s.num("mss").unwrap_or(1448.0);
    total.is_some_and(|b| handed < b)
}

/// Whether the sending application wrote data after this sample: an http response
/// started later (the server's `response_started_ns`), or for a one-transfer workload
/// fewer bytes handed over than it wrote in all (as [`app_had_more`]). Unknown → false.
fn sent_later(r: &Records, s: &SsSocket) -> bool {
    if r.kind() != "http" {
        return app_had_more(r, s);
    }
    let timings = match r.sender() {
        Side::Server => &r.server,
        Side::Client => &r.client,
    };
    let epoch = timings["epoch_ns"].as_f64().unwrap_or(0.0);
    let t = s.unix_s * 1e9 - epoch;
    timings["connections"]
        .as_array()
        .and_then(|cs| {
            cs.iter()
                .find(|c| c["peer"].as_str() == Some(s.peer.as_str()))
        })
        .and_then(|c| c["requests"].as_array())
        .is_some_and(|reqs| {
            reqs.iter()
                .any(|q| q["response_started_ns"].as_f64().is_some_and(|a| a > t))
        })
}

fn ns_ms(v: &Value) -> Option<f64> {
    v.as_u64().map(|n| n as f64 / 1e6)
}

struct Out(Vec<Label>);

impl Out {
    fn put(&mut self, id: &'static str, want: Want, why: String, cost: Option<f64>) {
        self.0.push(Label {
            id,
            want,
            why,
            truth_cost_ms: cost,
            max_cost_ms: None,
            truth_cost_upto_ms: None,
        });
    }
    fn yes_no(&mut self, id: &'static str, yes: bool, no: bool, why: String) {
        let want = if yes {
            Want::Must
        } else if no {
            Want::MustNot
        } else {
            Want::Unknown
        };
        self.put(id, want, why, None);
    }
}

/// The rules (README "Sweep labels"): records → must / must not per finding id.
pub fn label_run(r: &Records) -> Vec<Label> {
    let mut o = Out(Vec::new());
    let snd = r.sender();
    let rcv = snd.other();
    let conns = r.sender_conns();
    // The sender runs BBR (ss prints the congestion control's name as a flag).
    let bbr = conns
        .iter()
        .any(|c| c.samples.iter().any(|s| s.flags.iter().any(|f| f == "bbr")));
    let rtt = r.rtt_ms();
    let kind = r.kind().to_string();

    // --- Loss recovery (tcp_input.c / tcp_timer.c counters; RFC 6298, RFC 8985). ---
    // The first RTO of an episode is counted by the state it fired in
    // (tcp_retransmit_timer): TCPTimeouts (Open), TCPLossFailures (Loss),
    // TCPSackFailures/TCPRenoFailures (Disorder), TCPSackRecoveryFail/TCPRenoRecoveryFail
    // (Recovery). A SYN's RTO is counted in TCPTimeouts too, and in TCPSynRetrans.
    let rto_names = [
        "TCPTimeouts",
        "TCPLossFailures",
        "TCPSackFailures",
        "TCPRenoFailures",
        "TCPSackRecoveryFail",
        "TCPRenoRecoveryFail",
    ];
    // The server's SYN/ACK timer counts in TCPTimeouts too (tcp_syn_ack_timeout), and
    // every SYN/ACK it sends again in TCPSynRetrans (tcp_rtx_synack), whether the timer or
    // a retransmitted SYN asked for it (tcp_check_req): s48-019, a SYN/ACK lost at 183 ms,
    // resent by the timer after 1 s and again for the client's SYN retransmission, read
    // TCPTimeouts 1 + 1 and TCPSynRetrans 1 + 2 with no data RTO. So the client's SYN
    // retransmissions bound the handshake's timeouts from below, both ends' from above.
    let all = r.both(&rto_names);
    let (syn, synack) = (
        r.c(Side::Client, "TCPSynRetrans"),
        r.c(Side::Server, "TCPSynRetrans"),
    );
    let rtos = all.saturating_sub(syn);
    let rtos_surely = all.saturating_sub(syn.saturating_add(synack));
    o.yes_no(
        "loss.rto",
        rtos_surely > 0,
        rtos == 0,
        format!(
            "RTOs (both ends, SYN RTOs excluded) {rtos_surely}{}",
            if rtos > rtos_surely {
                format!(" to {rtos} (SYN/ACKs resent by the server)")
            } else {
                String::new()
            }
        ),
    );
    let probes = r.both(&["TCPLossProbes"]);
    // tcp_send_loss_probe sends new data when it can: counted, but no retransmission on
    // the wire; only a probe at an end that retransmitted data outside a recovery is
    // required. TcpRetransSegs counts every retransmitted segment (__tcp_retransmit_skb);
    // of them, a SYN's or SYN/ACK's is in TCPSynRetrans too (s10-099: the client's SYN
    // retransmitted, the server's one probe sent new data), and those of the recovery's
    // queue in TCPFastRetrans or, after an RTO, TCPSlowStartRetrans
    // (tcp_xmit_retransmit_queue). What is left is the RTO's own and the probes'
    // (s50-082: 23 retransmissions, all fast, and one probe of new data).
    let data_retrans = |e: Side| {
        r.c(e, "TcpRetransSegs")
            .saturating_sub(r.c(e, "TCPSynRetrans"))
    };
    let probe_retrans = |e: Side| {
        data_retrans(e)
            .saturating_sub(r.c(e, "TCPFastRetrans"))
            .saturating_sub(r.c(e, "TCPSlowStartRetrans"))
    };
    let probed = [Side::Client, Side::Server]
        .into_iter()
        .any(|e| r.c(e, "TCPLossProbes") > 0 && probe_retrans(e) > 0);
    let retrans = data_retrans(Side::Client) + data_retrans(Side::Server);
    let unqueued = probe_retrans(Side::Client) + probe_retrans(Side::Server);
    o.yes_no(
        "loss.tail_loss_probe",
        probed,
        probes == 0,
        format!(
            "TCPLossProbes {probes}, TcpRetransSegs less TCPSynRetrans {retrans}, and less \
             TCPFastRetrans and TCPSlowStartRetrans {unqueued}"
        ),
    );
    let fast = r.both(&["TCPFastRetrans"]);
    let recov = r.both(&["TCPSackRecovery", "TCPRenoRecovery"]);
    o.yes_no(
        "loss.fast_retransmit",
        fast > 0,
        fast == 0 && recov == 0,
        format!("TCPFastRetrans {fast}, TCPSackRecovery+TCPRenoRecovery {recov}"),
    );
    // RFC 2883: a D-SACK reports a duplicate arrival; the emulator never duplicates, so
    // every one is a retransmission of data that had arrived. TCPSpuriousRTOs: F-RTO
    // (RFC 5682, tcp_process_loss) found an RTO spurious.
    let dsack_rx = r.both(&["TCPDSACKRecv", "TCPDSACKOfoRecv"]);
    let dsack_tx = r.both(&["TCPDSACKOldSent", "TCPDSACKOfoSent"]);
    let spur_rto = r.both(&["TCPSpuriousRTOs"]);
    o.yes_no(
        "retransmit.spurious",
        dsack_rx + dsack_tx + spur_rto > 0,
        dsack_rx + dsack_tx + spur_rto == 0,
        format!("D-SACKs received {dsack_rx}, sent {dsack_tx}, spurious RTOs {spur_rto}"),
    );

    // --- Reordering: the sender's reordering detection (tcp_check_sack_reordering,
    // tcp_update_reordering; RACK's reord_seen, RFC 8985 §6.2), or a fast recovery the
    // sender undid because D-SACKs or timestamps showed the originals had arrived
    // (tcp_try_undo_dsack / tcp_try_undo_recovery / tcp_try_undo_partial: TCPDSACKUndo,
    // TCPFullUndo, TCPPartialUndo; RFC 3708, RFC 2883 §4.2): an original that arrived
    // after the packets behind it had triggered recovery is a reordered one. (An undone
    // RTO, TCPLossUndo, is a late path, not counted.) Out-of-order arrivals at the
    // receiver (TCPOFOQueue) with neither: not decided unless a loss explains them. ---
    let reo = r.both(&["TCPSACKReorder", "TCPTSReorder", "TCPRenoReorder"]);
    let undo = r.both(&["TCPDSACKUndo", "TCPFullUndo", "TCPPartialUndo"]);
    let seen = conns
        .iter()
        .map(|c| c.max("reord_seen"))
        .fold(0.0, f64::max);
    let ofo = r.c(rcv, "TCPOFOQueue");
    let detected = reo > 0 || seen > 0.0 || undo > 0;
    o.yes_no(
        "reordering",
        detected,
        !detected && (ofo == 0 || (retrans > 0 && dsack_rx + dsack_tx == 0)),
        format!(
            "TCPSACKReorder+TCPTSReorder+TCPRenoReorder {reo}, reord_seen {seen}, recoveries undone (TCPDSACKUndo+TCPFullUndo+TCPPartialUndo) {undo}, receiver TCPOFOQueue {ofo}, retransmissions {retrans}"
        ),
    );

    // --- Handshake (tcp_retransmit_skb counts TCPSynRetrans; RFC 6298 §5.7 1 s). ---
    let connect_ms: Vec<f64> = r.client["connections"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter_map(|c| Some(ns_ms(&c["connected_ns"])? - ns_ms(&c["connect_start_ns"])?))
                .collect()
        })
        .unwrap_or_default();
    let syn_cost: f64 = connect_ms.iter().map(|c| (c - rtt).max(0.0)).sum();
    o.put(
        "handshake.syn_retransmit",
        if syn + synack > 0 {
            Want::Must
        } else {
            Want::MustNot
        },
        format!("client TCPSynRetrans {syn}, server {synack}; connect ms {connect_ms:.1?}"),
        (syn + synack > 0).then_some(syn_cost),
    );

    // --- Receive window (tcp_output.c: tcp_write_xmit starts TCP_CHRONO_RWND_LIMITED
    // when tcp_snd_wnd_test fails; tcpi_rwnd_limited / tcpi_busy_time). ---
    let busy: f64 = conns.iter().map(|c| c.max("busy")).sum();
    let rwnd_lim: f64 = conns.iter().map(|c| c.max("rwnd_limited")).sum();
    let sndbuf_lim: f64 = conns.iter().map(|c| c.max("sndbuf_limited")).sum();
    let limited = |v: f64| v >= LIMITED_MIN_MS && v >= LIMITED_SHARE * busy;
    let not_limited = |v: f64| v <= LIMITED_NONE_SHARE * busy;
    let zero = r.c(rcv, "TCPToZeroWindowAdv");
    // What the window cost: its chrono time as far as the sender was busy longer than it
    // would have been without the limit (`rwnd_cost_ms`). The chrono alone is not the
    // cost: a window that capped a round of slow start without adding a round to the
    // transfer held the sender back and cost nothing (s1-016: rounds of 10, 20, 40, 80,
    // 115, 148 segments, rwnd_limited 76 ms, and the 413 segments took the 6 rounds
    // slow start needs anyway).
    let rwnd_cost: f64 = conns.iter().map(rwnd_cost_ms).sum();
    let unsampled: f64 = conns.iter().map(Conn::unsampled_tail_ms).sum();
    let rw = limited(rwnd_lim) && rwnd_cost >= LIMITED_MIN_MS;
    // A paced sender's chrono is a lower bound: tcp_write_xmit tests tcp_pacing_check
    // before tcp_snd_wnd_test, so each attempt that meets the pacing timer ends "not
    // rwnd-limited" and stops TCP_CHRONO_RWND_LIMITED until the timer's retry finds the
    // window full again. BBR paces inside TCP (SK_PACING_NEEDED) on the lab's qdiscs, so
    // its chrono misses the pacing gaps of a sender the window holds: s12-029 had the
    // window's 31 segments unacked in every sample for 4 s and 36 % of busy in the
    // chrono. Its cost is then bounded only by busy time beyond slow start's rounds.
    let rwnd_upto: f64 = conns.iter().map(busy_beyond_slow_start_ms).sum();
    let rwnd_cost_upto: f64 = conns.iter().map(|c| rwnd_cost_upto_ms(c, bbr)).sum();
    o.put(
        "rwnd.limited",
        if rw {
            Want::Must
        } else if not_limited(rwnd_lim) && busy > 0.0 && zero == 0 {
            // (With zero windows, the time in the persist state, nothing in flight, is
            // not clearly in the chrono: not decided.)
            Want::MustNot
        } else {
            Want::Unknown
        },
        format!(
            "sender rwnd_limited {rwnd_lim:.0} ms of busy {busy:.0} ms, of which beyond \
             slow start's rounds{} {rwnd_cost:.0} ms{}; up to {unsampled:.0} ms sent after \
             the last samples",
            if conns.iter().any(|c| c.bottleneck.is_some()) {
                " and the bottleneck's rate"
            } else {
                ""
            },
            if bbr {
                format!(" (paced: a lower bound, busy beyond them {rwnd_upto:.0} ms)")
            } else {
                String::new()
            }
        ),
        rw.then_some(rwnd_cost),
    );
    // A connection read before it ended may have been held or busy after its last
    // sample (`rwnd_cost_upto_ms`): the records cannot rule out that much more.
    if let Some(l) = o.0.last_mut() {
        if l.want == Want::Must && rwnd_cost_upto > rwnd_cost {
            l.truth_cost_upto_ms = Some(rwnd_cost_upto);
        }
    }
    // The chrono counts jiffies (tcp_chrono_set reads tcp_jiffies32): "≤ 1 % of busy"
    // cannot rule out a window-limited time below that plus one tick, nor what it counted
    // after the last sample of a connection still sending then (s5-098, s6-018, s6-090:
    // one sample each, 16–24 ms into transfers of 42–64 ms).
    let chrono_tolerance = LIMITED_NONE_SHARE * busy + CHRONO_TICK_MS + unsampled;
    if let Some(l) = o.0.last_mut() {
        if l.want == Want::MustNot {
            l.max_cost_ms = Some(chrono_tolerance);
        }
    }
    // tcp_select_window → the window the receiver advertised reached 0.
    let want_zero = r.sum(rcv, &["TCPToZeroWindowAdv", "TCPWantZeroWindowAdv"]);
    o.yes_no(
        "rwnd.zero_window",
        zero > 0,
        want_zero == 0,
        format!(
            "{} TCPToZeroWindowAdv {zero}, +TCPWantZeroWindowAdv {want_zero}",
            rcv.name()
        ),
    );
    // tcp_info's TCPI_OPT_WSCALE: ss prints `wscale:` only when both SYNs had the option.
    let wscale_known = conns.iter().any(|c| !c.samples.is_empty());
    let no_ws = wscale_known
        && conns
            .iter()
            .all(|c| c.samples.iter().all(|s| !s.fields.contains_key("wscale")));
    // Without scaling the receiver's window_clamp is 65,535 (tcp_select_initial_window)
    // and rcv_ssthresh grows up to it (tcp_grow_window): reaching it, the missing scale
    // capped the window. Below it the receiver's own buffer held the window under the cap
    // (s68-048: SO_RCVBUF 28,672, rcv_ssthresh 34,845 at most, windows of 34,752 B), and
    // scaling alone would change nothing: the buffer's limit is the one to name.
    let rcv_ssthresh_max = receiver_samples(r, rcv)
        .iter()
        .filter_map(|s| s.num("rcv_ssthresh"))
        .reduce(f64::max);
    let cap_bound = rcv_ssthresh_max.map(|m| m >= f64::from(u16::MAX));
    let no_ws_binds = no_ws && cap_bound != Some(false);
    o.yes_no(
        "rwnd.no_window_scaling",
        no_ws_binds && rw,
        wscale_known && (!no_ws || cap_bound == Some(false)),
        format!(
            "window scaling negotiated: {}; the receiver's rcv_ssthresh at most {rcv_ssthresh_max:?} (the unscaled clamp 65535)",
            !no_ws
        ),
    );
    // Not growing: the window limited the sender, no zero window, window scaling on, and
    // the receiver's buffer never grew: skmem `rb` (sk_rcvbuf), which receive autotuning
    // raises once per RTT while the reader keeps up (tcp_rcv_space_adjust, "DRS") and
    // which a fixed SO_RCVBUF (SOCK_RCVBUF_LOCK) or memory pressure holds. Under pressure
    // (TCPMemoryPressures, tcp_enter_memory_pressure) the window also collapses to
    // 4 × advmss (tcp_adjust_rcv_ssthresh). A buffer that grew is autotuning at work: a
    // window still ramping is not "not growing" even when it limited the sender (class 4).
    // Ruled out by the chrono only when the sender was sampled busy, as rwnd.limited is
    // (s37-080, s40-048: transfers of 24 ms that no sample caught read as 0 ms of 0).
    let pressure = r.both(&["TCPMemoryPressures"]);
    let rb: Vec<f64> = receiver_samples(r, rcv)
        .iter()
        .filter_map(|s| skmem(s, "rb"))
        .collect();
    let (rb_first, rb_max) = (rb.first().copied(), rb.iter().copied().reduce(f64::max));
    // A first sample above the buffer the socket started with was taken after
    // autotuning had grown it (s22-007: one sample, half-way through a 4 MiB transfer at
    // 1 ms, rb 3,431,088 against tcp_rmem's 131,072).
    let rb_start = initial_rcvbuf(r, rcv);
    let grown_before = matches!((rb_first, rb_start), (Some(f), Some(i)) if f > i);
    let grew = grown_before || matches!((rb_first, rb_max), (Some(f), Some(m)) if m > f);
    let flat = rb_first.is_some() && !grew;
    o.yes_no(
        "rwnd.not_growing",
        pressure > 0 || (rw && zero == 0 && !no_ws_binds && flat),
        pressure == 0
            && ((not_limited(rwnd_lim) && busy > 0.0 && zero == 0)
                || grew
                || zero > 0
                || no_ws_binds),
        format!(
            "TCPMemoryPressures {pressure}, receiver sk_rcvbuf first {rb_first:?} max {rb_max:?}, rwnd limited {rw}, zero windows {zero}"
        ),
    );
    // Ruled out only by the chrono (the buffer did not grow): it carries rwnd.limited's
    // cost, so the same resolution.
    if let Some(l) = o.0.last_mut() {
        if l.want == Want::MustNot && !(grew || zero > 0 || no_ws_binds) {
            l.max_cost_ms = Some(chrono_tolerance);
        }
    }

    // --- Send buffer: TCP_CHRONO_SNDBUF_LIMITED, or the samples that meet the
    // conditions under which tcp_cwnd_validate starts it (`sndbuf_starved`). The chrono
    // alone under-counts: it starts only in a tcp_write_xmit that runs while the writer
    // is already waiting (SOCK_NOSPACE), i.e. when one sendmsg call blocks after copying
    // part of its data (`wait_for_space: if (copied) tcp_push(...)`); a writer of
    // MSS-sized calls blocks before copying anything, its data leaves in the next call's
    // push after tcp_check_space cleared SOCK_NOSPACE, and the chrono stays 0
    // (small-sndbuf's caveat). ---
    let sending: Vec<&SsSocket> = conns
        .iter()
        .flat_map(|c| c.samples.iter().copied())
        .filter(|s| s.num("unacked").unwrap_or(0.0) > 0.0)
        .collect();
    let full = sending.iter().filter(|s| sndbuf_starved(r, s)).count();
    let sb = limited(sndbuf_lim) || (sending.len() >= 4 && full * 2 >= sending.len());
    o.put(
        "sndbuf.limited",
        if sb {
            Want::Must
        } else if not_limited(sndbuf_lim) && full * 10 <= sending.len() && !sending.is_empty() {
            Want::MustNot
        } else {
            Want::Unknown
        },
        format!(
            "sender sndbuf_limited {sndbuf_lim:.0} ms; everything written sent, send buffer full with the writer waiting and room in cwnd and window in {full} of {} sending samples",
            sending.len()
        ),
        (sb && sndbuf_lim > 0.0).then_some(sndbuf_lim),
    );
    // The chrono under-counts (above), so it is the least the buffer cost. The most: the
    // busy time beyond slow start's rounds less what the receiver's window held
    // (rwnd_limited), the time some other limit than the network's round trips and the
    // receiver's window held the sender (s20-016: chrono 1,196 ms, with the flight at
    // 16–45 segments under cwnd 93 and a 45-segment window for 8.6 s).
    if let Some(l) = o.0.last_mut() {
        let upto: f64 = conns
            .iter()
            .map(|c| (busy_beyond_slow_start_ms(c) - c.max("rwnd_limited")).max(0.0))
            .sum();
        if l.want == Want::Must && l.truth_cost_ms.is_some() && upto > sndbuf_lim {
            l.truth_cost_upto_ms = Some(upto);
        }
    }

    // --- Queueing delay: the sender's smoothed RTT against its minimum (tcp_rtt_estimator,
    // tcp_update_rtt_min), required to *stand* (RFC 8289 §4.2: above the path's minimum
    // for at least CoDel's INTERVAL, 100 ms, or one minimum RTT if longer, in
    // consecutive samples), and only where a queue can stand: the emulator's bottleneck,
    // an htb rate with a FIFO (manifest `rate_mbit`, `queue_packets`). Without one the
    // path is line-rate veths and a delay line, and by Little's law (queue delay = bytes
    // queued / drain rate) no flight drains slowly enough to queue for milliseconds: an
    // RTT that rose there is the receiver's ACK timing — a slow reader's small window
    // ACKed late (s3-005, s3-013, s3-061: srtt 32–49 ms over a 1–14 ms minimum, 4–23
    // packets in flight, no bottleneck) — or the persist timer (class 9), not a queue.
    // A path whose delay changed is not decided: the kernel cannot tell a longer path
    // from a queue. ---
    let srtt_max = conns.iter().map(|c| c.max("rtt")).fold(0.0, f64::max);
    let min_rtt = conns
        .iter()
        .filter_map(|c| c.min("minrtt"))
        .min_by(f64::total_cmp);
    let stepped = !r.path["to_client"]["delay_change"].is_null()
        || !r.path["to_server"]["delay_change"].is_null();
    let zero_window = zero > 0;
    // Some(false) only when the manifest says the path had no rate limit.
    let bottleneck = r
        .topology
        .as_object()
        .map(|t| t.get("rate_mbit").is_some_and(|v| !v.is_null()));
    let queued = |m: f64, v: f64| v >= 3.0 * m && v - m >= 30.0;
    let standing_ms = min_rtt.map_or(0.0, |m| {
        conns
            .iter()
            .map(|c| standing_ms(&c.samples, |v| queued(m, v)))
            .fold(0.0, f64::max)
    });
    let (bloat, calm) = match min_rtt {
        Some(m) => (
            queued(m, srtt_max) && standing_ms >= CODEL_INTERVAL_MS.max(m),
            srtt_max < 1.5 * m + 5.0,
        ),
        None => (false, false),
    };
    // Without a configured bottleneck a standing queue is still possible in the lab's
    // own forwarding: the emulator's NFQUEUE verdicts are made in user space, and on a
    // loaded 2-core machine they drain slower than the flight arrives (s12-090: srtt
    // 11.5 → 109 ms standing 100 ms, 1.46 MB in flight at 121 Mbit/s delivered, which
    // by Little's law is a 97 ms queue). Only a sender the receiver's window held (the
    // late-ACK shapes above) rules a queue out there; an srtt that rose otherwise is
    // not decided.
    let held_by_rwnd = busy > 0.0 && rwnd_lim >= WINDOW_HELD_SHARE * busy;
    o.yes_no(
        "network.bufferbloat",
        bloat && bottleneck == Some(true) && !stepped && !zero_window,
        calm || (bottleneck == Some(false) && !stepped && held_by_rwnd),
        format!(
            "sender srtt max {srtt_max:.1} ms, min rtt {min_rtt:?} ms, standing {standing_ms:.0} ms; \
             bottleneck {}",
            match bottleneck {
                Some(true) => format!(
                    "{} Mbit/s, {}-packet FIFO",
                    r.topology["rate_mbit"], r.topology["queue_packets"]
                ),
                Some(false) => "none".to_string(),
                None => "unknown".to_string(),
            }
        ),
    );

    // --- Slow start left early: a connection whose first sample already shows a
    // ssthresh (tcp_info prints it only below TCP_INFINITE_SSTHRESH) with nothing
    // retransmitted had it from tcp_metrics (tcp_init_metrics) — unless HyStart set it
    // (hystart_update: TCPHystartTrainDetect / TCPHystartDelayDetect). ---
    let hystart = r.sum(snd, &["TCPHystartTrainDetect", "TCPHystartDelayDetect"]);
    let early: Vec<bool> = conns
        .iter()
        .filter_map(|c| c.first())
        .map(|s| s.fields.contains_key("ssthresh") && s.num("bytes_retrans").unwrap_or(0.0) == 0.0)
        .collect();
    let any_early = early.iter().any(|&e| e);
    // tcp_info at accept (server records since session 14) says it without the race: the
    // ssthresh tcp_init_metrics left before the first byte, so neither HyStart nor BBR's
    // exit from STARTUP (bbr_check_drain), both later, can be mistaken for it.
    let at_accept = match snd {
        Side::Server => r.server_ssthresh_at_accept(),
        Side::Client => None,
    };
    let (yes, no, how) = match at_accept {
        Some(v) => {
            let cached = v.iter().filter(|&&t| t < TCP_INFINITE_SSTHRESH).count();
            (
                cached > 0 && any_early,
                cached == 0,
                format!("ssthresh cached at accept: {cached} of {}", v.len()),
            )
        }
        // BBR sets snd_ssthresh itself when it leaves STARTUP (bbr_check_drain),
        // loss-free: not decided for a BBR sender.
        None => (
            any_early && hystart == 0 && !bbr,
            !early.is_empty() && !any_early && hystart == 0 && !bbr,
            format!(
                "connections starting with a ssthresh and no retransmission: {} of {}",
                early.iter().filter(|&&e| e).count(),
                early.len()
            ),
        ),
    };
    o.yes_no(
        "slow_start.early_exit",
        yes,
        no,
        format!("{how}; HyStart exits {hystart}; BBR {bbr}"),
    );

    // --- Workload timings: connections, requests, think time, idle closes. ---
    label_http(r, &mut o, &conns, rtt);
    label_app_limited(r, &mut o, &conns, &kind);
    label_echo(r, &mut o, rtt, &kind);
    // Counters missing at either end read as zero and would decide ids the run never
    // recorded (s69-099: the client's nstat after the run came back empty, so its SYN
    // retransmission read as none and the server's SYN/ACK timer as a data RTO).
    if !r.nstat_recorded {
        for l in &mut o.0 {
            l.want = Want::Unknown;
            l.max_cost_ms = None;
            l.why = format!(
                "the kernel's counters were not recorded at both ends; {}",
                l.why
            );
        }
    }
    o.0
}

/// A socket that may still move data: established, or closing with data in flight (a
/// bulk sender shuts its side after its last write, and most of a slow transfer can
/// happen in FIN-WAIT-1; the receiver is then in CLOSE-WAIT).
fn carries_data(s: &SsSocket) -> bool {
    !matches!(
        s.state.as_str(),
        "LISTEN" | "TIME-WAIT" | "SYN-SENT" | "SYN-RECV" | "CLOSED" | "UNCONN"
    )
}

/// The receive buffer (sk_rcvbuf) `side`'s connections started with: twice the
/// SO_RCVBUF its workload set (sock_setsockopt doubles it, and SOCK_RCVBUF_LOCK keeps
/// autotuning off), else tcp_rmem's default (tcp_init_sock) as its namespace reported
/// it. `None` when the records do not say.
fn initial_rcvbuf(r: &Records, side: Side) -> Option<f64> {
    let sock = &r.workload[format!("{}_sock", side.name())];
    if let Some(b) = sock["rcvbuf"].as_f64() {
        return Some(2.0 * b);
    }
    r.sysctls[side.name()]["net.ipv4.tcp_rmem"]
        .as_str()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn receiver_samples(r: &Records, rcv: Side) -> Vec<&SsSocket> {
    let port = format!(":{PORT}");
    let v = match rcv {
        Side::Client => &r.ss_client,
        Side::Server => &r.ss_server,
    };
    let mut s: Vec<&SsSocket> = v
        .iter()
        .filter(|s| carries_data(s) && (s.peer.ends_with(&port) || s.local.ends_with(&port)))
        .collect();
    s.sort_by(|a, b| a.t_ms.total_cmp(&b.t_ms));
    s
}

fn label_http(r: &Records, o: &mut Out, conns: &[Conn], rtt: f64) {
    let http = r.kind() == "http";
    let reqs = r.client["requests"].as_array().cloned().unwrap_or_default();
    let nconn = r.client["connections"].as_array().map_or(0, Vec::len);
    let per_conn = if nconn > 0 {
        reqs.len() as f64 / nconn as f64
    } else {
        0.0
    };
    o.yes_no(
        "connection.short_lived",
        http && nconn >= 3 && per_conn <= 2.0,
        nconn <= 1,
        format!("{nconn} connections for {} requests", reqs.len()),
    );
    // A response on a new connection larger than the initial window needs more than one
    // round of slow start (RFC 5681 §3.1, RFC 6928).
    let mss = conns
        .iter()
        .filter_map(|c| c.first()?.num("mss"))
        .next()
        .unwrap_or(1448.0);
    let resp = r.workload["kind"]["response_bytes"].as_f64().unwrap_or(0.0);
    let fresh: Vec<bool> = reqs
        .iter()
        .enumerate()
        .map(|(i, q)| i == 0 || q["connected_ns"].is_u64())
        .collect();
    let cold = http && fresh.iter().any(|&f| f) && resp > 2.0 * IW as f64 * mss;
    o.yes_no(
        "slow_start.new_connection",
        cold && nconn >= 3 && per_conn <= 2.0,
        !http || resp <= IW as f64 * mss,
        format!("{nconn} connections, response {resp} B, MSS {mss}"),
    );
    // Idle closes: the server's records (ServerTimings: close reason idle_timeout) followed
    // by a request on a new connection.
    // A close whose FIN queued behind response data the server had not sent yet (the
    // first tcp_info sample after it shows notsent > 0) leaves the FIN on the response's
    // last segment: on the wire a close on completion, with no idle time before it
    // (sweep s15-041: BBR on a 111 ms path, the 111 ms timer ran from the last write,
    // which returned once the response was buffered; 28,696 B unsent after each close).
    let epoch = r.server["epoch_ns"].as_f64().unwrap_or(0.0);
    let behind_data = |c: &Value| {
        let (Some(peer), Some(closed)) = (c["peer"].as_str(), c["closed_ns"].as_f64()) else {
            return false;
        };
        r.ss_server
            .iter()
            .filter(|s| s.peer == peer && s.unix_s * 1e9 - epoch >= closed)
            .min_by(|a, b| a.unix_s.total_cmp(&b.unix_s))
            .is_some_and(|s| s.num("notsent").unwrap_or(0.0) > 0.0)
    };
    let mut idle: Vec<f64> = Vec::new();
    let mut hidden = 0usize;
    for c in r.server["connections"].as_array().into_iter().flatten() {
        if let Some(ms) = ns_ms(&c["close"]["idle_ns"]) {
            if behind_data(c) {
                hidden += 1;
            } else {
                idle.push(ms);
            }
        }
    }
    let reconnected = reqs.iter().filter(|q| q["reconnected"] == true).count();
    // The client's own idle closes (ClientTimings idle_closes), each followed by a
    // request on a new connection.
    let client_idle: Vec<f64> = r.client["idle_closes"]
        .as_array()
        .map(|cs| cs.iter().filter_map(|c| ns_ms(&c["idle_ns"])).collect())
        .unwrap_or_default();
    let fresh_after = reqs
        .iter()
        .skip(1)
        .filter(|q| q["connected_ns"].is_u64())
        .count();
    o.yes_no(
        "connection.idle_close",
        (!idle.is_empty() && reconnected > 0) || (!client_idle.is_empty() && fresh_after > 0),
        idle.is_empty() && hidden == 0 && client_idle.is_empty(),
        format!(
            "server idle closes after {idle:.0?} ms ({hidden} more with the FIN behind unsent response data), requests that reconnected {reconnected}; client idle closes after {client_idle:.0?} ms, later requests on a new connection {fresh_after}"
        ),
    );
    // Server time per request: from the arrival of its last segment at the server's
    // stack (the kernel's receive timestamp, SO_TIMESTAMPNS) to the response's first
    // write, which is what a capture shows (request → response) less the path. It
    // includes a request waiting unread for the server to get the CPU or a handler,
    // which the server's own clock (think_ns: the sleep after the read) cannot see.
    // Records made before the arrival was kept give think_ns.
    let think: Vec<f64> = r.server["connections"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .flat_map(|c| c["requests"].as_array().cloned().unwrap_or_default())
                .filter_map(|q| {
                    match (
                        q["request_arrived_ns"].as_u64(),
                        q["response_started_ns"].as_u64(),
                    ) {
                        (Some(a), Some(b)) => Some(b.saturating_sub(a) as f64 / 1e6),
                        _ => ns_ms(&q["think_ns"]),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let total: f64 = think.iter().sum();
    let counts = think.iter().any(|&t| t >= THINK_MIN_MS && t >= rtt);
    o.put(
        "app.server_think_time",
        if counts {
            Want::Must
        } else if r.kind() != "echo" && think.iter().all(|&t| t < 1.0) {
            // The echo server answers each message but its workload times none: no
            // timings is no label there, not "every think < 1 ms". (Bulk and slow-reader
            // servers answer no request at all: nothing to think about.)
            Want::MustNot
        } else {
            Want::Unknown
        },
        format!("server time per request (arrival → response) {think:.1?} ms"),
        counts.then_some(total),
    );
    // Restart after idle (tcp_cwnd_restart via tcp_slow_start_after_idle_check): cwnd in
    // a sample during a later response far below the largest before its idle gap, with
    // nothing retransmitted in between (a loss would lower it too).
    let mut restart = false;
    let mut idle_gap = false;
    // A gap > RTO still open at the last sample, with no closed socket after it: the
    // sampler stopped before the sender sent again (sweep s8-041-http, 2 requests 2.1 s
    // apart: the last sample is 2,072 ms into the gap, the second response, started back
    // at cwnd 10 from 21, is in the capture only), so whether cwnd restarted is unseen.
    let mut gap_unseen = false;
    // A restart behind a smaller window: the peer's window (snd_wnd) stayed below the
    // restarted cwnd for as long as the sender was busy again, so the flight never
    // reached cwnd and the restart changed nothing a capture shows or a user pays
    // (sweep s14-037, a slow reader reopening 7–23 KB at a time: cwnd 131 → 65 after
    // 248 ms without data behind a closed window, 94 KB of cwnd against a window of
    // at most 23.6 KB). `tcp_cwnd_test` gates on cwnd, `tcp_snd_wnd_test` on the
    // window: the smaller one is the limit.
    let mut restart_unseen = false;
    // A gap that two samples leave open: the first had not yet idled an RTO, the next
    // was sending again, and the last sends they show are more than an RTO apart (the
    // sampling period hides up to 50 ms of idle: s22-014, lastsnd 932 ms at RTO 936 ms,
    // the next sample 50 ms later sending again, cwnd 27 → 13 with nothing
    // retransmitted). A fall of cwnd below half without a retransmission after it is the
    // restart (`tcp_cwnd_restart` halves per RTO idle; `tcp_cwnd_application_limited`,
    // the other fall without loss, keeps at least half); without one it is undecided.
    let mut gap_possible = false;
    // An http response the restarted cwnd still covers whole left in one flight anyway:
    // the restart held no segment back (sweep s28-049: 234,189 B, 162 segments, after
    // cwnd 334 → 162; all 162 unacknowledged in the next sample). Its segments, when
    // every response has the same size (the workload's `response_bytes`, `resp` above).
    let covers_response = |s: &SsSocket, cw: f64| {
        http && resp > 0.0
            && s.num("mss")
                .is_some_and(|m| m > 0.0 && cw >= (resp / m).ceil())
    };
    for c in conns {
        // A congestion control with its own `cong_control` (BBR) never restarts:
        // tcp_slow_start_after_idle_check returns for it, and a cwnd that fell across an
        // idle gap is its model's (s87-076, echo over BBR: cwnd 22 → 10 as BBR left
        // STARTUP after 1.7 s of 1 KB rounds 377 ms apart). Its idle gaps are no restart.
        if c.samples.iter().any(|s| s.flags.iter().any(|f| f == "bbr")) {
            continue;
        }
        let mut max_before = 0.0f64;
        let mut retr = 0.0f64;
        let mut last_snd_gap = false;
        let mut closed = false;
        let mut last: Option<&SsSocket> = None;
        for (i, s) in c.samples.iter().enumerate() {
            // A socket past its FIN (FIN-WAIT-2 after the server's idle close) is still
            // listed, without tcp_info: no cwnd of 0 and no "sending again" (sweep s4-041,
            // server tcp_slow_start_after_idle=0, labelled a restart on every connection).
            let Some(cw) = s.num("cwnd") else {
                closed = true;
                continue;
            };
            let prev = last.replace(s);
            let rto = s.num("rto").unwrap_or(200.0);
            let r2 = s.num("bytes_retrans").unwrap_or(0.0);
            let last_send = |x: &SsSocket| x.t_ms - x.num("lastsnd").unwrap_or(0.0);
            let straddled = !last_snd_gap
                && prev.is_some_and(|p| {
                    p.num("lastsnd").is_some() && last_send(s) - last_send(p) > rto
                });
            if straddled {
                let fell = r2 == retr && max_before > 2.0 * IW as f64 && cw < max_before / 2.0;
                if fell && covers_response(s, cw) {
                    restart_unseen = true;
                } else if fell && !window_below_cwnd(&c.samples[i..], cw) {
                    restart = true;
                    idle_gap = true;
                } else {
                    gap_possible = true;
                }
            }
            if s.num("lastsnd").unwrap_or(0.0) > rto {
                last_snd_gap = true;
            } else if last_snd_gap {
                // Sending again after the gap (a gap before the close does not count).
                idle_gap = true;
                last_snd_gap = false;
                if r2 == retr && max_before > 2.0 * IW as f64 && cw < max_before / 2.0 {
                    if window_below_cwnd(&c.samples[i..], cw) || covers_response(s, cw) {
                        restart_unseen = true;
                    } else {
                        restart = true;
                    }
                }
            }
            retr = r2;
            max_before = max_before.max(cw);
        }
        gap_unseen |= last_snd_gap && !closed && last.is_some_and(|s| sent_later(r, s));
    }
    o.yes_no(
        "slow_start.restart_after_idle",
        restart,
        !idle_gap && !gap_unseen && !restart_unseen && !gap_possible,
        format!("cwnd fell after an idle gap > RTO without retransmission: {restart}; idle gap > RTO seen: {idle_gap}; samples end in a gap: {gap_unseen}; restart behind a smaller peer window or within a response it covered only: {restart_unseen}; a gap between two samples may exceed the RTO: {gap_possible}"),
    );
}

/// The peer's window (snd_wnd, bytes) stayed at or below `cwnd` segments of the sender's
/// MSS in every sample from the first one sending again (`busy[0]`) until the sender
/// idled longer than its RTO again or the samples end. False when a sample lacks either
/// field. A window of exactly `cwnd` segments lets through what cwnd does
/// (tcp_snd_wnd_test against tcp_cwnd_test): the restart changed nothing (sweep
/// s27-069, a slow reader reopening 11 segments against a restarted cwnd of 11).
fn window_below_cwnd(busy: &[&SsSocket], cwnd: f64) -> bool {
    let mut seen = false;
    for s in busy {
        if s.num("cwnd").is_none()
            || s.num("lastsnd").unwrap_or(0.0) > s.num("rto").unwrap_or(200.0)
        {
            break;
        }
        // Without unacknowledged data or a window the sample says nothing of it (ss
        // leaves snd_wnd out when it is 0: a closed window is below any cwnd).
        let Some(mss) = s.num("mss") else {
            return false;
        };
        let wnd = s.num("snd_wnd").unwrap_or(0.0);
        if wnd > cwnd * mss {
            return false;
        }
        seen = true;
    }
    seen
}

/// The time inside a one-transfer workload's transfer when the sender's socket had
/// nothing to send and nothing in flight (ms), and the transfer's span those samples
/// cover: per connection, from the first sample after its first write (a non-zero
/// tcpi_busy_time) to the last one at which the application had not yet handed over
/// everything (bytes_acked + unacked × mss below the bytes it writes), that span less
/// the growth of tcpi_busy_time over it. TCP_CHRONO_BUSY runs from the skb that makes
/// the write queue non-empty (tcp_add_write_queue_tail in include/net/tcp.h →
/// tcp_chrono_start) until the ACK that empties the retransmission queue with nothing
/// queued (tcp_clean_rtx_queue in tcp_input.c → tcp_chrono_stop, which stops it only when
/// tcp_rtx_and_write_queues_empty); tcpi_busy_time adds the rwnd- and sndbuf-limited
/// chronos (tcp_get_info_chrono_stats), so a peer's closed window or a full buffer is
/// busy time, and what is left is the application not having written yet. Summed as a
/// difference of two cumulative readings, the chrono's jiffies and the samples' timing
/// err only at the two ends. None: fewer than two such samples.
fn starved_ms(r: &Records, conns: &[Conn]) -> Option<(f64, f64)> {
    let total = r.workload["kind"]["bytes"].as_f64()?;
    conns
        .iter()
        .filter_map(|c| idle_in_transfer_ms(&c.samples, total))
        .reduce(|a, b| (a.0 + b.0, a.1 + b.1))
}

/// [`starved_ms`] of one connection's samples (time order) for an application that
/// writes `total` bytes: (time with nothing unsent or in flight, span), ms.
pub fn idle_in_transfer_ms(samples: &[&SsSocket], total: f64) -> Option<(f64, f64)> {
    let inside: Vec<&SsSocket> = samples
        .iter()
        .copied()
        .filter(|s| {
            let handed = s.num("bytes_acked").unwrap_or(0.0)
                + s.num("unacked").unwrap_or(0.0) * s.num("mss").unwrap_or(1448.0);
            s.num("busy").is_some_and(|b| b > 0.0) && handed < total
        })
        .collect();
    let (a, b) = (inside.first()?, inside.last()?);
    if inside.len() < 2 {
        return None;
    }
    let span = kernel_span_ms(a, b).unwrap_or(b.t_ms - a.t_ms);
    let busy = b.num("busy").unwrap_or(0.0) - a.num("busy").unwrap_or(0.0);
    Some(((span - busy).max(0.0), span))
}

/// The time between two samples of one socket by the kernel's own clock, when it can
/// be read: `lastrcv` is tcp_jiffies32 less icsk_ack.lrcvtime, which only data from the
/// peer moves (tcp_event_data_recv; the socket's creation sets it first), so while
/// bytes_received stands still both readings count from the same moment. The sampler's
/// own stamp is taken before `ss` runs, and on a loaded machine `ss` has started
/// 150 ms later (s12-087: 189 ms between two stamps, 36 ms by lastrcv, and busy_time
/// grew 36 ms), which read as 162 ms of a starved sender that was busy throughout.
fn kernel_span_ms(a: &SsSocket, b: &SsSocket) -> Option<f64> {
    let received = |s: &SsSocket| s.num("bytes_received").unwrap_or(0.0);
    let span = b.num("lastrcv")? - a.num("lastrcv")?;
    (received(a) == received(b) && span >= 0.0).then_some(span)
}

fn label_app_limited(r: &Records, o: &mut Out, conns: &[Conn], kind: &str) {
    // The application kept its socket waiting when the sender had sent everything it was
    // given, the peer had acknowledged it all, and the next write had not come: the
    // time TCP_CHRONO_BUSY did not run inside the transfer (`starved_ms`). (tcp_info's
    // `app_limited` flag is no such record: tcp_rate_check_app_limited marks *rate
    // samples* taken while less than an MSS is unsent with room in cwnd, the socket
    // starts marked (tcp_init_sock), and a sender whose writer sleeps on a full send
    // buffer is marked too — it was set in most samples of a clean 4 MiB control run,
    // s6-063.) Only one-transfer workloads are decided: between http responses every
    // socket waits for a request by design, and an echo round for the peer.
    if kind != "bulk" && kind != "slow_reader" {
        o.put(
            "app.limited",
            Want::Unknown,
            format!("{kind}: not decided"),
            None,
        );
        return;
    }
    // The workload's write schedule: 0 (slow_reader always) means each write call began
    // when the previous one returned, so the application always had the next bytes
    // ready: any pause of its sender with data in flight was the stack's (a writer asleep
    // in sk_stream_wait_memory until tcp_check_space frees a third of the buffer,
    // pacing, TSQ), not the application's. A paced writer's pauses with data in flight
    // are app-limited too, but no record measures them (the chrono counts them as busy):
    // such a run is decided only by its drained time.
    let interval = r.workload["kind"]["write_interval_ms"]
        .as_u64()
        .unwrap_or(0);
    let Some((starved, span)) = starved_ms(r, conns) else {
        o.put(
            "app.limited",
            Want::Unknown,
            "fewer than two tcp_info samples inside the transfer".into(),
            None,
        );
        return;
    };
    let must = starved >= LIMITED_MIN_MS && starved >= LIMITED_SHARE * span;
    // The chrono's two readings are a tick each, plus the samples' own timing.
    let none = starved <= LIMITED_NONE_SHARE * span + 2.0 * CHRONO_TICK_MS && interval == 0;
    o.put(
        "app.limited",
        if must {
            Want::Must
        } else if none {
            Want::MustNot
        } else {
            Want::Unknown
        },
        format!(
            "nothing unsent or in flight for {starved:.0} ms of the transfer's {span:.0} ms \
             (span − growth of tcpi_busy_time); writes every {interval} ms"
        ),
        must.then_some(starved),
    );
    // Drained time below the readings' resolution cannot be ruled out.
    if let Some(l) = o.0.last_mut() {
        if l.want == Want::MustNot {
            l.max_cost_ms = Some(LIMITED_NONE_SHARE * span + 2.0 * CHRONO_TICK_MS);
        }
    }
}

fn label_echo(r: &Records, o: &mut Out, rtt: f64, kind: &str) {
    // Delayed ACKs: the peer's delayed-ACK timer sent ACKs (DelayedACKs, tcp_delack_timer)
    // and the echo client waited a timer's length beyond the RTT.
    let delack = r.both(&["DelayedACKs"]);
    let waits: Vec<f64> = r.client["rounds"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .filter_map(|x| ns_ms(&x["max_recv_wait_ns"]))
                .collect()
        })
        .unwrap_or_default();
    let stalled = waits.iter().filter(|&&w| w >= rtt + DELACK_WAIT_MS).count();
    let echo = kind == "echo";
    o.yes_no(
        "delayed_ack.nagle",
        echo && delack > 0 && stalled > 0,
        delack == 0 || (echo && stalled == 0),
        format!("DelayedACKs {delack}; echo rounds waiting ≥ RTT + {DELACK_WAIT_MS} ms: {stalled} of {}", waits.len()),
    );
    o.yes_no(
        "delayed_ack.cwnd",
        false,
        delack == 0,
        format!("DelayedACKs {delack}"),
    );
}

/// What one capture can show of a run's labels: the same kernel records, minus what its
/// vantage or its snaplen cannot see. Only "must" labels are withdrawn (to unknown): a
/// finding the records rule out stays false from any vantage.
pub fn for_capture(
    labels: &[Label],
    vantage: &str,
    snaplen: u32,
    client_syn_retrans_only: bool,
    data_sender: &str,
) -> Vec<Label> {
    // The router's capture is its client-facing interface, 0 ms from the client (README
    // "sweep"): it sees what the client's end sees.
    let end = if vantage == "router" {
        "client"
    } else {
        vantage
    };
    let at_receiver = end != data_sender;
    labels
        .iter()
        .map(|l| {
            let mut l = l.clone();
            if l.want != Want::Must {
                return l;
            }
            // The router drops the client's SYN before the server: the server's capture
            // has one SYN, later; nothing in it says a SYN was lost.
            let blind_vantage = vantage == "server"
                && l.id == "handshake.syn_retransmit"
                && client_syn_retrans_only;
            // 64 bytes leave 10 bytes of TCP options (Ethernet 14 + IPv4 20 + TCP 20 = 54):
            // window scale, SACK / D-SACK blocks and timestamps are cut (issue 12 class 8:
            // unknown, not absent), so ids that rest on them cannot be required.
            // At the data's receiver the only full-RTT samples are its ACK → the sender's
            // data echoing that ACK's TSval (RFC 7323 §4.3): with the timestamps cut, the
            // queue's delay is out of its sight (its own data → ACK times are only its
            // ACK delay).
            let cut = snaplen != 0
                && snaplen <= 64
                && (matches!(
                    l.id,
                    "retransmit.spurious"
                        | "rwnd.no_window_scaling"
                        | "rwnd.limited"
                        | "rwnd.not_growing"
                ) || (l.id == "network.bufferbloat" && at_receiver));
            if blind_vantage || cut {
                l.want = Want::Unknown;
                let why = if cut {
                    "the snaplen cuts the TCP options"
                } else {
                    "the lost SYN never reached this vantage"
                };
                l.why = format!("{} (not required here: {why})", l.why);
            }
            l
        })
        .collect()
}

/// The end that sends the bulk of the data, "client" or "server" (for [`for_capture`]).
pub fn data_sender(r: &Records) -> &'static str {
    r.sender().name()
}

/// True when the only SYN retransmissions were the client's (the server's SYN/ACK was
/// never retransmitted).
pub fn client_syn_retrans_only(r: &Records) -> bool {
    r.c(Side::Server, "TCPSynRetrans") == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// s1-016's upload: 598,016 B = 413 segments of 1448 B, 10 + 20 + 40 + 80 + 160 < 413
    /// ≤ 630: six rounds; s1-010's 2,597,888 B (1,795 segments): eight.
    #[test]
    fn slow_start_rounds_double_from_ten_segments() {
        assert_eq!(slow_start_rounds(598_016.0, 1448.0), 6);
        assert_eq!(slow_start_rounds(2_597_888.0, 1448.0), 8);
        assert_eq!(slow_start_rounds(14_480.0, 1448.0), 1);
        assert_eq!(slow_start_rounds(0.0, 1448.0), 0);
    }

    fn records(kind: &str, server: Value) -> Records {
        Records {
            path: Value::Null,
            topology: Value::Null,
            sysctls: Value::Null,
            workload: json!({ "kind": { "type": kind } }),
            client: Value::Null,
            server,
            nstat_client: BTreeMap::new(),
            nstat_server: BTreeMap::new(),
            nstat_recorded: true,
            ss_client: Vec::new(),
            ss_server: Vec::new(),
        }
    }

    /// s69-099: the client's nstat after the run came back empty. Its counters read as
    /// zero: no SYN retransmission (frame 2 in the capture is one) and a data RTO from the
    /// server's SYN/ACK timer. Without both ends' counters no id is decided.
    #[test]
    fn a_run_without_both_ends_counters_decides_nothing() {
        let mut r = records("bulk", Value::Null);
        r.nstat_server.insert("TcpExtTCPTimeouts".into(), 1);
        assert_eq!(label(&r, "loss.rto").want, Want::Must);
        r.nstat_recorded = false;
        let all = label_run(&r);
        assert!(all.iter().all(|l| l.want == Want::Unknown), "{all:?}");
    }

    /// Sweep s10-099: the client's first SYN dropped and retransmitted (client
    /// TCPSynRetrans 1, TcpRetransSegs 1), the server's one loss probe sent new data
    /// (server TCPLossProbes 1, TcpRetransSegs 0): no probe retransmitted anything, so
    /// tail_loss_probe is not required. A probe at an end that retransmitted data outside
    /// its recoveries is.
    #[test]
    fn a_probe_of_new_data_beside_a_syn_retransmission_is_not_required() {
        let tlp = |r: &Records| {
            label_run(r)
                .into_iter()
                .find(|l| l.id == "loss.tail_loss_probe")
                .unwrap()
        };
        let mut r = records("loss", Value::Null);
        r.nstat_client.insert("TcpExtTCPSynRetrans".into(), 1);
        r.nstat_client.insert("TcpRetransSegs".into(), 1);
        r.nstat_server.insert("TcpExtTCPLossProbes".into(), 1);
        let l = tlp(&r);
        assert_eq!(l.want, Want::Unknown, "{}", l.why);
        r.nstat_server.insert("TcpRetransSegs".into(), 1);
        assert_eq!(tlp(&r).want, Want::Must);
        // s50-082: every retransmission was the recovery queue's (23 fast ones); the
        // probe sent new data. One more retransmission could be the probe's.
        r.nstat_server.insert("TcpRetransSegs".into(), 23);
        r.nstat_server.insert("TcpExtTCPFastRetrans".into(), 23);
        assert_eq!(tlp(&r).want, Want::Unknown);
        r.nstat_server.insert("TcpRetransSegs".into(), 24);
        assert_eq!(tlp(&r).want, Want::Must);
    }

    /// Sweep s48-019: the SYN/ACK lost, the server's timer resent it after 1 s and the
    /// client's SYN retransmission drew it a third time; no data RTO. nstat: client
    /// TCPTimeouts 1, TCPSynRetrans 1; server TCPTimeouts 1 (tcp_syn_ack_timeout),
    /// TCPSynRetrans 2 (tcp_rtx_synack). Not an RTO of data; one more timeout would be
    /// undecided (the server's SYN/ACKs may have been the timer's), two more required.
    #[test]
    fn a_synack_timer_is_no_data_rto() {
        let rto = |r: &Records| label(r, "loss.rto").want;
        let mut r = records("loss", Value::Null);
        r.nstat_client.insert("TcpExtTCPTimeouts".into(), 1);
        r.nstat_client.insert("TcpExtTCPSynRetrans".into(), 1);
        r.nstat_server.insert("TcpExtTCPTimeouts".into(), 1);
        r.nstat_server.insert("TcpExtTCPSynRetrans".into(), 2);
        assert_eq!(rto(&r), Want::Unknown);
        r.nstat_server.insert("TcpExtTCPSynRetrans".into(), 1);
        assert_eq!(rto(&r), Want::Unknown);
        r.nstat_server.insert("TcpExtTCPSynRetrans".into(), 0);
        r.nstat_server.insert("TcpExtTCPTimeouts".into(), 0);
        assert_eq!(rto(&r), Want::MustNot);
        r.nstat_server.insert("TcpExtTCPSynRetrans".into(), 2);
        r.nstat_server.insert("TcpExtTCPTimeouts".into(), 4);
        assert_eq!(rto(&r), Want::Must);
    }

    fn think_label(r: &Records) -> Want {
        label_run(r)
            .into_iter()
            .find(|l| l.id == "app.server_think_time")
            .map(|l| l.want)
            .unwrap()
    }

    /// The echo server answers messages but its workload times none: no label (the
    /// sweep had called 12 real server-side waits "false" on that vacuous "every think
    /// < 1 ms"). Timed requests that all took under 1 ms, and a bulk server that
    /// answers no request, are still "must not".
    #[test]
    fn think_time_needs_timings_to_rule_it_out() {
        assert_eq!(think_label(&records("echo", Value::Null)), Want::Unknown);
        let timed = json!({ "connections": [ { "requests": [ { "think_ns": 300 } ] } ] });
        assert_eq!(think_label(&records("http", timed)), Want::MustNot);
        assert_eq!(think_label(&records("bulk", Value::Null)), Want::MustNot);
        let slow = json!({ "connections": [ { "requests": [ { "think_ns": 2_000_000 } ] } ] });
        assert_eq!(think_label(&records("http", slow)), Want::Unknown);
        // No sleep, but the request waited 5.2 ms unread before the server read it
        // (s1-051): server time the capture shows, so not "must not".
        let waited = json!({ "connections": [ { "requests": [ {
            "think_ns": 300, "request_arrived_ns": 1_000_000, "response_started_ns": 6_200_000
        } ] } ] });
        assert_eq!(think_label(&records("http", waited)), Want::Unknown);
        let quick = json!({ "connections": [ { "requests": [ {
            "think_ns": 300, "request_arrived_ns": 1_000_000, "response_started_ns": 1_200_000
        } ] } ] });
        assert_eq!(think_label(&records("http", quick)), Want::MustNot);
    }

    /// The hystart-1ms scenario in CI (stop 29): HyStart set ssthresh 88 before the first
    /// 50 ms ss sample, so the old rule could not decide. tcp_info at accept (2147483647,
    /// TCP_INFINITE_SSTHRESH) says no ssthresh was cached, whatever HyStart did later; a
    /// cached one (24, the cached-ssthresh scenario's) with a first sample showing it is
    /// the finding.
    #[test]
    fn early_exit_label_reads_ssthresh_at_accept() {
        let at = |t: u32| json!({ "connections": [ { "ssthresh_at_accept": t } ] });
        let first = [("cwnd", "10"), ("ssthresh", "88"), ("bytes_retrans", "0")];
        let mut r = records("http", at(TCP_INFINITE_SSTHRESH));
        r.ss_server = vec![sample(1.0, "ESTAB", &first)];
        r.nstat_server
            .insert("TcpExtTCPHystartTrainDetect".into(), 1);
        let l = label(&r, "slow_start.early_exit");
        assert_eq!(l.want, Want::MustNot, "{}", l.why);
        r.server = at(24);
        let l = label(&r, "slow_start.early_exit");
        assert_eq!(l.want, Want::Must, "{}", l.why);
        // Without the record the old rule stands: HyStart leaves it undecided.
        r.server = Value::Null;
        let l = label(&r, "slow_start.early_exit");
        assert_eq!(l.want, Want::Unknown, "{}", l.why);
    }

    /// One `ss -tinmO` sample of the server's socket to the client 10.81.1.2:40000.
    fn sample(unix_s: f64, state: &str, fields: &[(&str, &str)]) -> SsSocket {
        SsSocket {
            t_ms: unix_s * 1e3,
            unix_s,
            state: state.into(),
            local: format!("10.81.2.2:{PORT}"),
            peer: "10.81.1.2:40000".into(),
            fields: fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            flags: Vec::new(),
        }
    }

    fn label(r: &Records, id: &str) -> Label {
        label_run(r).into_iter().find(|l| l.id == id).unwrap()
    }

    /// The three shapes the sweep's old rule ("w ≥ 90 % of tb with unacked < cwnd")
    /// called send-buffer-limited while tcp_info's chrono said 0 ms, and the kernel's
    /// tcp_cwnd_validate agreed: s3-000 (BBR with 140 KB not sent: the write queue was
    /// not empty), s3-011 (slow start, cwnd 151 < 2 × 82 unacked: cwnd-limited to
    /// tcp_is_cwnd_limited), s1-001 (the whole response in flight: the writer had
    /// returned 61 µs after it started). Then one that meets every condition.
    #[test]
    fn sndbuf_label_follows_tcp_cwnd_validate() {
        let server = json!({ "epoch_ns": 0, "connections": [ {
            "peer": "10.81.1.2:40000", "bytes_sent": 1_000_000,
            "requests": [ { "response_started_ns": 1_000_000_000u64,
                            "response_written_ns": 1_000_061_000u64 } ] } ] });
        let base = [
            ("mss", "1448"),
            ("snd_wnd", "1000000"),
            ("bytes_acked", "100000"),
            ("busy", "200ms"),
        ];
        let with = |extra: &[(&'static str, &'static str)]| {
            let mut f: Vec<(&str, &str)> = base.to_vec();
            f.extend_from_slice(extra);
            f
        };
        let unsent = with(&[
            ("cwnd", "86"),
            ("unacked", "70"),
            ("ssthresh", "50"),
            ("notsent", "323121"),
            ("skmem", "(r0,rb131072,t0,tb490752,f992,w457760,o0,bl0,d0)"),
        ]);
        let slow_start = with(&[
            ("cwnd", "151"),
            ("unacked", "82"),
            ("skmem", "(r0,rb131072,t0,tb110592,f2355,w132813,o0,bl0,d0)"),
        ]);
        let starved = with(&[
            ("cwnd", "151"),
            ("unacked", "40"),
            ("ssthresh", "100"),
            ("skmem", "(r0,rb131072,t0,tb110592,f2355,w108000,o0,bl0,d0)"),
        ]);
        let mut r = records("bulk", server.clone());
        let s = |f: &[(&str, &str)]| sample(1.0, "ESTAB", f);
        r.ss_server = vec![s(&unsent), s(&slow_start), s(&unsent), s(&slow_start)];
        let l = label(&r, "sndbuf.limited");
        assert_eq!(l.want, Want::MustNot, "{}", l.why);
        // All four starved: required.
        r.ss_server = vec![s(&starved), s(&starved), s(&starved), s(&starved)];
        assert_eq!(label(&r, "sndbuf.limited").want, Want::Must);
        // The same samples once the application had handed over everything it wrote.
        let done = json!({ "epoch_ns": 0, "connections": [ {
            "peer": "10.81.1.2:40000", "bytes_sent": 150_000 } ] });
        let mut r2 = records("bulk", done);
        r2.ss_server = r.ss_server.clone();
        assert_eq!(label(&r2, "sndbuf.limited").want, Want::MustNot);
        // http: starved only while a response's write was in progress (1.000000 s to
        // 1.000061 s after the epoch).
        let mut h = records("http", server);
        h.ss_server = vec![sample(0.5, "ESTAB", &starved); 4];
        assert_eq!(label(&h, "sndbuf.limited").want, Want::MustNot);
        h.ss_server = vec![sample(1.00003, "ESTAB", &starved); 4];
        assert_eq!(label(&h, "sndbuf.limited").want, Want::Must);
    }

    /// s22-007 (4 MiB at 1 ms, autotuning on): the client's only sample came half-way,
    /// its sk_rcvbuf already grown to 3,431,088 from tcp_rmem's 131,072. One flat sample
    /// does not show a buffer that never grew; the same sample at the start's size does.
    #[test]
    fn a_receive_buffer_grown_before_its_first_sample_grew() {
        let sender = [
            ("mss", "1448"),
            ("minrtt", "1.4"),
            ("bytes_sent", "4194304"),
            ("busy", "40ms"),
            ("rwnd_limited", "24ms(60.0%)"),
            ("wscale", "10,10"),
            ("unacked", "100"),
        ];
        let client = |rb: &'static str| {
            let mut c = sample(
                1.0,
                "ESTAB",
                &[("wscale", "10,10"), ("skmem", rb), ("rcv_space", "375032")],
            );
            c.local = "10.81.1.2:40000".into();
            c.peer = format!("10.81.2.2:{PORT}");
            c
        };
        let mut r = records("bulk", Value::Null);
        r.sysctls = json!({ "client": { "net.ipv4.tcp_rmem": "4096 131072 33554432" } });
        r.ss_server = vec![sample(1.0, "ESTAB", &sender)];
        r.ss_client = vec![client("(r0,rb3431088,t0,tb46080,f0,w0,o0,bl0,d0)")];
        let l = label(&r, "rwnd.not_growing");
        assert_eq!(l.want, Want::MustNot, "{}", l.why);
        r.ss_client = vec![client("(r0,rb131072,t0,tb46080,f0,w0,o0,bl0,d0)")];
        let l = label(&r, "rwnd.not_growing");
        assert_eq!(l.want, Want::Must, "{}", l.why);
        // Without the sysctls the start is unknown: the flat sample is taken at its word.
        r.sysctls = Value::Null;
        r.ss_client = vec![client("(r0,rb3431088,t0,tb46080,f0,w0,o0,bl0,d0)")];
        assert_eq!(label(&r, "rwnd.not_growing").want, Want::Must);
    }

    /// s68-048 (SO_RCVBUF 28,672 at the client, window scaling off there): rcv_ssthresh
    /// reached 34,845 at most, under the unscaled clamp of 65,535, and the buffer stayed
    /// at 57,344: the buffer, not the missing scale, held the window (34,752 B on the
    /// wire). At the clamp the missing scale is what held it.
    #[test]
    fn without_window_scaling_the_cap_binds_only_at_the_clamp() {
        let sender = [
            ("mss", "1448"),
            ("minrtt", "19.3"),
            ("bytes_sent", "2136064"),
            ("busy", "1308ms"),
            ("rwnd_limited", "1284ms(98.2%)"),
            ("unacked", "24"),
        ];
        let client = |ssthresh: &str| {
            let mut c = sample(
                1.0,
                "ESTAB",
                &[
                    ("skmem", "(r0,rb57344,t0,tb46080,f0,w0,o0,bl0,d0)"),
                    ("rcv_space", "50680"),
                    ("rcv_ssthresh", ssthresh),
                ],
            );
            c.local = "10.81.1.2:40000".into();
            c.peer = format!("10.81.2.2:{PORT}");
            c
        };
        let mut r = records("bulk", Value::Null);
        r.ss_server = vec![sample(1.0, "ESTAB", &sender)];
        r.ss_client = vec![client("34845")];
        let l = label(&r, "rwnd.no_window_scaling");
        assert_eq!(l.want, Want::MustNot, "{}", l.why);
        let l = label(&r, "rwnd.not_growing");
        assert_eq!(l.want, Want::Must, "{}", l.why);
        r.ss_client = vec![client("65535")];
        assert_eq!(label(&r, "rwnd.no_window_scaling").want, Want::Must);
        assert_eq!(label(&r, "rwnd.not_growing").want, Want::MustNot);
    }

    /// s37-080, s40-048 (transfers of 24 ms, SO_RCVBUF set at the client): no sample of
    /// the sender caught the transfer, so its chronos read 0 of 0 ms busy. That rules out
    /// neither the window's limit nor its buffer's growth: not decided, as rwnd.limited.
    #[test]
    fn an_unsampled_sender_decides_nothing_of_the_window() {
        let r = records("bulk", Value::Null);
        assert_eq!(label(&r, "rwnd.limited").want, Want::Unknown);
        let l = label(&r, "rwnd.not_growing");
        assert_eq!(l.want, Want::Unknown, "{}", l.why);
    }

    /// s10-064 (2,809,856 B behind a 5 Mbit/s bottleneck, 18 ms path, the client's
    /// window five times the bottleneck's BDP): the server's last sample read
    /// rwnd_limited 4,528 ms of busy 4,716. Slow start's rounds alone leave 4.6 s to the
    /// window; but 5 Mbit/s carries 597.75 payload bytes a ms in 1,514-byte frames of
    /// 1,448, so the bytes needed 4,700.7 ms whatever the window: 15 ms beyond, below
    /// LIMITED_MIN_MS. The chrono ran while the link was busy: not decided.
    #[test]
    fn a_window_above_the_bottlenecks_bdp_cost_no_more_than_the_rate_allows() {
        let fields = [
            ("mss", "1448"),
            ("pmtu", "1500"),
            ("minrtt", "18.353"),
            ("bytes_sent", "2809856"),
            ("busy", "4716ms"),
            ("rwnd_limited", "4528ms(96.0%)"),
            ("unacked", "3"),
        ];
        assert!((payload_per_ms(5.0, 1448.0, Some(1500.0)) - 597.754).abs() < 1e-3);
        let mut r = records("bulk", Value::Null);
        r.ss_server = vec![sample(1.0, "FIN-WAIT-1", &fields)];
        let l = label(&r, "rwnd.limited");
        assert_eq!(
            (l.want, l.truth_cost_ms),
            (Want::Must, Some(4528.0)),
            "{}",
            l.why
        );
        r.topology = json!({ "rate_mbit": 5, "queue_packets": 925 });
        let l = label(&r, "rwnd.limited");
        assert_eq!(
            (l.want, l.truth_cost_ms),
            (Want::Unknown, None),
            "{}",
            l.why
        );
        assert!(
            l.why
                .contains("beyond slow start's rounds and the bottleneck's rate 15 ms"),
            "{}",
            l.why
        );
        // At 10 Mbit/s the bytes need 2,350.3 ms: the window cost the busy time beyond,
        // 2,365.7 ms of its 4,528.
        r.topology = json!({ "rate_mbit": 10, "queue_packets": 925 });
        let l = label(&r, "rwnd.limited");
        assert_eq!(l.want, Want::Must, "{}", l.why);
        assert!(
            (l.truth_cost_ms.unwrap() - 2365.66).abs() < 0.01,
            "{}",
            l.why
        );
    }

    /// s20-016's shape: the chrono (300 ms) is the least the send buffer cost; the most
    /// is busy beyond slow start's rounds less the receiver window's chrono. 1 MB at mss
    /// 1,448 is 691 segments: rounds of 10, 20, …, 320 carry 630, so 7 rounds of 100 ms;
    /// 2,000 − 700 − 100 = 1,200 ms.
    #[test]
    fn sndbuf_cost_reaches_up_to_busy_beyond_slow_start_less_the_window() {
        let fields = [
            ("mss", "1448"),
            ("minrtt", "100"),
            ("bytes_sent", "1000000"),
            ("busy", "2000ms"),
            ("sndbuf_limited", "300ms(15.0%)"),
            ("rwnd_limited", "100ms(5.0%)"),
            ("cwnd", "93"),
            ("unacked", "20"),
        ];
        let mut r = records("bulk", Value::Null);
        r.ss_server = vec![sample(1.0, "ESTAB", &fields)];
        let l = label(&r, "sndbuf.limited");
        assert_eq!(l.want, Want::Must, "{}", l.why);
        assert_eq!(
            (l.truth_cost_ms, l.truth_cost_upto_ms),
            (Some(300.0), Some(1200.0))
        );
    }

    /// Sweep s6-090 (reorder, 5 ms RTT, 1.49 MB in 64 ms): the server's socket was
    /// sampled once, 21 ms into the transfer (busy 24 ms, rwnd_limited 0, 54 segments
    /// unacked, 82 KB not sent); the window filled after it. "Must not" still, but a
    /// finding up to one sampling period (plus 1 % of busy and a chrono tick) agrees; a
    /// last sample with nothing queued leaves only the tick.
    #[test]
    fn rwnd_chrono_read_before_the_end_cannot_rule_out_the_rest() {
        let mut r = records("bulk", Value::Null);
        let fields = [
            ("busy", "24ms"),
            ("mss", "1448"),
            ("minrtt", "5"),
            ("bytes_sent", "127424"),
            ("unacked", "54"),
            ("notsent", "83984"),
        ];
        r.ss_server = vec![sample(1.0, "ESTAB", &fields)];
        let l = label(&r, "rwnd.limited");
        assert_eq!(l.want, Want::MustNot, "{}", l.why);
        assert_eq!(l.max_cost_ms, Some(0.24 + 4.0 + 50.0));
        r.ss_server = vec![sample(1.0, "ESTAB", &fields[..4])];
        assert_eq!(label(&r, "rwnd.limited").max_cost_ms, Some(0.24 + 4.0));
        // Shut (FIN-WAIT-1) with data in flight but none unsent: no more can be held.
        r.ss_server = vec![sample(1.0, "FIN-WAIT-1", &fields[..5])];
        assert_eq!(label(&r, "rwnd.limited").max_cost_ms, Some(0.24 + 4.0));
    }

    /// Sweep s12-029 (BBR, 101 ms RTT, a slow reader's 44,888-byte window): 31 segments
    /// unacked, the whole window, in every sample for 4 s, yet rwnd_limited 1,656 ms of
    /// busy 4,580: pacing gaps stop the chrono (tcp_pacing_check comes before
    /// tcp_snd_wnd_test in tcp_write_xmit). The chrono's cost is then a lower bound, and
    /// busy beyond slow start's 7 rounds (1,188 segments from 10) the upper one. A
    /// CUBIC sender's chrono is exact, but for a connection sampled while it still had
    /// data to send: one sampling period more.
    #[test]
    fn rwnd_cost_of_a_paced_sender_is_a_range() {
        let fields = [
            ("busy", "4580ms"),
            ("rwnd_limited", "1656ms"),
            ("mss", "1448"),
            ("minrtt", "101"),
            ("bytes_sent", "1720320"),
            ("notsent", "52128"),
        ];
        let mut r = records("slow_reader", Value::Null);
        let mut s = sample(1.0, "ESTAB", &fields[..5]);
        s.flags.push("bbr".into());
        r.ss_server = vec![s];
        let l = label(&r, "rwnd.limited");
        assert_eq!(l.want, Want::Must, "{}", l.why);
        assert_eq!(l.truth_cost_ms, Some(1656.0));
        assert_eq!(l.truth_cost_upto_ms, Some(4580.0 - 7.0 * 101.0));
        r.ss_server = vec![sample(1.0, "ESTAB", &fields[..5])];
        let l = label(&r, "rwnd.limited");
        assert_eq!(
            (l.truth_cost_ms, l.truth_cost_upto_ms),
            (Some(1656.0), None)
        );
        r.ss_server = vec![sample(1.0, "ESTAB", &fields)];
        assert_eq!(
            label(&r, "rwnd.limited").truth_cost_upto_ms,
            Some(1656.0 + 50.0)
        );
    }

    /// Sweep s13-079 (CUBIC, 124 ms RTT, 4 MiB): the server's last sample, FIN-WAIT-1
    /// with 635 segments still in flight, read busy 1,144 ms and rwnd_limited 136 ms;
    /// slow start's 9 rounds take 1,121.4 ms, so 22.6 ms beyond them as far as sampled.
    /// Shut, the sender could add no window-limited time, but it stayed busy until the
    /// final ACK, up to one sampling period later: up to 72.6 ms (the detector's 49–56 ms
    /// from the wire was called a 2.5-fold overestimate). Nothing in flight: no more.
    #[test]
    fn rwnd_cost_counts_the_busy_time_after_the_last_sample() {
        let fields = [
            ("busy", "1144ms"),
            ("rwnd_limited", "136ms(11.9%)"),
            ("mss", "1448"),
            ("minrtt", "124.6"),
            ("bytes_sent", "4194304"),
            ("unacked", "635"),
        ];
        let mut r = records("bulk", Value::Null);
        r.ss_server = vec![sample(1.0, "FIN-WAIT-1", &fields)];
        let l = label(&r, "rwnd.limited");
        assert_eq!(l.want, Want::Must, "{}", l.why);
        let (lo, hi) = (l.truth_cost_ms.unwrap(), l.truth_cost_upto_ms.unwrap());
        assert!(
            (lo - 22.6).abs() < 1e-9 && (hi - 72.6).abs() < 1e-9,
            "{lo} {hi}"
        );
        r.ss_server = vec![sample(1.0, "FIN-WAIT-1", &fields[..5])];
        assert_eq!(label(&r, "rwnd.limited").truth_cost_upto_ms, None);
    }

    /// Sweep s3-013 (slow reader, 1 ms RTT, no rate limit on the path): the sender's
    /// srtt stood at 9–32 ms over a 1.176 ms minimum with ≤ 34 packets in flight, the
    /// receiver's late ACKs of a small window, which held the sender (rwnd_limited). No
    /// bottleneck and the window holding the sender: no queue, "must not". The
    /// same srtt over a 6 Mbit/s, 53-packet FIFO (s3-008) is a standing queue; a single
    /// sample above is a burst, not decided.
    #[test]
    fn bufferbloat_label_needs_a_bottleneck_and_a_standing_queue() {
        let rtts = [1.456, 9.134, 12.368, 16.052, 18.419, 20.484, 32.053, 32.433];
        let samples = |rtts: &[f64]| -> Vec<SsSocket> {
            rtts.iter()
                .enumerate()
                .map(|(i, rtt)| {
                    let rtt = format!("{rtt}/1.0");
                    let mut s = sample(
                        1.0 + 0.05 * i as f64,
                        "ESTAB",
                        &[("minrtt", "1.176"), ("unacked", "20"), ("busy", "100ms")],
                    );
                    s.fields.insert("rtt".into(), rtt);
                    s
                })
                .collect()
        };
        let mut r = records("slow_reader", Value::Null);
        r.topology = json!({ "rate_mbit": null, "queue_packets": null });
        r.ss_server = samples(&rtts);
        // The slow reader's small window held the sender (its rwnd_limited chrono).
        for s in &mut r.ss_server {
            s.fields.insert("rwnd_limited".into(), "90ms".into());
        }
        let l = label(&r, "network.bufferbloat");
        assert_eq!(l.want, Want::MustNot, "{}", l.why);
        let mut b = records("bulk", Value::Null);
        b.topology = json!({ "rate_mbit": 6, "queue_packets": 53 });
        b.ss_server = samples(&[1.2, 40.0, 80.0, 100.0, 107.0, 100.0]);
        let l = label(&b, "network.bufferbloat");
        assert_eq!(l.want, Want::Must, "{}", l.why);
        assert!(l.why.contains("standing 200 ms"), "{}", l.why);
        b.ss_server = samples(&[1.2, 1.3, 107.0, 1.5, 1.3]);
        assert_eq!(label(&b, "network.bufferbloat").want, Want::Unknown);
        // An srtt that rose with no bottleneck configured (the emulator's own forwarding
        // can queue, s12-090) is not ruled out, unless the receiver's window held the
        // sender.
        let mut q = records("reorder", Value::Null);
        q.topology = json!({ "rate_mbit": null, "queue_packets": null });
        q.ss_server = samples(&[1.2, 40.0, 80.0, 100.0, 107.0, 100.0]);
        assert_eq!(label(&q, "network.bufferbloat").want, Want::Unknown);
        for s in &mut q.ss_server {
            s.fields.insert("rwnd_limited".into(), "80ms".into());
        }
        assert_eq!(label(&q, "network.bufferbloat").want, Want::MustNot);
    }

    /// s22-014 (Reno, 377 ms RTT after a step): lastsnd 932 ms at an RTO of 936 ms, the
    /// next sample 50 ms later sending again: its last send is 966 ms after the one
    /// before the gap, and cwnd fell 27 → 13 with nothing retransmitted: the restart.
    /// The same samples with cwnd kept are undecided, not "no gap".
    #[test]
    fn restart_label_sees_a_gap_two_samples_straddle() {
        let s = |t: f64, cwnd: &'static str, lastsnd: &'static str| {
            sample(
                t,
                "ESTAB",
                &[("cwnd", cwnd), ("rto", "936"), ("lastsnd", lastsnd)],
            )
        };
        let mut r = records("http", Value::Null);
        // The restart; cwnd kept (undecided); sending all along, last sends 50 ms apart.
        let cases = [
            (["880", "932", "16"], "13", Want::Must),
            (["880", "932", "16"], "27", Want::Unknown),
            (["10", "12", "16"], "27", Want::MustNot),
        ];
        for (lastsnd, after, want) in cases {
            r.ss_server = vec![
                s(1.568, "27", lastsnd[0]),
                s(1.618, "27", lastsnd[1]),
                s(1.668, after, lastsnd[2]),
            ];
            let l = label(&r, "slow_start.restart_after_idle");
            assert_eq!(l.want, want, "{}", l.why);
        }
    }

    /// s87-076 (echo over BBR): cwnd 22 before an idle gap over the RTO and 10 after it,
    /// nothing retransmitted: BBR's own cwnd, never tcp_cwnd_restart (its cong_control
    /// hook makes tcp_slow_start_after_idle_check return). Not a restart; the same
    /// samples without the flag are one.
    #[test]
    fn a_bbr_senders_idle_is_no_restart() {
        let s = |t: f64, cwnd: &str, lastsnd: &str, bbr: bool| {
            let mut x = sample(
                t,
                "ESTAB",
                &[("cwnd", cwnd), ("rto", "216"), ("lastsnd", lastsnd)],
            );
            if bbr {
                x.flags.push("bbr".into());
            }
            x
        };
        let mut r = records("echo", Value::Null);
        for (bbr, want) in [(true, Want::MustNot), (false, Want::Must)] {
            r.ss_server = vec![
                s(1.618, "22", "28", bbr),
                s(1.768, "22", "300", bbr),
                s(1.918, "10", "4", bbr),
            ];
            let l = label(&r, "slow_start.restart_after_idle");
            assert_eq!(l.want, want, "{}", l.why);
        }
    }

    /// Sweep s4-041 (server closes after 355 ms idle, tcp_slow_start_after_idle=0): cwnd
    /// 20, 80, 99, then lastsnd 368 ms > RTO 228 ms before the FIN, then FIN-WAIT-2
    /// samples without tcp_info. Those are no restart and no idle gap; a sample with
    /// cwnd 40 sending again after the gap is both.
    #[test]
    fn restart_label_ignores_samples_without_tcp_info() {
        let s = |t: f64, state: &str, f: &[(&str, &str)]| sample(t, state, f);
        let mut v = vec![
            s(
                1.00,
                "ESTAB",
                &[("cwnd", "20"), ("rto", "228"), ("lastsnd", "16")],
            ),
            s(
                1.05,
                "ESTAB",
                &[("cwnd", "99"), ("rto", "228"), ("lastsnd", "68")],
            ),
            s(
                1.40,
                "FIN-WAIT-1",
                &[("cwnd", "99"), ("rto", "228"), ("lastsnd", "368")],
            ),
            s(1.50, "FIN-WAIT-2", &[]),
            s(1.55, "FIN-WAIT-2", &[]),
        ];
        let mut r = records("http", Value::Null);
        r.ss_server = v.clone();
        let l = label(&r, "slow_start.restart_after_idle");
        assert_eq!(l.want, Want::MustNot, "{}", l.why);
        v[3] = s(
            1.50,
            "ESTAB",
            &[("cwnd", "40"), ("rto", "228"), ("lastsnd", "4")],
        );
        r.ss_server = v;
        let l = label(&r, "slow_start.restart_after_idle");
        assert_eq!(l.want, Want::Must, "{}", l.why);
    }

    /// s15-041: the server's idle timer (111 ms) closed each connection 118 ms after
    /// its last write returned, and the first sample after the close (FIN-WAIT-1) still
    /// had 28,696 B unsent: the FIN rode on the response's last segment, so no capture
    /// shows an idle close. Undecided, not required; the same close with nothing unsent
    /// is required.
    #[test]
    fn an_idle_close_behind_unsent_data_is_undecided() {
        let server = json!({ "epoch_ns": 0, "connections": [ {
            "peer": "10.81.1.2:40000", "closed_ns": 1_000_000_000u64,
            "close": { "reason": "idle_timeout", "idle_ns": 118_000_000u64 } } ] });
        let mut r = records("http", server);
        r.client = json!({ "connections": [ {}, {} ], "requests": [
            { "connected_ns": 1u64 }, { "connected_ns": 2u64, "reconnected": true } ] });
        let after = |notsent: &str| {
            vec![
                sample(0.95, "ESTAB", &[("notsent", "37383"), ("unacked", "10")]),
                sample(
                    1.004,
                    "FIN-WAIT-1",
                    &[("notsent", notsent), ("unacked", "6")],
                ),
            ]
        };
        r.ss_server = after("28696");
        let l = label(&r, "connection.idle_close");
        assert_eq!(l.want, Want::Unknown, "{}", l.why);
        assert!(l.why.contains("1 more with the FIN behind"), "{}", l.why);
        r.ss_server = after("0");
        let l = label(&r, "connection.idle_close");
        assert_eq!(l.want, Want::Must, "{}", l.why);
    }

    /// s14-037, a slow reader at 2 ms: cwnd 131 → 65 after 248 ms without data (RTO
    /// 224 ms) behind a closed window, which then reopened at most 23.6 KB at a time:
    /// 65 segments of cwnd (94 KB) never limited a flight, so the restart is neither
    /// required nor ruled out. The same restart with the window a segment above cwnd is
    /// required.
    #[test]
    fn restart_label_unknown_when_the_window_stayed_below_the_restarted_cwnd() {
        let s = |t: f64, cwnd: &str, lastsnd: &str, wnd: Option<&str>| {
            let mut f = vec![
                ("cwnd", cwnd),
                ("rto", "224"),
                ("lastsnd", lastsnd),
                ("mss", "1448"),
            ];
            if let Some(w) = wnd {
                f.push(("snd_wnd", w));
            }
            sample(t, "FIN-WAIT-1", &f)
        };
        let mut r = records("slow_reader", Value::Null);
        r.ss_server = vec![
            s(0.983, "131", "4", Some("22728")),
            s(1.233, "131", "248", None),
            s(1.283, "65", "48", Some("532")),
            s(1.583, "65", "12", Some("23564")),
            s(1.683, "65", "64", None),
            // idle again: what follows is another period
            s(1.783, "65", "250", Some("200000")),
        ];
        let l = label(&r, "slow_start.restart_after_idle");
        assert_eq!(l.want, Want::Unknown, "{}", l.why);
        assert!(l.why.contains("only: true"), "{}", l.why);
        // A window of exactly cwnd (65 × 1448 = 94,120 B) lets through what cwnd does
        // (s27-069: 11 segments against 11): still not required.
        r.ss_server[3] = s(1.583, "65", "12", Some("94120"));
        let l = label(&r, "slow_start.restart_after_idle");
        assert_eq!(l.want, Want::Unknown, "{}", l.why);
        r.ss_server[3] = s(1.583, "65", "12", Some("95568"));
        let l = label(&r, "slow_start.restart_after_idle");
        assert_eq!(l.want, Want::Must, "{}", l.why);
    }

    /// s28-049-http: responses of 234,189 B (162 segments of 1,448) every 254 ms at 11 ms;
    /// after a gap of just over the RTO (lastsnd 204 ms at RTO 216, sending again 50 ms
    /// later) cwnd fell to 162, below half its largest (334), with nothing retransmitted, and all 162 segments were
    /// in flight at once: the restart held nothing back, so it is not required. A
    /// response of 163 segments would have waited for one: required.
    #[test]
    fn restart_label_unknown_when_the_restarted_cwnd_covers_the_response() {
        let s = |t: f64, cwnd: &str, lastsnd: &str| {
            sample(
                t,
                "ESTAB",
                &[
                    ("cwnd", cwnd),
                    ("rto", "216"),
                    ("lastsnd", lastsnd),
                    ("mss", "1448"),
                    ("snd_wnd", "1112064"),
                ],
            )
        };
        let mut r = records("http", Value::Null);
        r.workload = json!({ "kind": { "type": "http", "response_bytes": 234189 } });
        r.ss_server = vec![
            s(0.585, "334", "208"),
            s(0.835, "324", "204"),
            s(0.885, "162", "4"),
        ];
        let l = label(&r, "slow_start.restart_after_idle");
        assert_eq!(l.want, Want::Unknown, "{}", l.why);
        r.workload["kind"]["response_bytes"] = json!(234189 + 1448);
        let l = label(&r, "slow_start.restart_after_idle");
        assert_eq!(l.want, Want::Must, "{}", l.why);
    }

    /// s8-041-http: two responses 2.1 s apart; the server's last sample is 2,072 ms into
    /// the idle gap (RTO 204 ms) and the second response, sent after it, was never
    /// sampled: unseen, not "must not" (the old label called the capture's restart from
    /// cwnd 21 to 10 false). With no response after the last sample it stays "must not".
    #[test]
    fn restart_label_unseen_when_the_samples_end_in_a_gap_before_more_data() {
        let s = |t: f64, lastsnd: &str| {
            sample(
                t,
                "ESTAB",
                &[("cwnd", "21"), ("rto", "204"), ("lastsnd", lastsnd)],
            )
        };
        let timings = |second: f64| {
            json!({ "epoch_ns": 0, "connections": [ { "peer": "10.81.1.2:40000", "requests": [
                { "response_started_ns": 1.0e9 }, { "response_started_ns": second }
            ] } ] })
        };
        let mut r = records("http", timings(3.09e9));
        r.ss_server = vec![s(1.02, "20"), s(1.5, "500"), s(3.07, "2072")];
        let l = label(&r, "slow_start.restart_after_idle");
        assert_eq!(l.want, Want::Unknown, "{}", l.why);
        r.server = timings(1.01e9);
        let l = label(&r, "slow_start.restart_after_idle");
        assert_eq!(l.want, Want::MustNot, "{}", l.why);
    }

    /// app.limited from tcp_info's busy chrono, not its `app_limited` flag. A paced writer
    /// (s1-032's shape: 5,120 B every 53 ms at 2 ms RTT) whose socket was busy 40 of
    /// the 200 ms between its first and last sample inside the transfer: 160 ms with
    /// nothing unsent or in flight, required and priced. s6-063's shape: a 4 MiB
    /// back-to-back writer with `app_limited` set in every sample and the chrono running
    /// the whole time: ruled out (within the readings' 1 % + 2 ticks). The same chrono
    /// for a paced writer: its pauses with data in flight are busy time, so not decided.
    /// The sample after the last byte was acknowledged is outside the transfer.
    #[test]
    fn app_limited_label_is_time_outside_the_busy_chrono() {
        let run = |interval: u64, busy: [&str; 6]| {
            let acked = ["10001", "30001", "50001", "70001", "90001", "102402"];
            let mut r = records("bulk", Value::Null);
            r.workload = json!({ "kind": {
                "type": "bulk", "bytes": 102400, "direction": "download",
                "write_size": 5120, "write_interval_ms": interval,
            } });
            r.ss_server = (0..6)
                .map(|i| {
                    let mut x = sample(
                        1.0 + 0.05 * i as f64,
                        "ESTAB",
                        &[
                            ("busy", busy[i]),
                            ("bytes_acked", acked[i]),
                            ("unacked", "0"),
                            ("mss", "1448"),
                        ],
                    );
                    x.flags = vec!["cubic".into(), "app_limited".into()];
                    x
                })
                .collect();
            label(&r, "app.limited")
        };
        let drained = run(53, ["4ms", "14ms", "24ms", "34ms", "44ms", "46ms"]);
        assert_eq!(drained.want, Want::Must, "{}", drained.why);
        assert!((drained.truth_cost_ms.unwrap() - 160.0).abs() < 1e-6);
        let busy = ["40ms", "90ms", "140ms", "190ms", "238ms", "240ms"];
        let control = run(0, busy);
        assert_eq!(control.want, Want::MustNot, "{}", control.why);
        assert_eq!(control.max_cost_ms, Some(0.01 * 200.0 + 8.0));
        assert_eq!(run(25, busy).want, Want::Unknown);
        assert_eq!(
            label(&records("http", Value::Null), "app.limited").want,
            Want::Unknown
        );
    }

    /// s12-087's server samples: the sampler's stamps put 189 ms between the first two
    /// (`ss` started 150 ms late on a loaded machine), tcp_info's lastrcv 36 ms, and
    /// busy_time grew 36 ms. With the peer silent, lastrcv is the kernel's clock: the
    /// sender was busy throughout, not starved for 153 ms. Once the peer sends data,
    /// lastrcv restarts and the stamps are all there is.
    #[test]
    fn starved_time_is_read_on_the_kernels_clock() {
        let at = |t_ms: f64, busy: &str, lastrcv: &str, received: &str| {
            let mut s = sample(
                0.0,
                "ESTAB",
                &[
                    ("busy", busy),
                    ("lastrcv", lastrcv),
                    ("bytes_received", received),
                    ("bytes_acked", "101360"),
                    ("unacked", "73"),
                    ("mss", "1448"),
                ],
            );
            s.t_ms = t_ms;
            s
        };
        let (a, b) = (at(547.3, "28ms", "28", "0"), at(736.7, "64ms", "64", "0"));
        assert_eq!(idle_in_transfer_ms(&[&a, &b], 4194304.0), Some((0.0, 36.0)));
        let talked = at(736.7, "64ms", "4", "100");
        let (starved, span) = idle_in_transfer_ms(&[&a, &talked], 4194304.0).unwrap();
        assert!((span - 189.4).abs() < 1e-9 && (starved - 153.4).abs() < 1e-9);
    }

    /// At snaplen 64 the receiver (and the router, at the client's end of a download)
    /// cannot see the queue: its RTT needs the timestamps the snaplen cut. The sender can.
    #[test]
    fn bufferbloat_needs_timestamps_at_the_receiver() {
        let must = [Label {
            id: "network.bufferbloat",
            want: Want::Must,
            why: String::new(),
            truth_cost_ms: None,
            max_cost_ms: None,
            truth_cost_upto_ms: None,
        }];
        let want =
            |v: &str, snap: u32, sender: &str| for_capture(&must, v, snap, false, sender)[0].want;
        assert_eq!(want("client", 64, "server"), Want::Unknown);
        assert_eq!(want("router", 64, "server"), Want::Unknown);
        assert_eq!(want("server", 64, "server"), Want::Must);
        assert_eq!(want("client", 96, "server"), Want::Must);
        assert_eq!(want("router", 64, "client"), Want::Must);
        assert_eq!(want("server", 64, "client"), Want::Unknown);
    }
}
