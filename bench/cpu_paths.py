"""A benchmark on both of TensorFlow's CPU paths, taking turns: oneDNN on and off, side by side.

    python -m bench.cpu_paths [--imitate avx2] [--rounds 2] -- bench.inference --preset base --batch_sizes 32 ...

TensorFlow computes CPU ops with oneDNN where the CPU has AVX512_VNNI, AVX512_BF16 or AMX, and with Eigen's kernels
elsewhere (AVX2-only CPUs: most cloud VMs and laptops), unless TF_ENABLE_ONEDNN_OPTS says otherwise. This runs the
given benchmark (`bench.inference`, `bench.train_step --compare keras_hub` or `bench.finetune`) as a child process
with TF_ENABLE_ONEDNN_OPTS=1, then =0, --rounds times, and prints each figure's median on each path and their ratio
(with the peers in the same children: KerasHub runs on the same path; PyTorch has its own kernels).

--imitate avx2 makes a newer CPU compute as an AVX2-only one: oneDNN held to AVX2 (ONEDNN_MAX_CPU_ISA), XLA's code
generation too (--xla_cpu_max_isa), and the PyTorch peer's kernels (ATEN_CPU_CAPABILITY, MKL_ENABLE_INSTRUCTIONS).
Eigen's kernels need no cap: TensorFlow's wheel builds them for AVX2 at most (it runs on AVX2-only CPUs), so its
Eigen path here is that of an AVX2-only CPU at this machine's clock and caches.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

from bench import hardware

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATHS = {"oneDNN on": "1", "oneDNN off": "0"}
AVX2_CAPS = {"ONEDNN_MAX_CPU_ISA": "AVX2", "DNNL_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2",
             "MKL_ENABLE_INSTRUCTIONS": "AVX2"}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--imitate", choices=["avx2"], default=None, help="compute as an AVX2-only CPU would")
    parser.add_argument("--rounds", type=int, default=1, help="runs on each path, the paths taking turns")
    parser.add_argument("bench", nargs=argparse.REMAINDER, help="the benchmark module and its arguments")
    args = parser.parse_args(argv)
    args.bench = args.bench[1:] if args.bench[:1] == ["--"] else args.bench
    if args.rounds < 1:
        parser.error(f"--rounds={args.rounds}: expected at least 1")
    if not args.bench or args.bench[0] not in _FIGURES:
        parser.error(f"expected one of {', '.join(sorted(_FIGURES))} and its arguments after --")
    return args


def environment(path_value, imitate):
    env = {**os.environ, "TF_ENABLE_ONEDNN_OPTS": path_value, "TF_CPP_MIN_LOG_LEVEL": "2"}
    if imitate == "avx2":
        env.update(AVX2_CAPS)
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_cpu_max_isa=AVX2").strip()
    return env


def inference_figures(output):
    """{"official_bert batch 32 fp32": seq/s, "torch batch 32 fp32": seq/s, ...} of bench.inference's table."""
    lines = output.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("seq/s (ratio to official_bert"))
    frameworks = [cell.strip() for cell in lines[header].split("|")[1:]]
    figures = {}
    for line in lines[header + 1:]:
        match = re.match(r"(batch \d+ \w+) \| (.*)", line)
        if match:
            for framework, cell in zip(frameworks, match.group(2).split("|")):
                if re.match(r"\s*[0-9.]+", cell):
                    figures[f"{framework} {match.group(1)} (seq/s)"] = float(cell.split()[0])
    return figures


def train_step_figures(output):
    """{"official_bert step (seq/s)": ..., "keras_hub step (seq/s)": ...} of bench.train_step --compare."""
    match = re.search(r"^official_bert ([0-9.]+) keras_hub ([0-9.]+) ratio", output, re.MULTILINE)
    return {"official_bert step (seq/s)": float(match.group(1)), "keras_hub step (seq/s)": float(match.group(2))}


def finetune_figures(output):
    """{"<framework> epoch (s)": seconds} of bench.finetune's last line."""
    line = next(line for line in reversed(output.splitlines()) if line.startswith("epoch seconds: "))
    cells = line.removeprefix("epoch seconds: ").split(";")[0].split()
    return {f"{name} epoch (s)": float(value) for name, value in zip(cells[::2], cells[1::2])}


_FIGURES = {"bench.inference": inference_figures, "bench.train_step": train_step_figures,
            "bench.finetune": finetune_figures}


def run_once(bench, env):
    child = subprocess.run([sys.executable, "-m", *bench], env=env, cwd=REPO, stdout=subprocess.PIPE, text=True,
                           check=True)
    return _FIGURES[bench[0]](child.stdout), child.stdout


def main(argv=None):
    args = parse_args(argv)
    print(hardware.machine_line(), flush=True)
    print(f"{' '.join(args.bench)}; {args.rounds} round(s), the paths taking turns"
          + (f"; imitating an AVX2-only CPU ({', '.join(f'{k}={v}' for k, v in AVX2_CAPS.items())}, "
             "--xla_cpu_max_isa=AVX2)" if args.imitate else ""), flush=True)
    figures = {path: {} for path in PATHS}
    for _ in range(args.rounds):
        for path, value in PATHS.items():
            found, output = run_once(args.bench, environment(value, args.imitate))
            machine = next((line for line in output.splitlines() if "oneDNN" in line), "")
            print(f"{path}: {machine}", flush=True)
            for name, figure in found.items():
                figures[path].setdefault(name, []).append(figure)
            print(f"{path}: " + ", ".join(f"{name} {figure:.2f}" for name, figure in found.items()), flush=True)
    print(f"\nmedians | {' | '.join(PATHS)} | on / off")
    for name in figures["oneDNN on"]:
        on, off = (statistics.median(figures[path][name]) for path in PATHS)
        print(f"{name} | {on:.2f} | {off:.2f} | {on / off:.2f}")


if __name__ == "__main__":
    main()
