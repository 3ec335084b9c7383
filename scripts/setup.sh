#!/usr/bin/env bash
# Installs what sluice needs to build and test, from Debian 12 packages only (DESIGN.md,
# "Dependencies"). Idempotent: when everything is already installed it returns at once,
# without touching apt, so scripts/test.sh can call it on every run.
set -euo pipefail

packages=(
  build-essential g++ cmake ninja-build
  libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  libssl-dev openssl libxxhash-dev libcrypt-dev
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
# Optional: only tests/integration/stats_page needs them (headless chromium renders the stats
# page and submits its admin form; prometheus brings promtool, which lints the exporter). They
# are large and some mirrors or offline machines lack them, so failing to install them does not
# fail setup: those tests skip and say what to install.
optional_packages=(chromium prometheus)
# After a failed attempt, later runs (scripts/test.sh calls this on every run) do not retry
# apt for a day: an apt-get update that cannot reach its mirror can take minutes.
optional_stamp=/var/tmp/sluice-setup-optional.failed

# One dpkg-query for every package (one per package took seconds on a loaded machine): the
# names whose status is "ii" (installed), one a line.
# dpkg-query exits 1 when one of them is unknown to dpkg, which only means "not installed".
installed=$({ dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${packages[@]}" "${nginx_pkgs[@]}" "${optional_packages[@]}" 2>/dev/null || true; } |
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
optional_missing=()
for p in "${optional_packages[@]}"; do
  is_installed "$p" || optional_missing+=("$p")
done
if [[ ${#optional_missing[@]} -gt 0 && -n $(find "$optional_stamp" -mmin -1440 2>/dev/null) ]]; then
  echo "setup: optional packages not installed (${optional_missing[*]}): the last try failed" \
       "less than a day ago; remove $optional_stamp to retry now. Their tests will skip."
  optional_missing=()
fi
if [[ ${#optional_missing[@]} -gt 0 && $(id -u) -ne 0 && ${#sudo[@]} -eq 0 ]]; then
  echo "setup: not root and no sudo: optional packages not installed (${optional_missing[*]});" \
       "their tests will skip"
  optional_missing=()
fi

if [[ ${#missing[@]} -eq 0 && ${#optional_missing[@]} -eq 0 ]]; then
  echo "setup: all packages already installed"
else
  echo "setup: installing: ${missing[*]}${optional_missing[*]:+ (optional: ${optional_missing[*]})}"
  if [[ ${#missing[@]} -gt 0 && $(id -u) -ne 0 && ${#sudo[@]} -eq 0 ]]; then
    echo "setup: not root and no sudo; please install: ${missing[*]}" >&2
    exit 1
  fi
  # Keep the install from starting nginx, haproxy or prometheus as a system service: tests start
  # their own instances on ports they pick, a system one on :80 only gets in the way, and
  # prometheus is installed for its promtool only. policy-rc.d exit 101 is Debian's documented
  # way to say "do not start services" to invoke-rc.d (and deb-systemd-invoke).
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
  update_ok=1
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q || update_ok=0
  if [[ $update_ok == 0 && ${#missing[@]} -gt 0 ]]; then
    echo "setup: apt-get update failed" >&2
    exit 1
  fi
  if [[ ${#missing[@]} -gt 0 ]] &&
     ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    # Some Debian mirrors ship nginx only as 'nginx'; retry with it.
    retry=("${missing[@]/nginx-light/nginx}")
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${retry[@]}"
  fi
  # A separate apt-get: one unavailable optional package must not block the required ones, and
  # its failure is only reported.
  if [[ ${#optional_missing[@]} -gt 0 ]]; then
    if [[ $update_ok == 1 ]] &&
       "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${optional_missing[@]}"; then
      "${sudo[@]}" rm -f "$optional_stamp"
    else
      echo "setup: could not install the optional packages ${optional_missing[*]}; the tests" \
           "that need them will skip (retried after a day, or remove $optional_stamp)" >&2
      "${sudo[@]}" touch "$optional_stamp" || true
    fi
  fi
fi

# The certificate examples/https.cfg serves (self-signed, made on this machine).
"$(dirname "$0")/example-cert.sh" || echo "setup: could not make examples/certs/example.pem" >&2

# If a system nginx, haproxy or prometheus is running anyway (installed earlier, started by
# systemd, or enabled by the package and started at the next boot), stop it: tests never rely on
# it. Only services are stopped; processes started by others are left.
for svc in nginx haproxy prometheus; do
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
