//! The talk's adapter receive ("egress") buffer: 150 KB, drained frame by
//! frame at the host's service rate, with PAUSE towards the switch at
//! `watermark_high = 150 KB - RTT x bandwidth` and `watermark_low =
//! watermark_high - 10 KB`. A host whose service rate is below its link rate
//! (the talk's hot node: 10 %) fills it and pauses the switch port: the
//! output-generated hotspot.
//!
//! The RTT x bandwidth headroom holds what arrives after the PAUSE is sent
//! (the frame on the wire, the PAUSE's trip, the switch finishing its frame),
//! so with PAUSE working nothing overflows; an overflow is counted.
//!
//! ```
//! use incast_core::cm::rx_buffer::RxBuffer;
//! use incast_core::units::{Rate, US};
//! // 150 KB buffer, watermarks 140 / 130 KB, served at 1 Gb/s.
//! let mut rx = RxBuffer::new(150_000, 140_000, 130_000, Rate::gbps(1));
//! let out = rx.arrive(0, 1500);
//! assert_eq!(out.service_done_at, Some(12 * US)); // 1500 B at 1 Gb/s
//! let out = rx.service_done(12 * US);
//! assert_eq!((out.consumed, rx.occupancy()), (1500, 0));
//! ```

use super::watermark::Watermarks;
use super::{ParamError, PauseChange};
use crate::config_types::SizeValue;
use crate::units::{Ps, Rate};
use std::collections::VecDeque;

/// What an arrival or a service completion caused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxOutcome {
    /// The arriving frame fitted (false: overflow, the frame is lost).
    pub accepted: bool,
    /// Bytes handed to the host (a service completion).
    pub consumed: u64,
    /// PAUSE or resume the switch port feeding this NIC.
    pub pause: Option<PauseChange>,
    /// A frame entered service: call [`RxBuffer::service_done`] then.
    pub service_done_at: Option<Ps>,
}

/// Counters of a receive buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxStats {
    pub frames_in: u64,
    pub bytes_consumed: u64,
    pub overflow_frames: u64,
    pub overflow_bytes: u64,
    pub pauses: u64,
    pub peak: u64,
}

/// The receive buffer of one NIC.
#[derive(Clone, Debug)]
pub struct RxBuffer {
    capacity: u64,
    frames: VecDeque<u64>,
    occupancy: u64,
    service_rate: Rate,
    busy_until: Option<Ps>,
    marks: Watermarks,
    pub stats: RxStats,
}

/// The watermarks of the talk's adapter: `high = size - headroom` (headroom =
/// RTT x bandwidth, or as given), `low = high - gap`. Errors name the key.
pub fn rx_watermarks(
    size: SizeValue,
    headroom: u64,
    gap: SizeValue,
) -> Result<(u64, u64), ParamError> {
    let (size, gap) = (size.bytes(), gap.bytes());
    if headroom >= size {
        return Err(ParamError::new(
            "receive_buffer",
            format!("must exceed the PAUSE headroom (RTT x bandwidth = {headroom} B), got {size} B; the talk uses \"150KB\""),
        ));
    }
    let high = size - headroom;
    if gap == 0 || gap >= high {
        return Err(ParamError::new(
            "pause_gap",
            format!("must be positive and below watermark_high ({high} B), got {gap}; the talk uses \"10KB\""),
        ));
    }
    Ok((high, high - gap))
}

impl RxBuffer {
    /// A buffer of `capacity` bytes with PAUSE at `high`, resume at `low`,
    /// served at `service_rate`.
    pub fn new(capacity: u64, high: u64, low: u64, service_rate: Rate) -> Self {
        RxBuffer {
            capacity,
            frames: VecDeque::new(),
            occupancy: 0,
            service_rate,
            busy_until: None,
            marks: Watermarks::new(high, low),
            stats: RxStats::default(),
        }
    }

    pub fn occupancy(&self) -> u64 {
        self.occupancy
    }
    pub fn paused(&self) -> bool {
        self.marks.paused()
    }
    /// When the frame in service completes.
    pub fn next_event(&self) -> Option<Ps> {
        self.busy_until
    }

    /// The host's service rate from the next frame on (a hotspot starts or ends).
    pub fn set_service_rate(&mut self, rate: Rate) {
        self.service_rate = rate;
    }

    fn start_service(&mut self, now: Ps) -> Option<Ps> {
        if self.busy_until.is_some() {
            return None;
        }
        let head = *self.frames.front()?;
        let at = now + self.service_rate.tx_time(head);
        self.busy_until = Some(at);
        Some(at)
    }

    /// A frame of `bytes` arrived from the switch at `now`.
    pub fn arrive(&mut self, now: Ps, bytes: u64) -> RxOutcome {
        self.stats.frames_in += 1;
        if self.occupancy + bytes > self.capacity {
            self.stats.overflow_frames += 1;
            self.stats.overflow_bytes += bytes;
            return RxOutcome::default();
        }
        self.frames.push_back(bytes);
        self.occupancy += bytes;
        self.stats.peak = self.stats.peak.max(self.occupancy);
        let pause = self.marks.update(self.occupancy);
        if pause == Some(PauseChange::Pause) {
            self.stats.pauses += 1;
        }
        RxOutcome {
            accepted: true,
            consumed: 0,
            pause,
            service_done_at: self.start_service(now),
        }
    }

    /// The frame in service was consumed at `now` (= the time returned earlier).
    pub fn service_done(&mut self, now: Ps) -> RxOutcome {
        debug_assert_eq!(self.busy_until, Some(now));
        self.busy_until = None;
        let bytes = self.frames.pop_front().expect("a frame was in service");
        self.occupancy -= bytes;
        self.stats.bytes_consumed += bytes;
        RxOutcome {
            accepted: true,
            consumed: bytes,
            pause: self.marks.update(self.occupancy),
            service_done_at: self.start_service(now),
        }
    }
}

/// The PAUSE headroom of a receive buffer at the end of a link of `rate`
/// and one-way `delay`, for frames of up to `frame` bytes: RTT x bandwidth,
/// what the link delivers while the PAUSE waits for the NIC's frame on the
/// wire (one frame), travels, and the switch finishes the frame it is
/// sending (one frame), and back; plus the PAUSE frame itself.
pub fn rx_headroom(rate: crate::units::Rate, delay: crate::units::Ps, frame: u64) -> u64 {
    rate.bytes_in(2 * delay) + 2 * frame + 64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{NS, US};

    #[test]
    fn talk_watermarks() {
        // 10 Gb/s, RTT 8 us: RTT x bw = 10 KB: high = 140 KB, low = 130 KB.
        let headroom = Rate::gbps(10).bytes_in(8 * US);
        assert_eq!(headroom, 10_000);
        let (hi, lo) = rx_watermarks(SizeValue(150_000), headroom, SizeValue(10_000)).unwrap();
        assert_eq!((hi, lo), (140_000, 130_000));
        let e = rx_watermarks(SizeValue(150_000), 150_000, SizeValue(10_000)).unwrap_err();
        assert_eq!(e.field, "receive_buffer");
        let e = rx_watermarks(SizeValue(150_000), 145_000, SizeValue(10_000)).unwrap_err();
        assert_eq!(e.field, "pause_gap");
    }

    /// A hot host (service 1 Gb/s) fed at 10 Gb/s by a switch that obeys PAUSE
    /// after a reaction delay: the buffer never overflows when the headroom
    /// covers the delay, and the host is served at its rate.
    #[test]
    fn hotspot_pauses_and_never_overflows() {
        let link = Rate::gbps(10);
        let frame = 1500;
        let t_frame = link.tx_time(frame); // 1.2 us
        let react = 4 * US; // PAUSE takes 4 us to stop the switch (plus the frame on the wire)
        let headroom = link.bytes_in(react) + 2 * frame; // 5 KB + two frames in flight
        let (hi, lo) = rx_watermarks(SizeValue(150_000), headroom, SizeValue(10_000)).unwrap();
        let mut rx = RxBuffer::new(150_000, hi, lo, Rate::gbps(1));
        // Event-driven: the switch sends back to back unless paused (the pause takes
        // effect `react` after it is raised; a frame started is finished).
        let (mut t_next_send, mut pause_from, mut resume_from): (Ps, Option<Ps>, Option<Ps>) =
            (0, None, None);
        let mut service: Option<Ps> = None;
        let end = 20_000 * US;
        let mut sent = 0u64;
        let mut toggles = 0;
        let mut now = 0;
        while now < end {
            let next_service = service.unwrap_or(Ps::MAX);
            if next_service <= t_next_send {
                now = next_service;
                let out = rx.service_done(now);
                service = out.service_done_at;
                if out.pause == Some(PauseChange::Resume) {
                    resume_from = Some(now + react);
                    toggles += 1;
                }
                continue;
            }
            now = t_next_send;
            // Paused from `react` after the PAUSE until `react` after the resume.
            let paused =
                pause_from.is_some_and(|p| now >= p) && resume_from.is_none_or(|r| now < r);
            if paused {
                t_next_send = resume_from.map_or(now + 100 * NS, |r| r.max(now + NS));
                continue;
            }
            let out = rx.arrive(now + t_frame, frame);
            assert!(out.accepted, "overflow at {now}");
            sent += frame;
            if let Some(at) = out.service_done_at {
                service = Some(at);
            }
            if out.pause == Some(PauseChange::Pause) {
                pause_from = Some(now + t_frame + react);
                resume_from = None;
                toggles += 1;
            }
            t_next_send = now + t_frame;
        }
        assert_eq!(rx.stats.overflow_frames, 0);
        // A cycle drains from high to low plus what arrived during the reaction delay
        // (10 KB + ~5 KB + frames in flight, ~130 us at 1 Gb/s) and refills at 9 Gb/s
        // net (~15 us): about 150 cycles in 20 ms (measured 151).
        assert!((100..200).contains(&rx.stats.pauses), "{}", rx.stats.pauses);
        assert!(toggles > 20);
        // The host consumed 1 Gb/s for the whole run (it never starved: PAUSE keeps
        // at least `lo` bytes queued): 20 ms x 1 Gb/s = 2.5 MB, minus the first frame.
        let consumed = rx.stats.bytes_consumed as f64;
        assert!((consumed / 2.5e6 - 1.0).abs() < 0.002, "{consumed}");
        assert!(sent >= rx.stats.bytes_consumed);
    }

    #[test]
    fn service_rate_change_applies_to_next_frame() {
        let mut rx = RxBuffer::new(150_000, 140_000, 130_000, Rate::gbps(10));
        assert_eq!(rx.arrive(0, 1500).service_done_at, Some(1_200 * NS));
        rx.arrive(0, 1500);
        rx.set_service_rate(Rate::gbps(1));
        // The first frame keeps its 1.2 us; the second takes 12 us.
        assert_eq!(
            rx.service_done(1_200 * NS).service_done_at,
            Some(1_200 * NS + 12 * US)
        );
    }
}
