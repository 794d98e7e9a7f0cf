/* Task directories watched for the waits on them, through one inotify
 * instance for the whole process (instances are counted per user, 128 by
 * default; watches are not scarce) and one thread that reads it and wakes
 * each subscriber through a descriptor of its own. Many waits on one task
 * share its watch. Thread-safe. */
#ifndef TB_DIR_WATCH_H
#define TB_DIR_WATCH_H

#include <stdbool.h>
#include <stdint.h>

struct tb_dir_watch;

/* Subscribes to the directory PATH: the subscription's descriptor polls
 * readable once the status record (status.json) is renamed into it, the
 * directory is deleted or moved, events were lost, or, with OUTPUT, its
 * stdout or stderr is written; and once the supervisor (pid, since: its
 * start time) exits, when pid_watch.h watches it. One pidfd per directory
 * serves all its subscribers: a subscription costs its one descriptor.
 * NULL when the directory cannot be watched (gone, no descriptor, no
 * thread). */
struct tb_dir_watch *tb_dir_watch_add(const char *path, bool output,
                                      int64_t pid, uint64_t since);

/* The subscription's descriptor (its own: do not close it). */
int tb_dir_watch_fd(const struct tb_dir_watch *w);

/* Whether the subscription also fires on its supervisor's exit (false
 * when that was not watched when it was added). */
bool tb_dir_watch_pid_watched(const struct tb_dir_watch *w);

/* Whether the subscription fired, or a held write came, since the last
 * call; resets both. */
bool tb_dir_watch_fired(struct tb_dir_watch *w);

/* Holds back (held true) or lets through again the output notices of an
 * OUTPUT subscription: while held, a write does not fire the descriptor,
 * only tb_dir_watch_fired learns of it; the record and the directory's end
 * still fire it at once. */
void tb_dir_watch_hold(struct tb_dir_watch *w, bool held);

/* Makes the subscription fire now (a change its owner found itself). */
void tb_dir_watch_fire(struct tb_dir_watch *w);

/* Ends the subscription; the directory's watch ends with its last. */
void tb_dir_watch_remove(struct tb_dir_watch *w);

/* Stops the thread and closes the instance once no subscription is left
 * (at exit; a later tb_dir_watch_add starts them again). */
void tb_dir_watch_stop(void);

#endif /* TB_DIR_WATCH_H */
