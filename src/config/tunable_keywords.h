#pragma once
// Global tunables of HAProxy that sluice accepts (tune.http.*, tune.maxrewrite, the idle-pool
// and zero-copy switches, insecure-fork-wanted, localpeer) and the proxies' `log-steps`.
// Internal to config/; main thread only.
#include "config/parser.h"

namespace sluice::config {

// Global keywords (rows of the global keyword table).
void kw_idle_pool_shared(Parser& p, Line& l);
void kw_splice_tunables(Parser& p, Line& l);
void kw_socket_buffers(Parser& p, Line& l);
void kw_pattern_cache_size(Parser& p, Line& l);
void kw_chksize(Parser& p, Line& l);
void kw_maxrewrite(Parser& p, Line& l);
void kw_h1_glitches(Parser& p, Line& l);
void kw_http_maxhdr(Parser& p, Line& l);
void kw_http_cookielen(Parser& p, Line& l);
void kw_http_logurilen(Parser& p, Line& l);
void kw_h1_zero_copy(Parser& p, Line& l);
void kw_insecure_fork_wanted(Parser& p, Line& l);
void kw_h1_flag(Parser& p, Line& l);
void kw_insecure_setuid_wanted(Parser& p, Line& l);
void kw_external_check_global(Parser& p, Line& l);
void kw_localpeer(Parser& p, Line& l);

// `log-steps <step>[,<step>...]|all` (defaults, frontend, listen).
void kw_log_steps(Parser& p, Line& l);

}  // namespace sluice::config
