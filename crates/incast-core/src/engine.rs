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
/// pushed, so no sequence number is needed to break ties (see [`EventQueue`]).
#[derive(Clone, Copy, Default)]
struct Entry<E> {
    /// The entry's key: its time, or its time and source
    /// ([`EventQueue::order_by_source`]).
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
/// Number of wheel slots by default (a power of two): the wheel spans 4096 x
/// 1.024 ns = 4.19 us ahead of the current slot, which covers a packet's
/// serialization plus a data-center link's propagation delay at 100 Gb/s.
/// [`EventQueue::with_reach`] sizes it for slower links and longer packets.
const SLOTS: usize = 4096;
/// The most wheel slots: 16,384 x 1.024 ns = 16.8 us.
const MAX_SLOTS: usize = 16384;
const MAX_WORDS: usize = MAX_SLOTS / 64;
/// log2 of a far bucket's width in wheel slots: 512 slots, 0.52 us.
const BUCKET_BITS: u32 = 9;
/// A far bucket's width in wheel slots.
const BUCKET: u64 = 1 << BUCKET_BITS;
/// Number of far buckets (a power of two): they span 4096 x 0.52 us =
/// 2.1 ms beyond the wheel.
const BUCKETS: usize = 4096;
const BUCKET_WORDS: usize = BUCKETS / 64;

/// A min-priority queue of events keyed by `(time, insertion sequence)`.
///
/// It is a *timing wheel* (a calendar queue with fixed slots, Brown, CACM
/// 31(10), 1988) with a second, coarser wheel behind it (the hierarchical
/// wheel of Varghese and Lauck, SOSP 1987) and a binary heap for the far
/// future. Simulated time never goes backwards, and almost every event of a
/// packet simulation is scheduled a transmission or a link delay ahead, so:
///
/// - an event within the wheel's span goes into its 1.024 ns slot, which
///   is kept sorted by time, ties in insertion order (entries carry no
///   sequence number): an O(1) push that usually moves at most one entry
///   (a slot holds a few events). A large network's slot holds hundreds;
///   past [`SHIFT_MAX`] entries, one pushed out of order is appended and
///   the slot is radix-sorted, stably, when it comes up;
/// - an event further ahead goes, unsorted, into its 0.52 us *far bucket*;
///   as the wheel turns, each bucket is poured into the wheel's slots once
///   they can hold all of it. The wheel spans 4.19 us, or up to 16.8 us
///   where a network's packets reach further ([`EventQueue::with_reach`]: a
///   9000 B frame at 10 Gb/s is 7.2 us on the wire), so that a packet's
///   own events stay on it;
/// - an event more than 2.1 ms ahead (RTO timers, flow arrivals) goes into
///   the overflow heap, which stays small, and is poured with its bucket;
/// - popping reads the current slot from the front; when it is empty the
///   next occupied slot is found in an occupancy bitmap and becomes the
///   current one.
///
/// Ties stay in insertion order across the levels: an event of a given
/// slot is filed in the heap, a bucket or the wheel depending only on how
/// far ahead its slot was when it was pushed, and that distance only
/// shrinks, so every heap entry of a slot was pushed before every bucket
/// entry of it, and those before every wheel entry. Pouring the heap's
/// (in `(time, seq)` order), then the bucket's (in push order), into a slot
/// before it takes any push of its own keeps that order.
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
    /// The wheel holds the slots `cur_abs < a < wheel_end`; `wheel_end` is a
    /// bucket boundary, at most `cur_abs + slots`.
    wheel_end: u64,
    /// `wheel_end - cur_abs - 1`: a slot `a` is on the wheel iff
    /// `a - cur_abs - 1 < wheel_span` (one test, wrapping).
    wheel_span: u64,
    /// `wheel_end + BUCKET - slots`: once `cur_abs` reaches it, the wheel
    /// can hold the next bucket whole.
    pour_at: u64,
    /// The wheel's slots in use (a power of two, at most `MAX_SLOTS`), less one.
    slot_mask: usize,
    /// Wheel slot `k = a % slots` holds the entries of absolute slot `a`,
    /// for `cur_abs < a < wheel_end`: one entry in `single[k]`, more in
    /// `slots[k]` (arrays: indexing by a masked slot number needs no
    /// bounds check). Where events are sparse (a 10 Gb/s network: a few
    /// per microsecond) nearly every slot holds one, and needs no buffer.
    /// Only the first `slot_mask + 1` of each array are used, so a small
    /// wheel's memory stays in the cache.
    single: Box<[Entry<E>; MAX_SLOTS]>,
    slots: Box<[Vec<Entry<E>>; MAX_SLOTS]>,
    /// Bit `k` set iff slot `k` holds entries ...
    occupied: [u64; MAX_WORDS],
    /// ... and iff they are in `slots[k]` (two or more) ...
    several: [u64; MAX_WORDS],
    /// ... and iff those are no longer sorted: pushed out of order into a
    /// slot already holding [`SHIFT_MAX`] entries, they are sorted once,
    /// when the slot becomes the current one.
    unsorted: [u64; MAX_WORDS],
    /// Drained slot buffers, the most recently drained last. A slot holds a
    /// buffer only while it holds two or more entries; its second push
    /// takes the last of these, which the cache still holds. (Leaving each
    /// buffer in its slot meant a push wrote to a line last touched a whole
    /// turn of the wheel earlier: about one last-level write miss in four
    /// events at 256 hosts.)
    spare: Vec<Vec<Entry<E>>>,
    /// `buckets[b % BUCKETS]` holds, in push order, the entries of far
    /// bucket `b` (the slots `b * BUCKET ..= b * BUCKET + BUCKET - 1`), for
    /// `first_bucket <= b < first_bucket + BUCKETS`.
    buckets: Box<[Vec<Entry<E>>; BUCKETS]>,
    /// Bit `k` set iff `buckets[k]` is non-empty.
    bucket_occupied: [u64; BUCKET_WORDS],
    /// The first bucket not yet poured: `wheel_end / BUCKET`.
    first_bucket: u64,
    /// Entries beyond the last bucket when they were pushed.
    overflow: BinaryHeap<Far<E>>,
    seq: u64,
    now: Ps,
    popped: u64,
    /// Bits of an entry's key below its time: 0 (ties in push order), or
    /// enough for every source ([`EventQueue::order_by_source`]).
    src_bits: u32,
    /// `SLOT_BITS + src_bits`: an entry's slot is its key shifted by this.
    slot_shift: u32,
    /// The source whose events are being pushed (0 until told).
    source: u64,
    /// The latest time a key can hold; later ones are filed at it.
    max_time: Ps,
}

impl<E: Copy + Default> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// Events are small and `Copy` (the simulation's are 8 bytes): the current
/// slot is read in place, from the front. `Default` gives the value an empty
/// wheel slot holds, never popped.
impl<E: Copy + Default> EventQueue<E> {
    pub fn new() -> Self {
        Self::with_slots(SLOTS)
    }

    /// A queue whose wheel holds every event at most `reach` ahead of the
    /// current time (up to 16.8 us), so that such events never go through
    /// the far buckets: a network's longest link delay plus the
    /// serialization of its largest packet. The default wheel (4.19 us) is
    /// kept when it suffices: a larger one would walk through more memory.
    pub fn with_reach(reach: Ps) -> Self {
        // After a pour the wheel reaches at least `slots - BUCKET` slots ahead.
        let needed = (reach >> SLOT_BITS) as usize + 1 + BUCKET as usize;
        Self::with_slots(needed.next_power_of_two().clamp(SLOTS, MAX_SLOTS))
    }

    /// A queue whose wheel has `slots` slots (a power of two, 4096 to 16,384).
    fn with_slots(slots: usize) -> Self {
        debug_assert!(slots.is_power_of_two() && (SLOTS..=MAX_SLOTS).contains(&slots));
        EventQueue {
            cur: Vec::with_capacity(64),
            head: 0,
            cur_abs: 0,
            wheel_end: slots as u64,
            wheel_span: slots as u64 - 1,
            pour_at: BUCKET,
            slot_mask: slots - 1,
            single: Box::new([Entry::default(); MAX_SLOTS]),
            slots: Box::new(std::array::from_fn(|_| Vec::new())),
            occupied: [0; MAX_WORDS],
            several: [0; MAX_WORDS],
            unsorted: [0; MAX_WORDS],
            spare: Vec::new(),
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            bucket_occupied: [0; BUCKET_WORDS],
            first_bucket: slots as u64 / BUCKET,
            overflow: BinaryHeap::new(),
            seq: 0,
            now: 0,
            popped: 0,
            src_bits: 0,
            slot_shift: SLOT_BITS,
            source: 0,
            max_time: Ps::MAX,
        }
    }

    /// Orders events that fall on the same picosecond by the source that
    /// pushed them (a number below `sources`, set with
    /// [`EventQueue::set_source`]), and a source's own in the order it pushed
    /// them, instead of in push order alone. A partitioned engine needs this
    /// order: a source's pushes come in the same order however the network is
    /// split, while the interleaving of two sources' pushes does not. Each
    /// entry's key is then `time << bits | source`, so times are limited to
    /// [`EventQueue::max_time`]. Call it on an empty queue.
    pub fn order_by_source(mut self, sources: u32) -> Self {
        assert!(self.is_empty(), "the order is chosen before any push");
        self.src_bits = 32 - sources.max(1).saturating_sub(1).leading_zeros();
        self.slot_shift = SLOT_BITS + self.src_bits;
        self.max_time = Ps::MAX >> self.src_bits;
        self
    }

    /// An empty queue of the same wheel and order, to take events keyed by
    /// this one's ([`EventQueue::push_key`]).
    pub fn empty_like(&self) -> Self {
        let mut q = Self::with_slots(self.slot_mask + 1);
        (q.src_bits, q.slot_shift, q.max_time) = (self.src_bits, self.slot_shift, self.max_time);
        q
    }

    /// The latest time an event can be filed at (later ones are filed at
    /// it): `Ps::MAX`, or less when ordered by source.
    pub fn max_time(&self) -> Ps {
        self.max_time
    }

    /// The source of the events pushed from now on (ordered by source only).
    #[inline(always)]
    pub fn set_source(&mut self, source: u32) {
        debug_assert!(self.src_bits == 32 || (source as u64) < 1 << self.src_bits);
        self.source = source as u64;
    }

    /// How many low bits of a key hold its source (0 in push order).
    pub fn source_bits(&self) -> u32 {
        self.src_bits
    }

    /// The key an event pushed now at `t` gets: its time, then its source.
    #[inline(always)]
    pub fn key_of(&self, t: Ps) -> u64 {
        (t.min(self.max_time) << self.src_bits) | self.source
    }

    /// Schedules `event` at absolute time `t` (never before the current time).
    #[inline(always)]
    pub fn push(&mut self, t: Ps, event: E) {
        assert!(
            t >= self.now,
            "event scheduled in the past: {t} < {}",
            self.now
        );
        if self.src_bits == 0 {
            // Push order: the key is the time (the code as it was before
            // keys could hold a source, with its constant shift).
            self.file_key(t, SLOT_BITS, event);
        } else {
            let key = self.key_of(t);
            self.file_key(key, self.slot_shift, event);
        }
    }

    /// Files `event` under `key` ([`EventQueue::key_of`], perhaps of another
    /// queue ordered alike), never before the current time.
    pub fn push_key(&mut self, key: u64, event: E) {
        debug_assert!(key >> self.src_bits >= self.now);
        self.file_key(key, self.slot_shift, event);
    }

    /// Files `event` under `key`, whose slot is `key >> slot_shift`.
    #[inline(always)]
    fn file_key(&mut self, key: u64, slot_shift: u32, event: E) {
        let abs = key >> slot_shift;
        let entry = Entry { time: key, event };
        // One test for the common case, a slot of the wheel ahead of the
        // current one.
        if abs.wrapping_sub(self.cur_abs + 1) < self.wheel_span {
            self.file(abs, entry);
        } else if abs == self.cur_abs {
            // It was pushed last, so it fires after every pending entry at
            // or before its key.
            let at = self.head + self.cur[self.head..].partition_point(|x| x.time <= key);
            self.cur.insert(at, entry);
        } else {
            self.push_far(abs, entry);
        }
    }

    /// Files `entry` in wheel slot `abs` (`cur_abs < abs < wheel_end`).
    #[inline(always)]
    fn file(&mut self, abs: u64, entry: Entry<E>) {
        let k = self.wheel_index(abs);
        let (word, bit) = (k / 64, 1u64 << (k % 64));
        if self.occupied[word] & bit == 0 {
            self.single[k] = entry;
            self.occupied[word] |= bit;
        } else if self.several[word] & bit == 0 {
            // The slot's second entry: both move to a buffer, in order
            // (the later-pushed one first only when it is earlier).
            let first = self.single[k];
            let mut slot = self.spare.pop().unwrap_or_default();
            let (a, b) = if entry.time < first.time {
                (entry, first)
            } else {
                (first, entry)
            };
            slot.push(a);
            slot.push(b);
            self.slots[k] = slot;
            self.several[word] |= bit;
        } else if !insert_sorted(&mut self.slots[k], entry) {
            self.unsorted[word] |= bit;
        }
    }

    /// Files `entry` of slot `abs` (at or beyond `wheel_end`) in its far
    /// bucket, or in the overflow heap beyond the last bucket.
    #[inline]
    fn push_far(&mut self, abs: u64, entry: Entry<E>) {
        let b = abs >> BUCKET_BITS;
        if b.wrapping_sub(self.first_bucket) < BUCKETS as u64 {
            let k = (b as usize) & (BUCKETS - 1);
            self.buckets[k].push(entry);
            self.bucket_occupied[k / 64] |= 1 << (k % 64);
        } else {
            self.overflow.push(Far {
                time: entry.time,
                seq: self.seq,
                event: entry.event,
            });
            self.seq += 1;
        }
    }

    /// The wheel slot of absolute slot `abs` (the second mask is the
    /// arrays' bound, so indexing needs no check).
    #[inline(always)]
    fn wheel_index(&self, abs: u64) -> usize {
        (abs as usize) & self.slot_mask & (MAX_SLOTS - 1)
    }

    /// Absolute number of the first occupied wheel slot after `cur_abs`.
    #[inline]
    fn next_occupied(&self) -> Option<u64> {
        let start = self.wheel_index(self.cur_abs + 1);
        let ahead = first_set_from(&self.occupied, self.slot_mask / 64 + 1, start)?;
        Some(self.cur_abs + 1 + ahead as u64)
    }

    /// Moves to the earliest pending slot and takes its first entry; the
    /// rest of the slot is left in `cur[head..]`. `None` when nothing is
    /// pending.
    #[inline]
    fn next_slot(&mut self) -> Option<Entry<E>> {
        self.cur.clear();
        self.head = 0;
        let abs = match self.next_occupied() {
            Some(abs) => abs,
            None => {
                if !self.skip_to_far() {
                    return None;
                }
                self.next_occupied()
                    .expect("a poured bucket fills the wheel")
            }
        };
        self.cur_abs = abs;
        let k = self.wheel_index(abs);
        let (word, bit) = (k / 64, 1u64 << (k % 64));
        let first = if self.several[word] & bit == 0 {
            // Nothing else in the slot: `cur` stays empty.
            self.single[k]
        } else {
            // A wheel slot is kept sorted as it is filled, or sorted now
            // (stable: ties stay in the order they were pushed). The
            // drained buffer is the warmest spare.
            let mut filled = std::mem::take(&mut self.slots[k]);
            if self.unsorted[word] & bit != 0 {
                self.unsorted[word] &= !bit;
                // A spare buffer as the sort's room, returned empty.
                let mut room = self.spare.pop().unwrap_or_default();
                if self.src_bits == 0 {
                    sort_slot(&mut filled, &mut room);
                } else {
                    // Keys hold more than the picoseconds within the slot.
                    filled.sort_by_key(|e| e.time);
                }
                room.clear();
                self.spare.push(room);
            }
            let first = filled[0];
            self.spare.push(std::mem::replace(&mut self.cur, filled));
            self.head = 1;
            self.several[word] &= !bit;
            first
        };
        self.occupied[word] &= !bit;
        self.pour();
        Some(first)
    }

    /// Pours every far bucket the wheel can now hold whole into its slots.
    #[inline]
    fn pour(&mut self) {
        while self.cur_abs >= self.pour_at {
            self.pour_bucket();
        }
        self.wheel_span = self.wheel_end - self.cur_abs - 1;
    }

    /// Moves bucket `first_bucket` onto the wheel: first the overflow
    /// heap's entries of it, then its own (the order they were pushed in).
    fn pour_bucket(&mut self) {
        let b = self.first_bucket;
        while self
            .overflow
            .peek()
            .is_some_and(|e| e.time >> (self.slot_shift + BUCKET_BITS) <= b)
        {
            let e = self.overflow.pop().expect("peeked");
            self.file(
                e.time >> self.slot_shift,
                Entry {
                    time: e.time,
                    event: e.event,
                },
            );
        }
        let k = (b as usize) & (BUCKETS - 1);
        let bit = 1u64 << (k % 64);
        if self.bucket_occupied[k / 64] & bit != 0 {
            self.bucket_occupied[k / 64] &= !bit;
            let mut entries = std::mem::take(&mut self.buckets[k]);
            for &e in &entries {
                self.file(e.time >> self.slot_shift, e);
            }
            entries.clear();
            self.buckets[k] = entries;
        }
        self.first_bucket += 1;
        self.wheel_end += BUCKET;
        self.pour_at += BUCKET;
    }

    /// The wheel is empty: moves the current slot to just before the
    /// earliest far bucket or overflow entry, so that pouring reaches it.
    /// Returns false when nothing is pending.
    #[cold]
    fn skip_to_far(&mut self) -> bool {
        let bucket = self.first_occupied_bucket();
        let heap = self
            .overflow
            .peek()
            .map(|e| e.time >> (self.slot_shift + BUCKET_BITS));
        let b = match (bucket, heap) {
            (None, None) => return false,
            (Some(x), None) | (None, Some(x)) => x,
            (Some(x), Some(y)) => x.min(y),
        };
        // Buckets before `b` are empty and the heap holds nothing before
        // it: the wheel may start anywhere up to it (`cur_abs` stays
        // before every pending entry).
        if b > self.first_bucket {
            self.first_bucket = b;
            self.wheel_end = b * BUCKET;
            self.pour_at = self.wheel_end + BUCKET - (self.slot_mask as u64 + 1);
        }
        self.cur_abs = self.cur_abs.max(self.wheel_end - 1);
        self.pour();
        true
    }

    /// The number of the first far bucket holding entries of its own (the
    /// heap may hold earlier ones).
    fn first_occupied_bucket(&self) -> Option<u64> {
        let start = (self.first_bucket as usize) & (BUCKETS - 1);
        first_set_from(&self.bucket_occupied, BUCKET_WORDS, start)
            .map(|d| self.first_bucket + d as u64)
    }

    /// Removes and returns the earliest event, advancing the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Ps, E)> {
        let (key, event) = self.pop_key()?;
        Some((key >> self.src_bits, event))
    }

    /// [`EventQueue::pop`], giving the event's key rather than its time.
    #[inline(always)]
    pub fn pop_key(&mut self) -> Option<(u64, E)> {
        // One test on the common path: the current slot has a next entry.
        let e = match self.cur.get(self.head) {
            Some(&e) => {
                self.head += 1;
                e
            }
            None => self.next_slot()?,
        };
        self.now = e.time >> self.src_bits;
        self.popped += 1;
        Some((e.time, e.event))
    }

    /// Takes every pending event with its key, earliest first, without
    /// counting them as run (to move them to other queues).
    pub fn take_all(&mut self) -> Vec<(u64, E)> {
        let (now, popped) = (self.now, self.popped);
        let all = std::iter::from_fn(|| self.pop_key()).collect();
        (self.now, self.popped) = (now, popped);
        all
    }

    /// Counts `n` more events as run, the last at `last` (they were popped
    /// from other queues).
    pub fn count_popped(&mut self, n: u64, last: Ps) {
        self.popped += n;
        self.now = self.now.max(last);
    }
    /// The `k`-th event after the next one, when it is already known to be in
    /// the current slot (for prefetching what it will touch).
    #[inline(always)]
    pub fn upcoming(&self, k: usize) -> Option<&E> {
        self.cur.get(self.head + k).map(|e| &e.event)
    }
    /// Time of the earliest pending event. It moves nothing, so a push
    /// after it files as it would have before.
    #[inline]
    pub fn peek_time(&self) -> Option<Ps> {
        self.peek_key().map(|key| key >> self.src_bits)
    }

    /// The key of the earliest pending event ([`EventQueue::peek_time`]).
    pub fn peek_key(&self) -> Option<u64> {
        if let Some(e) = self.cur.get(self.head) {
            return Some(e.time);
        }
        if let Some(abs) = self.next_occupied() {
            let k = self.wheel_index(abs);
            let (word, bit) = (k / 64, 1u64 << (k % 64));
            return Some(if self.unsorted[word] & bit != 0 {
                self.slots[k]
                    .iter()
                    .map(|e| e.time)
                    .min()
                    .expect("occupied")
            } else if self.several[word] & bit != 0 {
                self.slots[k][0].time
            } else {
                self.single[k].time
            });
        }
        // The wheel is empty: the earliest entry of the first occupied far
        // bucket, or of the heap (whose entries may fall before it).
        let bucket = self.first_occupied_bucket().and_then(|b| {
            let k = (b as usize) & (BUCKETS - 1);
            self.buckets[k].iter().map(|e| e.time).min()
        });
        let heap = self.overflow.peek().map(|e| e.time);
        match (bucket, heap) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        }
    }
    /// The current simulated time: the time of the last event popped.
    #[inline]
    pub fn now(&self) -> Ps {
        self.now
    }
    /// Pending events (counted, not kept: the hot path keeps no count).
    pub fn len(&self) -> usize {
        let singles: u32 = (self.occupied.iter().zip(&self.several))
            .map(|(o, s)| (o & !s).count_ones())
            .sum();
        let wheel = self.slots.iter().map(Vec::len).sum::<usize>() + singles as usize;
        let far: usize = self.buckets.iter().map(Vec::len).sum();
        self.cur.len() - self.head + wheel + far + self.overflow.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Every pending event, in no particular order (for accounts taken at
    /// the end of a run: the hot path keeps none).
    pub fn pending(&self) -> impl Iterator<Item = &E> + '_ {
        let wheel = (0..=self.slot_mask).flat_map(move |k| {
            let (word, bit) = (k / 64, 1u64 << (k % 64));
            let single = (self.occupied[word] & !self.several[word] & bit != 0)
                .then(|| &self.single[k].event);
            single
                .into_iter()
                .chain(self.slots[k].iter().map(|e| &e.event))
        });
        self.cur[self.head..]
            .iter()
            .map(|e| &e.event)
            .chain(wheel)
            .chain(self.buckets.iter().flatten().map(|e| &e.event))
            .chain(self.overflow.iter().map(|e| &e.event))
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

/// A slot of more entries than this is no longer kept sorted as it is
/// filled (see [`insert_sorted`]).
const SHIFT_MAX: usize = 32;

/// Appends `e` to a slot sorted by ascending time, ties in insertion order:
/// it goes after every entry at or before its time. On HPCC's fat-tree
/// about four pushes in five land out of order, nearly always one place
/// early (a slot's events are pushed from different hops, with different
/// serialization and link delays ahead of them).
///
/// Returns false when it left the slot unsorted: `e` came out of order into
/// a slot of [`SHIFT_MAX`] entries or more. A large network fills a 1 ns
/// slot with hundreds of events (k = 34 at 50 % load: about 400), and its
/// acknowledgements and end-of-transmission events, pushed later than the
/// data arrivals around them, would each shift half the slot; such a slot
/// is sorted once instead ([`sort_slot`]).
#[inline(always)]
fn insert_sorted<E: Copy>(slot: &mut Vec<Entry<E>>, e: Entry<E>) -> bool {
    let in_order = slot.last().is_none_or(|last| last.time <= e.time);
    slot.push(e);
    if in_order {
        return true;
    }
    if slot.len() > SHIFT_MAX {
        return false;
    }
    shift_into_place(slot);
    true
}

/// Sorts a slot by time, ties in the order they were pushed (the entries
/// before the first one left out of place are in that order already): a
/// stable radix sort on the picoseconds within the slot, two passes of five
/// bits through `scratch`. Branch-free: a comparison sort of such a slot (a
/// few sorted sequences interleaved at random) mispredicts often, and took
/// 1.7 times as long at k = 34.
#[cold]
#[inline(never)]
fn sort_slot<E: Copy + Default>(slot: &mut [Entry<E>], scratch: &mut Vec<Entry<E>>) {
    const DIGIT: u32 = SLOT_BITS.div_ceil(2);
    debug_assert!(slot
        .iter()
        .all(|e| e.time >> SLOT_BITS == slot[0].time >> SLOT_BITS));
    scratch.clear();
    scratch.resize(slot.len(), Entry::default());
    radix_pass(slot, scratch, 0);
    radix_pass(scratch, slot, DIGIT);
}

/// Copies `from` into `to` ordered by the `SLOT_BITS / 2` bits of the time
/// above `shift`, stably.
#[inline(always)]
fn radix_pass<E: Copy>(from: &[Entry<E>], to: &mut [Entry<E>], shift: u32) {
    const RADIX: usize = 1 << SLOT_BITS.div_ceil(2);
    let digit = |e: &Entry<E>| (e.time >> shift) as usize & (RADIX - 1);
    let mut start = [0usize; RADIX];
    for e in from {
        start[digit(e)] += 1;
    }
    let mut sum = 0;
    for s in &mut start {
        (*s, sum) = (sum, sum + *s);
    }
    for e in from {
        let d = digit(e);
        to[start[d]] = *e;
        start[d] += 1;
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

/// The distance from bit `start` to the first set bit of the ring formed by
/// the first `words` of `bits` (a power of two; wrapping once around it).
#[inline]
fn first_set_from<const N: usize>(bits: &[u64; N], words: usize, start: usize) -> Option<usize> {
    debug_assert!(words.is_power_of_two() && words <= N && start < words * 64);
    let n = words * 64;
    let (w0, b0) = (start / 64 % N, start % 64);
    let first = bits[w0] & (!0u64 << b0);
    let found = if first != 0 {
        Some(w0 * 64 + first.trailing_zeros() as usize)
    } else {
        (1..=words).find_map(|i| {
            let w = (w0 + i) & (words - 1);
            let mut word = bits[w % N];
            if i == words {
                word &= !(!0u64 << b0); // wrapped: only the bits before start
            }
            (word != 0).then(|| w * 64 + word.trailing_zeros() as usize)
        })
    }?;
    Some((found + n - start) & (n - 1))
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
    use std::collections::BTreeSet;

    /// A queue checked against a reference: the ordered set of its entries'
    /// `(time, push number)`.
    struct Checked {
        q: EventQueue<u64>,
        reference: BTreeSet<(Ps, u64)>,
        pushed: u64,
    }

    impl Checked {
        fn new(q: EventQueue<u64>) -> Self {
            Checked {
                q,
                reference: BTreeSet::new(),
                pushed: 0,
            }
        }
        fn push(&mut self, t: Ps) {
            self.q.push(t, self.pushed);
            self.reference.insert((t, self.pushed));
            self.pushed += 1;
        }
        /// Peeks and pops, checking both against the reference; returns the
        /// time popped.
        fn pop(&mut self) -> Ps {
            let want = self.reference.pop_first().expect("a pending entry");
            assert_eq!(self.q.peek_time(), Some(want.0));
            assert_eq!(self.q.pop(), Some(want));
            want.0
        }
        /// The pending events are the reference's, each once.
        fn check_pending(&self) {
            let mut pending: Vec<u64> = self.q.pending().copied().collect();
            pending.sort_unstable();
            let mut want: Vec<u64> = self.reference.iter().map(|&(_, e)| e).collect();
            want.sort_unstable();
            assert_eq!(pending, want);
        }
        /// Pops everything left, checking the order, then that nothing is.
        fn drain(&mut self) {
            while !self.reference.is_empty() {
                self.pop();
            }
            assert_eq!(self.q.pop(), None);
        }
    }

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

    /// The queue pops exactly what a sorted reference pops, including ties,
    /// for random interleavings of pushes and pops over short and long
    /// horizons (every level: the current slot, the wheel, the far buckets,
    /// the overflow heap), with each size of wheel.
    #[test]
    fn matches_a_sorted_reference() {
        use crate::rng::Stream;
        for seed in 0..24u64 {
            let mut rng = Stream::new(seed, "engine-test", 0);
            let slots = [SLOTS, 2 * SLOTS, MAX_SLOTS][seed as usize % 3];
            let mut checked = Checked::new(EventQueue::with_slots(slots));
            let mut now = 0u64;
            for i in 0..50_000 {
                if i % 1000 == 0 {
                    checked.check_pending();
                }
                if rng.uniform() < 0.55 || checked.reference.is_empty() {
                    // Within a slot, the wheel, its edge, the far buckets, their
                    // edge and beyond (the overflow heap).
                    let horizon = [0u64, 3, 1_000, 1 << 22, 1 << 24, 1 << 31, 1 << 32, 1 << 40]
                        [(rng.next_u64() % 8) as usize];
                    let t = now
                        + if horizon == 0 {
                            0
                        } else {
                            rng.next_u64() % horizon
                        };
                    checked.push(t);
                } else {
                    now = checked.pop();
                }
                assert_eq!(checked.q.len(), checked.reference.len());
            }
            checked.drain();
        }
    }

    /// Ordered by source, events fire by (time, source, push order), at every
    /// distance (current slot, wheel, far buckets, overflow heap, and slots of
    /// more than `SHIFT_MAX` entries, sorted when they come up); keys moved to
    /// another queue ordered alike keep their place; time reads back whole.
    #[test]
    fn source_order_matches_a_sorted_reference() {
        use crate::rng::Stream;
        for seed in 0..12u64 {
            let mut rng = Stream::new(seed, "engine-source-order", 0);
            let sources = [2u32, 7, 1000, 70_000][seed as usize % 4];
            let mut q = EventQueue::with_slots([SLOTS, MAX_SLOTS][seed as usize % 2])
                .order_by_source(sources);
            let mut moved_to = EventQueue::new().order_by_source(sources);
            let mut reference = BTreeSet::new();
            let (mut now, mut pushed) = (0u64, 0u64);
            for i in 0..60_000 {
                if rng.uniform() < 0.55 || reference.is_empty() {
                    let source = rng.below(sources as u64);
                    // Ties on purpose: a few times, many sources each.
                    let t = match rng.below(4) {
                        0 => now,
                        1 => (now / 5_000 + 1) * 5_000,
                        2 => now + rng.below(1 << 22),
                        _ => now + rng.below(1 << 33),
                    };
                    q.set_source(source as u32);
                    q.push(t, pushed);
                    reference.insert((t, source, pushed));
                    pushed += 1;
                } else {
                    let want = reference.pop_first().expect("pending");
                    assert_eq!(q.peek_time(), Some(want.0));
                    let (key, event) = q.pop_key().expect("pending");
                    assert_eq!(
                        (key >> q.src_bits, key & ((1 << q.src_bits) - 1), event),
                        want
                    );
                    assert_eq!(q.now(), want.0);
                    now = want.0;
                }
                if i == 30_000 {
                    // Move everything to a second queue: the same order follows.
                    for (key, event) in q.take_all() {
                        moved_to.push_key(key, event);
                    }
                    assert!(q.is_empty());
                    std::mem::swap(&mut q, &mut moved_to);
                }
            }
            while let Some(want) = reference.pop_first() {
                assert_eq!(q.pop(), Some((want.0, want.2)));
            }
            assert_eq!(q.pop(), None);
        }
    }

    /// Keys leave room for the source bits: a time beyond `max_time` is filed
    /// at `max_time`, and the bits are as few as the sources need.
    #[test]
    fn source_keys_and_their_range() {
        let q: EventQueue<u8> = EventQueue::new().order_by_source(1);
        assert_eq!((q.src_bits, q.max_time()), (0, Ps::MAX));
        let q: EventQueue<u8> = EventQueue::new().order_by_source(1024);
        assert_eq!((q.src_bits, q.max_time()), (10, Ps::MAX >> 10));
        let mut q: EventQueue<u8> = EventQueue::new().order_by_source(1025);
        assert_eq!(q.src_bits, 11);
        q.set_source(1024);
        assert_eq!(q.key_of(3), 3 << 11 | 1024);
        assert_eq!(q.key_of(Ps::MAX) >> 11, q.max_time());
        q.push(Ps::MAX, 1);
        assert_eq!(q.pop(), Some((q.max_time(), 1)));
    }

    /// Events of one time pushed while it was beyond the far buckets, then
    /// within them, then on the wheel and in the current slot, fire in
    /// insertion order, with each size of wheel.
    #[test]
    fn ties_keep_insertion_order_across_levels() {
        use crate::rng::Stream;
        // Many pushes aim at the multiples of these periods (ties), from
        // every distance: the current slot, the wheel, a far bucket, beyond.
        let periods = [3_000_000u64, 2_200_000_000];
        for seed in 0..6u64 {
            let mut rng = Stream::new(seed, "engine-ties", 0);
            let slots = [SLOTS, MAX_SLOTS][seed as usize % 2];
            let mut checked = Checked::new(EventQueue::with_slots(slots));
            let mut now = 0u64;
            let mut levels = [0u32; 4];
            for _ in 0..400_000 {
                if rng.uniform() < 0.5 || checked.reference.len() < 200 {
                    let t = if rng.uniform() < 0.3 {
                        let period = periods[rng.below(2) as usize];
                        (now / period + rng.below(3)) * period
                    } else {
                        let horizon = 1 << (10 + rng.below(18));
                        now + rng.below(horizon)
                    }
                    .max(now);
                    let ahead = (t >> SLOT_BITS) - (now >> SLOT_BITS);
                    levels[match ahead {
                        0 => 0,
                        a if a < slots as u64 - BUCKET => 1,
                        a if a < (BUCKETS as u64) * BUCKET => 2,
                        _ => 3,
                    }] += 1;
                    checked.push(t);
                } else {
                    now = checked.pop();
                }
            }
            checked.drain();
            // Every level took pushes.
            assert!(levels.iter().all(|&n| n > 1_000), "{levels:?}");
        }
    }

    /// A large network's slots: hundreds of entries each, pushed out of
    /// order and with ties, so that they exceed [`SHIFT_MAX`] and are sorted
    /// when they come up; `peek_time` sees the earliest of an unsorted slot.
    #[test]
    fn dense_slots_are_sorted_in_push_order() {
        use crate::rng::Stream;
        let mut rng = Stream::new(7, "engine-dense", 0);
        let mut checked = Checked::new(EventQueue::new());
        let (mut now, mut largest) = (0, 0);
        for _ in 0..300_000 {
            if rng.uniform() < 0.5 || checked.reference.len() < 5_000 {
                // Within 40 slots ahead, on 64 distinct picoseconds per slot:
                // many ties, and most pushes out of order.
                checked.push(now + (rng.below(40 << SLOT_BITS) & !15));
            } else {
                now = checked.pop();
                largest = largest.max(checked.q.cur.len());
            }
        }
        checked.drain();
        assert!(largest > 4 * SHIFT_MAX, "slots of {largest} entries");
    }

    /// The wheel is the default one unless a network's events reach beyond
    /// it, and then the smallest that holds them, up to the largest.
    #[test]
    fn the_wheel_is_sized_by_its_reach() {
        let slots = |reach: Ps| EventQueue::<u32>::with_reach(reach).slot_mask + 1;
        // 100 Gb/s, 1 KB packets, 1 us links (HPCC's fat-tree): the default.
        assert_eq!(slots(1_080_000), SLOTS);
        // After a pour the wheel reaches (slots - BUCKET) x 1.024 ns ahead.
        let reach_of = |slots: usize| (slots as u64 - BUCKET - 1) << SLOT_BITS;
        assert_eq!(slots(reach_of(SLOTS)), SLOTS);
        assert_eq!(slots(reach_of(SLOTS) + (1 << SLOT_BITS)), 2 * SLOTS);
        // 10 Gb/s, 9000 B packets, 1 us links (htsim's permutation): 8.2 us.
        assert_eq!(slots(8_200_000), MAX_SLOTS);
        assert_eq!(slots(1_000_000_000), MAX_SLOTS);
        // Events within the reach never wait in a far bucket: after any pop,
        // a push that far ahead files on the wheel.
        for reach in [1_080_000, 5_000_000, 8_200_000] {
            let mut q = EventQueue::with_reach(reach);
            let mut t = 0;
            for i in 0..20_000u64 {
                q.push(t + reach, i as u32);
                let abs = (t + reach) >> SLOT_BITS;
                assert!(
                    abs - q.cur_abs - 1 < q.wheel_span || abs == q.cur_abs,
                    "{reach} {i}"
                );
                t = q.pop().map_or(t, |(time, _)| time) + i % 997;
            }
        }
    }

    /// Peeking changes nothing: an event pushed after a peek, before the
    /// peeked one, still fires first (at every level the peeked one may sit).
    #[test]
    fn a_push_after_a_peek_fires_in_order() {
        for far in [2_000_000u64, 50_000_000, 5_000_000_000] {
            let mut q = EventQueue::new();
            q.push(far, 1u32);
            assert_eq!(q.peek_time(), Some(far));
            q.push(1_000, 2);
            q.push(far - 1, 3);
            assert_eq!(q.peek_time(), Some(1_000));
            assert_eq!(q.pop(), Some((1_000, 2)));
            assert_eq!(q.pop(), Some((far - 1, 3)));
            assert_eq!(q.pop(), Some((far, 1)));
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
