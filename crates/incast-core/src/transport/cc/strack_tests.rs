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
    // 18.75 B, stored as 18 B (htsim's uint32_t truncates), then to
    // K / 18 = 50,000 B, and back to 18 B (a period-2 orbit).
    let (mut cc, mut w) = strack(12);
    let srtt = 16_400_000;
    let mut now = 100 * US;
    for (i, want) in [18.0, 50_000.0, 18.0, 50_000.0, 18.0, 50_000.0]
        .into_iter()
        .enumerate()
    {
        cc.on_ack_any(&mut w, &ack(now, srtt, srtt));
        assert_eq!(cc.cwnd(), want, "ack {i}");
        now += US;
    }
}

#[test]
fn the_truncated_orbit_ratchets_as_htsims_does() {
    // htsim's per-ACK trace of its lone flow 14 -> 127 on the k = 8
    // fat-tree (main_strack_fat_tree.cpp, base_rtt 4 us, initial window
    // 15 x 4000 B; a print in a copy of STrackSrc::adjust_cwnd): time,
    // sample, smoothed RTT (ps) and the window adjust_cwnd computes
    // (before applySTrackLimits). As srtt climbs the small window is
    // floored one byte lower each time (25, 24, ... 10, then 9, clamped to
    // 10) and the large one grows from 60,000 B to 118,470 B. The same
    // inputs must give the same windows, byte for byte.
    const HTSIM: [(Ps, Ps, Ps, u64); 48] = [
        (13939200, 13939200, 13939200, 25),
        (14259200, 14259200, 13979200, 60208),
        (14579200, 14579200, 14054200, 24),
        (14899200, 14899200, 14159825, 60835),
        (15219200, 15219200, 14292246, 23),
        (15539200, 15539200, 14448115, 60346),
        (15859200, 15859200, 14624500, 22),
        (16179200, 16179200, 14818837, 58876),
        (16499200, 16499200, 15028882, 21),
        (16819200, 16819200, 15252671, 56515),
        (17139200, 17139200, 15488487, 19),
        (17459200, 17459200, 15734826, 56120),
        (17779200, 17779200, 15990372, 17),
        (18099200, 18099200, 16253975, 55088),
        (18419200, 18419200, 16524628, 15),
        (28198400, 13939200, 16201449, 63309),
        (28518400, 14259200, 15958667, 15),
        (28838400, 13939200, 15706233, 71562),
        (29158400, 14259200, 15525353, 15),
        (29478400, 13939200, 15327083, 77881),
        (29798400, 14259200, 15193597, 15),
        (30118400, 13939200, 15036797, 82720),
        (30758400, 13939200, 14899597, 15),
        (31078400, 14259200, 14819547, 86340),
        (31398400, 13939200, 14709503, 15),
        (31718400, 14259200, 14653215, 89113),
        (32038400, 13939200, 14563963, 15),
        (42137600, 13939200, 14485867, 91902),
        (42457600, 14259200, 14457533, 15),
        (42777600, 14579200, 14472741, 92120),
        (43097600, 14899200, 14526048, 14),
        (43417600, 14579200, 14532692, 97630),
        (43737600, 14899200, 14578505, 13),
        (44057600, 15219200, 14658591, 102719),
        (44377600, 15539200, 14768667, 12),
        (44697600, 15219200, 14824983, 107812),
        (45017600, 15539200, 14914260, 11),
        (45337600, 15859200, 15032377, 112900),
        (45657600, 16179200, 15175729, 10),
        (45977600, 15859200, 15261162, 118470),
        (46297600, 16179200, 15375916, 9),
        (46617600, 16499200, 15516326, 112091),
        (46937600, 15859200, 15559185, 9),
        (47257600, 16179200, 15636686, 109082),
        (47577600, 16499200, 15744500, 9),
        (47897600, 16179200, 15798837, 105029),
        (48217600, 16499200, 15886382, 9),
        (48537600, 16819200, 16002984, 99925),
    ];
    let mut cc = Strack::new(&Params {
        base_rtt: TimeValue(4 * US),
        ..Params::default()
    });
    let mut w = Window::new(15, MSS);
    cc.init(&w);
    let mut clamped = 0;
    for (i, &(now, delay, srtt, want)) in HTSIM.iter().enumerate() {
        cc.on_ack_any(&mut w, &ack(now, delay, srtt));
        let got = cc.cwnd();
        if want < 10 {
            clamped += 1;
            assert_eq!(got, 10.0, "ack {i}: htsim's {want} B clamped to min_cwnd");
        } else {
            assert_eq!(got, want as f64, "ack {i} at {now} ps");
        }
    }
    assert_eq!(clamped, 4);
    // A fractional window would have kept the product: 60,000 x 25.
    assert!(cc.cwnd() > 90_000.0, "{}", cc.cwnd());
}

#[test]
fn htsims_window_is_truncated_toward_zero() {
    assert_eq!(htsim_bytes(25.99), 25.0);
    assert_eq!(htsim_bytes(60_208.3), 60_208.0);
    assert_eq!(htsim_bytes(f64::INFINITY), f64::INFINITY);
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
    let want = 35_200.0; // 48,000 x 11/15
    assert_eq!(cc.cwnd(), want);
    // Within the smoothed RTT of the decrease: no further decrease.
    cc.on_ack_any(&mut w, &ack(110 * US, d, d));
    assert!((cc.cwnd() - want).abs() < 1e-6);
    // One RTT later it goes down again: 35,200 x 11/15 = 25,813.3 B,
    // stored as htsim's uint32_t stores it, 25,813 B.
    cc.on_ack_any(&mut w, &ack(130 * US, d, d));
    assert_eq!(cc.cwnd(), 25_813.0);
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
    let rate = cc.pacing_rate().expect("18 B window: paced");
    assert!((rate - cc.cwnd() * 1e12 / srtt as f64).abs() < 1e-6 * rate);
}

#[test]
fn base_rtt_must_be_given() {
    let e = Params::default().validate().unwrap_err();
    assert!(e.to_string().contains("base_rtt"), "{e}");
    assert!(params().validate().is_ok());
}

/// A 100 kB STrack flow of 1000 B segments paced at htsim's 10 B minimum
/// window with a 20 us smoothed RTT, its first paced segment sent at 0: the
/// next may leave `srtt * mss / cwnd` = 2 ms later.
fn paced_flow() -> (crate::transport::TcpFlow, crate::transport::TcpParams) {
    let (mut f, p) = flow_with_window(10);
    let crate::transport::AnyCc::Strack(s) = &mut f.cc else {
        unreachable!()
    };
    s.srtt = 20 * US;
    assert!(f.next_segment_at(0, &p).is_some());
    assert_eq!(f.next_send_at, 2_000 * US);
    (f, p)
}

#[test]
fn an_ack_that_reopens_the_window_cancels_the_pending_paced_send() {
    // htsim's STrackSrc::send_packets: a window of one packet or more cancels
    // the pacer (`_pacer.cancel()`) and sends at once. The ACK at 10 us
    // samples 10 us (below the 20 us target), so the window becomes
    // 0.25 (20 - 10) us / 10 B = 250,000 B: the flow sends now, not at 2 ms.
    use crate::transport::SendState;
    let (mut f, p) = paced_flow();
    f.on_ack(10 * US, 1000, false, 0, &p);
    assert_eq!(f.cc.pacing_rate(), None);
    assert_eq!(f.next_send_at, 0);
    assert_eq!(f.send_state(10 * US, &p), SendState::Ready);
    assert!(f.next_segment_at(10 * US, &p).is_some());
}

#[test]
fn an_ack_that_leaves_the_window_below_a_packet_keeps_the_paced_send() {
    // A 45 us sample (above the target) may decrease: the window stays at the
    // 10 B minimum and the next segment still waits for 2 ms.
    use crate::transport::SendState;
    let (mut f, p) = paced_flow();
    f.on_ack(45 * US, 1000, false, 0, &p);
    assert!(f.cc.pacing_rate().is_some());
    assert_eq!(f.next_send_at, 2_000 * US);
    assert_eq!(f.send_state(45 * US, &p), SendState::WaitUntil(2_000 * US));
    assert!(f.next_segment_at(45 * US, &p).is_none());
}

/// A 100 kB flow in window mode (STrack's window 100 kB).
fn window_mode_flow() -> (crate::transport::TcpFlow, crate::transport::TcpParams) {
    flow_with_window(100_000)
}

/// A 100 kB STrack flow of 1000 B segments whose window, STrack's and the
/// flow's, is `bytes`.
fn flow_with_window(bytes: u64) -> (crate::transport::TcpFlow, crate::transport::TcpParams) {
    use crate::transport::cc::CcConfig;
    let p = crate::transport::fixtures::params(1);
    let mut f = crate::transport::TcpFlow::new(100_000, CcConfig::Strack(params()).build(), &p);
    let crate::transport::AnyCc::Strack(s) = &mut f.cc else {
        unreachable!()
    };
    s.cwnd = bytes as f64;
    f.win.cwnd = bytes;
    (f, p)
}

#[test]
fn the_first_paced_send_is_one_gap_after_the_last_send_at_the_entering_acks_rate() {
    // htsim's STrackSrc::send_packets schedules the pacer when an ACK takes the
    // window below one packet: `_last_send + srtt * mss / cwnd`, at that ACK's
    // srtt and window, not moved by later ACKs. Three 1000 B segments leave at
    // 0, 1 and 2 us in window mode (100 kB). The ACK at 12 us samples 10 us
    // (srtt 10 us): the window becomes 0.25 (20 - 10) us / 100 kB = 25 B and the
    // next segment may leave 10 us * 1000 / 25 = 400 us after 2 us. Two ACKs
    // sampling 39 us (above the 20 us target) keep the window below a packet
    // and raise the srtt; the empty flight still waits for 402 us.
    use crate::transport::SendState;
    let (mut f, p) = window_mode_flow();
    for t in 0..3 {
        assert!(f.next_segment_at(t * US, &p).is_some());
    }
    f.on_ack(12 * US, 1000, false, 2 * US, &p);
    assert_eq!(f.cc.trace_value(), Some(25.0 / 1000.0));
    assert_eq!(f.next_send_at, 402 * US);
    f.on_ack(40 * US, 2000, false, US, &p);
    f.on_ack(41 * US, 3000, false, 2 * US, &p);
    assert!(f.cc.pacing_rate().is_some());
    assert!(f.rtt.srtt.unwrap() > 10 * US);
    assert_eq!(f.send_state(41 * US, &p), SendState::WaitUntil(402 * US));
    assert!(f.next_segment_at(402 * US, &p).is_some());
}

#[test]
fn an_ack_with_nothing_in_flight_still_moves_the_window_and_cancels_the_paced_send() {
    // htsim's STrackSrc::receivePacket adjusts the window on every ACK not below
    // the last one, the flight empty or not. One 1000 B segment at 0 in window
    // mode (100 kB); its ACK at 10 us samples 10 us: the window becomes
    // 0.25 (20 - 10) us / 100 kB = 25 B, nothing is in flight and the next
    // segment may leave 10 us * 1000 / 25 = 400 us after 0. A second ACK of the
    // same byte (the receiver's answer to a spurious retransmission under
    // spraying) samples 10 us again: 0.25 (20 - 10) us / 25 B = 100 kB, the
    // paced send is cancelled and the flow sends at once, not 390 us later.
    use crate::transport::SendState;
    let (mut f, p) = window_mode_flow();
    assert!(f.next_segment_at(0, &p).is_some());
    f.on_ack(10 * US, 1000, false, 0, &p);
    assert_eq!(f.cc.trace_value(), Some(25.0 / 1000.0));
    assert_eq!(f.send_state(10 * US, &p), SendState::WaitUntil(400 * US));
    let r = f.on_ack(11 * US, 1000, false, US, &p);
    assert_eq!(f.dupacks, 0, "not a duplicate ACK: nothing was in flight");
    assert_eq!(f.cc.trace_value(), Some(100.0));
    assert_eq!(f.next_send_at, 0);
    assert!(r.may_send);
    assert_eq!(f.send_state(11 * US, &p), SendState::Ready);
    assert!(f.next_segment_at(11 * US, &p).is_some());
}
