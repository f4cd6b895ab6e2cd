//! One run on several cores: partitions of the network run side by side,
//! each on its own thread with a world of its own, and give the bytes of a
//! one-thread run whatever their number.
//!
//! # How it works
//!
//! [`run_threaded`] builds the scenario once per partition: every world
//! holds the whole network, but a partition runs only the events of its own
//! nodes (hosts and switches, [`Partition`]: a fat-tree's pods, or its edge
//! switches with their hosts). The partitions run in windows no longer than
//! the smallest delay of a link between two of them (the lookahead): nothing
//! one does in a window can reach another before the window ends. At a
//! window's end (a barrier) each hands the others what crossed into them:
//!
//! - a packet put on a link into another partition travels by value, with
//!   its INT records, an ACK's SACK blocks, a congestion-management
//!   notification's message and the key of its arrival ([`Parcel`]);
//! - a flow that starts for a receiver in another partition sends that
//!   partition the receiver's part of it ([`FlowStart`]), in the same slot
//!   of the flow table (each partition hands out its own residue of slot
//!   numbers, [`crate::host::SlotPlan`]).
//!
//! Then every thread reads every partition's status (its next event, its
//! packets, flows and generators alive) and takes the same decision: the
//! next window, the engine's peaks when a cell of time begins, the end.
//!
//! The order of events does not depend on the split: with `[timing] ties =
//! "node"` the engine orders same-time events by the node that pushed them,
//! then in that node's own order ([`super::partitioned`]), and node order
//! keeps a flow's sender and receiver apart even in one world (slots are
//! never reused; a receiver acknowledges a late segment of a flow its
//! sender has finished; the receiver's counts in the records are read at
//! the end; a stopped flow's size is what its sender knows acknowledged). So 1, 2, 3 or 16 threads give byte-identical tables
//! (`tests/integration/threaded.rs`).
//!
//! At the end the partitions' worlds are merged into the first (each port,
//! switch and NIC from its owner; records, logs and counters summed or
//! appended) and the results are taken from it as from any run.
//!
//! What crosses nodes other than by a link is handled by its owner: the
//! queue sampler ticks in every partition, each sampling its own ports
//! ([`QueueSampler::keep_ports`], [`QueueSampler::merge`]); a switch
//! mechanism merges its own state ([`crate::mech::SwitchMechanism::merge`]:
//! PFC, INT, trimming, congestion isolation); a flow's receiver (NDP's and
//! EQDS's pull pacers too) runs apart from its sender.
//!
//! A NIC model keeps its state per NIC, says so
//! ([`crate::nic::NicModel::THREADS`]) and merges it
//! ([`crate::nic::NicModel::merge`]: the transmit queues; the adapter's
//! VOQs, receive buffers and reaction points, its `cm` series added tick
//! by tick). What does not say so (an extension without a merge) is
//! refused with the reason ([`Simulation::threads_refusal`]). PCIe limits
//! merge per host. CI's lost CIPs are drawn per receiving port in node
//! order. Edge pausing runs threaded: in node order its clock noise,
//! sampled readings and error sum are per host or exact
//! ([`crate::edge::EdgeRuntime::node_order`]), and its runtime merges.

use super::parallelism::Partition;
use super::Simulation;
use crate::host::{self, FlowStart};
use crate::metrics::sampler::QueueSampler;
use crate::net::link::{Outbox, Parcel, Parcels};
use crate::net::PacketKind;
use crate::scenario::Scenario;
use crate::sim::ev::Ev;
use crate::units::Ps;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::node_order::CELL_BITS;

/// Runs `sc` on `threads` threads (its own [`Partition`] each) and returns
/// its results: byte-identical for every thread count. Runs in node order
/// whatever the scenario's `[timing] ties` says.
pub fn run_threaded(sc: &Scenario, threads: u32) -> Result<super::Results, String> {
    ThreadedRun::start(sc, threads)?.finish()
}

/// A threaded run under way ([`run_threaded`] in the background): its
/// progress while it runs, its results at the end.
pub struct ThreadedRun {
    /// The run's thread (taken by [`ThreadedRun::finish_with_stats`]).
    handle: Option<std::thread::JoinHandle<Result<super::Results, String>>>,
    progress: Arc<SharedProgress>,
    horizon: Ps,
}

/// What the first partition's thread tells of the run as it goes, and
/// every partition's account at the end.
#[derive(Default)]
struct SharedProgress {
    now: AtomicU64,
    active: AtomicU64,
    finished: AtomicU64,
    done: AtomicBool,
    /// Set when the run is dropped unfinished: the threads stop at the
    /// next window.
    cancel: AtomicBool,
    parts: Mutex<Vec<PartStats>>,
}

/// A partition's account of a threaded run: what it ran, and what it
/// waited for (the synchronisation's cost, with the imbalance between
/// partitions: `incast-bench --threads` prints them).
#[derive(Clone, Copy, Debug, Default)]
pub struct PartStats {
    pub events: u64,
    pub windows: u64,
    /// Wall time spent at the windows' barriers.
    pub waited_s: f64,
}

impl ThreadedRun {
    /// Builds the first partition's world here (a scenario the threads
    /// cannot run is refused now, with the reason), the others and the run
    /// on threads of their own.
    pub fn start(sc: &Scenario, threads: u32) -> Result<ThreadedRun, String> {
        let mut sc = sc.clone();
        sc.config.timing.ties = crate::scenario::Ties::Node;
        let first = Simulation::new(&sc).map_err(|e| e.to_string())?;
        if let Some(why) = first.threads_refusal(&sc) {
            return Err(format!("this scenario cannot run on threads yet: {why}"));
        }
        let horizon = first.horizon;
        let progress = Arc::new(SharedProgress::default());
        let shared = Arc::clone(&progress);
        let handle = std::thread::Builder::new()
            .name("incast-run".into())
            .spawn(move || {
                let results = run_parts(&sc, first, threads.max(1) as usize, &shared);
                shared.done.store(true, Ordering::Release);
                results
            })
            .map_err(|e| format!("cannot start a thread: {e}"))?;
        Ok(ThreadedRun {
            handle: Some(handle),
            progress,
            horizon,
        })
    }

    /// Where the run is (as of the last window's start).
    pub fn progress(&self) -> super::Progress {
        let p = &self.progress;
        let now = p.now.load(Ordering::Relaxed);
        let done = p.done.load(Ordering::Acquire);
        super::Progress {
            now_ps: now,
            horizon_ps: self.horizon,
            fraction: if done {
                1.0
            } else if self.horizon == 0 {
                0.0
            } else {
                (now as f64 / self.horizon as f64).min(0.99)
            },
            active_flows: p.active.load(Ordering::Relaxed),
            finished_flows: p.finished.load(Ordering::Relaxed),
        }
    }

    /// Waits for the end of the run at most `timeout`: whether it is over.
    pub fn wait(&self, timeout: std::time::Duration) -> bool {
        let until = std::time::Instant::now() + timeout;
        while !self.progress.done.load(Ordering::Acquire) {
            if std::time::Instant::now() >= until {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        true
    }

    /// Stops the run at its next window ([`ThreadedRun::finish`] then says
    /// it was cancelled); dropping an unfinished run does the same.
    pub fn cancel(&self) {
        self.progress.cancel.store(true, Ordering::Relaxed);
    }

    /// Waits for the end of the run: its results.
    pub fn finish(self) -> Result<super::Results, String> {
        self.finish_with_stats().map(|(results, _)| results)
    }

    /// [`ThreadedRun::finish`], with each partition's account.
    pub fn finish_with_stats(mut self) -> Result<(super::Results, Vec<PartStats>), String> {
        let handle = self.handle.take().expect("joined once");
        let results = match handle.join() {
            Ok(results) => results?,
            Err(_) => return Err("a partition's thread panicked".into()),
        };
        let parts = std::mem::take(&mut *self.progress.parts.lock().expect("stats"));
        Ok((results, parts))
    }
}

impl Drop for ThreadedRun {
    fn drop(&mut self) {
        if self.handle.is_some() {
            // Dropped before its end (an interrupted caller): stop the threads.
            self.cancel();
        }
    }
}

/// The run: the other partitions' worlds built, every partition on its own
/// thread, the worlds merged, the results taken.
fn run_parts(
    sc: &Scenario,
    first: Simulation,
    parts: usize,
    progress: &SharedProgress,
) -> Result<super::Results, String> {
    let build = || Simulation::new(sc).map_err(|e| e.to_string());
    let mut sims: Vec<Simulation> = if parts == 1 {
        vec![first]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (1..parts).map(|_| scope.spawn(build)).collect();
            let rest = handles.into_iter().map(|h| h.join().expect("build thread"));
            std::iter::once(Ok(first)).chain(rest).collect::<Vec<_>>()
        })
        .into_iter()
        .collect::<Result<_, _>>()?
    };
    let partition = Partition::new(&sims[0].w, parts as u32);
    let lookahead = partition.lookahead(&sims[0].w);
    for (k, sim) in sims.iter_mut().enumerate() {
        sim.keep_partition(&partition, k)?;
    }
    let shared = Shared::new(parts, progress);
    let outcomes: Vec<Result<(), String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (sims.iter_mut().enumerate())
            .map(|(k, sim)| {
                let shared = &shared;
                scope.spawn(move || sim.run_part(k, shared, lookahead))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("partition thread"))
            .collect()
    });
    outcomes.into_iter().collect::<Result<(), String>>()?;
    *progress.parts.lock().expect("stats") = sims.iter().map(|sim| sim.part_stats).collect();
    Ok(merge(sims, &partition).finish())
}

impl Simulation {
    /// Why this run cannot run threaded yet, or `None`.
    pub fn threads_refusal(&self, sc: &Scenario) -> Option<String> {
        let w = &self.w;
        if let Some((key, why)) = crate::mech::threads_refusal(sc) {
            return Some(format!("[switch.{key}] {why}"));
        }
        if !crate::nic::runs_threaded(w.nic_model) {
            return Some(format!(
                "[nic] model = \"{}\" does not merge its partitions' state yet",
                w.nic_model.name()
            ));
        }
        self.gens.threads_refusal()
    }
}

/// A partition's status at a window's end, as every thread reads it.
#[derive(Clone, Copy, Debug, Default)]
struct Status {
    next: Option<u64>,
    packets: u64,
    flows: u64,
    finished: u64,
    generators: u64,
    /// The first partition read the run's cancel flag (every thread takes
    /// its word, so that all stop at the same window).
    cancel: bool,
}

/// What the threads share: the barrier, the statuses and the mailboxes
/// (`from * parts + to`).
struct Shared<'a> {
    progress: &'a SharedProgress,
    parts: usize,
    barrier: SpinBarrier,
    status: Vec<Mutex<Status>>,
    mail: Vec<Mutex<(Vec<Parcel>, Vec<FlowStart>)>>,
}

impl Shared<'_> {
    fn new(parts: usize, progress: &SharedProgress) -> Shared<'_> {
        Shared {
            progress,
            parts,
            barrier: SpinBarrier::new(parts),
            status: (0..parts).map(|_| Mutex::default()).collect(),
            mail: (0..parts * parts).map(|_| Mutex::default()).collect(),
        }
    }
}

/// A barrier that spins (windows are microseconds of simulated time, a few
/// thousand events: sleeping would cost more than waiting). A thread that
/// panics poisons it, so that the others stop instead of waiting forever.
struct SpinBarrier {
    parts: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
    poisoned: AtomicBool,
}

/// Poisons a barrier when its thread unwinds.
struct PoisonOnPanic<'a>(&'a SpinBarrier);

impl Drop for PoisonOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.poisoned.store(true, Ordering::Release);
        }
    }
}

impl SpinBarrier {
    fn new(parts: usize) -> SpinBarrier {
        SpinBarrier {
            parts,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            poisoned: AtomicBool::new(false),
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.parts {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            if self.poisoned.load(Ordering::Acquire) {
                panic!("another partition's thread panicked");
            }
            if spins < 1 << 12 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

impl Simulation {
    /// Keeps partition `k`'s events only (the others' run in their own
    /// worlds) and opens this world's outbox.
    fn keep_partition(&mut self, partition: &Partition, k: usize) -> Result<(), String> {
        let w = &self.w;
        let parts = partition.parts();
        let other = |there: u32| if there as usize == k { u32::MAX } else { there };
        let into = (0..w.ports.len() as u32)
            .map(|p| other(partition.of_port(w, w.ports[p as usize].peer)))
            .collect();
        let host_into = (0..w.host_nic.len())
            .map(|h| other(partition.of_host(w, h as u32)))
            .collect();
        let mut own = self.w.q.empty_like();
        for (key, ev) in self.w.q.take_all() {
            // The queue sampler's tick is every partition's: each samples
            // its own ports at the same times.
            if matches!(ev, Ev::Sample) || self.partition_of(partition, ev)? == k {
                own.push_key(key, ev);
            } else if matches!(ev, Ev::Gen(_)) {
                self.gens.live -= 1;
            }
        }
        self.w.q = own;
        let w = &self.w;
        self.sampler
            .keep_ports(|p| partition.of_port(w, p) as usize == k);
        self.w.outbox = Some(Box::new(Outbox {
            into,
            mail: Vec::new(),
            parcels: Some(Box::new(Parcels {
                host_into,
                packets: (0..parts).map(|_| Vec::new()).collect(),
                flows: (0..parts).map(|_| Vec::new()).collect(),
            })),
        }));
        let plan = self.w.flows.apart.as_mut().expect("node order");
        (plan.offset, plan.stride) = (k as u32, parts as u32);
        self.threaded = true;
        Ok(())
    }

    fn status(&self) -> Status {
        Status {
            next: self.w.q.peek_key(),
            packets: self.w.arena.live() as u64,
            flows: self.w.flows.active,
            finished: self.w.flows.finished,
            generators: self.gens.live,
            cancel: false,
        }
    }

    /// Partition `k`'s thread: windows until the run is over.
    fn run_part(&mut self, k: usize, shared: &Shared<'_>, lookahead: Ps) -> Result<(), String> {
        let shift = self.w.q.source_bits();
        let mut run = 0u64;
        let mut window_cell = None;
        let (mut windows, mut waited) = (0u64, std::time::Duration::ZERO);
        let _poison = PoisonOnPanic(&shared.barrier);
        let outcome = loop {
            let mut status = self.status();
            status.cancel = k == 0 && shared.progress.cancel.load(Ordering::Relaxed);
            *shared.status[k].lock().expect("status") = status;
            let waiting = std::time::Instant::now();
            shared.barrier.wait();
            waited += waiting.elapsed();
            let all: Vec<Status> = (shared.status.iter())
                .map(|s| *s.lock().expect("status"))
                .collect();
            let nothing_left = all
                .iter()
                .all(|s| s.packets == 0 && s.flows == 0 && s.generators == 0);
            if self.done_in_cell.is_none() && nothing_left {
                self.done_in_cell = window_cell;
            }
            if all[0].cancel {
                break Err("the run was cancelled".into());
            }
            let Some((owner, next)) = (all.iter().enumerate())
                .filter_map(|(p, s)| s.next.map(|key| (p, key)))
                .min_by_key(|&(_, key)| key)
            else {
                break Ok(());
            };
            let start = next >> shift;
            if self.over_before(start) {
                if self.stopped_at.is_some() && owner == k {
                    // A plain run stops on popping the first event beyond `stop`.
                    self.beyond_stop = self.w.q.pop().map(|(_, ev)| ev);
                }
                break Ok(());
            }
            let cell = start >> CELL_BITS;
            if cell != self.node_peaks.cell {
                self.node_peaks.cell = cell;
                let peaks = &mut self.node_peaks;
                peaks.packets = peaks.packets.max(all.iter().map(|s| s.packets).sum());
                peaks.flows = peaks.flows.max(all.iter().map(|s| s.flows).sum());
            }
            window_cell = Some(cell);
            if k == 0 {
                let progress = shared.progress;
                progress.now.store(start, Ordering::Relaxed);
                let active = all.iter().map(|s| s.flows).sum();
                progress.active.store(active, Ordering::Relaxed);
                let finished = all.iter().map(|s| s.finished).sum();
                progress.finished.store(finished, Ordering::Relaxed);
            }
            // Nothing another partition does from `start` on reaches this
            // one before `start + lookahead`; a window ends with its cell.
            let end = start
                .saturating_add(lookahead)
                .min((cell + 1) << CELL_BITS)
                .min(self.stop.saturating_add(1));
            while self.w.q.peek_time().is_some_and(|t| t < end) {
                let (t, ev) = self.w.q.pop().expect("peeked");
                self.dispatch_by_node(t, ev);
                run += 1;
            }
            self.post(k, shared);
            let waiting = std::time::Instant::now();
            shared.barrier.wait();
            waited += waiting.elapsed();
            windows += 1;
            self.collect(k, shared);
        };
        self.part_stats = PartStats {
            events: run,
            windows,
            waited_s: waited.as_secs_f64(),
        };
        self.done = true;
        outcome
    }

    /// Hands what crossed into other partitions in this window to their mailboxes.
    fn post(&mut self, k: usize, shared: &Shared<'_>) {
        let outbox = self.w.outbox.as_deref_mut().expect("opened");
        let parcels = outbox.parcels.as_deref_mut().expect("threaded");
        for to in 0..shared.parts {
            if to == k || (parcels.packets[to].is_empty() && parcels.flows[to].is_empty()) {
                continue;
            }
            let mut mailbox = shared.mail[k * shared.parts + to].lock().expect("mail");
            std::mem::swap(&mut mailbox.0, &mut parcels.packets[to]);
            std::mem::swap(&mut mailbox.1, &mut parcels.flows[to]);
        }
    }

    /// Takes what the other partitions sent this one, in partition order:
    /// receivers' parts of flows first, then packets, filed by their keys.
    fn collect(&mut self, k: usize, shared: &Shared<'_>) {
        for from in 0..shared.parts {
            if from == k {
                continue;
            }
            let mut mailbox = shared.mail[from * shared.parts + k].lock().expect("mail");
            for start in mailbox.1.drain(..) {
                host::receive_flow(&mut self.w, &start);
            }
            for parcel in mailbox.0.drain(..) {
                let mut packet = parcel.packet;
                if let Some(msg) = parcel.msg {
                    let st = self.w.nic_state.adapter.as_deref_mut();
                    packet.seq = st.expect("the adapter model").msgs.put(msg);
                }
                let id = self.w.arena.alloc(packet);
                if self.w.arena.int_enabled() {
                    *self.w.arena.int_mut(id) = parcel.int;
                }
                if parcel.packet.kind == PacketKind::Ack && self.w.tcp.recovery.uses_sack() {
                    self.w.sack.put(id, parcel.sack);
                }
                self.w.q.push_key(parcel.key, Ev::Arrive(id));
            }
        }
    }
}

/// What a merged run's accounts take from every partition's world (their
/// packets are in their own arenas).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Merged {
    /// Packets on wires (pending arrivals) and their bytes.
    pub wires: (u64, u64),
    pub in_network_bytes: u64,
}

/// The partitions' worlds merged into the first: each element from the
/// partition that owns it, records and logs appended, counters summed.
fn merge(mut sims: Vec<Simulation>, partition: &Partition) -> Simulation {
    let mut merged = Merged::default();
    // The run's end: the last event any partition ran.
    let end = sims.iter().map(|sim| sim.w.q.now()).max().unwrap_or(0);
    for sim in &mut sims {
        let (n, bytes) = sim.on_wires();
        merged.wires.0 += n;
        merged.wires.1 += bytes;
        merged.in_network_bytes += sim.in_network_bytes();
        let running: Vec<u32> = (0..sim.w.flows.slots.len() as u32)
            .filter(|&s| sim.w.flows.slots[s as usize].active)
            .collect();
        for s in running {
            host::record(&mut sim.w, s, host::End::Running(end));
            // Recorded: `finish` leaves it be.
            sim.w.flows.slots[s as usize].active = false;
        }
    }
    // The receivers' counts, from the receivers' worlds.
    for k in 0..sims.len() {
        let records = &sims[k].w.flows.records;
        let counts: Vec<(u32, u32)> = (records.dst.iter().zip(&records.slot))
            .map(|(&dst, &slot)| {
                let receiver = &sims[partition.of_host(&sims[0].w, dst) as usize];
                receiver.w.flows.slots[slot as usize].receiver_counts()
            })
            .collect();
        let records = &mut sims[k].w.flows.records;
        for (i, (cnps, ce)) in counts.into_iter().enumerate() {
            (records.cnps[i], records.ce_marks[i]) = (cnps, ce);
        }
    }
    let mut rest = sims.split_off(1);
    let mut sim = sims.pop().expect("one partition at least");
    let hosts = sim.w.host_nic.len() as u32;
    let port_owner: Vec<u32> = (0..sim.w.ports.len() as u32)
        .map(|p| partition.of_port(&sim.w, p))
        .collect();
    let host_owner: Vec<u32> = (0..hosts).map(|h| partition.of_host(&sim.w, h)).collect();
    let nic_owner: Vec<u32> = (sim.w.nics.iter())
        .map(|nic| partition.of_node[nic.node as usize])
        .collect();
    let mut events = 0;
    for (k, other) in rest.iter_mut().enumerate() {
        let k = k as u32 + 1;
        let (w, from) = (&mut sim.w, &mut other.w);
        for (p, (mine, theirs)) in w.ports.iter_mut().zip(&mut from.ports).enumerate() {
            if port_owner[p] == k {
                std::mem::swap(mine, theirs);
            }
        }
        let owned_port = |p: u32| port_owner[p as usize] == k;
        crate::mech::merge(&mut w.mechs, &mut from.mechs, &owned_port);
        // Each host's PCIe links from the partition that owns it.
        let owned_hosts = (0..hosts).filter(|&h| host_owner[h as usize] == k);
        for host in owned_hosts {
            if let (Some(mine), Some(theirs)) = (w.pcie.as_deref_mut(), from.pcie.as_deref_mut()) {
                mine.take_host(theirs, host);
            }
            if let (Some(mine), Some(theirs)) = (w.rx.as_deref_mut(), from.rx.as_deref_mut()) {
                mine.take_host(theirs, host);
            }
        }
        if let (Some(edge), Some(theirs)) = (w.edge.as_deref_mut(), from.edge.as_deref_mut()) {
            // Its packets still alive count in its drop curve, as the
            // first partition's do when the results are read.
            if let Some(curve) = theirs.curve.as_deref_mut() {
                for packet in from.arena.live_packets().filter(|p| p.tag != 0) {
                    curve.on_in_flight(packet.tag);
                }
            }
            edge.merge(theirs);
        }
        for s in 0..w.switches.len() {
            if partition.of_node[hosts as usize + s] == k {
                std::mem::swap(&mut w.switches[s], &mut from.switches[s]);
            }
        }
        for n in (0..w.nics.len()).filter(|&n| nic_owner[n] == k) {
            std::mem::swap(&mut w.nics[n], &mut from.nics[n]);
        }
        let (mine, theirs) = (&mut w.nic_state, &mut from.nic_state);
        crate::nic::merge(w.nic_model, mine, theirs, &|nic| {
            nic_owner[nic as usize] == k
        });
        let records = std::mem::take(&mut from.flows.records);
        w.flows.records.append(records);
        for (mine, theirs) in w.flows.incasts.iter_mut().zip(&from.flows.incasts) {
            let done = theirs.fan_in - theirs.remaining;
            if done > 0 {
                mine.remaining -= done;
                mine.last_done = mine.last_done.max(theirs.last_done);
                if mine.remaining == 0 {
                    mine.finish = Some(mine.last_done);
                }
            }
        }
        w.flows.active += from.flows.active;
        w.flows.finished += from.flows.finished;
        let (counters, theirs) = (&mut w.counters, &from.counters);
        counters.other_events += theirs.other_events;
        counters.out_of_order += theirs.out_of_order;
        let (cons, their) = (&mut counters.cons, theirs.cons);
        cons.sent_bytes += their.sent_bytes;
        cons.delivered_bytes += their.delivered_bytes;
        cons.dropped_bytes += their.dropped_bytes;
        cons.trimmed_bytes += their.trimmed_bytes;
        // Every partition ran the sampler's ticks: one run counts them once.
        events += from.q.events_processed() - other.sampler.ticks;
        counters.other_events -= other.sampler.ticks;
        if other.beyond_stop.is_some() {
            sim.beyond_stop = other.beyond_stop;
        }
    }
    sim.w.q.count_popped(events, end);
    let samplers = rest
        .iter_mut()
        .map(|other| std::mem::take(&mut other.sampler));
    let first = std::mem::take(&mut sim.sampler);
    sim.sampler = QueueSampler::merge(std::iter::once(first).chain(samplers).collect());
    sim.node_peaks.packets = (sim.node_peaks.packets)
        .max(sim.w.arena.live() as u64 + rest.iter().map(|o| o.w.arena.live() as u64).sum::<u64>());
    sim.node_peaks.flows = sim.node_peaks.flows.max(sim.w.flows.active);
    sim.merged = Some(merged);
    sim
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every thread passes each generation of the barrier together: no
    /// thread sees a count of another generation.
    #[test]
    fn the_barrier_keeps_threads_in_step() {
        let barrier = SpinBarrier::new(3);
        let count = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..3 {
                scope.spawn(|| {
                    for round in 0..500 {
                        count.fetch_add(1, Ordering::AcqRel);
                        barrier.wait();
                        assert_eq!(count.load(Ordering::Acquire), 3 * (round + 1));
                        barrier.wait();
                    }
                });
            }
        });
    }

    /// A thread that panics stops the others at the barrier.
    #[test]
    fn a_panicking_thread_poisons_the_barrier() {
        let barrier = SpinBarrier::new(2);
        let outcome = std::thread::scope(|scope| {
            let failing = scope.spawn(|| {
                let _poison = PoisonOnPanic(&barrier);
                panic!("a partition fails");
            });
            let waiting = scope.spawn(|| barrier.wait());
            (failing.join().is_err(), waiting.join().is_err())
        });
        assert_eq!(outcome, (true, true));
    }

    /// A cancelled run stops and says so.
    #[test]
    fn a_cancelled_run_stops() {
        let sc = Scenario::from_toml_str(
            r#"
name = "cancel"
duration = "50ms"
[topology]
kind = "fat_tree"
k = 4
host_rate = "100Gbps"
fabric_rate = "100Gbps"
[[workload.poisson]]
load = 0.8
cdf = "websearch"
[metrics]
queue_ports = "none"
"#,
            std::path::Path::new("."),
        )
        .unwrap();
        let run = ThreadedRun::start(&sc, 2).unwrap();
        run.cancel();
        assert!(run.wait(std::time::Duration::from_secs(60)));
        let err = run.finish().unwrap_err();
        assert!(err.contains("cancelled"), "{err}");
    }
}
