//! Reading HPCC-sim's flow file: line 1 the flow count, then
//! `src dst priority dport size start_seconds` per flow. Only the syntax is
//! checked here; the conversion checks the flows against the topology.

use super::config::seconds_to_ns;
use crate::scenario::ScenarioError;

/// One line of the flow file, as written.
pub(super) struct RawFlow {
    /// 1-based line number.
    pub line: usize,
    pub src: u32,
    pub dst: u32,
    /// Priority group.
    pub pg: u32,
    pub dport: u32,
    pub size: u64,
    /// Absolute start time, ns.
    pub start_ns: u64,
}

pub(super) fn parse_flows(text: &str, file: &str) -> Result<Vec<RawFlow>, ScenarioError> {
    let key = "FLOW_FILE";
    let err = |line: usize, m: String| ScenarioError::new(key, format!("{file}:{line}: {m}"));
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let (ln, head) = lines
        .next()
        .ok_or_else(|| ScenarioError::new(key, format!("{file} is empty")))?;
    let count: usize = head
        .parse()
        .map_err(|_| err(ln, format!("expected the number of flows, got `{head}`")))?;
    let mut out = Vec::with_capacity(count);
    for (ln, l) in lines {
        let t: Vec<&str> = l.split_whitespace().collect();
        if t.len() != 6 {
            return Err(err(
                ln,
                format!("expected `src dst priority dport size start_seconds`, got `{l}`"),
            ));
        }
        let num = |s: &str, what: &str| -> Result<u64, ScenarioError> {
            s.parse::<u64>()
                .map_err(|_| err(ln, format!("{what} `{s}` is not a non-negative integer")))
        };
        let src = num(t[0], "src")? as u32;
        let dst = num(t[1], "dst")? as u32;
        let pg = num(t[2], "priority")? as u32;
        let dport = num(t[3], "dport")? as u32;
        let size = num(t[4], "size")?;
        let start_ns = seconds_to_ns(t[5]).ok_or_else(|| {
            err(
                ln,
                format!("start time `{}` is not a number of seconds", t[5]),
            )
        })?;
        out.push(RawFlow {
            line: ln,
            src,
            dst,
            pg,
            dport,
            size,
            start_ns,
        });
    }
    if out.len() != count {
        return Err(ScenarioError::new(
            key,
            format!(
                "{file}: the first line announces {count} flows, the file lists {}",
                out.len()
            ),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::hpcc_format::import_texts;
    use crate::hpcc_format::test_util::*;

    #[test]
    fn flow_file_problems_name_the_line() {
        let e = import_texts("x", &base_config(), TOPO, "2\n0 1 3 100 1000 2.0\n").unwrap_err();
        assert!(e.message.contains("announces 2"), "{e}");
        let e = import_texts("x", &base_config(), TOPO, "1\n0 2 3 100 1000 2.0\n").unwrap_err();
        assert!(
            e.message.contains("line 2") && e.message.contains("not a host"),
            "{e}"
        );
        let e = import_texts(
            "x",
            &base_config(),
            TOPO,
            "2\n0 1 3 100 1000 2.0\n1 0 3 100 1000 1.0\n",
        )
        .unwrap_err();
        assert!(e.message.contains("must not decrease"), "{e}");
    }
}
