# The tool lives in official_bert/tools/run_classifier.py; this file keeps `python run_classifier.py ...` working from a checkout.
from official_bert.tools.run_classifier import __doc__, run  # noqa: F401

if __name__ == "__main__":
    run()
