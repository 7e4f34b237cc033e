/* ---- autocast (torch.autocast): per thread and device type, a switch and a dtype; ops of
   PyTorch's lists cast their floating inputs (float64 excepted, as PyTorch) on entry:
   TN__AC_LOWER to the autocast dtype (matmul, conv, linear, ...), TN__AC_F32 to float32
   (losses, prod, ...),
   TN__AC_PROMOTE to the widest floating dtype among them (cat, stack). The op then runs
   with autocast suspended, so the ops it is made of run as called, and so does backward. */
/* TN__AC_F32_CUDA: float32 under CUDA's autocast only (PyTorch's CUDA fp32 list has
   softmax, log_softmax, layer_norm, group_norm and logsumexp, its CPU list does not). */
enum { TN__AC_LOWER, TN__AC_F32, TN__AC_PROMOTE, TN__AC_F32_CUDA };
typedef struct { bool enabled; tn_dtype dtype; } tn__ac_state;
static TN__TLS tn__ac_state tn__ac_now[TN_NUM_DEVICES] = {{false, TN_BF16}, {false, TN_F16}};   /* PyTorch's defaults */
static TN__TLS struct { tn_device device; tn__ac_state prev; } tn__ac_stack[64];
static TN__TLS int tn__ac_depth, tn__ac_suspended;

TNDEF int tn_autocast_begin_opts(tn_device device, tn_autocast_fn_opts o) {
    if ((unsigned)device >= TN_NUM_DEVICES) return TN__FAIL_INT("tn_autocast_begin: invalid device %d", (int)device);
    /* dtype None: the device's autocast dtype now (torch.autocast's get_autocast_dtype) */
    if (o.dtype != -1 && (o.dtype < 0 || o.dtype >= TN_NUM_DTYPES)) return TN__FAIL_INT("tn_autocast_begin: invalid dtype %d", o.dtype);
    const tn_dtype dtype = o.dtype == -1 ? tn__ac_now[device].dtype : (tn_dtype)o.dtype;
    const bool enabled = o.enabled;
    if (dtype != TN_F16 && dtype != TN_BF16 && !(device == TN_CUDA && dtype == TN_F32))
        return TN__FAIL_INT("tn_autocast_begin: in %s autocast the target dtype must be float16 or bfloat16, got %s", tn_device_name(device), tn_dtype_name(dtype));
    if (tn__ac_depth == (int)(sizeof tn__ac_stack / sizeof tn__ac_stack[0])) return TN__FAIL_INT("tn_autocast_begin: autocast regions nested more than 64 deep");
    tn__ac_stack[tn__ac_depth].device = device;
    tn__ac_stack[tn__ac_depth++].prev = tn__ac_now[device];
    tn__ac_now[device].enabled = enabled;
    tn__ac_now[device].dtype = dtype;
    return 0;
}
TNDEF int tn_autocast_begin_str(tn_device device, const char *options) {
    TN__KW_STR_INT(tn_autocast_fn_opts, autocast, "tn_autocast_begin", options, tn_autocast_begin_opts(device, o));
}
TNDEF int tn_autocast_end(void) {
    if (tn__ac_depth == 0) return TN__FAIL_INT("tn_autocast_end: no autocast region is open");
    tn__ac_depth--;
    tn__ac_now[tn__ac_stack[tn__ac_depth].device] = tn__ac_stack[tn__ac_depth].prev;
    return 0;
}
TNDEF bool tn_autocast_is_enabled(tn_device device) { return (unsigned)device < TN_NUM_DEVICES && tn__ac_now[device].enabled; }
TNDEF tn_dtype tn_autocast_get_dtype(tn_device device) { return (unsigned)device < TN_NUM_DEVICES ? tn__ac_now[device].dtype : TN_NUM_DTYPES; }

/* Whether autocast applies to an op of class cls on n inputs (NULLs skipped); if so, out[]
   gets them cast (owned by a scope opened here) and autocast is suspended: the caller calls
   itself with out[] and returns through tn__ac_done. */
static bool tn__autocast(int cls, tn_tensor *const *in, int n, tn_tensor **out) {
    if (tn__ac_suspended) return false;
    int first = 0;
    while (first < n && !in[first]) first++;
    if (first == n) return false;
    const tn_device dev = in[first]->device;
    if ((unsigned)dev >= TN_NUM_DEVICES || !tn__ac_now[dev].enabled || (cls == TN__AC_F32_CUDA && dev != TN_CUDA)) return false;
    tn_dtype to = cls == TN__AC_LOWER ? tn__ac_now[dev].dtype : TN_F32;
    if (cls == TN__AC_PROMOTE) {
        to = tn__ac_now[dev].dtype;
        for (int i = 0; i < n; i++) if (in[i] && tn_dtype_is_floating(in[i]->dtype)) to = tn_promote_types(to, in[i]->dtype);
    }
    tn_scope_begin();
    tn__ac_suspended++;
    for (int i = 0; i < n; i++) {
        tn_tensor *t = in[i];
        const bool eligible = t && tn_dtype_is_floating(t->dtype) && t->dtype != TN_F64 && t->device == dev;
        out[i] = eligible && t->dtype != to ? tn_to_dtype(t, to) : t;
    }
    return true;
}
static tn_tensor *tn__ac_done(tn_tensor *r) {
    tn__ac_suspended--;
    return tn__scope_return(r);
}
/* At the top of an op of class cls with tensor arguments ...: under autocast, return call
   (written with ac_[i] for the i-th argument) on the cast arguments. */
#define TN__AUTOCAST(cls, call, ...) do { \
        tn_tensor *ac_in_[] = {__VA_ARGS__}, *ac_[sizeof ac_in_ / sizeof ac_in_[0]]; \
        if (tn__autocast(cls, ac_in_, (int)(sizeof ac_in_ / sizeof ac_in_[0]), ac_)) return tn__ac_done(call); \
    } while (0)
/* The same for a list of n tensors (cat, stack): call written with ac_ for the cast list. */
#define TN__AUTOCAST_LIST(cls, call, ts, n) do { \
        if (!tn__ac_suspended && (n) > 0 && (ts) && (ts)[0] && (unsigned)(ts)[0]->device < TN_NUM_DEVICES && tn__ac_now[(ts)[0]->device].enabled) { \
            tn_tensor **ac_ = (tn_tensor **)TN_MALLOC((size_t)(n) * sizeof(tn_tensor *)); \
            if (!ac_) return (tn_tensor *)tn__error("autocast: out of memory"); \
            tn_tensor *ac_r_ = tn__autocast(cls, ts, n, ac_) ? tn__ac_done(call) : NULL; \
            TN_FREE(ac_); \
            return ac_r_; \
        } \
    } while (0)
