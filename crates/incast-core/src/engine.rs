//! The discrete-event engine: a pending-event set ordered by time, then by
//! insertion order.
//!
//! Events that fall at the same picosecond fire in the order they were
//! scheduled, so a run depends only on the scenario and the seed.
//!
//! The engine is deliberately small. Models keep the pending set small too:
//! an egress port has one event (the end of the current transmission, and
//! only when something waits behind it); timers are cancelled lazily with
//! [`LazyTimer`]. A packet in flight on a link is one event (its arrival):
//! the timing wheel files it in O(1) and pops the events of one 1 ns slot
//! together, so the pending set can hold every packet in flight (tens of
//! thousands) at no cost per event, and an arrival reads the packet (which
//! the run loop prefetches) rather than a per-link FIFO.
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

/// A wheel entry. Entries of one slot are kept in the order they were
/// pushed, so no sequence number is needed to break ties (see `refill`).
#[derive(Clone, Copy)]
struct Entry<E> {
    time: Ps,
    event: E,
}

/// An overflow-heap entry: far-future events need `seq` to keep ties in
/// insertion order inside the heap.
struct Far<E> {
    time: Ps,
    seq: u64,
    event: E,
}

impl<E> Far<E> {
    #[inline(always)]
    fn key(&self) -> (Ps, u64) {
        (self.time, self.seq)
    }
}
impl<E> PartialEq for Far<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl<E> Eq for Far<E> {}
impl<E> PartialOrd for Far<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Far<E> {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest entry.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// log2 of a wheel slot's width in picoseconds: 1.024 ns.
const SLOT_BITS: u32 = 10;
/// Number of wheel slots (a power of two): the wheel spans 4096 x 1.024 ns
/// = 4.19 us ahead of the current slot, which covers a packet's
/// serialization plus a data-center link's propagation delay.
const SLOTS: usize = 4096;
const WORDS: usize = SLOTS / 64;

/// A min-priority queue of events keyed by `(time, insertion sequence)`.
///
/// It is a *timing wheel* (a calendar queue with fixed slots, Brown, CACM
/// 31(10), 1988; Varghese and Lauck, SOSP 1987) backed by a binary heap for
/// the far future. Simulated time never goes backwards, and almost every
/// event of a packet simulation is scheduled a transmission or a link delay
/// ahead, so:
///
/// - an event within the wheel's span goes into its 1.024 ns slot, which
///   is kept sorted by time, ties in insertion order (entries carry no
///   sequence number; see `refill`): an O(1) push that usually moves at
///   most one entry (a slot holds a few events);
/// - an event further ahead (RTO timers, flow arrivals) goes into the
///   overflow heap, which stays small;
/// - popping reads the current slot from the front; when it is empty the
///   next occupied slot is found in an occupancy bitmap and becomes the
///   current one, merged with any overflow entries that fall in it.
///
/// On the leaf-spine benchmark this needs about 1.1 filings per event where a
/// binary heap makes ~11 sift steps and a radix heap ~5.6 filings.
pub struct EventQueue<E> {
    /// The current slot's entries, sorted by ascending time, ties in
    /// insertion order; `cur[head..]` are pending, the next one first.
    cur: Vec<Entry<E>>,
    /// Index of the next pending entry of `cur`.
    head: usize,
    /// Absolute slot number (`time >> SLOT_BITS`) of `cur`.
    cur_abs: u64,
    /// `slots[a % SLOTS]` holds the entries of absolute slot `a`, for
    /// `cur_abs < a < cur_abs + SLOTS` (an array: indexing by a masked
    /// slot number needs no bounds check).
    slots: Box<[Vec<Entry<E>>; SLOTS]>,
    /// Bit `k` set iff `slots[k]` is non-empty.
    occupied: [u64; WORDS],
    /// Drained slot buffers, the most recently drained last. An empty slot
    /// holds no buffer; its first push takes the last of these, which the
    /// cache still holds. (Leaving each buffer in its slot meant a push
    /// wrote to a line last touched a whole turn of the wheel earlier:
    /// about one last-level write miss in four events at 256 hosts.)
    spare: Vec<Vec<Entry<E>>>,
    /// Entries at or beyond `cur_abs + SLOTS` when they were pushed.
    overflow: BinaryHeap<Far<E>>,
    seq: u64,
    now: Ps,
    popped: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// Events are small and `Copy` (the simulation's are 8 bytes): the current
/// slot is read in place, from the front.
impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            cur: Vec::with_capacity(64),
            head: 0,
            cur_abs: 0,
            slots: Box::new(std::array::from_fn(|_| Vec::new())),
            occupied: [0; WORDS],
            spare: Vec::new(),
            overflow: BinaryHeap::new(),
            seq: 0,
            now: 0,
            popped: 0,
        }
    }

    /// Schedules `event` at absolute time `t` (never before the current time).
    #[inline(always)]
    pub fn push(&mut self, t: Ps, event: E) {
        assert!(
            t >= self.now,
            "event scheduled in the past: {t} < {}",
            self.now
        );
        let abs = t >> SLOT_BITS;
        let ahead = abs.wrapping_sub(self.cur_abs);
        // One test for the common case, a slot of the wheel ahead of the
        // current one (1 <= ahead < SLOTS).
        if ahead.wrapping_sub(1) < SLOTS as u64 - 1 {
            let k = (abs as usize) & (SLOTS - 1);
            let (word, bit) = (k / 64, 1u64 << (k % 64));
            let entry = Entry { time: t, event };
            let slot = &mut self.slots[k];
            if self.occupied[word] & bit == 0 {
                // The slot's first entry: an empty slot holds no buffer.
                if slot.capacity() == 0 {
                    *slot = self.spare.pop().unwrap_or_default();
                }
                slot.push(entry);
                self.occupied[word] |= bit;
            } else {
                insert_sorted(slot, entry);
            }
        } else if ahead == 0 {
            // It was pushed last, so it fires after every pending entry at
            // or before `t`.
            let at = self.head + self.cur[self.head..].partition_point(|x| x.time <= t);
            self.cur.insert(at, Entry { time: t, event });
        } else {
            self.overflow.push(Far {
                time: t,
                seq: self.seq,
                event,
            });
            self.seq += 1;
        }
    }

    /// Absolute number of the first occupied wheel slot after `cur_abs`.
    #[inline]
    fn next_occupied(&self) -> Option<u64> {
        let start = ((self.cur_abs + 1) as usize) & (SLOTS - 1);
        let (w0, b0) = (start / 64, start % 64);
        let first = self.occupied[w0] & (!0u64 << b0);
        let found = if first != 0 {
            Some(w0 * 64 + first.trailing_zeros() as usize)
        } else {
            (1..=WORDS).find_map(|i| {
                let w = (w0 + i) % WORDS;
                let mut bits = self.occupied[w];
                if i == WORDS {
                    bits &= !(!0u64 << b0); // wrapped: only the bits before start
                }
                (bits != 0).then(|| w * 64 + bits.trailing_zeros() as usize)
            })
        }?;
        let ahead = (found + SLOTS - start) & (SLOTS - 1);
        Some(self.cur_abs + 1 + ahead as u64)
    }

    /// Makes `cur` hold the earliest pending slot. Returns false when empty.
    #[inline]
    fn refill(&mut self) -> bool {
        if self.head < self.cur.len() {
            return true;
        }
        self.cur.clear();
        self.head = 0;
        let wheel = self.next_occupied();
        let over = self.overflow.peek().map(|e| e.time >> SLOT_BITS);
        let abs = match (wheel, over) {
            (None, None) => return false,
            (Some(w), None) => w,
            (None, Some(o)) => o,
            (Some(w), Some(o)) => w.min(o),
        };
        self.cur_abs = abs;
        // Every overflow entry of this slot was pushed before every wheel
        // entry of it (time never goes back, so once a slot is within the
        // wheel's span it stays there): overflow entries, in (time, seq)
        // order, then the wheel's, in push order, is insertion order.
        let k = (abs as usize) & (SLOTS - 1);
        let from_wheel = wheel == Some(abs);
        if self
            .overflow
            .peek()
            .is_some_and(|e| e.time >> SLOT_BITS == abs)
        {
            while self
                .overflow
                .peek()
                .is_some_and(|e| e.time >> SLOT_BITS == abs)
            {
                let e = self.overflow.pop().expect("peeked");
                self.cur.push(Entry {
                    time: e.time,
                    event: e.event,
                });
            }
            if from_wheel {
                self.cur.append(&mut self.slots[k]);
                self.spare.push(std::mem::take(&mut self.slots[k]));
            }
            // Two sorted runs, the overflow's first: a stable sort merges them.
            sort_ascending(&mut self.cur);
        } else {
            // A wheel slot is kept sorted as it is filled. The drained
            // buffer is the warmest spare.
            let filled = std::mem::take(&mut self.slots[k]);
            self.spare.push(std::mem::replace(&mut self.cur, filled));
        }
        if from_wheel {
            self.occupied[k / 64] &= !(1 << (k % 64));
        }
        true
    }

    /// Removes and returns the earliest event, advancing the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Ps, E)> {
        // One test on the common path: the current slot has a next entry.
        let e = match self.cur.get(self.head) {
            Some(&e) => e,
            None => {
                if !self.refill() {
                    return None;
                }
                *self.cur.get(self.head)?
            }
        };
        self.head += 1;
        self.now = e.time;
        self.popped += 1;
        Some((e.time, e.event))
    }
    /// The `k`-th event after the next one, when it is already known to be in
    /// the current slot (for prefetching what it will touch).
    #[inline(always)]
    pub fn upcoming(&self, k: usize) -> Option<&E> {
        self.cur.get(self.head + k).map(|e| &e.event)
    }
    /// Time of the earliest pending event.
    #[inline]
    pub fn peek_time(&mut self) -> Option<Ps> {
        if self.refill() {
            self.cur.get(self.head).map(|e| e.time)
        } else {
            None
        }
    }
    /// The current simulated time: the time of the last event popped.
    #[inline]
    pub fn now(&self) -> Ps {
        self.now
    }
    /// Pending events (counted, not kept: the hot path keeps no count).
    pub fn len(&self) -> usize {
        let wheel: usize = self.slots.iter().map(Vec::len).sum();
        self.cur.len() - self.head + wheel + self.overflow.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Events popped so far.
    pub fn events_processed(&self) -> u64 {
        self.popped
    }

    /// Arms `timer` for `deadline`, pushing `event` only when the timer needs
    /// a new entry (see [`LazyTimer::arm`]).
    #[inline]
    pub fn arm(&mut self, timer: &mut LazyTimer, deadline: Ps, event: E) {
        if let Some(t) = timer.arm(deadline) {
            self.push(t, event);
        }
    }

    /// Handles a fired entry of `timer`: true when its deadline has come. A
    /// deadline that moved later is rescheduled with `event`; a stale entry is
    /// ignored.
    #[inline]
    pub fn fire(&mut self, timer: &mut LazyTimer, now: Ps, event: E) -> bool {
        match timer.fire(now) {
            TimerFire::Expired => true,
            TimerFire::Reschedule(t) => {
                self.push(t, event);
                false
            }
            TimerFire::Stale => false,
        }
    }
}

/// Appends `e` to a slot sorted by ascending time, ties in insertion order:
/// it goes after every entry at or before its time. On HPCC's fat-tree
/// about four pushes in five land out of order, nearly always one place
/// early (a slot's events are pushed from different hops, with different
/// serialization and link delays ahead of them).
#[inline(always)]
fn insert_sorted<E: Copy>(slot: &mut Vec<Entry<E>>, e: Entry<E>) {
    let in_order = slot.last().is_none_or(|last| last.time <= e.time);
    slot.push(e);
    if !in_order {
        shift_into_place(slot);
    }
}

/// Moves a slot's last entry left past every entry later than it. Out of
/// line, behind the in-order test: 41 M fewer instructions on the DCQCN
/// 1 ms slice than the loop inlined into every push.
#[inline(never)]
fn shift_into_place<E: Copy>(slot: &mut [Entry<E>]) {
    let mut j = slot.len() - 1;
    let e = slot[j];
    while j > 0 && slot[j - 1].time > e.time {
        slot[j] = slot[j - 1];
        j -= 1;
    }
    slot[j] = e;
}

/// Sorts a slot's entries, given in insertion order, by ascending time with
/// ties in insertion order. Slots hold a handful of entries, so insertion
/// sort (stable; each entry shifted into place, not swapped step by step)
/// usually beats a general sort.
#[inline]
fn sort_ascending<E: Copy>(v: &mut [Entry<E>]) {
    if v.len() > 24 {
        v.sort_by_key(|e| e.time); // stable
        return;
    }
    for i in 1..v.len() {
        let e = v[i];
        let mut j = i;
        while j > 0 && v[j - 1].time > e.time {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = e;
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

    /// The radix heap pops exactly what a sorted reference pops, including
    /// ties, for random interleavings of pushes and pops over short and long
    /// horizons.
    #[test]
    fn matches_a_sorted_reference() {
        use crate::rng::Stream;
        use std::collections::BTreeSet;
        for seed in 0..20u64 {
            let mut rng = Stream::new(seed, "engine-test", 0);
            let mut q = EventQueue::new();
            let mut reference = BTreeSet::new();
            let mut seq = 0u64;
            let mut now = 0u64;
            for _ in 0..50_000 {
                if rng.uniform() < 0.55 || reference.is_empty() {
                    let horizon = [0u64, 3, 1_000, 1 << 22, 1 << 40][(rng.next_u64() % 5) as usize];
                    let t = now
                        + if horizon == 0 {
                            0
                        } else {
                            rng.next_u64() % horizon
                        };
                    q.push(t, seq);
                    reference.insert((t, seq));
                    seq += 1;
                } else {
                    let want = reference.pop_first().unwrap();
                    assert_eq!(q.peek_time(), Some(want.0));
                    assert_eq!(q.pop(), Some(want));
                    now = want.0;
                }
                assert_eq!(q.len(), reference.len());
            }
            while let Some(want) = reference.pop_first() {
                assert_eq!(q.pop(), Some(want));
            }
            assert_eq!(q.pop(), None);
        }
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn rejects_the_past() {
        let mut q = EventQueue::new();
        q.push(10, ());
        q.pop();
        q.push(9, ());
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
