TNDEF void tn_set_num_threads(int n) {
#ifdef _OPENMP
    if (n > 0) omp_set_num_threads(n);
#else
    (void)n;
#endif
}
TNDEF int tn_get_num_threads(void) { return tn__omp_max_threads(); }   /* 1 in a forked child */
TNDEF bool tn_openmp_is_available(void) {
#ifdef _OPENMP
    return true;
#else
    return false;
#endif
}
