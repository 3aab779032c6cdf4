#!/bin/sh
# Creates the cephx user the osdkeeper daemon acts as, with only the caps it
# needs, and writes its keyring (readable by the daemon's user only).
#
#   deploy/ceph-auth.sh [KEYRING]   (default /etc/ceph/ceph.client.osdkeeper.keyring)
#
# Run it where an admin keyring is (any mon host). Then, in the daemon's
# config: ceph: {name: client.osdkeeper, keyring: KEYRING}.
#
# What each cap is for (tests/sandbox_removal.rs runs the daemon with them):
#   mon 'allow r'                       osd dump / tree / metadata, health
#   mon 'allow command "osd crush reweight"'   draining (weight 0, and back on stop)
#   mon 'allow command "osd out|down|in"'      marking a drained OSD, undoing a stop
#   mgr 'allow r'                       osd df, pg stat, ok-to-stop, safe-to-destroy
#   mgr 'allow command "osd destroy|purge"'    the manager checks safe-to-destroy
#                                       itself, then asks the monitors
#   mon 'allow r' also covers the removal preview's reads (osd getmap,
#   crush rule dump); mgr 'allow r' its pg dump and osd df.
# It cannot create or delete pools, read or write data, or change auth.
# So this user lacks the caps the benchmarks need (`osdkeeper bench
# cluster`: a pool made, written and deleted; `bench osds`: ceph tell
# osd.N bench); a tested set of caps for them is not written yet: run them
# from a daemon with a key that may (docs/operations.md).
# An existing user keeps its caps: change them with `ceph auth caps` (same
# arguments) after an upgrade that needs more.
set -eu

name=client.osdkeeper
keyring=${1:-/etc/ceph/ceph.$name.keyring}

ceph auth get-or-create "$name" \
    mon 'allow r, allow command "osd crush reweight", allow command "osd out", allow command "osd down", allow command "osd in"' \
    mgr 'allow r, allow command "osd destroy", allow command "osd purge"' \
    -o "$keyring"
chmod 0600 "$keyring"
if id osdkeeper >/dev/null 2>&1; then
    chown osdkeeper:osdkeeper "$keyring"
fi
echo "wrote $keyring for $name"
