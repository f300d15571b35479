"""Security: safe YAML only, no path traversal from dataset names, registry URLs or zip
members, https-only downloads, allow_pickle=False for cached arrays, no shell anywhere."""
from __future__ import annotations

import re
import zipfile
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, assert_user_error, env_for, kb
from kernelbench.config import config_from_dict, load_config
from kernelbench.data import fetch, load_dataset
from kernelbench.data.download import check_url_allowed
from kernelbench.data.local import open_decompressed
from kernelbench.data.registry import get_spec, load_registry
from kernelbench.errors import ConfigError, DataError

MARK = "kb_security_marker"


# ------------------------------------------------------------------------------ YAML

@pytest.mark.parametrize("tag", ["!!python/object/apply:os.system", "!!python/object/apply:subprocess.call",
                                 "!!python/object/new:os.system"])
def test_yaml_python_tags_are_refused_and_never_executed(tmp_path, monkeypatch, tag):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "evil.yaml"
    config.write_text(f"name: {tag} [\"touch {MARK}\"]\ndataset: {{name: digits86}}\nalgorithm: {{name: dsg}}\n")
    with pytest.raises(ConfigError):
        load_config(config)
    assert not (tmp_path / MARK).exists()


def test_yaml_python_tag_through_the_cli_is_exit_2(tmp_path):
    config = tmp_path / "evil.yaml"
    config.write_text(f"!!python/object/apply:os.system [\"touch {tmp_path / MARK}\"]\n")
    proc = kb("run", config, "--out", tmp_path / "out", env=env_for(tmp_path / "cache"))
    assert_user_error(proc, "evil.yaml")
    assert not (tmp_path / MARK).exists()


def test_registry_yaml_with_python_tag_is_refused(tmp_path, monkeypatch):
    reg = tmp_path / "registry.yaml"
    reg.write_text(f"datasets: !!python/object/apply:os.system [\"touch {tmp_path / MARK}\"]\n")
    monkeypatch.setenv("KERNELBENCH_REGISTRY", str(reg))
    with pytest.raises(DataError, match=re.escape(str(reg))):
        load_registry()
    assert not (tmp_path / MARK).exists()


# ------------------------------------------------------------------------------ names and paths

EVIL_NAMES = ["../../etc/passwd", "/etc/passwd", "a9a/../../x", "..", ".", "a9a/", "~/x", "a9a\x00", "heart_scale/.."]


@pytest.mark.parametrize("name", EVIL_NAMES)
def test_dataset_names_never_become_paths(tmp_path, monkeypatch, name):
    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELBENCH_OFFLINE", "1")
    monkeypatch.delenv("KERNELBENCH_REGISTRY", raising=False)
    with pytest.raises(DataError):
        load_dataset(name, progress=False)
    with pytest.raises(DataError):
        fetch(name, progress=False)
    with pytest.raises(ConfigError):
        config_from_dict({"name": "x", "dataset": {"name": name}, "algorithm": {"name": "dsg"}})


def test_traversal_name_through_the_cli_is_exit_2(tmp_path):
    proc = kb("datasets", "info", "../../etc/passwd", env=env_for(tmp_path / "cache"))
    assert_user_error(proc, "Unknown dataset")
    assert "root:" not in proc.stdout + proc.stderr


def _registry(tmp_path, monkeypatch, **file_fields) -> Path:
    import yaml

    train = {"name": "evil", "url": "https://example.invalid/evil.xz", "compression": "xz", "sha256": None, "n": None}
    train.update(file_fields)
    doc = {"datasets": {"evil": {"task": "binary", "format": "svmlight", "d": 2, "description": "test entry",
                                 "files": {"train": train}}}}
    reg = tmp_path / "registry.yaml"
    reg.write_text(yaml.safe_dump(doc))
    monkeypatch.setenv("KERNELBENCH_REGISTRY", str(reg))
    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELBENCH_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.delenv("KERNELBENCH_OFFLINE", raising=False)
    monkeypatch.delenv("KERNELBENCH_ALLOW_HTTP_LOOPBACK", raising=False)
    return reg


@pytest.mark.parametrize("fname", ["../evil", "/etc/passwd", "a/b", ".hidden", ".."])
def test_registry_file_names_with_paths_are_refused(tmp_path, monkeypatch, fname):
    reg = _registry(tmp_path, monkeypatch, name=fname)
    with pytest.raises(DataError, match=re.escape(str(reg))):
        get_spec("evil")


@pytest.mark.parametrize("url", ["https://example.invalid/..", "https://example.invalid/a/..",
                                 "https://example.invalid/.", "https://example.invalid/%2e%2e",
                                 "https://example.invalid/..%2F..%2Fx", "https://example.invalid/x?f=../../y"])
def test_registry_url_never_names_a_path_outside_the_cache(tmp_path, monkeypatch, url):
    """The download name comes from the URL's last segment: it must stay a file inside the cache
    dir (or the registry entry is refused)."""
    _registry(tmp_path, monkeypatch, url=url)
    try:
        spec = get_spec("evil")
    except DataError:
        return
    cache = (tmp_path / "cache").resolve()
    for cand in spec.files["train"].candidates():
        target = (cache / cand).resolve()
        assert target.parent == cache and target.name == cand, (url, cand)


@pytest.mark.parametrize("url", ["http://example.invalid/evil.xz", "http://127.0.0.1:9/evil.xz"])
def test_plain_http_registry_url_is_refused_before_any_connection(tmp_path, monkeypatch, url):
    _registry(tmp_path, monkeypatch, url=url)
    with pytest.raises(DataError, match="only https"):
        fetch("evil", progress=False)
    assert not list((tmp_path / "cache").glob("evil*"))


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.invalid/x.xz", "/etc/passwd",
                                 "javascript:alert(1)"])
def test_non_http_registry_urls_are_refused(tmp_path, monkeypatch, url):
    reg = _registry(tmp_path, monkeypatch, url=url)
    with pytest.raises(DataError, match=re.escape(str(reg))):
        fetch("evil", progress=False)
    with pytest.raises(DataError):
        check_url_allowed(url)


def test_registry_with_http_url_through_the_cli_is_exit_2(tmp_path, monkeypatch):
    reg = _registry(tmp_path, monkeypatch, url="http://example.invalid/evil.xz")
    env = env_for(tmp_path / "cache", mirror=tmp_path / "mirror", KERNELBENCH_REGISTRY=reg)
    env.pop("KERNELBENCH_OFFLINE")
    proc = kb("datasets", "fetch", "evil", env=env)
    assert_user_error(proc, "only https")


# ------------------------------------------------------------------------------ zip members

def _zip(path: Path, members: dict) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo("member.csv")
            info.filename = name                     # ZipFile would otherwise normalise the name
            zf.writestr(info, data)
    return path


ROWS = b"".join(b"%d,%d,%d\n" % (i % 2 * 2 - 1, i, i % 3) for i in range(40))


@pytest.mark.parametrize("member", ["../evil.csv", "../../tmp/evil.csv", "/tmp/evil.csv", "a/../../evil.csv",
                                    "..\\evil.csv"])
def test_zip_members_with_traversal_are_refused(tmp_path, monkeypatch, member):
    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    archive = _zip(tmp_path / "data.zip", {member: ROWS})
    assert zipfile.ZipFile(archive).namelist() == [member]
    with pytest.raises(DataError, match=re.escape(str(archive))):
        open_decompressed(archive, "zip", member)
    with pytest.raises(DataError, match=re.escape(str(archive))):
        load_dataset(path=str(archive), test=0.25, progress=False)
    assert not (tmp_path / "evil.csv").exists() and not Path("/tmp/evil.csv").exists()


def test_registry_zip_member_with_traversal_is_refused(tmp_path, monkeypatch):
    _registry(tmp_path, monkeypatch, url="https://example.invalid/d.zip", compression="zip",
              member="../../evil.csv", name="evil.csv")
    (tmp_path / "cache").mkdir()
    _zip(tmp_path / "cache" / "d.zip", {"../../evil.csv": ROWS})
    with pytest.raises(DataError):
        load_dataset("evil", test=0.25, progress=False)
    assert not (tmp_path / "evil.csv").exists()


def test_a_plain_zip_member_still_loads(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    archive = _zip(tmp_path / "data.zip", {"sub/data.csv": ROWS})
    ds = load_dataset(path=str(archive), test=0.25, progress=False)
    assert ds.n_train + ds.n_test == 40


# ------------------------------------------------------------------------------ cached arrays

class _Payload:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def test_object_npy_in_the_cache_is_never_unpickled(tmp_path, monkeypatch):
    """Replace a cached y.npy with an object array whose unpickling would create a marker file:
    the loader refuses it (allow_pickle=False) and the data come from a fresh parse instead."""
    from kernelbench.data.parse import load_arrays

    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    data = tmp_path / "d.svm"
    data.write_bytes(b"".join(b"%d 1:%d 2:%d\n" % (i % 2 * 2 - 1, i, i % 3) for i in range(40)))
    first = load_dataset(path=str(data), test="none", progress=False)
    X0, y0 = np.array(first.X_train), np.array(first.y_train)      # copies: the entry is overwritten below
    del first
    (entry,) = (tmp_path / "cache" / "parsed").iterdir()
    marker = tmp_path / MARK
    evil = np.empty(1, dtype=object)
    evil[0] = _Payload(marker)
    np.save(entry / "y.npy", evil, allow_pickle=True)
    with pytest.raises(ValueError):
        load_arrays(entry)                               # refused, not unpickled
    assert not marker.exists()
    again = load_dataset(path=str(data), test="none", progress=False)
    assert not marker.exists()
    np.testing.assert_array_equal(np.asarray(again.y_train), y0)
    np.testing.assert_array_equal(np.asarray(again.X_train), X0)
    assert np.load(entry / "y.npy", allow_pickle=False).dtype == np.float64    # the entry was rebuilt


# ------------------------------------------------------------------------------ no shell

SHELL = re.compile(r"shell\s*=\s*True|\bos\.system\s*\(|\bos\.popen\s*\(|\bos\.exec\w*\s*\(|\bos\.spawn\w*\s*\(|"
                   r"\bcommands\.getoutput|\bpty\.spawn|\beval\s*\(|\bexec\s*\(|pickle\.loads?\s*\(|"
                   r"yaml\.load\s*\((?![^)]*SafeLoader)|allow_pickle\s*=\s*True")


def test_no_shell_eval_or_unsafe_load_in_the_package():
    sources = [p for p in (REPO / "kernelbench").rglob("*") if p.suffix in (".py", ".pyx", ".pxd")]
    assert len(sources) > 10
    hits = [f"{p.relative_to(REPO)}:{i}: {line.strip()}" for p in sources
            for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
            if SHELL.search(line) and not line.lstrip().startswith("#")]
    assert not hits, "\n".join(hits)


def test_the_grep_would_catch_a_shell_call():
    assert SHELL.search("subprocess.run(cmd, shell=True)") and SHELL.search("os.system('x')")
    assert SHELL.search("yaml.load(text)") and not SHELL.search("yaml.safe_load(text)")
