//! Proportional Rate Reduction (RFC 6937), the slow-start reduction bound
//! (PRR-SSRB): how many bytes a sender in SACK loss recovery may send on
//! each ACK, so that the window comes down to `ssthresh` smoothly over one
//! round trip and, when losses took the flight below `ssthresh`, climbs back
//! no faster than slow start.

/// PRR state of one recovery episode (RFC 6937 §3.1).
#[derive(Clone, Copy, Debug, Default)]
pub struct Prr {
    /// "Total bytes delivered in recovery".
    delivered: u64,
    /// "Total bytes sent in recovery".
    out: u64,
    /// "FlightSize right before recovery".
    recover_fs: u64,
}

impl Prr {
    /// RFC 6937 §3.1, "At the beginning of recovery": prr_delivered = 0,
    /// prr_out = 0, RecoverFS = snd.nxt - snd.una.
    pub fn start(recover_fs: u64) -> Prr {
        Prr {
            delivered: 0,
            out: 0,
            recover_fs: recover_fs.max(1),
        }
    }

    /// RFC 6937 §3.1, "On every ACK starting or during recovery": the bytes
    /// (`sndcnt`) the sender may send now, given the bytes this ACK reports
    /// delivered (`DeliveredData = change_in(snd.una) + change_in(SACKd)`),
    /// the `pipe` after it (RFC 6675 SetPipe) and `ssthresh`.
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: u64, mss: u64) -> u64 {
        self.delivered += delivered;
        if pipe > ssthresh {
            // "Proportional Rate Reduction":
            // sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out
            let target =
                (self.delivered as u128 * ssthresh as u128).div_ceil(self.recover_fs as u128);
            (target as u64).saturating_sub(self.out)
        } else {
            // "PRR-SSRB": limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS;
            // sndcnt = MIN(ssthresh - pipe, limit).
            let limit = self.delivered.saturating_sub(self.out).max(delivered) + mss;
            (ssthresh - pipe).min(limit)
        }
    }

    /// RFC 6937 §3.1, "On any data transmission or retransmission":
    /// prr_out += (data sent).
    #[inline]
    pub fn on_send(&mut self, bytes: u64) {
        self.out += bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// RFC 6937 §3.2's first example: 20 segments in flight, one lost,
    /// ssthresh 10: PRR sends one segment for every two delivered, spread
    /// over the whole recovery (Reno would send nothing for half an RTT).
    #[test]
    fn one_loss_sends_one_per_two_delivered() {
        let mut prr = Prr::start(20 * MSS);
        let mut pipe = 19 * MSS; // one segment lost
        let mut sent = vec![];
        for _ in 0..19 {
            pipe -= MSS; // each ACK delivers one segment
            let n = prr.on_ack(MSS, pipe, 10 * MSS, MSS);
            let segs = n / MSS;
            prr.on_send(segs * MSS);
            pipe += segs * MSS;
            sent.push(segs);
        }
        // ceil(k x 10000 / 20000) bytes after k ACKs of 1000: a segment
        // every second ACK (bytes, not the RFC's segments, so the first
        // ACK's half segment waits for the second).
        assert_eq!(sent.iter().sum::<u64>(), 10);
        assert_eq!(&sent[..4], &[0, 1, 0, 1]);
        assert_eq!(pipe, 10 * MSS, "the window ends at ssthresh");
    }

    /// RFC 6937 §3.2's second example: losses took pipe below ssthresh;
    /// PRR-SSRB grows it by at most one MSS more than what is delivered.
    #[test]
    fn ssrb_grows_like_slow_start_below_ssthresh() {
        let mut prr = Prr::start(20 * MSS);
        // 15 of 20 lost; pipe 4 segments after this ACK.
        let n = prr.on_ack(MSS, 4 * MSS, 10 * MSS, MSS);
        assert_eq!(n, 2 * MSS, "DeliveredData + 1 MSS");
        prr.on_send(n);
        let n = prr.on_ack(MSS, 5 * MSS, 10 * MSS, MSS);
        assert_eq!(n, 2 * MSS);
        prr.on_send(n);
        // Near ssthresh: no more than ssthresh - pipe.
        let n = prr.on_ack(3 * MSS, 9 * MSS, 10 * MSS, MSS);
        assert_eq!(n, MSS);
    }

    #[test]
    fn nothing_when_prr_out_is_ahead() {
        let mut prr = Prr::start(10 * MSS);
        prr.on_send(5 * MSS);
        assert_eq!(prr.on_ack(MSS, 9 * MSS, 5 * MSS, MSS), 0);
    }
}
