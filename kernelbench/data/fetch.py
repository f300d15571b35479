"""Make dataset files available locally: shipped copies -> cache dir -> mirror dirs -> download.

A file is looked up among the small sets shipped with the package (shipped.py), then as its
decompressed name, with .xz/.bz2/.gz, or as the URL's basename, in the cache dir, then in each
mirror dir (local.py), and downloaded only when none has it (download.py);
`KERNELBENCH_OFFLINE=1` skips downloads. Every file is checked against the sha256 pinned in the
registry, or, where the registry pins none, against the sha256 recorded on the file's first use.
"""
from __future__ import annotations

import os
from pathlib import Path

import yaml

from kernelbench.errors import DataError

from .download import Confirm, DownloadFailed, always, download
from .local import Trust, data_dirs, ensure_cache, expected_sha256, trust_state, verify_file
from .registry import DatasetSpec, FileSpec, get_spec, registry_path
from .shipped import shipped_copy


def fetch_command(name: str) -> str:
    """The command that gets a registry data set into the cache (what a report tells a reader
    whose runs lack it)."""
    return f"kernelbench datasets fetch {name}"


def _offline() -> bool:
    return os.environ.get("KERNELBENCH_OFFLINE", "").strip().lower() not in ("", "0", "false", "no")


def resolve_local(fspec: FileSpec) -> Path | None:
    """The first local copy of a file: shipped with the package, cache dir, then each mirror dir;
    None if there is none."""
    shipped = shipped_copy(fspec)
    if shipped is not None:
        return shipped
    dirs = data_dirs()
    for folder in [dirs["cache"], *dirs["mirrors"]]:
        for cand in fspec.candidates():
            p = folder / cand
            if p.is_file():
                return p
    return None


def _missing_error(ds: DatasetSpec, fspec: FileSpec, reason: str) -> DataError:
    dirs = data_dirs()
    cache, mirrors = dirs["cache"], dirs["mirrors"]
    names = ", ".join(fspec.candidates())
    mirror_txt = ", ".join(str(m) for m in mirrors) if mirrors else "none ($KERNELBENCH_MIRROR is not set)"
    put_name = fspec.download_name or (fspec.name + ".xz")
    if fspec.url:
        where = f"Download URL: {fspec.url}."
        get_it = f"download {fspec.url} yourself and save it as {cache / put_name}"
    else:
        # the registry note says where such a file comes from, and why it cannot be fetched
        where = "The data cannot be fetched: there is no public download for this file" + (
            f" ({ds.note.rstrip('.')})." if ds.note else " (mirror-only).")
        get_it = f"obtain it and save it as {cache / (fspec.name + '.xz')}"
    return DataError(
        f"Dataset '{ds.name}': {fspec.role} file '{fspec.name}' is not available ({reason}). "
        f"Looked for {names} in the cache dir {cache} and in the mirror dirs: {mirror_txt}. {where} "
        f"Fix: {get_it} (the cache dir, $KERNELBENCH_DATA), or put '{fspec.name}' (plain or .xz/.bz2/.gz) into a "
        f"mirror folder listed in $KERNELBENCH_MIRROR (colon-separated); then run "
        f"`kernelbench datasets fetch {ds.name}`."
        + (" (Or load it with test=<fraction> to split the training file instead of using the official test file.)"
           if fspec.role == "test" else "")
    )


def fetch_file(ds: DatasetSpec, fspec: FileSpec, *, progress: bool = True, verify: bool = True,
               confirm: Confirm | None = None) -> Path:
    """One file of a dataset, available locally and checked (sha256 pinned, or recorded on first use).
    verify=False leaves a local copy's check to the caller (the loader hashes while it parses).
    `confirm` decides on a download above the confirmation threshold; None refuses it
    (DownloadNotConfirmed: the message says how to confirm)."""
    return _fetch_file(ds, fspec, progress=progress, verify=verify, confirm=confirm)[0]


def _fetch_file(ds: DatasetSpec, fspec: FileSpec, *, progress: bool, verify: bool,
                confirm: Confirm | None) -> tuple[Path, Trust | None]:
    path = resolve_local(fspec)
    if path is not None:
        return path, (verify_file(path, fspec, progress=progress) if verify else None)
    if not fspec.url:
        raise _missing_error(ds, fspec, "no local copy, and the registry has no download URL")
    if _offline():
        raise _missing_error(ds, fspec, "no local copy, and KERNELBENCH_OFFLINE=1 forbids downloading")
    cache = data_dirs()["cache"]
    ensure_cache(cache)
    try:
        path, trust = download(fspec, cache, progress=progress, confirm=confirm)
    except DownloadFailed as exc:
        raise _missing_error(ds, fspec, f"no local copy, and the download failed: {exc}") from None
    if trust is None and verify:           # another process downloaded it: check it here too
        trust = verify_file(path, fspec, progress=progress)
    return path, trust


def fetch_checked(name: str, *, progress: bool = True, confirm: Confirm | None = always) -> list[tuple[Path, Trust]]:
    """fetch(), with what each file's check established (Trust.describe() says it in words)."""
    ds = get_spec(name)
    return [_fetch_file(ds, ds.files[role], progress=progress, verify=True, confirm=confirm)
            for role in ("train", "test") if role in ds.files]


def fetch(name: str, *, progress: bool = True, confirm: Confirm | None = always) -> list[Path]:
    """Make every file of a registry dataset available locally (cache or mirror), checked.

    Returns the local paths (train first, then test). A builtin dataset has none: [].
    Asking for a dataset by name is the confirmation of its download, whatever its size, unless
    `confirm` says otherwise.
    """
    return [path for path, _ in fetch_checked(name, progress=progress, confirm=confirm)]


def config_files_first(config, overrides: dict | None = None, *, confirm: Confirm | None = None) -> None:
    """The registry files an experiment config needs, fetched before anything else of it is read: a
    data set nobody has (no cache or mirror copy, no network) fails in well under a second, before the
    algorithm modules (scikit-learn, the compiled cores) are imported to validate the rest of the
    config. The overrides' dataset keys (dataset.name=...) say which data that is; anything unusual
    is left to the config's validation. `confirm` decides on a large download (None refuses it)."""
    try:
        dataset = dict(yaml.safe_load(Path(config).read_text())["dataset"])
        for key, value in (overrides or {}).items():
            if key == "dataset" and isinstance(value, dict):
                dataset = dict(value)
            elif key.startswith("dataset."):
                dataset[key.removeprefix("dataset.")] = value
        spec = get_spec(dataset["name"])
    except Exception:       # unreadable, invalid or unknown: load_config says what is wrong
        return
    test = dataset.get("test", "official")
    roles = ("train", "test") if test == "official" else ("train",)
    for role in roles:
        if role in spec.files and resolve_local(spec.files[role]) is None:
            # downloads (a large file once confirmed), or raises the datasets message
            fetch_file(spec, spec.files[role], confirm=confirm)


# ------------------------------------------------------------------ info

def dataset_info(name: str) -> dict:
    """The registry entry, resolved local files (or None), how each is checked (sha256 pinned,
    recorded or not yet), notes and the cache dir."""
    ds = get_spec(name)
    dirs = data_dirs()
    files = {}
    notes = []
    for role, f in ds.files.items():
        local = resolve_local(f)
        trust = expected_sha256(f)
        files[role] = {
            "name": f.name, "url": f.url, "compression": f.compression, "member": f.member,
            "sha256": f.sha256, "n": f.n, "local": str(local) if local else None,
            "looked_for": f.candidates(), "hash": trust_state(f),
            "recorded_sha256": trust.sha256 if trust is not None and trust.record else None,
            "recorded_at": trust.recorded_at if trust is not None and trust.record else None,
            "record": str(trust.record) if trust is not None and trust.record else None,
        }
        if f.sha256 is None:
            notes.append(f"{role} file '{f.name}': no sha256 pinned in the registry; the sha256 of its first "
                         "use is recorded and later uses are checked against it (trust on first use, not "
                         "verified against a published hash).")
    return {
        "name": ds.name, "task": ds.task, "format": ds.format, "d": ds.d,
        "n_train": ds.files["train"].n if "train" in ds.files else ds.raw.get("n"),
        "n_test": ds.files["test"].n if "test" in ds.files else None,
        "description": ds.description, "note": ds.note, "papers": list(ds.papers), "split": dict(ds.split),
        "files": files, "available": all(v["local"] for v in files.values()),
        "notes": notes, "cache_dir": str(dirs["cache"]), "parsed_dir": str(dirs["cache"] / "parsed"),
        "mirrors": [str(m) for m in dirs["mirrors"]], "registry": str(registry_path()),
        "entry": dict(ds.raw),
    }
