#!/bin/sh
# Installs the n8n that test/n8n starts (this folder's lock) once per machine: into a cache outside
# the clone, keyed by the lock's hash, which node_modules here then links to. A fresh clone on a
# machine that installed the same lock before only links it.
# n8n's SQLite driver (sqlite3) is built from source, since its prebuilt binaries are downloaded
# from outside the npm registry: node-gyp gets the C headers of the Node running npm (every Node
# release ships them beside its binary) instead of downloading them. The driver uses Node-API, so the
# build loads in the Node 24 that runs n8n too.
set -eu
cd "$(dirname "$0")"
lock_hash=$(sha256sum package-lock.json | cut -c1-16)
cache_root=${CONTACT_HOOKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/contact-hooks}
cached="$cache_root/n8n-runtime-$lock_hash"

if [ ! -f "$cached/node_modules/.package-lock.json" ]; then
  # Built beside its final place and moved there whole, so an interrupted install is never used.
  mkdir -p "$cache_root"
  building=$(mktemp -d "$cache_root/n8n-runtime-building.XXXXXX")
  cp package.json package-lock.json "$building/"
  nodedir=${npm_config_nodedir:-$(node -p 'require("path").resolve(process.execPath, "../..")')}
  (cd "$building" && npm ci --no-audit --no-fund --loglevel=error --nodedir="$nodedir")
  rm -rf "$cached"
  mv "$building" "$cached"
fi

if [ "$(readlink node_modules 2>/dev/null)" != "$cached/node_modules" ]; then
  rm -rf node_modules
  ln -s "$cached/node_modules" node_modules
fi
