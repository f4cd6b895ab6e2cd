//! From text to [`ScenarioConfig`], with errors that say which key is wrong,
//! on which line, and never repeat a long value in full.
//!
//! Three things make this more than a call to serde:
//!
//! * **Internally tagged tables** (`topology`, `ecn`, `admission`, `cc` with
//!   `algorithm`, PFC `threshold`, ...) are buffered by serde before their
//!   fields are read, which loses the key path and the position: an error
//!   inside `topology = { kind = "leaf_spine", host_rate = 100, ... }` comes
//!   out as "at `topology`, line of the table". [`refine`] finds the key by
//!   re-reading the document with parts of that table left out: the smallest
//!   prefix of its keys that still gives the same error ends with the key at
//!   fault (serde reports the first bad key in reading order). It then goes
//!   down into that key's value the same way (a table in an array in a table).
//! * **Lines** come from the key's own position in the TOML text
//!   ([`toml_line`]), for parse errors and validation errors alike. JSON input
//!   (what the Python API sends for a dict) is read through a
//!   `serde_json::Value`, so its errors carry the key path only, never a
//!   position in a serialization the user never saw.
//! * **Shape**: serde accepts an array where a table is expected (a struct
//!   from a sequence, `metrics = []`), and a unit variant of a tagged enum
//!   ignores the other keys of its table (`ecn = { kind = "off", k = 5 }`).
//!   [`check_shape`] compares the input with the configuration it produced
//!   (serialized back): every input key must be there, and every table a table.

use super::{ScenarioConfig, ScenarioError};
use serde_json::Value;

/// One step of a key path: a table key or an array index.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

fn path_string(segs: &[Seg]) -> String {
    let mut s = String::new();
    for seg in segs {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// Parses `a.b[2].c` (anything after a space, such as the `(file:line)` of
/// a flow-file error, is ignored).
fn parse_path(path: &str) -> Vec<Seg> {
    let path = path.split(" (").next().unwrap_or("");
    let mut out = vec![];
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let mut rest = part;
        if let Some(b) = rest.find('[') {
            if b > 0 {
                out.push(Seg::Key(rest[..b].to_string()));
            }
            rest = &rest[b..];
            while let Some(stripped) = rest.strip_prefix('[') {
                let Some(end) = stripped.find(']') else { break };
                match stripped[..end].parse() {
                    Ok(i) => out.push(Seg::Index(i)),
                    Err(_) => return out,
                }
                rest = &stripped[end + 1..];
            }
        } else {
            out.push(Seg::Key(rest.to_string()));
        }
    }
    out
}

fn segs_of(path: &serde_path_to_error::Path) -> Vec<Seg> {
    use serde_path_to_error::Segment;
    let mut out = vec![];
    for s in path.iter() {
        match s {
            Segment::Seq { index } => out.push(Seg::Index(*index)),
            Segment::Map { key } => out.push(Seg::Key(key.clone())),
            Segment::Enum { variant } => out.push(Seg::Key(variant.clone())),
            Segment::Unknown => break,
        }
    }
    out
}

/// Deserializes a configuration from a JSON value: the error's key path and
/// message, or `None` when it is valid.
fn deserialize_value(v: &Value) -> Result<ScenarioConfig, (Vec<Seg>, String)> {
    serde_path_to_error::deserialize(v).map_err(|e| (segs_of(e.path()), e.inner().to_string()))
}

fn get<'a>(v: &'a Value, path: &[Seg]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, seg| match seg {
        Seg::Key(k) => v.as_object()?.get(k),
        Seg::Index(i) => v.as_array()?.get(*i),
    })
}

fn get_mut<'a>(v: &'a mut Value, path: &[Seg]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, seg| match seg {
        Seg::Key(k) => v.as_object_mut()?.get_mut(k),
        Seg::Index(i) => v.as_array_mut()?.get_mut(*i),
    })
}

/// Keys that select the variant of a tagged table: kept in every trial.
const TAGS: &[&str] = &["kind", "algorithm"];

fn quoted_after<'a>(message: &'a str, lead: &str) -> Option<&'a str> {
    let rest = &message[message.find(lead)? + lead.len()..];
    Some(&rest[..rest.find('`')?])
}

/// The key path of error (`path`, `message`) of document `doc`, taken down
/// into tables that serde read as a whole (module docs).
fn refine(doc: &Value, path: Vec<Seg>, message: &str) -> Vec<Seg> {
    let about_the_table = ["missing field", "duplicate field", "invalid length"];
    if about_the_table.iter().any(|m| message.starts_with(m)) {
        return path;
    }
    let target = (path.clone(), message.to_string());
    let mut cur = path;
    // Each step goes one level down; documents nest far less than this.
    for _ in 0..64 {
        let Some(node) = get(doc, &cur) else { break };
        if let (Some(m), Some(k)) = (node.as_object(), quoted_after(message, "unknown field `")) {
            if m.contains_key(k) {
                cur.push(Seg::Key(k.to_string()));
            }
            break;
        }
        let n = match node {
            Value::Object(m) => m.keys().filter(|k| !TAGS.contains(&k.as_str())).count(),
            Value::Array(a) => a.len(),
            _ => break,
        };
        let reproduces = |keep: usize| {
            let mut d = doc.clone();
            match get_mut(&mut d, &cur) {
                Some(Value::Object(m)) => {
                    let mut seen = 0;
                    m.retain(|k, _| {
                        TAGS.contains(&k.as_str()) || {
                            seen += 1;
                            seen <= keep
                        }
                    });
                }
                Some(Value::Array(a)) => a.truncate(keep),
                _ => {}
            }
            deserialize_value(&d).err() == Some(target.clone())
        };
        if n == 0 || reproduces(0) || !reproduces(n) {
            break;
        }
        // The smallest prefix that gives the error ends with the key at fault.
        let (mut lo, mut hi) = (1, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if reproduces(mid) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let seg = match node {
            Value::Object(m) => {
                let key = m.keys().filter(|k| !TAGS.contains(&k.as_str())).nth(lo - 1);
                Seg::Key(key.expect("lo <= n").clone())
            }
            _ => Seg::Index(lo - 1),
        };
        cur.push(seg);
    }
    if message.starts_with("unknown variant") {
        if let Some(tag) = get(doc, &cur)
            .and_then(Value::as_object)
            .and_then(|m| TAGS.iter().find(|t| m.contains_key(**t)))
        {
            cur.push(Seg::Key(tag.to_string()));
        }
    }
    cur
}

/// Where the input has a key the configuration does not (a key a tagged
/// variant ignored) or an array where the configuration has a table.
fn check_shape(input: &Value, parsed: &Value, path: &mut Vec<Seg>) -> Option<(String, String)> {
    match (input, parsed) {
        (Value::Object(i), Value::Object(p)) => {
            for (k, v) in i {
                path.push(Seg::Key(k.clone()));
                let Some(pv) = p.get(k) else {
                    if matches!(path.first(), Some(Seg::Key(top)) if top == "timing") {
                        // `[timing]` and its keys are left out of the parsed
                        // scenario where they hold defaults (so that
                        // scenarios without them hash as before); serde
                        // checked its keys.
                        path.pop();
                        continue;
                    }
                    let kind = TAGS
                        .iter()
                        .find_map(|t| p.get(*t).and_then(Value::as_str).map(|v| (t, v)));
                    let hint = match kind {
                        Some((t, v)) => format!(" with {t} = \"{v}\""),
                        None => String::new(),
                    };
                    let known: Vec<&str> = p.keys().map(String::as_str).collect();
                    return Some((
                        path_string(path),
                        format!(
                            "unknown key `{k}`: this table{hint} takes {}; remove it",
                            if known.len() <= 1 {
                                "no other keys".to_string()
                            } else {
                                format!("only {}", known.join(", "))
                            }
                        ),
                    ));
                };
                if let Some(e) = check_shape(v, pv, path) {
                    return Some(e);
                }
                path.pop();
            }
            None
        }
        (Value::Array(_), Value::Object(_)) => Some((
            path_string(path),
            format!(
                "expected a table, found an array: write `[{0}]` with its keys below it, or \
                 `{0} = {{ ... }}`",
                path_string(path)
            ),
        )),
        (Value::Array(i), Value::Array(p)) if i.len() == p.len() => {
            for (n, (a, b)) in i.iter().zip(p).enumerate() {
                path.push(Seg::Index(n));
                if let Some(e) = check_shape(a, b, path) {
                    return Some(e);
                }
                path.pop();
            }
            None
        }
        _ => None,
    }
}

/// A hint for a congestion control given in the wrong table.
fn cc_hint(path: &str, message: &str) -> String {
    let name = quoted_after(message, "unknown congestion control `")
        .or_else(|| quoted_after(message, "unknown RDMA congestion control `"))
        .or_else(|| quoted_after(message, "unknown variant `"));
    let Some(name) = name else {
        return String::new();
    };
    let tcp = crate::transport::cc::CcConfig::NAMES;
    let rdma = crate::rdma::cc::RateCcConfig::NAMES;
    if path.starts_with("transport.cc") && rdma.contains(&name) && !tcp.contains(&name) {
        format!(
            "; `{name}` is an RDMA congestion control: RDMA congestion controls go under \
             [rdma] (`[rdma]` then `cc = \"{name}\"`, which makes every flow a RoCEv2 queue pair)"
        )
    } else if path.starts_with("rdma.cc") && tcp.contains(&name) && !rdma.contains(&name) {
        format!(
            "; `{name}` is a TCP congestion control: TCP congestion controls go under \
             [transport] (`[transport]` then `cc = \"{name}\"`, without an [rdma] table)"
        )
    } else {
        String::new()
    }
}

fn error_at(segs: &[Seg], message: &str) -> ScenarioError {
    let path = path_string(segs);
    let hint = cc_hint(&path, message);
    ScenarioError::new(path, format!("{message}{hint}"))
}

/// The 1-based line of byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    let end = (0..=end)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    text[..end].matches('\n').count() + 1
}

/// The line of key `path` in TOML `text`, when the key is written there.
pub(super) fn toml_line(text: &str, path: &str) -> Option<usize> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let segs = parse_path(path);
    if segs.is_empty() {
        return None;
    }
    span_of(doc.as_item(), &segs).map(|s| line_of(text, s))
}

/// Start of the key (or element) at `segs` below `item`.
fn span_of(item: &toml_edit::Item, segs: &[Seg]) -> Option<usize> {
    let (first, rest) = segs.split_first()?;
    match first {
        Seg::Key(k) => {
            let (key, child) = item.as_table_like()?.get_key_value(k)?;
            if rest.is_empty() {
                key.span().or_else(|| child.span()).map(|s| s.start)
            } else {
                span_of(child, rest)
            }
        }
        Seg::Index(i) => {
            if let Some(aot) = item.as_array_of_tables() {
                let table = aot.get(*i)?;
                if rest.is_empty() {
                    return table.span().map(|s| s.start);
                }
                // An item view of the table, to go on with the same code.
                let item = toml_edit::Item::Table(table.clone());
                return span_of(&item, rest);
            }
            let value = item.as_array()?.get(*i)?;
            if rest.is_empty() {
                return value.span().map(|s| s.start);
            }
            let item = toml_edit::Item::Value(value.clone());
            span_of(&item, rest)
        }
    }
}

/// The key being written at byte `offset` of `text`, for a syntax error
/// (which has no path): the table header above it and the keys before it
/// on its line, e.g. `seed` or `switch.pfc.headroom`.
fn key_at(text: &str, offset: usize) -> String {
    let offset = offset.min(text.len());
    let offset = (0..=offset)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let mut table = String::new();
    for line in before[..line_start].lines().rev() {
        let l = line.trim();
        if l.starts_with('[') {
            let inner = l.trim_start_matches('[');
            table = inner[..inner.find(']').unwrap_or(inner.len())]
                .trim()
                .to_string();
            break;
        }
    }
    // Keys on this line: `a = { b = { c = ` gives a.b.c (one level per open
    // brace or bracket); only an offset inside a value names a key.
    let mut keys: Vec<String> = vec![];
    // (keys before the brace or bracket, whether it is an array)
    let mut frames: Vec<(usize, bool)> = vec![];
    let mut token = String::new();
    let mut in_string: Option<char> = None;
    let mut in_value = false;
    for ch in before[line_start..].chars() {
        if let Some(q) = in_string {
            if ch == q {
                in_string = None;
            }
            continue;
        }
        match ch {
            '"' | '\'' => in_string = Some(ch),
            '=' => {
                let k = token.trim().trim_matches('"').to_string();
                if !k.is_empty() {
                    keys.push(k);
                }
                token.clear();
                in_value = true;
            }
            '{' | '[' => {
                frames.push((keys.len(), ch == '['));
                token.clear();
                in_value = ch == '[';
            }
            '}' | ']' => {
                let (keep, _) = frames.pop().unwrap_or((0, false));
                keys.truncate(keep);
                in_value = true;
            }
            ',' => {
                let (keep, array) = frames.last().copied().unwrap_or((0, false));
                keys.truncate(keep);
                token.clear();
                in_value = array;
            }
            _ => token.push(ch),
        }
    }
    if !in_value {
        return table;
    }
    let mut parts: Vec<&str> = vec![];
    if !table.is_empty() {
        parts.push(&table);
    }
    parts.extend(keys.iter().map(String::as_str));
    parts.join(".")
}

/// Parses TOML text (module docs for what the errors say).
pub(super) fn toml_config(text: &str) -> Result<ScenarioConfig, ScenarioError> {
    let doc = match toml_edit::ImDocument::parse(text) {
        Ok(d) => d,
        Err(e) => {
            let offset = e.span().map_or(0, |s| s.start);
            let msg = e.message().trim().replace('\n', "; ");
            let msg = if msg.is_empty() {
                "the TOML is malformed here".to_string()
            } else {
                msg
            };
            let hint = if msg.contains("too large") || msg.contains("overflow") {
                " (TOML integers are 64-bit signed: at most 9223372036854775807)"
            } else {
                ""
            };
            return Err(
                ScenarioError::new(key_at(text, offset), format!("{msg}{hint}"))
                    .at_line(e.span().map(|s| line_of(text, s.start))),
            );
        }
    };
    let first: Result<ScenarioConfig, _> =
        serde_path_to_error::deserialize(toml_edit::de::Deserializer::from(doc.clone()));
    // The same document as a JSON value: for refining an error and checking the shape.
    let value = toml_edit::de::from_document::<Value>(doc.clone().into_mut()).ok();
    match first {
        Ok(cfg) => {
            if let Some(v) = &value {
                shape_error(v, &cfg).map_or(Ok(cfg), |e| {
                    let line = toml_line(text, &e.path);
                    Err(e.at_line(line))
                })
            } else {
                Ok(cfg)
            }
        }
        Err(e) => {
            let span_line = e.inner().span().map(|s| line_of(text, s.start));
            let (segs, msg) = match value.as_ref().and_then(|v| deserialize_value(v).err()) {
                Some((p, m)) => (refine(value.as_ref().expect("some"), p, &m), m),
                None => (segs_of(e.path()), e.inner().message().to_string()),
            };
            let err = error_at(&segs, &msg);
            let line = toml_line(text, &err.path).or(span_line);
            Err(err.at_line(line))
        }
    }
}

/// Parses JSON text: errors name the key path only (module docs).
pub(super) fn json_config(text: &str) -> Result<ScenarioConfig, ScenarioError> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        // A syntax error: here the position is all there is to say where.
        ScenarioError::new("", format!("the JSON text is malformed: {e}"))
    })?;
    match deserialize_value(&value) {
        Ok(cfg) => shape_error(&value, &cfg).map_or(Ok(cfg), Err),
        Err((p, m)) => Err(error_at(&refine(&value, p, &m), &m)),
    }
}

fn shape_error(input: &Value, cfg: &ScenarioConfig) -> Option<ScenarioError> {
    let parsed = serde_json::to_value(cfg).ok()?;
    check_shape(input, &parsed, &mut vec![]).map(|(p, m)| ScenarioError::new(p, m))
}

/// Values longer than this many characters are cut in messages.
const LONGEST_VALUE: usize = 60;
/// File paths in messages are cut only beyond this many characters.
const LONGEST_PATH: usize = 1_024;
/// Messages are cut beyond this many characters (the longest real ones, which
/// list every bundled CDF, are about 400).
const LONGEST_MESSAGE: usize = 2_000;

fn cut(s: &str) -> String {
    let mut out: String = s.chars().take(LONGEST_VALUE - 3).collect();
    out.push('…');
    out
}

/// `s` with every control character (an escape sequence, a newline, a
/// bell) written as its escape (`\u{1b}`, `\n`): nothing a message echoes
/// from the input can move the cursor or clear a terminal.
pub(super) fn escape_controls(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Cuts every quoted value (`...`, "...") and every unbroken run of text
/// longer than about 60 characters to 57 characters and an ellipsis (a run
/// with a `/`, a file path, only beyond 1,024), and the whole message to 2,000;
/// control characters are escaped ([`escape_controls`]).
pub(super) fn elide_values(message: &str) -> String {
    let escaped = escape_controls(message);
    let message = escaped.as_str();
    if message.len() <= LONGEST_VALUE {
        return message.to_string();
    }
    let mut out = String::with_capacity(message.len().min(LONGEST_MESSAGE + 8));
    let mut rest = message;
    while !rest.is_empty() {
        // A quoted value: cut inside the quotes.
        let first = rest.chars().next().expect("not empty");
        if first == '`' || first == '"' {
            if let Some(end) = rest[1..].find(first) {
                let inner = &rest[1..1 + end];
                if inner.chars().count() > LONGEST_VALUE {
                    out.push(first);
                    out.push_str(&cut(inner));
                    out.push(first);
                } else {
                    out.push_str(&rest[..end + 2]);
                }
                rest = &rest[end + 2..];
                continue;
            }
        }
        // An unbroken word.
        let end = rest
            .char_indices()
            .skip(1)
            .find(|&(_, c)| c.is_whitespace() || c == '`' || c == '"')
            .map_or(rest.len(), |(i, _)| i);
        let word = &rest[..end];
        // A file path (with its `:line`) stays whole up to LONGEST_PATH: the
        // user needs it to find the file.
        let longest = if word.contains('/') {
            LONGEST_PATH
        } else {
            LONGEST_VALUE
        };
        if word.chars().count() > longest {
            out.push_str(&cut(word));
        } else {
            out.push_str(word);
        }
        rest = &rest[end..];
    }
    if out.chars().count() > LONGEST_MESSAGE {
        out = out.chars().take(LONGEST_MESSAGE).collect::<String>() + "…";
    }
    out
}

/// Cuts each overlong key of a path (control characters escaped).
pub(super) fn elide_path(path: &str) -> String {
    let escaped = escape_controls(path);
    let path = escaped.as_str();
    if path.len() <= LONGEST_VALUE {
        return path.to_string();
    }
    let parts: Vec<String> = path
        .split('.')
        .map(|p| {
            if p.chars().count() > LONGEST_VALUE {
                cut(p)
            } else {
                p.to_string()
            }
        })
        .collect();
    let joined = parts.join(".");
    if joined.chars().count() > 4 * LONGEST_VALUE {
        cut(&joined)
    } else {
        joined
    }
}

/// Where a message lists the names it would have taken after the unknown
/// one, other than in backquotes: the list runs to the next `;` or `)`.
const LIST_LEADS: &[&str] = &[
    "known: ",
    "takes only ",
    "use one of: ",
    "bundled name (",
    "; use ",
];

/// Words between list items that are not names.
const LIST_GLUE: &[&str] = &["or", "and"];

/// The name an "unknown ... `name`" message probably meant: the candidate
/// the message lists (in backquotes after the name, and after one of
/// [`LIST_LEADS`]) closest to it, within an edit distance of a third of its
/// length (at least 1; case ignored). `None` when nothing is that close or
/// the message already suggests one.
pub(super) fn did_you_mean(message: &str) -> Option<String> {
    if message.contains("did you mean") {
        return None;
    }
    let start = message.find("unknown ")?;
    let open = start + message[start..].find('`')?;
    let close = open + 1 + message[open + 1..].find('`')?;
    let name = &message[open + 1..close];
    // Between `unknown` and the name, only the words that say what it is.
    if message[start..open].contains([';', ':', ',']) || name.is_empty() || name.len() > 64 {
        return None;
    }
    let rest = &message[close + 1..];
    let mut candidates: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
    if let Some(list) = LIST_LEADS
        .iter()
        .find_map(|lead| rest.find(lead).map(|i| &rest[i + lead.len()..]))
    {
        let list = &list[..list.find([';', ')']).unwrap_or(list.len())];
        candidates.extend(
            list.split([',', ' '])
                .map(str::trim)
                .filter(|w| !w.is_empty() && !LIST_GLUE.contains(w)),
        );
    }
    let lower = name.to_lowercase();
    if candidates.iter().any(|c| c.to_lowercase() == lower) {
        return None;
    }
    let limit = lower.chars().count().max(3) / 3;
    candidates
        .into_iter()
        .map(|c| (edit_distance(&lower, &c.to_lowercase()), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c.to_string())
}

/// The optimal-string-alignment distance of `a` and `b`: insertions,
/// deletions, substitutions and swaps of two neighbours (`dctpc` is one
/// from `dctcp`), each 1.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // Three rows of the table: two rows back, the last one, this one.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut last: Vec<usize> = (0..=b.len()).collect();
    let mut row = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (last[j] + 1).min(row[j - 1] + 1).min(last[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        std::mem::swap(&mut before, &mut last);
        std::mem::swap(&mut last, &mut row);
    }
    last[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_get_the_closest_known_one() {
        let cases = [
            ("unknown field `bufer`, expected one of `buffer`, `admission`, `ecn`", Some("buffer")),
            ("unknown variant `stepp`, expected one of `off`, `step`, `red`", Some("step")),
            ("unknown variant `al`, expected one of `top`, `switch`, `all`", Some("all")),
            ("unknown congestion control `dctpc`; known: newreno, dctcp, cubic, bbr", Some("dctcp")),
            ("unknown field `gg`, expected `g` or `initial_alpha`", Some("g")),
            (
                "unknown key `kk`: this table with kind = \"step\" takes only kind, k, at; remove it",
                Some("k"),
            ),
            (
                "unknown CDF `websearh`: not a bundled name (datamining, websearch) and no file at \
                 /tmp/websearh",
                Some("websearch"),
            ),
            ("unknown time unit `mss` in `10mss`; use ps, ns, us, ms or s", Some("ms")),
            // Nothing close, the name listed, or a suggestion made already.
            ("unknown field `colour`, expected `name` or `tier`", None),
            ("unknown field `x`, there are no fields", None),
            ("unknown variant `Step`, expected one of `step`", None),
            ("unknown field `bufer`, expected `buffer`; did you mean `buffer`?", None),
        ];
        for (message, want) in cases {
            assert_eq!(did_you_mean(message).as_deref(), want, "{message}");
        }
        assert_eq!(edit_distance("dctpc", "dctcp"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn control_characters_are_escaped() {
        let e = elide_values("unknown field `\u{1b}[2J\u{7}`, expected `a`");
        assert!(!e.chars().any(char::is_control), "{e}");
        assert!(e.contains("\\u{1b}[2J\\u{7}"), "{e}");
        assert_eq!(elide_path("a.\u{1b}c"), "a.\\u{1b}c");
        assert_eq!(escape_controls("plain ü"), "plain ü");
    }

    #[test]
    fn paths_parse_and_print() {
        for p in ["a", "a.b", "workload.poisson[0].load", "x[1][2].y"] {
            assert_eq!(path_string(&parse_path(p)), p);
        }
        assert_eq!(
            path_string(&parse_path("workload.flow_file (/a/b.csv:3)")),
            "workload.flow_file"
        );
    }

    #[test]
    fn long_values_are_cut() {
        let long = "x".repeat(100_000);
        for msg in [
            format!("unknown field `{long}`, expected `a`"),
            format!("value \"{long}\" is bad"),
            format!("`{long}` does not start with a number"),
            format!("plain {long} word"),
        ] {
            let e = elide_values(&msg);
            assert!(e.chars().count() < 150, "{e}");
            assert!(e.contains('…'), "{e}");
        }
        // A file path stays whole (within 1,024 characters); a huge one is cut.
        let path = format!("/tmp/{}/config.txt:48:", "d".repeat(80));
        let m = format!("{path} unknown HPCC configuration key");
        assert_eq!(elide_values(&m), m);
        let huge = format!("/{long}");
        assert!(elide_values(&huge).chars().count() < 1_100);
        // Short messages and values are untouched.
        let m = "unknown field `hostz`, expected one of `hosts`, `link_rate`, `link_delay`";
        assert_eq!(elide_values(m), m);
        assert!(elide_path(&format!("topology.{long}")).chars().count() < 80);
    }

    #[test]
    fn syntax_errors_name_the_key_being_written() {
        let t = "name = \"x\"\nseed = 18446744073709551616\n";
        assert_eq!(key_at(t, t.find("1844").unwrap()), "seed");
        let t = "[switch]\npfc = { classes = [3], headroom = 1e999x }\n";
        assert_eq!(key_at(t, t.find("1e999").unwrap()), "switch.pfc.headroom");
        let t = "[[workload.flows]]\nsrc = 0\nsize = 12345678901234567890\n";
        assert_eq!(key_at(t, t.find("1234").unwrap()), "workload.flows.size");
    }

    #[test]
    fn lines_of_keys_in_tables_inline_tables_and_arrays() {
        let t = "name = \"a\"\n[switch]\nbuffer = \"1MB\"\n\necn = { kind = \"step\", k = 5 }\n\
                 [[workload.flows]]\nsrc = 0\n[[workload.flows]]\nsrc = 1\nsize = 3\n";
        assert_eq!(toml_line(t, "name"), Some(1));
        assert_eq!(toml_line(t, "switch.buffer"), Some(3));
        assert_eq!(toml_line(t, "switch.ecn.k"), Some(5));
        assert_eq!(toml_line(t, "workload.flows[1].size"), Some(10));
        assert_eq!(toml_line(t, "workload.flows[1]"), Some(8));
        assert_eq!(toml_line(t, "switch.admission"), None);
        assert_eq!(toml_line(t, ""), None);
    }
}
