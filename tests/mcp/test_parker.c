/* The parker (protocol/parker.h): parked jobs run on the pool in the order
 * they fall due, a woken one at once, a stop hands every one still parked
 * to the pool; and the pool's spare queue (workers.h) takes them even when
 * the ordinary queue is full. */
#include "config.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

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

TestSuite(parker, .init = reset);

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
