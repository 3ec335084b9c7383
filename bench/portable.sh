#!/usr/bin/env bash
# Packs what bench/scaling.sh runs (sluice, sluice-loadgen, and Debian's nginx, its stream module,
# HAProxy and taskset) with every shared library they load, glibc and its loader included, into one
# folder that runs on another x86-64 Linux machine with none of those packages (a lent many-core
# machine that cannot reach a package registry). Each program is started through the packed loader
# (ld-linux --library-path), so the other machine's own libraries and glibc version do not matter.
#
#   bench/portable.sh pack DIR                       # here, after a release build (or SLUICE_BIN=...)
#   bench/portable.sh run DIR [scaling.sh args...]   # there, from the repository root
#   bench/portable.sh check DIR                      # there: does each packed program start?
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(dirname "$BENCH_DIR")

usage() { sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 2 ]] || usage
verb=$1 dir=$2
shift 2

pack_one() {  # pack_one NAME PATH [fallback]: copy the program and its libraries, write its wrapper
  local name=$1 path=$2 where=${3:-bin}
  [[ -x $path ]] || { echo "portable: $path not found (build it or install its package)" >&2; exit 1; }
  install -m 755 "$path" "$dir/real/$name"
  strip --strip-debug "$dir/real/$name"   # symbols stay (perf), debug info would not fit the transfer
  ldd "$path" | awk '/=> \//{print $3} $1 ~ /^\/.*ld-linux/{print $1}' | while read -r lib; do
    cp -L -n "$lib" "$dir/lib/"
  done
  cat >"$dir/$where/$name" <<EOF
#!/bin/sh
# packed by bench/portable.sh: runs $path with the libraries it was built against
d=\$(cd "\$(dirname "\$0")/.." && pwd)
exec "\$d/lib/ld-linux-x86-64.so.2" --library-path "\$d/lib" "\$d/real/$name" "\$@"
EOF
  chmod 755 "$dir/$where/$name"
}

case $verb in
  pack)
    rm -rf "$dir" && mkdir -p "$dir"/{bin,fallback,lib,real,modules}
    pack_one sluice "${SLUICE_BIN:-$REPO_DIR/build/release/src/app/sluice}"
    pack_one sluice-loadgen "${LOADGEN_BIN:-$REPO_DIR/build/release/bench/loadgen/sluice-loadgen}"
    pack_one nginx /usr/sbin/nginx
    pack_one haproxy /usr/sbin/haproxy
    pack_one taskset "$(command -v taskset)" fallback   # used only where the machine has none
    mod=/usr/lib/nginx/modules/ngx_stream_module.so
    [[ -f $mod ]] && cp "$mod" "$dir/modules/" && ldd "$mod" | awk '/=> \//{print $3}' | while read -r lib; do
      cp -L -n "$lib" "$dir/lib/"
    done
    du -sh "$dir"
    ;;
  run|check)
    dir=$(cd "$dir" && pwd)
    export PATH="$dir/bin:$PATH:$dir/fallback"
    export SLUICE_BIN="$dir/bin/sluice" LOADGEN_BIN="$dir/bin/sluice-loadgen"
    [[ -f $dir/modules/ngx_stream_module.so ]] && export NGINX_STREAM_MODULE="$dir/modules/ngx_stream_module.so"
    if [[ $verb == check ]]; then
      for p in sluice nginx haproxy; do "$dir/bin/$p" -v 2>&1 | head -1; done
      "$dir/bin/sluice-loadgen" 2>&1 | head -1 || true
      command -v taskset
      exit 0
    fi
    exec "$BENCH_DIR/scaling.sh" "$@"
    ;;
  *) usage ;;
esac
