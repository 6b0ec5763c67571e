//! The path description the emulator reads (`--config path.json`): addresses, seed, and per
//! direction the delay, jitter, loss, deterministic drops, reordering and delay step.
//!
//! The orchestrator builds a [`PathConfig`] in Rust and serialises it; every field has a
//! default, so `PathConfig { client, server, to_client: DirectionConfig { delay_ms: 25,
//! ..Default::default() }, ..Default::default() }` is a complete path.

use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;

/// Longest delay (base, jitter, extra, gap) a config may ask for. A lab scenario lasts
/// seconds; a minute means a typo, and bounding it keeps every time sum far from overflow.
pub const MAX_DELAY_MS: u32 = 60_000;

/// One emulated path between the client and the server namespace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PathConfig {
    /// The client's address. A packet whose IPv4 source is `client` goes `to_server`;
    /// every other packet goes `to_client`.
    pub client: Ipv4Addr,
    /// The server's address (recorded in the log's start line; not needed for direction).
    pub server: Ipv4Addr,
    /// Seed of the random generator for loss and jitter. The same seed and the same packet
    /// sequence give the same decisions; each direction draws from its own streams, so
    /// traffic in one direction does not change the other's random choices.
    pub seed: u64,
    /// Packets from the client to the server.
    pub to_server: DirectionConfig,
    /// Packets from the server to the client.
    pub to_client: DirectionConfig,
}

impl Default for PathConfig {
    fn default() -> Self {
        PathConfig {
            client: Ipv4Addr::UNSPECIFIED,
            server: Ipv4Addr::UNSPECIFIED,
            seed: 1,
            to_server: DirectionConfig::default(),
            to_client: DirectionConfig::default(),
        }
    }
}

/// What happens to the packets of one direction. Rules are checked in this order: `drop_syn`,
/// `drop_data`, `loss` (decided on arrival), then the packet is held for its delay (with
/// `delay_change`, `reorder`, `reorder_every`) and `drop_tail` is decided when it is due.
///
/// "Data packet" means a TCP segment with payload (IP total length − IP header − TCP header
/// is above zero). Data packets are numbered from 1 in arrival order at the emulator, counting every
/// data packet of the direction on every connection, *including retransmissions and
/// packets dropped by another rule* — the log's `data_index` field shows the number each
/// packet got. SYNs, pure ACKs and FINs without payload are never data packets.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DirectionConfig {
    /// One-way delay added to every packet, in ms.
    pub delay_ms: u32,
    /// Each packet's delay is `delay_ms` ± a uniform draw of up to `jitter_ms` (never below
    /// zero). Jitter alone never reorders: a packet is not released before the previous
    /// packet of its direction, as on a real link.
    pub jitter_ms: u32,
    /// Probability (0–1) that a packet of this direction is dropped at random (any TCP
    /// packet, SYNs and ACKs included).
    pub loss: f64,
    /// 1-based indexes of data packets to drop (see "data packet" above).
    pub drop_data: Vec<u64>,
    /// Drop the first `drop_syn` SYN packets (SYN without ACK) of this direction; the client
    /// then retransmits its SYN after the 1 s initial RTO (handshake.syn_retransmit).
    pub drop_syn: u32,
    /// Drop the last data packet of chosen bursts (tail loss → tail loss probe or RTO).
    pub drop_tail: Option<DropTail>,
    /// Chosen data packets released late, so that later packets overtake them.
    pub reorder: Vec<Reorder>,
    /// Every n-th data packet released late, up to a count.
    pub reorder_every: Option<ReorderEvery>,
    /// A step in this direction's base delay at a given time or packet count.
    pub delay_change: Option<DelayChange>,
}

/// Drop the last data packet of the n-th bursts of data packets of a direction.
///
/// A burst is a run of data packets in which each arrives at most `gap_ms` after the
/// previous one; a data packet arriving later than that starts the next burst (bursts are
/// numbered from 1). Retransmissions are data packets too, so a tail loss probe that comes
/// ≈ 2 RTT after the dropped tail is a burst of its own, and counts.
///
/// Whether a packet was the last of its burst is known `gap_ms` after its arrival. With
/// `gap_ms ≤ delay_ms` that is before its release, so nothing changes in timing; with a
/// larger gap, the data packets of the chosen bursts are held until `gap_ms` after their
/// arrival (and packets behind them wait too, FIFO). Keep `gap_ms ≤ delay_ms`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DropTail {
    /// Silence (ms) after a data packet that ends its burst.
    pub gap_ms: u32,
    /// 1-based burst numbers whose last data packet is dropped.
    pub bursts: Vec<u64>,
}

/// Release one data packet later than its due time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Reorder {
    /// 1-based data packet index (see [`DirectionConfig`]).
    pub data_packet: u64,
    /// Extra hold in ms on top of its normal release time; packets behind it are not held
    /// back by it, so they overtake it.
    pub extra_delay_ms: u32,
}

/// Release every n-th data packet later than its due time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReorderEvery {
    /// Data packets `every`, `2·every`, … are delayed (must be ≥ 1).
    pub every: u64,
    /// Extra hold in ms, as in [`Reorder`].
    pub extra_delay_ms: u32,
    /// At most this many packets are delayed; `None` means no limit.
    pub count: Option<u64>,
}

/// Change a direction's base delay once. Exactly one of `after_ms` and `after_packets`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DelayChange {
    /// Packets arriving at least this many ms after the first packet the emulator saw (in
    /// either direction; normally the client's SYN) get the new delay.
    pub after_ms: Option<u64>,
    /// Packets of this direction after the first `after_packets` (all TCP packets, not only
    /// data) get the new delay.
    pub after_packets: Option<u64>,
    /// The new one-way delay in ms (jitter stays as configured).
    pub delay_ms: u32,
}

impl PathConfig {
    /// Reads and checks a JSON path description.
    pub fn from_json(text: &str) -> Result<PathConfig, String> {
        let cfg: PathConfig = serde_json::from_str(text).map_err(|e| e.to_string())?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Checks the values a JSON file could get wrong; the emulator refuses to start otherwise.
    pub fn validate(&self) -> Result<(), String> {
        if self.client.is_unspecified() {
            return Err("client address is not set".into());
        }
        self.to_server
            .validate()
            .map_err(|e| format!("to_server: {e}"))?;
        self.to_client
            .validate()
            .map_err(|e| format!("to_client: {e}"))
    }
}

impl DirectionConfig {
    fn validate(&self) -> Result<(), String> {
        let ms = |name: &str, v: u32| {
            if v > MAX_DELAY_MS {
                Err(format!(
                    "{name} = {v} ms is above the {MAX_DELAY_MS} ms limit"
                ))
            } else {
                Ok(())
            }
        };
        ms("delay_ms", self.delay_ms)?;
        ms("jitter_ms", self.jitter_ms)?;
        if !(0.0..=1.0).contains(&self.loss) {
            return Err(format!("loss = {} is not a probability", self.loss));
        }
        if self.drop_data.contains(&0) {
            return Err("drop_data indexes start at 1".into());
        }
        if let Some(t) = &self.drop_tail {
            ms("drop_tail.gap_ms", t.gap_ms)?;
            if t.gap_ms == 0 {
                return Err("drop_tail.gap_ms must be > 0".into());
            }
            if t.bursts.contains(&0) {
                return Err("drop_tail.bursts start at 1".into());
            }
        }
        for r in &self.reorder {
            ms("reorder.extra_delay_ms", r.extra_delay_ms)?;
            if r.data_packet == 0 {
                return Err("reorder.data_packet indexes start at 1".into());
            }
        }
        if let Some(r) = &self.reorder_every {
            ms("reorder_every.extra_delay_ms", r.extra_delay_ms)?;
            if r.every == 0 {
                return Err("reorder_every.every must be ≥ 1".into());
            }
        }
        if let Some(c) = &self.delay_change {
            ms("delay_change.delay_ms", c.delay_ms)?;
            if c.after_ms.is_some() == c.after_packets.is_some() {
                return Err("delay_change needs exactly one of after_ms and after_packets".into());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_with_only_some_fields_fills_the_rest_with_defaults() {
        let cfg = PathConfig::from_json(
            r#"{"client":"10.81.1.2","server":"10.81.2.2","seed":7,
                "to_server":{"delay_ms":25,"drop_syn":1},
                "to_client":{"delay_ms":25,"drop_tail":{"gap_ms":10,"bursts":[2]},
                             "delay_change":{"after_ms":1000,"delay_ms":200}}}"#,
        )
        .unwrap();
        assert_eq!(cfg.to_server.delay_ms, 25);
        assert_eq!(cfg.to_server.drop_syn, 1);
        assert_eq!(cfg.to_server.loss, 0.0);
        assert_eq!(cfg.to_client.drop_tail.as_ref().unwrap().bursts, vec![2]);
        assert_eq!(
            cfg.to_client.delay_change.as_ref().unwrap().after_ms,
            Some(1000)
        );
    }

    #[test]
    fn serialised_config_reads_back_identical() {
        let cfg = PathConfig {
            client: Ipv4Addr::new(10, 81, 1, 2),
            server: Ipv4Addr::new(10, 81, 2, 2),
            to_client: DirectionConfig {
                delay_ms: 75,
                reorder: vec![Reorder {
                    data_packet: 5,
                    extra_delay_ms: 10,
                }],
                ..Default::default()
            },
            ..Default::default()
        };
        let text = serde_json::to_string(&cfg).unwrap();
        assert_eq!(PathConfig::from_json(&text).unwrap(), cfg);
    }

    #[test]
    fn bad_values_are_refused_with_the_field_name() {
        let e = PathConfig::from_json(r#"{"client":"10.0.0.1","to_client":{"loss":1.5}}"#);
        assert!(e.unwrap_err().contains("to_client: loss"));
        let e = PathConfig::from_json(r#"{"client":"10.0.0.1","to_server":{"drop_data":[0]}}"#);
        assert!(e.unwrap_err().contains("start at 1"));
        let e = PathConfig::from_json(r#"{"to_server":{}}"#);
        assert!(e.unwrap_err().contains("client"));
        let e = PathConfig::from_json(r#"{"client":"10.0.0.1","to_server":{"dealy_ms":5}}"#);
        assert!(e.unwrap_err().contains("unknown field"));
        let e = PathConfig::from_json(
            r#"{"client":"10.0.0.1","to_server":{"delay_change":{"delay_ms":5}}}"#,
        );
        assert!(e.unwrap_err().contains("exactly one"));
    }
}
