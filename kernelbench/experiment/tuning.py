"""`kernelbench tune CONFIG`: model selection on the training part for every algorithm and dataset.

    settings   sampled from the config's `search:` space, or the algorithm's declared one
               (kernelbench/spaces.py), by Optuna's TPE sampler (seeded; the config's own
               parameters are the first setting tried);
    validation on the training part only, never the test part: a held-out fraction or k folds of
               it (`tune.validation`); with `dataset.labeled`, of the labeled rows only -- a user
               has no other labels -- while every unlabeled row stays in training. The papers'
               protocol (held-out *unlabeled* folds scored with their true labels) is
               `validation: paper`, for reproduction;
    budgets    (the config's `stop` unit, or without `stop` the share of the algorithm's own fit;
               a pass means one over the whole training part, whatever rows a split trains on:
               see stopping.same_training) synchronous successive halving (Jamieson & Talwalkar 2016; Hyperband's brackets,
               Li et al. 2018): a bracket trains eta^(rungs-1) settings at stop / eta^(rungs-1),
               keeps the best 1/eta at eta× that budget, ..., the last at the config's full `stop`.
               Brackets repeat until `--budget` time or `--candidates` settings are spent (the
               time is checked between rungs); then `refine` settings around the best are trained
               at the full budget;
    output     every (setting, budget, fold) cell a row of results.csv (params, budget, validation
               error in the test_* column); run.json lists the settings; the best is written as a
               runnable config (<run folder>/<name>.tuned.yaml) and refitted on the whole training
               part, `trials` times, scored on the test part (rows with an empty fold); search.png
               plots validation error against budget for every setting.

Why Optuna's sampler and our own halving: the rungs run as batches on the experiment loop's executors
(joblib processes or a Dask cluster), and Optuna's SuccessiveHalvingPruner is asynchronous -- it
promotes a trial against whichever trials reported before it, so in a batch its decisions depend on
the order of the calls; keeping the best 1/eta of a finished rung is the synchronous rule and
takes a few lines. scikit-learn's HalvingRandomSearchCV has neither a time budget, nor resume,
nor our results rows. Resume replays: the sampler is seeded and told the rungs' results in a fixed
order, so a resumed tune asks for the same settings, and the cells already in results.csv are
not trained again.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import yaml

from kernelbench._io import atomic_write_text
from kernelbench.config import ExperimentConfig, TagsConfig, TuneConfig, config_to_dict
from kernelbench.errors import ConfigError, DataError, require_extra
from kernelbench.results import read_results
from kernelbench.spaces import inside, optuna_distributions, space_to_dict

from .cells import Execution, execute, finished_rows
from .folder import open_run
from .prepare import describe, determinism, prepare_experiment
from .selection import (mean_or_none, refit, refuse_without_test, resolve_space, selection_metric,
                        validation_cells, validation_values)
from .splits import selection_splits
from .stopping import rung_budgets

DEFAULT_CANDIDATES = 27        # settings tried when neither a time budget nor a count is given
# Below this many held-out rows a holdout cannot tell settings apart: its binomial standard error,
# sqrt(p(1 - p)/n), is above half a point at 5-10 % error (2,000 rows at 5 %: 0.49 points;
# 400 rows: 1.1), so `tune` validates by cfg.cv folds instead, which score every training row once.
MIN_HOLDOUT_ROWS = 2000
INCUMBENT = -1                 # the trial number of the config's own setting on the fresh splits
CHALLENGER = -2                # the search's best, measured again on the fresh splits


def tune(cfg: ExperimentConfig, *, out_dir="results", quiet=False, command=None, resume=False,
         execution=None) -> Path:
    """Search `cfg`'s space (see the module docstring); returns the run folder."""
    require_extra("optuna", "`kernelbench tune`")
    refuse_without_test(cfg, "tune")
    execution = execution or Execution()
    execution.show = not quiet and sys.stderr.isatty()
    if cfg.grid:
        print(f"kernelbench: tune searches `search:` around algorithm.params; the config's grid "
              f"({', '.join(cfg.grid)}) is not used", file=sys.stderr)
    # A tune is its own experiment (<name>.tune), untagged: its refit is not the paper's run, and
    # figures and the report select by tags. The tuned config keeps the tags.
    tags = cfg.tags
    cfg = replace(cfg, name=f"{cfg.name}.tune"[:100], tags=TagsConfig(), grid={})
    prepared = prepare_experiment(cfg, progress=execution.show)
    data, settings = prepared.data, cfg.tune
    space, scales = resolve_space(cfg.search, prepared.spec.parameters, data.X_train, cfg.algorithm.params,
                                  cfg.seed)
    if not space:
        raise ConfigError(f"search: algorithm {prepared.spec.name!r} declares no search space; give one, "
                          "e.g. search: {C: {log-uniform: [0.01, 10000]}}")
    validation = _validation_name(prepared, settings)
    splits = validation_splits(prepared, cfg)
    limit = settings.candidates or (None if settings.budget else DEFAULT_CANDIDATES)
    total = (limit or 0) * len(splits)
    with open_run(cfg, out_dir, command, resume, total_cells=total + cfg.trials) as (run, done):
        search = _Search(cfg, prepared, space, scales, splits, run, done, execution)
        run.update(dataset=describe(data), determinism=determinism(prepared), labeled=prepared.labeled,
                   search_space=space_to_dict(space), search_scales=scales, validation=validation,
                   folds=len(splits), rungs=[b for _, b in search.rungs], eta=settings.eta)
        brackets = search.halve(limit)
        search.refine(brackets)
        best = search.recheck()
        tuned_path = write_tuned_config(replace(cfg, name=cfg.name[:-len(".tune")], tags=tags),
                                        best["params"], run.path)
        refitted = refit(prepared, cfg, best["params"], run, done, execution)
        _plot_search(run.path, search.metric)
        run.finish("finished", settings=_settings_table(search.table), best=best, refit=refitted,
                   tuned_config=str(tuned_path), search_seconds=search.elapsed())
    return run.path


class _Search:
    """One tune's search inside its run folder: the Optuna study, the rungs' budgets, the
    validation splits, and every setting's validation scores by budget (`table`, trial number ->
    {params, scores}), written to run.json as each rung finishes."""

    def __init__(self, cfg: ExperimentConfig, prepared, space: dict, scales: dict, splits: list, run, done: set,
                 execution: Execution):
        import optuna  # heavy (SQLAlchemy, alembic): only `tune` needs it

        self.cfg, self.prepared, self.space, self.scales, self.splits = cfg, prepared, space, scales, splits
        self.run, self.done, self.execution = run, done, execution
        self.settings = cfg.tune
        self.metric = selection_metric(prepared.data.task)
        self.distributions = optuna_distributions(space, scales)
        self.rungs = rung_budgets(cfg.stop, self.settings)
        self.full = self.rungs[-1][1]               # the config's whole budget: the last rung's
        self.defaults = prepared.spec.defaults()
        self.table: dict[int, dict] = {}
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=cfg.seed), direction="minimize")
        first = inside(space, scales, cfg.algorithm.params)
        if first:
            self.study.enqueue_trial(first)         # the config's own setting is the first one tried
        self.spent_before = float(run.record.search_seconds or 0.0)
        self.started = time.monotonic()

    def elapsed(self) -> float:
        """Seconds searched, over resumes."""
        return self.spent_before + time.monotonic() - self.started

    def out_of_time(self) -> bool:
        return self.settings.budget is not None and self.elapsed() >= self.settings.budget

    def evaluate(self, trials, k: int, desc: str, on=None) -> list[float]:
        """Train `trials` (Optuna's, or settings of our own) at rung k on every split of `on` (default:
        the search's splits); their mean validation scores, inf where a split diverged or failed."""
        on = self.splits if on is None else on
        stop, budget = self.rungs[k]
        cells = validation_cells(self.cfg, [(t.number, t.params) for t in trials], on, self.metric, stop,
                                 self.prepared.data.X_train.shape[0], budget)
        execute(self.prepared, cells, self.cfg, self.run, self.done, self.execution, desc=desc)
        scores = []
        for t, values in zip(trials, validation_values(self.run, cells, len(on), self.defaults, self.metric)):
            score = mean_or_none(values)
            score = math.inf if score is None else score          # diverged / failed: the worst
            scores.append(score)
            self.table.setdefault(t.number, {"params": dict(t.params), "scores": {}})["scores"][budget] = score
        self.run.update(search_seconds=self.elapsed(), settings=_settings_table(self.table))
        return scores

    def halve(self, limit: int | None) -> int:
        """Brackets of successive halving until `limit` settings were asked (None: no limit) or the
        time budget is spent; returns how many brackets ran."""
        asked = bracket = 0
        while (limit is None or asked < limit) and not self.out_of_time():
            size = self.settings.eta ** (len(self.rungs) - 1)
            if limit is not None:
                size = min(size, limit - asked)
            trials = [self.study.ask(self.distributions) for _ in range(size)]
            asked += size
            self._bracket(trials, bracket)
            bracket += 1
        return bracket

    def _bracket(self, trials: list, bracket: int) -> None:
        """One bracket: every rung trains the survivors of the one below, the best 1/eta go on."""
        from optuna.trial import TrialState

        eta, last = self.settings.eta, len(self.rungs) - 1
        for k in range(len(self.rungs)):
            scores = self.evaluate(trials, k, f"bracket {bracket} rung {k}")
            for t, score in zip(trials, scores):
                t.report(_finite(score), step=k)      # the sampler learns from pruned ones too
            if k == last:
                for t, score in zip(trials, scores):
                    self.study.tell(t, _finite(score))
                return
            keep = max(1, math.ceil(len(trials) / eta))     # synchronous halving: the best 1/eta
            order = np.argsort(scores, kind="stable")
            for i in order[keep:]:
                self.study.tell(trials[i], state=TrialState.PRUNED)
            trials = [trials[i] for i in sorted(order[:keep])]
            if self.out_of_time():
                break
        for t in trials:                                # the budget ended mid-bracket
            self.study.tell(t, state=TrialState.PRUNED)

    def finished(self) -> dict:
        """The settings trained at the full budget: trial number -> {params, scores}."""
        return {n: row for n, row in self.table.items() if self.full in row["scores"]}

    def refine(self, brackets: int) -> None:
        """`tune.refine` settings drawn around the best finished one, trained at the full budget."""
        refine = self.settings.eta if self.settings.refine is None else self.settings.refine
        finished = self.finished()
        if not (refine and finished):
            return
        best_number = min(finished, key=lambda n: finished[n]["scores"][self.full])
        rng = np.random.default_rng(self.cfg.seed + 7919 * brackets)
        for _ in range(refine):
            self.study.enqueue_trial({name: self.space[name].around(value, self.scales, rng, width=0.25)
                                      for name, value in finished[best_number]["params"].items()})
        trials = [self.study.ask(self.distributions) for _ in range(refine)]
        for t, score in zip(trials, self.evaluate(trials, len(self.rungs) - 1, "refine")):
            self.study.tell(t, _finite(score))

    def recheck(self) -> dict:
        """The chosen setting (run.json's `best`). The search's best is the minimum of many noisy
        estimates, biased low by construction: it is measured again, with the config's own setting,
        on folds drawn anew, and replaces that setting only if it beats it there by more than one
        standard error. A DataError when no setting finished its full budget with a finite error."""
        cfg, full, metric = self.cfg, self.full, self.metric
        finished = self.finished()
        if not finished or not any(math.isfinite(r["scores"][full]) for r in finished.values()):
            self.run.finish("failed", settings=_settings_table(self.table),
                            error="no setting finished its full budget with a finite validation error")
            raise DataError("no setting finished its full budget with a finite validation error (see "
                            f"{self.run.results_path}); raise --budget, or narrow `search:` away from "
                            "settings that diverge")
        challenger = min(finished, key=lambda n: finished[n]["scores"][full])
        incumbent = {name: cfg.algorithm.params[name] for name in self.space if name in cfg.algorithm.params}
        fresh = validation_splits(self.prepared, cfg, split_seed=cfg.seed + 1)
        held, rival = self.evaluate([_Setting(INCUMBENT, incumbent),
                                     _Setting(CHALLENGER, finished[challenger]["params"])],
                                    len(self.rungs) - 1, "recheck", on=fresh)
        regression = self.prepared.data.task == "regression"
        error = _standard_error(held, fresh, self.run, metric, regression, full)
        keep, decision = _decide(held, rival, error)
        chosen = (INCUMBENT, incumbent, held) if keep else (challenger, finished[challenger]["params"], rival)
        score = chosen[2] if math.isfinite(chosen[2]) else None
        return {"trial": chosen[0], "params": chosen[1], f"validation_{metric[5:]}": score,
                **({} if regression or score is None else {"validation_standard_error": standard_error(score, fresh)}),
                "search_validation": finished[challenger]["scores"][full],
                "incumbent_validation": held if math.isfinite(held) else None,
                "incumbent_standard_error": error, "kept_incumbent": keep, "decision": decision}


# ---- pieces ---------------------------------------------------------------------------------------

def standard_error(error: float, splits) -> float:
    """The binomial standard error of a validation error rate measured on the splits' distinct
    validation rows, sqrt(p(1 − p)/n): settings whose errors differ by less are not told apart by
    this validation (200 labeled rows at 8 % error: 1.9 points)."""
    n = len(np.unique(np.concatenate([valid for _, valid, _ in splits])))
    return math.sqrt(max(error * (1.0 - error), 0.0) / n)


class _Setting:
    """A setting outside Optuna's study (the incumbent), shaped as its trials are."""

    def __init__(self, number: int, params: dict):
        self.number, self.params = number, params


def _decide(held: float, rival: float, error: float) -> tuple[bool, str]:
    """(keep the config's own setting?, why): the one-standard-error rule on the fresh splits."""
    if not math.isfinite(held):
        return False, "the config's own setting diverged or failed; the search's best is used"
    gain = held - rival
    if gain > error:      # (a rival that diverged on the fresh folds has gain -inf: the setting is kept)
        return False, (f"on fresh folds the search's best ({rival:.4g}) beats the config's own setting "
                       f"({held:.4g}) by {gain:.4g}, more than one standard error ({error:.4g})")
    return True, (f"on fresh folds the search's best ({rival:.4g}) does not beat the config's own setting "
                  f"({held:.4g}) by more than one standard error ({error:.4g}): kept the config's own setting")


def _standard_error(score: float, splits, run, metric: str, regression: bool, full: float) -> float:
    """The standard error of the config's own setting's validation estimate: binomial over the
    distinct validation rows for an error rate; for a mean squared error, the spread of its splits'
    values over sqrt(splits) (0 with one split: no rule beyond "lower")."""
    if not regression:
        return standard_error(score, splits) if math.isfinite(score) else 0.0
    values = [float(r[metric]) for r in finished_rows(run) if r.get("trial") == INCUMBENT
              and r.get("budget") == full and r.get("status") == "ok" and r.get(metric) is not None]
    return float(np.std(values, ddof=1) / math.sqrt(len(values))) if len(values) > 1 else 0.0


def validation_splits(prepared, cfg: ExperimentConfig, split_seed: int | None = None) -> list[tuple]:
    """The splits `tune` validates on (kernelbench/experiment/splits.py), as `cfg.tune` says:
    holdout or cv of the training part (of its labeled rows with dataset.labeled), or the papers'
    protocol; `split_seed` draws them anew. Never the test part."""
    settings = cfg.tune
    return selection_splits(prepared, cfg, _validation_name(prepared, settings), holdout=settings.holdout,
                            shuffle=settings.shuffle, split_seed=split_seed)


def _validation_name(prepared, settings: TuneConfig) -> str:
    """The validation asked for; by default k folds of the labeled rows with dataset.labeled, k
    folds where a held-out fraction would hold fewer than MIN_HOLDOUT_ROWS rows, else a holdout."""
    if settings.validation is not None:
        return settings.validation
    if prepared.labeled is not None:
        return "cv"
    return "cv" if settings.holdout * len(prepared.data.y_train) < MIN_HOLDOUT_ROWS else "holdout"


def write_tuned_config(cfg: ExperimentConfig, params: dict, folder: Path) -> Path:
    """The config with the best setting written into algorithm.params, runnable with
    `kernelbench run` (its search and tune sections dropped)."""
    chosen = replace(cfg, algorithm=replace(cfg.algorithm, params={**cfg.algorithm.params, **params}))
    data = config_to_dict(chosen)
    data.pop("search", None)
    data.pop("tune", None)
    data["grid"] = {}
    data["name"] = f"{cfg.name}.tuned"
    path = Path(folder) / f"{cfg.name}.tuned.yaml"
    header = (f"# The setting `kernelbench tune` chose for {cfg.source or cfg.name} (validation on the "
              "training part only);\n# run it with: kernelbench run " + str(path) + "\n")
    atomic_write_text(path, header + yaml.safe_dump(data, sort_keys=False))
    return path


def _finite(score: float) -> float:
    """Optuna is told a finite number: a diverged or failed setting counts as the worst error."""
    return score if math.isfinite(score) else 1e300


def _settings_table(table: dict) -> list[dict]:
    return [{"trial": n, "params": row["params"],
             "scores": {f"{b:g}": (s if math.isfinite(s) else None) for b, s in row["scores"].items()}}
            for n, row in sorted(table.items())]


def _plot_search(folder: Path, metric: str) -> None:
    """search.png: validation error against budget, a line per setting (the survivors of each
    rung go on to the right)."""
    # the figures package imports matplotlib (heavy): only when a search is drawn
    from kernelbench.figures.base import save_figure
    from kernelbench.figures.tune_search import search_figure

    save_figure(search_figure(read_results(folder), metric), Path(folder) / "search")
