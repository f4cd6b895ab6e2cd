//! Issue 43: the dumbbell run side by side with ns-3 mainline
//! (`scenarios/ns3_dumbbell/`): 4 long-lived flows from 4 senders into one
//! receiver through one switch, a 10 Gb/s bottleneck with a 1 MB drop-tail
//! queue, 1 us links, 1500-byte packets, initial window 10, minimum RTO
//! 10 ms, no delayed ACKs, 200 ms; goodput over 100-200 ms.

use crate::common::*;
use incast_core::units::*;
use incast_core::Simulation;

/// What one run of a dumbbell variant shows over [100 ms, 200 ms].
#[derive(Debug)]
pub struct Window {
    /// Goodput of each flow, Gb/s (payload bytes acknowledged).
    pub goodput_gbps: Vec<f64>,
    /// Mean of the bottleneck queue, bytes, sampled every 2 us.
    pub queue_mean: f64,
    /// Packets dropped at the bottleneck port.
    pub drops: u64,
    /// Segments each flow retransmitted.
    pub retransmits: Vec<u32>,
    /// Retransmission timeouts of each flow.
    pub timeouts: Vec<u32>,
    /// Share of the bottleneck's time spent sending.
    pub utilization: f64,
}

impl Window {
    pub fn jain(&self) -> f64 {
        let g = &self.goodput_gbps;
        let s: f64 = g.iter().sum();
        let s2: f64 = g.iter().map(|x| x * x).sum();
        s * s / (g.len() as f64 * s2)
    }
    pub fn total_gbps(&self) -> f64 {
        self.goodput_gbps.iter().sum()
    }
}

/// Runs `scenarios/ns3_dumbbell/<variant>.toml` with `transport` (keys of
/// `[transport]`, e.g. `recovery = "sack"`) added after its `cc` line, and
/// measures its window. The bottleneck is the switch's port 0 (the first
/// link listed).
pub fn measure(variant: &str, transport: &str) -> Window {
    measure_toml(&with_transport(variant, transport))
}

/// The text of `scenarios/ns3_dumbbell/<variant>.toml` with `transport`
/// added to its `[transport]` table, after the `cc` line. A `recovery = `
/// line in `transport` replaces the file's (`recovery = "newreno"`, as the
/// ns-3 runs).
fn with_transport(variant: &str, transport: &str) -> String {
    let path = scenarios_dir().join(format!("ns3_dumbbell/{variant}.toml"));
    let mut toml = std::fs::read_to_string(&path).unwrap();
    if transport.is_empty() {
        return toml;
    }
    if transport.contains("recovery = ") {
        let own = toml
            .lines()
            .find(|l| l.starts_with("recovery = "))
            .expect("a recovery line")
            .to_string();
        toml = toml.replacen(&own, "", 1);
    }
    let line = toml
        .lines()
        .find(|l| l.starts_with("cc = "))
        .expect("a cc line");
    toml.replacen(line, &format!("{line}\n{transport}"), 1)
}

/// [`measure`] with the file's `cc = ...` line of `[transport]` replaced by `cc_line`.
pub fn measure_with(variant: &str, cc_line: &str) -> Window {
    let path = scenarios_dir().join(format!("ns3_dumbbell/{variant}.toml"));
    let toml = std::fs::read_to_string(&path).unwrap();
    let line = toml
        .lines()
        .find(|l| l.starts_with("cc = "))
        .expect("a cc line");
    measure_toml(&toml.replacen(line, cc_line, 1))
}

fn measure_toml(toml: &str) -> Window {
    let mut sim = Simulation::new(&scenario(toml)).unwrap();
    let (t1, t2) = (100 * MS, 200 * MS);
    sim.run_until(t1);
    let (a1, r1, o1) = (sim.acked_bytes(), sim.retransmits(), sim.timeouts());
    let (d1, tx1) = (sim.switch_port_drops(0, 0), sim.switch_port_tx_bytes(0, 0));
    let (mut q_sum, mut n) = (0.0, 0u64);
    let mut t = t1;
    // The flows stop at 200 ms and leave the flow table then: the window
    // ends 1 ps before.
    while t + 2 * US < t2 {
        t += 2 * US;
        sim.run_until(t);
        q_sum += sim.switch_queue_bytes(0, 0) as f64;
        n += 1;
    }
    sim.run_until(t2 - 1);
    let (a2, r2) = (sim.acked_bytes(), sim.retransmits());
    let dt = (t2 - t1) as f64 / 1e12;
    let goodput_gbps = a1
        .iter()
        .zip(&a2)
        .map(|((i1, b1), (i2, b2))| {
            assert_eq!(i1, i2, "the same flows at both ends of the window");
            (b2 - b1) as f64 * 8.0 / dt / 1e9
        })
        .collect();
    let retransmits = r1.iter().zip(&r2).map(|(x, y)| y.1 - x.1).collect();
    let timeouts = o1
        .iter()
        .zip(&sim.timeouts())
        .map(|(x, y)| y.1 - x.1)
        .collect();
    Window {
        goodput_gbps,
        queue_mean: q_sum / n as f64,
        drops: sim.switch_port_drops(0, 0) - d1,
        retransmits,
        timeouts,
        utilization: (sim.switch_port_tx_bytes(0, 0) - tx1) as f64 * 8.0 / dt / 10e9,
    }
}

/// Total goodput (Gb/s, payload acknowledged) of `variant` in each interval
/// of length `step` up to `end` (the first from 0).
pub fn interval_goodput(variant: &str, step: Ps, end: Ps) -> Vec<f64> {
    interval_goodput_of(variant, "", step, end)
}

/// [`interval_goodput`] with `transport` keys added ([`measure`]).
pub fn interval_goodput_of(variant: &str, transport: &str, step: Ps, end: Ps) -> Vec<f64> {
    let mut sim = Simulation::new(&scenario(&with_transport(variant, transport))).unwrap();
    let mut out = vec![];
    let (mut t, mut before) = (0, 0u64);
    while t + step <= end {
        t += step;
        sim.run_until(t.min(end - 1));
        let acked: u64 = sim.acked_bytes().iter().map(|x| x.1).sum();
        out.push((acked - before) as f64 * 8.0 / (step as f64 / 1e12) / 1e9);
        before = acked;
    }
    out
}

/// Asserts that every 20 ms interval of `goodput` from 40 ms on carries at
/// least 90 % of the 10 Gb/s bottleneck's payload capacity (10 x 1460/1500
/// Gb/s); the reasoning is at [`cubic_through_nic_queues_keeps_goodput_at_the_bottleneck_rate`].
pub fn assert_bottleneck_busy_from_40ms(variant: &str, goodput: &[f64]) {
    let capacity = 10.0 * 1460.0 / 1500.0;
    for (k, x) in goodput.iter().enumerate().skip(2) {
        assert!(
            *x > 0.9 * capacity,
            "{variant}: {x:.3} Gb/s over {}-{} ms",
            20 * k,
            20 * k + 20
        );
    }
}

fn report(variant: &str, extra: &str) -> Window {
    let w = measure(variant, extra);
    print_window(&format!("{variant}{extra}"), &w);
    w
}

pub fn print_window(what: &str, w: &Window) {
    eprintln!(
        "{what}: goodput {:?} Gb/s (total {:.3}), Jain {:.3}, queue mean {:.0} B, \
         drops {}, retransmits {:?}, timeouts {:?}, utilization {:.3}",
        w.goodput_gbps
            .iter()
            .map(|g| (g * 1000.0).round() / 1000.0)
            .collect::<Vec<_>>(),
        w.total_gbps(),
        w.jain(),
        w.queue_mean,
        w.drops,
        w.retransmits,
        w.timeouts,
        w.utilization
    );
}

/// The numbers of every variant, for the table (prints only; the
/// assertions are in the tests below).
#[test]
#[ignore = "a report: cargo test --release -p incast-core ns3_dumbbell -- --ignored --nocapture"]
fn ns3_dumbbell_report() {
    for v in [
        "cubic_10g",
        "cubic_40g",
        "cubic_40g_nic_queues",
        "bbr_10g",
        "bbr_40g",
    ] {
        report(v, "");
    }
    for v in ["bbr_10g", "bbr_40g"] {
        let w = measure_with(v, "cc = { algorithm = \"bbr\", send_quantum = \"draft\" }");
        print_window(&format!("{v} send_quantum = draft"), &w);
    }
}
/// Issue 43 item 3, the collapse: CUBIC from 40 Gb/s senders through NIC
/// transmit queues (`[nic] model = "queues"`). The 40 Gb/s bursts into the
/// full 1 MB queue lose every other segment of a window (about 180 holes a
/// flow); without SACK, NewReno recovery repairs one hole per round trip,
/// and restarting the retransmission timer on every partial ACK held the
/// RTO off for all of them: the bottleneck stayed busy with segments the
/// receiver could only buffer out of order, and goodput was about 0.04 Gb/s
/// from 2 to 110 ms. RFC 6582 §4's Impatient variant (ns-3's) restarts the
/// timer on the first partial ACK only, so the RTO ends such a recovery
/// after 10 ms.
///
/// Asserted: from 40 ms (after the start-up's one timeout and the catch-up
/// of what the receiver held) every 20 ms interval's goodput is at least
/// 90 % of the payload capacity (10 Gb/s x 1460/1500 = 9.733 Gb/s). A queue
/// of 1 MB (0.8 ms at 10 Gb/s) is never emptied by a CUBIC cut (β = 0.7 of
/// a window far above the ~40 KB path), so a window of ACKs in flight at an
/// interval's edges (at most the 1 MB queue plus the path, 0.4 Gb/s over
/// 20 ms, 4 %) is the only slack; one more 10 ms stall would halve an
/// interval. Measured: 9.60 Gb/s for 40-60 ms, 9.733 after; before the fix
/// 0.04 from 40 to 100 ms. The round-robin NIC's variant collapsed the same
/// way until the fix (checked too).
#[test]
fn cubic_through_nic_queues_keeps_goodput_at_the_bottleneck_rate() {
    for variant in ["cubic_40g_nic_queues", "cubic_40g"] {
        let g = interval_goodput(variant, 20 * MS, 200 * MS);
        eprintln!("{variant}: goodput per 20 ms {g:.2?} Gb/s");
        assert_bottleneck_busy_from_40ms(variant, &g);
    }
}
/// Issue 43 item 2: four BBR flows with equal RTTs on the shared 10 Gb/s
/// bottleneck, with 10 and 40 Gb/s sender links. ns-3 mainline's TcpBbr
/// keeps 19-20 KB standing there and splits the link evenly (Jain 1.000).
///
/// Asserted, over 100-200 ms: the queue's mean below 2 x 20 KB (the issue's
/// "within 2x of ns-3"); it is of the order of what BBR v1's windows allow
/// beyond the path: 4 x (2 BDP_flow + 3 segments) - BDP, with the base RTT
/// about 7 us (BDP 9 KB), about 27 KB. Before the fix each flow's window
/// held three 64 KB send quanta (§4.2.2's 1 ms of the pacing rate, a TSO
/// burst this transport never sends: it paces segment by segment), 792 KB
/// standing. Jain's index at least 0.95 (the issue: within 0.05 of 1);
/// utilization above 99 %; no drop and, with none, no retransmission.
#[test]
fn bbr_flows_share_the_bottleneck_with_a_small_queue() {
    for variant in ["bbr_10g", "bbr_40g"] {
        let w = report(variant, "");
        assert!(w.queue_mean < 40_000.0, "{variant}: queue {}", w.queue_mean);
        assert!(w.jain() >= 0.95, "{variant}: Jain {}", w.jain());
        assert!(w.utilization > 0.99, "{variant}: {}", w.utilization);
        assert_eq!(w.drops, 0, "{variant}");
        assert_eq!(w.retransmits, vec![0; 4], "{variant}");
    }
}

/// Issue 43 item 2, retransmissions without loss: flows that start 333 us
/// apart (the first ones overshoot in STARTUP and lose segments; one flow
/// ends its recovery with a timeout). With the draft's 64 KB send quantum
/// the go-back-N after that timeout resent segments the receiver held;
/// their duplicate ACKs acknowledged exactly `recover` and were taken for a
/// new loss, whose partial-ACK retransmissions of segments still in flight
/// brought the next three duplicates: flow 0 retransmitted 5914 segments in
/// 100-200 ms with no drop. With one-segment quanta the start-up leaves no
/// such timeout here: asserted, no drop in 100-200 ms and no retransmission.
/// The cycle itself is not fixed (`send_quantum = "draft"` still shows it,
/// printed below; see docs/mechanisms.md, BBR).
#[test]
fn bbr_without_drops_retransmits_nothing() {
    let path = scenarios_dir().join("ns3_dumbbell/bbr_10g.toml");
    let mut toml = String::new();
    let mut k = 0;
    for line in std::fs::read_to_string(&path).unwrap().lines() {
        if line.starts_with("dst = ") {
            toml += &format!("start = \"{}us\"\n", 333 * k);
            k += 1;
        }
        toml += line;
        toml += "\n";
    }
    let w = measure_toml(&toml);
    print_window("bbr_10g, starts 333 us apart", &w);
    assert_eq!(w.drops, 0);
    assert_eq!(w.retransmits, vec![0; 4]);
    let draft = "cc = { algorithm = \"bbr\", send_quantum = \"draft\" }";
    let w = measure_toml(&toml.replacen("cc = \"bbr\"", draft, 1));
    print_window("bbr_10g, starts 333 us apart, draft quantum (open)", &w);
}
