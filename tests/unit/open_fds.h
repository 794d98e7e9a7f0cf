/* The descriptors this process holds, for the unit tests that check none
 * is left behind. */
#ifndef TB_TEST_OPEN_FDS_H
#define TB_TEST_OPEN_FDS_H

#include <criterion/criterion.h>
#include <dirent.h>

static inline int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	cr_assert_not_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

#endif /* TB_TEST_OPEN_FDS_H */
