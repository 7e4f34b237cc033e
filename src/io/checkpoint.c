/* ---- checkpoints ---- */
static int tn__dict_put_prefixed(tn_dict *dst, const char *prefix, const tn_dict *src) {
    for (int i = 0; src && i < tn_dict_len(src); i++) {
        char *key = tn__str_join(prefix, tn_dict_key(src, i));   /* exact length: never cut */
        int rc = key ? tn_dict_set(dst, key, tn_dict_value(src, i)) : TN__FAIL_INT("tn_checkpoint_save: out of memory");
        TN_FREE(key);
        if (rc) return -1;
    }
    return src ? 0 : -1;
}
TNDEF int tn_checkpoint_save(const char *path, const tn_module *model, const tn_optim *opt, int64_t step) {
    const char *fn = "tn_checkpoint_save";
    if (!path || !model) return TN__FAIL_INT("%s: need a path and a model", fn);
    tn_dict *all = tn_dict_new(), *ms = tn_module_state_dict(model), *os = opt ? tn_optim_state_dict(opt) : NULL;
    char num[32];   /* an int64 */
    snprintf(num, sizeof num, "%lld", (long long)step);
    tn_scope_begin();
    /* tn_safetensors_save replaces path only once the whole file is written */
    int rc = !all || tn__dict_put_prefixed(all, "model.", ms) || (opt && tn__dict_put_prefixed(all, "optim.", os)) ||
             tn_dict_set(all, "step", tn_scalar_tensor((double)step, TN_I64)) || tn_dict_set_meta(all, "format", "tensor.h checkpoint") ||
             tn_dict_set_meta(all, "step", num) ? -1 : 0;
    tn_scope_end();
    if (rc == 0 && tn_safetensors_save(path, all)) {
        char why[1024];   /* a message: the error buffer holds no more */
        const char *colon = strstr(tn_last_error(), ": ");
        snprintf(why, sizeof why, "%s", colon ? colon + 2 : tn_last_error());
        rc = TN__FAIL_INT("%s: %s", fn, why);
    }
    tn_dict_free(all); tn_dict_free(ms); tn_dict_free(os);
    return rc;
}
/* The entries of src under prefix, with it removed. */
static tn_dict *tn__dict_strip_prefix(const tn_dict *src, const char *prefix) {
    tn_dict *d = tn_dict_new();
    size_t n = strlen(prefix);
    for (int i = 0; d && i < tn_dict_len(src); i++)
        if (!strncmp(tn_dict_key(src, i), prefix, n) && tn_dict_set(d, tn_dict_key(src, i) + n, tn_dict_value(src, i))) { tn_dict_free(d); return NULL; }
    return d;
}
TNDEF int tn_checkpoint_load(const char *path, tn_module *model, tn_optim *opt, int64_t *step) {
    const char *fn = "tn_checkpoint_load";
    if (!path || !model) return TN__FAIL_INT("%s: need a path and a model", fn);
    tn_dict *all = tn_safetensors_load(path);
    if (!all) {   /* the reader's message, under this function's name */
        char why[1024];
        const char *colon = strstr(tn_last_error(), ": ");
        snprintf(why, sizeof why, "%s", colon ? colon + 2 : tn_last_error());
        return TN__FAIL_INT("%s: %s", fn, why);
    }
    tn_dict *ms = tn__dict_strip_prefix(all, "model."), *os = opt ? tn__dict_strip_prefix(all, "optim.") : NULL;
    tn_tensor *st = tn_dict_get(all, "step");
    char pb[256];   /* tn__msg_path's */
    const char *shown = tn__msg_path(path, pb);
    int rc = 0;
    if (!ms || (opt && !os)) rc = -1;
    else if (!st || tn_numel(st) != 1 || tn_dict_len(ms) == 0) rc = TN__FAIL_INT("%s: %s is not a checkpoint (no \"step\" or no \"model.*\" entries)", fn, shown);
    else if (st->dtype == TN_F16 || st->dtype == TN_BF16) rc = TN__FAIL_INT("%s: %s: \"step\" must not be float16 or bfloat16", fn, shown);
    /* the step is read before anything is written: an int64 exactly, another dtype only
       when it is a whole number in int64's range (1e300 or NaN would be undefined) */
    int64_t step_value = 0;
    if (rc == 0 && st->device == TN_CPU && st->dtype == TN_I64) step_value = *(const int64_t *)tn_data_ptr(st);
    else if (rc == 0) {
        const double v = tn_item(st);
        if (v != floor(v) || !(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
            rc = TN__FAIL_INT("%s: %s: \"step\" %g is not a whole number in int64's range", fn, shown, v);
        else step_value = (int64_t)v;
    }
    if (rc == 0) {
        /* model and optimizer are both checked before either is written: a refused checkpoint
           changes neither */
        tn__module_load ml;
        tn__optim_load ol;
        bool model_ok = tn__module_load_check("tn_module_load_state_dict", model, ms, true, false, NULL, NULL, &ml) == 0;
        if (!model_ok || (opt && tn__optim_load_check("tn_optim_load_state_dict", opt, os, &ol))) {
            char why[1024];   /* the message of the part that failed (the error buffer holds no more) */
            snprintf(why, sizeof why, "%s", tn_last_error());
            if (model_ok) tn__module_load_free(&ml);
            rc = TN__FAIL_INT("%s: %s: %s", fn, shown, why);
        } else {
            if (opt) tn__optim_load_commit(opt, &ol);
            rc = tn__module_load_commit("tn_module_load_state_dict", model, false, &ml);
        }
    }
    if (rc == 0 && step) *step = step_value;
    tn_dict_free(ms); tn_dict_free(os); tn_dict_free(all);
    return rc;
}
