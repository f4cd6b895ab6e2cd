//! Reading HPCC-sim's `config.txt`: one `KEY value...` per line.
//!
//! [`Config::parse`] checks every key against [`KEYS`] (the keys HPCC-sim's
//! `third.cc` reads) and refuses unknown or repeated keys; the typed getters
//! (`uint`, `flag`, `float`, `rate`, `rate_map`) apply HPCC-sim's defaults and
//! report a bad value with the file, line and key. [`ns3_rate`] and
//! [`seconds_to_ns`] read ns-3's rate and time syntax exactly.

use super::convert::rate_str;
use crate::scenario::ScenarioError;
use crate::units::Rate;
use serde_json::{json, Value};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub(super) struct Entry {
    /// 1-based line number in the file.
    pub line: usize,
    pub values: Vec<String>,
}

/// A parsed configuration: each key with its line and values.
pub(super) struct Config {
    file: String,
    pub entries: BTreeMap<String, Entry>,
}

/// What a key is, for the table of known keys.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Mapped onto the scenario.
    Mapped,
    /// An output location of HPCC-sim: accepted, incast writes into its output directory.
    Output,
}

/// Every key HPCC-sim's `third.cc` reads, and what the import does with it.
const KEYS: &[(&str, Kind)] = &[
    ("ENABLE_QCN", Kind::Mapped),
    ("USE_DYNAMIC_PFC_THRESHOLD", Kind::Mapped),
    ("CLAMP_TARGET_RATE", Kind::Mapped),
    ("PAUSE_TIME", Kind::Mapped),
    ("DATA_RATE", Kind::Mapped),
    ("LINK_DELAY", Kind::Mapped),
    ("PACKET_PAYLOAD_SIZE", Kind::Mapped),
    ("L2_CHUNK_SIZE", Kind::Mapped),
    ("L2_ACK_INTERVAL", Kind::Mapped),
    ("L2_BACK_TO_ZERO", Kind::Mapped),
    ("TOPOLOGY_FILE", Kind::Mapped),
    ("FLOW_FILE", Kind::Mapped),
    ("TRACE_FILE", Kind::Output),
    ("TRACE_OUTPUT_FILE", Kind::Output),
    ("FCT_OUTPUT_FILE", Kind::Output),
    ("PFC_OUTPUT_FILE", Kind::Output),
    ("QLEN_MON_FILE", Kind::Output),
    ("QLEN_MON_START", Kind::Mapped),
    ("QLEN_MON_END", Kind::Mapped),
    ("SIMULATOR_STOP_TIME", Kind::Mapped),
    ("ALPHA_RESUME_INTERVAL", Kind::Mapped),
    ("RP_TIMER", Kind::Mapped),
    ("EWMA_GAIN", Kind::Mapped),
    ("FAST_RECOVERY_TIMES", Kind::Mapped),
    ("RATE_AI", Kind::Mapped),
    ("RATE_HAI", Kind::Mapped),
    ("MIN_RATE", Kind::Mapped),
    ("DCTCP_RATE_AI", Kind::Mapped),
    ("RATE_DECREASE_INTERVAL", Kind::Mapped),
    ("ERROR_RATE_PER_LINK", Kind::Mapped),
    ("CC_MODE", Kind::Mapped),
    ("HAS_WIN", Kind::Mapped),
    ("GLOBAL_T", Kind::Mapped),
    ("VAR_WIN", Kind::Mapped),
    ("FAST_REACT", Kind::Mapped),
    ("U_TARGET", Kind::Mapped),
    ("MI_THRESH", Kind::Mapped),
    ("INT_MULTI", Kind::Mapped),
    ("MULTI_RATE", Kind::Mapped),
    ("SAMPLE_FEEDBACK", Kind::Mapped),
    ("PINT_LOG_BASE", Kind::Mapped),
    ("PINT_PROB", Kind::Mapped),
    ("RATE_BOUND", Kind::Mapped),
    ("ACK_HIGH_PRIO", Kind::Mapped),
    ("LINK_DOWN", Kind::Mapped),
    ("ENABLE_TRACE", Kind::Mapped),
    ("KMAX_MAP", Kind::Mapped),
    ("KMIN_MAP", Kind::Mapped),
    ("PMAX_MAP", Kind::Mapped),
    ("BUFFER_SIZE", Kind::Mapped),
];

/// The keys HPCC-sim reads that the import accepts as output locations only.
pub fn output_keys() -> Vec<&'static str> {
    KEYS.iter()
        .filter(|k| k.1 == Kind::Output)
        .map(|k| k.0)
        .collect()
}

/// Every key the import knows.
pub fn known_keys() -> Vec<&'static str> {
    KEYS.iter().map(|k| k.0).collect()
}

impl Config {
    pub fn parse(text: &str, file: &str) -> Result<Config, ScenarioError> {
        let mut entries = BTreeMap::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut parts = line.split_whitespace();
            let key = parts.next().unwrap_or_default().to_string();
            let values: Vec<String> = parts.map(str::to_string).collect();
            if !KEYS.iter().any(|k| k.0 == key) {
                return Err(ScenarioError::new(
                    key.clone(),
                    format!(
                        "{file}:{}: unknown HPCC configuration key `{key}`; incast does not support it \
                         (see docs/hpcc-interop.md for the keys it reads)",
                        i + 1
                    ),
                ));
            }
            if let Some(prev) = entries.get(&key) {
                let prev: &Entry = prev;
                return Err(ScenarioError::new(
                    key.clone(),
                    format!(
                        "{file}:{}: `{key}` is given twice (also on line {})",
                        i + 1,
                        prev.line
                    ),
                ));
            }
            entries.insert(
                key,
                Entry {
                    line: i + 1,
                    values,
                },
            );
        }
        Ok(Config {
            file: file.to_string(),
            entries,
        })
    }

    pub fn err(&self, key: &str, msg: impl std::fmt::Display) -> ScenarioError {
        match self.entries.get(key) {
            Some(e) => ScenarioError::new(key, format!("{}:{}: {key}: {msg}", self.file, e.line)),
            None => ScenarioError::new(key, format!("{}: {key}: {msg}", self.file)),
        }
    }

    pub fn has(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// The single value of `key`, if present.
    pub fn one(&self, key: &str) -> Result<Option<&str>, ScenarioError> {
        match self.entries.get(key) {
            None => Ok(None),
            Some(e) if e.values.len() == 1 => Ok(Some(e.values[0].as_str())),
            Some(e) => Err(self.err(key, format!("expected one value, got {}", e.values.len()))),
        }
    }

    pub fn required(&self, key: &str, why: &str) -> Result<&str, ScenarioError> {
        self.one(key)?
            .ok_or_else(|| self.err(key, format!("missing: {why}")))
    }

    pub fn parse_num<T: std::str::FromStr>(
        &self,
        key: &str,
        v: &str,
        what: &str,
    ) -> Result<T, ScenarioError> {
        v.parse::<T>()
            .map_err(|_| self.err(key, format!("`{v}` is not {what}")))
    }

    pub fn uint(&self, key: &str, default: u64) -> Result<u64, ScenarioError> {
        match self.one(key)? {
            Some(v) => self.parse_num(key, v, "a non-negative integer"),
            None => Ok(default),
        }
    }

    pub fn flag(&self, key: &str, default: bool) -> Result<bool, ScenarioError> {
        match self.uint(key, default as u64)? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(self.err(key, format!("expected 0 or 1, got {v}"))),
        }
    }

    pub fn float(&self, key: &str, default: f64) -> Result<f64, ScenarioError> {
        match self.one(key)? {
            Some(v) => {
                let x: f64 = self.parse_num(key, v, "a number")?;
                if x.is_finite() && x >= 0.0 {
                    Ok(x)
                } else {
                    Err(self.err(key, format!("`{v}` must be a finite non-negative number")))
                }
            }
            None => Ok(default),
        }
    }

    pub fn required_float(&self, key: &str, why: &str) -> Result<f64, ScenarioError> {
        self.required(key, why)?;
        self.float(key, 0.0)
    }

    /// A rate written as ns-3 does (`"20Mb/s"`, `"100Gbps"`).
    pub fn rate(&self, key: &str, default: Option<&str>, why: &str) -> Result<Rate, ScenarioError> {
        let v = match (self.one(key)?, default) {
            (Some(v), _) => v,
            (None, Some(d)) => d,
            (None, None) => return Err(self.err(key, format!("missing: {why}"))),
        };
        ns3_rate(v).map_err(|m| self.err(key, m))
    }

    /// A required rate as the JSON string of a congestion-control parameter.
    pub fn rate_json(&self, key: &str, why: &str) -> Result<Value, ScenarioError> {
        Ok(json!(rate_str(self.rate(key, None, why)?)))
    }

    /// A `KMAX_MAP`-style list: `n rate1 v1 rate2 v2 ...`.
    pub fn rate_map(&self, key: &str) -> Result<Vec<(u64, f64)>, ScenarioError> {
        let e = self.entries.get(key).ok_or_else(|| {
            self.err(
                key,
                "missing: ENABLE_QCN is 1, so every switch port's rate needs KMIN_MAP, KMAX_MAP and PMAX_MAP entries",
            )
        })?;
        let n: usize = match e.values.first() {
            Some(v) => self.parse_num(key, v, "a count")?,
            None => return Err(self.err(key, "expected `n rate1 value1 ... rateN valueN`")),
        };
        if e.values.len() != 1 + 2 * n {
            return Err(self.err(
                key,
                format!(
                    "the count says {n} (rate, value) pairs, so {} numbers must follow it; got {}",
                    2 * n,
                    e.values.len() - 1
                ),
            ));
        }
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let r: u64 = self.parse_num(key, &e.values[1 + 2 * i], "a rate in bits per second")?;
            let v: f64 = self.parse_num(key, &e.values[2 + 2 * i], "a number")?;
            if !(v.is_finite() && v >= 0.0) || r == 0 {
                return Err(self.err(key, format!("bad pair `{} {}`", r, e.values[2 + 2 * i])));
            }
            if out.iter().any(|(x, _)| *x == r) {
                return Err(self.err(key, format!("rate {r} is listed twice")));
            }
            out.push((r, v));
        }
        Ok(out)
    }
}

/// Parses a rate in ns-3's `DataRate` syntax: `"100Gbps"`, `"20Mb/s"`, `"1000Mb/s"`, `"5MBps"`.
pub fn ns3_rate(s: &str) -> Result<Rate, String> {
    let s = s.trim();
    let end = s
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')
        })
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a rate (e.g. 20Mb/s or 100Gbps)"))?;
    let bits: f64 = match unit {
        "" | "bps" | "b/s" => 1.0,
        "kbps" | "Kbps" | "kb/s" | "Kb/s" => 1e3,
        "Mbps" | "Mb/s" => 1e6,
        "Gbps" | "Gb/s" => 1e9,
        "Tbps" | "Tb/s" => 1e12,
        "Bps" | "B/s" => 8.0,
        "KBps" | "kBps" | "KB/s" | "kB/s" => 8e3,
        "MBps" | "MB/s" => 8e6,
        "GBps" | "GB/s" => 8e9,
        u => {
            return Err(format!(
                "unknown rate unit `{u}` in `{s}` (use e.g. Mb/s, Gbps)"
            ))
        }
    };
    let bps = (v * bits).round();
    if !(bps.is_finite() && bps >= 1.0) {
        return Err(format!("rate `{s}` must be positive"));
    }
    Ok(Rate(bps as u64))
}

/// Parses decimal seconds (`"2.000000962"`) into nanoseconds without floating-point error
/// (digits beyond the ninth decimal are rounded).
pub(super) fn seconds_to_ns(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.is_empty() || s.starts_with('-') {
        return None;
    }
    if s.bytes().all(|b| b.is_ascii_digit() || b == b'.') && s.matches('.').count() <= 1 {
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        let int: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
        let mut digits: Vec<u8> = frac.bytes().map(|b| b - b'0').collect();
        let round_up = digits.len() > 9 && digits[9] >= 5;
        digits.resize(9, 0);
        let mut ns = digits.iter().fold(0u64, |a, &d| a * 10 + d as u64);
        if round_up {
            ns += 1;
        }
        return int.checked_mul(1_000_000_000)?.checked_add(ns);
    }
    let v: f64 = s.parse().ok()?;
    (v.is_finite() && v >= 0.0).then(|| (v * 1e9).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns3_rates_and_seconds_parse() {
        assert_eq!(ns3_rate("20Mb/s").unwrap(), Rate(20_000_000));
        assert_eq!(ns3_rate("100Gbps").unwrap(), Rate::gbps(100));
        assert_eq!(ns3_rate("1MBps").unwrap(), Rate(8_000_000));
        assert!(ns3_rate("5 parsecs").is_err());
        assert_eq!(seconds_to_ns("2.000000962"), Some(2_000_000_962));
        assert_eq!(seconds_to_ns("2"), Some(2_000_000_000));
        assert_eq!(seconds_to_ns("0.0000000015"), Some(2));
        assert_eq!(seconds_to_ns("4.00"), Some(4_000_000_000));
        assert_eq!(seconds_to_ns("-1"), None);
    }

    #[test]
    fn unknown_and_repeated_keys_name_the_line() {
        let e = Config::parse("CC_MODE 1\n\n# comment\nBOGUS 2\n", "c.txt")
            .err()
            .unwrap();
        assert_eq!(e.path, "BOGUS");
        assert!(e.message.starts_with("c.txt:4: unknown"), "{e}");
        let e = Config::parse("CC_MODE 1\nCC_MODE 3\n", "c.txt")
            .err()
            .unwrap();
        assert!(
            e.message.contains("c.txt:2") && e.message.contains("also on line 1"),
            "{e}"
        );
    }

    #[test]
    fn getters_apply_defaults_and_name_bad_values() {
        let c = Config::parse("HAS_WIN 2\nU_TARGET abc\nRATE_AI 5Mb/s\n", "c.txt").unwrap();
        assert_eq!(c.uint("MI_THRESH", 5).unwrap(), 5);
        let e = c.flag("HAS_WIN", true).unwrap_err();
        assert!(
            e.message
                .contains("c.txt:1: HAS_WIN: expected 0 or 1, got 2"),
            "{e}"
        );
        let e = c.float("U_TARGET", 0.95).unwrap_err();
        assert!(e.message.contains("`abc` is not a number"), "{e}");
        assert_eq!(c.rate("RATE_AI", None, "").unwrap(), Rate(5_000_000));
        assert_eq!(
            c.rate("MIN_RATE", Some("100Mb/s"), "").unwrap(),
            Rate(100_000_000)
        );
        let e = c.rate("RATE_HAI", None, "the hyper increase").unwrap_err();
        assert!(e.message.contains("missing: the hyper increase"), "{e}");
    }
}
