//! Architecture invariants that are cheap to check mechanically.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The pure core does no I/O: no async runtime, no database, no HTTP, no
/// process or file access, no clock. (Scoped threads for data parallelism
/// are allowed: they do not change results.)
#[test]
fn domain_does_no_io() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/domain");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(files.len() > 5, "found the domain sources");
    let forbidden = [
        "tokio",
        "sqlx",
        "reqwest",
        "axum",
        "std::fs",
        "std::net::Tcp",
        "std::process",
        "SystemTime",
        "Instant::now",
        "std::env",
        "println!",
        "eprintln!",
    ];
    let mut hits = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            for word in forbidden {
                if code.contains(word) {
                    hits.push(format!("{}:{}: {word}", f.display(), n + 1));
                }
            }
        }
    }
    assert!(hits.is_empty(), "I/O in the pure core:\n{}", hits.join("\n"));
}

/// Only one module reads YAML.
#[test]
fn yaml_is_read_in_one_place() {
    let mut files = Vec::new();
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    let readers: Vec<String> = files
        .iter()
        .filter(|f| std::fs::read_to_string(f).unwrap().contains("yaml_rust2"))
        .map(|f| f.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().display().to_string())
        .collect();
    assert_eq!(readers, vec!["src/domain/yaml11.rs".to_string()]);
}
