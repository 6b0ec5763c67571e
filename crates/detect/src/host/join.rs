//! The join: capture findings × one host's state. Each finding is judged by the rule its
//! catalogue entry names ([`crate::catalogue::Entry::judge`]), and only from the bundle of
//! the side that decides it ([`crate::catalogue::Entry::decided_by`]).

use super::view::{unmap, Count, HostView, LiveSocket};
use super::{count_text, MAX_NAMED};
use crate::finding::{Confidence, Finding, FindingId, Fix, Host};
use std::net::IpAddr;
use tcpwhy_track::Endpoint;

/// Which side of the capture's connections a bundle comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BundleSide {
    Client,
    Server,
    /// The bundle's addresses match neither endpoint of any finding.
    Unknown,
}

impl BundleSide {
    pub const fn as_str(self) -> &'static str {
        match self {
            BundleSide::Client => "client",
            BundleSide::Server => "server",
            BundleSide::Unknown => "unknown",
        }
    }
}

/// What the host state says about one capture finding.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Relation {
    Confirms,
    Contradicts,
    /// The host state is from the other side, or has nothing to say about this mechanism.
    Silent,
}

impl Relation {
    pub const fn as_str(self) -> &'static str {
        match self {
            Relation::Confirms => "confirms",
            Relation::Contradicts => "contradicts",
            Relation::Silent => "silent",
        }
    }
}

/// The host state's verdict on one capture finding.
#[derive(Clone, Debug)]
pub struct Correlation {
    pub stream: u64,
    pub id: FindingId,
    /// Which end of this connection the bundle is.
    pub side: BundleSide,
    pub relation: Relation,
    /// The values read and what they mean for the finding.
    pub note: String,
    pub confidence_before: Confidence,
    pub confidence_after: Confidence,
}

/// The result of [`join`].
#[derive(Clone, Debug)]
pub struct HostJoin {
    pub hostname: Option<String>,
    /// The addresses the bundle showed for its host.
    pub addresses: Vec<IpAddr>,
    pub correlations: Vec<Correlation>,
}

/// The side of the connection `[client, server]` the host is, if either.
fn side_of(h: &HostView, ends: &[Endpoint; 2]) -> BundleSide {
    if h.has_addr(ends[1].addr) {
        BundleSide::Server
    } else if h.has_addr(ends[0].addr) {
        BundleSide::Client
    } else {
        BundleSide::Unknown
    }
}

fn lower(c: Confidence) -> Confidence {
    match c {
        Confidence::High => Confidence::Medium,
        _ => Confidence::Low,
    }
}

/// Confirms or contradicts each finding with the host's state, in place (confidence,
/// a sentence appended to the explanation, the exact setting first in the fix) and
/// returns what it did for each finding.
pub fn join(findings: &mut [Finding], h: &HostView) -> HostJoin {
    let mut correlations = Vec::new();
    let mut addresses = h.addresses.clone();
    for s in &h.sockets {
        if let Some(a) = s.local_addr() {
            if !a.is_loopback() && !a.is_unspecified() && !addresses.contains(&a) {
                addresses.push(a);
            }
        }
    }
    addresses.truncate(MAX_NAMED * 8);
    for f in findings.iter_mut() {
        let side = side_of(h, &f.endpoints);
        let before = f.confidence;
        let (relation, note, fix) = match (side, f.id.entry().decided_by) {
            (BundleSide::Unknown, _) => (
                Relation::Silent,
                format!(
                    "the host bundle ({}) is neither {} nor {}: it says nothing about this connection",
                    h.label(),
                    f.endpoints[0].addr,
                    f.endpoints[1].addr
                ),
                None,
            ),
            (s, Some(d)) if s != d => (
                Relation::Silent,
                format!(
                    "the host bundle is from the {} ({}); this mechanism is decided on the {}, whose settings it does not show",
                    s.as_str(),
                    h.label(),
                    d.as_str()
                ),
                None,
            ),
            (s, _) => match f.id.entry().judge {
                Some(judge) => judge(&Judging::new(f, h, s)),
                None => (
                    Relation::Silent,
                    "no host setting decides this mechanism".into(),
                    None,
                ),
            },
        };
        match relation {
            Relation::Confirms => f.confidence = Confidence::High,
            Relation::Contradicts => f.confidence = lower(f.confidence),
            Relation::Silent => {}
        }
        if relation != Relation::Silent {
            f.explanation = format!(
                "{} Host state ({}, the {}) {}: {note}.",
                f.explanation.trim_end(),
                h.label(),
                side.as_str(),
                relation.as_str()
            );
        }
        if let Some(fix) = fix {
            f.fix.insert(0, fix);
        }
        correlations.push(Correlation {
            stream: f.stream,
            id: f.id,
            side,
            relation,
            note,
            confidence_before: before,
            confidence_after: f.confidence,
        });
    }
    HostJoin {
        hostname: h.hostname.clone(),
        addresses,
        correlations,
    }
}

fn host_of(side: BundleSide) -> Host {
    match side {
        BundleSide::Client => Host::Client,
        _ => Host::Server,
    }
}

/// What a host-join rule ([`crate::catalogue::Entry::judge`]) reads: one finding, the
/// host, and which end of the connection the host is.
#[derive(Copy, Clone)]
pub struct Judging<'a> {
    pub f: &'a Finding,
    pub h: &'a HostView,
    /// The end of the connection the bundle is (the side that decides the mechanism).
    pub side: BundleSide,
    /// The host's own endpoint of the connection.
    pub own: Endpoint,
    /// The other end's address.
    pub peer: IpAddr,
    /// The connection in ss, when it was still open.
    pub socket: Option<&'a LiveSocket>,
    /// The connection in ss, else another established connection on the same local
    /// address and port.
    pub sibling: Option<&'a LiveSocket>,
}

/// A rule's verdict: the relation, the values read and what they mean, the fix to put
/// first.
pub type Verdict = (Relation, String, Option<Fix>);

/// A host-join rule, named in the catalogue entry of the finding it judges.
pub type Judge = fn(&Judging<'_>) -> Verdict;

impl<'a> Judging<'a> {
    fn new(f: &'a Finding, h: &'a HostView, side: BundleSide) -> Self {
        let own = if side == BundleSide::Server {
            f.endpoints[1]
        } else {
            f.endpoints[0]
        };
        let socket = h
            .sockets
            .iter()
            .find(|s| s.is_conn(&f.endpoints[0], &f.endpoints[1]));
        // Without this connection in ss (it closed before the bundle was written), another
        // established connection on the same local address and port is the same application
        // with the same socket options (TCP_CONGESTION, SO_SNDBUF …).
        let sibling = socket.or_else(|| {
            h.sockets.iter().find(|s| {
                s.state == "ESTAB"
                    && s.local_addr() == Some(unmap(own.addr))
                    && LiveSocket::port(&s.local) == Some(own.port)
            })
        });
        let peer = if side == BundleSide::Server {
            f.endpoints[0].addr
        } else {
            f.endpoints[1].addr
        };
        Judging {
            f,
            h,
            side,
            own,
            peer,
            socket,
            sibling,
        }
    }

    /// `action` as a fix on this host, naming it.
    pub fn on(&self, action: String) -> Option<Fix> {
        Some(Fix {
            host: host_of(self.side),
            action: format!("{action} on {} ({})", self.own.addr, self.h.label()),
        })
    }
}

pub(crate) fn first_sentence(s: &str) -> &str {
    s.split_once(". ").map_or(s, |(a, _)| a)
}

pub(crate) fn counter_judgement(
    h: &HostView,
    names: &[&str],
    what: &str,
    fix: Option<Fix>,
) -> (Relation, String, Option<Fix>) {
    let counts: Vec<(&str, Count)> = names
        .iter()
        .filter_map(|n| h.counter(n).map(|c| (*n, c)))
        .collect();
    if counts.is_empty() {
        return (Relation::Silent, format!("the bundle has no {what}"), None);
    }
    let text: Vec<String> = counts
        .iter()
        .map(|(n, c)| format!("{n} {}", count_text(h, *c)))
        .collect();
    let rising = counts
        .iter()
        .any(|(_, c)| matches!(c, Count::Delta(n) if *n > 0));
    let any = counts.iter().any(|(_, c)| c.n() > 0);
    match (h.deltas.is_some(), rising, any) {
        (true, true, _) => (Relation::Confirms, text.join(", "), fix),
        (true, false, _) => (
            Relation::Contradicts,
            format!("{} did not move between the snapshots", text.join(", ")),
            None,
        ),
        (false, _, true) => (
            Relation::Silent,
            format!(
                "{} (totals since boot, not proof for this capture: collect with --interval)",
                text.join(", ")
            ),
            None,
        ),
        (false, _, false) => (
            Relation::Contradicts,
            format!("{} since boot", text.join(", ")),
            None,
        ),
    }
}
