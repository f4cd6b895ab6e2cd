//! Congestion isolation's half at the NIC (IEEE 802.1Qcz) and its per-flow
//! state: a CIP that reaches a NIC moves its hosts' matching flows to the
//! congested-flow queue's priority ([`isolate`]); the NIC's isolation ages
//! out when the flow has sent nothing on that priority for `age`
//! ([`age`], [`sent`]: nic/sender.rs calls them, which every NIC model's
//! packets pass). A flow's isolations (at switch ports and its NIC) are
//! counted here, by flow-table slot, and make the flows table's
//! `ci_isolations` column.

use super::Ci;
use crate::host::{FlowSlot, Flows};
use crate::units::Ps;

/// Congestion isolation's state of the flow in one flow-table slot.
#[derive(Clone, Copy, Default)]
pub(crate) struct CiFlow {
    /// When the NIC last sent (or was paused on) the isolated priority.
    pub last: Ps,
    /// Isolations of this flow (at switch ports and its NIC).
    pub isolations: u32,
}

impl Ci {
    /// The flow in `slot` starts: no isolation yet (kept only with CI on).
    #[inline(always)]
    pub(super) fn flow_started(&mut self, slot: u32) {
        if self.is_on() {
            let slot = slot as usize;
            if slot >= self.flows.len() {
                self.flows.resize(slot + 1, CiFlow::default());
            }
            self.flows[slot] = CiFlow::default();
        }
    }

    /// The isolations of the flow in `slot` (0 without CI).
    pub(super) fn isolations(&self, slot: u32) -> u32 {
        self.flows.get(slot as usize).map_or(0, |f| f.isolations)
    }

    /// Counts an isolation of the flow in `slot`.
    pub(super) fn count_isolation(&mut self, slot: u32) {
        self.flows[slot as usize].isolations += 1;
    }

    /// [`Ci::count_isolation`] in node order: a partition that did not start
    /// the flow (a switch's) keeps its tally too.
    pub(super) fn count_isolation_apart(&mut self, slot: u32) {
        let slot = slot as usize;
        if slot >= self.flows.len() {
            self.flows.resize(slot + 1, CiFlow::default());
        }
        self.flows[slot].isolations += 1;
    }
}

/// Congestion isolation at the NIC (IEEE 802.1Qcz): a CIP for flow `key`
/// of class `base` reached NIC `nic`; its hosts' matching flows send on the
/// CFQ's priority `cfq` from now on. Returns how many it isolated.
pub(super) fn isolate(
    ci: &mut Ci,
    flows: &mut Flows,
    host_nic: &[u32],
    (nic, key, base, cfq): (u32, u64, u8, u8),
    now: Ps,
) -> u64 {
    let mut count = 0;
    for (slot, f) in flows.slots.iter_mut().enumerate() {
        if f.active && host_nic[f.src as usize] == nic && f.hash == key && f.class == base {
            let state = &mut ci.flows[slot];
            if f.prio != cfq {
                f.prio = cfq;
                state.isolations += 1;
                count += 1;
            }
            state.last = now;
        }
    }
    count
}

/// The NIC's isolation of flow `f` (in `slot`, isolated: its `prio` is not
/// its `class`) ends when the flow has sent nothing on the isolated
/// priority (and was not paused on it) for `age` (IEEE 802.1Qcz: the end
/// station's isolation times out). Called when the NIC asks the flow for a
/// packet, on a port with priorities `paused` PAUSEd.
pub(crate) fn age(ci: &mut Ci, f: &mut FlowSlot, slot: u32, now: Ps, paused: u8) {
    let state = &mut ci.flows[slot as usize];
    if paused & (1 << f.prio) != 0 {
        state.last = now;
    } else if now >= state.last + ci.cfg.age.0 {
        f.prio = f.class;
        ci.nic_deisolations += 1;
    }
}

/// The isolated flow in `slot` sent a data packet on its isolated priority now.
#[inline(always)]
pub(crate) fn sent(ci: &mut Ci, slot: u32, now: Ps) {
    ci.flows[slot as usize].last = now;
}
