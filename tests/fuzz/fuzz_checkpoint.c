/* fuzz_checkpoint — tn_checkpoint_load of a file holding the input bytes, into a live
 * model and optimizer.
 *
 * Each input is loaded twice: into the model alone (opt NULL), then into the model and its
 * optimizer. Each load gets a fresh model (fuzz_ckpt_model: Linear, BatchNorm1d, Tanh, Linear) and
 * an optimizer with state (one training step), both deterministic: LBFGS, RMSprop or SGD
 * when the file's param_groups have a key only that kind has (history_size, alpha,
 * nesterov), else Adam. Before the load
 * every parameter (bytes, dtype, shape, requires_grad, .grad, the tensor object itself),
 * every buffer, the optimizer's state dict (state and param_groups), which tensors the
 * optimizer updates, the training flag and the step are snapshotted.
 *   - A failed load must leave all of it unchanged ("a failed load changes nothing"):
 *     otherwise FUZZ FINDING + abort, naming the part that changed.
 *   - A successful load must keep the optimizer updating the model's own parameters (no
 *     parameter object replaced), and a further training step must run cleanly (a state
 *     tensor of the wrong shape would be read out of bounds: ASan). */
#include "fuzz_common.h"

typedef struct ck_snap { fuzz_buf params, grads, buffers, optim, misc; } ck_snap;

static void ck_take(ck_snap *s, tn_module *m, tn_optim *o, int64_t step) {
    memset(s, 0, sizeof *s);
    tn_dict *p = tn_module_named_parameters(m), *b = tn_module_named_buffers(m), *os = tn_optim_state_dict(o);
    if (!p || !b || !os) FUZZ_FINDING("cannot snapshot the model: %s", tn_last_error());
    fuzz_put_dict(&s->params, p);
    for (int i = 0; i < tn_dict_len(p); i++) {
        tn_tensor *t = tn_dict_value(p, i);
        fuzz_put(&s->params, &t, sizeof t);          /* the same tensor object */
        fuzz_put_tensor(&s->grads, tn_grad(t));
    }
    fuzz_put_dict(&s->buffers, b);
    for (int i = 0; i < tn_dict_len(b); i++) { tn_tensor *t = tn_dict_value(b, i); fuzz_put(&s->buffers, &t, sizeof t); }
    fuzz_put_dict(&s->optim, os);
    fuzz_put_i64(&s->optim, tn_optim_num_groups(o));
    fuzz_put_i64(&s->optim, tn_optim_num_params(o));
    for (int i = 0; i < tn_optim_num_params(o); i++) { tn_tensor *t = tn_optim_param(o, i); fuzz_put(&s->optim, &t, sizeof t); }
    fuzz_put_i64(&s->misc, step);
    fuzz_put_i64(&s->misc, m->training);
    tn_dict_free(p); tn_dict_free(b); tn_dict_free(os);
}
static void ck_free(ck_snap *s) { free(s->params.p); free(s->grads.p); free(s->buffers.p); free(s->optim.p); free(s->misc.p); }
static int ck_same(const fuzz_buf *a, const fuzz_buf *b) { return a->n == b->n && (!a->n || !memcmp(a->p, b->p, a->n)); }

/* One load of the file at path into a fresh model, with the optimizer (with_optim) or
   without it (tn_checkpoint_load(path, model, NULL, &step): the model alone). */
static void ck_load(const char *path, int with_optim, const struct fuzz_ckpt_kind *k) {
    tn_module *m = fuzz_ckpt_model(1, 4);
    tn_optim *o = m ? fuzz_ckpt_optim(m, k->kind, k->opts) : NULL;
    if (!m || !o || fuzz_ckpt_train(m, o, 1)) FUZZ_FINDING("cannot build the model and optimizer: %s", tn_last_error());
    int64_t step = 12345;
    ck_snap before, after;
    ck_take(&before, m, o, step);
    tn_clear_error();
    int rc = tn_checkpoint_load(path, m, with_optim ? o : NULL, &step);
    fuzz_verbose(with_optim ? "tn_checkpoint_load (model + optimizer)" : "tn_checkpoint_load (model only)", rc != 0);
    if (rc != 0) {
        if (!tn_last_error()[0]) FUZZ_FINDING("tn_checkpoint_load failed without an error message");
        ck_take(&after, m, o, step);
        const char *what = !ck_same(&before.params, &after.params) ? "the model's parameters"
                         : !ck_same(&before.grads, &after.grads) ? "the parameters' gradients"
                         : !ck_same(&before.buffers, &after.buffers) ? "the model's buffers"
                         : !ck_same(&before.optim, &after.optim) ? "the optimizer's state or param_groups"
                         : !ck_same(&before.misc, &after.misc) ? "the step or the training flag" : NULL;
        if (what) FUZZ_FINDING("a failed tn_checkpoint_load (%s) changed %s (error: %s)", with_optim ? "model + optimizer" : "model only", what, tn_last_error());
        ck_free(&after);
    } else {
        tn_dict *p = tn_module_named_parameters(m);
        if (tn_dict_len(p) != tn_optim_num_params(o)) FUZZ_FINDING("after a load the optimizer has %d parameters, the model %d", tn_optim_num_params(o), tn_dict_len(p));
        for (int i = 0; i < tn_dict_len(p); i++)
            if (tn_optim_param(o, i) != tn_dict_value(p, i)) FUZZ_FINDING("after a load the optimizer no longer updates the model's parameter '%s'", tn_dict_key(p, i));
        tn_dict_free(p);
        fuzz_ckpt_train(m, o, 1);   /* may fail with an error (a NaN loss is fine); must not crash */
    }
    ck_free(&before);
    tn_optim_free(o);
    tn_module_free(m);
}

int FUZZ_ENTRY(const uint8_t *data, size_t size) {
    char path[512];
    fuzz_tmp_path("ck.safetensors", path, sizeof path);
    if (fuzz_write_file(path, data, size)) return 0;
    /* the optimizer the file is for, when it parses and says (else Adam) */
    const struct fuzz_ckpt_kind *k = &fuzz_ckpt_kinds[sizeof fuzz_ckpt_kinds / sizeof fuzz_ckpt_kinds[0] - 1];
    tn_dict *peek = tn_safetensors_load_buffer(data, size);
    for (size_t i = 0; peek && i + 1 < sizeof fuzz_ckpt_kinds / sizeof fuzz_ckpt_kinds[0]; i++)
        if (tn_dict_contains(peek, fuzz_ckpt_kinds[i].marker)) { k = &fuzz_ckpt_kinds[i]; break; }
    tn_dict_free(peek);
    ck_load(path, 0, k);
    ck_load(path, 1, k);
    unlink(path);
    return 0;
}
