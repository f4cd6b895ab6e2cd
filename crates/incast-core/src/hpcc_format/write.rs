//! Writing a run's results in HPCC-sim's formats.
//!
//! - `fct.txt`: `sip dip sport dport size start_ns fct_ns standalone_fct_ns`, one line per
//!   finished flow in completion order (HPCC-sim's `qp_finish`);
//! - `pfc.txt`: `time_ns node_id node_type if_index type`, one line per PAUSE (1) or
//!   resume (0) received, in time order (HPCC-sim's `get_pfc`).

use super::{format_ip, HpccImport, PfcEventRow};
use crate::metrics_table::{Column, Table};
use std::io::{self, Write};

fn ps_to_ns(ps: u64) -> u64 {
    (ps + 500) / 1000
}

/// Writes `fct.txt` in HPCC-sim's format: one line per finished flow, in completion order
/// (ties by flow id). Returns the number of lines.
pub fn write_fct(
    imp: &HpccImport,
    results: &crate::Results,
    out: &mut dyn Write,
) -> io::Result<usize> {
    write_fct_table(imp, &results.flows, out)
}

/// [`write_fct`] from a flows table (`flow_id`, `finished`, `start_ps`, `fct_ps`, `finish_ps`).
pub fn write_fct_table(imp: &HpccImport, flows: &Table, out: &mut dyn Write) -> io::Result<usize> {
    let bad = |m: String| io::Error::new(io::ErrorKind::InvalidData, m);
    let col64 = |n: &str| match flows.get(n) {
        Some(Column::U64(v)) => Ok(v.as_slice()),
        _ => Err(bad(format!("the flows table has no u64 column `{n}`"))),
    };
    let ids = col64("flow_id")?;
    let start = col64("start_ps")?;
    let fct = col64("fct_ps")?;
    let finish = col64("finish_ps")?;
    let finished = match flows.get("finished") {
        Some(Column::U8(v)) => v.as_slice(),
        _ => return Err(bad("the flows table has no u8 column `finished`".into())),
    };
    let mut rows: Vec<usize> = (0..ids.len()).filter(|&i| finished[i] != 0).collect();
    rows.sort_by_key(|&i| (finish[i], ids[i]));
    for &i in &rows {
        let f = imp.flows.get(ids[i] as usize).ok_or_else(|| {
            bad(format!(
                "flow id {} is not one of the {} imported flows",
                ids[i],
                imp.flows.len()
            ))
        })?;
        writeln!(
            out,
            "{} {} {} {} {} {} {} {}",
            format_ip(f.src_id),
            format_ip(f.dst_id),
            f.sport,
            f.dport,
            f.size,
            ps_to_ns(start[i]),
            ps_to_ns(fct[i]),
            f.standalone_fct_ns
        )?;
    }
    Ok(rows.len())
}

/// The PFC events of a results table with columns `time_ps`, `node`, `port`, `class`, `event`.
pub fn pfc_rows(table: &Table) -> Result<Vec<PfcEventRow>, String> {
    if table.columns.is_empty() {
        return Ok(vec![]);
    }
    let time = match table.get("time_ps") {
        Some(Column::U64(v)) => v,
        _ => return Err("the PFC table has no u64 column `time_ps`".into()),
    };
    let u32col = |n: &str| match table.get(n) {
        Some(Column::U32(v)) => Ok(v),
        _ => Err(format!("the PFC table has no u32 column `{n}`")),
    };
    let u8col = |n: &str| match table.get(n) {
        Some(Column::U8(v)) => Ok(v),
        _ => Err(format!("the PFC table has no u8 column `{n}`")),
    };
    let (node, port, class, event) = (
        u32col("node")?,
        u32col("port")?,
        u8col("class")?,
        u8col("event")?,
    );
    Ok((0..time.len())
        .map(|i| PfcEventRow {
            time_ps: time[i],
            node: node[i],
            port: port[i],
            class: class[i],
            event: event[i],
        })
        .collect())
}

/// Writes `pfc.txt` in HPCC-sim's format: `time_ns node_id node_type if_index type` in time
/// order, where `node_names` are the run's node names (`h<id>` / `s<id>` from the import).
pub fn write_pfc_rows(
    node_names: &[String],
    rows: &[PfcEventRow],
    out: &mut dyn Write,
) -> io::Result<usize> {
    let bad = |m: String| io::Error::new(io::ErrorKind::InvalidData, m);
    // HPCC's file knows pauses (1) and resumes (0) only: watchdog events stay out.
    let mut order: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].event <= 1).collect();
    order.sort_by_key(|&i| rows[i].time_ps);
    for &i in &order {
        let r = &rows[i];
        let name = node_names
            .get(r.node as usize)
            .ok_or_else(|| bad(format!("PFC event at unknown node {}", r.node)))?;
        let (kind, id) = match (
            name.as_bytes().first(),
            name.get(1..).and_then(|s| s.parse::<u32>().ok()),
        ) {
            (Some(b'h'), Some(id)) => (0, id),
            (Some(b's'), Some(id)) => (1, id),
            _ => {
                return Err(bad(format!(
                    "node `{name}` is not named like an imported HPCC node (h<id> or s<id>)"
                )))
            }
        };
        writeln!(
            out,
            "{} {} {} {} {}",
            ps_to_ns(r.time_ps),
            id,
            kind,
            r.port + 1,
            r.event
        )?;
    }
    Ok(order.len())
}

/// Writes `pfc.txt` for a run of an imported scenario.
pub fn write_pfc(results: &crate::Results, out: &mut dyn Write) -> io::Result<usize> {
    let rows = pfc_rows(&results.pfc).map_err(|m| io::Error::new(io::ErrorKind::InvalidData, m))?;
    write_pfc_rows(&results.node_names, &rows, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hpcc_format::import_texts;
    use crate::hpcc_format::test_util::*;

    #[test]
    fn writes_fct_and_pfc_lines() {
        let imp = import_texts("small", &base_config(), TOPO, FLOWS).unwrap();
        let mut flows = Table::default();
        flows.push("flow_id", Column::U64(vec![0, 1, 2]));
        flows.push(
            "start_ps",
            Column::U64(vec![
                2_000_000_000_000,
                2_000_001_000_000,
                2_000_002_000_000,
            ]),
        );
        flows.push(
            "finish_ps",
            Column::U64(vec![2_000_000_010_000, 0, 2_000_002_005_000]),
        );
        flows.push("fct_ps", Column::U64(vec![10_000, 0, 3_000]));
        flows.push("finished", Column::U8(vec![1, 0, 1]));
        let mut out = vec![];
        assert_eq!(write_fct_table(&imp, &flows, &mut out).unwrap(), 2);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "0b000001 0b000101 10000 100 1000 2000000000 10 4243\n0b000101 0b000001 10000 100 5 2000002000 3 4164\n"
        );
        let names: Vec<String> = ["h0", "h1", "h3", "s2", "s4"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let rows = [
            PfcEventRow {
                time_ps: 2_000_000_500_000,
                node: 4,
                port: 1,
                class: 3,
                event: 0,
            },
            PfcEventRow {
                time_ps: 2_000_000_100_000,
                node: 4,
                port: 0,
                class: 3,
                event: 1,
            },
            PfcEventRow {
                time_ps: 2_000_000_200_000,
                node: 0,
                port: 0,
                class: 3,
                event: 1,
            },
        ];
        let mut out = vec![];
        write_pfc_rows(&names, &rows, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "2000000100 4 1 1 1\n2000000200 0 0 1 1\n2000000500 4 1 2 0\n"
        );
    }
}
