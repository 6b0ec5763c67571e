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
/// One tick of tcp_info's chrono times (busy, rwnd_limited): they count
/// `tcp_jiffies32`, and the lab's kernel has CONFIG_HZ=250 (every busy time of the
/// session-4 sweeps is a multiple of 4 ms).
const CHRONO_TICK_MS: f64 = 4.0;
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
}

/// The records of one run, read from its directory (`DIR/NAME/truth/…`).
pub struct Records {
    pub path: Value,
    pub workload: Value,
    pub client: Value,
    pub server: Value,
    pub nstat_client: BTreeMap<String, u64>,
    pub nstat_server: BTreeMap<String, u64>,
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
        let delta = |side: &str| {
            truth::nstat_delta(
                &read_nstat(&t.join(format!("nstat-{side}-before.json"))),
                &read_nstat(&t.join(format!("nstat-{side}-after.json"))),
            )
        };
        Records {
            path: read_json(&t.join("path.json")),
            workload: read_json(&t.join("workload.json")),
            client: read_json(&t.join("client-timings.json")),
            server: read_json(&t.join("server-timings.json")),
            nstat_client: delta("client"),
            nstat_server: delta("server"),
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
                Conn { samples: v }
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
    let limited = c.max("rwnd_limited");
    let bytes = c.max("bytes_sent") - c.max("bytes_retrans");
    let (Some(rtt), Some(mss)) = (c.min("minrtt"), c.min("mss")) else {
        return 0.0;
    };
    let unlimited = f64::from(slow_start_rounds(bytes, mss)) * rtt;
    limited.min(c.max("busy") - unlimited).max(0.0)
}

/// `skmem:(r0,rb131072,t0,tb87040,f0,w0,o0,bl0,d0)` → the value of one of its fields.
fn skmem(s: &SsSocket, key: &str) -> Option<f64> {
    let v = s.fields.get("skmem")?;
    v.trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .find_map(|f| f.strip_prefix(key)?.parse().ok())
}

/// A sample where the send buffer was full while neither cwnd nor the peer's window was:
/// `w` (sk_wmem_queued) ≥ 90 % of `tb` (sk_sndbuf), fewer packets in flight than cwnd,
/// and fewer bytes than snd_wnd. `tcp_sendmsg` waits in `sk_stream_wait_memory` exactly
/// then.
fn sndbuf_full(s: &SsSocket) -> bool {
    let (Some(w), Some(tb)) = (skmem(s, "w"), skmem(s, "tb")) else {
        return false;
    };
    let unacked = s.num("unacked").unwrap_or(0.0);
    let cwnd = s.num("cwnd").unwrap_or(0.0);
    let mss = s.num("mss").unwrap_or(1448.0);
    let wnd = s.num("snd_wnd").unwrap_or(f64::MAX);
    tb > 0.0 && w >= 0.9 * tb && unacked < cwnd && unacked * mss < wnd
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
    let syn = r.c(Side::Client, "TCPSynRetrans");
    let rtos = r.both(&rto_names).saturating_sub(syn);
    o.yes_no(
        "loss.rto",
        rtos > 0,
        rtos == 0,
        format!("RTOs (both ends, SYN RTOs excluded) {rtos}"),
    );
    let probes = r.both(&["TCPLossProbes"]);
    let retrans = r.both(&["TcpRetransSegs"]);
    // tcp_send_loss_probe sends new data when it can: counted, but no retransmission on
    // the wire; only a probe with retransmissions is required.
    o.yes_no(
        "loss.tail_loss_probe",
        probes > 0 && retrans > 0,
        probes == 0,
        format!("TCPLossProbes {probes}, TcpRetransSegs {retrans}"),
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
    let synack = r.c(Side::Server, "TCPSynRetrans");
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
    let rw = limited(rwnd_lim) && rwnd_cost >= LIMITED_MIN_MS;
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
             slow start's rounds {rwnd_cost:.0} ms"
        ),
        rw.then_some(rwnd_cost),
    );
    // The chrono counts jiffies (tcp_chrono_set reads tcp_jiffies32): "≤ 1 % of busy"
    // cannot rule out a window-limited time below that plus one tick.
    if let Some(l) = o.0.last_mut() {
        if l.want == Want::MustNot {
            l.max_cost_ms = Some(LIMITED_NONE_SHARE * busy + CHRONO_TICK_MS);
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
    o.yes_no(
        "rwnd.no_window_scaling",
        no_ws && rw,
        wscale_known && !no_ws,
        format!("window scaling negotiated: {}", !no_ws),
    );
    // Not growing: the window limited the sender, no zero window, window scaling on, and
    // the receiver's buffer never grew: skmem `rb` (sk_rcvbuf), which receive autotuning
    // raises once per RTT while the reader keeps up (tcp_rcv_space_adjust, "DRS") and
    // which a fixed SO_RCVBUF (SOCK_RCVBUF_LOCK) or memory pressure holds. Under pressure
    // (TCPMemoryPressures, tcp_enter_memory_pressure) the window also collapses to
    // 4 × advmss (tcp_adjust_rcv_ssthresh). A buffer that grew is autotuning at work: a
    // window still ramping is not "not growing" even when it limited the sender (class 4).
    let pressure = r.both(&["TCPMemoryPressures"]);
    let rb: Vec<f64> = receiver_samples(r, rcv)
        .iter()
        .filter_map(|s| skmem(s, "rb"))
        .collect();
    let (rb_first, rb_max) = (rb.first().copied(), rb.iter().copied().reduce(f64::max));
    let flat = matches!((rb_first, rb_max), (Some(f), Some(m)) if m <= f);
    let grew = matches!((rb_first, rb_max), (Some(f), Some(m)) if m > f);
    o.yes_no(
        "rwnd.not_growing",
        pressure > 0 || (rw && zero == 0 && !no_ws && flat),
        pressure == 0 && ((not_limited(rwnd_lim) && zero == 0) || grew || zero > 0 || no_ws),
        format!(
            "TCPMemoryPressures {pressure}, receiver sk_rcvbuf first {rb_first:?} max {rb_max:?}, rwnd limited {rw}, zero windows {zero}"
        ),
    );
    // Ruled out only by the chrono (the buffer did not grow): it carries rwnd.limited's
    // cost, so the same resolution.
    if let Some(l) = o.0.last_mut() {
        if l.want == Want::MustNot && !(grew || zero > 0 || no_ws) {
            l.max_cost_ms = Some(LIMITED_NONE_SHARE * busy + CHRONO_TICK_MS);
        }
    }

    // --- Send buffer: TCP_CHRONO_SNDBUF_LIMITED (tcp_sendmsg_locked, on waiting for
    // memory) stays 0 on 6.18 here, so also the samples where sk_wmem_queued had reached
    // sk_sndbuf while cwnd and the peer's window had room (sk_stream_memory_free false). ---
    let sending: Vec<&SsSocket> = conns
        .iter()
        .flat_map(|c| c.samples.iter().copied())
        .filter(|s| s.num("unacked").unwrap_or(0.0) > 0.0)
        .collect();
    let full = sending.iter().filter(|s| sndbuf_full(s)).count();
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
            "sender sndbuf_limited {sndbuf_lim:.0} ms; send buffer full with room in cwnd and window in {full} of {} sending samples",
            sending.len()
        ),
        (sb && sndbuf_lim > 0.0).then_some(sndbuf_lim),
    );

    // --- Queueing delay: the sender's smoothed RTT against its minimum (tcp_rtt_estimator,
    // tcp_update_rtt_min). A path whose delay changed is not decided: the kernel cannot
    // tell a longer path from a queue. ---
    let srtt_max = conns.iter().map(|c| c.max("rtt")).fold(0.0, f64::max);
    let min_rtt = conns
        .iter()
        .filter_map(|c| c.min("minrtt"))
        .min_by(f64::total_cmp);
    let stepped = !r.path["to_client"]["delay_change"].is_null()
        || !r.path["to_server"]["delay_change"].is_null();
    let zero_window = zero > 0;
    let (bloat, calm) = match min_rtt {
        Some(m) => (
            srtt_max >= 3.0 * m && srtt_max - m >= 30.0,
            srtt_max < 1.5 * m + 5.0,
        ),
        None => (false, false),
    };
    o.yes_no(
        "network.bufferbloat",
        bloat && !stepped && !zero_window,
        calm,
        format!("sender srtt max {srtt_max:.1} ms, min rtt {min_rtt:?} ms"),
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
    // BBR sets snd_ssthresh itself when it leaves STARTUP (bbr_check_drain), loss-free:
    // not decided for a BBR sender.
    let bbr = conns
        .iter()
        .any(|c| c.samples.iter().any(|s| s.flags.iter().any(|f| f == "bbr")));
    o.yes_no(
        "slow_start.early_exit",
        any_early && hystart == 0 && !bbr,
        !early.is_empty() && !any_early && hystart == 0 && !bbr,
        format!(
            "connections starting with a ssthresh and no retransmission: {} of {}; HyStart exits {hystart}; BBR {bbr}",
            early.iter().filter(|&&e| e).count(),
            early.len()
        ),
    );

    // --- Workload timings: connections, requests, think time, idle closes. ---
    label_http(r, &mut o, &conns, rtt);
    label_app_limited(r, &mut o, &conns, &kind);
    label_echo(r, &mut o, rtt, &kind);
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
    let idle: Vec<f64> = r.server["connections"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter_map(|c| ns_ms(&c["close"]["idle_ns"]))
                .collect()
        })
        .unwrap_or_default();
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
        idle.is_empty() && client_idle.is_empty(),
        format!(
            "server idle closes after {idle:.0?} ms, requests that reconnected {reconnected}; client idle closes after {client_idle:.0?} ms, later requests on a new connection {fresh_after}"
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
    for c in conns {
        let mut max_before = 0.0f64;
        let mut retr = 0.0f64;
        let mut last_snd_gap = false;
        for s in &c.samples {
            let cw = s.num("cwnd").unwrap_or(0.0);
            let rto = s.num("rto").unwrap_or(200.0);
            let r2 = s.num("bytes_retrans").unwrap_or(0.0);
            if s.num("lastsnd").unwrap_or(0.0) > rto {
                last_snd_gap = true;
            } else if last_snd_gap {
                // Sending again after the gap (a gap before the close does not count).
                idle_gap = true;
                last_snd_gap = false;
                if r2 == retr && max_before > 2.0 * IW as f64 && cw < max_before / 2.0 {
                    restart = true;
                }
            }
            retr = r2;
            max_before = max_before.max(cw);
        }
    }
    o.yes_no(
        "slow_start.restart_after_idle",
        restart,
        !idle_gap,
        format!("cwnd fell after an idle gap > RTO without retransmission: {restart}; idle gap > RTO seen: {idle_gap}"),
    );
}

fn label_app_limited(r: &Records, o: &mut Out, conns: &[Conn], kind: &str) {
    // tcp_rate_check_app_limited marks the sender app-limited when it has nothing to
    // send with room in cwnd; ss prints `app_limited`. Only a one-transfer workload is
    // decided: between http responses every socket is app-limited by design.
    if kind != "bulk" {
        o.put(
            "app.limited",
            Want::Unknown,
            format!("{kind}: not decided"),
            None,
        );
        return;
    }
    let sending: Vec<&SsSocket> = conns
        .iter()
        .flat_map(|c| c.samples.iter().copied())
        .filter(|s| {
            s.num("unacked").unwrap_or(0.0) > 0.0 || s.flags.iter().any(|f| f == "app_limited")
        })
        .collect();
    let al = sending
        .iter()
        .filter(|s| s.flags.iter().any(|f| f == "app_limited"))
        .count();
    let n = sending.len();
    let _ = r;
    // tp->app_limited stays set until the data sent while app-limited is delivered, so a
    // few samples early in a connection say little: at least 8.
    o.yes_no(
        "app.limited",
        n >= 8 && al * 2 > n,
        n >= 8 && al * 10 <= n,
        format!("app_limited in {al} of {n} sender samples"),
    );
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
) -> Vec<Label> {
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
            let cut = snaplen != 0
                && snaplen <= 64
                && matches!(
                    l.id,
                    "retransmit.spurious"
                        | "rwnd.no_window_scaling"
                        | "rwnd.limited"
                        | "rwnd.not_growing"
                );
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
            workload: json!({ "kind": { "type": kind } }),
            client: Value::Null,
            server,
            nstat_client: BTreeMap::new(),
            nstat_server: BTreeMap::new(),
            ss_client: Vec::new(),
            ss_server: Vec::new(),
        }
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
}
