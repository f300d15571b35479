"""Stop rules in one place: how long a cell trains, in the config's unit or the estimator's own fit,
on the whole training part or on a split of it, and the budgets of successive halving."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from kernelbench.config import ExperimentConfig, StopConfig, TuneConfig


def same_training(stop: StopConfig, n_train: int, n_split: int) -> StopConfig:
    """A budget in passes means passes over the whole training part, as the final run makes: a
    split that trains on fewer rows makes proportionally more passes, so that it takes as many
    steps as the final run (step schedules, feature counts and averaging depend on the step
    count, not on the split's size; e.g. the papers' protocol trains on a fifth of the
    unlabeled rows)."""
    if stop.passes is None or n_split >= n_train:
        return stop
    return replace(stop, passes=stop.passes * n_train / n_split)


def split_stop(cfg: ExperimentConfig, stop: StopConfig, n_train: int, train_rows, labeled_rows) -> StopConfig:
    """The stop rule of a validation split (indices `train_rows`, of which `labeled_rows` keep their
    labels) whose refit trains on the n_train rows of the training part: same_training over the rows
    the algorithm fits. A supervised algorithm under dataset.labeled_only fits the labeled rows
    alone, in the split and in the refit; the papers' protocol adds a fifth of the unlabeled rows to
    each split, which it never sees, so they must not count."""
    if cfg.dataset.labeled_only and labeled_rows is not None:
        return same_training(stop, min(cfg.dataset.labeled, n_train), int(np.isin(train_rows, labeled_rows).sum()))
    return same_training(stop, n_train, len(train_rows))


def total_steps(stop: StopConfig, est) -> float:
    """Iterations the stop rule allows a begun estimator; with none of passes / iterations /
    seconds, those of its own fit (its `passes`, resolved at begin where `auto`)."""
    if stop.as_fit:
        return est.planned_steps(stop.fraction or 1.0)
    limits = []
    if stop.passes is not None:
        limits.append(math.ceil(stop.passes * est.steps_per_pass))
    if stop.iterations is not None:
        limits.append(stop.iterations)
    return min(limits) if limits else math.inf


def rung_budgets(stop: StopConfig, settings: TuneConfig) -> list[tuple[StopConfig, float]]:
    """(stop rule, budget in the config's unit) of each rung, smallest first: the config's `stop`
    scaled by eta^-(rungs-1), ..., 1. The unit is passes, else iterations, else seconds; without
    `stop`, the share of the algorithm's own fit (its `passes`, resolved per split)."""
    out = []
    for k in reversed(range(settings.rungs)):
        factor = settings.eta ** -k
        if stop.as_fit:
            out.append((StopConfig(fraction=factor), factor))
            continue
        passes = None if stop.passes is None else stop.passes * factor
        iterations = None if stop.iterations is None else max(1, math.ceil(stop.iterations * factor))
        seconds = None if stop.seconds is None else stop.seconds * factor
        scaled = StopConfig(passes=passes, iterations=iterations, seconds=seconds)
        budget = next(v for v in (passes, iterations, seconds) if v is not None)
        out.append((scaled, float(budget)))
    return out
