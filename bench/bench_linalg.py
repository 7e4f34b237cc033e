"""torch.linalg beside PyTorch in one run (issue 26, item 3): batched solve
(torch.linalg.solve(A [64, 64, 64], B [64, 64, 1])), inv and det of the same batch,
solve_triangular (the batch, and one 1024 x 1024 system with 256 right-hand sides: the blocked
path over the GEMM), matrix_exp (the batch, and one 256 x 256), and qr, eigh, eigvalsh, svd
and svdvals of 512 x 512, and the complex SVD (256 x 256 complex128, 512 x 512 complex64,
svdvals of 512 x 512 complex128 and complex64), and solve (one right-hand side), det, inv and
cholesky of one 256, 512 and 1024 square float64 / float32 (the blocked LU and Cholesky). At 1 and then 2 threads (tensor's and torch's alike; pass the
counts to run others). The two sides alternate rep by rep, so load from elsewhere on the
machine (the 1-minute load average is printed) falls on both.

    make lib/libtensor.so && python3 bench/bench_linalg.py [reps] [threads ...] [-k regex]

Prints one line per case: "<case> [<t> threads] tensor <ms> torch <ms> ratio <tensor/torch>"
(median ms)."""
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings", "python"))
import tensor as tn  # noqa: E402
import torch  # noqa: E402

args = sys.argv[1:]
only = None
if "-k" in args:
    only = args[args.index("-k") + 1]
    del args[args.index("-k"):args.index("-k") + 2]
reps = int(args[0]) if args else 7
threads = [int(t) for t in args[1:]] or [1, 2]


def median_ms(ours, theirs):
    """Median ms of each, the two run alternately."""
    ours()
    theirs()
    a, b = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        ours()
        a.append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        theirs()
        b.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(a), statistics.median(b)


torch.manual_seed(0)
A = torch.randn(64, 64, 64, dtype=torch.float64) + 8 * torch.eye(64, dtype=torch.float64)
B = torch.randn(64, 64, 1, dtype=torch.float64)
a, b = tn.from_numpy(A.numpy()), tn.from_numpy(B.numpy())
cases = [("solve 64 x 64x64 float64", lambda: tn.linalg.solve(a, b), lambda: torch.linalg.solve(A, B)),
         ("solve 64 x 64x64 float32", lambda: tn.linalg.solve(a.float(), b.float()), lambda: torch.linalg.solve(A.float(), B.float())),
         ("inv 64 x 64x64 float64", lambda: tn.linalg.inv(a), lambda: torch.linalg.inv(A)),
         ("det 64 x 64x64 float64", lambda: tn.linalg.det(a), lambda: torch.linalg.det(A))]
a32, b32, A32, B32 = a.float(), b.float(), A.float(), B.float()   # float32 without the conversion in the timing
cases += [("solve 64 x 64x64 float32 (no cast)", lambda: tn.linalg.solve(a32, b32), lambda: torch.linalg.solve(A32, B32)),
          ("inv 64 x 64x64 float32", lambda: tn.linalg.inv(a32), lambda: torch.linalg.inv(A32)),
          ("det 64 x 64x64 float32", lambda: tn.linalg.det(a32), lambda: torch.linalg.det(A32))]
U = torch.randn(1024, 1024, dtype=torch.float64).triu() + 32 * torch.eye(1024, dtype=torch.float64)
UB = torch.randn(1024, 256, dtype=torch.float64)
E = torch.randn(256, 256, dtype=torch.float64) / 16
ta, tu, tub, te = tn.from_numpy(A.triu().numpy()), tn.from_numpy(U.numpy()), tn.from_numpy(UB.numpy()), tn.from_numpy(E.numpy())
At = A.triu()
cases += [("solve_triangular 64 x 64x64 float64", lambda: tn.linalg.solve_triangular(ta, b, upper=True),
           lambda: torch.linalg.solve_triangular(At, B, upper=True)),
          ("solve_triangular 1024x1024, 256 rhs float64", lambda: tn.linalg.solve_triangular(tu, tub, upper=True),
           lambda: torch.linalg.solve_triangular(U, UB, upper=True)),
          ("matrix_exp 64 x 64x64 float64", lambda: tn.linalg.matrix_exp(a), lambda: torch.linalg.matrix_exp(A)),
          ("matrix_exp 256x256 float64", lambda: tn.linalg.matrix_exp(te), lambda: torch.linalg.matrix_exp(E))]
# the decompositions (src/ops/linalg_decomp.c), 512 x 512
S = torch.randn(512, 512, dtype=torch.float64)
Sym = S + S.mT
s, sym = tn.from_numpy(S.numpy()), tn.from_numpy(Sym.numpy())
cases += [("qr 512x512 float64", lambda: tn.linalg.qr(s), lambda: torch.linalg.qr(S)),
          ("eigh 512x512 float64", lambda: tn.linalg.eigh(sym), lambda: torch.linalg.eigh(Sym)),
          ("eigvalsh 512x512 float64", lambda: tn.linalg.eigvalsh(sym), lambda: torch.linalg.eigvalsh(Sym)),
          ("svd 512x512 float64", lambda: tn.linalg.svd(s), lambda: torch.linalg.svd(S)),
          ("svd 512x512 float32", lambda: tn.linalg.svd(s.float()), lambda: torch.linalg.svd(S.float())),
          ("svdvals 512x512 float64", lambda: tn.linalg.svdvals(s), lambda: torch.linalg.svdvals(S))]
# the complex SVD (zgesvd's route: complex Householder to a real bidiagonal)
Z = torch.complex(torch.randn(512, 512, dtype=torch.float64), torch.randn(512, 512, dtype=torch.float64))
Z256, Z64 = Z[:256, :256].contiguous(), Z.to(torch.complex64)
z, z256, z64 = tn.from_numpy(Z.numpy()), tn.from_numpy(Z256.numpy()), tn.from_numpy(Z64.numpy())
cases += [("svd 256x256 complex128", lambda: tn.linalg.svd(z256), lambda: torch.linalg.svd(Z256)),
          ("svd 512x512 complex64", lambda: tn.linalg.svd(z64), lambda: torch.linalg.svd(Z64)),
          ("svdvals 512x512 complex128", lambda: tn.linalg.svdvals(z), lambda: torch.linalg.svdvals(Z)),
          ("svdvals 512x512 complex64", lambda: tn.linalg.svdvals(z64), lambda: torch.linalg.svdvals(Z64))]
# the blocked LU and Cholesky (src/ops/linalg_factor.c: panels of 32 over the GEMM from order 96, 64 from 512):
# solve (one right-hand side), det, inv and cholesky of one n x n, float64 and float32
for n in (256, 512, 1024):
    G = torch.randn(n, n, dtype=torch.float64)
    Spd = G @ G.mT / n + torch.eye(n, dtype=torch.float64)
    Rhs = torch.randn(n, 1, dtype=torch.float64)
    for dt, tdt in (("float64", torch.float64), ("float32", torch.float32)):
        Gd, Sd, Rd = G.to(tdt), Spd.to(tdt), Rhs.to(tdt)
        g, sp, rh = tn.from_numpy(Gd.numpy()), tn.from_numpy(Sd.numpy()), tn.from_numpy(Rd.numpy())
        cases += [(f"solve {n}x{n} {dt}", lambda g=g, rh=rh: tn.linalg.solve(g, rh), lambda Gd=Gd, Rd=Rd: torch.linalg.solve(Gd, Rd)),
                  (f"det {n}x{n} {dt}", lambda g=g: tn.linalg.det(g), lambda Gd=Gd: torch.linalg.det(Gd)),
                  (f"inv {n}x{n} {dt}", lambda g=g: tn.linalg.inv(g), lambda Gd=Gd: torch.linalg.inv(Gd)),
                  (f"cholesky {n}x{n} {dt}", lambda sp=sp: tn.linalg.cholesky(sp), lambda Sd=Sd: torch.linalg.cholesky(Sd))]
for t in threads:
    torch.set_num_threads(t)
    tn.set_num_threads(t)
    print(f"# {t} thread(s); load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs", flush=True)
    for name, ours, theirs in cases:
        if only and not re.search(only, name):
            continue
        t_ours, t_torch = median_ms(ours, theirs)
        print(f"{name} [{t} threads]: tensor {t_ours:.3f} ms torch {t_torch:.3f} ms ratio {t_ours / t_torch:.2f}", flush=True)
