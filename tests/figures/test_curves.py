"""The curves of `kernelbench compare` (kernelbench/figures/curves.py): each point the mean over a
method's trials at one evaluation; one line per method. Truths: hand-made rows averaged here."""
import pandas as pd
import pytest

from kernelbench.figures.curves import mean_curve, method_curves   # its package selects the Agg backend


def rows():
    # two trials of dsg whose clocks differ; norma evaluated once (an exact solver's single point)
    return pd.DataFrame({
        "method": ["dsg"] * 4 + ["norma"], "algorithm": ["dsg"] * 4 + ["norma"],
        "run_id": ["r1"] * 4 + ["r2"], "trial": [0, 0, 1, 1, 0], "iteration": [0, 10, 0, 10, 5],
        "train_seconds": [0.1, 1.0, 0.3, 3.0, 2.0], "samples_seen": [0, 160, 0, 160, 80],
        "test_error": [0.5, 0.2, 0.4, 0.1, 0.3]})


def test_a_curve_point_is_the_mean_of_the_trials_at_one_evaluation():
    curve = mean_curve(rows()[rows()["method"] == "dsg"], "train_seconds", "test_error")
    assert list(curve.index) == [0, 10]
    assert curve["train_seconds"].tolist() == pytest.approx([0.2, 2.0])
    assert curve["test_error"].tolist() == pytest.approx([0.45, 0.15])


def test_one_line_per_method_and_a_lone_point_as_a_marker():
    fig = method_curves(rows(), [("train_seconds", "test_error"), ("samples_seen", "test_error")])
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"dsg (2 trials)", "norma (1 trial)"}
    assert list(lines["dsg (2 trials)"].get_xdata()) == pytest.approx([0.2, 2.0])
    assert lines["norma (1 trial)"].get_linestyle() == "None"
    assert len(fig.axes) == 2


def test_no_figure_when_no_method_has_two_points():
    one = rows()[rows()["method"] == "norma"]
    assert method_curves(one, [("train_seconds", "test_error")]) is None
