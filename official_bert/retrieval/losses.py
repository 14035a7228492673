"""The losses of sentence-transformers for training embeddings, as Keras losses on a batch's embeddings.

`y_pred` is the batch's embeddings, [B, C, D]: C texts a row (column 0 the anchor, 1 the positive, 2... hard
negatives; or the two texts of a scored pair). Each loss computes what sentence-transformers' loss of the same name
computes on the same embeddings (its default similarity, cosine, and its default scale 20):

- `MultipleNegativesRankingLoss`: softmax cross-entropy of each anchor over every positive and negative of the
  batch (in-batch negatives), its own positive the target; with `symmetric` also each positive over every anchor
  (sentence-transformers' directions ("query_to_doc", "doc_to_query"), partition_mode "per_direction": the two log
  normalisers averaged). `y_true` holds the batch's text ids ([B, C], `batch_text_ids`): a candidate whose text is
  the anchor's or its positive's (the same passage positive for two queries, say) is left out of that row's
  softmax, as sentence-transformers' NoDuplicatesBatchSampler keeps such texts out of one batch.
- `CachedMultipleNegativesRankingLoss`: the same loss; the model computes its gradient in mini-batches
  (GradCache, `retrieval.contrastive_model`).
- `CoSENTLoss` (scored pairs, y_true the scores): log(1 + Σ exp(s_i − s_j)) over the pairs (i, j) whose score i is
  below score j, s the scaled cosine similarities.
- `CosineSimilarityLoss` (scored pairs): the mean squared error of the cosine similarity against the score.
- `MatryoshkaLoss`: another loss's weighted sum over embeddings truncated to several widths (each renormalised).
"""

import keras
from keras import ops
import tensorflow as tf

SCALE = 20.0  # sentence-transformers' scale of the cosine similarities (a temperature of 0.05)
_MIN_NORM = 1e-12  # torch.nn.functional.normalize's smallest norm, as sentence-transformers' cos_sim divides by


def row_targets(loss):
    """What `loss` takes as y_true for rows of texts: "text_ids" (the ranking losses: `batch_text_ids`), "scores"
    (the scored-pair losses), or None for a loss of another kind.

    Example:
    >>> row_targets(MatryoshkaLoss(CoSENTLoss(), [8])), row_targets(MultipleNegativesRankingLoss()), row_targets("mse")
    ('scores', 'text_ids', None)
    """
    return getattr(loss, "targets", None) if isinstance(loss, keras.losses.Loss) else None


def l2_normalize(x):
    """`x` divided by its L2 norm along the last axis (at least 1e-12), as torch's `F.normalize`.

    Example:
    >>> l2_normalize(tf.constant([[3.0, 4.0], [0.0, 0.0]])).numpy().tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    return x / ops.maximum(ops.sqrt(ops.sum(ops.square(x), axis=-1, keepdims=True)), _MIN_NORM)


def batch_text_ids(text_ids):
    """The texts of a batch numbered by their first occurrence in it ([B, C] int → float32 [B, C]): equal texts get
    equal numbers, which stay exact in float32 (Keras casts a loss's targets to the loss's dtype) however many
    texts the data set holds.

    Args:
        text_ids: each text's id in the data set (equal ids for equal texts), [B, C].

    Example:
    >>> batch_text_ids(tf.constant([[90000001, 7], [5, 90000001]], tf.int64)).numpy().tolist()
    [[0.0, 1.0], [2.0, 0.0]]
    """
    text_ids = tf.convert_to_tensor(text_ids)
    _, index = tf.unique(tf.reshape(text_ids, [-1]))
    return tf.cast(tf.reshape(index, tf.shape(text_ids)), tf.float32)


@keras.saving.register_keras_serializable(package="official_bert")
class MultipleNegativesRankingLoss(keras.losses.Loss):
    """In-batch negatives: for each anchor, softmax cross-entropy over the cosine similarities (× `scale`) to every
    positive and hard negative of the batch, its own positive the target (see the module's docstring).

    Args:
        scale (float): the cosine similarities' multiplier (1 / temperature; sentence-transformers' 20).
        symmetric (bool): add the backward term (each positive over every anchor), the two log normalisers averaged.
        name (str): the loss's name.
        **kwargs: passed to keras.losses.Loss.

    Call args:
        y_true: [B, C] the batch's text ids (equal texts, equal ids), to leave duplicates out of the softmax.
        y_pred: [B, C] embeddings: [B, C, D].

    Returns:
        each anchor's loss, [B] (Keras averages them: the batch's mean, as sentence-transformers').

    Example:
    >>> from official_bert.retrieval.losses import MultipleNegativesRankingLoss
    >>> import numpy as np
    >>> anchors, positives = np.eye(2, dtype="float32"), np.array([[1.0, 0.0], [1.0, 1.0]], "float32")
    >>> embeddings = np.stack([anchors, positives], axis=1)  # [B=2, C=2, D=2]
    >>> loss = MultipleNegativesRankingLoss()
    >>> cos = 1 / np.sqrt(2)  # anchor 1 and positive 0, anchor 0 and positive 1, ...
    >>> expected = np.mean([np.log1p(np.exp(20 * (cos - 1))), np.log1p(np.exp(20 * (0 - cos)))])
    >>> bool(np.isclose(float(loss(np.array([[0, 1], [2, 3]]), embeddings)), expected, atol=1e-6))
    True
    >>> float(loss(np.array([[0, 1], [2, 1]]), embeddings))  # the same positive text twice: no negatives left
    0.0
    """

    targets = "text_ids"

    def __init__(self, scale=SCALE, symmetric=False, name="multiple_negatives_ranking", **kwargs):
        super().__init__(name=name, **kwargs)
        if not (isinstance(scale, (int, float)) and 0 < scale < float("inf")):
            raise ValueError(f"scale={scale!r}: expected a positive finite number")
        self.scale = float(scale)
        self.symmetric = bool(symmetric)

    def call(self, y_true, y_pred):
        y_pred = ops.convert_to_tensor(y_pred)
        ids = ops.cast(y_true, "float32")
        anchors = l2_normalize(y_pred[:, 0])
        docs = l2_normalize(y_pred[:, 1:])  # [B, K, D]
        batch = ops.shape(y_pred)[0]
        # Column-major, as sentence-transformers concatenates them: every positive, then every first negative, ...
        candidates = ops.reshape(ops.transpose(docs, [1, 0, 2]), [-1, ops.shape(y_pred)[-1]])
        candidate_ids = ops.reshape(ops.transpose(ids[:, 1:]), [-1])
        scores = self.scale * ops.matmul(anchors, ops.transpose(candidates))  # [B, K·B]
        own = ops.arange(ops.shape(scores)[1])[None, :] == ops.arange(batch)[:, None]
        scores = _without_duplicates(scores, candidate_ids, ids[:, 0], ids[:, 1], own)
        positive = ops.diagonal(scores[:, :batch])
        log_normalizer = ops.logsumexp(scores, axis=1)
        if self.symmetric:
            backward = self.scale * ops.matmul(docs[:, 0], ops.transpose(anchors))  # [B, B]: positive i, anchor j
            backward = _without_duplicates(backward, ids[:, 0], ids[:, 0], ids[:, 1], ops.eye(batch) > 0)
            log_normalizer = (log_normalizer + ops.logsumexp(backward, axis=1)) / 2
        return log_normalizer - positive

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "symmetric": self.symmetric}


def _without_duplicates(scores, column_ids, anchor_ids, positive_ids, own):
    """`scores` [rows, columns] with −inf where a column's text is the row's anchor or positive text, but not at
    the row's own column."""
    duplicate = (column_ids[None, :] == anchor_ids[:, None]) | (column_ids[None, :] == positive_ids[:, None])
    return ops.where(duplicate & ~own, float("-inf"), scores)


@keras.saving.register_keras_serializable(package="official_bert")
class CachedMultipleNegativesRankingLoss(MultipleNegativesRankingLoss):
    """`MultipleNegativesRankingLoss` whose gradient the model computes `mini_batch_size` texts at a time
    (GradCache, Gao et al. 2021): the batch's embeddings first without keeping activations, the loss and its
    gradient with respect to them, then each mini-batch again with its activations, its share of the gradient
    pushed through it. The loss and the gradients are the plain loss's; the activations held are a mini-batch's.

    Args:
        mini_batch_size (int): texts embedded at once (sentence-transformers' default: 32).
        scale (float): the cosine similarities' multiplier (1 / temperature; sentence-transformers' 20).
        symmetric (bool): add the backward term, as `MultipleNegativesRankingLoss` does.
        name (str): the loss's name.
        **kwargs: passed to keras.losses.Loss.

    Example:
    >>> from official_bert.retrieval.losses import CachedMultipleNegativesRankingLoss
    >>> CachedMultipleNegativesRankingLoss(mini_batch_size=16).get_config()["mini_batch_size"]
    16
    """

    def __init__(self, mini_batch_size=32, scale=SCALE, symmetric=False, name="cached_multiple_negatives_ranking",
                 **kwargs):
        super().__init__(scale=scale, symmetric=symmetric, name=name, **kwargs)
        if not (isinstance(mini_batch_size, int) and mini_batch_size >= 1):
            raise ValueError(f"mini_batch_size={mini_batch_size!r}: expected a positive integer")
        self.mini_batch_size = mini_batch_size

    def get_config(self):
        return {**super().get_config(), "mini_batch_size": self.mini_batch_size}


@keras.saving.register_keras_serializable(package="official_bert")
class CoSENTLoss(keras.losses.Loss):
    """CoSENT (Su 2022) on scored pairs: log(1 + Σ exp(s_i − s_j)) over the pairs of rows (i, j) of the batch whose
    score i is lower than score j, s = `scale` × the cosine similarity of a row's two texts.

    Args:
        scale (float): the cosine similarities' multiplier (sentence-transformers' 20).
        name (str): the loss's name.
        **kwargs: passed to keras.losses.Loss.

    Call args:
        y_true: the scores, [B].
        y_pred: the embeddings of the pairs, [B, 2, D].

    Example:
    >>> from official_bert.retrieval.losses import CoSENTLoss
    >>> import numpy as np
    >>> pairs = np.array([[[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]], "float32")  # cosines 1 and 0
    >>> round(float(CoSENTLoss()(np.array([0.0, 1.0]), pairs)), 4)  # log(1 + exp(20 · (1 − 0)))
    20.0
    """

    targets = "scores"

    def __init__(self, scale=SCALE, name="cosent", **kwargs):
        super().__init__(name=name, **kwargs)
        if not (isinstance(scale, (int, float)) and 0 < scale < float("inf")):
            raise ValueError(f"scale={scale!r}: expected a positive finite number")
        self.scale = float(scale)

    def call(self, y_true, y_pred):
        scores = self.scale * pair_cosines(y_pred)
        labels = ops.reshape(ops.cast(y_true, scores.dtype), [-1])
        differences = scores[:, None] - scores[None, :]
        lower = labels[:, None] < labels[None, :]
        terms = ops.reshape(ops.where(lower, differences, float("-inf")), [-1])
        return ops.logsumexp(ops.concatenate([ops.zeros([1], terms.dtype), terms]))

    def get_config(self):
        return {**super().get_config(), "scale": self.scale}


@keras.saving.register_keras_serializable(package="official_bert")
class CosineSimilarityLoss(keras.losses.Loss):
    """The squared difference between a pair's cosine similarity and its score (averaged over the batch).

    Args:
        name (str): the loss's name.
        **kwargs: passed to keras.losses.Loss.

    Call args:
        y_true: the scores, [B].
        y_pred: the embeddings of the pairs, [B, 2, D].

    Example:
    >>> from official_bert.retrieval.losses import CosineSimilarityLoss
    >>> import numpy as np
    >>> pairs = np.array([[[1.0, 0.0], [1.0, 1.0]]], "float32")  # cosine 0.7071
    >>> round(float(CosineSimilarityLoss()(np.array([1.0]), pairs)), 4)  # (0.7071 − 1)²
    0.0858
    """

    targets = "scores"

    def __init__(self, name="cosine_similarity", **kwargs):
        super().__init__(name=name, **kwargs)

    def call(self, y_true, y_pred):
        cosines = pair_cosines(y_pred)
        return ops.square(cosines - ops.reshape(ops.cast(y_true, cosines.dtype), [-1]))


def pair_cosines(y_pred):
    """The cosine similarity of each row's two embeddings: [B, 2, D] → [B]."""
    y_pred = l2_normalize(ops.convert_to_tensor(y_pred))
    return ops.sum(y_pred[:, 0] * y_pred[:, 1], axis=-1)


@keras.saving.register_keras_serializable(package="official_bert")
class MatryoshkaLoss(keras.losses.Loss):
    """`loss` at several widths (Kusupati et al. 2022): Σ_d weight_d × loss(y_true, the embeddings' first d
    dimensions, renormalised), so that any of those prefixes serves as a smaller embedding.

    Args:
        loss (keras.losses.Loss | dict): one of this module's losses (or its config, as `get_config` gives it).
        dims (list[int]): the widths, each at most the embeddings' (the full width should be among them).
        weights (list[float] | None): one per width; default 1 each.
        name (str): the loss's name.
        **kwargs: passed to keras.losses.Loss.

    Example:
    >>> from official_bert.retrieval.losses import MatryoshkaLoss, MultipleNegativesRankingLoss
    >>> import numpy as np
    >>> anchors = np.array([[1.0, 0.0, 5.0], [0.0, 1.0, 5.0]], "float32")
    >>> embeddings = np.stack([anchors, anchors], axis=1)
    >>> full, first2 = (float(MultipleNegativesRankingLoss()(np.array([[0, 1], [2, 3]]), x))
    ...                 for x in (embeddings, embeddings[..., :2]))
    >>> both = float(MatryoshkaLoss(MultipleNegativesRankingLoss(), [3, 2], [1.0, 0.5])(np.array([[0, 1], [2, 3]]),
    ...                                                                                   embeddings))
    >>> bool(np.isclose(both, full + 0.5 * first2))
    True
    """

    def __init__(self, loss, dims, weights=None, name="matryoshka", **kwargs):
        super().__init__(name=name, **kwargs)
        if isinstance(loss, dict):
            loss = keras.saving.deserialize_keras_object(loss)
        dims = [int(d) for d in dims]
        if not dims or any(d < 1 for d in dims):
            raise ValueError(f"dims={dims}: expected one or more positive widths")
        weights = [1.0] * len(dims) if weights is None else [float(w) for w in weights]
        if len(weights) != len(dims):
            raise ValueError(f"weights={weights}: expected one per width of dims={dims}")
        self.loss, self.dims, self.weights = loss, dims, weights

    @property
    def targets(self):
        return row_targets(self.loss)

    @property
    def mini_batch_size(self):
        """The wrapped loss's mini-batch (a cached loss's), or None."""
        return getattr(self.loss, "mini_batch_size", None)

    def call(self, y_true, y_pred):
        y_pred = ops.convert_to_tensor(y_pred)
        width = y_pred.shape[-1]
        if width is not None and max(self.dims) > width:
            raise ValueError(f"MatryoshkaLoss: width {max(self.dims)} exceeds the embeddings' {width}")
        total = 0.0
        for dim, weight in zip(self.dims, self.weights):
            total = total + weight * self.loss.call(y_true, l2_normalize(y_pred[..., :dim]))
        return total

    def get_config(self):
        return {**super().get_config(), "loss": keras.saving.serialize_keras_object(self.loss), "dims": self.dims,
                "weights": self.weights}
