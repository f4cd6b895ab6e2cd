//! Network elements: packets, ports with their links, switches and host NICs.
//!
//! * [`Packet`]s live in a [`PacketArena`] and are passed around as small
//!   integer ids ([`PktId`]); nothing is allocated per packet.
//! * A [`Port`] is one end of a full-duplex link: it serializes one packet at
//!   a time at the link rate; each packet in flight is one arrival event.
//! * [`link`] moves a packet from a port to the far end of its link.
//! * A [`switch`] is output-queued with a shared buffer; its mechanisms
//!   (PFC, congestion isolation, INT) are in [`crate::mech`]. NICs are in
//!   [`crate::nic`].

pub mod link;
pub mod packet;
pub mod port;
pub mod switch;

/// Where these lived before they became switch mechanisms ([`crate::mech`]).
pub use crate::mech::{ci, pfc};

pub use packet::{Packet, PacketArena, PacketKind, PktId};
pub use port::Port;

/// Number of priority classes per egress port (IEEE 802.1p).
pub const NUM_CLASSES: usize = 8;
