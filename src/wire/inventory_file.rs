//! The inventory file `osdkeeper preview` reads (the format of
//! ../shared/cephadm-oracle): `hosts` (host -> ceph-volume inventory list, in
//! the order hosts were added), and optional `labels`, `existing_daemons`
//! (service_id -> host -> count) and `osd_id_claims` (short host -> ids).

use std::collections::HashMap;
use std::io::Read;

use super::ceph_volume::parse_device_list;
use super::json_stream::{JsonStream, StreamError};
use crate::domain::inventory::{ClusterView, HostInventory};

#[derive(Debug, thiserror::Error)]
pub enum InventoryFileError {
    #[error(transparent)]
    Stream(#[from] StreamError),
    #[error("host {host:?}: {source}")]
    Host {
        host: String,
        source: serde_json::Error,
    },
    #[error("{key}: {source}")]
    Section {
        key: String,
        source: serde_json::Error,
    },
    #[error("the inventory must be a JSON object with a \"hosts\" mapping")]
    NotAnInventory,
}

/// Reads an inventory, host by host, keeping only what planning needs.
pub fn read_inventory<R: Read>(src: R) -> Result<ClusterView, InventoryFileError> {
    let mut s = JsonStream::new(src);
    if s.peek()? != Some(b'{') {
        return Err(InventoryFileError::NotAnInventory);
    }
    s.expect(b'{')?;
    let mut view = ClusterView::default();
    let mut labels: HashMap<String, Option<Vec<String>>> = HashMap::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut saw_hosts = false;
    if !s.at_close(b'}')? {
        loop {
            let key = s.string()?;
            s.expect(b':')?;
            match key.as_str() {
                "hosts" => {
                    saw_hosts = true;
                    if s.peek()? != Some(b'{') {
                        return Err(InventoryFileError::NotAnInventory);
                    }
                    s.expect(b'{')?;
                    if !s.at_close(b'}')? {
                        loop {
                            let host = s.string()?;
                            s.expect(b':')?;
                            let devices = parse_device_list(s.value()?).map_err(|source| {
                                InventoryFileError::Host {
                                    host: host.clone(),
                                    source,
                                }
                            })?;
                            match index.get(&host) {
                                Some(&i) => view.hosts[i].devices = devices,
                                None => {
                                    index.insert(host.clone(), view.hosts.len());
                                    view.hosts.push(HostInventory {
                                        name: host,
                                        labels: Vec::new(),
                                        devices,
                                    });
                                }
                            }
                            if !s.next_member(b'}')? {
                                break;
                            }
                        }
                    }
                }
                "labels" => labels = section(s.value()?, &key)?,
                "existing_daemons" => {
                    let raw: Option<HashMap<String, Option<HashMap<String, u64>>>> =
                        section(s.value()?, &key)?;
                    view.existing_daemons = raw
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(k, v)| (k, v.unwrap_or_default()))
                        .collect();
                }
                "osd_id_claims" => {
                    let raw: Option<HashMap<String, Vec<serde_json::Value>>> =
                        section(s.value()?, &key)?;
                    view.osd_id_claims = raw
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(h, ids)| {
                            let ids = ids
                                .into_iter()
                                .map(|v| match v {
                                    serde_json::Value::String(s) => s,
                                    other => other.to_string(),
                                })
                                .collect();
                            (h, ids)
                        })
                        .collect();
                }
                _ => {
                    s.value()?;
                }
            }
            if !s.next_member(b'}')? {
                break;
            }
        }
    }
    if !saw_hosts {
        return Err(InventoryFileError::NotAnInventory);
    }
    for h in &mut view.hosts {
        if let Some(Some(l)) = labels.remove(&h.name) {
            h.labels = l;
        }
    }
    Ok(view)
}

fn section<T: serde::de::DeserializeOwned + Default>(
    raw: &[u8],
    key: &str,
) -> Result<T, InventoryFileError> {
    let v: Option<T> =
        serde_json::from_slice(raw).map_err(|source| InventoryFileError::Section {
            key: key.to_string(),
            source,
        })?;
    Ok(v.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_host_order_and_extras() {
        let json = br#"{"hosts": {"b": [{"path": "/dev/sdb"}, {"path": "/dev/sda"}], "a": []},
            "labels": {"a": ["_no_schedule"]}, "existing_daemons": {"fast": {"b": 2}},
            "osd_id_claims": {"b": ["3", 4]}}"#;
        let v = read_inventory(&json[..]).unwrap();
        assert_eq!(
            v.hosts.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(),
            ["b", "a"]
        );
        assert_eq!(v.hosts[0].devices[0].path, "/dev/sda", "sorted by path");
        assert!(!v.hosts[1].schedulable());
        assert_eq!(v.existing("fast", "b"), 2);
        assert_eq!(v.claims("b.example.com"), ["3", "4"]);
    }

    #[test]
    fn errors_name_the_host() {
        let err = read_inventory(&br#"{"hosts": {"h1": [{"path": 5}]}}"#[..]).unwrap_err();
        assert!(err.to_string().contains("h1"), "{err}");
        assert!(read_inventory(&b"[]"[..]).is_err());
    }
}
