"""Downloads a user can trust, against a local HTTP server that fails on purpose: retries with
back-off, resuming from the .part file, servers that ignore Range, the sha256 recorded on first use
(trust on first use) and the confirmation of a large download. No network; back-off delays tiny."""
from __future__ import annotations

import bz2
import hashlib
import json
import time

import numpy as np
import pytest

from flaky_server import registry_text
from kernelbench.data import fetch, load_dataset
from kernelbench.data.download import DownloadNotConfirmed, parse_size
from kernelbench.data.fetch import fetch_checked, fetch_file
from kernelbench.data.registry import get_spec
from kernelbench.errors import DataError

_RNG = np.random.default_rng(11)
ROWS = b"".join(b"%d 1:%d.5 3:%.6f\n" % (1 if i % 3 else -1, i % 7, v) for i, v in enumerate(_RNG.random(3000)))
ROWS_SHA = hashlib.sha256(ROWS).hexdigest()           # the truth: hashed here, not by kernelbench
BODY = bz2.compress(ROWS)
OTHER_ROWS = ROWS.replace(b"1:3.5", b"1:4.5", 1)        # the same shape, other content
OTHER_BODY = bz2.compress(OTHER_ROWS)


@pytest.fixture
def env(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("KERNELBENCH_DATA", str(cache))
    monkeypatch.setenv("KERNELBENCH_MIRROR", str(tmp_path / "no-mirror"))
    monkeypatch.setenv("KERNELBENCH_ALLOW_HTTP_LOOPBACK", "1")
    monkeypatch.delenv("KERNELBENCH_OFFLINE", raising=False)
    monkeypatch.delenv("KERNELBENCH_CONFIRM_ABOVE", raising=False)
    monkeypatch.setenv("KERNELBENCH_REGISTRY", str(tmp_path / "registry.yaml"))
    monkeypatch.setenv("KERNELBENCH_DOWNLOAD_BACKOFF", "0.01")
    monkeypatch.setenv("KERNELBENCH_DOWNLOAD_ATTEMPTS", "3")
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    return {"cache": cache, "registry": tmp_path / "registry.yaml", "tmp": tmp_path}


def _serve(server, env, sha=ROWS_SHA, body=BODY):
    server.routes["/toy.bz2"] = body
    env["registry"].write_text(registry_text(server.base + "/toy.bz2", sha))
    return env["cache"] / "toy.bz2"


def _files(cache):
    return sorted(p.name for p in cache.iterdir() if p.is_file()) if cache.exists() else []


# ------------------------------------------------------------------ retries

def test_503s_are_retried_until_the_file_comes(server, env):
    final = _serve(server, env)
    server.fail_first = 2                                   # 3 attempts allowed: the third succeeds
    assert fetch("toy", progress=False) == [final]
    assert server.gets() == [None, None, None]
    assert final.read_bytes() == BODY and _files(env["cache"]) == ["toy.bz2"]


def test_503s_beyond_the_attempts_fail_naming_status_and_attempts(server, env):
    _serve(server, env)
    server.fail_first = 100
    with pytest.raises(DataError) as err:
        fetch("toy", progress=False)
    assert "503" in str(err.value) and "tried 3 times" in str(err.value)
    assert len(server.gets()) == 3                          # bounded: KERNELBENCH_DOWNLOAD_ATTEMPTS
    assert _files(env["cache"]) == []


def test_retry_after_is_honoured(server, env):
    _serve(server, env)
    server.fail_first, server.retry_after = 1, 1
    started = time.monotonic()
    fetch("toy", progress=False)
    assert time.monotonic() - started >= 0.95               # the back-off alone would be ~0 s
    assert len(server.gets()) == 2


def test_a_long_retry_after_is_shortened(server, env, monkeypatch):
    from kernelbench.data import download as download_mod

    monkeypatch.setattr(download_mod, "MAX_RETRY_AFTER", 0.2)
    _serve(server, env)
    server.fail_first, server.retry_after = 1, 3600            # an hour: the attempts must stay bounded
    started = time.monotonic()
    fetch("toy", progress=False)
    assert time.monotonic() - started < 5 and len(server.gets()) == 2


def test_connection_drops_mid_body_are_resumed_with_range(server, env):
    final = _serve(server, env)
    server.cut_first = 2                 # each cut response delivers half of what it promised
    fetch("toy", progress=False)
    first = len(BODY) // 2
    second = first + (len(BODY) - first) // 2
    assert server.gets() == [None, f"bytes={first}-", f"bytes={second}-"]
    assert final.read_bytes() == BODY
    assert not (env["cache"] / "toy.bz2.part").exists()


def test_a_server_ignoring_range_gets_the_whole_file_again(server, env):
    final = _serve(server, env)
    server.cut_first, server.ignore_range = 1, True
    fetch("toy", progress=False)
    assert server.gets() == [None, f"bytes={len(BODY) // 2}-"]   # asked to resume, got a 200: from zero
    assert final.read_bytes() == BODY


def test_a_file_changed_on_the_server_during_a_resume_is_fetched_whole_not_spliced(server, env):
    final = _serve(server, env, sha=None)                    # unpinned: a splice would be recorded as trusted
    server.etag, server.cut_first = '"v1"', 1
    server.after_cut = (OTHER_BODY, '"v2"')
    (_, trust), = fetch_checked("toy", progress=False)
    assert [rng for method, _, rng in server.log if method == "GET"] == [None, f"bytes={len(BODY) // 2}-"]
    assert final.read_bytes() == OTHER_BODY                  # If-Range "v1" != "v2": the whole new file
    assert trust.sha256 == hashlib.sha256(OTHER_ROWS).hexdigest()
    assert _files(env["cache"]) == ["toy.bz2"]                # no .part, no .part.json left


def test_interruptions_without_progress_stop_after_the_attempts_and_keep_the_part(server, env):
    _serve(server, env)
    server.cut_first, server.ignore_range = 100, True     # every answer: the first half, never more
    with pytest.raises(DataError) as err:
        fetch("toy", progress=False)
    part = env["cache"] / "toy.bz2.part"
    assert "interrupted 3 times in a row" in str(err.value) and str(part) in str(err.value)
    assert len(server.gets()) == 4                          # one that made progress, 3 that did not
    assert part.read_bytes() == BODY[: len(BODY) // 2]
    assert not (env["cache"] / "toy.bz2").exists()


def test_a_complete_part_answered_416_is_checked_not_downloaded_again(server, env):
    final = _serve(server, env)
    env["cache"].mkdir()
    (env["cache"] / "toy.bz2.part").write_bytes(BODY)      # a download stopped before its check
    fetch("toy", progress=False)
    assert server.gets() == [f"bytes={len(BODY)}-"]
    assert final.read_bytes() == BODY


# ------------------------------------------------------------------ trust on first use

def test_first_download_records_the_hash_and_a_changed_file_is_refused(server, env):
    final = _serve(server, env, sha=None)
    (path, trust), = fetch_checked("toy", progress=False)
    assert path == final and trust.first_use and trust.sha256 == ROWS_SHA
    record = json.loads(trust.record.read_text())
    assert record["sha256"] == ROWS_SHA and record["url"] == server.base + "/toy.bz2"
    assert trust.record.parent == env["cache"] / "recorded-sha256"
    assert "recorded on first use (not pinned)" in trust.describe() and "verified" not in trust.describe()

    (_, again), = fetch_checked("toy", progress=False)      # a later use: checked against the record
    assert not again.first_use and again.sha256 == ROWS_SHA and "not pinned" in again.describe()

    final.write_bytes(OTHER_BODY)                            # the cached file changes
    other_sha = hashlib.sha256(OTHER_ROWS).hexdigest()
    with pytest.raises(DataError) as err:
        fetch("toy", progress=False)
    msg = str(err.value)
    assert str(final) in msg and ROWS_SHA in msg and other_sha in msg
    assert str(trust.record) in msg and "delete" in msg and "kernelbench datasets fetch toy" in msg
    with pytest.raises(DataError, match="Checksum mismatch"):
        load_dataset("toy", test="none", progress=False)


def test_a_new_download_that_differs_from_the_recorded_hash_is_refused(server, env):
    final = _serve(server, env, sha=None)
    fetch("toy", progress=False)
    final.unlink()
    server.routes["/toy.bz2"] = OTHER_BODY                   # the server now holds another file
    with pytest.raises(DataError) as err:
        fetch("toy", progress=False)
    msg = str(err.value)
    assert "Checksum mismatch" in msg and ROWS_SHA in msg and hashlib.sha256(OTHER_ROWS).hexdigest() in msg
    assert "recorded-sha256" in msg and _files(env["cache"]) == []


def test_loading_an_unpinned_file_records_its_hash_while_parsing(server, env):
    _serve(server, env, sha=None)
    ds = load_dataset("toy", test="none", progress=False)
    assert ds.X_train.shape == (3000, 3)
    records = list((env["cache"] / "recorded-sha256").iterdir())
    assert [json.loads(r.read_text())["sha256"] for r in records] == [ROWS_SHA]
    assert "sha256 not pinned for toy" in ds.description and "verified" not in ds.description
    # a later load is checked against the record (from the stamp, without a pass): a changed file is refused
    (env["cache"] / "toy.bz2").write_bytes(OTHER_BODY)
    with pytest.raises(DataError, match="Checksum mismatch"):
        load_dataset("toy", test="none", progress=False)


def test_a_pinned_download_says_verified(server, env):
    _serve(server, env)
    (_, trust), = fetch_checked("toy", progress=False)
    assert trust.describe().startswith("verified") and trust.record is None
    assert not (env["cache"] / "recorded-sha256").exists()


# ------------------------------------------------------------------ confirmation of a large download

def test_a_download_above_the_threshold_is_refused_without_a_confirmation(server, env, monkeypatch):
    _serve(server, env)
    monkeypatch.setenv("KERNELBENCH_CONFIRM_ABOVE", "100")
    spec = get_spec("toy")
    with pytest.raises(DownloadNotConfirmed) as err:
        fetch_file(spec, spec.files["train"], progress=False)            # no confirm: refuse
    msg = str(err.value)
    assert "--yes" in msg and "kernelbench datasets fetch toy" in msg and "Nothing was downloaded" in msg
    assert f"{len(BODY) / 1e3:.1f} kB" in msg
    assert server.gets() == [] and _files(env["cache"]) == []         # only the HEAD was asked

    offers = []
    path = fetch_file(spec, spec.files["train"], progress=False, confirm=lambda o: offers.append(o) or True)
    assert [o.size for o in offers] == [len(BODY)] and path.read_bytes() == BODY


def test_below_the_threshold_nothing_is_asked(server, env, monkeypatch):
    _serve(server, env)
    monkeypatch.setenv("KERNELBENCH_CONFIRM_ABOVE", str(len(BODY)))
    spec = get_spec("toy")

    def never(offer):
        raise AssertionError("asked for a download below the threshold")

    assert fetch_file(spec, spec.files["train"], progress=False, confirm=never).read_bytes() == BODY


def test_a_download_without_announced_size_stops_at_the_threshold(server, env, monkeypatch):
    _serve(server, env)
    server.announce_size, server.head = False, False
    monkeypatch.setenv("KERNELBENCH_CONFIRM_ABOVE", "1000")
    spec = get_spec("toy")
    with pytest.raises(DownloadNotConfirmed) as err:
        fetch_file(spec, spec.files["train"], progress=False)
    part = env["cache"] / "toy.bz2.part"
    assert "did not announce its size" in str(err.value) and str(part) in str(err.value)
    assert part.read_bytes() == BODY[:1001]                  # stopped one byte past the threshold
    # confirmed: the rest comes (resumed or again from the start), and the file is whole
    assert fetch_file(spec, spec.files["train"], progress=False, confirm=lambda o: True).read_bytes() == BODY


@pytest.mark.parametrize("text, size", [("1GB", 10**9), ("500 MB", 5 * 10**8), ("2.5g", 25 * 10**8),
                                        ("100", 100), ("7kB", 7000)])
def test_threshold_sizes(text, size):
    assert parse_size(text) == size


def test_a_bad_threshold_names_the_variable(server, env, monkeypatch):
    _serve(server, env)
    monkeypatch.setenv("KERNELBENCH_CONFIRM_ABOVE", "lots")
    spec = get_spec("toy")
    with pytest.raises(DataError, match=r"KERNELBENCH_CONFIRM_ABOVE is 'lots'.*500MB"):
        fetch_file(spec, spec.files["train"], progress=False)
