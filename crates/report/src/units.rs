//! Human formatting of durations, sizes and rates.

/// Milliseconds with a precision that suits the magnitude: 0.042, 1.37, 25.4, 1532.
pub fn ms(ns: u64) -> String {
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

/// Seconds with millisecond precision.
pub fn secs(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e9)
}

/// Bytes with a binary-free SI suffix, as most network tools print them: 1.2k, 34M.
pub fn bytes(b: u64) -> String {
    const UNITS: [(&str, f64); 3] = [("G", 1e9), ("M", 1e6), ("k", 1e3)];
    for (suffix, scale) in UNITS {
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
}
