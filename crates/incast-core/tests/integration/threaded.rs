//! One run on several threads (`incast_core::run_threaded`): each partition
//! of the network runs on its own thread in a world of its own, and the
//! tables are the very bytes of a one-thread node-ordered run for every
//! thread count (issue 47). The cases are the partitioned runs' (every
//! family of mechanisms whose state the threads can merge).

use crate::common::{digest, scenario};
use crate::partitioned::{differences, mechanism_families, plain};
use incast_core::run_threaded;

#[test]
fn threads_give_the_one_thread_tables() {
    let mut ran = 0;
    for (what, toml) in mechanism_families() {
        if what.starts_with("NDP") {
            continue; // refused, below
        }
        let reference = plain(&toml);
        assert!(reference.flows.rows() > 50, "{what}");
        assert_eq!(reference.conservation.sent_bytes, {
            let c = reference.conservation;
            c.delivered_bytes + c.dropped_bytes + c.trimmed_bytes + c.in_network_bytes
        });
        let want = digest(&reference);
        for threads in [1, 2, 3] {
            let got = run_threaded(&scenario(&toml), threads)
                .unwrap_or_else(|e| panic!("{what}, {threads} threads: {e}"));
            let differs = differences(&reference, &got);
            assert_eq!(
                digest(&got),
                want,
                "{what}: {threads} threads differ from one: {differs:?}"
            );
        }
        ran += 1;
    }
    assert_eq!(ran, 9);
}

/// A scenario in push order runs in node order on threads: its own
/// one-thread node-ordered run is the reference, not its push-ordered one.
#[test]
fn threads_run_in_node_order() {
    let (_, toml) = &mechanism_families()[3];
    let push = toml.replace("ties = \"node\"", "ties = \"push\"");
    let on_threads = run_threaded(&scenario(&push), 2).unwrap();
    assert_eq!(digest(&on_threads), digest(&plain(toml)));
}

/// What the threads cannot merge yet is refused, naming it.
#[test]
fn threads_refuse_what_they_cannot_merge() {
    let (what, ndp) = mechanism_families().pop().unwrap();
    assert!(what.starts_with("NDP"), "{what}");
    let err = run_threaded(&scenario(&ndp), 2).unwrap_err();
    assert!(err.contains("[switch.trim]"), "{err}");
    let sampled = mechanism_families()[3]
        .1
        .replace("queue_ports = \"none\"", "queue_ports = \"all\"");
    let err = run_threaded(&scenario(&sampled), 2).unwrap_err();
    assert!(err.contains("queue sampler"), "{err}");
}
