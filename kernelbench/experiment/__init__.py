"""The orchestration layer: config -> prepared data -> cells -> rows -> a run folder.

    prepare.py    the algorithm resolved, the dataset loaded and prepared (user errors surface here)
    splits.py     splits of the training part (CV folds, holdouts, the papers' protocol)
    stopping.py   stop rules: the config's, a split's share of it, successive-halving budgets
    timing.py     the timed training loop (`trace`): evaluation outside the timer
    metrics.py    what an evaluation point measures (one results.csv row)
    cells.py      a cell (one estimator on one split) and where cells run (processes, Dask)
    folder.py     the run folder, resume and Ctrl-C
    selection.py  the model-selection path grid and tune share: validation cells, scores, refit
    run.py        `kernelbench run` (and the papers' fold protocol)
    grid.py       `kernelbench grid`
    tuning.py     `kernelbench tune`
    sweep.py      `kernelbench sweep`: one run per point of a grid of config values
    plan.py       what to run (a run, grid, tune or sweep) as one value, and `execute`, which runs it
    point.py      a sweep point in a process of its own (`python -m kernelbench.experiment.point`)
"""
from .cells import Cell, Execution, train_cell
from .folder import Interrupted, program_words, resume_command
from .grid import grid_search
from .prepare import Prepared, prepare_experiment
from .run import run_experiment
from .timing import Point, Trace, trace
from .tuning import tune

__all__ = ["Cell", "Execution", "Interrupted", "Point", "Prepared", "Trace", "grid_search", "prepare_experiment",
           "program_words", "resume_command", "run_experiment", "trace", "train_cell", "tune"]
