#!/bin/sh
# Creates the cephx user the osdkeeper daemon acts as, with only the caps it
# needs, and writes its keyring (readable by the daemon's user only).
#
#   deploy/ceph-auth.sh [--bench-pool POOL] [KEYRING [DB_POOL]]
#                                       (KEYRING: /etc/ceph/ceph.client.osdkeeper.keyring)
#
# With DB_POOL, the daemons keep their database in that RADOS pool
# (`db: ceph:DB_POOL/NAMESPACE/NAME`, docs/operations.md "High
# availability"): the pool is created if missing, and the user gets
#   mon 'profile simple-rados-client-with-blocklist'   Ceph's SQLite VFS: a
#                                       daemon that takes over the database
#                                       blocklists the one that held it
#   osd 'allow rwx pool=DB_POOL'        the database's objects, their lock,
#                                       and the leader record beside them
#
# Run it where an admin keyring is (any mon host). Then, in the daemon's
# config: ceph: {name: client.osdkeeper, keyring: KEYRING}.
#
# What each cap is for (tests/sandbox_removal.rs runs the daemon with them):
#   mon 'allow r'                       osd dump / tree / metadata, health
#   mon 'allow command "osd crush reweight"'   draining (weight 0, and back on stop)
#   mon 'allow command "osd out|down|in"'      marking a drained OSD, undoing a stop
#   mon 'allow command "config set|rm" with who=osd name=...'   `osd rm --fast`:
#                                       raising, then putting back, osd_max_backfills,
#                                       osd_recovery_max_active, osd_mclock_profile for
#                                       the osd section, and nothing else
#   mon 'allow command "osd crush rm-device-class"'   a deployment that gives a
#                                       destroyed id to a disk of another class
#   mon 'allow command "osd pg-upmap-items|rm-pg-upmap-items|setcrushmap|add-noout|rm-noout"'
#                                       swaps: the hand-over, the final weights in
#                                       one CRUSH change, noout on the OSD swapped
#                                       in place
#   mon 'allow command "config set|rm" with name=osd_crush_initial_weight'
#                                       swaps: a new OSD joins at the hand-over weight
#   mgr 'allow command "balancer on|off"'      swaps pause the balancer
#   mgr 'allow r'                       osd df, pg stat, ok-to-stop, safe-to-destroy,
#                                       pg ls-by-osd (drain progress), config show,
#                                       pg ls-by-pool (a bench pool's PGs ready)
#   mgr 'allow command "osd destroy|purge"'    the manager checks safe-to-destroy
#                                       itself, then asks the monitors
#   mon 'allow r' also covers the removal preview's reads (osd getmap,
#   crush rule dump); mgr 'allow r' its pg dump and osd df.
# It cannot create or delete pools, read or write data, or change auth.
# With --bench-pool POOL it may also run `osdkeeper bench cluster --pool
# POOL` (osd 'allow rw pool=POOL': rados bench writes, reads and removes
# its own objects there; make the pool first, empty). It still cannot make
# the bench's own pool (`bench cluster` without --pool) nor run `bench osds`
# (ceph tell osd.N bench); run those from a daemon with a key that may.
# An existing user is given these caps (run it again after an upgrade that
# needs more, or to add DB_POOL).
set -eu

name=client.osdkeeper
bench_pool=
if [ "${1:-}" = --bench-pool ]; then
    bench_pool=${2:?--bench-pool needs a pool name}
    shift 2
fi
keyring=${1:-/etc/ceph/ceph.$name.keyring}
db_pool=${2:-}

boost=
for option in osd_max_backfills osd_recovery_max_active osd_mclock_profile; do
    boost="$boost, allow command \"config set\" with who=osd name=$option"
    boost="$boost, allow command \"config rm\" with who=osd name=$option"
done

db_mon=
set -- mgr 'allow r, allow command "osd destroy", allow command "osd purge", allow command "balancer on", allow command "balancer off"'
if [ -n "$db_pool" ]; then
    if ! ceph osd pool ls | grep -qx -- "$db_pool"; then
        ceph osd pool create "$db_pool" 8
        ceph osd pool application enable "$db_pool" osdkeeper
    fi
    db_mon=", profile simple-rados-client-with-blocklist"
fi
osd_caps=
[ -n "$db_pool" ] && osd_caps="allow rwx pool=$db_pool"
[ -n "$bench_pool" ] && osd_caps="${osd_caps:+$osd_caps, }allow rw pool=$bench_pool"
[ -n "$osd_caps" ] && set -- "$@" osd "$osd_caps"

swap=
for command in "osd crush rm-device-class" "osd pg-upmap-items" "osd rm-pg-upmap-items" "osd setcrushmap" \
    "osd add-noout" "osd rm-noout"; do
    swap="$swap, allow command \"$command\""
done
for command in "config set" "config rm"; do
    swap="$swap, allow command \"$command\" with name=osd_crush_initial_weight"
done
mon="allow r, allow command \"osd crush reweight\", allow command \"osd out\", allow command \"osd down\", allow command \"osd in\"$boost$swap$db_mon"
# An existing user gets these caps (get-or-create refuses other caps).
if ceph auth get "$name" >/dev/null 2>&1; then
    ceph auth caps "$name" mon "$mon" "$@"
fi
ceph auth get-or-create "$name" mon "$mon" "$@" -o "$keyring"
chmod 0600 "$keyring"
if id osdkeeper >/dev/null 2>&1; then
    chown osdkeeper:osdkeeper "$keyring"
fi
echo "wrote $keyring for $name"
