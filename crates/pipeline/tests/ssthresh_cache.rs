//! `slow_start.early_exit` says an earlier connection to the peer lost data and left the
//! small ssthresh in the kernel's cache only when Linux could have cached it there:
//! - a loss of the handshake is not one: `tcp_init_metrics` sets ssthresh back to
//!   `TCP_INFINITE_SSTHRESH` (or the cached value) when the handshake completes ("ssthresh
//!   may have been reduced unnecessarily during 3WHS");
//! - `tcp_update_metrics` runs only when a connection finishes well, entering TIME-WAIT
//!   or going from LAST-ACK to CLOSE: one that ended in a RST, or had not ended when the
//!   later connection began, cached nothing for it.
//!
//! The connections are those of the lab's cached-ssthresh server capture: stream 0 loses
//! two segments early and closes with FINs both ways (frames 825, 841) at 0.542 s; stream
//! 1 (from frame 843, 1.000 s) leaves slow start at 24 segments with nothing lost
//! (tests/analyze_slow_start_app.rs checks its rounds and cost by hand).

use tcpwhy_capture::{Packet, TcpFlags, TcpOptions, Timestamp};
use tcpwhy_detect::{Confidence, Config, Finding};
use tcpwhy_pipeline::Pass;

/// Where stream 1 begins in server.pcap.
const STREAM_1_SYN: u64 = 843;
const EARLIER: &str = "An earlier connection to this peer";

/// server.pcap's frames: number, time, headers (the payload is not needed).
fn lab() -> Vec<(u64, Timestamp, Packet<'static>)> {
    let path = format!(
        "{}/../../examples/lab/cached-ssthresh/server.pcap",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut v = Vec::new();
    tcpwhy_pipeline::segments(&path, |f, ts, p, _| {
        v.push((f, ts, Packet { payload: &[], ..*p }));
    })
    .expect("the lab's cached-ssthresh capture");
    assert_eq!(v.len(), 1650, "cached-ssthresh/server.pcap changed");
    v
}

/// The one early-exit finding of `frames`, fed in order.
fn early_exit(frames: &[(Timestamp, Packet<'static>)]) -> Finding {
    let mut pass = Pass::new(Config::default());
    for (i, (ts, p)) in frames.iter().enumerate() {
        pass.packet(i as u64 + 1, *ts, p);
    }
    let all = pass.finish().1.findings;
    let mut ours = all
        .into_iter()
        .filter(|f| f.id.as_str() == "slow_start.early_exit");
    let f = ours.next().expect("stream 1's early exit");
    assert!(ours.next().is_none());
    f
}

fn stream(
    frames: &[(u64, Timestamp, Packet<'static>)],
    one: bool,
) -> Vec<(Timestamp, Packet<'static>)> {
    frames
        .iter()
        .filter(|(f, _, _)| (*f >= STREAM_1_SYN) == one)
        .map(|&(_, t, p)| (t, p))
        .collect()
}

/// Stream 1's early exit, with no earlier connection named as its cause: medium
/// confidence (one connection, nothing cached that the capture shows).
fn assert_unexplained(frames: &[(Timestamp, Packet<'static>)]) {
    let f = early_exit(frames);
    assert!(!f.explanation.contains(EARLIER), "{}", f.explanation);
    assert_eq!(f.confidence, Confidence::Medium);
}

fn at(t: Timestamp, ns: i64) -> Timestamp {
    Timestamp::from_nanos(t.nanos() + ns)
}

/// As in the lab: stream 0's loss and graceful close explain stream 1's small ssthresh.
#[test]
fn a_lossy_connection_that_closed_well_is_named() {
    let frames = lab();
    let mut all = stream(&frames, false);
    all.extend(stream(&frames, true));
    let f = early_exit(&all);
    assert!(f.explanation.contains(EARLIER), "{}", f.explanation);
    assert!(
        f.explanation.contains("(stream 0) lost data"),
        "{}",
        f.explanation
    );
    assert_eq!(f.confidence, Confidence::High);
}

/// Before stream 1, another connect to the same server whose SYN/ACK was sent twice
/// (Linux's 1 s initial RTO): the client's ACK of the first was lost, its ACK of the
/// second repeats it with a D-SACK of the SYN/ACK (`tcp_send_dupack`), and it closes
/// well without a byte of data, FINs both ways (a health check). Its handshake's loss
/// left no ssthresh in the cache.
#[test]
fn a_handshake_retransmission_is_no_cached_loss() {
    let frames = lab();
    let one = stream(&frames, true);
    let (t1, syn) = one[0];
    let (c, s) = (7_000_u32, 90_000_u32);
    let seg = |t: Timestamp, to_server: bool, flags: u16, seq: u32, ack: u32| {
        let mut p = syn;
        // Another client port: another connection to the same peer.
        p.src_port = 50_123;
        if !to_server {
            (p.src, p.dst) = (syn.dst, syn.src);
            (p.src_port, p.dst_port) = (syn.dst_port, 50_123);
        }
        p.flags = TcpFlags(flags);
        (p.seq, p.ack) = (seq, ack);
        if flags & TcpFlags::SYN == 0 {
            p.options = TcpOptions {
                timestamps: syn.options.timestamps,
                ..TcpOptions::default()
            };
        }
        (t, p)
    };
    const ACK: u16 = TcpFlags::ACK;
    let start = at(t1, -1_600_000_000);
    let mut dup = seg(at(start, 1_000_060_000), true, ACK, c + 1, s + 1);
    dup.1.options.sack = [(s, s + 1); 4];
    dup.1.options.sack_count = 1;
    let mut all = vec![
        seg(start, true, TcpFlags::SYN, c, 0),
        seg(at(start, 33_000), false, TcpFlags::SYN | ACK, s, c + 1),
        seg(at(start, 60_000), true, ACK, c + 1, s + 1),
        seg(
            at(start, 1_000_033_000),
            false,
            TcpFlags::SYN | ACK,
            s,
            c + 1,
        ),
        dup,
        seg(
            at(start, 1_100_000_000),
            true,
            TcpFlags::FIN | ACK,
            c + 1,
            s + 1,
        ),
        seg(
            at(start, 1_100_030_000),
            false,
            TcpFlags::FIN | ACK,
            s + 1,
            c + 2,
        ),
        seg(at(start, 1_100_060_000), true, ACK, c + 2, s + 2),
    ];
    all.extend(one);
    assert_unexplained(&all);
}

/// Stream 0 as it was, but ended by the client's RST where its FIN was: the server
/// resets (`tcp_reset`, `tcp_done`) without updating the cache.
#[test]
fn a_lossy_connection_that_was_reset_cached_nothing() {
    let frames = lab();
    let mut all: Vec<_> = frames
        .iter()
        .filter(|x| x.0 < STREAM_1_SYN)
        .filter_map(|&(frame, t, mut p)| match frame {
            // The server's last data with its FIN, without the FIN.
            825 => {
                p.flags = TcpFlags(p.flags.0 & !TcpFlags::FIN);
                Some((t, p))
            }
            841 => {
                p.flags = TcpFlags(TcpFlags::RST | TcpFlags::ACK);
                Some((t, p))
            }
            // The server's ACK of the FIN.
            842 => None,
            _ => Some((t, p)),
        })
        .collect();
    assert!(all.iter().all(|(_, p)| !p.flags.fin()));
    all.extend(stream(&frames, true));
    assert_unexplained(&all);
}

/// Stream 0 closing 0.5 s later than it did, after stream 1 began: its ssthresh was
/// cached only then, after stream 1 had read the cache.
#[test]
fn a_lossy_connection_that_closed_later_was_not_cached_yet() {
    let frames = lab();
    let mut all: Vec<_> = frames
        .iter()
        .filter(|x| x.0 < STREAM_1_SYN)
        .map(|&(frame, t, p)| (if frame >= 825 { at(t, 500_000_000) } else { t }, p))
        .collect();
    let one = stream(&frames, true);
    assert!(all[824].0 > one[0].0);
    all.extend(one);
    all.sort_by_key(|x| x.0);
    assert_unexplained(&all);
}

/// Stream 0 without its close (no FIN, no RST: the capture ends before it): nothing of
/// it was cached.
#[test]
fn a_lossy_connection_that_never_closed_cached_nothing() {
    let frames = lab();
    let mut all: Vec<_> = stream(&frames, false).into_iter().take(824).collect();
    all.extend(stream(&frames, true));
    assert_unexplained(&all);
}
