"""Fine-tuning: a task model trained epoch by epoch, evaluated after each, the best checkpoint kept, resumable.

    schedule = fine_tuning_schedule(num_examples, batch_size, num_train_epochs, warmup_proportion)
    run = FineTuningRun(model, loss, options, schedule, strategy)
    run.train(dataset_fn, evaluate, BestCheckpoint(output_dir, "accuracy"))

`classifier.py` holds run_classifier's task logic on top of it.
"""

from official_bert.finetuning.best import BestCheckpoint, best_checkpoint, load_trained_weights
from official_bert.finetuning.classifier import (classifier_loss, classifier_metrics, classifier_model,
                                                 evaluate_classifier, has_text_b, predict_test_set,
                                                 train_dataset_fn)
from official_bert.finetuning.predict import Predictor
from official_bert.finetuning.run import FineTuningRun
from official_bert.finetuning.schedule import Schedule, fine_tuning_schedule
