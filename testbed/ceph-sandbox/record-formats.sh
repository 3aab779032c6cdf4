#!/bin/bash
# record-formats.sh DIR OUTDIR [ROUNDS]: records, with the sandbox DIR's own Ceph tools (a
# `--release reef|tentacle` sandbox, its `bin/` wrappers), the ceph-volume and
# ceph-bluestore-tool output osdkeeper's readers are tested on, and times `raw list` batched
# against one device at a time (ROUNDS runs each, default 3; EXTRA=N blank devices, default 9).
#
# What it makes, on loop devices it attaches itself (recorded in OUTDIR/loops and detached at
# the end, by record, whatever happens):
#   * an OSD with its DB on a second device (ceph-osd --mkfs, no daemon started): MAIN 11 GiB,
#     so that Squid+ writes label copies at 1 and 10 GiB; DB 2 GiB;
#   * a 2 KiB device (TINY) that makes ceph-bluestore-tool abort;
#   * the same OSD after its first 10 MiB were zeroed (what a zap of 16.2 wipes).
# The OSD id is registered with `osd new` and purged at the end.
set -euo pipefail
DIR=${1:?usage: record-formats.sh DIR OUTDIR [ROUNDS]}
OUT=${2:?usage: record-formats.sh DIR OUTDIR [ROUNDS]}
ROUNDS=${3:-3}
[ -x "$DIR/bin/ceph-volume" ] || { echo "no $DIR/bin/ceph-volume: a --release sandbox is needed" >&2; exit 1; }
export CEPH_CONF=$DIR/ceph.conf PATH=$DIR/bin:$PATH
mkdir -p "$OUT"
WORK=$DIR/fmt
mkdir -p "$WORK"
: > "$OUT/loops"
OSD_ID=""
cleanup() {
  set +e
  [ -n "$OSD_ID" ] && ceph osd purge "$OSD_ID" --yes-i-really-mean-it >/dev/null 2>&1
  while read -r dev file; do
    [ "$(losetup -n -O BACK-FILE "$dev" 2>/dev/null)" = "$file" ] && losetup -d "$dev" && echo "detached $dev ($file)"
  done < "$OUT/loops"
}
trap cleanup EXIT
attach() { # NAME BYTES -> prints the device
  local file=$WORK/$1
  rm -f "$file"; truncate -s "$2" "$file"
  local dev; dev=$(losetup -f --show "$file")
  echo "$dev $file" >> "$OUT/loops"
  echo "$dev"
}
run() { # NAME CMD...: stdout to OUT/NAME, rc and stderr's last lines to OUT/commands.log
  local name=$1; shift
  local rc=0
  "$@" > "$OUT/$name" 2> "$OUT/$name.err" || rc=$?
  { echo "\$ $*"; echo "rc=$rc"; tail -n 3 "$OUT/$name.err"; } >> "$OUT/commands.log"
  rm -f "$OUT/$name.err"
}
sig_at() { # DEV OFFSET_GIB: the label signature at that offset, or nothing
  dd if="$1" bs=1M skip=$(( $2 * 1024 )) count=1 status=none 2>/dev/null | head -c 22 | tr -d '\0'
}
: > "$OUT/commands.log"
ceph --version > "$OUT/version.txt"
MAIN=$(attach main 11G)
DB=$(attach db 2G)
TINY=$(attach tiny 2048)
UUID=$(uuidgen)
KEY=$(ceph-authtool --gen-print-key)
OSD_ID=$(echo "{\"cephx_secret\": \"$KEY\"}" | ceph osd new "$UUID" -i -)
mkdir -p "$WORK/osd"
rm -rf "${WORK:?}/osd/"*
ceph-authtool --create-keyring "$WORK/osd/keyring" --name "osd.$OSD_ID" --add-key "$KEY" > /dev/null
ceph-osd -c "$CEPH_CONF" -i "$OSD_ID" --mkfs --osd-uuid "$UUID" --osd-data "$WORK/osd" \
  --bluestore_block_path "$MAIN" --bluestore_block_db_path "$DB" --bluestore_block_db_size 0 \
  --keyring "$WORK/osd/keyring" > "$OUT/mkfs.log" 2>&1
echo "osd.$OSD_ID uuid $UUID main $MAIN db $DB tiny $TINY" > "$OUT/layout.txt"
for g in 0 1 10; do echo "$g GiB: $(sig_at "$MAIN" $g)"; done > "$OUT/main_label_offsets.txt"
run show_label_main_db.json ceph-bluestore-tool show-label --dev "$MAIN" --dev "$DB"
run raw_list_main_db.json ceph-volume raw list --format json "$MAIN" "$DB"
run raw_list_db_main.json ceph-volume raw list --format json "$DB" "$MAIN"
run raw_list_main.json ceph-volume raw list --format json "$MAIN"
run raw_list_db.json ceph-volume raw list --format json "$DB"
run raw_list_tiny_main_db.json ceph-volume raw list --format json "$TINY" "$MAIN" "$DB"
CEPH_VOLUME_ALLOW_LOOP_DEVICES=1 run inventory_main.json ceph-volume inventory --format json "$MAIN"
# The cost of listing, with EXTRA more blank 1 GiB devices (default 9): one call for all
# devices; what osdkeeper's agent does when the tiny device empties that answer (the call,
# then one per labelled device); and one call per device.
EXTRA=${EXTRA:-9}
blanks=()
for i in $(seq "$EXTRA"); do blanks+=("$(attach "blank$i" 1G)"); done
ok=("$MAIN" "$DB" "${blanks[@]}")
{
  echo "# seconds to list ${#ok[@]} devices (+ the tiny one where named), $(ceph --version | cut -d' ' -f3), $ROUNDS rounds"
  echo "# batched_healthy  batched_with_tiny+relist_labelled(2)  one_call_per_device(${#ok[@]}+1)"
  for r in $(seq "$ROUNDS"); do
    t0=$(date +%s.%N)
    ceph-volume raw list --format json "${ok[@]}" > /dev/null 2>&1
    t1=$(date +%s.%N)
    ceph-volume raw list --format json "$TINY" "${ok[@]}" > /dev/null 2>&1
    ceph-volume raw list --format json "$MAIN" > /dev/null 2>&1
    ceph-volume raw list --format json "$DB" > /dev/null 2>&1
    t2=$(date +%s.%N)
    for d in "$TINY" "${ok[@]}"; do ceph-volume raw list --format json "$d" > /dev/null 2>&1; done
    t3=$(date +%s.%N)
    echo "$(echo "$t1 - $t0" | bc) $(echo "$t2 - $t1" | bc) $(echo "$t3 - $t2" | bc)"
  done
} > "$OUT/raw_list_timing.txt"
# What a 16.2 zap leaves: the first 10 MiB zeroed, the copies (if any) untouched.
dd if=/dev/zero of="$MAIN" bs=1M count=10 conv=fsync status=none
for g in 0 1 10; do echo "$g GiB: $(sig_at "$MAIN" $g)"; done > "$OUT/main_label_offsets_head_wiped.txt"
run show_label_main_head_wiped.json ceph-bluestore-tool show-label --dev "$MAIN"
run raw_list_main_head_wiped.json ceph-volume raw list --format json "$MAIN"
CEPH_VOLUME_ALLOW_LOOP_DEVICES=1 run inventory_main_head_wiped.json ceph-volume inventory --format json "$MAIN"
cat "$OUT/raw_list_timing.txt"
