# The tool lives in official_bert/tools/run_squad.py; this file keeps `python run_squad.py ...` working from a checkout.
from official_bert.tools.run_squad import __doc__, run  # noqa: F401

if __name__ == "__main__":
    run()
