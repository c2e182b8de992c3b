#!/usr/bin/env bash
# Side-by-side comparison of kerf builds or options on the strip or multi-sheet benchmarks.
#
#   benches/ab.sh [--sheets] [--time S] [--seeds "1 2 3"] --out DIR ARM... -- FILE...
#
# ARM is LABEL=COMMAND: a kerf binary with any options of `bench esicup` (or of `bench sheets`
# with --sheets), or `env VAR=value BINARY ...` for a build's temporary switch. The command is
# split on whitespace (no quoting); its words from the first that starts with `--` are the
# bench's options and go after the files, the words before them run the bench (so `taskset -c
# 0 BINARY` works). For example:
#
#   cp target/release/kerf /tmp/kerf-before        # before the change; then build the change
#   benches/ab.sh --time 60 --seeds "1 2" --out /tmp/ab \
#       before=/tmp/kerf-before after=./target/release/kerf \
#       'root=./target/release/kerf --overlap-measure root' -- benches/data/nest2d/*.json
#
# Why arms take turns per instance and seed (not arm after arm), in reverse order at every
# other seed: this machine is shared and its pace drifts over an hour, so runs side by side are
# what compare (benches/history/). Each run's line goes to DIR/results as it ends (label,
# instance, seed, verified or failed, figures; the bench's whole line and its stderr in DIR/log
# and DIR/LABEL-SEED/NAME.err). A rerun with the same DIR and the same settings (DIR/config)
# skips the runs verified already and retries the others, so a long comparison can be resumed;
# other settings are refused. At the end the script prints, per instance and arm, the mean over
# the seeds at which every arm's run was verified: density % for strips, sheets and sheet
# equivalents for multi-sheet jobs; the bottom row takes the instances that have such seeds.
# Runs that failed or were not verified are listed below the table, never averaged.
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
        -*) echo "ab.sh: unknown option '$1'" >&2; exit 2 ;;
        *=*) arms+=("$1"); shift ;;
        *) echo "ab.sh: unexpected argument '$1' (an arm is LABEL=COMMAND; files follow --)" >&2; exit 2 ;;
    esac
done
files=("$@")
if [[ -z $out || ${#arms[@]} -eq 0 || ${#files[@]} -eq 0 ]]; then
    echo "usage: benches/ab.sh [--sheets] [--time S] [--seeds \"1 2\"] --out DIR LABEL=COMMAND... -- FILE..." >&2
    exit 2
fi

# no globbing of the commands' words
set -f
# an arm's command as `prefix` (what runs the bench) and `options` (from the first word that
# starts with --, put after the files)
split_command() {
    local word words
    read -ra words <<<"$1"
    prefix=() options=()
    for word in "${words[@]}"; do
        if [[ ${#options[@]} -gt 0 || $word == --* ]]; then options+=("$word"); else prefix+=("$word"); fi
    done
}
labels=()
for arm in "${arms[@]}"; do
    label=${arm%%=*}
    if [[ ! $label =~ ^[A-Za-z0-9_.+][A-Za-z0-9_.+-]*$ ]]; then
        echo "ab.sh: arm label '$label': letters, digits and _ . + - only, not starting with -" >&2
        exit 2
    fi
    for seen in "${labels[@]}"; do
        if [[ $seen == "$label" ]]; then
            echo "ab.sh: arm label '$label' given twice" >&2
            exit 2
        fi
    done
    labels+=("$label")
    split_command "${arm#*=}"
    # the program itself: the first word, or after `env` the first that sets no variable
    runner=${prefix[0]:-}
    [[ $runner == env ]] && for w in "${prefix[@]:1}"; do [[ $w == *=* ]] || { runner=$w; break; }; done
    if [[ -z $runner ]] || ! command -v "$runner" >/dev/null; then
        echo "ab.sh: arm '$label': no program '$runner'" >&2
        exit 2
    fi
done

mkdir -p "$out"
results=$out/results
config="kind=$kind time=$time $(printf '%s\n' "${arms[@]}" | sort | tr '\n' ' ')"
if [[ -f $out/config && $(cat "$out/config") != "$config" ]]; then
    echo "ab.sh: $out holds runs made with other settings ($(cat "$out/config")); use another --out" >&2
    exit 2
fi
echo "$config" >"$out/config"
touch "$results"

# whether a verified run of (label, instance, seed) is in the results already
have() {
    awk -v l="$1" -v n="$2" -v s="$3" '$1 == l && $2 == n && $3 == s && $4 == "verified" { f = 1 }
        END { exit !f }' "$results"
}

for file in "${files[@]}"; do
    name=$(basename "$file" .json)
    turn=0
    for seed in $seeds; do
        order=("${arms[@]}")
        if ((turn % 2 == 1)); then
            order=()
            for ((k = ${#arms[@]} - 1; k >= 0; k--)); do order+=("${arms[k]}"); done
        fi
        turn=$((turn + 1))
        for arm in "${order[@]}"; do
            label=${arm%%=*}
            have "$label" "$name" "$seed" && continue
            split_command "${arm#*=}"
            mkdir -p "$out/$label-$seed"
            line=$("${prefix[@]}" bench $kind "$file" --time "$time" --seed "$seed" \
                --out "$out/$label-$seed" "${options[@]}" 2>"$out/$label-$seed/$name.err" |
                awk -v n="$name" '$1 == n' || true)
            echo "$label $name $seed: ${line:-no result line (see $out/$label-$seed/$name.err)}" >>"$out/log"
            # the figures' columns: density; sheets and sheet equivalents
            if [[ $kind == esicup ]]; then
                figures=$(awk '{print $3}' <<<"$line")
            else
                figures=$(awk '{print $3, $5}' <<<"$line")
            fi
            status=failed
            [[ -n $line && $(awk '{print $NF}' <<<"$line") == verified ]] && status=verified
            echo "$label $name $seed $status $figures" >>"$results"
            echo "$label $name seed $seed: $status $figures" >&2
        done
    done
done

# per instance and arm, the mean over the seeds at which every arm was verified
awk -v kind="$kind" -v arms="${labels[*]}" '
    $4 != "verified" { next }
    {
        if (!(($2) in seen)) { seen[$2] = 1; order[++n] = $2 }
        ok[$1 " " $2 " " $3] = 1; a[$1 " " $2 " " $3] = $5; b[$1 " " $2 " " $3] = $6
        if (!(($2 " " $3) in seedseen)) { seedseen[$2 " " $3] = 1; seeds[$2] = seeds[$2] " " $3 }
    }
    END {
        na = split(arms, arm, " ")
        header = "instance\tseeds"
        for (j = 1; j <= na; j++) header = header "\t" arm[j]
        print header
        counted = 0
        for (i = 1; i <= n; i++) {
            name = order[i]
            ns = split(seeds[name], ss, " ")
            used = 0
            delete sa; delete sb
            for (k = 1; k <= ns; k++) {
                all = 1
                for (j = 1; j <= na; j++) if (!((arm[j] " " name " " ss[k]) in ok)) all = 0
                if (!all) continue
                used++
                for (j = 1; j <= na; j++) {
                    sa[j] += a[arm[j] " " name " " ss[k]]; sb[j] += b[arm[j] " " name " " ss[k]]
                }
            }
            row = name "\t" used
            for (j = 1; j <= na; j++) {
                if (used == 0) { row = row "\t-"; continue }
                if (kind == "sheets") {
                    row = row sprintf("\t%.2f / %.2f", sa[j] / used, sb[j] / used)
                    ta[j] += sa[j] / used; tb[j] += sb[j] / used
                } else {
                    row = row sprintf("\t%.2f", sa[j] / used)
                    ta[j] += sa[j] / used
                }
            }
            if (used > 0) counted++
            print row
        }
        row = ((kind == "sheets") ? "total" : "mean") "\t" counted
        for (j = 1; j <= na; j++) {
            if (counted == 0) row = row "\t-"
            else if (kind == "sheets") row = row sprintf("\t%.2f / %.2f", ta[j], tb[j])
            else row = row sprintf("\t%.2f", ta[j] / counted)
        }
        print row
    }' "$results" | column -t -s $'\t'
# the runs that did not verify, for the arms of this comparison (their lines are in DIR/log)
awk -v arms=" ${labels[*]} " '$4 != "verified" && index(arms, " " $1 " ") { print $1, $2, $3 }' "$results" |
    sort -u | while read -r label name seed; do
        # a later verified run of the same arm, instance and seed replaces it
        have "$label" "$name" "$seed" || echo "failed or not verified: $label $name seed $seed"
    done
