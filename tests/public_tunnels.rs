//! Issue 19: tunnels and link types in public captures from Zeek's and tcpdump's test
//! suites (tests/data/issue19/README.md): every connection tshark 4.0 gives, with its
//! stream number, first frame and number of TCP frames, and no other.

use std::path::PathBuf;
use std::process::Command;

/// A connection: stream, first frame, TCP frames.
type Stream = (u64, u64, u64);

/// Every connection of a capture, from `flows --format json`.
fn streams(name: &str) -> Vec<Stream> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/issue19")
        .join(name);
    let out = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(["flows", "--format", "json"])
        .arg(&path)
        .output()
        .expect("run tcpwhy");
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["files"][0]["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let packets = c["client_to_server"]["packets"].as_u64().unwrap()
                + c["server_to_client"]["packets"].as_u64().unwrap();
            (
                c["stream"].as_u64().unwrap(),
                c["first_frame"].as_u64().unwrap(),
                packets,
            )
        })
        .collect()
}

#[test]
fn tunnels_in_public_captures_equal_tshark() {
    let cases: [(&str, &[Stream]); 11] = [
        ("zeek-ayiya3.pcap", &[(0, 12, 21)]),
        ("zeek-geneve-many-options.pcap", &[(0, 1, 10)]),
        ("zeek-gre-aruba-amsdu.pcap", &[(0, 1, 1)]),
        ("zeek-gre-over-udp-4754.pcap", &[(0, 5, 10)]),
        ("zeek-gre-sample.pcap", &[(0, 11, 22)]),
        ("zeek-gtp-gtp6-gtp-0x32.pcap", &[(0, 1, 31)]),
        (
            "zeek-teredo.pcap",
            &[(0, 2, 4), (1, 4, 5), (2, 9, 11), (3, 64, 13)],
        ),
        ("zeek-vxlan-encapsulated-http.pcap", &[(0, 1, 12)]),
        ("tcpdump-geneve.pcap", &[(0, 3, 33)]),
        (
            "tcpdump-ipoib.pcap",
            &[
                (0, 9, 15),
                (1, 24, 1),
                (2, 27, 1),
                (3, 28, 1),
                (4, 29, 1),
                (5, 30, 1),
            ],
        ),
        ("tcpdump-wccp-redirect-gre.pcap", &[(0, 1, 1)]),
    ];
    for (name, want) in cases {
        assert_eq!(streams(name), want, "{name}");
    }
}
