"""BERT's optimizers and learning-rate schedule.

- `optimizers.py`: `AdamWeightDecay` (the original's Adam without bias correction, decoupled weight decay) and
  `Lamb`, with gradient accumulation;
- `lr_schedules.py`: `WarmupPolynomialDecay`, linear warmup then polynomial (linear) decay;
- `create.py`: `create_optimizer`, both from a few numbers, as the original's and Model Garden's function.
"""

from official_bert.optimization.create import create_optimizer
from official_bert.optimization.lr_schedules import WarmupPolynomialDecay
from official_bert.optimization.optimizers import AdamWeightDecay, Lamb

__all__ = ["AdamWeightDecay", "Lamb", "WarmupPolynomialDecay", "create_optimizer"]
