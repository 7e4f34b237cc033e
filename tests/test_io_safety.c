/* Tests of loading and saving under failure (issue 18):
 *  1. a refused load (module state dict, optimizer state dict, checkpoint) leaves the model
 *     and the optimizer bit-identical, whatever the reason: a dtype the CPU cannot hold, a
 *     wrong shape, a missing or unexpected key, a truncated or damaged file;
 *  2. a failed save never destroys the previous file: a failing rename or fsync (this
 *     binary's own rename and fsync stand in for the C library's), a full disk (a file-size
 *     limit: the kernel refuses the writes), a read-only directory, paths over 4096 bytes,
 *     names near NAME_MAX, a long path whose cut prefix names another file, a user's file
 *     called "<path>.tmp";
 *  3. names of any length: module names over 512 bytes, CSV cells over 255 bytes, long
 *     option strings are never cut;
 *  4. dictionaries, state dicts and checkpoints of 200 K entries save and load in linear
 *     time. */
#define _XOPEN_SOURCE 700 /* mkdtemp, renameat, fdatasync, setrlimit, SIGXFSZ, fork, setuid */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <signal.h>
#include <dirent.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/resource.h>

/* ---- fault injection: the implementation linked into this binary calls these ---- */
static int fail_rename, fail_fsync;   /* an errno to fail with; 0 passes through */
static int renames_seen, fsyncs_seen;
int rename(const char *from, const char *to) {
    renames_seen++;
    if (fail_rename) { errno = fail_rename; return -1; }
    return renameat(AT_FDCWD, from, AT_FDCWD, to);
}
int fsync(int fd) {
    fsyncs_seen++;
    if (fail_fsync) { errno = fail_fsync; return -1; }
    return fdatasync(fd);
}

/* ---- paths of any length ---- */
static char tmpdir[256];
static char **strs;      /* what cat and rep made, freed by free_strs */
static int nstrs, capstrs;
static char *keep(char *s) {
    if (nstrs == capstrs) { capstrs = capstrs ? 2 * capstrs : 256; strs = (char **)realloc(strs, (size_t)capstrs * sizeof *strs); }
    strs[nstrs++] = s;
    return s;
}
static void free_strs(void) { while (nstrs) free(strs[--nstrs]); }
#define MAXD(a, b) ((a) > (b) ? (a) : (b))
static char *cat(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    char *s = (char *)malloc(la + lb + 1);
    memcpy(s, a, la);
    memcpy(s + la, b, lb + 1);
    return keep(s);
}
static char *rep(const char *unit, int times) {
    size_t l = strlen(unit);
    char *s = (char *)malloc(l * (size_t)times + 1);
    for (int i = 0; i < times; i++) memcpy(s + l * (size_t)i, unit, l);
    s[l * (size_t)times] = 0;
    return keep(s);
}
static const char *in_dir(const char *name) { return cat(cat(tmpdir, "/"), name); }

static char *read_all(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) { *n = 0; return NULL; }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = (char *)malloc((size_t)size + 1);
    *n = fread(buf, 1, (size_t)size, f);
    fclose(f);
    return buf;
}
static void write_all(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (f) { fwrite(data, 1, n, f); fclose(f); }
}
/* whether path holds exactly the n bytes at data */
static bool file_is(const char *path, const char *data, size_t n) {
    size_t m;
    char *b = read_all(path, &m);
    bool same = b && m == n && !memcmp(b, data, n);
    free(b);
    return same;
}
/* entries of tmpdir whose name contains "tmp" (temporaries left behind) */
static int leftovers(void) {
    DIR *d = opendir(tmpdir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strstr(e->d_name, "tmp") != NULL;
    if (d) closedir(d);
    return n;
}
static bool has(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

static tn_dict *small_dict(float v) {
    tn_dict *d = tn_dict_new();
    tn_scope_begin();
    tn_dict_set(d, "w", tn_full(TN_SHAPE(2, 3), v, TN_F32));
    tn_dict_set(d, "b", tn_full(TN_SHAPE(3), -v, TN_F64));
    tn_scope_end();
    return d;
}

/* ==================================================================================== */
/* 1. a refused load changes nothing                                                     */
/* ==================================================================================== */
static tn_module *model(uint64_t seed) {
    tn_manual_seed(seed);
    return tn_nn_sequential(tn_nn_linear(6, 8), tn_nn_batch_norm1d(8), tn_nn_tanh(), tn_nn_linear(8, 3));
}
static tn_optim *adam(tn_module *m) {
    tn_dict *p = tn_module_named_parameters(m);
    tn_optim *o = tn_optim_adam(tn_dict_values(p), tn_dict_len(p), .lr = 0.01);
    tn_dict_free(p);
    return o;
}
static void train(tn_module *m, tn_optim *o, uint64_t seed, int steps) {
    tn_manual_seed(seed);
    tn_scope_begin();
    tn_tensor *x = tn_randn(TN_SHAPE(8, 6), TN_F32), *y = tn_randn(TN_SHAPE(8, 3), TN_F32);
    for (int s = 0; s < steps; s++) {
        tn_optim_zero_grad(o);
        CHECK(tn_backward(tn_mse_loss(tn_module_forward(m, x), y)) == 0);
        CHECK(tn_optim_step(o) == 0);
    }
    tn_scope_end();
}
/* Every byte of the model's state dict and the optimizer's (values, dtypes, shapes, group
   options) as one safetensors image. */
static char *snapshot(tn_module *m, tn_optim *o, size_t *n) {
    tn_dict *all = tn_dict_new(), *ms = tn_module_state_dict(m), *os = o ? tn_optim_state_dict(o) : NULL;
    for (int i = 0; i < tn_dict_len(ms); i++) tn_dict_set(all, cat("model.", tn_dict_key(ms, i)), tn_dict_value(ms, i));
    for (int i = 0; i < tn_dict_len(os); i++) tn_dict_set(all, cat("optim.", tn_dict_key(os, i)), tn_dict_value(os, i));
    for (int i = 0; i < tn_dict_meta_len(os); i++) tn_dict_set_meta(all, tn_dict_meta_key(os, i), tn_dict_get_meta(os, tn_dict_meta_key(os, i)));
    char *s = tn_safetensors_serialize(all, n);
    tn_dict_free(all); tn_dict_free(ms); tn_dict_free(os);
    return s;
}

/* a source checkpoint's dict with one change */
enum { BAD_DTYPE, BAD_SHAPE, MISSING, UNEXPECTED, OPT_DTYPE, OPT_SHAPE, OPT_MISSING, STEP_F16, STEP_HUGE, STEP_NAN, STEP_FRACTION,
       TRUNCATED, DAMAGED, NKINDS };
static const char *const kind_names[NKINDS] = {"a float16 parameter", "a wrong shape", "a missing key", "an unexpected key", "float16 optimizer state",
                                               "optimizer state of a wrong shape", "a missing optimizer option", "a float16 step",
                                               "a step of 1e300", "a NaN step", "a step of 2.5",
                                               "a truncated file", "a damaged header"};
static const uint16_t half_ones[3] = {0x3C00, 0x3C00, 0x3C00};

/* tn_checkpoint_load of a bad file, tn_module_load_state_dict and tn_optim_load_state_dict
   of bad dicts: each refused, and the target bit-identical afterwards. */
TEST(refused_loads_change_nothing) {
    tn_module *src = model(1);
    tn_optim *so = adam(src);
    train(src, so, 7, 3);
    char good[300], bad[300];   /* kept across free_strs */
    snprintf(good, sizeof good, "%s/src.safetensors", tmpdir);
    snprintf(bad, sizeof bad, "%s/bad.safetensors", tmpdir);
    CHECK(tn_checkpoint_save(good, src, so, 3) == 0);
    size_t gn;
    char *gbytes = read_all(good, &gn);
    for (int kind = 0; kind < NKINDS; kind++) {
        if (kind == BAD_DTYPE) continue;   /* a float16 parameter converts now, as PyTorch's copy_ (refused_dtype_message) */
        /* the bad file */
        if (kind == TRUNCATED) write_all(bad, gbytes, gn - 1);
        else if (kind == DAMAGED) {
            char *c = (char *)malloc(gn);
            memcpy(c, gbytes, gn);
            c[8] = '[';   /* the header's JSON is no object */
            write_all(bad, c, gn);
            free(c);
        } else {
            tn_dict *d = tn_safetensors_load(good);
            tn_scope_begin();
            switch (kind) {
            case BAD_DTYPE: tn_dict_set(d, "model.3.bias", tn_from_data(half_ones, TN_SHAPE(3), TN_F16)); break;
            case BAD_SHAPE: tn_dict_set(d, "model.3.bias", tn_zeros(TN_SHAPE(4), TN_F32)); break;
            case MISSING: tn_dict_remove(d, "model.3.bias"); break;
            case UNEXPECTED: tn_dict_set(d, "model.3.extra", tn_zeros(TN_SHAPE(3), TN_F32)); break;
            case OPT_DTYPE: tn_dict_set(d, "optim.state.3.exp_avg", tn_from_data(half_ones, TN_SHAPE(3), TN_F16)); break;
            case OPT_SHAPE: tn_dict_set(d, "optim.state.3.exp_avg_sq", tn_zeros(TN_SHAPE(2), TN_F32)); break;
            case OPT_MISSING: tn_dict_remove(d, "optim.param_groups.0.lr"); break;
            case STEP_F16: tn_dict_set(d, "step", tn_from_data(half_ones, TN_SHAPE(1), TN_F16)); break;
            case STEP_HUGE: tn_dict_set(d, "step", tn_scalar_tensor(1e300, TN_F64)); break;   /* (int64_t)1e300 is undefined */
            case STEP_NAN: tn_dict_set(d, "step", tn_scalar_tensor(NAN, TN_F64)); break;
            case STEP_FRACTION: tn_dict_set(d, "step", tn_scalar_tensor(2.5, TN_F32)); break;
            }
            tn_scope_end();
            CHECK(tn_safetensors_save(bad, d) == 0);
            tn_dict_free(d);
        }
        bool opt_kind = kind == OPT_DTYPE || kind == OPT_SHAPE || kind == OPT_MISSING;
        for (int with_opt = opt_kind; with_opt < 2; with_opt++) {
            tn_module *m = model(2);
            tn_optim *o = adam(m);
            train(m, o, 8, 2);
            size_t n0, n1;
            char *before = snapshot(m, o, &n0);
            tn_clear_error();
            int64_t step = -5;
            int rc = tn_checkpoint_load(bad, m, with_opt ? o : NULL, &step);
            CHECK_MSG(rc != 0 && has(tn_last_error(), "tn_checkpoint_load") && has(tn_last_error(), "bad.safetensors"),
                      "checkpoint with %s (optimizer: %d): rc %d, \"%s\"", kind_names[kind], with_opt, rc, tn_last_error());
            CHECK_MSG(step == -5, "checkpoint with %s: the step was written", kind_names[kind]);
            char *after = snapshot(m, o, &n1);
            CHECK_MSG(before && after && n0 == n1 && !memcmp(before, after, n0), "a refused checkpoint with %s (optimizer: %d) changed the model or the optimizer",
                      kind_names[kind], with_opt);
            free(after);
            /* the same dicts through the public loads */
            tn_dict *d = kind == TRUNCATED || kind == DAMAGED ? NULL : tn_safetensors_load(bad);
            if (d) {
                tn_dict *ms = tn_dict_new(), *os = tn_dict_new();
                for (int i = 0; i < tn_dict_len(d); i++) {
                    const char *k = tn_dict_key(d, i);
                    if (!strncmp(k, "model.", 6)) tn_dict_set(ms, k + 6, tn_dict_value(d, i));
                    if (!strncmp(k, "optim.", 6)) tn_dict_set(os, k + 6, tn_dict_value(d, i));
                }
                tn_clear_error();
                if (kind == BAD_DTYPE || kind == BAD_SHAPE || kind == MISSING || kind == UNEXPECTED) {
                    CHECK_MSG(tn_module_load_state_dict(m, ms, NULL, NULL) != 0 && has(tn_last_error(), "tn_module_load_state_dict"),
                              "module state dict with %s: \"%s\"", kind_names[kind], tn_last_error());
                    if (kind == BAD_DTYPE) CHECK(has(tn_last_error(), "\"3.bias\"") && has(tn_last_error(), "float16"));
                    if (kind == BAD_DTYPE || kind == BAD_SHAPE) CHECK(tn_module_load_state_dict(m, ms, NULL, NULL, .strict = false) != 0);
                }
                if (opt_kind) CHECK_MSG(tn_optim_load_state_dict(o, os) != 0 && has(tn_last_error(), "tn_optim_load_state_dict"),
                                        "optimizer state dict with %s: \"%s\"", kind_names[kind], tn_last_error());
                after = snapshot(m, o, &n1);
                CHECK_MSG(before && after && n0 == n1 && !memcmp(before, after, n0), "a refused state dict with %s changed the model or the optimizer", kind_names[kind]);
                free(after);
                tn_dict_free(ms); tn_dict_free(os); tn_dict_free(d);
            }
            /* and the good checkpoint still loads into it */
            CHECK(tn_checkpoint_load(good, m, o, &step) == 0 && step == 3);
            free(before);
            tn_optim_free(o);
            tn_module_free(m);
            free_strs();
        }
    }
    free(gbytes);
    tn_optim_free(so);
    tn_module_free(src);
}

/* the message names the offending entry, its dtype and the target's */
TEST(refused_dtype_message) {
    tn_module *m = tn_nn_linear(3, 3);
    tn_dict *sd = tn_module_state_dict(m), *bad = tn_dict_new();
    for (int i = 0; i < tn_dict_len(sd); i++) tn_dict_set(bad, tn_dict_key(sd, i), tn_dict_value(sd, i));
    tn_scope_begin();
    tn_dict_set(bad, "bias", tn_from_data(half_ones, TN_SHAPE(3), TN_F16));
    tn_scope_end();
    /* float16 converts into the float32 parameter, as PyTorch's copy_ (it was refused while half was storage only) */
    CHECK(tn_module_load_state_dict(m, bad, NULL, NULL) == 0 && tn_item(tn_select(tn_module_get(m, "bias"), 0, 2)) == 1);
    CHECK(tn_module_get(m, "bias")->dtype == TN_F32);
    /* a state dict of other dtypes converts too */
    tn_scope_begin();
    tn_dict_set(bad, "bias", tn_full(TN_SHAPE(3), 2.5, TN_F64));
    tn_scope_end();
    CHECK(tn_module_load_state_dict(m, bad, NULL, NULL) == 0 && tn_item(tn_select(tn_module_get(m, "bias"), 0, 2)) == 2.5);
    /* loading a module's own state dict (the same storage) */
    CHECK(tn_module_load_state_dict(m, sd, NULL, NULL) == 0);
    tn_dict_free(bad); tn_dict_free(sd);
    tn_module_free(m);
}

/* ==================================================================================== */
/* 2. a failed save leaves the previous file                                             */
/* ==================================================================================== */
/* save d to path with the failure armed by `arm`; the call must fail with `msg` in its
   message, leave path's bytes as they were, and leave no temporary */
static void save_must_fail(int line, const char *what, const char *path, tn_dict *d, const char *msg) {
    size_t n;
    char *old = read_all(path, &n);
    tn_clear_error();
    int rc = tn_safetensors_save(path, d);
    if (rc == 0 || !has(tn_last_error(), msg)) fail_at(line, "%s: save gave %d, \"%s\" (expected \"%s\")", what, rc, tn_last_error(), msg);
    else tn_test_passed++;
    if (old && !file_is(path, old, n)) fail_at(line, "%s: the previous file was changed or removed", what);
    else tn_test_passed++;
    if (leftovers()) fail_at(line, "%s: %d temporaries left behind", what, leftovers());
    else tn_test_passed++;
    free(old);
}

TEST(failed_rename_keeps_the_old_file) {
    const char *path = in_dir("keep.safetensors");
    tn_dict *d1 = small_dict(1), *d2 = small_dict(2);
    renames_seen = 0;
    CHECK(tn_safetensors_save(path, d1) == 0 && renames_seen == 1);   /* this binary's rename is the one called */
    fail_rename = EIO;
    save_must_fail(__LINE__, "rename EIO", path, d2, "cannot rename");
    fail_rename = EXDEV;
    save_must_fail(__LINE__, "rename EXDEV", path, d2, "Invalid cross-device link");
    /* a real failing rename: an empty directory at the target stays (it is never removed) */
    fail_rename = 0;
    const char *dir = in_dir("a_directory");
    CHECK(mkdir(dir, 0755) == 0);
    tn_clear_error();
    CHECK(tn_safetensors_save(dir, d2) != 0 && has(tn_last_error(), "Is a directory"));
    struct stat st;
    CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && leftovers() == 0);
    rmdir(dir);
    /* a checkpoint over an existing one */
    tn_module *m = model(3);
    const char *ck = in_dir("keep_ck.safetensors");
    fail_rename = 0;
    CHECK(tn_checkpoint_save(ck, m, NULL, 1) == 0);
    size_t n;
    char *old = read_all(ck, &n);
    fail_rename = EIO;
    tn_clear_error();
    CHECK(tn_checkpoint_save(ck, m, NULL, 2) != 0 && has(tn_last_error(), "tn_checkpoint_save: cannot rename"));
    fail_rename = 0;
    CHECK(file_is(ck, old, n) && leftovers() == 0);
    free(old);
    /* and it works again once rename does */
    CHECK(tn_safetensors_save(path, d2) == 0);
    tn_dict *back = tn_safetensors_load(path);
    CHECK(back && tn_item(tn_select(tn_dict_get(back, "b"), 0, 0)) == -2);
    tn_dict_free(back);
    tn_module_free(m);
    tn_dict_free(d1); tn_dict_free(d2);
    free_strs();
}

TEST(failed_fsync_keeps_the_old_file) {
    const char *path = in_dir("sync.safetensors");
    tn_dict *d1 = small_dict(1), *d2 = small_dict(2);
    fsyncs_seen = 0;
    CHECK(tn_safetensors_save(path, d1) == 0 && fsyncs_seen == 1);   /* the data is synced before the rename */
    fail_fsync = EIO;
    save_must_fail(__LINE__, "fsync EIO", path, d2, "cannot write");
    fail_fsync = ENOSPC;
    save_must_fail(__LINE__, "fsync ENOSPC", path, d2, "No space left on device");
    fail_fsync = 0;
    tn_dict_free(d1); tn_dict_free(d2);
    free_strs();
}

/* A full disk: a file-size limit makes the kernel refuse the writes (EFBIG) */
TEST(full_disk_keeps_the_old_file) {
    const char *path = in_dir("full.safetensors"), *ck = in_dir("full_ck.safetensors");
    tn_dict *d1 = small_dict(1), *big = tn_dict_new();
    tn_scope_begin();
    tn_dict_set(big, "x", tn_zeros(TN_SHAPE(100000), TN_F32));
    tn_scope_end();
    tn_module *m = model(4);
    CHECK(tn_safetensors_save(path, d1) == 0 && tn_checkpoint_save(ck, m, NULL, 1) == 0);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    const long limits[4] = {0, 6, 300, 4096};   /* in the 8-byte size, the header, the data */
    for (int i = 0; i < 4; i++) {
        lim.rlim_cur = (rlim_t)limits[i];
        CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
        save_must_fail(__LINE__, "a full disk", path, big, "File too large");
        size_t n;
        char *before = read_all(ck, &n);
        if ((long)n <= limits[i]) { free(before); CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0); continue; }   /* the checkpoint fits */
        tn_clear_error();
        CHECK_MSG(tn_checkpoint_save(ck, m, NULL, 2) != 0 && has(tn_last_error(), "tn_checkpoint_save: cannot write"), "limit %ld: %s", limits[i], tn_last_error());
        CHECK(file_is(ck, before, n) && leftovers() == 0);
        free(before);
        CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
    }
    signal(SIGXFSZ, prev);
    tn_dict *back = tn_safetensors_load(path);
    CHECK(back && tn_dict_len(back) == 2);
    tn_dict_free(back);
    tn_module_free(m);
    tn_dict_free(d1); tn_dict_free(big);
    free_strs();
}

/* A read-only directory (as root, which ignores permissions, in a child as nobody) */
TEST(read_only_directory) {
    const char *dir = in_dir("ro"), *path = cat(dir, "/m.safetensors");
    tn_dict *d1 = small_dict(1), *d2 = small_dict(2);
    CHECK(mkdir(dir, 0755) == 0 && chmod(tmpdir, 0755) == 0);
    CHECK(tn_safetensors_save(path, d1) == 0);
    size_t n;
    char *old = read_all(path, &n);
    CHECK(chmod(dir, 0555) == 0);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(77);
        int ok = tn_safetensors_save(path, d2) != 0 && has(tn_last_error(), "cannot create") && has(tn_last_error(), "Permission denied");
        tn_module *m = tn_nn_linear(2, 2);
        ok = ok && tn_checkpoint_save(path, m, NULL, 1) != 0 && has(tn_last_error(), "tn_checkpoint_save: cannot create");
        _exit(ok ? 0 : 1);
    }
    int status = -1;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 77), "the save into a read-only directory: status %d", status);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) printf("read_only_directory: cannot drop root here, skipped\n");
    CHECK(file_is(path, old, n));
    chmod(dir, 0755);
    DIR *dd = opendir(dir);
    int entries = 0;
    for (struct dirent *e; dd && (e = readdir(dd));) entries += e->d_name[0] != '.';
    if (dd) closedir(dd);
    CHECK(entries == 1);
    free(old);
    tn_dict_free(d1); tn_dict_free(d2);
    free_strs();
}

/* A path of more than 4096 bytes (PATH_MAX) that names an existing file: refused, and the
   file stays */
TEST(paths_over_path_max) {
    const char *path = in_dir("long.safetensors"), *longpath = cat(cat(cat(tmpdir, "/"), rep("./", 2100)), "long.safetensors");
    CHECK(strlen(longpath) > 4096);
    tn_dict *d1 = small_dict(1), *d2 = small_dict(2);
    tn_module *m = model(5);
    CHECK(tn_safetensors_save(path, d1) == 0);
    save_must_fail(__LINE__, "a path over PATH_MAX", longpath, d2, "File name too long");
    size_t n;
    char *old = read_all(path, &n);
    tn_clear_error();
    CHECK(tn_checkpoint_save(longpath, m, NULL, 1) != 0 && has(tn_last_error(), "File name too long"));
    CHECK(file_is(path, old, n) && leftovers() == 0);
    CHECK_ERR(tn_safetensors_load(longpath), "File name too long");
    CHECK_ERR(tn_checkpoint_load(longpath, m, NULL, NULL) == 0, "File name too long");
    free(old);
    tn_module_free(m);
    tn_dict_free(d1); tn_dict_free(d2);
    free_strs();
}

/* A name of up to NAME_MAX (255) bytes saves: its temporary cannot be "<name>.tmp" */
TEST(names_near_name_max) {
    tn_dict *d1 = small_dict(1), *d2 = small_dict(2);
    for (int len = 249; len <= 255; len++) {
        const char *path = in_dir(rep("n", len));
        CHECK_MSG(tn_safetensors_save(path, d1) == 0, "a %d-byte name: %s", len, tn_last_error());
        CHECK_MSG(tn_safetensors_save(path, d2) == 0, "a %d-byte name over an existing file: %s", len, tn_last_error());
        tn_dict *back = tn_safetensors_load(path);
        CHECK(back && tn_item(tn_select(tn_dict_get(back, "b"), 0, 0)) == -2);
        tn_dict_free(back);
        fail_rename = EIO;
        save_must_fail(__LINE__, "a long name, failing rename", path, d1, "cannot rename");
        fail_rename = 0;
        tn_module *m = model(6);
        CHECK(tn_checkpoint_save(path, m, NULL, len) == 0);
        int64_t step = 0;
        CHECK(tn_checkpoint_load(path, m, NULL, &step) == 0 && step == len);
        tn_module_free(m);
        CHECK(leftovers() == 0);
        remove(path);
    }
    const char *too_long = in_dir(rep("n", 256));
    save_must_fail(__LINE__, "a 256-byte name", too_long, d1, "File name too long");
    tn_dict_free(d1); tn_dict_free(d2);
    free_strs();
}

/* A checkpoint path longer than the old fixed buffers, whose cut prefix names another file:
   that file is not touched. */
TEST(long_checkpoint_path_spares_other_files) {
    size_t base = strlen(tmpdir) + 1;
    int k = (int)((1099 - base - 10) / 2);
    const char *dir = cat(cat(tmpdir, "/"), rep("./", k));
    const char *victim = cat(dir, rep("v", (int)(1099 - strlen(dir))));
    CHECK(strlen(victim) == 1099);
    const char *path = cat(victim, "_checkpoint.safetensors");
    write_all(victim, "the user's file", 15);
    tn_module *m = model(7);
    CHECK(tn_checkpoint_save(path, m, NULL, 9) == 0);
    CHECK(file_is(victim, "the user's file", 15));
    int64_t step = 0;
    CHECK(tn_checkpoint_load(path, m, NULL, &step) == 0 && step == 9);
    /* and the safetensors writer's own "<path>.tmp": a user's file of that name stays */
    const char *p2 = in_dir("user.safetensors"), *p2tmp = in_dir("user.safetensors.tmp");
    write_all(p2tmp, "mine", 4);
    tn_dict *d = small_dict(3);
    CHECK(tn_safetensors_save(p2, d) == 0 && tn_checkpoint_save(p2, m, NULL, 1) == 0);
    CHECK(file_is(p2tmp, "mine", 4));
    CHECK(tn_checkpoint_load(p2, m, NULL, &step) == 0 && step == 1);
    remove(p2tmp);
    remove(victim);
    tn_dict_free(d);
    tn_module_free(m);
    free_strs();
}

/* ==================================================================================== */
/* 3. names and cells of any length                                                      */
/* ==================================================================================== */
TEST(long_module_names_stay_distinct) {
    const char *n1 = cat(rep("a", 600), "1"), *n2 = cat(rep("a", 600), "2");
    tn_module *md = tn_nn_module_dict(), *md2 = tn_nn_module_dict();
    tn_manual_seed(1);
    tn_module_add(md, n1, tn_nn_linear(2, 2));
    tn_module_add(md, n2, tn_nn_linear(2, 2));
    tn_module_add(md2, n1, tn_nn_linear(2, 2));
    tn_module_add(md2, n2, tn_nn_linear(2, 2));
    tn_dict *sd = tn_module_state_dict(md), *np = tn_module_named_parameters(md);
    CHECK(tn_dict_len(sd) == 4 && tn_dict_len(np) == 4);
    CHECK(tn_dict_get(sd, cat(n1, ".weight")) && strlen(tn_dict_key(sd, 0)) == 601 + 7);
    CHECK(tn_dict_get(np, cat(n2, ".bias")) == tn_module_get(md, cat(n2, ".bias")) && tn_module_get(md, cat(n2, ".bias")));
    tn_optim *o = adam(md);
    const char *path = in_dir("long_names.safetensors");
    CHECK(tn_checkpoint_save(path, md, o, 1) == 0);
    tn_optim *o2 = adam(md2);
    CHECK(tn_checkpoint_load(path, md2, o2, NULL) == 0);
    for (int i = 0; i < tn_dict_len(sd); i++) {
        tn_tensor *a = tn_dict_value(sd, i), *b = tn_module_get(md2, tn_dict_key(sd, i));
        CHECK(b && tn_numel(a) == tn_numel(b) && !memcmp(tn_data_ptr(a), tn_data_ptr(b), (size_t)tn_numel(a) * 4));
    }
    tn_dict *f = tn_safetensors_load(path);
    CHECK(f && tn_dict_contains(f, cat(cat("model.", n1), ".weight")) && tn_dict_contains(f, cat(cat("model.", n2), ".weight")));
    tn_dict_free(f);
    tn_optim_free(o); tn_optim_free(o2);
    tn_dict_free(sd); tn_dict_free(np);
    tn_module_free(md); tn_module_free(md2);
    free_strs();
}

TEST(long_csv_cells) {
    const char *path = in_dir("long.csv");
    const char *big = cat("1", rep("0", 300));   /* 1e300, not 1e254 */
    const char *text = cat(cat(cat(cat(cat("a,b,label\n", big), ",\""), big), "\",1\n2,3,0\n"), "");
    write_all(path, text, strlen(text));
    tn_tensor *y = NULL, *x = tn_read_csv(path, &y, .dtype = TN_F64, .label_column = 2);
    CHECK(x && tn_shape(x)[0] == 2 && tn_shape(x)[1] == 2);
    CHECK(x && ((double *)tn_data_ptr(x))[0] == 1e300 && ((double *)tn_data_ptr(x))[1] == 1e300 && ((double *)tn_data_ptr(x))[3] == 3);
    CHECK(y && ((int64_t *)tn_data_ptr(y))[0] == 1 && ((int64_t *)tn_data_ptr(y))[1] == 0);   /* tensors of the test's scope */
    /* a cell that is not a number, however long, is refused */
    const char *bad = cat(cat("a\n", rep("7", 400)), "x\n");
    write_all(path, bad, strlen(bad));
    CHECK_ERR(tn_read_csv(path, NULL), "cannot parse");
    /* an option string over 512 bytes keeps its last option */
    const char *opts = cat(cat("header=True,", rep(" ", 600)), "dtype=float64");
    write_all(path, "a\n1.5\n", 6);
    x = tn_read_csv_str(path, NULL, opts);
    CHECK(x && tn_get_dtype(x) == TN_F64);
    free_strs();
}

/* tn_to_string's suffixes: a custom function's long name, the sizes of an empty tensor */
static tn_tensor *twice_forward(tn_ctx *ctx, tn_tensor *const *in, int n, void *user) {
    (void)ctx; (void)n; (void)user;
    return tn_mul_scalar(in[0], 2);
}
static int twice_backward(tn_ctx *ctx, tn_tensor *grad, tn_tensor **grad_in, int n, void *user) {
    (void)ctx; (void)n; (void)user;
    grad_in[0] = tn_mul_scalar(grad, 2);
    return 0;
}
TEST(long_print_suffixes) {
    const char *name = cat(rep("Long", 50), "Backward");
    tn_tensor *x = tn_ones(TN_SHAPE(2), TN_F32);
    tn_requires_grad_(x, true);
    tn_tensor *y = tn_custom_op(name, twice_forward, twice_backward, &x, 1, NULL);
    char *s = y ? tn_to_string(y) : NULL;
    CHECK_MSG(s && has(s, cat(cat("grad_fn=<", name), ">)")), "%s", s ? s : tn_last_error());
    tn_string_free(s);
    tn_tensor *e = tn_zeros(TN_SHAPE(0, 1000000000000000000, 1000000000000000000, 1000000000000000000, 1000000000000000000, 1000000000000000000), TN_F64);
    s = e ? tn_to_string(e) : NULL;
    CHECK_MSG(!e || (s && has(s, "size=(0, 1000000000000000000, 1000000000000000000, 1000000000000000000, 1000000000000000000, 1000000000000000000)")),
              "%s", s ? s : tn_last_error());
    tn_string_free(s);
    free_strs();
}

/* ==================================================================================== */
/* 4. linear time                                                                        */
/* ==================================================================================== */
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static const tn_module_type plain_type = {"Plain", NULL, NULL, NULL};
/* a ModuleDict of `children` modules of `per` one-element parameters (into params, when given) */
static tn_module *wide_model_params(int children, int per, tn_tensor **params) {
    tn_module *root = tn_nn_module_dict();
    char name[32];
    tn_scope_begin();
    for (int c = 0; c < children; c++) {
        tn_module *m = tn_module_new(&plain_type, sizeof(tn_module));
        for (int p = 0; p < per; p++) {
            snprintf(name, sizeof name, "p%d", p);
            tn_tensor *t = tn_module_register_parameter(m, name, tn_full(TN_SHAPE(1), c * per + p, TN_F32));
            if (params) params[c * per + p] = t;
        }
        snprintf(name, sizeof name, "c%d", c);
        tn_module_add(root, name, m);
    }
    tn_scope_end();
    return root;
}
static tn_module *wide_model(int children, int per) { return wide_model_params(children, per, NULL); }
/* seconds for tn_checkpoint_load of a model of children * per parameters with an SGD
   optimizer holding a momentum buffer for each (twice the entries) */
static double time_checkpoint_optim(int children, int per) {
    int n = children * per;
    tn_tensor **pa = (tn_tensor **)malloc((size_t)n * sizeof *pa), **pb = (tn_tensor **)malloc((size_t)n * sizeof *pb);
    tn_module *a = wide_model_params(children, per, pa), *b = wide_model_params(children, per, pb);
    tn_optim *oa = tn_optim_sgd(pa, n, .lr = 0.1, .momentum = 0.9), *ob = tn_optim_sgd(pb, n, .lr = 0.1, .momentum = 0.9);
    tn_scope_begin();
    for (int i = 0; i < n; i++) tn_set_grad(pa[i], tn_ones(TN_SHAPE(1), TN_F32));
    tn_scope_end();
    CHECK(tn_optim_step(oa) == 0);
    const char *path = in_dir("wide_opt.safetensors");
    CHECK(tn_checkpoint_save(path, a, oa, 1) == 0);
    double t = now();
    CHECK(tn_checkpoint_load(path, b, ob, NULL) == 0);
    t = now() - t;
    tn_dict *sa = tn_optim_state_dict(oa), *sb = tn_optim_state_dict(ob);
    CHECK(sa && sb && tn_dict_len(sa) == tn_dict_len(sb) && tn_dict_len(sa) > n && tn_item(tn_module_get(b, "c0.p0")) == tn_item(tn_module_get(a, "c0.p0")));
    tn_dict_free(sa); tn_dict_free(sb);
    tn_optim_free(oa); tn_optim_free(ob);
    free(pa); free(pb);
    tn_module_free(a); tn_module_free(b);
    remove(path);
    free_strs();
    return t;
}
/* seconds for tn_checkpoint_load of a model of n entries (and checks that it loaded) */
static double time_checkpoint(int children, int per) {
    tn_module *a = wide_model(children, per), *b = wide_model(children, 0 + per);
    const char *path = in_dir("wide.safetensors");
    CHECK(tn_checkpoint_save(path, a, NULL, 1) == 0);
    tn_no_grad_begin();
    tn_scope_begin();
    tn_tensor *last = tn_module_get(b, "c0.p0");
    tn_fill_(last, -1);
    tn_scope_end();
    tn_no_grad_end();
    double t = now();
    CHECK(tn_checkpoint_load(path, b, NULL, NULL) == 0);
    t = now() - t;
    CHECK(tn_item(tn_module_get(b, "c0.p0")) == 0);
    tn_module_free(a); tn_module_free(b);
    remove(path);
    free_strs();
    return t;
}
TEST(linear_time_loads) {
    /* a quadratic load takes minutes at 200 K: first a small size that would show it */
    double t25 = time_checkpoint(50, 500);
    CHECK_MSG(t25 < 2.0, "a checkpoint of 25 K entries took %.2f s", t25);
    if (t25 >= 2.0) return;
    /* the better of two runs: the machine may be shared */
    double t100 = time_checkpoint(200, 500), t200 = time_checkpoint(400, 500);
    t100 = fmin(t100, time_checkpoint(200, 500));
    t200 = fmin(t200, time_checkpoint(400, 500));
    printf("tn_checkpoint_load: 25 K entries %.3f s, 100 K %.3f s, 200 K %.3f s\n", t25, t100, t200);
    CHECK_MSG(t200 < 10.0, "a checkpoint of 200 K entries took %.2f s", t200);
    CHECK_MSG(t200 < 4 * MAXD(t100, 0.05), "200 K entries took %.3f s, 100 K %.3f s: not linear", t200, t100);
    /* with an optimizer: its state doubles the entries; a load of n parameters and their
       state costs about what a load of 2n parameters does (a quadratic one, 8 times that at
       100 K; the ratio of two sizes tells less, a quadratic term with a small constant) */
    double o25 = time_checkpoint_optim(50, 500);
    CHECK_MSG(o25 < 2.0, "a checkpoint of 25 K parameters with their optimizer state took %.2f s", o25);
    if (o25 >= 2.0) return;
    double o50 = fmin(time_checkpoint_optim(100, 500), time_checkpoint_optim(100, 500));
    double o100 = fmin(time_checkpoint_optim(200, 500), time_checkpoint_optim(200, 500));
    printf("tn_checkpoint_load with SGD momentum: 25 K parameters %.3f s, 50 K %.3f s, 100 K %.3f s\n", o25, o50, o100);
    CHECK_MSG(o100 < 10.0, "100 K parameters and their state took %.3f s (50 K: %.3f s)", o100, o50);
    CHECK_MSG(o100 < 5 * MAXD(t200, 0.05), "100 K parameters and their state (200 K entries) took %.3f s, 200 K parameters alone %.3f s", o100, t200);
    /* a dict: set, get, save and load */
    double ts[2];
    for (int r = 0; r < 2; r++) {
        int n = 100000 << r;
        tn_dict *d = tn_dict_new();
        char name[32];
        tn_scope_begin();
        tn_tensor *v = tn_zeros(TN_SHAPE(1), TN_F32);
        double t = now();
        for (int i = 0; i < n; i++) { snprintf(name, sizeof name, "layer.%d.weight", i); tn_dict_set(d, name, v); }
        int found = 0;
        for (int i = 0; i < n; i++) { snprintf(name, sizeof name, "layer.%d.weight", n - 1 - i); found += tn_dict_get(d, name) == v; }
        tn_scope_end();
        CHECK(found == n && tn_dict_len(d) == n);
        const char *path = in_dir("dict.safetensors");
        CHECK(tn_safetensors_save(path, d) == 0);
        tn_dict *back = tn_safetensors_load(path);
        CHECK(back && tn_dict_len(back) == n && tn_dict_get(back, "layer.7.weight"));
        ts[r] = now() - t;
        tn_dict_free(back); tn_dict_free(d);
        remove(path);
        free_strs();
    }
    printf("tn_dict set + get + save + load: 100 K entries %.3f s, 200 K %.3f s\n", ts[0], ts[1]);
    CHECK_MSG(ts[1] < 10.0 && ts[1] < 4 * MAXD(ts[0], 0.05), "dict of 200 K entries: %.3f s (100 K: %.3f s)", ts[1], ts[0]);
}

/* metadata: many entries, looked up by name */
TEST(many_metadata_entries) {
    tn_dict *d = tn_dict_new();
    char k[32], v[32];
    bool set = true;
    for (int i = 0; i < 50000; i++) { snprintf(k, sizeof k, "k%d", i); snprintf(v, sizeof v, "v%d", i); set = set && tn_dict_set_meta(d, k, v) == 0; }
    CHECK(set);
    CHECK(tn_dict_set_meta(d, "k17", "changed") == 0 && tn_dict_meta_len(d) == 50000);
    CHECK(!strcmp(tn_dict_get_meta(d, "k17"), "changed") && !strcmp(tn_dict_get_meta(d, "k49999"), "v49999") && !tn_dict_get_meta(d, "k50000"));
    size_t n;
    char *bytes = tn_safetensors_serialize(d, &n);
    tn_dict *back = bytes ? tn_safetensors_load_buffer(bytes, n) : NULL;
    CHECK(back && tn_dict_meta_len(back) == 50000 && !strcmp(tn_dict_get_meta(back, "k17"), "changed"));
    /* removal keeps the index right */
    tn_scope_begin();
    for (int i = 0; i < 100; i++) { snprintf(k, sizeof k, "t%d", i); tn_dict_set(d, k, tn_full(TN_SHAPE(1), i, TN_F32)); }
    tn_scope_end();
    for (int i = 0; i < 100; i += 3) { snprintf(k, sizeof k, "t%d", i); CHECK(tn_dict_remove(d, k) == 0); }
    bool ok = tn_dict_len(d) == 66;
    for (int i = 0; i < 100; i++) {
        snprintf(k, sizeof k, "t%d", i);
        tn_tensor *t = tn_dict_get(d, k);
        ok = ok && (i % 3 == 0 ? t == NULL : t && tn_item(t) == i);
    }
    CHECK(ok && tn_dict_remove(d, "t0") == -1);
    free(bytes);
    tn_dict_free(back); tn_dict_free(d);
}

/* each test in a scope of its own: the tensors it makes are released after it */
#define RUN_SCOPED(name) do { tn_scope_begin(); RUN(name); tn_scope_end(); } while (0)
int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tn_io_safety_XXXXXX");
    if (!mkdtemp(tmpdir)) { printf("cannot make a temporary directory\n0 passed, 1 failed\n"); return 1; }
    RUN_SCOPED(refused_loads_change_nothing);
    RUN_SCOPED(refused_dtype_message);
    RUN_SCOPED(failed_rename_keeps_the_old_file);
    RUN_SCOPED(failed_fsync_keeps_the_old_file);
    RUN_SCOPED(full_disk_keeps_the_old_file);
    RUN_SCOPED(read_only_directory);
    RUN_SCOPED(paths_over_path_max);
    RUN_SCOPED(names_near_name_max);
    RUN_SCOPED(long_checkpoint_path_spares_other_files);
    RUN_SCOPED(long_module_names_stay_distinct);
    RUN_SCOPED(long_csv_cells);
    RUN_SCOPED(long_print_suffixes);
    RUN_SCOPED(many_metadata_entries);
    RUN_SCOPED(linear_time_loads);
    fail_rename = fail_fsync = 0;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'", tmpdir, tmpdir);
    if (system(cmd) != 0) printf("could not remove %s\n", tmpdir);
    free_strs();
    return tn_test_report();
}
