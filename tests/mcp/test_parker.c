/* The parker (protocol/parker.h): parked jobs run on the pool in the order
 * they fall due, a woken one at once, a stop hands every one still parked
 * to the pool, a readable descriptor makes its job due; and the pool's spare
 * queue (workers.h) takes them even when the ordinary queue is full. */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "protocol/parker.h"
#include "protocol/workers.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ran_cond = PTHREAD_COND_INITIALIZER;
static int order[8];
static int nran;

static void record(void *arg)
{
	pthread_mutex_lock(&lock);
	order[nran++] = (int)(intptr_t)arg;
	pthread_cond_broadcast(&ran_cond);
	pthread_mutex_unlock(&lock);
}

/* Waits until n jobs have run or ms passed; returns how many ran. */
static int wait_ran(int n, int ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&lock);
	while (nran < n &&
	       pthread_cond_timedwait(&ran_cond, &lock, &until) == 0)
		;
	int got = nran;
	pthread_mutex_unlock(&lock);
	return got;
}

static void reset(void)
{
	nran = 0;
}

static void setup(void)
{
	reset();
	signal(SIGPIPE, SIG_IGN);
}

TestSuite(parker, .init = setup);

Test(parker, runs_jobs_in_order_of_due_time)
{
	struct tb_workers *pool = tb_workers_new(1, 4);
	struct tb_parker *p = tb_parker_new(pool);
	struct tb_park e[3] = {{.fn = record, .arg = (void *)3},
	                       {.fn = record, .arg = (void *)1},
	                       {.fn = record, .arg = (void *)2}};

	cr_assert_not_null(p);
	cr_assert_eq(tb_parker_add(p, &e[0], 300), 0);
	cr_assert_eq(tb_parker_add(p, &e[1], 50), 0);
	cr_assert_eq(tb_parker_add(p, &e[2], 150), 0);
	cr_assert_eq(tb_parker_count(p), 3);
	cr_assert_eq(wait_ran(3, 5000), 3);
	cr_assert_eq(order[0], 1);
	cr_assert_eq(order[1], 2);
	cr_assert_eq(order[2], 3);
	cr_assert_eq(tb_parker_count(p), 0);
	tb_parker_free(p);
	tb_workers_drain(pool);
}

Test(parker, a_woken_job_runs_before_its_time_and_once)
{
	struct tb_workers *pool = tb_workers_new(1, 4);
	struct tb_parker *p = tb_parker_new(pool);
	struct tb_park late = {.fn = record, .arg = (void *)7};
	struct tb_park later = {.fn = record, .arg = (void *)8};

	cr_assert_eq(tb_parker_add(p, &late, 60000), 0);
	cr_assert_eq(tb_parker_add(p, &later, 60000), 0);
	/* Parked twice is refused: one entry, one place in the heap. */
	cr_assert_eq(tb_parker_add(p, &late, 10), -1);
	tb_parker_wake(p, &late);
	cr_assert_eq(wait_ran(1, 5000), 1);
	cr_assert_eq(order[0], 7);
	/* Waking what is no longer parked does nothing. */
	tb_parker_wake(p, &late);
	cr_assert_eq(wait_ran(2, 200), 1);
	cr_assert_eq(tb_parker_count(p), 1);
	tb_parker_free(p);
	tb_workers_drain(pool);
}

Test(parker, a_stop_hands_every_parked_job_to_the_pool)
{
	struct tb_workers *pool = tb_workers_new(2, 4);
	struct tb_parker *p = tb_parker_new(pool);
	struct tb_park e[4];

	for (int i = 0; i < 4; i++) {
		e[i] =
		    (struct tb_park){.fn = record, .arg = (void *)(intptr_t)i};
		cr_assert_eq(tb_parker_add(p, &e[i], 60000), 0);
	}
	tb_parker_free(p);
	tb_workers_drain(pool);
	cr_assert_eq(nran, 4);
}

static atomic_int release_blocker, blocking;

static void block(void *arg)
{
	(void)arg;
	atomic_store(&blocking, 1);
	while (!atomic_load(&release_blocker))
		nanosleep(&(struct timespec){0, 1000000}, NULL);
}

Test(parker, parked_jobs_use_the_spare_queue_when_the_queue_is_full)
{
	struct tb_workers *pool = tb_workers_new(1, 2);
	struct tb_parker *p = tb_parker_new(pool);
	struct tb_park e = {.fn = record, .arg = (void *)5};

	atomic_store(&release_blocker, 0);
	/* One job runs and blocks the only thread; two fill the queue. */
	cr_assert_eq(tb_workers_submit(pool, block, NULL), 0);
	while (!atomic_load(&blocking))
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	cr_assert_eq(tb_workers_submit(pool, record, (void *)1), 0);
	cr_assert_eq(tb_workers_submit(pool, record, (void *)2), 0);
	cr_assert_eq(tb_workers_submit(pool, record, (void *)3), -1);
	cr_assert_eq(tb_parker_add(p, &e, 1), 0);
	/* Handed on (to the spare queue), not kept waiting in the heap. */
	for (int i = 0; i < 500 && tb_parker_count(p) > 0; i++)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	cr_assert_eq(tb_parker_count(p), 0);
	atomic_store(&release_blocker, 1);
	cr_assert_eq(wait_ran(3, 5000), 3);
	tb_parker_free(p);
	tb_workers_drain(pool);
}

Test(parker, a_readable_descriptor_makes_its_job_due)
{
	struct tb_workers *pool = tb_workers_new(1, 4);
	struct tb_parker *p = tb_parker_new(pool);
	struct tb_park e = {.fn = record, .arg = (void *)9};
	struct tb_park quiet = {.fn = record, .arg = (void *)10};
	int fds[2], other[2];

	cr_assert_eq(pipe(fds), 0);
	cr_assert_eq(pipe(other), 0);
	cr_assert_eq(tb_parker_add_fd(p, &e, 60000, fds[0]), 0);
	cr_assert_eq(tb_parker_add_fd(p, &quiet, 60000, other[0]), 0);
	cr_assert_eq(wait_ran(1, 100), 0);
	cr_assert_eq(write(fds[1], "x", 1), 1);
	cr_assert_eq(wait_ran(1, 5000), 1);
	cr_assert_eq(order[0], 9);
	/* The parker closed the descriptor it was given. */
	cr_assert_eq(write(fds[1], "x", 1), -1);
	cr_assert_eq(errno, EPIPE);
	cr_assert_eq(tb_parker_count(p), 1);
	tb_parker_free(p);
	tb_workers_drain(pool);
	cr_assert_eq(nran, 2);
	close(fds[1]);
	close(other[1]);
}

Test(parker, new_jobs_go_before_spare_ones)
{
	struct tb_workers *pool = tb_workers_new(1, 4);

	atomic_store(&release_blocker, 0);
	atomic_store(&blocking, 0);
	cr_assert_eq(tb_workers_submit(pool, block, NULL), 0);
	while (!atomic_load(&blocking))
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	cr_assert_eq(tb_workers_submit_spare(pool, record, (void *)1), 0);
	cr_assert_eq(tb_workers_submit_spare(pool, record, (void *)2), 0);
	cr_assert_eq(tb_workers_submit(pool, record, (void *)3), 0);
	atomic_store(&release_blocker, 1);
	cr_assert_eq(wait_ran(3, 5000), 3);
	cr_assert_eq(order[0], 3);
	cr_assert_eq(order[1], 1);
	cr_assert_eq(order[2], 2);
	tb_workers_drain(pool);
}
