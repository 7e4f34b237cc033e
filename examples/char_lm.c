/* char_lm.c — a character-level language model: embedding -> 2-layer LSTM -> linear,
 * trained on a text file (by default the fortune cookies of Debian's fortunes-min, fetched
 * by `make char-lm`), then it writes new text one character at a time.
 *
 *     make char-lm                                        (fetch, build, train, sample)
 *     ./build/char_lm --text some.txt --steps 2000 --save lm.safetensors
 *     ./build/char_lm --text some.txt --resume lm.safetensors --steps 0 --prompt "The "
 */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "train_util.h"

enum { SEQ = 64, BATCH = 32, EMBED = 32, HIDDEN = 128 };

typedef struct char_lm {             /* nn.Module with three children, as in PyTorch */
    tn_module base;
    tn_module *embed, *lstm, *head;
} char_lm;
static const tn_module_type char_lm_type = {"CharLM", NULL, NULL, NULL};

static tn_module *char_lm_new(int64_t vocab) {
    char_lm *m = (char_lm *)tn_module_new(&char_lm_type, sizeof *m);
    m->embed = tn_module_add(&m->base, "embed", tn_nn_embedding(vocab, EMBED));
    m->lstm = tn_module_add(&m->base, "lstm", tn_nn_lstm(EMBED, HIDDEN, .num_layers = 2, .batch_first = true, .dropout = 0.1));
    m->head = tn_module_add(&m->base, "head", tn_nn_linear(HIDDEN, vocab));
    if (!m->embed || !m->lstm || !m->head) { tn_module_free(&m->base); return NULL; }
    return &m->base;
}
/* ids [B, T] -> logits [B, T, V]; (h, c) carry the state between calls (NULL: zeros). */
static tn_tensor *char_lm_forward(tn_module *mod, tn_tensor *ids, tn_tensor **h, tn_tensor **c) {
    char_lm *m = (char_lm *)mod;
    tn_tensor *hn, *cn;
    tn_tensor *out = tn_nn_lstm_forward(m->lstm, tn_module_forward(m->embed, ids), *h, *c, &hn, &cn);
    *h = hn;
    *c = cn;
    return tn_module_forward(m->head, out);
}

/* The bytes of a file, and the byte -> id table of the characters it uses. */
static unsigned char *read_text(const char *path, int64_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = size > 0 ? (unsigned char *)malloc((size_t)size) : NULL;
    *n = buf ? (int64_t)fread(buf, 1, (size_t)size, f) : 0;
    fclose(f);
    return buf;
}

/* Draw from softmax(logits / temperature) with the library's generator. */
static int sample(tn_tensor *logits, double temperature) {
    tn_scope_begin();
    tn_tensor *p = tn_contiguous(tn_softmax(tn_div_scalar(tn_to_dtype(logits, TN_F64), temperature), -1));
    const double *pv = (const double *)tn_data_ptr(p);
    double u = tn_item(tn_rand(TN_SHAPE(1), TN_F64)), acc = 0;
    int k = 0, n = (int)tn_numel(p);
    while (k < n - 1 && (acc += pv[k]) < u) k++;
    tn_scope_end();
    return k;
}

int main(int argc, char **argv) {
    tu_flag f[] = {{"--text", "data/fortunes.txt", "the training text", NULL},
                   {"--save", "char_lm.safetensors", "checkpoint written at the end", NULL},
                   {"--resume", NULL, "checkpoint to continue from", NULL},
                   {"--prompt", "Q: ", "text the sample starts from", NULL},
                   {"--steps", "1000", "training steps", NULL},
                   {"--sample", "600", "characters to sample afterwards", NULL}};
    const int nf = (int)(sizeof f / sizeof f[0]);
    tu_flags(argc, argv, "A 2-layer character-level LSTM trained on a text, then sampled.", f, nf);
    const char *path = tu_str(f, nf, "--text"), *save = tu_str(f, nf, "--save"), *resume = tu_str(f, nf, "--resume");
    const char *prompt = tu_str(f, nf, "--prompt");
    const int64_t steps = (int64_t)tu_num(f, nf, "--steps"), nsample = (int64_t)tu_num(f, nf, "--sample");
    tn_manual_seed(0);

    int64_t n;
    unsigned char *text = read_text(path, &n);
    if (!text || n < SEQ + 2) { fprintf(stderr, "cannot read %s (make char-lm fetches data/fortunes.txt)\n", path); return 1; }
    int vocab = 0, id_of[256], char_of[256];
    for (int i = 0; i < 256; i++) id_of[i] = -1;
    for (int64_t i = 0; i < n; i++) if (id_of[text[i]] < 0) { char_of[vocab] = text[i]; id_of[text[i]] = vocab++; }
    int64_t *ids = (int64_t *)malloc((size_t)n * sizeof(int64_t));
    for (int64_t i = 0; i < n; i++) ids[i] = id_of[text[i]];
    tn_tensor *corpus = tn_from_data(ids, TN_SHAPE(n), TN_I64);   /* no scope open: ours to release */
    free(ids);
    printf("%s: %lld characters, %d distinct\n", path, (long long)n, vocab);

    tn_module *model = char_lm_new(vocab);
    tn_dict *params = tn_module_named_parameters(model);
    tn_optim *opt = tn_optim_adam(tn_dict_values(params), tn_dict_len(params), .lr = 3e-3);
    tn_lr_scheduler *sched = tn_lr_scheduler_cosine_annealing_lr(opt, .T_max = 1000, .eta_min = 3e-4);
    if (!model || !opt || !sched) { fprintf(stderr, "setup failed: %s\n", tn_last_error()); return 1; }
    int64_t step = 0;
    if (resume && tn_checkpoint_load(resume, model, opt, &step)) { fprintf(stderr, "%s\n", tn_last_error()); return 1; }
    for (int64_t s = 0; s < step; s++) tn_lr_scheduler_step(sched);
    printf("%lld parameters; steps %lld to %lld\n", (long long)tn_module_num_parameters(model), (long long)step + 1, (long long)steps);

    /* training: random windows of SEQ + 1 characters, predict each next one */
    const int64_t per_epoch = 250;
    tu_progress bar;
    for (; step < steps; step++) {
        if (step % per_epoch == 0) tu_progress_start(&bar, (int)(step / per_epoch) + 1, (int)((steps + per_epoch - 1) / per_epoch),
                                                     steps - step < per_epoch ? steps - step : per_epoch);
        tn_scope_begin();
        tn_tensor *start = tn_randint(0, n - SEQ - 1, TN_SHAPE(BATCH, 1), TN_I64, NULL);
        tn_tensor *idx = tn_add(start, tn_arange(0, SEQ + 1, 1, TN_I64));               /* [B, SEQ+1] */
        tn_tensor *win = tn_reshape(tn_index_select(corpus, 0, tn_flatten(idx)), TN_SHAPE(BATCH, SEQ + 1));
        tn_tensor *x = tn_narrow(win, 1, 0, SEQ), *y = tn_narrow(win, 1, 1, SEQ), *h = NULL, *c = NULL;
        tn_tensor *logits = char_lm_forward(model, x, &h, &c);
        tn_tensor *loss = tn_cross_entropy(tn_reshape(logits, TN_SHAPE(-1, vocab)), tn_reshape(y, TN_SHAPE(-1)));
        tn_optim_zero_grad(opt);
        if (!loss || tn_backward(loss)) { fprintf(stderr, "\ntraining failed: %s\n", tn_last_error()); return 1; }
        tn_clip_grad_norm_(tn_dict_values(params), tn_dict_len(params), 1.0);
        tn_optim_step(opt);
        tn_lr_scheduler_step(sched);
        tu_progress_step(&bar, step % per_epoch + 1, BATCH * SEQ, tn_item(loss));
        tn_scope_end();
        if ((step + 1) % per_epoch == 0 && tn_checkpoint_save(save, model, opt, step + 1)) { fprintf(stderr, "%s\n", tn_last_error()); return 1; }
    }
    if (steps > 0 && tn_checkpoint_save(save, model, opt, steps)) { fprintf(stderr, "%s\n", tn_last_error()); return 1; }

    /* sampling: feed the prompt, then one drawn character at a time, carrying (h, c) */
    tn_module_eval(model);
    tn_no_grad_begin();
    printf("\n--- sample (temperature 0.8) ---\n%s", prompt);
    tn_tensor *h = NULL, *c = NULL, *logits = NULL;
    tn_scope_begin();
    for (const char *p = prompt; *p; p++) {
        int64_t id = id_of[(unsigned char)*p] < 0 ? 0 : id_of[(unsigned char)*p];
        logits = char_lm_forward(model, tn_from_data(&id, TN_SHAPE(1, 1), TN_I64), &h, &c);
    }
    for (int64_t i = 0; i < nsample && logits; i++) {
        int64_t id = sample(tn_reshape(logits, TN_SHAPE(-1)), 0.8);
        putchar(char_of[id]);
        logits = char_lm_forward(model, tn_from_data(&id, TN_SHAPE(1, 1), TN_I64), &h, &c);
    }
    tn_scope_end();
    tn_no_grad_end();
    printf("\n");

    tn_lr_scheduler_free(sched);
    tn_optim_free(opt);
    tn_dict_free(params);
    tn_module_free(model);
    tn_release(corpus);
    free(text);
    return 0;
}
