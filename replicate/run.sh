#!/usr/bin/env bash
# `make replicate`: the paper's ablations (Tables 5, 6 and 7) and its premise, re-run at small scale on the data the
# repo ships, with the project's command-line tools only; replicate/report.py then writes replicate_out/results.md
# (the paper's figures beside ours), the plots, and which claims hold at this scale.
#
# With one fixed budget per pretraining run (the same steps, batch, learning rate and data for each):
#   (a) mlm_nsp   masked LM + next sentence (BERT)                  run_pretraining.py
#   (b) mlm       masked LM only ("No NSP")                          run_pretraining.py --objective=mlm
#   (c) ltr       left-to-right LM with causal attention, no NSP     run_pretraining.py --objective=ltr
#   (d) size_*    MLM + NSP at two more shapes (with (a), three sizes)
# and each fine-tuned on the era task (data/classification) with every seed of $SEEDS, plus
#   (e) random    the (a) shape fine-tuned from random initialization
#   (f) features  the frozen (a) model: its last four layers, concatenated and averaged over the tokens, into a
#                 trained linear classifier (run_classifier.py --freeze_encoder)
# (c) is fine-tuned with the left-only constraint kept, as in the paper: its bert_config.json records it.
#
# A stage that finished (stamp $OUT/.done-<stage>, holding its duration in seconds) is skipped on a rerun; `make
# replicate-clean` starts over. `replicate/run.sh --quick` runs every stage at a token budget into replicate_out/quick/,
# to check the pipeline in a few minutes (its figures mean nothing). The plots need matplotlib
# (requirements-replicate.txt, which `make replicate` installs).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PY:-.venv/bin/python}
OUT=${OUT:-replicate_out}
export TF_CPP_MIN_LOG_LEVEL=2 CUDA_VISIBLE_DEVICES=""

# Sized for at most an hour on 2 idle AVX2-only cores (float32), the slower kind: 5 pretraining runs, then 21
# fine-tuning runs, each two at a time, with the demo's shapes of data (sequences of 64 tokens, round(0.15 * 64)
# masked slots), its model (BERT-Tiny's 2 x 128) and its fine-tuning (one epoch at 3e-4: see demo/run.sh for why).
# Measured there, two runs at a time: 0.32 s per step for 2x128's masked LM, 1.3 s for its left-to-right LM (it
# predicts all 63 next tokens through the 7,188-word softmax, not 10) and for 2x256, 0.25 s for 1x128; one epoch of
# fine-tuning 2x128 about 65 s. 1,000 steps leave the unigram stage behind (300 steps of 4x128 did not: every
# model predicted the most frequent words and fine-tuned to chance).
VOCAB_SIZE=8000 SEQ_LENGTH=64 MAX_PREDICTIONS=10 DUPE_FACTOR=5
PRETRAIN_STEPS=1000 PRETRAIN_BATCH=32
# At hidden size 128; a wider model gets it scaled by 128 / H. At 1e-3, 2x256 stayed at the unigram stage for all
# 1,000 steps (held-out masked-LM accuracy 6.5 %) and then fine-tuned to chance; at 5e-4 it was past 2x128's
# accuracy by step 300.
PRETRAIN_LR=1e-3
HELDOUT_STEPS=32   # held-out evaluation batches of 64 sequences
FINETUNE_EPOCHS=1 FINETUNE_BATCH=32 FINETUNE_LR=3e-4 FEATURE_LR=3e-3
SEEDS="1 2 3"
JOBS=2   # runs at once: a process of a model this small keeps about 1.5 of 2 cores busy (`make demo`: 10.6
         # CPU-minutes in 7.3 minutes), and start-up and tracing one (two fine-tunes: 30 s side by side, 49 s in turn)
MAIN_SHAPE=2x128   # (a), (b), (c), (e), (f); (f) concatenates its last four layers, here both
SIZE_SHAPES="1x128 2x256"   # (d), with MAIN_SHAPE the middle one
LABELS=1790-1860,1861-1945,1946-2021
if [[ ${1:-} == --quick ]]; then
    OUT=$OUT/quick VOCAB_SIZE=2000 DUPE_FACTOR=1 PRETRAIN_STEPS=20 HELDOUT_STEPS=2 FINETUNE_EPOCHS=0.1 SEEDS="1 2"
fi

# shellcheck source=demo/stages.sh
source demo/stages.sh

build_vocab() {
    "$PY" data_prep/build_vocab.py --input_file=data/corpus/sotu.txt --output_file="$OUT/vocab.txt" \
        --vocab_size=$VOCAB_SIZE
}

create_data() {
    mkdir -p "$OUT/data"
    "$PY" data_prep/create_pretraining_data.py --input_file=data/corpus/sotu.txt \
        --output_file="$OUT/data/train.tfrecord" --vocab_file="$OUT/vocab.txt" \
        --max_seq_length=$SEQ_LENGTH --max_predictions_per_seq=$MAX_PREDICTIONS --dupe_factor=$DUPE_FACTOR
    "$PY" data_prep/create_pretraining_data.py --input_file=data/corpus/sotu_heldout.txt \
        --output_file="$OUT/data/heldout.tfrecord" --vocab_file="$OUT/vocab.txt" \
        --max_seq_length=$SEQ_LENGTH --max_predictions_per_seq=$MAX_PREDICTIONS --dupe_factor=1
}

# write_config SHAPE: $OUT/configs/SHAPE.json for LAYERSxHIDDEN, heads of 64 wide (at least 2), FFN 4H.
write_config() {
    local layers=${1%x*} hidden=${1#*x}
    local heads=$((hidden / 64 > 2 ? hidden / 64 : 2))
    # BERT-Base's 0.02 scaled to the width (0.02 * sqrt(768 / H)), as demo/run.sh explains.
    local range
    range=$(awk -v h="$hidden" 'BEGIN { printf "%.3f", 0.02 * sqrt(768 / h) }')
    mkdir -p "$OUT/configs"
    cat >"$OUT/configs/$1.json" <<EOF
{"vocab_size": $(wc -l <"$OUT/vocab.txt"), "hidden_size": $hidden, "num_hidden_layers": $layers,
 "num_attention_heads": $heads, "intermediate_size": $((4 * hidden)), "hidden_act": "gelu",
 "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "max_position_embeddings": $SEQ_LENGTH,
 "type_vocab_size": 2, "initializer_range": $range}
EOF
}

# pretrain NAME SHAPE [FLAGS...]: trains into $OUT/pretrain/NAME, then evaluates on the held-out addresses.
pretrain() {
    local name=$1 shape=$2 learning_rate
    shift 2
    learning_rate=$(awk -v lr=$PRETRAIN_LR -v h="${shape#*x}" 'BEGIN { print lr * 128 / h }')
    local flags=(--bert_config_file="$OUT/configs/$shape.json" --vocab_file="$OUT/vocab.txt"
                 --output_dir="$OUT/pretrain/$name" --max_seq_length=$SEQ_LENGTH
                 --max_predictions_per_seq=$MAX_PREDICTIONS "$@")
    "$PY" run_pretraining.py "${flags[@]}" --input_file="$OUT/data/train.tfrecord" --do_train \
        --train_batch_size=$PRETRAIN_BATCH --learning_rate="$learning_rate" --num_train_steps=$PRETRAIN_STEPS \
        --num_warmup_steps=$((PRETRAIN_STEPS / 10)) --save_checkpoints_steps=$PRETRAIN_STEPS \
        --log_steps=$(((PRETRAIN_STEPS + 9) / 10))
    "$PY" run_pretraining.py "${flags[@]}" --input_file="$OUT/data/heldout.tfrecord" --do_eval \
        --eval_batch_size=64 --max_eval_steps=$HELDOUT_STEPS
}

# finetune VARIANT SEED CONFIG [FLAGS...]: the era task into $OUT/finetune/VARIANT-seedSEED, lines prefixed.
finetune() {
    local variant=$1 seed=$2 config=$3
    shift 3
    "$PY" run_classifier.py --task_name=single --label_list=$LABELS --data_dir=data/classification \
        --bert_config_file="$config" --vocab_file="$OUT/vocab.txt" \
        --output_dir="$OUT/finetune/$variant-seed$seed" --do_train --do_eval --max_seq_length=$SEQ_LENGTH \
        --train_batch_size=$FINETUNE_BATCH --eval_batch_size=64 --num_train_epochs=$FINETUNE_EPOCHS \
        --learning_rate=$FINETUNE_LR --seed="$seed" --log_steps=50 "$@" 2>&1 | sed -u "s/^/[$variant-$seed] /"
}

# The pretraining runs, as "STAGE|DESCRIPTION|COMMAND", longest first (the largest of SIZE_SHAPES, which lists them
# smallest first; then the left-to-right LM, which predicts every token), so that two at a time end close together.
pretrain_plan() {
    local budget="$PRETRAIN_STEPS steps of $PRETRAIN_BATCH sequences" largest=${SIZE_SHAPES##* } shape
    echo "pretrain-size_$largest|(d) MLM + NSP, $largest, $budget|pretrain size_$largest $largest"
    echo "pretrain-ltr|(c) left-to-right LM, no NSP, $MAIN_SHAPE, $budget|pretrain ltr $MAIN_SHAPE --objective=ltr"
    echo "pretrain-mlm_nsp|(a) MLM + NSP, $MAIN_SHAPE, $budget|pretrain mlm_nsp $MAIN_SHAPE"
    echo "pretrain-mlm|(b) MLM only (No NSP), $MAIN_SHAPE, $budget|pretrain mlm $MAIN_SHAPE --objective=mlm"
    for shape in $SIZE_SHAPES; do
        if [[ $shape != "$largest" ]]; then
            echo "pretrain-size_$shape|(d) MLM + NSP, $shape, $budget|pretrain size_$shape $shape"
        fi
    done
}

# The fine-tuning runs, every (variant, seed).
finetune_plan() {
    local pretrained=$OUT/pretrain main=$OUT/configs/$MAIN_SHAPE.json shape variant config flags seed
    {
        echo "mlm_nsp $main --init_checkpoint=$pretrained/mlm_nsp"
        echo "mlm $main --init_checkpoint=$pretrained/mlm"
        # The config the LTR run wrote records "causal_attention": true, so the fine-tuning keeps it left-only.
        echo "ltr $pretrained/ltr/bert_config.json --init_checkpoint=$pretrained/ltr"
        for shape in $SIZE_SHAPES; do
            echo "size_$shape $OUT/configs/$shape.json --init_checkpoint=$pretrained/size_$shape"
        done
        echo "random $main"
        echo "features $main --init_checkpoint=$pretrained/mlm_nsp --freeze_encoder --learning_rate=$FEATURE_LR"
    } | while read -r variant config flags; do
        for seed in $SEEDS; do
            echo "finetune-$variant-$seed|era task: $variant, seed $seed|finetune $variant $seed $config $flags"
        done
    done
}

# in_parallel: each "STAGE|DESCRIPTION|COMMAND" line of stdin as a stage, $JOBS at a time; fails at the end if any
# failed.
in_parallel() {
    local name description command failed=0
    while IFS='|' read -r name description command; do
        while (($(jobs -rp | wc -l) >= JOBS)); do
            wait -n || failed=1
        done
        # shellcheck disable=SC2086  # $command is a function and its arguments
        stage "$name" "$description" $command &
    done
    while (($(jobs -rp | wc -l) > 0)); do
        wait -n || failed=1
    done
    return $failed
}

mkdir -p "$OUT/logs"
stage vocab "WordPiece vocabulary (at most $VOCAB_SIZE tokens) from data/corpus/sotu.txt" build_vocab
stage data "pretraining TFRecords: sequences of $SEQ_LENGTH tokens, $DUPE_FACTOR maskings of the corpus" create_data
# Every config before the runs that read it, two at a time.
for shape in $MAIN_SHAPE $SIZE_SHAPES; do
    write_config "$shape"
done
# timed PHASE: the stages on stdin, $JOBS at a time; $OUT/.wall-PHASE adds up the wall seconds of every run of the
# script that finished any of them.
timed() {
    local start=$SECONDS before wall=$OUT/.wall-$1
    before=$(find "$OUT" -maxdepth 1 -name '.done-*' | wc -l)
    in_parallel || return
    if (($(find "$OUT" -maxdepth 1 -name '.done-*' | wc -l) > before)); then
        echo $(($(cat "$wall" 2>/dev/null || echo 0) + SECONDS - start)) >"$wall"
    fi
}
timed pretrain < <(pretrain_plan)
timed finetune < <(finetune_plan)
# The report is rewritten on every run (seconds): from whatever runs exist.
banner "report: $OUT/results.md, plots, and which of the paper's claims hold at this scale"
"$PY" replicate/report.py --output_dir="$OUT" --seeds="${SEEDS// /,}" --main_shape=$MAIN_SHAPE \
    --size_shapes="${SIZE_SHAPES// /,}" --pretrain_steps=$PRETRAIN_STEPS 2>&1 | sed -u -E "/$NOISE/d"
cat "$OUT/claims.txt"
