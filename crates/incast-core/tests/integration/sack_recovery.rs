//! Issue 43 item 1: SACK loss recovery (`[transport] recovery = "sack"`,
//! RFC 2018 / RFC 6675 / RFC 6937) against NewReno on the same lossy path,
//! its scenario key's errors, and the ns-3 dumbbells with SACK.

use crate::common::*;
use crate::ns3_dumbbell::{
    assert_bottleneck_busy_from_40ms, interval_goodput_of, measure, print_window,
};
use incast_core::units::*;
use incast_core::Results;

/// One 2 MB flow from a 40 Gb/s sender into a 10 Gb/s bottleneck with a
/// 30 KB drop-tail queue (20 packets), initial window 64, RTO floor 10 ms:
/// the first window's burst arrives 4x faster than it drains, so about
/// three quarters of its second half is dropped (a window with dozens of
/// holes), and slow start's later windows lose more.
pub(crate) fn lossy_path(recovery: &str) -> Results {
    lossy_path_with(&format!("recovery = \"{recovery}\""))
}

/// [`lossy_path`] with `recovery_line` (a `recovery = ...` line, or nothing)
/// in its `[transport]` table.
pub(crate) fn lossy_path_with(recovery_line: &str) -> Results {
    lossy_path_scenario("sack_vs_newreno", recovery_line, "\"2MB\"")
}

/// The scenario of [`lossy_path`], named `name`, with `recovery_line` in its
/// `[transport]` table and a flow of `size` (a TOML size value).
pub(crate) fn lossy_path_scenario(name: &str, recovery_line: &str, size: &str) -> Results {
    run(&format!(
        r#"name = "{name}"
seed = 1
[topology]
kind = "explicit"
hosts = ["s", "r"]
switches = ["sw"]
links = [
  {{ a = "sw", b = "r", rate = "10Gbps", delay = "1us" }},
  {{ a = "s", b = "sw", rate = "40Gbps", delay = "1us" }},
]
[switch]
buffer = "64MB"
admission = {{ kind = "static", limit = "30KB" }}
ecn = {{ kind = "off" }}
[transport]
cc = "newreno"
init_cwnd = 64
rto_min = "10ms"
{recovery_line}
[[workload.flows]]
src = "s"
dst = "r"
size = {size}
"#
    ))
}

/// What the flow of [`lossy_path`] shows: (FCT in us, retransmits, timeouts).
pub(crate) fn outcome(r: &Results) -> (f64, u32, u32) {
    let fct = r.flows.u64s("fct_ps")[0] as f64 / US as f64;
    (
        fct,
        r.flows.u32s("retransmits")[0],
        r.flows.u32s("timeouts")[0],
    )
}

/// A window with many holes. NewReno repairs one hole per round trip and
/// (RFC 6582 §4's Impatient timer) ends such a recovery with an RTO of at
/// least 10 ms; SACK repairs the holes it is told of in the same round trip.
/// Measured: NewReno 2 timeouts, 246 retransmissions, FCT 21.9 ms; SACK 1
/// timeout, 135 retransmissions, FCT 10.1 ms. SACK's one timeout is a
/// retransmission lost again in the still-full queue: RFC 6675 cannot
/// detect that (RACK, RFC 8985, would), so the RTO repairs it.
///
/// Asserted: SACK has fewer timeouts, fewer retransmissions and a shorter
/// FCT than NewReno. Fails if the blocks are not used (the SACK sender
/// would behave as NewReno's, timeouts included).
#[test]
fn sack_repairs_a_window_of_many_losses_with_fewer_timeouts() {
    let newreno = outcome(&lossy_path("newreno"));
    let sack = outcome(&lossy_path("sack"));
    eprintln!(
        "newreno: fct {:.0} us, retransmits {}, timeouts {}",
        newreno.0, newreno.1, newreno.2
    );
    eprintln!(
        "sack:    fct {:.0} us, retransmits {}, timeouts {}",
        sack.0, sack.1, sack.2
    );
    assert!(sack.2 < newreno.2, "timeouts: {sack:?} vs {newreno:?}");
    assert!(
        sack.1 > 0 && sack.1 < newreno.1,
        "retransmits: {sack:?} vs {newreno:?}"
    );
    assert!(sack.0 < newreno.0, "fct: {sack:?} vs {newreno:?}");
}

/// The same run twice gives identical tables (determinism with SACK's
/// side table of blocks), and bytes are conserved.
#[test]
fn sack_runs_are_deterministic_and_conserve_bytes() {
    let a = lossy_path("sack");
    let b = lossy_path("sack");
    assert_finished_and_conserved(&a, "sack");
    assert_eq!(a.flows.u64s("fct_ps"), b.flows.u64s("fct_ps"));
    assert_eq!(a.flows.u32s("retransmits"), b.flows.u32s("retransmits"));
}

#[test]
fn a_bad_recovery_is_a_clear_error() {
    let toml = "name = \"t\"\n[topology]\nkind = \"single_switch\"\nhosts = 2\n\
                link_rate = \"10Gbps\"\n[transport]\nrecovery = \"reno\"\n";
    let e = scenario_err(toml);
    let text = e.to_string();
    assert!(text.contains("transport.recovery"), "{text}");
    assert!(text.contains("newreno") && text.contains("sack"), "{text}");
}

/// The ns-3 dumbbells (issue 43) with `recovery = "sack"`, printed like
/// `ns3_dumbbell_report` (the README's SACK rows).
#[test]
#[ignore = "a report: cargo test --release -p incast-core sack_dumbbell -- --ignored --nocapture"]
fn sack_dumbbell_report() {
    for v in [
        "cubic_10g",
        "cubic_40g",
        "cubic_40g_nic_queues",
        "bbr_10g",
        "bbr_40g",
    ] {
        for recovery in ["newreno", "sack"] {
            let w = measure(v, &format!("recovery = \"{recovery}\""));
            print_window(&format!("{v} recovery = {recovery}"), &w);
        }
    }
}

/// With SACK the dumbbells keep the bottleneck busy. BBR neither drops nor
/// retransmits, so SACK never acts: its runs are the NewReno ones
/// (identical digests). CUBIC (10 and 40 Gb/s senders, with and without
/// NIC queues): every 20 ms interval from 40 ms above 90 % of the payload
/// capacity (10 Gb/s x 1460/1500; the bound's reasoning:
/// `ns3_dumbbell.rs`, `cubic_through_nic_queues_keeps_goodput_at_the_bottleneck_rate`)
/// and no timeout in 100-200 ms. Measured: 9.73 Gb/s in every interval
/// from 40 ms, no timeout. Before the RTO's FlightSize left out SACKed
/// bytes (`TcpFlow::sacked_in_flight`), a retransmission lost again
/// stalled a recovery while PRR kept sending, the RTO's ssthresh counted
/// the megabytes the receiver held, and the slow start after it flooded
/// the queue: 1262 drops and 11 timeouts in 100-200 ms with 10 Gb/s
/// senders, an interval at 5.3 Gb/s with 40 Gb/s ones.
#[test]
fn sack_dumbbells_keep_the_bottleneck_busy() {
    for v in ["bbr_10g", "bbr_40g"] {
        let w = measure(v, "recovery = \"sack\"");
        print_window(&format!("{v} recovery = sack"), &w);
        assert_eq!(w.drops, 0, "{v}");
        assert_eq!(w.retransmits, vec![0; 4], "{v}");
        assert!(w.jain() >= 0.95, "{v}: Jain {}", w.jain());
    }
    for v in ["cubic_40g_nic_queues", "cubic_40g", "cubic_10g"] {
        let w = measure(v, "recovery = \"sack\"");
        print_window(&format!("{v} recovery = sack"), &w);
        assert_eq!(w.timeouts, vec![0; 4], "{v}");
        let g = interval_goodput_of(v, "recovery = \"sack\"", 20 * MS, 200 * MS);
        eprintln!("{v} recovery = sack: goodput per 20 ms {g:.2?} Gb/s");
        assert_bottleneck_busy_from_40ms(v, &g);
    }
}
