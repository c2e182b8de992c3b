#!/bin/bash
# The GPU figures of issue 20 in one run on a machine with a GPU and 16 cores (the device
# tool's machine):
# 1. kernel rates: the GPU against the CPU backend pinned to two cores (a 2-core machine);
# 2. ESICUP strips nested in each of MODES side by side, every run pinned to its own two cores.
#    A mode is COMPUTE[:MIN_WORK]: `cpu` or `gpu`, and KERF_GPU_MIN_WORK (empty: the default).
#    GPU runs share the one GPU, so at most GPU_PARALLEL of them run at once.
#
#   KERF=path/to/kerf TIME=30 OUT=dir MODES="cpu gpu gpu:0" benches/gpu-device.sh [instance ...]
#
# Prints the tables and writes them to $OUT (few files: the device tool brings back eight).
set -u
KERF=${KERF:-target/release/kerf}
TIME=${TIME:-60}
OUT=${OUT:-/tmp/kerf-gpu}
MAX_SHEET=${MAX_SHEET:-8192}
KERNELS_TIMEOUT=${KERNELS_TIMEOUT:-150}
MODES=${MODES:-cpu gpu}
GPU_PARALLEL=${GPU_PARALLEL:-2}
LOGS=$(mktemp -d)
mkdir -p "$OUT"
instances=("$@")
[ ${#instances[@]} -eq 0 ] && instances=(albano dagli fu jakobs1 mao marques shapes1 shirts swim trousers)

nvidia-smi -L 2>/dev/null
if [ "$KERNELS_TIMEOUT" != 0 ]; then
    echo "== kernels: GPU (and the CPU backend on every core)"
    timeout "$KERNELS_TIMEOUT" "$KERF" bench kernels --budget 0.5 --max-sheet "$MAX_SHEET" 2>&1 |
        tee "$OUT/kernels.txt"
    echo "== kernels: CPU backend on two cores"
    timeout "$KERNELS_TIMEOUT" taskset -c 0,1 "$KERF" bench kernels --cpu-only --budget 0.5 \
        --max-sheet "$MAX_SHEET" 2>&1 | tee "$OUT/kernels-cpu2.txt"
fi

# the runs: CPU ones all at once, GPU ones GPU_PARALLEL at a time, each on its own two cores
# (SLOTS pairs of cores; a full round of slots waits for the runs before it)
SLOTS=$(($(nproc) / 2))
[ "$SLOTS" -lt 1 ] && SLOTS=1
slot=0
start() { # instance mode
    local cores="$((2 * slot)),$((2 * slot + 1))" compute min
    IFS=: read -r compute min <<< "$2"
    slot=$(((slot + 1) % SLOTS))
    (
        [ -n "$min" ] && export KERF_GPU_MIN_WORK=$min
        taskset -c "$cores" "$KERF" bench esicup "benches/data/nest2d/$1.json" --time "$TIME" \
            --compute "$compute" --out "$LOGS/layouts_$2" > "$LOGS/$1.$2.txt" 2>&1
    ) &
}
gpu_jobs=()
for m in $MODES; do
    for i in "${instances[@]}"; do
        if [[ $m == cpu* ]]; then start "$i" "$m"; else gpu_jobs+=("$i $m"); fi
        [ "$slot" = 0 ] && wait
    done
done
running=0
for j in "${gpu_jobs[@]}"; do
    start $j
    running=$((running + 1))
    if [ "$running" -ge "$GPU_PARALLEL" ] || [ "$slot" = 0 ]; then
        wait
        running=0
    fi
done
wait

{
    printf "%-10s" instance
    for m in $MODES; do printf " %10s" "$m"; done
    echo
    for i in "${instances[@]}"; do
        printf "%-10s" "$i"
        for m in $MODES; do
            d=$(awk -v n="$i" '$1 == n { print $3 ($6 == "verified" ? "" : "!") }' "$LOGS/$i.$m.txt")
            printf " %10s" "${d:-?}"
        done
        echo
    done
    echo "(! = the layout failed the exact check; ? = no result)"
    for m in $MODES; do
        [[ $m == cpu* ]] && continue
        echo "$m: $(grep -h "^compute" "$LOGS"/*."$m".txt | sort -u | tr '\n' ' ')" \
            "GPU calls: $(grep -h "answered by the GPU" "$LOGS"/*."$m".txt | awk '{ printf "%s ", $NF }')"
    done
} | tee "$OUT/esicup.txt"
