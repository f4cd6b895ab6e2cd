//! Priority-based flow control (IEEE 802.1Qbb) and its buffer accounting.
//!
//! A switch accounts every buffered byte of a lossless class to the
//! *ingress* (port, class) it arrived on, in three layers (as in Broadcom
//! MMUs and the HPCC simulator's `switch-mmu.cc`):
//!
//! 1. a small guaranteed `reserve`;
//! 2. the shared pool, up to the XOFF threshold — static bytes, or dynamic:
//!    `alpha x (buffer - total headroom - total reserve - shared used)`
//!    (Choudhury-Hahne applied at ingress);
//! 3. headroom, for the bytes still arriving after the PAUSE went out.
//!
//! When an ingress crosses XOFF (or any byte lands in headroom) the switch
//! sends a PAUSE for that class out of the same port; when it drains below
//! `threshold - resume_offset` with no headroom in use it sends XON
//! (a PAUSE with zero quanta). A packet that finds headroom full is dropped
//! and counted as a *lossless violation*: with headroom sized by
//! [`headroom_formula`] this never happens.
//!
//! The upstream port stops *starting* frames of a paused class; the frame on
//! the wire completes (802.1Qbb §36.1.3.2). A PAUSE carries quanta of 512
//! bit times at the receiving port's rate; `PauseMode::Quanta` lets the
//! pause expire (the sender refreshes it at half-time while still
//! congested), `PauseMode::UntilResume` is the HPCC simulator's idealised
//! XON/XOFF.

use crate::units::Bytes;

pub use crate::params::pfc::{
    headroom_formula, hpcc_headroom, quantum, Headroom, HeadroomRule, PauseMode, PfcConfig,
    PfcThreshold, WatchdogConfig, PFC_FRAME_BYTES,
};

/// The fraction `alpha` of a dynamic threshold, applied to a byte count.
///
/// A power of two (1/8 at NIC speed, 1/2 at 4x: every HPCC configuration)
/// is applied as a shift, which is what the HPCC simulator computes
/// (`free >> pfc_a_shift`) and equals the float product rounded down for
/// any count below 2^53 bytes; any other alpha is a float product. The
/// dynamic threshold is evaluated on every lossless arrival, so this keeps
/// two float conversions off the hot path.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Alpha {
    value: f64,
    /// `Some(e)` when `value` is exactly 2^e.
    exp: Option<i32>,
}

impl Alpha {
    pub fn new(value: f64) -> Alpha {
        let bits = value.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i32;
        let exact = value > 0.0 && bits & ((1 << 52) - 1) == 0 && biased != 0 && biased != 0x7ff;
        let exp = Some(biased - 1023).filter(|e| exact && (-63..=63).contains(e));
        Alpha { value, exp }
    }
    pub fn value(self) -> f64 {
        self.value
    }
    /// `floor(bytes x alpha)`, saturated.
    #[inline]
    pub fn of(self, bytes: Bytes) -> Bytes {
        match self.exp {
            Some(e) if e <= 0 => bytes >> -e,
            Some(e) if bytes.leading_zeros() >= e as u32 => bytes << e,
            Some(_) => Bytes::MAX,
            None => (bytes as f64 * self.value) as Bytes,
        }
    }
}

/// Accounting of one ingress (port, lossless class): one cache line, all
/// that a lossless arrival or departure reads and writes at its ingress.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
pub struct Ingress {
    /// Bytes in the reserve and shared layers.
    pub bytes: Bytes,
    /// Bytes in headroom.
    pub hdrm: Bytes,
    /// XOFF has been sent and not yet undone by XON.
    pub paused: bool,
    pub headroom: Bytes,
    /// The port's alpha, when the XOFF threshold is dynamic.
    pub alpha: Alpha,
}

/// Where an arriving packet was charged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charge {
    Accepted,
    /// Headroom overflow: drop (a lossless violation).
    Violation,
}

/// A switch's PFC accounting (one per switch).
#[derive(Clone, Debug, Default)]
pub struct PfcState {
    /// Per local port, per class (only lossless classes are used).
    pub ingress: Vec<[Ingress; 8]>,
    /// Shared bytes in use, all ingresses.
    pub shared_used: Bytes,
    pub total_headroom: Bytes,
    pub total_reserve: Bytes,
    /// Headroom bytes in use, all ingresses.
    pub hdrm_used: Bytes,
}

impl PfcState {
    /// The XOFF threshold (shared bytes) of ingress (`port`, `class`).
    #[inline]
    pub fn threshold(&self, cfg: &PfcConfig, buffer: Bytes, port: usize, class: usize) -> Bytes {
        self.threshold_at(cfg, buffer, port, class, self.shared_used)
    }

    /// [`PfcState::threshold`] when `shared_used` shared bytes are in use.
    #[inline(always)]
    fn threshold_at(
        &self,
        cfg: &PfcConfig,
        buffer: Bytes,
        port: usize,
        class: usize,
        shared_used: Bytes,
    ) -> Bytes {
        match cfg.threshold {
            PfcThreshold::Static { xoff } => xoff.0,
            PfcThreshold::Dynamic { .. } => {
                let free = buffer
                    .saturating_sub(self.total_headroom)
                    .saturating_sub(self.total_reserve)
                    .saturating_sub(shared_used);
                self.ingress[port][class].alpha.of(free)
            }
        }
    }

    /// Whether a packet of `size` bytes that arrives at ingress (`port`, `class`)
    /// and leaves in the same instant may skip its accounting: the ingress
    /// is not paused and holds no headroom bytes, and charging the packet
    /// would not reach XOFF. Then [`PfcState::charge`], a false
    /// [`PfcState::should_pause`] and [`PfcState::release`] would leave
    /// every count as it was, and neither PAUSE nor XON would be due.
    #[inline(always)]
    pub fn passes_unseen(
        &self,
        cfg: &PfcConfig,
        buffer: Bytes,
        port: usize,
        class: usize,
        size: Bytes,
    ) -> bool {
        let ing = &self.ingress[port][class];
        if ing.paused || ing.hdrm > 0 {
            return false;
        }
        // What `charge` would do: the bytes above the reserve come from the shared pool.
        let shared = (ing.bytes + size).saturating_sub(cfg.reserve.0);
        let shared_used = self.shared_used + shared.min(size);
        shared < self.threshold_at(cfg, buffer, port, class, shared_used)
    }

    #[inline]
    fn shared_of(ing: &Ingress, reserve: Bytes) -> Bytes {
        ing.bytes.saturating_sub(reserve)
    }

    /// Charges an arriving packet of `size` bytes to ingress (`port`, `class`).
    /// When the switch's buffer outside the headroom reserve is full (lossy
    /// bytes share that pool with the lossless shared bytes), a packet at an
    /// ingress not yet paused is still charged to the shared layer (it
    /// arrived before the decision, as the packet crossing XOFF does) and the
    /// caller pauses the ingress: charging it to headroom would leave one
    /// packet less of headroom than the formula's in-flight bytes need (found
    /// by the property tests).
    #[inline(always)]
    pub fn charge(&mut self, cfg: &PfcConfig, port: usize, class: usize, size: Bytes) -> Charge {
        let reserve = cfg.reserve.0;
        let ing = self.ingress[port][class];
        let new_bytes = ing.bytes + size;
        if new_bytes <= reserve {
            self.ingress[port][class].bytes = new_bytes;
            return Charge::Accepted;
        }
        if ing.paused || ing.hdrm > 0 {
            // XOFF has been sent: what still arrives is what headroom is for.
            // The packet that crosses XOFF (including a falling dynamic
            // threshold) is charged to the shared pool: it arrived before the
            // decision, as the standard headroom formula assumes.
            if ing.hdrm + size > ing.headroom {
                return Charge::Violation;
            }
            self.ingress[port][class].hdrm += size;
            self.hdrm_used += size;
            return Charge::Accepted;
        }
        let from_shared = size.min(new_bytes - reserve);
        self.ingress[port][class].bytes = new_bytes;
        self.shared_used += from_shared;
        Charge::Accepted
    }

    /// Releases a departing packet's bytes from ingress (`port`, `class`).
    pub fn release(&mut self, cfg: &PfcConfig, port: usize, class: usize, size: Bytes) {
        let reserve = cfg.reserve.0;
        let ing = &mut self.ingress[port][class];
        let from_hdrm = size.min(ing.hdrm);
        ing.hdrm -= from_hdrm;
        self.hdrm_used -= from_hdrm;
        let rest = size - from_hdrm;
        let shared = Self::shared_of(ing, reserve);
        let from_shared = rest.min(shared);
        ing.bytes -= rest.min(ing.bytes);
        self.shared_used -= from_shared.min(self.shared_used);
    }

    /// Whether ingress (`port`, `class`) should be paused now.
    #[inline(always)]
    pub fn should_pause(&self, cfg: &PfcConfig, buffer: Bytes, port: usize, class: usize) -> bool {
        let ing = &self.ingress[port][class];
        ing.hdrm > 0
            || Self::shared_of(ing, cfg.reserve.0) >= self.threshold(cfg, buffer, port, class)
    }

    /// Whether a paused ingress (`port`, `class`) may resume now.
    #[inline]
    pub fn should_resume(&self, cfg: &PfcConfig, buffer: Bytes, port: usize, class: usize) -> bool {
        let ing = &self.ingress[port][class];
        if ing.hdrm > 0 {
            return false;
        }
        let shared = Self::shared_of(ing, cfg.reserve.0);
        shared == 0 || shared + cfg.resume_offset.0 <= self.threshold(cfg, buffer, port, class)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config_types::SizeValue;

    #[test]
    fn alpha_shift_equals_the_float_product() {
        // The shift form must give floor(bytes x alpha) exactly, as the float
        // product does for counts below 2^53 (where the conversion is exact).
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for e in -20..=20 {
            let a = Alpha::new(2f64.powi(e));
            assert_eq!(a.exp, Some(e));
            for _ in 0..2000 {
                x = crate::rng::mix64(x);
                let bytes = x >> (11 + x % 53); // every magnitude below 2^53
                let float = (bytes as f64 * a.value()) as Bytes;
                assert_eq!(a.of(bytes), float, "alpha 2^{e}, bytes {bytes}");
            }
        }
        for v in [0.0, 0.3, 1.7, 1e-30] {
            assert_eq!(Alpha::new(v).exp, None, "{v}");
            assert_eq!(Alpha::new(v).of(1_000_000), (1e6 * v) as Bytes);
        }
        assert_eq!(Alpha::new(0.125).of(1_000_003), 125_000);
    }

    fn state(ports: usize, headroom: Bytes, alpha: f64) -> PfcState {
        let mut s = PfcState {
            ingress: vec![
                [Ingress {
                    alpha: Alpha::new(alpha),
                    ..Default::default()
                }; 8];
                ports
            ],
            ..Default::default()
        };
        for p in 0..ports {
            s.ingress[p][3].headroom = headroom;
            s.total_headroom += headroom;
        }
        s
    }

    #[test]
    fn static_threshold_pauses_then_fills_headroom_then_drops() {
        let cfg = PfcConfig {
            threshold: PfcThreshold::Static {
                xoff: SizeValue(10_000),
            },
            resume_offset: SizeValue(3_000),
            ..Default::default()
        };
        let mut s = state(2, 5_000, 1.0);
        for _ in 0..10 {
            assert_eq!(s.charge(&cfg, 0, 3, 1000), Charge::Accepted);
        }
        assert!(s.should_pause(&cfg, 1 << 30, 0, 3));
        s.ingress[0][3].paused = true; // the simulation sends XOFF here
        assert_eq!(s.ingress[0][3].bytes, 10_000);
        for _ in 0..5 {
            assert_eq!(s.charge(&cfg, 0, 3, 1000), Charge::Accepted);
        }
        assert_eq!(s.ingress[0][3].hdrm, 5_000);
        assert_eq!(s.charge(&cfg, 0, 3, 1000), Charge::Violation);
        // Draining: headroom first, then shared; resume at <= 7000 shared.
        for _ in 0..5 {
            s.release(&cfg, 0, 3, 1000);
        }
        assert_eq!(s.ingress[0][3].hdrm, 0);
        assert!(!s.should_resume(&cfg, 1 << 30, 0, 3));
        for _ in 0..3 {
            s.release(&cfg, 0, 3, 1000);
        }
        assert!(s.should_resume(&cfg, 1 << 30, 0, 3));
        assert_eq!(s.shared_used, 7_000);
    }

    #[test]
    fn dynamic_threshold_follows_free_buffer() {
        // alpha 1/8 of (B - headroom - shared): with B = 1 MB, 2 x 100 KB headroom.
        let cfg = PfcConfig::default();
        let mut s = state(2, 100_000, 0.125);
        let b = 1_000_000;
        assert_eq!(s.threshold(&cfg, b, 0, 3), 100_000);
        let mut n = 0;
        while !s.should_pause(&cfg, b, 0, 3) {
            s.charge(&cfg, 0, 3, 1000);
            n += 1;
        }
        // Fixed point of q = (800000 - q) / 8: q = 88.9 KB.
        assert_eq!(n, 89);
    }

    /// `passes_unseen` says yes exactly when charging the packet, checking
    /// XOFF and releasing it would find nothing to do (not paused, no
    /// headroom bytes, no XOFF) and leave every count as it was; over random
    /// states on both sides of the reserve and of both kinds of threshold.
    #[test]
    fn passes_unseen_is_a_charge_and_release_that_change_nothing() {
        let mut x: u64 = 7;
        let mut next = |m: u64| {
            x = crate::rng::mix64(x);
            x % m
        };
        let (mut yes, mut no) = (0, 0);
        for i in 0..20_000 {
            let cfg = PfcConfig {
                threshold: if i % 2 == 0 {
                    PfcThreshold::Static {
                        xoff: SizeValue(next(40_000)),
                    }
                } else {
                    PfcConfig::default().threshold
                },
                reserve: SizeValue(next(3) * 2_000),
                ..Default::default()
            };
            let mut s = state(2, 20_000, [0.125, 0.5, 0.3][next(3) as usize]);
            s.total_reserve = 2 * cfg.reserve.0;
            let ing = &mut s.ingress[1][3];
            ing.bytes = next(60_000);
            ing.hdrm = if next(4) == 0 { next(5_000) } else { 0 };
            ing.paused = next(4) == 0;
            s.hdrm_used = ing.hdrm;
            s.shared_used = ing.bytes.saturating_sub(cfg.reserve.0) + next(200_000);
            let (buffer, size) = (400_000 + next(400_000), 64 + next(1_500));

            let want = {
                let mut t = s.clone();
                let quiet = !t.ingress[1][3].paused
                    && t.ingress[1][3].hdrm == 0
                    && t.charge(&cfg, 1, 3, size) == Charge::Accepted
                    && !t.should_pause(&cfg, buffer, 1, 3);
                if quiet {
                    t.release(&cfg, 1, 3, size);
                    let (a, b) = (&t.ingress[1][3], &s.ingress[1][3]);
                    assert_eq!((a.bytes, a.hdrm, a.paused), (b.bytes, b.hdrm, b.paused));
                    assert_eq!((t.shared_used, t.hdrm_used), (s.shared_used, s.hdrm_used));
                }
                quiet
            };
            assert_eq!(s.passes_unseen(&cfg, buffer, 1, 3, size), want, "case {i}");
            if want {
                yes += 1;
            } else {
                no += 1;
            }
        }
        // Both answers are well represented, so neither side is vacuous.
        assert!(yes > 2_000 && no > 2_000, "{yes} {no}");
    }
}
