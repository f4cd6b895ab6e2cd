//! Several TCP congestion controls in one run (issue 20 item 2): each
//! workload group may name its own `cc`.

use crate::common::{run, scenario_err, scenarios_dir};

fn bundled() -> String {
    std::fs::read_to_string(scenarios_dir().join("dctcp_beside_cubic.toml")).unwrap()
}

fn summary(r: &incast_core::Results) -> serde_json::Value {
    serde_json::from_str(&r.summary_json).unwrap()
}

/// The largest time-weighted mean queue of any switch port and class.
fn mean_queue(r: &incast_core::Results) -> f64 {
    r.counters
        .f64s("mean_queue_bytes")
        .iter()
        .copied()
        .fold(0.0, f64::max)
}

/// A group that names the transport's own congestion control runs exactly
/// as if it named none.
#[test]
fn naming_the_default_cc_changes_nothing() {
    let all_dctcp = bundled().replace("cc = \"cubic\"", "cc = \"dctcp\"");
    let unnamed = bundled().replace("cc = \"cubic\"\n", "");
    let (a, b) = (run(&all_dctcp), run(&unnamed));
    // (Debug strings: an unfinished flow's slowdown is NaN, which `==` refuses.)
    assert!(
        format!("{:?}", a.flows) == format!("{:?}", b.flows),
        "flows differ"
    );
    assert!(
        format!("{:?}", a.counters) == format!("{:?}", b.counters),
        "counters differ"
    );
    assert_eq!(a.summary_json, b.summary_json);
    assert_eq!(
        summary(&a)["congestion_controls"],
        serde_json::json!(["dctcp"])
    );
    assert!(summary(&a).get("by_cc").is_none());
}

/// CUBIC ignores ECN and fills the buffer at the shared port; the DCTCP
/// flows beside it queue behind it. With every flow on DCTCP the queue stays
/// near K. Measured (seed 1, SACK with RACK-TLP, the default): DCTCP flows'
/// mean slowdown 29.0 beside CUBIC against 8.4 with a DCTCP bulk flow (3.5x);
/// time-weighted mean queue at the shared port 285 KB against 108 KB (about
/// K = 97.5 KB; 2.6x). With `recovery = "sack"` 29.2 and 286 KB; with
/// `recovery = "newreno"` 17.9 and 209 KB (RFC 6582
/// §4's Impatient variant ends CUBIC's multi-loss recoveries in a timeout,
/// which lets the queue drain); before that RTO change 28.3 and 278 KB. The
/// checks ask for 1.7x and 1.5x, so that seeds and small model changes do
/// not flip them while a broken per-group CC (1x) would.
#[test]
fn dctcp_beside_cubic_queues_behind_it() {
    let mixed = run(&bundled());
    let alone = run(&bundled().replace("cc = \"cubic\"", "cc = \"dctcp\""));
    let s = summary(&mixed);
    assert_eq!(
        s["congestion_controls"],
        serde_json::json!(["dctcp", "cubic"])
    );
    // The bulk flow is the only CUBIC flow.
    let cc = mixed.flows.u8s("cc");
    let src = mixed.flows.u32s("src");
    for i in 0..cc.len() {
        assert_eq!(
            cc[i] == 1,
            src[i] == 0,
            "flow {i}: cc {} from host {}",
            cc[i],
            src[i]
        );
    }
    assert_eq!(s["by_cc"]["cubic"]["flows"], 1);
    let dctcp_mean = s["by_cc"]["dctcp"]["overall"]["slowdown"]["mean"]
        .as_f64()
        .unwrap();
    let alone_mean = summary(&alone)["overall"]["slowdown"]["mean"]
        .as_f64()
        .unwrap();
    eprintln!(
        "DCTCP mean slowdown beside CUBIC {dctcp_mean:.1}, beside DCTCP {alone_mean:.1}; \
         mean queue at the shared port {:.0} B against {:.0} B",
        mean_queue(&mixed),
        mean_queue(&alone)
    );
    assert!(
        dctcp_mean > 1.7 * alone_mean,
        "{dctcp_mean} vs {alone_mean}"
    );
    assert!(mean_queue(&mixed) > 1.5 * mean_queue(&alone));
}

#[test]
fn a_group_cc_is_checked_where_it_is_written() {
    let e = scenario_err(&bundled().replace("cc = \"cubic\"", "cc = \"vegas\""));
    assert_eq!(e.path, "workload.flows[0].cc", "{e}");
    assert!(
        e.message.contains("cubic") && e.message.contains("bbr"),
        "{e}"
    );
    let e = scenario_err(
        &bundled().replace("cc = \"cubic\"", "cc = { algorithm = \"dctcp\", g = 2.0 }"),
    );
    assert_eq!(e.path, "workload.flows[0].cc.g", "{e}");
    let rdma = bundled().replace("[transport]", "[rdma]\ncc = \"dcqcn\"\n\n[transport]");
    let e = scenario_err(&rdma);
    assert_eq!(e.path, "workload.flows[0].cc", "{e}");
    assert!(e.message.contains("[rdma]"), "{e}");
}
