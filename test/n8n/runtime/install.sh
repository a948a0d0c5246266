#!/bin/sh
# Installs the n8n that test/n8n starts (this folder's lock), unless node_modules is newer than the lock.
# n8n's SQLite driver (sqlite3) is built from source here, since its prebuilt binaries are downloaded
# from outside the npm registry: node-gyp gets the C headers of the Node running npm (every Node
# release ships them beside its binary) instead of downloading them. The driver uses Node-API, so the
# build loads in the Node 24 that runs n8n too.
set -eu
cd "$(dirname "$0")"
[ node_modules/.package-lock.json -nt package-lock.json ] && exit 0
nodedir=${npm_config_nodedir:-$(node -p 'require("path").resolve(process.execPath, "../..")')}
exec npm ci --no-audit --no-fund --loglevel=error --nodedir="$nodedir"
