/* ddp_fashion.c — data-parallel training over MPI: every rank trains the same model (an
 * MLP, or with --model cnn the CNN of bench/bench_ddp.sh and examples/ddp_fashion.py) on
 * its share of each batch (DistributedSampler's split: rank r takes every world-th sample
 * of one shuffled order), and tn_ddp averages the gradients across ranks during backward,
 * so N processes take the steps one process would take on the whole batch. --workers N
 * loads each rank's batches in N DataLoader worker processes (tn_loader over the rank's
 * share); each epoch reports the time the steps waited on data.
 *
 *     make DIST=mpi build/mpi/ddp_fashion
 *     mpirun -np 2 ./build/mpi/ddp_fashion --epochs 1          (more hosts: mpirun --hostfile)
 * Built without MPI it says so and exits 1. --backend nccl trains on the GPU (CUDA tensors,
 * NCCL's collectives; the GPU unit built with NCCL), one process per GPU, launched with
 * mpirun (the MPI build) or as torchrun launches (env:// rendezvous; LOCAL_RANK picks the GPU):
 *
 *     make cuda && RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 ./build/cuda/ddp_fashion --backend nccl
 * Without CUDA, --backend nccl says so and exits 1.
 */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "train_util.h"

int main(int argc, char **argv) {
    tu_flag f[] = {{"--data", "data/fashion-mnist", "directory of the Fashion-MNIST IDX files", NULL},
                   {"--epochs", "1", "training epochs", NULL},
                   {"--batch", "64", "global batch size (split across the ranks)", NULL},
                   {"--expect", "0", "fail (exit 1) below this test accuracy, 0 to 1", NULL},
                   {"--model", "mlp", "mlp or cnn", NULL},
                   {"--lr", "0.1", "SGD learning rate (momentum 0.9)", NULL},
                   {"--workers", "0", "DataLoader worker processes per rank (0: load in the step's thread)", NULL},
                   {"--threads", "0", "threads per rank (0: the default)", NULL},
                   {"--max-steps", "0", "stop each epoch after this many steps (0: all)", NULL},
                   {"--backend", "mpi", "mpi, gloo (served by MPI) or nccl (CUDA tensors on the GPU)", NULL}};
    const int nf = (int)(sizeof f / sizeof f[0]);
    tu_flags(argc, argv, "Data-parallel MLP training on Fashion-MNIST over MPI (launch with mpirun).", f, nf);
    const int epochs = (int)tu_num(f, nf, "--epochs"), batch = (int)tu_num(f, nf, "--batch");
    const double expect = tu_num(f, nf, "--expect"), lr = tu_num(f, nf, "--lr");
    const int workers = (int)tu_num(f, nf, "--workers"), threads = (int)tu_num(f, nf, "--threads");
    const int64_t max_steps = (int64_t)tu_num(f, nf, "--max-steps");
    const bool cnn = !strcmp(tu_str(f, nf, "--model"), "cnn");
    if (!cnn && strcmp(tu_str(f, nf, "--model"), "mlp")) { fprintf(stderr, "--model is mlp or cnn\n"); return 2; }
    if (threads > 0) tn_set_num_threads(threads);
    const char *backend = tu_str(f, nf, "--backend");
    const bool nccl = !strcmp(backend, "nccl");
    if (!nccl && strcmp(backend, "mpi") && strcmp(backend, "gloo")) { fprintf(stderr, "--backend is mpi, gloo or nccl\n"); return 2; }
    if (nccl && !tn_cuda_is_available()) {
        fprintf(stderr, "--backend nccl needs CUDA (%s): build with make cuda and run on a GPU, or use --backend mpi\n", tn_cuda_unavailable_reason());
        return 1;
    }
    const tn_device dev = nccl ? TN_CUDA : TN_CPU;
    tu_device = dev;   /* tu_accuracy evaluates there */
    if (nccl && getenv("LOCAL_RANK") && tn_cuda_set_device(atoi(getenv("LOCAL_RANK")))) { fprintf(stderr, "%s\n", tn_last_error()); return 1; }
    if (tn_dist_init(backend)) { fprintf(stderr, "%s\n", tn_last_error()); return 1; }
    const int rank = tn_dist_get_rank(NULL), world = tn_dist_get_world_size(NULL);
    if (batch < world || batch % world || batch / world > 1024) { fprintf(stderr, "--batch %d must be a multiple of the %d ranks, at most 1024 per rank\n", batch, world); return 2; }
    tn_dataset *train = tn_mnist_dataset(tu_str(f, nf, "--data")), *test = tn_mnist_dataset(tu_str(f, nf, "--data"), .train = false);
    if (!train || !test) { fprintf(stderr, "%s\n(`make demo` fetches the data)\n", tn_last_error()); return 1; }

    tn_manual_seed((uint64_t)rank);                  /* different on each rank: tn_ddp_new broadcasts rank 0's */
    tn_module *model = cnn ? tn_nn_sequential(tn_nn_conv2d(1, 32, 3, .padding = 1), tn_nn_relu(), tn_nn_max_pool2d(2),
                                              tn_nn_conv2d(32, 64, 3, .padding = 1), tn_nn_relu(), tn_nn_max_pool2d(2),
                                              tn_nn_flatten(), tn_nn_linear(64 * 7 * 7, 128), tn_nn_relu(),
                                              tn_nn_linear(128, 10))
                           : tn_nn_sequential(tn_nn_flatten(), tn_nn_linear(784, 256), tn_nn_relu(),
                                              tn_nn_linear(256, 10));
    if (nccl && tn_module_to(model, dev)) { fprintf(stderr, "%s\n", tn_last_error()); return 1; }
    tn_dict *params = tn_module_named_parameters(model);
    tn_ddp *ddp = tn_ddp_new(tn_dict_values(params), tn_dict_len(params), NULL, .bucket_cap_mb = 25);
    tn_optim *opt = tn_optim_sgd(tn_dict_values(params), tn_dict_len(params), .lr = lr, .momentum = 0.9);
    if (!ddp || !opt) { fprintf(stderr, "%s\n", tn_last_error()); return 1; }

    /* every rank draws the same order (same seed); rank r takes positions r, r + world, ... */
    const int64_t n = tn_dataset_len(train), local = batch / world;
    tn_manual_seed(42);
    tn_tensor *xs[1024], *ys[1024];
    for (int e = 1; e <= epochs; e++) {
        tn_scope_begin();
        tn_tensor *order = tn_randperm(n, TN_I64, NULL);
        const int64_t *idx = (const int64_t *)tn_data_ptr(order);
        double t0 = tu_now(), loss_sum = 0, wait = 0;
        int64_t steps = 0;
        tn_module_train(model);
        /* with workers: a loader over this rank's share, in order (batch k = its k-th local batch) */
        tn_dataset *share = NULL;
        tn_loader *loader = NULL;
        if (workers > 0) {
            int64_t *mine = (int64_t *)malloc((size_t)(n / world + 1) * sizeof *mine), m = 0;
            for (int64_t start = 0; start + batch <= n; start += batch)
                for (int64_t k = 0; k < local; k++) mine[m++] = idx[start + k * world + rank];
            share = tn_subset(train, mine, m);
            free(mine);
            loader = share ? tn_loader_new(share, .batch_size = local, .num_workers = workers) : NULL;
            if (!loader) { fprintf(stderr, "%s\n", tn_last_error()); return 1; }
        }
        for (int64_t start = 0; start + batch <= n && (!max_steps || steps < max_steps); start += batch) {
            tn_scope_begin();
            double tw = tu_now();
            tn_tensor *x, *y;
            if (loader) {
                tn_tensor *b[2];
                if (tn_loader_next(loader, b) != 1) { fprintf(stderr, "rank %d: %s\n", rank, tn_last_error()); return 1; }
                x = b[0];
                y = b[1];
            } else {
                for (int64_t k = 0; k < local; k++) {
                    tn_tensor *sample[2];
                    if (tn_dataset_get(train, idx[start + k * world + rank], sample)) { fprintf(stderr, "%s\n", tn_last_error()); return 1; }
                    xs[k] = sample[0];
                    ys[k] = sample[1];
                }
                x = tn_stack(xs, (int)local);
                y = tn_stack(ys, (int)local);
            }
            if (nccl) { x = tn_to(x, dev); y = tn_to(y, dev); }
            wait += tu_now() - tw;
            tn_tensor *loss = tn_cross_entropy(tn_module_forward(model, x), y);
            tn_optim_zero_grad(opt);
            if (!loss || tn_backward(loss) || tn_optim_step(opt)) { fprintf(stderr, "rank %d: %s\n", rank, tn_last_error()); return 1; }
            loss_sum += tn_item(loss);
            steps++;
            tn_scope_end();
        }
        tn_loader_free(loader);
        tn_dataset_free(share);
        const double elapsed = tu_now() - t0;
        tn_tensor *mean = tn_to(tn_scalar_tensor(loss_sum / (double)steps, TN_F64), dev);
        tn_dist_all_reduce(mean, TN_DIST_AVG, NULL);
        if (rank == 0) printf("epoch %d/%d  loss %.4f  %lld steps in %.2f s (%.0f samples/s) over %d ranks; waited %.3f s on data\n",
                              e, epochs, tn_item(mean), (long long)steps, elapsed, (double)(steps * batch) / elapsed, world, wait);
        fflush(stdout);
        tn_scope_end();
    }
    tn_loader *test_loader = tn_loader_new(test, .batch_size = 1000);
    const double acc = tu_accuracy(model, test_loader);
    if (rank == 0) printf("test accuracy %.2f %% (rank 0's model; every rank holds the same)\n", 100 * acc);
    tn_loader_free(test_loader);
    tn_ddp_free(ddp);
    tn_optim_free(opt);
    tn_dict_free(params);
    tn_module_free(model);
    tn_dataset_free(train);
    tn_dataset_free(test);
    tn_dist_destroy();
    return acc >= expect ? 0 : 1;
}
