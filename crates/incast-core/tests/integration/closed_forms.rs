//! Checks against closed-form results: an idle path's FCT, M/D/1 waiting time,
//! max-min fair shares.

use crate::common::*;
use incast_core::units::*;
use incast_core::Simulation;

/// Departure times of equal-start packets through a tandem of FIFO store-and-forward
/// hops (the Lindley recursion): `end[h][i] = max(arrive[h][i], end[h][i-1]) + size_i / rate_h`,
/// `arrive[h+1][i] = end[h][i] + delay_h`. Returns the arrival times at the far end.
fn tandem(start: &[Ps], sizes: &[u64], hops: &[(Rate, Ps)]) -> Vec<Ps> {
    let mut arrive: Vec<Ps> = start.to_vec();
    for &(rate, delay) in hops {
        let mut prev_end = 0;
        for (i, &s) in sizes.iter().enumerate() {
            let end = arrive[i].max(prev_end) + rate.tx_time(s);
            prev_end = end;
            arrive[i] = end + delay;
        }
    }
    arrive
}

#[test]
fn idle_multi_hop_path_fct_is_exact() {
    // h0 -100G,1us- s0 -40G,2us- s1 -10G,500ns- h1 ; MSS 1460 + 40 B header, 64 B ACKs.
    let topo = r#"
        [topology]
        kind = "explicit"
        hosts = ["h0", "h1"]
        switches = ["s0", "s1"]
        links = [
          { a = "h0", b = "s0", rate = "100Gbps", delay = "1us" },
          { a = "s0", b = "s1", rate = "40Gbps", delay = "2us" },
          { a = "s1", b = "h1", rate = "10Gbps", delay = "500ns" },
        ]
        [transport]
        cc = "newreno"
        init_cwnd = 1000
    "#;
    let hops = [
        (Rate::gbps(100), US),
        (Rate::gbps(40), 2 * US),
        (Rate::gbps(10), 500 * NS),
    ];
    let back = [
        (Rate::gbps(10), 500 * NS),
        (Rate::gbps(40), 2 * US),
        (Rate::gbps(100), US),
    ];
    for size in [1u64, 1000, 1460, 1461, 14_600, 100_000, 1_000_000] {
        let r = run(&format!(
            "{topo}\n[[workload.flows]]\nsrc = \"h0\"\ndst = \"h1\"\nsize = {size}\nstart = \"3us\"\n"
        ));
        let mss = 1460;
        let n = size.div_ceil(mss) as usize;
        let payloads: Vec<u64> = (0..n).map(|i| (size - i as u64 * mss).min(mss)).collect();
        let wire: Vec<u64> = payloads.iter().map(|p| p + 40).collect();
        // The host NIC sends the segments back to back from the start time.
        let data_at_rx = tandem(&vec![3 * US; n], &wire, &hops);
        // One ACK per segment, sent on arrival, back through the reverse path.
        let acks_at_tx = tandem(&data_at_rx, &vec![64; n], &back);
        let expected_fct = acks_at_tx[n - 1] - 3 * US;
        let fct = r.flows.u64s("fct_ps")[0];
        assert_eq!(
            fct, expected_fct,
            "size {size}: simulated {fct} ps vs closed form {expected_fct} ps"
        );
        assert_eq!(r.flows.u32s("retransmits")[0], 0);
        // The HPCC ideal FCT is a close lower bound of this exact value for large flows.
        let ideal = r.flows.u64s("ideal_fct_ps")[0];
        if size >= 100_000 {
            assert!(
                (fct as f64 / ideal as f64) < 1.05,
                "size {size}: fct {fct} ideal {ideal}"
            );
        }
    }
}

fn md1_mean_wait(rho: f64) -> (f64, f64) {
    // Poisson arrivals of 1500 B packets from a 10 Tbps host (so its link adds < 1.2 ns of
    // spacing) into a switch port that drains at 10 Gb/s: an M/D/1 queue with S = 1.2 us.
    let rate = (rho * 10e9) as u64;
    let packets = 1_000_000.0;
    let duration_us = packets * 1.2 / rho;
    let r = run(&format!(
        r#"
        duration = "{duration_us}us"
        [topology]
        kind = "explicit"
        hosts = ["src", "dst"]
        switches = ["s"]
        links = [
          {{ a = "src", b = "s", rate = "10Tbps", delay = "1us" }},
          {{ a = "s", b = "dst", rate = "10Gbps", delay = "1us" }},
        ]
        [switch]
        buffer = "1GB"
        [[workload.packets]]
        src = "src"
        dst = "dst"
        size = 1500
        rate = "{rate}bps"
        process = "poisson"
        [metrics]
        queue_ports = "none"
    "#
    ));
    let c = &r.counters;
    // The switch's port toward dst carries every packet.
    let i = (0..c.rows())
        .max_by_key(|&i| c.u64s("deq_pkts")[i])
        .unwrap();
    let mean_wait = c.u64s("qdelay_sum_ps")[i] as f64 / c.u64s("deq_pkts")[i] as f64;
    let s = 1.2e6; // service time, ps
    let formula = rho * s / (2.0 * (1.0 - rho)); // Pollaczek-Khinchine for deterministic service
    (mean_wait, formula)
}

#[test]
fn md1_waiting_time_at_half_load() {
    // Tolerance 5 %: with 1e6 packets the standard error of the mean wait is about 0.5 % at
    // rho = 0.5 (autocorrelation time ~ 1/(1-rho)^2 services), so 5 % is ~10 sigma.
    let (w, f) = md1_mean_wait(0.5);
    eprintln!("M/D/1 rho=0.5: measured {w:.0} ps, formula {f:.0} ps");
    assert!(
        (w / f - 1.0).abs() < 0.05,
        "mean wait {w:.0} ps vs M/D/1 {f:.0} ps"
    );
}

#[test]
fn md1_waiting_time_at_load_0_8() {
    // At rho = 0.8 the standard error is about 1.3 % for 1e6 packets: 5 % is ~4 sigma.
    let (w, f) = md1_mean_wait(0.8);
    eprintln!("M/D/1 rho=0.8: measured {w:.0} ps, formula {f:.0} ps");
    assert!(
        (w / f - 1.0).abs() < 0.05,
        "mean wait {w:.0} ps vs M/D/1 {f:.0} ps"
    );
}

/// N long flows from N senders to one receiver through one switch; returns each flow's
/// goodput share of the bottleneck's payload capacity over [t1, t2] and the bottleneck's utilization.
fn long_flows(cc: &str, ecn: &str, buffer: &str, n: usize, t1: Ps, t2: Ps) -> (Vec<f64>, f64) {
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
        ecn = {ecn}
        [transport]
        cc = "{cc}"
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
    let sc = scenario(&toml);
    let mut sim = Simulation::new(&sc).unwrap();
    sim.run_until(t1);
    let a1 = sim.acked_bytes();
    let tx1 = sim.switch_port_tx_bytes(0, 0);
    sim.run_until(t2);
    let a2 = sim.acked_bytes();
    let tx2 = sim.switch_port_tx_bytes(0, 0);
    let dt = (t2 - t1) as f64 / SEC as f64;
    let payload_capacity = 10e9 * 1460.0 / 1500.0; // bits/s of payload at 10G
    let shares = a1
        .iter()
        .zip(&a2)
        .map(|((i1, b1), (i2, b2))| {
            assert_eq!(i1, i2);
            (b2 - b1) as f64 * 8.0 / dt / payload_capacity
        })
        .collect();
    let util = (tx2 - tx1) as f64 * 8.0 / dt / 10e9;
    eprintln!("{cc}: goodput shares of C {shares:?}, bottleneck utilization {util:.4}");
    (shares, util)
}

/// Each of N flows within 5 % of the max-min fair share C/N.
fn assert_fair(shares: &[f64]) {
    let n = shares.len() as f64;
    for s in shares {
        assert!((s * n - 1.0).abs() < 0.05, "shares {shares:?}");
    }
}

#[test]
fn newreno_long_flows_get_max_min_fair_shares() {
    // 4 flows, drop-tail 300 KB queue: each within 5 % of C/4 over 1 s (about 2000 RTTs and
    // hundreds of loss cycles, so per-flow averages settle).
    let (shares, util) = long_flows(
        "newreno",
        "{ kind = \"off\" }",
        "300KB",
        4,
        200 * MS,
        1200 * MS,
    );
    assert_fair(&shares);
    assert!(util > 0.9, "utilization {util}");
}

#[test]
fn dctcp_long_flows_fair_and_fully_utilized() {
    // K = 65 packets at 10G (DCTCP guideline K > C*RTT/7 with RTT ~ 22 us: C*RTT ~ 18 pkts).
    let (shares, util) = long_flows(
        "dctcp",
        "{ kind = \"step\", k = \"97500B\" }",
        "4MB",
        4,
        100 * MS,
        600 * MS,
    );
    assert_fair(&shares);
    assert!(util > 0.95, "utilization {util}");
}
