//! A host's NIC: one port, a FIFO of ready-made packets (ACKs, datagrams) and a
//! round-robin list of flows that have data they may send.
//!
//! The NIC *pulls*: when its port is free it sends the next ready-made packet,
//! or else asks the next flow in the round robin for a segment. A flow that
//! still may send afterwards goes to the back of the list. Flows therefore
//! share the host link fairly and no unbounded NIC queue builds up.

use super::PktId;
use std::collections::VecDeque;

#[derive(Debug, Default)]
pub struct HostNic {
    /// Global id of the host's port.
    pub port: u32,
    /// Packets built and waiting (ACKs first come first served, datagrams).
    pub ctrl: VecDeque<PktId>,
    /// Flow slots that may send now, in round-robin order.
    pub ready: VecDeque<u32>,
    /// RDMA: wake-up for the earliest pacing deadline.
    pub wake: crate::engine::LazyTimer,
}

impl HostNic {
    pub fn new(port: u32) -> HostNic {
        HostNic {
            port,
            ..Default::default()
        }
    }
    pub fn has_work(&self) -> bool {
        !self.ctrl.is_empty() || !self.ready.is_empty()
    }
}
