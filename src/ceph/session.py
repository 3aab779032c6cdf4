# osdkeeper's cluster session (src/ceph/session.rs starts it): one
# connection to the cluster through Ceph's own Python binding, the one the
# `ceph` CLI is built on, kept open so that a read costs a round trip to the
# monitors or the manager instead of a Python start and a new connection.
#
#   python3 -c SCRIPT CONF NAME KEYRING TIMEOUT_S    (empty CONF, NAME, KEYRING: the CLI's defaults)
#
# First line out: {"ready": true}, or {"ready": false, "unavailable": WHY}
# (no binding here: use the CLI), or {"ready": false, "errno": N, "error":
# WHY} (the cluster refused or did not answer, as the CLI would say it).
# Then one request per line in, {"id": N, "target": "mon"|"mgr", "cmd":
# {...}}, one answer per line out, {"id": N, "rc": RC, "out": OUT, "outs":
# OUTS}, or {"id": N, "errno": N, "error": WHY}. It ends when its input ends.
import json
import sys


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def connect(rados, conf, name, keyring, timeout):
    cluster = rados.Rados(name=name or None)
    # The CLI's order: the conf file (CEPH_CONF or the default paths when
    # none is given), then CEPH_ARGS, then its own options.
    cluster.conf_read_file(conf or None)
    cluster.conf_parse_env()
    if keyring:
        cluster.conf_set("keyring", keyring)
    # The binding ignores a command's timeout argument; librados bounds
    # the monitors' and manager's commands by this option instead.
    cluster.conf_set("rados_mon_op_timeout", timeout)
    cluster.connect(timeout=int(timeout))
    return cluster


def main():
    conf, name, keyring, timeout = sys.argv[1:5]
    try:
        import rados
    except ImportError as e:
        say({"ready": False, "unavailable": "cannot import the rados module: %s" % e})
        return
    try:
        cluster = connect(rados, conf, name, keyring, timeout)
    except Exception as e:
        say({"ready": False, "errno": getattr(e, "errno", None) or 1, "error": str(e)})
        return
    say({"ready": True})
    for line in sys.stdin:
        request = json.loads(line)
        send = cluster.mgr_command if request["target"] == "mgr" else cluster.mon_command
        try:
            rc, out, outs = send(json.dumps(request["cmd"]), b"")
        except Exception as e:
            say({"id": request["id"], "errno": getattr(e, "errno", None) or 1, "error": str(e)})
            continue
        say({"id": request["id"], "rc": rc, "out": out.decode("utf-8", "replace"), "outs": outs})
    cluster.shutdown()


main()
