//! RDMA congestion control end to end: DCQCN, HPCC and TIMELY on a shared
//! bottleneck, go-back-N without spurious retransmissions, the DCQCN fluid
//! model's fixed point, and the validation of the algorithms' parameters.

use crate::common::{run, scenario, scenario_err};
use incast_core::rdma::cc::{dcqcn, RateCcConfig};
use incast_core::units::US;
use incast_core::Simulation;

/// HPCC simulator run.py's DCQCN marking at 100G (Kmin 100 KB, Kmax 400 KB,
/// Pmax 0.2 at 25G, scaled with the link rate; docs/mechanisms.md, DCQCN), marked at dequeue.
const RED_100G: &str = r#"
        kind = "red"
        kmin = "400KB"
        kmax = "1600KB"
        pmax = 0.2
        at = "dequeue"
"#;

/// `n` long flows (1 GB each, class 3, lossless) from hosts 1..=n to host 0
/// through one switch: the bottleneck is switch 0's port 0.
fn bottleneck_at(rate: &str, ecn: &str, stop: &str, cc: &str, n: u32, extra: &str) -> String {
    format!(
        r#"
        seed = 7
        stop = "{stop}"
        [topology]
        kind = "single_switch"
        hosts = {hosts}
        link_rate = "{rate}"
        link_delay = "1us"
        [switch]
        buffer = "32MB"
        [switch.ecn]
        {ecn}
        [switch.pfc]
        classes = [3]
        [rdma]
        cc = {cc}
        {extra}
        [[workload.incast]]
        fan_in = {n}
        bytes_per_sender = "1GB"
        times = ["0us"]
        receiver = 0
        class = 3
        "#,
        hosts = n + 1,
    )
}

fn bottleneck(cc: &str, n: u32, extra: &str) -> String {
    bottleneck_at("100Gbps", RED_100G, "3ms", cc, n, extra)
}

#[test]
fn no_retransmissions_without_loss() {
    let r = run(&bottleneck("\"dcqcn\"", 4, "cnp_mode = \"ack_flag\""));
    println!("{}", r.summary_json);
    let retx: u32 = r.flows.u32s("retransmits").iter().sum();
    assert_eq!(r.lossless_drops, 0);
    assert_eq!(retx, 0);
}

fn rates_after(toml: &str, warm: u64, end: u64) -> (Vec<f64>, f64) {
    let w = measure(toml, warm, end, 0);
    (w.rates, w.tx_bps)
}

/// What one measurement window of a [`bottleneck_at`] run saw.
struct Window {
    /// Goodput of each flow (acknowledged payload), b/s.
    rates: Vec<f64>,
    /// Wire bits/s out of the bottleneck port (switch 0, port 0).
    tx_bps: f64,
    /// Bottleneck queue samples (bytes), one per `sample_ps` (none if 0).
    queue: Vec<u64>,
}

impl Window {
    fn jain(&self) -> f64 {
        let s: f64 = self.rates.iter().sum();
        let s2: f64 = self.rates.iter().map(|r| r * r).sum();
        s * s / (self.rates.len() as f64 * s2)
    }
    fn mean_rate(&self) -> f64 {
        self.rates.iter().sum::<f64>() / self.rates.len() as f64
    }
    fn mean_queue(&self) -> f64 {
        self.queue.iter().sum::<u64>() as f64 / self.queue.len() as f64
    }
}

/// Runs `toml` to `warm`, then to `end`, sampling the bottleneck queue every
/// `sample_ps` in between.
fn measure(toml: &str, warm: u64, end: u64, sample_ps: u64) -> Window {
    let sc = scenario(toml);
    let mut sim = Simulation::new(&sc).unwrap();
    sim.run_until(warm);
    let a = sim.acked_bytes();
    let tx0 = sim.switch_port_tx_bytes(0, 0);
    let mut queue = vec![];
    if sample_ps > 0 {
        let mut t = warm;
        while t + sample_ps <= end {
            t += sample_ps;
            sim.run_until(t);
            queue.push(sim.switch_queue_bytes(0, 0));
        }
    }
    sim.run_until(end);
    let b = sim.acked_bytes();
    let tx1 = sim.switch_port_tx_bytes(0, 0);
    let secs = (end - warm) as f64 * 1e-12;
    assert_eq!(a.len(), b.len(), "a flow finished inside the window");
    let rates = a
        .iter()
        .zip(&b)
        .map(|((fa, x), (fb, y))| {
            assert_eq!(fa, fb);
            (y - x) as f64 * 8.0 / secs
        })
        .collect();
    Window {
        rates,
        tx_bps: (tx1 - tx0) as f64 * 8.0 / secs,
        queue,
    }
}

/// DCQCN as the HPCC simulator models Mellanox NICs (`CC_MODE 1`, run.py
/// "dcqcn": Ta 1 us, Td 4 us, Ti 300 us, F 1, R_AI 20 / R_HAI 200 Mb/s at
/// 100G, no target clamp, per-ACK CNP flag; docs/mechanisms.md, DCQCN): four long flows on one
/// 100G bottleneck share it fairly and keep it busy, once the start-up
/// transient is over.
///
/// Diagnosis of the earlier failure (rates measured over 1-3 ms, one flow at
/// 20.6 Gb/s of a 23.9 Gb/s share): no bug in `rdma/cc/dcqcn.rs` (it matches
/// `rdma-hw.cc` `cnp_received_mlx` / `UpdateAlphaMlx` / `CheckRateDecreaseMlx`
/// / `RateIncEventTimerMlx` line by line). The window was inside the start-up
/// transient, and the tolerance ignored how weakly this DCQCN variant
/// equalises rates:
///
/// 1. Start-up: four line-rate flows build ~1 MB; the first CNP sets alpha = 1,
///    and while the queue drains above Kmin every Td = 4 us check cuts by
///    ~alpha/2 = 1/2, so seven checks take 100G below MIN_RATE = 1 Gb/s. No
///    increase comes before Ti = 300 us: the link idles at ~4 %. The sawtooth
///    that follows (alpha decaying with time constant Ta/g = 256 us) still
///    dips to ~80 % utilisation at 1.5 and 2.8 ms; the 1-3 ms window averaged
///    95.7 %, from 5 ms on it is 99 %.
/// 2. Fairness: without CLAMP_TARGET_RATE, R_T is reset only by the first cut
///    after an increase, so fast recovery (R_C = (R_C + R_T)/2 every Ti) brings
///    each flow back to its own pre-episode rate; of an episode's cuts only
///    ~1/2^5 survives the ~1.5 ms (5 x Ti) sawtooth period. Start-up
///    differences thus decay very slowly: with seed 7 one flow stays ~8 %
///    above the others for 80 ms.
///
/// Checks (rates from 5 to 25 ms, after the transient):
/// - the start-up collapse of point 1 (closed form: every flow at MIN_RATE
///   for most of 200-350 us): bottleneck use in [3.5 %, 8 %] (all four flows
///   at 1 Gb/s = 4.0 %; the upper bound allows one flow left above the floor
///   after its last cut: seed 2 shows 4.4 %);
/// - utilisation >= 97 % (the sawtooth's dips; measured 99.2 %, 98.7-99.6 %
///   over seeds 1-16);
/// - Jain's index >= 0.99 (a coefficient of variation below 10 %; measured
///   0.9969, 0.9969-0.9999 over seeds 1-16);
/// - each flow within 15 % of the flows' mean (measured 9.0 %; over seeds
///   1-16 at most 9.0 %, median 5 %; point 2 says 10 % is not a property of
///   this DCQCN, while a starving flow or a 2:1 split would still fail).
#[test]
fn dcqcn_converges_to_fair_share() {
    let ms = 1000 * US;
    let toml = bottleneck_at(
        "100Gbps",
        RED_100G,
        "25ms",
        "\"dcqcn\"",
        4,
        "cnp_mode = \"ack_flag\"",
    );
    let start = measure(&toml, 200 * US, 350 * US, 0);
    let use_ = start.tx_bps / 100e9;
    println!("start-up 200-350 us: bottleneck use {use_:.4}");
    assert!(
        (0.035..=0.08).contains(&use_),
        "every flow should sit at MIN_RATE after the first episode: use {use_:.4}"
    );

    let w = measure(&toml, 5 * ms, 25 * ms, 0);
    let util = w.tx_bps / 100e9;
    let mean = w.mean_rate();
    println!(
        "5-25 ms: rates {:?} Gb/s, mean {:.3}, utilisation {util:.4}, Jain {:.4}",
        w.rates.iter().map(|r| r / 1e9).collect::<Vec<_>>(),
        mean / 1e9,
        w.jain()
    );
    assert!(util >= 0.97, "utilisation {util:.4}");
    assert!(w.jain() >= 0.99, "Jain {:.4}", w.jain());
    for r in &w.rates {
        assert!(
            (r / mean - 1.0).abs() <= 0.15,
            "rate {r:.3e} vs mean {mean:.3e}"
        );
    }
}

/// The equilibrium of the DCQCN fluid model (DCQCN paper, Zhu et al.
/// SIGCOMM 2015 §5; the fixed-point analysis of Zhu et al., "ECN or Delay",
/// CoNEXT 2016; equations as in docs/mechanisms.md, DCQCN), with rates in packets/s:
///
/// ```text
/// 0 = dα/dt    ∝ (1 - (1-p)^(τ' R_C)) - α
/// 0 = dR_T/dt  = -(R_T - R_C)/τ · (1 - (1-p)^(τ R_C))
///                + R_AI R_C [(1-p)^(F B) s(B) + (1-p)^(F T R_C) s(T R_C)]
/// 0 = dR_C/dt  = -(R_C α / 2τ) (1 - (1-p)^(τ R_C)) + (R_T - R_C)/2 · R_C [s(B) + s(T R_C)]
/// 0 = dq/dt    = N R_C - C,       s(x) = p / ((1-p)^(-x) - 1)
/// ```
///
/// So R_C* = C/N; α(p) from the first line; R_T - R_C from the third; the
/// second is then one equation in p, solved by bisection (it is positive for
/// small p, where increases win, and negative at the largest p considered).
/// Returns (p*, α*).
#[allow(clippy::too_many_arguments)]
fn dcqcn_fixed_point(
    c_pkts: f64,
    n: f64,
    tau: f64,
    tau_alpha: f64,
    t: f64,
    b_pkts: f64,
    f: f64,
    r_ai_pkts: f64,
    p_max: f64,
) -> (f64, f64) {
    let r = c_pkts / n;
    let pow = |p: f64, x: f64| (x * (-p).ln_1p()).exp(); // (1-p)^x
    let s = |p: f64, x: f64| p / (1.0 / pow(p, x) - 1.0);
    let alpha = |p: f64| 1.0 - pow(p, tau_alpha * r);
    let d_rt = |p: f64| {
        let cut = 1.0 - pow(p, tau * r);
        let (sb, st) = (s(p, b_pkts), s(p, t * r));
        let gap = alpha(p) * cut / (tau * (sb + st)); // R_T - R_C from dR_C/dt = 0
        -gap / tau * cut + r_ai_pkts * r * (pow(p, f * b_pkts) * sb + pow(p, f * t * r) * st)
    };
    let (mut lo, mut hi) = (1e-9, p_max);
    assert!(
        d_rt(lo) > 0.0 && d_rt(hi) < 0.0,
        "no root in (1e-9, {p_max})"
    );
    for _ in 0..200 {
        let mid = (lo * hi).sqrt();
        if d_rt(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo, alpha(lo))
}

/// (ECN marks, dequeued packets) of class 3 at switch 0's port 0 when `toml` stops.
fn marks_at_bottleneck(toml: &str, n_hosts: u32) -> (u64, u64) {
    let r = run(toml);
    let c = &r.counters;
    (0..c.u32s("node").len())
        .find(|&i| c.u32s("node")[i] == n_hosts && c.u32s("port")[i] == 0 && c.u8s("class")[i] == 3)
        .map(|i| (c.u64s("ecn_marks")[i], c.u64s("deq_pkts")[i]))
        .expect("the bottleneck's class 3 has a counter row")
}

/// DCQCN, the paper's reaction point (`model = "paper"`: cut per CNP, alpha
/// timer K, T = 55 us timer and 10 MB byte counter, F = 5, R_AI = 40 Mb/s),
/// CNPs paced by the NP at one per 50 us, and the paper's CP (Kmin 5 KB,
/// Kmax 200 KB, Pmax 1 %) on a 40G bottleneck: the set-up of the fluid model
/// (docs/mechanisms.md, V5). With N = 2 and N = 4 long flows, the time-averaged queue, the
/// fraction of packets marked and each flow's rate agree with the fluid
/// model's fixed point within 20 %.
///
/// Fixed point (computed below from the scenario's own parameters, 1048 B
/// packets): N = 2: p* = 8.14e-4, q* = 20.9 KB, α* = 0.10; N = 4: p* = 1.98e-3,
/// q* = 43.6 KB, α* = 0.12. Measured (40-120 ms, seed 7): N = 2: mean queue
/// 18.1 KB (-13 %), marked fraction 7.40e-4 (-9 %), rates 16.9 and 21.0 Gb/s
/// (-11 %, +10 % of C/N = 19.1); N = 4: 43.0 KB (-1 %), 1.86e-3 (-6 %), rates
/// within 7 % of 9.54 Gb/s. Other seeds: N = 2 queue 18.0-20.0 KB, rates
/// within 5 %.
///
/// Tolerance 20 % (the task's): the fluid model replaces the NP's pending-mark
/// CNP, the timer restarts and the per-packet marking by averages, and the
/// queue oscillates around the fixed point (0 to ~70 KB at N = 2); a 80 ms mean
/// of two DCQCN flows still carries a ~10 % imbalance. Warm-up 40 ms: alpha
/// starts at 1 and relaxes by (1 - g) per 55 us (time constant 14 ms).
///
/// Not checked: N >= 8. There the queue swings between empty and above Kmax
/// (where RED marks every packet), the limit cycle the CoNEXT 2016 paper
/// predicts for intermediate N with default parameters, and the time averages
/// leave the fixed point (N = 10: mean queue 73-88 KB vs q* = 128 KB, marked
/// fraction 3-4x p*).
#[test]
fn dcqcn_paper_model_matches_fluid_fixed_point() {
    let ms = 1000 * US;
    let (warm, end) = (40 * ms, 120 * ms);
    let (kmin, kmax, pmax) = (5e3, 200e3, 0.01);
    let ecn =
        format!("kind = \"red\"\nkmin = {kmin}\nkmax = {kmax}\npmax = {pmax}\nat = \"dequeue\"");
    let cc = "{ algorithm = \"dcqcn\", model = \"paper\" }";
    for n in [2u32, 4] {
        let toml = |stop: u64| {
            bottleneck_at(
                "40Gbps",
                &ecn,
                &format!("{}us", stop / US),
                cc,
                n,
                "cnp_mode = \"paced\"",
            )
        };
        // The model's parameters, taken from the scenario the simulation runs.
        let sc = scenario(&toml(end));
        let rdma = sc.config.rdma.as_ref().unwrap();
        let RateCcConfig::Dcqcn(p) = &rdma.cc else {
            panic!("not DCQCN")
        };
        assert_eq!(p.model, dcqcn::Model::Paper);
        let line = 40e9;
        let r = p.resolve(line);
        let wire_bits = 8.0 * rdma.data_wire(rdma.payload) as f64;
        let c_pkts = line / wire_bits;
        let (p_star, alpha_star) = dcqcn_fixed_point(
            c_pkts,
            n as f64,
            rdma.cnp_interval.ps() as f64 * 1e-12,
            r.alpha_interval as f64 * 1e-12,
            r.increase_interval as f64 * 1e-12,
            r.byte_counter as f64 / rdma.payload as f64,
            r.fast_recovery_times as f64,
            r.rate_ai / wire_bits,
            pmax,
        );
        let q_star = kmin + p_star / pmax * (kmax - kmin);
        // R_C* = C/N on the wire; goodput counts payload only.
        let share = line / n as f64 * rdma.payload as f64 / rdma.data_wire(rdma.payload) as f64;

        let w = measure(&toml(end), warm, end, US);
        let (m0, d0) = marks_at_bottleneck(&toml(warm), n + 1);
        let (m1, d1) = marks_at_bottleneck(&toml(end), n + 1);
        let p_bar = (m1 - m0) as f64 / (d1 - d0) as f64;
        let q_bar = w.mean_queue();
        println!(
            "N = {n}: p* {p_star:.3e} (measured {p_bar:.3e}), q* {:.1} KB (measured {:.1} KB), \
             alpha* {alpha_star:.3}, rates {:?} Gb/s vs {:.3}",
            q_star / 1e3,
            q_bar / 1e3,
            w.rates.iter().map(|r| r / 1e9).collect::<Vec<_>>(),
            share / 1e9
        );
        assert!(p_star < pmax, "the fixed point must be on RED's slope");
        assert!(
            (q_bar / q_star - 1.0).abs() <= 0.2,
            "N = {n}: mean queue {q_bar:.0} B vs q* {q_star:.0} B"
        );
        assert!(
            (p_bar / p_star - 1.0).abs() <= 0.2,
            "N = {n}: marked fraction {p_bar:.3e} vs p* {p_star:.3e}"
        );
        for rate in &w.rates {
            assert!(
                (rate / share - 1.0).abs() <= 0.2,
                "N = {n}: rate {rate:.3e} vs C/N {share:.3e}"
            );
        }
    }
}

/// HPCC: long flows settle near eta = 95 % of the link with a near-empty queue.
#[test]
fn hpcc_settles_near_eta_with_an_empty_queue() {
    let us = 1_000_000u64;
    let toml = bottleneck("\"hpcc\"", 4, "window = \"variable\"\nack_size = 88");
    let sc = scenario(&toml);
    let mut sim = Simulation::new(&sc).unwrap();
    sim.run_until(500 * us);
    let tx0 = sim.switch_port_tx_bytes(0, 0);
    let mut qmax = 0;
    for i in 1..=100 {
        sim.run_until(500 * us + i * 10 * us);
        qmax = qmax.max(sim.switch_queue_bytes(0, 0));
    }
    let tx1 = sim.switch_port_tx_bytes(0, 0);
    let util = (tx1 - tx0) as f64 * 8.0 / (1000e-6 * 100e9);
    assert!((0.90..=0.99).contains(&util), "utilization {util:.3}");
    assert!(qmax < 30_000, "queue reached {qmax} B");
}

/// Base RTT of the single-switch bottleneck at 100G with 1 us links: four
/// propagation delays, a 1048 B data packet serialised by the NIC and the
/// switch, a 60 B ACK serialised by the receiver's NIC and the switch.
fn base_rtt_100g_s() -> f64 {
    4e-6 + 2.0 * 1048.0 * 8.0 / 100e9 + 2.0 * 60.0 * 8.0 / 100e9
}

/// TIMELY (Mittal et al. SIGCOMM 2015, Algorithm 1; HPCC simulator flavour,
/// docs/mechanisms.md, TIMELY): four long flows on one 100G bottleneck. After a 10 ms warm-up
/// (10-40 ms measured), the RTT stays between T_low = 50 us and
/// T_high = 500 us, the link stays busy and the flows share it fairly.
///
/// β = 0.2, not the paper's 0.8: in the gradient region the rate is updated
/// once per RTT by `1 - β · gradient`, and with the queue growing at
/// x = (ΣR - C)/C the gradient is ≈ x · RTT / minRTT, so the excess becomes
/// x (1 - β RTT/minRTT) after one update: the loop settles without
/// overshoot only while β RTT/minRTT < 1, and diverges beyond 2. With
/// minRTT = 20 us that is RTT < 100 us for β = 0.2, but already ≥ 2 at
/// T_low for β = 0.8, so the paper's β cannot hold the RTT inside
/// [T_low, T_high] here; [`timely_default_beta_overshoots_below_t_low`] checks
/// that side.
///
/// Fairness: "ECN or Delay" (Zhu et al., CoNEXT 2016, the TIMELY analysis)
/// shows TIMELY has infinitely many fixed points, so rate differences are
/// not corrected, only diluted by the equal additive steps. These flows start
/// together at line rate and see the same RTTs, so they stay close: each
/// within 10 % of the fair share and Jain ≥ 0.99 (measured: within 3.9 %,
/// Jain 0.9992, utilisation 1.000, RTT 63.7-95.9 us; the queue drifts slowly
/// upwards, 640 KB to 1.33 MB over 100 ms, as a continuum of fixed points
/// allows). The RTT band is not automatic: with β = 0.8 the same scenario
/// leaves it (next test).
#[test]
fn timely_holds_the_rtt_between_t_low_and_t_high() {
    let ms = 1000 * US;
    let toml = bottleneck_at(
        "100Gbps",
        "kind = \"off\"",
        "40ms",
        "{ algorithm = \"timely\", beta = 0.2 }",
        4,
        "",
    );
    let w = measure(&toml, 10 * ms, 40 * ms, US);
    let rtt = |q: u64| base_rtt_100g_s() + q as f64 * 8.0 / 100e9;
    let (lo, hi) = (
        rtt(*w.queue.iter().min().unwrap()),
        rtt(*w.queue.iter().max().unwrap()),
    );
    let fair = 100e9 / 4.0 * 1000.0 / 1048.0;
    let util = w.tx_bps / 100e9;
    println!(
        "RTT {:.1}-{:.1} us, utilisation {util:.4}, Jain {:.5}, rates {:?} Gb/s (fair {:.3})",
        lo * 1e6,
        hi * 1e6,
        w.jain(),
        w.rates.iter().map(|r| r / 1e9).collect::<Vec<_>>(),
        fair / 1e9
    );
    assert!(
        lo >= 50e-6 && hi <= 500e-6,
        "RTT left [T_low, T_high]: {:.1}-{:.1} us",
        lo * 1e6,
        hi * 1e6
    );
    // A standing queue all the time means the link never idles.
    assert!(util >= 0.99, "utilisation {util:.4}");
    assert!(w.jain() >= 0.99, "Jain {:.5}", w.jain());
    for r in &w.rates {
        assert!(
            (r / fair - 1.0).abs() <= 0.10,
            "rate {r:.3e} vs fair {fair:.3e}"
        );
    }
}

/// The other side of the loop-gain argument above: with the paper's
/// β = 0.8 (minRTT 20 us), β · RTT/minRTT ≥ 2 whenever RTT ≥ T_low, so each
/// cut overshoots and the queue empties in every cycle (measured: RTT
/// 4.2-83 us, utilisation 87.5 %, flows equal to each other).
#[test]
fn timely_default_beta_overshoots_below_t_low() {
    let ms = 1000 * US;
    let toml = bottleneck_at("100Gbps", "kind = \"off\"", "40ms", "\"timely\"", 4, "");
    let w = measure(&toml, 10 * ms, 40 * ms, US);
    let empty = w.queue.iter().filter(|&&q| q == 0).count();
    println!(
        "beta 0.8: queue empty in {empty} of {} samples, utilisation {:.4}",
        w.queue.len(),
        w.tx_bps / 100e9
    );
    assert!(empty > 0, "the queue never emptied");
    assert!(w.tx_bps < 0.99 * 100e9);
}

/// Without congestion control (PFC only) the bottleneck runs at line rate.
#[test]
fn line_rate_senders_fill_the_bottleneck() {
    let us = 1_000_000u64;
    let (_, util) = rates_after(&bottleneck("\"none\"", 4, ""), 500 * us, 1500 * us);
    println!("none util {util:.4e}");
    assert!(util > 0.99e11, "bottleneck {util:.3e} b/s");
}

/// A congestion-control parameter out of range is rejected by scenario
/// validation, at `rdma.cc.<field>`, with the fix in the message.
#[test]
fn bad_cc_parameters_name_the_field_and_the_fix() {
    let with = |cc: &str| bottleneck(cc, 2, "");
    // A zero rate-increase timer would fire for ever at one instant.
    let e = scenario_err(&with(
        "{ algorithm = \"dcqcn\", increase_interval = \"0us\" }",
    ));
    println!("{e}");
    assert_eq!(e.path, "rdma.cc.increase_interval", "{e}");
    assert!(
        e.message.contains("positive") && e.message.contains("300us"),
        "{e}"
    );
    let e = scenario_err(&with(
        "{ algorithm = \"dcqcn\", model = \"paper\", alpha_interval = \"0ns\" }",
    ));
    assert_eq!(e.path, "rdma.cc.alpha_interval", "{e}");
    assert!(e.message.contains("55us"), "{e}");
    // A negative time does not parse; the error says where and why.
    let e = scenario_err(&with(
        "{ algorithm = \"dcqcn\", increase_interval = \"-300us\" }",
    ))
    .to_string();
    println!("{e}");
    assert!(e.contains("rdma.cc") && e.contains("negative"), "{e}");
    // A field of the other DCQCN model.
    let e = scenario_err(&with(
        "{ algorithm = \"dcqcn\", model = \"paper\", decrease_interval = \"4us\" }",
    ));
    assert_eq!(e.path, "rdma.cc.decrease_interval", "{e}");
    assert!(e.message.contains("model = \"mellanox\""), "{e}");
    // Out-of-range gains and thresholds of the other algorithms.
    let e = scenario_err(&with("{ algorithm = \"dcqcn\", g = 0.0 }"));
    assert_eq!(e.path, "rdma.cc.g", "{e}");
    let e = scenario_err(&with(
        "{ algorithm = \"timely\", t_low = \"600us\", t_high = \"500us\" }",
    ));
    assert_eq!(e.path, "rdma.cc.t_low", "{e}");
    let e = scenario_err(&with("{ algorithm = \"timely\", beta = 1.5 }"));
    assert_eq!(e.path, "rdma.cc.beta", "{e}");
    let e = scenario_err(&with("{ algorithm = \"hpcc\", eta = 0.0 }"));
    assert_eq!(e.path, "rdma.cc.eta", "{e}");
    let e = scenario_err(
        &with("{ algorithm = \"dctcp\", g = 2.0 }")
            .replace("[rdma]", "[rdma]\ncnp_mode = \"ack_flag\""),
    );
    assert_eq!(e.path, "rdma.cc.g", "{e}");
    // And the defaults of every algorithm pass.
    for name in RateCcConfig::NAMES {
        let cfg = RateCcConfig::by_name(name).unwrap();
        assert_eq!(cfg.validate(), Ok(()), "{name}");
    }
}

/// Flows of an RDMA scenario that give no class travel in `rdma.data_class`
/// (default 3): the class the NIC watches for PAUSE frames and, here, the
/// one PFC protects. The 16:1 incast of `lossless_pfc.rs` without
/// `class = 3` must then be lossless too. Today it runs in class 0
/// (`transport.class`), lossy, and drops 36770 packets.
#[test]
fn rdma_flows_default_to_the_rdma_data_class() {
    let r = run(r#"
        seed = 3
        [topology]
        kind = "single_switch"
        hosts = 17
        link_rate = "100Gbps"
        link_delay = "1us"
        [switch]
        buffer = "1MB"
        [switch.pfc]
        classes = [3]
        [rdma]
        cc = "none"
        [[workload.incast]]
        fan_in = 16
        bytes_per_sender = "500KB"
        times = ["0us"]
        receiver = 0
    "#);
    let c = &r.counters;
    for (class, enq) in c.u8s("class").iter().zip(c.u64s("enq_pkts")) {
        // Data in class 3, ACKs in rdma.ctrl_class = 7.
        assert!(
            *enq == 0 || *class == 3 || *class == 7,
            "{enq} packets in class {class}"
        );
    }
    assert_eq!(c.u64s("drop_pkts").iter().sum::<u64>(), 0);
    assert!(r.flows.u8s("finished").iter().all(|&f| f == 1));
}
