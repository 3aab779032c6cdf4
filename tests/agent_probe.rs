//! `POST /v1/probe` on real loop devices with the real fio (Debian's
//! package): a blank device is probed (four jobs, each for the quick
//! mode's runtime, within its region) and left as blank as it was found;
//! a device with a BlueStore label, one a ceph-osd holds open, one held
//! exclusively (as a mount holds it), one with a filesystem and another
//! disk than the one asked for are refused, with nothing written. Needs
//! root, loop devices and fio; devices are detached by path, fake ceph-osd
//! processes killed by pid, on drop.

mod agent_common;

use std::process::Command;

use agent_common::{bluestore_label, client, Agent, FakeOsd, LoopDevice};
use osdkeeper::wire::agent::{AgentErrorBody, ProbeJob, ProbeMode, ProbeResult};
use serde_json::{json, Value};

const SIX_GIB: u64 = 6 * 1024 * 1024 * 1024;
const MIB: usize = 1024 * 1024;
const TEN_MIB: usize = 10 * MIB;

/// One test at a time: attaching a loop device runs `losetup`, which opens
/// the other loop devices while it looks for a free one, and the agent
/// rightly counts it as a holder of the disk the other test probes.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn probe(agent: &Agent, body: Value) -> reqwest::Response {
    let c = reqwest::Client::builder().timeout(std::time::Duration::from_secs(180)).build().unwrap();
    c.post(agent.url("/v1/probe")).json(&body).send().await.unwrap()
}

async fn refused(resp: reqwest::Response) -> (u16, String) {
    let status = resp.status().as_u16();
    let e: AgentErrorBody = resp.json().await.expect("refusals are AgentErrorBody");
    (status, e.error)
}

fn blkid(path: &str) -> (i32, String) {
    let out = Command::new("blkid").args(["-c", "/dev/null", "-p", path]).output().expect("run blkid");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[tokio::test]
async fn a_blank_device_is_probed_within_bounds_and_left_blank() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dev = LoopDevice::new(SIX_GIB);
    let agent = Agent::start(&["--devices", &dev.path, "--host-name", "probe-host"], &[]);
    let (status, error) = refused(probe(&agent, json!({"path": dev.path, "mode": "quick"})).await).await;
    assert_eq!(status, 400);
    assert!(error.starts_with("must pass yes_i_really_mean_it: true"), "{error}");

    let started = std::time::Instant::now();
    let body = json!({"path": dev.path, "mode": "quick", "yes_i_really_mean_it": true, "reason": "test probe"});
    let resp = probe(&agent, body).await;
    assert_eq!(resp.status(), 200, "{}", agent.log());
    let r: ProbeResult = resp.json().await.unwrap();
    assert_eq!((r.mode, r.device_bytes, r.region_bytes), (ProbeMode::Quick, SIX_GIB, 256 << 20));
    assert!(r.fio_version.starts_with("fio-3"), "{}", r.fio_version);
    assert_eq!(r.jobs.iter().map(|j| j.job).collect::<Vec<_>>(), ProbeJob::ALL);
    let runtime_ms = u64::from(ProbeMode::Quick.job_seconds()) * 1000;
    for j in &r.jobs {
        assert!(j.iops > 0.0 && j.bytes_per_sec > 0.0, "{j:?}");
        assert!(j.runtime_ms >= runtime_ms && j.runtime_ms < runtime_ms + 1000, "bounded by --runtime: {j:?}");
    }
    assert!(started.elapsed().as_secs() < ProbeMode::Quick.time_bound_s(), "within the kill bound");
    assert!(
        r.command.contains(&format!("--filename={} ", dev.path)) && r.command.contains("--sync=1"),
        "{}",
        r.command
    );
    assert!(r.fio_json.contains("\"sync-write-4k\""), "fio's report comes back whole");
    let tail_offset = SIX_GIB - TEN_MIB as u64;
    assert_eq!(r.steps[1], format!("held {} exclusively (O_EXCL) and found it blank", dev.path));
    assert!(r.steps.contains(&format!("zeroed 10 MiB at offset {tail_offset}")), "{:?}", r.steps);
    assert_eq!(r.steps.last().unwrap(), &format!("released {}", dev.path));
    let (code, found) = blkid(&dev.path);
    assert_eq!((code, found.as_str()), (2, ""), "blkid -p finds nothing after the probe");
    assert!(dev.read_at(0, TEN_MIB).iter().all(|b| *b == 0), "the first 10 MiB are zero again");
    assert!(dev.read_at(tail_offset, TEN_MIB).iter().all(|b| *b == 0), "and the last 10 MiB");
    // fio wrote its random data within the region, not past it.
    assert!(dev.read_at(100 * MIB as u64, MIB).iter().any(|b| *b != 0), "fio wrote in the region");
    assert!(dev.read_at(300 * MIB as u64, MIB).iter().all(|b| *b == 0), "and nothing past it");
    let resp = client().get(agent.url("/v1/inventory")).send().await.unwrap();
    let inv: Value = resp.json().await.unwrap();
    assert_eq!(inv["devices"][0]["available"], true, "still a blank, available disk: {:#}", inv["devices"][0]);
    assert!(agent.log().contains("test probe"), "the reason is logged");
}

#[tokio::test]
async fn a_device_in_use_or_not_blank_is_refused_and_left_unchanged() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dev = LoopDevice::new(SIX_GIB);
    let agent = Agent::start(&["--devices", &dev.path], &[]);
    let body = json!({"path": dev.path, "mode": "quick", "yes_i_really_mean_it": true});

    // Another disk than the one asked for (this one has no id at all).
    let mut other = body.clone();
    other["device_id"] = json!("Samsung_SSD_870_S1006");
    let (status, error) = refused(probe(&agent, other).await).await;
    assert_eq!(status, 409);
    assert!(error.contains("the disk there now is \"\", not \"Samsung_SSD_870_S1006\""), "{error}");

    // An OSD's disk: its label, and its ceph-osd holding it open (as a
    // BlueStore OSD holds its device: open, with a lock, not O_EXCL).
    dev.write_head(&bluestore_label(9130, SIX_GIB));
    let osd = FakeOsd::start_holding(9130, Some(&dev.path));
    let first_mib = dev.read_at(0, MIB);
    let (status, error) = refused(probe(&agent, body.clone()).await).await;
    assert_eq!(status, 409, "{error}");
    assert!(
        error.starts_with(&format!(
            "refusing to probe {}: it is not blank: it has a BlueStore label (osd.9130)",
            dev.path
        )),
        "{error}"
    );
    // Other processes may hold it too for a moment (the fake OSD's shell
    // child, a losetup of the test beside this one): the agent lists every
    // holder, and the OSD must be among them.
    let holders = error.split("it is in use: held open by ").nth(1).unwrap_or_else(|| panic!("no holders in {error}"));
    assert!(holders.contains(&format!("ceph-osd pid {} (osd.9130)", osd.pid())), "{error}");
    assert!(error.ends_with("nothing was written"), "{error}");
    assert_eq!(dev.read_at(0, MIB), first_mib, "the first MiB is unchanged");
    drop(osd);

    // Held exclusively, as a mount or a device-mapper table holds a disk.
    let held = dev.hold_exclusively();
    let (status, error) = refused(probe(&agent, body.clone()).await).await;
    assert_eq!(status, 409);
    assert!(error.contains("it is busy (an exclusive open failed with EBUSY)"), "{error}");
    drop(held);
    assert_eq!(dev.read_at(0, MIB), first_mib);

    // A filesystem blkid finds.
    let mkfs = Command::new("mkfs.ext4").args(["-q", "-F", &dev.path]).status().expect("mkfs.ext4");
    assert!(mkfs.success());
    let first_mib = dev.read_at(0, MIB);
    let (status, error) = refused(probe(&agent, body).await).await;
    assert_eq!(status, 409);
    assert!(error.contains("blkid finds signatures on it (ext4)"), "{error}");
    assert_eq!(dev.read_at(0, MIB), first_mib, "nothing was written");
    assert!(!agent.log().contains("probe: running fio"), "fio never ran: {}", agent.log());
}
