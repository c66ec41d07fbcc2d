#!/usr/bin/env bash
# Runs the README's Slurm job-array recipe for real and checks that sharded runs merge to the
# bytes of the unsharded run.
#
# For `attack prior-aware`, `audit` and `report` (small trial counts, 4 array tasks each) it
#   1. runs the command unsharded;
#   2. submits the README's batch script (extracted verbatim from README.md, between the
#      `slurm-array-recipe` markers, so the two cannot drift) with `sbatch --wait`, as the
#      README's submission line does, which writes shard-0.jsonl … shard-3.jsonl;
#   3. merges the shards with `reconbound merge` and compares the result with step 1 byte for
#      byte (the report page: apart from its one wall-time number, which a merge sums over the
#      shards).
# It exits non-zero on any difference, a failed task or a cluster that does not come up.
#
# When no Slurm answers (`sinfo` fails), it starts a single-node cluster of its own for this
# host: Debian's `slurm-wlm` and `munge` (installed when missing, as root), a munged on a
# socket of its own, slurmctld and slurmd with a minimal slurm.conf — all files under one
# temporary directory — and stops exactly the daemons it started when it ends. A running
# cluster is used as it is (its default partition must accept the jobs).
#
# Usage: scripts/slurm-array.sh            (builds target/release/reconbound)
#        RECONBOUND_BIN=/path/to/reconbound scripts/slurm-array.sh
#        KEEP=1 scripts/slurm-array.sh     (keeps the temporary directory, logs included)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
tasks=4

say() { printf 'slurm-array: %s\n' "$*" >&2; }
die() {
  say "error: $*"
  exit 1
}

work=$(mktemp -d /tmp/reconbound-slurm.XXXXXX)
chmod 755 "$work"
daemons=()   # pids of slurmctld and slurmd started here
munge_socket=""
cleanup() {
  local rc=$?
  set +e
  for pid in "${daemons[@]}"; do
    kill "$pid" 2>/dev/null
  done
  for pid in "${daemons[@]}"; do
    wait "$pid" 2>/dev/null
  done
  if [ -n "$munge_socket" ]; then
    munged --stop --socket="$munge_socket" >/dev/null 2>&1
  fi
  if [ "$rc" != 0 ]; then
    for log in "$work"/slurmctld.log "$work"/slurmd.log "$work"/*/reconbound-*.log; do
      [ -s "$log" ] && { say "--- $log (last lines)"; tail -n 20 "$log" >&2; }
    done
  fi
  if [ "${KEEP:-0}" = 1 ] || [ "$rc" != 0 ]; then
    say "kept $work"
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT

# --- the binary ------------------------------------------------------------------------------
if [ -n "${RECONBOUND_BIN:-}" ]; then
  bin=$(readlink -f "$RECONBOUND_BIN")
else
  say "building target/release/reconbound"
  (cd "$repo" && cargo build --release --quiet --bin reconbound)
  bin="$repo/target/release/reconbound"
fi
[ -x "$bin" ] || die "no reconbound binary at $bin"
mkdir -p "$work/bin"
ln -s "$bin" "$work/bin/reconbound"
export PATH="$work/bin:$PATH"   # sbatch exports the environment to the tasks

# --- the recipe, verbatim from the README ------------------------------------------------------
recipe="$work/reconbound-array.sbatch"
awk '/<!-- slurm-array-recipe:begin/ { on = 1; next }
     /<!-- slurm-array-recipe:end/ { on = 0 }
     on && /^```/ { fence = !fence; next }
     on && fence { print }' "$repo/README.md" >"$recipe"
grep -q '^#!/bin/bash' "$recipe" || die "README.md has no slurm-array-recipe block"
grep -q -- "--array=0-$((tasks - 1))" "$recipe" || die "the README's recipe is not a $tasks-task array"

# --- a cluster -------------------------------------------------------------------------------
if timeout 20 sinfo -h >/dev/null 2>&1; then
  say "using the running Slurm cluster"
else
  if ! command -v sbatch >/dev/null || ! command -v slurmctld >/dev/null ||
    ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      say "installing Debian's slurm-wlm and munge"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
    else
      die "Slurm is not installed and cannot be installed here (needs root and apt-get)"
    fi
  fi
  [ "$(id -u)" = 0 ] || die "starting a local Slurm needs root (slurmd runs the tasks as root)"
  host=$(hostname)

  # munged on a socket of its own, with the system's key or one made for this run.
  mdir="$work/munge"
  install -d -o munge -g munge -m 0755 "$mdir"
  key=/etc/munge/munge.key
  if [ ! -s "$key" ]; then
    key="$mdir/munge.key"
    dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
    chown munge:munge "$key"
    chmod 0400 "$key"
  fi
  munge_socket="$mdir/munge.socket"
  runuser -u munge -- munged --socket="$munge_socket" --key-file="$key" \
    --pid-file="$mdir/munged.pid" --log-file="$mdir/munged.log" --seed-file="$mdir/munged.seed" ||
    die "munged did not start (see $mdir/munged.log)"

  mkdir -p "$work/state" "$work/spool"
  export SLURM_CONF="$work/slurm.conf"
  cat >"$SLURM_CONF" <<EOF
# A single-node cluster for scripts/slurm-array.sh; nothing outside $work is used.
ClusterName=reconbound
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$munge_socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  slurmctld -D -i >"$work/slurmctld.out" 2>&1 &
  daemons+=("$!")
  slurmd -D >"$work/slurmd.out" 2>&1 &
  daemons+=("$!")
  up=0
  for _ in $(seq 1 60); do
    if [ "$(sinfo -h -o %t 2>/dev/null | head -n 1)" = idle ]; then
      up=1
      break
    fi
    sleep 1
  done
  [ "$up" = 1 ] || die "the local Slurm node did not become idle within 60 s"
  say "started a single-node Slurm on $host ($(nproc) CPUs)"
fi

# --- the three commands ------------------------------------------------------------------------
# run NAME OUTPUT_FILE ARGS...: unsharded into NAME/whole, sharded by the recipe into NAME/,
# merged into NAME/merged; OUTPUT_FILE is "-" (stdout) or a --out file name of the command.
failed=0
check() {
  local name=$1 out=$2
  shift 2
  local dir="$work/$name"
  mkdir -p "$dir/whole"
  say "$name: unsharded run"
  if [ "$out" = - ]; then
    (cd "$dir/whole" && reconbound "$@" >stdout) || die "$name: the unsharded run failed"
  else
    (cd "$dir/whole" && reconbound "$@" --out "$out" >stdout) || die "$name: the unsharded run failed"
  fi
  say "$name: sbatch --wait reconbound-array.sbatch $* ($tasks array tasks)"
  (cd "$dir" && sbatch --wait --quiet "$recipe" "$@") || die "$name: the job array failed"
  local shards=()
  for k in $(seq 0 $((tasks - 1))); do
    [ -s "$dir/shard-$k.jsonl" ] || die "$name: shard-$k.jsonl is missing or empty"
    shards+=("$dir/shard-$k.jsonl")
  done
  mkdir -p "$dir/merged"
  if [ "$out" = - ]; then
    (cd "$dir/merged" && reconbound merge "${shards[@]}" >stdout) || die "$name: merge failed"
    a="$dir/whole/stdout" b="$dir/merged/stdout"
  else
    (cd "$dir/merged" && reconbound merge "${shards[@]}" --out "$out" >stdout) || die "$name: merge failed"
    # The one number a merged report may not share: its wall time (the shards' sum).
    for f in "$dir/whole/$out" "$dir/merged/$out"; do
      perl -0pe 's/data-key="seconds".*?<\/a>/[wall time]/s' "$f" >"$f.cmp"
    done
    a="$dir/whole/$out.cmp" b="$dir/merged/$out.cmp"
  fi
  if cmp -s "$a" "$b"; then
    say "$name: merged shards = unsharded run, byte for byte ($(wc -c <"$a") bytes)"
  else
    say "$name: MERGED OUTPUT DIFFERS from the unsharded run"
    diff "$a" "$b" | head -n 20 >&2 || true
    failed=1
  fi
}

check attack - attack prior-aware --trials 40 --quiet
check audit - audit --crafter gradient-dirac --distinguisher 3 --trials 80 --quiet
check report report.html report --trials 20 --audit-trials 40 --fil-coords 10 --quiet

[ "$failed" = 0 ] || die "a merged output differs from its unsharded run"
say "all merged outputs equal their unsharded runs"
