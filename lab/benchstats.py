"""benchstats.py: the statistics the mana and scaling reports share
(lab/bench-mana-report.py, scale-report.py).  Values of None (a run
that did not measure) are left out.  Only the standard library."""
import statistics


def med(xs):
    """The median, or None when nothing was measured."""
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def spread(xs):
    """The noise floor of a metric: (max - min) / median of its runs, or
    None with fewer than two runs."""
    xs = [x for x in xs if x is not None]
    if len(xs) < 2 or not statistics.median(xs):
        return None
    return (max(xs) - min(xs)) / statistics.median(xs)


def ratio(a, b):
    """a / b, or None when either is missing or b is 0."""
    return a / b if a is not None and b else None
