//! The talk's switch memory: a partition per input port, shared by all
//! outputs with no per-output limit (`M = 300 KB` per port). With PAUSE, an
//! input whose partition reaches `pause_high` (260 KB) pauses its upstream
//! link until it falls to `pause_low` (230 KB); without PAUSE, a frame that
//! does not fit in its input's partition is dropped.
//!
//! The switch calls [`InputBuffers::admit`] when a frame arrives on an input
//! (before queueing it at its output) and [`InputBuffers::release`] when the
//! frame leaves the switch. The 40 KB between `pause_high` and the partition
//! size is the headroom for frames in flight when the PAUSE takes effect
//! (at 10 Gb/s, 32 us of arrivals); a frame that still does not fit is
//! dropped and counted, so "nothing is dropped with PAUSE" is a check the
//! wiring can make.

use super::watermark::step;
use super::{ParamError, PauseChange};
use crate::config_types::SizeValue;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The switch memory model (`[switch.input_partitions]`, say).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct InputBufferParams {
    /// M, the memory of each input port. Talk: 300 KB.
    pub memory_per_port: SizeValue,
    /// PAUSE per input by watermarks (true) or drop when full (false).
    pub pause: bool,
    /// Talk: 260 KB.
    pub pause_high: SizeValue,
    /// Talk: 230 KB.
    pub pause_low: SizeValue,
}

impl Default for InputBufferParams {
    fn default() -> Self {
        InputBufferParams {
            memory_per_port: SizeValue(300_000),
            pause: true,
            pause_high: SizeValue(260_000),
            pause_low: SizeValue(230_000),
        }
    }
}

impl InputBufferParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        let (m, hi, lo) = (
            self.memory_per_port.bytes(),
            self.pause_high.bytes(),
            self.pause_low.bytes(),
        );
        if m == 0 {
            return Err(ParamError::new(
                "memory_per_port",
                "must be positive; the talk uses \"300KB\"",
            ));
        }
        if self.pause {
            if hi == 0 || hi > m {
                return Err(ParamError::new(
                    "pause_high",
                    format!("must be positive and at most memory_per_port ({m} B), got {hi}; the talk uses \"260KB\" of 300 KB"),
                ));
            }
            if lo >= hi {
                return Err(ParamError::new(
                    "pause_low",
                    format!("must be below pause_high ({hi} B), got {lo}; the talk uses \"230KB\""),
                ));
            }
        }
        Ok(())
    }
}

/// The outcome of a frame's arrival at an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Stored; maybe the input must now pause its upstream.
    Admitted(Option<PauseChange>),
    /// The input's partition is full: the frame is lost.
    Dropped,
}

/// Counters of one input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputStats {
    pub admitted_frames: u64,
    pub dropped_frames: u64,
    pub dropped_bytes: u64,
    pub pauses: u64,
    pub peak: u64,
}

/// One input's partition: its bytes, whether it has paused its upstream,
/// its counters. One cache line: a frame's admission and release touch
/// nothing else of its input (at 256 inputs the line is seldom in L1).
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
struct Input {
    used: u64,
    paused: bool,
    stats: InputStats,
}

/// Memory accounting of one switch: bytes held per input port.
#[derive(Clone, Debug)]
pub struct InputBuffers {
    capacity: u64,
    /// PAUSE at `.0` bytes, resume at `.1` (`None`: drop when full).
    levels: Option<(u64, u64)>,
    inputs: Vec<Input>,
}

impl InputBuffers {
    pub fn new(inputs: usize, p: &InputBufferParams) -> Self {
        let (high, low) = (p.pause_high.bytes(), p.pause_low.bytes());
        debug_assert!(!p.pause || low < high, "validated: low {low} < high {high}");
        InputBuffers {
            capacity: p.memory_per_port.bytes(),
            levels: p.pause.then_some((high, low)),
            inputs: vec![Input::default(); inputs],
        }
    }

    /// Bytes held for `input`.
    pub fn used(&self, input: usize) -> u64 {
        self.inputs[input].used
    }

    /// Whether `input`'s upstream is paused.
    pub fn paused(&self, input: usize) -> bool {
        self.inputs[input].paused
    }

    /// `input`'s counters.
    pub fn stats(&self, input: usize) -> &InputStats {
        &self.inputs[input].stats
    }

    /// Every input's counters, by input.
    pub fn all_stats(&self) -> impl Iterator<Item = &InputStats> {
        self.inputs.iter().map(|i| &i.stats)
    }

    /// A frame of `bytes` arrived on `input`.
    pub fn admit(&mut self, input: usize, bytes: u64) -> Admission {
        let inp = &mut self.inputs[input];
        if inp.used + bytes > self.capacity {
            inp.stats.dropped_frames += 1;
            inp.stats.dropped_bytes += bytes;
            return Admission::Dropped;
        }
        inp.used += bytes;
        inp.stats.admitted_frames += 1;
        inp.stats.peak = inp.stats.peak.max(inp.used);
        let change = self
            .levels
            .and_then(|(high, low)| step(&mut inp.paused, inp.used, high, low));
        if change == Some(PauseChange::Pause) {
            inp.stats.pauses += 1;
        }
        Admission::Admitted(change)
    }

    /// A frame of `bytes` that arrived on `input` left the switch.
    pub fn release(&mut self, input: usize, bytes: u64) -> Option<PauseChange> {
        let inp = &mut self.inputs[input];
        debug_assert!(inp.used >= bytes, "release of bytes never admitted");
        inp.used -= bytes;
        self.levels
            .and_then(|(high, low)| step(&mut inp.paused, inp.used, high, low))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_when_full_without_pause() {
        let p = InputBufferParams {
            pause: false,
            ..Default::default()
        };
        let mut b = InputBuffers::new(2, &p);
        for _ in 0..200 {
            assert_eq!(b.admit(0, 1500), Admission::Admitted(None));
        }
        assert_eq!(b.used(0), 300_000);
        assert_eq!(b.admit(0, 1500), Admission::Dropped);
        // The other input's partition is its own.
        assert_eq!(b.admit(1, 1500), Admission::Admitted(None));
        assert_eq!(b.release(0, 1500), None);
        assert_eq!(b.admit(0, 1500), Admission::Admitted(None));
        assert_eq!(b.stats(0).dropped_frames, 1);
        assert!(!b.paused(0));
    }

    #[test]
    fn pause_at_260_resume_at_230() {
        let mut b = InputBuffers::new(1, &InputBufferParams::default());
        let mut pause_at = None;
        for i in 1..=200u64 {
            if let Admission::Admitted(Some(PauseChange::Pause)) = b.admit(0, 1500) {
                pause_at = Some(i * 1500);
            }
        }
        // 174 frames = 261000 B is the first occupancy >= 260 KB.
        assert_eq!(pause_at, Some(261_000));
        assert!(b.paused(0));
        let mut resume_at = None;
        while b.used(0) > 0 {
            if b.release(0, 1500) == Some(PauseChange::Resume) {
                resume_at = Some(b.used(0));
            }
        }
        assert_eq!(resume_at, Some(229_500));
        assert_eq!(b.stats(0).pauses, 1);
        assert_eq!(b.stats(0).peak, 300_000);
    }

    #[test]
    fn validation() {
        InputBufferParams::default().validate().unwrap();
        let bad = |p: InputBufferParams| p.validate().unwrap_err().field;
        assert_eq!(
            bad(InputBufferParams {
                pause_high: SizeValue(400_000),
                ..Default::default()
            }),
            "pause_high"
        );
        assert_eq!(
            bad(InputBufferParams {
                pause_low: SizeValue(260_000),
                ..Default::default()
            }),
            "pause_low"
        );
    }
}
