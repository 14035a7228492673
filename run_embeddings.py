# The tool lives in official_bert/tools/run_embeddings.py; this file keeps `python run_embeddings.py ...` working from a checkout.
from official_bert.tools.run_embeddings import __doc__, run  # noqa: F401

if __name__ == "__main__":
    run()
