//! Feature sections: the scenario keys a feature owns outside `[switch]`
//! and `[nic]`, a top-level section (`[cm]`) or a list of entries under
//! `[workload]` (`[[workload.hotspot]]`), registered in
//! [`crate::feature_sections!`] (lib.rs, beside the features' `mod` lines).
//!
//! The registry generates, for every section, the field of
//! [`super::ScenarioConfig`] or [`super::WorkloadConfig`] (named after its
//! key) and so its schema entry (its type's, described by the registry
//! line's doc comment), its default (its type's `Default`; no entry), its
//! place in a normalized scenario (where the registry puts the field), and
//! the call of its checks ([`validate`], run once the NIC model is checked).
//! The feature's own file holds its type and its trait implementation:
//! [`ScenarioSection`] for a top-level section, [`WorkloadSection`] for
//! `[[workload.KEY]]` entries; nothing in `scenario/` names the feature.
//!
//! ## Adding a section
//! 1. In the feature's folder: its type (serde + schemars,
//!    `deny_unknown_fields`; a top-level section's type also `Default`) and
//!    its `impl ScenarioSection` or `impl WorkloadSection` (its checks,
//!    errors naming its keys; a top-level section's `left_out`).
//! 2. One line in `feature_sections!` (lib.rs): under `scenario { }` for a
//!    top-level section (`/// doc` then `key: module::Type,`), under
//!    `workload { }` for entries (`key: module::EntryType,`), the path
//!    from the crate root. Its position is where its field is written in
//!    a normalized scenario and the order its checks run in.
//!
//! A new section must leave every existing scenario's normalized form, and
//! so its run hash, as it was: left out when it is not given
//! ([`ScenarioSection::left_out`], [`WorkloadSection::WRITTEN_WHEN_EMPTY`]).
//! `[cm]` and `[[workload.hotspot]]` predate the registry and are written
//! always, as they were.
//!
//! Example: `scenario/example_section.rs` (a top-level section and a list
//! of entries; compiled in tests and with the `examples` feature), checked
//! by its tests.

use super::{Scenario, ScenarioError};
use serde::{Deserialize, Deserializer};

/// A feature's top-level scenario section (`[KEY]`, the field `KEY` of
/// [`super::ScenarioConfig`]): how it reads, whether a normalized scenario
/// writes it, and its checks.
pub(crate) trait ScenarioSection: Sized + Default {
    /// Reads the section (by default, its type's serde form: a table).
    fn deserialize_section<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>
    where
        Self: Deserialize<'de>,
    {
        Self::deserialize(d)
    }
    /// Whether a normalized scenario leaves the section out (as it does a
    /// section at its default, so that scenarios written before it hash
    /// as they did).
    fn left_out(&self) -> bool;
    /// Checks the section against the rest of the scenario (run whether or
    /// not the file gives it). Errors name the key (`KEY.field`).
    fn validate_section(&self, sc: &Scenario) -> Result<(), ScenarioError>;
}

/// One `[[workload.KEY]]` entry of a feature (the field `KEY` of
/// [`super::WorkloadConfig`], a list of them).
pub(crate) trait WorkloadSection {
    /// Whether a normalized scenario writes the list when it is empty
    /// (`false`: left out, so that scenarios written before it hash as
    /// they did).
    const WRITTEN_WHEN_EMPTY: bool = false;
    /// Checks one entry; `path` is its key path (`workload.KEY[i]`), which
    /// errors name.
    fn validate_entry(&self, sc: &Scenario, path: &str) -> Result<(), ScenarioError>;
}

/// A switch mechanism's `[switch.KEY]` section (a field of
/// [`super::SwitchConfig`], which the registry in `mech/mod.rs` generates):
/// its checks and its moves of packets between classes. Implemented by the
/// section's type, in the mechanism's module; the scenario's validation runs
/// it for every section given, in registry order.
pub(crate) trait SwitchSection {
    /// Checks the section against the rest of the scenario (run only when
    /// the section is there). Errors name the key (`switch.KEY.field`).
    fn validate_section(&self, _sc: &Scenario) -> Result<(), ScenarioError> {
        Ok(())
    }
    /// The moves of packets between classes the section makes, for the
    /// buffer checks of `buffer.rs`: `(from, to, what)`, class `from`'s
    /// packets may join class `to`'s queues as `what` (so class `to` carries
    /// class `from`'s largest packet too).
    fn class_moves(&self) -> Vec<(u8, u8, &'static str)> {
        Vec::new()
    }
}

/// The `deserialize_with` of a top-level section's field.
pub(crate) fn deserialize<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: ScenarioSection + Deserialize<'de>,
{
    T::deserialize_section(d)
}

/// The `skip_serializing_if` of a top-level section's field.
pub(crate) fn left_out<T: ScenarioSection>(section: &T) -> bool {
    section.left_out()
}

/// The `skip_serializing_if` of a `[[workload.KEY]]` list's field.
pub(crate) fn no_entries<T: WorkloadSection>(entries: &[T]) -> bool {
    entries.is_empty() && !T::WRITTEN_WHEN_EMPTY
}

/// `ScenarioConfig`: its fields before the sections (`pub struct ... { }`),
/// one field per top-level section of `feature_sections!`, then the fields
/// after them (`after_sections { }`).
macro_rules! scenario_config {
    ([$(#[$meta:meta])* pub struct $name:ident { $($head:tt)* }
      after_sections { $($tail:tt)* }]
     scenario { $( $(#[doc = $doc:literal])* $(#[cfg($cfg:meta)])?
                   $key:ident : $($path:ident)::+ ),* $(,)? }
     workload { $($entries:tt)* }) => {
        $(#[$meta])*
        pub struct $name {
            $($head)*
            $(
                $(#[cfg($cfg)])?
                $(#[doc = $doc])*
                #[serde(
                    default,
                    deserialize_with = "crate::scenario::sections::deserialize",
                    skip_serializing_if = "crate::scenario::sections::left_out"
                )]
                pub $key: $crate::$($path)::+,
            )*
            $($tail)*
        }
    };
}
pub(crate) use scenario_config;

/// `WorkloadConfig`: its fields, then a list field per `[[workload.KEY]]`
/// section of `feature_sections!`, handed to the macro that adds the
/// generator kinds' fields (`$next! { $callback; struct }`).
macro_rules! workload_entries {
    ([$next:ident ! { $callback:ident ;
        $(#[$meta:meta])* pub struct $name:ident { $($fields:tt)* } }]
     scenario { $($sections:tt)* }
     workload { $( $(#[doc = $doc:literal])* $(#[cfg($cfg:meta)])?
                   $key:ident : $($path:ident)::+ ),* $(,)? }) => {
        $next! { $callback;
            $(#[$meta])*
            pub struct $name {
                $($fields)*
                $(
                    $(#[cfg($cfg)])?
                    $(#[doc = $doc])*
                    #[serde(skip_serializing_if = "crate::scenario::sections::no_entries")]
                    pub $key: Vec<$crate::$($path)::+>,
                )*
            }
        }
    };
}
pub(crate) use workload_entries;

/// The checks of every section, in registry order: the top-level sections,
/// then each `[[workload.KEY]]` list's entries.
macro_rules! section_checks {
    ([]
     scenario { $( $(#[doc = $doc:literal])* $(#[cfg($cfg:meta)])?
                   $key:ident : $($path:ident)::+ ),* $(,)? }
     workload { $( $(#[doc = $wdoc:literal])* $(#[cfg($wcfg:meta)])?
                   $wkey:ident : $($wpath:ident)::+ ),* $(,)? }) => {
        /// Every feature section's checks, in registry order.
        pub(crate) fn validate(sc: &Scenario) -> Result<(), ScenarioError> {
            $( $(#[cfg($cfg)])? {
                ScenarioSection::validate_section(&sc.config.$key, sc)?;
            } )*
            $( $(#[cfg($wcfg)])? {
                for (i, entry) in sc.config.workload.$wkey.iter().enumerate() {
                    let path = format!("workload.{}[{i}]", stringify!($wkey));
                    WorkloadSection::validate_entry(entry, sc, &path)?;
                }
            } )*
            Ok(())
        }

        /// Every registered section's key, in registry order: the top-level
        /// ones (`KEY`), then the workload lists (`workload.KEY`).
        #[cfg(test)]
        #[allow(clippy::vec_init_then_push)] // one `push` per entry, each under its `#[cfg]`
        pub(crate) fn registered() -> Vec<&'static str> {
            let mut keys = Vec::new();
            $( $(#[cfg($cfg)])? keys.push(stringify!($key)); )*
            $( $(#[cfg($wcfg)])? keys.push(concat!("workload.", stringify!($wkey))); )*
            keys
        }
    };
}

crate::feature_sections!(section_checks;);
