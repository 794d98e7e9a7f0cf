/* The in-sandbox supervisor's Python source, embedded at build time from
 * core/supervisor/taskbox_supervisor.py (docs/supervisor.md specifies it).
 * The host runs it as `python3 -I -c SOURCE VERB ...` inside a sandbox. */
#ifndef TB_SUPERVISOR_SOURCE_H
#define TB_SUPERVISOR_SOURCE_H

/* The source text, NUL-terminated and free of other NUL bytes; read-only,
 * safe to use from any thread. */
extern const char tb_supervisor_source[];

/* Its length in bytes, without the terminating NUL. */
extern const unsigned long tb_supervisor_source_len;

#endif
