/* hogwild.c — Hogwild training in C: an MLP whose parameters live in shared memory
 * (tn_share_memory_), trained by several forked processes at once, each with its own
 * optimizer and data order and no locks; the parent then tests the model they shared.
 * PyTorch's mnist_hogwild example, on Fashion-MNIST (bindings/python/examples has the
 * Python version).
 *
 *     ./build/hogwild --processes 2 --epochs 1
 */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "train_util.h"
#include <sys/wait.h>
#include <unistd.h>

/* One process's share of the work: its own seed, shuffle order and optimizer. */
static int train(int rank, tn_module *model, tn_dataset *train_set, int epochs, double lr) {
    tn_manual_seed(1 + (uint64_t)rank);
    tn_set_num_threads(1);                           /* the processes are the parallelism */
    tn_dict *params = tn_module_named_parameters(model);
    tn_optim *opt = tn_optim_sgd(tn_dict_values(params), tn_dict_len(params), .lr = lr, .momentum = 0.5);
    tn_loader *loader = tn_loader_new(train_set, .batch_size = 64, .shuffle = true, .seed = 1 + (uint64_t)rank);
    if (!opt || !loader) { fprintf(stderr, "process %d: %s\n", rank, tn_last_error()); return 1; }
    for (int e = 1; e <= epochs; e++) {
        double loss = tu_train_epoch(model, opt, loader, e, epochs);
        printf("process %d (pid %ld): epoch %d loss %.4f\n", rank, (long)getpid(), e, loss);
        fflush(stdout);
    }
    tn_loader_free(loader);
    tn_optim_free(opt);
    tn_dict_free(params);
    return 0;
}

int main(int argc, char **argv) {
    tu_flag f[] = {{"--data", "data/fashion-mnist", "directory of the Fashion-MNIST IDX files", NULL},
                   {"--processes", "2", "training processes sharing the model", NULL},
                   {"--epochs", "1", "epochs each process trains", NULL},
                   {"--lr", "0.05", "SGD learning rate (momentum 0.5)", NULL},
                   {"--expect", "0", "fail (exit 1) below this test accuracy, 0 to 1", NULL}};
    const int nf = (int)(sizeof f / sizeof f[0]);
    tu_flags(argc, argv, "Hogwild: several processes train one MLP in shared memory on Fashion-MNIST.", f, nf);
    const int nproc = (int)tu_num(f, nf, "--processes"), epochs = (int)tu_num(f, nf, "--epochs");
    const double lr = tu_num(f, nf, "--lr"), expect = tu_num(f, nf, "--expect");
    if (nproc < 1 || nproc > 64) { fprintf(stderr, "--processes: expected 1 to 64, got %d\n", nproc); return 2; }
    const char *dir = tu_str(f, nf, "--data");
    tn_dataset *train_set = tn_mnist_dataset(dir), *test_set = tn_mnist_dataset(dir, .train = false);
    if (!train_set || !test_set) { fprintf(stderr, "%s\n(`make demo` fetches the data)\n", tn_last_error()); return 1; }

    tn_manual_seed(0);
    tn_module *model = tn_nn_sequential(tn_nn_flatten(), tn_nn_linear(784, 128), tn_nn_relu(),
                                        tn_nn_linear(128, 10));
    /* the parameters move into shared memory: every forked process updates these very weights */
    tn_dict *params = tn_module_named_parameters(model);
    for (int i = 0; i < tn_dict_len(params); i++) tn_share_memory_(tn_dict_values(params)[i]);
    tn_dict_free(params);

    fflush(NULL);
    pid_t pids[64];
    for (int r = 0; r < nproc; r++) {
        pids[r] = fork();
        if (pids[r] == 0) _exit(train(r, model, train_set, epochs, lr));
        if (pids[r] < 0) { perror("fork"); return 1; }
    }
    int failed = 0;
    for (int r = 0; r < nproc; r++) {
        int status = 0;
        waitpid(pids[r], &status, 0);
        failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    if (failed) { fprintf(stderr, "a training process failed\n"); return 1; }

    tn_loader *test_loader = tn_loader_new(test_set, .batch_size = 1000);
    const double acc = tu_accuracy(model, test_loader);
    printf("test accuracy %.2f %% after %d processes x %d epoch(s)\n", 100 * acc, nproc, epochs);
    tn_loader_free(test_loader);
    tn_module_free(model);
    tn_dataset_free(train_set);
    tn_dataset_free(test_set);
    return acc >= expect ? 0 : 1;
}
