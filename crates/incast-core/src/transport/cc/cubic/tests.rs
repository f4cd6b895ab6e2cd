//! CUBIC's rules one by one, with scripted ACKs.

use super::*;
use crate::units::{MS, US};

const MSS: u64 = 1000;

fn ack(now: Ps, acked: u64, una: u64, nxt: u64, rtt: Ps) -> AckEvent {
    AckEvent {
        now,
        acked,
        ece: false,
        snd_una: una,
        snd_nxt: nxt,
        rtt: Some(rtt),
        in_recovery: false,
        srtt: rtt,
        delay: rtt,
    }
}

/// A window-limited sender whose every segment is ACKed one `rtt` after it
/// left: per round trip, cwnd/MSS ACKs of one segment each, evenly spread.
struct AckClock {
    now: Ps,
    una: u64,
}

impl AckClock {
    /// Feeds ACKs until `until`; returns (time, cwnd in segments) after each.
    fn run(&mut self, cc: &mut Cubic, w: &mut Window, until: Ps, rtt: Ps) -> Vec<(Ps, f64)> {
        let mut out = vec![];
        while self.now < until {
            let n = (w.cwnd / MSS).max(1);
            for _ in 0..n {
                self.now += rtt / n;
                self.una += MSS;
                let a = ack(self.now, MSS, self.una, self.una + w.cwnd, rtt);
                if !cc.on_ack_any(w, &a) {
                    cc.on_ack(w, &a);
                }
                out.push((self.now, w.cwnd as f64 / MSS as f64));
            }
        }
        out
    }
}

/// A loss at `cwnd` segments with a full window in flight, and the
/// transport's recovery ending with cwnd = ssthresh.
fn loss(cc: &mut Cubic, w: &mut Window, cwnd: u64) {
    w.cwnd = cwnd * MSS;
    w.ssthresh = cc.ssthresh_on_loss(w, cwnd * MSS);
    w.cwnd = w.ssthresh;
}

#[test]
fn k_and_the_window_after_a_loss() {
    let mut cc = Cubic::new(&Params::default());
    let mut w = Window::new(10, MSS);
    loss(&mut cc, &mut w, 100);
    assert_eq!(w.ssthresh, 70 * MSS, "§4.6: ssthresh = 0.7 x FlightSize");
    assert_eq!(cc.w_max(), Some(100.0), "§4.6: W_max = cwnd before the cut");
    // The first congestion-avoidance ACK starts the curve.
    let mut clock = AckClock { now: SEC, una: 0 };
    clock.run(&mut cc, &mut w, SEC + 1, 100 * MS);
    // §4.2: K = ∛(W_max (1 − β)/C) = ∛(100 x 0.3 / 0.4) = ∛75 s.
    let k = cc.k().unwrap();
    assert!((k - 75f64.cbrt()).abs() < 1e-12, "K = {k}");
}

#[test]
fn window_follows_the_cubic_curve_after_a_loss() {
    // RTT 100 ms, W_max 100 segments: K = 4.22 s. Over K the curve rises from
    // 70 to 100 while W_est (Reno) would reach 70 + 0.53 x 42 = 92: the cubic
    // curve is above W_est, so CUBIC is in its concave region, then convex.
    let rtt = 100 * MS;
    let mut cc = Cubic::new(&Params::default());
    let mut w = Window::new(10, MSS);
    loss(&mut cc, &mut w, 100);
    let mut clock = AckClock { now: 0, una: 0 };
    let samples = clock.run(&mut cc, &mut w, 6 * SEC, rtt);
    let t0 = samples[0].0; // t_epoch: the first ACK after the loss
    let k = 75f64.cbrt();
    let wc = |t: f64| 0.4 * (t - k).powi(3) + 100.0;
    for &(now, cwnd) in &samples[1..] {
        let t = (now - t0) as f64 / SEC as f64;
        // Each ACK moves cwnd toward W(t + RTT): over a round trip cwnd reaches
        // the target of its start, so cwnd lies between W(t) and W(t + RTT),
        // up to one segment of rounding (and the 1.5 cwnd clamp, far here).
        let lo = wc(t).min(wc(t + 0.1)) - 1.0;
        let hi = wc(t).max(wc(t + 0.1)) + 1.0;
        assert!(
            cwnd >= lo && cwnd <= hi,
            "t = {t:.3}: cwnd {cwnd} not in [{lo}, {hi}]"
        );
    }
    // Concave below W_max, then convex above it.
    let at = |t: f64| {
        samples
            .iter()
            .find(|s| (s.0 - t0) as f64 / SEC as f64 >= t)
            .unwrap()
            .1
    };
    assert!(at(k - 0.5) < 100.0 && at(k - 0.5) > 99.0);
    assert!(at(k + 1.5) > 101.0);
}

#[test]
fn reno_friendly_region_takes_over_at_small_rtt() {
    // RTT 100 us, W_max 20: K = ∛15 = 2.47 s, so the curve stays at ~14 for
    // thousands of round trips; W_est grows 0.53 segments per RTT (§4.3) and
    // CUBIC follows it: AIMD(0.53, 0.7).
    let rtt = 100 * US;
    let mut cc = Cubic::new(&Params::default());
    let mut w = Window::new(10, MSS);
    loss(&mut cc, &mut w, 20);
    assert_eq!(w.cwnd, 14 * MSS);
    let mut clock = AckClock { now: 0, una: 0 };
    let s = clock.run(&mut cc, &mut w, 10 * rtt, rtt);
    let alpha = 3.0 * 0.3 / 1.7;
    let cwnd = s.last().unwrap().1;
    // After ~10 round trips: 14 + 10 α = 19.3 segments (α per round trip of
    // cwnd ACKs; the rounds shorten a little as cwnd grows).
    assert!((cwnd - (14.0 + 10.0 * alpha)).abs() < 1.0, "cwnd {cwnd}");
    // Without the Reno-friendly region the curve barely moves in 1 ms.
    let mut flat = Cubic::new(&Params {
        reno_friendly: false,
        ..Params::default()
    });
    let mut w2 = Window::new(10, MSS);
    loss(&mut flat, &mut w2, 20);
    let mut clock = AckClock { now: 0, una: 0 };
    let s2 = clock.run(&mut flat, &mut w2, 10 * rtt, rtt);
    assert!(s2.last().unwrap().1 < 14.1, "{:?}", s2.last());
}

/// The Reno-friendly window (segments) when it first exceeds cwnd_prior (20
/// segments, the window at the loss) and 20 round trips later, RTT 100 us.
fn reno_friendly_growth_past_cwnd_prior(p: &Params) -> (f64, f64) {
    let rtt = 100 * US;
    let mut cc = Cubic::new(p);
    let mut w = Window::new(10, MSS);
    loss(&mut cc, &mut w, 20);
    let mut clock = AckClock { now: 0, una: 0 };
    // 14 -> 20 segments at α_cubic = 0.53 per round trip: about 12 round trips.
    while w.cwnd < 21 * MSS {
        let until = clock.now + rtt;
        clock.run(&mut cc, &mut w, until, rtt);
    }
    let before = w.cwnd as f64 / MSS as f64;
    let until = clock.now + 20 * rtt;
    let after = clock.run(&mut cc, &mut w, until, rtt).last().unwrap().1;
    (before, after)
}

#[test]
fn reno_friendly_alpha_stays_alpha_cubic_past_cwnd_prior() {
    // Linux's bictcp_update (tcp_cubic.c: tcp_cwnd += 1 per cwnd·beta_scale/8
    // ACKs, beta_scale = 8(1024 + 717)/3/(1024 − 717) = 15, so α = 8/15) and
    // ns-3's TcpCubic::Update keep α = 3(1 − β)/(1 + β) = 0.529 for the whole
    // stage: past cwnd_prior the window still grows 0.53 segments per round trip.
    // Closed form over 20 round trips: 20 α = 10.6 segments; the tolerance
    // (1.5) covers one segment of cwnd rounding at each end and the rounds
    // shortening as cwnd grows. α = 1 (RFC 9438's SHOULD) gives 20 segments.
    let alpha = 3.0 * 0.3 / 1.7;
    let (before, after) = reno_friendly_growth_past_cwnd_prior(&Params::default());
    assert!(
        (after - before - 20.0 * alpha).abs() < 1.5,
        "{before} -> {after}"
    );
    // RFC 9438 §4.3 with `rfc9438_alpha_one`: α = 1, one segment per round trip.
    let (before, after) = reno_friendly_growth_past_cwnd_prior(&Params {
        rfc9438_alpha_one: true,
        ..Params::default()
    });
    assert!((after - before - 20.0).abs() < 1.5, "{before} -> {after}");
}

#[test]
fn fast_convergence_lowers_w_max() {
    let mut cc = Cubic::new(&Params::default());
    let mut w = Window::new(10, MSS);
    loss(&mut cc, &mut w, 100);
    assert_eq!(cc.w_max(), Some(100.0));
    // The next loss comes at 80 < W_max: W_max = 80 (1 + β)/2 = 68 (§4.7).
    loss(&mut cc, &mut w, 80);
    assert!((cc.w_max().unwrap() - 68.0).abs() < 1e-9);
    assert_eq!(w.cwnd, 56 * MSS);
    // A loss above the previous W_max keeps the window as W_max.
    loss(&mut cc, &mut w, 90);
    assert_eq!(cc.w_max(), Some(90.0));
    // Without fast convergence W_max is the window at the loss.
    let mut slow = Cubic::new(&Params {
        fast_convergence: false,
        ..Params::default()
    });
    loss(&mut slow, &mut w, 100);
    loss(&mut slow, &mut w, 80);
    assert_eq!(slow.w_max(), Some(80.0));
}

#[test]
fn one_ecn_reduction_per_window() {
    let mut cc = Cubic::new(&Params {
        ecn: true,
        ..Params::default()
    });
    assert!(cc.ecn_capable());
    assert!(!Cubic::new(&Params::default()).ecn_capable());
    let mut w = Window::new(100, MSS);
    w.ssthresh = 50 * MSS;
    let mut e = ack(0, MSS, MSS, 100 * MSS, MS);
    e.ece = true;
    // Flight before this ACK: 100 segments: cwnd = ssthresh = 70 (§4.6).
    assert!(cc.on_ack_any(&mut w, &e));
    assert_eq!((w.cwnd, w.ssthresh), (70 * MSS, 70 * MSS));
    assert_eq!(cc.w_max(), Some(100.0));
    // More ECE for the same window of data (snd_una up to 100 segments): no cut.
    for i in 2..=100 {
        let mut e = ack(i, MSS, i * MSS, 170 * MSS, MS);
        e.ece = true;
        assert!(!cc.on_ack_any(&mut w, &e), "i={i}");
    }
    assert_eq!(w.cwnd, 70 * MSS);
    // Once snd_una passes the cut point, ECE cuts again.
    let mut e = ack(200, MSS, 101 * MSS, 170 * MSS, MS);
    e.ece = true;
    assert!(cc.on_ack_any(&mut w, &e));
    assert_eq!(w.cwnd, 49 * MSS); // 0.7 x 70 segments in flight
                                  // ECE is ignored during loss recovery, and by a non-ECN CUBIC.
    let mut e = ack(300, MSS, 300 * MSS, 400 * MSS, MS);
    e.ece = true;
    e.in_recovery = true;
    assert!(!cc.on_ack_any(&mut w, &e));
    let mut plain = Cubic::new(&Params::default());
    e.in_recovery = false;
    assert!(!plain.on_ack_any(&mut w, &e));
}

#[test]
fn loss_after_ecn_cut_in_the_same_window_is_one_event_for_ecn() {
    let mut cc = Cubic::new(&Params {
        ecn: true,
        ..Params::default()
    });
    let mut w = Window::new(100, MSS);
    cc.on_ack_any(&mut w, &ack(0, 0, 0, 100 * MSS, MS));
    w.ssthresh = cc.ssthresh_on_loss(&w, 100 * MSS);
    // ECE for data sent before the loss does not cut again.
    let mut e = ack(1, MSS, 50 * MSS, 100 * MSS, MS);
    e.ece = true;
    assert!(!cc.on_ack_any(&mut w, &e));
}

#[test]
fn timeout_sets_ssthresh_with_beta_and_restarts_the_curve_at_k_zero() {
    let mut cc = Cubic::new(&Params::default());
    let mut w = Window::new(10, MSS);
    loss(&mut cc, &mut w, 100);
    // The transport's timeout: ssthresh = FlightSize/2, cwnd = 1 SMSS; then CUBIC.
    w.ssthresh = 40 * MSS;
    w.cwnd = MSS;
    let t = TimeoutEvent {
        now: 0,
        flight: 80 * MSS,
        prior_cwnd: 80 * MSS,
        high_tx: 500 * MSS,
    };
    cc.on_timeout(&mut w, &t);
    assert_eq!(w.ssthresh, 56 * MSS, "§4.8: ssthresh = 0.7 x FlightSize");
    assert_eq!(w.cwnd, MSS);
    // Slow start back to ssthresh, then the first stage: K = 0, W_max = cwnd_epoch (§4.8).
    let mut clock = AckClock { now: 0, una: 0 };
    clock.run(&mut cc, &mut w, 20 * MS, MS);
    assert!(w.cwnd >= 56 * MSS);
    assert_eq!(cc.k(), Some(0.0));
    let w_max = cc.w_max().unwrap();
    assert!((56.0..=58.0).contains(&w_max), "W_max {w_max}");
}

#[test]
fn hystart_leaves_slow_start_on_an_rtt_increase() {
    // RTT 10 ms for two rounds, then 15 ms: RttThresh = max(4 ms, min(10/8 ms,
    // 16 ms)) = 4 ms, and 15 >= 10 + 4: conservative slow start (RFC 9406 §4.2).
    let p = Params {
        hystart: true,
        ..Params::default()
    };
    let mut cc = Cubic::new(&p);
    let mut w = Window::new(10, MSS);
    let mut una = 0;
    let mut now = 0;
    let mut round = |cc: &mut Cubic, w: &mut Window, rtt: Ps| {
        // One round: the window's worth of ACKs; the round ends at the
        // snd_nxt of its first ACK.
        let n = w.cwnd / MSS;
        let before = w.cwnd;
        for _ in 0..n {
            now += rtt / n;
            una += MSS;
            cc.on_ack(w, &ack(now, MSS, una, una + w.cwnd, rtt));
        }
        w.cwnd - before
    };
    assert_eq!(
        round(&mut cc, &mut w, 10 * MS),
        10 * MSS,
        "slow start doubles"
    );
    assert_eq!(round(&mut cc, &mut w, 10 * MS), 20 * MSS);
    assert!(!cc.in_css());
    // The third round sees 15 ms: after N_RTT_SAMPLE = 8 samples, CSS: growth /4.
    let g = round(&mut cc, &mut w, 15 * MS);
    assert!(cc.in_css());
    assert_eq!(
        g,
        8 * MSS + (40 - 8) * MSS / 4,
        "8 ACKs at full rate, 32 at a quarter"
    );
    assert_eq!(w.ssthresh, u64::MAX);
    // CSS lasts CSS_ROUNDS = 5 rounds (the entry round counts), then
    // congestion avoidance with ssthresh = cwnd.
    for _ in 0..4 {
        round(&mut cc, &mut w, 15 * MS);
        assert!(cc.in_css());
        assert_eq!(w.ssthresh, u64::MAX);
    }
    round(&mut cc, &mut w, 15 * MS);
    // The first ACK of the sixth round ended CSS with ssthresh = cwnd; the
    // rest were congestion avoidance, whose curve starts there with K = 0
    // and W_max = that window (RFC 9438 §4.10: no loss, no W_max yet).
    assert!(!cc.in_css());
    assert!(w.ssthresh < u64::MAX && w.cwnd >= w.ssthresh);
    assert_eq!(cc.k(), Some(0.0));
    assert_eq!(cc.w_max(), Some(w.ssthresh as f64 / MSS as f64));
}

#[test]
fn hystart_resumes_slow_start_when_the_rtt_falls_back() {
    let p = Params {
        hystart: true,
        ..Params::default()
    };
    let mut cc = Cubic::new(&p);
    let mut w = Window::new(10, MSS);
    let (mut una, mut now) = (0, 0);
    for rtt in [10 * MS, 10 * MS, 15 * MS] {
        let n = w.cwnd / MSS;
        for _ in 0..n {
            now += rtt / n;
            una += MSS;
            let a = ack(now, MSS, una, una + w.cwnd, rtt);
            cc.on_ack(&mut w, &a);
        }
    }
    assert!(cc.in_css());
    // A round whose minimum RTT is below the CSS baseline (15 ms): spurious exit.
    let n = w.cwnd / MSS;
    for i in 0..n {
        now += MS;
        una += MSS;
        let a = ack(now, MSS, una, una + w.cwnd, 11 * MS);
        cc.on_ack(&mut w, &a);
        if i == 7 {
            assert!(
                !cc.in_css(),
                "8 samples below the baseline: back to slow start"
            );
        }
    }
}

#[test]
fn hystart_l_caps_slow_start_growth_per_ack() {
    let mut cc = Cubic::new(&Params {
        hystart: true,
        ..Params::default()
    });
    let mut w = Window::new(10, MSS);
    // A stretch ACK of 20 segments grows cwnd by at most L = 8 segments.
    cc.on_ack(&mut w, &ack(MS, 20 * MSS, 20 * MSS, 30 * MSS, MS));
    assert_eq!(w.cwnd, 18 * MSS);
}

#[test]
fn params_are_validated() {
    assert!(Params::default().validate().is_ok());
    let e = Params {
        beta: 1.0,
        ..Params::default()
    }
    .validate()
    .unwrap_err();
    assert_eq!(e.field, "beta");
    let e = Params {
        hystart_css_growth_divisor: 1,
        ..Params::default()
    }
    .validate()
    .unwrap_err();
    assert_eq!(e.field, "hystart_css_growth_divisor");
    assert!(e.message.contains("at least 2"));
    let e = Params {
        hystart_min_rtt_thresh: TimeValue(20 * MS),
        ..Params::default()
    }
    .validate()
    .unwrap_err();
    assert_eq!(e.field, "hystart_min_rtt_thresh");
    let e = Params {
        rfc9438_alpha_one: true,
        reno_friendly: false,
        ..Params::default()
    }
    .validate()
    .unwrap_err();
    assert_eq!(e.field, "rfc9438_alpha_one");
    assert!(e.message.contains("reno_friendly = true"));
}

/// The decrease is based on cwnd, as Linux's `bictcp_recalc_ssthresh`
/// (`max(snd_cwnd * beta / 1024, 2)`) and ns-3's `TcpCubic::GetSsThresh`
/// (`max(segCwnd * 0.7, 2)`), not on a FlightSize that holds the segments
/// sent on the first duplicate ACKs of a SACK recovery: cwnd 100, three
/// segments SACKed and three new ones sent, FlightSize 103 -> ssthresh 70
/// (RFC 9438's FlightSize x β gave 72.1). When the flow is not cwnd-limited
/// (FlightSize 50 < cwnd 100) it stays FlightSize x β, as RFC 9438 §4.6
/// requires of cwnd-based implementations.
#[test]
fn ssthresh_is_beta_times_cwnd_as_linux_or_flightsize_below_it() {
    let mut cc = Cubic::new(&Params::default());
    let mut w = Window::new(100, MSS);
    assert_eq!(
        cc.ssthresh_on_loss(&w, 103 * MSS),
        70 * MSS,
        "Linux: 0.7 x cwnd"
    );
    assert_eq!(cc.w_max(), Some(100.0));
    let mut cc = Cubic::new(&Params::default());
    assert_eq!(
        cc.ssthresh_on_loss(&w, 50 * MSS),
        35 * MSS,
        "§4.6: 0.7 x FlightSize"
    );
    // ECN-Echo: the same rule (Linux's tcp_enter_cwr calls the same ssthresh).
    let mut cc = Cubic::new(&Params {
        ecn: true,
        ..Params::default()
    });
    w.cwnd = 100 * MSS;
    let mut e = ack(0, MSS, MSS, 104 * MSS, MS);
    e.ece = true;
    assert!(cc.on_ack_any(&mut w, &e));
    assert_eq!(w.ssthresh, 70 * MSS);
    assert_eq!(w.cwnd, 70 * MSS);
}
