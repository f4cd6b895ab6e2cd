//! PFC congestion spreading (IEEE 802.1Qbb; docs/mechanisms.md, PFC): an incast paused hop
//! by hop stalls a victim flow that shares an upstream egress queue with it
//! but not its bottleneck (head-of-line blocking, the DCQCN paper's §2
//! motivation and docs/mechanisms.md, V6), and the victim is unaffected when it travels in
//! a priority that is not paused, since PFC pauses per priority.
//!
//! ```text
//!   v  ──┐                                 ┌── r1   (incast bottleneck, 100G)
//!   h1 ──┤                                 │
//!   h2 ──┼── s0 ════════ 400G ════════ s1 ─┤
//!   h3 ──┤                                 │
//!   h4 ──┘                                 └── r2   (victim's receiver, 100G)
//! ```
//!
//! All host links 100G, every link 1 us. h1..h4 (or h1, h2) send long flows to r1 in
//! class 3 (lossless); v sends one long flow to r2. No congestion control
//! (`cc = "none"`, the "PFC only" baseline of the DCQCN paper), so the
//! incast keeps s1 pausing s0 for as long as it lasts and the victim's loss
//! is a steady state, not a transient. The s0-s1 link is 400G so that it
//! has room for both (100G towards r1 + 100G towards r2): whatever the victim
//! loses is lost to pausing, not to link capacity.

use crate::common;
use crate::common::scenario;
use incast_core::units::US;
use incast_core::{Results, Simulation};

const HOSTS: u32 = 7; // v, h1..h4, r1, r2
const S0: u32 = 0;
const S1: u32 = 1;
/// s0's port towards s1 (a node numbers its ports in the order of the links).
const S0_TO_S1: usize = 5;
/// s1's ports towards r1 and r2.
const S1_TO_R1: usize = 1;
const S1_TO_R2: usize = 2;

/// The scenario with `k` incast senders (h1..hk; 0 = no incast).
fn spreading(k: usize, victim_class: u8, pfc_classes: &str, fabric: &str) -> String {
    common::hol_scenario(k, victim_class, pfc_classes, fabric, "")
}

/// Wire throughput (b/s) from 0.5 to 2.5 ms, after the incast has filled
/// the buffers and pauses have reached the senders.
struct Spread {
    victim: f64,
    incast: f64,
    fabric: f64,
    results: Results,
}

impl Spread {
    /// PAUSE frames of `class` received by (node, port); `None` = any port.
    fn pauses(&self, class: u8, at: Option<(u32, u32)>) -> usize {
        let p = &self.results.pfc;
        let (n, port, c, e) = (
            p.u32s("node"),
            p.u32s("port"),
            p.u8s("class"),
            p.u8s("event"),
        );
        (0..n.len())
            .filter(|&i| c[i] == class && e[i] == 1)
            .filter(|&i| at.is_none_or(|a| (n[i], port[i]) == a))
            .count()
    }
}

fn measure(toml: &str) -> Spread {
    let sc = scenario(toml);
    let mut sim = Simulation::new(&sc).unwrap();
    let tx = |sim: &Simulation| {
        (
            sim.switch_port_tx_bytes(S1, S1_TO_R2),
            sim.switch_port_tx_bytes(S1, S1_TO_R1),
            sim.switch_port_tx_bytes(S0, S0_TO_S1),
        )
    };
    sim.run_until(500 * US);
    let a = tx(&sim);
    sim.run_until(2500 * US);
    let b = tx(&sim);
    let bps = |x: u64, y: u64| (y - x) as f64 * 8.0 / 2000e-6;
    Spread {
        victim: bps(a.0, b.0),
        incast: bps(a.1, b.1),
        fabric: bps(a.2, b.2),
        results: sim.finish(),
    }
}

/// The victim in the incast's class: s1 pauses s0's class-3 queue towards it
/// (r1 drains at 100G while k hosts send k x 100G), and the victim's packets
/// wait in that FIFO behind the incast's.
///
/// Predicted victim throughput: s0 admits its k + 1 class-3 ingresses alike
/// (each paused at the same per-ingress XOFF threshold), so the FIFO towards
/// s1 holds one victim packet for every k incast packets; the FIFO drains as
/// fast as s1 accepts, which in steady state is what r1 takes, 100G of
/// incast. So the victim gets 100G / k: 25 Gb/s for k = 4 (a 75 % loss),
/// 50 Gb/s for k = 2 (measured: 25.0 and 50.0 Gb/s; the fabric carries 125
/// and 150 of its 400 Gb/s). Tolerances: the victim within 10 % of 100G / k
/// (the 1 : k split holds per pause cycle, up to packet granularity);
/// "substantial" = at least half of its no-incast throughput lost at k = 4.
#[test]
fn pfc_pauses_stall_a_victim_in_the_incast_class() {
    let alone = measure(&spreading(0, 3, "[3]", "400Gbps"));
    println!("victim alone: {:.2} Gb/s", alone.victim / 1e9);
    // Alone, the victim paces at its NIC's line rate.
    assert!(alone.victim >= 0.99 * 100e9, "{:.3e}", alone.victim);

    for k in [4usize, 2] {
        let hit = measure(&spreading(k, 3, "[3]", "400Gbps"));
        let s0_paused = hit.pauses(3, Some((HOSTS + S0, S0_TO_S1 as u32)));
        println!(
            "k = {k}: victim {:.2} Gb/s, incast {:.2} Gb/s, s0->s1 {:.2} Gb/s, \
             class-3 pauses of s0->s1 {s0_paused}",
            hit.victim / 1e9,
            hit.incast / 1e9,
            hit.fabric / 1e9,
        );
        assert_eq!(hit.results.lossless_drops, 0);
        // The mechanism: s1 pauses s0's class 3 towards it, and r1 stays busy.
        assert!(s0_paused > 0);
        assert!(hit.incast >= 0.99 * 100e9, "{:.3e}", hit.incast);
        // The shared link is not what limits the victim.
        assert!(hit.fabric <= 0.5 * 400e9, "{:.3e}", hit.fabric);
        let predicted = 100e9 / k as f64;
        assert!(
            (hit.victim / predicted - 1.0).abs() <= 0.10,
            "k = {k}: victim {:.3e} vs predicted {predicted:.3e}",
            hit.victim
        );
        if k == 4 {
            assert!(
                hit.victim <= 0.5 * alone.victim,
                "victim lost only {:.0} %",
                100.0 * (1.0 - hit.victim / alone.victim)
            );
        }
    }
}

/// The same victim in another priority keeps its throughput: PFC pauses
/// class 3 only, so s0 keeps sending the victim's class while the incast's
/// queue is paused. Checked for a lossless class (2, with PFC on classes 2
/// and 3) and a lossy one (1). Both are below class 3 in strict priority, so
/// the isolation does not come from being scheduled first. Tolerance: within
/// 10 % of the no-incast throughput (measured: equal, 100.0 Gb/s).
#[test]
fn a_victim_in_an_unpaused_class_keeps_its_throughput() {
    for (class, pfc) in [(2u8, "[2, 3]"), (1, "[3]")] {
        let alone = measure(&spreading(0, class, pfc, "400Gbps"));
        let with = measure(&spreading(4, class, pfc, "400Gbps"));
        let incast_pauses = with.pauses(3, Some((HOSTS + S0, S0_TO_S1 as u32)));
        println!(
            "victim in class {class}: alone {:.2} Gb/s, with the incast {:.2} Gb/s; incast \
             {:.2} Gb/s, class-3 pauses of s0->s1 {incast_pauses}, class-{class} pauses {}",
            alone.victim / 1e9,
            with.victim / 1e9,
            with.incast / 1e9,
            with.pauses(class, None)
        );
        assert_eq!(with.results.lossless_drops, 0);
        let drops: u64 = with.results.counters.u64s("drop_pkts").iter().sum();
        assert_eq!(drops, 0);
        // The incast is still being paused, just not the victim's class.
        assert!(incast_pauses > 0);
        assert_eq!(with.pauses(class, None), 0);
        assert!(with.incast >= 0.99 * 100e9, "{:.3e}", with.incast);
        assert!(
            (with.victim / alone.victim - 1.0).abs() <= 0.10,
            "class {class}: victim {:.3e} vs {:.3e} alone",
            with.victim,
            alone.victim
        );
    }
}

/// A lossless victim class that does get paused must be obeyed by the
/// victim's NIC. With a 100G s0-s1 link the incast (class 3, higher strict
/// priority) takes the whole link, the victim's class-2 queue at s0 grows and
/// s0 pauses v's class 2. The RDMA NIC only checks `rdma.data_class` (3)
/// before sending (`sim.rs` `next_rdma_packet`), so v keeps sending class 2
/// at line rate, overflows the headroom of its ingress at s0 and loses
/// "lossless" packets (29169 of them by 2.5 ms).
#[test]
fn a_paused_victim_class_is_obeyed_by_the_nic() {
    let r = measure(&spreading(4, 2, "[2, 3]", "100Gbps"));
    assert!(r.pauses(2, Some((0, 0))) > 0, "s0 pauses v's class 2");
    assert_eq!(r.results.lossless_drops, 0);
}
