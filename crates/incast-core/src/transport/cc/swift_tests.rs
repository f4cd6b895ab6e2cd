//! Swift's rules against Algorithm 1's and §3.1's closed forms.

use super::*;
use crate::transport::fixtures;
use crate::transport::{SendState, TcpFlow};

const MSS: u64 = 1000;

fn ack(now: Ps, acked: u64, delay: Ps, srtt: Ps) -> AckEvent {
    AckEvent {
        now,
        acked,
        ece: false,
        snd_una: 0,
        snd_nxt: 0,
        rtt: Some(delay),
        in_recovery: false,
        srtt,
        delay,
    }
}

/// A Swift sender with window `packets` x 1000 B on a path of `links` links.
fn swift(params: Params, packets: u64, links: u32) -> (Swift, Window) {
    let mut cc = Swift::new(&params);
    let w = Window::new(packets, MSS);
    cc.set_path_links(links);
    cc.init(&w);
    (cc, w)
}

/// No flow scaling and no hop scaling: the target is `base_target` alone.
fn flat(base_us: u64) -> Params {
    Params {
        base_target: TimeValue(base_us * US),
        per_hop: TimeValue(0),
        // fs = alpha/sqrt(cwnd) + beta is 0 at fs_max_cwnd and negative
        // above it (clamped to 0): windows above 1e-6 packets see none.
        fs_min_cwnd: 1e-9,
        fs_max_cwnd: 1e-6,
        ..Params::default()
    }
}

#[test]
fn target_is_base_plus_hops_plus_flow_scaling() {
    let p = Params::default();
    let alpha = 100e6 / (1.0 / 0.1f64.sqrt() - 1.0 / 100f64.sqrt());
    let beta = -alpha / 10.0;
    for (packets, links) in [(15u64, 6u32), (1, 2), (100, 4), (400, 6)] {
        let (cc, _) = swift(p.clone(), packets, links);
        let fs = (alpha / (packets as f64).sqrt() + beta).clamp(0.0, 100e6);
        let want = 20e6 + links as f64 * 3_053_435.0 + fs;
        assert!(
            (cc.target() as f64 - want).abs() <= 1.0,
            "{packets} packets, {links} links: {} against {want}",
            cc.target()
        );
    }
    // Flow scaling at its ends: all of fs_range at fs_min_cwnd, none at fs_max_cwnd.
    let (mut cc, _) = swift(p.clone(), 1, 0);
    cc.cwnd = 0.1 * MSS as f64;
    assert!((cc.target() as f64 - 120e6).abs() <= 1.0);
    cc.cwnd = 100.0 * MSS as f64;
    assert_eq!(cc.target(), 20 * US);
}

#[test]
fn additive_increase_below_target_follows_the_closed_form() {
    // Above one packet, each ACK of one packet adds ai / cwnd packets: after
    // n ACKs, c_n = c_{n-1} + ai / c_{n-1}, so c_n^2 = c_0^2 + 2 ai n + sum
    // (ai/c)^2; the recursion itself is the closed form checked to 1e-9.
    let (mut cc, mut w) = swift(flat(20), 10, 6);
    let mut c = 10.0f64;
    for n in 0..1000 {
        cc.on_ack_any(&mut w, &ack(n * US, MSS, 10 * US, 10 * US));
        c += 1.0 / c;
    }
    assert!((cc.cwnd() / MSS as f64 - c).abs() < 1e-9);
    // And c_n^2 ~ c_0^2 + 2 n within the sum of (1/c)^2 <= n / c_0^2.
    let bound = 1000.0 / 100.0;
    assert!((c * c - (100.0 + 2000.0)).abs() <= bound, "c^2 {}", c * c);
    // One window of ACKs (cwnd packets) adds ai packets: the paper's "ai per RTT".
    let (mut cc, mut w) = swift(
        Params {
            ai: 2.0,
            ..flat(20)
        },
        50,
        6,
    );
    cc.on_ack_any(&mut w, &ack(0, 50 * MSS, 10 * US, 10 * US));
    assert!((cc.cwnd() - 52_000.0).abs() < 1e-9, "{}", cc.cwnd());
}

#[test]
fn below_one_packet_the_increase_is_ai_per_packet_acked() {
    let (mut cc, mut w) = swift(flat(20), 1, 0);
    cc.cwnd = 200.0;
    cc.on_ack_any(&mut w, &ack(0, 300, 10 * US, 10 * US));
    assert!((cc.cwnd() - 500.0).abs() < 1e-9, "cwnd += ai x acked bytes");
}

#[test]
fn multiplicative_decrease_is_beta_times_excess_capped_by_max_mdf() {
    let p = flat(20);
    // Delay 25 us against 20: factor 1 - 0.8 x 5/25 = 0.84.
    let (mut cc, mut w) = swift(p.clone(), 100, 0);
    cc.on_ack_any(&mut w, &ack(0, MSS, 25 * US, 25 * US));
    assert!((cc.cwnd() - 84_000.0).abs() < 1e-6, "{}", cc.cwnd());
    // Delay 200 us: 1 - 0.8 x 180/200 = 0.28 < 1 - max_mdf: capped at 0.5.
    let (mut cc, mut w) = swift(p.clone(), 100, 0);
    cc.on_ack_any(&mut w, &ack(0, MSS, 200 * US, 200 * US));
    assert!((cc.cwnd() - 50_000.0).abs() < 1e-6, "{}", cc.cwnd());
    // At most one decrease per RTT (srtt 25 us): not again at +10 us, again at +25 us.
    let (mut cc, mut w) = swift(p, 100, 0);
    cc.on_ack_any(&mut w, &ack(100 * US, MSS, 25 * US, 25 * US));
    cc.on_ack_any(&mut w, &ack(110 * US, MSS, 25 * US, 25 * US));
    assert!((cc.cwnd() - 84_000.0).abs() < 1e-6);
    cc.on_ack_any(&mut w, &ack(125 * US, MSS, 25 * US, 25 * US));
    assert!((cc.cwnd() - 84_000.0 * 0.84).abs() < 1e-6);
}

#[test]
fn fast_recovery_and_timeouts_cut_by_max_mdf_and_reset_after_five() {
    let (mut cc, mut w) = swift(flat(20), 100, 0);
    cc.on_ack_any(&mut w, &ack(10 * US, MSS, 5 * US, 5 * US));
    let before = cc.cwnd();
    let ssthresh = cc.ssthresh_on_loss(&w, 50 * MSS);
    assert!((cc.cwnd() - before / 2.0).abs() < 1e-6);
    assert_eq!(ssthresh, (before / 2.0).round() as u64);
    // Timeouts well apart: each halves, the fifth resets to min_cwnd.
    let mut now = 10 * US;
    for k in 1..=5 {
        now += 1000 * US;
        let t = TimeoutEvent {
            now,
            flight: 0,
            prior_cwnd: w.cwnd,
            high_tx: 0,
        };
        let prev = cc.cwnd();
        cc.on_timeout(&mut w, &t);
        if k < 5 {
            assert!((cc.cwnd() - prev / 2.0).abs() < 1e-6, "timeout {k}");
        } else {
            assert_eq!(cc.cwnd(), 10.0, "RETX_RESET_THRESHOLD");
        }
        assert_eq!(w.cwnd, cc.window_bytes());
    }
    // An ACK resets the count: the next timeout halves again.
    cc.on_ack_any(&mut w, &ack(now + 1, 0, 5 * US, 5 * US));
    cc.cwnd = 8000.0;
    let t = TimeoutEvent {
        now: now + 1000 * US,
        flight: 0,
        prior_cwnd: 8000,
        high_tx: 0,
    };
    cc.on_timeout(&mut w, &t);
    assert_eq!(cc.cwnd(), 4000.0);
}

#[test]
fn window_is_clamped_to_min_and_max() {
    let p = Params {
        max_cwnd: 20.0,
        ..flat(20)
    };
    let (mut cc, mut w) = swift(p, 19, 0);
    for n in 0..200 {
        cc.on_ack_any(&mut w, &ack(n, MSS, US, US));
    }
    assert_eq!(cc.cwnd(), 20_000.0);
    cc.cwnd = 12.0;
    cc.on_ack_any(&mut w, &ack(1000 * US, 0, 1000 * US, 1000 * US));
    assert_eq!(cc.cwnd(), 10.0, "min_cwnd 10 bytes");
}

#[test]
fn fractional_window_paces_one_packet_per_rtt_over_cwnd() {
    // A flow whose Swift window is 0.25 packets with srtt 40 us sends one
    // 1000-byte segment every 40 us / 0.25 = 160 us.
    let p = fixtures::params(1);
    let mut cc = CcConfig::Swift(flat(20)).build();
    cc.set_path_links(2);
    let mut f = TcpFlow::new(100_000, cc, &p);
    let AnyCc::Swift(s) = &mut f.cc else {
        unreachable!()
    };
    s.cwnd = 250.0;
    s.srtt = 40 * US;
    assert_eq!(f.cc.pacing_rate(), Some(250.0 * 1e12 / 40e6));
    f.win.cwnd = 250;
    let first = f
        .next_segment_at(0, &p)
        .expect("nothing in flight: one segment");
    assert_eq!(first.len, 1000);
    assert_eq!(f.next_send_at, 160 * US);
    // Acknowledged at 40 us: the window allows one more, the pacing not before 160 us.
    f.on_ack(40 * US, 1000, false, 0, &p);
    let AnyCc::Swift(s) = &mut f.cc else {
        unreachable!()
    };
    s.cwnd = 250.0;
    s.srtt = 40 * US;
    f.win.cwnd = 250;
    assert_eq!(f.send_state(40 * US, &p), SendState::WaitUntil(160 * US));
    assert!(f.next_segment_at(159 * US, &p).is_none());
    assert!(f.next_segment_at(160 * US, &p).is_some());
    // At one packet or more there is no pacing.
    let AnyCc::Swift(s) = &mut f.cc else {
        unreachable!()
    };
    s.cwnd = 1000.0;
    assert_eq!(f.cc.pacing_rate(), None);
}

/// A 100 kB Swift flow (target 20 us, no scaling) with window `cwnd` bytes
/// and smoothed RTT `srtt`.
fn swift_flow(cwnd: f64, srtt: Ps) -> (TcpFlow, crate::transport::TcpParams) {
    let p = fixtures::params(1);
    let mut f = TcpFlow::new(100_000, CcConfig::Swift(flat(20)).build(), &p);
    let AnyCc::Swift(s) = &mut f.cc else {
        unreachable!()
    };
    s.cwnd = cwnd;
    s.srtt = srtt;
    f.win.cwnd = cwnd as u64;
    (f, p)
}

#[test]
fn an_ack_that_reopens_the_window_cancels_the_pending_paced_send() {
    // htsim's SwiftSubflowSrc::send_packets: a window of one packet or more
    // cancels the pacer (`_pacer.cancel()`) and sends. A 0.25-packet window
    // with srtt 40 us sent at 0 (next paced send at 160 us); the ACK at 10 us
    // samples 10 us, below the 20 us target: cwnd += ai x 1000 B = 1250 B, one
    // packet or more. The pending paced send is dropped: nothing holds the
    // flow (the NIC holds a flow until `next_send_at`, pacing or not).
    let (mut f, p) = swift_flow(250.0, 40 * US);
    assert!(f.next_segment_at(0, &p).is_some());
    assert_eq!(f.next_send_at, 160 * US);
    f.on_ack(10 * US, 1000, false, 0, &p);
    assert_eq!(f.cc.trace_value(), Some(1.25));
    assert_eq!(f.cc.pacing_rate(), None);
    assert_eq!(f.next_send_at, 0);
    assert_eq!(f.send_state(10 * US, &p), SendState::Ready);
}

#[test]
fn the_first_paced_send_is_one_gap_after_the_last_send_at_the_entering_acks_rate() {
    // htsim's SwiftPacer::schedule_send: an ACK that takes the window below
    // one packet schedules the pacer at `_last_send + rtt * mss / cwnd`. A
    // 1.5-packet window sends one segment at 0; its ACK at 50 us samples
    // 50 us (srtt 50 us), above the 20 us target: cwnd x max(1 - 0.8 x 30 / 50,
    // 0.5) = 780 B. The next segment may leave 1000 B x 50 us / 780 B after 0,
    // not at once although the flight is empty.
    let (mut f, p) = swift_flow(1500.0, 0);
    assert!(f.next_segment_at(0, &p).is_some());
    assert!(
        f.next_segment_at(0, &p).is_none(),
        "the window holds one segment"
    );
    assert_eq!(f.next_send_at, 0, "window mode: no paced send");
    f.on_ack(50 * US, 1000, false, 0, &p);
    assert!((f.cc.trace_value().unwrap() - 0.78).abs() < 1e-12);
    let gap = (1000.0 * 1e12 / (780.0 * 1e12 / (50 * US) as f64)).ceil() as Ps;
    assert_eq!(gap, 64_102_565);
    assert_eq!(f.next_send_at, gap);
    assert_eq!(f.send_state(50 * US, &p), SendState::WaitUntil(gap));
    assert!(f.next_segment_at(gap, &p).is_some());
}

#[test]
fn bad_parameters_name_their_key() {
    let cases: [(&str, Params); 6] = [
        (
            "ai",
            Params {
                ai: 0.0,
                ..Params::default()
            },
        ),
        (
            "beta",
            Params {
                beta: 1.5,
                ..Params::default()
            },
        ),
        (
            "max_mdf",
            Params {
                max_mdf: 1.0,
                ..Params::default()
            },
        ),
        (
            "base_target",
            Params {
                base_target: TimeValue(0),
                ..Params::default()
            },
        ),
        (
            "fs_min_cwnd",
            Params {
                fs_min_cwnd: 200.0,
                ..Params::default()
            },
        ),
        (
            "min_cwnd",
            Params {
                min_cwnd: 0,
                ..Params::default()
            },
        ),
    ];
    for (key, p) in cases {
        assert_eq!(p.validate().unwrap_err().field, key);
    }
    assert!(Params::default().validate().is_ok());
}

use super::super::{AnyCc, CcConfig};
