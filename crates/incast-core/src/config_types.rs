//! Value types used in scenario files: times, rates and sizes written with units.
//!
//! In a scenario file a time is a string with a unit (`"10us"`), a rate is a
//! string with a unit (`"100Gbps"`), and a size is a string with a unit
//! (`"12MB"`) or a plain integer number of bytes. A value without a unit where
//! one is required, a negative value or an unknown unit is rejected with a
//! message that says what to write instead.

use crate::units::{self, Bytes, Ps, Rate};
use schemars::gen::SchemaGenerator;
use schemars::schema::{
    InstanceType, Metadata, Schema, SchemaObject, StringValidation, SubschemaValidation,
};
use schemars::JsonSchema;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

fn string_schema(name: &str, pattern: &str, description: &str, examples: &[&str]) -> Schema {
    SchemaObject {
        instance_type: Some(InstanceType::String.into()),
        string: Some(Box::new(StringValidation {
            pattern: Some(pattern.to_string()),
            ..Default::default()
        })),
        metadata: Some(Box::new(Metadata {
            title: Some(name.to_string()),
            description: Some(description.to_string()),
            examples: examples
                .iter()
                .map(|e| serde_json::Value::String(e.to_string()))
                .collect(),
            ..Default::default()
        })),
        ..Default::default()
    }
    .into()
}

/// A time or duration, written with a unit: `"10us"`, `"1.5ms"`, `"200ns"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TimeValue(pub Ps);

/// A rate, written with a unit: `"100Gbps"`, `"40G"`, `"500Mbps"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct RateValue(pub Rate);

/// A size in bytes: an integer, or a string with a unit: `"64KB"`, `"12MB"`, `"2MiB"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SizeValue(pub Bytes);

impl TimeValue {
    pub fn ps(self) -> Ps {
        self.0
    }
}
impl RateValue {
    pub fn rate(self) -> Rate {
        self.0
    }
}
impl SizeValue {
    pub fn bytes(self) -> Bytes {
        self.0
    }
}

fn format_time(t: Ps) -> String {
    for (unit, m) in [
        ("s", units::SEC),
        ("ms", units::MS),
        ("us", units::US),
        ("ns", units::NS),
    ] {
        if t >= m && t % m == 0 {
            return format!("{}{}", t / m, unit);
        }
    }
    format!("{t}ps")
}

impl fmt::Display for TimeValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_time(self.0))
    }
}

impl Serialize for TimeValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_time(self.0))
    }
}
impl Serialize for RateValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_string())
    }
}
impl Serialize for SizeValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

struct StrVisitor<F> {
    expecting: &'static str,
    parse: F,
    allow_int: bool,
}

impl<'de, T, F: Fn(&str) -> Result<T, String>> Visitor<'de> for StrVisitor<F> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse)(v).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        if self.allow_int {
            (self.parse)(&v.to_string()).map_err(E::custom)
        } else {
            Err(E::custom(format!(
                "{v} has no unit; expected {}",
                self.expecting
            )))
        }
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        if v < 0 {
            return Err(E::custom(format!(
                "{v} is negative; expected {}",
                self.expecting
            )));
        }
        self.visit_u64(v as u64)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        if v < 0.0 {
            return Err(E::custom(format!(
                "{v} is negative; expected {}",
                self.expecting
            )));
        }
        Err(E::custom(format!(
            "{v} has no unit; expected {}",
            self.expecting
        )))
    }
}

impl<'de> Deserialize<'de> for TimeValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrVisitor {
            expecting: "a time with a unit, such as \"10us\" (ps, ns, us, ms, s)",
            parse: |s: &str| units::parse_time(s).map(TimeValue),
            allow_int: false,
        })
    }
}
impl<'de> Deserialize<'de> for RateValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrVisitor {
            expecting: "a rate with a unit, such as \"100Gbps\" (bps, Kbps, Mbps, Gbps, Tbps)",
            parse: |s: &str| units::parse_rate(s).map(RateValue),
            allow_int: false,
        })
    }
}
impl<'de> Deserialize<'de> for SizeValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrVisitor {
            expecting: "a size in bytes, such as 1500 or \"64KB\" (B, KB, MB, GB, KiB, MiB, GiB)",
            parse: |s: &str| units::parse_bytes(s).map(SizeValue),
            allow_int: true,
        })
    }
}

impl JsonSchema for TimeValue {
    fn schema_name() -> String {
        "Time".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        string_schema(
            "Time",
            r"^\s*[0-9.eE+]+\s*(ps|ns|us|µs|ms|s)\s*$",
            "A time with a unit: ps, ns, us, ms or s.",
            &["10us", "1.5ms"],
        )
    }
}
impl JsonSchema for RateValue {
    fn schema_name() -> String {
        "Rate".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        string_schema(
            "Rate",
            r"^\s*[0-9.eE+]+\s*(bps|Kbps|kbps|Mbps|Gbps|Tbps|K|k|M|G|T)\s*$",
            "A rate in bits per second with a unit: bps, Kbps, Mbps, Gbps or Tbps.",
            &["100Gbps", "40G"],
        )
    }
}
impl JsonSchema for SizeValue {
    fn schema_name() -> String {
        "Size".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let s = string_schema(
            "Size",
            r"^\s*[0-9.eE+]+\s*(B|KB|kB|MB|GB|KiB|MiB|GiB)?\s*$",
            "A size in bytes: an integer, or a string with a unit (KB = 1000 B, KiB = 1024 B).",
            &["1500", "64KB", "12MB"],
        );
        SchemaObject {
            subschemas: Some(Box::new(SubschemaValidation {
                any_of: Some(vec![<u64 as JsonSchema>::json_schema(g), s]),
                ..Default::default()
            })),
            ..Default::default()
        }
        .into()
    }
}

/// A registry of named algorithms whose configuration is an internally tagged
/// enum (`algorithm = "..."`): the TCP and the RDMA congestion controls.
pub trait Registry: Sized + serde::de::DeserializeOwned {
    /// Names of all registered algorithms.
    const NAMES: &'static [&'static str];
    /// What the registry holds, for messages: "congestion control".
    const WHAT: &'static str;
    /// The algorithm called `name` with its default parameters.
    fn by_name(name: &str) -> Option<Self>;
}

/// Accepts an algorithm's name (defaults) or a table `{ algorithm = "...", ... }`.
pub fn deserialize_registered<'de, T: Registry, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    struct V<T>(std::marker::PhantomData<T>);
    impl<'de, T: Registry> Visitor<'de> for V<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(
                f,
                "a {} by name ({}) or as a table with `algorithm = ...` and its parameters",
                T::WHAT,
                T::NAMES.join(", ")
            )
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            T::by_name(v).ok_or_else(|| {
                E::custom(format!(
                    "unknown {} `{v}`; known: {}",
                    T::WHAT,
                    T::NAMES.join(", ")
                ))
            })
        }
        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(de::value::MapAccessDeserializer::new(map))
        }
    }
    d.deserialize_any(V(std::marker::PhantomData))
}

/// A host, by index (`3`) or by name (`"h3"`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum HostRef {
    Index(u32),
    Name(String),
}

impl<'de> Deserialize<'de> for HostRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = HostRef;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a host index (0, 1, ...) or a host name (\"h0\")")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<HostRef, E> {
                u32::try_from(v)
                    .map(HostRef::Index)
                    .map_err(|_| E::custom("host index too large"))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<HostRef, E> {
                if v < 0 {
                    return Err(E::custom(format!("host index {v} is negative")));
                }
                self.visit_u64(v as u64)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<HostRef, E> {
                Ok(HostRef::Name(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Debug)]
    struct T {
        t: TimeValue,
        r: RateValue,
        s: SizeValue,
    }

    #[test]
    fn toml_values() {
        let v: T = toml::from_str("t = \"10us\"\nr = \"100Gbps\"\ns = 1500").unwrap();
        assert_eq!(v.t.0, 10 * units::US);
        assert_eq!(v.r.0, Rate::gbps(100));
        assert_eq!(v.s.0, 1500);
        let e = toml::from_str::<T>("t = 10\nr = \"100Gbps\"\ns = 1500")
            .unwrap_err()
            .to_string();
        assert!(e.contains("has no unit"), "{e}");
        let e = toml::from_str::<T>("t = \"1us\"\nr = \"-100Gbps\"\ns = 1500")
            .unwrap_err()
            .to_string();
        assert!(e.contains("negative"), "{e}");
        let e = toml::from_str::<T>("t = \"1us\"\nr = \"1G\"\ns = -3")
            .unwrap_err()
            .to_string();
        assert!(e.contains("negative"), "{e}");
        assert_eq!(TimeValue(1500 * units::NS).to_string(), "1500ns");
    }
}
