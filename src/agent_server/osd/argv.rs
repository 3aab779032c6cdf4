//! Which OSD a `ceph-osd` process serves, from its command line. Ceph's
//! own option parser (`ceph_argparse_witharg`) takes the daemon's identity
//! from `-i N` / `--id N` (the type is implied) or `-n osd.N` /
//! `--name osd.N`, each also as `OPT=VALUE`; a later one overrides an
//! earlier one, and nothing after `--` is an option. systemd units run
//! `ceph-osd --id N`, cephadm containers `ceph-osd -n osd.N`, the sandbox
//! `ceph-osd -i N`.

use crate::agent_server::osd::proc_scan::ProcessInfo;

const PROGRAM: &str = "ceph-osd";

/// A ceph-osd by its executable's name or, for a script (whose `argv[0]`
/// is the interpreter), by the kernel's name for it.
pub fn is_ceph_osd(p: &ProcessInfo) -> bool {
    let argv0 = p.argv.first().map(|a| a.rsplit('/').next().unwrap_or(a));
    argv0 == Some(PROGRAM) || p.comm == PROGRAM
}

/// The OSD id a ceph-osd command line names, if it names one.
pub fn served_osd(argv: &[String]) -> Option<u32> {
    let mut served = None;
    let mut args = argv.iter().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--" {
            break;
        }
        let (option, inline) = match arg.split_once('=') {
            Some((o, v)) => (o, Some(v)),
            None => (arg.as_str(), None),
        };
        let is_id = matches!(option, "-i" | "--id");
        let is_name = matches!(option, "-n" | "--name");
        if !is_id && !is_name {
            continue;
        }
        let value = match inline {
            Some(v) => Some(v),
            None => args.next().map(String::as_str),
        };
        let Some(value) = value else { break };
        served = if is_id { parse_id(value) } else { value.strip_prefix("osd.").and_then(parse_id) };
    }
    served
}

/// The ceph.conf a Ceph daemon's command line runs it with: `-c`/`--conf`,
/// else `/etc/ceph/CLUSTER.conf` for `--cluster CLUSTER` (Ceph's default
/// cluster name is `ceph`); a later option overrides an earlier one.
pub fn conf_of(argv: &[String]) -> std::path::PathBuf {
    let (mut conf, mut cluster) = (None::<String>, None::<String>);
    let mut args = argv.iter().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--" {
            break;
        }
        let (option, inline) = match arg.split_once('=') {
            Some((o, v)) => (o, Some(v.to_string())),
            None => (arg.as_str(), None),
        };
        let slot = match option {
            "-c" | "--conf" => &mut conf,
            "--cluster" => &mut cluster,
            _ => continue,
        };
        match inline.or_else(|| args.next().cloned()) {
            Some(v) => *slot = Some(v),
            None => break,
        }
    }
    match conf {
        Some(c) => c.into(),
        None => format!("/etc/ceph/{}.conf", cluster.as_deref().unwrap_or("ceph")).into(),
    }
}

/// An id as Ceph writes it: decimal digits only.
pub fn parse_id(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 10 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_conf_a_daemon_runs_with() {
        let conf = |s: &str| conf_of(&argv(s)).display().to_string();
        assert_eq!(conf("ceph-osd -f --cluster ceph --id 4 --setuser ceph"), "/etc/ceph/ceph.conf");
        assert_eq!(conf("ceph-osd -f --id 4"), "/etc/ceph/ceph.conf");
        assert_eq!(conf("ceph-osd --cluster backup -i 4"), "/etc/ceph/backup.conf");
        assert_eq!(conf("ceph-osd -i 4 -c /tmp/sb/ceph.conf"), "/tmp/sb/ceph.conf");
        assert_eq!(conf("ceph-osd --conf=/a.conf --cluster x -i 4"), "/a.conf");
        assert_eq!(conf("ceph-osd -c /a.conf -c /b.conf"), "/b.conf");
        assert_eq!(conf("ceph-osd -i 4 -- -c /not-an-option"), "/etc/ceph/ceph.conf");
    }

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn serves(cmd: &str) -> Option<u32> {
        served_osd(&argv(cmd))
    }

    #[test]
    fn every_way_of_naming_the_id() {
        assert_eq!(serves("ceph-osd -i 4 -c /tmp/sb/ceph.conf"), Some(4));
        assert_eq!(serves("/usr/bin/ceph-osd -f --cluster ceph --id 12 --setuser ceph --setgroup ceph"), Some(12));
        assert_eq!(serves("ceph-osd --id=3"), Some(3));
        assert_eq!(serves("ceph-osd -i=3"), Some(3));
        assert_eq!(serves("/usr/bin/ceph-osd -n osd.7 -f --setuser ceph --default-log-to-file=false"), Some(7));
        assert_eq!(serves("ceph-osd --name osd.0"), Some(0));
        assert_eq!(serves("ceph-osd --name=osd.15"), Some(15));
        // A script running as ceph-osd: its path is argv[1], not an option.
        assert_eq!(serves("/bin/sh /tmp/x/ceph-osd -i 7 3600"), Some(7));
    }

    #[test]
    fn near_misses_do_not_match() {
        assert_eq!(serves("ceph-osd -i 12"), Some(12), "osd 1 is not osd 12");
        assert_ne!(serves("ceph-osd -i 12"), Some(1));
        assert_ne!(serves("ceph-osd --id 10"), Some(1));
        assert_eq!(serves("ceph-osd -n mon.a"), None, "not an OSD name");
        assert_eq!(serves("ceph-osd -n osd.x"), None);
        assert_eq!(serves("ceph-osd -n osd."), None);
        assert_eq!(serves("ceph-osd -i +4"), None, "Ceph ids are digits only");
        assert_eq!(serves("ceph-osd -i 4x"), None);
        assert_eq!(serves("ceph-osd -i"), None, "no value");
        assert_eq!(serves("ceph-osd -i4"), None, "Ceph does not read -iN");
        assert_eq!(serves("ceph-osd --identity 4"), None);
        assert_eq!(serves("ceph-osd -c /etc/ceph/ceph.conf"), None);
        assert_eq!(serves("ceph-osd -- -i 4"), None, "after -- nothing is an option");
        assert_eq!(serves("ceph-osd -i 99999999999"), None, "beyond u32");
        // The program name is not an argument.
        assert_eq!(served_osd(&argv("-i 4")), None);
    }

    #[test]
    fn the_last_identity_wins() {
        assert_eq!(serves("ceph-osd -i 1 -i 12"), Some(12));
        assert_eq!(serves("ceph-osd --name osd.1 --id 2"), Some(2));
        assert_eq!(serves("ceph-osd -i 1 -n client.admin"), None);
    }

    #[test]
    fn which_processes_are_ceph_osds() {
        let p = |comm: &str, a: &str| ProcessInfo { pid: 1, comm: comm.into(), argv: argv(a) };
        assert!(is_ceph_osd(&p("ceph-osd", "ceph-osd -i 4")));
        assert!(is_ceph_osd(&p("tp_osd_tp", "/usr/bin/ceph-osd -n osd.4")));
        assert!(is_ceph_osd(&p("ceph-osd", "/bin/sh /tmp/x/ceph-osd -i 7")));
        assert!(!is_ceph_osd(&p("ceph-mon", "ceph-mon -i a")));
        assert!(!is_ceph_osd(&p("podman", "/usr/bin/podman run --entrypoint /usr/bin/ceph-osd img -n osd.4")));
        assert!(!is_ceph_osd(&p("ceph-osd-wrap", "/usr/bin/ceph-osd-wrapper -i 4")));
    }
}
