"""The data side of run_classifier: task files → examples → cached features → tf.data; metrics; result files.

    processor = get_processor("mrpc", data_dir)
    cached = load_or_create_features(processor, "train", tokenizer, 128, output_dir,
                                     tokenizer_file=vocab_file, do_lower_case=True)
    dataset = feature_dataset(cached, 32, is_training=True)
"""

from official_bert.classification.cache import FeatureFile, cache_key, load_or_create_features
from official_bert.classification.dataset import feature_dataset
from official_bert.classification.errors import ClassificationDataError
from official_bert.classification.examples import InputExample, MultipleChoiceExample
from official_bert.classification.features import (InputFeatures, convert_examples_to_features,
                                                   convert_single_example, padding_features, truncate_seq_pair)
from official_bert.classification.metrics import best_metric, evaluation_metrics, metric_names, task_metrics
from official_bert.classification.processor import DataProcessor
from official_bert.classification.tasks import TASK_NAMES, get_processor
from official_bert.classification.writers import (results_file_name, write_leaderboard_file,
                                                  write_test_results)
