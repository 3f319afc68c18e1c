#!/usr/bin/env bash
# Runs a command under another Node.js release than the machine's, fetched from the npm registry.
#
#   scripts/with-node.sh 24 node --version
#   scripts/with-node.sh 24 npm ci        # in a checkout of its own: native addons are built for that Node
#   scripts/with-node.sh 24 npm test
#   scripts/with-node.sh 22.23.3 npm test  # an exact version; 22 and 24 are pinned below
#
# The registry's node-<os>-<arch> packages hold the official binary and its C++ headers
# (include/node). The first call unpacks the package into
# ${OPS_NODE_CACHE:-~/.cache/opsplatform}/node-<version>; later calls reuse it. The command runs
# with that bin/ first on PATH (so `npm` runs on it too) and npm_config_nodedir set to headers,
# so node-gyp builds better-sqlite3 against them instead of downloading headers (no network for
# that here). better-sqlite3 is always built from source under this script (no prebuilt binary is
# downloaded): the headers decide whether it works, see below.
#
# Node 24.19.0 and later put environment cleanup hooks into node::ObjectWrap (a header-only
# class); better-sqlite3 12.x compiled against those headers aborts the process when a Statement
# is garbage-collected ("Assertion failed: (env) != nullptr" in RemoveEnvironmentCleanupHook),
# whatever 24.x runs it (nodejs/node#65446). The same addon built against 24.18.1's headers runs
# on every 24.x, so for 24.19+ the headers come from node 24.18.1 (only its include/ is kept).
# OPS_NODE_HEADERS=<version> chooses other headers. better-sqlite3 13 avoids the problem but does
# not load on Node 20.
set -euo pipefail

usage() { echo "usage: $0 <22|24|x.y.z> [command [arg...]]  (no command: print the bin directory)" >&2; exit 2; }
[ $# -ge 1 ] || usage
case "$1" in
  22) version=22.23.3 ;;
  24) version=24.21.0 ;;
  [0-9]*.[0-9]*.[0-9]*) version=$1 ;;
  *) usage ;;
esac
shift

case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; *) echo "with-node: no node-<os> package for $(uname -s)" >&2; exit 1 ;; esac
case "$(uname -m)" in x86_64|amd64) arch=x64 ;; aarch64|arm64) arch=arm64 ;; *) echo "with-node: no package for $(uname -m)" >&2; exit 1 ;; esac
cache="${OPS_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/opsplatform}"

# unpacked VERSION DIR [headers-only]: DIR holds that release (or its headers).
unpacked() {
  [ -f "$2/include/node/node.h" ] && { [ -n "${3:-}" ] || [ "$("$2/bin/node" --version 2>/dev/null)" = "v$1" ]; }
}

# fetch VERSION DIR [headers-only]: unpack node-<os>-<arch>@VERSION into DIR unless it is there.
fetch() {
  local v=$1 dir=$2 headers_only=${3:-} tmp file
  unpacked "$v" "$dir" "$headers_only" && return 0
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
  echo "with-node: fetching node-$os-$arch@$v from the npm registry into $dir" >&2
  if ! file=$(cd "$tmp" && npm pack --pack-destination "$tmp" "node-$os-$arch@$v" 2>"$tmp/npm.err" | tail -n 1) \
    || [ ! -f "$tmp/$file" ]; then
    cat "$tmp/npm.err" >&2
    rm -rf "$tmp"
    echo "with-node: FAILED to fetch node-$os-$arch@$v from the npm registry" >&2
    return 1
  fi
  tar -xzf "$tmp/$file" -C "$tmp"
  rm -f "$tmp/$file" "$tmp/npm.err"
  if [ -n "$headers_only" ]; then rm -rf "$tmp/package/bin" "$tmp/package/share"; fi
  # Another run may have unpacked the same version meanwhile: keep whichever got there first.
  if ! unpacked "$v" "$dir" "$headers_only"; then
    rm -rf "$dir"
    mv -T "$tmp/package" "$dir" 2>/dev/null || true
  fi
  rm -rf "$tmp"
  unpacked "$v" "$dir" "$headers_only" || { echo "with-node: $dir does not hold node $v" >&2; return 1; }
}

home="$cache/node-$version"
fetch "$version" "$home"

headers=${OPS_NODE_HEADERS:-}
if [ -z "$headers" ]; then
  IFS=. read -r major minor _ <<<"$version"
  if [ "$major" = 24 ] && [ "$minor" -ge 19 ]; then headers=24.18.1; else headers=$version; fi
fi
if [ "$headers" = "$version" ]; then
  nodedir=$home
else
  nodedir="$cache/node-headers-$headers"
  fetch "$headers" "$nodedir" headers-only
fi

if [ $# -eq 0 ]; then echo "$home/bin"; exit 0; fi
export PATH="$home/bin:$PATH"
export npm_config_nodedir="$nodedir"
export npm_config_build_from_source=true
exec "$@"
