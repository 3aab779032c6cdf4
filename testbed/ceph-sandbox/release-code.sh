#!/bin/bash
# release-code.sh VERSION: the Python code of a Ceph release this machine has no Debian root of
# (17.2 Quincy, 19.2 Squid: Debian never shipped them), from Ubuntu's packages of that version:
# `ceph-volume` and `python3-ceph-common` (17.2.9 is Ubuntu 22.04's, 19.2.3 Ubuntu 24.04's),
# fetched from the Ubuntu archive once per machine and unpacked under
# /var/cache/ceph-code/VERSION. Prints the directory to put on PYTHONPATH.
# Pure Python: run it with a python3 that has `packaging` (a release root's, or Debian's with
# python3-packaging); ceph-volume calls the host's own lsblk, blkid, udevadm and LVM tools.
set -euo pipefail
VERSION=${1:?usage: release-code.sh 17.2.9|19.2.3}
case "$VERSION" in
  17.2.9) DEB=17.2.9-0ubuntu0.22.04.4 ;;
  19.2.3) DEB=19.2.3-0ubuntu0.24.04.3 ;;
  *) echo "release-code.sh: unknown version $VERSION (known: 17.2.9, 19.2.3)" >&2; exit 2 ;;
esac
CODE=${CEPH_CODE_CACHE:-/var/cache/ceph-code}/$VERSION
PY=$CODE/usr/lib/python3/dist-packages
if [ ! -f "$CODE/.ready" ]; then
  rm -rf "$CODE"; mkdir -p "$CODE"
  for pkg in ceph-volume python3-ceph-common; do
    url=http://archive.ubuntu.com/ubuntu/pool/main/c/ceph/${pkg}_${DEB}_all.deb
    curl -fsS --retry 3 -m 300 -o "$CODE/$pkg.deb" "$url" || { echo "release-code.sh: cannot fetch $url" >&2; exit 1; }
    dpkg-deb -x "$CODE/$pkg.deb" "$CODE"
    rm -f "$CODE/$pkg.deb"
  done
  [ -d "$PY/ceph_volume" ] && [ -d "$PY/ceph/deployment" ] || { echo "release-code.sh: no ceph_volume or ceph in $PY" >&2; exit 1; }
  touch "$CODE/.ready"
fi
echo "$PY"
