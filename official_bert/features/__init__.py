"""Feature extraction (the original's extract_features.py) and sentence embeddings, streamed in bounded memory.

    texts = (tokenize_input(t, tokenizer, 128) for t in read_inputs("input.txt"))
    extractor = FeatureExtractor(encoder, layers=[-1, -2, -3, -4])            # or pooling="mean", normalize=True
    with open_writer("jsonl", "features.jsonl", extractor.layers) as writer:  # or "npz", "tfrecord"
        for features in extractor.extract(texts):
            writer.write(features)
"""

from official_bert.features.errors import FeatureError
from official_bert.features.extractor import Extracted, FeatureExtractor, parse_layers
from official_bert.features.inputs import TextInput, TokenizedInput, parse_line, read_inputs, tokenize_input
from official_bert.features.jsonl import JsonlWriter, jsonl_record, round6
from official_bert.features.npz import NpzWriter
from official_bert.features.pooling import POOLINGS, SentencePooling
from official_bert.features.progress import Progress
from official_bert.features.tfrecord import TfrecordWriter, feature_example, parse_feature_example
from official_bert.features.writers import DTYPES, OUTPUT_FORMATS, open_writer
