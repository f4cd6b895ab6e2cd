//! The discrete-event engine: a pending-event set ordered by `(time, seq)`.
//!
//! Events that fall at the same picosecond fire in the order they were
//! scheduled (`seq` is a global insertion counter), so a run depends only on
//! the scenario and the seed.
//!
//! The engine is deliberately small. Models keep the pending set small too:
//! a link keeps its packets in flight in its own FIFO and has one event (the
//! arrival of the head packet); an egress port has one event (the end of the
//! current transmission, and only when something waits behind it); timers are
//! cancelled lazily with [`LazyTimer`]. The pending set is then O(links +
//! timers), a few thousand entries, whatever the load.
//!
//! ```
//! use incast_core::engine::EventQueue;
//! let mut q = EventQueue::new();
//! q.push(20, 'b');
//! q.push(10, 'a');
//! q.push(20, 'c');               // same time as 'b': fires after it
//! assert_eq!(q.pop(), Some((10, 'a')));
//! assert_eq!(q.pop(), Some((20, 'b')));
//! assert_eq!(q.pop(), Some((20, 'c')));
//! assert_eq!(q.pop(), None);
//! ```

use crate::units::Ps;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    time: Ps,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq)) // min-heap
    }
}

/// A min-priority queue of events keyed by `(time, insertion sequence)`.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Ps,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            seq: 0,
            now: 0,
            popped: 0,
        }
    }
    /// Schedules `event` at absolute time `t` (never before the current time).
    #[inline]
    pub fn push(&mut self, t: Ps, event: E) {
        debug_assert!(
            t >= self.now,
            "event scheduled in the past: {t} < {}",
            self.now
        );
        self.heap.push(Entry {
            time: t,
            seq: self.seq,
            event,
        });
        self.seq += 1;
    }
    /// Removes and returns the earliest event, advancing the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Ps, E)> {
        let e = self.heap.pop()?;
        let t = e.time;
        self.now = t;
        self.popped += 1;
        Some((t, e.event))
    }
    /// Time of the earliest pending event.
    #[inline]
    pub fn peek_time(&self) -> Option<Ps> {
        self.heap.peek().map(|e| e.time)
    }
    /// The current simulated time: the time of the last event popped.
    #[inline]
    pub fn now(&self) -> Ps {
        self.now
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
    /// Events popped so far.
    pub fn events_processed(&self) -> u64 {
        self.popped
    }
}

/// What a lazily-cancelled timer says when one of its heap entries fires.
#[derive(Debug, PartialEq, Eq)]
pub enum TimerFire {
    /// The deadline has come: run the timeout.
    Expired,
    /// The deadline moved later: schedule a new entry at this time.
    Reschedule(Ps),
    /// This entry is stale (the timer was disarmed or re-armed earlier): ignore it.
    Stale,
}

/// A timer that is re-armed far more often than it fires (RTO, delayed ACK).
///
/// Re-arming to a *later* deadline touches no heap: the pending entry fires
/// early, sees the new deadline and asks to be rescheduled. Re-arming to an
/// *earlier* deadline asks for a new entry; the old one becomes stale.
///
/// ```
/// use incast_core::engine::{LazyTimer, TimerFire};
/// let mut t = LazyTimer::default();
/// assert_eq!(t.arm(100), Some(100));      // push an entry at 100
/// assert_eq!(t.arm(150), None);           // later: no push
/// assert_eq!(t.fire(100), TimerFire::Reschedule(150));
/// assert_eq!(t.fire(150), TimerFire::Expired);
/// assert_eq!(t.arm(300), Some(300));
/// t.disarm();
/// assert_eq!(t.fire(300), TimerFire::Stale);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct LazyTimer {
    deadline: Option<Ps>,
    scheduled: Option<Ps>,
}

impl LazyTimer {
    /// Sets the deadline. Returns `Some(t)` when the caller must push a heap entry at `t`.
    #[inline]
    pub fn arm(&mut self, deadline: Ps) -> Option<Ps> {
        self.deadline = Some(deadline);
        match self.scheduled {
            Some(s) if s <= deadline => None,
            _ => {
                self.scheduled = Some(deadline);
                Some(deadline)
            }
        }
    }
    /// Clears the deadline; any pending entry will be reported [`TimerFire::Stale`].
    #[inline]
    pub fn disarm(&mut self) {
        self.deadline = None;
    }
    pub fn deadline(&self) -> Option<Ps> {
        self.deadline
    }
    pub fn is_armed(&self) -> bool {
        self.deadline.is_some()
    }
    /// Called when a heap entry for this timer fires at `now`.
    #[inline]
    pub fn fire(&mut self, now: Ps) -> TimerFire {
        if self.scheduled != Some(now) {
            return TimerFire::Stale;
        }
        self.scheduled = None;
        match self.deadline {
            None => TimerFire::Stale,
            Some(d) if d > now => {
                self.scheduled = Some(d);
                TimerFire::Reschedule(d)
            }
            Some(_) => {
                self.deadline = None;
                TimerFire::Expired
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_fire_in_insertion_order() {
        let mut q = EventQueue::new();
        for i in 0..1000u32 {
            q.push(5 + (i as u64 % 3), i);
        }
        let mut last = (0, 0);
        let mut n = 0;
        while let Some((t, e)) = q.pop() {
            assert!((t, e) > last || n == 0, "{:?} after {:?}", (t, e), last);
            last = (t, e);
            n += 1;
        }
        assert_eq!(n, 1000);
    }

    #[test]
    fn lazy_timer_earlier_rearm_makes_old_entry_stale() {
        let mut t = LazyTimer::default();
        assert_eq!(t.arm(500), Some(500));
        assert_eq!(t.arm(200), Some(200)); // earlier: a new entry
        assert_eq!(t.fire(200), TimerFire::Expired);
        assert_eq!(t.fire(500), TimerFire::Stale);
        assert!(!t.is_armed());
    }
}
