#!/bin/sh
# aoe-capture: a model in, a static aoe-graph out; a workload run with
# AOE_MODE set, its graphs captured; and plain AOE_MODE=2 tuning inline.
. "$(dirname "$0")/tap.sh"
plan 37
ex=$top/share/aoe/models/example.onnx
cd "$top" || exit 1
unset AOE_MODE AOE_CAPTURE_DIR PROFILING_MODE GE_USE_STATIC_MEMORY
mkexample -d "$T/dyn.onnx"

# The model form.
run aoe-capture "$ex"
[ $status -eq 0 ] && grep -q '"format":"aoe-graph"' "$T/out"
ok $? "writes the static aoe-graph of a model on stdout"
cp "$T/out" "$T/g.json"
grep -q '^Conv  *4  *4$' "$T/err" && grep -q '^total  *14  *14$' "$T/err"
ok $? "summarises the ops and their cases on stderr"
run aoe-run --runs 1 "$T/g.json"
ok $status "the captured graph runs"
run aoe-capture -o "$T/g2.json" "$ex"
[ $status -eq 0 ] && [ ! -s "$T/out" ] && cmp -s "$T/g.json" "$T/g2.json"
ok $? "-o writes the same graph to a file"
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/g3.json" &
run aoe-capture -o "$T/fifo" "$ex"
wait
[ $status -eq 0 ] && [ -p "$T/fifo" ] && cmp -s "$T/g.json" "$T/g3.json"
ok $? "-o to a fifo writes through it and leaves it a fifo"
run aoe-capture --input-shape image:2,3,64,64 -o "$T/d.json" "$T/dyn.onnx"
[ $status -eq 0 ] && grep -q '"name":"image","dtype":"float32","shape":\[2,3,64,64\]' "$T/d.json"
ok $? "--input-shape binds a dynamic batch"
run aoe-capture -o "$T/d2.json" "$T/g.json"
ok $status "an aoe-graph is accepted as the model"
printf '{"format": "aoe-graph", "tensors": [{"name": "x", "dtype": "float32", "shape": [1, 64]}, {"name": "y", "dtype": "float32", "shape": [1, 64]}, {"name": "z", "dtype": "float32", "shape": [1, 64]}], "inputs": ["x"], "outputs": ["z"], "nodes": [{"name": "r1", "op_type": "Relu", "inputs": ["x"], "outputs": ["y"]}, {"name": "r2", "op_type": "Relu", "inputs": ["y"], "outputs": ["z"]}]}\n' > "$T/relu2.json"
aoe-capture - < "$T/relu2.json" > "$T/out" 2> "$T/err"
[ $? -eq 0 ] && grep -q '"name":"r2"' "$T/out" && grep -q '^Relu  *2  *1$' "$T/err" && grep -q '^total  *2  *1$' "$T/err"
ok $? "'-' reads the graph from stdin; two nodes of one case count as one case"
fails_with 3 "input 'image' has a dynamic shape Nx3x64x64: bind it with --input-shape image:" \
    "unbound dynamic dimensions name the input and how to bind it" aoe-capture "$T/dyn.onnx"
[ ! -e "$T/nothing.json" ]
fails_with 5 "cannot open '$T/nope.onnx'" "missing model" aoe-capture -o "$T/nothing.json" "$T/nope.onnx"
[ ! -e "$T/nothing.json" ]
ok $? "a failed capture leaves no output file"

# The command form.
run aoe-capture -d "$T/cap" -- aoe-run --runs 1 "$ex"
[ $status -eq 0 ] && [ "$(wc -l < "$T/out")" -eq 1 ] &&
    grep -q "^$T/cap/graph_[0-9a-f]\{16\}\.json\$" "$T/out"
ok $? "captures the workload's graph and lists it on stdout"
g1=$(cat "$T/out")
grep -q 'in tune mode, training graph handled by tools' "$T/err"
ok $? "libaoe logs that the graph is handled by the tools"
grep -q '^aoe model=' "$T/err"
ok $? "the workload's own output goes to stderr"
run aoe-run --runs 1 "$g1"
ok $status "the captured graph runs"
run aoe-capture -d "$T/cap" -- aoe-run --runs 1 "$g1"
[ $status -eq 0 ] && [ "$(cat "$T/out")" = "$g1" ] && [ "$(ls "$T/cap" | wc -l)" -eq 1 ] &&
    ! grep -q 'in tune mode' "$T/err"
ok $? "the same graph from its capture dedups to the same file"
run aoe-capture -z -d "$T/cap" -- aoe-run --runs 1 "$ex"
[ "$(tr '\0' '\n' < "$T/out")" = "$g1" ] && [ "$(tr -d '\0' < "$T/out" | wc -c)" -eq $(( ${#g1} )) ]
ok $? "-z separates the list with NULs"
(cd "$T" && aoe-capture -- aoe-run --runs 1 "$ex" >/dev/null 2>&1) && ls "$T"/aoe_capture/graph_*.json >/dev/null
ok $? "the default capture directory is ./aoe_capture"
run aoe-capture -j 1 -d "$T/cap1" -- sh -c 'echo $AOE_MODE >&2; aoe-run --runs 1 "$1"' sh "$ex"
[ $status -eq 0 ] && grep -qx 1 "$T/err"
ok $? "-j 1 sets AOE_MODE=1"
run aoe-capture -d "$T/capk" -- sh -c 'aoe-run --runs 1 --warmup 0 "$1" && kill -TERM $$' sh "$ex"
[ $status -eq 143 ] && [ "$(cat "$T/out")" = "$T/capk/$(basename "$g1")" ] &&
    cmp -s "$g1" "$T/capk/$(basename "$g1")" && grep -q "'sh' was killed by signal 15" "$T/err"
ok $? "a workload stopped after one step still leaves its graph, listed"
fails_with 3 "^failing$" "the command's exit status is passed on" aoe-capture -d "$T/cap" -- sh -c 'echo failing >&2; exit 3'
fails_with 5 "cannot run 'no-such-command-aoe'" "a command that does not exist" aoe-capture -d "$T/cap" -- no-such-command-aoe
fails_with 1 "'true' compiled no graph with libaoe" "a command that compiles nothing" aoe-capture -d "$T/cap" -- true
fails_with 4 "job-type 4 (gradient split tuning) is not supported" "-j 4 is refused" aoe-capture -j 4 -- aoe-run "$ex"
AOE_MODE=4 fails_with 4 "AOE_MODE=4 (gradient split tuning) is not supported by aoe" \
    "AOE_MODE=4 is refused by libaoe" aoe-run --runs 1 "$ex"
AOE_MODE=7 fails_with 3 "AOE_MODE='7' is not valid" "a bad AOE_MODE" aoe-run --runs 1 "$ex"

# Plain AOE_MODE=2: the graph is tuned inline by aoe-opat, found next to
# the program (here a stand-in that keeps the graph it was given).
mkdir -p "$T/bin" "$T/bin2" "$T/tuned"
cp tools/aoe-run "$T/bin/" && cp tools/aoe-run "$T/bin2/"
cat > "$T/bin/aoe-opat" <<EOS
#!/bin/sh
[ "\$1" = --commit ] && [ -z "\${AOE_MODE:-}" ] || exit 7
for g; do :; done
cp "\$g" "$T/tuned/" && echo "tuner output"
EOS
chmod +x "$T/bin/aoe-opat"
mkdir -p "$T/tmp"
AOE_MODE=2 TMPDIR=$T/tmp run "$T/bin/aoe-run" --runs 1 "$ex"
[ $status -eq 0 ] && grep -q '^aoe model=' "$T/out" && grep -q 'Aoe tuning graph\.' "$T/err" &&
    grep -q '^tuner output$' "$T/err"
ok $? "plain AOE_MODE=2 tunes the graph inline, then the workload carries on"
cmp -s "$g1" "$T/tuned/$(basename "$g1")"
ok $? "aoe-capture and plain AOE_MODE=2 find the same graph"
[ -z "$(ls "$T/tmp")" ]
ok $? "the graph handed to the tuner is a temporary file, removed after"
printf '#!/bin/sh\nexit 4\n' > "$T/bin/aoe-opat"
AOE_MODE=2 run "$T/bin/aoe-run" --runs 1 "$ex"
[ $status -eq 4 ] && grep -q 'aoe-opat failed on graph .* (exit status 4)' "$T/err" && [ ! -s "$T/out" ]
ok $? "a failing tuner fails the workload"
# The real aoe-opat, next to tools/aoe-run, on a one-node graph: its
# checks run first, then the case is tuned, then the workload runs.
printf '{"format": "aoe-graph", "tensors": [{"name": "x", "dtype": "float32", "shape": [1, 64]}, {"name": "y", "dtype": "float32", "shape": [1, 64]}], "inputs": ["x"], "outputs": ["y"], "nodes": [{"name": "r", "op_type": "Relu", "inputs": ["x"], "outputs": ["y"]}]}\n' > "$T/relu.json"
mkdir -p "$T/bank"
# The records become AOE's result file in the working directory
# (AOE_WORK_PATH), not raw records on stderr.
mkdir -p "$T/wp"
AOE_MODE=2 TUNE_BANK_PATH=$T/bank AOE_MEASURE_LOCK=$T/measure.lock RUN_LOOP=1 AOE_MIN_DISK_GB=0 \
    AOE_WORK_PATH=$T/wp run aoe-run --runs 1 "$T/relu.json"
[ $status -eq 0 ] && grep -q '^aoe model=' "$T/out" && grep -q 'Aoe tuning graph\.' "$T/err" &&
    ! grep -q '^{"kind"' "$T/err" && ls "$T"/wp/aoe_result_opat_*_pid*.json >/dev/null 2>&1
ok $? "plain AOE_MODE=2 with the real aoe-opat: the case is tuned, reported in a result file, then the workload runs"
AOE_MODE=2 PROFILING_MODE=true TUNE_BANK_PATH=$T/bank AOE_MIN_DISK_GB=0 run aoe-run --runs 1 "$T/relu.json"
[ $status -eq 4 ] && [ ! -s "$T/out" ] &&
    grep -q '^aoe-opat: not ready: profiling true (limit off)' "$T/err" &&
    grep -q "^aoe-run: aoe-opat did not tune graph '.*': a precondition failed (exit status 1)\$" "$T/err"
ok $? "the inline tuner runs aoe-check's checks first: profiling on stops the workload, with the reason"
AOE_MODE=1 TUNE_BANK_PATH=$T/bank AOE_MEASURE_LOCK=$T/measure.lock RUN_LOOP=1 AOE_MIN_DISK_GB=0 \
    AOE_WORK_PATH=$T/wp run aoe-run --runs 1 "$T/relu.json"
[ $status -eq 0 ] && grep -q '^aoe model=' "$T/out" && grep -q 'Aoe tuning graph\.' "$T/err" &&
    ! grep -q '^{"kind"' "$T/err" && ls "$T"/wp/aoe_result_sgat_*_pid*.json >/dev/null 2>&1
ok $? "plain AOE_MODE=1 tunes the graph's subgraphs with the real aoe-sgat, then the workload runs"
fails_with 4 "AOE_MODE=2: cannot tune graph 'aoe_example_cnn': aoe-opat is not installed" \
    "a missing aoe-opat is named" env AOE_MODE=2 PATH=/nonexistent "$T/bin2/aoe-run" --runs 1 "$ex"
fails_with 4 "aoe-sgat is not installed" \
    "AOE_MODE=1 needs aoe-sgat" env AOE_MODE=1 PATH=/nonexistent "$T/bin2/aoe-run" --runs 1 "$ex"

run aoe-capture
[ $status -eq 2 ] && grep -q '^usage: aoe-capture' "$T/err"
ok $? "no operands is a usage error"
run aoe-capture --help
[ $status -eq 0 ] && grep -q '^usage: aoe-capture' "$T/out"
ok $? "--help prints usage on stdout"
done_testing
