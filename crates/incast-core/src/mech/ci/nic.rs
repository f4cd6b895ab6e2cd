//! Congestion isolation's half at the NIC (IEEE 802.1Qcz): a CIP that
//! reaches a NIC moves its hosts' matching flows to the congested-flow
//! queue's priority. The way back (the NIC's isolation ageing) is
//! `ci_age` in nic/sender.rs, which every NIC model's packets pass.

use crate::host::Flows;
use crate::units::Ps;

/// Congestion isolation at the NIC (IEEE 802.1Qcz): a CIP for flow `key`
/// of class `base` reached NIC `nic`; its hosts' matching flows send on the
/// CFQ's priority `cfq` from now on. Returns how many it isolated.
pub(super) fn isolate(
    flows: &mut Flows,
    host_nic: &[u32],
    nic: u32,
    key: u64,
    base: u8,
    cfq: u8,
    now: Ps,
) -> u64 {
    let mut count = 0;
    for f in flows.slots.iter_mut() {
        if f.active && host_nic[f.src as usize] == nic && f.hash == key && f.class == base {
            if f.prio != cfq {
                f.prio = cfq;
                f.ci_isolations += 1;
                count += 1;
            }
            f.ci_last = now;
        }
    }
    count
}
