//! BBR's model and state machine with scripted ACKs and rate samples.

use super::*;
use crate::units::US;

const MSS: u64 = 1000;

/// Drives a BBR instance with scripted ACKs: each call to [`Script::round`]
/// is one packet-timed round trip whose ACKs all acknowledge segments sent
/// after the previous round's ACKs (their `prior_delivered` is what had been
/// delivered when the round began), so every round has exactly one round start.
struct Script {
    bbr: Bbr,
    w: Window,
    now: Ps,
    una: u64,
    delivered: u64,
    round_base: u64,
}

impl Script {
    fn new(p: Params) -> Script {
        let mut bbr = Bbr::new(&p);
        let w = Window::new(10, MSS);
        bbr.init(&w);
        Script {
            bbr,
            w,
            now: 0,
            una: 0,
            delivered: 0,
            round_base: 0,
        }
    }

    /// One ACK of one segment after `dt`, with a rate sample of `rate` bytes/s,
    /// an RTT sample `rtt`, and `flight` bytes in flight before it.
    fn ack(&mut self, dt: Ps, rate: Option<f64>, app_limited: bool, rtt: Ps, flight: u64) {
        self.now += dt;
        self.una += MSS;
        self.delivered += MSS;
        let rs = RateSample {
            delivered_total: self.delivered,
            prior_delivered: Some(self.round_base),
            delivered: self.delivered - self.round_base,
            interval: rtt,
            delivery_rate: rate,
            is_app_limited: app_limited,
        };
        let a = AckEvent {
            now: self.now,
            acked: MSS,
            ece: false,
            snd_una: self.una,
            snd_nxt: self.una + flight - MSS,
            rtt: Some(rtt),
            in_recovery: false,
            srtt: rtt,
            delay: rtt,
        };
        self.bbr.on_ack(&mut self.w, &a);
        self.bbr.after_ack(&mut self.w, &a, Some(&rs), false);
    }

    /// A round trip of `n` ACKs spread over `rtt`, each with a sample `rate`.
    fn round(&mut self, n: u64, rate: f64, app_limited: bool, rtt: Ps, flight: u64) {
        for _ in 0..n {
            self.ack(rtt / n, Some(rate), app_limited, rtt, flight);
        }
        self.round_base = self.delivered;
    }
}

/// 100 MB/s (800 Mb/s) and 100 us: BDP = 10 KB, 10 segments.
const BW: f64 = 1e8;
const RTT: Ps = 100 * US;

/// A script that has left STARTUP and DRAIN and cruises in PROBE_BW on the
/// 100 MB/s, 100 us path.
fn in_probe_bw(p: Params) -> Script {
    let mut s = Script::new(p);
    // 300 KB in flight: above BBRInflight(1.0) (BDP + 3 quanta of 64 KB), so
    // DRAIN does not end before the script says so.
    for k in 0..8 {
        let rate = (BW / 8.0 * 2f64.powi(k)).min(BW);
        s.round(10, rate, false, RTT, 300 * MSS);
    }
    assert_eq!(s.bbr.mode(), Mode::Drain);
    s.round(10, BW, false, RTT, 5 * MSS);
    assert_eq!(s.bbr.mode(), Mode::ProbeBw);
    s
}

#[test]
fn startup_paces_at_high_gain_and_exits_to_drain_after_three_flat_rounds() {
    let mut s = Script::new(Params::default());
    assert_eq!(s.bbr.mode(), Mode::Startup);
    assert!((s.bbr.pacing_gain() - 2.885).abs() < 1e-3);
    assert!((s.bbr.cwnd_gain() - 2.885).abs() < 1e-3);
    // Before the first RTT sample (and without `initial_rtt`) nothing is paced.
    assert_eq!(s.bbr.pacing_rate(), None);
    // The delivery rate doubles each round for 4 rounds, then stays flat
    // (from 10 segments per 100 us, the initial window's nominal rate).
    let rates = [1e8, 2e8, 4e8, 8e8, 8e8, 8e8];
    for (i, &r) in rates.iter().enumerate() {
        s.round(10, r, false, RTT, 3000 * MSS);
        assert_eq!(s.bbr.mode(), Mode::Startup, "round {i}");
        assert_eq!(s.bbr.round_count(), i as u64 + 1);
        // §4.2.1: pacing rate = 2.885 x BtlBw while it grows.
        let pr = s.bbr.pacing_rate().unwrap();
        assert!((pr / (2.885 * r) - 1.0).abs() < 1e-3, "round {i}: {pr}");
    }
    // Rounds 5 and 6 did not grow 25 %: the third flat round fills the pipe.
    s.round(10, 8e8, false, RTT, 3000 * MSS);
    assert!(s.bbr.filled_pipe());
    assert_eq!(s.bbr.mode(), Mode::Drain);
    assert!(
        (s.bbr.pacing_gain() - 1.0 / 2.885).abs() < 1e-3,
        "§4.3.3: 1/high_gain"
    );
}

#[test]
fn app_limited_rounds_do_not_count_toward_a_full_pipe() {
    let mut s = Script::new(Params::default());
    s.round(10, 8e7, false, RTT, 20 * MSS);
    for _ in 0..10 {
        s.round(10, 8e7, true, RTT, 5 * MSS);
    }
    assert!(
        !s.bbr.filled_pipe(),
        "§4.3.2.2: app-limited rounds are skipped"
    );
    assert_eq!(s.bbr.mode(), Mode::Startup);
}

#[test]
fn drain_ends_when_inflight_is_one_bdp() {
    let draft = Params {
        send_quantum: SendQuantum::Draft,
        ..Params::default()
    };
    let mut s = Script::new(draft);
    for k in 0..8 {
        s.round(10, (BW / 8.0 * 2f64.powi(k)).min(BW), false, RTT, 300 * MSS);
    }
    assert_eq!(s.bbr.mode(), Mode::Drain);
    // BBRInflight(1.0) = BDP (10 KB) + 3 send quanta; DRAIN paces at
    // 100 MB/s / 2.885 = 34.7 MB/s, so a quantum is 1 ms of that (§4.2.2).
    let one_bdp = s.bbr.0.inflight(1.0);
    let q = (BW / Params::default().high_gain / 1000.0) as u64;
    assert_eq!(s.bbr.send_quantum(), q);
    assert_eq!(one_bdp, 10_000 + 3 * q);
    s.ack(US, Some(BW), false, RTT, one_bdp + MSS + MSS); // after the ACK: one_bdp + MSS
    assert_eq!(s.bbr.mode(), Mode::Drain);
    s.ack(US, Some(BW), false, RTT, one_bdp + MSS); // after the ACK: one BDP
    assert_eq!(s.bbr.mode(), Mode::ProbeBw);
    // §4.3.4.2: the first phase is never the 3/4 one.
    assert_ne!(s.bbr.cycle_index(), 1);
    assert_eq!(s.bbr.cwnd_gain(), 2.0);
}

#[test]
fn probe_bw_cycles_through_the_eight_gains_one_rtprop_each() {
    let mut s = in_probe_bw(Params::default());
    // ACKs every RTT/5 with enough in flight for the 5/4 phase to end on
    // time (prior_inflight >= BBRInflight(1.25)) and too much for the 3/4
    // phase to end early: every phase lasts just over one RTprop.
    let full = s.bbr.0.inflight(1.25) + MSS;
    let mut phases = vec![(s.bbr.cycle_index(), s.now)];
    while phases.len() < 20 {
        s.ack(RTT / 5, Some(BW), false, RTT, full);
        if s.bbr.cycle_index() != phases.last().unwrap().0 {
            phases.push((s.bbr.cycle_index(), s.now));
        }
    }
    // (The phase running when recording began started earlier: skip it.)
    for pair in phases[1..].windows(2) {
        assert_eq!(pair[1].0, (pair[0].0 + 1) % 8, "phases advance in order");
        let len = pair[1].1 - pair[0].1;
        assert!(
            len > RTT && len <= RTT + RTT / 5,
            "phase {} lasted {len} ps",
            pair[0].0
        );
    }
    // The gains of one full cycle, from phase 0.
    let mut gains = vec![];
    let start = phases.iter().position(|p| p.0 == 0).unwrap();
    for &(i, _) in &phases[start..start + 8] {
        gains.push(PACING_GAIN_CYCLE[i]);
    }
    assert_eq!(gains, [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
}

#[test]
fn probe_phase_waits_for_inflight_and_drain_phase_ends_early() {
    let mut s = in_probe_bw(Params::default());
    while s.bbr.cycle_index() != 0 {
        s.ack(RTT / 5, Some(BW), false, RTT, 40 * MSS);
    }
    // 5/4 phase: after 3 RTprops, still not over while inflight < 1.25 BDP + quanta.
    let low = s.bbr.0.inflight(1.0);
    for _ in 0..15 {
        s.ack(RTT / 5, Some(BW), false, RTT, low);
    }
    assert_eq!(s.bbr.cycle_index(), 0);
    // Reaching 1.25 x BDP + quanta ends it.
    let high = s.bbr.0.inflight(1.25);
    s.ack(RTT / 5, Some(BW), false, RTT, high);
    assert_eq!(s.bbr.cycle_index(), 1);
    assert_eq!(s.bbr.pacing_gain(), 0.75);
    // 3/4 phase: ends at once when prior_inflight <= one BDP + quanta.
    s.ack(US, Some(BW), false, RTT, low);
    assert_eq!(s.bbr.cycle_index(), 2);
}

#[test]
fn cwnd_and_pacing_rate_follow_the_model_in_probe_bw() {
    let mut s = in_probe_bw(Params::default());
    for _ in 0..200 {
        s.ack(RTT / 10, Some(BW), false, RTT, 20 * MSS);
    }
    // §4.2.3.2: cwnd = 2 x BDP + 3 quanta; the quantum one segment (ns-3).
    let q = s.bbr.send_quantum();
    assert_eq!(q, MSS);
    let bdp = 10_000;
    assert_eq!(s.w.cwnd, 2 * bdp + 3 * q);
    assert_eq!(s.bbr.target_cwnd(), s.w.cwnd);
    // §4.2.1: pacing rate = gain x BtlBw.
    let pr = s.bbr.pacing_rate().unwrap();
    assert!((pr / (s.bbr.pacing_gain() * BW) - 1.0).abs() < 1e-9);
    // The draft's quantum (§4.2.2): at 10 segments per 100 ms the pacing rate
    // is 2.3 Mb/s, under 24 Mb/s: 2 segments.
    let mut slow = Script::new(Params {
        send_quantum: SendQuantum::Draft,
        ..Params::default()
    });
    for _ in 0..3 {
        slow.round(10, 1e5, false, 100 * MS, 500 * MSS);
    }
    assert_eq!(slow.bbr.send_quantum(), 2 * MSS);
}

#[test]
fn bandwidth_filter_keeps_the_max_of_ten_rounds() {
    let mut s = Script::new(Params::default());
    s.round(10, 5e7, false, RTT, 20 * MSS);
    assert_eq!(s.bbr.btl_bw(), 5e7);
    for i in 0..10 {
        s.round(10, 2e7, false, RTT, 20 * MSS);
        assert_eq!(s.bbr.btl_bw(), 5e7, "round {i}: the max is kept");
    }
    // The 5e7 sample is now more than 10 rounds old.
    s.round(10, 2e7, false, RTT, 20 * MSS);
    assert_eq!(s.bbr.btl_bw(), 2e7);
}

#[test]
fn app_limited_samples_do_not_lower_the_estimate() {
    let mut s = Script::new(Params::default());
    s.round(10, 5e7, false, RTT, 20 * MSS);
    for _ in 0..30 {
        s.round(10, 1e7, true, RTT, 2 * MSS);
    }
    assert_eq!(
        s.bbr.btl_bw(),
        5e7,
        "§4.1.1.4: low app-limited samples are ignored"
    );
    // A higher app-limited sample does raise it.
    s.round(10, 6e7, true, RTT, 2 * MSS);
    assert_eq!(s.bbr.btl_bw(), 6e7);
}

#[test]
fn probe_rtt_after_the_min_rtt_window_and_back_after_200ms_and_a_round() {
    let p = Params {
        min_rtt_window: TimeValue(50 * MS),
        ..Params::default()
    };
    let mut s = in_probe_bw(p);
    let cwnd_before = {
        for _ in 0..100 {
            s.ack(RTT / 10, Some(BW), false, RTT, 20 * MSS);
        }
        s.w.cwnd
    };
    // RTT samples above RTprop for the whole window: no refresh.
    let stamp = s.bbr.0.rtprop_stamp;
    while s.now <= stamp + 50 * MS {
        assert_ne!(s.bbr.mode(), Mode::ProbeRtt);
        s.ack(RTT / 10, Some(BW), false, RTT + 10 * US, 20 * MSS);
    }
    // §4.3.5: expired: PROBE_RTT, cwnd 4 packets, gains 1; what is sent is marked app-limited.
    assert_eq!(s.bbr.mode(), Mode::ProbeRtt);
    assert_eq!(s.w.cwnd, 4 * MSS);
    assert_eq!((s.bbr.pacing_gain(), s.bbr.cwnd_gain()), (1.0, 1.0));
    assert!(s.bbr.mark_app_limited());
    // In flight falls to 4 packets: the 200 ms clock starts.
    s.ack(US, Some(BW), false, RTT, 4 * MSS);
    let start = s.now;
    // 200 ms of ACKs (rounds keep starting): still in PROBE_RTT. Their samples
    // are low and application-limited (the transport marked them).
    while s.now < start + 200 * MS {
        s.round(4, BW / 2.5, true, RTT, 4 * MSS);
        if s.now <= start + 200 * MS {
            assert_eq!(s.bbr.mode(), Mode::ProbeRtt, "at {}", s.now - start);
        }
    }
    // Past 200 ms and a round: back to PROBE_BW with the window restored.
    s.round(4, BW / 2.5, true, RTT, 4 * MSS);
    assert_eq!(s.bbr.mode(), Mode::ProbeBw);
    assert_eq!(s.bbr.btl_bw(), BW);
    assert!(s.w.cwnd >= cwnd_before, "{} < {cwnd_before}", s.w.cwnd);
    s.ack(US, Some(BW), false, RTT, 20 * MSS);
    assert!(!s.bbr.mark_app_limited());
    // RTprop was refreshed with the latest sample at expiry.
    assert_eq!(s.bbr.rtprop(), Some(RTT));
}

#[test]
fn probe_rtt_exit_needs_a_round_as_well_as_200ms() {
    let p = Params {
        min_rtt_window: TimeValue(10 * MS),
        ..Params::default()
    };
    let mut s = in_probe_bw(p);
    let stamp = s.bbr.0.rtprop_stamp;
    while s.now <= stamp + 10 * MS {
        s.ack(RTT / 10, Some(BW), false, RTT + 10 * US, 20 * MSS);
    }
    assert_eq!(s.bbr.mode(), Mode::ProbeRtt);
    s.ack(US, Some(BW), false, RTT, 4 * MSS);
    // 300 ms of ACKs that all belong to the same round (no round start).
    for _ in 0..3000 {
        s.ack(100 * US, Some(BW / 2.5), true, RTT, 4 * MSS);
    }
    assert_eq!(s.bbr.mode(), Mode::ProbeRtt);
    s.round_base = s.delivered;
    s.ack(US, Some(BW / 2.5), true, RTT, 4 * MSS);
    assert_eq!(s.bbr.mode(), Mode::ProbeBw);
}

#[test]
fn fast_recovery_conserves_packets_then_restores_the_window() {
    let mut s = in_probe_bw(Params::default());
    for _ in 0..300 {
        s.ack(RTT / 10, Some(BW), false, RTT, 20 * MSS);
    }
    let good = s.w.cwnd;
    assert_eq!(good, s.bbr.target_cwnd());
    // The transport enters fast recovery on a third duplicate ACK (30 segments in flight).
    let dup = |s: &mut Script, in_rec: bool, flight: u64| {
        s.now += US;
        let a = AckEvent {
            now: s.now,
            acked: 0,
            ece: false,
            snd_una: s.una,
            snd_nxt: s.una + flight,
            rtt: None,
            in_recovery: in_rec,
            srtt: RTT,
            delay: RTT,
        };
        s.bbr.after_ack(&mut s.w, &a, None, true);
    };
    dup(&mut s, false, 30 * MSS);
    // §4.2.3.4: cwnd = in flight + 1 packet (minus the one presumed lost,
    // plus the one this ACK delivered, by packet conservation).
    assert_eq!(s.w.cwnd, 31 * MSS);
    // The sender sent one more; the next duplicate lets exactly one more go.
    dup(&mut s, true, 31 * MSS);
    assert_eq!(
        s.w.cwnd,
        32 * MSS,
        "packet conservation: one out per one in"
    );
    // The full ACK ends recovery: the window before recovery comes back.
    s.now += US;
    s.una += 30 * MSS;
    s.delivered += 30 * MSS;
    let a = AckEvent {
        now: s.now,
        acked: 30 * MSS,
        ece: false,
        snd_una: s.una,
        snd_nxt: s.una,
        rtt: Some(RTT),
        in_recovery: true,
        srtt: RTT,
        delay: RTT,
    };
    s.bbr.after_ack(&mut s.w, &a, None, false);
    assert_eq!(s.w.cwnd, good);
}

#[test]
fn timeout_restarts_from_one_packet_and_restores_after_repair() {
    let mut s = in_probe_bw(Params::default());
    for _ in 0..300 {
        s.ack(RTT / 10, Some(BW), false, RTT, 20 * MSS);
    }
    let good = s.w.cwnd;
    assert_eq!(good, s.bbr.target_cwnd());
    s.w.cwnd = MSS;
    let t = TimeoutEvent {
        now: 0,
        flight: 20 * MSS,
        prior_cwnd: good,
        high_tx: s.una + 20 * MSS,
    };
    s.bbr.on_timeout(&mut s.w, &t);
    assert_eq!(s.w.cwnd, MSS);
    s.ack(RTT, Some(BW), false, RTT, MSS);
    assert!(s.w.cwnd < good, "still repairing");
    for _ in 0..19 {
        s.ack(US, Some(BW), false, RTT, MSS);
    }
    assert_eq!(s.w.cwnd, good, "repair done: the last good window is back");
}

#[test]
fn initial_rtt_sets_the_first_pacing_rate() {
    let p = Params {
        initial_rtt: Some(TimeValue(10 * US)),
        ..Params::default()
    };
    let mut b = Bbr::new(&p);
    b.init(&Window::new(10, MSS));
    // §4.2.1: high_gain x InitialCwnd / RTT = 2.885 x 10 KB / 10 us.
    let r = b.pacing_rate().unwrap();
    assert!((r / (2.885 * 1e9) - 1.0).abs() < 1e-3, "{r}");
}

#[test]
fn params_are_validated() {
    assert!(Params::default().validate().is_ok());
    for (p, field) in [
        (
            Params {
                high_gain: 1.0,
                ..Params::default()
            },
            "high_gain",
        ),
        (
            Params {
                min_rtt_window: TimeValue(0),
                ..Params::default()
            },
            "min_rtt_window",
        ),
        (
            Params {
                min_pipe_cwnd: 0,
                ..Params::default()
            },
            "min_pipe_cwnd",
        ),
    ] {
        assert_eq!(p.validate().unwrap_err().field, field);
    }
}
