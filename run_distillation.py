# The tool lives in official_bert/tools/run_distillation.py; this file keeps `python run_distillation.py ...` working from a checkout.
from official_bert.tools.run_distillation import __doc__, run  # noqa: F401

if __name__ == "__main__":
    run()
