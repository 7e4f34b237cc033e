/* train_util.h — what the examples share: command-line flags, a progress bar (loss,
 * samples/s, ETA; one line per epoch when stderr is not a terminal), one epoch of
 * classification training, evaluation. Include after tensor.h. Each function is short:
 * read them as part of the example. */
#ifndef TRAIN_UTIL_H
#define TRAIN_UTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#define TU_ISATTY(f) isatty(fileno(f))
#else
#define TU_ISATTY(f) 0
#endif

/* ---- flags: "--name VALUE" or "--name=VALUE" ----
   tu_flags(argc, argv, about, flags, n) fills each flag's value (its default when absent).
   --help or -h prints the usage and exits 0; an unknown flag (with the nearest known name),
   a flag without its value or a stray argument prints a message and the usage and exits 2. */
typedef struct tu_flag { const char *name, *def, *help; const char *value; } tu_flag;
static inline void tu_usage(FILE *out, const char *prog, const char *about, const tu_flag *f, int n) {
    fprintf(out, "usage: %s [--flag VALUE]...\n%s\n", prog, about);
    for (int i = 0; i < n; i++) fprintf(out, "  %-12s %s%s%s%s\n", f[i].name, f[i].help, f[i].def ? " (default: " : "", f[i].def ? f[i].def : "", f[i].def ? ")" : "");
    fprintf(out, "  %-12s this message\n", "--help");
}
/* edit distance of two short strings, for "did you mean" */
static inline int tu_distance(const char *a, const char *b) {
    int d[64][64], la = (int)strlen(a), lb = (int)strlen(b);
    if (la > 63 || lb > 63) return 99;
    for (int i = 0; i <= la; i++) d[i][0] = i;
    for (int j = 0; j <= lb; j++) d[0][j] = j;
    for (int i = 1; i <= la; i++)
        for (int j = 1; j <= lb; j++) {
            int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]), x = d[i - 1][j] + 1, y = d[i][j - 1] + 1;
            d[i][j] = c < x ? (c < y ? c : y) : (x < y ? x : y);
        }
    return d[la][lb];
}
static inline void tu_flags(int argc, char **argv, const char *about, tu_flag *f, int n) {
    const char *prog = argc > 0 ? argv[0] : "example";
    for (int i = 0; i < n; i++) f[i].value = f[i].def;
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a], *eq = strchr(arg, '=');
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) { tu_usage(stdout, prog, about, f, n); exit(0); }
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        int k = -1, best = 0;
        for (int i = 0; i < n; i++) if (strlen(f[i].name) == len && !strncmp(f[i].name, arg, len)) k = i;
        if (k < 0) {
            for (int i = 1; i < n; i++) if (tu_distance(arg, f[i].name) < tu_distance(arg, f[best].name)) best = i;
            if (strncmp(arg, "--", 2)) fprintf(stderr, "%s: unexpected argument '%s' (flags start with --)\n", prog, arg);
            else if (n && tu_distance(arg, f[best].name) <= 3) fprintf(stderr, "%s: unknown flag '%s'; did you mean %s?\n", prog, arg, f[best].name);
            else fprintf(stderr, "%s: unknown flag '%s'\n", prog, arg);
            tu_usage(stderr, prog, about, f, n);
            exit(2);
        }
        if (eq) f[k].value = eq + 1;
        else if (a + 1 < argc) f[k].value = argv[++a];
        else { fprintf(stderr, "%s: %s needs a value\n", prog, f[k].name); tu_usage(stderr, prog, about, f, n); exit(2); }
    }
}
static inline const char *tu_str(const tu_flag *f, int n, const char *name) {
    for (int i = 0; i < n; i++) if (!strcmp(f[i].name, name)) return f[i].value;
    return NULL;
}
/* A flag's value as a number; a value that is not one is an error (exit 2), not a silent 0. */
static inline double tu_num(const tu_flag *f, int n, const char *name) {
    const char *v = tu_str(f, n, name);
    char *end = NULL;
    double x = v ? strtod(v, &end) : 0;
    if (!v || end == v || *end) { fprintf(stderr, "%s: expected a number, got '%s'\n", name, v ? v : ""); exit(2); }
    return x;
}

/* Where the model and the batches live (--device cuda moves both there, nothing else). */
static tn_device tu_device = TN_CPU;

static inline double tu_now(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* "epoch 2/10 [########------------]  312/938  loss 0.4123  8123 samples/s  ETA 0:12" */
typedef struct tu_progress { int epoch, epochs; int64_t total, samples; double t0, loss_sum; int64_t steps; } tu_progress;
static inline void tu_progress_start(tu_progress *p, int epoch, int epochs, int64_t total) {
    memset(p, 0, sizeof *p);
    p->epoch = epoch; p->epochs = epochs; p->total = total; p->t0 = tu_now();
}
static inline void tu_progress_step(tu_progress *p, int64_t done, int64_t batch_samples, double loss) {
    p->samples += batch_samples; p->loss_sum += loss; p->steps++;
    const bool tty = TU_ISATTY(stderr);                   /* a log file gets one line per epoch */
    if (done != p->total && (done % 20 || !tty)) return;  /* redraw every 20 steps */
    double dt = tu_now() - p->t0, rate = p->samples / (dt > 0 ? dt : 1e-9);
    if (!tty) {
        fprintf(stderr, "epoch %d/%d  loss %.4f  %.0f samples/s  (%.1f s)\n", p->epoch, p->epochs, p->loss_sum / (double)p->steps, rate, dt);
        return;
    }
    double eta = done ? dt * (double)(p->total - done) / (double)done : 0;
    char bar[21];
    int fill = (int)(20 * done / (p->total ? p->total : 1));
    for (int i = 0; i < 20; i++) bar[i] = i < fill ? '#' : '-';
    bar[20] = 0;
    fprintf(stderr, "\repoch %d/%d [%s] %5lld/%lld  loss %.4f  %6.0f samples/s  ETA %d:%02d ", p->epoch, p->epochs, bar,
            (long long)done, (long long)p->total, p->loss_sum / (double)p->steps, rate, (int)eta / 60, (int)eta % 60);
    if (done == p->total) fprintf(stderr, " (%.1f s)\n", dt);
}

/* One epoch: forward, cross-entropy, backward, step over every batch of the loader. */
static inline double tu_train_epoch(tn_module *model, tn_optim *opt, tn_loader *loader, int epoch, int epochs) {
    tu_progress p;
    tu_progress_start(&p, epoch, epochs, tn_loader_len(loader));
    tn_module_train(model);
    tn_tensor *batch[2];
    int64_t step = 0;
    int rc;
    for (;;) {
        tn_scope_begin();                        /* the batch and everything made from it die at the end */
        if ((rc = tn_loader_next(loader, batch)) != 1) { tn_scope_end(); break; }
        tn_tensor *x = tn_to(batch[0], tu_device), *y = tn_to(batch[1], tu_device);
        tn_tensor *loss = tn_cross_entropy(tn_module_forward(model, x), y);
        tn_optim_zero_grad(opt);
        if (!loss || tn_backward(loss) || tn_optim_step(opt)) { fprintf(stderr, "\ntraining failed: %s\n", tn_last_error()); exit(1); }
        tu_progress_step(&p, ++step, tn_size(batch[0], 0), tn_item(loss));
        tn_scope_end();
    }
    if (rc < 0) { fprintf(stderr, "\nloading failed: %s\n", tn_last_error()); exit(1); }
    return p.loss_sum / (double)(p.steps ? p.steps : 1);
}

/* Fraction of the loader's samples whose argmax matches the label (eval mode, no grad). */
static inline double tu_accuracy(tn_module *model, tn_loader *loader) {
    tn_module_eval(model);
    tn_no_grad_begin();
    tn_tensor *batch[2];
    int64_t right = 0, seen = 0;
    for (;;) {
        tn_scope_begin();
        if (tn_loader_next(loader, batch) != 1) { tn_scope_end(); break; }
        tn_tensor *pred = tn_argmax_dim(tn_module_forward(model, tn_to(batch[0], tu_device)), .dim = 1);
        right += (int64_t)tn_item(tn_sum(tn_eq(pred, tn_to(batch[1], tu_device))));
        seen += tn_size(batch[0], 0);
        tn_scope_end();
    }
    tn_no_grad_end();
    tn_module_train(model);
    return seen ? (double)right / (double)seen : 0;
}

/* The flags of a Fashion-MNIST classification job (--data, --epochs, --save, --resume,
   --expect, --device), parsed and checked before the program builds anything, so that a
   bad command line exits (2) with nothing to free. */
typedef struct tu_fashion_job { const char *dir, *save, *resume; int epochs; double expect; tn_device device; } tu_fashion_job;
static inline tu_fashion_job tu_fashion_flags(int argc, char **argv, const char *about, int default_epochs, const char *default_save) {
    char defs[16];
    snprintf(defs, sizeof defs, "%d", default_epochs);
    tu_flag f[] = {{"--data", "data/fashion-mnist", "directory of the Fashion-MNIST IDX files", NULL},
                   {"--epochs", defs, "train until this epoch", NULL},
                   {"--save", default_save, "checkpoint written after each epoch", NULL},
                   {"--resume", NULL, "checkpoint to continue from", NULL},
                   {"--expect", "0", "fail (exit 1) below this test accuracy, 0 to 1", NULL},
                   {"--device", "cpu", "cpu or cuda", NULL}};
    const int nf = (int)(sizeof f / sizeof f[0]);
    tu_flags(argc, argv, about, f, nf);
    tu_fashion_job job = {tu_str(f, nf, "--data"), tu_str(f, nf, "--save"), tu_str(f, nf, "--resume"),
                          (int)tu_num(f, nf, "--epochs"), tu_num(f, nf, "--expect"), TN_CPU};
    const char *device = tu_str(f, nf, "--device");
    if (strcmp(device, "cpu") && strcmp(device, "cuda")) { fprintf(stderr, "--device: expected cpu or cuda, got '%s'\n", device); exit(2); }
    if (!strcmp(device, "cuda")) {
        if (!tn_cuda_is_available()) { fprintf(stderr, "--device cuda: %s\n", tn_cuda_unavailable_reason()); exit(1); }
        job.device = TN_CUDA;
    }
    return job;
}

/* The whole job: loaders, optional resume, epochs with a checkpoint after each (model +
   optimizer + epoch), the test accuracy. Returns 0 when the accuracy reaches job->expect,
   1 on any error (printed). Frees the optimizer and the scheduler on every path. */
static inline int tu_fit_fashion(const tu_fashion_job *job, tn_module *model, tn_optim *opt, tn_lr_scheduler *sched) {
    int rc = 1;
    tn_dataset *train = NULL, *test = NULL;
    tn_loader *train_loader = NULL, *test_loader = NULL;
    int64_t start = 0;
    tu_device = job->device;
    if (!model || !opt) goto fail;
    if (job->device == TN_CUDA && tn_module_to(model, TN_CUDA)) goto fail;     /* the optimizer's tensors move with it */
    train = tn_mnist_dataset(job->dir);
    test = train ? tn_mnist_dataset(job->dir, .train = false) : NULL;
    if (!train || !test) { fprintf(stderr, "%s\n(`make demo` fetches the data into data/fashion-mnist)\n", tn_last_error()); goto done; }
    train_loader = tn_loader_new(train, .batch_size = 64, .shuffle = true, .num_workers = 1, .seed = 0);
    test_loader = tn_loader_new(test, .batch_size = 1000);
    if (!train_loader || !test_loader) goto fail;
    if (job->resume && tn_checkpoint_load(job->resume, model, opt, &start)) goto fail;
    for (int64_t e = 0; sched && e < start; e++) tn_lr_scheduler_step(sched);   /* the schedule resumes where it stopped */
    char *repr = tn_module_repr(model);
    printf("%s\n%lld parameters; epochs %lld to %d\n", repr, (long long)tn_module_num_parameters(model), (long long)start + 1, job->epochs);
    tn_string_free(repr);
    for (int64_t epoch = start; epoch < job->epochs; epoch++) {
        tu_train_epoch(model, opt, train_loader, (int)epoch + 1, job->epochs);
        if (sched) tn_lr_scheduler_step(sched);
        if (job->save && tn_checkpoint_save(job->save, model, opt, epoch + 1)) goto fail;
    }
    const double acc = tu_accuracy(model, test_loader);
    printf("test accuracy %.2f %%%s%s\n", 100 * acc, job->save ? "  checkpoint: " : "", job->save ? job->save : "");
    rc = 0;
    if (acc < job->expect) { fprintf(stderr, "accuracy %.4f is below the expected %.4f\n", acc, job->expect); rc = 1; }
    goto done;
fail:
    fprintf(stderr, "%s\n", tn_last_error());
done:
    tn_lr_scheduler_free(sched);
    tn_optim_free(opt);
    tn_loader_free(train_loader);
    tn_loader_free(test_loader);
    tn_dataset_free(train);
    tn_dataset_free(test);
    return rc;
}
#endif
