//! The world: the dense arrays every element reads and writes.
//!
//! Elements are free functions over `&mut World` in their own modules
//! ([`crate::net::link`], [`crate::net::switch`], [`crate::nic`],
//! [`crate::host`], [`crate::mech`]); the run loop in [`super`] only
//! dispatches. State that only the run loop needs (generators, the queue
//! sampler, run control) stays in [`super::Simulation`], outside the world,
//! so that its handlers borrow the world and their own state side by side.

use super::ev::Ev;
use crate::edge::EdgeRuntime;
use crate::engine::EventQueue;
use crate::host::Flows;
use crate::mech::Mechs;
use crate::metrics::conservation::Conservation;
use crate::net::port::Owner;
use crate::net::switch::{Switch, SwitchParams};
use crate::net::{PacketArena, Port};
use crate::nic::{Nic, NicModelKind};
use crate::rdma::cc::CcCtx;
use crate::rdma::RdmaConfig;
use crate::topology::Routes;
use crate::transport::cc::CcConfig;
use crate::transport::TcpParams;

/// Everything the elements share.
pub(crate) struct World {
    /// The pending events.
    pub q: EventQueue<Ev>,
    pub arena: PacketArena,
    /// The SACK blocks of the ACKs in the network, by packet id (empty
    /// without `recovery = "sack"`, [`crate::transport::sack`]).
    pub sack: crate::transport::sack::SackTable,
    /// Every port of the network: NIC ports first, then each switch's, contiguously.
    pub ports: Vec<Port>,
    pub switches: Vec<Switch>,
    /// Buffer, admission, ECN and scheduling of every switch.
    pub sw: SwitchParams,
    pub routes: Routes,
    /// One per NIC port (a NIC may serve several hosts).
    pub nics: Vec<Nic>,
    /// The NIC each host sends and receives through.
    pub host_nic: Vec<u32>,
    /// Which flow a NIC sends next ([`crate::nic::NicModel`]).
    pub nic_model: NicModelKind,
    /// The flow table and per-flow records.
    pub flows: Flows,
    /// The TCP transport's parameters.
    pub tcp: TcpParams,
    /// The run's TCP congestion controls (`Scenario::ccs`; a flow's `cc`
    /// indexes it).
    pub ccs: Vec<CcConfig>,
    pub ack_class: Option<u8>,
    /// RDMA transport (when the scenario has `[rdma]`).
    pub rdma: Option<Rdma>,
    /// NDP's pull pacers, when a group runs NDP ([`crate::host::ndp`]).
    pub ndp: Option<Box<crate::host::ndp::NdpHosts>>,
    /// EQDS's pull pacers and flows, when a group runs EQDS
    /// ([`crate::host::eqds`]).
    pub eqds: Option<Box<crate::host::eqds::EqdsState>>,
    /// The switch mechanisms' state ([`crate::mech::Mechs`]).
    pub mechs: Mechs,
    /// Edge pausing: clocks, gated senders, OWD samples.
    pub edge: Option<Box<EdgeRuntime>>,
    /// The NIC models' state ([`crate::nic::NicStates`]: the adapter's,
    /// the transmit queues', ...).
    pub nic_state: crate::nic::NicStates,
    /// The NICs' receive path through PCIe ([`crate::nic::rx`]).
    pub rx: Option<Box<crate::nic::rx::RxPath>>,
    /// Each host's transmit PCIe cap ([`crate::nic::pcie`]).
    pub pcie: Option<Box<crate::nic::pcie::PcieTx>>,
    pub counters: Counters,
    pub seed: u64,
    /// In a partitioned run, where arrivals bound for another partition go
    /// ([`super::partitioned`]); `None` otherwise.
    pub outbox: Option<Box<crate::net::link::Outbox>>,
}

/// The RDMA transport's configuration and derived constants.
pub(crate) struct Rdma {
    pub cfg: RdmaConfig,
    /// Base RTT and BDP given to congestion control (max over host pairs).
    pub ctx: CcCtx,
    /// Data packet bytes beyond the payload (header, INT).
    pub overhead: u32,
}

/// Counters every element may bump.
#[derive(Default)]
pub(crate) struct Counters {
    /// Events other than packet arrivals and ends of transmission (timers,
    /// generators, samples), counted on their own path: the arrivals and
    /// the ends of transmission are derived from them at the end of the run
    /// ([`super::Simulation::finish`]), so a hop counts nothing.
    pub other_events: u64,
    pub cons: Conservation,
    /// Data packets that arrived ahead of their receiver's next expected
    /// byte (reordering or an earlier loss).
    pub out_of_order: u64,
}

impl World {
    /// The node number of a port's owner in result tables: hosts first (a
    /// NIC's port is its first host's), then switches.
    pub fn node_of(&self, owner: Owner) -> u32 {
        match owner {
            Owner::Nic(n) => self.nics[n as usize].node,
            Owner::Switch(s) => self.host_nic.len() as u32 + s,
        }
    }
}
