"""`kernelbench report`: our measured numbers next to the papers' published ones.

The published values are data, typed in from the papers (../shared/papers) once, here. "Ours" is
the mean ± std over the finished cells (last row of each trial, test split, status ok) of every
results.csv found, of the runs tagged with the entry's paper (and figure or table, where the entry
names one), matching the entry's dataset, algorithm and parameters; the row names those runs'
folders. Runs whose resolved settings differ (parameters, data, stop rule) are never pooled into one
number: the row says which experiments collide and on what (`pooling_conflict`).

Every claim gets a status: reproduced (ours within the entry's tolerance of the published value, or
on the claimed side of a bound), differs, not run, or not reproducible here (the entry's `needs`:
what it would take, e.g. features the authors never published or a neural-net comparator).
"""
from __future__ import annotations

import html
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench.results import collect_results, final_rows, tagged


@dataclass(frozen=True)
class Published:
    paper: str
    where: str                  # table / figure
    dataset: str                # our registry name
    algorithm: str              # our algorithm name
    metric: str                 # test_error | test_accuracy | train_error (percent), test_mae, train_seconds,
                                # counter:<name>, counter%:<name> (percent), improvement_vs_gss:<merge>
                                # (training time, percent), merge_time_improvement_vs_gss:<merge> (merging
                                # time, percent), at_seconds:<error>:<s> (percent, the error of the last
                                # evaluation within s training seconds, per trial; s = libsvm: the mean
                                # training seconds of the LIBSVM run with the same tags and dataset)
    value: float
    std: float | None = None
    params: dict = field(default_factory=dict)     # the entry applies to rows with these params
    note: str = ""
    figure: str | None = None   # the runs' tags.figure, when the entry is about one figure's runs
    panel: str | None = None    # the runs' tags.panel, when one figure has two panels on one dataset
    needs: str = ""             # set: not reproducible here; what it needs
    tolerance: float | str | None = "default"   # reproduced when |ours − value| ≤ this ("default":
                                                # `default_tolerance`); None: not judged (timings)
    bound: str | None = None    # "max": the claim is ours ≤ value (+ tolerance); "min": ours ≥ value


DAI = "Dai et al. 2014 (DSG)"
GQ = "Glasmachers & Qaadan (BSGD)"
LP = "Li & Póczos 2016 (UDSG/CDSG)"
GENG = "Geng et al. 2019 (TSGS3VM)"
GU = "Gu et al. 2018 (AsyDSSKL)"
PAPER_TAGS = {DAI: "dai2014", GQ: "glasmachers2019", LP: "li2016", GENG: "geng2019", GU: "gu2018"}

_GQ_DATA = [  # dataset, paper name, LIBSVM accuracy (Table 1), budgets with Table 2 rows
    ("skin_nonskin", "SKIN", 99.96, {100: [(99.621, .711), (99.629, .852), (99.621, .201), (99.617, .877)],
                                     200: [(99.868, .033), (99.877, .053), (99.855, .054), (99.754, .089)]}),
    ("ijcnn1", "IJCNN", 98.77, {100: [(97.141, .317), (96.807, .344), (97.132, .371), (97.130, .363)],
                                500: [(98.138, .158), (98.055, .334), (98.113, .448), (98.070, .372)]}),
    ("a9a", "ADULT", 84.82, {100: [(84.234, .883), (84.166, .701), (84.164, .988), (84.200, .798)],
                             500: [(84.280, .800), (83.739, 1.303), (83.836, 1.157), (83.949, 1.001)]}),
    ("w8a", "WEB (w6a; ours: w8a stand-in)", 98.81,
     {100: [(98.805, .026), (98.793, .027), (98.783, .045), (98.793, .039)],
      500: [(98.809, .023), (98.781, .047), (98.799, .029), (98.807, .016)]}),
    ("phishing", "PHISHING", 97.55, {100: [(96.554, .158), (96.254, .301), (96.539, .242), (96.389, .371)],
                                     500: [(97.555, .187), (97.517, .292), (97.518, .280), (97.525, .201)]}),
    ("susy", "SUSY", 79.79, {100: [(76.975, 1.372), (76.628, 2.030), (76.934, 1.426), (76.884, 1.261)],
                             500: [(76.989, 3.109), (75.583, 3.0558), (75.581, 2.558), (75.570, 3.925)]}),
]
_GQ_MERGES = ("gss-precise", "gss", "lookup-h", "lookup-wd")
# Table 3 (B = 100): Lookup-h and Lookup-WD time improvement vs GSS-standard (%), merging
# frequency (%), equal merging decisions (%), WD factor of GSS and of Lookup-WD vs GSS-precise
_GQ_TABLE3 = {"susy": (43.911, 43.396, 43, 93.64, 1.01795, 1.00733),
              "skin_nonskin": (20.515, 17.788, 16, 74.31, 1.00047, 1.00005),
              "ijcnn1": (28.091, 30.372, 17, 91.79, 1.02429, 1.00149),
              "a9a": (21.627, 18.452, 32, 92.54, 1.05064, 1.00402),
              "w8a": (3.053, 5.649, 6, 93.77, 1.00255, 1.00039),
              "phishing": (15.385, 13.946, 21, 96.96, 1.00055, 1.00008)}
# Table 3's second row per data set: the larger budget, Lookup-h and Lookup-WD vs GSS-standard (%)
_GQ_TABLE3_LARGER = {"susy": (500, 39.201, 39.199), "skin_nonskin": (200, 14.173, 14.900),
                     "ijcnn1": (500, 30.569, 29.861), "a9a": (500, 22.334, 22.339),
                     "w8a": (500, 7.483, 0.508), "phishing": (500, 7.563, 10.924)}


GAIN_METRICS = ("improvement_vs_gss:", "merge_time_improvement_vs_gss:")
NEEDS_NN = "a neural-net comparator (kernelbench implements the kernel methods only)"
NEEDS_MULTICLASS_HINGE = ("a multi-class hinge (SVM) loss in the DSG family (kernelbench's DSG, UDSG and CDSG "
                          "have softmax for several classes; Table 3 compares kernel SVMs)")
NEEDS_DAI_FEATURES = ("the convolutional features Dai et al. (2014) trained and used as input (never "
                      "published); our config runs on raw pixels, another input")


def tolerance(entry: Published) -> float | None:
    """How far ours may lie from the published value and still count as reproduced: 1 point of
    error / accuracy (or twice the published std, when larger: Glasmachers & Qaadan's Table 2 has
    stds up to 3.9), 10 % of an MAE, 0.01 of a WD factor, 10 points of a time share or time gain
    (those depend on the machine, but their size is the claim); an entry may set its own."""
    if entry.tolerance != "default":
        return entry.tolerance
    metric = entry.metric
    if metric in ("test_error", "test_accuracy", "train_error") or metric.startswith("at_seconds:"):
        return max(1.0, 2 * entry.std) if entry.std else 1.0
    if metric == "test_mae":
        return 0.1 * abs(entry.value)
    if metric.startswith("counter:"):
        return 0.01
    if metric.startswith(("counter%:", "merge_time_share")) or metric.startswith(GAIN_METRICS):
        return 10.0
    return None


def _published() -> list[Published]:
    # Fig. 1's runs (tags figure fig1, panel as the paper's): configs/*_dai2014.yaml; a9a_dsg.yaml
    # (paper dai2014, no figure: another loss) is not Fig. 1(1)
    entries = [Published(DAI, "Fig. 1(1), SC1 (one pass)", "a9a", "dsg", "test_error", 15.3, figure="fig1",
                         panel="(1)", note="Adult; LIBSVM gets 14.9% on this split")]
    # Dai et al. Fig. 1 (1)-(3) baselines: the values their §7 text states (the plotted curves are not
    # legible in the text copy of the paper, so nothing is read off the figure itself). Forest is the
    # full covtype (covtype_binary): our 20k subset (covtype_subset20k) is deliberately not matched.
    for algorithm in ("norma", "k-sdca"):
        entries.append(Published(DAI, "Fig. 1(1), SC1 (one pass); §7 text", "a9a", algorithm, "test_error",
                                 15.0, figure="fig1", panel="(1)",
                                 note="Adult; 'NORMA and k-SDCA achieve the best error rate, 15%'"))
    entries.append(Published(DAI, "Fig. 1(3), SC1; §7 text", "covtype_binary", "dsg", "test_error", 15.0,
                             figure="fig1",
                             note="Forest, full 522k/58k data; 'about 15%, much better than n/r-pegasos "
                                  "and n/r-SDCA'"))
    # §7 text, panels (2), (4)-(7) (p. 8); panel (8) has no number (NOT_TABULATED)
    entries.append(Published(DAI, "Fig. 1(2); §7 text (best test error)", "mnist8m", "dsg", "test_error", 0.26,
                             figure="fig1", panel="(2)", note="MNIST8M 8 vs 6, 1.6M rows, raw pixels "
                             "(classes [8, 6]); digits86 is a small stand-in, not matched"))
    entries.append(Published(DAI, "Fig. 1(4); §7 text", "mnist8m", "dsg", "test_error", 0.5, figure="fig1",
                             panel="(4)", needs=NEEDS_DAI_FEATURES, note="MNIST8M, 10 classes, K-logistic"))
    entries.append(Published(DAI, "Fig. 1(4); §7 text", "mnist8m", "neural net (fixed, joint)", "test_error",
                             0.6, needs=NEEDS_NN, note="MNIST8M"))
    entries.append(Published(DAI, "Fig. 1(5); §7 text", "cifar10", "neural net (2 conv + 2 local layers)",
                             "test_error", 11.0, needs=NEEDS_NN,
                             note="CIFAR10; DSG 'comparable performance but much faster' (no number)"))
    entries.append(Published(DAI, "Fig. 1(6); §7 text", "imagenet_dai2014", "dsg", "test_error", 44.5,
                             figure="fig1", panel="(6)", needs=NEEDS_DAI_FEATURES.replace(
                                 "; our config runs on raw pixels, another input", " and max-voting over 10 "
                                 "transformations of each test image"), note="ImageNet 2012"))
    for algorithm, value in (("neural net (jointly trained)", 42.0), ("neural net (fixed, max-voting)", 46.0)):
        entries.append(Published(DAI, "Fig. 1(6); §7 text", "imagenet_dai2014", algorithm, "test_error", value,
                                 needs=NEEDS_NN, note="ImageNet 2012"))
    entries.append(Published(DAI, "Fig. 1(7); §7 text", "qm7", "dsg", "test_mae", 2.97, figure="fig1",
                             panel="(7)", note="QuantumMachine (QM7), K-ridge, kcal/mol; the paper also "
                             "trains on virtual examples (permuted Coulomb matrices), which we do not generate"))
    entries.append(Published(DAI, "Fig. 1(7); §7 text", "qm7", "neural net", "test_mae", 3.51, needs=NEEDS_NN,
                             note="QuantumMachine (QM7), kcal/mol"))
    for dataset, name, libsvm, budgets in _GQ_DATA:
        entries.append(Published(GQ, "Table 1 (exact LIBSVM)", dataset, "libsvm", "test_accuracy", libsvm,
                                 note=name, figure="table1"))
        for budget, rows in budgets.items():
            for merge, (mean, std) in zip(_GQ_MERGES, rows):
                entries.append(Published(GQ, "Table 2", dataset, "bsgd", "test_accuracy", mean, std,
                                         params={"merge": merge, "budget": budget}, note=name, figure="table2"))
        h_gain, wd_gain, frequency, equal, factor_gss, factor_wd = _GQ_TABLE3[dataset]
        table3 = "Table 3 (B = 100)"
        larger, h_larger, wd_larger = _GQ_TABLE3_LARGER[dataset]
        for merge, gain, gain_larger in (("lookup-h", h_gain, h_larger), ("lookup-wd", wd_gain, wd_larger)):
            entries.append(Published(GQ, table3, dataset, "bsgd", f"improvement_vs_gss:{merge}", gain,
                                     params={"budget": 100, "diagnose": False}, note=name, figure="table2"))
            entries.append(Published(GQ, f"Table 3 (B = {larger})", dataset, "bsgd",
                                     f"improvement_vs_gss:{merge}", gain_larger,
                                     params={"budget": larger, "diagnose": False}, note=name, figure="table2"))
        # The column the paper calls "merging frequency" matches the share of *training time* spent
        # merging in the authors' code as measured for the issue (ijcnn1: 3.7 % of steps merge,
        # 20 % of the time; a9a: 25 % and 31 %): both of ours are listed against it.
        gss_100 = {"merge": "gss", "budget": 100, "diagnose": False}
        entries.append(Published(GQ, table3, dataset, "bsgd", "merge_time_share", frequency,
                                 params=gss_100, note=f"{name}; paper's 'merging frequency'", figure="table2"))
        entries.append(Published(GQ, table3, dataset, "bsgd", "counter%:merge_frequency", frequency,
                                 params=gss_100, note=f"{name}; fraction of steps that merge", figure="table2"))
        diag = {"budget": 100, "diagnose": True}
        entries.append(Published(GQ, table3, dataset, "bsgd", "counter%:diag_equal_decisions", equal,
                                 params=diag, note=name, figure="table3"))
        entries.append(Published(GQ, table3, dataset, "bsgd", "counter:diag_factor_gss", factor_gss,
                                 params=diag, note=name, figure="table3"))
        entries.append(Published(GQ, table3, dataset, "bsgd", "counter:diag_factor_lookup_wd", factor_wd,
                                 params=diag, note=name, figure="table3"))
    # §1 and §5: "on our largest data set [SUSY] we reduce the merging time by 65 %, which corresponds
    # to a reduction of the total training time by 44 %" (Table 3: Lookup-h, B = 100, 43.911 %)
    entries.append(Published(GQ, "§1, §5 (largest set; Table 3's Lookup-h row)", "susy", "bsgd",
                             "merge_time_improvement_vs_gss:lookup-h", 65.0,
                             params={"budget": 100, "diagnose": False}, note="SUSY; merging time only",
                             figure="table2"))
    # Table 3 (p. 7): kernel SVMs (hinge loss) on PCA-100 inputs, training error at the time LIBSVM
    # converges (583 s on CIFAR-10, 8457 s on Epsilon on their machine): ours are read at the time our
    # LIBSVM run of the same set took (`at_seconds:train_error:libsvm`)
    for dataset, seconds, libsvm, dsg, udsg, cdsg in (("cifar10", 583, 38.6, 40.7, 40.2, 40.2),
                                                      ("epsilon", 8457, 14.3, 14.5, 14.6, 14.5)):
        entries.append(Published(LP, "Table 3 (training error when LIBSVM converges)", dataset, "libsvm",
                                 "train_error", libsvm, figure="table3"))
        entries.append(Published(LP, "§5.1 text (LIBSVM's time to converge)", dataset, "libsvm",
                                 "train_seconds", seconds, figure="table3", tolerance=None))
        for algorithm, value in (("dsg", dsg), ("udsg", udsg), ("cdsg", cdsg)):
            entries.append(Published(LP, "Table 3 (training error when LIBSVM converges)", dataset,
                                     algorithm, "at_seconds:train_error:libsvm", value, figure="table3",
                                     params={"loss": "hinge"}, needs=NEEDS_MULTICLASS_HINGE if dataset == "cifar10" else "",
                                     note="at the training seconds our LIBSVM run of the same set took"))
    # §5.1 text after Table 3 (Epsilon): "all DSG-based algorithms can achieve 0.15 error within 150
    # seconds. Especially, CDSG can achieve 0.147. However, they take more than 10,000 seconds to get
    # the error lower than 0.144."
    for algorithm in ("dsg", "udsg", "cdsg"):
        entries.append(Published(LP, "§5.1 text (Epsilon)", "epsilon", algorithm, "at_seconds:train_error:150",
                                 14.7 if algorithm == "cdsg" else 15.0, figure="table3", params={"loss": "hinge"},
                                 bound="max", tolerance=0.1, note="training error within 150 s: ≤ 15 % (CDSG 14.7 %)"))
        entries.append(Published(LP, "§5.1 text (Epsilon)", "epsilon", algorithm, "at_seconds:train_error:10000",
                                 14.4, figure="table3", params={"loss": "hinge"}, bound="min", tolerance=0.0,
                                 note="still above 14.4 % after 10,000 s"))
    # Tables 5-6 (p. 8): DSG family on Dai et al.'s pretrained convolutional features vs two neural nets
    for table, rows in (("Table 5 (test error when CDSG converges)",
                         {"cifar10": (16.0, 15.9, 15.8, 18.0, 19.1), "mnist8m": (6.1, 5.9, 5.3, 7.1, 8.5),
                          "imagenet_dai2014": (45.1, 44.9, 44.7, 48.2, 58.6)}),
                        ("Table 6 (converged test error)",
                         {"cifar10": (15.8, 15.9, 15.8, 15.8, 15.9), "mnist8m": (5.3, 5.4, 5.3, 7.1, 6.2),
                          "imagenet_dai2014": (44.9, 44.8, 44.7, 46.2, 42.4)})):
        for dataset, values in rows.items():
            for algorithm, value in zip(("dsg", "udsg", "cdsg", "neural net (fixed)", "neural net (joint)"), values):
                needs = NEEDS_NN if algorithm.startswith("neural") else NEEDS_DAI_FEATURES.split(";")[0]
                entries.append(Published(LP, table, dataset, algorithm, "test_error", value, needs=needs))
    return entries


PUBLISHED = _published()
NOT_TABULATED = {
    DAI: "Fig. 1(8) MolecularSpace (2.3M molecules, K-ridge): 'still comparable with neural net', no "
         "number; the data was never published for download (registry: molecularspace). Fig. 1's "
         "curves (test error vs data seen / time) are drawn by `make figures` (dai2014_*).",
    GENG: "Fig. 3 is a box plot (no table to compare against); `make figures` draws ours.",
    GU: "Gu et al. publish curves only (Fig. 1a-f accuracy/MSE vs training time, Fig. 1g-h testing "
        "time, Fig. 2 speedup), no table: `make figures` draws ours (gu2018_*) and "
        "scripts/bench_asydsskl.py prints the 2-thread speedup.",
}


def _matches(rows: pd.DataFrame, entry: Published) -> pd.DataFrame:
    """The rows of `entry`'s runs: its paper's (and figure's) tags, dataset, algorithm, params."""
    tags = {k: v for k, v in (("figure", entry.figure), ("panel", entry.panel)) if v}
    rows = tagged(rows, paper=PAPER_TAGS[entry.paper], **tags)
    rows = rows[(rows["dataset"] == entry.dataset) & (rows["algorithm"] == entry.algorithm)]
    if entry.params and len(rows):
        keep = rows["params"].map(lambda p: all(json.loads(p).get(k) == v for k, v in entry.params.items()))
        rows = rows[keep]
    return rows


def _values(rows: pd.DataFrame, metric: str, final: pd.DataFrame | None = None,
            entry: Published | None = None, curves: pd.DataFrame | None = None) -> np.ndarray:
    if metric.startswith(GAIN_METRICS):
        # 100·(1 − mean time of this merge method / mean time of GSS-standard), same data and budget:
        # training time, or the budget-maintenance (merging) time the solver counts
        def seconds(merge):
            chosen = _matches(final, replace(entry, params={**entry.params, "merge": merge}))
            if metric.startswith("merge_time_"):
                return _counter(chosen, "maintenance_seconds")
            return chosen["train_seconds"].astype(float)
        method, reference = seconds(metric.split(":", 1)[1]), seconds("gss")
        if not len(method) or not len(reference):
            return np.array([])
        return np.array([100.0 * (1.0 - method.mean() / reference.mean())])
    if metric.startswith("at_seconds:"):     # per trial: the last evaluation within s training seconds
        _, name, seconds = metric.split(":")
        if seconds == "libsvm":
            exact = _matches(final, replace(entry, algorithm="libsvm", params={}))
            if not len(exact):
                return np.array([])
            seconds = exact["train_seconds"].astype(float).mean()
        values = []
        for _, trial in (curves if curves is not None else rows).groupby(["run_id", "trial"]):
            trained = trial["train_seconds"].astype(float)
            within = trial[(trained <= float(seconds)) & trial[name].notna()]
            if len(within) and trained.max() >= float(seconds):     # a trial stopped before s says nothing
                values.append(100.0 * float(within.sort_values("train_seconds")[name].iloc[-1]))
        return np.asarray(values, dtype=float)
    if metric == "merge_time_share":      # 100 · budget-maintenance seconds / training seconds
        values = 100.0 * _counter(rows, "maintenance_seconds") / rows["train_seconds"].astype(float)
        return np.asarray(values, dtype=float)[np.isfinite(np.asarray(values, dtype=float))]
    if metric in ("test_accuracy", "test_error", "train_error"):
        if metric == "test_accuracy":
            values = 100.0 * (1.0 - rows["test_error"].astype(float))
        else:
            values = 100.0 * rows[metric].astype(float)
        if "fold" in rows and rows["fold"].notna().any():
            # protocol: paper (Geng et al. §6.1): a trial's error is the mean over its folds
            values = values.groupby([rows["run_id"], rows["params"], rows["trial"]]).mean()
    elif metric in ("test_mae", "train_seconds"):
        values = rows[metric].astype(float) if metric in rows else pd.Series([], dtype=float)
    else:                                   # counter:<name> as is, counter%:<name> in percent
        kind, name = metric.split(":", 1)
        factor = 100.0 if kind == "counter%" else 1.0
        values = factor * _counter(rows, name)
    return np.asarray(values, dtype=float)[np.isfinite(np.asarray(values, dtype=float))]


def _counter(rows: pd.DataFrame, name: str) -> pd.Series:
    """One of the algorithm's counters (the rows' counters JSON) as floats; NaN where absent."""
    return rows["counters"].map(lambda c: json.loads(c).get(name, np.nan) if c else np.nan).astype(float)


def _setting(params: str, config: str) -> str:
    """What a number measures, beyond the entry's own filter: the resolved algorithm parameters and
    the run's data, stop rule and protocol (from its run.json; seeds and trial counts may differ):
    a `protocol: paper` test error (scored on unlabeled folds) is not a held-out one."""
    setting = {"params": json.loads(params) if params else {}}
    if config:
        resolved = json.loads(config)
        protocol = resolved.get("protocol", "held-out")        # absent: held-out (config_to_dict)
        setting.update(dataset=resolved.get("dataset"), stop=resolved.get("stop"),
                       run={"protocol": protocol, "cv": resolved.get("cv") if protocol == "paper" else None})
    return json.dumps(setting, sort_keys=True)


def pooling_conflict(rows: pd.DataFrame) -> str | None:
    """Why these rows must not be pooled into one number (None when they may): they come from runs
    whose resolved settings differ, e.g. two configs tagged for the same panel with other losses.
    The message names each setting's experiments and what differs."""
    if rows.empty:
        return None
    configs = rows["config"] if "config" in rows else pd.Series([""] * len(rows), index=rows.index)
    settings = pd.Series([_setting(p, c) for p, c in zip(rows["params"], configs)], index=rows.index)
    if settings.nunique() < 2:
        return None
    parsed = [json.loads(s) for s in settings.unique()]
    flat = [{f"{part}.{k}": v for part, values in s.items() for k, v in (values or {}).items()} for s in parsed]
    differ = sorted(k for k in set().union(*flat) if len({json.dumps(f.get(k)) for f in flat}) > 1)
    groups = [", ".join(sorted(set(rows.loc[settings == s, "experiment"]))) for s in settings.unique()]
    return (f"not pooled: {len(groups)} settings differ in {', '.join(differ)} ({' | '.join(groups)}); "
            "report one of them (kernelbench report <run folder>) or tag them apart")


def _machines(folders) -> list[str]:
    seen = []
    for folder in folders:
        try:
            machine = json.loads((Path(folder) / "run.json").read_text()).get("machine", {})
        except (OSError, ValueError):
            continue
        text = f"{machine.get('processor') or machine.get('platform', '?')}, {machine.get('cpu_count', '?')} CPUs"
        if text not in seen:
            seen.append(text)
    return seen


def build_report(results_dirs, *, paper: str | None = None) -> tuple[str, list[dict]]:
    """(markdown, table rows) for every published entry (of one paper: its tag, e.g. "gu2018"),
    ours where results exist."""
    entries = [e for e in PUBLISHED if paper is None or PAPER_TAGS[e.paper] == paper]
    untabulated = {p: why for p, why in NOT_TABULATED.items() if paper is None or PAPER_TAGS[p] == paper}
    frames = [collect_results(d) for d in results_dirs]
    frames = [f for f in frames if not f.empty]
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    folder_of = {p.parent.name: p.parent for d in results_dirs for p in Path(d).rglob("run.json")}
    # smoke runs are already left out by collect_results
    final = final_rows(df, statuses=("ok",), old_runs=True)
    curves = df[df["status"].fillna("ok") == "ok"] if len(df) and "status" in df else df
    table = []
    for e in entries:
        if e.metric.startswith(GAIN_METRICS):
            rows = _matches(final, replace(e, params={**e.params, "merge": e.metric.split(":", 1)[1]})
                            ) if len(final) else final
        else:
            rows = _matches(final, e) if len(final) else final
        conflict = pooling_conflict(rows) if len(rows) else None
        trial_curves = (_matches(curves, e) if e.metric.startswith("at_seconds:") and len(rows) else None)
        if trial_curves is not None:
            trial_curves = trial_curves[trial_curves["run_id"].isin(set(rows["run_id"]))]
        values = _values(rows, e.metric, final, e, trial_curves) if len(rows) and not conflict else np.array([])
        ours = (float(values.mean()), float(values.std()), len(values)) if len(values) else None
        runs = sorted(set(rows["run_id"])) if len(rows) else []
        machines = _machines(folder_of[r] for r in runs if r in folder_of) if ours else []
        table.append({"paper": e.paper, "where": e.where, "dataset": e.dataset, "algorithm": e.algorithm,
                      "params": e.params, "metric": e.metric, "published": e.value, "published_std": e.std,
                      "ours": ours, "difference": (ours[0] - e.value) if ours else None,
                      "runs": runs, "conflict": conflict, "machines": machines, "note": e.note,
                      "status": claim_status(e, ours, conflict)})
    lines = ["# kernelbench: our numbers next to the papers'", "",
             "Values in percent (WD factors as ratios, test_mae in the target's unit, train_seconds in "
             "seconds). Ours: mean ± std over finished trials (n) of the runs tagged for the entry (their "
             "folders listed), never of runs whose parameters, data or stop rule differ; time "
             "improvements compare mean training times of the same data and budget. Status: reproduced "
             "when ours lies within the tolerance of the published value (1 point of error, or twice the "
             "published std; 10 % of an MAE; 0.01 of a WD factor; 10 points of a time share or gain), "
             "or on the claimed side of a bound; timings of the authors' machines are shown, not judged.",
             ""]
    for name in dict.fromkeys(e.paper for e in entries):
        mine = [r for r in table if r["paper"] == name]
        counts = {}
        for r in mine:
            key = r["status"].split(":")[0].split(" (")[0]
            counts[key] = counts.get(key, 0) + 1
        lines += [f"## {name}", "",
                  f"{len(mine)} claims: " + ", ".join(f"{n} {k}" for k, n in counts.items()) + ".", "",
                  "| where | dataset | algorithm | params | metric | published | ours (n) | difference | status | runs | measured on |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in mine:
            published = f"{r['published']:.3f}" + (f" ± {r['published_std']:.3f}" if r["published_std"] is not None else "")
            ours = (f"{r['ours'][0]:.3f} ± {r['ours'][1]:.3f} ({r['ours'][2]})" if r["ours"]
                    else r["conflict"] or "")
            diff = f"{r['difference']:+.3f}" if r["difference"] is not None else ""
            params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
            lines.append(f"| {r['where']} | {r['dataset']}{' (' + r['note'] + ')' if r['note'] else ''} | "
                         f"{r['algorithm']} | {params} | {r['metric']} | {published} | {ours} | {diff} | "
                         f"{r['status']} | {', '.join(r['runs'])} | {'; '.join(r['machines'])} |")
        lines.append("")
    for name, why in untabulated.items():
        lines += [f"## {name}", "", why, ""]
    return "\n".join(lines), table


def claim_status(entry: Published, ours, conflict) -> str:
    """reproduced / differs / not run / not pooled / not reproducible here: needs …, or measured
    (not judged) for an entry without a tolerance."""
    if entry.needs:
        return f"not reproducible here: needs {entry.needs}"
    if conflict:
        return "not pooled"
    if ours is None:
        return "not run"
    allowed = tolerance(entry)
    if allowed is None:
        return "measured (not judged: another machine's time)"
    mean = ours[0]
    if entry.bound == "max":
        ok, claim = mean <= entry.value + allowed, f"≤ {entry.value:g}"
    elif entry.bound == "min":
        ok, claim = mean >= entry.value - allowed, f"≥ {entry.value:g}"
    else:
        ok, claim = abs(mean - entry.value) <= allowed, f"within ±{allowed:g}"
    return f"{'reproduced' if ok else 'differs'} ({claim})"


def markdown_to_html(markdown: str) -> str:
    """The report's markdown (headings, paragraphs, pipe tables) as a standalone HTML page."""
    out, in_table = ["<!doctype html><meta charset='utf-8'><title>kernelbench report</title>",
                     "<style>table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}</style>"], False
    for line in markdown.splitlines():
        if line.startswith("|"):
            cells = [html.escape(c.strip()) for c in line.strip("|").split("|")]
            if set("".join(cells)) <= {"-"}:
                continue
            if not in_table:
                out.append("<table>")
                in_table = True
                out.append("<tr>" + "".join(f"<th>{c}</th>" for c in cells) + "</tr>")
            else:
                out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
            continue
        if in_table:
            out.append("</table>")
            in_table = False
        if line.startswith("## "):
            out.append(f"<h2>{html.escape(line[3:])}</h2>")
        elif line.startswith("# "):
            out.append(f"<h1>{html.escape(line[2:])}</h1>")
        elif line.strip():
            out.append(f"<p>{html.escape(line)}</p>")
    if in_table:
        out.append("</table>")
    return "\n".join(out) + "\n"
