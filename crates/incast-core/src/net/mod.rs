//! Network elements: packets, ports with their links, switches and host NICs.
//!
//! * [`Packet`]s live in a [`PacketArena`] and are passed around as small
//!   integer ids ([`PktId`]); nothing is allocated per packet.
//! * A [`Port`] is one end of a full-duplex link: it serializes one packet at
//!   a time at the link rate; each packet in flight is one arrival event.
//! * [`link`] moves a packet from a port to the far end of its link.
//! * A [`switch`] is output-queued with a shared buffer; its mechanisms
//!   (PFC, INT, ...) are in [`crate::mech`]. NICs are in
//!   [`crate::nic`].

pub mod link;
pub mod packet;
pub mod port;
pub mod switch;

pub use packet::{Packet, PacketArena, PacketKind, PktId};
pub use port::Port;

pub use crate::params::NUM_CLASSES;

/// Hints the CPU to start loading `items[i]` (an upcoming event will read
/// it). Never faults, whatever `i`.
#[inline(always)]
pub(crate) fn prefetch<T>(items: &[T], i: usize) {
    // No bounds check: the address is only computed (`wrapping_add` never
    // dereferences), and a prefetch is a hint that never faults.
    prefetch_addr(items.as_ptr().wrapping_add(i).cast::<u8>());
}

/// Hints the CPU to start loading the line holding `p`. Never faults,
/// whatever the address.
#[inline(always)]
pub(crate) fn prefetch_addr(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is only a hint; it never faults or reads
        // into Rust-visible state, whatever the address.
        #[allow(unused_unsafe)]
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>())
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
