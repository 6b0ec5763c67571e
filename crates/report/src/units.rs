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
