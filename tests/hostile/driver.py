"""Generates hostile cases from one tool's own flag definitions and runs each through the tool's start-up checks.

    python -m tests.hostile.driver run_classifier    # prints one JSON object: the flags and every case's outcome

The tool is imported once; its `run()` goes through `tools/cli.py` as from the command line, but with `main` replaced
by a stand-in that only notes it was reached: every case costs the flag parsing, the output guard and the run
identity check, not a run. The cases, by class, from each flag's declared kind (`tools/flag_kinds.py`):

- number: every numeric flag at NaN, ±inf, -1, 0 and a huge value (a list of numbers: each of those in the list);
- alias: every output flag pointed at every input flag's path, inside its directory, or (a glob) at a path it
  matches;
- shape: a file output given an existing directory, a directory output given an existing file;
- identity (a tool with a run directory): a run recorded, then rerun with each flag changed in turn, and each
  input's content changed at the same path.

Each outcome: the exit status, stderr's lines, whether `main` was reached, and whether anything under the work
directory changed (files added, removed or rewritten). tests/hostile/test_generated.py holds them to the rules.
"""

import contextlib
import hashlib
import importlib
import io
import json
import os
import sys
import tempfile

from absl import app, flags

from official_bert.tools import cli, flag_kinds, run_identity

FLAGS = flags.FLAGS
HUGE = {"int": 10**15, "float": 1e30}
# The file an input directory holds: a model directory's config, which is part of the model.
_PART = {flag_kinds.INPUT_FILES: "part.txt", flag_kinds.INPUT_DIRECTORY: "part.txt",
         flag_kinds.MODEL: "bert_config.json"}


class Tool:
    """A tool imported with its start-up checks ready to run on any argv."""

    def __init__(self, name, work):
        self.name, self.work = name, work
        module = importlib.import_module(f"official_bert.tools.{name}")
        captured = {}
        original_run = cli.run

        def capture_run(main, required_flags=()):
            captured["required"] = list(required_flags)
            app_run, app.run = app.run, lambda main, flags_parser: captured.update(main=main, parser=flags_parser)
            try:
                original_run(main, required_flags)
            finally:
                app.run = app_run

        self.reached = []

        def stand_in():
            self.reached.append(True)

        stand_in.__module__ = module.__name__  # the tool's name in its run identity
        module.main, cli.run = stand_in, capture_run
        try:
            module.run()
        finally:
            cli.run = original_run
        self.required, self._main, self._parser = captured["required"], captured["main"], captured["parser"]
        self.flags = run_identity.tool_flags()
        self.declared = {name: flag_kinds.declared(name) for name in self.flags}

    def call(self, argv):
        """(exit status, stderr lines, main reached) of the tool started with `argv`."""
        FLAGS.unparse_flags()
        self.reached.clear()
        stderr = io.StringIO()
        sys.argv[0] = self.name
        status = 0
        with contextlib.redirect_stderr(stderr):
            try:
                self._main(self._parser([self.name] + argv))
            except SystemExit as e:
                status = e.code if isinstance(e.code, int) else 1
        return status, stderr.getvalue().strip().splitlines(), bool(self.reached)


def snapshot(directory):
    """Every file below `directory` with the hash of its bytes, and every directory."""
    found = {}
    for parent, directories, names in os.walk(directory):
        for name in directories:
            found[os.path.join(parent, name)] = "dir"
        for name in names:
            path = os.path.join(parent, name)
            with open(path, "rb") as f:
                found[path] = hashlib.sha256(f.read()).hexdigest()
    return found


class Cases:
    """The generated cases of one tool, run and recorded."""

    def __init__(self, tool):
        self.tool, self.work, self.results = tool, tool.work, []
        self.inputs = {}  # flag → the path given for it
        self._count = 0

    def fresh(self, stem):
        self._count += 1
        return os.path.join(self.work, f"{stem}-{self._count}")

    def input_path(self, name, kind):
        """A path of `kind` that exists (a file with some text, a directory with a file, a glob matching files)."""
        base = self.fresh(f"in-{name}")
        if kind == flag_kinds.INPUT_FILE:
            with open(base + ".txt", "w") as f:
                f.write(f"text of --{name}\n")
            return base + ".txt"
        os.makedirs(base)
        with open(os.path.join(base, _PART[kind]), "w") as f:
            f.write(f"text of --{name}\n")
        return os.path.join(base, "*.txt") if kind == flag_kinds.INPUT_FILES else base

    def base_argv(self, skip=()):
        """Values for the required flags (inputs that exist, outputs that do not) and --do_train where defined."""
        argv = ["--do_train"] if "do_train" in self.tool.flags else []
        for name in self.tool.required:
            if name in skip:
                continue
            declared = self.tool.declared[name]
            if declared.kind in flag_kinds.INPUTS:
                self.inputs.setdefault(name, self.input_path(name, declared.kind))
                argv.append(f"--{name}={self.inputs[name]}")
            elif declared.kind in flag_kinds.OUTPUTS:
                argv.append(f"--{name}={self.fresh('out-' + name)}")
            else:
                argv.append(f"--{name}=x")
        return argv

    def run(self, case_class, argv, **facts):
        before = snapshot(self.work)
        status, lines, reached = self.tool.call(argv)
        after = snapshot(self.work)
        self.results.append({"class": case_class, "argv": argv, "status": status, "lines": lines,
                             "reached": reached, "wrote": sorted(set(after.items()) ^ set(before.items()))[:5],
                             **facts})

    def numbers(self):
        for name, declared in self.tool.declared.items():
            if declared is None or declared.kind not in (flag_kinds.NUMBER, flag_kinds.NUMBERS):
                continue
            huge = HUGE["int" if declared.integer else "float"]
            values = ["nan", "inf", "-inf", "-1", "0", str(huge)]
            if declared.kind == flag_kinds.NUMBERS:
                values += ["1,nan", f"1,{huge}"]
            for value in values:
                accepted = _accepts(declared, value)
                self.run("number", self.base_argv(skip={name}) + [f"--{name}={value}"], flag=name, value=value,
                         in_range=accepted)

    def aliases(self):
        outputs = [n for n, d in self.tool.declared.items() if d and d.kind in flag_kinds.OUTPUTS]
        inputs = [n for n, d in self.tool.declared.items() if d and d.kind in flag_kinds.INPUTS]
        for output in outputs:
            for given in inputs:
                kind = self.tool.declared[given].kind
                path = self.input_path(given, kind)
                directory = os.path.dirname(path) if kind == flag_kinds.INPUT_FILES else path
                targets = {"the input itself": path if kind != flag_kinds.INPUT_FILES else os.path.join(
                    directory, _PART[kind])}
                if kind in (flag_kinds.INPUT_DIRECTORY, flag_kinds.MODEL):
                    targets["inside it"] = os.path.join(directory, "sub", "out.txt")
                if kind == flag_kinds.INPUT_FILES:
                    targets["matched by its glob"] = os.path.join(directory, "new.txt")
                for where, target in targets.items():
                    argv = self.base_argv(skip={output, given}) + [f"--{given}={path}", f"--{output}={target}"]
                    self.run("alias", argv, output=output, input=given, where=where)

    def shapes(self):
        for name, declared in self.tool.declared.items():
            if declared is None or declared.kind not in flag_kinds.OUTPUTS:
                continue
            if declared.kind in (flag_kinds.OUTPUT_FILE, flag_kinds.OUTPUT_FILES):
                target = self.fresh("a-directory")
                os.makedirs(target)
            else:
                target = self.fresh("a-file")
                with open(target, "w") as f:
                    f.write("a file of the user's\n")
            self.run("shape", self.base_argv(skip={name}) + [f"--{name}={target}"], flag=name)

    def identity(self):
        runs = [n for n, d in self.tool.declared.items() if d and d.kind == flag_kinds.RUN_DIRECTORY]
        if not runs:
            return
        run_dir = self.fresh("run")
        inputs = {n: self.input_path(n, d.kind) for n, d in self.tool.declared.items()
                  if d and d.kind in flag_kinds.INPUTS}
        base = {**{n: inputs[n] for n in inputs}, runs[0]: run_dir}
        for name in self.tool.required:
            base.setdefault(name, "x")
        argv = [f"--{n}={v}" for n, v in base.items()] + ["--do_train"] * ("do_train" in self.tool.flags)
        self.run("identity-first", argv)
        for name, declared in self.tool.declared.items():
            if declared is None or name in (runs[0], "do_train") or declared.kind in flag_kinds.OUTPUTS:
                continue
            if declared.kind in flag_kinds.INPUTS:
                path = inputs[name]
                file = os.path.join(os.path.dirname(path), _PART[declared.kind]) \
                    if declared.kind == flag_kinds.INPUT_FILES else \
                    os.path.join(path, _PART[declared.kind]) if os.path.isdir(path) else path
                with open(file) as f:
                    kept = f.read()
                with open(file, "w") as f:
                    f.write(kept + "changed\n")
                self.run("identity", argv, flag=name, change="content", affects=declared.affects_result)
                with open(file, "w") as f:
                    f.write(kept)
                continue
            value = _other_value(name, declared, base.get(name))
            changed = [a for a in argv if not a.startswith(f"--{name}=")] + [f"--{name}={value}"]
            self.run("identity", changed, flag=name, change=value, affects=declared.affects_result)


def _accepts(declared, value):
    try:
        parts = [int(v) if declared.integer else float(v) for v in value.split(",")]
    except ValueError:
        return False
    return all(declared.accepts(p) for p in parts)


def _other_value(name, declared, current):
    """A valid value of the flag other than its default (or `current`)."""
    flag = FLAGS[name]
    default = flag.default if current is None else current
    if declared.kind == flag_kinds.SWITCH:
        return "false" if default else "true"
    if declared.kind == flag_kinds.CHOICE:
        return next(v for v in flag.parser.enum_values if v != default)
    if declared.kind in (flag_kinds.NUMBER, flag_kinds.NUMBERS):
        candidates = [declared.lower, declared.upper] + ([default * 2, default + 1] if isinstance(
            default, (int, float)) else [1, 2, 0.5])
        for candidate in candidates:
            if candidate is None or candidate == default or not declared.accepts(candidate):
                continue
            if declared.integer and candidate != int(candidate):
                continue
            return str(int(candidate) if declared.integer else candidate)
        raise AssertionError(f"--{name}: no other value in {declared.range_text()}")
    if flag.parser.flag_type() in ("list", "multi string") or isinstance(default, list):
        return "other"
    return f"{default or ''}other"


def main(argv):
    name = argv[1]
    with tempfile.TemporaryDirectory() as work:
        tool = Tool(name, work)
        cases = Cases(tool)
        cases.numbers()
        cases.aliases()
        cases.shapes()
        cases.identity()
        unclassified = [n for n in tool.flags if tool.declared[n] is None]
        declared = {n: None if d is None else {"kind": d.kind, "affects_result": d.affects_result,
                                                "lower": d.lower, "upper": d.upper, "integer": d.integer}
                    for n, d in tool.declared.items()}
        print(json.dumps({"tool": name, "flags": declared, "unclassified": unclassified,
                          "required": tool.required, "cases": cases.results}, default=str))


if __name__ == "__main__":
    main(sys.argv)
