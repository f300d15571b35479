"""Datasets: the registry (datasets/registry.yaml), download + sha256 check + cache, loaders, splits, scaling.

    from kernelbench.data import load_dataset, prepare
    ds = load_dataset("ijcnn1")                     # official test file
    ds = prepare(ds, subsample=20000, scale="standard", seed=0)

Files are looked up among the small sets shipped with the package (data/shipped/), in the
cache dir ($KERNELBENCH_DATA), then the mirror dirs ($KERNELBENCH_MIRROR),
then downloaded (https only; KERNELBENCH_OFFLINE=1 forbids it). Every user-fixable problem is a
kernelbench.errors.DataError whose message names the file and the fix.
"""
from .fetch import data_dirs, dataset_info, fetch
from .load import Dataset, UserArrays, infer_task, load_dataset
from .preprocess import prepare
from .registry import dataset_names

__all__ = ["Dataset", "dataset_names", "dataset_info", "data_dirs", "fetch", "load_dataset", "prepare",
           "infer_task", "UserArrays"]
