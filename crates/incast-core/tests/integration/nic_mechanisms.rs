//! Every NIC model with every switch mechanism that reaches into the NIC.
//!
//! A mechanism's NIC half must work whichever model serves the host's flows:
//! Congestion Isolation (IEEE 802.1Qcz) moves a flow to its congested-flow
//! queue's priority when a CIP reaches its NIC and back when the isolation
//! ages out (`ci_age` in nic/sender.rs, which every model's packets pass);
//! PFC stops a priority at the NIC. Each NIC model (every line of
//! `nic_models!` in nic/mod.rs) serves the same TCP traffic here, under PFC
//! with and without CI, and must keep the invariants: every flow
//! finishes, bytes are conserved, the lossless classes drop nothing, no
//! flow is reordered, and the NIC's isolations age out.

use crate::common;
use incast_core::Results;

/// The NIC models of the registry, the example extensions included (the
/// tests build the core with its `examples` feature); the adapter serves
/// transport flows as the round robin does, after its raw frames.
fn nic_models() -> impl Iterator<Item = &'static str> {
    let all = incast_core::nic::NicModelKind::ALL;
    assert!(
        all.iter().any(|m| m.name() == "example_fifo"),
        "the tests' build lacks the example extensions (feature `examples`)"
    );
    all.iter().map(|m| m.name())
}

/// DCTCP on a 4-leaf, 2-spine fabric, all flows in lossless class 3 (PFC on
/// 1-3): WebSearch at 50 % of each host link plus 8-to-1 incasts, 400 us of
/// arrivals. `mechanism` is the `[switch.ci]` section or nothing.
fn tcp_churn(nic: &str, mechanism: &str) -> String {
    format!(
        r#"
        seed = 5
        duration = "400us"
        stop = "40ms"
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
        ecn = {{ kind = "step", k = "100KB" }}
        [switch.pfc]
        classes = [1, 2, 3]
        {mechanism}
        [transport]
        cc = "dctcp"
        class = 3
        [nic]
        model = "{nic}"
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

const CI: &str = "[switch.ci]\nqueues = [{ class = 3, cfq = [2] }]\nthreshold = \"20KB\"\n\
                  detect = { kind = \"sampled\", every = \"8KB\" }\nage = \"10us\"\n";

fn summary(r: &Results) -> serde_json::Value {
    serde_json::from_str(&r.summary_json).unwrap()
}

fn check_invariants(r: &Results, what: &str) {
    common::assert_finished_and_conserved(r, what);
    let drops: u64 = r.counters.u64s("drop_pkts").iter().sum();
    assert_eq!(drops, 0, "{what}: the lossless classes dropped packets");
    assert_eq!(summary(r)["out_of_order_arrivals"], 0, "{what}: reordered");
}

/// PFC alone: every NIC model keeps the invariants.
#[test]
fn every_nic_model_under_pfc() {
    for nic in nic_models() {
        let r = common::run(&tcp_churn(nic, ""));
        check_invariants(&r, &format!("PFC, nic {nic}"));
    }
}

/// PFC with CI: every NIC model isolates flows on CIPs and lets the
/// isolations age out. Before the transmit-queue model aged its flows'
/// isolations, its isolated flows stayed on the CFQ's priority for the rest
/// of their lives (0 NIC de-isolations here, against hundreds with the round
/// robin).
#[test]
fn every_nic_model_with_congestion_isolation() {
    for nic in nic_models() {
        let what = format!("CI, nic {nic}");
        let r = common::run(&tcp_churn(nic, CI));
        check_invariants(&r, &what);
        let s = summary(&r);
        let ci = &s["ci"];
        let isolated = ci["nic_isolations"].as_u64().unwrap_or(0);
        let aged = ci["nic_deisolations"].as_u64().unwrap();
        println!(
            "{what}: {} detected, {isolated} NIC isolations, {aged} NIC de-isolations",
            ci["isolations_detected"]
        );
        assert!(
            ci["isolations_detected"].as_u64().unwrap() >= 10,
            "{what}: the traffic does not congest"
        );
        assert!(aged >= 10, "{what}: NIC isolations never age out ({aged})");
    }
}
