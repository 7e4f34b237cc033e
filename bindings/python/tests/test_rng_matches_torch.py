"""manual_seed(s) and then the CPU random functions give PyTorch's numbers (issue 20 item 6).

PyTorch's CPU generator is mt19937 with ATen's transformations; the package's default
generator and ``tensor.Generator()`` are the same stream. Each test seeds both libraries
alike, draws the same way and compares bit for bit (float32 normals of 16 or more too:
normal_fill_16_AVX2's Cephes log and sincos, src/core/rng.c; trunc_normal_'s erfinv is the
one exception, to 1e-6). A draw after each one checks that both streams advanced alike.
Skipped without torch (Debian's python3-torch 1.13).
"""
import math

import numpy as np
import pytest

import tensor as tn

torch = pytest.importorskip("torch")

SEEDS = [0, 1, 42, 2**40 + 7]          # the last one: mt19937 takes the seed's low 32 bits
SIZES = [0, 1, 15, 16, 17, 1000]        # randn: < 16 the cached Box-Muller, >= 16 normal_fill


def _np(x):
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return np.array(x.detach().tolist()).reshape(tuple(x.shape))     # tolist() loses the sizes after a 0


def same(a, b, exact=True, scale=0.1):
    """a: ours, b: torch's."""
    x, y = _np(a), _np(b)
    assert tuple(x.shape) == tuple(y.shape), (x.shape, y.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], (a.dtype, b.dtype)
    if exact:
        np.testing.assert_array_equal(x, y)
    else:   # scale: a normal's |mean| + std (x std + mean cancels near 0: float32 ulps of the scale)
        np.testing.assert_allclose(x.astype(np.float64), y.astype(np.float64), rtol=1e-6, atol=1e-6 * scale)


def seed(s):
    tn.manual_seed(s)
    torch.manual_seed(s)


def in_step():
    """Both default streams are at the same place: the next draws agree."""
    same(tn.rand(5, dtype=tn.float64), torch.rand(5, dtype=torch.float64), exact=True)


def dt(lib, name):
    return getattr(lib, name)


# --------------------------------------------------------------------------- creation functions
@pytest.mark.parametrize("s", SEEDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", ["rand", "randn"])
def test_rand_randn(s, n, dtype, fn):
    seed(s)
    same(getattr(tn, fn)(n, dtype=dt(tn, dtype)), getattr(torch, fn)(n, dtype=dt(torch, dtype)), exact=fn == "rand")
    # a second, odd-sized draw uses (or not) the cached second normal as torch does
    same(getattr(tn, fn)(3, dtype=dt(tn, dtype)), getattr(torch, fn)(3, dtype=dt(torch, dtype)))
    in_step()


@pytest.mark.parametrize("shape", [(), (2, 3), (3, 17), (4, 4), (2, 0, 3)])
def test_rand_randn_shapes(shape):
    seed(7)
    same(tn.randn(shape), torch.randn(shape))
    same(tn.rand(shape), torch.rand(shape), exact=True)
    same(tn.randn(shape, dtype=tn.float64), torch.randn(shape, dtype=torch.float64))
    x, y = tn.empty(3, 5), torch.empty(3, 5)
    same(tn.randn_like(x), torch.randn_like(y))
    same(tn.rand_like(x), torch.rand_like(y), exact=True)
    in_step()


@pytest.mark.parametrize("s", SEEDS[:3])
@pytest.mark.parametrize("low,high", [(0, 10), (-5, 3), (0, 2**32 - 1), (0, 2**32), (-2**40, 2**40), (-2**62, 2**62)])
def test_randint(s, low, high):
    seed(s)
    for n in SIZES:
        same(tn.randint(low, high, (n,)), torch.randint(low, high, (n,)), exact=True)
    same(tn.randint(low, high, (3, 4)), torch.randint(low, high, (3, 4)), exact=True)
    in_step()


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "float64"])
def test_randint_dtypes(dtype):
    seed(3)
    same(tn.randint(0, 200, (50,), dtype=dt(tn, dtype)), torch.randint(0, 200, (50,), dtype=dt(torch, dtype)), exact=True)
    same(tn.randint(7, (20,), dtype=dt(tn, dtype)), torch.randint(7, (20,), dtype=dt(torch, dtype)), exact=True)
    in_step()


@pytest.mark.parametrize("s", SEEDS)
def test_randperm(s):
    seed(s)
    for n in [0, 1, 2, 15, 16, 17, 1000, 5000]:
        same(tn.randperm(n), torch.randperm(n), exact=True)
    same(tn.randperm(30, dtype=tn.int32), torch.randperm(30, dtype=torch.int32), exact=True)
    same(tn.randperm(30, dtype=tn.float64), torch.randperm(30, dtype=torch.float64), exact=True)
    in_step()


@pytest.mark.parametrize("s", SEEDS[:3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_uniform_inplace(s, dtype):
    seed(s)
    for n in SIZES:
        same(tn.empty(n, dtype=dt(tn, dtype)).normal_(2.5, 3.0), torch.empty(n, dtype=dt(torch, dtype)).normal_(2.5, 3.0),
             exact=True)
        same(tn.empty(n, dtype=dt(tn, dtype)).uniform_(-2, 5), torch.empty(n, dtype=dt(torch, dtype)).uniform_(-2, 5),
             exact=True)
    same(tn.empty(4, 5, dtype=dt(tn, dtype)).normal_(), torch.empty(4, 5, dtype=dt(torch, dtype)).normal_())
    same(tn.normal(1.0, 0.5, size=(17,), dtype=dt(tn, dtype)), torch.normal(1.0, 0.5, size=(17,), dtype=dt(torch, dtype)))
    same(tn.normal(0.0, 2.0, size=(3,), dtype=dt(tn, dtype)), torch.normal(0.0, 2.0, size=(3,), dtype=dt(torch, dtype)))
    in_step()


@pytest.mark.parametrize("s", SEEDS[:3])
def test_bernoulli(s):
    g = torch.Generator().manual_seed(99)
    seed(s)
    for n in SIZES:
        # p a number: a uniform double per element (bernoulli_distribution<double>)
        same(tn.empty(n).bernoulli_(0.3), torch.empty(n).bernoulli_(0.3), exact=True)
        same(tn.empty(n, dtype=tn.float64).bernoulli_(0.7), torch.empty(n, dtype=torch.float64).bernoulli_(0.7), exact=True)
        # p a tensor: a uniform float for float32 p, a double for float64 p
        p = torch.rand(n, generator=g)
        same(tn.bernoulli(tn.tensor(p.tolist())), torch.bernoulli(p), exact=True)
        same(tn.bernoulli(tn.tensor(p.tolist(), dtype=tn.float64)), torch.bernoulli(p.double()), exact=True)
    p = torch.rand(4, 6, generator=g)
    same(tn.bernoulli(tn.tensor(p.tolist())), torch.bernoulli(p), exact=True)
    same(tn.empty(4, 6).bernoulli_(tn.tensor(p.tolist())), torch.empty(4, 6).bernoulli_(p), exact=True)
    in_step()


@pytest.mark.parametrize("s", SEEDS[:3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dropout_mask(s, dtype):
    g = torch.Generator().manual_seed(5)
    seed(s)
    for n in SIZES:
        x = torch.randn(n, dtype=dt(torch, dtype), generator=g)
        xt = tn.tensor(x.tolist(), dtype=dt(tn, dtype))
        for p in (0.1, 0.5, 0.9):
            same(tn.nn.functional.dropout(xt, p), torch.nn.functional.dropout(x, p), exact=True)
    x = torch.randn(3, 4, 5, 5, dtype=dt(torch, dtype), generator=g)
    xt = tn.tensor(x.tolist(), dtype=dt(tn, dtype))
    same(tn.nn.Dropout(0.25)(xt), torch.nn.Dropout(0.25)(x), exact=True)
    same(tn.nn.functional.dropout2d(xt, 0.5), torch.nn.functional.dropout2d(x, 0.5), exact=True)
    same(tn.nn.functional.dropout(xt, 0.3, training=False), torch.nn.functional.dropout(x, 0.3, training=False), exact=True)
    in_step()



def bits(a, b):
    """a (ours) and b (torch's) hold the same bits: -0.0 and +0.0 apart, NaNs by payload."""
    x, y = np.ascontiguousarray(a.numpy()), np.ascontiguousarray(b.numpy())
    assert x.dtype == y.dtype and x.shape == y.shape, (x.dtype, y.dtype, x.shape, y.shape)
    u = np.uint32 if x.dtype == np.float32 else np.uint64
    diff = np.nonzero(x.reshape(-1).view(u) != y.reshape(-1).view(u))[0]
    assert diff.size == 0, "%d of %d differ, first at %d: %r, torch %r" % (
        diff.size, x.size, diff[0], x.reshape(-1)[diff[0]], y.reshape(-1)[diff[0]])


@pytest.mark.parametrize("s", [0, 1, 7, 42, 1234, 2**31 + 5, 987654321])
@pytest.mark.parametrize("n", [16, 17, 31, 32, 33, 1000, 10**6])
def test_float32_normal_fill_bits(s, n):
    """float32 normal_ of 16 or more contiguous elements: torch's normal_fill_16_AVX2 (what it
    runs on x86-64 with AVX2 or AVX-512) bit for bit, whatever the mean and std."""
    for mean, std in [(0.0, 1.0), (2.5, 3.0), (-3.0, 0.1), (1e3, 1e-3), (0.0, 1e-30)]:
        seed(s)
        bits(tn.empty(n).normal_(mean, std), torch.empty(n).normal_(mean, std))
    seed(s)
    bits(tn.randn(n), torch.randn(n))
    bits(tn.randn(2, n // 2 + 8), torch.randn(2, n // 2 + 8))
    bits(tn.randn_like(tn.zeros(n)), torch.randn_like(torch.zeros(n)))
    bits(tn.normal(1.5, 0.5, size=(n,)), torch.normal(1.5, 0.5, size=(n,)))
    bits(tn.nn.init.normal_(tn.empty(n), 0.2, 0.02), torch.nn.init.normal_(torch.empty(n), 0.2, 0.02))
    in_step()


@pytest.mark.parametrize("s", [0, 3])
def test_normal_paths_beside_normal_fill(s):
    """What normal_fill_16_AVX2 does not cover stays bit for bit: float64 (normal_fill in double),
    fewer than 16 and non-contiguous (the cached normal_distribution<double>), complex (the
    float32 real view, std / sqrt(2)), 0-size and 0-d."""
    seed(s)
    for n in (0, 1, 15, 16, 17, 100):
        bits(tn.randn(n, dtype=tn.float64), torch.randn(n, dtype=torch.float64))
        bits(tn.randn(n), torch.randn(n))
    bits(tn.randn(()), torch.randn(()))
    bits(tn.empty(40, 3).t().normal_(1.0, 2.0), torch.empty(40, 3).t().normal_(1.0, 2.0))   # 120, non-contiguous
    bits(tn.empty(64, 2)[:, 0].normal_(), torch.empty(64, 2)[:, 0].normal_())
    bits(tn.view_as_real(tn.randn(20, dtype=tn.complex64)), torch.view_as_real(torch.randn(20, dtype=torch.complex64)))
    in_step()

@pytest.mark.parametrize("n", [3, 20])
def test_normal_with_tensor_arguments_and_randint_like(n):
    """torch.normal(mean, std) with tensors: normal_(0, 1) of the output, then * std + mean."""
    m, sd = torch.linspace(-1, 1, n), torch.linspace(0.5, 2, n)
    tm, tsd = tn.tensor(m.tolist()), tn.tensor(sd.tolist())
    seed(1)
    same(tn.normal(tm, tsd), torch.normal(m, sd))
    same(tn.normal(tm, 2.0), torch.normal(m, 2.0))
    same(tn.normal(0.5, tsd), torch.normal(0.5, sd))
    same(tn.randint_like(tn.zeros(n), 0, 7), torch.randint_like(torch.zeros(n), 0, 7), exact=True)
    in_step()


# --------------------------------------------------------------------------- generators
def test_generator_objects():
    for s in SEEDS:
        ga, gb = tn.Generator().manual_seed(s), torch.Generator().manual_seed(s)
        assert ga.initial_seed() == gb.initial_seed() == s
        same(tn.rand(17, generator=ga), torch.rand(17, generator=gb), exact=True)
        same(tn.randn(5, generator=ga), torch.randn(5, generator=gb))
        same(tn.randn(40, dtype=tn.float64, generator=ga), torch.randn(40, dtype=torch.float64, generator=gb))
        same(tn.randint(0, 9, (12,), generator=ga), torch.randint(0, 9, (12,), generator=gb), exact=True)
        same(tn.randperm(20, generator=ga), torch.randperm(20, generator=gb), exact=True)
        same(tn.empty(8).uniform_(generator=ga), torch.empty(8).uniform_(generator=gb), exact=True)
        same(tn.empty(8).normal_(generator=ga), torch.empty(8).normal_(generator=gb))
        same(tn.bernoulli(tn.full((9,), 0.4), generator=ga), torch.bernoulli(torch.full((9,), 0.4), generator=gb), exact=True)
        # a generator's draws leave the default stream where it was
        seed(s + 1)
        tn.rand(3, generator=ga)
        in_step()
    # an unseeded Generator() is torch's: seed 67280421310721
    assert tn.Generator().initial_seed() == torch.Generator().initial_seed()
    same(tn.rand(4, generator=tn.Generator()), torch.rand(4, generator=torch.Generator()), exact=True)


def test_manual_seed_returns_the_default_generator():
    g = tn.manual_seed(11)
    assert g is tn.default_generator and tn.initial_seed() == 11
    torch.manual_seed(11)
    same(g.get_state(), torch.default_generator.get_state(), exact=True)


def test_rng_state_is_torchs_layout():
    for s in SEEDS[:3]:
        seed(s)
        tn.randn(3)        # leaves a cached normal, as torch's
        torch.randn(3)
        a, b = tn.get_rng_state(), torch.get_rng_state()
        assert a.dtype == tn.uint8 and tuple(a.shape) == (5056,)
        same(a, b, exact=True)
        # torch's state loads here (and ours into torch): the same next numbers
        tn.manual_seed(12345)
        tn.set_rng_state(tn.tensor(b.tolist(), dtype=tn.uint8))
        same(tn.rand(7), torch.rand(7), exact=True)
        same(tn.randn(1000), torch.randn(1000))
        tn.randn(3)
        torch.randn(3)
        st = tn.get_rng_state()          # with a cached normal again
        r1 = tn.randn(20)
        tn.set_rng_state(st)
        same(tn.randn(20), r1, exact=True)
        tn.set_rng_state(st)
        torch.set_rng_state(torch.tensor(st.tolist(), dtype=torch.uint8))
        same(tn.randn(5), torch.randn(5), exact=True)
        g = tn.Generator()
        g.set_state(st)
        same(g.get_state(), st, exact=True)


def test_rng_state_errors():
    """torch's exception types and words."""
    for lib in (tn, torch):
        with pytest.raises(RuntimeError, match="CPUGeneratorImplState of size 5056 .*state size to be 100"):
            lib.set_rng_state(lib.zeros(100, dtype=lib.uint8))
        with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
            lib.set_rng_state(lib.zeros(5056))
        with pytest.raises(TypeError, match="expected a torch.ByteTensor, but got list"):
            lib.set_rng_state([1, 2])
    # the legacy 5048-byte layout loads (torch takes it too)
    seed(3)
    tn.rand(5)
    torch.rand(5)
    st = torch.get_rng_state()[:5048].clone()
    tn.set_rng_state(tn.tensor(st.tolist(), dtype=tn.uint8))
    torch.set_rng_state(st)
    same(tn.rand(4), torch.rand(4), exact=True)
    st = torch.get_rng_state()
    st[8:12] = torch.tensor([0, 0, 0, 0], dtype=torch.uint8)       # left = 0: not a state torch writes
    with pytest.raises(RuntimeError, match="invalid mt19937 state"):
        tn.set_rng_state(tn.tensor(st.tolist(), dtype=tn.uint8))


# --------------------------------------------------------------------------- nn.init and layers
INITS = [("uniform_", (-1, 2)), ("normal_", (1, 2)), ("xavier_uniform_", ()), ("xavier_normal_", (0.5,)),
         ("kaiming_uniform_", ()), ("kaiming_uniform_", (math.sqrt(5),)), ("kaiming_normal_", (0, "fan_out")),
         ("trunc_normal_", (0.1, 1.5, -1, 2)), ("trunc_normal_", ()), ("orthogonal_", ()), ("orthogonal_", (2.0,))]


@pytest.mark.parametrize("fn,args", INITS)
@pytest.mark.parametrize("shape", [(5, 3), (3, 7), (4, 2, 3, 3), (16, 1), (40, 30)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_init_functions(fn, args, shape, dtype):
    seed(1)
    a = getattr(tn.nn.init, fn)(tn.empty(*shape, dtype=dt(tn, dtype)), *args)
    b = getattr(torch.nn.init, fn)(torch.empty(*shape, dtype=dt(torch, dtype)), *args)
    if fn == "orthogonal_":   # QR here in float64, LAPACK's in the tensor's dtype there
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4, atol=2e-6)
    else:
        same(a, b, exact=fn != "trunc_normal_")   # erfinv in float math: within 1e-6
    in_step()


def _models(nn):
    return {
        "Linear": lambda: nn.Linear(7, 5),
        "Linear-nobias": lambda: nn.Linear(20, 3, bias=False),
        "Conv1d": lambda: nn.Conv1d(2, 3, 5, bias=False),
        "Conv2d": lambda: nn.Conv2d(3, 8, 3),
        "Conv2d-groups": lambda: nn.Conv2d(4, 8, (3, 2), groups=2),
        "ConvTranspose2d": lambda: nn.ConvTranspose2d(3, 2, 3),
        "Bilinear": lambda: nn.Bilinear(3, 4, 2),
        "Embedding": lambda: nn.Embedding(10, 4),
        "Embedding-pad": lambda: nn.Embedding(10, 20, padding_idx=2),
        "RNN": lambda: nn.RNN(2, 3),
        "GRU": lambda: nn.GRU(4, 3, num_layers=2),
        "LSTM": lambda: nn.LSTM(3, 5, num_layers=2, bidirectional=True),
        "LSTM-batch-first": lambda: nn.LSTM(8, 16, batch_first=True),
        "RNNCell": lambda: nn.RNNCell(3, 4),
        "LSTMCell": lambda: nn.LSTMCell(3, 4),
        "GRUCell": lambda: nn.GRUCell(3, 4, bias=False),
        "LayerNorm": lambda: nn.LayerNorm(4),
        "BatchNorm2d": lambda: nn.BatchNorm2d(3),
        "MultiheadAttention": lambda: nn.MultiheadAttention(8, 2),
        "MultiheadAttention-kv": lambda: nn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True),
        "TransformerEncoderLayer": lambda: nn.TransformerEncoderLayer(8, 2, 16),
        "TransformerDecoderLayer": lambda: nn.TransformerDecoderLayer(8, 2, 16),
        "TransformerEncoder": lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2),
        "Transformer": lambda: nn.Transformer(8, 2, 1, 1, 16),
        "CNN": lambda: nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(36, 10)),
    }


@pytest.mark.parametrize("name", list(_models(torch.nn)))
def test_default_init_of_layers(name):
    for s in (0, 3):
        seed(s)
        ma, mb = _models(tn.nn)[name](), _models(torch.nn)[name]()
        pa, pb = dict(ma.named_parameters()), dict(mb.named_parameters())
        assert list(pa) == list(pb)
        for k in pa:
            same(pa[k].detach(), pb[k].detach(), exact=True)
        in_step()


def test_float64_layers():
    seed(4)
    a, b = tn.nn.Linear(6, 4, dtype=tn.float64), torch.nn.Linear(6, 4, dtype=torch.float64)
    same(a.weight.detach(), b.weight.detach(), exact=True)
    same(a.bias.detach(), b.bias.detach(), exact=True)
    a, b = tn.nn.Embedding(5, 17, dtype=tn.float64), torch.nn.Embedding(5, 17, dtype=torch.float64)
    same(a.weight.detach(), b.weight.detach(), exact=True)
    in_step()


def _train(lib, s):
    """A ported program: seed, build, draw data, train three steps with dropout; its losses."""
    nn = lib.nn
    lib.manual_seed(s)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 4))
    rnn = nn.LSTM(4, 6, batch_first=True)
    opt = lib.optim.SGD(list(model.parameters()) + list(rnn.parameters()), lr=0.1, momentum=0.9)
    x, y = lib.randn(16, 10), lib.randint(0, 4, (16,))
    losses = []
    for _ in range(3):
        opt.zero_grad()
        h = model(x)
        out, _ = rnn(h.reshape(4, 4, 4))
        loss = nn.functional.cross_entropy(h, y) + out.pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("s", [0, 1, 2024])
def test_training_matches_step_by_step(s):
    a, b = _train(tn, s), _train(torch, s)
    assert abs(a[0] - b[0]) <= 1e-5 * max(1.0, abs(b[0])), (a, b)
    np.testing.assert_allclose(a, b, rtol=1e-4)


# --------------------------------------------------------------------------- data
def _loader_order(lib, epochs=2, **kw):
    dl = lib.utils.data.DataLoader(list(range(11)), **kw)
    out = []
    for _ in range(epochs):
        for b in dl:
            out.append([int(v) for v in (b if kw.get("batch_size", 1) is not None else [b])])
    return out


@pytest.mark.parametrize("kw", [dict(shuffle=True, batch_size=3), dict(shuffle=False, batch_size=4),
                                dict(shuffle=True, batch_size=None), dict(shuffle=True, batch_size=2, drop_last=True)])
def test_dataloader_shuffle_order(kw):
    for s in (0, 5):
        seed(s)
        assert _loader_order(tn, **kw) == _loader_order(torch, **kw)
        in_step()        # the iterator's base seed and the sampler's seed were drawn as torch draws them


def test_dataloader_generator_and_samplers():
    for s in (0, 5):
        ga, gb = tn.Generator().manual_seed(s), torch.Generator().manual_seed(s)
        assert _loader_order(tn, shuffle=True, batch_size=2, generator=ga) == \
            _loader_order(torch, shuffle=True, batch_size=2, generator=gb)
        seed(s)
        d = tn.utils.data, torch.utils.data
        a, b = [list(m.RandomSampler(range(10), replacement=True, num_samples=40)) for m in d]
        assert a == b
        a, b = [list(m.RandomSampler(range(7), num_samples=10)) for m in d]
        assert a == b
        a, b = [list(m.SubsetRandomSampler([3, 5, 7, 9])) for m in d]
        assert a == b
        a, b = [[list(p) for p in m.random_split(list(range(10)), [3, 7])] for m in d]
        assert a == b
        in_step()


def test_dataloader_workers_get_torchs_seeds():
    """base_seed + worker id, base_seed drawn as torch draws it (the shuffle follows)."""
    class Seeds:
        def __init__(self, lib):
            self.lib = lib

        def __len__(self):
            return 4

        def __getitem__(self, i):
            return self.lib.utils.data.get_worker_info().seed

    res = []
    for lib in (tn, torch):
        lib.manual_seed(8)
        dl = lib.utils.data.DataLoader(Seeds(lib), batch_size=1, num_workers=2, shuffle=True)
        res.append(sorted(int(v) for b in dl for v in b))
    assert res[0] == res[1]
