"""sentence-transformers model directories: what one says of its embedding (pooling, normalisation, longest input),
and writing one that sentence-transformers loads.

A directory is a Hugging Face BERT (config.json, model.safetensors, the tokenizer's files) plus `modules.json`, which
lists its modules in order: Transformer → Pooling (`1_Pooling/config.json`) → Normalize (optional). Both the legacy
files (sentence-transformers before 6: `pooling_mode_mean_tokens`, `max_seq_length` in sentence_bert_config.json, as
all-MiniLM-L6-v2 ships) and the current ones (6.x: `pooling_mode`, the longest input as the tokenizer's
`model_max_length`) are read; the current ones are written, as sentence-transformers 6.2 saves a model: the files,
their settings and the tensors' names, shapes and dtypes are those it writes.
"""

import json
import os
import tempfile

import tensorflow as tf

from official_bert.checkpoints.source import CheckpointError
from official_bert.io import is_file, write_text

MODULES = "modules.json"
# The sentence-transformers release whose layout `write_sentence_transformers` writes: recorded in the directory, so
# that an older release (which cannot read these module names) says the model needs a newer one.
LAYOUT_VERSION = "6.2.0"
_TRANSFORMER = "sentence_transformers.base.modules.transformer.Transformer"
_POOLING = "sentence_transformers.sentence_transformer.modules.pooling.Pooling"
_NORMALIZE = "sentence_transformers.base.modules.normalize.Normalize"
_LEGACY_POOLING_MODES = {"pooling_mode_cls_token": "cls", "pooling_mode_mean_tokens": "mean",
                         "pooling_mode_max_tokens": "max"}
_POOLINGS = ("cls", "mean", "max")
_SPECIAL_TOKENS = {"pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]", "sep_token": "[SEP]",
                   "mask_token": "[MASK]"}
# A tokenizer's model_max_length of "no limit" (transformers writes 1e30).
_NO_LIMIT = 10**9


def sentence_transformers_settings(path):
    """What a sentence-transformers directory says of its embedding: {"pooling", "normalize", "sequence_length"}
    (those it states; empty for a path that is not such a directory).

    Args:
        path: a checkpoint directory.

    Raises:
        CheckpointError: a module or pooling mode a `TextEmbedder` does not compute (a Dense layer, weighted-mean
            or last-token pooling, ...): its embeddings would not be the directory's.

    Example:
    >>> import tempfile
    >>> directory = tempfile.mkdtemp()
    >>> os.mkdir(os.path.join(directory, "1_Pooling"))
    >>> _ = open(os.path.join(directory, "modules.json"), "w").write(json.dumps([
    ...     {"path": "", "type": "sentence_transformers.models.Transformer"},
    ...     {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ...     {"path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]))
    >>> _ = open(os.path.join(directory, "1_Pooling", "config.json"), "w").write(
    ...     '{"pooling_mode_cls_token": false, "pooling_mode_mean_tokens": true}')
    >>> sentence_transformers_settings(directory)
    {'normalize': True, 'pooling': 'mean'}
    """
    path = os.fspath(path)
    modules_file = os.path.join(path, MODULES)
    if not tf.io.gfile.isdir(path) or not is_file(modules_file):
        return {}
    found = {"normalize": False}
    for module in _read_json(modules_file):
        kind = str(module.get("type", "")).rsplit(".", 1)[-1]
        if kind == "Normalize":
            found["normalize"] = True
        elif kind == "Pooling":
            pooling_config = os.path.join(path, module.get("path", ""), "config.json")
            if is_file(pooling_config):
                found["pooling"] = _pooling(_read_json(pooling_config), pooling_config)
        elif kind != "Transformer":
            raise CheckpointError(f"{modules_file}: its module {module.get('type')!r} is not one a TextEmbedder "
                                  "computes (Transformer, Pooling and Normalize are): its embeddings would differ")
    length = _read_json_if(os.path.join(path, "sentence_bert_config.json")).get("max_seq_length")
    if not length:
        length = _read_json_if(os.path.join(path, "tokenizer_config.json")).get("model_max_length")
    if isinstance(length, (int, float)) and 0 < length < _NO_LIMIT:
        found["sequence_length"] = int(length)
    return dict(sorted(found.items()))


def _pooling(config, path):
    mode = config.get("pooling_mode")
    if mode is None:
        modes = [key for key, value in config.items() if key.startswith("pooling_mode_") and value]
        mode = _LEGACY_POOLING_MODES.get(modes[0]) if len(modes) == 1 else modes or None
    if isinstance(mode, list) and len(mode) == 1:
        mode = mode[0]
    if mode not in _POOLINGS:
        raise CheckpointError(f"{path}: pooling {mode!r} is not one a TextEmbedder computes ({', '.join(_POOLINGS)})")
    return mode


def vocab_from_tokenizer_json(directory):
    """The WordPiece vocabulary of `directory`'s tokenizer.json (what sentence-transformers 6 saves instead of a
    vocab.txt), written to a temporary vocab.txt (kept while the process runs); None without one.

    Example:
    >>> import tempfile
    >>> directory = tempfile.mkdtemp()
    >>> _ = open(os.path.join(directory, "tokenizer.json"), "w").write(json.dumps(
    ...     {"model": {"type": "WordPiece", "vocab": {"[PAD]": 0, "hi": 2, "[UNK]": 1}}}))
    >>> open(vocab_from_tokenizer_json(directory)).read().split()
    ['[PAD]', '[UNK]', 'hi']
    """
    path = os.path.join(os.fspath(directory), "tokenizer.json")
    if not is_file(path):
        return None
    model = _read_json(path).get("model", {})
    if model.get("type") != "WordPiece":
        return None
    vocab = model.get("vocab", {})
    tokens = sorted(vocab, key=vocab.get)
    if [vocab[token] for token in tokens] != list(range(len(tokens))):
        raise CheckpointError(f"{path}: its WordPiece ids are not 0 to {len(tokens) - 1}, one a token")
    _VOCAB_FILES.append(tempfile.NamedTemporaryFile("w", prefix="vocab_", suffix=".txt", encoding="utf-8"))
    _VOCAB_FILES[-1].write("".join(token + "\n" for token in tokens))
    _VOCAB_FILES[-1].flush()
    return _VOCAB_FILES[-1].name


_VOCAB_FILES = []  # the temporary vocab.txt files, removed when the process ends


def write_sentence_transformers(directory, vocab_file, pooling, normalize, sequence_length, do_lower_case,
                                embedding_dimension):
    """Writes sentence-transformers' own files of a BERT embedding model into `directory`, beside the weights
    (`save_checkpoint(encoder, directory, "huggingface")` writes config.json and model.safetensors): modules.json,
    1_Pooling/config.json, 2_Normalize/config.json (with `normalize`), sentence_bert_config.json,
    config_sentence_transformers.json, the tokenizer (vocab.txt, tokenizer.json, tokenizer_config.json) and a
    README.md. Each file is written whole under a temporary name, then renamed.

    Args:
        directory: the model's directory.
        vocab_file: its WordPiece vocabulary.
        pooling: "cls", "mean" or "max".
        normalize: L2-normalise the embeddings (the Normalize module).
        sequence_length: the longest input in tokens.
        do_lower_case: the tokenizer lowercases (and strips accents).
        embedding_dimension: the embeddings' width.

    Example:
    >>> import tempfile
    >>> work = tempfile.mkdtemp()
    >>> vocab = os.path.join(work, "vocab.txt")
    >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nhi\\n")
    >>> write_sentence_transformers(work, vocab, "mean", True, 128, True, 384)
    >>> [m["path"] for m in json.load(open(os.path.join(work, "modules.json")))]
    ['', '1_Pooling', '2_Normalize']
    >>> json.load(open(os.path.join(work, "1_Pooling", "config.json")))
    {'embedding_dimension': 384, 'pooling_mode': 'mean', 'include_prompt': True}
    """
    if pooling not in _POOLINGS:
        raise ValueError(f"pooling={pooling!r}: expected one of {', '.join(_POOLINGS)}")
    with tf.io.gfile.GFile(vocab_file, "rb") as f:
        lines = f.read().decode("utf-8").split("\n")
    tokens = lines[:-1] if lines[-1] == "" else lines
    if os.path.normpath(os.path.join(directory, "vocab.txt")) != os.path.normpath(vocab_file):
        _write(directory, "vocab.txt", "".join(token + "\n" for token in tokens))
    ids = {token: i for i, token in enumerate(tokens)}
    special = {name: token for name, token in _SPECIAL_TOKENS.items() if token in ids}
    missing = [token for token in ("[UNK]", "[CLS]", "[SEP]") if token not in ids]
    if missing:
        raise CheckpointError(f"{vocab_file}: no {missing[0]} in it: not a BERT WordPiece vocabulary")
    modules = [{"idx": 0, "name": "0", "path": "", "type": _TRANSFORMER},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": _POOLING}]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": _NORMALIZE})
        _write(directory, "2_Normalize/config.json", {"module_input_name": "sentence_embedding",
                                                      "module_output_name": "sentence_embedding"}, indent=4)
    _write(directory, MODULES, modules)
    _write(directory, "1_Pooling/config.json", {"embedding_dimension": embedding_dimension, "pooling_mode": pooling,
                                                "include_prompt": True}, indent=4)
    _write(directory, "sentence_bert_config.json", {
        "transformer_task": "feature-extraction",
        "modality_config": {"text": {"method": "forward", "method_output_name": "last_hidden_state"}},
        "module_output_name": "token_embeddings"}, indent=4)
    _write(directory, "config_sentence_transformers.json", {
        "__version__": {"sentence_transformers": LAYOUT_VERSION}, "default_prompt_name": None, "model_type": "SentenceTransformer",
        "prompts": {"document": "", "query": ""}, "similarity_fn_name": "cosine"})
    _write(directory, "tokenizer_config.json", {
        "backend": "tokenizers", "do_basic_tokenize": True, "do_lower_case": bool(do_lower_case),
        "model_max_length": sequence_length, "never_split": None, "strip_accents": None,
        "tokenize_chinese_chars": True, "tokenizer_class": "BertTokenizer", **special})
    _write(directory, "tokenizer.json", _tokenizer_json(ids, special, do_lower_case), indent=None)
    _write(directory, "README.md", _model_card(pooling, normalize, sequence_length, embedding_dimension))


def _tokenizer_json(ids, special, do_lower_case):
    """The `tokenizers` library's serialisation of BERT's WordPiece tokenizer over the vocabulary `ids`."""
    def template(*parts):
        return [{"SpecialToken": {"id": part, "type_id": type_id}} if part.startswith("[") else
                {"Sequence": {"id": part, "type_id": type_id}} for part, type_id in parts]

    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": ids[token], "content": token, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for token in sorted(special.values(), key=ids.get)],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": bool(do_lower_case)},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": template(("[CLS]", 0), ("A", 0), ("[SEP]", 0)),
            "pair": template(("[CLS]", 0), ("A", 0), ("[SEP]", 0), ("B", 1), ("[SEP]", 1)),
            "special_tokens": {token: {"id": token, "ids": [ids[token]], "tokens": [token]}
                               for token in ("[CLS]", "[SEP]")}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": ids}}


def _model_card(pooling, normalize, sequence_length, embedding_dimension):
    return (f"---\nlibrary_name: sentence-transformers\npipeline_tag: sentence-similarity\ntags:\n"
            f"- sentence-transformers\n- official_bert\n---\n\n# A sentence embedding model trained with official_bert\n\n"
            f"BERT → {pooling} pooling{' → normalisation' if normalize else ''}: {embedding_dimension}-dimensional "
            f"embeddings of texts up to {sequence_length} tokens, compared by cosine similarity.\n\n"
            "```python\nfrom sentence_transformers import SentenceTransformer\n\n"
            "model = SentenceTransformer(\"path/to/this/directory\")\n"
            "embeddings = model.encode([\"A sentence to embed.\"])\n```\n\n"
            "In TensorFlow: `official_bert.keras_models.TextEmbedder.from_checkpoint(\"path/to/this/directory\")`.\n")


def _write(directory, name, content, indent=2):
    text = content if isinstance(content, str) else json.dumps(content, indent=indent, ensure_ascii=False) + "\n"
    write_text(os.path.join(directory, name), text)


def _read_json(path):
    try:
        with tf.io.gfile.GFile(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{path}: not a JSON file ({e})") from None


def _read_json_if(path):
    return _read_json(path) if is_file(path) else {}
