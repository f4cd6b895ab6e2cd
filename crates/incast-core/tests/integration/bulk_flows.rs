//! Flows that end at a time (issue 20 item 5): `stop` on listed flows
//! (long-lived without `size`, cut with one) and iperf-like on/off bulk
//! schedules (`[[workload.bulk]]`), checked against closed forms.
//!
//! The path of every check: two hosts on one switch, 10 Gb/s links of
//! 1 us, default TCP (MSS 1460 B, 40 B header: 1500 B on the wire, initial
//! window 10 segments). A data packet takes S = 1.2 us on each link, so the
//! sender's NIC, the only bottleneck, sends one every S from the flow's
//! start; the switch forwards store and forward, and segment k (from 0)
//! reaches the receiver at start + (k + 2) S + 2 d, d = 1 us. The RTT is
//! 2 S + 4 d plus two 64 B ACK serializations, about 6.5 us, so the
//! initial window (10 segments, 12 us of sending) already covers it: slow
//! start costs nothing here and the NIC never idles. The bytes delivered
//! in a window of length T are then exactly
//! `1460 x #{k : (k + 2) S + 2 d < T}`; the fluid closed form
//! `rate x 1460/1500 x T` is higher only by the pipeline's fill, 2 S + 2 d
//! = 4.4 us of goodput (5353 B), which is the tolerance it is checked with.

use crate::common::run;
use incast_core::units::{MS, US};
use incast_core::{Results, KIND_BULK, KIND_LISTED};

const S: u64 = 1_200_000; // ps per 1500 B packet at 10 Gb/s
const D: u64 = US; // link delay
const MSS: u64 = 1460;

/// Two hosts, 10 Gb/s, 1 us links, `cc`, and `workload` (TOML tables).
fn path(cc: &str, workload: &str) -> String {
    format!(
        "name = \"bulk\"\n[topology]\nkind = \"single_switch\"\nhosts = 2\n\
         link_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[transport]\ncc = \"{cc}\"\n{workload}"
    )
}

/// Bytes a saturated flow delivers in its first `t` ps (module docs).
fn delivered_in(t: u64) -> u64 {
    // k + 2 < (t - 2d) / S, strictly: segments 0 ..= ceil(...) - 3.
    let limit = (t - 2 * D).div_ceil(S); // smallest k + 2 not delivered
    (limit - 2) * MSS
}

/// The fluid closed form: line rate x goodput fraction x `t`.
fn fluid(t: u64) -> f64 {
    10e9 / 8.0 * (MSS as f64 / 1500.0) * t as f64 * 1e-12
}

struct Row {
    size: u64,
    start: u64,
    finish: u64,
    finished: u8,
    kind: u8,
    ideal: u64,
    slowdown: f64,
}

fn rows(r: &Results) -> Vec<Row> {
    let f = &r.flows;
    (0..f.rows())
        .map(|i| Row {
            size: f.u64s("size_bytes")[i],
            start: f.u64s("start_ps")[i],
            finish: f.u64s("finish_ps")[i],
            finished: f.u8s("finished")[i],
            kind: f.u8s("kind")[i],
            ideal: f.u64s("ideal_fct_ps")[i],
            slowdown: f.f64s("slowdown")[i],
        })
        .collect()
}

/// Every byte sent was delivered or dropped and none is left in the network.
fn assert_conserved(r: &Results) {
    let c = r.conservation;
    assert_eq!(c.sent_bytes, c.delivered_bytes + c.dropped_bytes, "{c:?}");
    assert_eq!(c.in_network_bytes, 0, "{c:?}");
}

/// A long-lived flow from 1 ms to 11 ms delivers exactly the packet-level
/// closed form, and the fluid one less the pipeline fill. Measured: 8330
/// segments, 12,161,800 B against 12,166,667 B fluid.
#[test]
fn long_lived_flow_delivers_line_rate_until_its_stop() {
    // BBR too: its first window leaves unpaced and its startup pacing
    // (2.885 x the initial estimate) is above the line rate here.
    for cc in ["newreno", "dctcp", "cubic", "bbr"] {
        let r = run(&path(
            cc,
            "[[workload.flows]]\nsrc = 0\ndst = 1\nstart = \"1ms\"\nstop = \"11ms\"\n",
        ));
        let f = rows(&r);
        assert_eq!(f.len(), 1, "{cc}");
        let f = &f[0];
        assert_eq!((f.start, f.finish), (MS, 11 * MS), "{cc}");
        assert_eq!((f.finished, f.kind), (2, KIND_LISTED), "{cc}: stopped");
        assert_eq!(f.ideal, 0, "{cc}: no ideal FCT");
        assert!(f.slowdown.is_nan(), "{cc}: no slowdown");
        assert_eq!(f.size, delivered_in(10 * MS), "{cc}");
        assert_eq!(f.size, 12_161_800, "{cc}");
        let fill = fluid(2 * S + 2 * D);
        assert!(
            (fluid(10 * MS) - f.size as f64 - fill).abs() < MSS as f64,
            "{cc}"
        );
        assert_conserved(&r);
        let s: serde_json::Value = serde_json::from_str(&r.summary_json).unwrap();
        assert_eq!(s["flows"]["stopped"], 1, "{cc}");
        assert_eq!(s["flows"]["finished"], 0, "{cc}");
        assert_eq!(s["stopped_flows"]["bytes"], f.size, "{cc}");
        assert!(s["warnings"].as_array().unwrap().is_empty(), "{cc}: {s}");
    }
}

/// On 5 ms, off 3 ms from 0 to 20 ms: flows over [0, 5), [8, 13) and
/// [16, 20) (the schedule's stop cuts the last), each delivering the
/// closed form of its length; between them the path is idle, so each
/// starts afresh.
#[test]
fn on_off_schedule_starts_and_stops_each_period() {
    let r = run(&path(
        "cubic",
        "[[workload.bulk]]\nsrc = 0\ndst = 1\nstop = \"20ms\"\non = \"5ms\"\noff = \"3ms\"\n",
    ));
    let f = rows(&r);
    let got: Vec<(u64, u64, u64)> = f.iter().map(|r| (r.start, r.finish, r.size)).collect();
    assert_eq!(
        got,
        vec![
            (0, 5 * MS, delivered_in(5 * MS)),
            (8 * MS, 13 * MS, delivered_in(5 * MS)),
            (16 * MS, 20 * MS, delivered_in(4 * MS)),
        ]
    );
    // (5 ms - 2 d) / S = 4165 exactly: segment 4163 arrives at the stop
    // instant itself, after the stop (the stop event was queued first), so
    // 4163 segments count.
    assert_eq!(delivered_in(5 * MS), 4163 * MSS);
    assert!(f.iter().all(|r| r.kind == KIND_BULK && r.finished == 2));
    assert_conserved(&r);
}

/// Back to back (off = 0) on the same path: the next flow starts the
/// instant the previous one stops, with the old one's last packets still
/// in flight ahead of it, so it delivers up to those packets' time less.
#[test]
fn back_to_back_periods_share_the_instant() {
    let r = run(&path(
        "dctcp",
        "[[workload.bulk]]\nsrc = 0\ndst = 1\nstart = \"1ms\"\nstop = \"7ms\"\non = \"2ms\"\noff = \"0ms\"\n",
    ));
    let f = rows(&r);
    let starts: Vec<u64> = f.iter().map(|r| r.start).collect();
    assert_eq!(starts, vec![MS, 3 * MS, 5 * MS]);
    let ends: Vec<u64> = f.iter().map(|r| r.finish).collect();
    assert_eq!(ends, vec![3 * MS, 5 * MS, 7 * MS]);
    // The sender's NIC holds nothing back (it pulls segments), so the new
    // flow's first segment leaves at its start as in the closed form.
    for r in &f {
        assert_eq!(r.size, delivered_in(2 * MS));
    }
    assert_conserved(&r);
}

/// A flow with a size that completes before its stop finishes normally,
/// with its ideal FCT and slowdown; one whose stop comes first is cut, its
/// size the bytes its receiver got.
#[test]
fn size_or_stop_whichever_comes_first() {
    let r = run(&path(
        "newreno",
        "[[workload.flows]]\nsrc = 0\ndst = 1\nsize = \"100KB\"\nstop = \"5ms\"\n\
         [[workload.flows]]\nsrc = 1\ndst = 0\nsize = \"100MB\"\nstart = \"1ms\"\nstop = \"3ms\"\n",
    ));
    let f = rows(&r);
    assert_eq!(f[0].finished, 1);
    assert_eq!(f[0].size, 100_000);
    assert!(f[0].finish < MS && f[0].ideal > 0 && f[0].slowdown >= 1.0);
    assert_eq!((f[1].finished, f[1].finish), (2, 3 * MS));
    assert_eq!(f[1].size, delivered_in(2 * MS));
    assert!(f[1].slowdown.is_nan() && f[1].ideal == 0);
    assert_conserved(&r);
}

/// RDMA queue pairs stop the same way: a long-lived DCQCN flow alone on
/// the path starts and stays at line rate (1000 B payload in 1048 B
/// packets, 838.4 ns each), so it delivers exactly the packets that arrive
/// before its stop, by the same closed form: (2 ms - 2 d) / 838.4 ns =
/// 2383.1, so packets 0 ..= 2381, 2,382,000 B.
#[test]
fn rdma_long_lived_flow_stops_at_its_stop() {
    let r = run(&path(
        "newreno",
        "[rdma]\ncc = \"dcqcn\"\n\
         [[workload.flows]]\nsrc = 0\ndst = 1\nstart = \"1ms\"\nstop = \"3ms\"\n",
    ));
    let f = &rows(&r)[0];
    assert_eq!((f.finished, f.finish), (2, 3 * MS));
    let s = 1048 * 8 * 100; // ps per packet at 10 Gb/s
    let packets = (2 * MS - 2 * D).div_ceil(s) - 2;
    assert_eq!(f.size, packets * 1000);
    assert_eq!(f.size, 2_382_000);
    assert_conserved(&r);
}

/// Beside other traffic the stop still holds: bulk flows and Poisson flows
/// share host 0's link; every bulk flow stops on time and the run is
/// deterministic.
#[test]
fn bulk_beside_poisson_is_deterministic() {
    let toml = format!(
        "duration = \"4ms\"\n{}",
        path(
            "dctcp",
            "[[workload.poisson]]\nload = 0.3\ncdf = \"websearch\"\n\
             [[workload.bulk]]\nsrc = 0\ndst = 1\nstop = \"4ms\"\non = \"1ms\"\noff = \"1ms\"\n\
             cc = \"cubic\"\n",
        )
    );
    let (a, b) = (run(&toml), run(&toml));
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
    let bulk: Vec<Row> = rows(&a)
        .into_iter()
        .filter(|r| r.kind == KIND_BULK)
        .collect();
    assert_eq!(bulk.len(), 2);
    for (i, r) in bulk.iter().enumerate() {
        assert_eq!(
            (r.start, r.finish, r.finished),
            (2 * i as u64 * MS, (2 * i as u64 + 1) * MS, 2)
        );
        assert!(r.size > 0 && r.size <= delivered_in(MS));
    }
    let s: serde_json::Value = serde_json::from_str(&a.summary_json).unwrap();
    assert_eq!(
        s["congestion_controls"],
        serde_json::json!(["dctcp", "cubic"])
    );
    crate::common::assert_bytes_conserved(&a, "two groups");
}

/// The bundled `scenarios/bulk_on_off.toml`: incasts into host 7 while the
/// CUBIC bulk flow to host 7 is on queue behind it. Measured (seed 1, SACK
/// with RACK-TLP, the default): the median incast completion is 729 us in
/// on-periods against 165 us in off-periods (4.4x; SACK alone 749 and 172 us,
/// NewReno recovery 634 and 171 us, 3.7x); the check asks for 2x so that small model changes
/// do not flip it while a bulk flow that never stopped (or never started)
/// would.
#[test]
fn bundled_scenario_pulses_the_incasts() {
    let text = std::fs::read_to_string(crate::common::scenarios_dir().join("bulk_on_off.toml"));
    let r = run(&text.unwrap());
    let bulk: Vec<Row> = rows(&r)
        .into_iter()
        .filter(|r| r.kind == KIND_BULK)
        .collect();
    let periods: Vec<(u64, u64)> = bulk.iter().map(|r| (r.start, r.finish)).collect();
    assert_eq!(periods, vec![(2 * MS, 6 * MS), (10 * MS, 14 * MS)]);
    let on = |t: u64| periods.iter().any(|&(a, b)| t >= a && t < b);
    let inc = &r.incasts;
    let (mut during, mut between) = (vec![], vec![]);
    for i in 0..inc.rows() {
        assert_eq!(inc.u8s("finished")[i], 1);
        let c = inc.u64s("completion_ps")[i];
        if on(inc.u64s("start_ps")[i]) {
            during.push(c);
        } else {
            between.push(c);
        }
    }
    let median = |v: &mut Vec<u64>| {
        v.sort_unstable();
        v[v.len() / 2] as f64
    };
    let (on_us, off_us) = (median(&mut during) / 1e6, median(&mut between) / 1e6);
    assert!(on_us > 2.0 * off_us, "on {on_us} us, off {off_us} us");
    assert_conserved(&r);
}
