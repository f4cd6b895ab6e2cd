//! RDMA over Converged Ethernet (RoCEv2) NICs: queue pairs, go-back-N and
//! rate-based congestion control.
//!
//! A scenario with an `[rdma]` table runs every flow as an RDMA queue pair
//! (QP) instead of a TCP connection:
//!
//! - the sender paces packets at the rate its congestion control sets
//!   ([`cc`]), optionally also bounded by a window of `maxBDP x rate / line`
//!   bytes in flight (HPCC simulator `HAS_WIN`/`VAR_WIN`);
//! - the receiver acknowledges every `ack_interval` packets, answers a gap with
//!   a NACK carrying the expected sequence (go-back-N, IB spec; HPCC simulator
//!   `rdma-hw.cc`), and generates CNPs for CE-marked packets;
//! - ACKs, NACKs and CNPs travel in `ctrl_class` (high priority by default);
//!   the NIC sends them before data, and, with `ctrl_ignores_pause`, even
//!   while PFC pauses their class.
//!
//! The QP state machines are in [`qp`]; the NIC that schedules them is
//! [`crate::nic`].

pub mod cc;
pub mod qp;

use crate::config_types::TimeValue;
use crate::units::US;
use cc::{deserialize_rate_cc, RateCcConfig};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a receiver reports congestion to the sender.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CnpMode {
    /// A separate CNP packet, at most one per QP per `cnp_interval`; a mark
    /// arriving inside the interval is remembered and answered when it ends
    /// (DCQCN paper §3; htsim).
    #[default]
    Paced,
    /// No CNP packets: the ACK of a CE-marked packet carries the congestion
    /// flag (HPCC simulator; with `ack_interval = 1` every packet is ACKed).
    AckFlag,
}

/// Which base RTT `T` a QP's congestion control uses.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BaseRtt {
    /// The largest base RTT over all host pairs (HPCC simulator `GLOBAL_T 1`).
    #[default]
    GlobalMax,
    /// The QP's own path (`GLOBAL_T 0`).
    PerPair,
}

/// Sender window on top of the rate (HPCC simulator `HAS_WIN`, `VAR_WIN`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WindowMode {
    /// Rate only.
    #[default]
    None,
    /// At most the max BDP in flight.
    Fixed,
    /// At most `maxBDP x rate / line rate` in flight.
    Variable,
}

/// RDMA NIC and QP parameters (`[rdma]` in a scenario file).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RdmaConfig {
    /// Congestion control: a name (`"dcqcn"`, `"hpcc"`, `"timely"`, `"dctcp"`, `"none"`)
    /// or a table `{ algorithm = "dcqcn", ... }`.
    #[serde(deserialize_with = "deserialize_rate_cc")]
    #[schemars(with = "serde_json::Value")]
    pub cc: RateCcConfig,
    /// Payload bytes per data packet (HPCC simulator `PACKET_PAYLOAD_SIZE`).
    pub payload: u32,
    /// Header bytes of a data packet (HPCC simulator: Ethernet 14 + IP 20 + UDP 8 + BTH-like 6 = 48).
    pub header: u32,
    /// Extra bytes per data packet when INT is on (HPCC simulator: 42 for 5 hops).
    pub int_bytes: u32,
    /// Size of an ACK or NACK on the wire.
    pub ack_size: u32,
    /// Size of a CNP on the wire.
    pub cnp_size: u32,
    /// ACK every this many data packets (HPCC simulator `L2_ACK_INTERVAL`).
    pub ack_interval: u32,
    /// Priority class of data packets.
    pub data_class: u8,
    /// Priority class of ACKs, NACKs and CNPs (HPCC simulator `ACK_HIGH_PRIO 1`: the
    /// highest). Set it to `data_class` for `ACK_HIGH_PRIO 0`.
    pub ctrl_class: u8,
    /// ACKs, NACKs and CNPs leave the NIC even while PFC pauses `ctrl_class`
    /// (they still go first, before data). The HPCC simulator's NICs do this
    /// with `ACK_HIGH_PRIO 1`: their ACK queue is never paused, while its
    /// switches carry ACKs in the data class, which PFC does pause. Default
    /// false: a NIC obeys a pause of every class it sends on.
    pub ctrl_ignores_pause: bool,
    pub cnp_mode: CnpMode,
    /// Minimum gap between two CNPs of one QP (`Paced` mode; DCQCN paper: 50 us).
    pub cnp_interval: TimeValue,
    /// Minimum gap between two NACKs for the same expected sequence (HPCC simulator: 500 us).
    pub nack_interval: TimeValue,
    /// Retransmission timeout: go back to the last acknowledged byte when nothing
    /// was acknowledged for this long. The HPCC simulator has none; RoCE NICs use
    /// 4.096 us x 2^timeout. Default 1 ms [choice]: far above any lossless-fabric RTT.
    pub rto: TimeValue,
    pub window: WindowMode,
    pub base_rtt: BaseRtt,
    /// Pace packets at the congestion-control rate (HPCC simulator `RATE_BOUND`).
    pub rate_bound: bool,
    /// On NACK, go back to the start of the chunk (`L2_BACK_TO_ZERO 1` in the HPCC
    /// simulator's sense) instead of to the NACKed sequence.
    pub back_to_chunk: bool,
    /// Chunk size for `back_to_chunk` (HPCC simulator `L2_CHUNK_SIZE`).
    pub chunk: u32,
    /// Pacing gaps as ns-3 computes them ([`crate::units::ns3_tx_time`]): set
    /// from `[timing] tx_times` when the simulation is built, not a key of `[rdma]`.
    #[serde(skip)]
    pub ns3_tx_times: bool,
}

impl Default for RdmaConfig {
    fn default() -> Self {
        RdmaConfig {
            cc: RateCcConfig::default(),
            payload: 1000,
            header: 48,
            int_bytes: 42,
            ack_size: 60,
            cnp_size: 60,
            ack_interval: 1,
            data_class: 3,
            ctrl_class: 7,
            ctrl_ignores_pause: false,
            cnp_mode: CnpMode::Paced,
            cnp_interval: TimeValue(50 * US),
            nack_interval: TimeValue(500 * US),
            rto: TimeValue(1000 * US),
            window: WindowMode::None,
            base_rtt: BaseRtt::GlobalMax,
            rate_bound: true,
            back_to_chunk: false,
            chunk: 4000,
            ns3_tx_times: false,
        }
    }
}

impl RdmaConfig {
    /// Whether the congestion control needs INT (then data packets carry `int_bytes` more).
    pub fn needs_int(&self) -> bool {
        use cc::RateCc;
        let ctx = cc::CcCtx {
            line_rate: 100e9,
            base_rtt: 10 * US,
            mtu: self.payload as u64,
            bdp: 125_000,
        };
        self.cc.build(&ctx).needs_int()
    }
    /// Wire size of a data packet carrying `payload` bytes.
    pub fn data_wire(&self, payload: u32) -> u32 {
        payload + self.header + if self.needs_int() { self.int_bytes } else { 0 }
    }
}
