/* ---- checkpoints ---- */
static int tn__dict_put_prefixed(tn_dict *dst, const char *prefix, const tn_dict *src) {
    char key[600];
    for (int i = 0; src && i < tn_dict_len(src); i++) {
        snprintf(key, sizeof key, "%s%s", prefix, tn_dict_key(src, i));
        if (tn_dict_set(dst, key, tn_dict_value(src, i))) return -1;
    }
    return src ? 0 : -1;
}
TNDEF int tn_checkpoint_save(const char *path, const tn_module *model, const tn_optim *opt, int64_t step) {
    const char *fn = "tn_checkpoint_save";
    if (!path || !model) return TN__FAIL_INT("%s: need a path and a model", fn);
    tn_dict *all = tn_dict_new(), *ms = tn_module_state_dict(model), *os = opt ? tn_optim_state_dict(opt) : NULL;
    char tmp[1100], num[32];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    snprintf(num, sizeof num, "%lld", (long long)step);
    tn_scope_begin();
    int rc = !all || tn__dict_put_prefixed(all, "model.", ms) || (opt && tn__dict_put_prefixed(all, "optim.", os)) ||
             tn_dict_set(all, "step", tn_scalar_tensor((double)step, TN_I64)) || tn_dict_set_meta(all, "format", "tensor.h checkpoint") ||
             tn_dict_set_meta(all, "step", num) || tn_safetensors_save(tmp, all) ? -1 : 0;
    tn_scope_end();
    if (rc == 0 && rename(tmp, path) != 0) { remove(tmp); rc = TN__FAIL_INT("%s: cannot rename %s to %s", fn, tmp, path); }
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
    if (!all) return -1;
    tn_dict *ms = tn__dict_strip_prefix(all, "model."), *os = opt ? tn__dict_strip_prefix(all, "optim.") : NULL;
    tn_tensor *st = tn_dict_get(all, "step");
    int rc = 0;
    if (!ms || (opt && !os)) rc = -1;
    else if (!st || tn_numel(st) != 1 || tn_dict_len(ms) == 0) rc = TN__FAIL_INT("%s: %s is not a checkpoint (no \"step\" or no \"model.*\" entries)", fn, path);
    else {
        /* each load is all-or-nothing; a copy of the model's values makes the pair so (a refused
           optimizer state puts the model back) */
        tn_dict *cur = opt ? tn_module_state_dict(model) : NULL, *backup = cur ? tn_dict_new() : NULL;
        tn_scope_begin();
        for (int i = 0; backup && i < tn_dict_len(cur); i++) {
            tn_tensor *v = tn_clone(tn_dict_value(cur, i));
            if (!v || tn_dict_set(backup, tn_dict_key(cur, i), v)) { tn_dict_free(backup); backup = NULL; }
        }
        tn_scope_end();
        if (opt && !backup) rc = -1;
        else if (tn_module_load_state_dict(model, ms, true, NULL, NULL) || (opt && tn_optim_load_state_dict(opt, os))) {
            char why[1024];                  /* the message of the part that failed, with the file's name */
            snprintf(why, sizeof why, "%s", tn_last_error());
            if (backup) tn_module_load_state_dict(model, backup, true, NULL, NULL);
            rc = TN__FAIL_INT("%s: %s: %s", fn, path, why);
        }
        tn_dict_free(backup);
        tn_dict_free(cur);
    }
    if (rc == 0 && step) *step = (int64_t)tn_item(st);
    tn_dict_free(ms); tn_dict_free(os); tn_dict_free(all);
    return rc;
}
