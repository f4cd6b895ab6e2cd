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
        let differs = differences(reference, &got);
        assert_eq!(
            digest(&got),
            digest(reference),
            "{what}: {n} threads differ from one: {differs:?}"
        );
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
/// threaded with the one-thread bytes, but the adapter, whose state spans
/// NICs: it is refused, naming it.
#[test]
fn every_nic_model_runs_threaded_or_is_refused() {
    let (_, dctcp) = &mechanism_families()[3];
    let mut threaded = Vec::new();
    for model in incast_core::nic::NicModelKind::ALL {
        let name = model.name();
        let toml = format!("{dctcp}[nic]\nmodel = \"{name}\"\n");
        match run_threaded(&scenario(&toml), 2) {
            Ok(got) => {
                assert_eq!(digest(&got), digest(&plain(&toml)), "{name}");
                threaded.push(name);
            }
            Err(e) => {
                assert_eq!(name, "adapter", "{name} refused: {e}");
                assert!(e.contains("model = \"adapter\""), "{e}");
            }
        }
    }
    assert_eq!(threaded, ["round_robin", "queues", "example_fifo"]);
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
