# osdkeeper's reading of the lock settings of Ceph's SQLite VFS
# (src/ceph/vfs_settings.rs runs it before the daemon waits for the lock):
# a client made the way the VFS (libcephsqlite) makes its own, by the same
# library, so that each setting comes out as the VFS will run with it: Ceph's
# defaults, then the monitors' config for the client's name, then the conf
# file, then CEPH_ARGS, each value checked by this release's own rules (16.2
# drops a timeout the monitors hold that 18.2 would take).
#
#   python3 -c SCRIPT TIMEOUT_S
#
# Out: "OPTION VALUE" per option, as Ceph prints it. On failure: exit 1, why
# on stderr.
import os
import sys

OPTIONS = (
    "cephsqlite_lock_renewal_timeout",
    "cephsqlite_lock_renewal_interval",
    "cephsqlite_blocklist_dead_locker",
)


def early_name(args):
    # As ceph_argparse_early_args reads CEPH_ARGS for the VFS: the last
    # --name/-n, or --id/--user/-i as client.ID; client.admin without one.
    name = "client.admin"
    i = 0
    while i < len(args):
        flag, eq, value = args[i].partition("=")
        if flag in ("--name", "-n", "--id", "--user", "-i"):
            if not eq:
                if i + 1 == len(args):
                    break
                i += 1
                value = args[i]
            name = value if flag in ("--name", "-n") else "client." + value
        i += 1
    return name


def main():
    timeout = int(sys.argv[1])
    try:
        import rados
    except ImportError as e:
        sys.exit("cannot import Ceph's Python binding (python3-rados): %s" % e)
    name = early_name(os.environ.get("CEPH_ARGS", "").split())
    try:
        cluster = rados.Rados(name=name, conffile=None)
        # The VFS's order: the conf file (CEPH_CONF, else Ceph's default
        # paths), CEPH_ARGS and CEPH_KEYRING, then what the monitors hold
        # for this name, fetched as it connects.
        cluster.conf_read_file()
        cluster.conf_parse_env()
        cluster.connect(timeout=timeout)
        for option in OPTIONS:
            print(option, cluster.conf_get(option))
        cluster.shutdown()
    except Exception as e:
        sys.exit("as %s: %s" % (name, e))


main()
