#!/usr/bin/env bash
# Provides the cluster image's base, debian:bookworm-slim: pulled where an image registry answers,
# else made from Debian's own packages with debootstrap (minbase, the packages a slim image has)
# and imported. The mirror is this machine's, read from its apt sources, so nothing here names a
# host. Either way the Dockerfile starts FROM the same tag. Then builds the Dockerfile's runtime
# stage on it (the JRE and the user every role runs as), which needs nothing of the project's
# build: ./sluice test runs this while the project compiles, and the image's build finds the
# stage in docker's cache.
set -euo pipefail

TAG=debian:bookworm-slim
SUITE=bookworm
DOCKERFILE="$(cd "$(dirname "$0")" && pwd)/Dockerfile"

runtime_stage() {
  local context
  context="$(mktemp -d)"
  docker build --quiet --target runtime --tag sluice-runtime:dev --file "$DOCKERFILE" "$context" >/dev/null
  rmdir "$context"
  echo "base-image: sluice-runtime:dev built (the Dockerfile's runtime stage)" >&2
}

if docker image inspect "$TAG" >/dev/null 2>&1 || docker pull "$TAG" >/dev/null 2>&1; then
  runtime_stage
  exit 0
fi

# The first mirror of the suite's main packages: deb822 files (URIs: / Suites:) or one-line entries.
mirror() {
  local file
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    awk -v suite="$SUITE" '
      /^URIs:/ { uris = $2 }
      /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) found = 1 }
      /^$/ { if (found && uris != "") { print uris; exit } found = 0; uris = "" }
      END { if (found && uris != "") print uris }' "$file"
  done
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    awk -v suite="$SUITE" '$1 == "deb" && $3 == suite { print $2 }' "$file"
  done
}

url="$(mirror | head -n1)"
[ -n "$url" ] || { echo "base-image: no apt source for $SUITE on this machine" >&2; exit 1; }
rootfs="$(mktemp -d)"
trap 'rm -rf "$rootfs"' EXIT
echo "base-image: $TAG cannot be pulled; making it with debootstrap from this machine's mirror" >&2
debootstrap --variant=minbase "$SUITE" "$rootfs" "$url" >/dev/null
# What slim images leave out: package lists and caches.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin
tar -C "$rootfs" -c . | docker import - "$TAG" >/dev/null
echo "base-image: $TAG imported" >&2
runtime_stage
