#!/bin/bash
# The GPU figures of issue 20 in one run on a machine with a GPU and 16 cores (the device
# tool's machine):
# 1. kernel rates: the GPU against the CPU backend pinned to two cores (a 2-core machine);
# 2. ESICUP strips nested in each of MODES side by side, every run pinned to its own two cores.
#    A mode is COMPUTE[:ROUTE][/MOVES][+DEPTH][~ROWS][%MEASURE]: `cpu` or `gpu`; how the GPU backend
#    routes calls between the GPU and its CPU twin (empty: by measured cost, the default;
#    `fixed`: the threshold rule at the default KERF_GPU_MIN_WORK; a number W: the threshold
#    rule at KERF_GPU_MIN_WORK=W; `measured@W`: by measured cost with W as the prior);
#    `--moves` (`batched`, the default, or `one-by-one`); `--depth-levels` (the overlap
#    measure's depth levels, `off`, the default, or `fraction:extra,...`); and
#    `--sampled-rows` (rows spread over the height that each move also scans; 0, the default);
#    `--overlap-measure` (`mixed`, the default: a thread of each, `cells` or `root`, whose line
#    scans the GPU backend hands to its CPU twin).
#    GPU runs share the one GPU, so at most GPU_PARALLEL of them run at once; the CPU runs go
#    on beside them on the other cores.
#
#   KERF=path/to/kerf TIME=30 SEED=1 OUT=dir MODES="cpu gpu gpu:fixed" benches/gpu-device.sh [instance ...]
#
# An instance named sheets:NAME is a multi-sheet instance (benches/data/sheets/NAME.json, or
# benches/data/sheets-large/NAME.json) nested with `kerf bench sheets`; its cell in the table
# is sheets used / sheet equivalents.
#
# Prints the tables and writes them to $OUT (few files: the device tool brings back eight).
set -u
KERF=${KERF:-target/release/kerf}
TIME=${TIME:-60}
SEED=${SEED:-1}
OUT=${OUT:-/tmp/kerf-gpu}
MAX_SHEET=${MAX_SHEET:-8192}
KERNELS_TIMEOUT=${KERNELS_TIMEOUT:-150}
MODES=${MODES:-cpu gpu}
GPU_PARALLEL=${GPU_PARALLEL:-2}
LOGS=$(mktemp -d)
for m in $MODES; do # a routing the backend does not know would fall back to its default
    base=${m%%[/+~%]*}
    [[ $base == *:* ]] || continue
    case "${base#*:}" in
        fixed | measured@[0-9]* | [0-9]*) ;;
        *) echo "mode $m: unknown routing '${base#*:}' (fixed, W or measured@W)" >&2; exit 2 ;;
    esac
done
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

# the runs, each on its own two cores: GPU ones on the first GPU_PARALLEL pairs of cores (at
# most that many share the GPU at once), CPU ones on the other pairs, both queues at once
PAIRS=$(($(nproc) / 2))
[ "$PAIRS" -lt 2 ] && PAIRS=2
run_one() { # pair instance mode
    local cores="$((2 * $1)),$((2 * $1 + 1))" compute min moves rest depth rows measure
    IFS=% read -r rest measure <<< "$3"
    IFS='~' read -r rest rows <<< "$rest"
    IFS=+ read -r rest depth <<< "$rest"
    IFS=/ read -r rest moves <<< "$rest"
    IFS=: read -r compute min <<< "$rest"
    local log="$LOGS/${2/:/_}.${3//\//_}.txt"
    (
        # the mode alone decides the routing, not what the caller exported
        unset KERF_GPU_ROUTE KERF_GPU_MIN_WORK
        case "$min" in
            '') ;;
            fixed) export KERF_GPU_ROUTE=threshold ;;
            measured@[0-9]*) export KERF_GPU_MIN_WORK=${min#measured@} ;;
            [0-9]*) export KERF_GPU_ROUTE=threshold KERF_GPU_MIN_WORK=$min ;;
        esac # (any other routing was refused up front)
        if [[ $2 == sheets:* ]]; then
            local file="benches/data/sheets/${2#sheets:}.json"
            [ -f "$file" ] || file="benches/data/sheets-large/${2#sheets:}.json"
            taskset -c "$cores" "$KERF" bench sheets "$file" \
                --time "$TIME" --seed "$SEED" --compute "$compute" --sampled-rows "${rows:-0}" \
                --overlap-measure "${measure:-mixed}" --out "$LOGS/layouts_${3//\//_}" > "$log" 2>&1
        else
            taskset -c "$cores" "$KERF" bench esicup "benches/data/nest2d/$2.json" --time "$TIME" \
                --seed "$SEED" --compute "$compute" --moves "${moves:-batched}" \
                --depth-levels "${depth:-off}" --sampled-rows "${rows:-0}" \
                --overlap-measure "${measure:-mixed}" --out "$LOGS/layouts_${3//\//_}" > "$log" 2>&1
        fi
    )
}
queue() { # first_pair pairs jobs...: runs the jobs ("instance mode") on pairs first_pair.. in rounds
    local first=$1 pairs=$2 k=0
    shift 2
    for j in "$@"; do
        run_one $((first + k)) $j &
        k=$((k + 1))
        if [ "$k" -ge "$pairs" ]; then
            wait
            k=0
        fi
    done
    wait
}
gpu_jobs=()
cpu_jobs=()
# instance by instance, so that the modes of one instance run at about the same time
for i in "${instances[@]}"; do
    for m in $MODES; do
        if [[ $m == cpu* ]]; then cpu_jobs+=("$i $m"); else gpu_jobs+=("$i $m"); fi
    done
done
queue 0 "$GPU_PARALLEL" "${gpu_jobs[@]}" &
queue "$GPU_PARALLEL" $((PAIRS - GPU_PARALLEL)) "${cpu_jobs[@]}" &
wait

{
    printf "%-18s" instance
    for m in $MODES; do printf " %10s" "$m"; done
    echo
    for i in "${instances[@]}"; do
        printf "%-18s" "$i"
        for m in $MODES; do
            run_log="$LOGS/${i/:/_}.${m//\//_}.txt"
            if [[ $i == sheets:* ]]; then # sheets used / sheet equivalents
                d=$(awk -v n="${i#sheets:}" '$1 == n { print $3 "/" $5 ($NF == "verified" ? "" : "!") }' "$run_log")
            else
                d=$(awk -v n="$i" '$1 == n { print $3 ($6 == "verified" ? "" : "!") }' "$run_log")
            fi
            printf " %10s" "${d:-?}"
        done
        echo
    done
    echo "(! = the layout failed the exact check; ? = no result)"
    for m in $MODES; do
        [[ $m == cpu* ]] && continue
        echo "$m: $(grep -h "^compute" "$LOGS"/*."${m//\//_}".txt | sort -u | tr '\n' ' ')" \
            "GPU calls: $(grep -h "answered by the GPU" "$LOGS"/*."${m//\//_}".txt | awk '{ printf "%s ", $NF }')"
    done
} | tee "$OUT/nests.txt"
tar czf "$OUT/logs.tgz" -C "$LOGS" . # every run's output and layouts, for the figures behind the table
