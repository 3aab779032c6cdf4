#!/bin/sh
# Installs (or upgrades) osdkeeper on a Debian/Proxmox host running Ceph from
# packages. Run as root from a checkout or an unpacked release:
#
#   deploy/install.sh --role daemon|agent|both [--binary PATH] [--root DIR] [--no-systemctl]
#                     [--agent-token FILE] [--agent-key FILE] [--host-name NAME]
#
# --role daemon  the daemon's binary, user, unit, config, API token and agent key
# --role agent   the binary, the agent's unit and this host's agent token
#                (on every storage host)
# --binary PATH  the osdkeeper binary [target/release/osdkeeper]
# --root DIR     install under DIR instead of / (a staging tree; no user is
#                created and systemctl is not called)
# --no-systemctl do not reload systemd or restart the services
# --agent-token FILE  this host's own agent token (`osdkeeper agent-token HOST`
#                or `osdkeeper certs` on the daemon's host made it); it
#                replaces the one installed (the move from a shared token)
# --agent-key FILE    the agent key for the daemon (`osdkeeper certs` made
#                it) [default: a new one, made here]
# --host-name NAME    with --role both, the name the daemon knows this host
#                by, for its token [default: the system's host name]
#
# It never overwrites the config, the API token or the agent key, so running
# it again is an upgrade: the binary and the units are replaced, the database
# is backed up first (osdkeeper backup) and migrated by the new daemon at its
# start. On an install from before per-host agent tokens (a shared
# agent-token on the daemon's host, no agent key), the daemon keeps the
# shared token for agents not given their own yet (docs/operations.md,
# "Agent tokens").
set -eu

role=""
binary="target/release/osdkeeper"
root=""
systemctl=yes
agent_token=""
agent_key=""
host_name=""
here=$(cd "$(dirname "$0")" && pwd)

while [ $# -gt 0 ]; do
    case "$1" in
        --role) role=$2; shift 2 ;;
        --binary) binary=$2; shift 2 ;;
        --root) root=$2; systemctl=no; shift 2 ;;
        --no-systemctl) systemctl=no; shift ;;
        --agent-token) agent_token=$2; shift 2 ;;
        --agent-key) agent_key=$2; shift 2 ;;
        --host-name) host_name=$2; shift 2 ;;
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
# How a key osdkeeper makes begins (wire/agent_token.rs): never an agent's token.
key_prefix="osdkeeper-agent-key-v1:"
if [ -n "$agent_token" ]; then
    if [ ! -s "$agent_token" ]; then
        echo "install.sh: --agent-token $agent_token: no such file, or empty" >&2
        exit 2
    fi
    if [ "$(head -c ${#key_prefix} "$agent_token")" = "$key_prefix" ]; then
        echo "install.sh: --agent-token $agent_token is the daemon's agent key, which stays on the daemon's host; give this host's token (osdkeeper agent-token HOST)" >&2
        exit 2
    fi
fi
if [ -n "$agent_key" ] && [ ! -s "$agent_key" ]; then
    echo "install.sh: --agent-key $agent_key: no such file, or empty" >&2
    exit 2
fi

etc="$root/etc/osdkeeper"
units="$root/etc/systemd/system"
bin="$root/usr/local/bin"
doc="$root/usr/local/share/doc/osdkeeper"
state="$root/var/lib/osdkeeper"
installed="$bin/osdkeeper"

# A token: 32 random bytes as hex, written 0600 by root, never replaced.
# With a prefix ($2), the same in the form of a key.
token() {
    if [ -e "$1" ]; then
        echo "kept $1"
    else
        (umask 077 && { printf '%s' "${2:-}"; od -An -N32 -tx1 /dev/urandom | tr -d ' \n'; } > "$1")
        echo "made $1 (0600)"
    fi
}

# The daemon's agent key, made or given once. Before it, an install had one
# token every agent took: kept for the daemon as agent-token.shared, given
# to it by a drop-in, until every agent has its own.
agent_key() {
    if [ -e "$etc/agent-key" ]; then
        if [ -n "$agent_key" ] && ! cmp -s "$agent_key" "$etc/agent-key"; then
            echo "install.sh: $etc/agent-key exists and differs from --agent-key $agent_key; it is never replaced" >&2
            exit 2
        fi
        echo "kept $etc/agent-key"
        return
    fi
    if [ -e "$etc/agent-token" ] && [ ! -e "$etc/agent-token.shared" ]; then
        (umask 077 && cp "$etc/agent-token" "$etc/agent-token.shared")
        install -d -m 0755 "$units/osdkeeper.service.d"
        cat > "$units/osdkeeper.service.d/shared-agent-token.conf" <<'EOF'
# Written by deploy/install.sh on an install from before per-host agent
# tokens: the one token every agent took, sent to an agent that refuses its
# own until each has its own (docs/operations.md, "Agent tokens"). Remove
# this file and /etc/osdkeeper/agent-token.shared once the daemon names no
# host still on it.
[Service]
LoadCredential=agent-token-shared:/etc/osdkeeper/agent-token.shared
Environment=OSDKEEPER_AGENT_TOKEN_FILE=%d/agent-token-shared
EOF
        echo "kept the shared agent token for agents not moved yet: $etc/agent-token.shared, $units/osdkeeper.service.d/shared-agent-token.conf"
    fi
    if [ -n "$agent_key" ]; then
        install -m 0600 "$agent_key" "$etc/agent-key"
        echo "installed $etc/agent-key (0600) from $agent_key"
    else
        token "$etc/agent-key" "$key_prefix"
    fi
}

# This host's own agent token: the one given, else (daemon and agent on
# one host) derived from the key here, else the one installed.
agent_token() {
    if [ -n "$agent_token" ]; then
        (umask 077 && cp "$agent_token" "$etc/agent-token.new") && mv "$etc/agent-token.new" "$etc/agent-token"
        echo "installed $etc/agent-token (0600): this host's own agent token"
    elif [ -e "$etc/agent-token" ]; then
        echo "kept $etc/agent-token"
    elif [ "$role" = both ]; then
        name=${host_name:-$(hostname)}
        (umask 077 && "$installed" agent-token "$name" --key-file "$etc/agent-key" > "$etc/agent-token")
        echo "made $etc/agent-token (0600): the agent token of host $name"
    else
        echo "no agent token yet: on the daemon's host run \`osdkeeper agent-token HOST > HOST.agent-token\`, copy it here and run this again with --agent-token HOST.agent-token"
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
    agent_key
fi
if [ "$role" = agent ] || [ "$role" = both ]; then
    install -m 0644 "$here/osdkeeper-agent.service" "$units/osdkeeper-agent.service"
    agent_token
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
