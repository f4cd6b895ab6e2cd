//! htsim's STrack rules (`sim/strack.cpp`) against their closed forms.

use super::*;
use crate::units::US;

const MSS: u64 = 4000;

fn ack(now: Ps, delay: Ps, srtt: Ps) -> AckEvent {
    AckEvent {
        now,
        acked: MSS,
        ece: false,
        snd_una: 0,
        snd_nxt: 0,
        rtt: Some(delay),
        in_recovery: false,
        srtt,
        delay,
    }
}

fn params() -> Params {
    Params {
        base_rtt: TimeValue(10 * US),
        ..Params::default()
    }
}

/// A STrack sender with window `packets` x 4000 B (htsim's dumbbell: 12).
fn strack(packets: u64) -> (Strack, Window) {
    let mut cc = Strack::new(&params());
    let w = Window::new(packets, MSS);
    cc.set_path_links(4);
    cc.init(&w);
    (cc, w)
}

#[test]
fn the_target_is_the_base_target_at_htsims_defaults() {
    // per_hop 0: htsim's cloned routes have hop count 0.
    let (cc, _) = strack(12);
    assert_eq!(cc.target(), 20 * US);
    let mut p = params();
    p.per_hop = TimeValue(3_053_435);
    let mut hop = Strack::new(&p);
    hop.set_path_links(4);
    assert_eq!(hop.target(), 20 * US + 4 * 3_053_435);
}

#[test]
fn below_target_the_window_alternates_between_w_and_k_over_w() {
    // At a steady srtt of 16.4 us (htsim's dumbbell unloaded: 10 us of
    // pipes and two 3.2 us serialisations), K = 0.25 (20 - 16.4) us in ps
    // = 900,000 bytes^2: from 48,000 B the window goes to K / 48,000 =
    // 18.75 B, then back to 48,000 B, and so on (a period-2 orbit).
    let (mut cc, mut w) = strack(12);
    let srtt = 16_400_000;
    let k = 0.25 * (20 * US - srtt) as f64;
    let mut now = 100 * US;
    let mut prev = cc.cwnd();
    for i in 0..6 {
        cc.on_ack_any(&mut w, &ack(now, srtt, srtt));
        assert!(
            (cc.cwnd() * prev - k).abs() < 1e-6 * k,
            "ack {i}: {} x {prev} against K = {k}",
            cc.cwnd()
        );
        prev = cc.cwnd();
        now += US;
    }
    assert!((cc.cwnd() - 48_000.0).abs() < 1e-6);
}

#[test]
fn an_srtt_above_target_with_a_sample_below_sends_the_window_to_max() {
    // htsim's unsigned target - srtt wraps; the clamp gives max_cwnd.
    let (mut cc, mut w) = strack(12);
    cc.on_ack_any(&mut w, &ack(100 * US, 19 * US, 25 * US));
    assert_eq!(cc.cwnd(), 1000.0 * MSS as f64);
    // And a window under min_cwnd is clamped up to it (10 B): K / 4 MB.
    cc.on_ack_any(&mut w, &ack(101 * US, 16 * US, 16 * US));
    assert_eq!(cc.cwnd(), 10.0);
}

#[test]
fn above_target_the_decrease_is_swifts_and_once_per_rtt() {
    let (mut cc, mut w) = strack(12);
    // delay 30 us against a 20 us target: factor max(1 - 0.8 * 10/30, 0.5).
    let d = 30 * US;
    cc.on_ack_any(&mut w, &ack(100 * US, d, d));
    let want = 48_000.0 * (1.0 - 0.8 * 10.0 / 30.0);
    assert!((cc.cwnd() - want).abs() < 1e-6, "{}", cc.cwnd());
    // Within the smoothed RTT of the decrease: no further decrease.
    cc.on_ack_any(&mut w, &ack(110 * US, d, d));
    assert!((cc.cwnd() - want).abs() < 1e-6);
    // One RTT later it goes down again.
    cc.on_ack_any(&mut w, &ack(130 * US, d, d));
    assert!((cc.cwnd() - want * (1.0 - 0.8 * 10.0 / 30.0)).abs() < 1e-6);
}

#[test]
fn far_above_target_the_window_becomes_the_achieved_bdp() {
    let (mut cc, mut w) = strack(12);
    // ACKs every 2 us at 21 us delay (just above the 20 us target): the
    // window decreases at 2 us, then once per srtt (21 us): at 24 us.
    // The BDP count closes on the first ACK more than base_rtt (10 us)
    // after the last close: at 12, 24 and 36 us, 6 ACKs x 4000 B each.
    let mut now = 0;
    for _ in 0..22 {
        now += 2 * US;
        cc.on_ack_any(&mut w, &ack(now, 21 * US, 21 * US));
    }
    assert_eq!(cc.achieved_bdp(), 6.0 * MSS as f64);
    // At 46 us a 45 us sample (> 2 x target) may decrease (22 us since
    // the last): the window becomes the achieved BDP.
    now += 2 * US;
    cc.on_ack_any(&mut w, &ack(now, 45 * US, 21 * US));
    assert_eq!(cc.cwnd(), 6.0 * MSS as f64);
    // An ACK after more than base_rtt of silence invalidates the BDP.
    now += 30 * US;
    cc.on_ack_any(&mut w, &ack(now, 45 * US, 21 * US));
    assert_eq!(cc.achieved_bdp(), 0.0);
}

#[test]
fn after_recovery_the_window_halves_and_timeouts_reset_it() {
    let (mut cc, mut w) = strack(12);
    let a = ack(100 * US, 30 * US, 30 * US);
    cc.after_ack(&mut w, &a, None, true);
    let before = cc.cwnd();
    cc.after_ack(&mut w, &a, None, false);
    assert_eq!(cc.cwnd(), before * 0.5);
    assert_eq!(w.cwnd, (before * 0.5) as u64);
    // Five timeouts in a row: min_cwnd.
    let t = TimeoutEvent {
        now: 200 * US,
        flight: 0,
        prior_cwnd: 0,
        high_tx: 0,
    };
    for _ in 0..5 {
        cc.on_timeout(&mut w, &t);
    }
    assert_eq!(cc.cwnd(), 10.0);
    assert_eq!(w.cwnd, 10);
}

#[test]
fn below_one_packet_it_paces_cwnd_bytes_per_srtt() {
    let (mut cc, mut w) = strack(12);
    let srtt = 16_400_000;
    cc.on_ack_any(&mut w, &ack(100 * US, srtt, srtt));
    let rate = cc.pacing_rate().expect("18.75 B window: paced");
    assert!((rate - cc.cwnd() * 1e12 / srtt as f64).abs() < 1e-6 * rate);
}

#[test]
fn base_rtt_must_be_given() {
    let e = Params::default().validate().unwrap_err();
    assert!(e.to_string().contains("base_rtt"), "{e}");
    assert!(params().validate().is_ok());
}
