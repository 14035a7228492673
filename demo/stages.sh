# Sourced by demo/run.sh and replicate/run.sh: resumable stages with a banner, a log per stage and a stamp.
# Needs OUT (the output directory, with OUT/logs) set by the caller.

# TensorFlow's start-up lines (CUDA probing on a CPU-only machine, oneDNN notes) that TF_CPP_MIN_LOG_LEVEL
# does not silence: they are logged before absl logging is initialized (and may carry a [name] prefix).
NOISE='^(\[[a-z0-9_-]+\] )?([IW]0000 |E0000 .*(cuInit|oneDNN supports)'
NOISE+='|WARNING: All log messages before absl|To enable the following)'

banner() {
    printf '\n=== %s ===\n' "$*"
}

# stage NAME DESCRIPTION COMMAND...: runs COMMAND unless NAME's stamp exists, then writes the stamp (its seconds).
stage() {
    local name=$1 description=$2 start=$SECONDS
    shift 2
    if [[ -f $OUT/.done-$name ]]; then
        banner "$name: $description — done in an earlier run, skipped"
        return
    fi
    banner "$name: $description"
    "$@" 2>&1 | sed -u -E "/$NOISE/d" | tee "$OUT/logs/$name.log"
    echo $((SECONDS - start)) >"$OUT/.done-$name"
    echo "--- $name took $((SECONDS - start)) s"
}
