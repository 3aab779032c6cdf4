use super::*;

fn parse(text: &str) -> Vec<Result<DriveSpec, SpecError>> {
    parse_spec_file(text).expect("yaml").into_iter().map(|d| d.spec).collect()
}

fn one(text: &str) -> Result<DriveSpec, SpecError> {
    let mut all = parse(text);
    assert_eq!(all.len(), 1);
    all.remove(0)
}

#[test]
fn field_report_spec() {
    let s = one(
        "service_type: osd\nservice_id: osd_spec_F5-422_SSDs\nplacement:\n  host_pattern: 'f5-422-*'\nencrypted: true\ndata_devices:\n  rotational: 0\n",
    )
    .unwrap();
    assert_eq!(s.service_id.as_deref(), Some("osd_spec_F5-422_SSDs"));
    assert!(s.encrypted);
    assert_eq!(s.data.rotational, Some(false));
    assert_eq!(s.placement.host_pattern.as_deref(), Some("f5-422-*"));
}

#[test]
fn yaml_1_1_booleans_reach_the_spec() {
    let s = one("service_type: osd\nservice_id: a\nplacement: {host_pattern: '*'}\nencrypted: yes\ndata_devices: {rotational: off}\n").unwrap();
    assert!(s.encrypted);
    assert_eq!(s.data.rotational, Some(false));
}

#[test]
fn errors_name_document_service_key_and_value() {
    let docs = parse(
        "service_type: osd\nservice_id: good\nplacement: {host_pattern: '*'}\ndata_devices: {all: true}\n---\nservice_type: osd\nservice_id: bad\nplacement: {host_pattern: '*'}\ndata_devices: {size: '2tb:'}\n",
    );
    assert!(docs[0].is_ok());
    let e = docs[1].as_ref().unwrap_err();
    assert_eq!((e.doc, e.line, e.service_id.as_deref()), (1, 6, Some("bad")));
    assert_eq!(e.field, "data_devices.size");
    assert!(e.stricter_than_cephadm);
    let text = e.to_string();
    assert!(
        text.contains("document 1") && text.contains("'bad'") && text.contains("'2tb:'") && text.contains("'2TB:'"),
        "{text}"
    );
}

#[test]
fn stricter_values_are_refused_with_advice() {
    let base = "service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\n";
    for (extra, field) in [
        ("data_devices: {rotational: '0'}", "data_devices.rotational"),
        ("data_devices: {all: true}\nobjectstore: blue", "objectstore"),
        ("data_devices: {all: true}\nencrypted: 'false'", "encrypted"),
        ("data_devices: {rotational: 1, limit: '2'}", "data_devices.limit"),
        ("data_devices: {vendor: ''}", "data_devices.vendor"),
        ("data_devices: {size: '10TiB:'}", "data_devices.size"),
        ("data_devices: {paths: /dev/sdb}", "data_devices.paths"),
    ] {
        let e = one(&format!("{base}{extra}\n")).unwrap_err();
        assert_eq!(e.field, field, "{extra}: {e}");
        assert!(e.stricter_than_cephadm, "{extra}: {e}");
    }
}

#[test]
fn cephadm_errors_are_not_marked_stricter() {
    let base = "service_type: osd\nservice_id: s\n";
    for (extra, needle) in [
        ("placement: {host_pattern: '*'}\n", "`data_devices` element is required."),
        ("placement: {host_pattern: '*'}\ndata_devices: {}\n", "`data_devices` element is required."),
        ("placement: {host_pattern: '*'}\ndata_devices: {foo: 1}\n", "Filtering for `foo` is not supported"),
        (
            "placement: {host_pattern: '*'}\ndata_devices: {all: true}\nconfig: {a: b}\n",
            "Feature `config` is not supported",
        ),
        ("placement: {host_pattern: '*'}\ndata_devices: {all: true, rotational: 1}\n", "mutually exclusive"),
        (
            "placement: {host_pattern: '*'}\ndata_devices: {all: true}\ndb_devices: {all: true}\n",
            "only allowed for data_devices",
        ),
        ("placement: {host_pattern: '*'}\ndata_devices: {limit: 2}\n", "cannot be empty"),
        ("placement: {host_pattern: '*'}\ndata_devices: {all: true}\nfilter_logic: XOR\n", "<AND> or <OR>"),
        ("placement: {host_pattern: '*'}\ndata_devices: {all: true}\nmethod: zfs\n", "method must be one of"),
        ("data_devices: {all: true}\n", "`placement` required"),
        (
            "placement: {host_pattern: '*', hosts: [a]}\ndata_devices: {all: true}\n",
            "cannot combine host patterns and hosts",
        ),
        (
            "placement: {host_pattern: '*'}\ndata_devices: {all: true}\nobjectstore: filestore\n",
            "filestore is not supported",
        ),
    ] {
        let e = one(&format!("{base}{extra}")).unwrap_err();
        assert!(!e.stricter_than_cephadm, "{extra}: {e}");
        assert!(e.message.contains(needle), "{extra}: {e}");
    }
    let e = one("service_id: x\nplacement: {host_pattern: '*'}\ndata_devices: {all: true}\n").unwrap_err();
    assert!(e.message.contains("service_type"), "{e}");
    let e = one("service_type: osd\nservice_id: 'a b'\nplacement: {host_pattern: '*'}\ndata_devices: {all: true}\n")
        .unwrap_err();
    assert!(e.message.contains("invalid characters"), "{e}");
}

#[test]
fn legacy_flat_layout_and_spec_merge_order() {
    let s = one("service_type: osd\nservice_id: a\nhost_pattern: 'n*'\ndata_devices: {rotational: 1}\n").unwrap();
    assert_eq!(s.placement.host_pattern.as_deref(), Some("n*"));
    // Keys under spec: override earlier top-level keys, later top-level keys override spec:.
    let s = one("service_type: osd\nservice_id: a\nspec:\n  service_id: b\n  data_devices: {all: true}\nplacement: {host_pattern: '*'}\n").unwrap();
    assert_eq!(s.service_id.as_deref(), Some("b"));
    let e =
        one("service_type: osd\nservice_id: a\nspec:\n  placement: {host_pattern: '*'}\n  data_devices: {all: true}\n")
            .unwrap_err();
    assert_eq!(e.field, "spec.placement");
}

#[test]
fn service_name_supplies_type_and_id() {
    let s = one("service_name: osd.fast\nplacement: {host_pattern: '*'}\ndata_devices: {rotational: 0}\n").unwrap();
    assert_eq!(s.service_id.as_deref(), Some("fast"));
    assert_eq!(s.service_name(), "osd.fast");
}

#[test]
fn ignored_keys_leave_notes() {
    let s = one("service_type: osd\nservice_id: a\nplacement: {host_pattern: '*'}\ndata_devices: {rotational: 1}\ndb_slots: 4\n").unwrap();
    assert!(s.notes.iter().any(|n| n.contains("db_slots")), "{:?}", s.notes);
}

const BASE: &str = "service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\n";

#[test]
fn osds_per_device_is_bounded() {
    for bad in ["2147483647", "65", "'100'", "'99999999999999999999999'"] {
        let e = one(&format!("{BASE}data_devices: {{all: true}}\nosds_per_device: {bad}\n")).unwrap_err();
        assert_eq!(e.field, "osds_per_device", "{bad}: {e}");
        assert!(e.stricter_than_cephadm && e.message.contains("64"), "{bad}: {e}");
    }
    let s = one(&format!("{BASE}data_devices: {{all: true}}\nosds_per_device: 64\n")).unwrap();
    assert_eq!(s.osds_per_device.as_deref(), Some("64"));
}

#[test]
fn a_limit_beyond_u64_means_no_cap_rather_than_a_small_one() {
    let s = one(&format!("{BASE}data_devices: {{rotational: 1, limit: 18446744073709551617}}\n")).unwrap();
    assert_eq!(s.data.limit, Some(u64::MAX));
}

#[test]
fn a_byte_order_mark_is_accepted_like_pyyaml() {
    let docs = parse_spec_file(&format!("\u{feff}{BASE}data_devices: {{all: true}}\n")).expect("yaml");
    assert!(docs[0].spec.is_ok(), "{:?}", docs[0].spec);
    assert!(docs[0].source.starts_with("service_type"), "{:?}", docs[0].source);
}

#[test]
fn errors_quote_only_an_excerpt_of_huge_values() {
    let big = "x".repeat(100_000);
    let list = vec!["1"; 20_000].join(", ");
    let all = "data_devices: {all: true}\n";
    let host = "service_type: osd\nservice_id: s\ndata_devices: {all: true}\n";
    for text in [
        format!("{BASE}{all}objectstore: {big}\n"),
        format!("{BASE}{all}encrypted: '{big}'\n"),
        format!("{BASE}{all}filter_logic: '{big}'\n"),
        format!("{BASE}{all}method: '{big}'\n"),
        format!("{BASE}{all}crush_device_class: [{list}]\n"),
        format!("{BASE}{all}data_allocate_fraction: [{list}]\n"),
        // Keys past 1024 characters must be explicit (`? key`) in YAML.
        format!("{BASE}{all}? {big}\n: 1\n"),
        format!("{BASE}data_devices: {{rotational: '{big}'}}\n"),
        format!("{BASE}data_devices: {{rotational: 1, limit: '{big}'}}\n"),
        format!("{BASE}data_devices: {{size: '{big}'}}\n"),
        format!("{BASE}data_devices: {{size: '1TB:2TB{big}'}}\n"),
        format!("{BASE}data_devices:\n  ? {big}\n  : 1\n"),
        format!("{BASE}data_devices: {{model: [{list}]}}\n"),
        format!("{BASE}data_devices: {{paths: [[{list}]]}}\n"),
        format!("service_type: osd\nservice_id: [{list}]\nplacement: {{host_pattern: '*'}}\n{all}"),
        format!("service_type: osd\nservice_id: '{big} '\nplacement: {{host_pattern: '*'}}\n{all}"),
        format!("service_type: '{big}'\n"),
        format!("{host}placement: {{hosts: ['{big}']}}\n"),
        format!("{host}placement: {{hosts: ['h:{big}']}}\n"),
        format!("{host}placement: {{hosts: ['h:v{big}']}}\n"),
        format!("{host}placement:\n  ? {big}\n  : 1\n"),
        format!("{host}placement: {{label: [{list}]}}\n"),
        format!("[{list}]\n"),
        format!("service_type: osd\nservice_id: {big}\nplacement: {{host_pattern: '*'}}\ndata_devices: {{}}\n"),
    ] {
        let e = one(&text).unwrap_err();
        let shown = e.to_string();
        assert!(shown.len() < 1000, "{} bytes: {}", shown.len(), &shown[..300]);
        assert!(e.field.len() < 200 && e.value.as_ref().is_none_or(|v| v.len() < 200), "{}", &shown[..300]);
    }
}

#[test]
fn invalid_utf8_is_reported_with_its_byte_offset() {
    let mut bytes = format!("{BASE}data_devices: {{model: 'é").into_bytes();
    let at = bytes.len();
    bytes.extend_from_slice(b"\xff'}\n");
    let e = parse_spec_bytes(&bytes).unwrap_err().to_string();
    let column = "data_devices: {model: 'é".chars().count() + 1;
    assert!(e.contains(&format!("byte 0xff cannot start or continue a character at byte offset {at}")), "{e}");
    assert!(e.contains(&format!("(line 4, column {column})")), "{e}");
    let cut = &"service_type: é".as_bytes()[..15];
    let e = parse_spec_bytes(cut).unwrap_err().to_string();
    assert!(e.contains("the file ends inside a character at byte offset 14 (line 1, column 15)"), "{e}");
}

#[test]
fn osdkeepers_own_section_leaves_the_cephadm_reading_unchanged() {
    let plain = "service_type: osd\nservice_id: fast\nplacement: {host_pattern: '*'}\nspec:\n  method: raw\n  data_devices: {rotational: 0}\n";
    let gated = format!("{plain}osdkeeper:\n  probe:\n    min_sync_write_iops: 2000\n");
    let (a, b) = (one(plain).unwrap(), one(&gated).unwrap());
    assert_eq!(a.probe, None);
    let gate = b.probe.clone().expect("the gate");
    assert_eq!(gate.min_of(crate::domain::probe::ProbeJob::SyncWrite4k), Some(2000.0));
    assert_eq!(DriveSpec { probe: None, ..b }, a, "everything else is read as without the section");
    // Its errors name the document and the field.
    let e = one(&format!("{plain}osdkeeper:\n  probe: {{mode: slow}}\n")).unwrap_err();
    assert_eq!((e.field.as_str(), e.service_id.as_deref()), ("osdkeeper.probe.mode", Some("fast")));
    assert!(!e.stricter_than_cephadm);
    // Only at the top level: under spec: it is what cephadm says of any unknown key.
    let e = one(&format!("{plain}  osdkeeper: {{probe: true}}\n")).unwrap_err();
    assert_eq!(e.field, "spec.osdkeeper");
    assert!(
        e.message.starts_with("Feature `osdkeeper` is not supported (osdkeeper's own options go at the top level"),
        "{}",
        e.message
    );
}
