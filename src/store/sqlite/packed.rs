//! How a device list is kept in `inventory_devices.devices`: zlib-deflated
//! JSON, as a BLOB. A ceph-volume inventory is mostly the same keys again
//! and again, so it shrinks ~10x (16 KB to 1.5 KB for a host of 24 disks);
//! the store in RADOS writes every byte through the VFS, and a cold start
//! writes every host's list (BENCHMARKS.md, "the fleet benchmark on the
//! store in RADOS"). Lists stored before are plain JSON text and read as
//! they are: JSON starts with `[` or `{`, zlib with 0x78. Migration 0016
//! marks a database as written so, which an older daemon then refuses.

use std::io::{Read, Write};

use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;

use crate::store::{Result, StoreError};

/// A device list as stored. Level 1: the lists are small and written on
/// every change of every host; the higher levels gain a few percent.
pub(super) fn pack(json: &str) -> Vec<u8> {
    let mut out = ZlibEncoder::new(Vec::with_capacity(json.len() / 8), Compression::fast());
    out.write_all(json.as_bytes()).expect("writing to memory cannot fail");
    out.finish().expect("writing to memory cannot fail")
}

/// A stored device list, packed or (stored before packing) plain text.
pub(super) fn unpack(host: &str, stored: Vec<u8>) -> Result<String> {
    if stored.first() != Some(&0x78) {
        return String::from_utf8(stored)
            .map_err(|e| StoreError::Corrupt(format!("the device list of {host} is neither deflated nor text: {e}")));
    }
    let mut json = String::new();
    ZlibDecoder::new(stored.as_slice())
        .read_to_string(&mut json)
        .map_err(|e| StoreError::Corrupt(format!("the device list of {host} cannot be inflated: {e}")))?;
    Ok(json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_reads_back_as_it_was_written_and_smaller() {
        let device = r#"{"path":"/dev/sdb","available":true,"size":4000787030016,"model":"HGST HUS726T4TAL"}"#;
        let json = format!("[{}]", vec![device; 24].join(","));
        let packed = pack(&json);
        assert!(packed.len() * 5 < json.len(), "{} bytes from {}", packed.len(), json.len());
        assert_eq!(unpack("h1", packed).unwrap(), json);
    }

    #[test]
    fn a_list_stored_before_packing_reads_as_it_is() {
        assert_eq!(unpack("h1", b"[]".to_vec()).unwrap(), "[]");
    }

    #[test]
    fn a_damaged_list_names_its_host() {
        let mut packed = pack("[1,2,3]");
        packed.truncate(4);
        let err = unpack("h7", packed).unwrap_err().to_string();
        assert!(err.contains("h7"), "{err}");
    }
}
