//! Connection filters for `--filter`: `host ADDR`, `port N`, `net ADDR/BITS`, joined with
//! `and`. Applied to connections after tracking, so stream numbers stay Wireshark's.

use std::net::IpAddr;
use tcpwhy_track::Endpoint;

#[derive(Debug, PartialEq, Eq)]
enum Term {
    Host(IpAddr),
    Port(u16),
    Net(IpAddr, u8),
}

/// All terms must match one endpoint or the other.
#[derive(Debug, PartialEq, Eq)]
pub struct Filter {
    terms: Vec<Term>,
}

impl Filter {
    pub fn parse(expr: &str) -> Result<Filter, String> {
        let words: Vec<&str> = expr.split_whitespace().collect();
        let mut terms = Vec::new();
        let mut i = 0;
        while i < words.len() {
            let (kind, value) = match (words.get(i), words.get(i + 1)) {
                (Some(k), Some(v)) => (*k, *v),
                _ => return Err(format!("--filter: incomplete expression {expr:?}")),
            };
            let bad = |what: &str| format!("--filter: {value:?} is not {what}");
            terms.push(match kind {
                "host" => Term::Host(value.parse().map_err(|_| bad("an IP address"))?),
                "port" => Term::Port(value.parse().map_err(|_| bad("a port"))?),
                "net" => {
                    let (a, b) = value.split_once('/').ok_or_else(|| bad("ADDR/BITS"))?;
                    let addr: IpAddr = a.parse().map_err(|_| bad("ADDR/BITS"))?;
                    let bits: u8 = b.parse().map_err(|_| bad("ADDR/BITS"))?;
                    let max = if addr.is_ipv4() { 32 } else { 128 };
                    if bits > max {
                        return Err(bad("ADDR/BITS"));
                    }
                    Term::Net(addr, bits)
                }
                other => {
                    return Err(format!(
                        "--filter: unknown term {other:?} (use host, port or net, joined with and)"
                    ))
                }
            });
            i += 2;
            match words.get(i) {
                None => {}
                Some(&"and") if i + 1 < words.len() => i += 1,
                Some(w) => return Err(format!("--filter: expected `and` before {w:?}")),
            }
        }
        if terms.is_empty() {
            return Err("--filter: empty expression".into());
        }
        Ok(Filter { terms })
    }

    pub fn matches(&self, ends: &[Endpoint; 2]) -> bool {
        self.terms
            .iter()
            .all(|t| ends.iter().any(|e| term_matches(t, e)))
    }
}

fn term_matches(t: &Term, e: &Endpoint) -> bool {
    match *t {
        Term::Host(a) => e.addr == a,
        Term::Port(p) => e.port == p,
        Term::Net(net, bits) => in_net(e.addr, net, bits),
    }
}

fn in_net(a: IpAddr, net: IpAddr, bits: u8) -> bool {
    let (a, n, width) = match (a, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => (u128::from(u32::from(a)), u128::from(u32::from(n)), 32),
        (IpAddr::V6(a), IpAddr::V6(n)) => (u128::from(a), u128::from(n), 128),
        _ => return false,
    };
    let shift = width - u32::from(bits);
    shift >= width || (a >> shift) == (n >> shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(a: &str, p: u16) -> Endpoint {
        Endpoint {
            addr: a.parse().unwrap(),
            port: p,
        }
    }

    #[test]
    fn host_port_and_net_terms_match_either_end() {
        let ends = [ep("10.81.1.2", 40000), ep("10.81.2.2", 8080)];
        assert!(Filter::parse("port 8080").unwrap().matches(&ends));
        assert!(Filter::parse("host 10.81.1.2 and port 8080")
            .unwrap()
            .matches(&ends));
        assert!(Filter::parse("net 10.81.2.0/24").unwrap().matches(&ends));
        assert!(Filter::parse("net 0.0.0.0/0").unwrap().matches(&ends));
        assert!(!Filter::parse("host 10.0.0.9").unwrap().matches(&ends));
        assert!(!Filter::parse("net 10.82.0.0/16").unwrap().matches(&ends));
    }

    #[test]
    fn bad_expressions_say_what_is_wrong() {
        assert!(Filter::parse("port").unwrap_err().contains("incomplete"));
        assert!(Filter::parse("port http")
            .unwrap_err()
            .contains("not a port"));
        assert!(Filter::parse("src 1.2.3.4")
            .unwrap_err()
            .contains("unknown term"));
        assert!(Filter::parse("port 80 or port 81")
            .unwrap_err()
            .contains("expected `and`"));
        assert!(Filter::parse("net 10.0.0.0/33").is_err());
    }
}
