//! The architecture invariants of ARCHITECTURE.md, each checked here on the
//! source text (cheap, and a change that breaks one fails at once).

use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The files under `dir` that `keep` accepts; installed node modules are
/// not the project's.
fn files_where(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if !path.ends_with("node_modules") {
                files_where(&path, keep, out);
            }
        } else if keep(&path) {
            out.push(path);
        }
    }
}

fn files_with(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    files_where(dir, &|p| p.extension().is_some_and(|e| e == ext), out);
}

/// The Rust files under `src/<dir>` (or one file, `src/<dir>.rs`).
fn rust_files(dir: &str) -> Vec<PathBuf> {
    let root = src().join(dir);
    let mut files = Vec::new();
    if root.is_dir() {
        files_with(&root, "rs", &mut files);
    } else {
        files.push(src().join(format!("{dir}.rs")));
    }
    assert!(!files.is_empty() && files.iter().all(|f| f.exists()), "found the sources of {dir}");
    files
}

fn rel(f: &Path) -> String {
    f.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().display().to_string()
}

/// Each line of code with its number, comments cut off.
fn code_lines(f: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(f).unwrap();
    text.lines().enumerate().map(|(n, l)| (n + 1, l.split("//").next().unwrap_or_default().to_string())).collect()
}

/// Every place in `files` whose code contains one of `words`.
fn hits(files: &[PathBuf], words: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for f in files {
        for (n, line) in code_lines(f) {
            for w in words {
                if line.contains(w) {
                    out.push(format!("{}:{n}: {w}", rel(f)));
                }
            }
        }
    }
    out
}

fn all_but(dirs: &[&str]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    files_with(&src(), "rs", &mut files);
    files.retain(|f| {
        let r = rel(f);
        !dirs.iter().any(|d| r.starts_with(&format!("src/{d}/")) || r == format!("src/{d}.rs"))
    });
    files
}

/// The pure core does no I/O: no async runtime, no database, no HTTP, no
/// process or file access, no clock. (Scoped threads for data parallelism
/// are allowed: they do not change results.)
#[test]
fn domain_does_no_io() {
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
    let found = hits(&rust_files("domain"), &forbidden);
    assert!(found.is_empty(), "I/O in the pure core:\n{}", found.join("\n"));
}

/// The core depends on nothing else in the crate: layers point down to it.
#[test]
fn domain_imports_only_domain() {
    let mut found = Vec::new();
    for f in rust_files("domain") {
        for (n, line) in code_lines(&f) {
            if line.contains("crate::") && !line.contains("crate::domain") {
                found.push(format!("{}:{n}: {}", rel(&f), line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "the core reaches up:\n{}", found.join("\n"));
}

/// Only one module reads YAML.
#[test]
fn yaml_is_read_in_one_place() {
    let mut files = Vec::new();
    files_with(&src(), "rs", &mut files);
    let readers: Vec<String> =
        files.iter().filter(|f| std::fs::read_to_string(f).unwrap().contains("yaml_rust2")).map(|f| rel(f)).collect();
    assert_eq!(readers, vec!["src/domain/yaml11.rs".to_string()]);
}

/// Only the store's SQLite adapter (`store/sqlite/`) holds SQL.
#[test]
fn sql_only_in_the_sqlite_adapter() {
    let found = hits(
        &all_but(&["store/sqlite"]),
        &["sqlx::", "SELECT ", "INSERT INTO", "UPDATE ", "DELETE FROM", "CREATE TABLE"],
    );
    assert!(found.is_empty(), "SQL outside store/sqlite/:\n{}", found.join("\n"));
}

/// The store is a seam: the daemon and everything else see `Store` and
/// the store's row types; the database library (sqlx) and SQLite's types
/// appear only in its SQLite adapter (the migrations are SQL files beside
/// `src/`).
#[test]
fn the_database_library_only_in_the_sqlite_adapter() {
    let found = hits(&all_but(&["store/sqlite"]), &["sqlx", "Sqlite"]);
    assert!(found.is_empty(), "sqlx or SQLite types outside store/sqlite/:\n{}", found.join("\n"));
}

/// The backend traits, which another database would implement, name no
/// type of a database library: no pool, connection, transaction or row
/// of one.
#[test]
fn the_backend_traits_name_no_database_types() {
    let seam = [src().join("store/backend.rs")];
    let found = hits(&seam, &["sqlx", "Sqlite", "Pool", "Connection", "Transaction", "sqlite::", "::Row"]);
    assert!(found.is_empty(), "database types in the backend's signatures:\n{}", found.join("\n"));
    let text = std::fs::read_to_string(&seam[0]).unwrap();
    for part in ["pub trait Backend:", "impl<T> Backend for T"] {
        assert!(text.contains(part), "store/backend.rs declares {part:?}");
    }
}

/// The store keeps its own row types: the API's types are built from them
/// at the edge (`impl From<store::X> for wire::api::Y`), so a change to the
/// JSON never reaches the database, nor a new column the JSON.
#[test]
fn store_does_not_know_the_api() {
    let found = hits(&rust_files("store"), &["wire::api"]);
    assert!(found.is_empty(), "the API's types in store/:\n{}", found.join("\n"));
}

/// Ordinary queries are SQL that other databases read too; what only
/// SQLite has (its pragmas, `VACUUM INTO`, `BEGIN IMMEDIATE`, its own
/// functions and syntax) is kept to the adapter's `mod.rs` (connections,
/// transactions, what other writers did), `backup.rs`, `rados.rs` (the
/// pragmas of a database kept in RADOS) and `rados_restore.rs` (a backup
/// put in place inside such a database: its schema, its journal), where
/// their comments say why. JSON functions belong to the migrations.
#[test]
fn sqlite_only_sql_is_kept_to_the_connection_files() {
    let mut queries = Vec::new();
    files_with(&src().join("store/sqlite"), "rs", &mut queries);
    queries.retain(|f| {
        !["mod.rs", "backup.rs", "rados.rs", "rados_restore.rs", "tests.rs"].iter().any(|n| f.ends_with(n))
    });
    assert!(queries.len() > 5, "found the adapter's query files");
    let sqlite_only = [
        "pragma",
        "vacuum",
        "begin immediate",
        "insert or ",
        "replace into",
        "rowid",
        "autoincrement",
        "glob ",
        "ifnull(",
        "strftime(",
        "datetime(",
        "julianday(",
        "printf(",
        "group_concat(",
        "instr(",
        "json_extract(",
        "json_each(",
        "json_object(",
        "json_array(",
        "json_group",
        "->>",
    ];
    let mut found = Vec::new();
    for f in &queries {
        for (n, line) in code_lines(f) {
            let line = line.to_lowercase();
            found.extend(sqlite_only.iter().filter(|w| line.contains(*w)).map(|w| format!("{}:{n}: {w}", rel(f))));
        }
    }
    assert!(found.is_empty(), "SQLite's own SQL in ordinary queries:\n{}", found.join("\n"));
}

/// The daemon's side reads ceph-volume's inventory JSON only in `wire/`. The
/// agent, which runs ceph-volume, reads and writes that JSON in
/// `agent_server/`; the simulator writes it for its simulated hosts.
#[test]
fn ceph_volume_json_only_in_wire() {
    let keys = ["\"sys_api\"", "\"lsm_data\"", "\"rejected_reasons\"", "\"lvs\"", "\"ceph_device\""];
    let found = hits(&all_but(&["wire", "agent_server", "sim"]), &keys);
    assert!(found.is_empty(), "ceph-volume's JSON read outside wire/:\n{}", found.join("\n"));
}

/// The code of a file without its tests: an inline test module
/// (`#[cfg(test)] mod ... {`, last in a file by habit here), and files that
/// hold only tests (`tests.rs`, `tests/`).
fn non_test_lines(f: &Path) -> Vec<(usize, String)> {
    let r = rel(f);
    if r.ends_with("/tests.rs") || r.contains("/tests/") {
        return Vec::new();
    }
    let lines = code_lines(f);
    let end = lines
        .windows(2)
        .position(|w| {
            let next = w[1].1.trim();
            w[0].1.trim() == "#[cfg(test)]" && next.starts_with("mod ") && next.ends_with('{')
        })
        .unwrap_or(lines.len());
    lines[..end].to_vec()
}

/// A device report (an entry of `ceph-volume inventory --format json`) is
/// read in one place: `wire/ceph_volume.rs`, with its fast path
/// `wire/ceph_volume_scan.rs`, into `DeviceReport`. Everywhere else the
/// report's keys are only written (the agent's kernel view, the simulator)
/// or named in tests: no code outside the reader looks one up in a JSON
/// value (`.get("lvs")`, `["lvs"]` other than as the target of an
/// assignment, `.pointer("/sys_api/...")`).
#[test]
fn one_reader_of_device_reports() {
    let keys = [
        "path",
        "available",
        "ceph_device",
        "ceph_device_lvm",
        "rejected_reasons",
        "device_id",
        "sys_api",
        "lsm_data",
        "lvs",
        "partitions",
        "rotational",
        "osd_id",
        "osdspec_affinity",
    ];
    let mut files = Vec::new();
    files_with(&src(), "rs", &mut files);
    let reader = ["src/wire/ceph_volume.rs", "src/wire/ceph_volume_scan.rs"];
    let mut found = Vec::new();
    for f in files.iter().filter(|f| !reader.contains(&rel(f).as_str())) {
        for (n, line) in non_test_lines(f) {
            for key in keys {
                let indexed = format!("[\"{key}\"]");
                let assigned = |at: usize| {
                    let rest = line[at + indexed.len()..].trim_start();
                    rest.starts_with('=') && !rest.starts_with("==")
                };
                let reads_by_index = line.match_indices(&indexed).any(|(at, _)| !assigned(at));
                if reads_by_index
                    || line.contains(&format!(".get(\"{key}\")"))
                    || line.contains(&format!(".pointer(\"/{key}"))
                {
                    found.push(format!("{}:{n}: {}", rel(f), line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "a device report read outside wire/ceph_volume.rs:\n{}", found.join("\n"));
}

/// HTTP status codes and the web framework belong to `api/` (the daemon's
/// HTTP API), `agent_server/` (the agent's), `app/` (which serves the
/// router) and `http_server.rs` (which serves both routers, over TLS or
/// not). The daemon's operations say what went wrong by meaning.
#[test]
fn http_only_at_the_edges() {
    let found = hits(&all_but(&["api", "agent_server", "app", "http_server"]), &["axum", "StatusCode", "http::status"]);
    assert!(found.is_empty(), "HTTP outside api/, agent_server/, app/ and http_server.rs:\n{}", found.join("\n"));
}

/// Arrows point down: the daemon never reaches up into the API, the CLI or
/// the composition root; the API only serves what the daemon gives it.
#[test]
fn daemon_never_imports_api_cli_or_app() {
    let found =
        hits(&rust_files("daemon"), &["crate::api", "crate::cli", "crate::app", "crate::render", "crate::client"]);
    assert!(found.is_empty(), "daemon/ reaches up:\n{}", found.join("\n"));
}

/// Only the composition root builds the router and wires the layers.
#[test]
fn only_app_builds_the_router() {
    let found = hits(&all_but(&["app", "api"]), &["api::router"]);
    assert!(found.is_empty(), "api::router used outside app/:\n{}", found.join("\n"));
}

/// `Daemon` is a façade over the services: it has methods only where it
/// is defined, so no feature grows into it from another file.
#[test]
fn daemon_has_methods_only_in_its_module() {
    let files: Vec<PathBuf> = rust_files("").into_iter().filter(|f| rel(f) != "src/daemon/mod.rs").collect();
    let found = hits(&files, &["impl Daemon {", "impl super::Daemon {", "impl crate::daemon::Daemon {"]);
    assert!(found.is_empty(), "methods on Daemon outside daemon/mod.rs:\n{}", found.join("\n"));
}

/// The named fields of `pub struct NAME {` in `text`, `#[cfg(test)]` ones
/// left out: (line, field) for each.
fn struct_fields(text: &str, name: &str) -> Option<Vec<String>> {
    let start = text.find(&format!("pub struct {name} {{")).or_else(|| text.find(&format!("struct {name} {{")))?;
    let body = &text[start..start + text[start..].find("\n}").unwrap()];
    let mut out = Vec::new();
    let mut skip_next = false;
    for line in body.lines().skip(1) {
        let t = line.trim();
        if t.starts_with("#[cfg(test)]") {
            skip_next = true;
            continue;
        }
        let is_field =
            line.starts_with("    ") && !line.starts_with("     ") && !t.starts_with("//") && t.contains(':');
        if is_field && !std::mem::take(&mut skip_next) {
            out.push(t.to_string());
        }
    }
    Some(out)
}

/// The services are the types of `Daemon`'s fields. Each keeps its state
/// to itself: no field of a service is public, and each is defined in a
/// module of its own, so no other service reaches into its fields.
#[test]
fn services_keep_their_fields_private() {
    let facade = std::fs::read_to_string(src().join("daemon/mod.rs")).unwrap();
    let fields = struct_fields(&facade, "Daemon").expect("the Daemon struct");
    let services: Vec<&str> = fields
        .iter()
        .filter_map(|f| f.split_once("Arc<")?.1.split_once('>').map(|(t, _)| t.rsplit("::").next().unwrap()))
        .collect();
    assert!(services.len() >= 8, "the services of Daemon: {services:?}");
    let mut found = Vec::new();
    for service in &services {
        let defined: Vec<(PathBuf, Vec<String>)> = rust_files("daemon")
            .into_iter()
            .filter_map(|f| {
                let text = std::fs::read_to_string(&f).unwrap();
                text.contains(&format!("pub struct {service} {{")).then(|| (f, struct_fields(&text, service).unwrap()))
            })
            .collect();
        assert_eq!(defined.len(), 1, "{service} is defined once");
        let (file, fields) = &defined[0];
        for f in fields.iter().filter(|f| f.starts_with("pub")) {
            found.push(format!("{}: {service}.{f}", rel(file)));
        }
    }
    assert!(found.is_empty(), "public fields of services:\n{}", found.join("\n"));
}

/// Small types: no file in daemon/ defines methods on a type with more
/// than 10 fields (a type that keeps growing is a second service in one).
#[test]
fn daemon_types_stay_small() {
    let files: Vec<PathBuf> = rust_files("daemon")
        .into_iter()
        .filter(|f| !rel(f).contains("tests") && !rel(f).ends_with("_tests.rs"))
        .collect();
    let texts: Vec<(PathBuf, String)> =
        files.iter().map(|f| (f.clone(), std::fs::read_to_string(f).unwrap())).collect();
    let mut found = Vec::new();
    for (file, text) in &texts {
        for line in text.lines().filter(|l| l.starts_with("impl")) {
            let Some(name) = line
                .trim_end_matches(" {")
                .rsplit(' ')
                .next()
                .map(|t| t.split('<').next().unwrap().rsplit("::").next().unwrap().to_string())
            else {
                continue;
            };
            for (_, def) in &texts {
                if let Some(fields) = struct_fields(def, &name) {
                    if fields.len() > 10 {
                        found.push(format!("{}: {name} has {} fields", rel(file), fields.len()));
                    }
                }
            }
        }
    }
    found.sort();
    found.dedup();
    assert!(found.is_empty(), "methods on types with more than 10 fields:\n{}", found.join("\n"));
}

/// The agent shares only the wire formats with the rest of the crate (and
/// TLS and the HTTP server, which serve the daemon too).
#[test]
fn agent_server_imports_only_wire() {
    let mut found = Vec::new();
    for f in rust_files("agent_server") {
        for (n, line) in code_lines(&f) {
            let mut rest = line.as_str();
            while let Some(i) = rest.find("crate::") {
                let path = &rest[i + 7..];
                if !(path.starts_with("agent_server")
                    || path.starts_with("wire")
                    || path.starts_with("error_chain")
                    || path.starts_with("tls")
                    || path.starts_with("http_server"))
                {
                    found.push(format!("{}:{n}: {}", rel(&f), line.trim()));
                }
                rest = path;
            }
        }
    }
    assert!(found.is_empty(), "agent_server/ imports beyond wire/ (and tls, http_server):\n{}", found.join("\n"));
}

/// The core's types are plain: how a value is JSON (for the API or the
/// database) is decided at the edge, `wire/api/` (`names.rs`, `mirror.rs`)
/// and the store's codecs, never by a derive or a serde attribute in
/// `domain/`.
#[test]
fn the_core_derives_no_serialization() {
    let found = hits(&rust_files("domain"), &["Serialize", "Deserialize", "ToSchema", "#[serde", "serde::", "utoipa"]);
    assert!(found.is_empty(), "serialization in domain/:\n{}", found.join("\n"));
}

/// The CLI reads the daemon's answers as the API's types, never as untyped
/// JSON, and reaches the daemon only through `client.rs` (`serve` and
/// `demo` start it through `app/`).
#[test]
fn cli_is_typed_and_talks_only_http() {
    let mut files: Vec<PathBuf> = [rust_files("cli"), rust_files("client"), rust_files("render")].concat();
    // `--format yaml` writes a typed answer, turned into JSON values, as
    // YAML: it writes JSON values, it never reads any.
    files.retain(|f| rel(f) != "src/render/yaml.rs");
    let found = hits(&files, &["serde_json::Value", "json!", "crate::store", "crate::daemon", "crate::api"]);
    assert!(found.is_empty(), "the CLI reads untyped JSON or bypasses the API:\n{}", found.join("\n"));
}

/// The CLI prints through `cli::out`, which ends quietly when the reader
/// of a pipe went away (`| head`); `println!` would panic there. The agent
/// is a server: its one line, the address it listens on, is for whoever
/// started it.
#[test]
fn the_cli_prints_through_out() {
    let mut files: Vec<PathBuf> = [rust_files("cli"), rust_files("render")].concat();
    files.retain(|f| !["src/cli/out.rs", "src/cli/agent.rs"].contains(&rel(f).as_str()));
    let mut found = Vec::new();
    for f in &files {
        for (n, line) in code_lines(f) {
            // stderr (`eprintln!`) is not a pipe a reader closes.
            let line = line.replace("eprintln!", "").replace("eprint!", "");
            if line.contains("println!") || line.contains("print!(") {
                found.push(format!("{}:{n}", rel(f)));
            }
        }
    }
    assert!(found.is_empty(), "printing past cli::out:\n{}", found.join("\n"));
}

/// Files stay small enough to read in one sitting. A file over the limit
/// outside `wire/` (external formats, long by nature) needs a reason here.
#[test]
fn files_are_small_or_say_why() {
    const LIMIT: usize = 450;
    let reasons: &[(&str, &str)] = &[
        ("src/domain/selection.rs", "cephadm's DriveSelection walk is one algorithm; split, its order would be hidden"),
        ("src/domain/yaml11.rs", "PyYAML's scalar resolution rules, one table"),
        ("src/domain/spec/parse.rs", "cephadm's validation order, field by field"),
        ("src/agent_server/inventory/mod.rs", "the agent's inventory sources and their tests"),
    ];
    let mut files = Vec::new();
    files_with(&src(), "rs", &mut files);
    files_with(&src().join("web"), "js", &mut files);
    let mut long = Vec::new();
    for f in &files {
        let r = rel(f);
        let lines = std::fs::read_to_string(f).unwrap().lines().count();
        if lines > LIMIT && !r.starts_with("src/wire/") && !reasons.iter().any(|(p, _)| *p == r) {
            long.push(format!("{r}: {lines} lines"));
        }
    }
    assert!(long.is_empty(), "files over {LIMIT} lines without a stated reason:\n{}", long.join("\n"));
    for (p, _) in reasons {
        let lines = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(p)).unwrap().lines().count();
        assert!(lines > LIMIT, "{p} is {lines} lines now: drop its reason");
    }
}

/// The dashboard compares the daemon's event kinds, removal, deployment
/// and benchmark phases (a benchmark's passes are among them) and stream
/// messages only with the names of the module the daemon generates
/// from its enums (`kinds.js`), never with literals.
#[test]
fn dashboard_names_kinds_only_through_the_generated_module() {
    let mut files = Vec::new();
    files_with(&src().join("web"), "js", &mut files);
    assert!(files.len() > 5, "found the dashboard's modules");
    assert!(!src().join("web/kinds.js").exists(), "kinds.js is generated, not a file");
    let names: Vec<&str> = osdkeeper::domain::event::EventKind::ALL
        .iter()
        .map(|k| k.as_str())
        .chain(osdkeeper::domain::removal::Phase::ALL.iter().map(|p| p.as_str()))
        .chain(osdkeeper::domain::deploy::DeployPhase::ALL.iter().map(|p| p.as_str()))
        .chain(osdkeeper::domain::bench::cluster::ClusterPhase::ALL.iter().map(|p| p.as_str()))
        // ("event" is also the SSE protocol's own field name, which the stream reader matches.)
        .chain(["hello", "removals", "hosts", "specs", "deployments", "resync"])
        .collect();
    let comparisons: Vec<String> =
        names.iter().flat_map(|n| ["=== ", "!== ", "== ", "!= ", "case "].map(|op| format!("{op}'{n}'"))).collect();
    let words: Vec<&str> = comparisons.iter().map(String::as_str).collect();
    let found = hits(&files, &words);
    assert!(found.is_empty(), "kind or phase names written as literals:\n{}", found.join("\n"));
}

/// Every module says what it owns in a `//!` comment.
#[test]
fn every_module_says_what_it_holds() {
    let mut files = Vec::new();
    files_with(&src(), "rs", &mut files);
    let silent: Vec<String> = files
        .iter()
        .filter(|f| !f.ends_with("tests.rs") && !f.ends_with("main.rs"))
        .filter(|f| !std::fs::read_to_string(f).unwrap().trim_start().starts_with("//!"))
        .map(|f| rel(f))
        .collect();
    assert!(silent.is_empty(), "modules without a //! comment:\n{}", silent.join("\n"));
}

/// The testbed (the Ceph sandbox, the cephadm oracle, the real-kernel host
/// scripts) is the repository's own, in `testbed/`: a clone alone runs every
/// test, so nothing the tests, scripts, benchmarks or CI run reaches for a
/// directory beside the clone.
#[test]
fn tests_reach_nothing_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(root.join("testbed/ceph-sandbox/start.sh").exists(), "the Ceph sandbox is in testbed/");
    assert!(root.join("testbed/cephadm-oracle/preview.py").exists(), "the cephadm oracle is in testbed/");
    // Spelled in pieces so that this file does not name it itself.
    let outside = ["..", "shared"].join("/");
    let joined = ["'..'", "'shared'"].join(", ");
    let mut files = Vec::new();
    for dir in ["tests", "scripts", "bench", ".ci"] {
        files_where(&root.join(dir), &|_| true, &mut files);
    }
    let mut found = Vec::new();
    for f in &files {
        let text = String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned();
        for (n, line) in text.lines().enumerate() {
            if line.contains(&outside) || line.contains(&joined) {
                found.push(format!("{}:{}: {}", rel(f), n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "paths outside the repository (the testbed is in testbed/):\n{}", found.join("\n"));
}

#[path = "tidy/import_cycles.rs"]
mod import_cycles;
