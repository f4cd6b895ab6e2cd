//! The engine's events: small (8 bytes), copied, dispatched by one `match`
//! in [`super::Simulation`]'s run loop to the element that owns them.

/// An engine event. Each names the element state it concerns by a dense
/// index (a packet, a port, a flow slot, a NIC, a generator).
/// (`Default` only fills the engine's empty wheel slots: never dispatched.)
#[derive(Clone, Copy, Debug, Default)]
pub(crate) enum Ev {
    /// Packet `.0` reaches the far end of the link it was sent on ([`crate::net::link`]).
    Arrive(u32),
    /// Port `.0` finished a transmission and has more to send.
    TxDone(u32),
    /// A flow's retransmission timer (TCP or RDMA, by the flow slot's transport).
    Rto(u32),
    /// TCP: a receiver's delayed-ACK timer.
    DelAck(u32),
    /// A workload generator's next arrival: `.0` is its source (a
    /// generator, or one member of one: [`crate::host::generators`]).
    Gen(u32),
    /// The flow in slot `.0` reaches its stop time ([`crate::host::on_flow_stop`]).
    FlowStop(u32),
    /// Queue-length sampling tick.
    #[default]
    Sample,
    /// RDMA: a QP's congestion-control timer.
    CcTimer(u32),
    /// RDMA: a receiver's pending-CNP timer.
    CnpTimer(u32),
    /// NIC `.0` may send a paced packet.
    NicWake(u32),
    /// Edge pausing: TCP flow `.0`'s gate may reopen.
    Gate(u32),
    /// Pacing: TCP flow `.0` may send its next segment.
    Pace(u32),
    /// Adapter NIC `.0`'s receive buffer finished serving a frame.
    RxDone(u32),
    /// Host `.0`'s PCIe link handed it the packet in service.
    PcieDone(u32),
    /// The NIC model's timer `.0` (a code of its own) for `.1` (an index of
    /// its own: a reaction point, a hotspot), [`crate::nic::NicModel::on_timer`].
    NicTimer(u16, u32),
    /// A switch mechanism's timer on port `.1`: `.0` is
    /// [`Ev::timer_code`] of the mechanism's id and its timer kind
    /// ([`crate::mech::on_timer`]).
    Timer(u16, u32),
    /// NDP: host `.0`'s pull pacer may send its next PULL.
    NdpPull(u32),
    /// EQDS: host `.0`'s pull pacer may send its next PULL.
    EqdsPull(u32),
}

impl Ev {
    /// The event of mechanism `id`'s timer `kind` on port `port`.
    #[inline]
    pub fn timer(id: u8, kind: u8, port: u32) -> Ev {
        Ev::Timer(Ev::timer_code(id, kind), port)
    }
    /// The code of mechanism `id`'s timer `kind` in [`Ev::Timer`].
    #[inline]
    pub fn timer_code(id: u8, kind: u8) -> u16 {
        (id as u16) << 8 | kind as u16
    }
}

const _: () = assert!(std::mem::size_of::<Ev>() == 8);
