"""One run identity for every tool that resumes: what a training run's result depends on, recorded in its directory.

A resumable tool's run directory (the `RUN_DIRECTORY` flag: --output_dir of run_classifier, run_distillation,
run_squad, run_ner and run_pretraining) gets `run.json` when a run that trains starts in it: the tool, every flag
that changes what the run computes (`flag_kinds`: all of them but outputs, evaluation, prediction, logging and
device flags) and the content fingerprint of every input it reads (init checkpoint, teacher, data files,
vocabulary: `io/fingerprints.py`). A later run that trains in the same directory — a rerun after a kill, or of a
finished run — must have the same identity: any difference (another flag value, an input whose content changed at
the same path, another tool's run) is refused in one line naming the first difference, before anything is read or
written. So a run never resumes across a change, and a finished run never stands for a run with other settings.

A run that stops on bad input before its first checkpoint leaves no run.json behind. A directory with checkpoints
but no run.json (a run of an older version) is refused for training: its flags and inputs are unknown.
"""

import json
import os

from absl import flags

from official_bert.errors import Error
from official_bert.io import files
from official_bert.io.fingerprints import fingerprint
from official_bert.tools import flag_kinds

RECORD_NAME = "run.json"
FORMAT = 1
_FINGERPRINT_KINDS = {flag_kinds.INPUT_FILE: "file", flag_kinds.INPUT_FILES: "files",
                      flag_kinds.INPUT_DIRECTORY: "directory", flag_kinds.MODEL: "model"}


class RunIdentityError(Error):
    """A run directory that holds a run made with other flags or inputs, or of another tool."""


def tool_flags(flag_values=flags.FLAGS):
    """The names of the flags official_bert's modules define in this process (absl's own left out), in order."""
    names = []
    for module, module_flags in flag_values.flags_by_module_dict().items():
        if module.startswith("official_bert") or module == "__main__" or "/official_bert/" in module:
            names += [flag.name for flag in module_flags if flag.name not in names]
    return names


def identity_from_flags(program, flag_values=flags.FLAGS):
    """The identity of the run the parsed flags describe: {"program", "settings", "inputs", "paths"}.

    Args:
        program: the tool's name (run_classifier, ...).
        flag_values: the parsed flags.
    """
    settings, inputs, paths = {}, {}, {}
    for name in tool_flags(flag_values):
        declared = flag_kinds.declared(name)
        if declared is None or not declared.affects_result:
            continue
        value = flag_values[name].value
        if declared.kind in _FINGERPRINT_KINDS:
            if value:
                inputs[name] = fingerprint(value, _FINGERPRINT_KINDS[declared.kind])
                paths[name] = value
        elif declared.kind not in flag_kinds.OUTPUTS:
            settings[name] = list(value) if isinstance(value, (list, tuple)) else value
    return {"format": FORMAT, "program": program, "settings": settings, "inputs": inputs, "paths": paths}


def check_and_record(directory, identity, flag="--output_dir"):
    """Refuses a run directory that holds another run; records `identity` there if it holds none yet.

    Args:
        directory: the run directory (created if needed).
        identity: `identity_from_flags`'s.
        flag: the flag that names the directory, for messages.

    Returns:
        True if this call wrote the record (a run that then fails before its first checkpoint removes it:
        `forget_if_unused`).

    Raises:
        RunIdentityError: naming the first difference.

    Example:
    >>> import tempfile
    >>> run = tempfile.mkdtemp()
    >>> first = {"format": 1, "program": "run_classifier", "settings": {"seed": 1}, "inputs": {}, "paths": {}}
    >>> check_and_record(run, first), check_and_record(run, first)
    (True, False)
    >>> check_and_record(run, {**first, "settings": {"seed": 2}})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.tools.run_identity.RunIdentityError: --output_dir=... holds a run made with --seed=1 (now 2): ...
    """
    path = os.path.join(directory, RECORD_NAME)
    recorded = _read(path)
    if recorded is None:
        if files.exists(os.path.join(directory, "checkpoint")):
            raise RunIdentityError(f"{flag}={directory} holds checkpoints but no {RECORD_NAME} (a run of an older "
                                   "version, or not made by this tool): its flags and inputs are unknown, so it is "
                                   f"not resumed; use a new {flag}")
        files.makedirs(directory)
        tmp = files.temporary_path(path)
        with files.open_file(tmp, "wb") as f:
            f.write((json.dumps(identity, indent=2, sort_keys=True) + "\n").encode("utf-8"))
        files.rename(tmp, path)
        return True
    if recorded.get("program") != identity["program"]:
        raise RunIdentityError(f"{flag}={directory} holds a run of {recorded.get('program', 'another tool')}, not "
                               f"of {identity['program']}: use a new {flag}")
    difference = first_difference(recorded, identity)
    if difference:
        raise RunIdentityError(f"{flag}={directory} holds a run made with {difference}: rerun with the same flags "
                               f"and inputs to continue it, or use a new {flag}")
    return False


def forget_if_unused(directory):
    """Removes the record of a run that wrote no checkpoint (it stopped on bad input): a refusal writes nothing."""
    if not files.exists(os.path.join(directory, "checkpoint")):
        path = os.path.join(directory, RECORD_NAME)
        if files.exists(path):
            files.remove(path)


def first_difference(recorded, current):
    """The first difference between two identities, in words ("--alpha=0.5 (now 0.9)"), or None.

    Example:
    >>> old = {"program": "run_distillation", "settings": {"alpha": 0.5}, "inputs": {"teacher": "ab"},
    ...        "paths": {"teacher": "runs/era"}}
    >>> first_difference(old, {**old, "inputs": {"teacher": "cd"}})
    'another --teacher: runs/era has changed since (its content differs)'
    >>> first_difference(old, {**old, "program": "run_classifier"}) is None
    False
    """
    if recorded.get("program") != current["program"]:
        return f"{recorded.get('program', 'another tool')}, not {current['program']}"
    old_settings, settings = recorded.get("settings", {}), current["settings"]
    for name in sorted(set(old_settings) | set(settings)):
        if old_settings.get(name) != settings.get(name):
            return f"--{name}={_shown(old_settings.get(name))} (now {_shown(settings.get(name))})"
    old_inputs, inputs = recorded.get("inputs", {}), current["inputs"]
    for name in sorted(set(old_inputs) | set(inputs)):
        if old_inputs.get(name) != inputs.get(name):
            old_path = recorded.get("paths", {}).get(name)
            new_path = current["paths"].get(name)
            if old_path is None or new_path is None:
                return f"--{name}={_shown(old_path)} (now {_shown(new_path)})"
            if old_inputs.get(name) is None:
                return f"--{name}={old_path}, which was missing then (now it holds something)"
            if old_path == new_path:
                return f"another --{name}: {old_path} has changed since (its content differs)"
            return f"another --{name}: {old_path} then, {new_path} now, with other content"
    return None


def _shown(value):
    if value is None:
        return "(not given)"
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def _read(path):
    if not files.exists(path):
        return None
    try:
        with files.open_file(path, "rb") as f:
            record = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError):
        raise RunIdentityError(f"{path}: unreadable (expected the JSON a run writes there); if the run it records "
                               "is of no use, use a new output directory") from None
    return record if isinstance(record, dict) else None
