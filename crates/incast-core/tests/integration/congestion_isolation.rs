//! Congestion Isolation (IEEE 802.1Qcz; `mech/ci/`, docs/congestion-isolation.md): victim
//! protection, order, losslessness and CIP loss.
//!
//! The head-of-line-blocking setup is `congestion_spreading.rs`'s:
//!
//! ```text
//!   v  ──┐                                 ┌── r1   (incast bottleneck, 100G)
//!   h1 ──┤                                 │
//!   h2 ──┼── s0 ════════ 400G ════════ s1 ─┤
//!   h3 ──┤                                 │
//!   h4 ──┘                                 └── r2   (victim's receiver, 100G)
//! ```
//!
//! h1..h4 send long flows to r1 and v one to r2, all in lossless class 3, no
//! congestion control (`cc = "none"`, PFC alone). Without CI, s1 pauses s0's
//! class 3 and the victim gets 100G / 4 (measured in `congestion_spreading`).
//! With CI, s1 isolates the incast flows into class 2 at its port towards r1
//! and sends CIPs to s0, which isolates them too: s1's pauses then stop only
//! s0's class-2 queue, and the victim's class 3 flows on.

use crate::common;
use crate::common::scenario;
use incast_core::units::US;
use incast_core::{Results, Simulation};

const S1: u32 = 1;
const S1_TO_R1: usize = 1;
const S1_TO_R2: usize = 2;

/// The HOL setup (`common::hol_scenario`): victim in class 3, PFC on 2 and 3.
fn hol(k: usize, ci: &str) -> String {
    common::hol_scenario(k, 3, "[2, 3]", "400Gbps", ci)
}

struct Hol {
    victim: f64,
    incast: f64,
    results: Results,
}

fn measure(toml: &str) -> Hol {
    let sc = scenario(toml);
    let mut sim = Simulation::new(&sc).unwrap();
    let tx = |sim: &Simulation| {
        (
            sim.switch_port_tx_bytes(S1, S1_TO_R2),
            sim.switch_port_tx_bytes(S1, S1_TO_R1),
        )
    };
    sim.run_until(500 * US);
    let a = tx(&sim);
    sim.run_until(2500 * US);
    let b = tx(&sim);
    let bps = |x: u64, y: u64| (y - x) as f64 * 8.0 / 2000e-6;
    Hol {
        victim: bps(a.0, b.0),
        incast: bps(a.1, b.1),
        results: sim.finish(),
    }
}

fn summary(r: &Results) -> serde_json::Value {
    serde_json::from_str(&r.summary_json).unwrap()
}

fn total_drops(r: &Results) -> u64 {
    r.counters.u64s("drop_pkts").iter().sum()
}

/// Victim protection (issue check): in the classic head-of-line-blocking
/// setup the victim's throughput with CI is at least 2x its throughput with
/// PFC alone, and the incast loses nothing.
///
/// Prediction: with PFC alone the victim gets 100G / 4 (one packet in five
/// of s0's class-3 FIFO, which drains at r1's 100G: `congestion_spreading`).
/// With CI the incast flows leave s0 in class 2 and every PAUSE s1 sends is
/// for class 2, so the victim's class 3 is never paused and it runs at its
/// NIC's line rate: 100G, i.e. 4x. Tolerance: >= 2x (the issue's figure);
/// measured 25.0 -> 100.0 Gb/s.
#[test]
fn isolation_protects_the_victim() {
    let pfc = measure(&hol(4, ""));
    let ci = measure(&hol(4, "[switch.ci]"));
    let s = summary(&ci.results);
    println!(
        "victim: PFC alone {:.2} Gb/s, with CI {:.2} Gb/s; incast {:.2} / {:.2} Gb/s\nci: {}",
        pfc.victim / 1e9,
        ci.victim / 1e9,
        pfc.incast / 1e9,
        ci.incast / 1e9,
        s["ci"]
    );
    assert!(ci.victim >= 2.0 * pfc.victim);
    assert!(ci.incast >= 0.99 * 100e9, "the incast keeps r1 busy");
    // Lossless in both queues.
    assert_eq!(ci.results.lossless_drops, 0);
    assert_eq!(total_drops(&ci.results), 0);
    // The mechanism: 4 flows detected at s1, isolated at s0 by CIP and at
    // their NICs; every PAUSE comes from a congested-flow queue.
    let c = &s["ci"];
    assert_eq!(c["isolations_detected"], 4);
    assert_eq!(c["isolations_by_cip"], 4);
    assert_eq!(c["nic_isolations"], 4);
    assert_eq!(c["pause_frames_ncq"], 0);
    assert!(c["pause_frames_cfq"].as_u64().unwrap() > 0);
    // The victim's NIC (host 0) is never paused.
    let node = ci.results.pfc.u32s("node");
    assert!(!node.contains(&0), "v was paused");
    assert_eq!(s["out_of_order_arrivals"], 0);
    let iso = ci.results.flows.u32s("ci_isolations");
    let src = ci.results.flows.u32s("src");
    for (i, &h) in src.iter().enumerate() {
        // Incast flows: isolated at s1, s0 and the NIC; the victim nowhere.
        assert_eq!(iso[i], if h == 0 { 0 } else { 3 }, "flow from host {h}");
    }
}

/// A leaf-spine fabric with random all-to-all RDMA traffic and incasts, CI
/// tuned to cycle flows in and out of isolation quickly (a low threshold, a
/// short age, release on drain).
fn churn(seed: u64, ci: &str) -> String {
    format!(
        r#"
        seed = {seed}
        duration = "400us"
        stop = "20ms"
        [topology]
        kind = "leaf_spine"
        leaves = 4
        spines = 2
        hosts_per_leaf = 6
        host_rate = "100Gbps"
        fabric_rate = "100Gbps"
        host_delay = "1us"
        fabric_delay = "1us"
        [switch]
        buffer = "2MB"
        [switch.ecn]
        kind = "red"
        kmin = "20KB"
        kmax = "200KB"
        pmax = 0.05
        [switch.pfc]
        classes = [1, 2, 3]
        {ci}
        [rdma.cc]
        algorithm = "dcqcn"
        [[workload.poisson]]
        load = 0.5
        cdf = "websearch"
        [[workload.incast]]
        fan_in = 8
        bytes_per_sender = "64KB"
        load = 0.1
        "#
    )
}

/// Order (issue check): no flow ever sees a reordered packet across any
/// number of isolate / de-isolate cycles, for random traffic (seeds and CI
/// options drawn at random). The receiver counts every data packet that
/// arrives ahead of its next expected byte; with PFC there are no drops, so
/// any such arrival is a reordering. The check can fail: the same runs with
/// `order = "none"` reorder (asserted below).
#[test]
fn no_reordering_across_isolation_cycles() {
    let mut rng = incast_core::rng::Stream::new(7, "ci-property", 0);
    let mut cycles = 0;
    for case in 0..6 {
        let seed = 1 + rng.next_u64() % 1000;
        let order = ["marker", "counter"][case % 2];
        let detect = [
            r#"{ kind = "arriving" }"#,
            r#"{ kind = "sampled", every = "8KB" }"#,
            r#"{ kind = "top", k = 2, every = "16KB" }"#,
        ][(rng.next_u64() % 3) as usize];
        let cfq = ["[2]", "[1, 2]"][(rng.next_u64() % 2) as usize];
        let age = 5 + rng.next_u64() % 40;
        let drain = rng.next_u64() % 2 == 0;
        let propagate = ["immediate", "congested"][(rng.next_u64() % 2) as usize];
        let ci = format!(
            "[switch.ci]\nqueues = [{{ class = 3, cfq = {cfq} }}]\nthreshold = \"20KB\"\n\
             detect = {detect}\norder = \"{order}\"\nage = \"{age}us\"\n\
             release_on_drain = {drain}\npropagate = \"{propagate}\"\n"
        );
        let r = common::run(&churn(seed, &ci));
        let s = summary(&r);
        let c = &s["ci"];
        let deiso = c["deisolations"].as_u64().unwrap() + c["nic_deisolations"].as_u64().unwrap();
        println!(
            "seed {seed}, {order}, {detect}, cfq {cfq}, age {age}us, drain {drain}, {propagate}: \
             {} isolations, {deiso} de-isolations, {} flows",
            c["isolations_detected"], s["flows"]["total"]
        );
        common::assert_finished_and_conserved(&r, &ci);
        assert_eq!(s["out_of_order_arrivals"], 0, "{ci}");
        assert_eq!(total_drops(&r), 0, "lossless in every queue: {ci}");
        assert!(c["isolations_detected"].as_u64().unwrap() >= 10, "{ci}");
        cycles += deiso;
    }
    assert!(
        cycles >= 100,
        "only {cycles} de-isolations: the test does not exercise cycles"
    );
}

/// Without order preservation the same traffic is reordered: the check above
/// detects what it is meant to.
#[test]
fn without_order_preservation_flows_are_reordered() {
    let ci = "[switch.ci]\nthreshold = \"20KB\"\norder = \"none\"\nage = \"10us\"\n";
    let r = common::run(&churn(3, ci));
    let s = summary(&r);
    println!(
        "order = none: {} out-of-order arrivals",
        s["out_of_order_arrivals"]
    );
    assert!(s["out_of_order_arrivals"].as_u64().unwrap() > 0);
}

/// CIP loss (issue check): with 50 % of CIPs lost and the resend option,
/// isolation still reaches the upstream switch (and the NICs), and the victim
/// is protected as without loss. Without resends (`once`) the same loss
/// leaves some flows isolated at s1 only: 8 CIPs at 50 % loss all arrive
/// with probability 1/256, so this contrast fails only if loss is not modelled.
#[test]
fn isolation_survives_cip_loss_with_resends() {
    for (rel, expect_all) in [("marked", true), ("ack", true), ("once", false)] {
        let ci = format!("[switch.ci]\ncip = {{ reliability = \"{rel}\", loss = 0.5 }}\n");
        let r = measure(&hol(4, &ci));
        let s = summary(&r.results);
        let c = &s["ci"];
        println!(
            "{rel}, 50 % loss: victim {:.2} Gb/s, ci {c}",
            r.victim / 1e9
        );
        assert!(c["cips_lost"].as_u64().unwrap() > 0);
        if expect_all {
            assert_eq!(c["isolations_by_cip"], 4, "{rel}: s0 isolated every flow");
            assert_eq!(c["nic_isolations"], 4, "{rel}: every NIC isolated");
            assert!(r.victim >= 0.9 * 100e9, "{rel}: {:.3e}", r.victim);
        } else {
            let reached =
                c["isolations_by_cip"].as_u64().unwrap() + c["nic_isolations"].as_u64().unwrap();
            assert!(reached < 8, "{rel}: no isolation was lost");
        }
        assert_eq!(r.results.lossless_drops, 0);
        assert_eq!(s["out_of_order_arrivals"], 0);
    }
}

/// Scenario errors name the field and the fix.
#[test]
fn bad_ci_settings_are_rejected_by_name() {
    let cases = [
        (
            "[switch.ci]\nqueues = [{ class = 3, cfq = [4] }]",
            "switch.ci.queues[0].cfq[0]",
        ),
        (
            "[switch.ci]\nqueues = [{ class = 3, cfq = [1] }]",
            "add 1 to switch.pfc.classes",
        ),
        ("[switch.ci]\nthreshold = \"0B\"", "switch.ci.threshold"),
        ("[switch.ci]\ncip = { loss = 1.5 }", "switch.ci.cip.loss"),
        ("[switch.ci]\ntresh = \"1KB\"", "tresh"),
        (
            "[switch.ci]\ndetect = { kind = \"top\", k = 0, every = \"1KB\" }",
            "switch.ci.detect.k",
        ),
        // What CI cannot work with (its own checks, mech/ci/validate.rs).
        (
            "[switch.ci]\n[switch.trim]\nclasses = [0]",
            "trimming with congestion isolation is not modelled",
        ),
        (
            "[switch.ci]\n[switch.input_buffer]",
            "congestion isolation needs the shared buffer's PFC",
        ),
    ];
    for (ci, want) in cases {
        let e = common::scenario_err(&hol(1, ci)).to_string();
        assert!(e.contains(want), "{ci}: {e}");
    }
}
