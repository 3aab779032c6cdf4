//! Files of one folder import each other without a cycle, except through
//! the folder's `mod.rs`: a cycle means a helper sits in the wrong file.
//! Imports are read from the code before its tests (`crate::`, `super::`
//! and `self::` paths), each resolved to the longest module it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{files_with, rel, src};

/// The cycles that were there when the rule came, each to be broken; a
/// cycle here that is gone must leave the list.
const KNOWN: [(&str, &str); 6] = [
    ("ceph::cli ceph::session", "the session adapter and the CLI each call the other's helpers"),
    (
        "daemon::bench::probe_kind daemon::bench::probes",
        "the probe kind and the probe service share their types both ways",
    ),
    (
        "sim::answers sim::cluster sim::health sim::pgmap sim::placement sim::state",
        "the simulator's state and its answers",
    ),
    ("sim::agents sim::identity sim::prepare", "the simulated agents and what they check"),
    ("store::sqlite::hosts store::sqlite::inventories", "host rows and their inventories are written together"),
    ("wire::ceph_volume wire::ceph_volume_scan", "the report reader and its byte scanner (issue 36: one reader)"),
];

/// A file's module path (`agent_server::disks::zap`), and whether it is a
/// folder's `mod.rs`.
fn module_of(file: &Path) -> (String, bool) {
    let r = rel(file);
    let r = r.trim_start_matches("src/").trim_end_matches(".rs");
    let folder = r.ends_with("/mod");
    let r = r.trim_end_matches("/mod");
    let m = if r == "lib" || r == "main" { String::new() } else { r.replace('/', "::") };
    (m, folder)
}

fn parent(m: &str) -> &str {
    m.rsplit_once("::").map_or("", |(p, _)| p)
}

/// The modules a file's code (before its tests) names.
fn imports(text: &str, module: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let path = regex::Regex::new(r"(?:^|[^\w:])((?:crate|self|(?:super::)*super)::[a-z_][a-z0-9_:]*)").unwrap();
    let here: Vec<&str> = if module.is_empty() { vec![] } else { module.split("::").collect() };
    let mut out = BTreeSet::new();
    for c in path.captures_iter(code) {
        let words: Vec<&str> = c[1].split("::").filter(|w| !w.is_empty()).collect();
        let ups = words.iter().take_while(|w| **w == "super").count();
        let mut full: Vec<&str> = match words[0] {
            "crate" => vec![],
            "self" => here.clone(),
            _ => here[..here.len().saturating_sub(ups)].to_vec(),
        };
        let skip = if words[0] == "super" { ups } else { 1 };
        full.extend(&words[skip..]);
        let longest = (1..=full.len()).rev().map(|n| full[..n].join("::")).find(|m| known.contains(m));
        out.extend(longest.filter(|m| m != module));
    }
    out
}

/// Strongly connected groups of more than one module, by Tarjan's walk.
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        found: Vec<Vec<String>>,
    }
    fn visit(w: &mut Walk, v: &str) {
        let n = w.index.len();
        w.index.insert(v.to_string(), n);
        w.low.insert(v.to_string(), n);
        w.stack.push(v.to_string());
        for next in w.edges.get(v).into_iter().flatten() {
            if !w.index.contains_key(next) {
                visit(w, next);
                let low = w.low[v].min(w.low[next]);
                w.low.insert(v.to_string(), low);
            } else if w.stack.contains(next) {
                let low = w.low[v].min(w.index[next]);
                w.low.insert(v.to_string(), low);
            }
        }
        if w.low[v] == w.index[v] {
            let at = w.stack.iter().position(|s| s == v).unwrap();
            let mut group = w.stack.split_off(at);
            if group.len() > 1 {
                group.sort();
                w.found.push(group);
            }
        }
    }
    let mut w = Walk { edges, index: BTreeMap::new(), low: BTreeMap::new(), stack: vec![], found: vec![] };
    for v in edges.keys() {
        if !w.index.contains_key(v) {
            visit(&mut w, v);
        }
    }
    w.found
}

#[test]
fn files_of_a_folder_import_each_other_without_a_cycle() {
    let mut files = Vec::new();
    files_with(&src(), "rs", &mut files);
    let modules: Vec<(String, bool, String)> = files
        .iter()
        .map(|f| {
            let (m, folder) = module_of(f);
            (m, folder, std::fs::read_to_string(f).unwrap())
        })
        .collect();
    let known: BTreeSet<String> = modules.iter().map(|(m, _, _)| m.clone()).collect();
    let folders: BTreeSet<&String> = modules.iter().filter(|(_, f, _)| *f).map(|(m, _, _)| m).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, folder, text) in &modules {
        if *folder || m.is_empty() {
            continue;
        }
        let same_folder =
            imports(text, m, &known).into_iter().filter(|i| parent(i) == parent(m) && !folders.contains(i)).collect();
        edges.insert(m.clone(), same_folder);
    }
    let found: Vec<String> = cycles(&edges).into_iter().map(|c| c.join(" ")).collect();
    let known_cycles: Vec<&str> = KNOWN.iter().map(|(c, _)| *c).collect();
    let new: Vec<&String> = found.iter().filter(|c| !known_cycles.contains(&c.as_str())).collect();
    assert!(new.is_empty(), "files of one folder that import each other in a cycle: {new:#?}");
    let gone: Vec<&&str> = known_cycles.iter().filter(|c| !found.iter().any(|f| f == *c)).collect();
    assert!(gone.is_empty(), "cycles listed in KNOWN that are broken now; take them off the list: {gone:#?}");
}
