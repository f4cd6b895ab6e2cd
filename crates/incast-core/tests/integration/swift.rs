//! Swift (`transport/cc/swift.rs`) in a network: flows on a dumbbell share
//! the bottleneck fairly with the queueing delay at Swift's target minus the
//! base RTT, with no drops when the buffer is deep; the same run twice gives
//! the same results.

use crate::common::{assert_bytes_conserved, run, scenario_err};

const SENDERS: usize = 4;
const RATE_BPS: f64 = 10e9;
const STOP_MS: u64 = 20;

/// `SENDERS` long-lived Swift flows from hosts 1.. into host 0 over a
/// single switch, every link 10 Gb/s and 1 us, 1500 B packets, a deep
/// (10 MB) drop-tail queue, no ECN. Swift without flow scaling
/// (`fs_range = 0`): its target is 20 us + 2 links x `per_hop`.
fn dumbbell(extra: &str) -> String {
    let mut flows = String::new();
    for i in 1..=SENDERS {
        flows += &format!(
            "[[workload.flows]]\nsrc = {i}\ndst = 0\nstart = \"{}us\"\nstop = \"{STOP_MS}ms\"\n",
            (i - 1) * 7
        );
    }
    format!(
        r#"
name = "swift_dumbbell"
seed = 1
stop = "{STOP_MS}ms"
[topology]
kind = "single_switch"
hosts = {hosts}
link_rate = "10Gbps"
link_delay = "1us"
[switch]
buffer = "64MB"
admission = {{ kind = "static", limit = "10MB" }}
ecn = {{ kind = "off" }}
[transport]
cc = {{ algorithm = "swift", fs_range = "0us"{extra} }}
mtu = 1500
recovery = "newreno"
{flows}"#,
        hosts = SENDERS + 1
    )
}

#[test]
fn flows_share_fairly_with_the_queue_at_target_minus_base_rtt() {
    let r = run(&dumbbell(""));
    assert_bytes_conserved(&r, "swift dumbbell");
    let drops: u64 = r.counters.u64s("drop_pkts").iter().sum();
    assert_eq!(drops, 0, "a 10 MB queue: no drops");
    // Fair shares: Jain's index of the delivered bytes over the run.
    let sizes: Vec<f64> = r
        .flows
        .u64s("size_bytes")
        .iter()
        .map(|&b| b as f64)
        .collect();
    let (sum, squares): (f64, f64) = (sizes.iter().sum(), sizes.iter().map(|x| x * x).sum());
    let jain = sum * sum / (sizes.len() as f64 * squares);
    assert!(jain > 0.99, "Jain {jain}, delivered {sizes:?}");
    // Utilization: the bottleneck carries at least 95 % of its payload rate
    // (1460 of 1500 B) after the first RTTs.
    let goodput = sum * 8.0 / (STOP_MS as f64 / 1e3);
    assert!(
        goodput > 0.95 * RATE_BPS * 1460.0 / 1500.0,
        "goodput {goodput}"
    );
    // The queue: target = 20 us + 2 links x 3.053435 us = 26.107 us; the
    // base RTT is 2 x 2 us of propagation, 2 x 1.2 us for a 1500 B packet and
    // 2 x 51.2 ns for a 64 B ACK = 6.502 us. So the standing queue is
    // 19.605 us of the 10 Gb/s port: 24.5 KB.
    let target_us = 20.0 + 2.0 * 3.053435;
    let base_us = 4.0 + 2.4 + 0.1024;
    let want = (target_us - base_us) * 1e-6 * RATE_BPS / 8.0;
    let (peak, mean) = (
        r.counters.u64s("max_queue_bytes"),
        r.counters.f64s("mean_queue_bytes"),
    );
    let i = (0..r.counters.rows()).max_by_key(|&i| peak[i]).unwrap();
    // Tolerance 15 %: each RTT the four flows add ai = 1 packet each (6 KB,
    // 4.8 us of the port) before the decrease takes it back, a sawtooth
    // of about a quarter of the standing queue around its mean.
    assert!(
        (mean[i] / want - 1.0).abs() < 0.15,
        "mean queue {} B against {want:.0} B (target minus base RTT); peak {}",
        mean[i],
        peak[i]
    );
}

#[test]
fn hop_scaling_raises_the_standing_queue_by_per_hop_per_link() {
    // per_hop 10 us instead of 3.053435: the target grows by 2 x 6.946565 us.
    let base = run(&dumbbell(""));
    let wide = run(&dumbbell(", per_hop = \"10us\""));
    let mean_of = |r: &incast_core::Results| {
        let (peak, mean) = (
            r.counters.u64s("max_queue_bytes"),
            r.counters.f64s("mean_queue_bytes"),
        );
        mean[(0..r.counters.rows()).max_by_key(|&i| peak[i]).unwrap()]
    };
    let grown_us = (mean_of(&wide) - mean_of(&base)) * 8.0 / RATE_BPS * 1e6;
    let want_us = 2.0 * (10.0 - 3.053435);
    assert!(
        (grown_us / want_us - 1.0).abs() < 0.15,
        "queue grew {grown_us:.2} us, want {want_us:.2} us"
    );
}

#[test]
fn a_swift_run_is_deterministic() {
    let text = dumbbell("");
    let (a, b) = (run(&text), run(&text));
    assert_eq!(a.flows.u64s("size_bytes"), b.flows.u64s("size_bytes"));
    assert_eq!(
        a.counters.f64s("mean_queue_bytes"),
        b.counters.f64s("mean_queue_bytes")
    );
    assert_eq!(a.summary_json, b.summary_json);
}

#[test]
fn a_bad_swift_parameter_is_an_error_naming_its_key() {
    let e = scenario_err(&dumbbell(", max_mdf = 1.5"));
    let text = e.to_string();
    assert!(text.contains("transport.cc.max_mdf"), "{text}");
    assert!(text.contains("(0, 1)"), "{text}");
    let e = scenario_err(&dumbbell(", fs_min_cwnd = 0"));
    assert!(e.to_string().contains("transport.cc.fs_min_cwnd"), "{e}");
}
