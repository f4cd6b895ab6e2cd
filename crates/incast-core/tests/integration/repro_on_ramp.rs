//! The bundled On-Ramp reproduction (the On-Ramp talk, June 2020; the paper,
//! NSDI 2021; experiments in `scenarios/on_ramp/`, results and modelling
//! choices in `scenarios/on_ramp/README.md`).
//!
//! The tests load the points of the SMALL experiment
//! `scenarios/on_ramp/small.toml` (64 hosts, 1 ms of traffic; co-existence
//! 10 ms) and check properties that must hold whatever the tuning: every
//! flow finishes, bytes are conserved, On-Ramp actually pauses, and the
//! direction of the talk's claim only where our measurements show it holds
//! for every seed 1-3 (see the README for the per-seed numbers).
//!
//! Also (not the small experiment): slide 11's strawman against the final
//! rule with two long-lived CUBIC flows (`cubic_two_flows_experiment.toml`,
//! 100 ms, well under a second a run) and slides 16-17's Google-Cloud runs
//! under CUBIC and BBR (`cloud_experiment.toml`, shortened to 20 ms of
//! traffic, about a second a run).
//!
//! `report` (ignored) prints per-run statistics the CLI summary does not give
//! (background FCT without the incast flows, per-group incast completion and
//! retransmissions, receiver-link utilization between two stop times) for
//! runs of the experiment files; the README's tables come from `incast sweep`
//! and `scenarios/tables.py`.
//!
//! ```text
//! ON_RAMP_RUNS="experiment.toml:ns3_dcqcn:base experiment.toml:ns3_dcqcn:on_ramp" \
//!   cargo test --release -p incast-core -- --ignored --nocapture repro_on_ramp::report
//! ```

use crate::common;
use incast_core::units::{Ps, US};
use incast_core::{Results, Scenario, Simulation};

/// A run of an On-Ramp experiment file: `spec` is `file:point:variant`.
fn load(spec: &str) -> Scenario {
    let mut parts = spec.split(':');
    let (file, point, variant) = (
        parts.next().unwrap(),
        parts.next().expect("file:point:variant"),
        parts.next().expect("file:point:variant"),
    );
    common::experiment_scenario(&format!("on_ramp/{file}"), point, variant)
}

fn run_sc(sc: &Scenario) -> Results {
    let mut sim = Simulation::new(sc).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    sim.finish()
}

fn run_seed(spec: &str, seed: u64) -> Results {
    common::run_seed(&load(spec), seed, spec)
}

fn summary(r: &Results) -> serde_json::Value {
    serde_json::from_str(&r.summary_json).unwrap()
}

/// Mean of a sample (NaN when empty).
fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.iter().sum::<f64>() / v.len() as f64
}

/// The `p`-th percentile (0-100), interpolated as the summary does (numpy's default).
fn pct(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    incast_core::metrics::percentile(&s, p / 100.0)
}

/// Incast request completion times (us) of the finished incasts whose
/// receiver is in `group` (all incasts when `None`).
fn rct_us(r: &Results, group: Option<&[u32]>) -> Vec<f64> {
    let t = &r.incasts;
    (0..t.rows())
        .filter(|&i| t.u8s("finished")[i] == 1)
        .filter(|&i| group.is_none_or(|g| g.contains(&t.u32s("receiver")[i])))
        .map(|i| t.u64s("completion_ps")[i] as f64 / 1e6)
        .collect()
}

/// FCTs (us) of the finished background (non-incast) flows with `lo < size <= hi`.
fn bg_fct_us(r: &Results, lo: u64, hi: u64) -> Vec<f64> {
    let f = &r.flows;
    (0..f.rows())
        .filter(|&i| {
            f.i64s("incast_id")[i] < 0
                && f.u8s("finished")[i] == 1
                && f.u64s("size_bytes")[i] > lo
                && f.u64s("size_bytes")[i] <= hi
        })
        .map(|i| f.u64s("fct_ps")[i] as f64 / 1e6)
        .collect()
}

/// Retransmitted packets of the flows sent by hosts in `group` (all when `None`).
fn retransmits(r: &Results, group: Option<&[u32]>) -> u64 {
    let f = &r.flows;
    (0..f.rows())
        .filter(|&i| group.is_none_or(|g| g.contains(&f.u32s("src")[i])))
        .map(|i| f.u32s("retransmits")[i] as u64)
        .sum()
}

fn all_finished_and_conserved(file: &str, seed: u64, r: &Results) {
    common::assert_finished_and_conserved(r, &format!("{file} seed {seed}"));
    assert!(r.incasts.u8s("finished").iter().all(|&x| x == 1));
}

fn pauses(r: &Results) -> u64 {
    summary(r)["edge"]["pauses"].as_u64().unwrap_or(0)
}

// ---------------------------------------------------------------------------
// The tests.
// ---------------------------------------------------------------------------

/// One point of the small experiment (`cc`, variant `base` or `on_ramp`) for
/// one seed, after the checks every run must pass: all flows and incasts
/// finish, bytes are conserved (nothing left in the network), and On-Ramp
/// pauses if and only if it is enabled.
fn small(cc: &str, or: bool, seed: u64) -> Results {
    let file = format!("small.toml:{cc}:{}", if or { "on_ramp" } else { "base" });
    let r = run_seed(&file, seed);
    all_finished_and_conserved(&file, seed, &r);
    let p = pauses(&r);
    if or {
        assert!(p > 0, "{file} seed {seed}: On-Ramp never paused");
    } else {
        assert_eq!(p, 0, "{file} seed {seed}: paused without On-Ramp");
    }
    r
}

/// The talk's slide-18 claim for one CC, checked on seeds 1-3: On-Ramp
/// lowers the incast request completion time (mean and 95th percentile, the
/// talk's bars and whiskers) and the mean FCT of background flows <= 10 KB.
///
/// Tolerances, from our measurements on seeds 1-3 (README, "Small variant"):
/// - mean RCT must drop by at least 5 %: the smallest drop measured is 11 %
///   (TIMELY, seed 3; DCTCP >= 21 %, NewReno >= 57 %), so 5 % leaves room
///   for small modelling changes but fails if the effect disappears;
/// - p95 RCT must drop (strictly): the smallest drop measured is 5 %
///   (TIMELY, seed 3), too close to any margin to require more;
/// - mean FCT of background flows <= 10 KB must drop by at least 5 %: the
///   smallest drop measured is 15 % (DCTCP, seed 2), over ~40 flows a run.
fn on_ramp_helps(cc: &str) {
    for seed in 1..=3 {
        let (b, o) = (small(cc, false, seed), small(cc, true, seed));
        let (rb, ro) = (rct_us(&b, None), rct_us(&o, None));
        let (fb, fo) = (bg_fct_us(&b, 0, 10_000), bg_fct_us(&o, 0, 10_000));
        println!(
            "{cc} seed {seed}: incast RCT mean {:.1} -> {:.1} us, p95 {:.1} -> {:.1} us; FCT <= 10 KB mean {:.1} -> {:.1} us",
            mean(&rb), mean(&ro), pct(&rb, 95.0), pct(&ro, 95.0), mean(&fb), mean(&fo)
        );
        assert!(
            mean(&ro) < 0.95 * mean(&rb),
            "{cc} seed {seed}: mean RCT {} -> {}",
            mean(&rb),
            mean(&ro)
        );
        assert!(
            pct(&ro, 95.0) < pct(&rb, 95.0),
            "{cc} seed {seed}: p95 RCT {} -> {}",
            pct(&rb, 95.0),
            pct(&ro, 95.0)
        );
        assert!(
            mean(&fo) < 0.95 * mean(&fb),
            "{cc} seed {seed}: FCT <= 10 KB {} -> {}",
            mean(&fb),
            mean(&fo)
        );
    }
}

#[test]
fn on_ramp_helps_timely() {
    on_ramp_helps("timely");
}

#[test]
fn on_ramp_helps_rate_based_dctcp() {
    on_ramp_helps("dctcp");
}

#[test]
fn on_ramp_helps_newreno() {
    on_ramp_helps("newreno");
}

/// DCQCN and HPCC: the runs finish, conserve bytes and pause (seed 1), but
/// we assert no direction for DCQCN: on seeds 1-3 On-Ramp raised the p95
/// RCT on two seeds and moved the mean by -8 % to +5 % and the p99 by -34 %
/// to +7 % (README). HPCC keeps the queues below T, so On-Ramp rarely fires (440-1230
/// pauses a run, against 46-86 thousand over the other CCs) and changes the mean incast RCT by at most 1.1 %
/// on seeds 1-3; we check that it stays within 5 %, i.e. that On-Ramp is
/// nearly transparent over HPCC (a measured property, not the talk's claim).
#[test]
fn dcqcn_and_hpcc_run_and_hpcc_is_nearly_untouched() {
    small("dcqcn", false, 1);
    small("dcqcn", true, 1);
    let (b, o) = (small("hpcc", false, 1), small("hpcc", true, 1));
    let (mb, mo) = (mean(&rct_us(&b, None)), mean(&rct_us(&o, None)));
    assert!((mo / mb - 1.0).abs() < 0.05, "HPCC mean RCT {mb} -> {mo}");
}

/// Co-existence (talk slides 23-24), small variant (10 ms, 96 hosts at 10G,
/// TCP NewReno), seeds 1-3. Case A: no group uses On-Ramp; B: group 1 only;
/// C: both. Checks: `[edge] hosts` gates only group 1 in B; the claims that
/// held on every seed we ran:
/// - A -> B, group 1's mean incast RCT at least halves (measured drops
///   57-83 %) and its retransmissions fall (857 -> 136, 8961 -> 0, 6259 -> 0);
/// - B -> C, group 2's mean incast RCT at least halves (measured 69-89 %).
///
/// Not asserted, because it did not hold on every seed: the talk's "group 2
/// also improves from A to B" (measured +1 %, 0 %, -8 %) and "group 1
/// improves slightly from B to C" (-3 %, +11 %, +2 %).
#[test]
fn coexistence_group_gains() {
    for seed in 1..=3 {
        let run = |case: &str| {
            let variant = match case {
                "a" => "base",
                "b" => "on_ramp_group1",
                _ => "on_ramp",
            };
            let file = format!("small.toml:coexist:{variant}");
            let mut sc = load(&file);
            sc.config.seed = seed;
            let r = run_sc(&sc);
            all_finished_and_conserved(&file, seed, &r);
            (sc, r)
        };
        let (sa, a) = run("a");
        let (_, b) = run("b");
        let (_, c) = run("c");
        let (g1, g2) = (&sa.incast_hosts[0][..], &sa.incast_hosts[1][..]);
        let host_pauses = |r: &Results, g: &[u32]| -> u64 {
            (0..r.hosts.rows())
                .filter(|&i| g.contains(&r.hosts.u32s("host")[i]))
                .map(|i| r.hosts.u32s("edge_pauses")[i] as u64)
                .sum()
        };
        assert_eq!(pauses(&a), 0);
        assert!(
            host_pauses(&b, g1) > 0 && host_pauses(&b, g2) == 0,
            "seed {seed}: case B gates group 1 only"
        );
        assert!(
            host_pauses(&c, g1) > 0 && host_pauses(&c, g2) > 0,
            "seed {seed}: case C gates both groups"
        );
        let m = |r: &Results, g: &[u32]| mean(&rct_us(r, Some(g)));
        println!(
            "seed {seed}: group 1 RCT mean A {:.0} B {:.0} C {:.0} us, retx A {} B {}; group 2 RCT mean A {:.0} B {:.0} C {:.0} us",
            m(&a, g1), m(&b, g1), m(&c, g1), retransmits(&a, Some(g1)), retransmits(&b, Some(g1)),
            m(&a, g2), m(&b, g2), m(&c, g2)
        );
        assert!(m(&b, g1) < 0.5 * m(&a, g1), "seed {seed}: group 1 A -> B");
        assert!(
            retransmits(&b, Some(g1)) < retransmits(&a, Some(g1)),
            "seed {seed}: group 1 retransmissions A -> B"
        );
        assert!(m(&c, g2) < 0.5 * m(&b, g2), "seed {seed}: group 2 B -> C");
    }
}

/// Prints one line of statistics for a run (used by `report`).
fn describe(file: &str, seed: u64, r: &Results) -> String {
    let s = summary(r);
    let rct = rct_us(r, None);
    let small = bg_fct_us(r, 0, 10_000);
    let mid = bg_fct_us(r, 10_000, 1_000_000);
    let big = bg_fct_us(r, 1_000_000, u64::MAX);
    format!(
        "{file} seed {seed}: incast RCT mean {:.1} p95 {:.1} p99 {:.1} us (n {}) | bg FCT mean/p95 us: <=10KB {:.1}/{:.1} (n {}), 10KB-1MB {:.1}/{:.1} (n {}), >1MB {:.0}/{:.0} (n {}) | retx {} drops {} pauses {} unfinished {} sim {:.0} us",
        mean(&rct),
        pct(&rct, 95.0),
        pct(&rct, 99.0),
        rct.len(),
        mean(&small),
        pct(&small, 95.0),
        small.len(),
        mean(&mid),
        pct(&mid, 95.0),
        mid.len(),
        mean(&big),
        pct(&big, 95.0),
        big.len(),
        retransmits(r, None),
        s["drops"]["packets"],
        s["edge"]["pauses"],
        s["flows"]["unfinished"],
        s["sim_time_us"].as_f64().unwrap_or(0.0),
    )
}

/// Report helper (not a check): runs the runs named in `ON_RAMP_RUNS`
/// (`file:point:variant`, the file under `scenarios/on_ramp`) for the seeds in `ON_RAMP_SEEDS`
/// (default "1") and prints their statistics. With several
/// `[[workload.incast]]` entries it also prints incast RCT and
/// retransmissions per group (the entry's `hosts`). With `ON_RAMP_JOIN` (a
/// time such as "2ms") it runs each file twice, with `stop` at the join time
/// and at the file's `stop`, and prints the receiver link's utilization
/// before and after the join (the prefix of both runs is identical).
#[test]
#[ignore]
fn report() {
    let files = std::env::var("ON_RAMP_RUNS").unwrap_or_default();
    let seeds: Vec<u64> = std::env::var("ON_RAMP_SEEDS")
        .unwrap_or_else(|_| "1".into())
        .split_whitespace()
        .map(|s| s.parse().unwrap())
        .collect();
    for file in files.split_whitespace() {
        for &seed in &seeds {
            let mut sc = load(file);
            sc.config.seed = seed;
            if let Ok(join) = std::env::var("ON_RAMP_JOIN") {
                let join: Ps = incast_core::units::parse_time(&join).unwrap();
                let end = sc.config.stop.expect("the file sets stop").0;
                let rx = sc.listed[0].dst;
                let tx_at = |r: &Results| -> (u64, u64) {
                    let p = &r.ports;
                    (0..p.rows())
                        .find(|&i| p.u32s("peer")[i] == rx)
                        .map(|i| (p.u64s("tx_bytes")[i], p.u64s("rate_bps")[i]))
                        .unwrap()
                };
                // Largest queue (bytes, any class) of the switch port facing the receiver.
                let max_q = |r: &Results| -> u64 {
                    let p = &r.ports;
                    let i = (0..p.rows()).find(|&i| p.u32s("peer")[i] == rx).unwrap();
                    let (n, pt) = (p.u32s("node")[i], p.u32s("port")[i]);
                    let c = &r.counters;
                    (0..c.rows())
                        .filter(|&j| c.u32s("node")[j] == n && c.u32s("port")[j] == pt)
                        .map(|j| c.u64s("max_queue_bytes")[j])
                        .max()
                        .unwrap_or(0)
                };
                let mut a = sc.clone();
                a.config.stop = Some(incast_core::config_types::TimeValue(join));
                let before = run_sc(&a);
                let (b0, rate) = tx_at(&before);
                let full = run_sc(&sc);
                let (b1, _) = tx_at(&full);
                let fs = summary(&full);
                let util =
                    |bytes: u64, dt: Ps| bytes as f64 * 8.0 / (rate as f64 * dt as f64 / 1e12);
                println!(
                    "{file} seed {seed}: receiver link utilization before join {:.3}, after join ({:.0}-{:.0} us) {:.3}; receiver-port max queue before join {} KB, whole run {} KB; PFC pause frames {}; drops {}; edge pauses {}",
                    util(b0, join),
                    join as f64 / US as f64,
                    end as f64 / US as f64,
                    util(b1 - b0, end - join),
                    max_q(&before) / 1000,
                    max_q(&full) / 1000,
                    fs["pfc"]["pause_frames"],
                    fs["drops"]["packets"],
                    pauses(&full)
                );
                continue;
            }
            let t0 = std::time::Instant::now();
            let r = run_sc(&sc);
            println!(
                "{} [{:.1} s wall]",
                describe(file, seed, &r),
                t0.elapsed().as_secs_f64()
            );
            if sc.incast_hosts.len() > 1 {
                for (g, hosts) in sc.incast_hosts.iter().enumerate() {
                    let rct = rct_us(&r, Some(hosts));
                    println!(
                        "    group {}: incast RCT mean {:.1} p95 {:.1} p99 {:.1} us (n {}), retransmits {}, pauses {}",
                        g + 1,
                        mean(&rct),
                        pct(&rct, 95.0),
                        pct(&rct, 99.0),
                        rct.len(),
                        retransmits(&r, Some(hosts)),
                        (0..r.hosts.rows())
                            .filter(|&i| hosts.contains(&r.hosts.u32s("host")[i]))
                            .map(|i| r.hosts.u32s("edge_pauses")[i] as u64)
                            .sum::<u64>()
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// CUBIC and BBR (talk slides 11, 16-17).
// ---------------------------------------------------------------------------

/// The switch port facing `host`: (node, port, tx_bytes, rate_bps).
fn port_to(r: &Results, host: u32) -> (u32, u32, u64, u64) {
    let p = &r.ports;
    let i = (0..p.rows())
        .find(|&i| p.u32s("peer")[i] == host)
        .expect("a port faces the host");
    (
        p.u32s("node")[i],
        p.u32s("port")[i],
        p.u64s("tx_bytes")[i],
        p.u64s("rate_bps")[i],
    )
}

/// Slide 11, `cubic_two_flows_experiment.toml` (two long-lived CUBIC flows
/// into host 2 over one 10G switch for 100 ms, T = 50 us): the strawman
/// over-pauses, so the bottleneck queue drains below T and empties, and the
/// link is under-used; the final rule keeps the link busy.
///
/// Measured (seed 1; the runs have no random workload): receiver-link
/// utilization 1.000 (CUBIC alone), 0.714 (strawman), 1.000 (final); share
/// of 10 us queue samples with an empty queue 0, 0.29, 0; with T = 30 and
/// 100 us (not in the experiment) the strawman got 0.667 and 0.754, the
/// final rule 1.000. Checks, with margins from those numbers:
/// - strawman utilization < 0.85 and final >= 0.98, so the final rule beats
///   the strawman by more than 0.13 (measured 0.29 at T = 50 us; 0.25-0.33
///   over T = 30-100 us); 0.98 allows for slow start and CUBIC's cuts of a
///   retuned model, 0.85 is halfway between the strawman's worst T and 1;
/// - the strawman's queue is empty in >= 10 % of the samples (measured 29 %),
///   the final rule's in < 1 % (measured 0);
/// - neither rule drops (CUBIC alone fills its buffer share and drops 950
///   packets), and the final rule splits the link evenly (goodputs within
///   1 %; measured 4.87 / 4.87 Gb/s, CUBIC alone 4.21 / 5.50).
///
/// What the final rule does not do: hold the queue *at* T. Its mean OWD is
/// 113 us = 2.3 T (queue about 126 KB), steady (p99 129 KB). With N flows
/// sharing the link each is paused (N-1)/N of the time, so the pause it
/// already took while a packet was in flight, (N-1)/N x RTT, cancels an
/// excess OWD - T of the same size: for N = 2 the queue settles where
/// OWD - T = RTT / 2, i.e. OWD ~ 2 T + the ACK's way back. That is the
/// "concurrency" factor of slide 10, which our rule leaves out by default
/// (`concurrency = "gradient"` pauses too little here: the queue fills to
/// the buffer and drops, README). We check 1.8 T < mean OWD < 2.8 T.
#[test]
fn cubic_two_flows_strawman_underutilizes_final_does_not() {
    let t_us = 50.0;
    let run = |variant: &str| {
        let what = format!("cubic_two_flows_experiment.toml two_flows/{variant}");
        let r = common::run_experiment(
            "on_ramp/cubic_two_flows_experiment.toml",
            "two_flows",
            variant,
            1,
        );
        // The run ends at `stop` with both flows sending: bytes are still on their way.
        crate::common::assert_bytes_conserved(&r, &what);
        let (node, port, tx, rate) = port_to(&r, 2);
        let util = tx as f64 * 8.0 / (rate as f64 * 0.1);
        let q = &r.queues;
        let series: Vec<u64> = (0..q.rows())
            .filter(|&i| q.u32s("node")[i] == node && q.u32s("port")[i] == port)
            .map(|i| q.u64s("bytes")[i])
            .collect();
        assert!(
            series.len() > 9000,
            "{what}: {} queue samples",
            series.len()
        );
        let empty = series.iter().filter(|&&b| b == 0).count() as f64 / series.len() as f64;
        let goodput: Vec<f64> = r
            .flows
            .u64s("size_bytes")
            .iter()
            .map(|&b| b as f64)
            .collect();
        let s = summary(&r);
        let owd = s["edge"]["owd_sampled_us"]["mean"]
            .as_f64()
            .unwrap_or(f64::NAN);
        println!(
            "{variant}: utilization {util:.3}, queue empty {empty:.2}, OWD mean {owd:.1} us, delivered {goodput:?} B, drops {}, pauses {}",
            s["drops"]["packets"],
            pauses(&r)
        );
        (
            util,
            empty,
            goodput,
            s["drops"]["packets"].as_u64().unwrap(),
            owd,
        )
    };
    let (u_base, _, _, drops_base, _) = run("base");
    let (u_straw, empty_straw, _, drops_straw, _) = run("strawman");
    let (u_final, empty_final, g_final, drops_final, owd_final) = run("on_ramp");
    assert!(u_base > 0.98, "CUBIC alone: utilization {u_base}");
    assert!(
        drops_base > 0,
        "CUBIC alone fills its buffer share and drops"
    );
    assert!(u_straw < 0.85, "strawman: utilization {u_straw}");
    assert!(u_final >= 0.98, "final rule: utilization {u_final}");
    assert!(empty_straw >= 0.10, "strawman: queue empty {empty_straw}");
    assert!(empty_final < 0.01, "final rule: queue empty {empty_final}");
    assert_eq!((drops_straw, drops_final), (0, 0));
    assert_eq!(g_final.len(), 2);
    assert!(
        (g_final[0] / g_final[1] - 1.0).abs() < 0.01,
        "final rule: goodputs {g_final:?}"
    );
    assert!(
        owd_final > 1.8 * t_us && owd_final < 2.8 * t_us,
        "final rule: mean OWD {owd_final} us against T = {t_us} us"
    );
}

/// Slides 16-17, `cloud_experiment.toml` (50 hosts at 10G, WebSearch 40 % +
/// incast 2 %, fan-out 40 x 2 KB), shortened to 20 ms of traffic (about 320
/// incasts; a run takes about a second) for seed 1: On-Ramp lowers the incast
/// RCT (mean and p99) and the mean FCT of WebSearch flows < 10 KB, under
/// CUBIC and under BBR.
///
/// Measured at 20 ms (base -> On-Ramp, us): seed 1 CUBIC RCT mean
/// 2711 -> 827, p99 6176 -> 1743, FCT < 10 KB 204.6 -> 79.2; BBR 871 -> 223,
/// 1836 -> 537, 93.1 -> 41.3. Over seeds 1-3 every one of these fell by
/// 2.26x or more (the smallest: BBR seed 1 FCT < 10 KB 2.26x, BBR seed 3
/// FCT 2.34x and p99 2.47x; CUBIC's smallest 2.58x). We require each to at
/// least halve: 10 % or more under every measured gain, and it fails if the
/// effect shrinks to a modest one.
/// The 100 ms runs of the README gain as much (RCT mean 3.0x CUBIC, 6.0x BBR).
fn cloud_on_ramp_helps(point: &str) {
    let run = |variant: &str| {
        let what = format!("cloud_experiment.toml {point}/{variant}");
        let mut sc = common::experiment_scenario("on_ramp/cloud_experiment.toml", point, variant);
        sc.config.duration = Some(incast_core::config_types::TimeValue(20_000 * US));
        let r = common::run_seed(&sc, 1, &what);
        all_finished_and_conserved(&what, 1, &r);
        assert_eq!(pauses(&r) > 0, variant == "on_ramp", "{what}: pauses");
        r
    };
    let (b, o) = (run("base"), run("on_ramp"));
    let (rb, ro) = (rct_us(&b, None), rct_us(&o, None));
    let (fb, fo) = (bg_fct_us(&b, 0, 9_999), bg_fct_us(&o, 0, 9_999));
    println!(
        "{point}: incast RCT mean {:.0} -> {:.0} us, p99 {:.0} -> {:.0} us (n {}); FCT < 10 KB mean {:.1} -> {:.1} us (n {})",
        mean(&rb), mean(&ro), pct(&rb, 99.0), pct(&ro, 99.0), rb.len(), mean(&fb), mean(&fo), fb.len()
    );
    assert!(rb.len() > 250 && fb.len() > 30, "{point}: too few samples");
    assert!(mean(&ro) < 0.5 * mean(&rb), "{point}: RCT mean");
    assert!(pct(&ro, 99.0) < 0.5 * pct(&rb, 99.0), "{point}: RCT p99");
    assert!(mean(&fo) < 0.5 * mean(&fb), "{point}: FCT < 10 KB mean");
}

#[test]
fn cloud_on_ramp_helps_cubic() {
    cloud_on_ramp_helps("cubic");
}

#[test]
fn cloud_on_ramp_helps_bbr() {
    cloud_on_ramp_helps("bbr");
}
