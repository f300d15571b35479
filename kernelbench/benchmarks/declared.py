"""The declared benchmarks: which configs run, on which data, under which stop rule, beside which peers.

A benchmark is data, its fields declared as a file's are (kernelbench/schema) and checked when this
module is imported (`checked`). Each method is a config file of configs/ (validated by load_config,
its dataset replaced by the benchmark's data) or a registered peer built on the benchmark's data,
run once through the experiment loop; every result is a run folder (results.csv + run.json).

    fullscale   the papers' solvers against the user's large-scale pipelines on the SUSY replica
                (or HIGGS's, --shape higgs) at its published size, each within the same wall time T
                (default T_rff: one epoch of RFF + SGD); the config's own stop rule still applies
                (`stop` gains `seconds: T`)
    equal-time  every config of one real data set with `stop: {seconds: T}` in place of its own,
                beside the same peers on that set's data
    fullsize    every SUSY, HIGGS and HEPMASS config on its replica as published: one trial, its own
                stop rule, at 2 and 1 threads (one pass at 1 thread, as every pass costs the same),
                each run in a fresh process so that run.json's peak memory is the run's own
"""
from __future__ import annotations

from kernelbench.schema import Count, Flag, Items, Text, Words, check, fail, field, section

_TEXT = Text(None, "non-empty text")


@section
class Method:
    """One method of a benchmark: a config file (`config`, a path relative to the configs folder
    where `{d}` stands for the data set) or a registered peer (`algorithm` with `params`)."""
    label: str = field(None, "how the table names it", _TEXT, required=True)
    role: str = field(None, "tags.role of its runs", Words(("ours", "peer")), required=True)
    config: str | None = field(None, "a config file of configs/, `{d}` standing for the data set",
                               Text(None, "a config file name (.yaml)", r"[\w{}.-]+\.yaml\Z"))
    algorithm: str | None = field(None, "a registered peer (kernelbench algorithms)", _TEXT)
    params: tuple = field((), "(name, value) pairs of a peer's parameters")


@section
class Benchmark:
    name: str = field(None, "`kernelbench bench NAME`", _TEXT, required=True)
    summary: str = field(None, "one line", _TEXT, required=True)
    methods: tuple[Method, ...] = field(None, "run side by side", Items(Method, least=1), required=True)
    stop: str = field(None, "add: T joins the config's stop rule; replace: T alone; own: the config's own",
                      Words(("add", "replace", "own")), required=True)
    data: str = field(None, "replica: the synthetic replica; replica-files: the replica's files; config: the "
                            "first config's data set", Words(("replica", "replica-files", "config")), required=True)
    references: tuple[Method, ...] = field((), "run with --references, under their own stop rule", Items(Method))
    threads: tuple[int, ...] = field((), "fullsize: each config at these thread counts",
                                     Items(Count(1, "a thread count"), distinct=True))
    fresh_process: bool = field(False, "each run in a process of its own (its peak memory)", Flag())


def checked(bench: Benchmark) -> Benchmark:
    """A declared benchmark, its fields checked as their declarations say, each method a config or a peer."""
    check(bench, bench.name)
    for i, method in enumerate(bench.methods + bench.references):
        if (method.config is None) == (method.algorithm is None):
            fail(f"{bench.name}.methods[{i}]", "give exactly one of config (a config file) and algorithm (a peer)")
    return bench


# The user's pipelines (no paper ran them at this size), with the settings the full-scale guide names:
# RBFSampler with 2048 components, SGDClassifier hinge α = 1e-4 over chunks of 10,000 rows, the
# exact SVMs with LIBSVM's default C = 1 from a 2,000-row prefix doubled; γ by the median trick on the
# standardised training part, the rule our solvers use for `gamma: median`.
RFF_SGD = Method("rff-sgd", "peer", algorithm="rff-sgd",
                 params=(("gamma", "median"), ("n_components", 2048), ("C", None), ("chunk_rows", 10_000)))
LIBSVM = Method("libsvm-subsample", "peer", algorithm="svm-subsample",
                params=(("engine", "libsvm"), ("C", 1.0), ("gamma", "median"), ("start", 2000)))
ONEDAL = Method("onedal-subsample", "peer", algorithm="svm-subsample",
                params=(("engine", "onedal"), ("C", 1.0), ("gamma", "median"), ("start", 2000)))


def _configs(role: str, *stems: str) -> tuple[Method, ...]:
    return tuple(Method(stem.replace("{d}_", ""), role, config=f"{stem}.yaml") for stem in stems)


BENCHMARKS: dict[str, Benchmark] = {b.name: checked(b) for b in (
    Benchmark(
        "fullscale", "the papers' solvers against RFF + SGD and exact SVMs on the SUSY / HIGGS replica, "
                     "same wall time",
        methods=(RFF_SGD,
                 *_configs("ours", "susy_dsg_gu2018", "susy_udsg", "susy_cdsg", "susy_asydsskl_gu2018",
                           "susy_bsgd"),
                 *_configs("peer", "susy_falkon_gu2018"),
                 LIBSVM, ONEDAL),
        references=_configs("ours", "susy_tsgs3vm"),
        stop="add", data="replica"),
    Benchmark(
        "equal-time", "every config of one real data set beside RFF + SGD and exact SVMs, same wall time",
        methods=(*_configs("ours", "{d}_dsg_gu2018", "{d}_udsg_li2016", "{d}_cdsg_li2016",
                           "{d}_asydsskl_gu2018", "{d}_bsgd"),
                 *_configs("peer", "{d}_falkon_gu2018", "{d}_falkon_dai2014"),
                 RFF_SGD, ONEDAL),
        stop="replace", data="config"),
    Benchmark(
        "fullsize", "every SUSY, HIGGS and HEPMASS config on its replica: time per pass, memory, error",
        methods=_configs("ours", "susy_tsgs3vm", "susy_frs3vm", "susy_dsg_gu2018", "susy_bsgd",
                         "susy_asydsskl_gu2018", "higgs_tsgs3vm", "higgs_frs3vm", "hepmass_tsgs3vm",
                         "hepmass_frs3vm"),
        stop="own", data="replica-files", threads=(2, 1), fresh_process=True),
)}
