//! `tcpwhy annotate`'s texts: one packet comment per evidence frame of each finding the
//! report shows, and the verdict that goes into the capture's section header. The
//! findings are those `analyze` prints for the same options (`--stream`, `--filter`,
//! `--min-cost`), read in the same walk.

use crate::analyze::{verdict, AnalyzeReport, Walk};
use crate::units::ms;
use std::io;
use tcpwhy_detect::{Finding, Host};

/// How every comment tcpwhy adds starts, so that `frame.comment contains "tcpwhy "`
/// finds exactly the evidence frames in Wireshark.
pub const PREFIX: &str = "tcpwhy ";

/// `(frame, comment)` for every evidence frame of every finding shown, sorted by frame;
/// a frame that proves several findings has one comment from each, in report order.
/// Holds a few hundred bytes per evidence line: [`tcpwhy_detect::finding::MAX_EVIDENCE`] lines a
/// finding at most.
pub fn evidence_comments(r: &AnalyzeReport<'_>) -> io::Result<Vec<(u64, String)>> {
    let mut out = Vec::new();
    for f in Walk::new(r, false) {
        let f = f?;
        for e in &f.evidence {
            out.push((e.frame, comment(&f, &e.note)));
        }
    }
    // Stable: a frame's comments stay in the report's order (costliest finding first).
    out.sort_by_key(|(frame, _)| *frame);
    Ok(out)
}

/// `tcpwhy delayed_ack.nagle: <note> (costs 812 ms on tcp.stream 3; fix on the server:
/// <action>)`; the actions name the host themselves.
pub fn comment(f: &Finding, note: &str) -> String {
    let cost = if f.connections > 1 {
        format!(
            "costs {} ms over {} connections, the first tcp.stream {}",
            ms(f.cost_ns),
            f.connections,
            f.stream
        )
    } else {
        format!("costs {} ms on tcp.stream {}", ms(f.cost_ns), f.stream)
    };
    let fix = f.fix.first().map_or(String::new(), |x| {
        let on = match x.host {
            Host::Client => "on the client".to_string(),
            Host::Server => "on the server".to_string(),
            Host::Both => "on both hosts".to_string(),
        };
        format!("; fix {on}: {}", x.action)
    });
    format!("{PREFIX}{}: {note} ({cost}{fix})", f.id.as_str())
}

/// The verdict for the section header's comment: each mechanism's total cost, costliest
/// first, and how to find the evidence; or why there is none.
pub fn verdict_comment(r: &AnalyzeReport<'_>) -> io::Result<String> {
    let path = &r.file.path;
    if let Some(why) = crate::flows::nothing_analysed(&r.file) {
        return Ok(format!("{PREFIX}annotate: {path}: {why}"));
    }
    let by_id = verdict(r)?;
    if by_id.is_empty() {
        return Ok(format!(
            "{PREFIX}verdict on {path}: no TCP mechanism cost {} ms or more.",
            ms(r.min_cost_ns)
        ));
    }
    let mut s = format!("{PREFIX}verdict on {path}:");
    for (id, cost, n) in &by_id {
        s += &format!(
            "\n{}: {} ms lost on {n} connection(s)",
            id.as_str(),
            ms(*cost)
        );
    }
    s += "\nEach evidence frame carries a comment that starts with \"tcpwhy <finding id>:\" \
          (Wireshark: Expert Information, Comments; or the filter frame.comment contains \"tcpwhy \").";
    Ok(s)
}
