"""Run by tests/test_dist.sh under mpirun (mpirun -np N python3 dist_worker.py, with
TENSOR_LIB=lib/libtensor_mpi.so): tensor.distributed's collectives on every rank against
what the rank computes alone, groups, async work, errors, DistributedSampler. Prints
"dist_worker: rank R ok" when every check passed (the script checks the count)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensor as torch  # noqa: E402
import tensor.distributed as dist  # noqa: E402
from tensor.utils.data.distributed import DistributedSampler  # noqa: E402


def ddp_matches_one_process(r, w):
    """DDP on w ranks with a quarter of each global batch each == one process on the whole
    batch (BatchNorm's buffers from rank 0 too); no_sync accumulation == both batches."""
    nn = torch.nn

    def make(seed):
        torch.manual_seed(seed)
        return nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3)).double()

    model = torch.nn.parallel.DistributedDataParallel(make(10 + r), bucket_cap_mb=1e-4)
    ref = make(10)
    for a, b in zip(model.parameters(), ref.parameters()):
        assert torch.equal(a, b), "DDP broadcasts rank 0's parameters"
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ropt = torch.optim.SGD(ref.parameters(), lr=0.1)
    torch.manual_seed(3)
    for step in range(3):
        X, Y = torch.randn(4 * w, 5, dtype=torch.float64), torch.randn(4 * w, 3, dtype=torch.float64)
        X2, Y2 = torch.randn(4 * w, 5, dtype=torch.float64), torch.randn(4 * w, 3, dtype=torch.float64)
        opt.zero_grad()
        ropt.zero_grad()
        if step == 2:
            with model.no_sync():
                torch.nn.functional.mse_loss(model(X2[4 * r:4 * r + 4]), Y2[4 * r:4 * r + 4]).backward()
            torch.nn.functional.mse_loss(ref(X2), Y2).backward()
        torch.nn.functional.mse_loss(model(X[4 * r:4 * r + 4]), Y[4 * r:4 * r + 4]).backward()
        torch.nn.functional.mse_loss(ref(X), Y).backward()
        for a, b in zip(model.parameters(), ref.parameters()):
            assert torch.allclose(a.grad, b.grad, rtol=1e-10, atol=1e-12), (step, a.grad, b.grad)
        opt.step()
        ropt.step()
    for a, b in zip(model.parameters(), ref.parameters()):
        assert torch.allclose(a, b, rtol=1e-10, atol=1e-12)
    bn = torch.nn.parallel.DistributedDataParallel(nn.BatchNorm1d(3))
    bn.module.running_mean.fill_(float(r))
    bn(torch.randn(4, 3))                               # the forward first syncs rank 0's buffers
    assert bn.module.running_mean.abs().max().item() < 1.0
    del model, bn


def main():
    assert dist.is_available() and not dist.is_initialized()
    dist.init_process_group("gloo")
    r, w = dist.get_rank(), dist.get_world_size()
    assert dist.is_initialized() and dist.get_backend() == "gloo" and 0 <= r < w
    total = w * (w + 1) // 2
    for dtype in (torch.float32, torch.float64, torch.int32, torch.int64, torch.uint8):
        t = torch.full((3, 2), r + 1, dtype=dtype)
        dist.all_reduce(t)
        assert t.dtype == dtype and t.eq(total).all(), (dtype, t)
        t = torch.full((2,), r + 1, dtype=dtype)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        assert t.eq(w).all()
    t = torch.full((2,), float(r + 1))
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert t.sub(total / w).abs().max().item() < 1e-6
    x = torch.arange(12.0).reshape(3, 4).mul(r + 1)
    v = x.t()[1:3]                                 # a strided view, reduced in place
    dist.all_reduce(v)
    assert torch.equal(v, torch.arange(12.0).reshape(3, 4).t()[1:3] * total) and x[0, 0].item() == 0
    b = torch.full((4,), 7.0 if r == w - 1 else 0.0)
    dist.broadcast(b, src=w - 1)
    assert b.eq(7).all()
    outs = [torch.zeros(2) for _ in range(w)]
    dist.all_gather(outs, torch.full((2,), float(r)))
    assert [o[0].item() for o in outs] == list(range(w))
    flat = torch.zeros(w * 2)
    dist.all_gather_into_tensor(flat, torch.full((2,), float(r)))
    assert flat.tolist() == [float(i) for i in range(w) for _ in range(2)]
    g = [torch.zeros(1) for _ in range(w)] if r == 0 else None
    dist.gather(torch.full((1,), r * 2.0), g, dst=0)
    assert r != 0 or [x.item() for x in g] == [2.0 * i for i in range(w)]
    s = torch.zeros(1)
    dist.scatter(s, [torch.full((1,), 10.0 + i) for i in range(w)] if r == 0 else None, src=0)
    assert s.item() == 10 + r
    out = torch.zeros(2, dtype=torch.int64)
    dist.reduce_scatter(out, [torch.full((2,), (r + 1) * (i + 1), dtype=torch.int64) for i in range(w)])
    assert out.eq((r + 1) * total).all()
    red = torch.full((1,), 1.0)
    dist.reduce(red, dst=0)
    assert r != 0 or red.item() == w
    work = dist.all_reduce(torch.ones(5), async_op=True)
    assert work.wait() and work.is_completed()
    if w > 1:
        req = dist.isend(torch.full((3,), float(r)), dst=(r + 1) % w)
        got = torch.zeros(3)
        assert dist.recv(got) == (r - 1) % w and got.eq((r - 1) % w).all()
        req.wait()
    sub = dist.new_group([0, w - 1])
    t = torch.ones(1)
    if r in (0, w - 1):
        dist.all_reduce(t, group=sub)
        assert t.item() == (2 if w > 1 else 1) and dist.get_world_size(sub) == (2 if w > 1 else 1)
    else:
        try:
            dist.all_reduce(t, group=sub)
            raise AssertionError("a non-member's collective must fail")
        except RuntimeError as e:
            assert "not a member of the group" in str(e)
    try:
        dist.all_reduce(torch.ones(1, dtype=torch.int64), op=dist.ReduceOp.AVG)
        raise AssertionError("AVG of integers must fail")
    except RuntimeError as e:
        assert "AVG needs a floating-point tensor" in str(e)
    # DistributedSampler: the ranks' indices partition the (padded) dataset, shuffled by epoch
    data = list(range(10))
    seen = []
    for epoch in (0, 1):
        sampler = DistributedSampler(data, shuffle=True, seed=3)
        sampler.set_epoch(epoch)
        mine = torch.tensor(list(sampler))
        assert len(mine) == len(sampler) == -(-10 // w)
        everyone = [torch.zeros(len(mine), dtype=torch.int64) for _ in range(w)]
        dist.all_gather(everyone, mine)
        allidx = sorted(i for e in everyone for i in e.tolist())
        assert set(allidx) == set(data) and len(allidx) == len(mine) * w
        seen.append(everyone[0].tolist())
    assert w == 1 or seen[0] != seen[1] or len(seen[0]) < 3
    ddp_matches_one_process(r, w)
    dist.barrier()
    dist.destroy_process_group()
    sys.stdout.write(f"dist_worker: rank {r} ok\n")   # one write: lines of several ranks do not interleave
    sys.stdout.flush()


if __name__ == "__main__":
    main()
