/* exec on the local provider: posix_spawn of argv in the sandbox, both
 * output pipes drained with poll, the timeout and the host's cancel
 * enforced on the command's own process group.
 *
 * The command ends when its direct child exits and both pipes reach EOF.
 * A background process it left behind holding the pipes is not waited for
 * past DRAIN_AFTER_EXIT_MS (as a terminal would, it keeps running; destroy
 * stops it). On timeout the group gets TERM, then KILL after
 * KILL_GRACE_MS, and what is left of the group is killed once the child is
 * gone. On cancel the group is killed at once.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "local_int.h"

extern char **environ;

#define POLL_SLICE_MS 100
#define KILL_GRACE_MS 1000
#define DRAIN_AFTER_EXIT_MS 250
#define READ_CHUNK 65536

/* Nonzero when a request or result struct of the host's size has field. */
#define HAS(s, field)                                                          \
	((s)->struct_size >=                                                   \
	 offsetof(__typeof__(*(s)), field) + sizeof((s)->field))

struct stream {
	int fd;
	unsigned char *data;
	size_t len, cap;
	int truncated;
};

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Length of the NAME part of "NAME=value" (the whole string if no '='). */
static size_t name_len(const char *e)
{
	const char *eq = strchr(e, '=');

	return eq ? (size_t)(eq - e) : strlen(e);
}

static int env_has(char **env, size_t n, const char *e)
{
	size_t l = name_len(e);

	for (size_t i = 0; i < n; i++)
		if (name_len(env[i]) == l && !memcmp(env[i], e, l))
			return 1;
	return 0;
}

/* The command's environment: the server's, then the settings' env, then
 * req_env, then the marker, each overriding the earlier. The strings are
 * borrowed; the array is malloc'ed. */
static char **build_env(struct tb_local_conn *c, const char *const *req_env)
{
	size_t n_srv = 0, n_set = 0, n_req = 0, n = 0;
	char **env;

	for (char **e = environ; e && *e; e++)
		n_srv++;
	for (char **e = c->inst->env; *e; e++)
		n_set++;
	for (const char *const *e = req_env; e && *e; e++)
		n_req++;
	env = malloc((n_srv + n_set + n_req + 2) * sizeof(char *));
	if (!env)
		return NULL;
	env[n++] = c->marker;
	for (size_t i = n_req; i-- > 0;)
		if (!env_has(env, n, req_env[i]))
			env[n++] = (char *)req_env[i];
	for (size_t i = n_set; i-- > 0;)
		if (!env_has(env, n, c->inst->env[i]))
			env[n++] = c->inst->env[i];
	for (size_t i = 0; i < n_srv; i++)
		if (strchr(environ[i], '=') && !env_has(env, n, environ[i]))
			env[n++] = environ[i];
	env[n] = NULL;
	return env;
}

static const char *env_get(char **env, const char *name)
{
	size_t l = strlen(name);

	for (; *env; env++)
		if (!strncmp(*env, name, l) && (*env)[l] == '=')
			return *env + l + 1;
	return NULL;
}

/* Appends n bytes to s, keeping at most limit bytes (0: no limit). */
static int stream_take(const struct taskbox_host *h, struct stream *s,
                       const unsigned char *buf, size_t n, size_t limit)
{
	size_t keep = n;

	if (limit && s->len + keep > limit) {
		keep = limit - s->len;
		s->truncated = 1;
	}
	if (!keep)
		return 0;
	if (s->len + keep > s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 16384;
		unsigned char *nd;
		while (ncap < s->len + keep)
			ncap *= 2;
		if (limit && ncap > limit)
			ncap = limit;
		nd = h->realloc(s->data, ncap);
		if (!nd)
			return ENOMEM;
		s->data = nd;
		s->cap = ncap;
	}
	memcpy(s->data + s->len, buf, keep);
	s->len += keep;
	return 0;
}

/* Reads what is ready on s; closes it at EOF. Returns 0 or an errno. */
static int stream_read(const struct taskbox_host *h, struct stream *s,
                       size_t limit, unsigned char *buf)
{
	ssize_t n = read(s->fd, buf, READ_CHUNK);

	if (n > 0)
		return stream_take(h, s, buf, (size_t)n, limit);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	close(s->fd);
	s->fd = -1;
	return 0;
}

/* Under bubblewrap, the sandbox's directory and its tmp/ are bound from
 * descriptors the child finds as these (opened without following a
 * symbolic link: a command that replaced tmp/ with a link to a host
 * directory gets no host directory on /tmp). */
#define BWRAP_TMP_FD "3"
#define BWRAP_DIR_FD "4"

/* The argv actually spawned: argv itself, or bwrap's flags around it:
 * the root of all sandboxes masked by an empty tmpfs and only this
 * sandbox's directory bound into it (no other sandbox's files or FIFOs
 * are visible, even read-only: a FIFO takes writes on a read-only mount),
 * every capability dropped, and a user namespace when the server is
 * root. */
static char **spawn_argv(struct tb_local_conn *c, const char *path,
                         const char *const *argv, const char *cwd)
{
	size_t n = 0, k = 0;
	char **out;

	while (argv[n])
		n++;
	out = calloc(n + 31, sizeof(char *));
	if (!out)
		return NULL;
	if (c->inst->bwrap) {
		const char *pre[] = {
		    c->inst->bwrap_path, "--ro-bind", "/", "/", "--dev", "/dev",
		    "--bind-fd", BWRAP_TMP_FD, "/tmp", "--tmpfs", c->inst->root,
		    "--bind-fd", BWRAP_DIR_FD, c->dir,
		    /* Its deadline is the host's to move: a
		     * command may neither write nor replace
		     * it (a mount point cannot be renamed). */
		    "--ro-bind", c->meta, c->meta, "--unshare-ipc",
		    "--cap-drop", "ALL", "--die-with-parent", "--chdir", cwd};
		for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
			out[k++] = (char *)pre[i];
		if (geteuid() == 0)
			out[k++] = "--unshare-user";
		out[k++] = "--";
	}
	out[k++] = (char *)path;
	for (size_t i = 1; i < n; i++)
		out[k++] = (char *)argv[i];
	out[k] = NULL;
	return out;
}

static int wait_child(pid_t pid, int *status, int flags)
{
	pid_t r;

	do
		r = waitpid(pid, status, flags);
	while (r < 0 && errno == EINTR);
	if (r < 0 && errno == ECHILD) { /* the host reaps children itself */
		*status = -1;
		return 1;
	}
	return r == pid;
}

/* The descriptors bubblewrap binds (BWRAP_TMP_FD, BWRAP_DIR_FD): tmp/,
 * opened without following a link, and the sandbox's directory, both as
 * descriptors above 4 so that placing them cannot overwrite each other. */
static int bind_fds(struct tb_local_conn *c, int bind[2], char *errbuf,
                    size_t errlen)
{
	int tmp = openat(c->dir_fd, "tmp",
	                 O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (tmp < 0) {
		int err = errno;

		if (tb_local_conn_gone(c)) {
			tb_local_err(errbuf, errlen, "sandbox %s was destroyed",
			             c->id);
			return TASKBOX_E_GONE;
		}
		tb_local_err(errbuf, errlen,
		             "the sandbox's tmp/ is not a directory (%s): a "
		             "command replaced it; bubblewrap binds no link",
		             strerror(err));
		return TASKBOX_E_PERMISSION;
	}
	bind[0] = fcntl(tmp, F_DUPFD_CLOEXEC, 5);
	close(tmp);
	bind[1] = fcntl(c->dir_fd, F_DUPFD_CLOEXEC, 5);
	if (bind[0] < 0 || bind[1] < 0) {
		tb_local_err(errbuf, errlen, "cannot bind the sandbox: %s",
		             strerror(errno));
		return TASKBOX_E_IO;
	}
	return TASKBOX_OK;
}

/* Spawns argv with stdin on in_r (-1: /dev/null), stdout and stderr on
 * out_w and err_w; under bubblewrap with bind[0] (tmp/) and bind[1] (the
 * sandbox's directory) as descriptors 3 and 4 (in_r and bind's
 * descriptors are above all of them). */
static int spawn(struct tb_local_conn *c, char **argv, char **env,
                 const char *cwd, int in_r, int out_w, int err_w,
                 const int bind[2], pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int rc, bw = c->inst->bwrap;

	sigemptyset(&none);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	if ((rc = posix_spawn_file_actions_init(&fa)))
		return rc;
	if ((rc = posix_spawnattr_init(&attr))) {
		posix_spawn_file_actions_destroy(&fa);
		return rc;
	}
	if ((in_r >= 0 &&
	     (rc = posix_spawn_file_actions_adddup2(&fa, in_r, 0))) ||
	    (in_r < 0 && (rc = posix_spawn_file_actions_addopen(
	                      &fa, 0, "/dev/null", O_RDONLY, 0))) ||
	    (rc = posix_spawn_file_actions_adddup2(&fa, out_w, 1)) ||
	    (rc = posix_spawn_file_actions_adddup2(&fa, err_w, 2)) ||
	    (bw && (rc = posix_spawn_file_actions_adddup2(&fa, bind[0], 3))) ||
	    (bw && (rc = posix_spawn_file_actions_adddup2(&fa, bind[1], 4))) ||
	    (rc = posix_spawn_file_actions_addclosefrom_np(&fa, bw ? 5 : 3)) ||
	    (!c->inst->bwrap &&
	     (rc = posix_spawn_file_actions_addchdir_np(&fa, cwd))) ||
	    (rc = posix_spawnattr_setpgroup(&attr, 0)) ||
	    (rc = posix_spawnattr_setsigmask(&attr, &none)) ||
	    (rc = posix_spawnattr_setsigdefault(&attr, &all)) ||
	    (rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
	                                              POSIX_SPAWN_SETSIGMASK |
	                                              POSIX_SPAWN_SETSIGDEF)))
		goto out;
	rc = posix_spawn(pid, argv[0], &fa, &attr, argv, env);
out:
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

/* spawn for a sandbox with a cgroup: the child is made in the group, or
 * joins it, before it execs (forkexec.c). Returns 0 or an errno value;
 * ENOENT when the group is gone (the sandbox is being destroyed). */
static int spawn_in_group(struct tb_local_conn *c, char **argv, char **env,
                          const char *cwd, int in_r, int out_w, int err_w,
                          const int bind[2], pid_t *pid)
{
	int bw = c->inst->bwrap, rc;
	int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int group = tb_local_cgroup_open(c->cgroup);
	int fds[5] = {in_r >= 0 ? in_r : null_fd, out_w, err_w, bind[0],
	              bind[1]};
	struct tb_local_spawn sp = {.argv = argv,
	                            .envp = env,
	                            .cwd = bw ? NULL : cwd,
	                            .fds = fds,
	                            .nfds = bw ? 5 : 3,
	                            .group_fd = group,
	                            .how = c->inst->cg_spawn};

	if (null_fd < 0 || group < 0)
		rc = errno;
	else
		rc = tb_local_fork_exec(&sp, pid);
	if (null_fd >= 0)
		close(null_fd);
	if (group >= 0)
		close(group);
	return rc;
}

/* Drains both streams until the child is done (see the top of the file).
 * Returns TASKBOX_OK, TASKBOX_E_CANCELLED or TASKBOX_E_NOMEM. */
static int drain(struct tb_local_conn *c, const struct taskbox_exec_req *req,
                 pid_t pid, struct stream s[2], int *status, int *timed_out)
{
	const struct taskbox_host *h = c->inst->host;
	int (*cancelled)(void *) = HAS(req, cancelled) ? req->cancelled : NULL;
	void *carg = HAS(req, cancelled_arg) ? req->cancelled_arg : NULL;
	int64_t t = now_ms(), deadline = t + req->timeout_ms;
	int64_t kill_at = 0, drain_until = 0, idle = 1;
	int exited = 0, rc = TASKBOX_OK;
	unsigned char *buf = malloc(READ_CHUNK);

	if (!buf)
		return TASKBOX_E_NOMEM;
	for (;;) {
		struct pollfd p[2];
		nfds_t np = 0;
		int64_t wait = POLL_SLICE_MS;

		if (!exited && wait_child(pid, status, WNOHANG)) {
			exited = 1;
			drain_until = t + DRAIN_AFTER_EXIT_MS;
			if (*timed_out)
				kill(-pid, SIGKILL);
		}
		if (s[0].fd < 0 && s[1].fd < 0) {
			if (exited)
				break;
			/* Pipes closed, child not yet reaped: nap, briefly
			 * at first (it is usually exiting right now). */
			wait = idle;
			idle =
			    idle * 2 > POLL_SLICE_MS ? POLL_SLICE_MS : idle * 2;
		}
		if (exited && t >= drain_until)
			break;
		if (!exited && !*timed_out && deadline - t < wait)
			wait = deadline - t;
		if (!exited && kill_at && kill_at - t < wait)
			wait = kill_at - t;
		if (exited && drain_until - t < wait)
			wait = drain_until - t;
		for (int i = 0; i < 2; i++)
			if (s[i].fd >= 0)
				p[np++] = (struct pollfd){.fd = s[i].fd,
				                          .events = POLLIN};
		if (poll(p, np, (int)(wait < 0 ? 0 : wait)) > 0) {
			for (nfds_t i = 0; i < np; i++) {
				struct stream *st =
				    s[0].fd == p[i].fd ? &s[0] : &s[1];
				if (p[i].revents &&
				    stream_read(h, st, req->output_limit,
				                buf)) {
					rc = TASKBOX_E_NOMEM;
					goto kill_all;
				}
			}
		}
		t = now_ms();
		if (cancelled && cancelled(carg)) {
			rc = TASKBOX_E_CANCELLED;
			goto kill_all;
		}
		if (!exited && !*timed_out && t >= deadline) {
			*timed_out = 1;
			kill(-pid, SIGTERM);
			kill_at = t + KILL_GRACE_MS;
		}
		if (!exited && kill_at && t >= kill_at) {
			kill(-pid, SIGKILL);
			kill_at = 0;
		}
	}
	free(buf);
	return rc;
kill_all:
	kill(-pid, SIGKILL);
	if (!exited)
		wait_child(pid, status, 0);
	free(buf);
	return rc;
}

static int exit_code(int status)
{
	if (status < 0)
		return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

/* The most stdin bytes exec takes (TASKBOX_FEATURE_EXEC_STDIN). */
#define STDIN_MAX 65536

/* A pipe already holding req's stdin bytes, write end closed: its read
 * end, placed above the descriptors spawn sets (0..4), so no placement
 * overwrites it. -1 with errno set when it cannot be made. */
static int stdin_pipe(const struct taskbox_exec_req *req)
{
	int p[2], r = -1, err;
	size_t off = 0;

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	if (req->stdin_len > 0 && fcntl(p[1], F_GETPIPE_SZ) < (int)STDIN_MAX)
		(void)fcntl(p[1], F_SETPIPE_SZ, (int)STDIN_MAX);
	while (off < req->stdin_len) {
		ssize_t n =
		    write(p[1], req->stdin_data + off, req->stdin_len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		off += (size_t)n;
	}
	/* The command reads in blocking mode, as from any stdin. */
	if (fcntl(p[0], F_SETFL, 0) != 0 ||
	    (r = fcntl(p[0], F_DUPFD_CLOEXEC, 5)) < 0)
		goto fail;
	close(p[0]);
	close(p[1]);
	return r;
fail:
	err = errno ? errno : EIO;
	close(p[0]);
	close(p[1]);
	errno = err;
	return -1;
}

/* Checks argv and env; returns TASKBOX_OK or TASKBOX_E_INVALID. */
static int check_req(const struct taskbox_exec_req *req, char *errbuf,
                     size_t errlen)
{
	if (!HAS(req, output_limit)) {
		tb_local_err(errbuf, errlen, "exec request struct too small");
		return TASKBOX_E_INVALID;
	}
	if (!req->argv || !req->argv[0] || !req->argv[0][0]) {
		tb_local_err(errbuf, errlen, "argv must name a command");
		return TASKBOX_E_INVALID;
	}
	if (req->timeout_ms == 0) {
		tb_local_err(errbuf, errlen, "timeout_ms must be > 0");
		return TASKBOX_E_INVALID;
	}
	if (HAS(req, stdin_len) && req->stdin_data &&
	    req->stdin_len > STDIN_MAX) {
		tb_local_err(errbuf, errlen,
		             "stdin_len must be at most %d bytes", STDIN_MAX);
		return TASKBOX_E_INVALID;
	}
	for (size_t i = 0; req->env && req->env[i]; i++) {
		const char *eq = strchr(req->env[i], '=');
		if (!eq || eq == req->env[i]) {
			tb_local_err(errbuf, errlen,
			             "env[%zu] must be NAME=value", i);
			return TASKBOX_E_INVALID;
		}
	}
	return TASKBOX_OK;
}

int tb_local_exec(void *conn, const struct taskbox_exec_req *req,
                  struct taskbox_exec_result *res, char *errbuf, size_t errlen)
{
	struct tb_local_conn *c = conn;
	const struct taskbox_host *h = c->inst->host;
	struct stream s[2] = {{-1, NULL, 0, 0, 0}, {-1, NULL, 0, 0, 0}};
	int outp[2] = {-1, -1}, errp[2] = {-1, -1}, bind[2] = {-1, -1};
	int in_r = -1;
	char **env = NULL, **argv = NULL, *path = NULL, *cwd = NULL;
	int rc, err, status = -1, timed_out = 0;
	struct stat st;
	pid_t pid;

	if ((rc = check_req(req, errbuf, errlen)) ||
	    (rc = tb_local_conn_alive(c, errbuf, errlen)))
		return rc;
	if (!(env = build_env(c, req->env)))
		goto nomem;
	if (!req->cwd || !req->cwd[0])
		cwd = strdup(c->home);
	else if (req->cwd[0] == '/')
		cwd = strdup(req->cwd);
	else if (asprintf(&cwd, "%s/%s", c->home, req->cwd) < 0)
		cwd = NULL;
	if (!cwd)
		goto nomem;
	if (!c->inst->bwrap && (stat(cwd, &st) != 0 || !S_ISDIR(st.st_mode))) {
		rc = tb_local_conn_gone(c) ? TASKBOX_E_GONE
		                           : TASKBOX_E_NOT_FOUND;
		tb_local_err(errbuf, errlen,
		             "cwd '%.200s' is not a directory "
		             "in the sandbox",
		             req->cwd ? req->cwd : "");
		goto out;
	}
	path = tb_local_which(req->argv[0], env_get(env, "PATH"));
	if (!path) {
		tb_local_err(errbuf, errlen,
		             "command '%.200s' not found in PATH",
		             req->argv[0]);
		rc = TASKBOX_E_NOT_FOUND;
		goto out;
	}
	if (!(argv = spawn_argv(c, path, req->argv, cwd)))
		goto nomem;
	if (c->inst->bwrap && (rc = bind_fds(c, bind, errbuf, errlen)))
		goto out;
	if (HAS(req, stdin_len) && req->stdin_data &&
	    (in_r = stdin_pipe(req)) < 0) {
		err = errno;
		goto io;
	}
	if (pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
		err = errno;
		for (int i = 0; i < 2; i++) {
			if (outp[i] >= 0)
				close(outp[i]);
			if (errp[i] >= 0)
				close(errp[i]);
		}
		goto io;
	}
	err = c->cgroup ? spawn_in_group(c, argv, env, cwd, in_r, outp[1],
	                                 errp[1], bind, &pid)
	                : spawn(c, argv, env, cwd, in_r, outp[1], errp[1], bind,
	                        &pid);
	close(outp[1]);
	close(errp[1]);
	s[0].fd = outp[0];
	s[1].fd = errp[0];
	if (err)
		goto io;
	rc = drain(c, req, pid, s, &status, &timed_out);
	if (rc == TASKBOX_E_CANCELLED)
		tb_local_err(errbuf, errlen,
		             "cancelled; the command was killed");
	else if (rc)
		tb_local_err(errbuf, errlen, "out of memory reading output");
	if (rc)
		goto out;
	if (HAS(res, err)) {
		res->exit_code = exit_code(status);
		res->timed_out = timed_out;
		res->out_truncated = s[0].truncated;
		res->err_truncated = s[1].truncated;
		res->out =
		    (struct taskbox_buf){s[0].len ? s[0].data : NULL, s[0].len};
		res->err =
		    (struct taskbox_buf){s[1].len ? s[1].data : NULL, s[1].len};
		if (!s[0].len)
			h->free(s[0].data);
		if (!s[1].len)
			h->free(s[1].data);
		s[0].data = s[1].data = NULL;
	}
	goto out;
nomem:
	tb_local_err(errbuf, errlen, "out of memory");
	rc = TASKBOX_E_NOMEM;
	goto out;
io:
	tb_local_err(errbuf, errlen, "cannot run '%.200s': %s", req->argv[0],
	             strerror(err));
	rc =
	    tb_local_conn_gone(c) ? TASKBOX_E_GONE : tb_local_errno_status(err);
out:
	for (int i = 0; i < 2; i++) {
		if (s[i].fd >= 0)
			close(s[i].fd);
		h->free(s[i].data);
	}
	for (int i = 0; i < 2; i++)
		if (bind[i] >= 0)
			close(bind[i]);
	if (in_r >= 0)
		close(in_r);
	free(argv);
	free(path);
	free(cwd);
	free(env);
	return rc;
}
