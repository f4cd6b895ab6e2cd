//! DCTCP against its fluid model, and incast collapse (NewReno) vs. none (DCTCP).

use crate::common::*;
use incast_core::units::*;
use incast_core::Simulation;

/// V1a of the mechanism notes (DCTCP paper §3.3): 10G, 1500 B packets, RTT 100 us
/// (C*RTT = 83.3 packets), K = 65 packets, N = 2 long flows, g = 1/16.
#[test]
fn dctcp_queue_and_alpha_match_the_fluid_model() {
    let n = 2usize;
    // 4 link traversals of 24.8 us plus ~0.8 us of serialization: base RTT ~ 100 us.
    let mut toml = String::from(
        r#"
        stop = "1300ms"
        [topology]
        kind = "single_switch"
        hosts = 3
        link_rate = "10Gbps"
        link_delay = "24800ns"
        [switch]
        buffer = "10MB"
        ecn = { kind = "step", k = "97500B" }
        [transport]
        cc = "dctcp"
        [metrics]
        queue_ports = "none"
        "#,
    );
    for s in 1..=n {
        toml += &format!("[[workload.flows]]\nsrc = {s}\ndst = 0\nsize = \"100GB\"\n");
    }
    let sc = scenario(&toml);
    let mut sim = Simulation::new(&sc).unwrap();
    sim.run_until(300 * MS);
    let mut q = vec![];
    let mut t = 300 * MS;
    while t < 1300 * MS {
        t += US;
        sim.run_until(t);
        q.push(sim.switch_queue_bytes(0, 0) as f64 / 1500.0);
        if t % (100 * US) == 0 {
            sim.trace_cc_now();
        }
    }
    // Fluid model (DCTCP paper eqs. 8-12): W* = (C*RTT + K)/N, alpha = sqrt(2/W*),
    // A = 0.5*sqrt(2N(C*RTT+K)), Q_max = K + N.
    let (crtt, k) = (83.3, 65.0);
    let w_star = (crtt + k) / n as f64;
    let alpha_model = (2.0 / w_star).sqrt();
    let amp_model = 0.5 * (2.0 * n as f64 * (crtt + k)).sqrt();
    let qmax_model = k + n as f64;
    // Measured amplitude: per 1 ms window (~1.6 oscillation periods of 6.2 RTTs) max - min,
    // averaged over 1000 windows.
    let amps: Vec<f64> = q
        .chunks(1000)
        .map(|c| {
            c.iter().cloned().fold(f64::MIN, f64::max) - c.iter().cloned().fold(f64::MAX, f64::min)
        })
        .collect();
    let amp = amps.iter().sum::<f64>() / amps.len() as f64;
    let qmax = q
        .chunks(1000)
        .map(|c| c.iter().cloned().fold(f64::MIN, f64::max))
        .sum::<f64>()
        / amps.len() as f64;
    let mean_q = q.iter().sum::<f64>() / q.len() as f64;
    let alphas: Vec<f64> = sim.cc_trace().iter().map(|x| x.2).collect();
    let alpha = alphas.iter().sum::<f64>() / alphas.len() as f64;
    eprintln!(
        "DCTCP N={n}: amplitude {amp:.1} pkts (model {amp_model:.1}), Qmax {qmax:.1} (model {qmax_model:.1}), \
         mean queue {mean_q:.1}, alpha {alpha:.3} (model {alpha_model:.3})"
    );
    // Tolerance 20 % (the issue's figure): the fluid model ignores packetization and the
    // one-RTT marking delay, both a few packets at this scale.
    assert!(
        (amp / amp_model - 1.0).abs() < 0.2,
        "amplitude {amp} vs {amp_model}"
    );
    assert!(
        (alpha / alpha_model - 1.0).abs() < 0.2,
        "alpha {alpha} vs {alpha_model}"
    );
    assert!(
        (qmax / qmax_model - 1.0).abs() < 0.2,
        "Qmax {qmax} vs {qmax_model}"
    );
    assert!(
        mean_q > k - amp_model && mean_q < qmax_model + 2.0,
        "the queue oscillates around K: mean {mean_q}"
    );
}

/// Goodput (payload bits / completion time) of an incast of `fan_in` x 64 KB, and timeouts.
fn incast(cc: &str, fan_in: u32) -> (f64, u64) {
    let r = run(&format!(
        r#"
        [topology]
        kind = "single_switch"
        hosts = 65
        link_rate = "10Gbps"
        link_delay = "5us"
        [switch]
        buffer = "4MB"
        admission = {{ kind = "static", limit = "256KB" }}
        ecn = {{ kind = "step", k = "30KB" }}
        [transport]
        cc = "{cc}"
        init_cwnd = 2
        rto_min = "10ms"
        [[workload.incast]]
        fan_in = {fan_in}
        bytes_per_sender = "64KB"
        receiver = 0
        times = ["0us", "100ms", "200ms", "300ms", "400ms"]
        [metrics]
        queue_ports = "none"
        "#
    ));
    let i = &r.incasts;
    assert_eq!(i.rows(), 5);
    let mean_ct: f64 = i
        .u64s("completion_ps")
        .iter()
        .map(|&c| c as f64)
        .sum::<f64>()
        / 5.0;
    let goodput = fan_in as f64 * 64_000.0 * 8.0 / (mean_ct / SEC as f64);
    let timeouts: u64 = r.flows.u32s("timeouts").iter().map(|&t| t as u64).sum();
    (goodput / 1e9, timeouts)
}

#[test]
fn incast_collapses_newreno_but_not_dctcp() {
    // Shallow per-port limit of 256 KB (~170 packets), initial window 2 segments (the
    // DCTCP paper's 2010 Linux), RTOmin 10 ms as in its incast experiments (section 4.3).
    // The initial windows of all senders (64 x 2 x 1500 B = 192 KB) fit the limit: beyond
    // that, the first round trip overflows before any congestion signal, whatever the CC.
    let fans = [4u32, 16, 32, 48, 64];
    let reno: Vec<(f64, u64)> = fans.iter().map(|&f| incast("newreno", f)).collect();
    let dctcp: Vec<(f64, u64)> = fans.iter().map(|&f| incast("dctcp", f)).collect();
    eprintln!("fan-in {fans:?}\nNewReno goodput Gb/s, timeouts: {reno:?}\nDCTCP   goodput Gb/s, timeouts: {dctcp:?}");
    // NewReno: at the largest fan-in timeouts appear and goodput collapses below 40 % of
    // the best goodput it reached at a smaller fan-in. (Fan-in 32-48 is the edge: whether
    // the first loss burst costs a timeout depends on how simultaneous arrivals interleave
    // and on the recovery, so it is reported, not asserted. Measured: with SACK and
    // RACK-TLP, the default, 9.3 Gb/s at fan-in 16, 9.5 at 32 and 9.6 at 48, 3.1 at 64 with
    // 5 timeouts; with SACK alone 1.4 at 32 and 2.2 at 48; with NewReno recovery 9.6 at 48;
    // all three time out at 64, SACK alone at 2.9 Gb/s, NewReno recovery at 3.1.)
    let best_small = reno[..3].iter().map(|r| r.0).fold(0.0, f64::max);
    let (g, t) = reno[4];
    assert!(t > 0, "NewReno should time out at fan-in 64: {reno:?}");
    assert!(
        g < 0.4 * best_small,
        "NewReno should collapse at fan-in 64: {reno:?}"
    );
    // DCTCP: no timeouts at any fan-in here, and goodput never falls below 75 % of the 10G
    // link (fan-in 4 is itself limited by slow start to ~8 Gb/s; the payload ceiling is 9.7).
    for (f, (g, t)) in fans.iter().zip(&dctcp) {
        assert_eq!(*t, 0, "DCTCP timed out at fan-in {f}");
        assert!(*g > 7.5, "DCTCP goodput {g} Gb/s at fan-in {f}");
    }
}
