//! Test fixtures shared by the importer's unit tests: a small two-switch
//! experiment and the HPCC simulator's own files (bundled in `scenarios/hpcc`).

use std::path::{Path, PathBuf};

/// Where the HPCC simulator's shipped files are: the copies bundled in the
/// repository's `scenarios/hpcc` (tests that need them skip with a message if
/// they are absent).
pub const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/hpcc");

/// `SHARED/name`, if that file exists.
pub fn shared(name: &str) -> Option<PathBuf> {
    let p = Path::new(SHARED).join(name);
    p.is_file().then_some(p)
}

/// Two hosts under one ToR (ids 0, 1), a third host (3) behind a second switch (4).
pub const TOPO: &str = "5 2 4\n2 4\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n2 4 400Gbps 1000ns 0\n3 4 100Gbps 1000ns 0\n";
pub const FLOWS: &str = "3\n0 1 3 100 1000 2.0\n0 3 3 200 1000000 2.000001\n1 0 3 100 5 2.000002\n";

/// A DCQCN configuration for [`TOPO`] (100G and 400G ports, ACK_HIGH_PRIO 1).
pub fn base_config() -> String {
    "ENABLE_QCN 1\nUSE_DYNAMIC_PFC_THRESHOLD 1\nPACKET_PAYLOAD_SIZE 1000\n\
     TOPOLOGY_FILE t.txt\nFLOW_FILE f.txt\nFCT_OUTPUT_FILE mix/fct.txt\nSIMULATOR_STOP_TIME 2.1\n\
     CC_MODE 1\nALPHA_RESUME_INTERVAL 1\nRATE_DECREASE_INTERVAL 4\nCLAMP_TARGET_RATE 0\nRP_TIMER 300\n\
     EWMA_GAIN 0.00390625\nFAST_RECOVERY_TIMES 1\nRATE_AI 20Mb/s\nRATE_HAI 200Mb/s\nMIN_RATE 1000Mb/s\n\
     ERROR_RATE_PER_LINK 0.0000\nL2_CHUNK_SIZE 4000\nL2_ACK_INTERVAL 1\nL2_BACK_TO_ZERO 0\n\
     HAS_WIN 0\nGLOBAL_T 1\nVAR_WIN 0\nFAST_REACT 0\nU_TARGET 0.95\nMI_THRESH 0\nINT_MULTI 1\n\
     MULTI_RATE 0\nSAMPLE_FEEDBACK 0\nRATE_BOUND 1\nACK_HIGH_PRIO 1\nLINK_DOWN 0 0 0\nENABLE_TRACE 0\n\
     KMAX_MAP 2 100000000000 1600 400000000000 6400\nKMIN_MAP 2 100000000000 400 400000000000 1600\n\
     PMAX_MAP 2 100000000000 0.20 400000000000 0.20\nBUFFER_SIZE 32\n"
        .to_string()
}

/// `config` with the line of `key` replaced by `line`.
pub fn with(config: &str, key: &str, line: &str) -> String {
    config
        .lines()
        .map(|l| {
            if l.split_whitespace().next() == Some(key) {
                line.to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
