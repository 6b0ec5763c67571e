//! The captures shipped in examples/ (made with the real kernel by make-examples.sh):
//! what their README says about them must be what tcpwhy finds.

mod common;

use std::path::PathBuf;
use tcpwhy_track::{ConnSummary, Vantage};

fn connections(name: &str) -> Vec<ConnSummary> {
    common::connections(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(name),
    )
}

/// Captured on the server; each of 6 GETs on a new connection gets 200,000 bytes.
/// The handshake legs are microseconds (no propagation delay in the lab), so the
/// vantage comes from the data: the server's data waits for ACKs across the 24 ms
/// bottleneck queue, the client's request is ACKed at once.
#[test]
fn new_connection_per_request_seen_from_the_server() {
    let c = connections("http-new-connections.pcap");
    assert_eq!(c.len(), 6);
    for conn in &c {
        assert_eq!(conn.endpoints[1].port, 8080);
        assert_eq!(conn.vantage, Vantage::Server, "stream {}", conn.stream);
        // tshark: the server's tcp.len of stream 0 sums to 200,156 (156-byte HTTP
        // header + 200,000-byte body), no retransmission.
        assert_eq!(conn.dirs[1].unique_bytes, 200_156);
        assert_eq!(conn.dirs[1].counts.retransmissions, 0);
        assert!(conn.dirs[0].fin && conn.dirs[1].fin);
    }
}

/// Captured on the client, which downloads 2,000,000 bytes through a 100-packet queue:
/// the sender overflows it and recovers (the README counts 70 retransmissions).
#[test]
fn bulk_download_seen_from_the_client() {
    let c = connections("bulk.pcap");
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].vantage, Vantage::Client);
    assert!(c[0].dirs[1].unique_bytes >= 2_000_000);
    assert_eq!(c[0].dirs[1].counts.retransmissions, 70);
}
