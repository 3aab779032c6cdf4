//! The stored specs as parsed documents, kept between reconciler passes:
//! a spec is parsed again only when a new version of it was stored, not
//! on every pass over every spec.

use std::collections::HashMap;
use std::sync::Mutex;

use super::apply::stored_document;
use crate::domain::ceph_release::Release;
use crate::domain::spec::SpecDocument;
use crate::store::AppliedSpec;

/// A stored version and the release it was read as.
type ReadAs = (i64, Release);

/// Service name -> (how it was read, its document).
#[derive(Default)]
pub struct ParsedSpecs(Mutex<HashMap<String, (ReadAs, SpecDocument)>>);

impl ParsedSpecs {
    /// The document of `record` as the `index`th of a pass, read as the
    /// cephadm of `release`: from the cache when this version was read so
    /// before (an upgrade of the cluster reads every spec again).
    pub fn document(&self, record: &AppliedSpec, index: usize, release: Release) -> Result<SpecDocument, String> {
        let cached = self.0.lock().expect("parsed specs lock").get(&record.service_name).cloned();
        let mut doc = match cached {
            Some((key, doc)) if key == (record.version, release) => doc,
            _ => {
                let doc = stored_document(record, index, release)?;
                let mut cache = self.0.lock().expect("parsed specs lock");
                cache.insert(record.service_name.clone(), ((record.version, release), doc.clone()));
                doc
            }
        };
        doc.doc = index;
        Ok(doc)
    }

    /// Forgets the specs no longer stored.
    pub fn keep_only(&self, records: &[AppliedSpec]) {
        let names: std::collections::HashSet<&str> = records.iter().map(|r| r.service_name.as_str()).collect();
        self.0.lock().expect("parsed specs lock").retain(|name, _| names.contains(name.as_str()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(version: i64, source: &str) -> AppliedSpec {
        AppliedSpec {
            service_name: "osd.a".into(),
            service_id: Some("a".into()),
            source: source.into(),
            spec_json: "{}".into(),
            unmanaged: false,
            version,
            created_at: 0,
            updated_at: 0,
        }
    }

    const A: &str =
        "service_type: osd\nservice_id: a\nplacement:\n  host_pattern: '*'\nspec:\n  data_devices:\n    all: true\n";

    #[test]
    fn a_version_is_parsed_once_and_a_new_one_again() {
        let parsed = ParsedSpecs::default();
        let first = parsed.document(&record(1, A), 3, Release::Pacific).unwrap();
        assert_eq!(first.doc, 3);
        // The same version with other text stored: the cached parse answers.
        let again = parsed.document(&record(1, "not: [valid"), 0, Release::Pacific).unwrap();
        assert_eq!((again.doc, again.source.as_str()), (0, first.source.as_str()));
        assert!(parsed.document(&record(2, "not: [valid"), 0, Release::Pacific).is_err(), "a new version is parsed");
        let upgraded = parsed.document(&record(2, A), 0, Release::Tentacle).unwrap();
        assert_eq!(upgraded.spec.unwrap().release, Release::Tentacle, "another release reads it again");
        parsed.keep_only(&[]);
        assert!(parsed.0.lock().unwrap().is_empty());
    }
}
