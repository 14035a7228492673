#!/usr/bin/env bash
# `make demo`: BERT's recipe end to end at small scale, on the State of the Union data in data/ (see data/README.md),
# with the project's command-line tools only. Everything goes to demo_out/, each stage's output also to
# demo_out/logs/<stage>.log. A stage that finished (its stamp demo_out/.done-<stage> holds its duration in seconds)
# is skipped on a rerun; `make demo-clean` starts over.
#
#   1. vocab      data_prep/build_vocab.py: a WordPiece vocabulary learned from data/corpus/sotu.txt
#   2. data       data_prep/create_pretraining_data.py: masked-LM + next-sentence TFRecords from the corpus, and
#                 from the held-out addresses (data/corpus/sotu_heldout.txt) to evaluate on
#   3. pretrain   run_pretraining.py: a small BERT, for as many steps as fit the machine's speed (timed on its
#                 first steps), then its MLM/NSP accuracy on the held-out addresses
#   4. fill-mask  fill_mask.py: the pretrained model fills in the blanks of data/fill_in_the_blank.txt
#   5. finetune   run_classifier.py, twice at once, on which era a passage is from (data/classification: 3 eras,
#                 chance 1/3, dev passages from the held-out addresses), with the same settings: from the
#                 pretrained weights (then exported as a SavedModel) and from random initialization
#   6. serve      query_saved_model.py: the SavedModel, loaded in a new process, labels raw dev passages
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PY:-.venv/bin/python}
OUT=demo_out
STAGES=(vocab data pretrain fill-mask finetune serve)
export TF_CPP_MIN_LOG_LEVEL=2 CUDA_VISIBLE_DEVICES=""

# Sized for at most 10 minutes on 2 idle CPU cores of either kind, with AVX-512 (and bf16) or AVX2 only (7 min 16 s
# on an AMD EPYC with AVX2, 4,000 pretraining steps at 438 sequences/s). Sequences of 64 tokens (most passages of
# the era task are shorter) cost less than half of 128's; and pretraining first times PROBE_STEPS steps, then
# resumes from them with as many steps as fit in PRETRAIN_SECONDS at that speed, from PRETRAIN_MIN_STEPS to
# PRETRAIN_MAX_STEPS. PRETRAIN_STEPS=N skips the timing.
VOCAB_SIZE=8000
HIDDEN=128 LAYERS=2 HEADS=2 INTERMEDIATE=512   # BERT-Tiny's shape
# BERT-Base's 0.02 scaled to this width (0.02 * sqrt(768 / 128)), so that attention starts as far from uniform as
# BERT-Base's: with 0.02 and this learning rate, the masked LM stalled at predicting "the" (7 % accuracy).
INITIALIZER_RANGE=0.05
SEQ_LENGTH=64
# round(0.15 * 64): the most the masking takes from a sequence of 64 tokens, so the masks are those of the default
# 20, without 10 padded slots per sequence in the masked-LM head.
MAX_PREDICTIONS=10
# Training reads the ~60k sequences of 5 maskings at most about twice. (create_pretraining_data shuffles within
# 1 MiB blocks, about an era of this date-ordered corpus each, so batches drift from era to era. Two maskings,
# which the reader's 10,000-record shuffle buffer mixes whole, did worse: read 6 times, the NSP pairs were learned
# by heart.)
DUPE_FACTOR=5
PRETRAIN_BATCH=32 PRETRAIN_LR=1e-3
# Up to 4,000 steps because the lead over random init needs them: fine-tuned (seeds 1, 2, 3) from 2,000 steps, the
# era classifier scored 62.0 / 63.2 / 62.2 % against random init's 61.0 / 60.7 / 65.0; from 4,000, 70.3 / 69.7 /
# 69.8 % (2 AVX2 cores pretrain them in about 5.5 minutes).
PROBE_STEPS=100 PRETRAIN_SECONDS=${PRETRAIN_SECONDS:-320} PRETRAIN_MIN_STEPS=500 PRETRAIN_MAX_STEPS=4000
# The probe is the warmup: until its end the learning rate does not depend on --num_train_steps, so the probe's
# steps are exactly the first steps of the full run, which resumes from them.
PRETRAIN_WARMUP=$PROBE_STEPS
# One epoch: the pretrained encoder's lead is largest early (measured on AVX2 from 4,000 pretraining steps: 69.7 %
# against 56.5 % after one epoch, at the default seed); on this easy word-choice task, random init catches up in 3
# epochs (72.8 against 73.8 at 3e-4). 3e-4 rather than 1e-4: from 800 steps, both ended at 63.3 % after 3 epochs at
# 1e-4.
FINETUNE_EPOCHS=1 FINETUNE_BATCH=32 FINETUNE_LR=3e-4
# bf16 where the CPU computes it natively (AVX512_BF16, AMX: about 20 % faster), float32 where it would be
# emulated (AVX2 only: 28 % more CPU per step).
MIXED_PRECISION=auto
LABELS=1790-1860,1861-1945,1946-2021

# shellcheck source=demo/stages.sh
source demo/stages.sh

build_vocab() {
    "$PY" data_prep/build_vocab.py --input_file=data/corpus/sotu.txt --output_file="$OUT/vocab.txt" \
        --vocab_size=$VOCAB_SIZE
}

create_data() {
    mkdir -p "$OUT/pretraining_data"
    "$PY" data_prep/create_pretraining_data.py --input_file=data/corpus/sotu.txt \
        --output_file="$OUT/pretraining_data/train.tfrecord" --vocab_file="$OUT/vocab.txt" \
        --max_seq_length=$SEQ_LENGTH --max_predictions_per_seq=$MAX_PREDICTIONS --dupe_factor=$DUPE_FACTOR
    "$PY" data_prep/create_pretraining_data.py --input_file=data/corpus/sotu_heldout.txt \
        --output_file="$OUT/pretraining_data/heldout.tfrecord" --vocab_file="$OUT/vocab.txt" \
        --max_seq_length=$SEQ_LENGTH --max_predictions_per_seq=$MAX_PREDICTIONS --dupe_factor=1
}

pretrain() {
    # The vocabulary learner stops at the pieces it finds, so the model's vocab_size is the file's length.
    cat >"$OUT/bert_config.json" <<EOF
{"vocab_size": $(wc -l <"$OUT/vocab.txt"), "hidden_size": $HIDDEN, "num_hidden_layers": $LAYERS,
 "num_attention_heads": $HEADS, "intermediate_size": $INTERMEDIATE, "hidden_act": "gelu",
 "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "max_position_embeddings": $SEQ_LENGTH,
 "type_vocab_size": 2, "initializer_range": $INITIALIZER_RANGE}
EOF
    local flags=(--bert_config_file="$OUT/bert_config.json" --vocab_file="$OUT/vocab.txt"
                 --output_dir="$OUT/pretrained" --max_seq_length=$SEQ_LENGTH --max_predictions_per_seq=$MAX_PREDICTIONS
                 --mixed_precision=$MIXED_PRECISION)
    local train=(--input_file="$OUT/pretraining_data/train.tfrecord" --do_train --train_batch_size=$PRETRAIN_BATCH
                 --learning_rate=$PRETRAIN_LR --num_warmup_steps=$PRETRAIN_WARMUP --save_checkpoints_steps=500)
    local steps=${PRETRAIN_STEPS:-}
    if [[ -z $steps ]]; then
        # The probe's second half is timed (the first includes tracing); the run below resumes after it.
        "$PY" run_pretraining.py "${flags[@]}" "${train[@]}" --num_train_steps=$PROBE_STEPS \
            --log_steps=$((PROBE_STEPS / 2)) 2>&1 | tee "$OUT/logs/pretrain-probe.log"
        local rate
        rate=$(grep -o 'sequences_per_second [0-9.]*' "$OUT/logs/pretrain-probe.log" | tail -1 | cut -d' ' -f2)
        steps=$(awk -v rate="$rate" -v seconds=$PRETRAIN_SECONDS -v batch=$PRETRAIN_BATCH \
                    -v low=$PRETRAIN_MIN_STEPS -v high=$PRETRAIN_MAX_STEPS \
                    'BEGIN { n = int(rate * seconds / batch / 100) * 100; print (n < low ? low : n > high ? high : n) }')
        echo "--- this machine pretrains $rate sequences/s: $steps steps fit in about $PRETRAIN_SECONDS s" \
             "(chosen from $PRETRAIN_MIN_STEPS to $PRETRAIN_MAX_STEPS; PRETRAIN_STEPS=N sets it)"
    fi
    echo "$steps" >"$OUT/pretrain_steps"
    "$PY" run_pretraining.py "${flags[@]}" "${train[@]}" --num_train_steps="$steps" --log_steps=$((steps / 10))
    # On the held-out addresses: text the model has not seen.
    "$PY" run_pretraining.py "${flags[@]}" --input_file="$OUT/pretraining_data/heldout.tfrecord" --do_eval \
        --eval_batch_size=64 --max_eval_steps=32
}

fill_in_the_blanks() {
    "$PY" fill_mask.py --bert_config_file="$OUT/pretrained/bert_config.json" \
        --vocab_file="$OUT/pretrained/vocab.txt" --init_checkpoint="$OUT/pretrained" \
        --input_file=data/fill_in_the_blank.txt --top_k=5 | tee "$OUT/fill_in_the_blank.txt"
}

# finetune NAME [FLAGS...]: the era task into $OUT/classifier_NAME, its output lines prefixed with [NAME].
finetune() {
    local name=$1
    shift
    "$PY" run_classifier.py --task_name=single --label_list=$LABELS --data_dir=data/classification \
        --bert_config_file="$OUT/pretrained/bert_config.json" --vocab_file="$OUT/pretrained/vocab.txt" \
        --output_dir="$OUT/classifier_$name" --do_train --do_eval --max_seq_length=$SEQ_LENGTH \
        --train_batch_size=$FINETUNE_BATCH --eval_batch_size=64 --learning_rate=$FINETUNE_LR \
        --num_train_epochs=$FINETUNE_EPOCHS --log_steps=50 --mixed_precision=$MIXED_PRECISION "$@" 2>&1 |
        sed -u "s/^/[$name] /"
}

# Side by side, the two runs took 30 s on 2 AVX2 cores against 49 s one after the other: most of a run is start-up
# and tracing, which keep one core busy.
finetune_both() {
    finetune pretrained --init_checkpoint="$OUT/pretrained" --export_dir="$OUT/export" &
    local pretrained=$!
    finetune random &
    local random=$! failed=0
    wait $pretrained || failed=1
    wait $random || failed=1
    return $failed
}

# The first dev passage of each era, as raw text.
dev_passage() {
    awk -F'\t' -v label="$1" '$2 == label { print $1; exit }' data/classification/dev.tsv
}

serve() {
    local inputs=() label passage row=0
    for label in ${LABELS//,/ }; do
        passage=$(dev_passage "$label")
        inputs+=(--input="text_a=$passage")
        echo "[$((row += 1))] from $label: ${passage:0:100}..."
    done
    "$PY" query_saved_model.py --saved_model_dir="$OUT/export" "${inputs[@]}" | tee "$OUT/query.txt"
}

# percent FILE KEY: KEY's value in an eval_results.txt ("key = value" lines), as a percentage.
percent() {
    awk -v key="$2" '$1 == key { printf "%.1f %%", 100 * $3 }' "$1"
}

# progress KEY: KEY's value on the training batches at the first and the last progress line of pretraining (the
# probe's lines, "step N/$PROBE_STEPS", left out).
progress() {
    grep -o "step [0-9]*/$(cat "$OUT/pretrain_steps") .*" "$OUT/logs/pretrain.log" |
        sed -E "s#step ([0-9]+)/.* $1 ([0-9.]+).*#\1 \2#" |
        awk 'NR == 1 { first = sprintf("%.1f %% at step %d", 100 * $2, $1) }
             END { printf "%s -> %.1f %% at step %d", first, 100 * $2, $1 }'
}

mkdir -p "$OUT/logs"
stage vocab "WordPiece vocabulary (at most $VOCAB_SIZE tokens) from data/corpus/sotu.txt" build_vocab
stage data "pretraining TFRecords: sequences of $SEQ_LENGTH tokens, $DUPE_FACTOR maskings of the corpus" create_data
stage pretrain "pretraining BERT (L=$LAYERS H=$HIDDEN), steps of $PRETRAIN_BATCH sequences" pretrain
stage fill-mask "filling in the blanks of held-out sentences (data/fill_in_the_blank.txt)" fill_in_the_blanks
stage finetune "era classification, from the pretrained weights and from random initialization" finetune_both
stage serve "the exported SavedModel, in a new process, on one dev passage of each era" serve

banner "summary"
total=0 times=""
for name in "${STAGES[@]}"; do
    seconds=$(cat "$OUT/.done-$name")
    times+="$name $seconds s, "
    total=$((total + seconds))
done
pretrained=$OUT/pretrained/eval_results.txt
cat <<EOF
Pretraining ($(cat "$OUT/pretrain_steps") steps), on the training batches and on the held-out addresses:
    masked LM accuracy      $(progress masked_lm_accuracy); held-out $(percent "$pretrained" masked_lm_accuracy)
    next-sentence accuracy  $(progress next_sentence_accuracy); held-out $(percent "$pretrained" next_sentence_accuracy)
Era of a passage, dev accuracy (chance 33.3 %):
    pretrained BERT         $(percent "$OUT/classifier_pretrained/eval_results.txt" eval_accuracy)
    random initialization   $(percent "$OUT/classifier_random/eval_results.txt" eval_accuracy)
SavedModel's eras for dev passages from ${LABELS//,/, }: $(awk '$1 == "label:" { printf "%s%s", sep, $2; sep = ", " }' "$OUT/query.txt")
Stage times: ${times}total $total s
Artifacts:
    $OUT/vocab.txt                  the WordPiece vocabulary
    $OUT/pretraining_data/          train.tfrecord, heldout.tfrecord
    $OUT/pretrained/                the pretrained checkpoint, bert_config.json, vocab.txt, eval_results.txt
    $OUT/fill_in_the_blank.txt      the fill-in-the-blank predictions
    $OUT/classifier_pretrained/     fine-tuned from the pretrained weights: checkpoints, eval_results.txt
    $OUT/classifier_random/         fine-tuned from random initialization: checkpoints, eval_results.txt
    $OUT/export/                    the SavedModel (its newest numbered version), for TF Serving
    $OUT/query.txt                  the SavedModel's answers
    $OUT/logs/                      each stage's output
EOF
