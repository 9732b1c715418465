/* placeholder */
#include "writers/fmt.h"
static int o(void **st, const struct ptc_writer_config *cfg, const struct ptc_thread_info *t, struct ptc_wctx *c)
{ return ptc_wfail(c, ptc_err_unsupported, "champsim: not built yet"); }
static int b(void *st, const struct ptc_branch *br, size_t n) { return 0; }
static int g(void *st, const struct ptc_gap *gp) { return 0; }
static int fi(void *st) { return 0; }
static void fr(void *st) { }
const struct ptc_fmt_ops ptc_fmt_champsim = { { "champsim", "champsim", 1 }, o, b, g, fi, fr };
