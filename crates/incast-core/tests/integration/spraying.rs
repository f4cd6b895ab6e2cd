//! Packet spraying (`[routing] ecmp = "spray"`): each TCP data segment picks
//! its own equal-cost next hop.
//!
//! Two equal-cost paths of unequal delay between two switches (1 us and
//! 5 us through `a` and `b`), one 2 MB flow. Checked: under spraying each
//! path carries a share of the segments within 10 % of half (each segment
//! picks by a hash of its sequence number: a binomial split, whose standard
//! deviation at ~1,400 segments is 1.3 % of them), the flow finishes with its
//! bytes conserved, and segments arrive out of order (the long path's land
//! behind the short path's); with the default per-flow ECMP every segment
//! takes one path and none arrives out of order. Spraying is refused where
//! reordering breaks the receiver (RDMA's go-back-N) or a mechanism that
//! knows a flow by its hash (congestion isolation).
//!
//! Not checked here: the flow's completion time. Without DSACK undo or
//! RACK's reordering-window adaptation (not modelled), the reordering makes
//! spurious retransmissions that shrink the window: 2 MB takes 6.4 ms here
//! (179 retransmissions, no timeout), where one path takes about 0.2 ms.

use crate::common;
use incast_core::Results;

fn two_paths(routing: &str, extra: &str) -> String {
    format!(
        r#"
        seed = 3
        {routing}
        [topology]
        kind = "explicit"
        hosts = ["h0", "h1"]
        switches = ["s0", "a", "b", "s1"]
        links = [
          {{ a = "h0", b = "s0", rate = "100Gbps", delay = "1us" }},
          {{ a = "s0", b = "a", rate = "100Gbps", delay = "1us" }},
          {{ a = "s0", b = "b", rate = "100Gbps", delay = "5us" }},
          {{ a = "a", b = "s1", rate = "100Gbps", delay = "1us" }},
          {{ a = "b", b = "s1", rate = "100Gbps", delay = "1us" }},
          {{ a = "s1", b = "h1", rate = "100Gbps", delay = "1us" }},
        ]
        {extra}
        [[workload.flows]]
        src = "h0"
        dst = "h1"
        size = "2MB"
        "#
    )
}

/// Packets sent by `a` and by `b` towards `s1` (their port 1).
fn per_path(r: &Results) -> (u64, u64) {
    let (node, port, tx) = (
        r.ports.u32s("node"),
        r.ports.u32s("port"),
        r.ports.u64s("tx_pkts"),
    );
    // Nodes: hosts 0-1, then switches s0 = 2, a = 3, b = 4, s1 = 5.
    let sent = |n: u32| {
        (0..node.len())
            .find(|&i| node[i] == n && port[i] == 1)
            .map(|i| tx[i])
            .unwrap()
    };
    (sent(3), sent(4))
}

fn out_of_order(r: &Results) -> u64 {
    let summary: serde_json::Value = serde_json::from_str(&r.summary_json).unwrap();
    summary["out_of_order_arrivals"].as_u64().unwrap()
}

#[test]
fn spraying_splits_segments_over_equal_paths_and_reorders_them() {
    let r = common::run(&two_paths("[routing]\necmp = \"spray\"", ""));
    common::assert_finished_and_conserved(&r, "spray");
    let (via_a, via_b) = per_path(&r);
    let total = via_a + via_b;
    assert!(total >= 1_369, "2 MB in 1460-byte segments: {total}");
    let share = via_a as f64 / total as f64;
    assert!(
        (share - 0.5).abs() <= 0.1,
        "share via a: {share} ({via_a} of {total})"
    );
    assert!(
        out_of_order(&r) > 0,
        "the 5 us path's segments arrive behind the 1 us path's"
    );
    let again = common::run(&two_paths("[routing]\necmp = \"spray\"", ""));
    assert_eq!(per_path(&again), (via_a, via_b), "deterministic");
    assert_eq!(out_of_order(&again), out_of_order(&r));
}

#[test]
fn per_flow_ecmp_keeps_one_path_in_order() {
    let r = common::run(&two_paths("", ""));
    common::assert_finished_and_conserved(&r, "flow");
    let (via_a, via_b) = per_path(&r);
    assert!(via_a == 0 || via_b == 0, "one path: {via_a} / {via_b}");
    assert_eq!(out_of_order(&r), 0);
}

#[test]
fn spraying_is_refused_with_rdma_and_with_congestion_isolation() {
    let spray = "[routing]\necmp = \"spray\"";
    let e = common::scenario_err(&two_paths(spray, "[rdma.cc]\nalgorithm = \"dcqcn\"")).to_string();
    assert!(e.contains("routing.ecmp") && e.contains("go-back-N"), "{e}");
    let ci = "[switch.pfc]\nclasses = [2, 3]\n[switch.ci]\nqueues = [{ class = 3, cfq = [2] }]\n\
              [transport]\nclass = 3";
    let e = common::scenario_err(&two_paths(spray, ci)).to_string();
    assert!(
        e.contains("routing.ecmp") && e.contains("congestion isolation"),
        "{e}"
    );
}

/// STrack is a congestion control over incast's TCP (`transport/cc/strack.rs`), so spraying
/// is allowed with it and its reordering goes through the TCP receiver and recovery like
/// every TCP congestion control's: the sprayed flow uses both paths, is reordered, and
/// finishes with its bytes conserved, deterministically. And it takes less than twice the
/// one-path flow's time (1.17 against 1.74 ms): the ACK of a spurious retransmission, which
/// comes with nothing in flight, moves STrack's window as every ACK does in htsim
/// (`CongestionControl::sees_acks_with_nothing_in_flight`); dropped unseen, it left the
/// window on the small side of its period-2 orbit and the flow waited 10 pacing gaps of
/// 0.45-2.4 ms (15.68 ms).
#[test]
fn strack_is_allowed_to_spray_and_finishes() {
    let strack = "[transport]\ncc = { algorithm = \"strack\", base_rtt = \"10us\" }";
    let r = common::run(&two_paths("[routing]\necmp = \"spray\"", strack));
    common::assert_finished_and_conserved(&r, "strack spray");
    let (via_a, via_b) = per_path(&r);
    assert!(via_a > 0 && via_b > 0, "both paths: {via_a} / {via_b}");
    assert!(out_of_order(&r) > 0, "the long path's segments arrive late");
    let again = common::run(&two_paths("[routing]\necmp = \"spray\"", strack));
    assert_eq!(per_path(&again), (via_a, via_b), "deterministic");
    assert_eq!(r.flows.u64s("fct_ps"), again.flows.u64s("fct_ps"));
    let one_path = common::run(&two_paths("", strack));
    common::assert_finished_and_conserved(&one_path, "strack flow");
    let (sprayed, one_path) = (r.flows.u64s("fct_ps")[0], one_path.flows.u64s("fct_ps")[0]);
    eprintln!("strack 2 MB: sprayed {sprayed} ps, one path {one_path} ps");
    assert!(
        sprayed < 2 * one_path,
        "sprayed {sprayed} ps against {one_path} ps on one path"
    );
}
