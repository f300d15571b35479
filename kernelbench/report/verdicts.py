"""The claims' verdicts: each conclusion a paper draws from an experiment (its file's `claims:`,
kernelbench.papers.Claim) tested on the runs, with the measurement in words.

Per set of the claim's `on`, each compared method gives a sample, one number per finished trial
(kernelbench.report.samples); two samples differ only beyond the trials' noise, by the one rule of
kernelbench.report.noise, and a difference inside it makes the set's outcome "within noise". A set
is untested when a compared method has no run there, its runs finished no cell, or they trained on
fewer rows than the claim's scale; not comparable when the test misses only between methods that
both sit at the constant classifier's test error (within FLOOR_POINTS of the claim's `floor`) or
both make no test error: an ordering between classifiers that learned nothing (or tie at perfect)
means nothing. With `at: seconds:…`, a method with no model by then is behind only while its first
model comes later than LATE_FACTOR times that; sooner, the two tie in time; where no compared
method has a model yet, the time compares nothing (a horizon's point that compares nothing is
left out). A test that reads times compares only runs of one processor started within SESSION_HOURS
of each other; others leave the set untested (and an across-sets test, which compares the sets'
runs with each other, not testable).

The verdict is decided on the paper's own sets: with quantifier all it holds when every tested set
holds and does not hold when one fails; with most it holds on more than half, and does not hold when
even every set within noise could not make a majority; otherwise it is within noise. Stand-in sets
(a set the claim's `stand_in` names, or one whose runs read a synthetic replica of it) are reported
beside, and decide, with the "on stand-in data" forms, only a claim tested on stand-ins alone.
"""
from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd

from kernelbench.measures import reads_time
from kernelbench.papers import ACROSS_SETS, Claim, Paper, Selector

from .noise import (ABOVE, BELOW, EQUAL, WITHIN, Difference, Sample, compare, correlation_against, slope_against,
                    within_margin)
from .numbers import STAND_IN, final_and_curves, replicas, report_papers
from .numbers import rows_read as number_rows_read
from .outcomes import (FAILS, HOLDS, NOISE, NOT_COMPARABLE, TESTED, UNTESTED, ClaimVerdict, SetOutcome, by_quantifier,
                       worst)
from .samples import NoModel, SetRuns, Untested, number

# An ordering among methods whose test error lies this close (points) to the constant classifier's
# compares classifiers that learned nothing
FLOOR_POINTS = 0.5
# A rival without a model at a claim's time is behind only when its first model comes later than
# this factor times that time: "well past" it; sooner, a model a moment later is a tie in time
LATE_FACTOR = 2.0
# Machines are lent per sitting: the same exact LIBSVM fits took 2.3-3.4x the seconds on one
# processor (an Intel Xeon) that they took a week later on another (an AMD EPYC), and the same SUSY
# replica runs 1.4-1.75x on two AMD EPYC machines six days apart; re-runs hours apart in one sitting
# agreed to 1.02-1.13x. A test that reads times refuses compared runs of different processors, or
# started further apart than this
SESSION_HOURS = 12.0


def _relation(x: float, y: float) -> str:
    return "<" if x < y else (">" if x > y else "=")


def _shown(x: Sample | NoModel) -> str:
    return f"no model by {number(x.limit)} s" if isinstance(x, NoModel) else number(x.mean)


def _noise_words(d: Difference, outcome: str) -> str:
    words = d.words()
    if outcome == NOISE:
        return f" (within noise{': ' + words if words else ''})"
    return f" ({words})" if words else ""


def _late(absent: NoModel, other: str) -> tuple[str, str]:
    """A method without a model by the test's time against one with: behind while its first model
    comes later than LATE_FACTOR times that time, a tie in time sooner."""
    if absent.first > LATE_FACTOR * absent.limit:
        return HOLDS, f"{other} has no model by {number(absent.limit)} s (its first at {number(absent.first)} s)"
    return NOISE, (f"{other} has no model by {number(absent.limit)} s, but its first came at "
                   f"{number(absent.first)} s, within {LATE_FACTOR:g}× of it: a tie in time")


def _pair(claim: Claim, sa, sb, b: Selector) -> tuple[str, str]:
    """(outcome, words) of an order / similar / ratio test between a's sample and one b's."""
    test = claim.test
    names = (str(test.a), str(b))
    if isinstance(sa, NoModel) or isinstance(sb, NoModel):
        ordered = test.kind in ("order", "no_worse")
        if ordered and isinstance(sb, NoModel) and not isinstance(sa, NoModel):
            outcome, words = _late(sb, str(b))
            return outcome, f"ahead of {b} ({words})" if outcome == HOLDS else f"vs {b} ({words})"
        if ordered and isinstance(sa, NoModel) and not isinstance(sb, NoModel):
            outcome, words = _late(sa, str(test.a))
            return (FAILS if outcome == HOLDS else NOISE), f"behind {b} {number(sb.mean)} ({words})"
        if isinstance(sa, NoModel) and isinstance(sb, NoModel):        # no evidence either way
            return NOT_COMPARABLE, f"vs {b} {_shown(sb)} (neither has a model yet: nothing to compare)"
        return FAILS, f"vs {b} {_shown(sb)} (one has no model)"
    if test.kind == "order":
        d = compare(sb, sa, names=names[::-1]) if test.direction == "lower" else compare(sa, sb, names=names)
        outcome = {ABOVE: HOLDS, WITHIN: NOISE}.get(d.outcome, FAILS)
        return outcome, f"{_relation(sa.mean, sb.mean)} {b} {number(sb.mean)}{_noise_words(d, outcome)}"
    if test.kind == "no_worse":
        return _no_worse(claim, sa, sb, b)
    if test.kind == "similar":
        d = within_margin(sa, sb, test.margin, names=names)
        outcome = {BELOW: HOLDS, ABOVE: FAILS}.get(d.outcome, NOISE)
        gap = abs(sa.mean - sb.mean)
        return outcome, (f"{b} {number(sb.mean)} (|Δ| {number(gap)} {'≤' if gap <= test.margin else '>'} "
                         f"{test.margin:g}){_noise_words(d, outcome)}")
    d = compare(sb, sa.scaled(test.at_least), names=names[::-1])        # ratio: mean b ≥ at_least · mean a
    outcome = {ABOVE: HOLDS, EQUAL: HOLDS, WITHIN: NOISE}.get(d.outcome, FAILS)
    r = sb.mean / sa.mean if sa.mean > 0 else math.inf
    return outcome, (f"{b} {number(sb.mean)} ({number(r)}× {'≥' if r >= test.at_least else '<'} "
                     f"{test.at_least:g}×){_noise_words(d, outcome)}")


def _no_worse(claim: Claim, sa: Sample, sb: Sample, b: Selector) -> tuple[str, str]:
    """a no worse than b by more than the margin, one-sided: holds when a − b lies beyond −margin
    (on the better side) beyond the noise, fails when it lies short of it beyond the noise."""
    test = claim.test
    if test.margin == "sd":
        spreads = [s.variance_of_mean() for s in (sa, sb)]
        if any(v is None for v in spreads):
            return NOISE, f"{b} {number(sb.mean)} (within noise: one trial, no standard deviation to measure by)"
        margin = math.sqrt(sum(v * s.n for v, s in zip(spreads, (sa, sb))) / 2)     # the trials' pooled sd
        named = f"1 sd = {number(margin)}"
    else:
        margin, named = test.margin, f"{test.margin:g}"
    better, worse = (sa, sb) if test.direction == "higher" else (sb, sa)
    d = compare(better, worse, -margin, names=(str(test.a), str(b)))
    outcome = {ABOVE: HOLDS, EQUAL: HOLDS, WITHIN: NOISE}.get(d.outcome, FAILS)
    gap = (sa.mean - sb.mean) if test.direction == "higher" else (sb.mean - sa.mean)
    return outcome, (f"{b} {number(sb.mean)} (a {'ahead' if gap >= 0 else 'behind'} by {number(abs(gap))}; "
                     f"allowed behind: {named}){_noise_words(d, outcome)}")


def _target(test, b: Selector, final: float, target: float) -> str:
    words = f"{b}'s final {test.metric} {number(final)}"
    return words if target == final else f"{number(target)} ({words} {'+' if target > final else '−'} {test.margin:g})"


def _time_to(claim: Claim, case: SetRuns, rows_by_method: dict) -> tuple[str, str]:
    """(outcome, measurement) of a time_to test: per b, the seconds a's trials need to reach b's
    final mean against b's training seconds, at least `at_least` times shorter (or against `value` s)."""
    test = claim.test
    outcomes, texts = [], []
    for b in test.b:
        final = case.sample(b, rows_by_method[b], test.metric).mean
        margin = test.margin or 0.0
        target = final + margin if test.direction == "lower" else final - margin
        spent = case.sample(b, rows_by_method[b], "train_seconds")
        reached, missed = case.time_to(test.a, rows_by_method[test.a], test.metric, target, test.direction)
        if missed:
            outcomes.append(FAILS)
            texts.append(f"{test.a} never reached {_target(test, b, final, target)} in {missed} trial(s)")
            continue
        if test.value is not None:      # the time to the target against stated seconds
            d = compare(Sample.of([test.value], exact=True), reached)
            outcome = {ABOVE: HOLDS, WITHIN: NOISE}.get(d.outcome, FAILS)
            outcomes.append(outcome)
            texts.append(f"{test.a} reached {_target(test, b, final, target)} in {number(reached.mean)} s "
                         f"{_relation(reached.mean, test.value)} {test.value:g} s{_noise_words(d, outcome)}")
            continue
        d = compare(spent, reached.scaled(test.at_least), names=(str(b), str(test.a)))
        outcome = {ABOVE: HOLDS, EQUAL: HOLDS, WITHIN: NOISE}.get(d.outcome, FAILS)
        ratio = spent.mean / reached.mean if reached.mean > 0 else math.inf
        outcomes.append(outcome)
        texts.append(f"{test.a} reached {_target(test, b, final, target)} in {number(reached.mean)} s, {b} "
                     f"took {number(spent.mean)} s ({number(ratio)}× {'≥' if ratio >= test.at_least else '<'} "
                     f"{test.at_least:g}×){_noise_words(d, outcome)}")
    return worst(outcomes), "; ".join(texts)


def _compare(claim: Claim, samples: dict, saturated: dict | None = None) -> tuple[str, str]:
    """(outcome, measurement) of an order / similar / ratio test on one set's samples. A pair of
    methods both saturated (at the constant classifier, or both error-free) tells nothing: a miss
    against any other method fails the set; otherwise a saturated pair leaves it not comparable."""
    saturated = saturated or {}
    test = claim.test
    a = test.a
    blind = [b for b in test.b if a in saturated and b in saturated]
    pairs = {b: _pair(claim, samples[a], samples[b], b) for b in test.b}
    # the comparisons that decide come first: a failing one, then one within noise (a row shows the start)
    shown = sorted(pairs.values(), key=lambda pair: {FAILS: 0, NOISE: 1}.get(pair[0], 2))
    text = f"{a} {_shown(samples[a])}" + ("; " if test.kind != "order" else " ") + ", ".join(
        words for _, words in shown)
    outcomes = [outcome for b, (outcome, _) in pairs.items() if b not in blind]
    if FAILS not in outcomes and NOISE not in outcomes and blind:   # holding or not, a saturated pair is no evidence
        return NOT_COMPARABLE, text + "; " + "; ".join(saturated[m] for m in (a, *blind))
    return worst(outcomes), text


def _bound(claim: Claim, case: SetRuns, sa, rows: pd.DataFrame) -> tuple[str, str]:
    """(outcome, measurement) of a bound test: a's trials against the stated value (exact), or
    against the trials of the `than` metric of the same runs."""
    test = claim.test
    if isinstance(sa, NoModel):
        return FAILS, f"{test.a} has no model yet"
    if test.than is None:
        limit, named = Sample.of([test.value], exact=True), f"{test.value:g}"
    else:
        limit = case.sample(test.a, rows, test.than)
        if isinstance(limit, NoModel):
            return FAILS, f"{test.a} has no model yet"
        named = f"{test.than} {limit.mean:.6g}"
    d = compare(limit, sa) if test.direction == "lower" else compare(sa, limit)
    outcome = {ABOVE: HOLDS, WITHIN: NOISE}.get(d.outcome, FAILS)
    # six digits: a bound may sit close to its limit (a weight-degradation factor of 1.00007 against 1.06)
    return outcome, (f"{test.metric} of {test.a} {sa.mean:.6g} {_relation(sa.mean, limit.mean)} {named}"
                     f"{_noise_words(d, outcome)}")


def _speedup(claim: Claim, methods: list, samples: dict, metric: str) -> tuple[str, str]:
    """(outcome, measurement) of a speedup test: time at threads[0] ≥ at_least·k/threads[0] times
    the time at k threads, for every other k."""
    test = claim.test
    base = samples[methods[0]]
    checks = []
    for k, m in zip(test.threads[1:], methods[1:]):
        wanted = test.at_least * k / test.threads[0]
        d = compare(base, samples[m].scaled(wanted), names=(f"{test.threads[0]} thread(s)", f"{k} threads"))
        outcome = {ABOVE: HOLDS, EQUAL: HOLDS, WITHIN: NOISE}.get(d.outcome, FAILS)
        speedup = base.mean / samples[m].mean
        checks.append((outcome, f"speed-up {number(speedup)} at {k} {'≥' if speedup >= wanted else '<'} "
                                f"{number(wanted)}{_noise_words(d, outcome)}"))
    text = f"{test.a} {metric} {number(base.mean)} at {test.threads[0]} thread(s); " + ", ".join(t for _, t in checks)
    return worst([o for o, _ in checks]), text


def _growth(claim: Claim, case: SetRuns, rows_by_method: dict, metric: str) -> tuple[str, str]:
    """(outcome, measurement) of a growth test: the log-log slope of the means against n_train."""
    test = claim.test
    (method, rows), = rows_by_method.items()
    sizes = sorted(set(rows["n_train"].dropna().astype(int))) if "n_train" in rows else []
    if len(sizes) < 2:
        raise Untested(f"{method} on {case.dataset} ran at {len(sizes)} training size(s); a growth needs two or more")
    saturated = case.saturated(rows_by_method, FLOOR_POINTS)
    if saturated:
        return NOT_COMPARABLE, next(iter(saturated.values()))
    samples = {n: case.sample(method, rows[rows["n_train"] == n], metric) for n in sizes}
    if any(isinstance(s, NoModel) or min(s.values) <= 0 for s in samples.values()):
        raise Untested(f"{metric} of {method} on {case.dataset} is not positive: no log-log slope")
    slope, d = slope_against(samples, test.at_most)
    outcome = {BELOW: HOLDS, EQUAL: HOLDS, WITHIN: NOISE}.get(d.outcome, FAILS)
    return outcome, (f"{metric} of {method} grows with slope {slope:.2f} {'≤' if slope <= test.at_most else '>'} "
                     f"{test.at_most:g} over n_train {sizes[0]}–{sizes[-1]} ({len(sizes)} sizes)"
                     f"{_noise_words(d, outcome)}")


def _below_scale(claim: Claim, case: SetRuns, rows_by_method: dict) -> None:
    """Untested when the compared runs trained on fewer rows than the claim's scale speaks of."""
    if not claim.scale_rows:
        return
    sizes = [int(n) for rows in rows_by_method.values() if "n_train" in rows for n in rows["n_train"].dropna()]
    if not sizes or max(sizes) < claim.scale_rows:
        largest = f"{max(sizes):,} rows" if sizes else "an unrecorded size"
        raise Untested(f"ran at {largest}; the claim speaks of ≥ {claim.scale_rows:,} rows ({claim.scale_why})")


def _reads_time(test) -> bool:
    return (reads_time(test.metric) or (test.against is not None and reads_time(test.against))
            or test.at != "final" or test.kind in ("time_to", "speedup"))


def _one_sitting(claim: Claim, rows_by_method: dict, rerun: str = "every compared method") -> None:
    """Untested when a test that reads times compares runs of different processors, or started more
    than SESSION_HOURS apart (`rows_by_method`: the compared rows, per method of a set or per set of
    an across-sets test; `rerun`: what the fix re-runs in one sitting)."""
    if not _reads_time(claim.test):
        return
    processors = sorted({p for rows in rows_by_method.values() if "processor" in rows
                         for p in rows["processor"].dropna() if p})
    if len(processors) > 1:
        raise Untested(f"the compared runs ran on different processors ({'; '.join(processors)}): their times do "
                       f"not compare (re-run {rerun} in one sitting)")
    stamps = [rows["started"] for rows in rows_by_method.values() if "started" in rows]
    started = pd.to_datetime(pd.concat(stamps), utc=True, errors="coerce").dropna() if stamps else []
    if len(started) and started.max() - started.min() > pd.Timedelta(hours=SESSION_HOURS):
        raise Untested(f"the compared runs started {started.min():%Y-%m-%d %H:%M} to {started.max():%Y-%m-%d %H:%M} "
                       f"UTC, over {SESSION_HOURS:g} h apart: times of different days do not compare (re-run "
                       f"{rerun} in one sitting)")


def _test_set(claim: Claim, case: SetRuns) -> tuple[str, str]:
    """(outcome, measurement) of the claim's test on one set; Untested when it cannot run."""
    test = claim.test
    metric = test.metric
    if test.kind == "speedup":
        methods = [replace(test.a, params={**test.a.params, "threads": k}) for k in test.threads]
    else:
        methods = [test.a, *test.b]
    rows_by_method = {m: case.final_rows(m) for m in methods}
    _below_scale(claim, case, rows_by_method)
    _one_sitting(claim, rows_by_method)
    if test.kind == "growth":
        return _growth(claim, case, rows_by_method, metric)
    if test.kind == "time_to":
        return _time_to(claim, case, rows_by_method)
    outcomes = []
    for size, rows in case.groups(rows_by_method):
        at = f"n_train {size}: " if size is not None else ""
        if test.at.startswith("horizon:"):
            outcome, text = _over_horizon(claim, case, methods, rows)
        else:
            outcome, text = _test_group(claim, case, methods, rows)
        outcomes.append((outcome, at + text))
    return worst([o for o, _ in outcomes]), "; ".join(text for _, text in outcomes)


def _test_group(claim: Claim, case: SetRuns, methods: list, rows: dict) -> tuple[str, str]:
    """(outcome, measurement) of the claim's test on one set's rows of one size, read at `case.at`."""
    test = claim.test
    samples = {m: case.sample(m, rows[m], test.metric) for m in methods}
    if test.kind == "bound":
        return _bound(claim, case, samples[test.a], rows[test.a])
    if test.kind == "speedup":
        return _speedup(claim, methods, samples, test.metric)
    return _compare(claim, samples, case.saturated(rows, FLOOR_POINTS))


def _over_horizon(claim: Claim, case: SetRuns, methods: list, rows: dict) -> tuple[str, str]:
    """(outcome, measurement) of a test read at each time point of its horizon: it must hold at
    all of them, or (when: most) at more than half. A point that compares nothing (no compared method
    has a model yet, or all sit at the constant classifier) is no evidence either way: it is left out."""
    outcomes, texts = [], []
    for seconds in case.horizon():
        case.at = f"seconds:{seconds!r}"
        outcome, text = _test_group(claim, case, methods, rows)
        outcomes.append(outcome)
        texts.append(f"at {number(seconds)} s: {text}")
    case.at = "final"
    compared = [o for o in outcomes if o != NOT_COMPARABLE]
    left_out = len(outcomes) - len(compared)
    if not compared:
        return NOT_COMPARABLE, "no time point compares anything; " + "; ".join(texts)
    held = f"{compared.count(HOLDS)} of {len(compared)} time points hold" + (
        f" ({left_out} more compare{'s' if left_out == 1 else ''} nothing)" if left_out else "")
    return by_quantifier(compared, claim.test.when), f"{held}; " + "; ".join(texts)


def _stand_in(claim: Claim, dataset: str, runs, every: pd.DataFrame) -> str:
    """Why a set stands in for the paper's ("" when it is the paper's own): the claim's own words,
    or the synthetic replica its compared runs read, which stands in whether or not the claim says so."""
    if dataset in claim.stand_in:
        return claim.stand_in[dataset]
    return "; ".join(replicas(every[every["run_id"].isin(runs)]))


def _decide(claim: Claim, sets: list) -> str:
    """HOLDS, FAILS or NOISE of the tested `sets` by the claim's quantifier."""
    return by_quantifier([s.outcome for s in sets], claim.quantifier)


def _counted(sets: list) -> str:
    """e.g. "holds on 2, within noise on 1"."""
    counts = [(o, sum(s.outcome == o for s in sets)) for o in TESTED]
    return ", ".join(f"{o} on {k}" for o, k in counts if k)


def _decided(claim: Claim, sets: list) -> tuple[str, str]:
    """(verdict, the decision in words) from the sets' outcomes: on the paper's own sets when any
    was tested, the stand-ins beside; on the stand-ins, in the stand-in forms, when only they were."""
    tested = [s for s in sets if s.outcome in TESTED]
    own = [s for s in tested if not s.stand_in]
    stand = [s for s in tested if s.stand_in]
    needed = "every one" if claim.quantifier == "all" else "more than half"
    if own:
        verdict = _decide(claim, own)
        words = (f"{verdict} on the paper's sets: {_counted(own)} of {len(own)} tested ({needed} needed); "
                 f"{len(tested)} of {len(claim.on)} sets tested")
        if stand:
            beside = _decide(claim, stand)
            agree = ("agree" if beside == verdict else "disagree") + ("" if len(stand) > 1 else "s")
            words += (f"; the stand-in{'s' if len(stand) > 1 else ''} {', '.join(s.dataset for s in stand)} "
                      f"{agree} ({_counted(stand)})")
        return verdict, words
    verdict = _decide(claim, stand)
    named = "; ".join(f"{s.dataset} ({s.stand_in})" for s in stand)
    return verdict + STAND_IN, (f"{verdict} on stand-in data only: {_counted(stand)} of {len(stand)} tested ({needed} "
                                f"needed); {len(tested)} of {len(claim.on)} sets tested; stand-in data: {named}")


def judge_claim(claim: Claim, every: pd.DataFrame, final: pd.DataFrame | None = None,
                curves: pd.DataFrame | None = None, absent: dict | None = None,
                runs_are: str = "published") -> ClaimVerdict:
    """The claim's verdict from `every` row of the runs (collect_results; `final` and `curves`
    are derived from it when not given). `absent`: {dataset: how to get it} of the data the
    publishing machine had no copy of, named where a set has no run; `runs_are`: what the runs
    are called where a set has none ("published", or "local" for a results folder's)."""
    if claim.needs:
        return ClaimVerdict(claim, "not testable here", f"needs {claim.needs}", decision=f"needs {claim.needs}")
    if final is None or curves is None:
        final, curves = final_and_curves(every)
    if claim.test.kind in ACROSS_SETS:
        return _judge_across_sets(claim, every, final, curves, absent, runs_are)
    sets = []
    for dataset in claim.on:
        case = SetRuns(claim, dataset, every, final, curves, absent, runs_are)
        try:
            outcome, text = _test_set(claim, case)
        except Untested as why:
            outcome, text = UNTESTED, str(why)
        runs = tuple(sorted(case.runs))
        sets.append(SetOutcome(dataset, outcome, text, runs,
                               _stand_in(claim, dataset, runs, every) if outcome in TESTED else ""))
    shown = [f"{s.dataset}: {s.text}" if s.outcome in TESTED else f"{s.dataset} {s.outcome}: {s.text}" for s in sets]
    runs = tuple(sorted({r for s in sets if s.outcome in TESTED for r in s.runs}))
    if not any(s.outcome in TESTED for s in sets):
        return ClaimVerdict(claim, "not testable here", "no set tested: " + "; ".join(shown), tuple(sets), runs,
                            decision="no set tested: " + "; ".join(shown))
    verdict, decision = _decided(claim, sets)
    return ClaimVerdict(claim, verdict, "; ".join(shown) + f". {decision}", tuple(sets), runs, decision)


def _extreme(claim: Claim, points: dict) -> tuple[str, str]:
    """(outcome, words) of an extreme test: the named set's sample beyond every other set's."""
    test = claim.test
    means = {d: p[0].mean for d, p in points.items()}
    best = (max if test.direction == "higher" else min)(means, key=means.get)
    target = points[test.on_set][0]
    outcomes = []
    for dataset, (sample, *_) in points.items():
        if dataset != test.on_set:
            d = compare(target, sample) if test.direction == "higher" else compare(sample, target)
            outcomes.append({ABOVE: HOLDS, WITHIN: NOISE}.get(d.outcome, FAILS))
    noise = sum(o == NOISE for o in outcomes)
    shown = "; ".join(f"{d} {', '.join(number(s.mean) for s in p)}" for d, p in points.items())
    text = (f"{test.metric} of {test.a} per set: {shown}; {'largest' if test.direction == 'higher' else 'smallest'} "
            f"on {best}" + (f" (within noise of {noise} set(s))" if noise else ""))
    return worst(outcomes), text


def _correlation(claim: Claim, points: dict) -> tuple[str, str]:
    """(outcome, words) of a correlation test: Spearman's ρ of the sets' means."""
    test = claim.test
    means = [tuple(s.mean for s in p) for p in points.values()]
    rho, d = correlation_against(list(points.values()), test.value)
    outcome = {ABOVE: HOLDS, WITHIN: NOISE}.get(d.outcome, FAILS)
    shown = "; ".join(f"{name} {', '.join(number(x) for x in m)}" for name, m in zip(points, means))
    return outcome, (f"({test.metric}, {test.against}) of {test.a} per set: {shown}; Spearman's ρ "
                     f"{rho:.2f} {'≥' if rho >= test.value else '<'} {test.value:g} over {len(points)} sets"
                     f"{_noise_words(d, outcome)}")


def _judge_across_sets(claim: Claim, every: pd.DataFrame, final: pd.DataFrame, curves: pd.DataFrame,
                       absent: dict | None, runs_are: str) -> ClaimVerdict:
    """An extreme or correlation test: each set's sample of a's runs is one point; the sets without
    one are left out, and too few points leave the claim not testable here. Its verdict is the
    stand-in form when any point is a stand-in's: the test compares the sets with each other."""
    test = claim.test
    points, sets, rows_by_set = {}, [], {}
    for dataset in claim.on:
        case = SetRuns(claim, dataset, every, final, curves, absent, runs_are)
        try:
            rows = rows_by_set[dataset] = case.final_rows(test.a)
            point = tuple(case.sample(test.a, rows, m) for m in (test.metric, test.against) if m is not None)
            if any(isinstance(x, NoModel) or not math.isfinite(x.mean) for x in point):
                raise Untested(f"no {test.metric} of {test.a} on {dataset}")
        except Untested as why:
            sets.append(SetOutcome(dataset, UNTESTED, str(why)))
            continue
        points[dataset] = point
        runs = tuple(sorted(case.runs))
        sets.append(SetOutcome(dataset, HOLDS, ", ".join(number(x.mean) for x in point), runs,
                               _stand_in(claim, dataset, runs, every)))
    missing = "; ".join(f"{s.dataset} untested: {s.text}" for s in sets if s.outcome == UNTESTED)
    least = 2 if test.kind == "extreme" else 3
    shown = "; ".join(f"{d} {', '.join(number(x.mean) for x in p)}" for d, p in points.items())
    if len(points) < least or (test.kind == "extreme" and test.on_set not in points):
        why = f"{test.on_set} has no point" if test.kind == "extreme" and len(points) >= least else \
            f"{len(points)} set(s) with a point, {least} needed"
        text = f"{why}: " + "; ".join(x for x in (shown, missing) if x)
        return ClaimVerdict(claim, "not testable here", text, tuple(sets), decision=text)
    try:
        # a saving is a ratio of two times of one run, and still moves with the machine: the same
        # BSGD runs saved 32.5 % (Intel Xeon) and 43.4 % (AMD EPYC) on ijcnn1 with Lookup-WD at
        # B = 100, 23.4 % and 34.7 % on w8a with Lookup-h at B = 500. The sets compare only when
        # their runs shared a sitting
        _one_sitting(claim, {d: rows_by_set[d] for d in points}, f"{test.a} on every set")
    except Untested as why:
        text = f"{why}: {shown}"
        return ClaimVerdict(claim, "not testable here", text, tuple(sets), decision=text)
    outcome, text = (_extreme if test.kind == "extreme" else _correlation)(claim, points)
    if missing:
        text += f"; {missing}"
    stand = [s for s in sets if s.dataset in points and s.stand_in]
    suffix = STAND_IN if stand else ""
    if stand:
        text += "; stand-in data: " + "; ".join(f"{s.dataset} ({s.stand_in})" for s in stand)
    runs = tuple(sorted({r for s in sets for r in s.runs}))
    return ClaimVerdict(claim, outcome + suffix, text, tuple(replace(s, outcome=outcome) if s.dataset in points
                                                             else s for s in sets), runs, text)


def judge_paper(paper: Paper, every: pd.DataFrame, absent: dict | None = None,
                runs_are: str = "published") -> list[ClaimVerdict]:
    """Every claim of the paper judged on `every` row of the runs (collect_results); `absent` and
    `runs_are` as judge_claim's."""
    final, curves = final_and_curves(every)
    return [judge_claim(claim, every, final, curves, absent, runs_are) for claim in paper.claims]


def rows_read(df: pd.DataFrame, paper: str | None = None) -> list:
    """The index labels of the curve rows, beyond the final ones, that a number or a claim of the
    report is read from (kernelbench.publish keeps them when it thins curves): those of the
    numbers' at_seconds entries, and every curve row a claim's test reads (SetRuns.curve_rows_read:
    the evaluations within its time, the point a time_to test reaches its target)."""
    chosen = set(number_rows_read(df, paper))
    final, curves = final_and_curves(df)
    for claim in (c for p in report_papers(paper) for c in p.claims):
        if claim.needs or claim.test is None or claim.test.kind in ACROSS_SETS:
            continue
        if claim.test.at == "final" and claim.test.kind != "time_to":
            continue
        for dataset in claim.on:
            case = SetRuns(claim, dataset, df, final, curves)
            try:
                _test_set(claim, case)
            except Untested:
                pass
            chosen.update(case.curve_rows_read)
    return sorted(chosen)
