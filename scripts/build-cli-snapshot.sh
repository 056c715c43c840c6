#!/bin/sh
# After `vite build --config vite.cli.config.ts`: makes the CLI's V8 start-up snapshot for this Node, with
# the launcher's Node flags (bin/stitch runs it only with the same Node and flags). Without one the CLI
# still works, from its bundle, only slower to start.
root=$(dirname "$(readlink -f "$0")")/..
cli="$root/dist/cli"
read -r flags < "$root/bin/node-flags"
. "$root/bin/snapshot-name"
version=$(node --version)
# $flags unquoted: one word per flag.
snapshot_name "$version" $flags
snapshot="$cli/$snapshot_name"
rm -f "$cli"/stitch-*.blob
if ! node $flags --snapshot-blob "$snapshot" --build-snapshot "$cli/stitch.cjs"; then
  rm -f "$snapshot"
  echo "stitch: could not make the CLI's start-up snapshot with Node $version; it will start from its bundle" >&2
fi
