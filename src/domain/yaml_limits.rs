//! The budgets of the YAML reader (`yaml11`): how much text, nesting, nodes,
//! alias copies (in nodes and in bytes) and keys one spec file may ask for.
//!
//! Specs arrive from the network (`POST /api/v1/specs`) and from files, and
//! YAML lets a few hundred bytes ask for billions of nodes (nested aliases),
//! a megabyte ask for gigabytes (one large anchored scalar aliased many
//! times) or a stack deeper than any thread has (`- - - - ...`). Each limit sits
//! far above what a real spec needs and far below what hurts the daemon:
//! a spec document is about 300 bytes, 40 nodes, 4 levels deep, with at
//! most 25 keys in one mapping. Reaching a limit refuses the whole file,
//! naming the limit and the line.

use std::fmt;

/// Text of one spec file. The API refuses larger bodies by default
/// (`max_body_bytes`, 1 MiB) and a file of 3000 specs still fits.
pub const MAX_SPEC_BYTES: usize = 1 << 20;

/// Collections inside collections. A spec nests 4 deep (document, `spec:`,
/// `data_devices:`, `paths:`); PyYAML itself fails past about 490 (Python's
/// recursion limit). The reader recurses once per level, and 64 levels keep
/// that far inside the 2 MiB stacks of the daemon's worker threads.
pub const MAX_DEPTH: usize = 64;

/// Nodes (scalars, lists, mappings) written in the text: 2500 specs' worth.
/// Bounds the memory of the values read to a few MB.
pub const MAX_NODES: usize = 100_000;

/// Nodes copied by aliases (`*name`), all documents together. Real specs
/// use an alias or a `<<:` merge for a handful of shared keys; nine levels
/// of nine aliases each ("billion laughs") would copy 387 million.
pub const MAX_ALIAS_NODES: usize = 100_000;

/// Bytes of scalar text the reader copies: an anchored value's once (the
/// anchor keeps it), an alias's each time it is used. Counting nodes alone
/// lets one 600 KB scalar aliased 90 000 times ask for 54 GB; real specs
/// alias a few short keys. Four spec files' worth bounds what a file's
/// values take in memory to a few MB, and the time to copy them to a few ms.
pub const MAX_ALIAS_BYTES: usize = 4 * MAX_SPEC_BYTES;

/// Keys of one mapping, merged keys included. cephadm knows 25 keys of an
/// OSD spec and 7 filters of a device selection.
pub const MAX_KEYS: usize = 1_000;

/// Which budget a spec file exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Bytes,
    Depth,
    Nodes,
    AliasNodes,
    AliasBytes,
    Keys,
}

impl Limit {
    pub fn value(self) -> usize {
        match self {
            Limit::Bytes => MAX_SPEC_BYTES,
            Limit::Depth => MAX_DEPTH,
            Limit::Nodes => MAX_NODES,
            Limit::AliasNodes => MAX_ALIAS_NODES,
            Limit::AliasBytes => MAX_ALIAS_BYTES,
            Limit::Keys => MAX_KEYS,
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.value();
        match self {
            Limit::Bytes => write!(f, "the text is longer than {n} bytes, osdkeeper's limit for a spec file"),
            Limit::Depth => write!(f, "collections nest more than {n} deep, osdkeeper's limit for a spec"),
            Limit::Nodes => write!(f, "more than {n} nodes, osdkeeper's limit for a spec file"),
            Limit::AliasNodes => write!(
                f,
                "aliases copy more than {n} nodes, osdkeeper's limit for a spec file \
                 (nested aliases multiply: a few hundred bytes can ask for billions of nodes)"
            ),
            Limit::AliasBytes => write!(
                f,
                "anchors and aliases copy more than {n} bytes of text, osdkeeper's limit for a spec file \
                 (each alias copies its anchor's value: a large value aliased many times asks for gigabytes)"
            ),
            Limit::Keys => write!(f, "a mapping has more than {n} keys, osdkeeper's limit for one mapping of a spec"),
        }
    }
}

/// What the reader has spent so far on one stream.
#[derive(Debug, Default)]
pub struct Budget {
    nodes: usize,
    alias_nodes: usize,
    /// Scalar text in the values read, copies by aliases included.
    text_bytes: usize,
    /// Scalar text copied by anchors and aliases.
    copied_bytes: usize,
    depth: usize,
}

/// The size of a value read: its nodes and its scalars' bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub nodes: usize,
    pub bytes: usize,
}

impl Budget {
    /// One node written in the text.
    pub fn node(&mut self) -> Result<(), Limit> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(Limit::Nodes);
        }
        Ok(())
    }

    /// A scalar of `bytes` bytes written in the text.
    pub fn scalar(&mut self, bytes: usize) {
        self.text_bytes += bytes;
    }

    /// An alias that copies a value of `size`.
    pub fn alias(&mut self, size: Size) -> Result<(), Limit> {
        self.alias_nodes = self.alias_nodes.saturating_add(size.nodes);
        if self.alias_nodes > MAX_ALIAS_NODES {
            return Err(Limit::AliasNodes);
        }
        self.text_bytes = self.text_bytes.saturating_add(size.bytes);
        self.copy(size.bytes)
    }

    /// An anchor, which keeps a copy of its value of `bytes` for its aliases.
    pub fn anchor(&mut self, bytes: usize) -> Result<(), Limit> {
        self.copy(bytes)
    }

    fn copy(&mut self, bytes: usize) -> Result<(), Limit> {
        self.copied_bytes = self.copied_bytes.saturating_add(bytes);
        if self.copied_bytes > MAX_ALIAS_BYTES {
            return Err(Limit::AliasBytes);
        }
        Ok(())
    }

    /// What was produced so far, copies included: the size of a value is
    /// the difference between this before and after reading it.
    pub fn produced(&self) -> Size {
        Size { nodes: self.nodes + self.alias_nodes, bytes: self.text_bytes }
    }

    /// Into a collection.
    pub fn enter(&mut self) -> Result<(), Limit> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Limit::Depth);
        }
        Ok(())
    }

    pub fn leave(&mut self) {
        self.depth -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::yaml11::load_all;

    /// `a0: &a0 [x, x, ...]`, then each level an anchored list of nine
    /// aliases of the one before: 9^levels nodes from a few hundred bytes.
    fn laughs(levels: usize) -> String {
        let mut text = format!("a0: &a0 [{}]\n", ["x"; 9].join(","));
        for i in 1..levels {
            text.push_str(&format!("a{i}: &a{i} [{}]\n", vec![format!("*a{}", i - 1); 9].join(",")));
        }
        text
    }

    #[test]
    fn billion_laughs_stop_at_the_alias_budget() {
        let text = laughs(9);
        assert!(text.len() < 400, "{} bytes", text.len());
        let err = load_all(&text).unwrap_err();
        assert_eq!(err.limit, Some(Limit::AliasNodes), "{err}");
        // The lists of lines 1-5 hold 10, 91, 820, 7381 and 66430 nodes;
        // the aliases of line 5 have copied 74718, the first of line 6 passes 100000.
        assert_eq!(err.line, 6, "{err}");
        assert!(err.message.contains("aliases copy more than 100000 nodes"), "{err}");
    }

    /// The scalar-alias shape of issue 35: a 1 MB file, one 600 KB
    /// anchored scalar and 90 000 aliases of it (54 GB once copied).
    pub fn scalar_aliases() -> String {
        format!("big: &a '{}'\nmany: [{}]\n", "x".repeat(600_000), vec!["*a"; 90_000].join(","))
    }

    #[test]
    fn a_large_scalar_aliased_many_times_stops_at_the_byte_budget() {
        let text = scalar_aliases();
        assert!(text.len() <= MAX_SPEC_BYTES, "{} bytes", text.len());
        let err = load_all(&text).unwrap_err();
        assert_eq!((err.limit, err.line), (Some(Limit::AliasBytes), 2), "{err}");
        // The anchor keeps 600 000 bytes, each alias copies as many: the sixth passes 4 MiB.
        assert_eq!(err.column, "many: [".len() + 5 * "*a,".len() + 1, "{err}");
        assert!(err.to_string().starts_with("at line 2, column 23: anchors and aliases copy more than 4194304 bytes"));
        assert!(!err.to_string().contains('\n'), "one line: {err}");
    }

    #[test]
    fn nested_anchors_are_charged_for_their_copies() {
        // Each anchor keeps its own copy of the 900 KB scalar inside it.
        let mut text = format!("'{}'", "x".repeat(900_000));
        for i in 0..10 {
            text = format!("&a{i} [{text}]");
        }
        let err = load_all(&format!("v: {text}\n")).unwrap_err();
        assert_eq!(err.limit, Some(Limit::AliasBytes), "{err}");
        // Four copies fit in 4 MiB, the fifth anchor (the sixth from the outside) passes it.
        assert_eq!(err.column, "v: ".len() + 5 * "&aN [".len() + "&aN ".len() + 1, "{err}");
    }

    #[test]
    fn aliases_of_short_values_stay_well_within_the_byte_budget() {
        // 3000 specs sharing a 300-byte block: 900 KB of copies.
        let block =
            format!("{{{}}}", (0..10).map(|i| format!("k{i}: '{}'", "v".repeat(20))).collect::<Vec<_>>().join(", "));
        let text = format!("shared: &s {block}\nusers: [{}]\n", vec!["*s"; 3000].join(", "));
        assert!(load_all(&text).is_ok());
    }

    #[test]
    fn deep_nesting_stops_at_the_depth_limit() {
        let block = "- ".repeat(100_000) + "x\n";
        let err = load_all(&block).unwrap_err();
        assert_eq!(err.limit, Some(Limit::Depth), "{err}");
        assert!(err.message.contains("nest more than 64 deep"), "{err}");
        let flow = format!("v: {}{}\n", "[".repeat(200), "]".repeat(200));
        assert_eq!(load_all(&flow).unwrap_err().limit, Some(Limit::Depth));
        assert!(load_all(&("- ".repeat(MAX_DEPTH) + "x\n")).is_ok());
    }

    #[test]
    fn node_and_key_counts_are_bounded() {
        let keys: String = (0..40_000).map(|i| format!("k{i}: v\n")).collect();
        let err = load_all(&keys).unwrap_err();
        assert_eq!((err.limit, err.line), (Some(Limit::Keys), MAX_KEYS + 1), "{err}");
        let nodes = format!("v: [{}]\n", vec!["1"; 150_000].join(","));
        let err = load_all(&nodes).unwrap_err();
        assert_eq!(err.limit, Some(Limit::Nodes), "{err}");
        assert!(err.to_string().starts_with("at line 1, column"), "{err}");
    }

    #[test]
    fn oversized_text_is_refused() {
        let text = format!("v: '{}'\n", "x".repeat(2 << 20));
        let err = load_all(&text).unwrap_err();
        assert_eq!((err.limit, err.line), (Some(Limit::Bytes), 1), "{err}");
        assert!(err.message.contains("longer than 1048576 bytes"), "{err}");
    }
}
