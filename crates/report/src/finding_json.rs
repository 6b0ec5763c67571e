//! One finding of `tcpwhy analyze --format json`, written straight into a byte buffer,
//! as `flows_row` writes a connection row: the same bytes serde_json writes for it
//! through `json::to_writer_pretty_at` (the test below renders every finding of the
//! public captures both ways and compares them).
//!
//! Why by hand (style.md: only where a measurement shows the crate is the bottleneck):
//! rendering the 7,666 findings of /tmp/speed-1m.pcap (1 M packets of the bench's mixed
//! capture, 19 MB of JSON) through serde took ≈ 300 M of `analyze -j 1`'s 3,157 M
//! instructions, ≈ 40,000 a finding, most of it serde_json escaping keys byte by byte and
//! `core::fmt` writing endpoints and times (callgrind). Rendered during the pass on the
//! workers (`JsonRender`), it is also what a worker with more findings than the other
//! spends beyond it. By hand: 189 M; with the texts checked for escapes without an early
//! exit (vectorised): 69 M, `analyze -j 1` 3,079 M → 2,959 M.

use crate::flows_row::{needs_escape, Out};
use crate::units::ns_to_ms;
use tcpwhy_detect::Finding;

/// `s` as a JSON string: as is between quotes, or through serde_json's escaping when it
/// holds a byte that needs it.
fn text(o: &mut Out<'_>, s: &str) {
    // Every byte looked at, without stopping at the first that needs escaping (almost
    // never one): the loop is then vectorised; stopping early took ≈ 4 instructions a
    // byte, two thirds of this writer's.
    if s.bytes().fold(false, |any, b| any | needs_escape(b)) {
        // Writing to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *o.0, s);
    } else {
        o.0.reserve(s.len() + 2);
        o.0.push(b'"');
        o.0.extend_from_slice(s.as_bytes());
        o.0.push(b'"');
    }
}

/// A name from a fixed set of ASCII words (ids, hosts, confidence, vantage): nothing to
/// escape.
fn word(o: &mut Out<'_>, s: &'static str) {
    o.0.push(b'"');
    o.0.extend_from_slice(s.as_bytes());
    o.0.push(b'"');
}

/// `f` as an element of a file's `findings` (4 levels deep), without its separator.
pub(crate) fn write_finding(buf: &mut Vec<u8>, f: &Finding) {
    // One reservation for the texts and the fixed lines around them, not one per piece.
    let texts: usize = f.explanation.len()
        + f.evidence.iter().map(|e| e.note.len()).sum::<usize>()
        + f.fix.iter().map(|x| x.action.len()).sum::<usize>();
    buf.reserve(texts + 512 + 200 * (f.evidence.len() + f.fix.len()));
    let mut o = Out(buf);
    o.raw("{\n          \"id\": ");
    word(&mut o, f.id.as_str());
    o.raw(",\n          \"stream\": ");
    o.u64(f.stream);
    o.raw(",\n          \"client\": ");
    o.endpoint(f.endpoints[0]);
    o.raw(",\n          \"server\": ");
    o.endpoint(f.endpoints[1]);
    o.raw(",\n          \"cost_ms\": ");
    o.f64(ns_to_ms(f.cost_ns));
    o.raw(",\n          \"connections\": ");
    o.u64(f.connections);
    o.raw(",\n          \"share\": ");
    match f.share {
        Some(s) => o.f64((s * 1000.0).round() / 1000.0),
        None => o.raw("null"),
    }
    o.raw(",\n          \"evidence\": ");
    if f.evidence.is_empty() {
        o.raw("[]");
    }
    for (i, e) in f.evidence.iter().enumerate() {
        o.raw(if i == 0 {
            "[\n            {\n              \"frame\": "
        } else {
            ",\n            {\n              \"frame\": "
        });
        o.u64(e.frame);
        o.raw(",\n              \"time\": ");
        o.time(e.ts);
        o.raw(",\n              \"note\": ");
        text(&mut o, &e.note);
        o.raw("\n            }");
        if i + 1 == f.evidence.len() {
            o.raw("\n          ]");
        }
    }
    o.raw(",\n          \"explanation\": ");
    text(&mut o, &f.explanation);
    o.raw(",\n          \"fix\": ");
    if f.fix.is_empty() {
        o.raw("[]");
    }
    for (i, x) in f.fix.iter().enumerate() {
        o.raw(if i == 0 {
            "[\n            {\n              \"host\": "
        } else {
            ",\n            {\n              \"host\": "
        });
        word(&mut o, x.host.as_str());
        o.raw(",\n              \"action\": ");
        text(&mut o, &x.action);
        o.raw("\n            }");
        if i + 1 == f.fix.len() {
            o.raw("\n          ]");
        }
    }
    o.raw(",\n          \"confidence\": ");
    word(&mut o, f.confidence.as_str());
    o.raw(",\n          \"vantage\": ");
    word(&mut o, f.vantage.name());
    o.raw("\n        }");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every finding of every public capture (`--min-cost 0`, one thread and two, so
    /// that provisional stream ids are written too), by hand and through serde: the same
    /// bytes.
    #[test]
    fn findings_of_the_public_captures_are_serde_jsons_bytes() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/captures/public");
        let (mut files, mut findings) = (0, 0);
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.to_string_lossy().into_owned();
            if name.ends_with(".md") || name.ends_with(".json") {
                continue;
            }
            for threads in [1, 2] {
                let opts = tcpwhy_pipeline::Options {
                    threads,
                    ..Default::default()
                };
                let config = tcpwhy_detect::Config::default();
                let Ok((_, all, _)) = tcpwhy_pipeline::analyze(&name, &opts, &config) else {
                    continue;
                };
                files += 1;
                for f in all.iter() {
                    let f = f.unwrap();
                    let mut serde = Vec::new();
                    crate::json::to_writer_pretty_at(
                        &mut serde,
                        &crate::analyze::json_finding(&f),
                        4,
                    )
                    .unwrap();
                    let mut hand = Vec::new();
                    write_finding(&mut hand, &f);
                    assert_eq!(
                        String::from_utf8(hand).unwrap(),
                        String::from_utf8(serde).unwrap(),
                        "{name}"
                    );
                    findings += 1;
                }
            }
        }
        // The corpus gives 118 files' passes and 1,139 findings (when this was written):
        // a test that compared nothing would fail here.
        assert!(
            files >= 100 && findings >= 1000,
            "{files} passes, {findings} findings"
        );
    }
}
