#!/usr/bin/env bash
# Builds a Debian package of sluice with dpkg-deb:
#   /usr/sbin/sluice                      the binary ($SLUICE_BIN, default build/release's)
#   /etc/sluice/sluice.cfg                the default configuration (a conffile)
#   /etc/logrotate.d/sluice               rotation of /var/log/sluice.log (a conffile)
#   /usr/share/man/man1/sluice.1.gz       the command line and the signals
#   /usr/share/doc/sluice/copyright
#   /usr/lib/tmpfiles.d/sluice.conf       /run/sluice and /var/lib/sluice (the default
#                                         configuration's stats socket and server state)
#   /lib/systemd/system/sluice.service    the unit: master-worker mode (-Ws), reload by SIGUSR2
#   /etc/default/sluice                   CONFIG and EXTRAOPTS for the unit (a conffile)
# The dependencies are the packages that hold the libraries the binary links (dpkg -S).
# The maintainer scripts tell a running systemd about the unit; they neither enable nor start
# it (`systemctl enable --now sluice`), and stop it when the package is removed.
#
#   scripts/package.sh [<output dir>]     (default: build/package)
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:-build/package}
bin=${SLUICE_BIN:-build/release/src/app/sluice}
[[ -x $bin ]] || { echo "package: no sluice binary at $bin (build it, or set SLUICE_BIN)" >&2; exit 1; }
command -v dpkg-deb >/dev/null || { echo "package: dpkg-deb is needed" >&2; exit 1; }

version=$("$bin" -v | sed -n 's/^sluice version \([^ ]*\).*/\1/p')
[[ -n $version ]] || { echo "package: cannot read the version of $bin" >&2; exit 1; }
arch=$(dpkg --print-architecture)

# The packages of the shared libraries the binary needs (libc and friends included).
deps=()
while read -r lib; do
  pkg=$(dpkg -S "$lib" 2>/dev/null | head -1 | cut -d: -f1) || true
  if [[ -z $pkg ]]; then   # /lib is a link to /usr/lib on merged-/usr systems
    pkg=$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null | head -1 | cut -d: -f1) || true
  fi
  [[ -n $pkg ]] && deps+=("$pkg")
done < <(ldd "$bin" | awk '/=> \// { print $3 }')
depends=$(printf '%s\n' "${deps[@]}" | sort -u | paste -sd, | sed 's/,/, /g')

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
chmod 0755 "$root"
install -D -m 0755 "$bin" "$root/usr/sbin/sluice"
strip --strip-unneeded "$root/usr/sbin/sluice" 2>/dev/null || true
install -D -m 0644 packaging/sluice.cfg "$root/etc/sluice/sluice.cfg"
install -D -m 0644 packaging/sluice.logrotate "$root/etc/logrotate.d/sluice"
install -D -m 0644 packaging/sluice.default "$root/etc/default/sluice"
install -D -m 0644 contrib/systemd/sluice.service "$root/lib/systemd/system/sluice.service"
install -D -m 0644 packaging/sluice.1 "$root/usr/share/man/man1/sluice.1"
gzip -9n "$root/usr/share/man/man1/sluice.1"
install -d "$root/usr/share/doc/sluice" "$root/DEBIAN"
printf 'sluice: a load balancer and reverse proxy.\nSee the project repository for its terms.\n' \
  > "$root/usr/share/doc/sluice/copyright"
printf '%s\n' /etc/sluice/sluice.cfg /etc/logrotate.d/sluice /etc/default/sluice \
  > "$root/DEBIAN/conffiles"
# The default configuration's stats socket and saved server state live in these directories:
# made at boot (tmpfiles.d) and at installation.
install -D -m 0644 /dev/stdin "$root/usr/lib/tmpfiles.d/sluice.conf" <<'TMPFILES'
d /run/sluice 0755 root root -
d /var/lib/sluice 0755 root root -
TMPFILES
# systemd is told about a new or changed unit (daemon-reload) where it runs; the service is
# not enabled, started or restarted here. A removal stops it; a purge drops its enablement.
cat > "$root/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    mkdir -p /run/sluice /var/lib/sluice
    if [ -d /run/systemd/system ]; then
        systemctl --system daemon-reload >/dev/null || true
    fi
fi
POSTINST
cat > "$root/DEBIAN/prerm" <<'PRERM'
#!/bin/sh
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
    systemctl stop sluice.service >/dev/null 2>&1 || true
fi
PRERM
cat > "$root/DEBIAN/postrm" <<'POSTRM'
#!/bin/sh
set -e
if [ "$1" = purge ]; then
    rm -f /etc/systemd/system/multi-user.target.wants/sluice.service
fi
if [ "$1" = remove ] || [ "$1" = purge ]; then
    if [ -d /run/systemd/system ]; then
        systemctl --system daemon-reload >/dev/null || true
    fi
fi
POSTRM
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: sluice
Version: $version
Architecture: $arch
Maintainer: sluice developers <sluice@localhost>
Installed-Size: $size
Depends: $depends
Section: net
Priority: optional
Description: load balancer and reverse proxy that reads HAProxy configurations
 sluice forwards TCP connections and HTTP/1 requests to backend servers with
 HAProxy's configuration language, statistics socket, log formats and health
 checks, one worker thread per core and no lock on a connection's path.
CONTROL

mkdir -p "$out"
deb="$out/sluice_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zgzip --build "$root" "$deb" >/dev/null
echo "$deb"
