//! A windowed maximum in constant space (Kathleen Nichols' algorithm, as
//! BBR's `BtlBwFilter` uses it: draft-cardwell-iccrg-bbr-congestion-control-00
//! §4.1.1.2, Linux `lib/minmax.c`).
//!
//! The filter keeps the best, second-best and third-best samples of the
//! window, each younger than the one before it. A new sample that beats the
//! best replaces all three; when the best ages out of the window the second
//! takes its place. The third and second are refreshed when a quarter and a
//! half of the window have passed without a better sample, so the estimate
//! degrades gracefully instead of falling off a cliff when the best expires.
//! Time is whatever the caller counts in: BBR counts packet-timed rounds.

/// The maximum of the samples of the last `window` time units.
#[derive(Clone, Copy, Debug, Default)]
pub struct WindowedMax {
    /// (time, value) of the best, second-best and third-best samples.
    s: [(u64, f64); 3],
}

impl WindowedMax {
    /// The current windowed maximum (0 before any sample).
    #[inline]
    pub fn get(&self) -> f64 {
        self.s[0].1
    }

    /// Forgets everything: `v` at `t` is the only sample.
    pub fn reset(&mut self, t: u64, v: f64) {
        self.s = [(t, v); 3];
    }

    /// Adds the sample `v` taken at time `t` (non-decreasing) and returns the
    /// maximum over `(t - window, t]`.
    pub fn update(&mut self, window: u64, t: u64, v: f64) -> f64 {
        let new = (t, v);
        if v >= self.s[0].1 || t - self.s[2].0 > window {
            // A new best, or nothing left in the window.
            self.reset(t, v);
            return v;
        }
        if v >= self.s[1].1 {
            self.s[2] = new;
            self.s[1] = new;
        } else if v >= self.s[2].1 {
            self.s[2] = new;
        }
        self.age(window, new);
        self.s[0].1
    }

    /// Moves samples up as the older ones leave the window.
    fn age(&mut self, window: u64, new: (u64, f64)) {
        let dt = new.0 - self.s[0].0;
        if dt > window {
            // The best has expired: promote the second and third.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = new;
            if new.0 - self.s[0].0 > window {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = new;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > window / 4 {
            // A quarter of the window passed with no second choice: take one.
            self.s[2] = new;
            self.s[1] = new;
        } else if self.s[2].0 == self.s[1].0 && dt > window / 2 {
            // Half the window passed with no third choice: take one.
            self.s[2] = new;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The filter against a brute-force maximum over the same window.
    #[test]
    fn matches_brute_force_on_rising_falling_and_flat_series() {
        let window = 10;
        let series: Vec<f64> = (0..200u64)
            .map(|t| match t {
                0..=49 => t as f64,          // rising: the latest is the max
                50..=99 => 100.0 - t as f64, // falling: the max ages out
                100..=149 => 7.0,            // flat
                _ => ((t * 37) % 11) as f64, // noisy
            })
            .collect();
        let mut f = WindowedMax::default();
        for (t, &v) in series.iter().enumerate() {
            let got = f.update(window, t as u64, v);
            let lo = t.saturating_sub(window as usize);
            let brute = series[lo..=t].iter().cloned().fold(f64::MIN, f64::max);
            // The filter keeps three samples, not all of them: it may report a
            // value below the true maximum of the window, never above it, never
            // an expired one, and never less than the latest sample.
            assert!(got <= brute, "t={t}: {got} > {brute}");
            assert!(got >= v, "t={t}: {got} < latest {v}");
            if t < 50 {
                assert_eq!(got, v, "rising: the latest is the maximum");
            }
            if (111..150).contains(&t) {
                assert_eq!(got, 7.0, "flat for longer than the window");
            }
        }
    }

    #[test]
    fn best_expires_after_the_window() {
        let mut f = WindowedMax::default();
        f.update(10, 0, 100.0);
        for t in 1..=10 {
            assert_eq!(f.update(10, t, 50.0), 100.0, "t={t}");
        }
        // At t = 11 the sample of t = 0 is more than 10 rounds old.
        assert_eq!(f.update(10, 11, 50.0), 50.0);
    }
}
