//! The two mechanisms that let HPCC-format runs behave as the HPCC simulator
//! does (docs/hpcc-interop.md), checked directly on small networks:
//!
//! - PFC headroom by HPCC's rule (`headroom = { rule = "hpcc" }`: 3 x rate x
//!   delay per port) shrinks the shared pool by exactly the extra headroom, so
//!   the first PAUSE comes when the closed form says;
//! - ACKs in the data class wait behind data at a busy switch port, and a NIC
//!   with `ctrl_ignores_pause` sends its ACKs while PFC pauses their class.

use crate::common::run;
use incast_core::Results;

/// Hosts 1 and 2 send 1 MB each to host 0 at line rate (no congestion
/// control) through one 17-port 100G switch with 1 us links, PFC on class 3
/// with a dynamic threshold (alpha 1/8, no reserve) and a 2 MiB buffer.
fn two_to_one(headroom: &str) -> Results {
    run(&format!(
        r#"
        seed = 1
        [topology]
        kind = "single_switch"
        hosts = 17
        link_rate = "100Gbps"
        link_delay = "1us"
        [switch]
        buffer = 2097152
        pfc = {{ classes = [3], mode = "until_resume", {headroom} }}
        [rdma]
        cc = "none"
        [[workload.flows]]
        src = 1
        dst = 0
        size = "1MB"
        start = "0us"
        [[workload.flows]]
        src = 2
        dst = 0
        size = "1MB"
        start = "0us"
        "#
    ))
}

/// Time of the first PAUSE to reach a host, ps.
fn first_pause_ps(r: &Results) -> u64 {
    let (t, e) = (r.pfc.u64s("time_ps"), r.pfc.u8s("event"));
    (0..t.len())
        .filter(|&i| e[i] == 1)
        .map(|i| t[i])
        .min()
        .expect("the 2:1 incast must pause")
}

/// When each ingress holds x bytes of the shared pool, the dynamic XOFF
/// threshold is (B - H - 2x) / 8, H the headroom summed over the 17 ports:
/// both senders are paused at x = (B - H) / 10, when the switch holds 2x.
/// From the first arrivals, 1 us + one packet time after the start, two
/// packets arrive and one leaves per packet time (83.84 ns): the switch
/// holds k packets after k + 1 packet times, i.e. the held bytes grow at
/// 12.5 B/ns (80 ps per byte) from t = 1 us. The PAUSE then takes 5.12 ns to
/// send and a link delay to reach the sender.
fn predicted_first_pause_ps(headroom_per_port: u64) -> u64 {
    let pool = 2_097_152 - 17 * headroom_per_port;
    let held = pool / 5;
    1_000_000 + held * 80 + 5_120 + 1_000_000
}

#[test]
fn hpcc_headroom_rule_shrinks_the_pool_by_the_closed_form() {
    // By hand: HPCC's rule 3 x 12 500 B = 37 500 B per port; incast's formula
    // 2 x 1048 + 64 + 2 x 12 500 = 27 160 B (1048 B data packets).
    let cases = [
        ("headroom = { rule = \"hpcc\" }", 37_500),
        ("headroom = { rule = \"formula\" }", 27_160),
        ("headroom = 50000", 50_000),
    ];
    let mut firsts = vec![];
    for (headroom, per_port) in cases {
        let r = two_to_one(headroom);
        assert_eq!(r.lossless_drops, 0, "{headroom}");
        let (got, want) = (first_pause_ps(&r), predicted_first_pause_ps(per_port));
        // Tolerance: one packet time (84 ns, 1 KB held): XOFF is checked
        // packet by packet, at each ingress in turn; the three cases differ
        // by 2.8 us or more.
        assert!(
            got.abs_diff(want) <= 84_000,
            "{headroom}: first PAUSE at {got} ps, closed form {want} ps"
        );
        firsts.push(got);
    }
    // The formula leaves the most pool, HPCC's rule less, 50 KB the least.
    assert!(firsts[1] > firsts[0] + 2_500_000 && firsts[0] > firsts[2] + 2_500_000);
}

/// FCT and ideal FCT of flow `id`, ps.
fn fct_and_ideal(r: &Results, id: usize) -> (u64, u64) {
    assert_eq!(r.flows.u8s("finished")[id], 1, "flow {id} finished");
    (r.flows.u64s("fct_ps")[id], r.flows.u64s("ideal_fct_ps")[id])
}

/// Row of switch `node`'s port `port`, class `class` in the counters table.
fn counter(r: &Results, node: u32, port: u32, class: u8, col: &str) -> u64 {
    let (n, p, c) = (
        r.counters.u32s("node"),
        r.counters.u32s("port"),
        r.counters.u8s("class"),
    );
    (0..n.len())
        .find(|&i| n[i] == node && p[i] == port && c[i] == class)
        .map_or(0, |i| r.counters.u64s(col)[i])
}

/// Hosts 1 and 2 send 2 MB each to host 0 at line rate, so the switch's
/// port to host 0 holds a standing queue (PFC keeps it near XOFF); at 40 us
/// host 0 sends 20 KB to host 3, whose ACKs come back through that port.
fn ack_behind_data(ctrl_class: u8) -> Results {
    run(&format!(
        r#"
        seed = 1
        [topology]
        kind = "single_switch"
        hosts = 4
        link_rate = "100Gbps"
        link_delay = "1us"
        [switch]
        buffer = 2097152
        pfc = {{ classes = [3], mode = "until_resume" }}
        [rdma]
        cc = "none"
        ctrl_class = {ctrl_class}
        [[workload.flows]]
        src = 1
        dst = 0
        size = "2MB"
        start = "0us"
        [[workload.flows]]
        src = 2
        dst = 0
        size = "2MB"
        start = "0us"
        [[workload.flows]]
        src = 0
        dst = 3
        size = "20KB"
        start = "40us"
        "#
    ))
}

#[test]
fn acks_in_the_data_class_wait_behind_data_at_a_busy_port() {
    let switch = 4; // node numbers: hosts 0..3, then the switch
    let high = ack_behind_data(7);
    let data = ack_behind_data(3);
    for r in [&high, &data] {
        assert_eq!(r.lossless_drops, 0);
    }
    // The 20 KB flow's ACKs: 20 data packets, one ACK each.
    let acks = 20;
    // High priority: the ACKs are counted in class 7 of the port to host 0 and
    // pass the data queue; the flow takes its ideal FCT plus at most the data
    // packet being sent when each ACK arrives (84 ns) and the sender's
    // pacing granularity: within 1 us.
    assert!(counter(&high, switch, 0, 7, "enq_pkts") >= acks);
    let (fct_high, ideal) = fct_and_ideal(&high, 2);
    assert!(fct_high < ideal + 1_000_000, "{fct_high} vs ideal {ideal}");
    // Data class: nothing in class 7; the last ACK waits behind the queue of
    // data to host 0, which PFC holds at its XOFF point (the closed form of
    // the test above): (2 MiB - 4 x 27 160 B of headroom) / 5 = 397 702 B,
    // 31.8 us at 100G. Bound the wait below by 90 % of that and above by
    // the time the port's largest queue takes to drain.
    assert_eq!(counter(&data, switch, 0, 7, "enq_pkts"), 0);
    let (fct_data, _) = fct_and_ideal(&data, 2);
    let max_queue = counter(&data, switch, 0, 3, "max_queue_bytes");
    let wait = fct_data - fct_high;
    let at_xoff = (2_097_152 - 4 * 27_160) / 5 * 80;
    assert!(
        wait * 10 >= at_xoff * 9,
        "ACKs must wait behind data: {wait} ps"
    );
    assert!(
        wait <= max_queue * 80 + 1_000_000,
        "{wait} ps is more than the largest queue ({max_queue} B) takes to drain"
    );
}

/// Hosts 1 to 8 send 1 MB each to host 0, so PFC pauses them again and
/// again; at 30 us host 9 sends 20 KB to host 1, which must acknowledge it
/// while its data class, which the ACKs share (HPCC's switches), is paused.
fn acks_from_a_paused_host(ignore: bool) -> Results {
    let mut flows = String::new();
    for src in 1..=8 {
        flows +=
            &format!("[[workload.flows]]\nsrc = {src}\ndst = 0\nsize = \"1MB\"\nstart = \"0us\"\n");
    }
    run(&format!(
        r#"
        seed = 1
        [topology]
        kind = "single_switch"
        hosts = 10
        link_rate = "100Gbps"
        link_delay = "1us"
        [switch]
        buffer = 2097152
        pfc = {{ classes = [3], mode = "until_resume" }}
        [rdma]
        cc = "none"
        ctrl_class = 3
        ctrl_ignores_pause = {ignore}
        {flows}
        [[workload.flows]]
        src = 9
        dst = 1
        size = "20KB"
        start = "30us"
        "#
    ))
}

#[test]
fn a_nic_sends_acks_through_a_pause_when_told_to() {
    let obeys = acks_from_a_paused_host(false);
    let ignores = acks_from_a_paused_host(true);
    for r in [&obeys, &ignores] {
        assert_eq!(r.lossless_drops, 0);
        assert!(r.flows.u8s("finished").iter().all(|&f| f == 1));
        // Host 1 is paused, and resumed, during the small flow.
        let (n, e) = (r.pfc.u32s("node"), r.pfc.u8s("event"));
        assert!((0..n.len()).any(|i| n[i] == 1 && e[i] == 1));
    }
    // The small flow is flow 8 (listed flows keep their order).
    let (fct_ignores, ideal) = fct_and_ideal(&ignores, 8);
    let (fct_obeys, _) = fct_and_ideal(&obeys, 8);
    // Ignoring pauses, host 1's ACKs leave at once: the ideal FCT plus at most
    // one data packet ahead of each ACK at either NIC (84 ns), within 1 us.
    assert!(
        fct_ignores < ideal + 1_000_000,
        "{fct_ignores} vs ideal {ideal}"
    );
    // Obeying them, they wait for host 1's resume.
    assert!(
        fct_obeys > fct_ignores + 5_000_000,
        "ACKs of a paused host must wait: {fct_obeys} vs {fct_ignores} ps"
    );
}
