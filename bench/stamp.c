/* The end of a task whose exit the wait figure times: prints the wall
 * clock (CLOCK_REALTIME, the clock `date +%s%N` reads) as nanoseconds since
 * the epoch and a newline, then exits, a few system calls after reading
 * it. `date` spends a millisecond or more after reading the clock (locale
 * and time zone files), and a shell that runs it waits for it before it
 * exits: on a busy machine either may wait for a CPU for several ms, which
 * the figure would charge to taskbox. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, CLOCK_REALTIME */

#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	struct timespec ts;
	char line[32];
	int n;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return 1;
	n = snprintf(line, sizeof(line), "%lld%09ld\n", (long long)ts.tv_sec,
	             ts.tv_nsec);
	return write(1, line, (size_t)n) == n ? 0 : 1;
}
