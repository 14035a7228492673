"""Makes the benchmarks page's plots from figures.json, the benches' figures as recorded with their machine, date,
command and peer: `python docs/benchmarks/plots.py` (what `make docs` runs first) writes one PNG per figure id beside
this file, or into --output_dir. The same figures.json and matplotlib give the same bytes, so the committed PNGs are
this script's output (tests/docs/test_site.py checks it)."""

import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")  # files only: no display, and the same rendering everywhere

import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

HERE = os.path.dirname(os.path.abspath(__file__))
OURS, PEER, THIRD, FOURTH = "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"


def caption(figure):
    """The line under every plot: where and how its figures were measured."""
    return f"{figure['machine']}; {figure['date']}; {figure['command']}"


def bars(ax, labels, series, unit, log=False):
    """Grouped bars: series is [(name, values, colour)], a None value is drawn as no bar."""
    width = 0.8 / len(series)
    for i, (name, values, colour) in enumerate(series):
        positions = [x + (i - (len(series) - 1) / 2) * width for x in range(len(labels))]
        kept = [(p, v) for p, v in zip(positions, values) if v is not None]
        ax.bar([p for p, _ in kept], [v for _, v in kept], width, label=name, color=colour)
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylabel(unit)
    if log:
        ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def plot_train_step(figure, ax):
    rows = figure["rows"]
    bars(ax, [r[0].replace(", ", "\n") for r in rows],
         [("official_bert", [r[1] for r in rows], OURS), ("KerasHub", [r[2] for r in rows], PEER)],
         "process CPU ms per step (log scale)", log=True)
    for x, row in enumerate(rows):
        ours, peer = row[1], row[2]
        ax.annotate("KerasHub\nout of\nmemory" if peer is None else f"{peer / ours:.2f}x", (x, ours),
                    textcoords="offset points", xytext=(0, 4), ha="center", fontsize=7)
    ax.set_ylim(top=max(r[1] for r in rows) * 4)
    ax.set_title("above each pair: KerasHub's time / official_bert's", fontsize=8)


def plot_finetune_padding(figure, axes):
    colours = (OURS, THIRD, FOURTH, PEER)
    for ax, row in zip(axes, figure["rows"]):
        ax.bar(range(4), row[1:], color=colours)
        ax.set_xticks(range(4), ["per-batch", "+ length\nbuckets", "padded\nto 128", "KerasHub"], fontsize=8)
        ax.set_title(row[0], fontsize=9)
        ax.set_ylabel("s per epoch")
        ax.grid(axis="y", alpha=0.3)


def plot_serving_padding(figure, ax):
    rows = figure["rows"]
    bars(ax, [r[0] for r in rows], [("padded to the request's longest", [r[1] for r in rows], OURS),
                                    ("padded to 128", [r[2] for r in rows], PEER)], "ms per request")


def plot_wordpiece(figure, ax):
    rows = figure["rows"]
    ax.bar(range(len(rows)), [r[1] for r in rows], color=(OURS, PEER, THIRD))
    ax.set_xticks(range(len(rows)), [r[0] for r in rows], fontsize=8)
    ax.set_ylabel(figure["unit"])
    ax.grid(axis="y", alpha=0.3)


def plot_deploy_size(figure, ax):
    rows, names = figure["rows"], figure["columns"][1:]
    bars(ax, [r[0] for r in rows], [(name, [r[i + 1] for r in rows], colour)
                                    for i, (name, colour) in enumerate(zip(names, (OURS, PEER, THIRD, FOURTH)))],
         "MiB (log scale)", log=True)


def plot_replicate_step_curve(figure, axes):
    rows, extra = figure["rows"], figure["extra"]
    for ax, (x_mlm, x_ltr, xlabel) in zip(axes, ((0, 0, "pretraining steps (tokens read: the same for both)"),
                                                 (1, 4, "targets predicted, millions (log scale)"))):
        for column, dev, half, name, colour in ((x_mlm, 2, 3, "(b) MLM", OURS), (x_ltr, 5, 6, "(c) LTR", PEER)):
            ax.errorbar([r[column] for r in rows], [r[dev] for r in rows], yerr=[r[half] for r in rows], marker="o",
                        capsize=3, label=name, color=colour)
        if x_mlm:
            ax.set_xscale("log")
            ticks = [0.2, 0.5, 1, 2, 5]
            ax.set_xticks(ticks, [str(t) for t in ticks])
            ax.minorticks_off()
            ax.plot([extra["c_prime"]["predicted_M"]], [extra["c_prime"]["dev"]], "s", color=PEER,
                    label="(c') LTR at step 625")
        ax.axhline(extra["random_init"], linestyle=":", color="grey", label="(e) random initialization")
        ax.axhline(extra["chance"], linestyle="--", color="lightgrey", label="chance")
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel("era dev accuracy, %")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)


# id -> (the plotting function, number of panels)
PLOTS = {
    "train_step": (plot_train_step, 1),
    "finetune_padding": (plot_finetune_padding, 2),
    "serving_padding": (plot_serving_padding, 1),
    "wordpiece": (plot_wordpiece, 1),
    "deploy_size": (plot_deploy_size, 1),
    "replicate_step_curve": (plot_replicate_step_curve, 2),
}


def make_plots(figures_file, output_dir):
    """Writes `<id>.png` into output_dir for every figure of figures_file; returns their paths.

    Args:
        figures_file: the JSON file of figures (see figures.json: id, title, machine, date, command, peer, rows).
        output_dir: where the PNGs go (created if needed).

    Returns:
        the paths written, in the file's order.

    Example:
    >>> import tempfile
    >>> paths = make_plots(os.path.join(HERE, "figures.json"), tempfile.mkdtemp())
    >>> sorted(os.path.basename(p) for p in paths)[:2]
    ['deploy_size.png', 'finetune_padding.png']
    """
    with open(figures_file, encoding="utf-8") as f:
        figures = json.load(f)["figures"]
    os.makedirs(output_dir, exist_ok=True)
    paths = []
    for figure in figures:
        function, panels = PLOTS[figure["id"]]
        fig, axes = plt.subplots(1, panels, figsize=(5 * panels + 2, 4.2), squeeze=False)
        function(figure, axes[0] if panels > 1 else axes[0][0])
        fig.suptitle(figure["title"], fontsize=9)
        fig.text(0.01, 0.01, caption(figure), fontsize=6.5, color="dimgrey")
        fig.tight_layout(rect=(0, 0.04, 1, 0.95))
        path = os.path.join(output_dir, figure["id"] + ".png")
        # No timestamp or version in the file, so the same figures give the same bytes.
        fig.savefig(path, dpi=100, metadata={"Software": None})
        plt.close(fig)
        paths.append(path)
    return paths


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--figures_file", default=os.path.join(HERE, "figures.json"))
    parser.add_argument("--output_dir", default=HERE)
    args = parser.parse_args()
    for path in make_plots(args.figures_file, args.output_dir):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
