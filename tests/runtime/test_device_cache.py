"""The device facts kept on disk (tinyc/runtime/device_cache.py): keyed by device, driver and
tinyc version; a damaged entry is ignored with a warning, never an error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest

from tinyc import disk_cache
from tinyc.runtime import device_cache
from tinyc.target.device_info import DeviceInfo


@dataclass
class FakeDevice:
    """The properties of a dpctl.SyclDevice the cache reads."""

    name: str = "Some CPU"
    driver_version: str = "1.2.3"
    vendor: str = "Vendor"
    sub_group_sizes: list[int] = field(default_factory=lambda: [16, 8])
    max_work_group_size: int = 4096
    local_mem_size: int = 65536
    is_cpu: bool = True
    native_vector_width_float: int = 8
    backend: object = field(default_factory=lambda: SimpleNamespace(name="opencl"))
    device_type: object = field(default_factory=lambda: SimpleNamespace(name="cpu"))
    parent_device: object = None


class Probe:
    """A probe that counts its calls and answers `answer`."""

    def __init__(self, answer: bool = True) -> None:
        self.calls = 0
        self.answer = answer

    def __call__(self, device: object) -> bool:
        self.calls += 1
        return self.answer


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("TINYC_CACHE_DIR", str(tmp_path))
    device_cache.forget()
    yield tmp_path / "devices"
    device_cache.forget()


def fresh_process_entry(device: FakeDevice, probe: Probe) -> dict:
    """What a new process finds: nothing remembered in memory, only the disk."""
    device_cache.forget()
    return device_cache.entry(device, probe)


def test_the_first_process_probes_and_later_ones_read_the_disk(cache):
    probe = Probe(answer=True)
    first = fresh_process_entry(FakeDevice(), probe)
    assert probe.calls == 1 and first["spirv"] is True
    (stored,) = cache.glob("*.json")
    again = fresh_process_entry(FakeDevice(), Probe())
    assert again == first
    assert json.loads(stored.read_text())["key"]["driver"] == "1.2.3"


def test_limits_and_subgroup_sizes_come_back_as_the_driver_reported_them(cache):
    device = FakeDevice()
    fresh_process_entry(device, Probe())
    limits = fresh_process_entry(FakeDevice(sub_group_sizes=[1], local_mem_size=1), Probe())["limits"]
    assert DeviceInfo.from_limits(limits) == DeviceInfo.from_sycl_device(device)
    assert DeviceInfo.from_limits(limits).subgroup_sizes == (8, 16)


def test_a_negative_answer_is_kept_too(cache):
    fresh_process_entry(FakeDevice(), Probe(answer=False))
    probe = Probe(answer=True)
    assert fresh_process_entry(FakeDevice(), probe)["spirv"] is False
    assert probe.calls == 0


@pytest.mark.parametrize("other", [FakeDevice(name="Another CPU"), FakeDevice(driver_version="1.2.4"),
                                   FakeDevice(vendor="Other vendor"),
                                   FakeDevice(backend=SimpleNamespace(name="level_zero")),
                                   FakeDevice(device_type=SimpleNamespace(name="gpu"))],
                         ids=["device", "driver", "vendor", "backend", "type"])
def test_another_device_or_driver_misses(cache, other):
    fresh_process_entry(FakeDevice(), Probe(answer=True))
    probe = Probe(answer=False)
    assert fresh_process_entry(other, probe)["spirv"] is False
    assert probe.calls == 1
    assert len(list(cache.glob("*.json"))) == 2


def test_another_tinyc_version_misses(cache, monkeypatch):
    fresh_process_entry(FakeDevice(), Probe(answer=True))
    monkeypatch.setattr(disk_cache, "_fingerprint", ["9.9.9+0000"])
    probe = Probe(answer=False)
    assert fresh_process_entry(FakeDevice(), probe)["spirv"] is False
    assert probe.calls == 1


def test_the_version_fingerprint_follows_the_code(tmp_path, monkeypatch):
    """An edited module (same version number) gives another fingerprint, in a new process."""
    code = "from tinyc import disk_cache; print(disk_cache.tinyc_version())"
    package = tmp_path / "copy"
    import shutil

    shutil.copytree(Path(disk_cache.__file__).parent, package / "tinyc",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(package))

    def version() -> str:
        return subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                              check=True).stdout.strip()

    before = version()
    assert version() == before
    std = package / "tinyc" / "std.py"
    std.write_text(std.read_text() + "\n# edited\n")
    after = version()
    assert after != before and after.split("+")[0] == before.split("+")[0]


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe\x00", b"[1, 2]", b"",
                                     b'{"key": {"name": "x"}, "spirv": true}'],
                         ids=["broken-json", "not-utf8", "list", "empty", "other-key"])
def test_a_corrupt_entry_warns_and_is_replaced(cache, content):
    fresh_process_entry(FakeDevice(), Probe(answer=True))
    (stored,) = cache.glob("*.json")
    stored.write_bytes(content)
    probe = Probe(answer=True)
    with pytest.warns(disk_cache.TuningWarning, match="ignoring the cache entry"):
        assert fresh_process_entry(FakeDevice(), probe)["spirv"] is True
    assert probe.calls == 1
    assert json.loads(stored.read_text())["spirv"] is True  # replaced by a good entry


@pytest.mark.parametrize("change", [{"spirv": "yes"}, {"limits": {"subgroup_sizes": [16]}},
                                    {"limits": None}, {"spirv": None}])
def test_a_malformed_entry_warns_and_is_replaced(cache, change):
    fresh_process_entry(FakeDevice(), Probe(answer=True))
    (stored,) = cache.glob("*.json")
    data = json.loads(stored.read_text())
    data.update(change)
    stored.write_text(json.dumps(data))
    probe = Probe(answer=True)
    with pytest.warns(disk_cache.TuningWarning, match="malformed entry"):
        fresh_process_entry(FakeDevice(), probe)
    assert probe.calls == 1


@pytest.mark.filterwarnings("error")
def test_an_unwritable_cache_directory_only_costs_the_probe(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("in the way")
    monkeypatch.setenv("TINYC_CACHE_DIR", str(blocker))
    device_cache.forget()
    probe = Probe(answer=True)
    assert device_cache.entry(FakeDevice(), probe)["spirv"] is True
    device_cache.forget()
    assert device_cache.entry(FakeDevice(), probe)["spirv"] is True
    assert probe.calls == 2


def test_clear_removes_the_entries(cache):
    fresh_process_entry(FakeDevice(), Probe())
    assert device_cache.clear() == 1
    assert not list(cache.glob("*.json"))


def test_the_real_device_is_probed_once_then_read_from_disk(cache, device, monkeypatch):
    from tinyc.runtime import device as devmod

    assert devmod.accepts_spirv(device)
    device_cache.forget()

    def no_probe(device: object) -> bool:
        raise AssertionError("probed although the disk cache holds the answer")

    monkeypatch.setattr(devmod, "_try_probe", no_probe)
    assert devmod.accepts_spirv(device)
    assert devmod.device_info(device) == DeviceInfo.from_sycl_device(device)


@pytest.mark.parametrize("xdg", [None, "", "  ", "/tmp/some-xdg-cache"])
def test_the_default_cache_directory_is_platformdirs_one(monkeypatch, xdg):
    platformdirs = pytest.importorskip("platformdirs")
    monkeypatch.delenv("TINYC_CACHE_DIR", raising=False)
    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert disk_cache.cache_dir() == Path(platformdirs.user_cache_dir("tinyc"))
