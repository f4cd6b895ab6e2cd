//! Flow-size distributions given as an empirical CDF table.
//!
//! A [`Cdf`] is a table of `(size_bytes, cumulative_probability)` points. Between two
//! points the distribution is **piecewise-linear in size**: flow sizes are spread
//! uniformly over `[x_{i-1}, x_i]` with probability `F_i - F_{i-1}`. HPCC's
//! `traffic_gen/custom_rand.py`, pFabric's ns-2 code and the CONGA htsim code sample these
//! tables the same way.
//!
//! # The file format
//!
//! One point per line, `size_bytes cumulative_probability`, separated by spaces, tabs or a
//! comma. Blank lines are skipped, and so is everything from a `#` to the end of a line.
//!
//! ```text
//! # WebSearch (DCTCP, SIGCOMM 2010), as in HPCC's WebSearch_distribution.txt
//! 0 0
//! 10000 0.15
//! 20000 0.2
//! ...
//! 30000000 1
//! ```
//!
//! * Sizes and probabilities are both non-decreasing; probabilities lie in `[0, 1]` and the
//!   last one is `1` (within 1e-6).
//! * The same size on two consecutive lines is a *vertical step*: a point mass at that size.
//!   `68 0` then `68 0.0204` means 2.04 % of the flows have exactly 68 B.
//! * Two sizes with the same probability are a *flat step*: no flows in between.
//! * If the first probability is above 0, the table is read as if `(first_size, 0)` came
//!   before it, so that first probability is a point mass at the smallest size. This is the
//!   convention of HomaSimulation's and HomaModule's tables; see the README in
//!   `data/workloads/`.
//!
//! # Bundled distributions
//!
//! The files in `crates/incast-core/data/workloads/` are compiled into the simulator.
//! [`Cdf::bundled`] finds one by its file stem (`"websearch"`, `"fb_hadoop"`, ...; the list
//! is [`Cdf::bundled_names`]) or by an alias (`"web_search"`, `"hadoop"`,
//! `"data_mining"`, `"google_rpc"`, ...; the list is [`Cdf::bundled_aliases`]). The README
//! in that directory records where every table comes from and its mean.
//!
//! # Example
//!
//! ```ignore
//! use incast_core::workload::cdf::Cdf;
//!
//! // A scenario names a bundled distribution or a file next to the scenario file.
//! let cdf = Cdf::load("websearch", scenario_dir)?;
//! assert!((cdf.mean() - 1_711_250.0).abs() < 1.0);
//!
//! // Inverse-transform sampling: u is uniform in [0, 1).
//! let size_bytes: u64 = cdf.sample(rng_uniform_0_1);
//!
//! // Offered load -> flow arrival rate: lambda = load * link_rate_bytes_per_s / cdf.mean().
//! // A fixed size for micro-benchmarks:
//! let incast_chunk = Cdf::fixed(64_000);
//! ```

use std::path::Path;

/// The most points a CDF table may have (2^20): far above any real table, and
/// a bound on what parsing one may allocate (about 40 MB).
pub const MAX_POINTS: usize = 1 << 20;

/// Tolerance on the last probability: it must be within this of 1.
const LAST_PROBABILITY_TOLERANCE: f64 = 1e-6;

/// A flow-size distribution: piecewise-linear in size between (size, cumulative probability) points,
/// the way HPCC's traffic_gen/custom_rand.py samples it.
///
/// Invariants (established by [`Cdf::parse`] and [`Cdf::from_points`]): at least two points;
/// sizes finite, non-negative and non-decreasing; probabilities non-decreasing, the first
/// exactly 0 and the last exactly 1.
#[derive(Clone, Debug)]
pub struct Cdf {
    name: String,
    points: Vec<(f64, f64)>,
    /// Cached [`Cdf::mean`].
    mean: f64,
}

macro_rules! bundled_tables {
    ($($name:literal),* $(,)?) => {
        /// File stems of the bundled tables, sorted.
        const BUNDLED_NAMES: &[&str] = &[$($name),*];
        /// The bundled tables' text, in the order of `BUNDLED_NAMES`.
        const BUNDLED_TEXTS: &[&str] =
            &[$(include_str!(concat!("../../data/workloads/", $name, ".cdf"))),*];
    };
}

// Every `*.cdf` file in `data/workloads/`, sorted by name.
bundled_tables!(
    "alistorage",
    "cachefollower",
    "cachefollower_conweave",
    "datamining",
    "datamining_conweave",
    "datamining_pfabric",
    "enterprise",
    "fb_hadoop",
    "fb_hadoop_homa_w4",
    "fb_hadoop_homasim",
    "google_all_rpc",
    "google_all_rpc_homasim",
    "google_search_rpc",
    "homa_w1",
    "homa_w5",
    "imc10",
    "solar",
    "websearch",
    "websearch_conweave",
    "websearch_pfabric",
    "webserver",
    "webserver_conweave",
);

/// `(alias, bundled name)`, sorted by alias.
const BUNDLED_ALIASES: &[(&str, &str)] = &[
    ("ali_storage", "alistorage"),
    ("alistorage2019", "alistorage"),
    ("cache_follower", "cachefollower"),
    ("data_mining", "datamining"),
    ("google_rpc", "google_all_rpc"),
    ("google_search", "google_search_rpc"),
    ("hadoop", "fb_hadoop"),
    ("homa_w2", "google_search_rpc"),
    ("homa_w3", "google_all_rpc"),
    ("homa_w4", "fb_hadoop_homa_w4"),
    ("solar2022", "solar"),
    ("web_search", "websearch"),
    ("web_server", "webserver"),
];

impl Cdf {
    /// Parses the text format. `origin` (a file path or bundled name) is used in messages.
    /// Errors (returned as String, each naming the origin and the 1-based line number, and saying how to fix it):
    /// not two numbers on a line; a negative size; a probability outside `[0, 1]`; sizes decreasing;
    /// probabilities decreasing ("... is not monotone ..."); fewer than 2 points;
    /// last probability not 1 (within 1e-6).
    /// A first probability above 0 is accepted and read as a point mass at the first size
    /// (`(first_size, 0)` is put in front).
    /// Blank lines and lines starting with '#' are skipped (so is any text after a `#`).
    /// The resulting [`Cdf::name`] is `origin`.
    pub fn parse(text: &str, origin: &str) -> Result<Cdf, String> {
        let mut raw = Vec::new();
        let mut last_line = 0;
        for (index, full_line) in text.lines().enumerate() {
            let line_no = index + 1;
            last_line = line_no;
            let content = match full_line.find('#') {
                Some(hash) => &full_line[..hash],
                None => full_line,
            };
            let content = content.trim();
            if content.is_empty() {
                continue;
            }
            let mut fields = content
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter(|f| !f.is_empty());
            let (size, prob) = match (fields.next(), fields.next(), fields.next()) {
                (Some(a), Some(b), None) => match (a.parse::<f64>(), b.parse::<f64>()) {
                    (Ok(size), Ok(prob)) => (size, prob),
                    _ => {
                        return Err(format!(
                            "{origin}: line {line_no}: expected two numbers \
                             `size_bytes cumulative_probability`, found `{content}`; \
                             write one point per line, e.g. `10000 0.15`"
                        ))
                    }
                },
                _ => {
                    return Err(format!(
                        "{origin}: line {line_no}: expected two numbers \
                         `size_bytes cumulative_probability`, found `{content}`; \
                         write one point per line, e.g. `10000 0.15`"
                    ))
                }
            };
            if raw.len() == MAX_POINTS {
                return Err(format!(
                    "{origin}: line {line_no}: more than {MAX_POINTS} points; a CDF table \
                     needs far fewer (the bundled ones have at most 843): thin it out"
                ));
            }
            raw.push((size, prob, line_no));
        }
        let points = validate(origin, "line", last_line.max(1), raw)?;
        Ok(Cdf::from_valid(origin.to_string(), points))
    }

    /// A bundled CDF by name: the file stem, e.g. "websearch", "datamining", "fb_hadoop", "cachefollower",
    /// "webserver", "enterprise", "google_all_rpc", "google_search_rpc", "alistorage", "homa_w1", "imc10", ...
    /// (every *.cdf file; see [`Cdf::bundled_names`]). Also accepts the aliases of
    /// [`Cdf::bundled_aliases`], e.g. "web_search" -> websearch, "hadoop" -> fb_hadoop,
    /// "data_mining" -> datamining, "google_rpc" -> google_all_rpc.
    /// Matching ignores ASCII case and treats `-` like `_`. The returned CDF is named by its
    /// file stem, also when it was asked for by an alias.
    pub fn bundled(name: &str) -> Option<Cdf> {
        let key: String = name
            .trim()
            .chars()
            .map(|c| {
                if c == '-' {
                    '_'
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect();
        let key = match BUNDLED_ALIASES.binary_search_by(|(alias, _)| (*alias).cmp(key.as_str())) {
            Ok(i) => BUNDLED_ALIASES[i].1,
            Err(_) => key.as_str(),
        };
        let index = BUNDLED_NAMES.binary_search(&key).ok()?;
        let name = BUNDLED_NAMES[index];
        match Cdf::parse(BUNDLED_TEXTS[index], name) {
            Ok(cdf) => Some(cdf),
            // The unit tests parse every bundled table, so this cannot happen in a tested build.
            Err(e) => panic!("bundled CDF table is invalid: {e}"),
        }
    }

    /// The names of the bundled CDFs (the `*.cdf` file stems), sorted.
    pub fn bundled_names() -> &'static [&'static str] {
        BUNDLED_NAMES
    }

    /// The aliases [`Cdf::bundled`] accepts, as `(alias, bundled name)`, sorted by alias.
    pub fn bundled_aliases() -> &'static [(&'static str, &'static str)] {
        BUNDLED_ALIASES
    }

    /// `spec` is a bundled name, or a path to a file (relative paths are joined to `base_dir`).
    /// Error when neither: "unknown CDF `x`: not a bundled name (websearch, ...) and no file at /abs/path".
    /// A bundled name wins over a file of the same name. A CDF read from a file is named by
    /// the file's absolute path, which parse errors also name.
    pub fn load(spec: &str, base_dir: &Path) -> Result<Cdf, String> {
        if let Some(cdf) = Cdf::bundled(spec) {
            return Ok(cdf);
        }
        if spec.trim().is_empty() {
            return Err(format!(
                "empty CDF name: give a bundled name ({}) or a path to a CDF file",
                BUNDLED_NAMES.join(", ")
            ));
        }
        let given = Path::new(spec);
        let path = if given.is_absolute() {
            given.to_path_buf()
        } else {
            base_dir.join(given)
        };
        let shown = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
        if let Err(e) = std::fs::metadata(&path) {
            if e.kind() == std::io::ErrorKind::NotFound {
                return Err(format!(
                    "unknown CDF `{spec}`: not a bundled name ({}) and no file at {}",
                    BUNDLED_NAMES.join(", "),
                    shown.display()
                ));
            }
        }
        // Only a regular file, at most `MAX_INPUT_FILE_BYTES`: not a FIFO, /dev/zero or a
        // directory, and never an unbounded read.
        let text = crate::files::read_input_file(&path, crate::files::MAX_INPUT_FILE_BYTES)
            .map_err(|e| format!("CDF file {e}"))?;
        Cdf::parse(&text, &shown.display().to_string())
    }

    /// Inverse-transform sample for u in `[0, 1)`: find the segment containing u and interpolate linearly in size;
    /// point masses (vertical steps) return that size. Round to the nearest integer byte, at least 1.
    ///
    /// `u` below 0 (or NaN) is taken as 0; `u >= 1` returns the largest size of the support.
    /// O(log n), no allocation.
    #[inline]
    pub fn sample(&self, u: f64) -> u64 {
        let pts = &self.points;
        // `!(u > 0)` also catches NaN.
        let u = if u > 0.0 { u } else { 0.0 };
        // First point whose probability exceeds u. Since pts[0].1 == 0 <= u, i >= 1, and
        // F[i-1] <= u < F[i], so the segment has positive probability.
        let i = pts.partition_point(|p| p.1 <= u);
        let x = if i < pts.len() {
            let (x0, f0) = pts[i - 1];
            let (x1, f1) = pts[i];
            x0 + (x1 - x0) * ((u - f0) / (f1 - f0))
        } else {
            // u >= 1: the smallest size at which F reaches 1 (skips a trailing flat step).
            pts[pts.partition_point(|p| p.1 < 1.0)].0
        };
        let rounded = x.round();
        if rounded < 1.0 {
            1
        } else {
            rounded as u64
        }
    }

    /// Mean of the piecewise-linear distribution: sum over segments of (x_{i-1}+x_i)/2 * (F_i - F_{i-1}).
    ///
    /// This is the mean of the continuous distribution; [`Cdf::sample`]'s rounding to whole
    /// bytes (at least 1) changes it by well under a byte per flow.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// F(x): cumulative probability at size x (piecewise linear), P(size <= x).
    /// Right-continuous at point masses: at a vertical step the upper probability is returned.
    pub fn cdf_at(&self, x: f64) -> f64 {
        let pts = &self.points;
        if x.is_nan() {
            return f64::NAN;
        }
        // Number of points with size <= x; the last of them is the left end of x's segment.
        let j = pts.partition_point(|p| p.0 <= x);
        if j == 0 {
            return 0.0;
        }
        if j == pts.len() {
            return 1.0;
        }
        let (x0, f0) = pts[j - 1];
        let (x1, f1) = pts[j];
        // x0 <= x < x1, so x1 > x0.
        f0 + (f1 - f0) * ((x - x0) / (x1 - x0))
    }

    /// The name: the bundled name, the file path or the `origin`/`name` given when built.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The points `(size_bytes, cumulative_probability)`, after normalization: the first
    /// probability is 0 (a `(first_size, 0)` point is put in front if the table started
    /// above 0) and the last is exactly 1.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// From explicit (size, prob) points (used for fixed sizes and tests); same validation as parse.
    /// Messages name `name` and the 1-based index of the offending point ("point 3").
    pub fn from_points(name: &str, points: Vec<(f64, f64)>) -> Result<Cdf, String> {
        let count = points.len();
        let raw = points
            .into_iter()
            .enumerate()
            .map(|(i, (size, prob))| (size, prob, i + 1))
            .collect();
        let points = validate(name, "point", count.max(1), raw)?;
        Ok(Cdf::from_valid(name.to_string(), points))
    }

    /// A degenerate distribution: every flow has exactly `size` bytes.
    /// It is named `fixed(<size>)`. (`fixed(0)` samples 1 byte, like every size below 1.)
    pub fn fixed(size: u64) -> Cdf {
        let x = size as f64;
        Cdf::from_valid(format!("fixed({size})"), vec![(x, 0.0), (x, 1.0)])
    }

    fn from_valid(name: String, points: Vec<(f64, f64)>) -> Cdf {
        let mean = points
            .windows(2)
            .map(|w| (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1))
            .sum();
        Cdf { name, points, mean }
    }
}

/// Checks `(size, probability, line or point number)` triples and normalizes them (first
/// probability 0, last exactly 1). `unit` is "line" or "point"; `end` is the number used
/// for errors about the table as a whole.
fn validate(
    origin: &str,
    unit: &str,
    end: usize,
    raw: Vec<(f64, f64, usize)>,
) -> Result<Vec<(f64, f64)>, String> {
    let mut previous: Option<(f64, f64, usize)> = None;
    for &(size, prob, n) in &raw {
        if !size.is_finite() || !prob.is_finite() {
            return Err(format!(
                "{origin}: {unit} {n}: size {size} and probability {prob} must both be finite \
                 numbers; write e.g. `10000 0.15`"
            ));
        }
        if size > crate::units::MAX_BYTES as f64 {
            return Err(format!(
                "{origin}: {unit} {n}: size {size} B is above 1 TiB (2^40 bytes), the largest \
                 supported flow; sizes are in bytes"
            ));
        }
        if size < 0.0 {
            return Err(format!(
                "{origin}: {unit} {n}: negative size {size}; flow sizes are in bytes and \
                 must be 0 or more"
            ));
        }
        if !(0.0..=1.0 + LAST_PROBABILITY_TOLERANCE).contains(&prob) {
            let hint = if prob > 1.0 && prob <= 100.0 {
                " (if the table is in percent, divide every probability by 100)"
            } else {
                ""
            };
            return Err(format!(
                "{origin}: {unit} {n}: probability {prob} is outside [0, 1]; the second \
                 number is a cumulative probability{hint}"
            ));
        }
        if let Some((prev_size, prev_prob, prev_n)) = previous {
            if size < prev_size {
                return Err(format!(
                    "{origin}: {unit} {n}: size {size} is smaller than size {prev_size} on \
                     {unit} {prev_n}, so the sizes are not monotone; sort the points by size \
                     (equal sizes are allowed: they make a point mass)"
                ));
            }
            if prob < prev_prob {
                return Err(format!(
                    "{origin}: {unit} {n}: probability {prob} is smaller than probability \
                     {prev_prob} on {unit} {prev_n}, so the CDF is not monotone; cumulative \
                     probabilities must never decrease (check for a typo or a table of \
                     per-bin probabilities instead of cumulative ones)"
                ));
            }
        }
        previous = Some((size, prob, n));
    }
    if raw.len() < 2 {
        return Err(format!(
            "{origin}: {unit} {end}: found {} point(s) but a CDF needs at least 2, e.g. \
             `0 0` and `1000 1` (for a single size use a point mass: `1000 0` and `1000 1`)",
            raw.len()
        ));
    }
    let &(_, last_prob, last_n) = raw.last().expect("at least 2 points");
    if (last_prob - 1.0).abs() > LAST_PROBABILITY_TOLERANCE {
        return Err(format!(
            "{origin}: {unit} {last_n}: the last probability is {last_prob} but a CDF must \
             end at probability 1; add a last point `<largest size> 1` (or rescale the \
             probabilities if the table is in percent)"
        ));
    }
    let mut points = Vec::with_capacity(raw.len() + 1);
    if raw[0].1 > 0.0 {
        // Point-mass convention: the first probability is the mass at the smallest size.
        points.push((raw[0].0, 0.0));
    }
    points.extend(raw.iter().map(|&(size, prob, _)| (size, prob.min(1.0))));
    if let Some(last) = points.last_mut() {
        last.1 = 1.0;
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's statistics table: (file stem, points, min B, max B, linear mean B,
    /// step mean B, P(<100KB)). Copied from `data/workloads/README.md`.
    #[allow(clippy::type_complexity)]
    #[rustfmt::skip]
    const README_TABLE: &[(&str, usize, f64, f64, f64, f64, f64)] = &[
        ("websearch", 12, 0.0, 30_000_000.0, 1_711_250.0, 2_434_900.0, 0.5417),
        ("websearch_pfabric", 12, 8_760.0, 29_200_000.0, 1_665_831.0, 2_369_492.0, 0.5436),
        ("websearch_conweave", 12, 9_000.0, 30_000_000.0, 1_710_004.0, 2_433_055.0, 0.5429),
        ("homa_w5", 401, 1_430.0, 29_400_000.0, 2_527_952.0, 2_564_690.0, 0.5431),
        ("datamining", 13, 0.0, 1_000_000_000.0, 12_658_199.0, 23_199_799.0, 0.8231),
        ("datamining_pfabric", 9, 1_460.0, 973_333_820.0, 7_470_236.0, 13_821_966.0, 0.8237),
        ("datamining_conweave", 7, 100.0, 1_000_000_000.0, 7_487_884.0, 13_827_793.0, 0.8218),
        ("fb_hadoop", 20, 0.0, 10_000_000.0, 120_421.0, 183_897.0, 0.8850),
        ("fb_hadoop_homa_w4", 461, 0.0, 10_000_000.0, 121_849.0, 127_797.0, 0.8870),
        ("fb_hadoop_homasim", 47, 92.0, 10_000_000.0, 134_854.0, 194_331.0, 0.8868),
        ("cachefollower", 67, 68.0, 3_837_698.0, 687_658.0, 718_205.0, 0.5327),
        ("cachefollower_conweave", 23, 70.0, 3_000_000.0, 712_574.0, 802_942.0, 0.5200),
        ("webserver", 45, 84.0, 1_000_000.0, 62_483.0, 68_937.0, 0.8148),
        ("webserver_conweave", 13, 150.0, 500_000.0, 66_121.0, 85_870.0, 0.8089),
        ("enterprise", 137, 250.0, 1_773_379_248.0, 216_304.0, 255_034.0, 0.9416),
        ("imc10", 12, 1_460.0, 3_076_220.0, 195_357.0, 269_334.0, 0.8236),
        ("google_search_rpc", 156, 1.0, 3_529_904.0, 423.0, 441.0, 0.9997),
        ("google_all_rpc", 843, 0.0, 15_158_197.0, 2_892.0, 2_929.0, 0.9959),
        ("google_all_rpc_homasim", 126, 1.0, 12_158_197.0, 864.0, 1_001.0, 0.9988),
        ("homa_w1", 307, 8.0, 100_000.0, 186.0, 189.0, 1.0000),
        ("alistorage", 9, 0.0, 2_000_000.0, 40_870.0, 67_050.0, 0.9535),
        ("solar", 8, 0.0, 262_144.0, 39_424.0, 47_104.0, 0.9588),
    ];

    /// Mean when each table point is taken as a discrete value (the README's "step" mean).
    fn step_mean(cdf: &Cdf) -> f64 {
        cdf.points()
            .windows(2)
            .map(|w| w[1].0 * (w[1].1 - w[0].1))
            .sum()
    }

    /// Tolerance for a mean printed as a whole number: 0.1 % relative, but never below the
    /// 0.5 B of the README's rounding to an integer.
    fn mean_tolerance(published: f64) -> f64 {
        (published * 1e-3).max(0.5)
    }

    /// xorshift64* uniform in [0, 1).
    struct Rng(u64);
    impl Rng {
        fn next_f64(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let r = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
            (r >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    fn parse_err(text: &str) -> String {
        match Cdf::parse(text, "test.cdf") {
            Ok(cdf) => panic!("expected an error, parsed {:?}", cdf.points()),
            Err(e) => e,
        }
    }

    fn assert_err(text: &str, line: usize, phrase: &str) {
        let e = parse_err(text);
        assert!(e.contains("test.cdf"), "no origin in: {e}");
        assert!(
            e.contains(&format!("line {line}:")),
            "no `line {line}:` in: {e}"
        );
        assert!(e.contains(phrase), "no `{phrase}` in: {e}");
    }

    #[test]
    fn bundled_names_are_sorted_and_match_the_readme_table() {
        let names = Cdf::bundled_names();
        assert!(names.windows(2).all(|w| w[0] < w[1]), "{names:?}");
        let mut table: Vec<&str> = README_TABLE.iter().map(|r| r.0).collect();
        table.sort_unstable();
        assert_eq!(names, table.as_slice());
        // The README shipped with the data lists the same files.
        let readme = include_str!("../../data/workloads/README.md");
        let mut listed: Vec<&str> = readme
            .lines()
            .filter_map(|l| l.strip_prefix("| "))
            .filter_map(|l| l.split_once(".cdf |"))
            .map(|(stem, _)| stem)
            .collect();
        listed.sort_unstable();
        listed.dedup();
        assert_eq!(names, listed.as_slice());
        assert!(BUNDLED_ALIASES.windows(2).all(|w| w[0].0 < w[1].0));
        for (alias, target) in BUNDLED_ALIASES {
            assert!(names.contains(target), "alias {alias} -> {target}");
            assert!(!names.contains(alias), "alias {alias} shadows a file");
        }
    }

    #[test]
    fn every_cdf_file_in_the_data_directory_is_bundled() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/workloads");
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
        let mut stems: Vec<String> = entries
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter_map(|file| file.strip_suffix(".cdf").map(str::to_string))
            .collect();
        stems.sort_unstable();
        assert_eq!(Cdf::bundled_names(), stems.as_slice());
        for stem in &stems {
            let text = std::fs::read_to_string(dir.join(format!("{stem}.cdf"))).unwrap();
            assert_eq!(
                text,
                BUNDLED_TEXTS[BUNDLED_NAMES.binary_search(&stem.as_str()).unwrap()]
            );
        }
    }

    #[test]
    fn every_bundled_cdf_matches_the_readme_statistics() {
        for &(name, n, min, max, mean, step, p100k) in README_TABLE {
            let cdf = Cdf::bundled(name).unwrap_or_else(|| panic!("{name} not bundled"));
            assert_eq!(cdf.name(), name);
            let pts = cdf.points();
            assert_eq!(pts.len(), n, "{name}: points");
            assert_eq!(pts[0].0, min, "{name}: min");
            assert_eq!(pts[n - 1].0, max, "{name}: max");
            assert_eq!(pts[0].1, 0.0);
            assert_eq!(pts[n - 1].1, 1.0);
            let m = cdf.mean();
            assert!(
                (m - mean).abs() <= mean_tolerance(mean),
                "{name}: linear mean {m} vs README {mean}"
            );
            let s = step_mean(&cdf);
            assert!(
                (s - step).abs() <= mean_tolerance(step),
                "{name}: step mean {s} vs README {step}"
            );
            let p = cdf.cdf_at(100_000.0);
            assert!(
                (p - p100k).abs() <= 5e-5 + 1e-9,
                "{name}: P(<100KB) {p} vs README {p100k}"
            );
        }
    }

    #[test]
    fn aliases_and_case() {
        for (alias, target) in [
            ("web_search", "websearch"),
            ("hadoop", "fb_hadoop"),
            ("data_mining", "datamining"),
            ("google_rpc", "google_all_rpc"),
            ("homa_w4", "fb_hadoop_homa_w4"),
            ("WebSearch", "websearch"),
            ("fb-hadoop", "fb_hadoop"),
        ] {
            let cdf = Cdf::bundled(alias).unwrap_or_else(|| panic!("{alias}"));
            assert_eq!(cdf.name(), target);
        }
        assert!(Cdf::bundled("nonesuch").is_none());
        assert!(Cdf::bundled("websearch.cdf").is_none());
    }

    #[test]
    fn websearch_monte_carlo() {
        let cdf = Cdf::bundled("websearch").unwrap();
        let n = 200_000;
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let checks = [10_000.0, 100_000.0, 1_000_000.0];
        let mut below = [0usize; 3];
        let mut sum = 0.0;
        for _ in 0..n {
            let s = cdf.sample(rng.next_f64());
            sum += s as f64;
            for (count, &x) in below.iter_mut().zip(&checks) {
                if s as f64 <= x {
                    *count += 1;
                }
            }
        }
        let emp_mean = sum / n as f64;
        let rel = (emp_mean - cdf.mean()).abs() / cdf.mean();
        assert!(rel < 0.015, "empirical mean {emp_mean} vs {}", cdf.mean());
        for (&count, &x) in below.iter().zip(&checks) {
            let emp = count as f64 / n as f64;
            let f = cdf.cdf_at(x);
            assert!((emp - f).abs() < 0.01, "F({x}): empirical {emp} vs {f}");
        }
        // Sanity check of the check sizes: they sit inside the distribution.
        assert!((cdf.cdf_at(10_000.0) - 0.15).abs() < 1e-12);
    }

    #[test]
    fn stratified_samples_reproduce_the_mean() {
        // u_i = (i + 0.5) / n is a midpoint rule for the quantile function, so the sample
        // mean converges to mean() much faster than Monte-Carlo.
        for name in ["websearch", "datamining", "fb_hadoop", "solar", "homa_w1"] {
            let cdf = Cdf::bundled(name).unwrap();
            let n = 1_000_000;
            let sum: f64 = (0..n)
                .map(|i| cdf.sample((i as f64 + 0.5) / n as f64) as f64)
                .sum();
            let emp = sum / n as f64;
            let rel = (emp - cdf.mean()).abs() / cdf.mean();
            assert!(rel < 2e-3, "{name}: {emp} vs {}", cdf.mean());
        }
    }

    #[test]
    fn sample_interpolates_linearly() {
        let cdf = Cdf::parse("0 0\n100 0.5\n300 1\n", "t").unwrap();
        assert_eq!(cdf.sample(0.25), 50);
        assert_eq!(cdf.sample(0.5), 100);
        assert_eq!(cdf.sample(0.75), 200);
        assert_eq!(cdf.sample(0.0), 1, "at least one byte");
        assert_eq!(cdf.sample(-1.0), 1);
        assert_eq!(cdf.sample(f64::NAN), 1);
        assert_eq!(cdf.sample(0.999_999_9), 300);
        assert_eq!(cdf.sample(1.0), 300);
        assert_eq!(cdf.mean(), 25.0 + 100.0);
        assert_eq!(cdf.cdf_at(-5.0), 0.0);
        assert_eq!(cdf.cdf_at(50.0), 0.25);
        assert_eq!(cdf.cdf_at(200.0), 0.75);
        assert_eq!(cdf.cdf_at(300.0), 1.0);
        assert_eq!(cdf.cdf_at(1e12), 1.0);
    }

    #[test]
    fn point_masses() {
        let cdf = Cdf::parse("68 0\n68 0.3\n1000 1\n", "t").unwrap();
        for u in [0.0, 0.1, 0.2, 0.299_999] {
            assert_eq!(cdf.sample(u), 68, "u = {u}");
        }
        assert!(cdf.sample(0.31) > 68);
        assert_eq!(cdf.sample(0.65), 534);
        assert_eq!(cdf.cdf_at(67.9), 0.0);
        assert_eq!(cdf.cdf_at(68.0), 0.3, "right-continuous at the mass");
        assert!((cdf.mean() - (68.0 * 0.3 + 534.0 * 0.7)).abs() < 1e-9);

        // A first probability above 0 is a point mass at the first size.
        let implicit = Cdf::parse("68 0.3\n1000 1\n", "t").unwrap();
        assert_eq!(implicit.points(), cdf.points());
        assert_eq!(implicit.sample(0.2), 68);

        // CacheFollower: 2.04 % of flows are exactly 68 B (`68 0` then `68 0.0204`).
        let cache = Cdf::bundled("cachefollower").unwrap();
        assert_eq!(cache.sample(0.0), 68);
        assert_eq!(cache.sample(0.0203), 68);
        assert!(cache.sample(0.03) > 68);

        // A mass in the middle and a flat step.
        let mid = Cdf::parse("0 0\n100 0.2\n100 0.6\n500 0.6\n900 1\n", "t").unwrap();
        assert_eq!(mid.sample(0.3), 100);
        assert_eq!(mid.sample(0.599), 100);
        assert_eq!(mid.sample(0.6), 500, "the flat step 100..500 has no flows");
        assert_eq!(mid.sample(0.8), 700);
        assert_eq!(mid.cdf_at(300.0), 0.6);
    }

    #[test]
    fn fixed_sizes() {
        let cdf = Cdf::fixed(64_000);
        assert_eq!(cdf.name(), "fixed(64000)");
        assert_eq!(cdf.mean(), 64_000.0);
        for u in [0.0, 0.3, 0.999, 1.0] {
            assert_eq!(cdf.sample(u), 64_000);
        }
        assert_eq!(cdf.cdf_at(63_999.0), 0.0);
        assert_eq!(cdf.cdf_at(64_000.0), 1.0);
        assert_eq!(Cdf::fixed(0).sample(0.5), 1);
    }

    #[test]
    fn comments_blank_lines_and_separators() {
        let text = "# header\n\n  0 0  \n# mid\n1000\t0.5 # trailing comment\n2000,1\n\n";
        let cdf = Cdf::parse(text, "t").unwrap();
        assert_eq!(cdf.points(), &[(0.0, 0.0), (1000.0, 0.5), (2000.0, 1.0)]);
        assert_eq!(cdf.name(), "t");
        // The last probability may be off by rounding; it is stored as exactly 1.
        let cdf = Cdf::parse("0 0\n10 0.9999995\n", "t").unwrap();
        assert_eq!(cdf.points()[1].1, 1.0);
    }

    #[test]
    fn parse_errors_name_line_and_problem() {
        assert_err("0 0\nabc 0.5\n100 1\n", 2, "expected two numbers");
        assert_err("0 0\n100\n", 2, "expected two numbers");
        assert_err("0 0\n100 0.5 7\n200 1\n", 2, "expected two numbers");
        assert_err("# c\n\n-5 0\n100 1\n", 3, "negative size");
        assert_err("0 0\n100 1.5\n", 2, "outside [0, 1]");
        assert_err("0 0\n100 -0.1\n200 1\n", 2, "outside [0, 1]");
        assert_err(
            "0 0\n100 50\n200 100\n",
            2,
            "divide every probability by 100",
        );
        assert_err("0 0\n100 0.5\n50 1\n", 3, "sizes are not monotone");
        assert_err("0 0\n100 0.5\n200 0.4\n300 1\n", 3, "not monotone");
        assert_err("0 0\n100 0.5\n200 0.4\n300 1\n", 3, "probability 0.4");
        assert_err("# only\n100 1\n", 2, "at least 2");
        assert_err("", 1, "at least 2");
        assert_err("0 0\n100 0.5\n200 0.9\n", 3, "must end at probability 1");
        assert_err("0 0\ninf 1\n", 2, "finite");
        assert_err("0 0\n100 NaN\n", 2, "finite");
    }

    #[test]
    fn from_points_validates_like_parse() {
        let cdf = Cdf::from_points("mine", vec![(0.0, 0.0), (10.0, 1.0)]).unwrap();
        assert_eq!(cdf.name(), "mine");
        assert_eq!(cdf.mean(), 5.0);
        let e = Cdf::from_points("mine", vec![(0.0, 0.0), (10.0, 0.6), (20.0, 0.5)]).unwrap_err();
        assert!(
            e.contains("mine") && e.contains("point 3") && e.contains("not monotone"),
            "{e}"
        );
        let e = Cdf::from_points("mine", vec![(5.0, 1.0)]).unwrap_err();
        assert!(e.contains("at least 2"), "{e}");
        let e = Cdf::from_points("mine", vec![(0.0, 0.0), (5.0, 0.5)]).unwrap_err();
        assert!(e.contains("point 2") && e.contains("probability 1"), "{e}");
    }

    #[test]
    fn load_bundled_alias_file_and_unknown() {
        let dir = std::env::temp_dir().join(format!("incast-cdf-test-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();

        assert_eq!(Cdf::load("websearch", &dir).unwrap().name(), "websearch");
        assert_eq!(Cdf::load("hadoop", &dir).unwrap().name(), "fb_hadoop");

        std::fs::write(
            dir.join("sub/mine.cdf"),
            "# my workload\n100 0\n100 0.5\n300 1\n",
        )
        .unwrap();
        let cdf = Cdf::load("sub/mine.cdf", &dir).unwrap();
        assert_eq!(cdf.mean(), 100.0 * 0.5 + 200.0 * 0.5);
        assert!(cdf.name().ends_with("mine.cdf"), "{}", cdf.name());
        let abs = dir.join("sub/mine.cdf");
        let cdf = Cdf::load(abs.to_str().unwrap(), Path::new("/nonexistent")).unwrap();
        assert_eq!(cdf.sample(0.25), 100);

        // A file that exists but is malformed: the error names the file and the line.
        std::fs::write(dir.join("bad.cdf"), "0 0\n10 0.5\n5 1\n").unwrap();
        let e = Cdf::load("bad.cdf", &dir).unwrap_err();
        assert!(
            e.contains("bad.cdf") && e.contains("line 3") && e.contains("not monotone"),
            "{e}"
        );

        let e = Cdf::load("nonesuch", &dir).unwrap_err();
        assert!(
            e.starts_with("unknown CDF `nonesuch`: not a bundled name ("),
            "{e}"
        );
        for name in Cdf::bundled_names() {
            assert!(e.contains(name), "{name} missing from: {e}");
        }
        let expected_path = std::path::absolute(dir.join("nonesuch")).unwrap();
        assert!(
            e.ends_with(&format!("no file at {}", expected_path.display())),
            "{e}"
        );

        assert!(Cdf::load("", &dir).unwrap_err().contains("empty CDF name"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
