/* Small process helpers of the local provider: PATH lookup and a quiet
 * spawn-and-wait. Everything uses posix_spawn: the host is threaded. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "local_int.h"

char *tb_local_which(const char *name, const char *path)
{
	struct stat st;
	size_t nlen = strlen(name);

	if (!nlen)
		return NULL;
	if (strchr(name, '/'))
		return strdup(name);
	while (path) {
		const char *colon = strchr(path, ':');
		size_t dlen = colon ? (size_t)(colon - path) : strlen(path);
		char *cand = malloc(dlen + nlen + 3);

		if (!cand)
			return NULL;
		if (dlen == 0) /* an empty entry means the current directory */
			snprintf(cand, dlen + nlen + 3, "./%s", name);
		else
			snprintf(cand, dlen + nlen + 3, "%.*s/%s", (int)dlen,
			         path, name);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(cand, X_OK) == 0)
			return cand;
		free(cand);
		path = colon ? colon + 1 : NULL;
	}
	return NULL;
}

int tb_local_run_quiet(const char *path, char *const argv[], char *const envp[],
                       int setsid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	pid_t pid;
	int rc, st;

	sigemptyset(&none);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	if (posix_spawn_file_actions_init(&fa) != 0)
		return -ENOMEM;
	if (posix_spawnattr_init(&attr) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -ENOMEM;
	}
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
	                                    POSIX_SPAWN_SETSIGDEF |
	                                    (setsid ? POSIX_SPAWN_SETSID : 0));
	rc = posix_spawn(&pid, path, &fa, &attr, argv, envp);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -rc;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno == EINTR)
			continue;
		/* ECHILD: the host ignores SIGCHLD; the child is gone. */
		return errno == ECHILD ? 0 : -errno;
	}
	return st;
}
