//! Network elements: packets, ports with their links, switches and host NICs.
//!
//! * [`Packet`]s live in a [`PacketArena`] and are passed around as small
//!   integer ids ([`PktId`]); nothing is allocated per packet.
//! * A [`Port`] is one end of a full-duplex link: it serializes one packet at
//!   a time at the link rate and keeps the packets in flight on its outgoing
//!   wire in a FIFO, so the engine needs one event per port for the wire (the
//!   arrival of the head packet at the far end) and one for the transmitter.
//! * A [`switch::Switch`] is output-queued with a shared buffer; a
//!   [`host::HostNic`] pulls packets from the host's flows when its port is free.

pub mod ci;
pub mod host;
pub mod packet;
pub mod pfc;
pub mod port;
pub mod switch;

pub use packet::{Packet, PacketArena, PacketKind, PktId};
pub use port::Port;

/// Number of priority classes per egress port (IEEE 802.1p).
pub const NUM_CLASSES: usize = 8;
