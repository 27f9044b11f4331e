#!/usr/bin/env bash
# A throwaway PostgreSQL server on loopback, for the tests and for trying attrflow on
# PostgreSQL. Installs Debian's `postgresql` package when no server binaries are found,
# creates a cluster in a fresh temporary folder (as the `postgres` user when run as root:
# initdb refuses root), starts it on 127.0.0.1 on a free port with one database, and stops
# it and removes the folder afterwards. Nothing it creates outlives it.
#
#   scripts/postgres.sh run     start a server, print its store URL, stop it on Ctrl-C
#   source scripts/postgres.sh  then `postgres_start`: starts a server, exports its URL as
#                               ATTRFLOW_TEST_POSTGRES_URL (and its folder as
#                               ATTRFLOW_TEST_POSTGRES_DIR) and stops it when the shell exits
#   scripts/postgres.sh restart restarts the server of ATTRFLOW_TEST_POSTGRES_DIR (fast
#                               shutdown: every session is cut off), on the same port
#
# The server speaks TLS too, with a certificate for 127.0.0.1 signed by a throwaway CA
# ($POSTGRES_DIR/ca.crt); $POSTGRES_DIR/other-ca.crt is a CA that signed nothing of it.
#
# PG_BINDIR overrides where initdb, pg_ctl and postgres are looked up. POSTGRES_DURABLE=1
# keeps the server's default fsync and full_page_writes (for benchmarks).

postgres_bindir() {
    if [ -n "${PG_BINDIR:-}" ]; then
        echo "$PG_BINDIR"
        return
    fi
    local newest
    newest=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -n "$newest" ] && [ -x "$newest/initdb" ]; then
        echo "$newest"
    elif command -v initdb >/dev/null 2>&1; then
        dirname "$(command -v initdb)"
    fi
}

postgres_install() {
    if [ -n "$(postgres_bindir)" ]; then
        return
    fi
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "PostgreSQL server binaries not found; install PostgreSQL (Debian: apt-get install postgresql) or set PG_BINDIR" >&2
        return 1
    fi
    echo "installing PostgreSQL from Debian's packages" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 postgresql >/dev/null
}

# Runs a server binary as the cluster's owner, from the cluster's folder (the owner may not
# be allowed into the caller's).
postgres_as_owner() {
    (
        cd "$POSTGRES_DIR"
        if [ "$(id -u)" -eq 0 ]; then
            exec runuser -u postgres -- "$@"
        else
            exec "$@"
        fi
    )
}

# Writes a throwaway CA (ca.crt), a server certificate for IP 127.0.0.1 signed by it
# (server.crt, server.key), and an unrelated CA (other-ca.crt) into folder $1.
postgres_make_certificates() {
    local dir=$1
    (
        cd "$dir"
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=attrflow test CA" \
            -keyout ca.key -out ca.crt
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=attrflow other CA" \
            -keyout other-ca.key -out other-ca.crt
        openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout server.key \
            -out server.csr
        printf 'subjectAltName=IP:127.0.0.1\n' >server.ext
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
            -extfile server.ext -out server.crt
        chmod 600 server.key
        if [ "$(id -u)" -eq 0 ]; then
            chown postgres: server.key server.crt
        fi
    ) >"$dir/certificates.log" 2>&1 || {
        cat "$dir/certificates.log" >&2
        return 1
    }
}

postgres_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts the server and sets POSTGRES_DIR and ATTRFLOW_TEST_POSTGRES_URL.
postgres_start() {
    postgres_install || return 1
    local bindir port database=attrflow user=attrflow
    bindir=$(postgres_bindir)
    POSTGRES_DIR=$(mktemp -d -t attrflow-postgres.XXXXXX)
    trap postgres_stop EXIT
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres: "$POSTGRES_DIR"
    fi
    chmod 700 "$POSTGRES_DIR"
    postgres_make_certificates "$POSTGRES_DIR" || return 1
    postgres_as_owner "$bindir/initdb" --pgdata="$POSTGRES_DIR/data" --username="$user" \
        --auth=trust --encoding=UTF8 --no-locale >"$POSTGRES_DIR/initdb.log" 2>&1 || {
        cat "$POSTGRES_DIR/initdb.log" >&2
        return 1
    }
    # fsync off: this cluster is thrown away, and no test here cuts the power.
    local durability="-c fsync=off -c full_page_writes=off"
    if [ "${POSTGRES_DURABLE:-}" = 1 ]; then
        durability=""
    fi
    local attempt
    for attempt in 1 2 3 4 5; do
        port=$(postgres_free_port)
        if postgres_as_owner "$bindir/pg_ctl" --pgdata="$POSTGRES_DIR/data" --wait --silent \
            --log="$POSTGRES_DIR/server.log" \
            -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$POSTGRES_DIR' -c max_connections=300 $durability -c ssl=on -c ssl_cert_file='$POSTGRES_DIR/server.crt' -c ssl_key_file='$POSTGRES_DIR/server.key'" \
            start; then
            break
        fi
        port=
    done
    if [ -z "$port" ]; then
        cat "$POSTGRES_DIR/server.log" >&2
        return 1
    fi
    "$bindir/createdb" --host=127.0.0.1 --port="$port" --username="$user" "$database"
    export ATTRFLOW_TEST_POSTGRES_URL="postgresql://$user@127.0.0.1:$port/$database"
    export ATTRFLOW_TEST_POSTGRES_DIR="$POSTGRES_DIR"
    echo "PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on $ATTRFLOW_TEST_POSTGRES_URL (data in $POSTGRES_DIR)" >&2
}

# Restarts the server (POSTGRES_DIR, else ATTRFLOW_TEST_POSTGRES_DIR) with its options.
postgres_restart() {
    POSTGRES_DIR=${POSTGRES_DIR:-${ATTRFLOW_TEST_POSTGRES_DIR:-}}
    if [ -z "$POSTGRES_DIR" ] || [ ! -d "$POSTGRES_DIR/data" ]; then
        echo "no server to restart: set ATTRFLOW_TEST_POSTGRES_DIR (postgres_start sets it)" >&2
        return 1
    fi
    postgres_as_owner "$(postgres_bindir)/pg_ctl" --pgdata="$POSTGRES_DIR/data" --wait --silent \
        --log="$POSTGRES_DIR/server.log" --mode=fast restart
}

postgres_stop() {
    if [ -n "${POSTGRES_DIR:-}" ] && [ -d "$POSTGRES_DIR" ]; then
        postgres_as_owner "$(postgres_bindir)/pg_ctl" --pgdata="$POSTGRES_DIR/data" --silent \
            --mode=immediate stop >/dev/null 2>&1 || true
        rm -rf "$POSTGRES_DIR"
    fi
    POSTGRES_DIR=
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    case "${1:-}" in
        run)
            postgres_start
            echo
            echo "store URL: $ATTRFLOW_TEST_POSTGRES_URL"
            echo "  make run STORE=$ATTRFLOW_TEST_POSTGRES_URL"
            echo "Ctrl-C stops the server and deletes its data."
            # Waiting in `wait`, not in a foreground sleep, lets the signal trap run at once.
            sleep infinity &
            trap 'kill $! 2>/dev/null; exit 0' INT TERM
            wait $!
            ;;
        restart)
            postgres_restart
            ;;
        *)
            echo "usage: scripts/postgres.sh run|restart   (or source it and call postgres_start)" >&2
            exit 2
            ;;
    esac
fi
