#!/usr/bin/env bash
# Side-by-side comparison of kerf builds or options on the strip or multi-sheet benchmarks.
#
#   benches/ab.sh [--sheets] [--time S] [--seeds "1 2 3"] --out DIR ARM... -- FILE...
#
# ARM is LABEL=COMMAND: a kerf binary with any options of `bench esicup` (or `bench sheets`
# with --sheets), or `env VAR=value BINARY ...` for a build's temporary switch. For example:
#
#   cp target/release/kerf /tmp/kerf-before        # before the change; then build the change
#   benches/ab.sh --time 60 --seeds "1 2" --out /tmp/ab \
#       before=/tmp/kerf-before after=./target/release/kerf \
#       'root=./target/release/kerf --overlap-measure root' -- benches/data/nest2d/*.json
#
# Why arms take turns per instance and seed (not arm after arm): this machine is shared and
# its pace drifts over an hour, so runs side by side are what compare (benches/history/).
# Each run's line goes to DIR/results as it ends (label, instance, seed, figures), and a rerun
# with the same DIR skips the runs already there, so a long comparison can be resumed. At the
# end the script prints, per instance and arm, the mean over the seeds: density % for strips;
# sheets and sheet equivalents for multi-sheet jobs. A run whose layouts fail the exact check
# is reported, never averaged.
set -euo pipefail

kind=esicup
time=60
seeds=1
out=
arms=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --sheets) kind=sheets; shift ;;
        --time) time=$2; shift 2 ;;
        --seeds) seeds=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --) shift; break ;;
        *=*) arms+=("$1"); shift ;;
        *) echo "ab.sh: unexpected argument '$1' (an arm is LABEL=COMMAND; files follow --)" >&2; exit 2 ;;
    esac
done
files=("$@")
if [[ -z $out || ${#arms[@]} -eq 0 || ${#files[@]} -eq 0 ]]; then
    echo "usage: benches/ab.sh [--sheets] [--time S] [--seeds \"1 2\"] --out DIR LABEL=COMMAND... -- FILE..." >&2
    exit 2
fi
mkdir -p "$out"
results=$out/results
touch "$results"

for file in "${files[@]}"; do
    name=$(basename "$file" .json)
    for seed in $seeds; do
        for arm in "${arms[@]}"; do
            label=${arm%%=*}
            command=${arm#*=}
            if grep -q "^$label $name $seed " "$results"; then
                continue
            fi
            # the command's words: the program (with any `env VAR=value` before it), and its
            # options (the words from the first that starts with -), which go after the files
            prefix=() options=()
            for word in $command; do
                if [[ ${#options[@]} -gt 0 || $word == -* ]]; then options+=("$word"); else prefix+=("$word"); fi
            done
            line=$("${prefix[@]}" bench $kind "$file" --time "$time" --seed "$seed" \
                --out "$out/$label-$seed" "${options[@]}" 2>/dev/null | awk -v n="$name" '$1 == n' || true)
            if [[ -z $line ]]; then
                echo "$label $name $seed FAILED" >>"$results"
                continue
            fi
            check=$(awk '{print $NF}' <<<"$line")
            if [[ $kind == esicup ]]; then
                figures=$(awk '{print $3}' <<<"$line")
            else
                figures=$(awk '{print $3, $5}' <<<"$line")
            fi
            echo "$label $name $seed $figures $check" >>"$results"
            echo "$label $name seed $seed: $figures ($check)" >&2
        done
    done
done

# the table: per instance and arm, the mean over the seeds of the verified runs
awk -v kind="$kind" -v arms="$(printf '%s\n' "${arms[@]}" | cut -d= -f1 | tr '\n' ' ')" '
    $4 == "FAILED" || $NF != "verified" { bad[$1 " " $2 " " $3] = 1; next }
    {
        key = $1 " " $2
        if (!(($2) in seen)) { seen[$2] = 1; order[++n] = $2 }
        runs[key]++; a[key] += $4
        if (kind == "sheets") b[key] += $5
    }
    END {
        na = split(arms, arm, " ")
        header = "instance"
        for (j = 1; j <= na; j++) header = header "\t" arm[j]
        print header
        for (i = 1; i <= n; i++) {
            row = order[i]
            for (j = 1; j <= na; j++) {
                key = arm[j] " " order[i]
                if (runs[key] == 0) { row = row "\t-"; continue }
                if (kind == "sheets") {
                    row = row sprintf("\t%.2f / %.2f", a[key] / runs[key], b[key] / runs[key])
                    tot_a[j] += a[key] / runs[key]; tot_b[j] += b[key] / runs[key]
                } else {
                    row = row sprintf("\t%.2f", a[key] / runs[key])
                    tot_a[j] += a[key] / runs[key]
                }
                count[j]++
            }
            print row
        }
        row = (kind == "sheets") ? "total" : "mean"
        for (j = 1; j <= na; j++) {
            if (count[j] == 0) { row = row "\t-"; continue }
            if (kind == "sheets") row = row sprintf("\t%.2f / %.2f", tot_a[j], tot_b[j])
            else row = row sprintf("\t%.2f", tot_a[j] / count[j])
        }
        print row
        for (k in bad) print "not verified or failed: " k
    }' "$results" | column -t -s $'\t'
