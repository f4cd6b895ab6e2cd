//! Units: time in integer picoseconds, sizes in bytes, rates in bits per second.
//!
//! Every quantity inside the simulator is an integer so that runs are exact and
//! reproducible. Time is a plain `u64` count of picoseconds ([`Ps`]); 2^64 ps is
//! about 213 days of simulated time. Rates are [`Rate`] (bits per second) with
//! the conversion that matters most, [`Rate::tx_time`]: how long `n` bytes take
//! to serialize.
//!
//! ```
//! use incast_core::units::*;
//! let r = Rate::gbps(100);
//! assert_eq!(r.tx_time(1500), 120 * NS);       // 1500 B at 100 Gb/s = 120 ns
//! assert_eq!(parse_time("2.5us").unwrap(), 2_500_000);
//! assert_eq!(parse_rate("40Gbps").unwrap(), Rate::gbps(40));
//! assert_eq!(parse_bytes("64KiB").unwrap(), 65_536);
//! ```

use std::fmt;

/// Simulated time (or a duration) in picoseconds.
pub type Ps = u64;
/// A size in bytes.
pub type Bytes = u64;

pub const PS: Ps = 1;
pub const NS: Ps = 1_000;
pub const US: Ps = 1_000_000;
pub const MS: Ps = 1_000_000_000;
pub const SEC: Ps = 1_000_000_000_000;

/// The longest time a scenario may give: 2^62 ps, about 53 days. Any two
/// such times add up without overflowing a [`Ps`], which is what the
/// simulation does with them (`now + timeout`).
pub const MAX_TIME: Ps = 1 << 62;
/// The largest size a scenario may give: 1 TiB (2^40 bytes), far above any
/// buffer or flow, so that sums of sizes (an incast of up to 2^20 senders,
/// counters of many flows) never overflow a [`Bytes`].
pub const MAX_BYTES: Bytes = 1 << 40;
/// The fastest rate a scenario may give: 100 Tb/s.
pub const MAX_RATE: u64 = 100_000_000_000_000;

/// Converts picoseconds to (floating) microseconds, for reports only.
pub fn ps_to_us(t: Ps) -> f64 {
    t as f64 / US as f64
}

/// Converts picoseconds to (floating) seconds, for reports only.
pub fn ps_to_sec(t: Ps) -> f64 {
    t as f64 / SEC as f64
}

/// A link or sending rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn bps(b: u64) -> Rate {
        Rate(b)
    }
    pub const fn mbps(m: u64) -> Rate {
        Rate(m * 1_000_000)
    }
    pub const fn gbps(g: u64) -> Rate {
        Rate(g * 1_000_000_000)
    }
    pub fn bits_per_sec(self) -> u64 {
        self.0
    }
    /// Serialization time of `bytes` at this rate, rounded up to a whole picosecond.
    /// Exact (no rounding) for every rate that divides 8e12, e.g. 1, 10, 25, 40, 100, 400 Gb/s.
    #[inline]
    pub fn tx_time(self, bytes: Bytes) -> Ps {
        debug_assert!(self.0 > 0);
        let num = bytes as u128 * 8 * SEC as u128;
        num.div_ceil(self.0 as u128) as Ps
    }
    /// Picoseconds per byte when that is a whole number (e.g. 80 at 100 Gb/s), else `None`.
    pub fn exact_ps_per_byte(self) -> Option<Ps> {
        let num = 8 * SEC;
        (self.0 > 0 && num % self.0 == 0).then(|| num / self.0)
    }
    /// Bytes that this rate carries in `t` picoseconds (rounded down).
    pub fn bytes_in(self, t: Ps) -> Bytes {
        (self.0 as u128 * t as u128 / (8 * SEC as u128)) as Bytes
    }
    /// Picoseconds per byte as a float, for reports and fluid formulas.
    pub fn ps_per_byte(self) -> f64 {
        8.0 * SEC as f64 / self.0 as f64
    }
}

/// How ns-3 (and so the HPCC simulator) turns a transmission at `bits_per_sec`
/// into simulated time: `DataRate::CalculateTxTime` gives seconds as a double
/// (`bytes * 8 / bps`), and `Seconds(double)` makes a `Time` of it at the
/// default 1 ns resolution through `int64x64_t` (nstime.h `FromDouble`,
/// int64x64-128.h): the fraction is truncated to 64 bits, multiplied by 10^9
/// and the integer part kept. So a duration is truncated to whole nanoseconds:
/// 1048 bytes at 100 Gb/s take 83 ns in ns-3 where they take 83.84 ns.
pub fn ns3_tx_time(bytes: u64, bits_per_sec: f64) -> Ps {
    debug_assert!(bits_per_sec > 0.0);
    let seconds = (bytes * 8) as f64 / bits_per_sec;
    let whole = seconds.floor();
    // `(value - hi) * HP128_MAX_64` then a cast: the 64-bit fraction, truncated.
    let fraction = ((seconds - whole) * 18_446_744_073_709_551_615.0) as u128;
    // Times 10^9 (`Time::From`, `timeFrom` of seconds at ns resolution), `GetHigh`.
    let ns = whole as u128 * 1_000_000_000 + ((fraction * 1_000_000_000) >> 64);
    ns as Ps * NS
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b % 1_000_000_000 == 0 {
            write!(f, "{}Gbps", b / 1_000_000_000)
        } else if b % 1_000_000 == 0 {
            write!(f, "{}Mbps", b / 1_000_000)
        } else {
            write!(f, "{b}bps")
        }
    }
}

fn split_number(s: &str) -> Result<(f64, &str), String> {
    let s = s.trim();
    let end = s
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')
        })
        .unwrap_or(s.len());
    // Allow "1e6" but not the 'e' that starts a unit; none of our units start with 'e'.
    let (num, unit) = s.split_at(end);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` does not start with a number"))?;
    if !v.is_finite() {
        return Err(format!("`{s}` is not a finite number"));
    }
    if v < 0.0 {
        return Err(format!("`{s}` is negative; it must be zero or more"));
    }
    Ok((v, unit.trim()))
}

/// `v` as a whole number of `what`: a float a hair off a whole number (1e-6
/// relative, such as `0.1us` = 100000.00000000001 ps) is that number; any
/// other fraction is an error, and so is a positive value below one unit
/// (`1e-9ps` is refused like `0.4ps`, not rounded to 0).
fn to_integer(v: f64, what: &str, s: &str) -> Result<u64, String> {
    let r = v.round();
    if v > 0.0 && r < 1.0 {
        let one = match what {
            "picoseconds" => "one picosecond, the clock's resolution",
            "bytes" => "one byte",
            _ => "one bit per second",
        };
        return Err(format!(
            "`{s}` is less than {one}: write 0 or at least that"
        ));
    }
    if (v - r).abs() > 1e-6 * v.abs().max(1.0) {
        return Err(format!("`{s}` is not a whole number of {what}"));
    }
    if r > u64::MAX as f64 {
        return Err(format!("`{s}` is too large"));
    }
    Ok(r as u64)
}

/// Parses a time such as `"10us"`, `"1.5ms"`, `"200ns"`, `"3s"`, `"500ps"` into picoseconds.
pub fn parse_time(s: &str) -> Result<Ps, String> {
    let (v, unit) = split_number(s)?;
    let mult = match unit {
        "ps" => PS,
        "ns" => NS,
        "us" | "µs" => US,
        "ms" => MS,
        "s" => SEC,
        "" => {
            return Err(format!(
                "time `{s}` has no unit; write e.g. \"10us\" (units: ps, ns, us, ms, s)"
            ))
        }
        u => {
            return Err(format!(
                "unknown time unit `{u}` in `{s}`; use ps, ns, us, ms or s"
            ))
        }
    };
    let ps = to_integer(v * mult as f64, "picoseconds", s)?;
    if ps > MAX_TIME {
        return Err(format!(
            "`{s}` is too long: at most 2^62 ps (about 53 days) of simulated time"
        ));
    }
    Ok(ps)
}

/// Parses a rate such as `"100Gbps"`, `"40G"`, `"500Mbps"` into a [`Rate`].
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let (v, unit) = split_number(s)?;
    let mult: u64 = match unit {
        "bps" => 1,
        "Kbps" | "kbps" | "K" | "k" => 1_000,
        "Mbps" | "M" => 1_000_000,
        "Gbps" | "G" => 1_000_000_000,
        "Tbps" | "T" => 1_000_000_000_000,
        "" => {
            return Err(format!(
            "rate `{s}` has no unit; write e.g. \"100Gbps\" (units: bps, Kbps, Mbps, Gbps, Tbps)"
        ))
        }
        u => {
            return Err(format!(
                "unknown rate unit `{u}` in `{s}`; use bps, Kbps, Mbps, Gbps or Tbps"
            ))
        }
    };
    let bps = to_integer(v * mult as f64, "bits per second", s)?;
    if bps == 0 {
        return Err(format!("rate `{s}` is zero; it must be positive"));
    }
    if bps > MAX_RATE {
        return Err(format!(
            "rate `{s}` is above 100Tbps, the largest supported"
        ));
    }
    Ok(Rate(bps))
}

/// Parses a size such as `"1500B"`, `"64KB"`, `"12MB"`, `"2MiB"` into bytes (KB = 1000 B, KiB = 1024 B).
pub fn parse_bytes(s: &str) -> Result<Bytes, String> {
    let (v, unit) = split_number(s)?;
    let mult: u64 = match unit {
        "B" | "" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        u => {
            return Err(format!(
                "unknown size unit `{u}` in `{s}`; use B, KB, MB, GB, KiB, MiB or GiB"
            ))
        }
    };
    let b = to_integer(v * mult as f64, "bytes", s)?;
    if b > MAX_BYTES {
        return Err(format!(
            "`{s}` is above 1TiB (2^40 bytes), the largest supported size"
        ));
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ns-3's durations, worked out from its arithmetic (`ns3_tx_time`'s
    /// doc) and matching the HPCC simulator's runs: 1048-byte packets at
    /// 100 Gb/s leave every 83 ns, 1000-byte ones every 79 ns (the double
    /// nearest 8e-8 s is below it, so a whole number of ns loses one), as a
    /// 10 MB flow with a 952-byte payload shows there (833 922 ns, against
    /// 844 430 ns at 80 ns a packet).
    #[test]
    fn ns3_truncates_to_whole_nanoseconds() {
        let gbps = |g: f64| g * 1e9;
        for (bytes, bps, ns) in [
            (1048u64, gbps(100.0), 83),
            (1000, gbps(100.0), 79),
            (60, gbps(100.0), 4),
            (1048, gbps(400.0), 20),
            (1500, gbps(10.0), 1199),
            (9000, gbps(25.0), 2879),
            (1, gbps(100.0), 0),
            (1_250_000_000, gbps(10.0), 1_000_000_000),
        ] {
            assert_eq!(ns3_tx_time(bytes, bps), ns * NS, "{bytes} B at {bps} b/s");
            // Never longer than the exact time, and short of it by at most 1 ns.
            let exact = Rate::bps(bps as u64).tx_time(bytes);
            assert!(ns3_tx_time(bytes, bps) <= exact && exact <= ns3_tx_time(bytes, bps) + NS);
        }
    }

    #[test]
    fn tx_times_are_exact_at_common_rates() {
        assert_eq!(Rate::gbps(100).tx_time(1), 80);
        assert_eq!(Rate::gbps(400).tx_time(1), 20);
        assert_eq!(Rate::gbps(40).tx_time(1000), 200 * NS);
        assert_eq!(Rate::gbps(25).tx_time(1), 320);
        assert_eq!(Rate::gbps(10).tx_time(1500), 1200 * NS);
        assert_eq!(Rate::gbps(1).tx_time(1500), 12 * US);
        // 3 bits/s does not divide: rounds up
        assert_eq!(Rate(3).tx_time(1), 2_666_666_666_667);
    }

    #[test]
    fn parses_units_and_rejects_bad_input() {
        assert_eq!(parse_time("1us").unwrap(), US);
        assert_eq!(parse_time("0.5 ns").unwrap(), 500);
        assert!(parse_time("10").unwrap_err().contains("no unit"));
        assert!(parse_time("-1us").unwrap_err().contains("negative"));
        assert!(parse_time("10 parsecs")
            .unwrap_err()
            .contains("unknown time unit"));
        assert!(parse_time("1.5ps").unwrap_err().contains("whole number"));
        // Below one picosecond is refused however small (it used to round to 0).
        for tiny in ["0.1ps", "0.4ps", "1e-7ps", "1e-9ps", "1e-300ns"] {
            assert!(
                parse_time(tiny)
                    .unwrap_err()
                    .contains("less than one picosecond"),
                "{tiny}"
            );
        }
        assert!(parse_bytes("1e-9B").unwrap_err().contains("less than one"));
        assert_eq!(parse_time("0ps").unwrap(), 0);
        assert_eq!(parse_time("0.1us").unwrap(), 100_000);
        assert_eq!(parse_time("1.0000001ps").unwrap(), 1);
        // Bounds that keep sums of values from overflowing.
        assert_eq!(parse_time("4611686018427387904ps").unwrap(), MAX_TIME);
        assert!(parse_time("4.7e18ps").unwrap_err().contains("too long"));
        assert!(parse_time("60days").is_err());
        assert_eq!(parse_bytes("1099511627776").unwrap(), MAX_BYTES);
        assert!(parse_bytes("1099511627777").unwrap_err().contains("1TiB"));
        assert!(parse_rate("101Tbps").unwrap_err().contains("100Tbps"));
        assert_eq!(parse_rate("100Gbps").unwrap(), Rate::gbps(100));
        assert_eq!(parse_rate("2.5G").unwrap(), Rate(2_500_000_000));
        assert!(parse_rate("0Gbps").unwrap_err().contains("zero"));
        assert!(parse_rate("-5Gbps").unwrap_err().contains("negative"));
        assert_eq!(parse_bytes("12MB").unwrap(), 12_000_000);
        assert_eq!(parse_bytes("1KiB").unwrap(), 1024);
        assert_eq!(parse_bytes("1500").unwrap(), 1500);
        assert_eq!(Rate::gbps(100).bytes_in(US), 12_500);
    }
}
