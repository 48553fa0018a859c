#!/usr/bin/env bash
# Follows docs/quickstart.md as a new user would, outside the repository's build: the page's
# ```sh blocks run in order, each in a new login shell of the user alice (who has sudo), in a
# container of the cluster's base image: Debian bookworm with Java 17 and no part of Sluice (its
# user sluice aside, which the daemon's package then keeps). The
# packages of packaging/target are in her home, as the page's "What you need" asks, and a plain
# Kafka broker, from Kafka's jars, runs in a second container on the first's loopback. Passes when
# the last block prints "read whole and in order"; prints each block's time and their sum, the
# time to a first success (Debian's and PyPI's downloads included). The daemon's systemd unit is
# checked apart, by systemd-analyze on this machine.
# Usage: quickstart-test.sh (after the Maven build, and docker/base-image.sh for the image)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
page="$root/docs/quickstart.md"
image=sluice-runtime:dev
kafka_jars="$root/docker/kafka-dist/target/lib"
name="sluice-quickstart-$$"
work="$(mktemp -d "${TMPDIR:-/tmp}/sluice-quickstart.XXXXXX")"

fail() {
  echo "quickstart-test: FAIL: $*" >&2
  for log in "$work"/block-*.log; do
    [ -f "$log" ] && { echo "--- $log" >&2; tail -n 40 "$log" >&2; }
  done
  echo "--- the daemon's log" >&2
  docker exec "$name" cat /home/alice/brokerd.log >&2 2>/dev/null || true
  echo "--- the broker's log" >&2
  docker logs --tail 20 "$name-kafka" >&2 2>/dev/null || true
  exit 1
}
cleanup() {
  docker rm -f "$name-kafka" "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

docker image inspect "$image" >/dev/null 2>&1 || fail "no image $image: run docker/base-image.sh"
packages=("$root"/packaging/target/sluice-brokerd_*.deb "$root"/packaging/target/sluice-cli_*.deb
  "$root"/packaging/target/sluice-*.whl)
for package in "${packages[@]}"; do
  [ -f "$package" ] || fail "$package is missing: build packaging/ first (./sluice build)"
done
ls "$kafka_jars"/kafka_2.13-*.jar >/dev/null 2>&1 || fail "no Kafka jars in $kafka_jars"

# The unit, which the container cannot run (no systemd there): systemd's own check, on the
# package's file with ExecStart pointing into the extracted package, says nothing.
dpkg-deb -x "${packages[0]}" "$work/brokerd-deb"
unit="$work/brokerd-deb/lib/systemd/system/sluice-brokerd.service"
exec_start="$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit")"
[ -x "$work/brokerd-deb$exec_start" ] || fail "the unit's ExecStart $exec_start is not in the package"
sed -i "s|^ExecStart=$exec_start|ExecStart=$work/brokerd-deb$exec_start|" "$unit"
verified="$(systemd-analyze verify "$unit" 2>&1)" || fail "systemd-analyze verify: $verified"
[ -z "$verified" ] || fail "systemd-analyze verify: $verified"

# The page's blocks, one file each.
awk -v dir="$work" '
  /^```sh$/ { n++; file = sprintf("%s/block-%02d.sh", dir, n); inside = 1; next }
  /^```$/ && inside { inside = 0; close(file); next }
  inside { print > file }' "$page"
blocks=("$work"/block-*.sh)
[ -f "${blocks[0]}" ] || fail "$page has no sh block"

# The host: 256 MiB of /dev/shm for the daemon's segments (Docker's default is 64).
docker run -d --name "$name" --shm-size 256m --entrypoint sleep "$image" infinity >/dev/null
docker exec "$name" sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends sudo >/dev/null' || fail "installing sudo"
docker exec "$name" sh -c 'useradd --create-home --shell /bin/bash alice &&
  echo "alice ALL=(ALL) NOPASSWD:ALL" >/etc/sudoers.d/alice'
# The container trusts what this machine trusts, for pip as for the machine's own: its CA bundle
# and pip's configuration, where there are (a TLS proxy in front of PyPI has its own CA).
for file in /etc/ssl/certs/ca-certificates.crt /etc/pip.conf; do
  [ -f "$file" ] || continue
  docker exec "$name" mkdir -p "$(dirname "$file")"
  docker cp "$file" "$name:$file"
done
for package in "${packages[@]}"; do
  docker cp "$package" "$name:/home/alice/"
done
docker exec "$name" chown -R alice:alice /home/alice

# A single-node KRaft broker on the host's loopback, as Kafka's own quickstart starts one.
docker run -d --name "$name-kafka" --network "container:$name" \
  -v "$kafka_jars:/opt/kafka/libs:ro" --entrypoint bash "$image" -c '
  cat >/tmp/server.properties <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:9093
listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093
controller.listener.names=CONTROLLER
log.dirs=/tmp/kafka-logs
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
EOF
  cat >/tmp/log4j2.properties <<EOF
rootLogger.level = INFO
rootLogger.appenderRef.console.ref = console
appender.console.name = console
appender.console.type = CONSOLE
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss,SSS} %-5p %c{1} %m%n
EOF
  java=(java -Xmx512m -Dlog4j2.configurationFile=/tmp/log4j2.properties -cp "/opt/kafka/libs/*")
  "${java[@]}" kafka.tools.StorageTool format --cluster-id c2x1aWNlLXF1aWNrc3Rhcg \
    --config /tmp/server.properties >/dev/null
  exec "${java[@]}" kafka.Kafka /tmp/server.properties' >/dev/null
for ((i = 0; i < 120; i++)); do
  docker logs "$name-kafka" 2>&1 | grep -q 'Kafka Server started' && break
  docker inspect -f '{{.State.Running}}' "$name-kafka" | grep -q true || fail "the broker exited"
  sleep 0.5
done
docker logs "$name-kafka" 2>&1 | grep -q 'Kafka Server started' || fail "the broker did not start in 60 s"

total=0
for block in "${blocks[@]}"; do
  log="${block%.sh}.log"
  start=$SECONDS
  docker exec -u alice -e USER=alice -w /home/alice "$name" \
    bash -l -c "set -euo pipefail; $(cat "$block")" >"$log" 2>&1 ||
    fail "$(basename "$block") failed: $(head -n 3 "$block" | tr '\n' ';')"
  took=$((SECONDS - start))
  total=$((total + took))
  echo "quickstart-test: $(basename "$block") $(head -n 1 "$block" | cut -c1-60) ... ${took} s"
done
grep -qx 'read whole and in order' "$log" || fail "the last block did not print 'read whole and in order'"
echo "quickstart-test: ok, docs/quickstart.md followed in ${total} s"
