"""The command-line tools: each module is one tool, its flags at the top and `main()` reading top to bottom, with
`run()` as its entry point (the console scripts `bert-run-classifier`, ... and the checkout's shims
`run_classifier.py`, `data_prep/build_vocab.py`, ... call it). `cli.py` is what every tool shares (start-up,
one-line errors, SIGTERM, exit codes), `flags.py` the shared flag groups and `sweep.py` the fine-tuning tools'
hyperparameter sweep as child processes.

Nothing below this package imports it: the library needs no command line.
"""
