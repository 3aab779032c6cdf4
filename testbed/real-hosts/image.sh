#!/bin/bash
# image.sh: prints the directory of the base image for the current build-image.sh, building it
# first when this machine has none (once per machine and per change of build-image.sh: ~2.5-4 min,
# ~1.2 GiB). Concurrent callers wait for one build.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
rh_need debootstrap qemu-img mkfs.ext4 bc ssh-keygen flock
key=$(rh_key "$RH_HERE/build-image.sh")
dir=$RH_CACHE/image-$key
if [ ! -f "$dir/base.qcow2" ]; then
  mkdir -p "$RH_CACHE"
  exec 9>"$RH_CACHE/.image.lock"
  flock 9
  if [ ! -f "$dir/base.qcow2" ]; then
    rm -rf "$dir.tmp"
    t0=$(rh_now)
    echo "image.sh: building the host image $key (debootstrap + Ceph packages, a few minutes)" >&2
    if ! "$RH_HERE/build-image.sh" "$dir.tmp" >&2; then
      tail -n 30 "$dir.tmp"/*.log >&2 || true
      rh_die "the image build failed; its logs are in $dir.tmp"
    fi
    # The root directory is only needed to build the image.
    rm -rf "$dir.tmp/rootfs"
    mv "$dir.tmp" "$dir"
    echo "image.sh: built $dir in $(rh_since "$t0") s" >&2
  fi
fi
rh_used "$dir" image
echo "$dir"
