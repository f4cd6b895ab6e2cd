//! TCP NewReno (RFC 5681, RFC 6582).
//!
//! All of NewReno's behaviour is the transport's default: slow start and
//! congestion avoidance ([`super::Window::reno_increase`]), `ssthresh =
//! max(FlightSize/2, 2 SMSS)` on three duplicate ACKs, and the NewReno
//! partial-ACK recovery implemented in the transport. NewReno does not
//! negotiate ECN here, so switches never mark its packets (they may drop them).

use super::CongestionControl;
use serde::{Deserialize, Serialize};

/// NewReno has no parameters of its own.
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {}

#[derive(Clone, Debug, Default)]
pub struct NewReno;

impl Params {
    pub fn validate(&self) -> Result<(), super::ParamError> {
        Ok(())
    }
}

impl NewReno {
    pub fn new(_: &Params) -> Self {
        NewReno
    }
}

impl CongestionControl for NewReno {}

#[cfg(test)]
mod tests {
    use super::super::{AckEvent, CongestionControl, Window};
    use super::*;

    #[test]
    fn slow_start_then_one_mss_per_window() {
        let mut cc = NewReno::new(&Params {});
        let mut w = Window::new(10, 1000);
        let ack = |acked| AckEvent {
            now: 0,
            acked,
            ece: false,
            snd_una: 0,
            snd_nxt: 0,
            rtt: None,
            in_recovery: false,
            srtt: 0,
            delay: 0,
        };
        for _ in 0..10 {
            cc.on_ack(&mut w, &ack(1000));
        }
        assert_eq!(w.cwnd, 20_000); // doubled in one window of ACKs
        w.ssthresh = 20_000;
        for _ in 0..20 {
            cc.on_ack(&mut w, &ack(1000));
        }
        assert_eq!(w.cwnd, 21_000); // +1 MSS after a full window
        assert_eq!(cc.ssthresh_on_loss(&w, 21_000), 10_500);
        assert_eq!(cc.ssthresh_on_loss(&w, 1_000), 2_000);
    }
}
