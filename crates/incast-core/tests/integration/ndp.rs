//! NDP (Handley et al., SIGCOMM 2017, §3.2) over trimming switches: the
//! 64-to-1 incast of docs/htsim-ndp.md against its closed forms, byte
//! accounting, ideal FCTs, determinism, and the settings refused or
//! warned about.

use crate::common::{run, scenario_err, scenarios_dir};
use incast_core::{Results, Scenario, Simulation};
use serde_json::Value;

fn summary(r: &Results) -> Value {
    serde_json::from_str(&r.summary_json).unwrap()
}

fn run_file(name: &str) -> Results {
    let path = scenarios_dir().join(name);
    let sc = Scenario::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(&sc).unwrap();
    sim.run();
    sim.finish()
}

/// htsim's 64-to-1 incast of 2 MB (scenarios/htsim_ndp/incast.toml):
/// * every flow finishes; every byte is delivered, dropped or cut;
/// * each trimmed packet is sent again once (a NACK each, no timeout);
/// * the last flow ends after the receiver's link carried every data byte
///   (64 x 223 packets of 9064 B, the last of each 2064 B: 128.9 MB at
///   100 Gb/s, 10.31 ms) and no later than that at the pull rate (0.99
///   of the link) plus one first window's worth of round trip (1 %);
/// * no flow below its ideal FCT.
#[test]
fn incast_64_to_1_meets_its_closed_forms() {
    let r = run_file("htsim_ndp/incast.toml");
    let s = summary(&r);
    let fin = r.flows.u8s("finished");
    assert_eq!(fin.len(), 64);
    assert!(fin.iter().all(|&f| f == 1));
    let c = r.conservation;
    assert_eq!(c.in_network_bytes, 0);
    assert_eq!(
        c.sent_bytes,
        c.delivered_bytes + c.dropped_bytes + c.trimmed_bytes
    );
    let trimmed = s["trim"]["trimmed_packets"].as_u64().unwrap();
    let retransmits: u64 = r.flows.u32s("retransmits").iter().map(|&x| x as u64).sum();
    let timeouts: u64 = r.flows.u32s("timeouts").iter().map(|&x| x as u64).sum();
    assert!(trimmed > 0);
    assert_eq!((retransmits, timeouts), (trimmed, 0));
    // 9000 B cut from each (9064 B cut to 64 B).
    assert_eq!(c.trimmed_bytes, trimmed * 9000);
    let wire_bytes = 64.0 * (222.0 * 9064.0 + 2064.0);
    let at_line = wire_bytes * 8.0 / 100e9 * 1e12;
    let last = *r.flows.u64s("fct_ps").iter().max().unwrap() as f64;
    assert!(last >= at_line, "{last} < {at_line}");
    assert!(last <= at_line / 0.99 * 1.01, "{last} vs {at_line}");
    let (fct, ideal) = (r.flows.u64s("fct_ps"), r.flows.u64s("ideal_fct_ps"));
    for i in 0..fct.len() {
        assert!(fct[i] >= ideal[i], "flow {i}: {} < {}", fct[i], ideal[i]);
    }
    assert_eq!(
        s["warnings"].as_array().unwrap().len(),
        0,
        "{}",
        s["warnings"]
    );
}

/// A small NDP incast (one switch, 8 senders of 100 KB, 1500 B packets),
/// with `switch_extra` in `[switch]` and `cc` as the transport's.
fn small(switch_extra: &str, cc: &str) -> String {
    format!(
        r#"
        seed = 3
        stop = "1s"
        [topology]
        kind = "single_switch"
        hosts = 9
        link_rate = "10Gbps"
        link_delay = "1us"
        [switch]
        buffer = "1MB"
        admission = {{ kind = "static", limit = 12000 }}
        {switch_extra}
        [transport]
        cc = {cc}
        mtu = 1500
        header = 64
        [[workload.incast]]
        fan_in = 8
        bytes_per_sender = "100KB"
        times = ["0us", "100us"]
        receiver = 0
        "#
    )
}

const TRIM: &str = "[switch.trim]\n        classes = [0]\n        threshold_packets = 8";

/// Same scenario, same results; sprayed or not, every flow finishes with
/// its bytes accounted and no flow is faster than its idle path.
#[test]
fn small_incast_deterministic_and_accounted() {
    for cc in [
        "\"ndp\"",
        "{ algorithm = \"ndp\", spray = true, init_window = 4 }",
    ] {
        let toml = small(TRIM, cc);
        let (a, b) = (run(&toml), run(&toml));
        assert_eq!(a.summary_json, b.summary_json, "{cc}");
        for ((name, x), (_, y)) in a.tables().into_iter().zip(b.tables()) {
            assert_eq!(format!("{x:?}"), format!("{y:?}"), "{cc}: {name}");
        }
        let fin = a.flows.u8s("finished");
        assert!(fin.iter().all(|&f| f == 1), "{cc}");
        let c = a.conservation;
        assert_eq!(c.in_network_bytes, 0);
        assert_eq!(
            c.sent_bytes,
            c.delivered_bytes + c.dropped_bytes + c.trimmed_bytes
        );
        assert!(c.trimmed_bytes > 0, "{cc}: the incast trims");
        let (fct, ideal) = (a.flows.u64s("fct_ps"), a.flows.u64s("ideal_fct_ps"));
        assert!((0..fct.len()).all(|i| fct[i] >= ideal[i]), "{cc}");
    }
}

/// Without trimming NDP still finishes (its losses wait for the RTO), and
/// the summary warns, naming the fix.
#[test]
fn without_trimming_it_warns() {
    let r = run(&small(
        "",
        "{ algorithm = \"ndp\", rto = \"1ms\", init_window = 4 }",
    ));
    let s = summary(&r);
    let warnings = s["warnings"].to_string();
    assert!(
        warnings.contains("NDP") && warnings.contains("[switch.trim]"),
        "{warnings}"
    );
    assert!(r.flows.u8s("finished").iter().all(|&f| f == 1));
    let timeouts: u32 = r.flows.u32s("timeouts").iter().sum();
    assert!(timeouts > 0, "drops without trimming end in timeouts");
}

/// NDP with RDMA, for a long-lived flow, and bad parameters are refused,
/// each naming its key.
#[test]
fn refused_settings_name_the_key() {
    let base = small(TRIM, "\"ndp\"");
    let e = scenario_err(&format!("{base}\n[rdma]\ncc = \"dcqcn\"\n")).to_string();
    assert!(e.contains("transport.cc") && e.contains("[rdma]"), "{e}");
    let e = scenario_err(&format!(
        "{base}\n[[workload.flows]]\nsrc = 1\ndst = 2\nstart = \"0us\"\nstop = \"1ms\"\n"
    ))
    .to_string();
    assert!(e.contains("workload.flows[0].size"), "{e}");
    let e = scenario_err(&base.replace("\"ndp\"", "{ algorithm = \"ndp\", pull_rate = 1.5 }"))
        .to_string();
    assert!(e.contains("pull_rate"), "{e}");
    let e = scenario_err(&base.replace("\"ndp\"", "{ algorithm = \"ndp\", init_window = 0 }"))
        .to_string();
    assert!(e.contains("init_window"), "{e}");
}

/// EQDS, the other pull transport, gets the same warning without trimming
/// (issue 48 item 5: allowed, but warned).
#[test]
fn eqds_without_trimming_warns_too() {
    let r = run(&small("", "\"eqds\""));
    let warnings = summary(&r)["warnings"].to_string();
    assert!(
        warnings.contains("EQDS") && warnings.contains("[switch.trim]"),
        "{warnings}"
    );
    assert!(r.flows.u8s("finished").iter().all(|&f| f == 1));
}
