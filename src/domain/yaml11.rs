//! The only YAML reader in osdkeeper: YAML 1.1 as PyYAML's `safe_load_all`
//! reads it, because cephadm reads specs that way.
//!
//! Why not serde_yaml: it resolves scalars by YAML 1.2 and does not tell a
//! plain `yes` from a quoted `'yes'`, yet under YAML 1.1 the first is a
//! boolean and the second a string. We take the parser's events (which carry
//! the scalar style) from yaml-rust2 and resolve them ourselves with PyYAML's
//! implicit resolvers: `yes/no/on/off` booleans, `0o`-less octal `010`,
//! sexagesimal `1:30`, `1_000`, floats that need a dot, `~`, merge keys `<<`.
//!
//! Reading stays within the budgets of `yaml_limits`.

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use regex::Regex;
use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};

use super::value::{dict_from_pairs, excerpt, Value};
use super::yaml_limits::{Budget, Limit, Size, MAX_KEYS, MAX_SPEC_BYTES};

/// A document of a YAML stream with the line (1-based) where its content
/// starts, and the line of its start marker (`---`, or its first token).
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub value: Value,
    pub line: usize,
    pub start_line: usize,
}

/// The source text of each document (by `start_line`), for storing a
/// document exactly as it was written.
pub fn document_sources<'a>(text: &'a str, docs: &[Document]) -> Vec<&'a str> {
    let offsets: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let at_line = |line: usize| offsets.get(line.saturating_sub(1)).copied().unwrap_or(text.len());
    docs.iter()
        .enumerate()
        .map(|(i, d)| {
            let start = if i == 0 { 0 } else { at_line(d.start_line) };
            let end = docs.get(i + 1).map(|n| at_line(n.start_line)).unwrap_or(text.len());
            &text[start..end.max(start)]
        })
        .collect()
}

/// PyYAML's scanner skips a byte order mark at the start of the stream
/// (editors on Windows write one), so cephadm accepts such a file.
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Why a YAML stream could not be read: a syntax error, or a budget of
/// `yaml_limits` (`limit`) that the stream exceeds.
#[derive(Debug, Clone, PartialEq)]
pub struct YamlError {
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub limit: Option<Limit>,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.limit.is_none() {
            f.write_str("YAML error ")?;
        }
        write!(f, "at line {}, column {}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for YamlError {}

impl YamlError {
    fn at(mark: &Marker, message: impl Into<String>) -> Self {
        YamlError { line: mark.line(), column: mark.col() + 1, message: message.into(), limit: None }
    }

    fn over(mark: &Marker, limit: Limit) -> Self {
        YamlError { limit: Some(limit), ..YamlError::at(mark, limit.to_string()) }
    }
}

/// Reads every document of `text`. Empty documents come back as `Value::Null`
/// (cephadm skips them); any syntax error fails the whole stream, as PyYAML's
/// `list(safe_load_all(...))` does.
pub fn load_all(text: &str) -> Result<Vec<Document>, YamlError> {
    let text = without_bom(text);
    if text.len() > MAX_SPEC_BYTES {
        let mut cut = MAX_SPEC_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let before = &text[..cut];
        let line = before.matches('\n').count() + 1;
        let column = before[before.rfind('\n').map_or(0, |i| i + 1)..].chars().count() + 1;
        return Err(YamlError { line, column, message: Limit::Bytes.to_string(), limit: Some(Limit::Bytes) });
    }
    let mut reader = Reader { parser: Parser::new_from_str(text), anchors: HashMap::new(), budget: Budget::default() };
    let mut docs = Vec::new();
    loop {
        let (event, mark) = reader.next()?;
        match event {
            Event::StreamStart | Event::Nothing => continue,
            Event::StreamEnd => break,
            Event::DocumentStart => {
                reader.anchors.clear();
                let (first, first_mark) = reader.next()?;
                let line = first_mark.line().max(mark.line());
                let value = if matches!(first, Event::DocumentEnd) {
                    Value::Null
                } else {
                    let v = reader.node(first, first_mark)?;
                    reader.expect_document_end()?;
                    v
                };
                docs.push(Document { value, line, start_line: mark.line() });
            }
            other => return Err(YamlError::at(&mark, format!("unexpected {}", event_text(&other)))),
        }
    }
    Ok(docs)
}

/// An event for a message: its kind, and at most an excerpt of its text.
fn event_text(event: &Event) -> String {
    excerpt(&format!("{event:?}"))
}

struct Reader<'a> {
    parser: Parser<std::str::Chars<'a>>,
    /// Each anchored value with its size, which an alias spends.
    anchors: HashMap<usize, (Value, Size)>,
    budget: Budget,
}

impl Reader<'_> {
    fn next(&mut self) -> Result<(Event, Marker), YamlError> {
        self.parser.next_token().map_err(|e| YamlError::at(e.marker(), excerpt(e.info())))
    }

    fn expect_document_end(&mut self) -> Result<(), YamlError> {
        let (event, mark) = self.next()?;
        match event {
            Event::DocumentEnd => Ok(()),
            other => {
                Err(YamlError::at(&mark, format!("expected the end of the document, found {}", event_text(&other))))
            }
        }
    }

    fn node(&mut self, event: Event, mark: Marker) -> Result<Value, YamlError> {
        if let Event::Alias(id) = event {
            let (v, size) = self.anchors.get(&id).ok_or_else(|| YamlError::at(&mark, "found undefined alias"))?;
            self.budget.alias(*size).map_err(|l| YamlError::over(&mark, l))?;
            return Ok(v.clone());
        }
        self.budget.node().map_err(|l| YamlError::over(&mark, l))?;
        let before = self.budget.produced();
        let (value, anchor) = match event {
            Event::Scalar(text, style, anchor, tag) => {
                self.budget.scalar(text.len());
                (scalar(&text, style, tag.as_ref(), &mark)?, anchor)
            }
            Event::SequenceStart(anchor, tag) => {
                check_collection_tag(tag.as_ref(), "seq", &mark)?;
                self.budget.enter().map_err(|l| YamlError::over(&mark, l))?;
                let mut items = Vec::new();
                loop {
                    let (ev, m) = self.next()?;
                    if matches!(ev, Event::SequenceEnd) {
                        break;
                    }
                    items.push(self.node(ev, m)?);
                }
                self.budget.leave();
                (Value::Seq(items), anchor)
            }
            Event::MappingStart(anchor, tag) => {
                check_collection_tag(tag.as_ref(), "map", &mark)?;
                self.budget.enter().map_err(|l| YamlError::over(&mark, l))?;
                let map = self.mapping()?;
                self.budget.leave();
                (map, anchor)
            }
            other => return Err(YamlError::at(&mark, format!("unexpected {}", event_text(&other)))),
        };
        if anchor != 0 {
            // The node itself, counted before `before`, is part of its size.
            let after = self.budget.produced();
            let size = Size { nodes: after.nodes - before.nodes + 1, bytes: after.bytes - before.bytes };
            self.budget.anchor(size.bytes).map_err(|l| YamlError::over(&mark, l))?;
            self.anchors.insert(anchor, (value.clone(), size));
        }
        Ok(value)
    }

    fn mapping(&mut self) -> Result<Value, YamlError> {
        let mut explicit: Vec<(Value, Value)> = Vec::new();
        let mut merged: Vec<(Value, Value)> = Vec::new();
        loop {
            let (ev, key_mark) = self.next()?;
            if matches!(ev, Event::MappingEnd) {
                break;
            }
            if matches!(&ev, Event::Scalar(t, TScalarStyle::Plain, _, None) if t == "<<") {
                let (vev, vmark) = self.next()?;
                let value = self.node(vev, vmark)?;
                merged.extend(merge_entries(value, &vmark)?);
            } else {
                let key = self.node(ev, key_mark)?;
                let (vev, vmark) = self.next()?;
                let value = self.node(vev, vmark)?;
                if matches!(key, Value::Seq(_) | Value::Map(_)) {
                    return Err(YamlError::at(&key_mark, "found unhashable key"));
                }
                explicit.push((key, value));
            }
            if explicit.len() + merged.len() > MAX_KEYS {
                return Err(YamlError::over(&key_mark, Limit::Keys));
            }
        }
        // PyYAML puts merged keys first and lets explicit keys override them.
        Ok(Value::Map(dict_from_pairs(merged.into_iter().chain(explicit))))
    }
}

/// The entries a `<<` merge contributes, in PyYAML's order: for a list of
/// mappings the earlier mappings win, so they are placed last.
fn merge_entries(value: Value, mark: &Marker) -> Result<Vec<(Value, Value)>, YamlError> {
    match value {
        Value::Map(m) => Ok(m),
        Value::Seq(items) => {
            let mut out = Vec::new();
            for item in items.into_iter().rev() {
                match item {
                    Value::Map(m) => out.extend(m),
                    other => {
                        return Err(YamlError::at(
                            mark,
                            format!("expected a mapping for merging, but found {}", other.type_name()),
                        ))
                    }
                }
            }
            Ok(out)
        }
        other => Err(YamlError::at(
            mark,
            format!("expected a mapping or list of mappings for merging, but found {}", other.type_name()),
        )),
    }
}

fn standard_tag(tag: Option<&Tag>) -> Option<Option<&str>> {
    let tag = tag?;
    let suffix = match tag.handle.as_str() {
        "!!" => tag.suffix.as_str(),
        "" | "!" if tag.suffix.starts_with("tag:yaml.org,2002:") => &tag.suffix["tag:yaml.org,2002:".len()..],
        "tag:yaml.org,2002:" => tag.suffix.as_str(),
        "!" if tag.suffix.is_empty() => return Some(None),
        _ => return Some(Some("")),
    };
    Some(Some(suffix))
}

fn tag_text(tag: &Tag) -> String {
    excerpt(&format!("{}{}", tag.handle, tag.suffix))
}

fn check_collection_tag(tag: Option<&Tag>, want: &str, mark: &Marker) -> Result<(), YamlError> {
    match standard_tag(tag) {
        None | Some(None) => Ok(()),
        Some(Some(s)) if s == want => Ok(()),
        Some(Some(_)) => Err(YamlError::at(
            mark,
            format!("could not determine a constructor for the tag '{}'", tag_text(tag.expect("tagged"))),
        )),
    }
}

fn scalar(text: &str, style: TScalarStyle, tag: Option<&Tag>, mark: &Marker) -> Result<Value, YamlError> {
    let kind = match standard_tag(tag) {
        // `!` forces a string, exactly like a quoted scalar.
        Some(None) => return Ok(Value::Str(text.to_string())),
        Some(Some(kind)) => kind,
        None if style != TScalarStyle::Plain => return Ok(Value::Str(text.to_string())),
        None => resolve_plain(text),
    };
    let bad = || YamlError::at(mark, format!("cannot read {:?} as tag:yaml.org,2002:{kind}", excerpt(text)));
    Ok(match kind {
        "str" => Value::Str(text.to_string()),
        "null" => Value::Null,
        "bool" => Value::Bool(parse_bool(text).ok_or_else(bad)?),
        "int" => Value::Int(parse_int(text).ok_or_else(bad)?),
        "float" => Value::Float(parse_float(text).ok_or_else(bad)?),
        "timestamp" => Value::Timestamp(text.to_string()),
        _ => {
            let shown = tag.map(tag_text).unwrap_or_else(|| excerpt(&format!("tag:yaml.org,2002:{kind}")));
            return Err(YamlError::at(mark, format!("could not determine a constructor for the tag '{shown}'")));
        }
    })
}

struct Resolvers {
    boolean: Regex,
    float: Regex,
    int: Regex,
    null: Regex,
    timestamp: Regex,
}

fn resolvers() -> &'static Resolvers {
    static R: OnceLock<Resolvers> = OnceLock::new();
    R.get_or_init(|| Resolvers {
        boolean: Regex::new(r"^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$")
            .expect("bool regex"),
        float: Regex::new(concat!(
            r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?",
            r"|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?",
            r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*",
            r"|[-+]?\.(?:inf|Inf|INF)",
            r"|\.(?:nan|NaN|NAN))$"
        ))
        .expect("float regex"),
        int: Regex::new(concat!(
            r"^(?:[-+]?0b[0-1_]+",
            r"|[-+]?0[0-7_]+",
            r"|[-+]?(?:0|[1-9][0-9_]*)",
            r"|[-+]?0x[0-9a-fA-F_]+",
            r"|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$"
        ))
        .expect("int regex"),
        null: Regex::new(r"^(?:~|null|Null|NULL|)$").expect("null regex"),
        timestamp: Regex::new(concat!(
            r"^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]",
            r"|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?",
            r"(?:[Tt]|[ \t]+)[0-9][0-9]?",
            r":[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?",
            r"(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$"
        ))
        .expect("timestamp regex"),
    })
}

/// PyYAML's implicit resolution of a plain scalar, in the order of its
/// resolver table (first character decides which resolvers are tried).
fn resolve_plain(text: &str) -> &'static str {
    let r = resolvers();
    let first = text.chars().next();
    let tried = |set: &str| first.is_some_and(|c| set.contains(c));
    if text.is_empty() || (tried("~nN") && r.null.is_match(text)) {
        return "null";
    }
    if tried("yYnNtTfFoO") && r.boolean.is_match(text) {
        return "bool";
    }
    if tried("-+0123456789.") && r.float.is_match(text) {
        return "float";
    }
    if tried("-+0123456789") && r.int.is_match(text) {
        return "int";
    }
    if text == "<<" {
        return "merge";
    }
    if text == "=" {
        return "value";
    }
    if tried("0123456789") && r.timestamp.is_match(text) {
        return "timestamp";
    }
    "str"
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "yes" | "true" | "on" => Some(true),
        "no" | "false" | "off" => Some(false),
        _ => None,
    }
}

fn split_sign(text: &str) -> (i128, &str) {
    match text.as_bytes().first() {
        Some(b'-') => (-1, &text[1..]),
        Some(b'+') => (1, &text[1..]),
        _ => (1, text),
    }
}

/// `construct_yaml_int`: underscores dropped, then binary, hex, octal
/// (a leading 0), sexagesimal (`1:30` is 90) or decimal.
fn parse_int(text: &str) -> Option<i128> {
    let cleaned: String = text.chars().filter(|&c| c != '_').collect();
    let (sign, body) = split_sign(&cleaned);
    let magnitude = if body == "0" {
        0
    } else if let Some(b) = body.strip_prefix("0b") {
        i128::from_str_radix(b, 2).ok()?
    } else if let Some(h) = body.strip_prefix("0x") {
        i128::from_str_radix(h, 16).ok()?
    } else if body.len() > 1 && body.starts_with('0') {
        i128::from_str_radix(&body[1..], 8).ok()?
    } else if body.contains(':') {
        let mut total: i128 = 0;
        for part in body.split(':') {
            total = total.checked_mul(60)?.checked_add(part.parse::<i128>().ok()?)?;
        }
        total
    } else {
        body.parse::<i128>().ok()?
    };
    Some(sign * magnitude)
}

/// `construct_yaml_float`, including `.inf`, `.nan` and sexagesimal floats.
fn parse_float(text: &str) -> Option<f64> {
    let cleaned: String = text.chars().filter(|&c| c != '_').collect::<String>().to_ascii_lowercase();
    let (sign, body) = split_sign(&cleaned);
    let sign = sign as f64;
    if body == ".inf" {
        return Some(sign * f64::INFINITY);
    }
    if body == ".nan" {
        return Some(f64::NAN);
    }
    if body.contains(':') {
        let mut total = 0.0;
        for part in body.split(':') {
            total = total * 60.0 + part.parse::<f64>().ok()?;
        }
        return Some(sign * total);
    }
    let normalised = if let Some(stripped) = body.strip_suffix('.') {
        format!("{stripped}.0")
    } else if body.starts_with('.') {
        format!("0{body}")
    } else {
        body.replace(".e", ".0e")
    };
    normalised.parse::<f64>().ok().map(|f| sign * f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Value {
        let mut docs = load_all(text).expect("valid yaml");
        assert_eq!(docs.len(), 1);
        docs.remove(0).value
    }

    fn val(text: &str) -> Value {
        one(&format!("v: {text}\n")).get("v").cloned().expect("key v")
    }

    #[test]
    fn yaml_1_1_booleans_are_booleans_only_when_plain() {
        for t in ["yes", "Yes", "on", "ON", "true"] {
            assert_eq!(val(t), Value::Bool(true), "{t}");
        }
        for t in ["no", "No", "off", "OFF", "false"] {
            assert_eq!(val(t), Value::Bool(false), "{t}");
        }
        assert_eq!(val("'yes'"), Value::Str("yes".into()));
        assert_eq!(val("\"off\""), Value::Str("off".into()));
        // PyYAML does not treat y/n as booleans.
        assert_eq!(val("y"), Value::Str("y".into()));
        assert_eq!(val("yEs"), Value::Str("yEs".into()));
    }

    #[test]
    fn yaml_1_1_numbers() {
        assert_eq!(val("010"), Value::Int(8));
        assert_eq!(val("0x1f"), Value::Int(31));
        assert_eq!(val("0b101"), Value::Int(5));
        assert_eq!(val("1_000"), Value::Int(1000));
        assert_eq!(val("1:30"), Value::Int(90));
        assert_eq!(val("-2"), Value::Int(-2));
        assert_eq!(val("0"), Value::Int(0));
        assert_eq!(val("1.5"), Value::Float(1.5));
        assert_eq!(val("1."), Value::Float(1.0));
        assert_eq!(val(".5"), Value::Float(0.5));
        assert_eq!(val("1.0e+3"), Value::Float(1000.0));
        // A float needs a dot in YAML 1.1, and the exponent needs a sign.
        assert_eq!(val("1e3"), Value::Str("1e3".into()));
        assert_eq!(val(".inf"), Value::Float(f64::INFINITY));
        assert_eq!(val("'10'"), Value::Str("10".into()));
    }

    #[test]
    fn nulls_and_timestamps() {
        assert_eq!(val("~"), Value::Null);
        assert_eq!(val("null"), Value::Null);
        assert_eq!(one("v:\n").get("v"), Some(&Value::Null));
        assert_eq!(val("2023-03-17"), Value::Timestamp("2023-03-17".into()));
    }

    #[test]
    fn explicit_tags() {
        assert_eq!(val("!!str 0"), Value::Str("0".into()));
        assert_eq!(val("!!int '7'"), Value::Int(7));
        assert!(load_all("v: !custom x\n").is_err());
        assert!(load_all("v: =\n").is_err(), "PyYAML's safe loader has no constructor for '='");
    }

    #[test]
    fn multi_documents_keep_their_index_and_line() {
        let docs = load_all("a: 1\n---\n---\nb: 2\n").unwrap();
        assert_eq!(docs.len(), 3);
        assert_eq!(docs[1].value, Value::Null);
        assert_eq!(docs[2].value.get("b"), Some(&Value::Int(2)));
        assert_eq!(docs[2].line, 4);
    }

    #[test]
    fn document_sources_split_at_markers() {
        let text = "# head\na: 1\n---\nb: 2\n---\nc: 3\n";
        let docs = load_all(text).unwrap();
        assert_eq!(document_sources(text, &docs), ["# head\na: 1\n", "---\nb: 2\n", "---\nc: 3\n"]);
    }

    #[test]
    fn merge_keys_and_aliases() {
        let v = one("base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n");
        let m = v.get("m").unwrap();
        assert_eq!(m.get("x"), Some(&Value::Int(1)));
        assert_eq!(m.get("y"), Some(&Value::Int(3)));
        let v = one("a: &a {k: 1}\nb: &b {k: 2}\nm: {<<: [*a, *b]}\n");
        assert_eq!(v.get("m").unwrap().get("k"), Some(&Value::Int(1)), "earlier mapping wins");
    }

    #[test]
    fn duplicate_keys_take_the_last_value_at_the_first_position() {
        let v = one("a: 1\nb: 2\na: 3\n");
        assert_eq!(
            v,
            Value::Map(vec![(Value::Str("a".into()), Value::Int(3)), (Value::Str("b".into()), Value::Int(2))])
        );
    }

    #[test]
    fn a_leading_byte_order_mark_is_skipped_as_pyyaml_does() {
        assert_eq!(one("\u{feff}a: 1\n").get("a"), Some(&Value::Int(1)));
    }

    #[test]
    fn keys_compare_like_python_dict_keys() {
        let v = one("1: a\n1.0: b\ntrue: c\n'1': d\n");
        assert_eq!(
            v,
            Value::Map(vec![(Value::Int(1), Value::Str("c".into())), (Value::Str("1".into()), Value::Str("d".into()))])
        );
        // Every `.nan` is a new float object, and NaN != NaN: two keys.
        assert_eq!(one(".nan: a\n.nan: b\n").as_map().map(<[_]>::len), Some(2));
        assert_eq!(one("0: a\n-0.0: b\nfalse: c\n").as_map().map(<[_]>::len), Some(1));
    }

    #[test]
    fn messages_quote_only_an_excerpt() {
        let big = "x".repeat(100_000);
        for text in [format!("v: !!int '{big}'\n"), format!("v: !{big} a\n"), format!("v: !!{big} a\n")] {
            let err = load_all(&text).unwrap_err();
            assert!(err.to_string().len() < 300, "{} bytes", err.to_string().len());
        }
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let err = load_all("a: 1\nb: [1, 2\n").unwrap_err();
        assert!(err.line >= 2, "{err}");
    }
}
