//! Invariants: determinism, byte conservation, and clear errors for bad input.

use crate::common::*;
use incast_core::units::*;
use incast_core::Simulation;

const LOSSY: &str = r#"
    name = "lossy"
    seed = 7
    duration = "2ms"
    [topology]
    kind = "leaf_spine"
    leaves = 2
    spines = 2
    hosts_per_leaf = 8
    host_rate = "10Gbps"
    fabric_rate = "10Gbps"
    [switch]
    buffer = "300KB"
    [transport]
    cc = "newreno"
    rto_min = "1ms"
    [[workload.poisson]]
    load = 0.6
    cdf = "websearch"
    [[workload.incast]]
    fan_in = 12
    bytes_per_sender = "40KB"
    times = ["500us", "1ms"]
"#;

#[test]
fn same_seed_same_results_other_seed_differs() {
    let a = run(LOSSY);
    let b = run(LOSSY);
    assert!(a.flows.rows() > 10);
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.counters, b.counters);
    assert_eq!(a.queues, b.queues);
    assert_eq!(a.summary_json, b.summary_json);
    let c = run(&LOSSY.replace("seed = 7", "seed = 8"));
    assert_ne!(a.flows, c.flows);
}

#[test]
fn every_byte_is_received_dropped_or_in_flight() {
    // Stop in the middle of the run, with packets in queues and on wires.
    let sc = scenario(LOSSY);
    let mut sim = Simulation::new(&sc).unwrap();
    sim.run_until(1200 * US);
    let mid = sim.finish();
    let c = mid.conservation;
    assert!(c.in_network_bytes > 0, "{c:?}");
    assert!(
        c.dropped_bytes > 0,
        "the scenario is meant to drop packets: {c:?}"
    );
    assert_eq!(
        c.sent_bytes,
        c.delivered_bytes + c.dropped_bytes + c.in_network_bytes,
        "{c:?}"
    );
    // Run to the end: nothing is left in the network and every flow finished.
    let end = run(LOSSY);
    let c = end.conservation;
    assert_eq!(c.in_network_bytes, 0);
    assert_eq!(c.sent_bytes, c.delivered_bytes + c.dropped_bytes);
    assert!(end.flows.u8s("finished").iter().all(|&f| f == 1));
    // Drops counted by the switches equal the bytes missing at the receivers.
    let dropped: u64 = end.counters.u64s("drop_bytes").iter().sum();
    assert_eq!(dropped, c.dropped_bytes);
    assert!(end.flows.u32s("retransmits").iter().any(|&r| r > 0));
}

#[test]
fn slowdowns_are_at_least_one_and_ideal_is_below_fct() {
    let r = run(LOSSY);
    let f = &r.flows;
    for i in 0..f.rows() {
        assert!(f.f64s("slowdown")[i] >= 1.0);
        assert!(f.u64s("ideal_fct_ps")[i] > 0);
    }
}

fn err(toml: &str) -> String {
    scenario_err(toml).to_string()
}

const BASE: &str = r#"
    [topology]
    kind = "single_switch"
    hosts = 4
    link_rate = "10Gbps"
    [[workload.flows]]
    src = 0
    dst = 1
    size = "10KB"
"#;

#[test]
fn unknown_key_is_named() {
    let e = err(&format!("colour = \"blue\"\n{BASE}"));
    assert!(e.contains("unknown field `colour`"), "{e}");
    let e = err(&BASE.replace("link_rate", "link_rat"));
    assert!(e.contains("link_rat"), "{e}");
    let e = err(&format!(
        "{BASE}\n[transport]\ncc = \"dctcp\"\nmss = 1000\n"
    ));
    assert!(
        e.contains("transport") && e.contains("unknown field `mss`"),
        "{e}"
    );
}

#[test]
fn wrong_units_and_negative_values_say_what_to_write() {
    let e = err(&BASE.replace("\"10Gbps\"", "10"));
    assert!(
        e.contains("topology") && e.contains("has no unit") && e.contains("100Gbps"),
        "{e}"
    );
    let e = err(&BASE.replace("\"10Gbps\"", "\"10Gbits\""));
    assert!(e.contains("unknown rate unit `Gbits`"), "{e}");
    let e = err(&BASE.replace("\"10Gbps\"", "\"-10Gbps\""));
    assert!(e.contains("negative"), "{e}");
    let e = err(&format!("{BASE}\n[transport]\nrto_min = 5\n"));
    assert!(
        e.contains("transport.rto_min") && e.contains("has no unit"),
        "{e}"
    );
}

#[test]
fn missing_host_is_named() {
    let e = err(&BASE.replace("dst = 1", "dst = 9"));
    assert!(
        e.contains("workload.flows[0].dst") && e.contains("host 9 does not exist"),
        "{e}"
    );
    let e = err(&BASE.replace("dst = 1", "dst = \"h77\""));
    assert!(e.contains("unknown host `h77`"), "{e}");
    let e = err(&BASE.replace("dst = 1", "dst = 0"));
    assert!(e.contains("same") || e.contains("both host 0"), "{e}");
}

#[test]
fn load_above_one_and_missing_duration() {
    let p = "[[workload.poisson]]\nload = 1.5\ncdf = \"websearch\"\n";
    let e = err(&format!("duration = \"1ms\"\n{BASE}{p}"));
    assert!(
        e.contains("workload.poisson[0].load") && e.contains("(0, 1]"),
        "{e}"
    );
    let p2 = "[[workload.poisson]]\nload = 0.6\ncdf = \"websearch\"\n";
    let e = err(&format!("duration = \"1ms\"\n{BASE}{p2}{p2}"));
    assert!(e.contains("total load of 1.200"), "{e}");
    let e = err(&format!("{BASE}{p2}"));
    assert!(e.contains("`duration`"), "{e}");
}

#[test]
fn cdf_not_monotone_or_unknown() {
    let dir = std::env::temp_dir().join(format!("incast-cdf-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.cdf");
    std::fs::write(&bad, "100 0\n200 0.5\n150 0.7\n300 1\n").unwrap();
    let p = format!(
        "[[workload.poisson]]\nload = 0.5\ncdf = \"{}\"\n",
        bad.display()
    );
    let e = err(&format!("duration = \"1ms\"\n{BASE}{p}"));
    assert!(
        e.contains("workload.poisson[0].cdf") && e.contains("line 3") && e.contains("monotone"),
        "{e}"
    );
    let p = "[[workload.poisson]]\nload = 0.5\ncdf = \"websurch\"\n";
    let e = err(&format!("duration = \"1ms\"\n{BASE}{p}"));
    assert!(
        e.contains("unknown CDF `websurch`") && e.contains("websearch"),
        "{e}"
    );
}

#[test]
fn other_semantic_errors() {
    let e = err(&format!("{BASE}\n[switch]\necn = {{ kind = \"red\", kmin = \"200KB\", kmax = \"100KB\", pmax = 0.1 }}\n"));
    assert!(
        e.contains("switch.ecn.kmin") && e.contains("must not exceed"),
        "{e}"
    );
    let e = err(&format!("{BASE}\n[transport]\ncc = \"vegas\"\n"));
    assert!(
        e.contains("unknown congestion control `vegas`")
            && e.contains("dctcp")
            && e.contains("cubic"),
        "{e}"
    );
    // An algorithm's own parameter ranges name its field.
    let e = err(&format!(
        "{BASE}\n[transport]\ncc = {{ algorithm = \"cubic\", beta = 1.5 }}\n"
    ));
    assert!(e.contains("transport.cc.beta") && e.contains("0.7"), "{e}");
    let e = err(&format!(
        "{BASE}\n[transport]\ncc = {{ algorithm = \"bbr\", min_rtt_window = \"0s\" }}\n"
    ));
    assert!(e.contains("transport.cc.min_rtt_window"), "{e}");
    let inc = "[[workload.incast]]\nfan_in = 8\nbytes_per_sender = \"1KB\"\ntimes = [\"1us\"]\n";
    let e = err(&format!("{BASE}{inc}"));
    assert!(
        e.contains("workload.incast[0].fan_in") && e.contains("4 hosts"),
        "{e}"
    );
    let inc = "[[workload.incast]]\nfan_in_mix = [[1, 0.5], [2, 0.3]]\nbytes_per_sender = \"1KB\"\ntimes = [\"1us\"]\n";
    let e = err(&format!("{BASE}{inc}"));
    assert!(e.contains("add up to 0.8"), "{e}");
    let inc = "[[workload.incast]]\nfan_in = 2\nbytes_per_sender = \"1KB\"\ncdf = \"websearch\"\ntimes = [\"1us\"]\n";
    let e = err(&format!("{BASE}{inc}"));
    assert!(e.contains("exactly one of `bytes_per_sender`"), "{e}");
    let inc = "[[workload.incast]]\nfan_in = 2\ncdf = \"no_such_cdf\"\ntimes = [\"1us\"]\n";
    let e = err(&format!("{BASE}{inc}"));
    assert!(e.contains("workload.incast[0].cdf"), "{e}");
    let e = err(&BASE.replace("kind = \"single_switch\"", "kind = \"ring\""));
    assert!(e.contains("ring"), "{e}");
}

#[test]
fn json_schema_is_exported() {
    let s: serde_json::Value = serde_json::from_str(&incast_core::Scenario::json_schema()).unwrap();
    let props = &s["properties"];
    for key in [
        "topology",
        "switch",
        "transport",
        "workload",
        "metrics",
        "duration",
        "seed",
        "rdma",
        "edge",
    ] {
        assert!(props.get(key).is_some(), "schema lacks {key}");
    }
}
