//! Seeded, split random streams.
//!
//! Every component that draws random numbers owns its own stream, derived from
//! the scenario seed and a stable *label* (what the component is) and *index*
//! (which one). Adding a host, a flow generator or a switch therefore never
//! shifts the numbers that any other component draws.
//!
//! ```
//! use incast_core::rng::Stream;
//! let mut a = Stream::new(42, "arrivals", 3);
//! let mut b = Stream::new(42, "arrivals", 3);
//! assert_eq!(a.next_u64(), b.next_u64());
//! let mut c = Stream::new(42, "arrivals", 4);
//! assert_ne!(Stream::new(42, "arrivals", 3).next_u64(), c.next_u64());
//! ```

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// SplitMix64 finalizer: a fast, well-mixed 64-bit hash step.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Stable 64-bit hash of a label (FNV-1a), independent of Rust's randomized hasher.
pub fn label_hash(label: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in label.as_bytes() {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Derives the seed of stream (`label`, `index`) from the scenario seed.
pub fn derive_seed(seed: u64, label: &str, index: u64) -> u64 {
    mix64(mix64(seed ^ label_hash(label)).wrapping_add(mix64(index)))
}

/// One random stream (xoshiro256++).
#[derive(Clone, Debug)]
pub struct Stream(Xoshiro256PlusPlus);

impl Stream {
    pub fn new(seed: u64, label: &str, index: u64) -> Stream {
        Stream(Xoshiro256PlusPlus::seed_from_u64(derive_seed(
            seed, label, index,
        )))
    }
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in [0, 1), 53 bits of precision.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform integer in [0, n) (Lemire's multiply-shift; bias < n / 2^64).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
    /// Exponential with the given mean, by inversion: -mean * ln(1 - U).
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }
    /// Bernoulli(p).
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.uniform() < p
    }
    /// Standard normal N(0, 1), by the Box-Muller transform (one draw per call,
    /// two uniforms, so the stream's position depends only on the call count).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform(); // (0, 1]: ln is finite
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// A run's draws of one kind: one stream for the run, or, in node order
/// (a run on threads, [`crate::sim::threaded`]), one per element that draws
/// (a host, a port), so that an element's draws do not depend on how the
/// other elements' interleave with them.
#[derive(Clone, Debug)]
pub struct Streams {
    run: Stream,
    per_element: Vec<Stream>,
}

impl Streams {
    /// The run's one stream (`label`, index 0).
    pub fn new(seed: u64, label: &str) -> Streams {
        Streams {
            run: Stream::new(seed, label, 0),
            per_element: Vec::new(),
        }
    }
    /// Draws per element from now on: `elements` streams, element `i`'s
    /// labelled `label` with index `i`.
    pub fn per_element(&mut self, seed: u64, label: &str, elements: usize) {
        self.per_element = (0..elements as u64)
            .map(|i| Stream::new(seed, label, i))
            .collect();
    }
    /// The stream element `element` draws from.
    #[inline]
    pub fn of(&mut self, element: u32) -> &mut Stream {
        match self.per_element.get_mut(element as usize) {
            Some(stream) => stream,
            None => &mut self.run,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element draws from the run's stream until the draws are split;
    /// then element `i` draws from its own stream (`label`, index `i`), and
    /// an element past the split's count from the run's.
    #[test]
    fn streams_split_per_element() {
        let mut streams = Streams::new(3, "kind");
        let mut run = Stream::new(3, "kind", 0);
        assert_eq!(streams.of(0).next_u64(), run.next_u64());
        assert_eq!(streams.of(5).next_u64(), run.next_u64());
        streams.per_element(3, "kind-element", 4);
        for i in [2u32, 0, 2] {
            let _ = streams.of(i).next_u64();
        }
        let mut two = Stream::new(3, "kind-element", 2);
        two.next_u64();
        two.next_u64();
        assert_eq!(streams.of(2).next_u64(), two.next_u64());
        assert_eq!(streams.of(4).next_u64(), run.next_u64());
    }

    #[test]
    fn normal_has_zero_mean_and_unit_variance() {
        let mut s = Stream::new(7, "normal", 0);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| s.normal()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        // Standard errors: 1/sqrt(n) = 0.0022 for the mean, sqrt(2/n) = 0.0032 for the variance.
        assert!(mean.abs() < 0.01, "{mean}");
        assert!((var - 1.0).abs() < 0.015, "{var}");
        let tail = xs.iter().filter(|x| x.abs() > 1.96).count() as f64 / n as f64;
        assert!((tail - 0.05).abs() < 0.003, "{tail}"); // two-sided 5 % tail
    }

    #[test]
    fn exponential_mean_is_right() {
        let mut s = Stream::new(7, "test", 0);
        let n = 200_000;
        let m: f64 = (0..n).map(|_| s.exponential(3.0)).sum::<f64>() / n as f64;
        // standard error = 3/sqrt(n) = 0.0067; 5 sigma
        assert!((m - 3.0).abs() < 0.034, "mean {m}");
    }

    #[test]
    fn below_is_in_range_and_covers() {
        let mut s = Stream::new(1, "x", 0);
        let mut seen = [0u32; 5];
        for _ in 0..10_000 {
            seen[s.below(5) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 1800 && c < 2200), "{seen:?}");
    }
}
