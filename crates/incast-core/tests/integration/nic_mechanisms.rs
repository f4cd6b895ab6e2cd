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

/// How one registered switch mechanism is switched on in [`small_incast`],
/// and what shows that it acted.
struct MechanismCase {
    /// Its `[switch.KEY]` section (and what it needs beside it).
    section: &'static str,
    /// RDMA with HPCC instead of TCP (INT, which HPCC switches on).
    rdma: bool,
    /// A count the mechanism raises when it acts (from the summary).
    evidence: fn(&serde_json::Value, &Results) -> u64,
}

/// The case of mechanism `module` (a module of `switch_mechanisms!`). A
/// mechanism added to the registry fails here until it has its case.
fn mechanism_case(module: &str) -> MechanismCase {
    match module {
        "ci" => MechanismCase {
            section: "[switch.pfc]\nclasses = [2, 3]\n[switch.ci]\n\
                      queues = [{ class = 3, cfq = [2] }]\nthreshold = \"10KB\"\n\
                      detect = { kind = \"sampled\", every = \"4KB\" }\nage = \"10us\"\n",
            rdma: false,
            evidence: |s, _| s["ci"]["isolations_detected"].as_u64().unwrap_or(0),
        },
        "pfc" => MechanismCase {
            section: "[switch.pfc]\nclasses = [3]\n",
            rdma: false,
            evidence: |s, _| s["pfc"]["pause_frames"].as_u64().unwrap_or(0),
        },
        "int" => MechanismCase {
            section: "[switch.pfc]\nclasses = [3]\n",
            rdma: true,
            // No count of its own: HPCC's window comes from the stamps, and
            // the flows (all of which must finish) are the evidence.
            evidence: |_, r| r.flows.u8s("finished").len() as u64,
        },
        "trim" => MechanismCase {
            section: "[switch.trim]\nclasses = [3]\nthreshold_bytes = \"20KB\"\n",
            rdma: false,
            evidence: |_, r| r.conservation.trimmed_bytes,
        },
        "cm" => MechanismCase {
            section: "[switch.input_buffer]\nmemory_per_port = \"100KB\"\npause = true\n\
                      pause_high = \"80KB\"\npause_low = \"60KB\"\n",
            rdma: false,
            evidence: |s, _| s["cm"]["input_buffers"]["peak_bytes"].as_u64().unwrap_or(0),
        },
        "example_beacon" => MechanismCase {
            section: "[switch.example_beacon]\nperiod = \"5us\"\ncount = 3\n",
            rdma: false,
            evidence: |s, _| s["example_beacon"]["received"].as_u64().unwrap_or(0),
        },
        other => panic!("mechanism {other} has no case in mechanism_case: add one"),
    }
}

/// 7 senders, 128 KB each, to host 0 through one 10 Gb/s switch with a
/// 300 KB buffer, all in class 3; DCTCP (or RDMA with HPCC), NIC model
/// `nic`, and the mechanism's section.
fn small_incast(nic: &str, case: &MechanismCase) -> String {
    let transport = if case.rdma {
        "[rdma]\ncc = \"hpcc\"\n"
    } else {
        "[transport]\ncc = \"dctcp\"\nclass = 3\n"
    };
    format!(
        r#"
        seed = 11
        stop = "20ms"
        [topology]
        kind = "single_switch"
        hosts = 8
        link_rate = "10Gbps"
        link_delay = "1us"
        [switch]
        buffer = "300KB"
        ecn = {{ kind = "step", k = "60KB" }}
        {section}
        {transport}
        [nic]
        model = "{nic}"
        [[workload.incast]]
        fan_in = 7
        bytes_per_sender = "128KB"
        times = ["0us"]
        receiver = 0
        class = 3
        "#,
        section = case.section,
    )
}

/// The combinations the scenario refuses, with the key its error names:
/// the transmit-queue and first-come NIC models serve TCP flows only, so
/// not HPCC's RDMA flows (and with them INT).
const REFUSED: &[(&str, &str, &str)] = &[
    ("int", "queues", "nic.model"),
    ("int", "example_fifo", "nic.model"),
];

/// Every registered switch mechanism with every registered NIC model, on a
/// small incast: the run finishes every flow, conserves bytes, acts (the
/// mechanism's evidence is non-zero) and is deterministic (a second run
/// gives the same digest of all tables); a combination the scenario
/// refuses is refused with an error naming its key, and only those in
/// [`REFUSED`].
#[test]
fn every_mechanism_with_every_nic_model() {
    let mechanisms = incast_core::mech::registered();
    assert!(
        mechanisms.iter().any(|(m, _)| *m == "example_beacon"),
        "the tests' build lacks the example extensions (feature `examples`)"
    );
    for (module, _key) in mechanisms {
        let case = mechanism_case(module);
        for nic in nic_models() {
            let what = format!("mechanism {module}, nic {nic}");
            let text = small_incast(nic, &case);
            let refused = REFUSED.iter().find(|(m, n, _)| *m == module && *n == nic);
            let sc =
                incast_core::scenario::Scenario::from_toml_str(&text, std::path::Path::new("."));
            match (sc, refused) {
                (Err(e), Some((_, _, key))) => {
                    assert_eq!(e.path, *key, "{what}: refused naming the wrong key: {e}");
                    continue;
                }
                (Err(e), None) => panic!("{what}: refused: {e}"),
                (Ok(_), Some(_)) => panic!("{what}: listed in REFUSED but accepted"),
                (Ok(_), None) => {}
            }
            let r = common::run(&text);
            common::assert_finished_and_conserved(&r, &what);
            let evidence = (case.evidence)(&summary(&r), &r);
            println!("{what}: evidence {evidence}");
            assert!(evidence > 0, "{what}: the mechanism never acted");
            let again = common::run(&text);
            assert_eq!(
                common::digest(&r),
                common::digest(&again),
                "{what}: two runs differ"
            );
        }
    }
}
