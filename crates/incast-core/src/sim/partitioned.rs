//! Node order, and a run in partitions that shows it does not depend on them.
//!
//! A parallel engine (issue 47: UNISON, EuroSys 2024; ns-3's MPI engine)
//! splits the network into partitions that run side by side in windows no
//! longer than the smallest delay of a link between two of them. For its
//! results not to depend on the split (nor on the thread count), events that
//! fall on the same picosecond must be ordered by something the split does
//! not change. Push order does not qualify: which of two nodes' pushes came
//! first depends on which partition ran first. With `[timing] ties =
//! "node"` the engine's key is `(time, source, push order within the
//! source)`, the source being the node (host or switch) whose event pushed
//! the event ([`EventQueue::order_by_source`]): a node's own pushes come in
//! the same order however the network is split, as long as an event reads
//! and writes only its own node's state and reaches another node only over
//! a link.
//!
//! [`Simulation::run_partitioned`] runs a scenario that way on one thread:
//! P event queues, each partition's events of a window run in turn
//! (forwards or backwards), an arrival bound for another partition's node
//! mailed and filed there when the window ends. When the order depends on
//! nothing but the nodes, its tables are byte-equal to a plain node-ordered
//! run's for every P and both turns (tested), which is the determinism a
//! threaded engine needs; a difference points at state shared across nodes.
//!
//! The end of a run must not depend on the split either: a node-ordered run
//! that finds nothing left to do (no packet, no flow, no generator) ends at
//! the end of that cell of time ([`CELL_BITS`]), after every event in it.

use super::ev::Ev;
use super::parallelism::Partition;
use super::Simulation;
use crate::engine::EventQueue;
use crate::net::link::Outbox;
use crate::units::Ps;

use super::node_order::CELL_BITS;

/// Events that name a flow slot, which flows reuse.
fn names_a_flow_slot(ev: Ev) -> bool {
    matches!(
        ev,
        Ev::Rto(_)
            | Ev::CcTimer(_)
            | Ev::Gate(_)
            | Ev::Pace(_)
            | Ev::FlowStop(_)
            | Ev::DelAck(_)
            | Ev::CnpTimer(_)
    )
}

impl Simulation {
    /// The source an event's pushes get: 1 + its node, 0 for a global one.
    #[inline]
    pub(super) fn source_of(&self, ev: Ev) -> u32 {
        Partition::node_of_event(&self.w, &self.gens, ev).map_or(0, |node| node + 1)
    }

    /// Runs `ev` at `t` in node order: the pushes it makes get its node as
    /// their source. The events a few places ahead are prefetched first, as
    /// in push order ([`Simulation::advance`]): finding an arrival's node
    /// reads its packet and port, which would otherwise miss the cache.
    #[inline(always)]
    pub(super) fn dispatch_by_node(&mut self, t: Ps, ev: Ev) {
        self.prefetch_ahead();
        let source = self.source_of(ev);
        self.w.q.set_source(source);
        self.dispatch(t, ev);
    }

    /// Nothing is left to do: no packet, no flow, no generator.
    #[inline]
    fn nothing_left(&self) -> bool {
        self.w.arena.live() == 0 && self.gens.live == 0 && self.w.flows.active == 0
    }

    /// [`Simulation::advance`] in node order.
    pub(super) fn advance_by_node(&mut self, max_events: u64) -> bool {
        for _ in 0..max_events {
            if self
                .done_in_cell
                .is_some_and(|cell| self.w.q.peek_time().is_none_or(|t| t >> CELL_BITS > cell))
            {
                self.done = true;
                return true;
            }
            let Some((t, ev)) = self.next_event() else {
                return true;
            };
            self.enter_cell(t);
            self.dispatch_by_node(t, ev);
            if self.done_in_cell.is_none() && self.nothing_left() {
                self.done_in_cell = Some(t >> CELL_BITS);
            }
        }
        false
    }

    /// Node order: the engine's peaks (packets alive, flows active) are
    /// read as the clock enters a cell, when every event of the cells
    /// before has run (a partition cannot change them), and at the end.
    #[inline]
    fn enter_cell(&mut self, t: Ps) {
        let cell = t >> CELL_BITS;
        if cell != self.node_peaks.cell {
            self.node_peaks.cell = cell;
            self.read_peaks();
        }
    }

    /// Reads the engine's peaks now (node order).
    pub(super) fn read_peaks(&mut self) {
        let peaks = &mut self.node_peaks;
        peaks.packets = peaks.packets.max(self.w.arena.live() as u64);
        peaks.flows = peaks.flows.max(self.w.flows.active);
    }

    /// Runs the scenario to its end as `partitions` partitions of a parallel
    /// engine would, on this thread (module docs): windows no longer than the
    /// smallest delay of a link between partitions nor past a cell's end, the
    /// partitions' events of each window run in turn (`backwards`: from the
    /// last), arrivals into another partition filed there at the window's
    /// end. Needs `[timing] ties = "node"`, and every event to concern one
    /// node (not an incast or listed-flow generator's, a hotspot's or the
    /// queue sampler's).
    pub fn run_partitioned(&mut self, partitions: u32, backwards: bool) -> Result<(), String> {
        if !self.node_ties {
            return Err("a partitioned run needs [timing] ties = \"node\"".into());
        }
        let partition = Partition::new(&self.w, partitions.max(1));
        let parts = partitions.max(1) as usize;
        let w = &self.w;
        let lookahead = partition.lookahead(w);
        let into = (0..w.ports.len() as u32)
            .map(|p| {
                let there = partition.of_port(w, w.ports[p as usize].peer);
                if there == partition.of_port(w, p) {
                    u32::MAX
                } else {
                    there
                }
            })
            .collect();
        let mut queues: Vec<EventQueue<Ev>> = (0..parts).map(|_| w.q.empty_like()).collect();
        for (key, ev) in self.w.q.take_all() {
            queues[self.partition_of(&partition, ev)?].push_key(key, ev);
        }
        self.w.outbox = Some(Box::new(Outbox {
            into,
            mail: vec![Vec::new(); parts],
            parcels: None,
        }));
        let turns: Vec<usize> = if backwards {
            (0..parts).rev().collect()
        } else {
            (0..parts).collect()
        };
        let (mut run, mut last) = (0u64, 0);
        let outcome = loop {
            let Some(start) = queues.iter().filter_map(EventQueue::peek_time).min() else {
                break Ok(());
            };
            if self.over_before(start) {
                break Ok(());
            }
            self.enter_cell(start);
            let cell_end = ((start >> CELL_BITS) + 1) << CELL_BITS;
            let end = (start / lookahead + 1)
                .saturating_mul(lookahead)
                .min(cell_end)
                .min(self.stop.saturating_add(1));
            for &p in &turns {
                std::mem::swap(&mut self.w.q, &mut queues[p]);
                let ran = self.run_window(end, p, &partition);
                std::mem::swap(&mut self.w.q, &mut queues[p]);
                let (n, at) = ran?;
                run += n;
                last = last.max(at);
            }
            let outbox = self.w.outbox.as_mut().expect("set above");
            for (into, mail) in outbox.mail.iter_mut().enumerate() {
                for (key, ev) in mail.drain(..) {
                    queues[into].push_key(key, ev);
                }
            }
        };
        // Back to one queue, for the accounts taken at the end.
        self.w.outbox = None;
        self.w.q.count_popped(run, last);
        for queue in &mut queues {
            for (key, ev) in queue.take_all() {
                self.w.q.push_key(key, ev);
            }
        }
        if self.stopped_at.is_some() {
            // A plain run stops on popping the first event beyond `stop`.
            self.beyond_stop = self.w.q.pop().map(|(_, ev)| ev);
        }
        self.done = true;
        outcome
    }

    /// Whether the run is over before a window that starts at `start`: it
    /// was found over in an earlier cell (over before stopped, as a plain
    /// run finds it), or `start` is past `stop` (then it stopped there).
    pub(super) fn over_before(&mut self, start: Ps) -> bool {
        if self
            .done_in_cell
            .is_some_and(|cell| start >> CELL_BITS > cell)
        {
            return true;
        }
        if start > self.stop {
            self.stopped_at = Some(self.stop);
            return true;
        }
        false
    }

    /// The partition of the node `ev` concerns.
    pub(super) fn partition_of(&self, partition: &Partition, ev: Ev) -> Result<usize, String> {
        let node = Partition::node_of_event(&self.w, &self.gens, ev)
            .ok_or_else(|| format!("{ev:?} concerns no single node"))?;
        Ok(partition.of_node[node as usize] as usize)
    }

    /// Runs partition `p`'s events before `end` (its queue in the world's
    /// place): how many, and the time of the last.
    fn run_window(
        &mut self,
        end: Ps,
        p: usize,
        partition: &Partition,
    ) -> Result<(u64, Ps), String> {
        let (mut run, mut last) = (0, 0);
        while self.w.q.peek_time().is_some_and(|t| t < end) {
            let (t, ev) = self.w.q.pop().expect("peeked");
            // A flow's timer may outlive its flow: a stale entry is ignored
            // by its handler, whichever flow holds the slot now.
            if !names_a_flow_slot(ev) && self.partition_of(partition, ev)? != p {
                return Err(format!(
                    "{ev:?} at {t} ps was filed in partition {p}, not its node's"
                ));
            }
            self.dispatch_by_node(t, ev);
            if self.done_in_cell.is_none() && self.nothing_left() {
                self.done_in_cell = Some(t >> CELL_BITS);
            }
            run += 1;
            last = t;
        }
        Ok((run, last))
    }
}

impl Simulation {
    /// Node order: flow ids by start time, then source host, then the
    /// host's own order (ids are handed out as flows start, in the order
    /// the engine runs their hosts' events, which a partition changes).
    pub(super) fn renumber_flows(&mut self) {
        let records = &mut self.w.flows.records;
        let mut order: Vec<usize> = (0..records.len()).collect();
        order.sort_by_key(|&i| (records.start[i], records.src[i], records.flow_id[i]));
        // Every flow started has a record (finished, stopped or running),
        // and ids are handed out from 0: they are 0..n (a threaded run's
        // partitions each hand out their own).
        let mut renumbered = vec![0; order.len()];
        for (id, &record) in order.iter().enumerate() {
            renumbered[record] = id as u64;
        }
        records.flow_id = renumbered;
    }
}
