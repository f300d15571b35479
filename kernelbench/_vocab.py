"""The project's words, each defined once: every layer that checks, documents or writes one of
them imports it from here (this module imports nothing of kernelbench)."""

# What a dataset's labels are: the config's `dataset.task`, the registry's `task`, an estimator's
# task. An algorithm additionally declares SEMI_SUPERVISED when it trains on unlabeled rows (NaN).
TASKS = ("binary", "multiclass", "regression")
SEMI_SUPERVISED = "semi-supervised"

DTYPES = ("float64", "float32")                 # the features' floating type
SCALINGS = ("none", "standard", "minmax")       # feature scaling fitted on the training part
# a user's data file: csv and tsv are delimited text (the delimiter their default), npz holds X and y
FILE_FORMATS = ("svmlight", "csv", "tsv", "npy", "npz", "parquet")
SYNTHETIC = "synthetic"                         # the dataset name of the generated replicas

# What an evaluation point may measure (results.csv columns of the same names); the mean absolute
# errors are for regression only.
METRICS = ("objective", "train_error", "test_error", "test_mse", "train_mse", "test_mae", "train_mae")
REGRESSION_ONLY_METRICS = ("test_mae", "train_mae")
# The metric that sums a run up, the first of these it measured: the test error, or a regression's
# test MAE or MSE; the training error or objective of a run not scored on a test part
HEADLINE_METRICS = ("test_error", "test_mae", "test_mse", "train_error", "objective")

TAGS = ("paper", "figure", "panel", "role")     # what a run is for (config `tags:`, results columns)
ROLES = ("ours", "baseline", "peer")            # tags.role: the paper's own algorithm, its comparator,
                                                # or a method it never ran (what users pick today)

SCORING_PROTOCOLS = ("held-out", "paper")       # what test_error measures (config `protocol:`); the
                                                # registry's split protocols are data.registry's
VALIDATIONS = ("holdout", "cv", "paper")        # how `tune` validates (config `tune.validation`)

# Budget maintenance of the budgeted SVMs: merging by golden section search (standard or precise),
# by lookup tables (h or weight degradation), or removal of the smallest coefficient.
MERGE_METHODS = ("gss", "gss-precise", "lookup-h", "lookup-wd", "removal")

# `kernelbench publish --points`: the evaluations a published copy keeps of each curve by default
# (kernelbench/publish; the CLI shows it as the option's default)
PUBLISHED_POINTS = 50

# The state of an experiment whose run ended with no finished cell (every cell skipped or failed):
# no result, so publish leaves the run out and the report reads it apart from experiments not run yet
NO_CELL_FINISHED = "no cell finished"
