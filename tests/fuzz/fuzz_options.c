/* fuzz_options — the option-text entry points ("padding=1, bias=False", PyTorch's keyword
 * syntax as text): layer constructors, tn_optim_create_str, tn_optim_add_param_group_str,
 * tn_lr_scheduler_create_str and tn_loader_new_str.
 *
 * Input: one byte choosing the target (modulo the table's size), then the text. Targets
 * that also take a name ("Adam", "StepLR", "LeakyReLU") read it from the text before its
 * first ';' ("Adam;lr=0.1, amsgrad=True"), so the name is fuzzed too. An accepted option
 * set is then used: a forward pass on a small input (modules), two steps (optimizers,
 * through a closure so that LBFGS runs too), five scheduler steps, one loader epoch. An
 * option the parser accepts but the layer cannot honour (stride=0, groups=0, a huge
 * size) must come back as an error from the constructor or the forward, never as a crash
 * or undefined behaviour.
 *
 * Allocations over 64 MiB fail (NULL, as a full machine would give): the library must
 * turn them into errors.
 *
 * Each text entry point (the `_str` form of a keyword-argument function) is named once, in
 * the FZ_* macros below. */
#undef FUZZ_ASAN_EXTRA
#define FUZZ_ASAN_EXTRA ":max_allocation_size_mb=64"
#include "fuzz_common.h"

#define FZ_CONV1D tn_nn_conv1d_str
#define FZ_CONV2D tn_nn_conv2d_str
#define FZ_CONV_TRANSPOSE2D tn_nn_conv_transpose2d_str
#define FZ_MAX_POOL2D tn_nn_max_pool2d_str
#define FZ_AVG_POOL2D tn_nn_avg_pool2d_str
#define FZ_MAX_POOL1D tn_nn_max_pool1d_str
#define FZ_AVG_POOL1D tn_nn_avg_pool1d_str
#define FZ_BATCH_NORM1D tn_nn_batch_norm1d_str
#define FZ_BATCH_NORM2D tn_nn_batch_norm2d_str
#define FZ_LAYER_NORM tn_nn_layer_norm_str
#define FZ_GROUP_NORM tn_nn_group_norm_str
#define FZ_EMBEDDING tn_nn_embedding_str
#define FZ_ACTIVATION tn_nn_activation_str
#define FZ_RNN tn_nn_rnn_str
#define FZ_LSTM tn_nn_lstm_str
#define FZ_GRU tn_nn_gru_str
#define FZ_RNN_CELL tn_nn_rnn_cell_str
#define FZ_LSTM_CELL tn_nn_lstm_cell_str
#define FZ_GRU_CELL tn_nn_gru_cell_str
#define FZ_MHA tn_nn_multihead_attention_str
#define FZ_ENCODER_LAYER tn_nn_transformer_encoder_layer_str
#define FZ_DECODER_LAYER tn_nn_transformer_decoder_layer_str
#define FZ_OPTIM_CREATE tn_optim_create_str
#define FZ_OPTIM_ADD_GROUP tn_optim_add_param_group_str
#define FZ_SCHEDULER tn_lr_scheduler_create_str
#define FZ_LOADER tn_loader_new_str

/* The text split at its first ';': the name before it (or "" when there is none). */
static const char *fz_split(char *text, const char **name) {
    char *semi = strchr(text, ';');
    if (!semi) { *name = ""; return text; }
    *semi = 0;
    *name = text;
    return semi + 1;
}

static tn_tensor *fz_randn(const int64_t *shape, int nd) { return tn_randn(shape, nd, TN_F32); }

/* module targets: construct, then a forward in training mode and one in eval mode */
typedef tn_module *(*fz_make)(const char *text, const int64_t **shape, int *nd, int *kind);
enum { FZ_PLAIN, FZ_IDS, FZ_RNN_SEQ, FZ_LSTM_SEQ, FZ_CELL, FZ_LSTM_CELLF, FZ_MHA_F, FZ_DECODER_F };
static const int64_t s_img[] = {1, 2, 6, 6}, s_seq1d[] = {1, 2, 8}, s_small_img[] = {1, 2, 4, 4}, s_bn1[] = {4, 3},
                     s_bn2[] = {2, 3, 4, 4}, s_ln[] = {2, 4}, s_gn[] = {2, 4, 3}, s_ids[] = {2, 3}, s_act[] = {2, 3, 4},
                     s_rnn[] = {5, 2, 3}, s_cell[] = {2, 3}, s_tok[] = {3, 2, 4};
#define FZ_SHAPE(s) (*shape = s, *nd = (int)(sizeof s / sizeof s[0]))
static tn_module *m_conv1d(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_seq1d); *k = FZ_PLAIN; return FZ_CONV1D(2, 4, 3, t); }
static tn_module *m_conv2d(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_img); *k = FZ_PLAIN; return FZ_CONV2D(2, 4, 3, t); }
static tn_module *m_convt2d(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_small_img); *k = FZ_PLAIN; return FZ_CONV_TRANSPOSE2D(2, 4, 3, t); }
static tn_module *m_maxpool2d(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_img); *k = FZ_PLAIN; return FZ_MAX_POOL2D(2, t); }
static tn_module *m_avgpool2d(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_img); *k = FZ_PLAIN; return FZ_AVG_POOL2D(2, t); }
static tn_module *m_maxpool1d(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_seq1d); *k = FZ_PLAIN; return FZ_MAX_POOL1D(2, t); }
static tn_module *m_avgpool1d(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_seq1d); *k = FZ_PLAIN; return FZ_AVG_POOL1D(2, t); }
static tn_module *m_bn1d(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_bn1); *k = FZ_PLAIN; return FZ_BATCH_NORM1D(3, t); }
static tn_module *m_bn2d(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_bn2); *k = FZ_PLAIN; return FZ_BATCH_NORM2D(3, t); }
static tn_module *m_ln(const char *t, const int64_t **shape, int *nd, int *k) {
    FZ_SHAPE(s_ln);
    *k = FZ_PLAIN;
    const int64_t ns[1] = {4};
    return FZ_LAYER_NORM(ns, 1, t);
}
static tn_module *m_gn(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_gn); *k = FZ_PLAIN; return FZ_GROUP_NORM(2, 4, t); }
static tn_module *m_emb(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_ids); *k = FZ_IDS; return FZ_EMBEDDING(10, 3, t); }
static tn_module *m_act(const char *t, const int64_t **shape, int *nd, int *k) {
    FZ_SHAPE(s_act);
    *k = FZ_PLAIN;
    char *c = fuzz_cstr((const uint8_t *)t, strlen(t));
    const char *name, *opts = fz_split(c, &name);
    tn_module *m = FZ_ACTIVATION(name, opts);
    free(c);
    return m;
}
/* A layer count the machine can hold but that takes minutes to build (PyTorch's too) is slow,
   not wrong: such texts are skipped. Counts beyond any memory (2^40 layers and up) still
   reach the constructor, which must refuse them at once. The value is read as the option
   parser reads numbers (strtod), at every mention. */
static bool fz_slow_layers(const char *t) {
    for (const char *p = strstr(t, "num_layers"); p; p = strstr(p + 1, "num_layers")) {
        const char *q = p + strlen("num_layers");
        while (*q == ' ' || *q == '=' || *q == '(' || *q == '\'' || *q == '"') q++;
        double v = strtod(q, NULL);
        if (v > 4096 && v < 0x1p40) return true;
    }
    return false;
}
#define FZ_LAYERS_OR_SKIP(t) do { if (fz_slow_layers(t)) { fz_skip = 1; return NULL; } } while (0)
static int fz_skip;
static tn_module *m_rnn(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_rnn); *k = FZ_RNN_SEQ; FZ_LAYERS_OR_SKIP(t); return FZ_RNN(3, 4, t); }
static tn_module *m_lstm(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_rnn); *k = FZ_LSTM_SEQ; FZ_LAYERS_OR_SKIP(t); return FZ_LSTM(3, 4, t); }
static tn_module *m_gru(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_rnn); *k = FZ_RNN_SEQ; FZ_LAYERS_OR_SKIP(t); return FZ_GRU(3, 4, t); }
static tn_module *m_rnn_cell(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_cell); *k = FZ_CELL; return FZ_RNN_CELL(3, 4, t); }
static tn_module *m_lstm_cell(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_cell); *k = FZ_LSTM_CELLF; return FZ_LSTM_CELL(3, 4, t); }
static tn_module *m_gru_cell(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_cell); *k = FZ_CELL; return FZ_GRU_CELL(3, 4, t); }
static tn_module *m_mha(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_tok); *k = FZ_MHA_F; return FZ_MHA(4, 2, t); }
static tn_module *m_enc(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_tok); *k = FZ_PLAIN; return FZ_ENCODER_LAYER(4, 2, t); }
static tn_module *m_dec(const char *t, const int64_t **shape, int *nd, int *k) { FZ_SHAPE(s_tok); *k = FZ_DECODER_F; return FZ_DECODER_LAYER(4, 2, t); }

static void fz_forward(tn_module *m, const int64_t *shape, int nd, int kind) {
    tn_scope_begin();
    tn_tensor *x = kind == FZ_IDS ? tn_randint(0, 10, shape, nd, TN_I64, NULL) : fz_randn(shape, nd), *y = NULL;
    switch (kind) {
    case FZ_RNN_SEQ: y = tn_nn_rnn_forward(m, x, NULL, NULL); break;
    case FZ_LSTM_SEQ: y = tn_nn_lstm_forward(m, x, NULL, NULL, NULL, NULL); break;
    case FZ_CELL: y = tn_nn_rnn_cell_forward(m, x, NULL); break;
    case FZ_LSTM_CELLF: y = tn_nn_lstm_cell_forward(m, x, NULL, NULL, NULL); break;
    case FZ_MHA_F: y = tn_nn_mha_forward(m, x, x, x, NULL); break;
    case FZ_DECODER_F: y = tn_nn_transformer_decoder_layer_forward(m, x, x); break;
    default: y = tn_module_forward(m, x);
    }
    fuzz_verbose("forward", !y);
    if (y) {
        fuzz_touch(y);
        if (tn_dtype_is_floating(tn_get_dtype(y)) && tn_requires_grad(y)) tn_backward(tn_sum(y));
    }
    tn_scope_end();
}

/* optimizer targets: parameters w [2, 3] and b [3] */
typedef struct fz_params { tn_tensor *p[2]; } fz_params;
static fz_params fz_new_params(void) {
    fz_params P;
    tn_manual_seed(3);
    P.p[0] = tn_randn(TN_SHAPE(2, 3), TN_F32);
    P.p[1] = tn_randn(TN_SHAPE(3), TN_F32);
    tn_requires_grad_(P.p[0], true);
    tn_requires_grad_(P.p[1], true);
    return P;
}
typedef struct fz_closure { tn_optim *o; fz_params *P; } fz_closure;
static double fz_loss(void *user) {
    fz_closure *c = (fz_closure *)user;
    tn_optim_zero_grad(c->o);
    tn_scope_begin();
    tn_tensor *l = tn_add(tn_sum(tn_mul(c->P->p[0], c->P->p[0])), tn_sum(c->P->p[1]));
    double v = l && tn_backward(l) == 0 ? tn_item(l) : NAN;
    tn_scope_end();
    return v;
}
static void fz_steps(tn_optim *o, fz_params *P, int n) {
    fz_closure c = {o, P};
    for (int i = 0; i < n; i++) tn_optim_step_closure(o, fz_loss, &c);
}

typedef void (*fz_run)(const char *text);
static void r_optim(const char *text) {
    char *c = fuzz_cstr((const uint8_t *)text, strlen(text));
    const char *kind, *opts = fz_split(c, &kind);
    fz_params P = fz_new_params();
    tn_optim *o = FZ_OPTIM_CREATE(kind, P.p, 2, opts);
    fuzz_verbose("optim_create", !o);
    if (o) {
        fz_steps(o, &P, 2);
        tn_dict *sd = tn_optim_state_dict(o);
        if (sd) tn_optim_load_state_dict(o, sd);
        tn_dict_free(sd);
    }
    tn_optim_free(o);
    tn_release(P.p[0]); tn_release(P.p[1]);
    free(c);
}
static void r_add_group(const char *text) {
    fz_params P = fz_new_params();
    tn_optim *o = FZ_OPTIM_CREATE("SGD", P.p, 1, "lr=0.1, momentum=0.9");
    int rc = o ? FZ_OPTIM_ADD_GROUP(o, P.p + 1, 1, text) : -1;
    fuzz_verbose("optim_add_param_group", rc != 0);
    if (rc == 0) fz_steps(o, &P, 2);
    tn_optim_free(o);
    tn_release(P.p[0]); tn_release(P.p[1]);
}
static void r_scheduler(const char *text) {
    char *c = fuzz_cstr((const uint8_t *)text, strlen(text));
    const char *kind, *opts = fz_split(c, &kind);
    fz_params P = fz_new_params();
    tn_optim *o = FZ_OPTIM_CREATE("SGD", P.p, 2, "lr=0.1, momentum=0.9");
    tn_lr_scheduler *s = o ? FZ_SCHEDULER(o, kind, opts) : NULL;
    fuzz_verbose("lr_scheduler_create", !s);
    for (int i = 0; s && i < 5; i++) {
        fz_steps(o, &P, 1);
        if (!strcmp(kind, "ReduceLROnPlateau")) tn_lr_scheduler_step_metric(s, 1.0);
        else tn_lr_scheduler_step(s);
        tn_lr_scheduler_get_last_lr(s, 0);
    }
    tn_lr_scheduler_free(s);
    tn_optim_free(o);
    tn_release(P.p[0]); tn_release(P.p[1]);
    free(c);
}
static void r_loader(const char *text) {
    tn_scope_begin();
    tn_tensor *xy[2] = {tn_arange(0, 30, 1, TN_F32), tn_arange(0, 10, 1, TN_I64)};
    xy[0] = tn_reshape(xy[0], TN_SHAPE(10, 3));
    tn_dataset *ds = tn_tensor_dataset(xy, 2);
    tn_loader *l = ds ? FZ_LOADER(ds, text) : NULL;
    fuzz_verbose("loader_new", !l);
    if (l) {
        tn_loader_len(l);
        tn_tensor *batch[2];
        for (int i = 0; i < 40; i++) {   /* one epoch (at most 10 samples), and into the next */
            int r = tn_loader_next(l, batch);
            if (r == 1) { fuzz_touch(batch[0]); fuzz_touch(batch[1]); }   /* the scope owns them */
            else if (r == 0 && i > 12) break;
        }
    }
    tn_loader_free(l);
    tn_dataset_free(ds);
    tn_scope_end();
}

typedef struct fz_target { const char *name; fz_make make; fz_run run; } fz_target;
static const fz_target fz_targets[] = {
    {"conv1d", m_conv1d, NULL}, {"conv2d", m_conv2d, NULL}, {"conv_transpose2d", m_convt2d, NULL},
    {"max_pool2d", m_maxpool2d, NULL}, {"avg_pool2d", m_avgpool2d, NULL}, {"max_pool1d", m_maxpool1d, NULL},
    {"avg_pool1d", m_avgpool1d, NULL}, {"batch_norm1d", m_bn1d, NULL}, {"batch_norm2d", m_bn2d, NULL},
    {"layer_norm", m_ln, NULL}, {"group_norm", m_gn, NULL}, {"embedding", m_emb, NULL},
    {"activation", m_act, NULL}, {"rnn", m_rnn, NULL}, {"lstm", m_lstm, NULL}, {"gru", m_gru, NULL},
    {"rnn_cell", m_rnn_cell, NULL}, {"lstm_cell", m_lstm_cell, NULL}, {"gru_cell", m_gru_cell, NULL},
    {"multihead_attention", m_mha, NULL}, {"transformer_encoder_layer", m_enc, NULL},
    {"transformer_decoder_layer", m_dec, NULL},
    {"optim_create", NULL, r_optim}, {"optim_add_param_group", NULL, r_add_group},
    {"lr_scheduler_create", NULL, r_scheduler}, {"loader_new", NULL, r_loader},
};
#define FZ_NTARGETS ((int)(sizeof fz_targets / sizeof fz_targets[0]))

/* The target's index by name (the seed generator writes it as the first byte); -1 if none. */
static inline int fuzz_options_target(const char *name) {
    for (int i = 0; i < FZ_NTARGETS; i++)
        if (!strcmp(fz_targets[i].name, name)) return i;
    return -1;
}

int FUZZ_ENTRY(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const fz_target *t = &fz_targets[data[0] % FZ_NTARGETS];
    char *text = fuzz_cstr(data + 1, size - 1);
    tn_clear_error();
    if (t->run) t->run(text);
    else {
        const int64_t *shape = NULL;
        int nd = 0, kind = FZ_PLAIN;
        fz_skip = 0;
        tn_module *m = t->make(text, &shape, &nd, &kind);
        fuzz_verbose(t->name, !m);
        if (!m && !fz_skip && !tn_last_error()[0]) FUZZ_FINDING("%s(\"%s\") returned NULL without an error message", t->name, text);
        if (m) {
            char *r = tn_module_repr(m);
            tn_string_free(r);
            fz_forward(m, shape, nd, kind);
            tn_module_eval(m);
            fz_forward(m, shape, nd, kind);
        }
        tn_module_free(m);
    }
    free(text);
    return 0;
}
