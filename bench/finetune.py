"""Fine-tuning epoch time on real sentences: official_bert (per-batch or fixed padding) against KerasHub.

    python -m bench.finetune --shape minilm [--framework all] [--sentences 560] [--max_steps N]

The training set is data/classification (State of the Union passages, three eras) cut into sentences, ~25
WordPiece tokens each, tokenized with a vocabulary learned from data/corpus and filled to BERT's 30,522 tokens (the
embedding table's size is part of each update's cost). Each framework trains from random weights at
--seq_length=128, batch 32, for two epochs; the figure is the second epoch's wall time (tracing excluded; the
per-epoch work — checkpoint, next input — included), as a user of `run_classifier.py --do_train` or of
`BertTextClassifier.fit` sees it:

- official_bert: the run_classifier library (cached features, `FineTuningRun`, the training stream) with each batch
  padded to its longest sentence rounded up to 8 (`--length_bucket_width=8`, the default), or to 128 (`=0`), or
  padded per batch with batches of similar lengths (`--bucket_by_length`);
- keras_hub: `BertTextClassifier` with its own `BertTextClassifierPreprocessor(sequence_length=128)` on the raw
  sentences, compiled with its defaults, in a child process (so that neither model's memory is the other's).

--max_steps caps an epoch (the base shape on a CPU: a few steps); its steps' time is then scaled to a whole epoch's
(the work between epochs counted once).
The last line is `epoch seconds: official_bert_dynamic <s> official_bert_bucketed <s> official_bert_fixed <s>
keras_hub <s>; ...` and KerasHub's time over each of ours.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import keras
import tensorflow as tf

from official_bert import BertConfig, BertEncoder, distribution
from official_bert.classification import get_processor, load_or_create_features
from official_bert.finetuning import FineTuningRun, Schedule
from official_bert.tasks.classification import classifier_loss, classifier_metrics, classifier_model, train_records
from official_bert.tokenization import FullTokenizer
from official_bert.training import TrainingOptions
from official_bert.text.vocab_builder import build_vocab

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SHAPES = {"mini": (4, 256, 4, 1024), "minilm": (6, 384, 12, 1536), "base": (12, 768, 12, 3072)}
FRAMEWORKS = ("official_bert_dynamic", "official_bert_bucketed", "official_bert_fixed", "keras_hub")
VOCAB_SIZE = 30522


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="minilm", choices=list(SHAPES))
    parser.add_argument("--framework", default="all", choices=("all",) + FRAMEWORKS)
    parser.add_argument("--sentences", type=int, default=560, help="training sentences (an epoch)")
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--max_steps", type=int, default=None, help="steps timed per epoch (then scaled)")
    parser.add_argument("--work_dir", default=None, help="where the data, vocabulary and runs go (default: temp)")
    return parser.parse_args()


def sentences(limit):
    """(sentence, era) pairs: data/classification's training passages cut at sentence ends."""
    pairs = []
    with open(os.path.join(REPO, "data", "classification", "train.tsv"), encoding="utf-8") as f:
        next(f)
        for line in f:
            passage, label = line.rstrip("\n").split("\t")
            for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])", passage):
                if len(sentence.split()) >= 3:
                    pairs.append((sentence, label))
    return pairs[:limit]


def prepare(work_dir, limit):
    """Writes the sentences as a `single` task and a vocabulary; returns (data_dir, vocab path, pairs, labels)."""
    pairs = sentences(limit)
    data_dir = os.path.join(work_dir, "data")
    os.makedirs(data_dir, exist_ok=True)
    with open(os.path.join(data_dir, "train.tsv"), "w", encoding="utf-8") as f:
        f.write("sentence\tlabel\n" + "".join(f"{s}\t{label}\n" for s, label in pairs))
    vocab = os.path.join(work_dir, "vocab.txt")
    if not os.path.exists(vocab):
        tokens = build_vocab([os.path.join(REPO, "data", "corpus", "sotu.txt")], vocab, 8000)
        with open(vocab, "w", encoding="utf-8") as f:
            f.write("\n".join(tokens + [f"[unused{i}]" for i in range(VOCAB_SIZE - len(tokens))]) + "\n")
    return data_dir, vocab, pairs, sorted({label for _, label in pairs})


def config_of(shape):
    layers, hidden, heads, intermediate = SHAPES[shape]
    return BertConfig(vocab_size=VOCAB_SIZE, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                      intermediate_size=intermediate)


class EpochClock(keras.callbacks.Callback):
    """The wall times at the start and at the end of each `fit` (one per epoch here)."""

    def __init__(self):
        super().__init__()
        self.begins, self.ends = [], []

    def on_train_begin(self, logs=None):
        self.begins.append(time.perf_counter())

    def on_train_end(self, logs=None):
        self.ends.append(time.perf_counter())

    def epoch_seconds(self, steps, epoch_steps):
        """The second epoch's wall time, its `steps` scaled to `epoch_steps`: the work between the two fits (the
        checkpoint, the next input) is counted once, as a whole epoch has it once."""
        between = self.begins[1] - self.ends[0]
        return between + (self.ends[1] - self.begins[1]) * epoch_steps / steps


def time_official_bert(args, work_dir, bucket_width, bucket_by_length=False):
    data_dir, vocab, pairs, labels = prepare(work_dir, args.sentences)
    processor = get_processor("single", data_dir, label_list=",".join(labels))
    output_dir = tempfile.mkdtemp(dir=work_dir)
    train = load_or_create_features(processor, "train", FullTokenizer(vocab), args.seq_length, output_dir,
                                    tokenizer_file=vocab, do_lower_case=True)
    steps = train.num_examples // args.batch_size
    if args.max_steps:
        steps = min(steps, args.max_steps)
    keras.utils.set_random_seed(1)
    strategy = distribution.get_strategy("one_device")
    with strategy.scope():
        model = classifier_model(BertEncoder(config_of(args.shape)), processor)
    options = TrainingOptions(output_dir, train_batch_size=args.batch_size, learning_rate=5e-5)
    run = FineTuningRun(model, classifier_loss(processor), options, Schedule(steps, 2 * steps, steps // 5),
                        strategy, classifier_metrics(processor))
    clock = EpochClock()
    run.train(train_records(train).dataset_fn(args.batch_size, 1, bucket_width, bucket_by_length), callbacks=[clock])
    return clock.epoch_seconds(steps, train.num_examples // args.batch_size)


def time_keras_hub(args, work_dir):
    import keras_hub

    _, vocab, pairs, labels = prepare(work_dir, args.sentences)
    with open(vocab, encoding="utf-8") as f:
        vocabulary = [line.rstrip("\n") for line in f]
    config = config_of(args.shape)
    keras.utils.set_random_seed(1)
    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=VOCAB_SIZE, num_layers=config.num_hidden_layers, num_heads=config.num_attention_heads,
        hidden_dim=config.hidden_size, intermediate_dim=config.intermediate_size,
        max_sequence_length=config.max_position_embeddings)
    preprocessor = keras_hub.models.BertTextClassifierPreprocessor(
        keras_hub.models.BertTokenizer(vocabulary=vocabulary, lowercase=True), sequence_length=args.seq_length)
    classifier = keras_hub.models.BertTextClassifier(backbone, num_classes=len(labels), preprocessor=preprocessor)
    classifier.compile()  # KerasHub's defaults: Adam(5e-5), cross-entropy, accuracy
    x = [s for s, _ in pairs]
    y = [labels.index(label) for _, label in pairs]
    steps = len(x) // args.batch_size if not args.max_steps else min(args.max_steps, len(x) // args.batch_size)
    clock = EpochClock()
    data = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=1).batch(args.batch_size,
                                                                                      drop_remainder=True)
    data = data.repeat()  # fit maps the preprocessor over it
    for _ in range(2):
        classifier.fit(data, steps_per_epoch=steps, epochs=1, verbose=0, callbacks=[clock])
    return clock.epoch_seconds(steps, len(x) // args.batch_size)


def main():
    args = parse_args()
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="bench_finetune_")
    if args.framework != "all":
        seconds = {"official_bert_dynamic": lambda: time_official_bert(args, work_dir, 8),
                   "official_bert_bucketed": lambda: time_official_bert(args, work_dir, 8, bucket_by_length=True),
                   "official_bert_fixed": lambda: time_official_bert(args, work_dir, None),
                   "keras_hub": lambda: time_keras_hub(args, work_dir)}[args.framework]()
        print(json.dumps({args.framework: seconds}), flush=True)
        return
    _, vocab, pairs, _ = prepare(work_dir, args.sentences)
    tokenizer = FullTokenizer(vocab)
    lengths = sorted(len(tokenizer.tokenize(s)) + 2 for s, _ in pairs)
    print(f"shape {args.shape} {SHAPES[args.shape]}, {len(pairs)} sentences of {lengths[len(lengths) // 2]} tokens "
          f"(median; 90th percentile {lengths[len(lengths) * 9 // 10]}), seq_length {args.seq_length}, batch "
          f"{args.batch_size}", flush=True)
    results = {}
    for framework in FRAMEWORKS:  # each in its own process
        argv = [sys.executable, "-m", "bench.finetune", *sys.argv[1:], f"--framework={framework}",
                f"--work_dir={work_dir}"]
        child = subprocess.run(argv, stdout=subprocess.PIPE, text=True, check=True, cwd=REPO)
        results.update(json.loads(child.stdout.strip().splitlines()[-1]))
        print(f"{framework}: {results[framework]:.1f} s per epoch", flush=True)
    print("epoch seconds: " + " ".join(f"{name} {results[name]:.2f}" for name in FRAMEWORKS) + "; " + ", ".join(
        f"keras_hub / {name} {results['keras_hub'] / results[name]:.2f}" for name in FRAMEWORKS[:-1]))


if __name__ == "__main__":
    main()
