//! Checks of `[transport]` (TCP) and `[rdma]` (RoCEv2 NICs): packet sizes,
//! classes, timers and the congestion controls' own parameter ranges.

use super::{check_class, Scenario, ScenarioError};
use crate::transport::TcpParams;

/// The largest packet on the wire: the IPv4 total-length limit. Jumbo frames
/// (9 KB) are far below it; anything above is a typo.
pub const MAX_PACKET_BYTES: u32 = 65_535;

fn err<T>(path: &str, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(path, message))
}

impl Scenario {
    /// `[transport]`: sizes first (they feed every other check), then timers.
    pub(super) fn validate_transport(&self) -> Result<(), ScenarioError> {
        let t = &self.config.transport;
        check_class(t.class, "transport.class")?;
        if let Some(a) = t.ack_class {
            check_class(a, "transport.ack_class")?;
        }
        if t.header >= t.mtu {
            return err(
                "transport.header",
                format!(
                    "header ({} B) must be smaller than mtu ({} B)",
                    t.header, t.mtu
                ),
            );
        }
        if t.mtu < 64 {
            return err("transport.mtu", format!("mtu {} is below 64 B", t.mtu));
        }
        if t.mtu > MAX_PACKET_BYTES {
            return err(
                "transport.mtu",
                format!(
                    "mtu {} B is above {MAX_PACKET_BYTES} B, the largest IP packet; \
                     jumbo frames are mtu = 9000",
                    t.mtu
                ),
            );
        }
        if t.ack_size < t.header.max(1) || t.ack_size > t.mtu {
            return err(
                "transport.ack_size",
                format!(
                    "an ACK of {} B cannot carry the {} B of headers (header) or is larger \
                     than mtu ({} B): write a size between header and mtu, e.g. ack_size = 64",
                    t.ack_size, t.header, t.mtu
                ),
            );
        }
        Ok(())
    }

    /// `[transport]` timers, windows and the congestion control's parameters.
    pub(super) fn validate_transport_timers(&self) -> Result<(), ScenarioError> {
        let t = &self.config.transport;
        if t.init_cwnd == 0 {
            return err("transport.init_cwnd", "must be at least 1 segment");
        }
        if t.dupack_threshold == 0 {
            return err("transport.dupack_threshold", "must be at least 1");
        }
        if t.rto_min.0 == 0 || t.rto_max.0 < t.rto_min.0 {
            return err("transport.rto_min", "need 0 < rto_min <= rto_max");
        }
        if t.rto_initial.is_some_and(|r| r.0 == 0) {
            return err(
                "transport.rto_initial",
                "must be positive (omit it to start at rto_min)",
            );
        }
        if let Some(d) = t.delayed_ack {
            if d.count == 0 || d.timeout.0 == 0 {
                return err(
                    "transport.delayed_ack",
                    "count and timeout must be positive",
                );
            }
        }
        // The algorithm's own parameter ranges (`Params::validate` of each `transport/cc` file).
        if let Err(e) = t.cc.validate() {
            return err(&format!("transport.cc.{}", e.field), e.message);
        }
        Ok(())
    }

    /// `[rdma]`: classes, packet sizes, timers and the rate control's parameters.
    pub(super) fn validate_rdma(&self) -> Result<(), ScenarioError> {
        let Some(r) = &self.config.rdma else {
            return Ok(());
        };
        check_class(r.data_class, "rdma.data_class")?;
        check_class(r.ctrl_class, "rdma.ctrl_class")?;
        if r.payload == 0 {
            return err("rdma.payload", "must be at least 1 byte");
        }
        let wire = r.payload as u64 + r.header as u64 + r.int_bytes as u64;
        if wire > MAX_PACKET_BYTES as u64 {
            return err(
                "rdma.payload",
                format!(
                    "payload + header + int_bytes = {} + {} + {} = {wire} B is above \
                     {MAX_PACKET_BYTES} B, the largest packet; the HPCC simulator uses \
                     payload = 1000",
                    r.payload, r.header, r.int_bytes
                ),
            );
        }
        for (key, size) in [("rdma.ack_size", r.ack_size), ("rdma.cnp_size", r.cnp_size)] {
            if size == 0 || size > MAX_PACKET_BYTES {
                return err(
                    key,
                    format!(
                        "{size} B is not a packet size: write 1..{MAX_PACKET_BYTES} B \
                         (60 in the HPCC simulator)"
                    ),
                );
            }
        }
        if r.ack_interval == 0 {
            return err(
                "rdma.ack_interval",
                "must be at least 1 (acknowledge every packet)",
            );
        }
        if r.chunk == 0 {
            return err("rdma.chunk", "must be positive");
        }
        if r.rto.0 == 0 {
            return err("rdma.rto", "must be positive");
        }
        if r.cnp_interval.0 == 0 && r.cnp_mode == crate::rdma::CnpMode::Paced {
            return err(
                "rdma.cnp_interval",
                "must be positive (50us in the DCQCN paper)",
            );
        }
        if r.cc.name() == "dctcp" && r.cnp_mode != crate::rdma::CnpMode::AckFlag {
            return err(
                "rdma.cnp_mode",
                "rate-based DCTCP reads ECN echoes on ACKs: set cnp_mode = \"ack_flag\"",
            );
        }
        // The algorithm's own parameter ranges (`Params::validate` of each `rdma/cc` file).
        r.cc.validate()
            .map_err(|e| ScenarioError::new(format!("rdma.cc.{}", e.field), e.message))?;
        Ok(())
    }

    /// Transport parameters.
    pub fn tcp_params(&self) -> TcpParams {
        let t = &self.config.transport;
        TcpParams {
            mss: (t.mtu - t.header) as u64,
            header: t.header,
            ack_size: t.ack_size,
            init_cwnd: t.init_cwnd as u64,
            rto_min: t.rto_min.0,
            rto_initial: t.rto_initial.map_or(t.rto_min.0, |v| v.0),
            rto_max: t.rto_max.0,
            dupack_threshold: t.dupack_threshold,
            delayed_ack: t.delayed_ack.map(|d| (d.count, d.timeout.0)),
            recovery: t.recovery,
        }
    }
}
