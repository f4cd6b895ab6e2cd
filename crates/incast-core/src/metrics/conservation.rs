//! The byte account behind the conservation invariant ([`Conservation`]):
//! kept by the elements as they run (`World::counters`), below the world,
//! so that the world's definition does not import the run.

use serde::Serialize;

/// Byte accounting for the conservation invariant: every byte sent is
/// received, dropped, cut off by trimming or still in the network.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Conservation {
    pub sent_bytes: u64,
    pub delivered_bytes: u64,
    pub dropped_bytes: u64,
    /// Payload bytes cut off by packet trimming ([`crate::mech::trim`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub trimmed_bytes: u64,
    /// Found by walking every queue, wire and NIC at the end of the run.
    pub in_network_bytes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
