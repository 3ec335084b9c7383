#!/usr/bin/env bash
# Installs what sluice needs to build and test, from Debian 12 packages only (DESIGN.md,
# "Dependencies"). Idempotent: when everything is already installed it returns at once,
# without touching apt, so scripts/test.sh can call it on every run.
set -euo pipefail

packages=(
  build-essential g++ cmake ninja-build
  libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  libssl-dev libxxhash-dev
  libpcre2-dev
  clang libclang-rt-14-dev
  # the linker cmake/BuildSpeed.cmake picks: links the sanitizer test binaries much faster
  lld
  python3 python3-pytest
  socat curl haproxy wrk procps iproute2
  # bench/: h2load, charts, profiles, instruction and syscall counts, nginx's stream module
  nghttp2-client gnuplot-nox linux-perf valgrind strace libnginx-mod-stream
)
# nginx is a test backend and a benchmark peer; Debian 12's `nginx` package provides the ABI that
# libnginx-mod-stream needs, and any installed nginx flavour will do.
nginx_pkgs=(nginx-light nginx nginx-core nginx-full nginx-extras)

# One dpkg-query for every package (one per package took seconds on a loaded machine): the
# names whose status is "ii" (installed), one a line.
# dpkg-query exits 1 when one of them is unknown to dpkg, which only means "not installed".
installed=$({ dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${packages[@]}" "${nginx_pkgs[@]}" 2>/dev/null || true; } |
            awk '$1 ~ /^ii/ { sub(/:.*/, "", $2); print $2 }')
is_installed() { grep -qxF "$1" <<<"$installed"; }

sudo=()
if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null; then
  # Without a terminal (CI) sudo must not wait for a password.
  if [[ -t 0 ]]; then sudo=(sudo); else sudo=(sudo -n); fi
fi

missing=()
for p in "${packages[@]}"; do
  is_installed "$p" || missing+=("$p")
done
have_nginx=0
for p in "${nginx_pkgs[@]}"; do
  if is_installed "$p"; then have_nginx=1; break; fi
done
[[ $have_nginx == 1 ]] || missing+=(nginx)

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all packages already installed"
else
  echo "setup: installing: ${missing[*]}"
  if [[ $(id -u) -ne 0 && ${#sudo[@]} -eq 0 ]]; then
    echo "setup: not root and no sudo; please install: ${missing[*]}" >&2
    exit 1
  fi
  # Keep the install from starting nginx (or haproxy) as a system service: tests start their own
  # instances on ports they pick, and a system one on :80 only gets in the way. policy-rc.d exit
  # 101 is Debian's documented way to say "do not start services" to invoke-rc.d.
  policy=/usr/sbin/policy-rc.d
  added_policy=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
    "${sudo[@]}" chmod 755 "$policy"
    added_policy=1
  fi
  # shellcheck disable=SC2317  # called through the EXIT trap
  cleanup() { if [[ $added_policy == 1 ]]; then "${sudo[@]}" rm -f "$policy"; fi; }
  trap cleanup EXIT
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    # Some Debian mirrors ship nginx only as 'nginx'; retry with it.
    retry=("${missing[@]/nginx-light/nginx}")
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${retry[@]}"
  fi
fi

# If a system nginx or haproxy is running anyway (installed earlier, started by systemd), stop
# it: tests never rely on it. Only services are stopped; processes started by others are left.
for svc in nginx haproxy; do
  if command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
    if systemctl is-active --quiet "$svc" 2>/dev/null; then
      echo "setup: stopping system service $svc"
      "${sudo[@]}" systemctl stop "$svc" || true
      "${sudo[@]}" systemctl disable "$svc" >/dev/null 2>&1 || true
    fi
  elif [[ -x /etc/init.d/$svc ]] && /etc/init.d/$svc status >/dev/null 2>&1; then
    echo "setup: stopping system service $svc"
    "${sudo[@]}" /etc/init.d/$svc stop >/dev/null 2>&1 || true
  fi
done
exit 0
