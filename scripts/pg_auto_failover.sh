#!/usr/bin/env bash
# A throwaway pg_auto_failover formation on loopback: a monitor, a primary and a
# synchronous secondary, for the failover test and for trying attrflow on a highly
# available PostgreSQL. Installs Debian's `postgresql-15-auto-failover` when `pg_autoctl`
# is missing (and PostgreSQL with it). Every node runs as the `postgres` user (when run as
# root) with its home and XDG folders in a fresh temporary folder, removed afterwards.
#
#   scripts/pg_auto_failover.sh run      start a formation, print its store URL, stop it on
#                                        Ctrl-C
#   source scripts/pg_auto_failover.sh   then `failover_start`: starts a formation, exports
#                                        ATTRFLOW_TEST_FAILOVER_URL (a multi-host URL that
#                                        finds the primary) and ATTRFLOW_TEST_FAILOVER_DIR,
#                                        and stops it when the shell exits
#   scripts/pg_auto_failover.sh kill-primary
#                                        SIGKILLs the primary of ATTRFLOW_TEST_FAILOVER_DIR
#                                        (its pg_autoctl and its postgres), so the monitor
#                                        promotes the secondary
#   scripts/pg_auto_failover.sh restart-killed
#                                        starts the killed node again; it rejoins as the
#                                        secondary
#
# The monitor's timers are lowered (health checks every second, a node unhealthy after
# 5 s), so a failover takes seconds instead of a minute.

FAILOVER_PACKAGE=postgresql-15-auto-failover
FAILOVER_BINDIR=/usr/lib/postgresql/15/bin

failover_install() {
    if command -v pg_autoctl >/dev/null 2>&1 && [ -x "$FAILOVER_BINDIR/pg_ctl" ]; then
        return
    fi
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "pg_autoctl not found; install pg_auto_failover (Debian: apt-get install $FAILOVER_PACKAGE)" >&2
        return 1
    fi
    echo "installing pg_auto_failover from Debian's packages" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
        "$FAILOVER_PACKAGE" >/dev/null
}

# Runs a command as the formation's owner, with its home and XDG folders in the formation.
failover_as_owner() {
    local dir=$FAILOVER_DIR
    (
        cd "$dir"
        local env=(env HOME="$dir/home" XDG_CONFIG_HOME="$dir/config" XDG_DATA_HOME="$dir/share"
            XDG_RUNTIME_DIR="$dir/run" PATH="$FAILOVER_BINDIR:$PATH")
        if [ "$(id -u)" -eq 0 ]; then
            exec runuser -u postgres -- "${env[@]}" "$@"
        else
            exec "${env[@]}" "$@"
        fi
    )
}

failover_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts `pg_autoctl run` for node $1 in the background, in a process group of its own
# (its id goes to $1.pid), so that killing the group kills the node's every process.
failover_run_node() {
    local node=$1
    setsid bash -c "$(declare -f failover_as_owner); FAILOVER_DIR='$FAILOVER_DIR' \
        FAILOVER_BINDIR='$FAILOVER_BINDIR' failover_as_owner pg_autoctl run \
        --pgdata '$FAILOVER_DIR/$node'" >>"$FAILOVER_DIR/$node.log" 2>&1 &
    echo $! >"$FAILOVER_DIR/$node.pid"
}

# The reported/assigned state of node $1 (e.g. primary/primary).
failover_state() {
    failover_as_owner pg_autoctl show state --pgdata "$FAILOVER_DIR/monitor" 2>/dev/null |
        awk -F'|' -v n="$1" '{gsub(/ /, "")} $1 == n {print $6 "/" $7}'
}

# Waits up to $2 seconds until node $1 reports the state $3 (and $4, when given) to the monitor.
failover_wait_state() {
    local node=$1 seconds=$2 want=$3 also=${4:-}
    local i state
    for ((i = 0; i < seconds * 2; i++)); do
        state=$(failover_state "$node")
        if [ "$state" = "$want/$want" ] || { [ -n "$also" ] && [ "$state" = "$also/$also" ]; }; then
            return 0
        fi
        sleep 0.5
    done
    echo "node $node did not reach state $want within ${seconds}s (now: ${state:-unknown})" >&2
    failover_as_owner pg_autoctl show state --pgdata "$FAILOVER_DIR/monitor" >&2 || true
    return 1
}

failover_start() {
    failover_install || return 1
    FAILOVER_DIR=$(mktemp -d -t attrflow-failover.XXXXXX)
    trap failover_stop EXIT
    mkdir -p "$FAILOVER_DIR"/{home,config,share,run}
    chmod 700 "$FAILOVER_DIR" "$FAILOVER_DIR/run"
    if [ "$(id -u)" -eq 0 ]; then
        chown -R postgres: "$FAILOVER_DIR"
    fi
    local monitor_port node1_port node2_port monitor_uri common
    monitor_port=$(failover_free_port)
    node1_port=$(failover_free_port)
    node2_port=$(failover_free_port)
    common=(--hostname 127.0.0.1 --auth trust --no-ssl)
    failover_as_owner pg_autoctl create monitor --pgdata "$FAILOVER_DIR/monitor" \
        --pgport "$monitor_port" "${common[@]}" >"$FAILOVER_DIR/monitor.log" 2>&1 || {
        cat "$FAILOVER_DIR/monitor.log" >&2
        return 1
    }
    failover_run_node monitor
    monitor_uri="postgres://autoctl_node@127.0.0.1:$monitor_port/pg_auto_failover?sslmode=disable"
    local i
    for ((i = 0; i < 60; i++)); do
        if failover_as_owner psql -qAt -d "postgres://postgres@127.0.0.1:$monitor_port/pg_auto_failover" \
            -c "ALTER SYSTEM SET pgautofailover.health_check_period = '1s'" \
            -c "ALTER SYSTEM SET pgautofailover.node_considered_unhealthy_timeout = '5s'" \
            -c "ALTER SYSTEM SET pgautofailover.primary_demote_timeout = '5s'" \
            -c "SELECT pg_reload_conf()" >/dev/null 2>&1; then
            break
        fi
        sleep 0.5
        if [ "$i" -eq 59 ]; then
            echo "could not lower the monitor's timers" >&2
            return 1
        fi
    done
    local node port
    for node in node1 node2; do
        port=$node1_port
        [ "$node" = node2 ] && port=$node2_port
        failover_as_owner pg_autoctl create postgres --pgdata "$FAILOVER_DIR/$node" \
            --pgport "$port" --name "$node" --dbname attrflow --monitor "$monitor_uri" \
            "${common[@]}" >"$FAILOVER_DIR/$node.log" 2>&1 || {
            cat "$FAILOVER_DIR/$node.log" >&2
            return 1
        }
        failover_run_node "$node"
        if [ "$node" = node1 ]; then
            failover_wait_state node1 60 single || return 1
        fi
    done
    failover_wait_state node2 90 secondary || return 1
    failover_wait_state node1 30 primary || return 1
    export ATTRFLOW_TEST_FAILOVER_DIR="$FAILOVER_DIR"
    export ATTRFLOW_TEST_FAILOVER_URL="postgresql://postgres@127.0.0.1:$node1_port,127.0.0.1:$node2_port/attrflow?target_session_attrs=read-write&connect_timeout=2"
    echo "pg_auto_failover formation on $ATTRFLOW_TEST_FAILOVER_URL (monitor on port $monitor_port, data in $FAILOVER_DIR)" >&2
}

# The node (node1 or node2) the monitor has as primary now.
failover_primary() {
    failover_as_owner pg_autoctl show state --pgdata "$FAILOVER_DIR/monitor" 2>/dev/null |
        awk -F'|' '{gsub(/ /, "")} $6 ~ /^(primary|wait_primary|single)$/ {print $1; exit}'
}

failover_kill_primary() {
    FAILOVER_DIR=${FAILOVER_DIR:-${ATTRFLOW_TEST_FAILOVER_DIR:-}}
    local node
    node=$(failover_primary)
    if [ -z "$node" ]; then
        echo "no primary to kill" >&2
        return 1
    fi
    kill -KILL -- "-$(cat "$FAILOVER_DIR/$node.pid")" 2>/dev/null || true
    kill -KILL "$(head -n 1 "$FAILOVER_DIR/$node/postmaster.pid")" 2>/dev/null || true
    echo "$node" >"$FAILOVER_DIR/killed"
    echo "killed the primary, $node" >&2
}

failover_restart_killed() {
    FAILOVER_DIR=${FAILOVER_DIR:-${ATTRFLOW_TEST_FAILOVER_DIR:-}}
    local node
    node=$(cat "$FAILOVER_DIR/killed")
    failover_run_node "$node"
    failover_wait_state "$node" 60 secondary
}

failover_stop() {
    if [ -n "${FAILOVER_DIR:-}" ] && [ -d "$FAILOVER_DIR" ]; then
        local node
        for node in node1 node2 monitor; do
            if [ -f "$FAILOVER_DIR/$node.pid" ]; then
                kill -TERM -- "-$(cat "$FAILOVER_DIR/$node.pid")" 2>/dev/null || true
            fi
        done
        for node in node1 node2 monitor; do
            if [ -f "$FAILOVER_DIR/$node/postmaster.pid" ]; then
                failover_as_owner "$FAILOVER_BINDIR/pg_ctl" --pgdata="$FAILOVER_DIR/$node" \
                    --silent --mode=immediate stop >/dev/null 2>&1 || true
            fi
        done
        sleep 0.5
        rm -rf "$FAILOVER_DIR"
    fi
    FAILOVER_DIR=
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    case "${1:-}" in
        run)
            failover_start
            echo
            echo "store URL: $ATTRFLOW_TEST_FAILOVER_URL"
            echo "Ctrl-C stops the formation and deletes its data."
            sleep infinity &
            trap 'kill $! 2>/dev/null; exit 0' INT TERM
            wait $!
            ;;
        kill-primary) failover_kill_primary ;;
        restart-killed) failover_restart_killed ;;
        *)
            echo "usage: scripts/pg_auto_failover.sh run|kill-primary|restart-killed   (or source it and call failover_start)" >&2
            exit 2
            ;;
    esac
fi
