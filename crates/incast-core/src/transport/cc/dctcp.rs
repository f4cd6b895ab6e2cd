//! DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257).
//!
//! The sender keeps `alpha`, an estimate of the fraction of its bytes that
//! saw congestion. Once per window of data it updates
//! `alpha = (1 - g) * alpha + g * F` (RFC 8257 §3.3), where `F` is the
//! fraction of bytes acknowledged with ECN-Echo in that window, and on the
//! first ECN-Echo of a window it cuts `cwnd = cwnd * (1 - alpha / 2)`
//! (RFC 8257 §3.3, paper eq. 2), at most once per window of data (CWR).
//! Loss is handled as in NewReno (RFC 8257 §3.5). The receiver side (ECN-Echo
//! mirroring CE exactly, even with delayed ACKs) lives in the transport.

use super::{AckEvent, CongestionControl, Window};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// EWMA gain g for alpha (RFC 8257 recommends 1/16).
    pub g: f64,
    /// Initial alpha (RFC 8257 §3.3 and Linux: 1.0, i.e. a cautious start).
    pub initial_alpha: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            g: 1.0 / 16.0,
            initial_alpha: 1.0,
        }
    }
}

impl Params {
    /// Ranges of RFC 8257 §3.3's parameters.
    pub fn validate(&self) -> Result<(), super::ParamError> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(super::ParamError::new(
                "g",
                format!("g must be in (0, 1], got {}", self.g),
            ));
        }
        if !(0.0..=1.0).contains(&self.initial_alpha) {
            return Err(super::ParamError::new("initial_alpha", "must be in [0, 1]"));
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct Dctcp {
    g: f64,
    pub alpha: f64,
    /// End of the current observation window (a sequence number).
    window_end: u64,
    acked_bytes: u64,
    ce_bytes: u64,
    /// No further cut until snd_una passes this point (CWR).
    cwr_end: Option<u64>,
}

impl Dctcp {
    pub fn new(params: &Params) -> Self {
        Dctcp {
            g: params.g,
            alpha: params.initial_alpha,
            window_end: 0,
            acked_bytes: 0,
            ce_bytes: 0,
            cwr_end: None,
        }
    }
}

impl CongestionControl for Dctcp {
    fn ecn_capable(&self) -> bool {
        true
    }

    fn on_ack_any(&mut self, w: &mut Window, a: &AckEvent) -> bool {
        // RFC 8257 §3.3: count acknowledged bytes, and those acknowledged with ECE.
        self.acked_bytes += a.acked;
        if a.ece {
            self.ce_bytes += a.acked;
        }
        // End of the observation window: update alpha once per window of data.
        if a.snd_una > self.window_end {
            if self.acked_bytes > 0 {
                let f = self.ce_bytes as f64 / self.acked_bytes as f64;
                self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            }
            self.window_end = a.snd_nxt;
            self.acked_bytes = 0;
            self.ce_bytes = 0;
        }
        if let Some(end) = self.cwr_end {
            if a.snd_una > end {
                self.cwr_end = None;
            }
        }
        // RFC 8257 §3.3 / paper §3.1: on ECE, cut by alpha/2 once per window.
        if a.ece && self.cwr_end.is_none() && !a.in_recovery {
            let cut = (w.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64;
            w.cwnd = cut.max(2 * w.mss);
            w.ssthresh = w.cwnd;
            w.ca_acked = 0;
            self.cwr_end = Some(a.snd_nxt);
            return true;
        }
        false
    }

    fn trace_value(&self) -> Option<f64> {
        Some(self.alpha)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u64, ece: bool, una: u64, nxt: u64) -> AckEvent {
        AckEvent {
            now: 0,
            acked,
            ece,
            snd_una: una,
            snd_nxt: nxt,
            rtt: None,
            in_recovery: false,
            srtt: 0,
            delay: 0,
        }
    }

    #[test]
    fn alpha_converges_to_marked_fraction() {
        let mut cc = Dctcp::new(&Params {
            g: 1.0 / 16.0,
            initial_alpha: 0.0,
        });
        let mut w = Window::new(10, 1000);
        // Windows of 10 packets, 3 of them marked: alpha -> 0.3.
        let mut una = 0;
        for _ in 0..200 {
            let nxt = una + 10_000;
            for i in 0..10 {
                una += 1000;
                cc.on_ack_any(&mut w, &ack(1000, i < 3, una, nxt));
            }
        }
        assert!((cc.alpha - 0.3).abs() < 1e-3, "alpha {}", cc.alpha);
    }

    #[test]
    fn cuts_by_half_alpha_once_per_window() {
        let mut cc = Dctcp::new(&Params {
            g: 1.0 / 16.0,
            initial_alpha: 0.5,
        });
        let mut w = Window::new(100, 1000);
        // The first ACK closes the initial (empty) observation window with F = 1:
        // alpha = 15/16 * 0.5 + 1/16 = 0.53125, then cwnd = 100 KB * (1 - alpha/2).
        assert!(cc.on_ack_any(&mut w, &ack(1000, true, 1000, 100_000)));
        assert_eq!(cc.alpha, 0.53125);
        assert_eq!(w.cwnd, 73_437);
        // Further ECE within the same window: no second cut.
        assert!(!cc.on_ack_any(&mut w, &ack(1000, true, 2000, 100_000)));
        assert_eq!(w.cwnd, 73_437);
        // After snd_una passes the cut point, a new ECE cuts again.
        cc.on_ack_any(&mut w, &ack(1000, false, 100_001, 180_000));
        assert!(cc.on_ack_any(&mut w, &ack(1000, true, 101_001, 180_000)));
        assert!(w.cwnd < 73_437);
    }
}
