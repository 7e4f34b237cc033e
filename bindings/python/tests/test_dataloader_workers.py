"""DataLoader worker processes against torch's DataLoader (PyTorch 1.13, the oracle; those
tests skip without it): the same batches in the same order for a deterministic dataset
(shuffled by a generator or by the default one, prefetch factors, drop_last, persistent
workers over several epochs), the same worker seeds and what the workers draw from
tensor, random and NumPy after seeding, worker_init_fn and get_worker_info; batch tensors
come back in shared memory and their data never goes through the pickle; a worker's
exception is re-raised with its traceback as torch's; a killed worker is an error.

Run:  make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_dataloader_workers.py
"""
import os
import random
import signal
import socket
import time
from multiprocessing.reduction import recvfds

import pytest

import tensor as tn
from tensor.multiprocessing.reductions import loads_with_fds
from tensor.utils.data import _worker

data = tn.utils.data

try:
    import numpy
except ImportError:
    numpy = None


@pytest.fixture
def T():
    return pytest.importorskip("torch")


class Probe:
    """Sample i of a deterministic dataset, built by `lib` (tensor or torch), with what the
    worker that loaded it knows and draws after seeding."""

    def __init__(self, lib, n, kill_at=None, raise_at=None):
        self.lib, self.n, self.kill_at, self.raise_at = lib, n, kill_at, raise_at
        self.tag = None

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        lib = self.lib
        info = lib.utils.data.get_worker_info()
        if info is not None and i == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        if i == self.raise_at:
            return 1 / 0
        s = {"i": lib.tensor(i), "x": lib.arange(3, dtype=lib.float64) * i + 0.5,
             "id": -1 if info is None else info.id, "seed": -1 if info is None else info.seed,
             "workers": -1 if info is None else info.num_workers, "pid": os.getpid()}
        if self.tag is not None:
            s["tag"] = self.tag
        return s


def _init_draws(worker_id):
    """worker_init_fn: records what the worker draws right after seeding, in its copy of the
    dataset (get_worker_info().dataset), as torch's docs suggest for sharding."""
    info = tn.utils.data.get_worker_info()
    if info is None:
        import torch
        info = torch.utils.data.get_worker_info()
    lib = info.dataset.lib
    info.dataset.tag = (worker_id, info.seed, lib.initial_seed(), lib.rand(3).tolist(), random.random(),
                        None if numpy is None else numpy.random.randint(0, 2 ** 31, 3).tolist())


def _plain(batch):
    """A batch as plain values: tensors as (dtype, values)."""
    if isinstance(batch, dict):
        return {k: _plain(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return [_plain(v) for v in batch]
    if hasattr(batch, "tolist"):
        return (str(batch.dtype).replace("torch.", "").replace("tensor.", ""), batch.tolist())
    return batch


def _epochs(lib, loader, epochs):
    out = []
    for _ in range(epochs):
        out.append([_plain({k: v for k, v in b.items() if k != "pid"}) for b in loader])
    return out


def _loader(lib, ds, seed=None, **kw):
    g = None
    if seed is not None:
        g = lib.Generator()
        g.manual_seed(seed)
    return lib.utils.data.DataLoader(ds, generator=g, **kw)


CONFIGS = [
    dict(batch_size=4, shuffle=True, num_workers=2, seed=3),
    dict(batch_size=3, shuffle=True, num_workers=3, prefetch_factor=1, seed=11, drop_last=True),
    dict(batch_size=5, num_workers=2, prefetch_factor=4),
    dict(batch_size=None, shuffle=True, num_workers=2, seed=5),
    dict(batch_size=4, shuffle=True, num_workers=2, seed=3, persistent_workers=True),
    dict(batch_size=2, shuffle=True, num_workers=3, persistent_workers=True),      # the default generator
    dict(batch_size=4, shuffle=True, num_workers=2),
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_same_batches_and_seeds_as_torch(T, cfg):
    got = {}
    for lib in (tn, T):
        lib.manual_seed(1234)
        ds = Probe(lib, 19)
        dl = _loader(lib, ds, worker_init_fn=_init_draws, **cfg)
        got[lib] = _epochs(lib, dl, 3)
        got[lib].append(lib.rand(2).tolist())   # the default generator after three epochs
    ours, ref = got[tn], got[T]
    assert len(ours[0]) == len(ref[0]) and ours[0]
    for e in range(3):
        assert ours[e] == ref[e], f"epoch {e}"
    assert ours[3] == pytest.approx(ref[3], abs=0)


def test_worker_info_and_draws_as_torch(T):
    """The seeds, initial_seed(), the first tensor, random and NumPy draws in each worker."""
    got = {}
    for lib in (tn, T):
        lib.manual_seed(99)
        ds = Probe(lib, 12)
        got[lib] = [b["tag"] for b in lib.utils.data.DataLoader(ds, batch_size=2, num_workers=3, worker_init_fn=_init_draws,
                                                                 collate_fn=lambda b: b[0])]
    assert [t[0] for t in got[tn]] == [0, 1, 2, 0, 1, 2]
    for ours, ref in zip(got[tn], got[T]):
        assert ours[:3] == ref[:3]                      # worker id, info.seed, initial_seed()
        assert ours[3] == pytest.approx(ref[3], abs=0)  # tensor.rand(3) after the worker's seeding
        assert ours[4] == ref[4] and ours[5] == ref[5]  # random and NumPy, seeded as torch seeds them
    assert data.get_worker_info() is None


def test_batches_travel_as_shared_memory():
    ds = data.TensorDataset(tn.arange(4000.0).reshape(1000, 4), tn.arange(1000))
    seen = []
    for x, y in data.DataLoader(ds, batch_size=250, num_workers=2):
        assert x.is_shared() and y.is_shared()
        seen.append(y[0].item())
    assert seen == [0, 250, 500, 750]
    # what a worker puts on the queue: a few hundred bytes for a 4 MB batch, its storage's
    # descriptor sent ahead on the worker's socket; the same values once the loader unpickles it
    big = tn.rand(1000, 1000)

    class Q:
        def put(self, item):
            self.item = item

    q = Q()
    mine, theirs = socket.socketpair()
    with mine, theirs:
        _worker._put(q, (7, {"x": big, "n": 3, "v": big[1:, ::2]}), 0, theirs)
        wid, nfds, payload = q.item
        assert wid == 0 and nfds == 2 and len(payload) < 2000
        idx, batch = loads_with_fds(payload, recvfds(mine, nfds))
    assert idx == 7 and batch["n"] == 3 and tn.equal(batch["x"], big) and batch["x"].is_shared()
    assert tn.equal(batch["v"], big[1:, ::2]) and batch["v"].stride() == big[1:, ::2].stride()
    big[0, 2] = -5.0                                     # the same pages, not a copy
    assert batch["x"][0, 2].item() == -5.0 and batch["v"].storage_offset() == 1000


class ManyTensors(data.Dataset):
    """Batches of 300 tensors each: more descriptors than one message carries (253)."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return [tn.full((2,), float(i * 1000 + k)) for k in range(300)]


def test_batch_of_more_tensors_than_one_message_carries():
    for batch in data.DataLoader(ManyTensors(), batch_size=2, num_workers=2):
        assert len(batch) == 300
    got = [[b[k][:, 0].tolist() for k in (0, 252, 253, 299)] for b in data.DataLoader(ManyTensors(), batch_size=2,
                                                                                       num_workers=2)]
    assert got == [[[k, 1000 + k] for k in (0, 252, 253, 299)], [[2000 + k, 3000 + k] for k in (0, 252, 253, 299)]]


def test_persistent_workers_keep_their_processes():
    ds = Probe(tn, 8)
    pids = lambda dl: [sorted({p for b in dl for p in b["pid"].tolist()}) for _ in range(2)]  # noqa: E731
    keep = pids(data.DataLoader(ds, batch_size=2, num_workers=2, persistent_workers=True))
    assert len(keep[0]) == 2 and keep[0] == keep[1] and os.getpid() not in keep[0]
    fresh = pids(data.DataLoader(ds, batch_size=2, num_workers=2))
    assert len(fresh[0]) == 2 and not set(fresh[0]) & set(fresh[1])


def test_worker_exception_as_torch(T):
    msgs = {}
    for lib in (tn, T):
        with pytest.raises(ZeroDivisionError) as e:
            list(lib.utils.data.DataLoader(Probe(lib, 8, raise_at=5), batch_size=2, num_workers=2))
        msgs[lib] = str(e.value)
    for m in msgs.values():
        assert m.startswith("Caught ZeroDivisionError in DataLoader worker process 0.\nOriginal Traceback (most recent call last):")
        assert "return 1 / 0" in m and m.rstrip().endswith("ZeroDivisionError: division by zero")


def test_killed_worker_is_an_error():
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(data.DataLoader(Probe(tn, 8, kill_at=5), batch_size=2, num_workers=2, timeout=30))


def test_worker_killed_before_its_batch_is_read():
    # Worker 0 sends batch 0, then dies on batch 2 before we read batch 0: the batch's
    # tensors are handed over by the dead worker, so reading it fails; that is its death.
    it = iter(data.DataLoader(Probe(tn, 8, kill_at=4), batch_size=2, num_workers=2, timeout=30))
    time.sleep(2.0)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(it)


@pytest.mark.parametrize("ctx", ["spawn", "forkserver"])
def test_other_start_methods_get_their_socket(ctx):
    # the descriptors' socket reaches a worker that was not forked (pickled with its arguments)
    ds = data.TensorDataset(tn.arange(40.0).reshape(10, 4), tn.arange(10))
    got = [(x[:, 0].tolist(), y.tolist()) for x, y in data.DataLoader(ds, batch_size=3, num_workers=2,
                                                                      multiprocessing_context=ctx)]
    assert got == [([0.0, 4.0, 8.0], [0, 1, 2]), ([12.0, 16.0, 20.0], [3, 4, 5]), ([24.0, 28.0, 32.0], [6, 7, 8]),
                   ([36.0], [9])]
