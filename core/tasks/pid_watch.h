/* Supervisors watched through pidfds, for providers whose sandboxes share
 * this host's PID namespace (TASKBOX_FEATURE_HOST_PIDS). Reading
 * /proc/PID/stat on every get_task of a running task was a quarter of the
 * call's time; once a supervisor is verified, polling a pidfd answers in
 * one syscall, and a reused pid cannot fool it. Thread-safe. */
#ifndef TB_PID_WATCH_H
#define TB_PID_WATCH_H

#include <stdint.h>

/* The number of supervisors watched at once: this, or an eighth of the
 * soft RLIMIT_NOFILE when that is lower (every watch holds a descriptor);
 * the least recently checked watch makes room for a new one. */
#define TB_PID_WATCH_MAX 128

/* The number of watches kept under the current open-file limit. */
unsigned tb_pid_watch_cap(void);

/* 1 when the supervisor (pid, start) is watched and alive, 0 when it is
 * watched and has exited (the watch then ends), -1 when it is not
 * watched. */
int tb_pid_watch_check(int64_t pid, uint64_t start);

/* A pidfd for the process that holds pid now, or -1 with errno set:
 * ESRCH when no process has pid, ENOSYS where the kernel (or valgrind) has
 * no pidfd_open, EINVAL for a pid out of range. Open it before
 * verifying that the holder is the supervisor (by /proc/PID/stat): a pid
 * reused after the verification could otherwise be watched instead. */
int tb_pid_watch_open(int64_t pid);

/* Watches (pid, start) through fd, from tb_pid_watch_open, once the holder
 * of pid was verified to be that supervisor; takes fd (-1: does nothing).
 * The watch says alive while fd does not poll readable. */
void tb_pid_watch_keep(int64_t pid, uint64_t start, int fd);

/* A new descriptor (close-on-exec, the caller's) that polls readable once
 * the watched supervisor (pid, start) has exited, or -1 when it is not
 * watched or no descriptor is left. */
int tb_pid_watch_dup(int64_t pid, uint64_t start);

/* Ends every watch (tests; and at exit, so no descriptor is left). */
void tb_pid_watch_clear(void);

#endif /* TB_PID_WATCH_H */
