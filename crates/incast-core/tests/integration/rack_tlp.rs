//! Issue 43 item 1: RACK-TLP (`[transport] recovery = "sack_rack"`, RFC
//! 8985) end to end: the lost retransmission and the tail loss that SACK
//! recovery (RFC 6675) repairs only by the RTO, determinism, bytes
//! conserved, the key's error.

use crate::common::*;
use crate::sack_recovery::{lossy_path, lossy_path_scenario, lossy_path_with, outcome};
use incast_core::units::*;
use incast_core::Results;

/// `sack_recovery.rs`'s lossy path (a 2 MB flow, 40 Gb/s into 10 Gb/s, a
/// 20-packet drop-tail queue, initial window 64): with SACK one
/// retransmission is lost again in the still-full queue and the RTO (10 ms)
/// repairs it. RACK's time rule marks it lost once a segment sent after it
/// is SACKed and RACK.rtt + min_RTT / 4 has passed, and it is sent again
/// without a timeout. Asserted: SACK has a timeout, RACK-TLP none and a
/// shorter FCT. Measured: SACK 10.1 ms, 135 retransmissions, 134 drops, 1
/// timeout; RACK-TLP 1.65 ms, 290, 288, no timeout.
#[test]
fn rack_repairs_the_lost_retransmission_without_an_rto() {
    let sack = outcome(&lossy_path("sack"));
    let rack = outcome(&lossy_path("sack_rack"));
    eprintln!(
        "sack:      fct {:.0} us, retransmits {}, timeouts {}",
        sack.0, sack.1, sack.2
    );
    eprintln!(
        "sack_rack: fct {:.0} us, retransmits {}, timeouts {}",
        rack.0, rack.1, rack.2
    );
    assert!(sack.2 >= 1, "the case needs SACK's timeout: {sack:?}");
    assert_eq!(rack.2, 0, "{rack:?}");
    assert!(rack.0 < sack.0, "fct: {rack:?} vs {sack:?}");
}

/// One flow of `segments` 1460-byte segments, all in its initial window,
/// from a 40 Gb/s sender into a 10 Gb/s bottleneck with a 20-packet
/// drop-tail queue: the queue fills 3/4 of a packet per packet, so a burst
/// just past its capacity loses its last segments only (a tail loss).
fn tail_burst(recovery: &str, segments: u64) -> Results {
    tail_burst_with(&format!("recovery = \"{recovery}\""), segments)
}

/// [`tail_burst`] with `recovery_line` (a `recovery = ...` line, or nothing)
/// in its `[transport]` table.
fn tail_burst_with(recovery_line: &str, segments: u64) -> Results {
    let size = (segments * 1460).to_string();
    lossy_path_scenario("tail_loss", recovery_line, &size)
}

/// RFC 8985 §7: a burst whose last segments are dropped leaves nothing
/// behind them to be SACKed. SACK recovery waits for the RTO (10 ms);
/// TLP's probe (the last segment again, 2 SRTT + 2 ms after the last ACK,
/// Linux's PTO) is SACKed, RACK marks the rest of the tail lost, and
/// recovery repairs it within a round trip. Asserted for every burst size
/// from 29 to 34 segments that loses its tail with SACK (a timeout): no
/// timeout with RACK-TLP and an FCT under 5 ms, half the RTO floor
/// (measured, 29 segments: SACK 10.05 ms with 1 timeout, RACK-TLP 2.09 ms).
#[test]
fn tlp_repairs_a_tail_loss_without_an_rto() {
    let mut cases = 0;
    for segments in 29..=34 {
        let sack = outcome(&tail_burst("sack", segments));
        let rack = outcome(&tail_burst("sack_rack", segments));
        eprintln!("{segments} segments: sack {sack:?}, sack_rack {rack:?}");
        if sack.2 == 0 {
            continue;
        }
        cases += 1;
        assert_eq!(rack.2, 0, "{segments} segments: {rack:?}");
        assert!(
            rack.1 > 0 && rack.0 < 5000.0,
            "{segments} segments: {rack:?}"
        );
    }
    assert!(cases > 0, "no burst size lost its tail");
}

/// Issue 43: the default recovery is RACK-TLP over SACK, as Linux's
/// (`net.ipv4.tcp_sack = 1`, `tcp_recovery = 1`, `tcp_early_retrans = 3`).
/// A scenario without the key runs exactly as one with `recovery =
/// "sack_rack"` (the same FCT, retransmits and timeouts) on the lossy path
/// and on every tail burst of 29-34 segments, and each burst that loses its
/// tail with `"sack"` (an RTO) is repaired without one by default. Fails if
/// the default reverts to `"sack"` (the timeout comes back) or to
/// `"newreno"`.
#[test]
fn a_scenario_without_the_key_runs_sack_rack_and_repairs_a_tail_loss_without_an_rto() {
    use incast_core::scenario::config::TransportConfig;
    use incast_core::transport::Recovery;
    assert_eq!(TransportConfig::default().recovery, Recovery::SackRack);
    assert_eq!(Recovery::default(), Recovery::SackRack);
    let default = lossy_path_with("");
    let rack = lossy_path("sack_rack");
    assert_eq!(default.flows.u64s("fct_ps"), rack.flows.u64s("fct_ps"));
    assert_eq!(outcome(&default), outcome(&rack));
    assert_ne!(outcome(&default), outcome(&lossy_path("newreno")));
    let mut tails = 0;
    for segments in 29..=34 {
        let default = outcome(&tail_burst_with("", segments));
        assert_eq!(default, outcome(&tail_burst("sack_rack", segments)));
        let sack = outcome(&tail_burst("sack", segments));
        if sack.2 > 0 {
            tails += 1;
            assert_eq!(default.2, 0, "{segments} segments: {default:?}");
            assert!(default.0 < sack.0, "{default:?} vs {sack:?}");
        }
    }
    assert!(tails > 0, "no burst size lost its tail with SACK");
}

/// The same run twice gives identical tables, and bytes are conserved.
#[test]
fn sack_rack_runs_are_deterministic_and_conserve_bytes() {
    let a = lossy_path("sack_rack");
    let b = lossy_path("sack_rack");
    assert_finished_and_conserved(&a, "sack_rack");
    assert_eq!(a.flows.u64s("fct_ps"), b.flows.u64s("fct_ps"));
    assert_eq!(a.flows.u32s("retransmits"), b.flows.u32s("retransmits"));
    let t = tail_burst("sack_rack", 32);
    assert_finished_and_conserved(&t, "sack_rack tail");
    let _ = MS;
}

#[test]
fn a_bad_recovery_lists_sack_rack() {
    let toml = "name = \"t\"\n[topology]\nkind = \"single_switch\"\nhosts = 2\n\
                link_rate = \"10Gbps\"\n[transport]\nrecovery = \"rack\"\n";
    let text = scenario_err(toml).to_string();
    assert!(text.contains("transport.recovery"), "{text}");
    assert!(text.contains("sack_rack"), "{text}");
}
