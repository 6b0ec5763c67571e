//! Bounded collection of RTT samples and their order statistics.

/// Most samples kept per collection. Past it the collection keeps every second sample
/// (and from then on records every second one), so memory stays bounded on long
/// connections while quantiles stay representative.
const MAX_SAMPLES: usize = 1 << 14;

/// RTT samples in nanoseconds.
#[derive(Clone, Debug, Default)]
pub struct RttSamples {
    samples: Vec<u64>,
    /// Record one sample out of `1 << decimation`.
    decimation: u32,
    skip: u64,
    count: u64,
    min: Option<u64>,
    max: Option<u64>,
}

/// Order statistics of a set of RTT samples, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttStats {
    /// Samples taken (including those not kept after decimation).
    pub samples: u64,
    pub min_ns: u64,
    pub median_ns: u64,
    pub p95_ns: u64,
    pub max_ns: u64,
}

impl RttSamples {
    pub fn add(&mut self, ns: u64) {
        self.count += 1;
        self.min = Some(self.min.map_or(ns, |m| m.min(ns)));
        self.max = Some(self.max.map_or(ns, |m| m.max(ns)));
        self.skip += 1;
        if self.skip < (1u64 << self.decimation) {
            return;
        }
        self.skip = 0;
        if self.samples.len() >= MAX_SAMPLES {
            let mut i = 0;
            self.samples.retain(|_| {
                i += 1;
                i % 2 == 0
            });
            self.decimation += 1;
        }
        self.samples.push(ns);
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// No samples, holding this collection's buffer for the next connection
    /// ([`crate::reuse`]).
    pub(crate) fn emptied(self) -> Self {
        RttSamples {
            samples: crate::reuse::emptied_vec(self.samples),
            ..RttSamples::default()
        }
    }

    /// Min, median, 95th percentile (nearest rank) and max; `None` without samples.
    pub fn stats(&self) -> Option<RttStats> {
        self.min?;
        self.clone().stats_in_place()
    }

    /// [`Self::stats`], reordering the kept samples in place instead of a copy of them:
    /// for a connection being finalised, whose samples are not added to again (a copy
    /// and a sort per collection were 1.3 % of `analyze`, callgrind). The two ranks are
    /// selected, not sorted for: the same samples, in linear time (a sort was 1.8 % of
    /// `flows`' instructions on the mixed bench capture).
    pub fn stats_in_place(&mut self) -> Option<RttStats> {
        let (min, max) = (self.min?, self.max?);
        let v = &mut self.samples;
        let rank = |p: f64| ((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
        let (median_ns, p95_ns) = if v.is_empty() {
            (min, min)
        } else {
            let (m, p) = (rank(0.5), rank(0.95));
            // The 95th percentile's rank first; the median's is at or below it, so it is
            // among the samples left of it.
            let (below, &mut p95, _) = v.select_nth_unstable(p);
            let median = if m == p {
                p95
            } else {
                *below.select_nth_unstable(m).1
            };
            (median, p95)
        };
        Some(RttStats {
            samples: self.count,
            min_ns: min,
            median_ns,
            p95_ns,
            max_ns: max,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_nearest_rank() {
        let mut s = RttSamples::default();
        for v in 1..=100u64 {
            s.add(v * 1000);
        }
        let st = s.stats().unwrap();
        assert_eq!(st.samples, 100);
        assert_eq!(st.min_ns, 1000);
        assert_eq!(st.median_ns, 50_000);
        assert_eq!(st.p95_ns, 95_000);
        assert_eq!(st.max_ns, 100_000);
    }

    /// The ranks selected are the ranks of the sorted samples, for every count and for
    /// repeated values.
    #[test]
    fn selected_ranks_are_the_sorted_ranks() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for n in 1..200usize {
            let mut s = RttSamples::default();
            let mut all = Vec::new();
            for _ in 0..n {
                // xorshift: any order, values repeated.
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let v = x % 50;
                s.add(v);
                all.push(v);
            }
            all.sort_unstable();
            let at = |p: f64| all[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
            let st = s.stats_in_place().unwrap();
            assert_eq!((st.median_ns, st.p95_ns), (at(0.5), at(0.95)), "{n}");
            assert_eq!((st.min_ns, st.max_ns), (all[0], all[n - 1]));
        }
    }

    #[test]
    fn memory_is_bounded() {
        let mut s = RttSamples::default();
        for v in 0..(MAX_SAMPLES as u64 * 10) {
            s.add(v % 1000);
        }
        assert!(s.samples.len() <= MAX_SAMPLES);
        let st = s.stats().unwrap();
        assert_eq!(st.samples, MAX_SAMPLES as u64 * 10);
        assert!((450..550).contains(&st.median_ns));
    }
}
