#!/usr/bin/env bash
# A real S3-compatible object store on this machine for the S3 legs of the tests and the media
# benchmark: Debian's OpenStack Swift behind its s3api middleware (docs/deploy.md, "Media on S3").
#
#   scripts/swift-s3.sh install   apt-get the Swift servers and memcached (only what is missing)
#   scripts/swift-s3.sh start     configure (first time) and start; waits until it answers; a no-op when up
#   scripts/swift-s3.sh stop      stops every process start started
#   scripts/swift-s3.sh status    exit 0 when it answers, 1 when not
#   scripts/swift-s3.sh env       the export lines the tests use: eval "$(scripts/swift-s3.sh env)"
#   scripts/swift-s3.sh check     create a bucket, put, ranged get, multipart upload, list, abort (AWS SDK);
#                                 then creates the bucket env names (opsplatform-test) if missing
#
# Everything lives in its own directory and on its own ports, beside anything else on the machine:
#   OPS_SWIFT_DIR   (default /tmp/opsplatform-swift; its file system must support xattrs)
#   OPS_SWIFT_PORT  S3 (proxy) port, default 18080; the storage servers use 16200-16202 and
#                   memcached 11811 (OPS_SWIFT_STORAGE_PORT_BASE, OPS_SWIFT_MEMCACHED_PORT)
# Two devices (d1, d2) in two zones, two replicas; tempauth user test:tester / testing, which is
# also the S3 access key / secret.
set -euo pipefail

DIR="${OPS_SWIFT_DIR:-/tmp/opsplatform-swift}"
PROXY_PORT="${OPS_SWIFT_PORT:-18080}"
BASE="${OPS_SWIFT_STORAGE_PORT_BASE:-16200}"
OBJECT_PORT=$BASE
CONTAINER_PORT=$((BASE + 1))
ACCOUNT_PORT=$((BASE + 2))
MEMCACHED_PORT="${OPS_SWIFT_MEMCACHED_PORT:-11811}"
BUCKET="${OPS_SWIFT_BUCKET:-opsplatform-test}"
ETC="$DIR/etc"
RUN="$DIR/run"
LOG="$DIR/log"
NODES="$DIR/srv/node"
SERVERS=(account container object proxy)
# Swift's scripts start with #!/usr/bin/python3; the checks below use the same interpreter (not
# whatever python3 comes first on the PATH).
PY=/usr/bin/python3

say() { echo "swift-s3: $*" >&2; }

cmd_install() {
  local missing=()
  for bin in swift-proxy-server swift-account-server swift-container-server swift-object-server swift-ring-builder memcached; do
    command -v "$bin" >/dev/null || missing+=("$bin")
  done
  if [ -x "$PY" ] && ! "$PY" -c 'import lxml, swift.common.middleware.s3api' 2>/dev/null; then missing+=(s3api); fi
  if [ ${#missing[@]} -eq 0 ]; then
    say "Swift and memcached are installed"
    return 0
  fi
  say "installing Swift and memcached from Debian's packages (missing: ${missing[*]})"
  apt-get update -qq
  # python3-lxml: s3api parses and writes XML with it (a dependency of python3-swift already;
  # named so that a trimmed install cannot miss it).
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    swift swift-proxy swift-account swift-container swift-object memcached python3-lxml >/dev/null
  say "installed"
}

# A directory whose file system takes user xattrs (Swift keeps object metadata in them).
check_xattrs() {
  mkdir -p "$DIR"
  if ! "$PY" - "$DIR" <<'EOF'
import os, sys, tempfile
with tempfile.NamedTemporaryFile(dir=sys.argv[1]) as f:
    os.setxattr(f.name, 'user.swift.check', b'1')
    assert os.getxattr(f.name, 'user.swift.check') == b'1'
EOF
  then
    say "the file system of $DIR does not support user xattrs, which Swift needs; set OPS_SWIFT_DIR to a directory on ext4 or xfs (e.g. /var/tmp/opsplatform-swift)"
    exit 1
  fi
}

write_configs() {
  local user
  user=$(id -un)
  mkdir -p "$ETC" "$RUN" "$LOG" "$NODES/d1" "$NODES/d2"
  local common="[DEFAULT]
bind_ip = 127.0.0.1
user = $user
swift_dir = $ETC
devices = $NODES
mount_check = false
log_level = WARNING
workers = 0
"
  local server port
  for server in account container object; do
    case $server in
      account) port=$ACCOUNT_PORT ;;
      container) port=$CONTAINER_PORT ;;
      object) port=$OBJECT_PORT ;;
    esac
    cat >"$ETC/$server-server.conf" <<EOF
$common
bind_port = $port
log_name = $server-server

[pipeline:main]
pipeline = healthcheck $server-server

[app:$server-server]
use = egg:swift#$server

[filter:healthcheck]
use = egg:swift#healthcheck
EOF
  done
  cat >"$ETC/proxy-server.conf" <<EOF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = $PROXY_PORT
user = $user
swift_dir = $ETC
log_level = WARNING
log_name = proxy-server
workers = 1

[pipeline:main]
# s3api before the auth (tempauth checks the S3 signatures); slo is what multipart uploads are made of.
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats s3api tempauth copy slo dlo proxy-logging proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
node_timeout = 10
conn_timeout = 1

[filter:s3api]
use = egg:swift#s3api
location = us-east-1

[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = testing .admin

[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:$MEMCACHED_PORT

[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:copy]
use = egg:swift#copy
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
EOF
}

build_rings() {
  local ring port rc
  for ring in account container object; do
    [ -f "$ETC/$ring.ring.gz" ] && continue
    case $ring in
      account) port=$ACCOUNT_PORT ;;
      container) port=$CONTAINER_PORT ;;
      object) port=$OBJECT_PORT ;;
    esac
    (
      cd "$ETC"
      rm -f "$ring.builder"
      swift-ring-builder "$ring.builder" create 8 2 1 >/dev/null
      swift-ring-builder "$ring.builder" add "r1z1-127.0.0.1:$port/d1" 100 >/dev/null
      swift-ring-builder "$ring.builder" add "r1z2-127.0.0.1:$port/d2" 100 >/dev/null
      # Exit status 1 is a warning (e.g. balance), 2 an error.
      rc=0
      swift-ring-builder "$ring.builder" rebalance >/dev/null || rc=$?
      [ "$rc" -le 1 ] || exit "$rc"
    )
  done
}

# Running, and still the process start started (a pid file that outlived a reboot may name another).
alive() {
  local pid
  [ -f "$RUN/$1.pid" ] || return 1
  pid=$(cat "$RUN/$1.pid")
  kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$1"
}

port_of() {
  case $1 in
    account) echo "$ACCOUNT_PORT" ;;
    container) echo "$CONTAINER_PORT" ;;
    object) echo "$OBJECT_PORT" ;;
    proxy) echo "$PROXY_PORT" ;;
  esac
}

healthy() { [ "$(curl -s -m 2 "http://127.0.0.1:$(port_of "$1")/healthcheck" 2>/dev/null)" = "OK" ]; }

# The S3 API answers: a request with a bogus S3 signature is refused in S3's XML (s3api and
# tempauth are both up), not with a Swift page.
s3_answers() {
  curl -s -m 2 -H 'Authorization: AWS probe:bogus' -H "Date: $(date -R)" "http://127.0.0.1:$PROXY_PORT/" 2>/dev/null | grep -q '<Code>SignatureDoesNotMatch</Code>'
}

port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

cmd_status() {
  local ok=0 name
  for name in memcached "${SERVERS[@]}"; do
    if alive "$name"; then say "$name running (pid $(cat "$RUN/$name.pid"))"; else say "$name not running"; ok=1; fi
  done
  if [ $ok -eq 0 ] && s3_answers; then
    say "S3 API answering on http://127.0.0.1:$PROXY_PORT (data in $DIR)"
    return 0
  fi
  return 1
}

cmd_start() {
  if alive proxy && s3_answers; then
    say "already running on http://127.0.0.1:$PROXY_PORT (data in $DIR)"
    return 0
  fi
  command -v swift-proxy-server >/dev/null || { say "Swift is not installed: run scripts/swift-s3.sh install"; exit 1; }
  check_xattrs
  write_configs
  build_rings
  if ! alive memcached; then
    port_taken "$MEMCACHED_PORT" && { say "port $MEMCACHED_PORT is taken by another process; set OPS_SWIFT_MEMCACHED_PORT"; exit 1; }
    memcached -d -l 127.0.0.1 -p "$MEMCACHED_PORT" -U 0 -m 64 -u "$(id -un)" -P "$RUN/memcached.pid"
  fi
  local name port
  for name in "${SERVERS[@]}"; do
    alive "$name" && continue
    port=$(port_of "$name")
    port_taken "$port" && { say "port $port (for $name) is taken by another process; stop it or choose other ports (OPS_SWIFT_PORT, OPS_SWIFT_STORAGE_PORT_BASE)"; exit 1; }
    # setsid: its own process group, so stop can end the server and its workers together.
    setsid "/usr/bin/swift-$name-server" "$ETC/$name-server.conf" >>"$LOG/$name.log" 2>&1 </dev/null &
    echo $! >"$RUN/$name.pid"
  done
  for _ in $(seq 1 150); do
    local all=1
    for name in "${SERVERS[@]}"; do healthy "$name" || all=0; done
    if [ $all -eq 1 ] && s3_answers; then
      say "running: S3 on http://127.0.0.1:$PROXY_PORT, data in $DIR, logs in $LOG"
      return 0
    fi
    for name in "${SERVERS[@]}"; do
      alive "$name" || { say "$name-server exited; its log ($LOG/$name.log) ends with:"; tail -n 20 "$LOG/$name.log" >&2; exit 1; }
    done
    sleep 0.2
  done
  say "Swift did not answer within 30 s; logs in $LOG"
  exit 1
}

# Signals every process first, then waits for them together (each takes ~2 s to shut down).
signal_all() {
  local sig=$1 name pid
  for name in proxy object container account memcached; do
    alive "$name" || continue
    pid=$(cat "$RUN/$name.pid")
    # A server's process group (setsid in start) holds its workers too; memcached is one process.
    if [ "$name" = memcached ]; then kill "-$sig" "$pid" 2>/dev/null || true; else kill "-$sig" -- "-$pid" 2>/dev/null || kill "-$sig" "$pid" 2>/dev/null || true; fi
  done
}

any_alive() {
  local name
  for name in proxy object container account memcached; do alive "$name" && return 0; done
  return 1
}

cmd_stop() {
  signal_all TERM
  for _ in $(seq 1 100); do any_alive || break; sleep 0.1; done
  if any_alive; then
    signal_all KILL
    sleep 0.2
  fi
  rm -f "$RUN"/*.pid
  say "stopped"
}

cmd_env() {
  cat <<EOF
export AWS_ACCESS_KEY_ID='test:tester'
export AWS_SECRET_ACCESS_KEY='testing'
export AWS_REGION='us-east-1'
export OPS_TEST_BLOB_URL='s3://$BUCKET?endpoint=http://127.0.0.1:$PROXY_PORT&region=us-east-1&path_style=true'
EOF
}

# The operations the S3 blob store uses, through the same SDK, on a bucket of its own.
cmd_check() {
  cd "$(dirname "$0")/.."
  eval "$(cmd_env)"
  SWIFT_BUCKET="$BUCKET" SWIFT_ENDPOINT="http://127.0.0.1:$PROXY_PORT" AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true node --input-type=module <<'EOF'
import assert from 'node:assert/strict';
import {
  S3Client, CreateBucketCommand, PutObjectCommand, GetObjectCommand, DeleteObjectCommand, DeleteBucketCommand,
  CreateMultipartUploadCommand, UploadPartCommand, CompleteMultipartUploadCommand, ListMultipartUploadsCommand,
  AbortMultipartUploadCommand, HeadObjectCommand,
} from '@aws-sdk/client-s3';
const s3 = new S3Client({
  endpoint: process.env.SWIFT_ENDPOINT, region: 'us-east-1', forcePathStyle: true,
  requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
});
const Bucket = `check-${Date.now()}`;
await s3.send(new CreateBucketCommand({ Bucket }));
await s3.send(new PutObjectCommand({ Bucket, Key: 'a/b.txt', Body: 'hello, swift' }));
const ranged = await s3.send(new GetObjectCommand({ Bucket, Key: 'a/b.txt', Range: 'bytes=7-11' }));
assert.equal(await ranged.Body.transformToString(), 'swift');
assert.equal(ranged.ContentRange, 'bytes 7-11/12');
const part = Buffer.alloc(5 * 1024 * 1024, 1);
const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'big' }));
const p1 = await s3.send(new UploadPartCommand({ Bucket, Key: 'big', UploadId, PartNumber: 1, Body: part }));
const p2 = await s3.send(new UploadPartCommand({ Bucket, Key: 'big', UploadId, PartNumber: 2, Body: Buffer.from('tail') }));
await s3.send(new CompleteMultipartUploadCommand({ Bucket, Key: 'big', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: p1.ETag }, { PartNumber: 2, ETag: p2.ETag }] } }));
assert.equal((await s3.send(new HeadObjectCommand({ Bucket, Key: 'big' }))).ContentLength, part.length + 4);
const pending = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'pending' }));
await s3.send(new UploadPartCommand({ Bucket, Key: 'pending', UploadId: pending.UploadId, PartNumber: 1, Body: part }));
const listed = await s3.send(new ListMultipartUploadsCommand({ Bucket }));
assert.deepEqual(listed.Uploads?.map((u) => u.Key), ['pending']);
assert.ok(listed.Uploads[0].Initiated instanceof Date);
await s3.send(new AbortMultipartUploadCommand({ Bucket, Key: 'pending', UploadId: pending.UploadId }));
assert.equal((await s3.send(new ListMultipartUploadsCommand({ Bucket }))).Uploads?.length ?? 0, 0);
for (const Key of ['a/b.txt', 'big']) await s3.send(new DeleteObjectCommand({ Bucket, Key }));
await s3.send(new DeleteBucketCommand({ Bucket }));
// The bucket `env` names, for the tests and for a server run by hand.
await s3.send(new CreateBucketCommand({ Bucket: process.env.SWIFT_BUCKET })).catch((error) => {
  if (error.name !== 'BucketAlreadyOwnedByYou' && error.name !== 'BucketAlreadyExists') throw error;
});
console.log(`swift-s3: check passed: bucket, put, ranged get, multipart upload, list and abort of multipart uploads; bucket ${process.env.SWIFT_BUCKET} is there`);
EOF
}

case "${1:-}" in
  install) cmd_install ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) cmd_env ;;
  check) cmd_check ;;
  *)
    echo "usage: $0 install|start|stop|status|env|check" >&2
    exit 2
    ;;
esac
