//! Every host-state parser on random and mutated input: the checks the `host_*` fuzz
//! targets run (fuzz/fuzz_targets/host_parsers.rs), from a fixed-seed generator so that
//! CI runs the same few thousand cases on every commit without a nightly toolchain.
//! Mutations start from the real fixtures (tests/data) so that the parsers' deeper paths
//! are reached, not only their first "not a line I know" check.

#[path = "../../../fuzz/fuzz_targets/host_parsers.rs"]
mod host_parsers;

use std::path::PathBuf;

/// Cases per run (each goes through every parser).
const CASES: usize = 3000;

/// xorshift64*: a fixed sequence, so a failure reproduces by its case number.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Pieces the formats are made of, and values that break naive parsers.
const TOKENS: &[&str] = &[
    " ",
    "\t",
    "\n",
    "\r\n",
    ":",
    "=",
    " = ",
    "(",
    ")",
    "((",
    "))",
    ",",
    "/",
    "%",
    "\"",
    "#",
    "ms",
    "us",
    "sec",
    "bps",
    "Mbps",
    "Gbps",
    "Kbps",
    "Bps",
    "-1",
    "0",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "1e400",
    "nan",
    "inf",
    "-0.0",
    "1.5",
    "é",
    "…",
    "\u{feff}",
    "TcpExt:",
    "Tcp:",
    "TCP:",
    "ESTAB",
    "skmem:(r1,rb2",
    "rtt:1/",
    "retrans:1/",
    "wscale:300,1",
    "rwnd_limited:5ms(",
    "send",
    "pacing_rate",
    "cwnd:",
    "lock",
    "age",
    "rtt",
    "fo_syn_drops",
    "source",
    "{",
    "}",
    "[",
    "]",
    "{\"kernel\":{",
    "[{\"dst\":",
    "\"age\":",
    "linkinfo",
    "@if",
    "<UP,",
    ">",
    "link/ether",
    "veth",
    "bridge_slave",
    "ffffffff,",
    "00000003",
    "net.ipv4.tcp_rmem",
    "# t_ms=",
    "unix=",
];

fn fixtures() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut out = Vec::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&d).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(t) = std::fs::read_to_string(&p) {
                out.push(t);
            }
        }
    }
    assert!(out.len() > 20);
    out
}

/// A mutated copy of `base`: a few edits of random bytes, format tokens, deleted or
/// duplicated ranges, at char boundaries.
fn mutate(rng: &mut Rng, base: &str) -> String {
    let mut s = base.to_string();
    let edits = 1 + rng.below(8);
    for _ in 0..edits {
        let mut at = rng.below(s.len() + 1);
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        match rng.below(5) {
            0 => s.insert_str(at, TOKENS[rng.below(TOKENS.len())]),
            1 => {
                let mut end = (at + rng.below(64)).min(s.len());
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                s.replace_range(at..end, "");
            }
            2 => {
                let mut end = (at + rng.below(200)).min(s.len());
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                let dup = s[at..end].to_string();
                s.insert_str(at, &dup);
            }
            3 => {
                let c = char::from(rng.below(128) as u8);
                s.insert(at, c);
            }
            _ => s.truncate(at),
        }
    }
    s
}

/// Random text from the token list and random bytes.
fn random_text(rng: &mut Rng) -> String {
    let n = rng.below(200);
    let mut s = String::new();
    for _ in 0..n {
        if rng.below(3) == 0 {
            let b: Vec<u8> = (0..rng.below(12)).map(|_| rng.next() as u8).collect();
            s.push_str(&String::from_utf8_lossy(&b));
        } else {
            s.push_str(TOKENS[rng.below(TOKENS.len())]);
        }
    }
    s
}

#[test]
fn random_and_mutated_inputs_never_panic_any_parser() {
    let bases = fixtures();
    let mut rng = Rng(0x7463_7077_6879_0007);
    for case in 0..CASES {
        let text = if case % 4 == 0 {
            random_text(&mut rng)
        } else {
            let base = &bases[rng.below(bases.len())];
            mutate(&mut rng, base)
        };
        let r = std::panic::catch_unwind(|| host_parsers::all(&text));
        assert!(
            r.is_ok(),
            "case {case} panicked on {:?}",
            text.get(..300.min(text.len()))
        );
    }
}

/// Long inputs: a line far over every excerpt limit, very many lines (the diagnostics
/// stay capped), deep parentheses in an ss line.
#[test]
fn large_inputs_stay_bounded() {
    let long_line = "x".repeat(1 << 20);
    host_parsers::all(&long_line);
    let many = "garbage line\n".repeat(100_000);
    let p = tcpwhy_hoststate::parse_sysctl_a(&many, "big");
    assert_eq!(p.diagnostics.len(), tcpwhy_hoststate::MAX_DIAGNOSTICS + 1);
    assert_eq!(
        p.diagnostics.last().unwrap().message,
        format!(
            "{} more diagnostics not kept",
            100_000 - tcpwhy_hoststate::MAX_DIAGNOSTICS
        )
    );
    let deep = format!(
        "ESTAB 0 0 a:1 b:2 x:{}{}",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    host_parsers::ss(&deep);
    let nested_json = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    host_parsers::all(&nested_json);
}
