//! One run on several threads (`incast_core::run_threaded`): each partition
//! of the network runs on its own thread in a world of its own, and the
//! tables are the very bytes of a one-thread node-ordered run for every
//! thread count (issue 47). The cases are the partitioned runs' (every
//! family of mechanisms whose state the threads can merge).

use crate::common::{digest, scenario};
use crate::partitioned::{differences, mechanism_families, plain};
use incast_core::metrics::FINISHED_STOPPED;
use incast_core::run_threaded;

/// `toml` on each count of `threads` gives `reference`'s bytes (`what`
/// names the case in the failure).
fn assert_threads_match(what: &str, toml: &str, reference: &incast_core::Results, threads: &[u32]) {
    for &n in threads {
        let got =
            run_threaded(&scenario(toml), n).unwrap_or_else(|e| panic!("{what}, {n} threads: {e}"));
        // The digest, and every table beyond it (the NIC models' series, the
        // registered tables) column by column.
        let differs = differences(reference, &got);
        assert_eq!(
            digest(&got),
            digest(reference),
            "{what}: {n} threads differ from one: {differs:?}"
        );
        assert!(differs.is_empty(), "{what}: {n} threads: {differs:?}");
    }
}

#[test]
fn threads_give_the_one_thread_tables() {
    let mut ran = 0;
    for (what, toml) in mechanism_families() {
        let reference = plain(&toml);
        assert!(reference.flows.rows() > 50, "{what}");
        assert_eq!(reference.conservation.sent_bytes, {
            let c = reference.conservation;
            c.delivered_bytes + c.dropped_bytes + c.trimmed_bytes + c.in_network_bytes
        });
        if what.contains("trimming") {
            assert!(
                reference.conservation.trimmed_bytes > 0,
                "{what}: nothing trimmed"
            );
        }
        if what.contains("clocks") {
            let s: serde_json::Value = serde_json::from_str(&reference.summary_json).unwrap();
            assert!(s["edge"]["owd_readings"].as_u64().unwrap() > 1000, "{what}");
            assert!(
                reference.owd.rows() > 100,
                "{what}: {} samples",
                reference.owd.rows()
            );
            assert!(
                s["edge"]["clock"]["mean_abs_error_us"].as_f64().unwrap() > 0.0,
                "{what}"
            );
        }
        if what.contains("PCIe") {
            let s: serde_json::Value = serde_json::from_str(&reference.summary_json).unwrap();
            let queues = s["nic_receive"]["queues"].as_object().unwrap();
            let backlog = queues
                .values()
                .map(|q| q["max_bytes"].as_u64().unwrap())
                .max();
            assert!(backlog > Some(64_000), "{what}: {}", s["nic_receive"]);
            assert!(
                s["pcie"]["max_host_tx_bytes"].as_u64().unwrap() > 0,
                "{what}"
            );
        }
        if what.contains("transmit queues") {
            let s: serde_json::Value = serde_json::from_str(&reference.summary_json).unwrap();
            let queues = &s["nic_queues"]["queues"];
            for cc in ["dctcp", "cubic"] {
                let max = queues[cc]["max_bytes"].as_u64().unwrap();
                assert!(max > 16_000, "{what}: {cc} queue peaked at {max} B");
            }
        }
        if what.contains("lost CIPs") {
            let s: serde_json::Value = serde_json::from_str(&reference.summary_json).unwrap();
            assert!(
                s["ci"]["cips_lost"].as_u64().unwrap() > 10,
                "{what}: {}",
                s["ci"]
            );
        }
        if what.contains("isolation") {
            let isolations = reference.flows.u32s("ci_isolations").iter().sum::<u32>();
            assert!(isolations > 10, "{what}: {isolations} isolations");
        }
        assert_threads_match(what, &toml, &reference, &[1, 2, 3]);
        ran += 1;
    }
    assert_eq!(ran, 18);
}

/// A scenario in push order runs in node order on threads: its own
/// one-thread node-ordered run is the reference, not its push-ordered one.
#[test]
fn threads_run_in_node_order() {
    let (_, toml) = &mechanism_families()[3];
    let push = toml.replace("ties = \"node\"", "ties = \"push\"");
    let on_threads = run_threaded(&scenario(&push), 2).unwrap();
    assert_eq!(digest(&on_threads), digest(&plain(toml)));
}

/// Every NIC model of the registry (the example extension included) runs
/// threaded with the one-thread bytes: TCP flows through each (the
/// adapter's own traffic, raw frames under congestion management, is
/// [`congestion_management_runs_on_threads`]'s).
#[test]
fn every_nic_model_runs_threaded() {
    let (_, dctcp) = &mechanism_families()[3];
    let mut threaded = Vec::new();
    for model in incast_core::nic::NicModelKind::ALL {
        let name = model.name();
        let toml = format!("{dctcp}[nic]\nmodel = \"{name}\"\n");
        let got = run_threaded(&scenario(&toml), 2).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(digest(&got), digest(&plain(&toml)), "{name}");
        threaded.push(name);
    }
    assert_eq!(
        threaded,
        ["round_robin", "adapter", "queues", "example_fifo"]
    );
}

/// A switch mechanism that does not say it can merge its partitions'
/// state (the example beacon's) is refused on threads, naming its section;
/// on one thread it runs.
#[test]
fn a_mechanism_without_a_merge_is_refused() {
    let (_, dctcp) = &mechanism_families()[3];
    let toml = format!("{dctcp}[switch.example_beacon]\nperiod = \"10us\"\ncount = 2\n");
    let Err(e) = run_threaded(&scenario(&toml), 2) else {
        panic!("a mechanism without a merge ran on threads");
    };
    assert!(e.contains("cannot run on threads yet"), "{e}");
    assert!(e.contains("[switch.example_beacon]"), "{e}");
    assert!(plain(&toml).flows.rows() > 50);
}

/// The IBM talk's congestion management on a k = 4 fat-tree (two pods a
/// partition at two threads): on/off sources at 80 % into two hotspots,
/// input-partitioned switches that PAUSE, and each scheme's feedback,
/// probes and echoes crossing partitions as frames with their messages.
/// The `cm` table (its rates summed exactly) and every count add up to the
/// one-thread run's.
#[test]
fn congestion_management_runs_on_threads() {
    for cm in ["ecm", "e2cm", "qcn", "e2cm_cp"] {
        let toml = format!(
            r#"
name = "cm_threads"
seed = 2
duration = "2ms"
stop = "2ms"
cm = "{cm}"
[topology]
kind = "fat_tree"
k = 4
host_rate = "10Gbps"
fabric_rate = "10Gbps"
[switch]
ecn = {{ kind = "off" }}
[switch.input_buffer]
memory_per_port = "300KB"
pause = true
pause_high = "260KB"
pause_low = "230KB"
[nic]
model = "adapter"
[[workload.onoff]]
load = 0.8
mean_burst = "12us"
frame = 1500
[[workload.hotspot]]
host = 0
service_rate = 0.1
start = "0.5ms"
duration = "1ms"
[[workload.hotspot]]
host = 13
service_rate = 0.2
start = "1ms"
[metrics]
queue_ports = "switch"
queue_sample_interval = "50us"
[timing]
ties = "node"
"#
        );
        let reference = plain(&toml);
        let s: serde_json::Value = serde_json::from_str(&reference.summary_json).unwrap();
        let cm_summary = &s["cm"];
        let count = |key: &str| cm_summary[key].as_u64().unwrap();
        assert!(count("feedback_received") > 100, "{cm}: {cm_summary}");
        assert!(count("reaction_points") > 10, "{cm}: {cm_summary}");
        if cm.starts_with("e2cm") {
            assert!(count("echoes_received") > 100, "{cm}: {cm_summary}");
        }
        let cm_table = reference
            .tables()
            .into_iter()
            .find(|(name, _)| *name == "cm");
        let cm_table = cm_table.expect("the cm table").1;
        let limited = cm_table.u32s("limited_flows");
        assert!(limited.iter().max() > Some(&5), "{cm}: {limited:?}");
        let hot = cm_table.u64s("hot_rx_bytes");
        assert!(hot.iter().max() > Some(&100_000), "{cm}");
        assert!(
            cm_summary["input_buffers"]["pauses"].as_u64().unwrap() > 0,
            "{cm}"
        );
        assert_threads_match(cm, &toml, &reference, &[1, 2, 3]);
    }
}

/// The queue sampler runs threaded: each partition samples its own ports
/// at the same ticks, and the `queues` table is the one-thread run's, with
/// every port's series (`all`, its rows over 1000) and with the default
/// selection (`top`: the series halved as it fills, the ports with the
/// largest peaks written).
#[test]
fn threads_sample_queues_as_one_thread_does() {
    let families = mechanism_families();
    for (what, toml) in [&families[0], &families[3]] {
        for selection in [
            "queue_ports = \"all\"\nqueue_sample_interval = \"500ns\"",
            "queue_ports = \"top\"\nqueue_top = 7\nqueue_sample_interval = \"20ns\"",
        ] {
            let toml = toml.replace("queue_ports = \"none\"", selection);
            let reference = plain(&toml);
            let queues = &reference.queues;
            assert!(queues.rows() > 1000, "{what}: {} rows", queues.rows());
            assert!(queues.u64s("bytes").iter().any(|&b| b > 0), "{what}");
            assert_threads_match(&format!("{what}, {selection}"), &toml, &reference, &[2, 3]);
        }
    }
}

/// Packet and on/off generators run threaded: each source is one host's,
/// drawing from its own stream, so its partition runs it alone.
#[test]
fn threads_run_packet_and_on_off_generators() {
    let (_, dctcp) = &mechanism_families()[3];
    let toml = format!(
        "{dctcp}[[workload.packets]]\nsrc = 3\ndst = 77\nsize = 1000\nrate = \"20Gbps\"\n\
         process = \"poisson\"\n[[workload.packets]]\nsrc = 100\ndst = 9\nsize = 1500\n\
         rate = \"5Gbps\"\n[[workload.onoff]]\nhosts = [1, 17, 33, 49, 65, 81, 97, 113]\n\
         load = 0.3\nmean_burst = \"4us\"\n"
    );
    let reference = plain(&toml);
    // The generators' datagrams (about 5 MB offered) on top of the flows'.
    let sent = |r: &incast_core::Results| r.conservation.sent_bytes;
    assert!(sent(&reference) > sent(&plain(dctcp)) + 1_000_000);
    assert_threads_match("packet and on/off generators", &toml, &reference, &[2, 3]);
}

/// Flows that stop or never end run threaded: in node order a stopped
/// flow's size, and a running flow's bytes at the end, are what its sender
/// knows acknowledged (it cannot read its receiver), whatever the split.
#[test]
fn threads_run_stopped_long_lived_and_bulk_flows() {
    let families = mechanism_families();
    let mut flows = String::new();
    for (src, dst, size, stop) in [
        (0, 77, "", "40us"),
        (5, 100, "size = \"4MB\"\n", "60us"),
        (64, 3, "", "120us"),
        (9, 20, "", "90us"),
    ] {
        let stop = if stop.is_empty() {
            String::new()
        } else {
            format!("stop = \"{stop}\"\n")
        };
        flows += &format!(
            "[[workload.flows]]\nsrc = {src}\ndst = {dst}\n{size}{stop}start = \"10us\"\n"
        );
    }
    flows +=
        "[[workload.bulk]]\nsrc = 30\ndst = 90\nstop = \"125us\"\non = \"30us\"\noff = \"10us\"\n";
    for (what, toml) in [&families[3], &families[7]] {
        // The run stops at 130 us, with flows running.
        let toml = format!("{toml}{flows}").replace(
            "duration = \"150us\"",
            "duration = \"100us\"\nstop = \"130us\"",
        );
        let reference = plain(&toml);
        let finished = reference.flows.u8s("finished");
        let stopped = finished.iter().filter(|&&f| f == FINISHED_STOPPED).count();
        assert!(stopped >= 5, "{what}: {stopped} stopped flows");
        assert!(finished.contains(&0), "{what}: no flow runs at the end");
        assert_threads_match(what, &toml, &reference, &[2, 3]);
    }
}
