"""`MaskedLM`: fill-in-the-blank on strings with a pretrained BERT's masked-LM head, and more masked-LM training on
your own texts (`fit` on strings masks them as the original's create_pretraining_data does)."""

import keras
import numpy as np
import tensorflow as tf

from official_bert.checkpoints import CheckpointError, causal, load_checkpoint
from official_bert.keras_models import text_model
from official_bert.models.bert_pretrainer import BertPretrainer
from official_bert.prefetching import prefetched
from official_bert.text.packing import packing_of

# The original's masking: 15% of the tokens; of those, 80% become [MASK], 10% a random token, 10% stay.
MASKED_LM_PROB = 0.15
_KEEP_AS_MASK, _RANDOM_TOKEN = 0.8, 0.1


@keras.saving.register_keras_serializable(package="official_bert")
class MaskedLM(text_model.TextModelMixin, BertPretrainer):
    """BERT's masked LM behind a `TextPreprocessor`: `fill_mask` gives the likeliest tokens at each literal `[MASK]`
    of a text; `fit` on texts (no y) masks each batch anew (`masked_lm_prob` of the real tokens, [CLS] and [SEP]
    never; 80% [MASK], 10% a random token, 10% unchanged) and trains on them, the pretraining's masked-LM loss and
    metrics. `predict` takes the encoder's inputs with `masked_lm_positions`, as `BertPretrainer`.

    Args:
        encoder (BertEncoder): the encoder, new or with a checkpoint's weights.
        preprocessor (TextPreprocessor | dict): the tokenizer and packer (or its config); its vocabulary has
            [MASK].
        masked_lm_prob (float): the share of tokens `fit` masks.
        **kwargs: passed to `BertPretrainer` (e.g. `name`).

    Example:
    >>> from official_bert import BertConfig, BertEncoder, MaskedLM, TextPreprocessor
    >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat"]
    >>> model = MaskedLM(BertEncoder(BertConfig.from_preset("tiny", vocab_size=8, num_hidden_layers=1)),
    ...                  TextPreprocessor(vocab, sequence_length=16))
    >>> _ = model.masked_lm.output_bias.assign([0, 0, 0, 0, 0, 0, 20, 0])  # "cat", whatever the input
    >>> [[(token, round(p, 2)) for token, p in mask] for mask in model.fill_mask(["the [MASK] sat"], top_k=1)[0]]
    [[('cat', 1.0)]]
    >>> history = model.fit(["the cat sat"] * 8, epochs=1, batch_size=4, verbose=0)
    >>> sorted(history.history)
    ['loss', 'masked_lm_accuracy', 'masked_lm_loss']
    """

    def __init__(self, encoder, preprocessor, masked_lm_prob=MASKED_LM_PROB, **kwargs):
        super().__init__(encoder, use_nsp=False, name=kwargs.pop("name", "masked_lm"), **kwargs)
        if isinstance(preprocessor, dict):
            preprocessor = keras.saving.deserialize_keras_object(preprocessor)
        text_model.check_sequence_length(encoder, preprocessor)
        self.preprocessor = preprocessor
        self.masked_lm_prob = masked_lm_prob
        # Loaded from a .keras file, the preprocessor has its vocabulary only once its assets are read.
        if preprocessor.vocabulary is not None or preprocessor.spm_model is not None:
            self._special_tokens()
        self.compile()

    def _special_tokens(self):
        special = self.preprocessor.tokenizer.get_special_tokens_dict()
        if "mask_id" not in special:
            raise ValueError(f"MaskedLM: the preprocessor's vocabulary has no "
                             f"{packing_of(self.preprocessor.tokenizer).mask_token} token")
        return special

    @classmethod
    def from_checkpoint(cls, path, *, config=None, vocab_file=None, spm_model_file=None, do_lower_case=None,
                        sequence_length=128, dtype=None, **kwargs):
        """A `MaskedLM` with a pretraining checkpoint's encoder and masked-LM head (Google's release, a
        run_pretraining.py output directory, a Hugging Face BertForPreTraining / BertForMaskedLM, or the masked LM of
        BERT's family: RobertaForMaskedLM, XLMRobertaForMaskedLM, DistilBertForMaskedLM, an ELECTRA generator).

        Args:
            path (str): the checkpoint: a directory, a checkpoint prefix or a weights file (see
                `load_checkpoint`).
            config (BertConfig | str | None): the model's config or its file; default: the bert_config.json or
                config.json beside the weights.
            vocab_file (str | None): the WordPiece vocabulary; default: the vocab.txt beside the weights.
            spm_model_file (str | None): a SentencePiece model, instead of vocab_file.
            do_lower_case (bool | None): default: what the checkpoint suggests (a tokenizer_config.json, the casing
                of its vocabulary, Google's release names), uncased without evidence.
            sequence_length (int): the longest packed row, [CLS] and [SEP] included.
            dtype (str | None): the encoder's dtype policy (e.g. "mixed_bfloat16"); default float32.
            **kwargs: passed to the constructor (e.g. `masked_lm_prob`).

        Returns:
            MaskedLM: with the checkpoint's encoder and masked-LM head.

        Raises:
            CheckpointError: unreadable, mismatched, or without the masked-LM head (an encoder-only or fine-tuned
                checkpoint), or a left-to-right model (its config or checkpoint says so), as fill_mask.py refuses.

        Example:
        >>> import tempfile
        >>> from official_bert import BertConfig, BertEncoder, BertPretrainer, MaskedLM, save_checkpoint
        >>> work = tempfile.TemporaryDirectory()
        >>> vocab = work.name + "/words.txt"
        >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\n[MASK]\\nhi\\n")
        >>> _ = save_checkpoint(BertPretrainer(BertEncoder(BertConfig.from_preset("tiny", vocab_size=6))), work.name,
        ...                     vocab_file=vocab)
        >>> len(MaskedLM.from_checkpoint(work.name).fill_mask(["hi [MASK]"], top_k=2)[0][0])
        2
        """
        encoder, preprocessor, _ = text_model.from_checkpoint_parts(
            path, config, vocab_file, spm_model_file, do_lower_case, False, sequence_length, dtype)
        causal.refuse_left_to_right(encoder.config, path)
        model = cls(encoder, preprocessor, **kwargs)
        report = load_checkpoint(model, path, do_lower_case=preprocessor.do_lower_case)
        if any("masked_lm" in variable.split("/") for variable in report.missing):
            raise CheckpointError(f"{path}: the checkpoint has no masked-LM head: fill-in-the-blank needs a "
                                  "pretraining checkpoint (e.g. run_pretraining's --output_dir), not an encoder-only "
                                  "or fine-tuned one")
        return model

    def default_loss(self):
        return None  # BertPretrainer.compute_loss: the masked-LM loss and metrics

    def fill_mask(self, texts, top_k=5, batch_size=None):
        """The `top_k` likeliest tokens, with their probabilities (softmax over the vocabulary), at each [MASK].

        Args:
            texts (list[str]): strings holding one or more literal `[MASK]`s (RoBERTa's and XLM-R's: `<mask>`).
            top_k (int): tokens per [MASK].
            batch_size (int | None): texts per batch; default 32.

        Returns:
            list[list[list[tuple[str, float]]]]: per text, per [MASK] (in order), a list of (token, probability),
                likeliest first.

        Example:
        >>> from official_bert import BertConfig, BertEncoder, MaskedLM, TextPreprocessor
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat"]
        >>> model = MaskedLM(BertEncoder(BertConfig.from_preset("tiny", vocab_size=8, num_hidden_layers=1)),
        ...                  TextPreprocessor(vocab, sequence_length=16))
        >>> filled = model.fill_mask(["the [MASK] sat", "[MASK] cat [MASK]"], top_k=3)
        >>> [len(masks) for masks in filled], len(filled[0][0])  # [MASK]s per text, guesses per [MASK]
        ([1, 2], 3)
        """
        tokenizer = self.preprocessor.spec.python_tokenizer()
        data = prefetched(tf.data.Dataset.from_tensor_slices(text_model.texts_tensor(texts)).batch(
            batch_size or text_model.BATCH_SIZE).map(self.preprocessor.pack_masked))
        results = []
        for inputs in data:
            probabilities, ids = tf.math.top_k(tf.nn.softmax(self(inputs, training=False)["mlm_logits"], axis=-1),
                                               k=top_k)
            counts = np.sum(inputs["masked_lm_positions"].numpy() > 0, axis=1)  # position 0 is [CLS], never a mask
            for row, count in enumerate(counts):
                results.append([list(zip(tokenizer.convert_ids_to_tokens(ids[row, m].numpy().tolist()),
                                         probabilities[row, m].numpy().tolist())) for m in range(count)])
        return results

    def _packed_batch(self, inputs, y=None, sample_weight=None):
        if y is not None:
            raise ValueError("MaskedLM.fit takes texts only: it masks them itself")
        return inputs

    def _dataset(self, x, y=None, sample_weight=None, batch_size=None, shuffle=False):
        if isinstance(x, dict):
            return super()._dataset(x, y, sample_weight, batch_size, shuffle)
        if y is not None:
            raise ValueError("MaskedLM.fit takes texts only: it masks them itself (no y)")
        # Each batch's masks are drawn from a seed of a stream that draws anew for each epoch's iterator: random ops
        # in the map itself would repeat their draws every epoch once a global seed is set (keras.utils.
        # set_random_seed), masking the same positions each time.
        seeds = tf.data.Dataset.random(rerandomize_each_iteration=True).batch(2)
        return prefetched(tf.data.Dataset.zip((super()._dataset(x, y, sample_weight, batch_size, shuffle), seeds)).map(
            self._mask))

    def _mask(self, packed, seed):
        special = self._special_tokens()
        ids = packed["input_word_ids"]
        shape = tf.shape(ids)
        choice_seed, draw_seed, token_seed = tf.unstack(tf.random.experimental.stateless_split(seed, 3))
        chosen = ((packed["input_mask"] == 1) & (ids != special["start_of_sequence_id"])
                  & (ids != special["end_of_segment_id"])
                  & (tf.random.stateless_uniform(shape, choice_seed) < self.masked_lm_prob))
        # One more slot (position 0, weight 0) than the batch needs, so that a batch with nothing chosen still has one.
        padding = tf.zeros([shape[0], 1], tf.int32)
        positions = tf.concat([tf.ragged.boolean_mask(tf.broadcast_to(tf.range(shape[1]), shape), chosen).to_tensor(0),
                               padding], axis=1)
        weights = tf.concat([tf.ragged.boolean_mask(tf.ones(shape), chosen).to_tensor(0.0),
                             tf.cast(padding, tf.float32)], axis=1)
        originals = tf.gather(ids, positions, batch_dims=1)
        draw = tf.random.stateless_uniform(shape, draw_seed)
        random_ids = tf.random.stateless_uniform(shape, token_seed, 0, special["vocab_size"], tf.int32)
        masked = tf.where(chosen & (draw < _KEEP_AS_MASK), special["mask_id"],
                          tf.where(chosen & (draw >= 1 - _RANDOM_TOKEN), random_ids, ids))
        inputs = {**packed, "input_word_ids": masked, "masked_lm_positions": positions}
        return inputs, {"masked_lm_ids": originals, "masked_lm_weights": weights}

    def get_config(self):
        return {"encoder": keras.saving.serialize_keras_object(self.encoder),
                "preprocessor": keras.saving.serialize_keras_object(self.preprocessor),
                "masked_lm_prob": self.masked_lm_prob, "name": self.name}
