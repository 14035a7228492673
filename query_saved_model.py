# The tool lives in official_bert/tools/query_saved_model.py; this file keeps `python query_saved_model.py ...` working from a checkout.
from official_bert.tools.query_saved_model import __doc__, run  # noqa: F401

if __name__ == "__main__":
    run()
