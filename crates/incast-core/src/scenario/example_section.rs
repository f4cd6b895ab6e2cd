//! Example feature sections (compiled in tests and with the `examples`
//! feature): a top-level section and a list of `[[workload.KEY]]` entries,
//! each one type here and one line in `feature_sections!` (lib.rs). A real
//! feature keeps this file in its own folder (`cm/scenario.rs`).
//!
//! ```toml
//! [example_note]
//! text = "first try"
//! [[workload.example_mark]]
//! at = "1ms"
//! label = "warm"
//! ```

use super::{Scenario, ScenarioError, ScenarioSection, WorkloadSection};
use crate::config_types::TimeValue;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The longest note, in characters.
pub const MAX_NOTE_CHARS: usize = 200;

/// `[example_note]`: a line of text kept with the run.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Note {
    /// At most 200 characters.
    pub text: String,
}

impl ScenarioSection for Note {
    /// Left out at its default, so that every scenario written before it
    /// normalizes (and hashes) as it did.
    fn left_out(&self) -> bool {
        *self == Note::default()
    }

    fn validate_section(&self, _sc: &Scenario) -> Result<(), ScenarioError> {
        let chars = self.text.chars().count();
        if chars > MAX_NOTE_CHARS {
            return Err(ScenarioError::new(
                "example_note.text",
                format!("is {chars} characters long, more than {MAX_NOTE_CHARS}; shorten it"),
            ));
        }
        Ok(())
    }
}

/// `[[workload.example_mark]]`: a named instant of the run.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Mark {
    pub at: TimeValue,
    /// Not empty.
    pub label: String,
}

impl WorkloadSection for Mark {
    fn validate_entry(&self, sc: &Scenario, path: &str) -> Result<(), ScenarioError> {
        if self.label.is_empty() {
            return Err(ScenarioError::new(
                format!("{path}.label"),
                "is empty; name the instant",
            ));
        }
        match sc.config.duration {
            Some(d) if self.at >= d => Err(ScenarioError::new(
                format!("{path}.at"),
                format!("{} is not before the end of duration ({d})", self.at),
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::sections::registered;
    use crate::Scenario;
    use std::path::Path;

    const BASE: &str = "duration = \"2ms\"\n[topology]\nkind = \"single_switch\"\nhosts = 2\n\
                        link_rate = \"10Gbps\"\n[[workload.flows]]\nsrc = 0\ndst = 1\nsize = 1000\n";

    fn scenario(extra: &str) -> Result<Scenario, crate::ScenarioError> {
        Scenario::from_toml_str(&format!("{BASE}{extra}"), Path::new("."))
    }

    /// The keys of a normalized scenario's top level (or of its
    /// `workload`), in the order they are written.
    fn keys(json: &str, workload: bool) -> Vec<String> {
        let lines: Vec<&str> = json.lines().collect();
        let (indent, body) = if workload {
            let at = lines
                .iter()
                .position(|l| *l == "  \"workload\": {")
                .unwrap();
            let len = lines[at..]
                .iter()
                .position(|l| l.starts_with("  }"))
                .unwrap();
            ("    \"", &lines[at + 1..at + len])
        } else {
            ("  \"", &lines[..])
        };
        body.iter()
            .filter_map(|l| l.strip_prefix(indent))
            .map(|l| l.split('"').next().unwrap().to_string())
            .collect()
    }

    #[test]
    fn the_registry_lists_every_section_in_order() {
        assert_eq!(
            registered(),
            [
                "cm",
                "example_note",
                "workload.hotspot",
                "workload.example_mark"
            ]
        );
    }

    #[test]
    fn sections_sit_at_their_registry_place_and_are_left_out_at_their_default() {
        let json = scenario("").unwrap().to_json();
        // `[cm]` and `[[workload.hotspot]]` are written always (as before the
        // registry), the example's sections only when given.
        let top = keys(&json, false);
        let at = |k: &str| top.iter().position(|t| t == k);
        assert!(at("edge") < at("cm") && at("cm") < at("nic"), "{top:?}");
        assert_eq!(at("example_note"), None, "{top:?}");
        let workload = keys(&json, true);
        assert_eq!(workload.last().map(String::as_str), Some("hotspot"));
        assert!(!json.contains("example_mark"), "{json}");

        let sc = scenario(
            "[example_note]\ntext = \"first try\"\n\
             [[workload.example_mark]]\nat = \"1ms\"\nlabel = \"warm\"\n",
        )
        .unwrap();
        assert_eq!(sc.config.example_note.text, "first try");
        assert_eq!(sc.config.workload.example_mark[0].label, "warm");
        let json = sc.to_json();
        let top = keys(&json, false);
        let at = |k: &str| top.iter().position(|t| t == k);
        assert!(at("cm") < at("example_note") && at("example_note") < at("nic"));
        let workload = keys(&json, true);
        let at = |k: &str| workload.iter().position(|t| t == k);
        assert!(at("hotspot") < at("example_mark"), "{workload:?}");
        // The normalized form reads back as itself.
        let again = Scenario::from_json_str(&json, Path::new(".")).unwrap();
        assert_eq!(again.to_json(), json);
    }

    #[test]
    fn section_checks_name_the_key_and_its_line() {
        let long = "n".repeat(super::MAX_NOTE_CHARS + 1);
        let e = scenario(&format!("[example_note]\ntext = \"{long}\"\n")).unwrap_err();
        assert_eq!((e.path.as_str(), e.line), ("example_note.text", Some(11)));
        let e = scenario(
            "[[workload.example_mark]]\nat = \"1ms\"\nlabel = \"a\"\n\
             [[workload.example_mark]]\nat = \"1ms\"\nlabel = \"\"\n",
        )
        .unwrap_err();
        assert_eq!(e.path, "workload.example_mark[1].label", "{e}");
        assert!(e.message.contains("is empty"), "{e}");
        let e =
            scenario("[[workload.example_mark]]\nat = \"2ms\"\nlabel = \"late\"\n").unwrap_err();
        assert_eq!(e.path, "workload.example_mark[0].at", "{e}");
        // Unknown keys are refused as everywhere else.
        let e = scenario("[example_note]\ntxt = \"x\"\n").unwrap_err();
        assert!(e.message.contains("unknown field `txt`"), "{e}");
    }

    #[test]
    fn the_schema_describes_each_section() {
        let schema: serde_json::Value = serde_json::from_str(&Scenario::json_schema()).unwrap();
        let props = &schema["properties"];
        assert!(props["example_note"]["description"]
            .as_str()
            .is_some_and(|d| d.starts_with("Example:")));
        assert!(props["cm"]["description"]
            .as_str()
            .is_some_and(|d| d.starts_with("Congestion management")));
        let workload = &schema["definitions"]["WorkloadConfig"]["properties"];
        assert!(workload["example_mark"]["description"]
            .as_str()
            .is_some_and(|d| d.starts_with("Example:")));
        assert!(workload["hotspot"].is_object());
    }
}
