#!/bin/bash
# record-code-formats.sh VERSION OUTDIR: what the ceph-volume of a release this machine has no
# cluster of (17.2 Quincy, 19.2 Squid) prints for `inventory`, by running that release's own
# Python code (release-code.sh VERSION) with Debian's python3 (needs python3-packaging).
# ceph-volume calls the host's own lsblk, blkid, udevadm and LVM tools, as on a real host.
#
# On loop devices it attaches itself (recorded in OUTDIR/loops, detached at the end by record):
#   * BLANK, 11 GiB, nothing on it;
#   * LABELLED, 11 GiB, with a real BlueStore label at its head (the 4 KiB of
#     tests/fixtures/ceph_volume/bluestore_label_tentacle_20.2.4_copy_at_1GiB.bin).
set -euo pipefail
VERSION=${1:?usage: record-code-formats.sh VERSION OUTDIR}
OUT=${2:?usage: record-code-formats.sh VERSION OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
LABEL=$HERE/../../tests/fixtures/ceph_volume/bluestore_label_tentacle_20.2.4_copy_at_1GiB.bin
/usr/bin/python3 -c 'import packaging' 2>/dev/null || { echo "python3-packaging is needed (apt-get install python3-packaging)" >&2; exit 1; }
CODE=$("$HERE/release-code.sh" "$VERSION")
mkdir -p "$OUT"
WORK=$(mktemp -d /var/tmp/record-code-formats.XXXXXX)
: > "$OUT/loops"
cleanup() {
  set +e
  while read -r dev file; do
    [ "$(losetup -n -O BACK-FILE "$dev" 2>/dev/null)" = "$file" ] && losetup -d "$dev" && echo "detached $dev ($file)"
  done < "$OUT/loops"
  rm -rf "$WORK"
}
trap cleanup EXIT
attach() { # NAME BYTES -> prints the device
  local file=$WORK/$1
  truncate -s "$2" "$file"
  local dev; dev=$(losetup -f --show "$file")
  echo "$dev $file" >> "$OUT/loops"
  echo "$dev"
}
cv() {
  CEPH_VOLUME_ALLOW_LOOP_DEVICES=1 PYTHONPATH=$CODE /usr/bin/python3 -c \
    'import sys; from ceph_volume.main import Volume; sys.argv = ["ceph-volume"] + sys.argv[1:]; Volume()' \
    --log-path "$WORK" "$@"
}
BLANK=$(attach blank 11G)
LABELLED=$(attach labelled 11G)
dd if="$LABEL" of="$LABELLED" bs=4096 count=1 conv=notrunc,fsync status=none
echo "blank $BLANK labelled $LABELLED" > "$OUT/layout.txt"
cv inventory --format json "$BLANK" > "$OUT/inventory_${VERSION}_code_loop_blank.json"
cv inventory --format json "$LABELLED" > "$OUT/inventory_${VERSION}_code_loop_labelled.json"
echo "recorded with the code of ceph-volume $VERSION in $OUT"
