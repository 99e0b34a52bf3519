#!/usr/bin/env bash
# A real S3 server for the tests, CI and the benchmark: Debian's OpenStack Swift (2.30) with its
# s3api middleware, one node, one replica, listening on 127.0.0.1 only. No container, nothing
# downloaded but Debian packages. See docs/decisions/s3-test-server-swift.md.
#
#   swift-s3-server.sh start    install the packages when missing (root), configure, start (idempotent)
#   swift-s3-server.sh start USER PID   the same, and register USER (a test run, alive while PID is)
#   swift-s3-server.sh release USER     unregister USER; the last registered user to leave stops a
#                                       server that a registered user's start launched
#   swift-s3-server.sh stop     stop what `start` started (pid files in $S3_SERVER_DIR/run)
#   swift-s3-server.sh status   exit 0 when the endpoint answers
#   swift-s3-server.sh reset    stop and delete every stored object and the configuration
#   swift-s3-server.sh ingest BUCKET KEY_PREFIX DIR [BELOW_BYTES]
#                               store each file under DIR (smaller than BELOW_BYTES, when given)
#                               as the object KEY_PREFIX + its path in the existing BUCKET, written
#                               on disk by Swift's own code, not through the proxy (see ingest())
#
# Endpoint http://127.0.0.1:$S3_SERVER_PORT, path-style, region us-east-1, access key id
# `test:tester`, secret `testing` (tempauth; a throwaway credential of a loopback-only server).
#
# What Swift 2.30's s3api does differently from AWS, and how the client copes (the provisioner's
# S3 backend does all of it): streamed aws-chunked bodies answer 501 (the SDK must compute
# checksums only WHEN_REQUIRED); DeleteObjects wants Content-MD5; conditional PUTs
# (If-None-Match: *) answer 501; x-amz-checksum-* headers are ignored, Content-MD5 is verified.
set -euo pipefail

DIR=${S3_SERVER_DIR:-/tmp/rds-swift-s3}
PORT=${S3_SERVER_PORT:-9380}
# The three Swift back ends and memcached take the next four ports.
ACCOUNT_PORT=$((PORT + 1)) CONTAINER_PORT=$((PORT + 2)) OBJECT_PORT=$((PORT + 3)) MEMCACHED_PORT=$((PORT + 4))
ETC=$DIR/etc RUN=$DIR/run LOG=$DIR/log DEVICES=$DIR/devices
ME=$(id -un)
# Debian's interpreter: a python3 from a venv or pyenv on PATH would not find python3-swift.
PYTHON=/usr/bin/python3
PACKAGES="swift swift-proxy swift-account swift-container swift-object python3-swift memcached curl"

say() { echo "[swift-s3] $*" >&2; }
answers() { curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$1/healthcheck" 2>/dev/null; }
# Running, not a zombie: a server killed after the script that launched it exited may stay a
# zombie for as long as the process it was reparented to does not reap it.
running() { kill -0 "$1" 2>/dev/null && ! grep -qs '^State:[[:space:]]*Z' "/proc/$1/status"; }
alive() { [ -f "$RUN/$1.pid" ] && running "$(cat "$RUN/$1.pid")"; }
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

install_missing() {
  local missing="" p
  for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then say "missing Debian packages:$missing (install them as root)"; exit 1; fi
  say "installing$missing"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  # Where systemd runs, the packages start their own Swift from /etc/swift on our kind of ports.
  if [ -d /run/systemd/system ]; then
    for p in swift-proxy swift-account swift-container swift-object; do systemctl disable --now "$p" >/dev/null 2>&1 || true; done
  fi
}

configure() {
  mkdir -p "$ETC" "$RUN" "$LOG" "$DEVICES/d0"
  # Swift reads the hash salt and the limits from this fixed path only. The metadata limits are
  # raised to S3's (2 KiB per value): Swift's 256-byte cap turns a longer x-amz-meta-* into a 500.
  local conf
  conf=$(printf '%s\n' '# local S3 test server (scripts/s3/swift-s3-server.sh)' \
    '[swift-hash]' 'swift_hash_path_prefix = rds-test' 'swift_hash_path_suffix = rds-test' \
    '[storage-policy:0]' 'name = Policy-0' 'default = yes' \
    '[swift-constraints]' 'max_meta_value_length = 2048' 'max_meta_overall_size = 4096')
  if [ "$(cat /etc/swift/swift.conf 2>/dev/null)" != "$conf" ]; then
    mkdir -p /etc/swift && printf '%s\n' "$conf" > /etc/swift/swift.conf
  fi
  local kind port
  for kind in account container object; do
    case $kind in account) port=$ACCOUNT_PORT ;; container) port=$CONTAINER_PORT ;; *) port=$OBJECT_PORT ;; esac
    # workers = 0: one process per server; a directory as the disk (no mount check, no fallocate).
    cat > "$ETC/$kind-server.conf" <<CONF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = $port
workers = 0
user = $ME
swift_dir = $ETC
devices = $DEVICES
mount_check = false
disable_fallocate = true
log_level = WARNING
[pipeline:main]
pipeline = healthcheck $kind-server
[app:$kind-server]
use = egg:swift#$kind
[filter:healthcheck]
use = egg:swift#healthcheck
CONF
  done
  # s3api before tempauth (it turns S3 requests into Swift ones first); slo stores multipart
  # uploads; copy, dlo, versioned_writes and symlink are middlewares s3api expects.
  cat > "$ETC/proxy-server.conf" <<CONF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = $PORT
workers = 0
user = $ME
swift_dir = $ETC
log_level = WARNING
[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats s3api tempauth copy slo dlo versioned_writes symlink proxy-logging proxy-server
[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
[filter:s3api]
use = egg:swift#s3api
location = us-east-1
# S3's limits: 10,000 parts, 5 MiB minimum part (but the last)
max_upload_part_num = 10000
min_segment_size = 5242880
[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = testing .admin
[filter:slo]
use = egg:swift#slo
max_manifest_segments = 10000
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
[filter:dlo]
use = egg:swift#dlo
[filter:versioned_writes]
use = egg:swift#versioned_writes
[filter:symlink]
use = egg:swift#symlink
CONF
  # One ring per kind: one device, one replica, 2^6 partitions; built in one Python start.
  [ -f "$ETC/object.ring.gz" ] && [ "$(cat "$ETC/ring-ports" 2>/dev/null)" = "$PORT" ] && return 0
  rm -f "$ETC"/*.ring.gz "$ETC"/*.builder
  "$PYTHON" - "$ETC" "$ACCOUNT_PORT" "$CONTAINER_PORT" "$OBJECT_PORT" <<'PY'
import os, sys
from swift.common.ring import RingBuilder
for kind, port in zip(('account', 'container', 'object'), sys.argv[2:5]):
    builder = RingBuilder(6, 1, 1)
    builder.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': int(port),
                     'replication_ip': '127.0.0.1', 'replication_port': int(port),
                     'device': 'd0', 'weight': 1.0, 'meta': ''})
    builder.rebalance()
    builder.get_ring().save(os.path.join(sys.argv[1], kind + '.ring.gz'))
PY
  echo "$PORT" > "$ETC/ring-ports"
}

launch() { # name port command...
  local name=$1 port=$2; shift 2
  alive "$name" && return 0
  LAUNCHED=1
  if port_taken "$port"; then say "port $port (for $name) is in use: set S3_SERVER_PORT"; exit 1; fi
  # 9>&-: the servers must not inherit the start lock, or the next `start` (a restart of a
  # stopped part) would wait for it forever.
  setsid nohup "$@" >> "$LOG/$name.log" 2>&1 < /dev/null 9>&- &
  echo $! > "$RUN/$name.pid"
}

lock() { mkdir -p "$DIR" "$RUN/users" && exec 9> "$DIR/start.lock" && flock 9; }

# Test runs share one server (CI beside a developer's run, the deployment test beside the
# suites): each registers while it uses it, and only the last to leave stops it, so one run's
# teardown never stops the server under another (a run that found it slow to answer under load
# used to "start" it and then stop it at its end).
register() { # user pid
  [ -n "${1:-}" ] || return 0
  echo "${2:-$$}" > "$RUN/users/$1"
  if [ "${LAUNCHED:-0}" = 1 ]; then touch "$RUN/owned"; fi
}

release() { # user
  lock
  rm -f "$RUN/users/${1:?usage: release USER}"
  local f
  for f in "$RUN"/users/*; do
    [ -e "$f" ] || continue
    if running "$(cat "$f")"; then return 0; fi
    rm -f "$f"
  done
  if [ -f "$RUN/owned" ]; then rm -f "$RUN/owned"; stop; fi
}

start() { # [user pid]
  # Two test processes may start it at once: one does, the other waits and finds it running.
  lock
  if answers "$PORT" && alive proxy; then register "$@"; return 0; fi
  install_missing
  configure
  local as_memcache=""; [ "$(id -u)" -eq 0 ] && as_memcache="-u memcache"
  launch memcached "$MEMCACHED_PORT" memcached $as_memcache -l 127.0.0.1 -p "$MEMCACHED_PORT" -U 0 -m 32
  launch account "$ACCOUNT_PORT" "$PYTHON" /usr/bin/swift-account-server "$ETC/account-server.conf" -v
  launch container "$CONTAINER_PORT" "$PYTHON" /usr/bin/swift-container-server "$ETC/container-server.conf" -v
  launch object "$OBJECT_PORT" "$PYTHON" /usr/bin/swift-object-server "$ETC/object-server.conf" -v
  launch proxy "$PORT" "$PYTHON" /usr/bin/swift-proxy-server "$ETC/proxy-server.conf" -v
  local deadline=$((SECONDS + 60)) p ok
  while [ $SECONDS -lt $deadline ]; do
    ok=1
    for p in "$PORT" "$ACCOUNT_PORT" "$CONTAINER_PORT" "$OBJECT_PORT"; do answers "$p" || { ok=0; break; }; done
    if [ $ok = 1 ]; then register "$@"; say "ready: http://127.0.0.1:$PORT"; return 0; fi
    sleep 0.2
  done
  say "Swift did not answer within 60 s:"; tail -n 20 "$LOG"/*.log >&2; exit 1
}

# Tests and the bench set up thousands of small objects (the S3 inbox's 10,000). Through the
# proxy, each is a request to it, one to the object server and a container update: about 5 ms of
# Python CPU per object (10,000 took a minute on 2 cores; the bulk middleware's extract-archive
# measured no cheaper, as it makes the same requests inside the proxy; Swift has no setting to
# skip the object server's fsync). `ingest` writes them as the object server would, with Swift's
# DiskFile (data file and metadata, but no fsync) and ContainerBroker (the listing's rows, in one
# transaction): ordinary objects, listed and read through s3api as any other, at about a fifth of
# the CPU. For test data only: it bypasses the proxy (no auth, no quota, no middleware) of this
# one-node, one-replica server, and works on a running one (no restart, no configuration change).
# See docs/decisions/s3-test-upload-ingest.md.
ingest() { # bucket key_prefix dir [below_bytes]
  local bucket=${1:?usage: ingest BUCKET KEY_PREFIX DIR [BELOW_BYTES]} prefix=${2-} dir=${3:?usage: ingest BUCKET KEY_PREFIX DIR [BELOW_BYTES]}
  [ -f "$ETC/object.ring.gz" ] || { say "no server configured in $DIR"; exit 1; }
  "$PYTHON" - "$ETC" "$DEVICES" "$bucket" "$prefix" "$dir" "${4:-}" <<'PY'
import hashlib, os, sys
from swift.common.ring import Ring
from swift.common.storage_policy import POLICIES
from swift.common.utils import Timestamp, get_logger, hash_path, storage_directory
from swift.container.backend import DATADIR, ContainerBroker
from swift.obj import diskfile
from swift.obj.diskfile import DiskFileRouter

etc, devices, bucket, prefix, root, below = sys.argv[1:7]
below = int(below) if below else None
# s3api's account for the access key test:tester (tempauth's reseller prefix AUTH_).
account, device, content_type = 'AUTH_test', 'd0', 'application/octet-stream'
conf = {'devices': devices, 'mount_check': 'false', 'disable_fallocate': 'true', 'swift_dir': etc}
# No fsync: throwaway test data, read back from the page cache; a crash of the machine loses the
# test run anyway. Each object's two fsyncs were most of the time (Swift has no setting for it).
diskfile.fsync = diskfile.fdatasync = diskfile.fsync_dir = lambda *_: None
policy = POLICIES.default
disk_files = DiskFileRouter(conf, get_logger(conf, log_route='ingest'))[policy]
object_ring = Ring(etc, ring_name='object')
part, _ = Ring(etc, ring_name='container').get_nodes(account, bucket)
db_hash = hash_path(account, bucket)
broker = ContainerBroker(
    os.path.join(devices, device, storage_directory(DATADIR, part, db_hash), db_hash + '.db'),
    account=account, container=bucket)
if not os.path.exists(broker.db_file):
    sys.exit('[swift-s3] ingest: no bucket %s' % bucket)
if not os.path.isdir(root):
    sys.exit('[swift-s3] ingest: no directory %s' % root)
files = []
for top, dirs, names in os.walk(root):
    dirs.sort()
    for name in sorted(names):
        path = os.path.join(top, name)
        if below is None or os.path.getsize(path) < below:
            files.append(path)

def store(path):
    # What the object server does for a PUT (obj/server.py): the data file, then its metadata.
    key = prefix + os.path.relpath(path, root).replace(os.sep, '/')
    timestamp = Timestamp.now()
    md5, size = hashlib.md5(), os.path.getsize(path)
    obj_part, _ = object_ring.get_nodes(account, bucket, key)
    disk_file = disk_files.get_diskfile(device, str(obj_part), account, bucket, key, policy=policy)
    with open(path, 'rb') as f, disk_file.create(size=size) as writer:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            writer.write(chunk)
            md5.update(chunk)
        etag = md5.hexdigest()
        writer.put({'X-Timestamp': timestamp.internal, 'Content-Type': content_type,
                    'Content-Length': str(size), 'ETag': etag})
        writer.commit(timestamp)
    return {'name': key, 'created_at': timestamp.internal, 'size': size,
            'content_type': content_type, 'etag': etag, 'deleted': 0,
            'storage_policy_index': int(policy)}

rows = [store(path) for path in files]
# The container server's update of the listing, for all the objects at once.
broker.merge_items(rows)
PY
}

stop() {
  local name pid
  for name in proxy object container account memcached; do
    if alive "$name"; then
      pid=$(cat "$RUN/$name.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 40); do running "$pid" || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$RUN/$name.pid"
  done
}

case "${1:-start}" in
  start) shift; start "$@" ;;
  release) shift; release "$@" ;;
  stop) stop ;;
  status) answers "$PORT" ;;
  reset) stop; rm -rf "$DIR" ;;
  ingest) shift; ingest "$@" ;;
  *) echo "usage: $0 start|stop|status|reset|ingest" >&2; exit 2 ;;
esac
