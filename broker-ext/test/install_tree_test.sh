#!/bin/sh
# The installed tree runs wherever it is copied (docs/brokerd.md, "Installing"): installs the
# build into a fresh prefix, moves the tree elsewhere, and checks, with an empty environment, that
# every program loads its libraries from the tree or from the system, never from the checkout or
# the build, that the daemon starts, and that runtime-packages.txt names the Debian package of
# every system library the programs load.
# Usage: install_tree_test.sh BUILD_DIR REPO_ROOT
set -eu
build=$1
repo=$2
# Outside the checkout, where an image would put it.
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-install-tree.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

cmake --install "$build" --prefix "$work/installed" >"$work/install.log" 2>&1 ||
  fail "cmake --install: $(cat "$work/install.log")"
mv "$work/installed" "$work/moved"
tree=$work/moved

for file in bin/sluice-brokerd bin/sluice-kafka-tool lib/libsluice.so share/sluice/runtime-packages.txt; do
  [ -f "$tree/$file" ] || fail "$file is missing from the tree"
done
ls "$tree"/lib/libarrow.so.[0-9]* >/dev/null 2>&1 || fail "no libarrow.so.N in lib/"

# No RUNPATH names an absolute folder: they all start at $ORIGIN.
for elf in "$tree"/bin/* "$tree"/lib/*.so*; do
  runpath=$(readelf -d "$elf" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')
  case "$runpath" in
    '$ORIGIN'*) ;;
    *) fail "$elf: RUNPATH '$runpath' does not start at \$ORIGIN" ;;
  esac
  case "$runpath" in
    *"$repo"* | *"$build"*) fail "$elf: RUNPATH '$runpath' names the checkout" ;;
  esac
done

system_libraries=$work/system-libraries
: >"$system_libraries"
for program in "$tree"/bin/*; do
  env -i /usr/bin/ldd "$program" >"$work/ldd.out" 2>&1 || fail "ldd $program: $(cat "$work/ldd.out")"
  if grep -q 'not found' "$work/ldd.out"; then fail "$program: $(grep 'not found' "$work/ldd.out")"; fi
  if grep -q -e "$repo" -e "$build" "$work/ldd.out"; then
    fail "$program loads from the checkout: $(grep -e "$repo" -e "$build" "$work/ldd.out")"
  fi
  for own in libsluice.so libarrow.so; do
    grep "$own" "$work/ldd.out" | grep -q "=> $tree/bin/../lib/" ||
      fail "$program does not load $own from the tree: $(cat "$work/ldd.out")"
  done
  # "libz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x...)", and the loader's own line.
  sed -n 's/.*=> \(\/[^ ]*\) (0x.*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p' "$work/ldd.out" |
    grep -v "^$tree/" >>"$system_libraries" || true
done
[ -s "$system_libraries" ] || fail "ldd reported no system library: the check cannot work"

# The daemon gets as far as main() with nothing from the environment.
env -i "$tree/bin/sluice-brokerd" --help >"$work/help.out" 2>&1 ||
  fail "sluice-brokerd --help from the tree: $(cat "$work/help.out")"
grep -q -- '--bootstrap-servers' "$work/help.out" || fail "no usage text: $(cat "$work/help.out")"

# Every system library belongs to a listed package; dpkg knows a library by one of its paths
# under the merged /usr.
packages=$tree/share/sluice/runtime-packages.txt
sort -u "$system_libraries" | while read -r library; do
  owner=""
  real=$(readlink -f "$library")
  for candidate in "$library" "$real" "/usr$library" "/usr$real" "${library#/usr}" "${real#/usr}"; do
    owner=$(dpkg-query -S "$candidate" 2>/dev/null | sed -n '1s/^\([^:, ]*\).*/\1/p') || true
    [ -n "$owner" ] && break
  done
  [ -n "$owner" ] || fail "no Debian package owns $library"
  grep -qx "$owner" "$packages" || fail "$library belongs to $owner, which $packages does not list"
done
echo "ok: $(tr '\n' ' ' <"$packages")"
