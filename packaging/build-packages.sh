#!/usr/bin/env bash
# Builds what a user installs outside the repository (docs/quickstart.md, "What is built"), from
# the outputs of the Maven build:
#   sluice-brokerd_VERSION_ARCH.deb  the daemon and sluice-kafka-tool, with the libraries of its
#                                    install tree (docs/brokerd.md, "Installing"), a systemd unit
#                                    and /etc/sluice/brokerd.conf
#   sluice-cli_VERSION_all.deb       the job and topics CLI (docs/generation.md, "The job CLI")
#   sluice-PYVERSION-py3-none-any.whl  the Python reader (python/README.md)
# A Maven version X-SNAPSHOT is X~SNAPSHOT for Debian and X.dev0 for Python: both sort it before X.
# Usage: build-packages.sh MAVEN_VERSION OUT_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
version="$1"
out="$2"
deb_version="${version/-SNAPSHOT/\~SNAPSHOT}"
python_version="${version/-SNAPSHOT/.dev0}"
stage="$(mktemp -d "${TMPDIR:-/tmp}/sluice-packages.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out"
rm -f "$out"/sluice-brokerd_*.deb "$out"/sluice-cli_*.deb "$out"/sluice-*.whl

# The daemon's install tree goes whole under /usr/lib/sluice, where its RUNPATHs ($ORIGIN/../lib)
# find the libarrow and libsluice it carries; the commands are links in /usr/bin.
brokerd="$stage/sluice-brokerd"
cmake --install "$root/broker-ext/target/cmake" --prefix "$brokerd/usr/lib/sluice" --strip >/dev/null
mkdir -p "$brokerd/usr/bin" "$brokerd/DEBIAN"
for command in sluice-brokerd sluice-kafka-tool; do
  ln -s "../lib/sluice/bin/$command" "$brokerd/usr/bin/$command"
done
install -D -m 0644 "$here/deb/sluice-brokerd.service" "$brokerd/lib/systemd/system/sluice-brokerd.service"
install -D -m 0644 "$here/deb/brokerd.conf" "$brokerd/etc/sluice/brokerd.conf"
install -D -m 0644 "$root/docs/brokerd.md" "$brokerd/usr/share/doc/sluice-brokerd/brokerd.md"
install -D -m 0644 "$root/LICENSE" "$brokerd/usr/share/doc/sluice-brokerd/copyright"
install -m 0755 "$here/deb/sluice-brokerd.postinst" "$brokerd/DEBIAN/postinst"
echo /etc/sluice/brokerd.conf >"$brokerd/DEBIAN/conffiles"
# The Debian packages of the system libraries the programs load, as the install found them.
depends="$(paste -sd, "$brokerd/usr/lib/sluice/share/sluice/runtime-packages.txt" | sed 's/,/, /g')"
cat >"$brokerd/DEBIAN/control" <<CONTROL
Package: sluice-brokerd
Version: $deb_version
Architecture: $(dpkg --print-architecture)
Maintainer: The Sluice developers
Installed-Size: $(du -sk --exclude=DEBIAN "$brokerd" | cut -f1)
Depends: $depends
Section: net
Priority: optional
Description: Sluice's daemon beside a Kafka broker
 sluice-brokerd fetches Kafka topics once per host, puts each stream's chunks
 in order and pushes records and chunks into shared memory as Arrow IPC record
 batches, where Sluice's readers take them without a copy.
CONTROL
dpkg-deb --root-owner-group -Zgzip -z6 --build "$brokerd" "$out/sluice-brokerd_${deb_version}_$(dpkg --print-architecture).deb" >/dev/null

# The CLI: its launcher finds the jar in ../lib from its own resolved path.
cli="$stage/sluice-cli"
install -D -m 0755 "$root/client/src/main/bin/sluice-cli" "$cli/usr/lib/sluice/bin/sluice-cli"
install -D -m 0644 "$root/client/target/sluice-client-$version-cli.jar" "$cli/usr/lib/sluice/lib/sluice-cli.jar"
mkdir -p "$cli/usr/bin" "$cli/DEBIAN"
ln -s ../lib/sluice/bin/sluice-cli "$cli/usr/bin/sluice-cli"
install -D -m 0644 "$root/LICENSE" "$cli/usr/share/doc/sluice-cli/copyright"
cat >"$cli/DEBIAN/control" <<CONTROL
Package: sluice-cli
Version: $deb_version
Architecture: all
Maintainer: The Sluice developers
Installed-Size: $(du -sk --exclude=DEBIAN "$cli" | cut -f1)
Depends: openjdk-17-jre-headless | java17-runtime-headless
Section: net
Priority: optional
Description: Sluice's command line: jobs, their statuses and topics
 sluice-cli submits a job spec to a Sluice cluster, follows or cancels it, and
 creates or checks the Kafka topics Sluice needs. Its jar holds the Java
 client without Arrow: StreamWriter runs from it, StreamReader does not.
CONTROL
dpkg-deb --root-owner-group -Zgzip -z6 --build "$cli" "$out/sluice-cli_${deb_version}_all.deb" >/dev/null

# The wheel, built from a copy that carries the version (pip fetches the build backend the
# pyproject names).
mkdir -p "$stage/python"
cp -r "$root/python/src" "$root/python/README.md" "$stage/python/"
sed "s/^version = \".*\"$/version = \"$python_version\"/" "$root/python/pyproject.toml" >"$stage/python/pyproject.toml"
grep -q "^version = \"$python_version\"$" "$stage/python/pyproject.toml" ||
  { echo "build-packages.sh: python/pyproject.toml has no version line to set" >&2; exit 1; }
"$root/.venv/bin/pip" wheel -q --disable-pip-version-check --no-deps \
  -w "$out" "$stage/python" >/dev/null
ls "$out"
