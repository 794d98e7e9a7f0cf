/* dirbox: an example taskbox provider plugin.
 *
 * A sandbox is a directory <root>/<id> on this machine, where root is the
 * one setting. Commands run in it as the server's user with fork and
 * execvp; relative paths resolve against it. It isolates nothing: it shows
 * the ABI of include/taskbox/provider.h, not a security boundary.
 *
 * Every process exec starts carries DIRBOX_SANDBOX=<id> in its environment
 * (also after setsid or a double fork), and destroy kills every process
 * that carries it before it removes the directory. Sandboxes do not
 * expire: create ignores lifetime_s and there is no renew op.
 *
 * The owner a sandbox was made for (ABI 1.5) is kept in a record file
 * beside its directory, <root>/<id>.owner, written before the directory
 * exists and never changed; describe and list read it.
 *
 * Build with the installed header only (Linux, glibc or musl):
 *   cc -std=c11 -Wall -Wextra -Werror -fPIC -shared \
 *      $(pkg-config --cflags taskbox-provider) -o dirbox.so dirbox.c
 */
#define _GNU_SOURCE /* pipe2, environ, getrandom, the GNU strerror_r */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <taskbox/provider.h>

#define ID_LEN 32     /* a sandbox id: 32 lowercase hex digits */
#define ROOT_MAX 3900 /* bytes of root, so that root/<id>/... fits */
#define DRAIN_MS 250  /* output still read after the command exits */
#define SLICE_MS 100  /* the longest wait between two cancel checks */
#define MARKER "DIRBOX_SANDBOX="

/* True when a struct the host passed (of its own struct_size) has field. */
#define HAS(p, type, field)                                                    \
	((p)->struct_size >= offsetof(type, field) + sizeof((p)->field))

struct instance {
	const struct taskbox_host *host;
	char root[ROOT_MAX + 1]; /* absolute, no trailing slash needed */
};

struct conn {
	struct instance *inst;
	char id[ID_LEN + 1];
	char dir[ROOT_MAX + ID_LEN + 2]; /* root/id: the sandbox's home */
};

/* One output pipe and what was kept of it, in host-allocated memory. */
struct stream {
	int fd;
	unsigned char *data;
	size_t len, cap;
	int truncated;
};

/* Writes a one-line message into errbuf (errlen >= 1); returns code. */
static int fail(char *errbuf, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
	return code;
}

/* Says "what 'arg': <strerror(err)>"; returns the status that err maps to. */
static int sys_fail(char *errbuf, size_t errlen, int err, const char *what,
                    const char *arg)
{
	char text[128];
	int code = TASKBOX_E_IO;

	if (err == ENOENT || err == ENOTDIR)
		code = TASKBOX_E_NOT_FOUND;
	else if (err == EACCES || err == EPERM || err == EROFS)
		code = TASKBOX_E_PERMISSION;
	else if (err == ENOMEM)
		code = TASKBOX_E_NOMEM;
	else if (err == EISDIR || err == ENAMETOOLONG || err == EINVAL)
		code = TASKBOX_E_INVALID;
	return fail(errbuf, errlen, code, "%s '%.200s': %s", what, arg,
	            strerror_r(err, text, sizeof text));
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* Skips JSON white space, then consumes c if it comes next. */
static int eat(const char **p, char c)
{
	*p = skip_space(*p);
	if (**p != c)
		return 0;
	(*p)++;
	return 1;
}

/* Reads a JSON string whose opening quote was eaten into out (outlen
 * bytes). Only the escapes \" \\ \/ are taken. Returns 0, or -1. */
static int json_string(const char **p, char *out, size_t outlen)
{
	size_t n = 0;

	for (const char *s = *p;; s++) {
		char c = *s;

		if (c == '"') {
			out[n] = '\0';
			*p = s + 1;
			return 0;
		}
		if (c == '\\' && (s[1] == '"' || s[1] == '\\' || s[1] == '/'))
			c = *++s;
		else if (c == '\\' || (unsigned char)c < 0x20)
			return -1; /* another escape, a control byte, the end */
		if (n + 1 >= outlen)
			return -1;
		out[n++] = c;
	}
}

/* Parses the settings object; its one key, "root", is required. */
static int parse_settings(const char *json, char *root, char *errbuf,
                          size_t errlen)
{
	const char *p = json;
	char key[64];
	int seen = 0;

	if (!eat(&p, '{'))
		goto malformed;
	if (!eat(&p, '}')) {
		do {
			if (!eat(&p, '"') ||
			    json_string(&p, key, sizeof key) < 0 ||
			    !eat(&p, ':'))
				goto malformed;
			if (strcmp(key, "root") != 0)
				return fail(
				    errbuf, errlen, TASKBOX_E_INVALID,
				    "unknown setting '%s' (known: root)", key);
			if (seen++ || !eat(&p, '"') ||
			    json_string(&p, root, ROOT_MAX + 1) < 0)
				return fail(
				    errbuf, errlen, TASKBOX_E_INVALID,
				    "setting 'root' must be one string of at "
				    "most %d bytes (escapes: only \\\" \\\\ "
				    "\\/)",
				    ROOT_MAX);
		} while (eat(&p, ','));
		if (!eat(&p, '}'))
			goto malformed;
	}
	p = skip_space(p);
	if (*p != '\0')
		goto malformed;
	if (!seen || root[0] != '/')
		return fail(errbuf, errlen, TASKBOX_E_INVALID,
		            "setting 'root' is required: the absolute "
		            "directory that holds the sandboxes");
	return TASKBOX_OK;
malformed:
	return fail(errbuf, errlen, TASKBOX_E_INVALID,
	            "settings: malformed JSON object at byte %zu",
	            (size_t)(p - json));
}

/* Creates the first len bytes of path as a directory, with its missing
 * parents (mode before the umask). Returns 0 or an errno. */
static int make_dirs(char *path, size_t len, mode_t mode)
{
	for (size_t i = 1; i <= len; i++) {
		char c = path[i];
		int err;

		if (i < len && c != '/')
			continue;
		path[i] = '\0';
		err = mkdir(path, mode) == 0 || errno == EEXIST ? 0 : errno;
		path[i] = c;
		if (err)
			return err;
	}
	return 0;
}

static int dirbox_init(const struct taskbox_host *host,
                       const char *settings_json, void **instance, char *errbuf,
                       size_t errlen)
{
	struct instance *inst;
	char msg[ROOT_MAX + 32];
	struct stat st;
	int rc, err;

	if (!HAS(host, struct taskbox_host, log))
		return fail(errbuf, errlen, TASKBOX_E_INVALID,
		            "host struct too small");
	inst = calloc(1, sizeof *inst);
	if (!inst)
		return fail(errbuf, errlen, TASKBOX_E_NOMEM, "out of memory");
	inst->host = host;
	rc = parse_settings(settings_json, inst->root, errbuf, errlen);
	if (rc != TASKBOX_OK)
		goto out;
	err = make_dirs(inst->root, strlen(inst->root), 0700);
	if (!err && stat(inst->root, &st) != 0)
		err = errno;
	else if (!err && !S_ISDIR(st.st_mode))
		err = ENOTDIR;
	else if (!err && access(inst->root, W_OK | X_OK) != 0)
		err = errno;
	if (err) {
		rc =
		    sys_fail(errbuf, errlen, err, "setting 'root'", inst->root);
		goto out;
	}
	snprintf(msg, sizeof msg, "sandboxes in %s", inst->root);
	host->log(TASKBOX_LOG_DEBUG, "dirbox", msg);
	*instance = inst;
	return TASKBOX_OK;
out:
	free(inst);
	return rc;
}

static void dirbox_fini(void *instance)
{
	free(instance);
}

/* True when id has the form create gives ids (no "..", no "/"). */
static int id_valid(const char *id)
{
	size_t n = 0;

	while ((id[n] >= '0' && id[n] <= '9') || (id[n] >= 'a' && id[n] <= 'f'))
		n++;
	return n == ID_LEN && id[n] == '\0';
}

/* The path of sandbox id's owner record, root/<id>.owner, in out
 * (PATH_MAX bytes; root and id always fit). */
static void record_path(const struct instance *inst, const char *id, char *out)
{
	snprintf(out, PATH_MAX, "%s/%s.owner", inst->root, id);
}

/* Checks the owner a create request names (NULL: none): at most
 * TASKBOX_OWNER_MAX - 1 bytes, no control character. */
static int owner_check(const char *owner, char *errbuf, size_t errlen)
{
	size_t n = owner ? strlen(owner) : 0;

	if (n >= TASKBOX_OWNER_MAX)
		return fail(errbuf, errlen, TASKBOX_E_INVALID,
		            "owner: %zu bytes, at most %d", n,
		            TASKBOX_OWNER_MAX - 1);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)owner[i] < 0x20 || owner[i] == 0x7f)
			return fail(errbuf, errlen, TASKBOX_E_INVALID,
			            "owner: control character at byte %zu", i);
	return TASKBOX_OK;
}

/* Writes sandbox id's owner record (owner's bytes; empty for none)
 * atomically: a temporary file, then a rename onto the record's name. */
static int record_write(const struct instance *inst, const char *id,
                        const char *owner, char *errbuf, size_t errlen)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	size_t len = owner ? strlen(owner) : 0, done = 0;
	int fd, err;

	snprintf(tmp, sizeof tmp, "%s/.%s.owner.tmp", inst->root, id);
	record_path(inst, id, path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return sys_fail(errbuf, errlen, errno, "cannot create", tmp);
	while (done < len) {
		ssize_t n = write(fd, owner + done, len - done);

		if (n < 0 && errno != EINTR)
			goto io;
		done += n > 0 ? (size_t)n : 0;
	}
	if (fsync(fd) != 0)
		goto io;
	if (close(fd) != 0) {
		fd = -1;
		goto io;
	}
	if (rename(tmp, path) == 0)
		return TASKBOX_OK;
	fd = -1;
io:
	err = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return sys_fail(errbuf, errlen, err, "cannot write the owner record",
	                path);
}

static int dirbox_create(void *instance, const struct taskbox_create_req *req,
                         char *id, char *errbuf, size_t errlen)
{
	struct instance *inst = instance;
	unsigned char bytes[ID_LEN / 2];
	char dir[sizeof((struct conn *)0)->dir], path[PATH_MAX];
	const char *owner =
	    HAS(req, struct taskbox_create_req, owner) ? req->owner : NULL;
	int rc;

	if (HAS(req, struct taskbox_create_req, template_name) &&
	    req->template_name)
		return fail(errbuf, errlen, TASKBOX_E_NOT_FOUND,
		            "template '%.100s': dirbox has no templates",
		            req->template_name);
	if ((rc = owner_check(owner, errbuf, errlen)) != TASKBOX_OK)
		return rc;
	if (getrandom(bytes, sizeof bytes, 0) != (ssize_t)sizeof bytes)
		return sys_fail(errbuf, errlen, errno, "getrandom", "");
	for (size_t i = 0; i < sizeof bytes; i++)
		snprintf(id + 2 * i, 3, "%02x", bytes[i]);
	/* The record first: no sandbox is ever seen without its owner. */
	if ((rc = record_write(inst, id, owner, errbuf, errlen)) != TASKBOX_OK)
		return rc;
	snprintf(dir, sizeof dir, "%s/%s", inst->root, id);
	if (mkdir(dir, 0700) != 0) {
		rc = sys_fail(errbuf, errlen, errno, "cannot create", dir);
		record_path(inst, id, path);
		unlink(path);
		return rc;
	}
	return TASKBOX_OK;
}

static int dirbox_connect(void *instance, const char *sandbox_id, void **conn,
                          char *errbuf, size_t errlen)
{
	struct instance *inst = instance;
	struct conn *c;
	struct stat st;

	if (!id_valid(sandbox_id))
		return fail(errbuf, errlen, TASKBOX_E_NOT_FOUND,
		            "no sandbox '%.128s' (not a dirbox id)",
		            sandbox_id);
	c = malloc(sizeof *c);
	if (!c)
		return fail(errbuf, errlen, TASKBOX_E_NOMEM, "out of memory");
	c->inst = inst;
	memcpy(c->id, sandbox_id, ID_LEN + 1);
	snprintf(c->dir, sizeof c->dir, "%s/%s", inst->root, sandbox_id);
	if (stat(c->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(c);
		return fail(errbuf, errlen, TASKBOX_E_NOT_FOUND,
		            "no sandbox %s under %s", sandbox_id, inst->root);
	}
	*conn = c;
	return TASKBOX_OK;
}

static void dirbox_close(void *conn)
{
	free(conn);
}

/* TASKBOX_E_GONE when the sandbox was destroyed behind the connection. */
static int check_alive(const struct conn *c, char *errbuf, size_t errlen)
{
	struct stat st;

	if (stat(c->dir, &st) == 0 && S_ISDIR(st.st_mode))
		return TASKBOX_OK;
	return fail(errbuf, errlen, TASKBOX_E_GONE, "sandbox %s was destroyed",
	            c->id);
}

/* The host path of a sandbox path (relative ones are under the home) in
 * out (PATH_MAX bytes). Returns 0, or -1 when it does not fit. */
static int resolve(const struct conn *c, const char *path, char *out)
{
	int n = path[0] == '/' ? snprintf(out, PATH_MAX, "%s", path)
	                       : snprintf(out, PATH_MAX, "%s/%s", c->dir, path);

	return n >= 0 && n < PATH_MAX ? 0 : -1;
}

/* Length of the NAME in a "NAME=value" entry. */
static size_t name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');

	return eq ? (size_t)(eq - entry) : strlen(entry);
}

/* True when one of env[0..n) sets the variable that entry sets. */
static int env_has(char *const *env, size_t n, const char *entry)
{
	for (size_t i = 0; i < n; i++)
		if (name_len(env[i]) == name_len(entry) &&
		    strncmp(env[i], entry, name_len(entry)) == 0)
			return 1;
	return 0;
}

/* The command's environment: the marker, then req_env (the last of equal
 * names wins), then the server's variables not set by either. A malloc'ed
 * array of borrowed strings, or NULL when out of memory. */
static char **command_env(const char *marker, const char *const *req_env)
{
	size_t n_req = 0, n_own = 0, n = 0;
	char **env;

	while (req_env && req_env[n_req])
		n_req++;
	while (environ[n_own])
		n_own++;
	env = malloc((n_req + n_own + 2) * sizeof *env);
	if (!env)
		return NULL;
	env[n++] = (char *)marker;
	for (size_t i = n_req; i-- > 0;)
		if (!env_has(env, n, req_env[i]))
			env[n++] = (char *)req_env[i];
	for (size_t i = 0; i < n_own; i++)
		if (!env_has(env, n, environ[i]))
			env[n++] = environ[i];
	env[n] = NULL;
	return env;
}

/* Writes s to stderr from the forked child (async-signal-safe). */
static void child_say(const char *s)
{
	ssize_t r = write(2, s, strlen(s));

	(void)r;
}

/* The forked child: leads a new process group with default signals, reads
 * /dev/null, writes to the pipes, enters cwd and runs argv with env. Only
 * async-signal-safe calls: the host has other threads. Exits 127 or 126
 * like a shell when the command cannot be run. */
_Noreturn static void run_child(const char *const *argv, char **env,
                                const char *cwd, int null_fd, int out_fd,
                                int err_fd)
{
	static const int reset[] = {SIGPIPE, SIGINT,  SIGQUIT, SIGTERM, SIGHUP,
	                            SIGCHLD, SIGXFSZ, SIGTTIN, SIGTTOU};
	const char *why = "dirbox: cannot enter the cwd of ";
	sigset_t none;

	setpgid(0, 0);
	for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++)
		signal(reset[i], SIG_DFL); /* ignored ones survive exec */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(null_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
		_exit(126);
	if (chdir(cwd) == 0) {
		environ = env; /* execvp looks argv[0] up in env's PATH */
		execvp(argv[0], (char *const *)argv);
		why = "dirbox: cannot run ";
	}
	int code = errno == ENOENT ? 127 : 126;
	child_say(why);
	child_say(argv[0]);
	child_say("\n");
	_exit(code);
}

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Reads what is ready on s, keeping the first limit bytes (0: all) in
 * host memory and discarding the rest; closes s at EOF. -1: no memory. */
static int stream_read(const struct taskbox_host *h, struct stream *s,
                       size_t limit)
{
	unsigned char buf[16384];
	ssize_t n = read(s->fd, buf, sizeof buf);
	size_t keep = n > 0 ? (size_t)n : 0;

	if (n < 0 && errno == EINTR)
		return 0;
	if (n <= 0) {
		close(s->fd);
		s->fd = -1;
		return 0;
	}
	if (limit && keep > limit - s->len) {
		keep = limit - s->len;
		s->truncated = 1;
	}
	if (s->len + keep > s->cap) {
		size_t cap = s->cap ? s->cap : sizeof buf;
		unsigned char *grown;

		while (cap < s->len + keep)
			cap *= 2;
		if (limit && cap > limit)
			cap = limit;
		if (!(grown = h->realloc(s->data, cap)))
			return -1;
		s->data = grown;
		s->cap = cap;
	}
	if (keep)
		memcpy(s->data + s->len, buf, keep);
	s->len += keep;
	return 0;
}

/* Reads both pipes until the command has exited and they are closed (or
 * DRAIN_MS after its exit, when something it left running holds them).
 * At the deadline the process group is killed; when the host cancels it is
 * killed and TASKBOX_E_CANCELLED returned. */
static int wait_command(const struct taskbox_host *h,
                        const struct taskbox_exec_req *req, pid_t pid,
                        struct stream s[2], int *status, int *timed_out)
{
	int (*cancelled)(void *) =
	    HAS(req, struct taskbox_exec_req, cancelled_arg) ? req->cancelled
	                                                     : NULL;
	int64_t now = now_ms(), deadline = now + req->timeout_ms, end = -1;
	int rc = TASKBOX_OK, nap = 1;

	for (;;) {
		/* poll skips a closed stream's fd of -1 */
		struct pollfd p[2] = {{s[0].fd, POLLIN, 0},
		                      {s[1].fd, POLLIN, 0}};
		int open = s[0].fd >= 0 || s[1].fd >= 0;
		int64_t wait = open ? SLICE_MS : nap; /* closed, not reaped */

		if (end >= 0 && (!open || now >= end))
			break;
		if (!open && nap < SLICE_MS)
			nap *= 2;
		if (end < 0 && !*timed_out && deadline - now < wait)
			wait = deadline - now;
		if (end >= 0 && end - now < wait)
			wait = end - now;
		if (poll(p, 2, (int)(wait > 0 ? wait : 0)) > 0)
			for (int i = 0; i < 2; i++)
				if (p[i].revents &&
				    stream_read(h, &s[i], req->output_limit) <
				        0) {
					rc = TASKBOX_E_NOMEM;
					goto kill_group;
				}
		if (end < 0) {
			pid_t r = waitpid(pid, status, WNOHANG);

			if (r < 0 && errno != EINTR)
				*status = -1; /* reaped by someone else */
			if (r == pid || (r < 0 && errno != EINTR))
				end = now_ms() + DRAIN_MS;
		}
		now = now_ms();
		if (end < 0 && cancelled && cancelled(req->cancelled_arg)) {
			rc = TASKBOX_E_CANCELLED;
			goto kill_group;
		}
		if (end < 0 && !*timed_out && now >= deadline) {
			*timed_out = 1;
			kill(-pid, SIGKILL);
		}
	}
	return TASKBOX_OK;
kill_group:
	if (end < 0) { /* once reaped, pid may name someone else */
		kill(-pid, SIGKILL);
		waitpid(pid, status, 0);
	}
	return rc;
}

static int dirbox_exec(void *conn, const struct taskbox_exec_req *req,
                       struct taskbox_exec_result *res, char *errbuf,
                       size_t errlen)
{
	struct conn *c = conn;
	const struct taskbox_host *h = c->inst->host;
	struct stream s[2] = {{-1, NULL, 0, 0, 0}, {-1, NULL, 0, 0, 0}};
	int outp[2] = {-1, -1}, errp[2] = {-1, -1}, null_fd = -1;
	int rc, status = -1, timed_out = 0;
	char cwd[PATH_MAX], marker[sizeof MARKER + ID_LEN], **env = NULL;
	struct stat st;
	pid_t pid;

	if (!HAS(req, struct taskbox_exec_req, output_limit) ||
	    !HAS(res, struct taskbox_exec_result, err))
		return fail(errbuf, errlen, TASKBOX_E_INVALID,
		            "exec request or result struct too small");
	if (!req->argv || !req->argv[0] || req->timeout_ms == 0)
		return fail(errbuf, errlen, TASKBOX_E_INVALID,
		            "exec needs argv[0] and a timeout_ms above 0");
	for (size_t i = 0; req->env && req->env[i]; i++)
		if (!strchr(req->env[i], '=') || req->env[i][0] == '=')
			return fail(errbuf, errlen, TASKBOX_E_INVALID,
			            "env[%zu] is not NAME=value", i);
	if ((rc = check_alive(c, errbuf, errlen)) != TASKBOX_OK)
		return rc;
	if (resolve(c, req->cwd ? req->cwd : ".", cwd) < 0 ||
	    stat(cwd, &st) != 0 || !S_ISDIR(st.st_mode))
		return fail(errbuf, errlen, TASKBOX_E_NOT_FOUND,
		            "cwd '%.200s' is not a directory",
		            req->cwd ? req->cwd : ".");
	snprintf(marker, sizeof marker, MARKER "%s", c->id);
	if (!(env = command_env(marker, req->env)))
		return fail(errbuf, errlen, TASKBOX_E_NOMEM, "out of memory");
	if (pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0 ||
	    (null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0 ||
	    (pid = fork()) < 0) {
		rc = sys_fail(errbuf, errlen, errno, "cannot start",
		              req->argv[0]);
		goto out;
	}
	if (pid == 0)
		run_child(req->argv, env, cwd, null_fd, outp[1], errp[1]);
	setpgid(pid, pid); /* as the child does: kill(-pid) cannot miss */
	close(outp[1]);
	close(errp[1]);
	outp[1] = errp[1] = -1;
	s[0].fd = outp[0];
	s[1].fd = errp[0];
	outp[0] = errp[0] = -1;
	rc = wait_command(h, req, pid, s, &status, &timed_out);
	if (rc != TASKBOX_OK) {
		fail(errbuf, errlen, rc,
		     rc == TASKBOX_E_CANCELLED
		         ? "cancelled; the command was killed"
		         : "out of memory keeping output");
		goto out;
	}
	res->exit_code = status < 0            ? -1
	                 : WIFEXITED(status)   ? WEXITSTATUS(status)
	                 : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
	                                       : -1;
	res->timed_out = timed_out;
	res->out_truncated = s[0].truncated;
	res->err_truncated = s[1].truncated;
	res->out = (struct taskbox_buf){s[0].data, s[0].len};
	res->err = (struct taskbox_buf){s[1].data, s[1].len};
	s[0].data = s[1].data = NULL; /* the host's now */
out:
	for (int i = 0; i < 2; i++) {
		int fds[3] = {s[i].fd, outp[i], errp[i]};

		for (int j = 0; j < 3; j++)
			if (fds[j] >= 0)
				close(fds[j]);
		h->free(s[i].data);
	}
	if (null_fd >= 0)
		close(null_fd);
	free(env);
	return rc;
}

static int dirbox_read_file(void *conn, const char *path, uint64_t offset,
                            size_t length, struct taskbox_buf *data,
                            uint64_t *file_size, char *errbuf, size_t errlen)
{
	struct conn *c = conn;
	const struct taskbox_host *h = c->inst->host;
	char full[PATH_MAX];
	unsigned char *buf = NULL;
	size_t want = length, got = 0;
	struct stat st;
	int fd, rc = TASKBOX_OK;

	if (resolve(c, path, full) < 0)
		return fail(errbuf, errlen, TASKBOX_E_INVALID, "path too long");
	fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = sys_fail(errbuf, errlen, errno, "cannot open", path);
		if (rc == TASKBOX_E_NOT_FOUND &&
		    check_alive(c, errbuf, errlen) != TASKBOX_OK)
			rc = TASKBOX_E_GONE;
		return rc;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = fail(errbuf, errlen, TASKBOX_E_INVALID,
		          "'%.200s' is not a regular file", path);
		goto out;
	}
	/* procfs and sysfs files say size 0: they are read to their end. */
	if (st.st_size > 0 && offset >= (uint64_t)st.st_size)
		want = 0;
	else if (st.st_size > 0 && (uint64_t)st.st_size - offset < want)
		want = (size_t)((uint64_t)st.st_size - offset);
	if (want && !(buf = h->alloc(want))) {
		rc = fail(errbuf, errlen, TASKBOX_E_NOMEM, "out of memory");
		goto out;
	}
	while (got < want) {
		ssize_t n =
		    pread(fd, buf + got, want - got, (off_t)(offset + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = sys_fail(errbuf, errlen, errno, "cannot read",
			              path);
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (st.st_size > 0)
		*file_size = (uint64_t)st.st_size;
	else if (got < want && (got > 0 || offset == 0))
		*file_size = offset + got; /* read up to its end */
	else
		*file_size = UINT64_MAX;
	data->data = got ? buf : NULL;
	data->len = got;
	if (got)
		buf = NULL;
out:
	h->free(buf);
	close(fd);
	return rc;
}

static int dirbox_write_file(void *conn, const char *path,
                             const unsigned char *data, size_t len,
                             uint32_t mode, char *errbuf, size_t errlen)
{
	struct conn *c = conn;
	char full[PATH_MAX], *slash;
	int fd = -1, rc, err;

	if (mode & ~07777u)
		return fail(errbuf, errlen, TASKBOX_E_INVALID,
		            "mode %o is more than permission bits", mode);
	if ((rc = check_alive(c, errbuf, errlen)) != TASKBOX_OK)
		return rc;
	if (resolve(c, path, full) < 0)
		return fail(errbuf, errlen, TASKBOX_E_INVALID, "path too long");
	slash = strrchr(full, '/');
	if ((err = make_dirs(full, (size_t)(slash - full), 0755)) != 0)
		return sys_fail(errbuf, errlen, err,
		                "cannot create the parents of", path);
	fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || fchmod(fd, mode) != 0)
		goto io;
	for (size_t done = 0; done < len;) {
		ssize_t n = write(fd, data + done, len - done);

		if (n < 0 && errno != EINTR)
			goto io;
		done += n > 0 ? (size_t)n : 0;
	}
	if (close(fd) == 0)
		return TASKBOX_OK;
	fd = -1;
io:
	err = errno;
	if (fd >= 0)
		close(fd);
	return sys_fail(errbuf, errlen, err, "cannot write", path);
}

/* True when process pid's environment holds the entry marker. */
static int has_marker(long pid, const char *marker)
{
	char path[64], *buf = NULL, *grown;
	size_t len = 0, cap = 0;
	ssize_t n = 1;
	int fd, found = 0;

	snprintf(path, sizeof path, "/proc/%ld/environ", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0; /* gone, or not ours */
	while (n > 0 || (n < 0 && errno == EINTR)) {
		if (cap - len < 4096) {
			if (!(grown = realloc(buf, cap = cap * 2 + 8192)))
				goto out;
			buf = grown;
		}
		n = read(fd, buf + len, cap - len - 1);
		len += n > 0 ? (size_t)n : 0;
	}
	buf[len] = '\0';
	for (char *e = buf; e < buf + len; e += strlen(e) + 1)
		found |= strcmp(e, marker) == 0;
out:
	free(buf);
	close(fd);
	return found;
}

/* Kills every process whose environment carries marker, scanning /proc
 * again until a scan finds none (one may fork while we scan). */
static void kill_marked(const char *marker)
{
	struct timespec pause = {0, 10 * 1000 * 1000};
	int found = 1;

	for (int round = 0; found && round < 50; round++) {
		DIR *d = opendir("/proc");
		struct dirent *e;

		if (!d)
			return;
		found = 0;
		while ((e = readdir(d)) != NULL) {
			long pid = atol(e->d_name); /* 0 for "self", "net"... */

			if (pid > 0 && has_marker(pid, marker)) {
				kill((pid_t)pid, SIGKILL);
				found = 1;
			}
		}
		closedir(d);
		if (found)
			nanosleep(&pause, NULL);
	}
}

/* Removes name (relative to dirfd) and all under it without following
 * symlinks, first making each directory writable (commands may have made
 * it read-only). Returns 0 or an errno. */
static int remove_tree(int dirfd, const char *name)
{
	struct dirent *e;
	DIR *d;
	int fd, err = 0;

	if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return errno;
	if (fchmodat(dirfd, name, 0700, 0) != 0 && errno != EPERM)
		return errno; /* EPERM: not ours to open up; try anyway */
	fd = openat(dirfd, name,
	            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		err = errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	while (!err && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			err = remove_tree(fd, e->d_name);
	closedir(d);
	if (!err && unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
		err = errno;
	return err;
}

static int dirbox_destroy(void *instance, const char *sandbox_id, char *errbuf,
                          size_t errlen)
{
	struct instance *inst = instance;
	char dir[PATH_MAX], doomed[PATH_MAX], record[PATH_MAX];
	char marker[sizeof MARKER + ID_LEN];
	int err;

	if (!id_valid(sandbox_id))
		return fail(errbuf, errlen, TASKBOX_E_NOT_FOUND,
		            "no sandbox '%.128s' (not a dirbox id)",
		            sandbox_id);
	snprintf(dir, sizeof dir, "%s/%s", inst->root, sandbox_id);
	snprintf(doomed, sizeof doomed, "%s/.destroying-%s", inst->root,
	         sandbox_id);
	/* Out of sight first: connect fails from here on. A leftover of an
	 * earlier failed destroy is removed before. */
	remove_tree(AT_FDCWD, doomed);
	if (rename(dir, doomed) != 0)
		return errno == ENOENT
		           ? fail(errbuf, errlen, TASKBOX_E_NOT_FOUND,
		                  "no sandbox %s", sandbox_id)
		           : sys_fail(errbuf, errlen, errno, "cannot destroy",
		                      dir);
	record_path(inst, sandbox_id, record);
	unlink(record); /* nothing left to own */
	snprintf(marker, sizeof marker, MARKER "%s", sandbox_id);
	kill_marked(marker);
	if ((err = remove_tree(AT_FDCWD, doomed)) != 0)
		return sys_fail(errbuf, errlen, err, "cannot remove", doomed);
	return TASKBOX_OK;
}

/* Fills info (up to its struct_size) for sandbox id from its owner record:
 * the owner and, as the time it was made, the record's modification time.
 * A sandbox made before records has owner "" and created_s 0. Sandboxes
 * never expire: expires_s is 0. */
static int record_read(const struct instance *inst, const char *id,
                       struct taskbox_sandbox_info *info, char *errbuf,
                       size_t errlen)
{
	char path[PATH_MAX], owner[TASKBOX_OWNER_MAX + 1];
	int64_t created = 0;
	ssize_t n = 0;
	struct stat st;
	int fd;

	record_path(inst, id, path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT)
		return sys_fail(errbuf, errlen, errno, "cannot open", path);
	if (fd >= 0) {
		int err = 0;

		do
			n = read(fd, owner, sizeof owner);
		while (n < 0 && errno == EINTR);
		if (n < 0 || fstat(fd, &st) != 0)
			err = errno;
		close(fd);
		if (err)
			return sys_fail(errbuf, errlen, err, "cannot read",
			                path);
		if (n >= TASKBOX_OWNER_MAX)
			return fail(
			    errbuf, errlen, TASKBOX_E_IO,
			    "owner record '%s' holds more than %d bytes", path,
			    TASKBOX_OWNER_MAX - 1);
		created = (int64_t)st.st_mtime;
	}
	owner[n] = '\0';
	if (HAS(info, struct taskbox_sandbox_info, id))
		snprintf(info->id, sizeof info->id, "%s", id);
	if (HAS(info, struct taskbox_sandbox_info, owner))
		memcpy(info->owner, owner, (size_t)n + 1);
	if (HAS(info, struct taskbox_sandbox_info, created_s))
		info->created_s = created;
	if (HAS(info, struct taskbox_sandbox_info, expires_s))
		info->expires_s = 0;
	return TASKBOX_OK;
}

static int dirbox_describe(void *conn, struct taskbox_sandbox_info *info,
                           char *errbuf, size_t errlen)
{
	struct conn *c = conn;
	int rc = check_alive(c, errbuf, errlen);

	return rc == TASKBOX_OK
	           ? record_read(c->inst, c->id, info, errbuf, errlen)
	           : rc;
}

/* Calls each for every sandbox directory under root (of owner, when not
 * NULL) until each returns nonzero. A sandbox destroyed meanwhile is
 * skipped. Thread-safe: it shares nothing between calls. */
static int dirbox_list(void *instance, const char *owner, taskbox_list_fn each,
                       void *arg, char *errbuf, size_t errlen)
{
	struct instance *inst = instance;
	struct taskbox_sandbox_info info;
	struct dirent *e;
	struct stat st;
	int rc = TASKBOX_OK;
	DIR *d = opendir(inst->root);

	if (!d)
		return sys_fail(errbuf, errlen, errno, "cannot list",
		                inst->root);
	while (rc == TASKBOX_OK && (e = readdir(d)) != NULL) {
		if (!id_valid(e->d_name) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) !=
		        0 ||
		    !S_ISDIR(st.st_mode))
			continue; /* not a sandbox, or destroyed meanwhile */
		memset(&info, 0, sizeof info);
		info.struct_size = sizeof info;
		rc = record_read(inst, e->d_name, &info, errbuf, errlen);
		if (rc != TASKBOX_OK)
			break;
		if (!info.created_s &&
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue; /* destroyed since the first look */
		if (owner && strcmp(info.owner, owner) != 0)
			continue;
		if (each(arg, &info) != 0)
			break;
	}
	closedir(d);
	return rc;
}

static const struct taskbox_provider dirbox = {
    .abi_major = TASKBOX_ABI_MAJOR,
    .abi_minor = TASKBOX_ABI_MINOR,
    .struct_size = sizeof(struct taskbox_provider),
    .name = "dirbox", /* the module must be dirbox.so or dirbox.la */
    .version = "1.0",
    .description = "example: sandboxes are directories on this machine",
    .ops =
        {
            .init = dirbox_init,
            .fini = dirbox_fini,
            .create = dirbox_create,
            .connect = dirbox_connect,
            .close = dirbox_close,
            .exec = dirbox_exec,
            .read_file = dirbox_read_file,
            .destroy = dirbox_destroy,
            .write_file = dirbox_write_file,
            .renew = NULL, /* sandboxes do not expire */
        },
    /* Both true here: commands run on this kernel, as this user, in this
     * PID namespace, seeing this machine's files. */
    .features = TASKBOX_FEATURE_HOST_EXEC | TASKBOX_FEATURE_HOST_PIDS,
    .read_files = NULL, /* read_file is a local pread: nothing to batch */
    .describe = dirbox_describe,
    .list = dirbox_list,
};

TASKBOX_PROVIDER_DEFINE(dirbox)
