//! Human formatting of durations, sizes and rates.

use std::fmt::Write;
use tcpwhy_detect::detector::round_fixed;

/// Milliseconds with a precision that suits the magnitude: 0.042, 1.37, 25.4, 1532.
pub fn ms(ns: u64) -> String {
    let mut s = String::new();
    push_ms(&mut s, ns);
    s
}

/// [`ms`], appended to `out`.
pub fn push_ms(out: &mut String, ns: u64) {
    // The float's thresholds `v < 1.0`, `< 10.0`, `< 100.0` are these integer ones:
    // the division rounds correctly and each bound is exact.
    let decimals = match ns {
        0..1_000_000 => 3,
        1_000_000..10_000_000 => 2,
        10_000_000..100_000_000 => 1,
        _ => 0,
    };
    push_fixed(out, ns, 1_000_000, decimals);
}

/// Seconds with millisecond precision.
pub fn secs(ns: u64) -> String {
    let mut s = String::new();
    push_secs(&mut s, ns);
    s
}

/// [`secs`], appended to `out`.
pub fn push_secs(out: &mut String, ns: u64) {
    push_fixed(out, ns, 1_000_000_000, 3);
}

/// Bytes with a binary-free SI suffix, as most network tools print them: 1.2k, 34M.
pub fn bytes(b: u64) -> String {
    let mut s = String::new();
    push_bytes(&mut s, b);
    s
}

/// [`bytes`], appended to `out`.
pub fn push_bytes(out: &mut String, b: u64) {
    const UNITS: [(char, u64); 3] = [('G', 1_000_000_000), ('M', 1_000_000), ('k', 1_000)];
    for (suffix, scale) in UNITS {
        // `b / scale >= 1.0` and `< 10.0` as floats, exactly (see `push_ms`).
        if b >= scale {
            push_fixed(out, b, scale, if b < 10 * scale { 1 } else { 0 });
            out.push(suffix);
            return;
        }
    }
    push_u64(out, b);
}

/// An integer in decimal, appended to `out`.
pub fn push_u64(out: &mut String, v: u64) {
    out.push_str(itoa::Buffer::new().format(v));
}

/// `n / unit` with `decimals` decimals, as `format!("{:.decimals$}", n as f64 / unit as
/// f64)` writes it, from integers where they can tell ([`round_fixed`]), through the
/// float otherwise (from 2^52 on). `core::fmt`'s exact float formatting (Grisu with a
/// Dragon fallback) was a quarter of `tcpwhy flows`'s instructions: 17 cells a row,
/// every row formatted twice.
fn push_fixed(out: &mut String, n: u64, unit: u64, decimals: u32) {
    let Some(q) = round_fixed(n, unit, decimals) else {
        // Writing to a String cannot fail.
        let _ = write!(out, "{:.*}", decimals as usize, n as f64 / unit as f64);
        return;
    };
    let scale = 10u64.pow(decimals);
    push_u64(out, q / scale);
    if decimals > 0 {
        out.push('.');
        let mut digits = itoa::Buffer::new();
        let frac = digits.format(q % scale);
        // Zero-padded to `decimals` digits.
        out.extend(std::iter::repeat_n(
            '0',
            (decimals as usize).saturating_sub(frac.len()),
        ));
        out.push_str(frac);
    }
}

/// Nanoseconds to milliseconds as a float, for JSON.
pub fn ns_to_ms(ns: u64) -> f64 {
    (ns as f64 / 1e3).round() / 1e3
}

/// A duration as users write it on the command line (`--min-cost`, `--interval`, the
/// Python package's `min_cost=`): "10ms", "1.5s", "500us", "2m"; a bare number is
/// milliseconds.
pub fn parse_duration_ns(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("not a duration: {s:?} (try 10ms)"))?;
    let scale = match unit.trim() {
        "" | "ms" => 1e6,
        "us" | "µs" => 1e3,
        "ns" => 1.0,
        "s" => 1e9,
        "m" | "min" => 60e9,
        u => {
            return Err(format!(
                "unknown unit {u:?} in {s:?} (use ns, us, ms, s or m)"
            ))
        }
    };
    if !(v.is_finite() && v >= 0.0) {
        return Err(format!("not a duration: {s:?}"));
    }
    Ok((v * scale) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(ms(42_000), "0.042");
        assert_eq!(ms(25_400_000), "25.4");
        assert_eq!(bytes(741_342), "741k");
        assert_eq!(bytes(1_500), "1.5k");
        assert_eq!(bytes(999), "999");
        assert_eq!(ns_to_ms(1_234_567), 1.235);
    }

    /// The integer formatting writes what the float formatting it replaced wrote.
    #[test]
    fn integer_formats_match_the_float_ones() {
        fn ms_float(ns: u64) -> String {
            let v = ns as f64 / 1e6;
            if v < 1.0 {
                format!("{v:.3}")
            } else if v < 10.0 {
                format!("{v:.2}")
            } else if v < 100.0 {
                format!("{v:.1}")
            } else {
                format!("{v:.0}")
            }
        }
        fn secs_float(ns: u64) -> String {
            format!("{:.3}", ns as f64 / 1e9)
        }
        fn bytes_float(b: u64) -> String {
            for (suffix, scale) in [("G", 1e9), ("M", 1e6), ("k", 1e3)] {
                let v = b as f64 / scale;
                if v >= 1.0 {
                    return if v < 10.0 {
                        format!("{v:.1}{suffix}")
                    } else {
                        format!("{v:.0}{suffix}")
                    };
                }
            }
            b.to_string()
        }
        let check = |v: u64| {
            assert_eq!(ms(v), ms_float(v), "ms({v})");
            assert_eq!(secs(v), secs_float(v), "secs({v})");
            assert_eq!(bytes(v), bytes_float(v), "bytes({v})");
        };
        // Around every power of ten and every tie of every precision used, the
        // float-only range and the extremes.
        let mut p = 1u64;
        for _ in 0..20 {
            for base in [p, p / 2, p * 5 / 10, p + p / 2, 3 * p / 2 + p / 20] {
                for d in 0..=3 {
                    check(base.saturating_add(d));
                    check(base.saturating_sub(d));
                }
            }
            p = p.saturating_mul(10);
        }
        for v in [
            0,
            999_999,
            999_999_500,
            9_995_000,
            99_950_000,
            1_500,
            1_550,
            10_500,
            1 << 52,
            (1 << 52) - 1,
            (1 << 53) + 1,
            u64::MAX,
        ] {
            check(v);
        }
        // Random values of every magnitude, and ties (`…5` followed by zeros).
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..300_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = x >> (x % 64);
            check(v);
            let tie = (v % 100_000) * 10u64.pow((x >> 8) as u32 % 10)
                + 5 * 10u64.pow((x >> 12) as u32 % 9);
            check(tie);
        }
    }
}
