//! `app.server_think_time`: the time between the last byte of a request and the first
//! byte of its response is the server application's, not TCP's (mechanisms.md
//! "app.server_think_time"; seed 01's trace-span decomposition).
//!
//! Signature: the request is complete (and ACKed), the server sends nothing, then the
//! response starts. At the server the gap is the processing time itself; at the client it
//! also holds one RTT (the request's way there and the response's way back), which is
//! subtracted; in the middle, the part of the RTT beyond the tap is subtracted when the
//! handshake gives it, else the whole RTT (an underestimate of the thinking).
//!
//! Cost: the sum of the processing times. Reported so that the user reads "TCP cost you
//! 4 ms of this 300 ms request; the server took 290 ms". Fix: on the server: profile the
//! handler, its downstream calls and queues.

use crate::detector::{ms, Connection, Detector};
use crate::finding::{Confidence, Finding, FindingId, Fix, Host};
use tcpwhy_track::Vantage;

/// Processing times below this are indistinguishable from scheduling, ACK delays and
/// the capture's timestamps; they are not reported.
pub const MIN_THINK_NS: u64 = 5_000_000;

pub struct ServerThinkTime;

impl Detector for ServerThinkTime {
    fn on_connection(&mut self, conn: &Connection<'_>, out: &mut Vec<Finding>) {
        // The part of the RTT inside the measured gap, by vantage point.
        let rtt_inside = match conn.vantage {
            Vantage::Server => 0,
            Vantage::Client | Vantage::Unknown => conn.rtt_ns.unwrap_or(0),
            Vantage::Middle => conn.summary.syn_to_synack_ns.or(conn.rtt_ns).unwrap_or(0),
        };
        let mut f = conn.finding(FindingId::AppServerThinkTime);
        let mut n = 0u32;
        let mut max = 0u64;
        for x in conn.exchanges {
            let (Some(gap), Some(resp)) = (x.server_time_ns(), x.response.as_ref()) else {
                continue;
            };
            let think = gap.saturating_sub(rtt_inside);
            if think < MIN_THINK_NS {
                continue;
            }
            n += 1;
            max = max.max(think);
            f.cost_ns += think;
            f.cite(
                x.request.last_frame,
                x.request.end,
                format!("request {} complete", x.index + 1),
            );
            f.cite(
                resp.first_frame,
                resp.start,
                format!("first byte of its response, {} later", ms(gap)),
            );
        }
        if n == 0 {
            return;
        }
        f.share = Some(f.cost_ns as f64 / conn.active_ns().max(1) as f64);
        let rtt_note = if rtt_inside > 0 {
            format!(
                " (the gap seen here minus the {} round trip it contains)",
                ms(rtt_inside)
            )
        } else {
            String::new()
        };
        f.explanation = format!(
            "The server took {} in all to start answering {n} of {} request(s){rtt_note}, {} at \
             most. This is the application's time, not TCP's: the request had arrived and \
             nothing was waiting on the network.",
            ms(f.cost_ns),
            conn.exchanges.len(),
            ms(max)
        );
        f.fix = vec![Fix {
            host: Host::Server,
            action: "profile the request handler, its downstream calls and its queues".into(),
        }];
        f.confidence = if conn.vantage == Vantage::Server {
            Confidence::High
        } else {
            Confidence::Medium
        };
        out.push(f);
    }

    /// Nothing is kept across connections: each one's state is dropped in `on_connection`.
    fn absorb(&mut self, _other: Box<dyn Detector>) {}
}
