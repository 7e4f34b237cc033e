"""ctypes declarations of libtensor.so: one table, ops as data.

Every C function the package calls is declared here, once, with its restype and
argtypes. Nothing mirrors the layout of ``struct tn_tensor``: tensors are opaque
``void *`` handles read through the accessors (tn_ndim, tn_shape, ...). The only
structs declared are the small public value types the header documents field by
field: ``tn_memory_stats``, ``tn_generator`` (seed, offset, mt19937 state), and the options structs passed
by value where a keyword argument is a tensor: ``tn_autograd_opts``, ``tn_loss_opts``,
``tn_searchsorted_fn_opts``, ``tn_cov_fn_opts``, ``tn_diff_fn_opts``, ``tn_trapezoid_fn_opts``, ``tn_affine_norm_fn_opts``,
``tn_histogram_fn_opts``, ``tn_histogramdd_fn_opts`` (with ``tn_doubles``, a DL field's list),
the functional norms' and attention's (``tn_batch_norm_fn_opts``, ``tn_instance_norm_fn_opts``,
``tn_sdpa_fn_opts``), the module forwards' masks (``tn_mha_forward_opts``,
``tn_encoder_layer_forward_opts``, ``tn_decoder_layer_forward_opts``) and the in-place random
fills' (``tn_normal_fill_opts``, ..., with their generator) and nn.init's (``tn_init_uniform_fn_opts``, ...)
(the other keyword arguments go to the C ``_str`` functions as PyTorch's keyword text),
and ``tn_print_options``, which tn_get_printoptions fills.

The library is found, in order, at ``$TENSOR_LIB``, next to this file
(``tensor/libtensor.so``, for a wheel that bundles it), and at ``<repo>/lib/libtensor.so``
(what ``make lib/libtensor.so`` builds).
"""
import ctypes
import os
from ctypes import (POINTER, c_bool, c_char_p, c_double, c_int, c_int64, c_size_t,
                    c_uint64, c_void_p)

__all__ = ["lib", "path", "signatures", "tn_memory_stats", "tn_generator", "tn_autograd_opts", "tn_loss_opts",
           "tn_print_options", "tn_searchsorted_fn_opts", "tn_cov_fn_opts", "tn_diff_fn_opts",
           "tn_trapezoid_fn_opts", "tn_affine_norm_fn_opts", "tn_doubles", "tn_histogramdd_fn_opts",
           "tn_batch_norm_fn_opts", "tn_instance_norm_fn_opts", "tn_sdpa_fn_opts", "tn_mha_forward_opts", "tn_encoder_layer_forward_opts", "tn_decoder_layer_forward_opts", "tn_normal_fill_opts", "tn_uniform_fill_opts", "tn_exponential_fill_opts", "tn_generator_fill_opts", "tn_cauchy_fill_opts", "tn_log_normal_fill_opts", "tn_random_fill_opts", "tn_init_uniform_fn_opts", "tn_init_normal_fn_opts", "tn_init_xavier_fn_opts", "tn_init_kaiming_fn_opts", "tn_init_trunc_normal_fn_opts", "tn_init_sparse_fn_opts",
           "DELETER", "HOOK", "NODE_HOOK",
           "ERROR_HANDLER", "CUSTOM_FORWARD", "CUSTOM_BACKWARD", "GRADCHECK_FN"]


class tn_memory_stats(ctypes.Structure):
    _fields_ = [("live_tensors", c_int64), ("live_storages", c_int64),
                ("live_bytes", c_int64), ("peak_bytes", c_int64)]


class tn_cuda_stats(ctypes.Structure):
    _fields_ = [("allocated", c_size_t), ("reserved", c_size_t), ("peak_allocated", c_size_t),
                ("peak_reserved", c_size_t), ("num_allocs", c_int64), ("num_cache_hits", c_int64),
                ("num_cuda_mallocs", c_int64), ("num_ooms", c_int64),
                ("num_h2d", c_int64), ("num_d2h", c_int64), ("num_syncs", c_int64),
                # which path the cuDNN entries took (tn_cuda_stats' second part)
                ("num_cudnn_conv", c_int64), ("num_conv_fallbacks", c_int64), ("num_cudnn_algo_retries", c_int64),
                ("num_cudnn_pool", c_int64), ("num_pool_fallbacks", c_int64), ("num_cudnn_batch_norm", c_int64),
                ("num_batch_norm_fallbacks", c_int64),
                # the fused attention kernels: calls run, calls declined
                ("num_fused_attention", c_int64), ("num_attention_fallbacks", c_int64),
                # optimizer steps for many parameters at once (multi-tensor)
                ("num_multi_tensor_optim", c_int64),
                # products with a fused bias/activation epilogue (cuBLASLt): run, declined
                ("num_gemm_epilogue", c_int64), ("num_gemm_epilogue_fallbacks", c_int64),
                # graph replays captured as CUDA graphs, launched, captures that failed
                ("num_graph_captures", c_int64), ("num_graph_launches", c_int64), ("num_graph_capture_failures", c_int64),
                # graph replays' elementwise chains run as one kernel, and those declined
                ("num_fused_elementwise", c_int64), ("num_fused_elementwise_fallbacks", c_int64)]


class tn_generator(ctypes.Structure):
    _fields_ = [("seed", c_uint64), ("offset", c_uint64), ("kind", c_int), ("mt_left", c_int), ("mt_next", c_int),
                ("has_normal", c_int), ("normal", c_double), ("mt", ctypes.c_uint32 * 624), ("lock", c_int)]


class tn_autograd_opts(ctypes.Structure):
    """TN_FIELDS_tn_autograd_opts: retain_graph is -1 (None), 0 or 1."""
    _fields_ = [("gradient", c_void_p), ("retain_graph", c_int), ("create_graph", c_bool),
                ("allow_unused", c_bool)]


class tn_loss_opts(ctypes.Structure):
    """TN_FIELDS_tn_loss_opts: reduction 0 mean, 1 sum, 2 none."""
    _fields_ = [("weight", c_void_p), ("ignore_index", c_int64), ("reduction", c_int),
                ("label_smoothing", c_double)]


class tn_print_options(ctypes.Structure):
    """TN_FIELDS_tn_print_options: TN_NONE / NaN / NULL leave a field as it is; sci_mode is
    -1 (None), 0 or 1. What tn_get_printoptions fills and tn_set_printoptions_opts takes."""
    _fields_ = [("precision", c_int64), ("threshold", c_double), ("edgeitems", c_int64),
                ("linewidth", c_int64), ("profile", c_char_p), ("sci_mode", c_int)]


class tn_searchsorted_fn_opts(ctypes.Structure):
    """TN_FIELDS_tn_searchsorted_fn_opts: side None (NULL), 'left' or 'right'; sorter a tensor or NULL."""
    _fields_ = [("out_int32", c_bool), ("right", c_bool), ("side", c_char_p), ("sorter", c_void_p)]


class tn_cov_fn_opts(ctypes.Structure):
    """TN_FIELDS_tn_cov_fn_opts: fweights and aweights a tensor or NULL."""
    _fields_ = [("correction", c_int64), ("fweights", c_void_p), ("aweights", c_void_p)]


class tn_diff_fn_opts(ctypes.Structure):
    """TN_FIELDS_tn_diff_fn_opts: prepend and append a tensor or NULL."""
    _fields_ = [("n", c_int64), ("dim", c_int64), ("prepend", c_void_p), ("append", c_void_p)]


class tn_affine_norm_fn_opts(ctypes.Structure):
    """TN_FIELDS_tn_affine_norm_fn_opts (F.layer_norm, F.group_norm): weight and bias a tensor or NULL."""
    _fields_ = [("weight", c_void_p), ("bias", c_void_p), ("eps", c_double)]
class tn_histogram_fn_opts(ctypes.Structure):
    """TN_FIELDS_tn_histogram_fn_opts: range NaN for None, weight a tensor or NULL."""
    _fields_ = [("range", c_double * 2), ("weight", c_void_p), ("density", c_bool)]


LIST_MAX = 64   # TN_LIST_MAX: the most values of an IL / DL keyword field


class tn_doubles(ctypes.Structure):
    """tn_doubles: a DL keyword field's list held in the struct, {n, {v0, v1, ...}}."""
    _fields_ = [("n", c_int), ("v", c_double * LIST_MAX)]


class tn_histogramdd_fn_opts(ctypes.Structure):
    """TN_FIELDS_tn_histogramdd_fn_opts: range an empty list for None (else 2 D values), weight a tensor or NULL."""
    _fields_ = [("range", tn_doubles), ("weight", c_void_p), ("density", c_bool)]


class tn_trapezoid_fn_opts(ctypes.Structure):
    """TN_FIELDS_tn_trapezoid_fn_opts: x a tensor or NULL, dx NaN for None."""
    _fields_ = [("x", c_void_p), ("dx", c_double), ("dim", c_int64)]


# issue 19's last keyword structs passed by value (a tensor or a generator among their fields):
# the functional norms, attention, the module forwards' masks and the in-place random fills.
class tn_batch_norm_fn_opts(ctypes.Structure):
    """TN_FIELDS_tn_batch_norm_fn_opts (F.batch_norm): weight and bias a tensor or NULL."""
    _fields_ = [("weight", c_void_p), ("bias", c_void_p), ("training", c_bool), ("momentum", c_double), ("eps", c_double)]


class tn_instance_norm_fn_opts(ctypes.Structure):
    """TN_FIELDS_tn_instance_norm_fn_opts (F.instance_norm)."""
    _fields_ = [("running_mean", c_void_p), ("running_var", c_void_p), ("weight", c_void_p), ("bias", c_void_p),
                ("use_input_stats", c_bool), ("momentum", c_double), ("eps", c_double)]


class tn_sdpa_fn_opts(ctypes.Structure):
    """TN_FIELDS_tn_sdpa_fn_opts (F.scaled_dot_product_attention): scale NaN for None."""
    _fields_ = [("attn_mask", c_void_p), ("dropout_p", c_double), ("is_causal", c_bool), ("scale", c_double)]


class tn_mha_forward_opts(ctypes.Structure):
    """TN_FIELDS_tn_mha_forward_opts (MultiheadAttention.forward's keywords)."""
    _fields_ = [("key_padding_mask", c_void_p), ("need_weights", c_bool), ("attn_mask", c_void_p),
                ("average_attn_weights", c_bool), ("is_causal", c_bool)]


class tn_encoder_layer_forward_opts(ctypes.Structure):
    """TN_FIELDS_tn_encoder_layer_forward_opts (TransformerEncoderLayer.forward's keywords)."""
    _fields_ = [("src_mask", c_void_p), ("src_key_padding_mask", c_void_p), ("is_causal", c_bool)]


class tn_decoder_layer_forward_opts(ctypes.Structure):
    """TN_FIELDS_tn_decoder_layer_forward_opts (TransformerDecoderLayer.forward's keywords)."""
    _fields_ = [("tgt_mask", c_void_p), ("memory_mask", c_void_p), ("tgt_key_padding_mask", c_void_p),
                ("memory_key_padding_mask", c_void_p), ("tgt_is_causal", c_bool)]


def _fill_opts(name, *params):
    """An in-place random fill's struct: its double (or int64) parameters, then the generator."""
    return type(name, (ctypes.Structure,), {"_fields_": list(params) + [("generator", POINTER(tn_generator))]})


tn_normal_fill_opts = _fill_opts("tn_normal_fill_opts", ("mean", c_double), ("std", c_double))
tn_uniform_fill_opts = _fill_opts("tn_uniform_fill_opts", ("from", c_double), ("to", c_double))
tn_exponential_fill_opts = _fill_opts("tn_exponential_fill_opts", ("lambd", c_double))
tn_generator_fill_opts = _fill_opts("tn_generator_fill_opts")
tn_cauchy_fill_opts = _fill_opts("tn_cauchy_fill_opts", ("median", c_double), ("sigma", c_double))
tn_log_normal_fill_opts = _fill_opts("tn_log_normal_fill_opts", ("mean", c_double), ("std", c_double))
tn_random_fill_opts = _fill_opts("tn_random_fill_opts", ("from", c_int64), ("to", c_int64))

# nn.init's _opts structs (PyTorch 2.2's generator= is a field, which the _str text cannot give)
tn_init_uniform_fn_opts = _fill_opts("tn_init_uniform_fn_opts", ("a", c_double), ("b", c_double))
tn_init_normal_fn_opts = _fill_opts("tn_init_normal_fn_opts", ("mean", c_double), ("std", c_double))
tn_init_xavier_fn_opts = _fill_opts("tn_init_xavier_fn_opts", ("gain", c_double))
tn_init_kaiming_fn_opts = _fill_opts("tn_init_kaiming_fn_opts", ("a", c_double), ("mode", c_char_p),
                                     ("nonlinearity", c_char_p))
tn_init_trunc_normal_fn_opts = _fill_opts("tn_init_trunc_normal_fn_opts", ("mean", c_double), ("std", c_double),
                                          ("a", c_double), ("b", c_double))
tn_init_sparse_fn_opts = _fill_opts("tn_init_sparse_fn_opts", ("std", c_double))


DELETER = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)            # void (*)(void *data, void *ctx)
HOOK = ctypes.CFUNCTYPE(c_void_p, c_void_p, c_void_p)           # tn_hook_fn: tn_tensor *(*)(tn_tensor *grad, void *user)
# tn_node_hook_fn: int (*)(tn_tensor **grad_inputs, int n, tn_tensor *grad_output, void *user)
NODE_HOOK = ctypes.CFUNCTYPE(c_int, POINTER(c_void_p), c_int, c_void_p, c_void_p)
ERROR_HANDLER = ctypes.CFUNCTYPE(None, c_char_p, c_void_p)      # tn_error_handler
# tn_custom_forward: tn_tensor *(*)(tn_ctx *ctx, tn_tensor *const *inputs, int n, void *user)
CUSTOM_FORWARD = ctypes.CFUNCTYPE(c_void_p, c_void_p, POINTER(c_void_p), c_int, c_void_p)
# tn_custom_backward: int (*)(tn_ctx *ctx, tn_tensor *grad_output, tn_tensor **grad_inputs, int n, void *user)
CUSTOM_BACKWARD = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, POINTER(c_void_p), c_int, c_void_p)
# tn_gradcheck_fn: tn_tensor *(*)(tn_tensor *const *inputs, int n, void *user)
GRADCHECK_FN = ctypes.CFUNCTYPE(c_void_p, POINTER(c_void_p), c_int, c_void_p)

# One letter per C type.  T = tn_tensor* (an opaque handle; Python int or None).
_TYPES = {
    "v": None, "T": c_void_p, "p": c_void_p, "s": c_char_p, "i": c_int, "l": c_int64,
    "u": c_uint64, "d": c_double, "b": c_bool, "z": c_size_t, "f": ctypes.c_float, "h": ctypes.c_uint16,
    "D": c_int,                       # tn_dtype / tn_device / op enums
    "L": POINTER(c_int64),            # const int64_t *  (shapes, strides, dims)
    "A": POINTER(c_void_p),           # tn_tensor *const * / tn_tensor ** (arrays, out-params)
    "G": POINTER(tn_generator),       # tn_generator *
    "M": tn_memory_stats,             # returned by value
    "N": tn_cuda_stats,               # returned by value
    "F": DELETER, "H": ERROR_HANDLER, "K": HOOK, "E": NODE_HOOK,
    "X": CUSTOM_FORWARD, "Y": CUSTOM_BACKWARD, "Z": GRADCHECK_FN,
    "O": tn_autograd_opts,            # passed by value
    "Q": tn_loss_opts,                # passed by value
    "R": tn_print_options,            # passed by value
    "J": tn_searchsorted_fn_opts,     # passed by value
    "V": tn_cov_fn_opts,              # passed by value
    "U": tn_diff_fn_opts,             # passed by value
    "B": tn_trapezoid_fn_opts,        # passed by value
    "I": tn_affine_norm_fn_opts,      # passed by value
    "w": tn_histogram_fn_opts,        # passed by value (every capital is taken)
    "y": tn_histogramdd_fn_opts,      # passed by value
    # two letters where one is not left (passed by value)
    "bn": tn_batch_norm_fn_opts, "in": tn_instance_norm_fn_opts, "sd": tn_sdpa_fn_opts, "mh": tn_mha_forward_opts,
    "el": tn_encoder_layer_forward_opts, "dl": tn_decoder_layer_forward_opts,
    "fn": tn_normal_fill_opts, "fu": tn_uniform_fill_opts, "fe": tn_exponential_fill_opts, "fg": tn_generator_fill_opts,
    "fc": tn_cauchy_fill_opts, "fl": tn_log_normal_fill_opts, "fr": tn_random_fill_opts,
    "ju": tn_init_uniform_fn_opts, "jn": tn_init_normal_fn_opts, "jx": tn_init_xavier_fn_opts,
    "jk": tn_init_kaiming_fn_opts, "jt": tn_init_trunc_normal_fn_opts, "js": tn_init_sparse_fn_opts,
}

# "name  restype  argtypes..."  Every row is mandatory: the package and the library ship
# together, and importing fails on a library that lacks a symbol.
# tests/test_bindings_match_header.py checks every row, the letters above, the enum values
# and the Structures below against src/api.h (names, argument counts and types, results).
_SIGNATURES = """
tn_library_version s
tn_max_dims i
tn_last_error s
tn_clear_error v
tn_set_error_handler v H p
tn_dtype_name s D
tn_dtype_size z D
tn_dtype_is_floating b D
tn_dtype_is_complex b D
tn_dtype_to_real D D
tn_dtype_to_complex D D
tn_promote_types D D D
tn_set_default_dtype i D
tn_get_default_dtype D
tn_autocast_begin_str i D s
tn_autocast_end i
tn_autocast_is_enabled b D
tn_autocast_get_dtype D D
tn_device_name s D
tn_float_to_half h f
tn_half_to_float f h
tn_float_to_bfloat16 h f
tn_bfloat16_to_float f h
tn_retain T T
tn_release v T
tn_scope_depth i
tn_scope_begin v
tn_scope_end v
tn_memory_stats_get M
tn_memory_allocations l
tn_memory_stats_reset_peak v
tn_ndim i T
tn_shape L T
tn_strides L T
tn_size l T l
tn_numel l T
tn_storage_offset l T
tn_get_dtype D T
tn_get_device D T
tn_data_ptr p T
tn_is_contiguous b T
tn_version l T
tn_same_storage b T T
tn_empty T L i D
tn_zeros T L i D
tn_ones T L i D
tn_full T L i d D
tn_from_data T p L i D
tn_from_blob T p L i L D F p
tn_to_dlpack p T
tn_from_dlpack T p
tn_dlpack_delete v p
tn_share_memory_ T T
tn_is_shared b T
tn_shared_fd i T L L
tn_from_shared_fd T i l l D L i L l
tn_shared_send i i T
tn_shared_recv T i
tn_cuda_ipc_handle i T p L L L
tn_from_cuda_ipc T p l l l D L i L l
tn_cuda_ipc_open_count l
tn_dist_is_available b
tn_dist_is_backend_available b s
tn_dist_init_str i s s
tn_dist_is_initialized b
tn_dist_destroy i
tn_dist_get_rank i p
tn_dist_get_world_size i p
tn_dist_new_group p L i
tn_dist_group_free v p
tn_dist_all_reduce i T D p
tn_dist_reduce i T i D p
tn_dist_broadcast i T i p
tn_dist_all_gather i A T p
tn_dist_gather i T A i p
tn_dist_scatter i T A i p
tn_dist_reduce_scatter i T A D p
tn_dist_barrier i p
tn_dist_send i T i i p
tn_dist_recv i T i i p
tn_dist_all_reduce_async p T D p
tn_dist_broadcast_async p T i p
tn_dist_send_async p T i i p
tn_dist_recv_async p T i i p
tn_dist_wait i p
tn_dist_test i p
tn_ddp_new_str p A i p s
tn_ddp_no_sync i p b
tn_ddp_free v p
tn_scalar_tensor T d D
tn_scalar T d
tn_scalar_complex T d d
tn_scalar_int T l
tn_scalar_bool T b
tn_arange T d d d D
tn_linspace T d d l D
tn_logspace_str T d d l D s
tn_eye T l l D
tn_tril_indices_str T l l s
tn_triu_indices_str T l l s
tn_empty_like T T
tn_zeros_like T T
tn_ones_like T T
tn_full_like T T d
tn_rand_like T T
tn_randn_like T T
tn_clone T T
tn_contiguous T T
tn_to_dtype T T D
tn_to T T D
tn_item d T
tn_item_complex i T P P
tn_complex T T T
tn_polar T T T
tn_copy_ i T T
tn_resize_ T T L i
tn_manual_seed v u
tn_default_generator G
tn_generator_new G u
tn_generator_free v G
tn_generator_new_philox G u
tn_generator_manual_seed v G u
tn_generator_random64 u G
tn_generator_uniform d G
tn_generator_get_state l G p l
tn_generator_set_state i G p l
tn_rand_gen T L i D G
tn_randn_gen T L i D G
tn_normal T d d L i D G
tn_uniform T d d L i D G
tn_randint T l l L i D G
tn_bernoulli T T G
tn_bernoulli_p T L i d D G
tn_randperm T l D G
tn_multinomial_str T T l G s
tn_normal__opts T T fn
tn_uniform__opts T T fu
tn_exponential__opts T T fe
tn_geometric__opts T T d fg
tn_cauchy__opts T T fc
tn_log_normal__opts T T fl
tn_random__opts T T fr
tn_standard_gamma T T G
tn_standard_gamma_grad T T T
tn_poisson T T G
tn_binomial T T T G
tn_sample_dirichlet T T G
tn_view T T L i
tn_is_complex b T
tn_real T T
tn_imag T T
tn_view_as_real T T
tn_view_as_complex T T
tn_reshape T T L i
tn_flatten_str T T s
tn_unflatten T T l L i
tn_permute T T L i
tn_transpose T T l l
tn_t T T
tn_narrow T T l l l
tn_narrow_copy T T l l l
tn_slice T T l l l l
tn_select T T l l
tn_diagonal_str T T s
tn_expand T T L i
tn_expand_as T T T
tn_broadcast_to T T L i
tn_squeeze T T
tn_squeeze_dim T T l
tn_unsqueeze T T l
tn_unfold T T l l l
tn_as_strided T T L i L l
tn_select_scatter T T T l l
tn_slice_scatter_str T T T s
tn_diagonal_scatter_str T T T s
tn_as_strided_scatter T T T L i L l
tn_detach T T
tn_index_select T T l T
tn_combinations_str T T s
tn_gather T T l T
tn_scatter T T l T T
tn_scatter_add T T l T T
tn_scatter_ T T l T T
tn_scatter_add_ T T l T T
tn_scatter_reduce_str T T l T T s s
tn_index_reduce_str T T l T T s s
tn_scatter_reduce__str T T l T T s s
tn_scatter_with_reduce T T l T T s
tn_scatter_with_reduce_ T T l T T s
tn_index_add_str T T l T T s
tn_index_add__str T T l T T s
tn_index_copy T T l T T
tn_index_copy_ T T l T T
tn_index_fill T T l T d
tn_index_fill_ T T l T d
tn_take T T T
tn_put_str T T T T s
tn_put__str T T T T s
tn_take_along_dim T T T l
tn_index T T A i
tn_index_put_str T T A i T s
tn_index_put__str T T A i T s
tn_masked_fill T T T d
tn_masked_fill_ T T T d
tn_masked_fill_tensor T T T T
tn_masked_fill_tensor_ T T T T
tn_masked_select T T T
tn_masked_scatter T T T T
tn_masked_scatter_ T T T T
tn_nonzero T T
tn_argwhere T T
tn_where T T T T
tn_isin_str T T T s
tn_cat_str T A i s
tn_stack_str T A i s
tn_split_str i T l A i s
tn_split_sizes_str i T L i A i s
tn_chunk_str i T l A i s
tn_tensor_split_str i T l A i s
tn_tensor_split_indices_str i T L i A i s
tn_atleast_1d T T
tn_atleast_2d T T
tn_atleast_3d T T
tn_hstack T A i
tn_vstack T A i
tn_dstack T A i
tn_column_stack T A i
tn_flip T T L i
tn_roll T T L L i
tn_repeat T T L i
tn_repeat_interleave_str T T l s
tn_repeat_interleave_tensor_str T T T s
tn_repeat_interleave_indices_str T T s
tn_diff_opts T T U
tn_rot90_str T T s
tn_block_diag T A i
tn_meshgrid_str i A i A s
tn_cartesian_prod T A i
tn_tril_str T T s
tn_triu_str T T s
tn_diag_embed_str T T s
tn_diag_str T T s
tn_diagflat_str T T s
tn_pad_str T T L i s
tn_add_alpha T T T d
tn_sub_alpha T T T d
tn_add_alpha_ T T T d
tn_fill_ T T d
tn_fill T T d
tn_fill_tensor T T T
tn_zero_ T T
tn_gelu_str T T s
tn_softplus_str T T s
tn_nan_to_num_str T T s
tn_clamp_str T T s
tn_clamp__str T T s
tn_clamp_tensor T T T T
tn_clamp_min T T d
tn_clamp_max T T d
tn_logit_str T T s
tn_polygamma T l T
tn_mvlgamma T T l
tn_frexp T T A
tn_lerp T T T T
tn_lerp_scalar T T T d
tn_lerp_ T T T d
tn_addcmul_str T T T T s
tn_addcdiv_str T T T T s
tn_addcmul__str T T T T s
tn_addcdiv__str T T T T s
tn_result_type D A i
tn_broadcast_shapes i L i L i L
tn_allclose_str b T T s
tn_isclose_str T T T s
tn_equal b T T
tn_sum T T
tn_sum_dims_str T T L i s
tn_mean T T
tn_mean_dims_str T T L i s
tn_nansum T T
tn_nansum_dims_str T T L i s
tn_nanmean T T
tn_nanmean_dims_str T T L i s
tn_prod T T
tn_prod_dims_str T T L i s
tn_amax_str T T L i s
tn_amin_str T T L i s
tn_max T T
tn_min T T
tn_aminmax_str T T A s
tn_max_dim_str T T l A s
tn_min_dim_str T T l A s
tn_argmax T T
tn_argmin T T
tn_argmax_dim_str T T s
tn_argmin_dim_str T T s
tn_count_nonzero T T L i
tn_var_str T T s
tn_var_dims_str T T L i s
tn_std_str T T s
tn_std_dims_str T T L i s
tn_var_mean_str T T A s
tn_var_mean_dims_str T T L i A s
tn_std_mean_str T T A s
tn_std_mean_dims_str T T L i A s
tn_norm_str T T s
tn_norm_dims_str T T L i s
tn_renorm T T d l d
tn_sum_to_size T T L i
tn_trapezoid_opts T T B
tn_cumulative_trapezoid_opts T T B
tn_isreal T T
tn_histogram_opts T T l A w
tn_histogram_edges_opts T T T A w
tn_histogramdd_opts T T L i A y
tn_histogramdd_edges_opts T T A i A y
tn_gradient_str i T A s
tn_gradient_coords_str i T A i A s
tn_isposinf T T
tn_isneginf T T
tn_angle T T
tn_conj T T
tn_conj_physical T T
tn_logsumexp_str T T L i s
tn_cumsum T T l
tn_cumprod T T l
tn_cummax T T l A
tn_cummin T T l A
tn_logcumsumexp T T l
tn_all T T
tn_any T T
tn_all_dim_str T T l s
tn_any_dim_str T T l s
tn_sort_str T T A s
tn_argsort_str T T s
tn_topk_str T T l A s
tn_median T T
tn_median_dim_str T T A s
tn_nanmedian T T
tn_nanmedian_dim_str T T A s
tn_kthvalue_str T T l A s
tn_mode_str T T A s
tn_msort T T
tn_quantile_str T T T s
tn_nanquantile_str T T T s
tn_searchsorted_opts T T T J
tn_bucketize_str T T T s
tn_unique_str T T A A s
tn_unique_consecutive_str T T A A s
tn_bincount_str T T T s
tn_histc_str T T s
tn_addmm_str T T T T s
tn_baddbmm_str T T T T s
tn_addmv_str T T T T s
tn_addr_str T T T T s
tn_addbmm_str T T T T s
tn_vdot T T T
tn_trace T T
tn_kron T T T
tn_tensordot_str T T T s
tn_inner T T T
tn_cross_str T T T s
tn_linalg_lu_factor_str T T A s
tn_linalg_lu_factor_ex_str T T A A s
tn_lu_unpack T T T A A
tn_linalg_det T T
tn_linalg_slogdet T T A
tn_logdet T T
tn_linalg_inv T T
tn_linalg_inv_ex_str T T A s
tn_linalg_solve_str T T T s
tn_linalg_solve_ex_str T T T A s
tn_linalg_cholesky_str T T s
tn_linalg_cholesky_ex_str T T A s
tn_linalg_solve_triangular_str T T T b s
tn_triangular_solve_str T T T A s
tn_cholesky_solve_str T T T s
tn_cholesky_inverse_str T T s
tn_linalg_lu_solve_str T T T T s
tn_linalg_matrix_power T T l
tn_linalg_matrix_exp T T
tn_linalg_vector_norm_str T T s
tn_linalg_matrix_norm_str T T s
tn_linalg_norm_str T T s
tn_linalg_multi_dot T A i
tn_linalg_vecdot_str T T T s
tn_linalg_vander_str T T s
tn_linalg_householder_product T T T
tn_ormqr_str T T T T s
tn_linalg_tensorinv_str T T s
tn_linalg_tensorsolve T T T L i
tn_linalg_ldl_factor_str T T A s
tn_linalg_ldl_factor_ex_str T T A A s
tn_linalg_ldl_solve_str T T T T s
tn_linalg_qr_str T T A s
tn_qr_str T T A s
tn_geqrf T T A
tn_linalg_eigh_str T T A s
tn_linalg_eigvalsh_str T T s
tn_linalg_eig T T A
tn_linalg_eigvals T T
tn_linalg_svd_str T T A A s
tn_linalg_svdvals T T
tn_svd_str T T A A s
tn_linalg_pinv_str T T s
tn_pinverse_str T T s
tn_linalg_matrix_rank_str T T s
tn_linalg_lstsq_str T T T A A A s
tn_linalg_cond T T s
tn_fft_fft_str T T s
tn_fft_ifft_str T T s
tn_fft_rfft_str T T s
tn_fft_irfft_str T T s
tn_fft_hfft_str T T s
tn_fft_ihfft_str T T s
tn_fft_fft2_str T T s
tn_fft_ifft2_str T T s
tn_fft_rfft2_str T T s
tn_fft_irfft2_str T T s
tn_fft_hfft2_str T T s
tn_fft_ihfft2_str T T s
tn_fft_fftn_str T T s
tn_fft_ifftn_str T T s
tn_fft_rfftn_str T T s
tn_fft_irfftn_str T T s
tn_fft_hfftn_str T T s
tn_fft_ihfftn_str T T s
tn_stft_str T T l T s
tn_istft_str T T l T s
tn_fft_fftfreq_str T l s
tn_fft_rfftfreq_str T l s
tn_fft_fftshift_str T T s
tn_fft_ifftshift_str T T s
tn_sparse_csr_mm T T T T l l T
tn_sparse_coo_mm T T T l l T
tn_sparse_coo_to_csr T T T l l A A
tn_sparse_csr_to_coo T T T l l
tn_sparse_csr_to_dense T T T T l l
tn_sparse_dense_to_csr T T A A
tn_sparse_csr_check i T T T l l
tn_einsum T s A i
tn_cdist_str T T T s
tn_pdist_str T T s
tn_dist_str T T T s
tn_normalize_str T T s
tn_cov_opts T T V
tn_corrcoef T T
tn_softmax T T l
tn_log_softmax T T l
tn_requires_grad b T
tn_requires_grad_ i T b
tn_is_leaf b T
tn_grad T T
tn_set_grad i T T
tn_retain_grad i T
tn_grad_fn_name s T
tn_detach_ i T
tn_no_grad_begin v
tn_no_grad_end v
tn_enable_grad_begin v
tn_enable_grad_end v
tn_is_grad_enabled b
tn_backward_opts i T O
tn_autograd_grad_opts i A i A i A A O
tn_register_hook i T K p
tn_remove_hook i T i
tn_grad_fn p T
tn_node_retain p p
tn_node_release v p
tn_node_name s p
tn_node_num_next i p
tn_node_next p p i A
tn_node_register_prehook i p K p
tn_node_remove_prehook i p i
tn_node_register_hook i p E p
tn_node_remove_hook i p i
tn_retains_grad b T
tn_custom_op T s X Y A i p
tn_ctx_save i p T
tn_ctx_saved T p i
tn_ctx_nsaved i p
tn_ctx_needs_grad b p i
tn_set_name i T s
tn_get_name s T
tn_graph_dot p T
tn_set_detect_anomaly v b
tn_is_anomaly_enabled b
tn_gradcheck_str b Z A i p s
tn_gradgradcheck_str b Z A i p s
tn_to_string p T
tn_string_free v p
tn_set_printoptions_opts i R
tn_set_printoptions_str i s
tn_get_printoptions v p
tn_set_num_threads v i
tn_get_num_threads i
tn_openmp_is_available b
tn_unary_op_name s D
tn_binary_op_name s D
tn_cuda_is_available b
tn_cuda_unavailable_reason s
tn_cuda_device_count i
tn_cuda_current_device i
tn_cuda_set_device i i
tn_cuda_synchronize i
tn_cuda_memory_stats N
tn_cuda_reset_peak_memory_stats v
tn_cuda_empty_cache v
tn_cuda_graph_pool_handle p
tn_cuda_graph_pool_release v p
tn_cuda_graph_begin i p
tn_cuda_graph_end p
tn_cuda_graph_replay i p
tn_cuda_graph_pool_of p p
tn_cuda_graph_free v p
tn_cuda_graph_capturing b
tn_set_tf32 v b
tn_get_tf32 b
tn_set_cudnn_tf32 v b
tn_get_cudnn_tf32 b
tn_pin_memory T T
tn_is_pinned b T
tn_to_non_blocking T T D
tn_debug_cuda_stand_in v
tn_debug_cuda_stand_in_unreadable v
"""

# Families with one signature each: the names are data, the signature is shared.
UNARY = ("neg abs sign exp exp2 log log2 log10 log1p expm1 sqrt rsqrt square reciprocal "
         "sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh sigmoid relu silu erf erfc erfinv "
         "lgamma digamma i0 sinc sgn deg2rad rad2deg floor ceil "
         "round trunc frac logical_not bitwise_not isnan isinf isfinite signbit").split()
UNARY_INPLACE = "neg exp relu sigmoid tanh sqrt square".split()        # tn_<name>_ exists in C
SPECIAL_UNARY = ("i0e i1 i1e ndtr ndtri log_ndtr erfcx entr bessel_j0 bessel_j1 bessel_y0 bessel_y1 "   # tn_special_<name>
                 "modified_bessel_i0 modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 "
                 "scaled_modified_bessel_k0 scaled_modified_bessel_k1 spherical_bessel_j0 airy_ai").split()
SPECIAL_BINARY = ("xlog1py zeta gammainc gammaincc chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v "
                  "chebyshev_polynomial_w hermite_polynomial_h hermite_polynomial_he laguerre_polynomial_l "
                  "legendre_polynomial_p shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u "
                  "shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w").split()   # tn_special_<name>(a, b)
BINARY = ("add sub mul div floor_divide remainder fmod pow atan2 maximum minimum "
          "eq ne lt le gt ge logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift "
          "xlogy copysign float_power").split()
# binary ops whose `other` must be a tensor in PyTorch (a Python number is a TypeError)
BINARY_TENSOR = "fmax fmin logaddexp logaddexp2 hypot nextafter heaviside gcd lcm ldexp".split()
BINARY_INPLACE = "add sub mul div pow float_power".split()
BINARY_SCALAR = ("add sub rsub mul div pow remainder floor_divide eq ne lt le gt ge").split()
MATMUL = "matmul mm bmm mv dot outer".split()

_FAMILIES = ([f"tn_{n} T T" for n in UNARY] + [f"tn_{n}_ T T" for n in UNARY_INPLACE] +
             [f"tn_special_{n} T T" for n in SPECIAL_UNARY] + [f"tn_special_{n} T T T" for n in SPECIAL_BINARY] +
             [f"tn_{n} T T T" for n in BINARY + BINARY_TENSOR] + [f"tn_{n}_ T T T" for n in BINARY_INPLACE] +
             [f"tn_{n}_scalar T T d" for n in BINARY_SCALAR] + ["tn_rpow_scalar T d T",
             "tn_add_scalar_ T T d", "tn_mul_scalar_ T T d"] +
             [f"tn_{n} T T T" for n in MATMUL])


def _find_library():
    env = os.environ.get("TENSOR_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for folder in (here, os.path.join(here, "..", "..", "..", "lib")):
        cpu, gpu = os.path.join(folder, "libtensor.so"), os.path.join(folder, "libtensor_cuda.so")
        # the GPU build (`make cuda`) when present and not older than the CPU one
        if os.path.exists(gpu) and (not os.path.exists(cpu) or os.path.getmtime(gpu) >= os.path.getmtime(cpu)):
            return os.path.normpath(gpu)
        if os.path.exists(cpu):
            return os.path.normpath(cpu)
    raise ImportError(
        "tensor: cannot find libtensor.so. Build it with `make lib/libtensor.so` in the "
        "repository root, or point the TENSOR_LIB environment variable at it.")


path = _find_library()
lib = ctypes.CDLL(path)
signatures = {}   # name -> "restype argtypes..." letters, every declared function


def _declare(line):
    parts = line.split()
    name, letters = parts[0], " ".join(parts[1:])
    if signatures.get(name, letters) != letters:
        raise ValueError(f"tensor._C: {name} declared twice, as {signatures[name]!r} and {letters!r}")
    try:
        fn = getattr(lib, name)
    except AttributeError:
        raise ImportError(f"tensor: {path} has no symbol {name}; rebuild it with `make lib/libtensor.so`") from None
    fn.restype = _TYPES[parts[1]]
    fn.argtypes = [_TYPES[c] for c in parts[2:]]
    signatures[name] = letters


_TYPES["P"] = POINTER(c_double)   # const double * / double * (interpolate's scale_factor, tn_item_complex's outputs)
for _line in _SIGNATURES.strip().splitlines() + _FAMILIES:
    _declare(_line)


# Enum values and constants of the header (section 1 and 3).
F32, F64, I32, I64, U8, BOOL, F16, BF16, I8, I16, C64, C128 = range(12)
CPU, CUDA = 0, 1
MAX_DIMS = lib.tn_max_dims()      # TN_MAX_DIMS of the library loaded (a compile-time option): the size of shape and stride buffers the C side fills


# ---- nn (section 10 and 12) ----
# Declarations for tensor.nn (functional ops, losses, nn.init, and the few module calls
# Module.to() uses to convert parameters in place). Appended by the nn bindings; the
# letters are the table's, plus "P" for const double * (interpolate's scale_factor; defined above).


class tn_module_type(ctypes.Structure):
    """struct tn_module_type (section 12): name and three callbacks (all NULL here), plus
    zeroed room in case the C struct gains fields."""
    _fields_ = [("name", c_char_p), ("forward", c_void_p), ("destroy", c_void_p), ("extra_repr", c_void_p),
                ("_reserved", c_void_p * 8)]


_NN_SIGNATURES = """
tn_relu6 T T
tn_leaky_relu_str T T s
tn_elu_str T T s
tn_selu T T
tn_celu_str T T s
tn_hardtanh_str T T s
tn_mish T T
tn_hardswish T T
tn_hardsigmoid T T
tn_hardshrink_str T T s
tn_softshrink_str T T s
tn_tanhshrink T T
tn_softsign T T
tn_logsigmoid T T
tn_threshold T T d d
tn_glu_str T T s
tn_softmin_str T T s
tn_gumbel_softmax_str T T s
tn_prelu T T T
tn_rrelu_str T T s
tn_linear T T T T
tn_bilinear T T T T T
tn_conv1d_str T T T T s
tn_conv2d_str T T T T s
tn_conv_transpose1d_str T T T T s
tn_conv_transpose2d_str T T T T s
tn_conv3d_str T T T T s
tn_conv_transpose3d_str T T T T s
tn_im2col T T L L L L
tn_col2im T T L L L L L
tn_max_pool1d_str T T A l s
tn_max_pool2d_str T T A l s
tn_avg_pool1d_str T T l s
tn_avg_pool2d_str T T l s
tn_adaptive_avg_pool2d T T l l
tn_adaptive_max_pool2d T T l l A
tn_max_pool3d_str T T A l s
tn_avg_pool3d_str T T l s
tn_adaptive_avg_pool3d T T l l l
tn_adaptive_max_pool3d T T l l l A
tn_lp_pool1d_str T T d l s
tn_lp_pool2d_str T T d l s
tn_lp_pool3d_str T T d l s
tn_max_unpool T T T L i
tn_fractional_max_pool2d T T L L T A
tn_fractional_max_pool3d T T L L T A
tn_batch_norm_opts T T T T bn
tn_layer_norm_opts T T L i I
tn_group_norm_opts T T l I
tn_instance_norm_opts T T in
tn_local_response_norm_str T T l s
tn_cross_map_lrn2d_str T T l s
tn_channel_shuffle T T l
tn_dropout_str T T s
tn_dropout2d_str T T s
tn_dropout3d_str T T s
tn_embedding T T T
tn_embedding_padded T T T l
tn_embedding_bag_str T T T T T s
tn_one_hot_str T T s
tn_scaled_dot_product_attention_opts T T T T sd
tn_interpolate_str T T s
tn_grid_sample_str T T T s
tn_affine_grid_str T T L i s
tn_pixel_shuffle T T l
tn_pixel_unshuffle T T l
tn_mse_loss_str T T T s
tn_l1_loss_str T T T s
tn_smooth_l1_loss_str T T T s
tn_huber_loss_str T T T s
tn_nll_loss_opts T T T Q
tn_cross_entropy_opts T T T Q
tn_binary_cross_entropy_str T T T T s
tn_binary_cross_entropy_with_logits_str T T T T T s
tn_kl_div_str T T T s
tn_cosine_similarity_str T T T s
tn_cosine_embedding_loss_str T T T T s
tn_margin_ranking_loss_str T T T T s
tn_pairwise_distance_str T T T s
tn_soft_margin_loss_str T T T s
tn_multilabel_soft_margin_loss_str T T T T s
tn_multilabel_margin_loss_str T T T s
tn_hinge_embedding_loss_str T T T s
tn_multi_margin_loss_str T T T T s
tn_triplet_margin_loss_str T T T T s
tn_gaussian_nll_loss_str T T T T s
tn_poisson_nll_loss_str T T T s
tn_ctc_loss_str T T T T T s
tn_init_calculate_gain_str d s s
tn_init_uniform__opts i T ju
tn_init_uniform__str i T s
tn_init_normal__opts i T jn
tn_init_normal__str i T s
tn_init_constant_ i T d
tn_init_zeros_ i T
tn_init_ones_ i T
tn_init_xavier_uniform__opts i T jx
tn_init_xavier_uniform__str i T s
tn_init_xavier_normal__opts i T jx
tn_init_xavier_normal__str i T s
tn_init_kaiming_uniform__opts i T jk
tn_init_kaiming_uniform__str i T s
tn_init_kaiming_normal__opts i T jk
tn_init_kaiming_normal__str i T s
tn_init_orthogonal__opts i T jx
tn_init_orthogonal__str i T s
tn_init_trunc_normal__opts i T jt
tn_init_trunc_normal__str i T s
tn_init_sparse__opts i T d js
tn_init_sparse__str i T d s
tn_module_new p p z
tn_module_free v p
tn_module_register_buffer_str T p s T s
tn_module_to i p D
tn_module_to_dtype i p D
tn_module_get T p s
tn_nn_linear_str p l l s
tn_nn_conv2d_str p l l l s
tn_nn_embedding_str p l l s
tn_nn_bilinear_str p l l l s
tn_clip_grad_norm__str d A i d s
tn_clip_grad_value_ i A i d
"""
for _line in _NN_SIGNATURES.strip().splitlines():
    _declare(_line)


# ---- optim, data, safetensors (sections 13-15) ----
# Declarations for tensor.optim (optimizers, LR schedulers), tensor.utils.data and
# tensor.save/load. Appended by the optim/data bindings. Opaque handles (tn_optim *,
# tn_lr_scheduler *, tn_dict *, tn_dataset *, tn_loader *) are "p"; "C" is tn_closure,
# "W" an LR lambda, "S" a size_t out-parameter.
CLOSURE = ctypes.CFUNCTYPE(c_double, c_void_p)                  # tn_closure: double (*)(void *user)
LR_LAMBDA = ctypes.CFUNCTYPE(c_double, c_int64, c_int, c_void_p)  # double (*)(int64_t epoch, int group, void *user)
_TYPES["C"] = CLOSURE
_TYPES["W"] = LR_LAMBDA
_TYPES["S"] = POINTER(c_size_t)
__all__ += ["CLOSURE", "LR_LAMBDA"]

_OPTIM_SIGNATURES = """
tn_optim_create_str p s A i s
tn_optim_add_param_group_str i p A i s
tn_optim_num_groups i p
tn_optim_num_params i p
tn_optim_param T p i
tn_optim_get d p i s
tn_optim_set i p i s d
tn_optim_step i p
tn_optim_step_closure d p C p
tn_optim_zero_grad_str i p s
tn_optim_state T p i s
tn_optim_state_dict p p
tn_optim_load_state_dict i p p
tn_optim_free v p
tn_lr_scheduler_create_str p p s s
tn_lr_scheduler_lambda p p W p
tn_lr_scheduler_sequential p p A i L
tn_lr_scheduler_step i p
tn_lr_scheduler_step_metric i p d
tn_lr_scheduler_get_last_lr d p i
tn_lr_scheduler_last_epoch l p
tn_lr_scheduler_free v p
tn_dict_new p
tn_dict_free v p
tn_dict_set i p s T
tn_dict_get T p s
tn_dict_len i p
tn_dict_key s p i
tn_dict_value T p i
tn_dict_set_meta i p s s
tn_dict_get_meta s p s
tn_dict_meta_len i p
tn_dict_meta_key s p i
tn_safetensors_save i s p
tn_jit_trace p Z p A i p
tn_jit_trace_module p p T
tn_graph_set_dynamic i p i l
tn_graph_optimize i p
tn_graph_run i p A i A i
tn_graph_forward T p T
tn_graph_num_inputs i p
tn_graph_num_outputs i p
tn_graph_num_nodes i p
tn_graph_arena_bytes l p
tn_graph_fused_nodes i p
tn_graph_node_op s p i
tn_graph_str p p
tn_graph_print i p
tn_graph_free v p
tn_graph_save i p s
tn_graph_load p s
tn_graph_load_buffer p p z
tn_onnx_export_str i p s s
tn_onnx_load p s
tn_onnx_load_buffer p p z
tn_onnx_load_tensor T s
tn_onnx_load_tensor_buffer T p z
tn_safetensors_load p s
tn_safetensors_load_buffer p p z
tn_safetensors_serialize p p S
tn_save_pt i s p
tn_load_pt p s
tn_read_idx T s
tn_tensor_dataset p A i
tn_mnist_dataset_str p s s
tn_dataset_len l p
tn_dataset_get i p l A
tn_dataset_free v p
tn_loader_new_str p p s
tn_loader_len l p
tn_loader_next i p A
tn_loader_free v p
"""
for _line in _OPTIM_SIGNATURES.strip().splitlines():
    _declare(_line)


# ---- recurrent and attention (section 12) ----
# Declarations for tensor.nn's recurrent layers, MultiheadAttention and the Transformer
# layers (nn/rnn_modules.py): the functional cells, and the C modules whose forwards the
# Python layers drive with their own Parameters (registered into the C module by name);
# the cell and Transformer-layer constructors are there for scripts and tests that compare
# with the C layers.
# Appended by the rnn/attention bindings.
_RNN_SIGNATURES = """
tn_rnn_tanh_cell T T T T T T T
tn_rnn_relu_cell T T T T T T T
tn_lstm_cell T T T T T T T T A
tn_gru_cell T T T T T T T
tn_module_register_parameter T p s T
tn_module_train_str i p s
tn_module_zero_grad_str i p s
tn_module_child p p s
tn_nn_rnn_str p l l s
tn_nn_lstm_str p l l s
tn_nn_gru_str p l l s
tn_nn_rnn_forward T p T T A
tn_nn_lstm_forward T p T T T A A
tn_nn_multihead_attention_str p l l s
tn_nn_mha_forward_opts T p T T T A mh
tn_nn_generate_square_subsequent_mask T l D
tn_nn_rnn_cell_str p l l s
tn_nn_lstm_cell_str p l l s
tn_nn_gru_cell_str p l l s
tn_nn_transformer_encoder_layer_str p l l s
tn_nn_transformer_decoder_layer_str p l l s
tn_nn_transformer_encoder_layer_forward_opts T p T el
tn_nn_transformer_decoder_layer_forward_opts T p T T dl
"""
for _line in _RNN_SIGNATURES.strip().splitlines():
    _declare(_line)
