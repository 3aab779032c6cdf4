#!/bin/sh
# Installs (or upgrades) osdkeeper on a Debian/Proxmox host running Ceph from
# packages. Run as root from a checkout or an unpacked release:
#
#   deploy/install.sh --role daemon|agent|both [--binary PATH] [--root DIR] [--no-systemctl]
#
# --role daemon  the daemon's binary, user, unit, config and tokens
# --role agent   the binary and the agent's unit (on every storage host)
# --binary PATH  the osdkeeper binary [target/release/osdkeeper]
# --root DIR     install under DIR instead of / (a staging tree; no user is
#                created and systemctl is not called)
# --no-systemctl do not reload systemd or restart the services
#
# It never overwrites the config or the token files, so running it again is
# an upgrade: the binary and the units are replaced, the database is backed
# up first (osdkeeper backup) and migrated by the new daemon at its start.
set -eu

role=""
binary="target/release/osdkeeper"
root=""
systemctl=yes
here=$(cd "$(dirname "$0")" && pwd)

while [ $# -gt 0 ]; do
    case "$1" in
        --role) role=$2; shift 2 ;;
        --binary) binary=$2; shift 2 ;;
        --root) root=$2; systemctl=no; shift 2 ;;
        --no-systemctl) systemctl=no; shift ;;
        *) echo "install.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done
case "$role" in
    daemon|agent|both) ;;
    *) echo "install.sh: --role daemon|agent|both is required" >&2; exit 2 ;;
esac
if [ ! -x "$binary" ]; then
    echo "install.sh: no executable osdkeeper at $binary (cargo build --release, or --binary PATH)" >&2
    exit 2
fi

etc="$root/etc/osdkeeper"
units="$root/etc/systemd/system"
bin="$root/usr/local/bin"
doc="$root/usr/local/share/doc/osdkeeper"
state="$root/var/lib/osdkeeper"
installed="$bin/osdkeeper"

# A token: 32 random bytes as hex, written 0600 by root, never replaced.
token() {
    if [ -e "$1" ]; then
        echo "kept $1"
    else
        (umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' > "$1")
        echo "made $1 (0600)"
    fi
}

install -d -m 0755 "$bin" "$units" "$doc"
install -d -m 0750 "$etc"

# The daemon's database, copied before its binary changes.
db="$state/osdkeeper.db"
if [ -e "$db" ] && [ -x "$installed" ]; then
    backup="$state/osdkeeper.db.before-upgrade-$(date +%Y%m%dT%H%M%S)"
    "$installed" backup "$backup" --db "$db"
fi

install -m 0755 "$binary" "$installed"
echo "installed $installed ($("$installed" --version))"
for f in "$here/../README.md" "$here/../docs/operations.md" "$here/../docs/cli.md"; do
    [ -e "$f" ] && install -m 0644 "$f" "$doc/"
done

if [ "$role" = daemon ] || [ "$role" = both ]; then
    if [ -z "$root" ] && ! id osdkeeper >/dev/null 2>&1; then
        useradd --system --home-dir /var/lib/osdkeeper --no-create-home --shell /usr/sbin/nologin \
            --comment "osdkeeper daemon" osdkeeper
        echo "made the system user osdkeeper"
    fi
    install -m 0644 "$here/osdkeeper.service" "$units/osdkeeper.service"
    if [ -e "$etc/osdkeeper.yaml" ]; then
        echo "kept $etc/osdkeeper.yaml (the new example is $doc/osdkeeper.example.yaml)"
    else
        install -m 0640 "$here/osdkeeper.example.yaml" "$etc/osdkeeper.yaml"
        echo "made $etc/osdkeeper.yaml from the example"
    fi
    install -m 0644 "$here/osdkeeper.example.yaml" "$doc/osdkeeper.example.yaml"
    install -m 0755 "$here/ceph-auth.sh" "$doc/ceph-auth.sh"
    token "$etc/api-token"
    token "$etc/agent-token"
fi
if [ "$role" = agent ] || [ "$role" = both ]; then
    install -m 0644 "$here/osdkeeper-agent.service" "$units/osdkeeper-agent.service"
    [ -e "$etc/agent-token" ] || echo "copy the daemon host's $etc/agent-token here (0600) before starting the agent"
fi

if [ "$systemctl" = yes ]; then
    systemctl daemon-reload
    for unit in osdkeeper osdkeeper-agent; do
        if systemctl is-active --quiet "$unit"; then
            systemctl restart "$unit"
            echo "restarted $unit"
        fi
    done
fi
echo "next: docs/operations.md (cephx user, certificates, first start)"
