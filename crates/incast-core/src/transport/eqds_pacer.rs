//! EQDS's pull pacer at a receiving host (Olteanu et al., NSDI 2022, §4.2:
//! the receiver's pull queue is served "at the rate of the receiver's
//! link"), with htsim's three lists (`EqdsPullPacer::doNextEvent`,
//! csg-htsim 841d9e7): one PULL every `spacing` to, in this order,
//!
//! 1. a sender owed retransmission credit (htsim `_rtx_senders`), round
//!    robin, kept while it is owed;
//! 2. a sender with demand, its pull target above the credit pulled
//!    (`_active_senders`), round robin, kept while it has demand; a sender
//!    whose demand is met moves to the idle list;
//! 3. when neither list has anyone, an idle sender (`_idle_senders`): a
//!    *slow pull*, credit beyond what it asked for, so that it can send at
//!    once when it has more; kept while its demand is nil and its slow
//!    credit below one window (htsim: "only send upto 1BDP worth of
//!    speculative credit", `quantize_floor(getMaxCwnd())`).
//!
//! The pacer idles when all three lists are empty and starts at once when a
//! sender joins one (htsim's `sourceIsPendingRel(*this, 0)`).

use crate::units::Ps;

/// Which of its pacer's lists a receiver joins after an arrival.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Join {
    pub active: bool,
    pub rtx: bool,
}
use std::collections::VecDeque;

/// Which of the pacer's lists a pull served, and which a sender rejoins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// Owed retransmission credit.
    Rtx,
    /// With demand.
    Active,
    /// Demand met: a slow pull of speculative credit.
    Slow,
}

/// A receiving host's pull pacer.
#[derive(Clone, Debug, Default)]
pub struct EqdsPacer {
    pub spacing: Ps,
    /// Flow keys owed retransmission credit, in turn.
    rtx: VecDeque<u64>,
    /// Flow keys with demand, in turn.
    active: VecDeque<u64>,
    /// Flow keys whose demand was met, in turn (slow pulls).
    idle: VecDeque<u64>,
    /// A pacer event is pending.
    pub scheduled: bool,
}

impl EqdsPacer {
    pub fn new(spacing: Ps) -> EqdsPacer {
        EqdsPacer {
            spacing,
            ..Default::default()
        }
    }

    /// Flow `key` joins the lists `join` names. Returns when the pacer's
    /// event is due, if it must be scheduled (an idle pacer starts at once).
    pub fn request(&mut self, now: Ps, key: u64, join: Join) -> Option<Ps> {
        if join.rtx {
            self.rtx.push_back(key);
        }
        if join.active {
            self.active.push_back(key);
        }
        if (join.rtx || join.active) && !self.scheduled {
            self.scheduled = true;
            return Some(now);
        }
        None
    }

    /// The pacer's event: the flow to pull now and the list it came from,
    /// or `None` when no one waits (the pacer goes idle).
    pub fn next_turn(&mut self) -> Option<(u64, Turn)> {
        if let Some(k) = self.rtx.pop_front() {
            return Some((k, Turn::Rtx));
        }
        if let Some(k) = self.active.pop_front() {
            return Some((k, Turn::Active));
        }
        if let Some(k) = self.idle.pop_front() {
            return Some((k, Turn::Slow));
        }
        self.scheduled = false;
        None
    }

    /// After its pull, flow `key` rejoins list `rejoin` at its end (the
    /// caller decides from the flow's receiver: see the module docs), or
    /// none; the next event is `spacing` later.
    pub fn after_pull(&mut self, now: Ps, key: u64, rejoin: Option<Turn>) -> Ps {
        match rejoin {
            Some(Turn::Rtx) => self.rtx.push_back(key),
            Some(Turn::Active) => self.active.push_back(key),
            Some(Turn::Slow) => self.idle.push_back(key),
            None => {}
        }
        now + self.spacing
    }

    /// Drops flow `key` from every list (it finished).
    pub fn forget(&mut self, key: u64) {
        self.rtx.retain(|&k| k != key);
        self.active.retain(|&k| k != key);
        self.idle.retain(|&k| k != key);
    }
}

/// The list a sender rejoins after a pull of `turn` (htsim's
/// `doNextEvent`): `rtx_backlog`, `backlog` and `slow_credit` are its
/// receiver's after the pull (quanta), `slow_cap` one window in quanta.
pub fn rejoin(
    turn: Turn,
    rtx_backlog: u64,
    backlog: u64,
    slow_credit: u64,
    slow_cap: u64,
) -> Option<Turn> {
    match turn {
        Turn::Rtx => (rtx_backlog > 0).then_some(Turn::Rtx),
        Turn::Active if backlog > 0 => Some(Turn::Active),
        // Demand met: to the idle list.
        Turn::Active => Some(Turn::Slow),
        Turn::Slow => (backlog == 0 && slow_credit < slow_cap).then_some(Turn::Slow),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACTIVE: Join = Join {
        active: true,
        rtx: false,
    };
    const RTX: Join = Join {
        active: false,
        rtx: true,
    };

    /// Retransmissions first, then round robin; it starts at once when
    /// idle and goes idle when no one is owed.
    #[test]
    fn pacer_serves_retransmissions_first() {
        let mut pc = EqdsPacer::new(100);
        assert_eq!(pc.request(5, 1, ACTIVE), Some(5));
        assert_eq!(pc.request(6, 2, ACTIVE), None);
        assert_eq!(pc.request(7, 3, RTX), None);
        assert_eq!(pc.next_turn(), Some((3, Turn::Rtx)));
        assert_eq!(pc.after_pull(7, 3, None), 107);
        assert_eq!(pc.next_turn(), Some((1, Turn::Active)));
        pc.after_pull(107, 1, Some(Turn::Active));
        assert_eq!(pc.next_turn(), Some((2, Turn::Active)));
        pc.after_pull(207, 2, None);
        assert_eq!(pc.next_turn(), Some((1, Turn::Active)));
        pc.after_pull(307, 1, None);
        assert_eq!(pc.next_turn(), None);
        assert!(!pc.scheduled);
        assert_eq!(pc.request(900, 2, ACTIVE), Some(900));
    }

    /// A sender whose demand is met gets slow pulls only while no one has
    /// demand, and at most a window of them.
    #[test]
    fn slow_pulls_fill_gaps_up_to_a_window() {
        let mut pc = EqdsPacer::new(100);
        pc.request(0, 1, ACTIVE);
        pc.request(0, 2, ACTIVE);
        // Sender 1's demand is met by this pull: it goes idle.
        assert_eq!(pc.next_turn(), Some((1, Turn::Active)));
        pc.after_pull(0, 1, rejoin(Turn::Active, 0, 0, 0, 3));
        // Sender 2 still has demand: served before any slow pull.
        assert_eq!(pc.next_turn(), Some((2, Turn::Active)));
        pc.after_pull(100, 2, rejoin(Turn::Active, 0, 5, 0, 3));
        assert_eq!(pc.next_turn(), Some((2, Turn::Active)));
        pc.after_pull(200, 2, rejoin(Turn::Active, 0, 0, 0, 3));
        // Both idle now: slow pulls in turn, each kept while under the cap.
        assert_eq!(pc.next_turn(), Some((1, Turn::Slow)));
        pc.after_pull(300, 1, rejoin(Turn::Slow, 0, 0, 1, 3));
        assert_eq!(pc.next_turn(), Some((2, Turn::Slow)));
        pc.after_pull(400, 2, rejoin(Turn::Slow, 0, 0, 3, 3));
        assert_eq!(pc.next_turn(), Some((1, Turn::Slow)));
        // New demand (backlog) ends slow pulls for that sender too.
        pc.after_pull(500, 1, rejoin(Turn::Slow, 0, 2, 0, 3));
        assert_eq!(pc.next_turn(), None);
        assert!(!pc.scheduled);
    }

    #[test]
    fn rejoin_follows_htsim() {
        assert_eq!(rejoin(Turn::Rtx, 1, 0, 0, 8), Some(Turn::Rtx));
        assert_eq!(rejoin(Turn::Rtx, 0, 9, 0, 8), None);
        assert_eq!(rejoin(Turn::Active, 0, 1, 0, 8), Some(Turn::Active));
        assert_eq!(rejoin(Turn::Active, 0, 0, 0, 8), Some(Turn::Slow));
        assert_eq!(rejoin(Turn::Slow, 0, 0, 7, 8), Some(Turn::Slow));
        assert_eq!(rejoin(Turn::Slow, 0, 0, 8, 8), None);
    }

    #[test]
    fn forget_leaves_no_trace() {
        let mut pc = EqdsPacer::new(10);
        pc.request(0, 4, RTX);
        pc.request(0, 4, ACTIVE);
        pc.after_pull(0, 4, Some(Turn::Slow));
        pc.forget(4);
        assert_eq!(pc.next_turn(), None);
    }
}
