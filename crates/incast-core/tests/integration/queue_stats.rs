//! Queue statistics and time series (issue 17 items 7 and 8): the counters
//! table's time-weighted queue statistics against a closed form, the
//! default series bounded whatever the run's length, and selections that
//! would not fit refused before the run.

use crate::common::{run, scenario_err};

/// Two 100G senders, each sending one 150 KB flow at line rate, into one 100G
/// receiver: the bottleneck queue grows at 100 Gb/s for 12 us to about 150 KB,
/// then drains at 100 Gb/s for 12 us (a triangle). Time-weighted mean over the
/// busy period: half the peak; share of time non-empty over the window as
/// long as the drain.
const TRIANGLE: &str = r#"
name = "triangle"
seed = 1
stop = "200us"
[topology]
kind = "single_switch"
hosts = 3
link_rate = "100Gbps"
link_delay = "1us"
[switch]
buffer = "4MB"
ecn = { kind = "off" }
[transport]
cc = "newreno"
init_cwnd = 1000
[[workload.flows]]
src = 0
dst = 2
size = 150000
[[workload.flows]]
src = 1
dst = 2
size = 150000
"#;

#[test]
fn time_weighted_mean_of_a_triangle_is_half_its_peak() {
    let r = run(TRIANGLE);
    let c = &r.counters;
    let (peak, mean, nonempty, p50, p99) = (
        c.u64s("max_queue_bytes"),
        c.f64s("mean_queue_bytes"),
        c.f64s("nonempty_fraction"),
        c.u64s("p50_queue_bytes"),
        c.u64s("p99_queue_bytes"),
    );
    // The receiver's port: the row with the largest peak.
    let i = (0..c.rows()).max_by_key(|&i| peak[i]).unwrap();
    let peak = peak[i] as f64;
    assert!(peak > 140_000.0, "peak {peak}");
    // Over the window the queue is non-empty for the fill and drain, about
    // 24 us of the run; the busy-time mean is mean / nonempty. The triangle
    // has steps of one packet and ACK-clocked gaps: 10 % tolerance.
    let busy_mean = mean[i] / nonempty[i];
    assert!(
        (busy_mean / (peak / 2.0) - 1.0).abs() < 0.10,
        "busy-time mean {busy_mean}, peak {peak}"
    );
    // Percentiles are the lower edge of a half-octave bucket: within a
    // factor 1.5 below the truth, never above the peak.
    assert!(
        p99[i] as f64 <= peak && p99[i] as f64 > peak / 1.5 * 0.9,
        "p99 {}",
        p99[i]
    );
    assert!(p50[i] <= p99[i]);
}

#[test]
fn default_series_is_bounded_by_points_and_ports() {
    // The incast example for 20 ms at 5 us would be 4,000 points of every
    // switch port at full resolution.
    let toml = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/incast_single_switch.toml"
    ))
    .unwrap();
    let r = run(&toml);
    let s: serde_json::Value = serde_json::from_str(&r.summary_json).unwrap();
    let q = &s["queue_series"];
    assert_eq!(q["candidates"], 48);
    assert!(q["written"].as_u64().unwrap() <= 16);
    assert!(q["points"].as_u64().unwrap() <= 512);
    assert!(r.queues.rows() <= 16 * 512, "{} rows", r.queues.rows());
    // The interval doubled from 5 us as the run outgrew 512 points.
    assert!(q["interval_us"].as_f64().unwrap() >= 10.0, "{q}");
    let times = r.queues.u64s("time_ps");
    let mut distinct: Vec<u64> = times.to_vec();
    distinct.dedup();
    assert!(distinct.windows(2).all(|w| w[1] - w[0] >= 5_000_000));
}

#[test]
fn selections_that_would_not_fit_are_refused_before_the_run() {
    let base = TRIANGLE.replace("stop = \"200us\"", "stop = \"10ms\"");
    let e = scenario_err(&format!(
        "{base}[metrics]\nqueue_ports = \"all\"\nqueue_sample_interval = \"1ps\"\n"
    ));
    assert_eq!(e.path, "metrics.queue_sample_interval", "{e}");
    assert!(
        e.message.contains("rows") && e.message.contains("sample every"),
        "{e}"
    );
    let e = scenario_err(&format!(
        "{base}[metrics]\nqueue_ports = \"nodes\"\nqueue_nodes = [\"tor*\"]\n"
    ));
    assert_eq!(e.path, "metrics.queue_nodes[0]", "{e}");
    let e = scenario_err(&format!("{base}[metrics]\nqueue_nodes = [\"s*\"]\n"));
    assert_eq!(e.path, "metrics.queue_nodes", "{e}");
    let e = scenario_err(&format!("{base}[metrics]\nqueue_top = 0\n"));
    assert_eq!(e.path, "metrics.queue_top", "{e}");
    // A selection by name: only that switch's ports, every point.
    let r = run(&format!(
        "{TRIANGLE}[metrics]\nqueue_ports = \"nodes\"\nqueue_nodes = [\"s*\"]\n"
    ));
    assert_eq!(
        r.queues.rows() % 3,
        0,
        "three switch ports per tick, {} rows",
        r.queues.rows()
    );
}
