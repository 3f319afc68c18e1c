#!/usr/bin/env bash
# A two-shard ClickHouse cluster on this machine for the ClickHouse leg of the tests and the
# events benchmarks (docs/deploy.md, "Events on ClickHouse"): Debian's clickhouse-server (18.16),
# two servers with their own config, ports and data directory, and a `remote_servers` cluster
# `opsplatform` of one replica per shard (no ZooKeeper needed).
#
#   scripts/clickhouse.sh install   apt-get clickhouse-server (only when missing)
#   scripts/clickhouse.sh start     configure (first time) and start both; waits until they answer; a no-op when up
#   scripts/clickhouse.sh stop      stops both
#   scripts/clickhouse.sh kill-node N   kill -9 of node N (1 or 2); `start` brings it back
#   scripts/clickhouse.sh status    exit 0 when both answer, 1 when not
#   scripts/clickhouse.sh env       the export lines the tests use: eval "$(scripts/clickhouse.sh env)"
#   scripts/clickhouse.sh wipe      stop, then delete the data directory
#
# Everything lives in its own directory and on its own ports, beside anything else on the machine:
#   OPS_CLICKHOUSE_DIR        default /tmp/opsplatform-clickhouse (node1/, node2/)
#   OPS_CLICKHOUSE_HTTP_PORT  first node's HTTP port, default 18123 (the second: +1)
#   OPS_CLICKHOUSE_TCP_PORT   first node's native port, default 19000 (the second: +1); the
#                             shards talk to each other on these; interserver ports 19009, 19010
set -euo pipefail

DIR="${OPS_CLICKHOUSE_DIR:-/tmp/opsplatform-clickhouse}"
HTTP_BASE="${OPS_CLICKHOUSE_HTTP_PORT:-18123}"
TCP_BASE="${OPS_CLICKHOUSE_TCP_PORT:-19000}"
NODES=(1 2)
SERVER=/usr/sbin/clickhouse-server

say() { echo "clickhouse: $*" >&2; }

http_port() { echo $((HTTP_BASE + $1 - 1)); }
tcp_port() { echo $((TCP_BASE + $1 - 1)); }

cmd_install() {
  if [ -x "$SERVER" ]; then
    say "clickhouse-server is installed"
    return 0
  fi
  say "installing clickhouse-server from Debian's packages"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clickhouse-server >/dev/null
  say "installed"
}

# One node's config: its own paths and ports, the cluster, a user profile with bounded memory.
write_config() {
  local n=$1 home="$DIR/node$1"
  mkdir -p "$home/data" "$home/tmp" "$home/user_files" "$home/log" "$home/format_schemas"
  cat >"$home/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
    <logger>
        <level>warning</level>
        <log>$home/log/server.log</log>
        <errorlog>$home/log/error.log</errorlog>
        <size>100M</size>
        <count>2</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <http_port>$(http_port "$n")</http_port>
    <tcp_port>$(tcp_port "$n")</tcp_port>
    <interserver_http_port>$((TCP_BASE + 8 + n))</interserver_http_port>
    <interserver_http_host>127.0.0.1</interserver_http_host>
    <max_connections>1024</max_connections>
    <keep_alive_timeout>10</keep_alive_timeout>
    <max_concurrent_queries>200</max_concurrent_queries>
    <uncompressed_cache_size>268435456</uncompressed_cache_size>
    <mark_cache_size>268435456</mark_cache_size>
    <path>$home/data/</path>
    <tmp_path>$home/tmp/</tmp_path>
    <user_files_path>$home/user_files/</user_files_path>
    <format_schema_path>$home/format_schemas/</format_schema_path>
    <users_config>$home/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
    <remote_servers>
        <opsplatform>
            <shard>
                <replica><host>127.0.0.1</host><port>$(tcp_port 1)</port></replica>
            </shard>
            <shard>
                <replica><host>127.0.0.1</host><port>$(tcp_port 2)</port></replica>
            </shard>
        </opsplatform>
    </remote_servers>
    <builtin_dictionaries_reload_interval>3600</builtin_dictionaries_reload_interval>
    <max_session_timeout>3600</max_session_timeout>
    <default_session_timeout>60</default_session_timeout>
    <max_table_size_to_drop>0</max_table_size_to_drop>
    <max_partition_size_to_drop>0</max_partition_size_to_drop>
</yandex>
EOF
  cat >"$home/users.xml" <<EOF
<?xml version="1.0"?>
<yandex>
    <profiles>
        <default>
            <max_memory_usage>2000000000</max_memory_usage>
            <!-- 18.16 counts physical cores for its default and finds 1 on this kind of VM:
                 a query on one shard (one tenant's rows live on one) would use one core of two. -->
            <max_threads>$(nproc)</max_threads>
            <use_uncompressed_cache>0</use_uncompressed_cache>
            <load_balancing>random</load_balancing>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
EOF
}

answers() { curl -fsS --max-time 2 "http://127.0.0.1:$(http_port "$1")/ping" >/dev/null 2>&1; }

start_node() {
  local n=$1 home="$DIR/node$1"
  if answers "$n"; then return 0; fi
  write_config "$n"
  # --daemon forks and writes the pid file; the server logs to its own files.
  "$SERVER" --daemon --config-file="$home/config.xml" --pid-file="$home/server.pid" >"$home/log/stdout.log" 2>&1 || {
    say "node $n failed to start; see $home/log/"
    tail -20 "$home/log/error.log" >&2 2>/dev/null || true
    return 1
  }
}

cmd_start() {
  [ -x "$SERVER" ] || { say "clickhouse-server is not installed: run scripts/clickhouse.sh install"; exit 1; }
  for n in "${NODES[@]}"; do start_node "$n"; done
  for _ in $(seq 1 120); do
    if answers 1 && answers 2; then
      say "up: http://127.0.0.1:$(http_port 1) and http://127.0.0.1:$(http_port 2), cluster opsplatform (2 shards)"
      return 0
    fi
    sleep 0.5
  done
  say "did not answer within 60 s; logs in $DIR/node*/log/"
  exit 1
}

cmd_stop() {
  for n in "${NODES[@]}"; do
    local pidfile="$DIR/node$n/server.pid"
    [ -f "$pidfile" ] || continue
    local pid
    pid=$(cat "$pidfile")
    if kill "$pid" 2>/dev/null; then
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
  done
  say "stopped"
}

# One shard killed (kill -9) for a test of a backend that goes down; `start` brings it back.
cmd_kill_node() {
  local n=${1:?node number}
  local pidfile="$DIR/node$n/server.pid"
  [ -f "$pidfile" ] || { say "node $n is not running"; return 1; }
  local pid
  pid=$(cat "$pidfile")
  kill -9 "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rm -f "$pidfile"
  say "node $n killed"
}

cmd_status() {
  for n in "${NODES[@]}"; do answers "$n" || exit 1; done
}

cmd_env() {
  echo "export OPS_TEST_CLICKHOUSE_URL='clickhouse://127.0.0.1:$(http_port 1),127.0.0.1:$(http_port 2)/opsplatform_test?cluster=opsplatform'"
  # For the tests that kill a shard and start it again with this script (kill-node, start).
  echo "export OPS_CLICKHOUSE_DIR='$DIR' OPS_CLICKHOUSE_HTTP_PORT='$HTTP_BASE' OPS_CLICKHOUSE_TCP_PORT='$TCP_BASE'"
}

cmd_wipe() {
  cmd_stop
  rm -rf "$DIR"
}

case "${1:-}" in
  install) cmd_install ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  kill-node) cmd_kill_node "${2:-}" ;;
  status) cmd_status ;;
  env) cmd_env ;;
  wipe) cmd_wipe ;;
  *)
    echo "usage: $0 install|start|stop|kill-node N|status|env|wipe" >&2
    exit 2
    ;;
esac
