//! CUBIC and BBR end to end: in the simulator where one congestion control
//! runs alone, and on the transport-level dumbbell of `dumbbell.rs` where
//! algorithms share a bottleneck or need pacing the NIC does not do yet.

mod dumbbell;

use crate::common::*;
use dumbbell::{jain, secs, Dumbbell, Path};
use incast_core::transport::TcpParams;
use incast_core::units::*;
use incast_core::Simulation;

/// One sender behind a fast access link, a bottleneck of `rate` toward the
/// receiver with a drop-tail queue of `limit`, and `delay` one way on the
/// bottleneck link. Switch port 0 faces the receiver.
fn dumbbell_toml(
    senders: usize,
    rate: &str,
    delay: &str,
    limit: &str,
    cc: &str,
    stop: &str,
) -> String {
    let mut hosts = String::from("\"r\"");
    let mut links =
        format!("{{ a = \"sw\", b = \"r\", rate = \"{rate}\", delay = \"{delay}\" }},\n");
    let mut flows = String::new();
    for i in 0..senders {
        hosts += &format!(", \"s{i}\"");
        links += &format!("{{ a = \"s{i}\", b = \"sw\", rate = \"10Gbps\", delay = \"1us\" }},\n");
        flows += &format!(
            "[[workload.flows]]\nsrc = \"s{i}\"\ndst = \"r\"\nsize = \"100GB\"\nstart = \"{}us\"\n",
            i * 7
        );
    }
    format!(
        r#"
        stop = "{stop}"
        [topology]
        kind = "explicit"
        hosts = [{hosts}]
        switches = ["sw"]
        links = [
        {links}
        ]
        [switch]
        buffer = "64MB"
        admission = {{ kind = "static", limit = "{limit}" }}
        ecn = {{ kind = "off" }}
        [transport]
        cc = {cc}
        # Above the RTT x the holes of a multi-loss recovery at 100 ms RTTs: the timer
        # restarts on the first partial ACK only (RFC 6582 §4, Impatient; issue 43).
        rto_min = "1s"
        rto_initial = "1s"
        [metrics]
        queue_ports = "none"
        {flows}
        "#
    )
}

/// CUBIC's window between two congestion events, against RFC 9438's curve.
///
/// 20 Mb/s bottleneck, 100 ms RTT, a 40-packet drop-tail queue: the path
/// holds about 167 + 40 = 207 segments, so K is about 5 s and the cubic
/// curve grows faster than Reno's estimate all along (the cubic region).
/// After the slow-start overshoot is repaired, the flow settles into
/// textbook cycles: a loss at ~208 segments sets W_max there; the next loss
/// comes before the window gets back to it (fast convergence, §4.7, lowers
/// W_max to 0.85 x 208 = 177); the window then plateaus at 177 and leaves
/// it convexly until the next loss at ~208. For each cycle the test takes
/// W_max and cwnd_epoch from the observed window (independently of CUBIC's
/// state), computes K = ∛((W_max − cwnd_epoch)/C) (RFC 9438 Figure 2), and
/// checks every 10 ms sample against W(t) = C (t − K)³ + W_max.
///
/// With NewReno recovery, set explicitly (the default is SACK with RACK-TLP): the stage
/// boundaries below are RFC 6582's (the window before the event, before
/// NewReno inflates it; the stage from the full ACK, cwnd = ssthresh). With
/// SACK and PRR a sample 50 ms into a stage fell 0.2 segments under the band
/// (measured at the SACK-default commit): PRR ends a recovery otherwise.
#[test]
fn cubic_window_follows_the_cubic_curve_after_a_loss() {
    let cc = "\"cubic\"\nrecovery = \"newreno\"";
    let toml = dumbbell_toml(1, "20Mbps", "50ms", "60KB", cc, "150s");
    let sc = scenario(&toml);
    let mut sim = Simulation::new(&sc).unwrap();
    let mss = 1460.0;
    // (time, cwnd in segments, W_max traced by CUBIC)
    let mut samples: Vec<(Ps, f64, f64)> = vec![];
    let mut t = 0;
    while t < 150 * SEC {
        t += 10 * MS;
        sim.run_until(t);
        sim.trace_cc_now();
        let w = sim.cwnds()[0].1 as f64 / mss;
        let w_max = sim.cc_trace().last().unwrap().2;
        samples.push((t, w, w_max));
    }
    // Congestion events: the samples where CUBIC's W_max changes.
    let events: Vec<usize> = (1..samples.len())
        .filter(|&i| samples[i].2 != samples[i - 1].2 && samples[i].0 > 20 * SEC)
        .collect();
    assert!(
        events.len() >= 8,
        "{} congestion events after 20 s",
        events.len()
    );
    let c = 0.4;
    let rtt_max = 0.1 + 40.0 * 1500.0 * 8.0 / 20e6; // base RTT + a full queue, seconds
                                                    // The W_max of the stage before the first event considered (CUBIC's own,
                                                    // once; from then on the test carries its own).
    let mut prev_w_max = Some(samples[events[0] - 1].2);
    let mut worst: f64 = 0.0;
    let (mut concave, mut convex) = (0, 0);
    for pair in events.windows(2) {
        let (ev, next) = (pair[0], pair[1]);
        // The window just before the event (before NewReno inflates it).
        let pre = samples[ev - 1].1;
        // RFC 9438 §4.6/§4.7: W_max = cwnd, or 0.85 cwnd below the previous W_max.
        let w_max = match prev_w_max {
            Some(p) if pre < p => pre * 1.7 / 2.0,
            _ => pre,
        };
        prev_w_max = Some(w_max);
        assert!(
            (w_max - samples[ev].2).abs() < 1.0,
            "W_max {w_max:.1} expected, CUBIC has {:.1}",
            samples[ev].2
        );
        // The stage starts when recovery ends (cwnd = ssthresh = 0.7 FlightSize,
        // RFC 6582's full ACK): the last fall of the window before the next
        // event; from there on it only grows.
        let start = (ev + 1..next)
            .rev()
            .find(|&i| samples[i].1 < samples[i - 1].1)
            .unwrap();
        let (t_epoch, cwnd_epoch) = (samples[start].0, samples[start].1);
        assert!(
            (cwnd_epoch / pre - 0.7).abs() < 0.02,
            "cwnd_epoch {cwnd_epoch} after {pre}"
        );
        let k = ((w_max - cwnd_epoch) / c).cbrt(); // RFC 9438 Figure 2
        let w = |t: f64| c * (t - k).powi(3) + w_max; // Figure 1
        for s in &samples[start + 1..next - 1] {
            let t = secs(s.0 - t_epoch);
            // cwnd moves toward W(t + RTT) on every ACK (§4.2) and reaches
            // each round's target in about a round, so it lies between W(t)
            // and W(t + RTT); allow 1.5 segments for rounding, the 10 ms
            // sampling and the stage start (known to one sample).
            let lo = w(t).min(w(t + rtt_max)) - 1.5;
            let hi = w(t).max(w(t + rtt_max)) + 1.5;
            assert!(
                s.1 >= lo && s.1 <= hi,
                "t = {t:.2} s after the stage began at {:.2} s: cwnd {:.2} not in [{lo:.2}, {hi:.2}] \
                 (W_max {w_max:.1}, K {k:.2})",
                secs(t_epoch),
                s.1
            );
            worst = worst.max((s.1 - w(t)).abs() / w_max);
            if s.1 < w_max - 1.0 {
                concave += 1;
            } else if s.1 > w_max + 1.0 {
                convex += 1;
            }
        }
    }
    eprintln!(
        "CUBIC curve: {} stages, {concave} samples below W_max, {convex} above, largest |cwnd - W(t)| = {:.2} % of W_max",
        events.len() - 1,
        worst * 100.0
    );
    assert!(
        concave > 500 && convex > 500,
        "both regions visited: {concave} {convex}"
    );
    // Stated tolerance: within 1 % of W_max of the curve everywhere.
    assert!(
        worst < 0.01,
        "largest deviation {:.2} % of W_max",
        worst * 100.0
    );
}

/// N long flows from N senders to one receiver through one 10G switch port
/// (the data-center case: RTT ~22 us); each flow's goodput share of the
/// bottleneck's payload capacity over [t1, t2], and the port's utilization.
fn long_flows(cc: &str, n: usize, buffer: &str, t1: Ps, t2: Ps) -> (Vec<f64>, f64) {
    let mut toml = format!(
        r#"
        stop = "{}us"
        [topology]
        kind = "single_switch"
        hosts = {}
        link_rate = "10Gbps"
        link_delay = "5us"
        [switch]
        buffer = "{buffer}"
        ecn = {{ kind = "off" }}
        [transport]
        cc = {cc}
        [metrics]
        queue_ports = "none"
        "#,
        t2 / US + 1,
        n + 1
    );
    for s in 0..n {
        toml += &format!(
            "[[workload.flows]]\nsrc = {}\ndst = 0\nsize = \"10GB\"\nstart = \"{}us\"\n",
            s + 1,
            s * 7
        );
    }
    let mut sim = Simulation::new(&scenario(&toml)).unwrap();
    sim.run_until(t1);
    let (a1, tx1) = (sim.acked_bytes(), sim.switch_port_tx_bytes(0, 0));
    sim.run_until(t2);
    let (a2, tx2) = (sim.acked_bytes(), sim.switch_port_tx_bytes(0, 0));
    let dt = secs(t2 - t1);
    let capacity = 10e9 * 1460.0 / 1500.0;
    let shares = a1
        .iter()
        .zip(&a2)
        .map(|((i1, b1), (i2, b2))| {
            assert_eq!(i1, i2);
            (b2 - b1) as f64 * 8.0 / dt / capacity
        })
        .collect();
    (shares, (tx2 - tx1) as f64 * 8.0 / dt / 10e9)
}

/// Four CUBIC flows on one 10G bottleneck with a 300 KB drop-tail queue share
/// it fairly. At this RTT CUBIC runs in its Reno-friendly region (AIMD with
/// α = 0.53 then 1, β = 0.7), so the same argument as for NewReno applies:
/// over 1 s (about 40,000 RTTs and hundreds of loss cycles) the per-flow
/// averages settle. Tolerance: Jain's index above 0.99 and each flow within
/// 5 % of C/4, the bound the NewReno test uses.
///
/// The window starts at 1 s, after the start-up: four slow starts overshoot
/// the queue together, and without SACK CUBIC's gentler cut (0.7 of the
/// overshooting flight where NewReno halves it) leaves the flows above the
/// path's capacity after the first recovery, so the repair ends in
/// retransmission timeouts that lock one flow out for about half a second
/// (measured: 39 timeouts, all before 0.6 s; fair shares from then on).
#[test]
fn cubic_flows_share_a_bottleneck_fairly() {
    let (shares, util) = long_flows("\"cubic\"", 4, "300KB", SEC, 2 * SEC);
    let j = jain(&shares);
    eprintln!("CUBIC x4: shares of C {shares:?}, Jain {j:.4}, utilization {util:.4}");
    assert!(j > 0.99, "Jain's index {j}");
    for s in &shares {
        assert!((s * 4.0 - 1.0).abs() < 0.05, "shares {shares:?}");
    }
    assert!(util > 0.9, "utilization {util}");
}

/// TCP parameters of the dumbbell runs: 1460-byte segments, 40-byte headers,
/// RTO floor 10 ms (the simulator's default).
fn tcp() -> TcpParams {
    TcpParams::default()
}

/// Goodput shares (of the payload capacity) of the flows of `d` over [t1, t2].
fn shares(d: &mut Dumbbell, t1: Ps, t2: Ps) -> Vec<f64> {
    d.run_until(t1);
    let a1 = d.acked();
    d.run_until(t2);
    let a2 = d.acked();
    let cap = d.path.payload_rate(&d.p);
    a1.iter()
        .zip(&a2)
        .map(|(x, y)| (y - x) as f64 / secs(t2 - t1) / cap)
        .collect()
}

/// CUBIC against NewReno where CUBIC is Reno-friendly: a 1 Gb/s bottleneck,
/// RTT 100 us (BDP 8 packets) and a 100 KB drop-tail queue. K is seconds
/// while loss cycles last milliseconds, so CUBIC's window is W_est, the
/// AIMD(α = 3(1 − β)/(1 + β), β = 0.7) that RFC 9438 §4.3 sizes to get Reno's
/// AIMD(1, 0.5) average window. Two CUBIC and two NewReno flows over 4 s
/// (40,000 RTTs).
///
/// The closed form: an AIMD(α, β) flow with L loss events in a time T at a
/// common RTT has the sawtooth W_max = α T / ((1 − β) L RTT) and an average
/// window (1 + β)/2 · W_max = c · T / (L · RTT), c = α (1 + β) / (2 (1 − β)):
/// 1.5 for both AIMDs (RFC 9438 §4.3, the design). So the shares are 50/50
/// only when both see as many loss events; in general flow i's share is
/// c_i / L_i normalised. The test counts each flow's loss events (entries
/// into recovery) and measures its β (ssthresh over the window just before
/// the cut: 0.68 for CUBIC, whose byte-counted window is up to a segment above
/// its flight, and 0.49 for NewReno), and checks the measured shares against
/// c_i / L_i. Measured: CUBIC 57.5 % of the goodput, the closed form 58.6 %,
/// with 346 and 360 loss events for the CUBIC flows against 522 and 521 for
/// the NewReno ones. So CUBIC is ahead because the drop-tail queue hands the
/// NewReno flows 1.5x as many loss events, not because the AIMDs differ:
/// were losses in proportion to the packets sent, both would see as many and
/// the shares would be even; were they in proportion to each flow's window
/// increase (the segment an increase adds is the one a full queue drops), 1.9x
/// (α = 1 against 0.53) and CUBIC at 65 %. (59.9 % before ssthresh became
/// β x cwnd, as Linux; 53 % with RFC 9438's α = 1 past cwnd_prior.)
/// Tolerances: the closed form's CUBIC share within 0.05 of the measured one
/// (it ignores the recovery episodes and takes each sawtooth as linear);
/// each algorithm's two flows within 15 % of each other; no timeouts in the
/// window; utilization above 95 %.
#[test]
fn cubic_and_newreno_share_a_short_rtt_bottleneck() {
    let path = Path {
        rate_bps: 1e9,
        access_bps: 10e9,
        one_way: 50 * US,
        limit: 100_000,
    };
    let mut d = Dumbbell::new(path, tcp(), &["cubic", "newreno", "cubic", "newreno"]);
    let (t1, t2) = (500 * MS, 4500 * MS);
    d.run_until(t1);
    let a1 = d.acked();
    let n = d.flows.len();
    let (mut events, mut beta_sum) = (vec![0u32; n], vec![0f64; n]);
    let mut prev: Vec<(bool, u64)> = d
        .flows
        .iter()
        .map(|f| (f.in_recovery, f.win.cwnd))
        .collect();
    let timeouts1: u32 = d.flows.iter().map(|f| f.timeouts).sum();
    let mut t = t1;
    while t < t2 {
        t += 20 * US;
        d.run_until(t);
        for (i, f) in d.flows.iter().enumerate() {
            if f.in_recovery && !prev[i].0 {
                events[i] += 1;
                beta_sum[i] += f.win.ssthresh as f64 / prev[i].1 as f64;
            }
            prev[i] = (f.in_recovery, f.win.cwnd);
        }
    }
    let a2 = d.acked();
    let cap = path.payload_rate(&d.p);
    let s: Vec<f64> = a1
        .iter()
        .zip(&a2)
        .map(|(x, y)| (y - x) as f64 / secs(t2 - t1) / cap)
        .collect();
    let alpha = [0.3 * 3.0 / 1.7, 1.0, 0.3 * 3.0 / 1.7, 1.0];
    let beta: Vec<f64> = (0..n).map(|i| beta_sum[i] / events[i] as f64).collect();
    let weight: Vec<f64> = (0..n)
        .map(|i| alpha[i] * (1.0 + beta[i]) / (2.0 * (1.0 - beta[i])) / events[i] as f64)
        .collect();
    let predicted = (weight[0] + weight[2]) / weight.iter().sum::<f64>();
    let cubic = s[0] + s[2];
    let reno = s[1] + s[3];
    let measured = cubic / (cubic + reno);
    eprintln!(
        "CUBIC vs NewReno at RTT 100 us: shares {s:?}; CUBIC {measured:.3} of the goodput, \
         closed form {predicted:.3}; loss events {events:?}, beta {beta:.3?}, drops {}",
        d.drops
    );
    let timeouts2: u32 = d.flows.iter().map(|f| f.timeouts).sum();
    assert_eq!(timeouts1, timeouts2, "a timeout in the window");
    assert!(cubic + reno > 0.95, "utilization {}", cubic + reno);
    assert!(
        (measured - predicted).abs() < 0.05,
        "CUBIC's share {measured}, the closed form's {predicted}"
    );
    assert!(
        (s[0] / s[2] - 1.0).abs() < 0.15 && (s[1] / s[3] - 1.0).abs() < 0.15,
        "{s:?}"
    );
}

/// BBR on an idle path (1 Gb/s bottleneck, RTT 10 ms, BDP 833 packets, a
/// queue that never overflows): after STARTUP and DRAIN, BtlBw is the
/// bottleneck's payload rate and RTprop the path's base RTT, and the queue
/// stays near BBR's target. Tolerances: BtlBw within 1 % (samples are exact
/// here: no cross traffic, no ACK compression, and pacing leaves no burst for
/// the max filter to pick); RTprop within 1 % (the minimum RTT seen is the
/// base RTT plus at most a packet of queue).
///
/// The queue: BBRInflight(1.0), which ends the 3/4 phase of PROBE_BW early
/// and DRAIN, is one BDP plus three send quanta (§4.2.3.2; 64 KB each at
/// this rate, §4.2.2), so BBR v1 leaves up to three quanta standing (0.15
/// BDP here) and its 5/4 phase adds a quarter BDP on top for one RTprop
/// (§4.3.4.1). Bounds: the maximum below a quarter BDP plus three quanta
/// plus five packets, the mean below three quanta plus a tenth of a BDP;
/// goodput above 95 % of the capacity; no drops.
#[test]
fn bbr_estimates_the_bottleneck_and_min_rtt_on_an_idle_path() {
    let path = Path {
        rate_bps: 1e9,
        access_bps: 10e9,
        one_way: 5 * MS,
        limit: 10_000_000,
    };
    let p = tcp();
    let mut d = Dumbbell::new(path, p.clone(), &["bbr"]);
    let bdp = path.rate_bps / 8.0 * secs(path.base_rtt(&p)); // wire bytes
    d.measure_from = SEC;
    let s = shares(&mut d, SEC, 4 * SEC);
    let (mean_q, max_q) = (d.mean_queue(), d.max_queue as f64);
    let incast_core::transport::cc::AnyCc::Bbr(b) = &d.flows[0].cc else {
        unreachable!()
    };
    let bw = b.btl_bw() / path.payload_rate(&p);
    let rtprop = b.rtprop().unwrap() as f64 / path.base_rtt(&p) as f64;
    let quanta = 3.0 * b.send_quantum() as f64 * 1500.0 / 1460.0;
    eprintln!(
        "BBR idle path: BtlBw/C {bw:.4}, RTprop/base {rtprop:.4}, goodput/C {:.4}, queue mean {:.3} BDP, \
         max {:.3} BDP, 3 quanta {:.3} BDP, mode {:?}",
        s[0],
        mean_q / bdp,
        max_q / bdp,
        quanta / bdp,
        b.mode()
    );
    assert_eq!(b.send_quantum(), 1460, "one segment, ns-3's quantum");
    assert!((bw - 1.0).abs() < 0.01, "BtlBw {bw} of C");
    assert!(
        (rtprop - 1.0).abs() < 0.01,
        "RTprop {rtprop} of the base RTT"
    );
    assert!(s[0] > 0.95, "goodput {} of C", s[0]);
    assert!(
        max_q < 0.25 * bdp + quanta + 5.0 * 1500.0,
        "max queue {} BDP",
        max_q / bdp
    );
    assert!(
        mean_q < quanta + 0.1 * bdp,
        "mean queue {} BDP",
        mean_q / bdp
    );
    assert_eq!(d.drops, 0);
}

/// Several BBR v1 flows on one bottleneck: each caps what it has in flight
/// at BBR.target_cwnd = cwnd_gain x its BtlBw x RTprop plus three send quanta
/// (§4.2.3.2), and the flows' max-filtered BtlBw estimates add up to more
/// than the bottleneck (each keeps the samples of its own 5/4 probes), so
/// they become window-limited and the queue holds what their windows allow
/// beyond the path's BDP: Σ target_cwnd − BDP, about (cwnd_gain − 1) BDP
/// plus the quanta (the known standing queue of v1). Sampled every 10 ms
/// over 4 s after a 2 s start-up: the queue never exceeds that bound by more
/// than 8 % of it (a window shrinks at once when its flow leaves a 5/4 phase,
/// by three times the drop of its quantum, 1 ms of half its rate, about 3 %
/// of the bound here, or when its filter lets an old probe sample go, but
/// what was sent drains over a round trip; measured: 3.3 %, and 4.9 % in the
/// simulator, which samples every ms) and
/// averages at least 80 % of it (the flows' 3/4 phases keep it a little
/// below); utilization above 95 %; Jain's index above 0.9 (v1 is known not
/// to be exactly fair).
#[test]
fn bbr_flows_keep_the_queue_near_cwnd_gain_bdp() {
    let path = Path {
        rate_bps: 1e9,
        access_bps: 10e9,
        one_way: 5 * MS,
        limit: 10_000_000,
    };
    let p = tcp();
    let n = 4;
    let mut d = Dumbbell::new(path, p.clone(), &["bbr"; 4]);
    let bdp = path.rate_bps / 8.0 * secs(path.base_rtt(&p)); // wire bytes
    d.run_until(2 * SEC);
    let a1 = d.acked();
    let (mut worst, mut sum_ratio, mut count, mut sum_bound) = (0.0f64, 0.0, 0.0, 0.0);
    let mut t = 2 * SEC;
    while t < 6 * SEC {
        t += 10 * MS;
        d.run_until(t);
        let targets: f64 = d
            .flows
            .iter()
            .map(|f| match &f.cc {
                incast_core::transport::cc::AnyCc::Bbr(b) => b.target_cwnd() as f64,
                _ => unreachable!(),
            })
            .sum();
        let bound = targets * 1500.0 / 1460.0 - bdp;
        let q = d.queue_bytes() as f64;
        worst = worst.max((q - bound) / bound);
        sum_ratio += q / bound;
        sum_bound += bound;
        count += 1.0;
    }
    let a2 = d.acked();
    let cap = path.payload_rate(&p);
    let s: Vec<f64> = a1
        .iter()
        .zip(&a2)
        .map(|(x, y)| (y - x) as f64 / 4.0 / cap)
        .collect();
    let j = jain(&s);
    eprintln!(
        "BBR x{n}: shares {s:?} (Jain {j:.3}); Σ target_cwnd − BDP averages {:.2} BDP; \
         queue / that bound averages {:.3}, exceeds it by at most {:.1} %",
        sum_bound / count / bdp,
        sum_ratio / count,
        worst * 100.0
    );
    assert!(
        worst < 0.08,
        "queue above Σ target_cwnd − BDP by {} %",
        worst * 100.0
    );
    assert!(
        sum_ratio / count > 0.8,
        "queue only {} of the bound",
        sum_ratio / count
    );
    assert!(s.iter().sum::<f64>() > 0.95, "utilization {s:?}");
    assert!(j > 0.9, "Jain's index {j}");
}

/// The simulator's BBR path: 10G senders, a 1G bottleneck with 5 ms of
/// propagation toward the receiver (RTT ~10 ms, BDP ~833 packets), a queue
/// that never overflows. Returns (samples of (queue bytes, Σ cwnd bytes)
/// every ms from 1 s, the traced value of each flow at the end, goodput
/// share of the capacity).
fn bbr_in_the_simulator(n: usize, trace: &str, secs_run: u64) -> (Vec<(f64, f64)>, Vec<f64>, f64) {
    let cc = format!("{{ algorithm = \"bbr\", trace = \"{trace}\" }}");
    let toml = dumbbell_toml(
        n,
        "1Gbps",
        "5ms",
        "10MB",
        &cc,
        &format!("{}s", secs_run + 1),
    );
    let mut sim = Simulation::new(&scenario(&toml)).unwrap();
    sim.run_until(SEC);
    let a1: u64 = sim.acked_bytes().iter().map(|x| x.1).sum();
    let mut samples = vec![];
    let mut t = SEC;
    while t < secs_run * SEC {
        t += MS;
        sim.run_until(t);
        let cw: u64 = sim.cwnds().iter().map(|x| x.1).sum();
        samples.push((sim.switch_queue_bytes(0, 0) as f64, cw as f64));
    }
    let a2: u64 = sim.acked_bytes().iter().map(|x| x.1).sum();
    sim.trace_cc_now();
    let traced = sim.cc_trace().iter().map(|x| x.2).collect();
    let share = (a2 - a1) as f64 * 8.0 / secs((secs_run - 1) * SEC) / (1e9 * 1460.0 / 1500.0);
    (samples, traced, share)
}

/// Base RTT of the simulator's BBR path: propagation both ways, a data
/// packet's serialization on the 10G and 1G links, an ACK's on both.
fn bbr_path_base_rtt() -> f64 {
    2.0 * (5e-3 + 1e-6)
        + 1500.0 * 8.0 / 10e9
        + 1500.0 * 8.0 / 1e9
        + 64.0 * 8.0 / 1e9
        + 64.0 * 8.0 / 10e9
}

/// The idle-path check of `bbr_estimates_the_bottleneck_and_min_rtt_on_an_idle_path`
/// in the simulator, with the same tolerances and reasons (the NIC paces
/// TCP flows: `TcpFlow::next_send_at`, `Ev::Pace`).
#[test]
fn bbr_in_the_simulator_estimates_the_path_and_bounds_the_queue() {
    let capacity = 1e9 * 1460.0 / 1500.0; // payload bits per second
    let base = bbr_path_base_rtt();
    let bdp = 1e9 / 8.0 * base; // wire bytes
    let (samples, bw, share) = bbr_in_the_simulator(1, "btl_bw", 4);
    let (_, rtprop, _) = bbr_in_the_simulator(1, "min_rtt", 4);
    let mean_q = samples.iter().map(|s| s.0).sum::<f64>() / samples.len() as f64;
    let max_q = samples.iter().map(|s| s.0).fold(0.0, f64::max);
    let quanta = 3.0 * 64_000.0 * 1500.0 / 1460.0;
    eprintln!(
        "BBR (simulator): BtlBw/C {:.4}, RTprop/base {:.4}, goodput/C {share:.4}, queue mean {:.3} BDP, max {:.3} BDP",
        bw[0] / capacity,
        rtprop[0] / base,
        mean_q / bdp,
        max_q / bdp
    );
    assert!(
        (bw[0] / capacity - 1.0).abs() < 0.01,
        "BtlBw {} of C",
        bw[0] / capacity
    );
    assert!(
        (rtprop[0] / base - 1.0).abs() < 0.01,
        "RTprop {} of base",
        rtprop[0] / base
    );
    assert!(share > 0.95, "goodput {share} of C");
    assert!(
        max_q < 0.25 * bdp + quanta + 5.0 * 1500.0,
        "max queue {} BDP",
        max_q / bdp
    );
    assert!(
        mean_q < quanta + 0.1 * bdp,
        "mean queue {} BDP",
        mean_q / bdp
    );
}

/// Four BBR flows in the simulator: the queue is what their windows allow
/// beyond the BDP (Σ cwnd − BDP, cwnd being BBR.target_cwnd once reached),
/// as in `bbr_flows_keep_the_queue_near_cwnd_gain_bdp`, same tolerances.
#[test]
fn bbr_in_the_simulator_keeps_the_queue_near_cwnd_gain_bdp() {
    let bdp = 1e9 / 8.0 * bbr_path_base_rtt();
    let (samples, _, share) = bbr_in_the_simulator(4, "btl_bw", 6);
    let late = &samples[samples.len() / 4..];
    let (mut worst, mut sum_ratio) = (0.0f64, 0.0);
    for &(q, cw) in late {
        let bound = cw * 1500.0 / 1460.0 - bdp;
        worst = worst.max((q - bound) / bound);
        sum_ratio += q / bound;
    }
    let mean_ratio = sum_ratio / late.len() as f64;
    eprintln!(
        "BBR x4 (simulator): goodput/C {share:.4}, queue / (Σ cwnd − BDP) averages {mean_ratio:.3}, exceeds it by at most {:.1} %",
        worst * 100.0
    );
    assert!(
        worst < 0.08,
        "queue above Σ cwnd − BDP by {} %",
        worst * 100.0
    );
    assert!(mean_ratio > 0.8, "queue only {mean_ratio} of the bound");
    assert!(share > 0.95, "goodput {share} of C");
}

/// CUBIC (with and without ECN) and BBR under edge pausing: the gate sits in
/// front of the flow and needs nothing from the congestion control. An
/// incast of 16 x 256 KB into a 10G port with Smart-Pause's fixed rule:
/// every flow finishes, bytes are conserved, and the gate did pause.
#[test]
fn cubic_and_bbr_run_under_edge_pausing() {
    for cc in [
        "\"cubic\"",
        "{ algorithm = \"cubic\", ecn = true, hystart = true, hystart_min_rtt_thresh = \"4us\", hystart_max_rtt_thresh = \"16us\" }",
        "\"bbr\"",
        "{ algorithm = \"bbr\", min_rtt_window = \"1ms\", probe_rtt_duration = \"100us\" }",
    ] {
        let r = run(&format!(
            r#"
            [topology]
            kind = "single_switch"
            hosts = 17
            link_rate = "10Gbps"
            link_delay = "2us"
            [switch]
            buffer = "1MB"
            ecn = {{ kind = "step", k = "60KB" }}
            [transport]
            cc = {cc}
            rto_min = "1ms"
            [edge]
            rule = {{ algorithm = "smart_pause_fixed", threshold = "20us", pause = "5us" }}
            [[workload.incast]]
            fan_in = 16
            bytes_per_sender = "256KB"
            receiver = 0
            times = ["0us", "5ms"]
            [metrics]
            queue_ports = "none"
            "#
        ));
        assert_finished_and_conserved(&r, cc);
        let s: serde_json::Value = serde_json::from_str(&r.summary_json).unwrap();
        let pauses = s["edge"]["pauses"].as_u64().unwrap();
        eprintln!("{cc}: {pauses} edge pauses, {} retransmissions", s["retransmits"]);
        assert!(pauses > 0, "{cc}: the gate never closed");
    }
}
