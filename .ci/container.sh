#!/usr/bin/env bash
# CI's container step (issue 32): builds the Containerfile's image on this machine, with no registry, and runs
# test/container/two-containers.ts: two containers of it on one Postgres database, a verification across both,
# one stopped while visitors post to it, nothing lost. Run from .ci/run, or alone (as root, with the local
# PostgreSQL running): `bash .ci/container.sh`.
#
# - Docker's engine from Debian (docker.io; installed here when missing, with debootstrap). No systemd here,
#   so the script starts dockerd itself and stops it at the end, unless one already answered. It starts it
#   without the default bridge and without touching iptables: the containers use the host's network.
# - The base image: the Containerfile says `FROM debian:bookworm-slim`, which users pull from a registry. No
#   registry is reachable here, so when no image has that name, the script makes one from Debian's packages
#   (debootstrap --variant=minbase bookworm) and imports it under that very name; the engine keeps it
#   (/var/lib/docker), so later runs on the same machine skip this.
# - The image it builds is removed at the end; the base stays.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS=0
BASE=$(sed -n 's/^FROM //p' Containerfile)
IMAGE=ofage:ci-$$
LABEL=ofage-ci=$$
say() { echo "== container: $* (at ${SECONDS}s)"; }

missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]} (Debian packages)"
  apt-get update -qq
  # The package's scripts would start the daemon (where systemd runs): policy-rc.d says no.
  policy=/usr/sbin/policy-rc.d made_policy=
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made_policy=1
  fi
  installed=0
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || installed=$?
  [ -z "$made_policy" ] || rm -f "$policy"
  [ "$installed" = 0 ] || exit "$installed"
fi

[ -x dist/ofage ] || { say "building the binary"; bun run build; }

work=$(mktemp -d)
engine_pid=
cleanup() {
  local status=$?
  if docker info >/dev/null 2>&1; then
    # shellcheck disable=SC2046
    docker rm -f $(docker ps -aq --filter "label=$LABEL") >/dev/null 2>&1 || true
    docker rmi "$IMAGE" >/dev/null 2>&1 || true
  fi
  if [ -n "$engine_pid" ]; then
    # dockerd stops its own containerd before it exits.
    kill "$engine_pid" 2>/dev/null || true
    for _ in $(seq 60); do kill -0 "$engine_pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$engine_pid" 2>/dev/null; then
      echo "dockerd did not stop; its log:" && tail -20 "$work/dockerd.log"
      kill -9 "$engine_pid" 2>/dev/null || true
      status=1
    fi
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

if docker info >/dev/null 2>&1; then
  say "using the Docker engine already running"
else
  say "starting dockerd"
  dockerd --bridge=none --iptables=false >"$work/dockerd.log" 2>&1 &
  engine_pid=$!
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
  docker info >/dev/null 2>&1 || { echo "dockerd did not answer in 30 s; its log:"; tail -20 "$work/dockerd.log"; exit 1; }
fi

if docker image inspect "$BASE" >/dev/null 2>&1; then
  base_time="kept from an earlier run"
else
  # The Debian mirror apt uses here (not the security archive), else Debian's own.
  mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    grep -oE '^(deb|URIs:) +https?://[^ ]+/debian/?( |$)' | head -1 | awk '{print $2}' || true)
  mirror=${mirror:-http://deb.debian.org/debian}
  say "making $BASE from Debian's packages (debootstrap --variant=minbase bookworm $mirror)"
  started=$SECONDS
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log"; exit 1; }
  bootstrapped=$((SECONDS - started))
  # What the published slim image also leaves out: package lists, downloaded packages, documentation.
  rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/var/lib/apt/lists/* \
    "$work"/rootfs/usr/share/{doc,man,info,locale}/*
  tar -C "$work/rootfs" --numeric-owner --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -c . |
    docker import --change 'CMD ["bash"]' - "$BASE" >/dev/null
  rm -rf "$work/rootfs"
  base_time="$((SECONDS - started)) s (debootstrap ${bootstrapped} s, import $((SECONDS - started - bootstrapped)) s)"
fi
say "base image $BASE: $base_time"

say "building $IMAGE from Containerfile"
started=$SECONDS
docker build -q -f Containerfile -t "$IMAGE" . >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
build_time=$((SECONDS - started))
say "image built in ${build_time} s: $(docker image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%d MB", $1 / 1e6}')"

PGHOST=127.0.0.1
if ! pg_isready -h "$PGHOST" -q; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start
  for _ in $(seq 30); do pg_isready -h "$PGHOST" -q && break; sleep 1; done
fi
say "two containers on one Postgres database"
started=$SECONDS
OFAGE_IMAGE=$IMAGE OFAGE_CI_LABEL=$LABEL DATABASE_URL="postgres://postgres@$PGHOST:5432/postgres" \
  bun test --timeout 120000 ./test/container/two-containers.ts
say "timings: base image $base_time; image build ${build_time} s; the two-container flow $((SECONDS - started)) s; the whole step ${SECONDS} s"
