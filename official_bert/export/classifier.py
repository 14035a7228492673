"""The classification tasks' serving: text_a [, text_b] → probabilities and label (or score), in three signatures."""

import json

import tensorflow as tf

from official_bert.classification.errors import ClassificationDataError
from official_bert.classification.own_files import LABEL_FILE, MULTI_LABEL, REGRESSION, SINGLE_LABEL
from official_bert.export.saved_model import ServingSpec, export_saved_model
from official_bert.export.text import TextPacker
from official_bert.export.windows import document_windows, pool_documents
from official_bert.classification.windows import check_window_pooling


def classifier_outputs(label_list):
    """The postprocessing of a classifier's logits: {"logits", "probabilities", "label"}, or {"score"} with no
    label list (regression).

    Args:
        label_list: the label strings in id order (the choice indices for multiple choice), or None.

    Example:
    >>> outputs = classifier_outputs(["neg", "pos"])(tf.constant([[0.0, 2.0]]))
    >>> outputs["label"].numpy().tolist(), [round(p, 3) for p in outputs["probabilities"][0].numpy().tolist()]
    ([b'pos'], [0.119, 0.881])
    >>> classifier_outputs(None)(tf.constant([[3.5]]))["score"].numpy().tolist()
    [3.5]
    """
    if label_list is None:
        return lambda scores: {"score": scores[:, 0]}
    labels = tf.constant(list(label_list))

    def outputs(logits):
        return {"logits": logits, "probabilities": tf.nn.softmax(logits, axis=-1),
                "label": tf.gather(labels, tf.argmax(logits, axis=-1))}

    return outputs


def multi_label_outputs(label_list, thresholds):
    """The postprocessing of a multi-label classifier's logits: {"logits", "probabilities" (each label's sigmoid),
    "predicted" (bool: the probability is at least the label's threshold), "labels" (the predicted labels of each
    row, padded with "" to the longest row's count)}.

    Args:
        label_list: the label strings in id order.
        thresholds: each label's decision threshold.

    Example:
    >>> outputs = multi_label_outputs(["bug", "ui", "login"], [0.5, 0.5, 0.2])(tf.constant([[2.0, -2.0, -1.0]]))
    >>> outputs["labels"].numpy().tolist(), outputs["predicted"].numpy().tolist()
    ([[b'bug', b'login']], [[True, False, True]])
    >>> outputs = multi_label_outputs(["bug", "ui", "login"], [0.5, 0.5, 0.2])(tf.constant([[-2.0, 2.0, -2.0],
    ...                                                                                 [2.0, 2.0, 2.0]]))
    >>> outputs["labels"].numpy().tolist()  # each row padded with "" to the longest row's count
    [[b'ui', b'', b''], [b'bug', b'ui', b'login']]
    """
    # "" after the labels: the name gathered for a slot past a row's last predicted label.
    names, thresholds = tf.constant(list(label_list) + [""]), tf.constant(list(thresholds), tf.float32)
    no_label = len(label_list)

    def outputs(logits):
        probabilities = tf.sigmoid(logits)
        predicted = probabilities >= thresholds
        # Each row's predicted label ids first, in id order (a sort on "not predicted" that keeps ties in order), the
        # others as "", cut to the longest row's count: dense ops only, which LiteRT's builtins convert (a ragged
        # boolean mask does not).
        order = tf.argsort(tf.cast(tf.logical_not(predicted), tf.int32), axis=-1, stable=True)
        ids = tf.where(tf.gather(predicted, order, batch_dims=1), order, no_label)
        width = tf.reduce_max(tf.reduce_sum(tf.cast(predicted, tf.int32), axis=-1))
        return {"logits": logits, "probabilities": probabilities, "predicted": predicted,
                "labels": tf.gather(names, ids[:, :width])}

    return outputs


def classifier_serving_spec(tokenizer, seq_length, label_list, *, text_b=False, num_choices=None, doc_stride=0,
                            window_pooling="mean", pad_to_longest=True, thresholds=None):
    """The `ServingSpec` of a sentence (pair) classifier or a multiple-choice model.

    The raw-text inputs are `text_a` [batch], plus `text_b` [batch] for sentence-pair tasks, or the endings
    `text_b` [batch, num_choices] for multiple choice (text_a then being the context). Each request is padded
    to its longest sequence only (at most seq_length): the outputs are the same, a short text is faster. The
    version's `labels.json` (beside saved_model.pb) records the kind ("single_label", "multi_label", "regression" or
    "multiple_choice") and the labels in output order, for the tools that read an export as a model
    (bert-distill's --teacher).

    With doc_stride, a text_a longer than the window is cut into windows, as run_classifier --doc_stride cuts
    it (`export.windows`), and a document's logits (or score) are the mean (or max) of its windows'.

    Args:
        tokenizer: the model's `TokenizerSpec` (its in-graph layer tokenizes the requests).
        seq_length: the max_seq_length the model was trained with.
        label_list: the label strings in id order, or None for regression.
        text_b: whether the task has a second sentence.
        num_choices: C for multiple choice, else None.
        doc_stride: --doc_stride: 0 truncates long texts, as the original.
        window_pooling: --window_pooling, "mean" or "max".
        pad_to_longest: pad a request to its longest sequence; False pads every one to seq_length.
        thresholds: a multi-label model's decision threshold per label (`multi_label_outputs`), or None.

    Example:
    >>> import os, tempfile
    >>> from official_bert.text.tokenizer_spec import TokenizerSpec
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nswim\\n")
    >>> spec = classifier_serving_spec(TokenizerSpec(vocab), 8, ["0", "1", "2", "3"], num_choices=4)
    >>> {name: input.shape.as_list() for name, input in spec.text_inputs.items()}, spec.input_shape
    ({'text_a': [None], 'text_b': [None, 4]}, (4, 8))
    """
    tokenizer = tokenizer.layer()
    packer = TextPacker(tokenizer, seq_length, pad_to_longest)
    postprocess = classifier_outputs(label_list) if thresholds is None else multi_label_outputs(label_list, thresholds)
    text = tf.TensorSpec([None], tf.string)
    kind = ("multiple_choice" if num_choices else REGRESSION if label_list is None else
            MULTI_LABEL if thresholds is not None else SINGLE_LABEL)
    extra = {LABEL_FILE: json.dumps({"kind": kind, "labels": list(label_list) if label_list else None}, indent=2)}
    if doc_stride:
        check_window_pooling(window_pooling)
        if num_choices:
            raise ClassificationDataError(f"--doc_stride={doc_stride}: multiple-choice models are not served with "
                                          "windows; leave --doc_stride unset")

        def serve_windows(call_model, text_a, text_b=None):
            windows = document_windows(packer, seq_length, doc_stride, text_a, text_b)
            return postprocess(pool_documents(call_model(windows.inputs), windows.example, window_pooling))

        return ServingSpec({"text_a": text, "text_b": text} if text_b else {"text_a": text}, serve_windows,
                           postprocess, (seq_length,), (tokenizer,), extra)
    if num_choices:
        return ServingSpec({"text_a": text, "text_b": tf.TensorSpec([None, num_choices], tf.string)},
                           lambda call_model, text_a, text_b: postprocess(call_model(packer.pack_choices(text_a,
                                                                                                         text_b))),
                           postprocess, (num_choices, seq_length), (tokenizer,), extra)
    inputs = {"text_a": text, "text_b": text} if text_b else {"text_a": text}
    return ServingSpec(inputs, lambda call_model, **texts: postprocess(call_model(packer.pack(**texts))),
                       postprocess, (seq_length,), (tokenizer,), extra)


def export_classifier(export_dir, model, tokenizer, seq_length, label_list, *, text_b=False, num_choices=None,
                      **serving):
    """Exports a `BertClassifier` (or `BertMultipleChoice`) as the next version in export_dir; returns its path.

    The signatures are those of `export_saved_model`: serving_default takes raw text — `text_a` [batch], plus
    `text_b` for sentence pairs (for multiple choice, the endings [batch, num_choices] with text_a the context) —
    and, like the others, returns logits, probabilities and label (or score). serve_tensors and serve_examples
    take one row per window (the caller windows long texts). Each request is padded to its own longest sequence.

    Args:
        export_dir: the directory of versions, as TF Serving's --model_base_path.
        model: the trained model.
        tokenizer: the model's `TokenizerSpec` (its in-graph layer tokenizes the requests).
        seq_length: the max_seq_length the model was trained with.
        label_list: the label strings in id order, or None for regression.
        text_b: whether the task has a second sentence.
        num_choices: the number of endings for multiple choice, else None.
        **serving: `doc_stride` (0, the default, truncates long texts as the original; N cuts text_a into
            windows N tokens apart, as run_classifier.py --doc_stride), `window_pooling` ("mean" or "max" of the
            windows' logits), `pad_to_longest` (False pads every request to seq_length) and `thresholds` (a
            multi-label model's decision threshold per label).
    """
    spec = classifier_serving_spec(tokenizer, seq_length, label_list, text_b=text_b, num_choices=num_choices,
                                   **serving)
    return export_saved_model(export_dir, model, spec)
