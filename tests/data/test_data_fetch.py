"""Download path against a real HTTP server on 127.0.0.1: verify, cache, resume, refuse, fail fast."""
from __future__ import annotations

import bz2
import hashlib
import lzma
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from flaky_server import registry_text
from kernelbench.data import dataset_info, fetch, load_dataset
from kernelbench.errors import DataError

# A small svmlight training set; its sha256 (of the decompressed text) is computed independently here.
_RNG = np.random.default_rng(7)
ROWS = b"".join(b"%d 1:%d.5 3:%.6f\n" % (1 if i % 3 else -1, i % 7, v) for i, v in enumerate(_RNG.random(3000)))
ROWS_SHA = hashlib.sha256(ROWS).hexdigest()
ROWS_BZ2 = bz2.compress(ROWS)


def _registry(path: Path, url: str | None, sha: str | None, **toy) -> Path:
    path.write_text(registry_text(url, sha, **toy))
    return path


@pytest.fixture
def env(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    monkeypatch.setenv("KERNELBENCH_DATA", str(cache))
    monkeypatch.setenv("KERNELBENCH_MIRROR", str(mirror))
    monkeypatch.setenv("KERNELBENCH_ALLOW_HTTP_LOOPBACK", "1")
    monkeypatch.delenv("KERNELBENCH_OFFLINE", raising=False)
    monkeypatch.setenv("KERNELBENCH_REGISTRY", str(tmp_path / "registry.yaml"))
    monkeypatch.setenv("KERNELBENCH_DOWNLOAD_BACKOFF", "0.01")      # retries without waiting
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    return {"cache": cache, "mirror": mirror, "registry": tmp_path / "registry.yaml"}


def _cache_entries(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir() if p.is_file()) if cache.exists() else []


def test_good_download_is_verified_cached_and_loaded(server, env):
    server.routes["/toy.bz2"] = ROWS_BZ2
    _registry(env["registry"], server.base + "/toy.bz2", ROWS_SHA)
    paths = fetch("toy", progress=False)
    assert paths == [env["cache"] / "toy.bz2"]
    assert hashlib.sha256(bz2.decompress(paths[0].read_bytes())).hexdigest() == ROWS_SHA
    assert _cache_entries(env["cache"]) == ["toy.bz2"]          # no .part left
    ds = load_dataset("toy", test="none", progress=False)
    assert ds.X_train.shape == (3000, 3)
    assert sorted(np.unique(ds.y_train)) == [-1.0, 1.0]
    assert ds.X_train[2, 0] == 2.5 and ds.X_train[2, 1] == 0.0 and 0 <= ds.X_train[2, 2] < 1
    # A second fetch is served from the cache: no new request.
    n_requests = len(server.log)
    assert fetch("toy", progress=False) == paths
    assert len(server.log) == n_requests
    assert dataset_info("toy")["files"]["train"]["local"] == str(paths[0])


def test_truncated_transfer_is_error_without_cache_entry_then_resumes(server, env):
    server.routes["/toy.bz2"] = ROWS_BZ2
    server.cut_first = 10**6                           # every GET sends half of what it promises
    _registry(env["registry"], server.base + "/toy.bz2", ROWS_SHA)
    with pytest.raises(DataError, match=r"toy\.bz2"):
        fetch("toy", progress=False)
    assert not (env["cache"] / "toy.bz2").exists()
    part = env["cache"] / "toy.bz2.part"
    assert part.exists() and 0 < part.stat().st_size < len(ROWS_BZ2)
    with pytest.raises(DataError):                     # a .part is never read as data
        load_dataset("toy", test="none", progress=False)
    # The server is fixed: the next fetch resumes from the partial file with a Range request.
    server.cut_first = 0
    have = part.stat().st_size
    server.log.clear()
    fetch("toy", progress=False)
    assert server.log == [("GET", "/toy.bz2", f"bytes={have}-")]
    assert bz2.decompress((env["cache"] / "toy.bz2").read_bytes()) == ROWS
    assert not part.exists()


def test_stale_part_file_longer_than_download_is_restarted(server, env):
    server.routes["/toy.bz2"] = ROWS_BZ2
    _registry(env["registry"], server.base + "/toy.bz2", ROWS_SHA)
    env["cache"].mkdir()
    (env["cache"] / "toy.bz2.part").write_bytes(b"x" * (len(ROWS_BZ2) + 10))
    fetch("toy", progress=False)
    assert server.log == [("GET", "/toy.bz2", f"bytes={len(ROWS_BZ2) + 10}-"), ("GET", "/toy.bz2", None)]
    assert (env["cache"] / "toy.bz2").read_bytes() == ROWS_BZ2


def test_resume_of_existing_part_file_uses_range(server, env):
    server.routes["/toy.bz2"] = ROWS_BZ2
    _registry(env["registry"], server.base + "/toy.bz2", ROWS_SHA)
    env["cache"].mkdir()
    (env["cache"] / "toy.bz2.part").write_bytes(ROWS_BZ2[:1000])
    fetch("toy", progress=False)
    assert server.log == [("GET", "/toy.bz2", "bytes=1000-")]
    assert (env["cache"] / "toy.bz2").read_bytes() == ROWS_BZ2


def test_truncated_compressed_file_is_error_and_deleted(server, env):
    xz = lzma.compress(ROWS)
    server.routes["/toy.xz"] = xz[: len(xz) // 2]          # complete HTTP transfer of a cut .xz file
    _registry(env["registry"], server.base + "/toy.xz", None, compression="xz")
    with pytest.raises(DataError, match=r"truncated or corrupt") as err:
        fetch("toy", progress=False)
    assert "toy.xz" in str(err.value)
    assert _cache_entries(env["cache"]) == []                # neither the file nor a .part


def test_wrong_checksum_names_expected_found_and_path(server, env):
    server.routes["/toy.bz2"] = ROWS_BZ2
    wrong = "0" * 64
    _registry(env["registry"], server.base + "/toy.bz2", wrong)
    with pytest.raises(DataError) as err:
        fetch("toy", progress=False)
    msg = str(err.value)
    assert wrong in msg and ROWS_SHA in msg and "toy.bz2" in msg
    assert _cache_entries(env["cache"]) == []


def test_checksum_mismatch_of_local_copy(env):
    _registry(env["registry"], None, "1" * 64, compression="xz")
    (env["mirror"] / "toy.xz").write_bytes(lzma.compress(ROWS))
    with pytest.raises(DataError) as err:
        load_dataset("toy", progress=False)
    msg = str(err.value)
    assert "1" * 64 in msg and ROWS_SHA in msg and str(env["mirror"] / "toy.xz") in msg


def test_404_is_error_naming_url_and_where_to_put_file(server, env):
    _registry(env["registry"], server.base + "/missing.bz2", ROWS_SHA)
    with pytest.raises(DataError) as err:
        fetch("toy", progress=False)
    msg = str(err.value)
    assert "404" in msg and server.base + "/missing.bz2" in msg
    assert str(env["cache"] / "missing.bz2") in msg and str(env["mirror"]) in msg
    assert _cache_entries(env["cache"]) == []


def test_mirror_copy_is_used_in_place_without_download(server, env):
    _registry(env["registry"], server.base + "/toy.bz2", ROWS_SHA)
    (env["mirror"] / "toy.xz").write_bytes(lzma.compress(ROWS))    # other compression than the download
    assert fetch("toy", progress=False) == [env["mirror"] / "toy.xz"]
    assert server.log == []
    assert _cache_entries(env["cache"]) == []                        # never copied


def test_concurrent_fetches_share_one_verified_download(server, env):
    server.routes["/toy.bz2"] = ROWS_BZ2
    _registry(env["registry"], server.base + "/toy.bz2", ROWS_SHA)
    results, errors = [], []

    def work():
        try:
            results.append(fetch("toy", progress=False))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and len(results) == 4
    assert (env["cache"] / "toy.bz2").read_bytes() == ROWS_BZ2
    assert _cache_entries(env["cache"]) == ["toy.bz2"]


def test_plain_http_is_refused_without_loopback_allowance(server, env, monkeypatch):
    server.routes["/toy.bz2"] = ROWS_BZ2
    _registry(env["registry"], server.base + "/toy.bz2", ROWS_SHA)
    monkeypatch.delenv("KERNELBENCH_ALLOW_HTTP_LOOPBACK")
    with pytest.raises(DataError, match="only https"):
        fetch("toy", progress=False)
    assert server.log == []
    _registry(env["registry"], "http://example.com/toy.bz2", ROWS_SHA)
    monkeypatch.setenv("KERNELBENCH_ALLOW_HTTP_LOOPBACK", "1")
    with pytest.raises(DataError, match="only https"):
        fetch("toy", progress=False)


def test_offline_flag_skips_download(server, env, monkeypatch):
    server.routes["/toy.bz2"] = ROWS_BZ2
    _registry(env["registry"], server.base + "/toy.bz2", ROWS_SHA)
    monkeypatch.setenv("KERNELBENCH_OFFLINE", "1")
    with pytest.raises(DataError, match="KERNELBENCH_OFFLINE"):
        fetch("toy", progress=False)
    assert server.log == []


@pytest.mark.parametrize("offline", [True, False])
def test_susy_without_network_fails_fast_and_says_where_to_put_it(tmp_path, monkeypatch, offline):
    """The real registry; no local copy. Without OFFLINE the network is made unreachable (a dead proxy)."""
    monkeypatch.delenv("KERNELBENCH_REGISTRY", raising=False)
    cache, mirror = tmp_path / "cache", tmp_path / "mirror"
    mirror.mkdir()
    monkeypatch.setenv("KERNELBENCH_DATA", str(cache))
    monkeypatch.setenv("KERNELBENCH_MIRROR", str(mirror))
    if offline:
        monkeypatch.setenv("KERNELBENCH_OFFLINE", "1")
    else:
        monkeypatch.delenv("KERNELBENCH_OFFLINE", raising=False)
        for var in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")   # discard port: connection refused
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
    start = time.monotonic()
    with pytest.raises(DataError) as err:
        fetch("susy", progress=False)
    assert time.monotonic() - start < 15
    msg = str(err.value)
    assert "SUSY" in msg and "train file" in msg
    assert str(cache) in msg and str(mirror) in msg                       # where it looked
    assert "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/SUSY.xz" in msg
    assert str(cache / "SUSY.xz") in msg                                 # exactly where to put it
    leftovers = [p for p in cache.rglob("*") if p.is_file() and ".locks" not in p.parts] if cache.exists() else []
    assert leftovers == []                                               # no half file


def test_mirror_only_dataset_without_copy_says_so(env):
    _registry(env["registry"], None, ROWS_SHA, compression="xz")
    with pytest.raises(DataError, match="no download URL") as err:
        fetch("toy", progress=False)
    assert str(env["mirror"]) in str(err.value)


def test_registry_override_file_problems_are_data_errors(env):
    env["registry"].write_text("version: 1\ndatasets:\n  toy: {task: binaryy, format: svmlight, d: 3}\n")
    with pytest.raises(DataError, match=r"'toy', field 'task'"):
        fetch("toy")
    os.remove(env["registry"])
    with pytest.raises(DataError, match="KERNELBENCH_REGISTRY"):
        fetch("toy")
