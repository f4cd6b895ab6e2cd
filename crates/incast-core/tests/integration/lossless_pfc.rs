//! PFC (IEEE 802.1Qbb): the lossless invariant, pause propagation and
//! congestion spreading (head-of-line blocking), checked end to end.

use crate::common::run;
use incast_core::Results;

fn drops(r: &Results) -> u64 {
    r.counters.u64s("drop_pkts").iter().sum()
}

fn incast(pfc: bool, cc: &str) -> String {
    format!(
        r#"
        seed = 3
        [topology]
        kind = "single_switch"
        hosts = 17
        link_rate = "100Gbps"
        link_delay = "1us"
        [switch]
        buffer = "1MB"
        {pfc}
        [rdma]
        cc = "{cc}"
        [[workload.incast]]
        fan_in = 16
        bytes_per_sender = "500KB"
        times = ["0us", "200us"]
        receiver = 0
        class = 3
        "#,
        pfc = if pfc {
            "[switch.pfc]\nclasses = [3]"
        } else {
            ""
        },
    )
}

/// With PFC and headroom sized by the formula, a 16:1 incast into a 1 MB
/// buffer loses nothing and every flow completes; without PFC it drops
/// (and go-back-N still completes every flow).
#[test]
fn pfc_makes_an_incast_lossless() {
    let with = run(&incast(true, "none"));
    assert_eq!(with.lossless_drops, 0);
    assert_eq!(drops(&with), 0);
    assert!(with.flows.u8s("finished").iter().all(|&f| f == 1));
    let paused: u64 = with.ports.u64s("pause_rx").iter().sum();
    assert!(paused > 0, "the incast must trigger pauses");
    assert_eq!(with.conservation.in_network_bytes, 0);
    let c = with.conservation;
    assert_eq!(c.sent_bytes, c.delivered_bytes + c.dropped_bytes);

    let without = run(&incast(false, "none"));
    assert!(drops(&without) > 0, "no PFC: the buffer overflows");
    assert!(without.flows.u8s("finished").iter().all(|&f| f == 1));
    let retx: u32 = without.flows.u32s("retransmits").iter().sum();
    assert!(retx > 0, "go-back-N recovers the losses");
}

/// Every pause is matched by a resume, per (node, port, class), in time order.
#[test]
fn pause_and_resume_alternate() {
    let r = run(&incast(true, "none"));
    let (t, n, p, c, e) = (
        r.pfc.u64s("time_ps"),
        r.pfc.u32s("node"),
        r.pfc.u32s("port"),
        r.pfc.u8s("class"),
        r.pfc.u8s("event"),
    );
    assert!(!t.is_empty());
    assert!(t.windows(2).all(|w| w[0] <= w[1]));
    let mut state = std::collections::HashMap::new();
    for i in 0..t.len() {
        let s = state.entry((n[i], p[i], c[i])).or_insert(0u8);
        assert_ne!(*s, e[i], "event {i}: a pause must alternate with a resume");
        *s = e[i];
    }
    assert!(state.values().all(|&s| s == 0), "all resumed at the end");
}

/// A 3-tier fat-tree (k = 8: 128 hosts, 80 switches) with four incasts of
/// fan-in 64 (two pairs of simultaneous ones, random receivers): zero lossless
/// drops with PFC, drops without.
fn fat_tree(pfc: bool) -> String {
    format!(
        r#"
        seed = 5
        [topology]
        kind = "fat_tree"
        k = 8
        host_rate = "100Gbps"
        fabric_rate = "100Gbps"
        [switch]
        buffer = "2MB"
        {pfc}
        [rdma]
        cc = "none"
        [[workload.incast]]
        fan_in = 64
        bytes_per_sender = "64KB"
        times = ["0us", "20us"]
        class = 3
        [[workload.incast]]
        fan_in = 64
        bytes_per_sender = "64KB"
        times = ["0us", "10us"]
        class = 3
        "#,
        pfc = if pfc {
            "[switch.pfc]\nclasses = [3]"
        } else {
            ""
        },
    )
}

#[test]
fn fat_tree_incasts_of_fan_in_64_are_lossless_with_pfc() {
    let with = run(&fat_tree(true));
    assert_eq!(with.lossless_drops, 0);
    assert_eq!(drops(&with), 0);
    assert!(with.flows.u8s("finished").iter().all(|&f| f == 1));
    let pauses: u64 = with.ports.u64s("pause_tx").iter().sum();
    assert!(pauses > 0);
    // Pauses propagate: some are received by switches, not only by hosts.
    let n_hosts = 128;
    let nodes = with.ports.u32s("node");
    let at_switches: u64 = with
        .ports
        .u64s("pause_rx")
        .iter()
        .zip(nodes)
        .filter(|(_, n)| **n >= n_hosts)
        .map(|(p, _)| *p)
        .sum();
    assert!(at_switches > 0, "pauses must propagate hop by hop");
    let without = run(&fat_tree(false));
    assert!(drops(&without) > 0);
}

/// Two switches in a line, 4 senders into one receiver behind s1 (class 3,
/// no CC), so s1 pauses s0's egress towards it; with a PFC watchdog whose
/// limit is shorter than those pauses.
fn watchdog_scenario(watchdog: &str) -> String {
    let flows: String = ["h1", "h2", "h3", "h4"]
        .iter()
        .map(|h| {
            format!("[[workload.flows]]\nsrc = \"{h}\"\ndst = \"r1\"\nsize = \"2MB\"\nclass = 3\n")
        })
        .collect();
    format!(
        r#"
        seed = 5
        [topology]
        kind = "explicit"
        hosts = ["h1", "h2", "h3", "h4", "r1"]
        switches = ["s0", "s1"]
        links = [
            {{ a = "h1", b = "s0", rate = "100Gbps" }},
            {{ a = "h2", b = "s0", rate = "100Gbps" }},
            {{ a = "h3", b = "s0", rate = "100Gbps" }},
            {{ a = "h4", b = "s0", rate = "100Gbps" }},
            {{ a = "s0", b = "s1", rate = "400Gbps" }},
            {{ a = "r1", b = "s1", rate = "100Gbps" }},
        ]
        [switch]
        buffer = "2MB"
        [switch.pfc]
        classes = [3]
        watchdog = {watchdog}
        [rdma]
        cc = "none"
        {flows}
        "#
    )
}

/// The PFC watchdog (docs/mechanisms.md, PFC): in report mode a pause longer than the limit
/// is counted and logged (event 2) while it lasts and nothing is dropped; in
/// drop mode the paused queue is flushed and PFC is off for the class until
/// `restore` passes without a PAUSE (event 3), so packets are lost, counted
/// as watchdog drops (not lossless violations), and go-back-N still
/// finishes every flow with bytes conserved.
#[test]
fn pfc_watchdog_reports_and_drops() {
    let report = run(&watchdog_scenario(r#"{ limit = "1us" }"#));
    let trips: u64 = report.ports.u64s("watchdog_trips").iter().sum();
    assert!(trips > 0, "pauses longer than 1 us must trip the watchdog");
    let logged = report.pfc.u8s("event").iter().filter(|&&e| e == 2).count();
    assert_eq!(logged as u64, trips, "every trip is logged");
    assert_eq!(drops(&report), 0, "report mode drops nothing");
    assert_eq!(report.lossless_drops, 0);
    assert!(report.flows.u8s("finished").iter().all(|&f| f == 1));

    // A long limit never trips: the check can fail.
    let quiet = run(&watchdog_scenario(r#"{ limit = "10ms" }"#));
    assert_eq!(quiet.ports.u64s("watchdog_trips").iter().sum::<u64>(), 0);

    let drop = run(&watchdog_scenario(
        r#"{ limit = "1us", drop = true, restore = "5us" }"#,
    ));
    let wd_drops: u64 = drop.ports.u64s("watchdog_drops").iter().sum();
    assert!(wd_drops > 0, "drop mode must flush or refuse packets");
    assert_eq!(drops(&drop), wd_drops, "every drop is a watchdog drop");
    assert_eq!(drop.lossless_drops, 0);
    let restored = drop.pfc.u8s("event").iter().filter(|&&e| e == 3).count();
    assert!(restored > 0, "PFC comes back once the pauses stop");
    assert!(drop.flows.u8s("finished").iter().all(|&f| f == 1));
    let retx: u32 = drop.flows.u32s("retransmits").iter().sum();
    assert!(retx > 0, "go-back-N recovers the watchdog's drops");
    let c = drop.conservation;
    assert_eq!(c.in_network_bytes, 0);
    assert_eq!(c.sent_bytes, c.delivered_bytes + c.dropped_bytes);
}
