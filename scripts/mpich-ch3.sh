#!/usr/bin/env bash
# Builds MPICH with the ch3:nemesis device (its TCP netmod) from the Debian
# source package of the MPICH that is installed, into DIR, and prints DIR.
#
#   scripts/mpich-ch3.sh [DIR]      (default /var/tmp/netaware-mpich-ch3)
#
# Why: Debian 12's MPICH 4.0.2 is built with ch4:ucx only. Across the
# network namespaces of 'netaware emu', UCX's TCP transport hangs in
# MPI_Finalize in about half of the runs (some ranks close their endpoints
# and wait in a PMI barrier while others still flush endpoints towards
# them: docs/tuning.md, "A working MPICH"). The same MPICH release with
# ch3:nemesis has the same collective algorithms and the same selection
# file (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE, read at the MPIR level
# by both devices) and does not hang. scripts/tune-proof.sh uses it.
#
# The source comes from the machine's own Debian mirrors (a deb-src list
# made from /etc/apt's sources in a private apt state directory: the
# system's apt configuration is not changed). No process manager is built:
# Debian's mpiexec.hydra launches it (PMI-1). Nothing but the C library is
# built (no Fortran, C++ or ROMIO); with 2 busy cores this takes 20-40
# minutes at nice 19. A DIR that already has bin/mpicc is kept as it is.
# Needs root (apt-get), gcc, make, dpkg-dev, libhwloc-dev.
set -euo pipefail

DIR=${1:-/var/tmp/netaware-mpich-ch3}
if [ -x "$DIR/bin/mpicc" ]; then
	echo "$DIR"
	exit 0
fi
fail() { echo "mpich-ch3: $*" >&2; exit 1; }
ver=$(dpkg-query -W -f='${Version}' mpich 2>/dev/null) || fail "Debian's mpich is not installed (apt-get install mpich libmpich-dev)"
for c in gcc make dpkg-source apt-get; do
	command -v $c >/dev/null || fail "$c not found (apt-get install build-essential dpkg-dev)"
done
[ -f /usr/include/hwloc.h ] || fail "hwloc.h not found (apt-get install libhwloc-dev)"

work=$(mktemp -d /var/tmp/mpich-ch3-build.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial"
# deb-src entries for the same mirrors and suites as the binary packages.
{
	cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed 's/^Types:.*/Types: deb-src/'
} >"$work/src.sources"
grep -h '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | sed 's/^deb /deb-src /' >"$work/src.list" || true
apt=(-o Dir::Etc::SourceList="$work/src.list" -o Dir::Etc::SourceParts="$work/parts" -o Dir::State::Lists="$work/lists")
mkdir -p "$work/parts"
cp "$work/src.sources" "$work/parts/src.sources"
apt-get "${apt[@]}" update >"$work/apt.log" 2>&1 || fail "apt-get update (deb-src) failed: $(tail -3 "$work/apt.log")"
(cd "$work" && apt-get "${apt[@]}" source --download-only "mpich=$ver" >>"$work/apt.log" 2>&1) ||
	fail "apt-get source mpich=$ver failed: $(tail -3 "$work/apt.log")"
(cd "$work" && dpkg-source -x --skip-patches mpich_*.dsc src >/dev/null) || fail "unpacking mpich $ver failed"

cd "$work/src"
echo "mpich-ch3: building MPICH $ver with ch3:nemesis into $DIR (log: $work/build.log)" >&2
{
	nice -n 19 ./configure --prefix="$DIR" --with-device=ch3:nemesis --with-pm=no \
		--disable-fortran --disable-cxx --disable-romio --disable-doc --enable-fast=O2 \
		--with-hwloc=/usr --with-datatype-engine=dataloop --without-ucx --without-libfabric \
		--enable-shared --disable-static &&
		nice -n 19 make -j"$(nproc)" && make install
} >"$work/build.log" 2>&1 || {
	cp "$work/build.log" /var/tmp/mpich-ch3-build.log
	fail "build failed: /var/tmp/mpich-ch3-build.log"
}
echo "$DIR"
