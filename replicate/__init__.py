"""`make replicate`: the paper's ablations at small scale (run.sh runs them, report.py writes the results)."""
