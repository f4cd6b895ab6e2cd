//! Bad scenarios are clear errors before anything runs (issue 17 items 1, 6,
//! 9 and 10; issue 18 item 8): each names the key path, the key's line in
//! TOML text (the key path only for JSON input), and the fix.

use crate::common::{assert_finished_and_conserved, scenario, scenario_err};
use incast_core::config_types::SizeValue;
use incast_core::mech::pfc::Headroom;
use incast_core::{Scenario, ScenarioError, Simulation};
use std::path::Path;

/// The error of `toml`, checked to be at `path` and on `line`.
fn err_at(toml: &str, path: &str, line: Option<usize>) -> ScenarioError {
    let e = scenario_err(toml);
    assert_eq!(e.path, path, "{e}\n--- in:\n{toml}");
    assert_eq!(e.line, line, "{e}\n--- in:\n{toml}");
    e
}

fn assert_says(e: &ScenarioError, words: &[&str]) {
    for w in words {
        assert!(e.message.contains(w), "`{w}` missing from: {e}");
    }
}

/// Line 1-5: a 3-host 100G switch, then `extra`, then one 1500 B flow.
fn three_hosts(extra: &str) -> String {
    format!(
        "name = \"t\"\n[topology]\nkind = \"single_switch\"\nhosts = 3\nlink_rate = \"100Gbps\"\n\
         {extra}\n[[workload.flows]]\nsrc = 0\ndst = 1\nsize = 1500\n"
    )
}

/// `extra` (top-level keys, from line 1) before `three_hosts("")`.
fn top_level(extra: &str) -> String {
    format!("{extra}\n{}", three_hosts(""))
}

/// Issue 17 item 1: 200 KB buffer, PFC headroom `headroom` B on each of the
/// switch's 3 ports, DCQCN, one 1500 B flow.
fn lossless(headroom: u64) -> String {
    format!(
        "name = \"t\"\nseed = 1\nswitch = {{ buffer = \"200KB\", pfc = {{ classes = [3], \
         headroom = {headroom} }} }}\nrdma = {{ cc = \"dcqcn\" }}\n[topology]\nkind = \
         \"single_switch\"\nhosts = 3\nlink_rate = \"100Gbps\"\n[[workload.flows]]\nsrc = 0\n\
         dst = 1\nsize = 1500\n"
    )
}

fn run_for(sc: &Scenario, stop_ps: u64) -> incast_core::Results {
    let mut sc = sc.clone();
    sc.config.stop = Some(incast_core::config_types::TimeValue(stop_ps));
    let mut sim = Simulation::new(&sc).unwrap();
    sim.run();
    sim.finish()
}

/// The reported case and both sides of the threshold. Data packets are
/// 1000 + 48 = 1048 B and ACKs/CNPs 60 B; the switch has 3 ports and one
/// lossless class, so the shared pool is 200000 - 3h: it holds one data
/// packet up to h = 66317 B. The validator refuses from 66318 B; the
/// simulation itself stops delivering ACKs (lossy class 7, which may use
/// 200000 - 3h) from h = 66647 B, the failure the issue reported at 67 KB.
#[test]
fn pfc_headroom_that_leaves_no_shared_pool_is_refused_with_the_arithmetic() {
    let e = err_at(&lossless(100_000), "switch.pfc.headroom", Some(3));
    assert_says(
        &e,
        &[
            "3 ports x 100000 B x 1 lossless class = 300000 B",
            "of the 200000 B buffer",
            "shared pool of 0 B for lossless class 3",
            "up to 1048 B",
            "buffer - headroom = 0 B",
            "raise switch.buffer to at least 301048 B",
            "at most 66317 B",
        ],
    );
    // One byte below the threshold: valid, and the flow finishes.
    let ok = scenario(&lossless(66_317));
    let r = run_for(&ok, 10_000_000_000);
    assert_finished_and_conserved(&r, "headroom 66317 B");
    let e = err_at(&lossless(66_318), "switch.pfc.headroom", Some(3));
    assert_says(&e, &["3 ports x 66318 B", "shared pool of 1046 B"]);

    // What the rule protects against, shown by running past the validator
    // (the scenario's fields are public): ACKs fit up to h = 66646 B ...
    let mut sc = ok.clone();
    let pfc = sc.config.switch.pfc.as_mut().unwrap();
    pfc.headroom = Some(Headroom::Fixed(SizeValue(66_646)));
    assert_finished_and_conserved(&run_for(&sc, 10_000_000_000), "headroom 66646 B");
    // ... and from 66647 B every ACK is dropped: the flow never finishes.
    let pfc = sc.config.switch.pfc.as_mut().unwrap();
    pfc.headroom = Some(Headroom::Fixed(SizeValue(66_647)));
    let r = run_for(&sc, 2_000_000_000);
    assert_eq!(r.flows.u8s("finished"), vec![0], "the flow should be stuck");
}

/// A bulk schedule's flows use their class like any other flows: with no
/// other traffic, the headroom that leaves class 3 no shared pool is
/// refused as for a listed flow.
#[test]
fn bulk_flows_count_as_flows_of_their_class() {
    let bulk = lossless(100_000).replace(
        "[[workload.flows]]\nsrc = 0\ndst = 1\nsize = 1500\n",
        "[[workload.bulk]]\nsrc = 0\ndst = 1\nstop = \"1ms\"\non = \"100us\"\noff = \"100us\"\n",
    );
    let e = err_at(&bulk, "switch.pfc.headroom", Some(3));
    assert_says(
        &e,
        &["shared pool of 0 B for lossless class 3", "up to 1048 B"],
    );
}

/// A lossy 9000 B packet generator beside a lossless TCP class: the lossy
/// class may use buffer - headroom, here 600000 - 3 x h.
#[test]
fn lossy_classes_need_room_beside_the_headroom() {
    let toml = format!(
        "duration = \"100us\"\n{}",
        three_hosts(
            "[switch]\nbuffer = \"600KB\"\npfc = { classes = [3], headroom = \"197KB\" }\n\
             [transport]\nclass = 3\n\
             [[workload.packets]]\nsrc = 2\ndst = 1\nsize = 9000\nrate = \"1Gbps\"\nclass = 0"
        )
    );
    // 600000 - 3 x 197000 = 9000 B: exactly one generated packet fits.
    scenario(&toml);
    let e = err_at(
        &toml.replace("197KB", "197001"),
        "switch.pfc.headroom",
        Some(9),
    );
    assert_says(
        &e,
        &[
            "3 ports x 197001 B x 1 lossless class = 591003 B",
            "leaving lossy class 0 (generated packets, up to 9000 B) buffer - headroom = 8997 B",
            "raise switch.buffer to at least 600003 B",
            "at most 197000 B",
        ],
    );
}

#[test]
fn a_buffer_or_queue_limit_smaller_than_one_packet_is_refused() {
    let e = err_at(
        &three_hosts("[switch]\nbuffer = 1"),
        "switch.buffer",
        Some(7),
    );
    assert_says(&e, &["1 B is smaller than one packet of class 0", "1500 B"]);
    let e = err_at(
        &three_hosts("[switch]\nadmission = { kind = \"static\", limit = 1000 }"),
        "switch.admission.limit",
        Some(7),
    );
    assert_says(&e, &["limit of 1000 B cannot hold one packet of class 0"]);
    // ACKs in their own class need room too.
    let e = err_at(
        &three_hosts(
            "[transport]\nack_class = 7\n[switch]\nclasses = [{ class = 7, admission = \
             { kind = \"static\", limit = 63 } }]",
        ),
        "switch.classes[0].admission.limit",
        Some(9),
    );
    assert_says(&e, &["class 7 (TCP ACKs, up to 64 B)"]);
}

#[test]
fn pfc_headroom_zero_and_duplicate_classes_are_refused() {
    let e = err_at(
        &three_hosts("[switch]\npfc = { classes = [3], headroom = 0 }\n[transport]\nclass = 3"),
        "switch.pfc.headroom",
        Some(7),
    );
    assert_says(&e, &["cannot hold one 1500 B packet"]);
    err_at(
        &three_hosts("[switch]\npfc = { classes = [3, 3] }"),
        "switch.pfc.classes[1]",
        Some(7),
    );
}

#[test]
fn packet_sizes_and_sub_picosecond_times() {
    let e = err_at(
        &three_hosts("[transport]\nack_size = 0"),
        "transport.ack_size",
        Some(7),
    );
    assert_says(&e, &["ack_size = 64"]);
    err_at(
        &three_hosts("[transport]\nmtu = 100000"),
        "transport.mtu",
        Some(7),
    );
    err_at(
        &top_level("rdma = { ack_size = 0 }"),
        "rdma.ack_size",
        Some(1),
    );
    // Both sub-picosecond delays are refused alike (one used to round to 0).
    for v in ["1e-9ps", "0.4ps", "1e-7ps"] {
        let toml = three_hosts("").replace(
            "link_rate = \"100Gbps\"",
            &format!("link_rate = \"100Gbps\"\nlink_delay = \"{v}\""),
        );
        let e = err_at(&toml, "topology.link_delay", Some(6));
        assert!(e.message.contains("picosecond"), "{e}");
    }
    // A delay of exactly 0 is fine; so is a float a hair off a whole picosecond.
    for v in ["0ps", "2.5ns", "0.1us"] {
        let toml = three_hosts("").replace(
            "link_rate = \"100Gbps\"",
            &format!("link_rate = \"100Gbps\"\nlink_delay = \"{v}\""),
        );
        scenario(&toml);
    }
    err_at(
        &three_hosts("[switch]\nbuffer = \"1e-9B\""),
        "switch.buffer",
        Some(7),
    );
}

/// A leaf-spine of 8 hosts with a Poisson load: `top` first (line 1), then
/// the topology and the workload (11 lines), then `bottom`.
fn generators(top: &str, bottom: &str) -> String {
    format!(
        "{top}\nname = \"g\"\n[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 1\n\
         hosts_per_leaf = 4\nhost_rate = \"10Gbps\"\nfabric_rate = \"40Gbps\"\n\
         [[workload.poisson]]\nload = 0.5\ncdf = \"websearch\"\n{bottom}"
    )
}

#[test]
fn durations_stops_and_windows() {
    scenario(&generators("duration = \"1ms\"", ""));
    let e = err_at(&generators("", ""), "duration", None);
    assert_says(&e, &["needs `duration`"]);
    let e = err_at(&generators("duration = \"0ps\"", ""), "duration", Some(1));
    assert_says(&e, &["is 0"]);
    for d in ["1ps", "1us"] {
        let e = err_at(
            &generators(&format!("duration = \"{d}\""), ""),
            "duration",
            Some(1),
        );
        assert_says(
            &e,
            &["workload.poisson[0] expects", "less than one", "at least"],
        );
    }
    let e = err_at(
        &generators("duration = \"1ms\"\nstop = \"500us\"", ""),
        "stop",
        Some(2),
    );
    assert_says(&e, &["stop (500us) is before the end of duration (1ms)"]);
    let e = err_at(&generators("duration = \"20s\"", ""), "duration", Some(1));
    assert_says(&e, &["beyond the default stop (10s)"]);
    let e = err_at(
        &generators("duration = \"1ms\"", "[metrics]\nwarmup = \"2ms\""),
        "metrics.warmup",
        Some(14),
    );
    assert_says(&e, &["warmup (2ms) is not shorter than duration (1ms)"]);
    let e = err_at(
        &generators(
            "duration = \"1ms\"",
            "[metrics]\nwarmup = \"500us\"\ncooldown = \"600us\"",
        ),
        "metrics.cooldown",
        Some(15),
    );
    assert_says(&e, &["measurement window"]);
    let e = err_at(
        &three_hosts("[metrics]\ncooldown = \"1us\""),
        "metrics.cooldown",
        Some(7),
    );
    assert_says(&e, &["which is not set"]);
    err_at(
        &three_hosts("[metrics]\nwarmup = \"1us\""),
        "metrics.warmup",
        Some(7),
    );
    let e = err_at(
        &generators(
            "duration = \"1ms\"",
            "[[workload.packets]]\nsrc = 0\ndst = 1\nsize = 1000\nrate = \"1Gbps\"\n\
             start = \"2ms\"",
        ),
        "workload.packets[0].start",
        Some(18),
    );
    assert_says(&e, &["no traffic"]);
}

#[test]
fn poisson_needs_two_hosts() {
    let toml = "duration = \"1ms\"\n[topology]\nkind = \"single_switch\"\nhosts = 1\n\
                link_rate = \"10Gbps\"\n[[workload.poisson]]\nload = 0.5\ncdf = \"websearch\"\n";
    let e = err_at(toml, "workload.poisson[0].hosts", None);
    assert_says(&e, &["the topology has 1 host", "at least 2 hosts"]);
}

#[test]
fn incast_receivers_are_hosts_and_leave_enough_senders() {
    let group = |keys: &str| {
        three_hosts(&format!(
            "[[workload.incast]]\nfan_in = 2\nbytes_per_sender = \"10KB\"\nload = 0.1\n{keys}"
        ))
    };
    let e = err_at(
        &group("receivers = []"),
        "workload.incast[0].receivers",
        Some(10),
    );
    assert_says(&e, &["is empty"]);
    let e = err_at(
        &group("receiver = 0\nreceivers = [1]"),
        "workload.incast[0].receivers",
        Some(11),
    );
    assert_says(&e, &["not both"]);
    let e = err_at(
        &group("receivers = [0, 7]"),
        "workload.incast[0].receivers[1]",
        Some(10),
    );
    assert_says(&e, &["7"]);
    // Senders from hosts [1, 2] without the receiver 1: one, below fan-in 2.
    let e = err_at(
        &group("receivers = [0, 1]\nhosts = [1, 2]"),
        "workload.incast[0].fan_in",
        Some(7),
    );
    assert_says(&e, &["1 besides a receiver"]);
}

#[test]
fn incast_times_empty_or_after_the_duration() {
    let toml =
        three_hosts("[[workload.incast]]\nfan_in = 2\nbytes_per_sender = \"10KB\"\ntimes = []");
    let e = err_at(&toml, "workload.incast[0].times", Some(9));
    assert_says(&e, &["is empty"]);
    let toml = format!(
        "duration = \"50us\"\n{}",
        three_hosts(
            "[[workload.incast]]\nfan_in = 2\nbytes_per_sender = \"10KB\"\n\
             times = [\"10us\", \"26ms\"]"
        )
    );
    let e = err_at(&toml, "workload.incast[0].times[1]", Some(10));
    assert_says(
        &e,
        &["an incast at 26ms is not before the end of duration (50us)"],
    );
}

#[test]
fn arrays_for_tables_and_keys_a_variant_ignores() {
    let e = err_at(&top_level("metrics = []"), "metrics", Some(1));
    assert_says(&e, &["expected a table, found an array"]);
    let e = err_at(
        &three_hosts("[switch]\necn = { kind = \"off\", k = 5 }"),
        "switch.ecn.k",
        Some(7),
    );
    assert_says(&e, &["unknown key `k`", "kind = \"off\""]);
    err_at(&top_level("switch = [\"1MB\"]"), "switch", Some(1));
}

#[test]
fn numeric_overflow_names_the_key_and_long_values_are_cut() {
    let e = err_at(
        "name = \"x\"\nseed = 18446744073709551616\n",
        "seed",
        Some(2),
    );
    assert_says(&e, &["too large"]);
    let e = err_at(&top_level("seed = -1"), "seed", Some(1));
    assert_says(&e, &["-1"]);
    err_at(
        &three_hosts("").replace("hosts = 3", "hosts = 4294967296"),
        "topology.hosts",
        Some(4),
    );
    err_at(
        &three_hosts("[switch]\nbuffer = \"1e30B\""),
        "switch.buffer",
        Some(7),
    );
    err_at(&top_level("duration = \"1e30s\""), "duration", Some(1));
    // A 100,000-character value is never repeated in full.
    let long = "x".repeat(100_000);
    for (extra, key) in [
        (format!("[metrics]\n{long} = 1"), "metrics.xxxxx"),
        (format!("[metrics]\nwarmup = \"{long}\""), "metrics.warmup"),
        (format!("[transport]\ncc = \"{long}\""), "transport.cc"),
        (
            format!("[switch]\necn = {{ kind = \"{long}\" }}"),
            "switch.ecn.kind",
        ),
    ] {
        let e = scenario_err(&three_hosts(&extra));
        let shown: String = e.to_string().chars().take(300).collect();
        assert!(e.path.starts_with(key), "{shown}");
        assert!(e.path.chars().count() <= 80, "{shown}");
        assert!(e.to_string().chars().count() < 700, "{shown}");
        assert!(e.to_string().contains('…'), "{shown}");
    }
}

#[test]
fn errors_inside_inline_and_tagged_tables_name_the_key_and_its_line() {
    let ls = |host_rate: &str| {
        format!(
            "name = \"t\"\n[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 1\n\
             hosts_per_leaf = 2\nhost_rate = {host_rate}\nfabric_rate = \"10Gbps\"\n\
             [[workload.flows]]\nsrc = 0\ndst = 1\nsize = 1\n"
        )
    };
    let e = err_at(&ls("100"), "topology.host_rate", Some(7));
    assert_says(&e, &["100 has no unit"]);
    let e = err_at(&ls("\"10Gbs\""), "topology.host_rate", Some(7));
    assert_says(&e, &["unknown rate unit `Gbs`"]);
    let e = err_at(
        &three_hosts("[switch]\nbuffer = \"1MB\"\necn = { kind = \"step\", k = \"-2us\" }"),
        "switch.ecn.k",
        Some(8),
    );
    assert_says(&e, &["negative"]);
    let e = err_at(
        &top_level(
            "switch = { pfc = { classes = [3], threshold = { kind = \"dynamic\", alpha = \"x\" } } }",
        ),
        "switch.pfc.threshold.alpha",
        Some(1),
    );
    assert_says(&e, &["invalid type"]);
    let e = err_at(
        &three_hosts(
            "[switch]\necn = { kind = \"red_by_rate\", levels = [\n  { rate = \"10G\", kmin = 1, kmax = 2, pmax = 0.1 },\n  { rate = \"40G\", kmin = 1, kmax = \"2XB\", pmax = 0.1 },\n] }",
        ),
        "switch.ecn.levels[1].kmax",
        Some(9),
    );
    assert_says(&e, &["unknown size unit"]);
    let e = err_at(
        &three_hosts("[transport]\ncc = { algorithm = \"dctcp\", g = \"big\" }"),
        "transport.cc.g",
        Some(7),
    );
    assert_says(&e, &["invalid type"]);
    let e = err_at(
        &three_hosts("").replace("kind = \"single_switch\"", "kind = \"single_swich\""),
        "topology.kind",
        Some(3),
    );
    assert_says(&e, &["unknown variant `single_swich`"]);
}

#[test]
fn json_errors_name_the_key_path_only() {
    let base = Path::new(".");
    let json = r#"{"topology": {"kind": "leaf_spine", "leaves": 2, "spines": 1,
        "hosts_per_leaf": 2, "host_rate": 100, "fabric_rate": "10Gbps"},
        "workload": {"flows": [{"src": 0, "dst": 1, "size": 1}]}}"#;
    let e = Scenario::from_json_str(json, base).unwrap_err();
    assert_eq!(e.path, "topology.host_rate", "{e}");
    assert_eq!(e.line, None);
    assert!(!e.to_string().contains("line"), "{e}");
    assert!(!e.to_string().contains("column"), "{e}");
    let e = Scenario::from_json_str(r#"{"seed": -1, "topology": {}}"#, base).unwrap_err();
    assert_eq!(e.path, "seed", "{e}");
    assert!(!e.to_string().contains("column"), "{e}");
    let e = Scenario::from_json_str(r#"{"metrics": [], "topology": {"kind": "single_switch", "hosts": 2, "link_rate": "1G"}, "workload": {"flows": [{"src": 0, "dst": 1, "size": 1}]}}"#, base).unwrap_err();
    assert_eq!(e.path, "metrics", "{e}");
    // A syntax error can only say where it is.
    let e = Scenario::from_json_str("{\"seed\": ", base).unwrap_err();
    assert!(e.message.contains("malformed"), "{e}");
}

#[test]
fn congestion_controls_in_the_wrong_table_say_where_they_belong() {
    let e = err_at(
        &three_hosts("[transport]\ncc = \"dcqcn\""),
        "transport.cc",
        Some(7),
    );
    assert_says(&e, &["RDMA congestion controls go under [rdma]"]);
    let e = err_at(
        &three_hosts("[transport]\ncc = { algorithm = \"hpcc\" }"),
        "transport.cc.algorithm",
        Some(7),
    );
    assert_says(&e, &["go under [rdma]"]);
    let e = err_at(&three_hosts("[rdma]\ncc = \"newreno\""), "rdma.cc", Some(7));
    assert_says(&e, &["TCP congestion controls go under [transport]"]);
}

#[test]
fn cdf_paths_must_be_small_regular_files() {
    let poisson = |cdf: &str| {
        format!(
            "duration = \"1ms\"\n[topology]\nkind = \"single_switch\"\nhosts = 2\n\
             link_rate = \"10Gbps\"\n[[workload.poisson]]\nload = 0.5\ncdf = \"{cdf}\"\n"
        )
    };
    for (path, kind) in [
        ("/dev/zero", "a character device"),
        ("/dev/urandom", "a character device"),
        ("/", "a directory"),
    ] {
        let e = err_at(&poisson(path), "workload.poisson[0].cdf", Some(8));
        assert_says(&e, &["not a regular file", kind]);
    }
    let dir = std::env::temp_dir().join(format!("incast-cdf-cap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo");
    if std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        let e = err_at(
            &poisson(fifo.to_str().unwrap()),
            "workload.poisson[0].cdf",
            Some(8),
        );
        assert_says(&e, &["a FIFO"]);
    }
    // One byte over the 16 MiB cap (a sparse file: nothing is written).
    let big = dir.join("big.cdf");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len((16 << 20) + 1).unwrap();
    let e = err_at(
        &poisson(big.to_str().unwrap()),
        "workload.poisson[0].cdf",
        Some(8),
    );
    assert_says(&e, &["above the limit of 16 MiB"]);
    // The flow file is read the same way.
    let e = err_at(
        &three_hosts(&format!("[workload]\nflow_file = \"{}\"", dir.display())),
        "workload.flow_file",
        Some(7),
    );
    assert_says(&e, &["not a regular file"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn validation_errors_carry_the_line_of_their_key() {
    let e = err_at(
        &three_hosts("[[workload.poisson]]\nload = 1.5\ncdf = \"websearch\""),
        "workload.poisson[0].load",
        Some(7),
    );
    assert_says(&e, &["load must be in (0, 1]"]);
    // With the headroom sized by the formula, the buffer is at fault.
    let e = err_at(
        &three_hosts("[switch]\npfc = { classes = [3] }\nbuffer = 1000"),
        "switch.buffer",
        Some(8),
    );
    assert_says(&e, &["3 ports x 28064 B", "buffer - headroom = 0 B"]);
    // A static queue limit below one packet.
    let e = err_at(
        &three_hosts(
            "[switch]\npfc = { classes = [3] }\nadmission = { kind = \"static\", limit = 1 }",
        ),
        "switch.admission.limit",
        Some(8),
    );
    assert_says(&e, &["limit of 1 B"]);
}

/// Lines 1-5: a 3-host 100G switch; then one listed flow with `flow`
/// (from line 7).
fn timed_flow(flow: &str) -> String {
    format!(
        "name = \"t\"\n[topology]\nkind = \"single_switch\"\nhosts = 3\nlink_rate = \"100Gbps\"\n\
         [[workload.flows]]\nsrc = 0\ndst = 1\n{flow}\n"
    )
}

/// Lines 1-5 as above; then a bulk schedule 0 -> 1, `stop` 10 ms, on and
/// off 5 ms (lines 6-11), with `replace` applied.
fn bulk(replace: (&str, &str)) -> String {
    "name = \"t\"\n[topology]\nkind = \"single_switch\"\nhosts = 3\nlink_rate = \"100Gbps\"\n\
     [[workload.bulk]]\nsrc = 0\ndst = 1\nstop = \"10ms\"\non = \"5ms\"\noff = \"5ms\"\n"
        .replace(replace.0, replace.1)
}

/// Issue 20 item 5: flows that end at a time say what is wrong with their
/// times and hosts, at the key and its line.
#[test]
fn stop_and_bulk_schedules_are_checked() {
    // A flow without size is long-lived: it needs a stop.
    let e = err_at(&timed_flow("start = \"1ms\""), "workload.flows[0]", Some(6));
    assert_says(
        &e,
        &["neither `size` nor `stop`", "give `size`", "or `stop`"],
    );
    scenario(&timed_flow("stop = \"1ms\""));
    scenario(&timed_flow("size = 1500\nstop = \"1ms\""));
    let e = err_at(
        &timed_flow("start = \"2ms\"\nstop = \"1ms\""),
        "workload.flows[0].stop",
        Some(10),
    );
    assert_says(
        &e,
        &[
            "stop (1ms) is not after start (2ms)",
            "set stop after start",
        ],
    );
    let e = err_at(
        &top_level("stop = \"5ms\"").replace("size = 1500", "stop = \"6ms\""),
        "workload.flows[0].stop",
        Some(11),
    );
    assert_says(
        &e,
        &[
            "after the end of the run (5ms, the scenario's `stop`)",
            "at least 6ms",
        ],
    );

    scenario(&bulk(("", "")));
    let e = err_at(
        &bulk(("on = \"5ms\"", "on = \"0ms\"")),
        "workload.bulk[0].on",
        Some(10),
    );
    assert_says(&e, &["is 0", "on = \"5ms\""]);
    let e = err_at(
        &bulk(("dst = 1", "dst = 0")),
        "workload.bulk[0].dst",
        Some(8),
    );
    assert_says(&e, &["both host 0", "set dst to another host"]);
    let e = err_at(
        &bulk(("dst = 1", "dst = 7")),
        "workload.bulk[0].dst",
        Some(8),
    );
    assert_says(&e, &["host 7 does not exist"]);
    let e = err_at(
        &bulk(("stop = \"10ms\"", "stop = \"10ms\"\nstart = \"10ms\"")),
        "workload.bulk[0].stop",
        Some(9),
    );
    assert_says(&e, &["stop (10ms) is not after start (10ms)"]);
    let e = err_at(
        &bulk(("stop = \"10ms\"", "stop = \"11s\"")),
        "workload.bulk[0].stop",
        Some(9),
    );
    assert_says(&e, &["the default stop", "at least 11s"]);
    let e = err_at(
        &bulk(("off = \"5ms\"", "off = \"5ms\"\nperiod = \"10ms\"")),
        "workload.bulk[0].period",
        Some(12),
    );
    assert_says(&e, &["unknown field `period`", "`on`", "`off`"]);
    let e = err_at(&bulk(("off = \"5ms\"\n", "")), "workload.bulk[0]", Some(6));
    assert_says(&e, &["missing field `off`"]);
    let e = err_at(
        &bulk(("off = \"5ms\"", "off = \"5ms\"\ncc = \"vegas\"")),
        "workload.bulk[0].cc",
        Some(12),
    );
    assert!(e.message.contains("vegas"), "{e}");
}
