# The tool lives in official_bert/tools/predict.py; this file keeps `python predict.py ...` working from a checkout.
from official_bert.tools.predict import __doc__, run  # noqa: F401

if __name__ == "__main__":
    run()
