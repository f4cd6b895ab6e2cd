//! High/low watermark hysteresis: the link-level PAUSE decision of the talk's
//! switch (per input partition, 260/230 KB) and adapter (receive buffer,
//! `150 KB - RTT x bandwidth` / 10 KB below).
//!
//! The occupancy reaching `high` pauses the upstream sender; falling to `low`
//! or below resumes it. Each change is reported once.
//!
//! ```
//! use incast_core::cm::{watermark::Watermarks, PauseChange};
//! let mut w = Watermarks::new(260_000, 230_000);
//! assert_eq!(w.update(259_999), None);
//! assert_eq!(w.update(260_000), Some(PauseChange::Pause));
//! assert_eq!(w.update(240_000), None); // still paused
//! assert_eq!(w.update(230_000), Some(PauseChange::Resume));
//! ```

use super::PauseChange;

/// Hysteresis between two occupancy levels (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watermarks {
    pub high: u64,
    pub low: u64,
    paused: bool,
}

impl Watermarks {
    /// `low` must be below `high` (checked by the configuration's validation).
    pub fn new(high: u64, low: u64) -> Self {
        debug_assert!(low < high, "low watermark {low} must be below high {high}");
        Watermarks {
            high,
            low,
            paused: false,
        }
    }

    /// Whether the upstream sender is paused.
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// The occupancy changed to `occupancy`: pause at `>= high`, resume at `<= low`.
    pub fn update(&mut self, occupancy: u64) -> Option<PauseChange> {
        step(&mut self.paused, occupancy, self.high, self.low)
    }
}

/// One hysteresis step for a sender paused or not (`paused`) at
/// `occupancy`, between `high` and `low`: for many senders that share one
/// pair of levels and keep their state elsewhere (a switch's inputs).
#[inline]
pub fn step(paused: &mut bool, occupancy: u64, high: u64, low: u64) -> Option<PauseChange> {
    if !*paused && occupancy >= high {
        *paused = true;
        Some(PauseChange::Pause)
    } else if *paused && occupancy <= low {
        *paused = false;
        Some(PauseChange::Resume)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_change_reported_once() {
        let mut w = Watermarks::new(100, 50);
        let trace = [10, 99, 100, 150, 101, 51, 50, 49, 100, 100];
        let got: Vec<_> = trace.iter().map(|&o| w.update(o)).collect();
        use PauseChange::*;
        assert_eq!(
            got,
            vec![
                None,
                None,
                Some(Pause),
                None,
                None,
                None,
                Some(Resume),
                None,
                Some(Pause),
                None
            ]
        );
        assert!(w.paused());
    }
}
