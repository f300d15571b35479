"""The typed config: each section's fields, declared once (kernelbench/schema/declare.py), in the order
the resolved config (and the reference) lists them."""
from __future__ import annotations

from kernelbench._vocab import (DTYPES, FILE_FORMATS, METRICS, REGRESSION_ONLY_METRICS, ROLES, SCALINGS,
                                SCORING_PROTOCOLS, SYNTHETIC, TASKS, VALIDATIONS)
from kernelbench.config.values import COLUMN, DELIMITER, DURATION, LABELS
from kernelbench.data.synthetic import MAX_ROWS, SHAPES, VARIANTS
from kernelbench.schema import Count, Flag, Number, Subset, Text, Words, field, keys, section

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
FIGURE_PATTERN = r"^(fig|table)[0-9]+[a-z]*$"
_ROWS = Count(1, "an integer", most=MAX_ROWS, refusal=f"at most {MAX_ROWS:,} rows, got {{:,}}")


@section
class DatasetConfig:
    name: str | None = field(None, "a registry dataset, or `synthetic` for a generated replica (the keys marked "
                                   "synthetic below)", shown="", required=True)
    path: str | None = field(None, "a user data file (svmlight, CSV, TSV, .npy, .npz, Parquet; "
                                   "docs/guide/own-data.md); a relative path is taken from the config's folder", shown="", required=True)
    test_path: str | None = field(None, "a separate test file for `path` (same format and columns); the training "
                                        "file is then not split (`test` is the file)", shown="")
    format: str | None = field(None, "the format of `path` (and `test_path`); csv and tsv are delimited text",
                               Words(FILE_FORMATS),
                               shown="from the suffix: .csv, .tsv, .npy, .npz, .parquet, else svmlight")
    delimiter: str | None = field(None, "what separates the fields of a csv / tsv file", DELIMITER,
                                  shown="`,` (.csv), tab (.tsv)")
    header: bool | str | None = field(None, "whether a csv / tsv file's first line names the columns (auto: "
                                            "when it holds a word that is not a number)", Flag(auto=True), shown="auto")
    label: int | str | None = field(None, "the column of a csv / tsv / npy / parquet file that holds the "
                                          "labels (targets); the other columns are the features", COLUMN,
                                    shown="0 (the first column)")
    npz_features: str | None = field(None, "the name of an npz file's features array (rows × features)",
                                     Text(100, "an array name"), shown="X")
    npz_labels: str | None = field(None, "the name of an npz file's labels array", Text(100, "an array name"),
                                   shown="y")
    subsample: int | None = field(None, "a seeded random subset of the training part",
                                  Count(1, "a positive integer"))
    test: str | float = field("official", "`official` (the published test file, or `test_path`), `none`, or a "
                                          "fraction in (0, 1) split off the data file (stratified for "
                                          "classification); null means none",
                              shown="official (registry, test_path), 0.2 (user file)")
    labeled: int | None = field(None, "semi-supervised: L training rows keep their labels (drawn per trial seed, "
                                      "both classes guaranteed), every other training row is unlabeled (NaN); "
                                      "kernelbench/semisupervised.py", Count(1, "a positive integer"))
    scale: str = field("none", "feature scaling fitted on the training part (none: the data as published)",
                       Words(SCALINGS))
    labeled_only: bool = field(False, "with `labeled`: let a *supervised* algorithm train on the L labeled rows "
                                      "alone (the protocol's supervised baseline); without it a supervised "
                                      "algorithm with `labeled` is refused", Flag())
    pca: int | None = field(None, "project onto at most this many principal components, fitted on the training "
                                  "part after scaling (Li & Póczos §5.1 use <= 100); sparse input is densified up "
                                  "to 2 GiB, beyond that TruncatedSVD (uncentred) is used",
                            Count(1, "a positive integer (number of components)"))
    task: str | None = field(None, "treat the labels as this task instead of the registry's (Gu et al. fit multi-class "
                                   "sets as regression)", Words(TASKS))
    dtype: str = field("float64", "the features' type (float32 halves the parsed cache and the memory of a big "
                                  "set)", Words(DTYPES))
    strict: bool = field(False, "refuse a file with defects the loader would repair (a value glued to the next "
                                "index, CRLF, blank lines, no final newline)", Flag())
    classes: tuple | None = field(None, "keep only the rows (train and test) of these labels, e.g. [8, 6]; "
                                        "two make a binary task (labels keep their raw values), "
                                        "more a multi-class one (Dai et al.'s MNIST8M 8 vs 6)", LABELS)
    # name: synthetic -- the generator's arguments (kernelbench.data.synthetic.SyntheticSpec)
    shape: str | None = field(None, "synthetic: the replica's shape", Words(tuple(SHAPES)),
                              shown="susy")
    n: int | None = field(None, "synthetic: training rows", _ROWS, shown="the published training size")
    n_test: int | None = field(None, "synthetic: test rows (`test: official`)",
                               Count(0, "an integer", most=MAX_ROWS, refusal=_ROWS.refusal),
                               shown="the published test size, at most n // 4 when n is given")
    noise: float | None = field(None, "synthetic: label noise = the Bayes error",
                                Number(0, 0.5, "the label-noise rate (= Bayes error) must lie in [0, 0.5), got {}",
                                       open_high=True), shown="per shape")
    data_seed: int | None = field(None, "synthetic: the data's seed, independent of the trials' seeds",
                                  Count(0, "an integer"), shown="0")
    variant: int | None = field(None, "synthetic: the generator (another decision function and rows "
                                      "each, label noise 0.155 and 0.18 by default), 2 and 3 kept for checking "
                                      "settings on data they were not chosen on (3 for rules made after 2 had "
                                      "been seen)",
                                Count(1, "an integer", among=VARIANTS,
                                      refusal=f"expected one of {', '.join(map(str, VARIANTS))}, got {{}}"),
                                shown="1")
    arrays: str | None = field(None, "the data are arrays handed to kernelbench.api.run: `train` (X, y) or "
                                     "`train+test` (X_test, y_test too)", key=False)

    def synthetic(self) -> dict | None:
        """The synthetic generator's arguments (kernelbench.data.synthetic.SyntheticSpec), or None."""
        if self.name != SYNTHETIC:
            return None
        return {"shape": self.shape or "susy", "n": self.n, "n_test": self.n_test, "noise": self.noise,
                "seed": self.data_seed or 0, "variant": self.variant or 1}


SYNTHETIC_KEYS = ("shape", "n", "n_test", "noise", "data_seed", "variant")
# how a user's file is read (`path`, `test_path`): only with `path`
FILE_KEYS = ("test_path", "format", "delimiter", "header", "label", "npz_features", "npz_labels")
DATASET_KEYS = keys(DatasetConfig, leave_out=SYNTHETIC_KEYS)


@section
class AlgorithmConfig:
    name: str = field(None, "see `kernelbench algorithms`", shown="required", required=True)
    params: dict = field(None, "checked against the estimator's parameter declarations (kernelbench/params.py): "
                               "unknown names and values outside the declared types and ranges are refused; the "
                               "resolved config shows every parameter",
                         shown="the declared defaults", required=True)    # every parameter, defaults filled in


ALGORITHM_KEYS = keys(AlgorithmConfig)


@section
class StopConfig:
    """When a run stops. All unset (a config without `stop`): as the estimator's own `fit`, i.e. its
    `passes` parameter (`auto`: the data-driven count it resolves at begin). `fraction` (not a config
    key) scales that count: tune's rungs on a config without `stop`."""
    passes: float | None = field(None, "passes over the training part",
                                 Number(0, None, "must be > 0, got {}", open_low=True), shown="")
    iterations: int | None = field(None, "iterations (a mini-batch for DSG, one sample for BSGD)",
                                   Count(1, "a positive integer"), shown="")
    seconds: float | None = field(None, "seconds of training (evaluation excluded)",
                                  Number(0, None, "must be > 0, got {}", open_low=True), shown="")
    fraction: float | None = field(None, "the share of the fit's passes to train (tune's rungs)", key=False)

    @property
    def as_fit(self) -> bool:
        return self.passes is None and self.iterations is None and self.seconds is None

    def as_dict(self) -> dict:
        """The config keys that are set (config_to_dict)."""
        return {key: getattr(self, key) for key in keys(StopConfig) if getattr(self, key) is not None}


@section
class EvaluateConfig:
    every: int | None = field(None, "iterations between evaluation points", Count(1, "a positive integer"),
                              shown="null: about 10 points per pass")
    on: tuple[str, ...] = field(("objective", "train_error", "test_error"),
                                f"{' and '.join(REGRESSION_ONLY_METRICS)} (mean absolute error) for regression only;"
                                f" `train_objective` is read as `objective`",
                                # train_objective: the objective measured on the training rows
                                Subset(METRICS, aliases=(("train_objective", "objective"),)),
                                shown="objective, train_error, test_error (without a test part: objective, "
                                      "train_error)")


_TAG = Text(100, "a non-empty string of at most 100 characters")


@section
class TagsConfig:
    """What a run is for: labels only, they change nothing that is computed."""
    paper: str | None = field(None, "the paper's id (kernelbench/papers/: geng2019, dai2014, gu2018, li2016, "
                                    "glasmachers2019)", _TAG, shown="")
    figure: str | None = field(None, "the paper's figure or table",
                               Text(100, "fig<N> or table<N> as the paper numbers it (e.g. fig1, table3)",
                                    FIGURE_PATTERN), shown="")
    panel: str | None = field(None, "the panel within it as the paper labels it (\"(1)\", \"(a)\") or its dataset",
                              _TAG, shown="")
    role: str | None = field(None, "the paper's own algorithm, a comparator it ran, or a peer it never ran (drawn in "
                                   "its figures as \"not in the paper\"; no published number refers to it)",
                              Words(ROLES), shown="")

    def as_dict(self) -> dict:
        """The tags that are set (the form run.json and config_to_dict use)."""
        return {key: getattr(self, key) for key in keys(TagsConfig) if getattr(self, key) is not None}


@section
class TuneConfig:
    """How `kernelbench tune` searches (kernelbench/experiment/tuning.py)."""
    validation: str | None = field(
        None, "a held-out part of the training rows, or `cv` folds of them; with dataset.labeled, of the "
              "*labeled* rows only (the unlabeled ones always train); paper: the semi-supervised papers' protocol "
              "(held-out unlabeled folds scored with their true labels; for reproduction)", Words(VALIDATIONS),
        shown="cv with dataset.labeled or when a holdout would hold fewer than 2,000 rows, else holdout")
    holdout: float = field(0.2, "fraction of the rows held out",
                           Number(0, 1, "expected a fraction in (0, 1), got {}", open_low=True, open_high=True))
    shuffle: bool = field(True, "draw the held-out rows (folds) at random; false holds out the last fraction "
                                "(contiguous folds) in file order -- for time-ordered data", Flag())
    rungs: int = field(3, "budgets per bracket of successive halving: the smallest is stop / eta^(rungs - 1)",
                       Count(1, "an integer >= 1"))
    eta: int = field(3, "halving factor: 1/eta of the settings go on to eta× the budget",
                     Count(2, "an integer >= 2"))
    candidates: int | None = field(None, "settings to try", Count(1, "a positive integer"),
                                   shown="null: until the time budget, else 27")
    budget: float | None = field(None, "time for the search", DURATION)
    refine: int | None = field(None, "settings tried at the full budget around the best",
                               Count(0, "an integer >= 0"), shown="eta")


@section
class ExperimentConfig:
    name: str = field(None, "the run's name, used in its results folder's name",
                      Text(None, "a run name of letters, digits, '.', '_' or '-' (at most 100 characters)",
                           NAME_PATTERN),
                      shown="the config file's stem", required=True)
    dataset: DatasetConfig = field(None, "the data: exactly one of `name` (a dataset of datasets/registry.yaml, see "
                                         "`kernelbench datasets list`) or `path` (your own file)", DatasetConfig,
                                   shown="required", required=True)
    algorithm: AlgorithmConfig = field(None, "`{name: NAME, params: {...}}`, or just the name", AlgorithmConfig,
                                       shown="required", required=True)
    grid: dict = field({}, "`{param: [values...] | {log10: [lo, hi, num]}}`: `run` scores every cell on the test "
                           "part; `grid` cross-validates them on the training part and refits the best",
                       required=True)                # {param: [explicit values]}, log10 specs resolved
    cv: int = field(5, "folds for `grid`, `tune.validation: cv` and `protocol: paper`",
                    Count(2, "an integer >= 2 (folds)"), required=True)
    trials: int = field(1, "repeated runs with seeds seed, seed + 1, ...", Count(1, "a positive integer"),
                        required=True)
    seed: int = field(0, "the first trial's seed", Count(0, "a non-negative integer"), required=True)
    stop: StopConfig = field(StopConfig(), "when training stops, whichever given limit comes first; at least one "
                                           "key", StopConfig, shown="the algorithm's own fit (its `passes`)",
                             required=True)
    evaluate: EvaluateConfig = field(EvaluateConfig(), "the evaluation points written to results.csv",
                                     EvaluateConfig, shown="", required=True)
    tags: TagsConfig = field(TagsConfig(), "what the run is for, each key an optional string: written into "
                                           "run.json and every row of results.csv; figures and `kernelbench "
                                           "report` select runs by these, never by run names", TagsConfig,
                             shown="none")
    source: str | None = field(None, "the config file, if it came from one", key=False)
    search: dict = field({}, "what `kernelbench tune` samples, and what `grid` enumerates without `grid:`: "
                             "`{param: {log-uniform: [low, high]} | {uniform: [low, high]} | {choice: [...]}}`; a "
                             "range may add `times: median` (× the training part's median-trick γ)",
                         shown="the algorithm's declared space")    # {param: distribution}; {} = the declared space
    tune: TuneConfig = field(TuneConfig(), "how `kernelbench tune` searches (kernelbench/experiment/tuning.py)",
                             TuneConfig, shown="")
    protocol: str = field("held-out", "what test_error measures. held-out: the test part. paper: Geng et al.'s "
                                      "§6.1 scheme, needs dataset.labeled -- per trial, the L labeled rows + "
                                      "unlabeled fold i train, the other cv - 1 unlabeled folds are scored; the test "
                                      "part is not used", Words(SCORING_PROTOCOLS))
    then: dict = field({}, "a second model-selection stage for `kernelbench grid`, same syntax as `grid` and other "
                           "parameters: cross-validated with the best grid values fixed (Geng et al. §6.1: η after "
                           "C and σ); needs `grid`; refused by `kernelbench run`")    # as `grid`
    shortened: str | None = field(None, "written into run.json, and the report (the paper's detail page, "
                                        "results/published/<paper>/DETAILS.md) prints it beside every run of the config",
                                  Text(500, "a sentence of at most 500 characters saying how the config "
                                            "departs from the paper's protocol to fit one machine's budget (e.g. 'a "
                                            "4 x 4 sub-grid of the 7 x 7, 3 trials')"))


TOP_LEVEL_KEYS = keys(ExperimentConfig)
