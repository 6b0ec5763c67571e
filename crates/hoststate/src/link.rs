//! Interfaces and their receive steering: the device kind from `ip -d link show` (text)
//! or `ip -j -d link show` (JSON) — a veth or bridge on the path means containers, whose
//! RPS/RFS settings can reorder packets of one flow across CPUs (seed 03) — and
//! /sys/class/net/IFACE/queues/rx-N/rps_cpus masks.

use crate::diag::{truncate_to, Diags, Parsed};

/// Most interfaces kept (a container host can have thousands of veths).
pub const MAX_LINKS: usize = 16_384;

/// Most words (32 CPUs each) in one rps_cpus mask: NR_CPUS is at most 8192 on Linux.
pub const MAX_RPS_MASK_WORDS: usize = 256;

/// Most interface flags kept per link (`<BROADCAST,MULTICAST,UP,LOWER_UP>` has ~4).
const MAX_LINK_FLAGS: usize = 32;

/// Device kinds `ip -d link` prints as the first word of a detail line
/// (rtnl_link_ops kinds in mainline drivers).
const KINDS: &[&str] = &[
    "veth",
    "bridge",
    "bond",
    "vlan",
    "macvlan",
    "macvtap",
    "ipvlan",
    "ipvtap",
    "vxlan",
    "geneve",
    "gre",
    "gretap",
    "ip6gre",
    "ip6gretap",
    "ipip",
    "sit",
    "ip6tnl",
    "tun",
    "ifb",
    "dummy",
    "vrf",
    "team",
    "wireguard",
    "nlmon",
    "netkit",
    "bareudp",
    "vcan",
    "vxcan",
    "xfrm",
    "erspan",
    "ip6erspan",
    "hsr",
    "macsec",
    "gtp",
    "amt",
    "batadv",
    "ipoib",
    "openvswitch",
    "vti",
    "vti6",
    "can",
    "rmnet",
    "geneve",
];

/// One interface.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Link {
    pub index: Option<u32>,
    /// The name without the `@peer` suffix.
    pub name: String,
    /// `@if5` / `@eth0`: the peer or lower device as printed.
    pub link: Option<String>,
    pub flags: Vec<String>,
    pub mtu: Option<u32>,
    pub qdisc: Option<String>,
    pub state: Option<String>,
    pub master: Option<String>,
    /// `ether`, `loopback`, `none` …
    pub link_type: Option<String>,
    /// `veth`, `bridge`, … (`None` for a physical device).
    pub kind: Option<String>,
    /// `bridge_slave`, `bond_slave`, … when enslaved.
    pub slave_kind: Option<String>,
    pub num_rx_queues: Option<u32>,
    pub num_tx_queues: Option<u32>,
}

/// Every interface, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Links {
    pub links: Vec<Link>,
}

impl Links {
    pub fn get(&self, name: &str) -> Option<&Link> {
        self.links.iter().find(|l| l.name == name)
    }
}

fn s(v: &str) -> String {
    truncate_to(v, 64).to_string()
}

/// Reads `ip -d link show` (or `ip link show`) text. An interface starts with
/// `N: name[@link]: <FLAGS> mtu … qdisc … state … ` and continues with indented lines.
pub fn parse_ip_link(text: &str, source: &str) -> Parsed<Links> {
    let mut diags = Diags::new(source);
    let mut out = Links::default();
    let mut current = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            let Some(l) = out.links.last_mut().filter(|_| current) else {
                diags.line(i + 1, line, "detail line without an interface line");
                continue;
            };
            detail(l, line);
            continue;
        }
        current = false;
        if out.links.len() >= MAX_LINKS {
            diags.line(i + 1, line, "more than MAX_LINKS interfaces, skipped");
            continue;
        }
        let mut parts = line.splitn(3, ": ");
        let (Some(idx), Some(name), rest) = (parts.next(), parts.next(), parts.next()) else {
            diags.line(i + 1, line, "not an `N: name: <FLAGS> …` line");
            continue;
        };
        let Ok(index) = idx.trim().parse::<u32>() else {
            diags.line(i + 1, line, "not an `N: name: <FLAGS> …` line");
            continue;
        };
        let mut l = Link {
            index: Some(index),
            ..Link::default()
        };
        match name.split_once('@') {
            Some((n, p)) => {
                l.name = s(n);
                l.link = Some(s(p));
            }
            None => l.name = s(name),
        }
        let rest = rest.unwrap_or("");
        if let Some(f) = rest.strip_prefix('<').and_then(|r| r.split_once('>')) {
            l.flags =
                f.0.split(',')
                    .filter(|x| !x.is_empty())
                    .take(MAX_LINK_FLAGS)
                    .map(s)
                    .collect();
        }
        let mut w = rest.split_whitespace();
        while let Some(k) = w.next() {
            match k {
                "mtu" => l.mtu = w.next().and_then(|v| v.parse().ok()),
                "qdisc" => l.qdisc = w.next().map(s),
                "state" => l.state = w.next().map(s),
                "master" => l.master = w.next().map(s),
                _ => {}
            }
        }
        out.links.push(l);
        current = true;
    }
    diags.wrap(out)
}

fn detail(l: &mut Link, line: &str) {
    let mut w = line.split_whitespace().peekable();
    let Some(first) = w.peek().copied() else {
        return;
    };
    if let Some(t) = first.strip_prefix("link/") {
        l.link_type = Some(s(t));
    } else if first.ends_with("_slave") {
        l.slave_kind = Some(s(first));
    } else if KINDS.contains(&first) && l.kind.is_none() {
        l.kind = Some(s(first));
    }
    while let Some(k) = w.next() {
        match k {
            "numrxqueues" => l.num_rx_queues = w.peek().and_then(|v| v.parse().ok()),
            "numtxqueues" => l.num_tx_queues = w.peek().and_then(|v| v.parse().ok()),
            _ => {}
        }
    }
}

/// Reads `ip -j [-d] link show` JSON.
pub fn parse_ip_link_json(text: &str, source: &str) -> Parsed<Links> {
    let mut diags = Diags::new(source);
    let mut out = Links::default();
    let Some(arr) = diags.json_array(text) else {
        return diags.wrap(out);
    };
    if arr.len() > MAX_LINKS {
        diags.whole("more than MAX_LINKS interfaces, rest skipped");
    }
    for (i, e) in arr.iter().enumerate().take(MAX_LINKS) {
        let Some(name) = e.get("ifname").and_then(|v| v.as_str()) else {
            diags.whole(format!("entry {i}: no \"ifname\""));
            continue;
        };
        let str_of = |k: &str| e.get(k).and_then(|v| v.as_str()).map(s);
        let u32_of = |k: &str| {
            e.get(k)
                .and_then(|v| v.as_u64())
                .and_then(|v| u32::try_from(v).ok())
        };
        let info = e.get("linkinfo");
        let info_str = |k: &str| info.and_then(|x| x.get(k)).and_then(|v| v.as_str()).map(s);
        out.links.push(Link {
            index: u32_of("ifindex"),
            name: s(name),
            link: str_of("link").or_else(|| u32_of("link_index").map(|n| format!("if{n}"))),
            flags: e
                .get("flags")
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|f| f.as_str())
                        .take(MAX_LINK_FLAGS)
                        .map(s)
                        .collect()
                })
                .unwrap_or_default(),
            mtu: u32_of("mtu"),
            qdisc: str_of("qdisc"),
            state: str_of("operstate"),
            master: str_of("master"),
            link_type: str_of("link_type"),
            kind: info_str("info_kind"),
            slave_kind: info_str("info_slave_kind").map(|k| format!("{k}_slave")),
            num_rx_queues: u32_of("num_rx_queues"),
            num_tx_queues: u32_of("num_tx_queues"),
        });
    }
    diags.wrap(out)
}

/// An rps_cpus mask (`00000000,00000003`: comma-separated 32-bit hex words, most
/// significant first). Zero means RPS is off for the queue.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuMask {
    /// The words, least significant first (word 0 = CPUs 0–31).
    pub words: Vec<u32>,
}

impl CpuMask {
    /// Number of CPUs in the mask.
    pub fn count(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }
    /// Whether RPS steers this queue to other CPUs at all.
    pub fn enabled(&self) -> bool {
        self.words.iter().any(|w| *w != 0)
    }
    /// The CPU numbers set, ascending.
    pub fn cpus(&self) -> Vec<u32> {
        let mut v = Vec::new();
        for (i, w) in self.words.iter().enumerate() {
            for b in 0..32u32 {
                if w & (1 << b) != 0 {
                    v.push(i as u32 * 32 + b);
                }
            }
        }
        v
    }
}

/// Reads one rps_cpus file. `None` (with a diagnostic) if it is not a hex mask.
pub fn parse_rps_cpus(text: &str, source: &str) -> Parsed<Option<CpuMask>> {
    let mut diags = Diags::new(source);
    let t = text.trim();
    let parts: Vec<&str> = t.split(',').take(MAX_RPS_MASK_WORDS + 1).collect();
    if parts.len() > MAX_RPS_MASK_WORDS {
        diags.line(1, t, "mask longer than MAX_RPS_MASK_WORDS words");
        return diags.wrap(None);
    }
    let mut words = Vec::with_capacity(parts.len());
    for p in parts.iter().rev() {
        match u32::from_str_radix(p, 16) {
            Ok(w) if !p.is_empty() && p.len() <= 8 => words.push(w),
            _ => {
                diags.line(1, t, "not an rps_cpus hex mask");
                return diags.wrap(None);
            }
        }
    }
    diags.wrap(Some(CpuMask { words }))
}

/// Receive steering of one queue: `rps/IFACE/rx-N` in a bundle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RpsQueue {
    pub iface: String,
    /// `rx-0`, …
    pub queue: String,
    pub mask: CpuMask,
}
