//! Congestion management in the network (issue 19): ECM, E2CM and QCN
//! congestion points in the switch, reaction points in the adapter NICs, the
//! input-partitioned switch memory and the hotspot's receive buffer, run by
//! the engine. The state machines' own tests (scripted inputs, closed loops)
//! are beside them in `src/cm`.

use crate::common::{run, scenario, scenario_err};
use incast_core::Results;

/// `hosts` hosts at 10 Gb/s on one switch (1 us links) with the talk's
/// switch memory and adapter; `cm` and `extra` complete it.
fn network(hosts: u32, ms: u32, pause: bool, cm: &str, extra: &str) -> String {
    let topology = format!(
        "kind = \"single_switch\"\nhosts = {hosts}\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n"
    );
    network_on(&topology, ms, pause, cm, extra)
}

/// The same on the `[topology]` given.
fn network_on(topology: &str, ms: u32, pause: bool, cm: &str, extra: &str) -> String {
    format!(
        "name = \"cm\"\nseed = 5\nduration = \"{ms}ms\"\nstop = \"{ms}ms\"\ncm = \"{cm}\"\n\
         [topology]\n{topology}[switch]\necn = {{ kind = \"off\" }}\n\
         [switch.input_buffer]\npause = {pause}\n[nic]\nmodel = \"adapter\"\n\
         [metrics]\nqueue_ports = \"switch\"\nqueue_sample_interval = \"50us\"\n{extra}"
    )
}

/// Greedy sources (load 1, bursts of 100 frames) on hosts 1..=n, all to host 0.
fn greedy(n: u32) -> String {
    let hosts: Vec<String> = (1..=n).map(|h| h.to_string()).collect();
    format!(
        "[[workload.onoff]]\nhosts = [{}]\nload = 1.0\nmean_burst = \"120us\"\n\
         destinations = [{{ host = 0, weight = 1.0 }}]\n",
        hosts.join(", ")
    )
}

/// The talk's traffic: every host at 85 % with 12 us bursts, uniform
/// destinations; host 0 served at 10 % from 2 ms on.
fn hotspot_traffic() -> &'static str {
    "[[workload.onoff]]\nload = 0.85\nmean_burst = \"12us\"\n\
     [[workload.hotspot]]\nhost = 0\nservice_rate = 0.1\nstart = \"2ms\"\n"
}

/// The switch port toward host `h` (single switch: node = hosts, the port whose peer is h).
fn port_to(r: &Results, hosts: u32, h: u32) -> (u32, u32) {
    let (node, port, peer) = (
        r.ports.u32s("node"),
        r.ports.u32s("port"),
        r.ports.u32s("peer"),
    );
    let i = (0..node.len())
        .find(|&i| node[i] == hosts && peer[i] == h)
        .expect("a switch port toward the host");
    (node[i], port[i])
}

/// Mean queued bytes and throughput (Gb/s) of switch port (`node`, `port`)
/// over the queue series' points from `from_ps` on.
fn port_series(r: &Results, node: u32, port: u32, from_ps: u64) -> (f64, f64) {
    let q = &r.queues;
    let (t, n, p, b, tx) = (
        q.u64s("time_ps"),
        q.u32s("node"),
        q.u32s("port"),
        q.u64s("bytes"),
        q.u64s("tx_bytes"),
    );
    let rows: Vec<usize> = (0..t.len())
        .filter(|&i| n[i] == node && p[i] == port && t[i] >= from_ps)
        .collect();
    let mean = rows.iter().map(|&i| b[i] as f64).sum::<f64>() / rows.len() as f64;
    let (first, last) = (rows[0], *rows.last().unwrap());
    let gbps = (tx[last] - tx[first]) as f64 * 8.0 / ((t[last] - t[first]) as f64 / 1e3);
    (mean, gbps)
}

fn cm_summary(r: &Results) -> serde_json::Value {
    let s: serde_json::Value = serde_json::from_str(&r.summary_json).unwrap();
    s["cm"].clone()
}

fn assert_conserved(r: &Results, what: &str) {
    let c = r.conservation;
    assert_eq!(
        c.sent_bytes,
        c.delivered_bytes + c.dropped_bytes + c.in_network_bytes,
        "{what}: bytes not conserved"
    );
}

/// With PAUSE at the switch inputs and at the hot host, nothing is dropped
/// anywhere, whatever the scheme, and every byte is accounted for; the hot
/// host's receive buffer never overflows (its headroom covers the PAUSE's
/// round trip).
#[test]
fn with_pause_nothing_is_dropped() {
    for cm in ["none", "ecm", "e2cm", "e2cm_cp", "qcn"] {
        let r = run(&network(16, 10, true, cm, hotspot_traffic()));
        let s = cm_summary(&r);
        assert_eq!(r.conservation.dropped_bytes, 0, "{cm}: {s}");
        assert_eq!(s["input_buffers"]["dropped_frames"], 0, "{cm}");
        assert_eq!(s["receive_overflow_frames"], 0, "{cm}");
        assert!(
            s["receive_buffers"][0]["pauses"].as_u64().unwrap() > 0,
            "{cm}: no PAUSE"
        );
        assert_conserved(&r, cm);
        if cm != "none" {
            let sent = s["feedback_sent"].as_u64().unwrap();
            assert!(sent > 100, "{cm}: {sent} feedback frames");
            // Lost: none; in flight when the run stops: a few at most.
            let received = s["feedback_received"].as_u64().unwrap();
            assert!(
                received <= sent && sent - received <= 16,
                "{cm}: {received} of {sent}"
            );
        }
        if cm.starts_with("e2cm") {
            assert!(s["probes_sent"].as_u64().unwrap() > 0, "{cm}: no probes");
            let (probes, echoes) = (
                s["probes_sent"].as_u64().unwrap(),
                s["echoes_received"].as_u64().unwrap(),
            );
            assert!(
                echoes <= probes && probes - echoes <= 16,
                "{cm}: {echoes} of {probes}"
            );
        }
    }
}

/// Without PAUSE, a full input partition drops; bytes are still conserved.
#[test]
fn without_pause_full_partitions_drop() {
    let r = run(&network(16, 10, false, "none", hotspot_traffic()));
    let s = cm_summary(&r);
    let drops = s["input_buffers"]["dropped_frames"].as_u64().unwrap();
    assert!(drops > 1000, "{drops} drops");
    assert_eq!(
        r.conservation.dropped_bytes,
        s["input_buffers"]["dropped_bytes"].as_u64().unwrap()
    );
    assert_conserved(&r, "no pause");
}

/// One bottleneck (the port to host 0), n greedy sources (PAUSE at the
/// inputs only catches the first milliseconds, before the limiters act).
/// ECM holds the hot queue near Qeq = 75 KB and QCN near Qeq = 26 KB, with
/// the link busy and (QCN) no cut above 50 %. Measured from 40 ms on, in
/// 100 ms runs: every limiter starts at line rate, so 50 sources first fill
/// the switch (up to 260 KB per input before PAUSE: 13 MB) and bringing 50
/// flows from 10 to 0.2 Gb/s takes about 300 cuts at 2 % sampling; the
/// queue is back near Qeq after about 30 ms.
/// Tolerances: the closed-loop checks of `cm::closed_loop` found ECM's mean
/// within 20 % of Qeq with a 20 us feedback delay and QCN's within 25 %
/// (its queue is a sawtooth of cuts and averaging); in the network the
/// feedback delay is a few microseconds, and the frames are whole 1500 B
/// frames, so we allow 30 % (ECM) and 40 % (QCN, whose Qeq is only 17 frames).
/// n = 1 needs a bottleneck slower than the source: host 0's link runs at
/// 5 Gb/s (an explicit topology), host 1's at 10.
#[test]
fn one_bottleneck_settles_near_qeq() {
    for (cm, qeq, tol) in [("ecm", 75_000.0, 0.3), ("qcn", 26_000.0, 0.4)] {
        for n in [1u32, 10, 50] {
            let r = if n == 1 {
                let topology =
                    "kind = \"explicit\"\nhosts = [\"h0\", \"h1\"]\nswitches = [\"s0\"]\n\
                    links = [{ a = \"h0\", b = \"s0\", rate = \"5Gbps\", delay = \"1us\" },\
                    { a = \"h1\", b = \"s0\", rate = \"10Gbps\", delay = \"1us\" }]\n";
                run(&network_on(topology, 100, true, cm, &greedy(1)))
            } else {
                run(&network(n + 1, 100, true, cm, &greedy(n)))
            };
            let (node, port) = port_to(&r, n + 1, 0);
            let (mean, gbps) = port_series(&r, node, port, 40_000_000_000);
            let s = cm_summary(&r);
            eprintln!(
                "{cm} n = {n}: hot queue mean {:.1} KB (Qeq {:.0} KB), {gbps:.2} Gb/s, \
                 feedback {}, largest cut {}",
                mean / 1e3,
                qeq / 1e3,
                s["feedback_sent"],
                s["largest_cut"]
            );
            assert!(
                (mean / qeq - 1.0).abs() < tol,
                "{cm} n = {n}: mean queue {mean}"
            );
            let line = if n == 1 { 5.0 } else { 10.0 };
            assert!(gbps > 0.97 * line, "{cm} n = {n}: {gbps} Gb/s");
            assert_eq!(r.conservation.dropped_bytes, 0, "{cm} n = {n}");
            if cm == "qcn" {
                assert!(s["largest_cut"].as_f64().unwrap() <= 0.5, "{cm} n = {n}");
            }
        }
    }
}

/// E2CM-CP with probes in band (`probe_class = "data"`): each echo carries
/// the delay its probe met behind the data frames, so the per-flow loop and
/// the switch loop both act; the closed loop (`cm::closed_loop`, echoes
/// waiting Q / C) holds the queue between the two set points, Qeq = 75 KB
/// and n x Qeq,flow = 150 KB for n = 10 (measured there: 77.6 KB). The
/// network loop must land in the same band (20 % below its low end: the
/// switch loop alone holds 74-82 KB here) with the link busy. Probes on the
/// feedback class overtake the queue and report no delay: the per-flow loop
/// then only raises rates, and the queue is the switch loop's alone.
#[test]
fn e2cm_cp_in_band_probes_hold_the_queue_between_the_set_points() {
    let n = 10u32;
    let scenario = network(n + 1, 100, true, "e2cm_cp", &greedy(n)).replace(
        "cm = \"e2cm_cp\"",
        "cm = { scheme = \"e2cm_cp\", probe_class = \"data\" }",
    );
    let r = run(&scenario);
    let (node, port) = port_to(&r, n + 1, 0);
    let (mean, gbps) = port_series(&r, node, port, 40_000_000_000);
    let s = cm_summary(&r);
    eprintln!(
        "e2cm_cp in band, n = {n}: queue mean {:.1} KB, {gbps:.2} Gb/s, probes {}, echoes {}",
        mean / 1e3,
        s["probes_sent"],
        s["echoes_received"]
    );
    assert!(
        (0.8 * 75_000.0..=1.2 * 150_000.0).contains(&mean),
        "mean queue {mean}"
    );
    assert!(gbps > 0.97 * 10.0, "{gbps} Gb/s");
    assert_eq!(r.conservation.dropped_bytes, 0);
    assert_conserved(&r, "e2cm_cp in band");
    let (probes, echoes) = (
        s["probes_sent"].as_u64().unwrap(),
        s["echoes_received"].as_u64().unwrap(),
    );
    // In flight at the end: at most the probes queued behind 300 KB of frames.
    assert!(
        echoes <= probes && probes - echoes <= 64,
        "{echoes} of {probes}"
    );
}

/// The talk's output-generated hotspot with PAUSE: without congestion
/// management, the hot host's PAUSE backs up into the switch inputs and
/// PAUSEs every source, so the cold hosts' throughput collapses (congestion
/// spreading); ECM throttles the hot flows at their sources and the cold
/// traffic flows again. The sizes are printed; the check is the direction.
#[test]
fn hotspot_spreads_without_cm_and_ecm_recovers() {
    let cold = |cm: &str| {
        let r = run(&network(16, 20, true, cm, hotspot_traffic()));
        let mut total = 0.0;
        for h in 1..16 {
            let (node, port) = port_to(&r, 16, h);
            total += port_series(&r, node, port, 5_000_000_000).1;
        }
        total
    };
    let (none, ecm) = (cold("none"), cold("ecm"));
    // Offered to the cold hosts: 16 x 8.5 Gb/s x 15/16 of the traffic... minus
    // what host 0 sends to itself (nothing): 15 sources x 8.5 x 14/15 plus host
    // 0's 8.5 x 15/15 spread over them.
    let offered = 15.0 * 8.5 * 14.0 / 15.0 + 8.5;
    eprintln!(
        "cold hosts' throughput from 5 ms: none {none:.1} Gb/s, ECM {ecm:.1} Gb/s (offered {offered:.1})"
    );
    assert!(none < 0.8 * offered, "no spreading without CM: {none}");
    assert!(ecm > 1.2 * none, "ECM did not recover: {ecm} vs {none}");
}

/// Bad combinations are refused, naming the key.
#[test]
fn cm_errors_name_the_key() {
    let base =
        "name = \"x\"\nduration = \"1ms\"\n[topology]\nkind = \"single_switch\"\nhosts = 4\n\
                link_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[[workload.onoff]]\nload = 0.5\n";
    let e = scenario_err(&format!("cm = \"ecm\"\n{base}"));
    assert_eq!(e.path, "cm", "{e}");
    assert!(e.to_string().contains("adapter"), "{e}");
    let e = scenario_err(&format!(
        "{base}[[workload.hotspot]]\nhost = 0\nservice_rate = 0.1\n"
    ));
    assert_eq!(e.path, "workload.hotspot[0]", "{e}");
    let e = scenario_err(&format!(
        "{base}[nic]\nmodel = \"adapter\"\n[[workload.hotspot]]\nhost = 9\nservice_rate = 0.1\n"
    ));
    assert_eq!(e.path, "workload.hotspot[0].host", "{e}");
    let e = scenario_err(&format!(
        "{base}[nic]\nmodel = \"adapter\"\n[[workload.hotspot]]\nhost = 0\nservice_rate = 1.5\n"
    ));
    assert_eq!(e.path, "workload.hotspot[0].service_rate", "{e}");
    let e = scenario_err(&format!(
        "{base}[switch.pfc]\nclasses = [0]\n[switch.input_buffer]\n"
    ));
    assert_eq!(e.path, "switch.input_buffer", "{e}");
    let e = scenario_err(&format!(
        "{base}[nic]\nmodel = \"adapter\"\n[nic.adapter]\ningress_buffer = \"1KB\"\n"
    ));
    assert_eq!(e.path, "nic.adapter.ingress_buffer", "{e}");
    let e = scenario_err(&format!("[cm]\nscheme = \"ecm\"\nqeq = \"0KB\"\n{base}"));
    assert!(e.path.starts_with("cm."), "{e}");
    // The adapter numbers a flow per pair of hosts in 24 bits: 4096 hosts at most.
    let many = |hosts: u32| {
        base.replace("hosts = 4", &format!("hosts = {hosts}"))
            + "[nic]\nmodel = \"adapter\"\n[nic.adapter]\ningress_buffer = \"10GB\"\n"
    };
    let e = scenario_err(&many(4097));
    assert_eq!(e.path, "nic.model", "{e}");
    assert!(e.to_string().contains("4096 hosts"), "{e}");
    scenario(&many(4096));
}

/// A receive buffer smaller than its hotspot link's PAUSE headroom (RTT x
/// bandwidth: 250 KB on 10 Gb/s with 100 us links) is a scenario error that
/// names the key, found before the run is built (it was a panic there).
#[test]
fn receive_buffer_below_the_link_headroom_names_the_key() {
    let text =
        "name = \"x\"\nduration = \"1ms\"\n[topology]\nkind = \"single_switch\"\nhosts = 4\n\
                link_rate = \"10Gbps\"\nlink_delay = \"100us\"\n[[workload.onoff]]\nload = 0.5\n\
                [nic]\nmodel = \"adapter\"\n[[workload.hotspot]]\nhost = 0\nservice_rate = 0.1\n";
    let e = scenario_err(text);
    assert_eq!(e.path, "nic.adapter.receive_buffer", "{e}");
    assert!(e.message.contains("hotspot host 0"), "{e}");
    // With the headroom given, the same network is valid.
    let fixed = text.replace(
        "[nic]\nmodel = \"adapter\"\n",
        "[nic]\nmodel = \"adapter\"\n[nic.adapter]\npause_headroom = \"20KB\"\n",
    );
    let sc = incast_core::scenario::Scenario::from_toml_str(&fixed, std::path::Path::new("."));
    assert!(sc.is_ok(), "{:?}", sc.err());
}
