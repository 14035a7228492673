"""Fine-tuning: a task model trained epoch by epoch, evaluated after each, the best checkpoint kept, resumable; and
`run_task`, the lifecycle every task shares.

    run_task(ClassificationTask("mrpc", "glue/MRPC"), FineTuningSettings("out", "bert_config.json", "vocab.txt",
                                                                          do_train=True, do_eval=True))

The pieces underneath, for your own loop:

    schedule = fine_tuning_schedule(num_examples, batch_size, num_train_epochs, warmup_proportion)
    run = FineTuningRun(model, loss, options, schedule, strategy)
    run.train(dataset_fn, evaluate, BestCheckpoint(output_dir, "accuracy"))

The tasks themselves (`FineTuningTask`s) are in `official_bert/tasks/`.
"""

from official_bert.finetuning.best import BestCheckpoint, best_checkpoint, load_trained_weights
from official_bert.finetuning.driver import run_task
from official_bert.finetuning.predict import Predictor
from official_bert.finetuning.run import FineTuningRun
from official_bert.finetuning.schedule import Schedule, fine_tuning_schedule
from official_bert.finetuning.settings import FineTuningSettings
from official_bert.finetuning.task import FineTuningTask
