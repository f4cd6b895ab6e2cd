//! Packet trimming (`[switch.trim]`, NDP's switch: Handley et al., SIGCOMM
//! 2017, §3.1): closed forms for the trimmed count, byte accounting,
//! determinism and the refused configurations.

use crate::common::{run, scenario_err};
use incast_core::{Results, Scenario, Simulation};
use serde_json::Value;
use std::path::Path;

/// `senders` hosts each send one 1500-byte segment to host 0 at time 0 on
/// one 10 Gb/s switch (every link 1 us): all data packets reach the
/// receiver's port at the same instant. `trim`: the `[switch.trim]` lines.
fn one_segment_incast(senders: u32, trim: &str) -> String {
    format!(
        r#"
        seed = 1
        duration = "1us"
        stop = "50ms"
        [topology]
        kind = "single_switch"
        hosts = {hosts}
        link_rate = "10Gbps"
        link_delay = "1us"
        [switch]
        buffer = "4MB"
        [switch.trim]
        classes = [0]
        {trim}
        [transport]
        cc = "newreno"
        mtu = 1500
        header = 40
        rto_min = "1ms"
        [[workload.incast]]
        fan_in = {senders}
        bytes_per_sender = 1460
        times = ["0us"]
        receiver = 0
        "#,
        hosts = senders + 1
    )
}

fn trim_section(r: &Results) -> Value {
    let summary: Value = serde_json::from_str(&r.summary_json).unwrap();
    summary["trim"].clone()
}

/// The trimmed packets up to `t_ps` (the first round, before any RTO).
fn trimmed_by(toml: &str, t_ps: u64) -> u64 {
    let sc = Scenario::from_toml_str(toml, Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(&sc).unwrap();
    sim.run_until(t_ps);
    let r = sim.finish();
    trim_section(&r)["trimmed_packets"].as_u64().unwrap()
}

/// N simultaneous arrivals at an idle port with a threshold of T packets:
/// the first leaves at once, T wait, the other N - 1 - T are trimmed (with
/// a byte threshold of T segments, the same). All in the first round:
/// before 100 us, far below the RTO of 1 ms.
#[test]
fn trimmed_count_is_the_arrivals_beyond_the_threshold() {
    for (n, t) in [(20u32, 8u64), (40, 8), (40, 1), (10, 30)] {
        let expect = (n as u64 - 1).saturating_sub(t);
        let by_packets = one_segment_incast(n, &format!("threshold_packets = {t}"));
        assert_eq!(trimmed_by(&by_packets, 100_000_000), expect, "n {n} t {t}");
        let by_bytes = one_segment_incast(n, &format!("threshold_bytes = {}", t * 1500));
        assert_eq!(
            trimmed_by(&by_bytes, 100_000_000),
            expect,
            "n {n} t {t} bytes"
        );
    }
}

/// Without a threshold, a packet is trimmed when the buffer would refuse
/// it: a static limit of 5 segments trims the same as 5 packets.
#[test]
fn trims_instead_of_the_buffer_drop() {
    let mut toml = one_segment_incast(20, "");
    toml = toml.replace(
        "buffer = \"4MB\"",
        "buffer = \"4MB\"\n        admission = { kind = \"static\", limit = 7500 }",
    );
    assert_eq!(trimmed_by(&toml, 100_000_000), 20 - 1 - 5);
    // Its drop counters stay at zero: every refused packet was trimmed.
    let r = run(&toml);
    let drops: u64 = r.counters.u64s("drop_pkts").iter().sum();
    assert_eq!(drops, 0);
}

/// Every byte is accounted: sent = delivered + dropped + cut by trimming,
/// nothing left in the network; the cut bytes are the summary's, and
/// 1460 bytes per trimmed 1500-byte packet (a 40-byte header kept); every
/// flow finishes (TCP takes a trimmed header as a loss and retransmits).
#[test]
fn bytes_are_accounted_and_flows_finish() {
    // Synchronised timeouts: 5 of the retransmissions get through per
    // round, the RTO doubling from 1 ms (8 rounds: 255 ms).
    let toml = one_segment_incast(40, "threshold_packets = 4\nheader_bytes = 40");
    let r = run(&toml.replace("stop = \"50ms\"", "stop = \"2s\""));
    let c = r.conservation;
    assert_eq!(c.in_network_bytes, 0);
    assert_eq!(
        c.sent_bytes,
        c.delivered_bytes + c.dropped_bytes + c.trimmed_bytes,
        "{c:?}"
    );
    let trim = trim_section(&r);
    let pkts = trim["trimmed_packets"].as_u64().unwrap();
    assert!(pkts >= 35, "{trim}");
    assert_eq!(trim["trimmed_bytes"].as_u64().unwrap(), c.trimmed_bytes);
    assert_eq!(c.trimmed_bytes, pkts * 1460);
    // One row: the receiver's port (node 41 is the switch), class 0.
    let ports = trim["ports"].as_array().unwrap();
    assert_eq!(ports.len(), 1, "{trim}");
    assert_eq!(ports[0]["node"], 41);
    assert_eq!(ports[0]["class"], 0);
    let fin = r.flows.u8s("finished");
    assert!(fin.iter().all(|&f| f == 1), "{fin:?}");
}

/// Same scenario and seed, same results (tables and summary).
#[test]
fn deterministic() {
    let toml = one_segment_incast(30, "threshold_packets = 3");
    let (a, b) = (run(&toml), run(&toml));
    assert_eq!(a.summary_json, b.summary_json);
    for ((name, x), (_, y)) in a.tables().into_iter().zip(b.tables()) {
        assert_eq!(format!("{x:?}"), format!("{y:?}"), "{name}");
    }
}

/// Trimming on a lossless class, headers in a lossless class, and the other
/// refused settings each name their key and the fix.
#[test]
fn refused_settings_name_the_key() {
    let base = one_segment_incast(4, "");
    let with = |from: &str, to: &str| scenario_err(&base.replace(from, to)).to_string();
    let pfc = "[switch.pfc]\n        classes = [0]\n        [switch.trim]";
    let e = with("[switch.trim]", pfc);
    assert!(
        e.contains("switch.trim.classes[0]") && e.contains("lossless"),
        "{e}"
    );
    assert!(e.contains("remove it"), "{e}");
    let e = with(
        "[switch.trim]",
        "[switch.pfc]\n        classes = [7]\n        [switch.trim]",
    );
    assert!(e.contains("switch.trim.header_class"), "{e}");
    let e = with("classes = [0]", "classes = [7]");
    assert!(e.contains("header class"), "{e}");
    let e = with("classes = [0]", "classes = []");
    assert!(e.contains("switch.trim.classes"), "{e}");
    let e = with(
        "classes = [0]",
        "classes = [0]\n        threshold_packets = 0",
    );
    assert!(e.contains("switch.trim.threshold_packets"), "{e}");
    let e = with(
        "buffer = \"4MB\"",
        "buffer = \"4MB\"\n        scheduler = \"dwrr\"",
    );
    assert!(
        e.contains("switch.scheduler") && e.contains("strict"),
        "{e}"
    );
}

/// The flows (their source hosts) whose one segment was not trimmed: those
/// done in the first round, before the 1 ms RTO.
fn untrimmed_senders(toml: &str) -> Vec<u32> {
    let r = run(&toml.replace("stop = \"50ms\"", "stop = \"2s\""));
    let (fct, src) = (r.flows.u64s("fct_ps"), r.flows.u32s("src"));
    let mut out: Vec<u32> = fct
        .iter()
        .zip(src.iter())
        .filter(|(&f, _)| f < 100_000_000)
        .map(|(_, &s)| s)
        .collect();
    out.sort_unstable();
    out
}

/// `count_sending` (htsim's queues hold the packet they send): the packet
/// on the wire counts, so N simultaneous arrivals at an idle port with a
/// threshold of T packets (or T segments' bytes) trim N - T, one more than
/// without it (N - 1 - T).
#[test]
fn the_packet_being_sent_counts_when_asked() {
    for (n, t) in [(20u32, 8u64), (40, 1), (10, 30)] {
        let expect = (n as u64).saturating_sub(t);
        for threshold in [
            format!("threshold_packets = {t}"),
            format!("threshold_bytes = {}", t * 1500),
        ] {
            let toml = one_segment_incast(n, &format!("{threshold}\ncount_sending = true"));
            assert_eq!(trimmed_by(&toml, 100_000_000), expect, "n {n} {threshold}");
        }
    }
}

/// `victim = "htsim"` (htsim's CompositeQueue): each arrival at a full
/// queue still cuts exactly one packet (N - 1 - T in all), but with
/// probability 1/2 (a coin per arrival, the switch's own seeded stream) the
/// one queued last, whose place the arrival takes. So the T + 1 untrimmed
/// packets are the first T arrivals and one survivor of the queue's last
/// place: with "arriving", always arrival T + 1, with "htsim" a later one
/// unless all N - T - 1 coins kept the queued one (2^-11 here). At each
/// seed (the same arrival order in both), the survivors share exactly T.
#[test]
fn htsim_victim_cuts_the_last_queued_half_the_time() {
    let (n, t) = (20u32, 8usize);
    for seed in 1..=20 {
        let base = one_segment_incast(n, &format!("threshold_packets = {t}"))
            .replace("seed = 1", &format!("seed = {seed}"));
        let htsim = base.replace(
            "[switch.trim]",
            "[switch.trim]
victim = \"htsim\"",
        );
        assert_eq!(trimmed_by(&htsim, 100_000_000), (n as usize - 1 - t) as u64);
        let (first, kept) = (untrimmed_senders(&base), untrimmed_senders(&htsim));
        assert_eq!((first.len(), kept.len()), (t + 1, t + 1), "seed {seed}");
        let shared = kept.iter().filter(|s| first.contains(s)).count();
        assert_eq!(shared, t, "seed {seed}: {first:?} {kept:?}");
    }
    // Every byte accounted, the cut queued packets' too, both rules on.
    let toml = one_segment_incast(
        40,
        "threshold_packets = 4\nheader_bytes = 40\nvictim = \"htsim\"\ncount_sending = true",
    );
    let c = run(&toml.replace("stop = \"50ms\"", "stop = \"2s\"")).conservation;
    assert_eq!(c.in_network_bytes, 0);
    assert_eq!(
        c.sent_bytes,
        c.delivered_bytes + c.dropped_bytes + c.trimmed_bytes,
        "{c:?}"
    );
    assert!(c.trimmed_bytes >= 36 * 1460, "{c:?}");
}
