#!/usr/bin/env bash
# Run one fuzz target under AddressSanitizer (Rust and the linked c-blosc2) for SECONDS,
# in libFuzzer's fork mode (crashes, timeouts and out-of-memory inputs are saved to
# fuzz/artifacts/TARGET and fuzzing goes on). The log (fuzz/logs/TARGET.START.log) ends with
# libFuzzer's final statistics and the CPU time used.
# usage: bash scripts/fuzz_run.sh TARGET SECONDS [JOBS]
#        bash scripts/fuzz_run.sh --build   (builds every target, with the same flags)
# Needs: the nightly toolchain, cargo-fuzz (cargo install cargo-fuzz), seeds from
# scripts/fuzz_seeds.sh or fuzz/seeds.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
export CFLAGS="-fsanitize=address -fno-omit-frame-pointer"
if [ "$1" = --build ]; then exec cargo +nightly fuzz build; fi
t=$1 secs=$2 jobs=${3:-1}
# plan_bytes links DataFusion: its own feature, off in the build of every target above.
features=()
[ "$t" = plan_bytes ] && features=(--features plan)
mkdir -p corpus/"$t" artifacts/"$t" logs
[ -d seeds/"$t" ] && cp -n seeds/"$t"/* corpus/"$t"/ 2>/dev/null || true
cargo +nightly fuzz build "${features[@]}" "$t" >/dev/null
start=$(date +%s)
log=logs/$t.$start.log
# -malloc_limit_mb: any single allocation over 1 GiB is reported as a finding (a size a
# file declared, reaching an allocation unchecked); -rss_limit_mb bounds the process.
/usr/bin/time -f "cpu_seconds %U user %S sys, max_rss_kb %M" \
    cargo +nightly fuzz run "${features[@]}" "$t" corpus/"$t" -- \
    -max_total_time="$secs" -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -rss_limit_mb=4096 -malloc_limit_mb=1024 -timeout=20 -print_final_stats=1 \
    -artifact_prefix=artifacts/"$t"/ > "$log" 2>&1 || true
echo "wall_seconds $(( $(date +%s) - start ))" >> "$log"
tail -3 "$log"
