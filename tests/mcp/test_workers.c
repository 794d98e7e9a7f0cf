/* The worker pool's lead (workers.h): a job kept by the lead's holder runs
 * on that thread; a quick one leaves the lead there, a long one has it
 * handed to another thread after the lend time; with no idle thread the
 * job queues and the holder keeps the lead; the lead's end is seen by
 * tb_workers_wait_lead. */
#include "config.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "protocol/workers.h"

/* A lead fed by a script: each step either submits a job or ends. */
struct script {
	struct tb_workers *pool;
	pthread_mutex_t lock;
	pthread_cond_t moved; /* a step was taken or a job changed */
	int steps;            /* steps the test allows */
	int taken;            /* steps the lead took */
	bool end;             /* the next step ends the lead */
	int kept;             /* steps whose job stayed on the holder */
	int refused;          /* submits that failed */
	pthread_t leader[16]; /* the thread that took each step */
};

struct job {
	pthread_t ran_on;
	atomic_int state; /* 0 queued, 1 running, 2 done */
	atomic_int release;
	int linger_ms; /* how long it runs once released */
};

static struct job jobs[16];

static void run_job(void *arg)
{
	struct job *j = arg;

	j->ran_on = pthread_self();
	atomic_store(&j->state, 1);
	while (!atomic_load(&j->release))
		usleep(1000);
	usleep((useconds_t)j->linger_ms * 1000);
	atomic_store(&j->state, 2);
}

static bool lead(void *ctx)
{
	struct script *s = ctx;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (s->taken == s->steps && !s->end)
			pthread_cond_wait(&s->moved, &s->lock);
		if (s->taken == s->steps) {
			pthread_mutex_unlock(&s->lock);
			return true;
		}
		int step = s->taken++;
		s->leader[step] = pthread_self();
		if (tb_workers_submit(s->pool, run_job, &jobs[step]) != 0)
			s->refused++; /* asserted on the test's thread */
		if (tb_workers_yielding())
			s->kept++;
		pthread_cond_broadcast(&s->moved);
		if (tb_workers_yielding()) {
			pthread_mutex_unlock(&s->lock);
			return false;
		}
	}
}

static void allow(struct script *s, int steps)
{
	pthread_mutex_lock(&s->lock);
	s->steps = steps;
	pthread_cond_broadcast(&s->moved);
	while (s->taken < steps)
		pthread_cond_wait(&s->moved, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

static void wait_state(int step, int state)
{
	for (int i = 0; i < 10000 && atomic_load(&jobs[step].state) != state;
	     i++)
		usleep(1000);
	cr_assert_eq(atomic_load(&jobs[step].state), state, "job %d", step);
}

/* A pool of threads whose lead is the script; lend_ns 0 keeps the
 * default lend time. */
static void setup(struct script *s, unsigned threads, long lend_ns)
{
	memset(jobs, 0, sizeof jobs);
	memset(s, 0, sizeof *s);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->moved, NULL);
	s->pool = tb_workers_new(threads, 4);
	cr_assert_not_null(s->pool);
	if (lend_ns)
		tb_workers_lend_time(s->pool, lend_ns);
	cr_assert_eq(tb_workers_lead(s->pool, lead, s), 0);
}

static void finish(struct script *s, int jobs_used)
{
	for (int i = 0; i < jobs_used; i++)
		atomic_store(&jobs[i].release, 1);
	pthread_mutex_lock(&s->lock);
	s->end = true;
	pthread_cond_broadcast(&s->moved);
	pthread_mutex_unlock(&s->lock);
	tb_workers_wait_lead(s->pool);
	tb_workers_drain(s->pool);
	cr_assert_eq(s->refused, 0);
	for (int i = 0; i < jobs_used; i++)
		cr_assert_eq(atomic_load(&jobs[i].state), 2, "job %d ran", i);
	pthread_cond_destroy(&s->moved);
	pthread_mutex_destroy(&s->lock);
}

Test(workers, a_job_runs_on_the_thread_that_read_it_when_one_is_idle,
     .timeout = 60)
{
	struct script s;

	setup(&s, 3, 0);
	/* Step 0: no thread is idle yet, so the job queues. */
	allow(&s, 1);
	wait_state(0, 1);
	cr_assert(!pthread_equal(jobs[0].ran_on, s.leader[0]));
	atomic_store(&jobs[0].release, 1);
	wait_state(0, 2);
	/* Step 1: the thread that ran job 0 is idle: the holder keeps job 1,
	 * which outlasts the lend time, so that idle thread takes the lead
	 * for step 2. */
	usleep(20000);
	allow(&s, 2);
	wait_state(1, 1);
	cr_assert(pthread_equal(jobs[1].ran_on, s.leader[1]),
	          "job 1 ran on the thread that read it");
	allow(&s, 3);
	cr_assert(!pthread_equal(s.leader[2], s.leader[1]),
	          "another thread leads while job 1 runs");
	cr_assert_geq(s.kept, 1);
	finish(&s, 3);
}

Test(workers, with_every_thread_busy_the_job_queues_and_the_lead_stays,
     .timeout = 60)
{
	struct script s;

	setup(&s, 2, 0); /* the lead and one thread for jobs */
	allow(&s, 1);
	wait_state(0, 1);
	/* Job 0 holds the only other thread: job 1 must queue, and the
	 * holder must keep leading (step 2 is taken while both wait). */
	allow(&s, 2);
	allow(&s, 3);
	cr_assert_eq(s.kept, 0);
	cr_assert(pthread_equal(s.leader[1], s.leader[2]));
	cr_assert_eq(atomic_load(&jobs[1].state), 0, "job 1 waits its turn");
	atomic_store(&jobs[0].release, 1);
	wait_state(1, 1);
	cr_assert(!pthread_equal(jobs[1].ran_on, s.leader[1]));
	finish(&s, 3);
}

Test(workers, a_quick_kept_job_leaves_the_lead_with_its_thread, .timeout = 60)
{
	struct script s;
	const int steps = 8;

	/* Jobs long enough for an idle thread to wake and take a lead handed
	 * on at once, under a lend time none comes near. */
	setup(&s, 3, 10L * 1000000000L);
	for (int i = 0; i <= steps; i++) {
		jobs[i].linger_ms = 20;
		atomic_store(&jobs[i].release, 1);
	}
	allow(&s, 1); /* no thread idle yet: job 0 queues */
	wait_state(0, 2);
	usleep(20000); /* its thread is idle again */
	for (int i = 1; i < steps; i++) {
		allow(&s, i + 1);
		wait_state(i, 2);
	}
	allow(&s, steps + 1);
	for (int i = 1; i < steps; i++) {
		cr_assert(pthread_equal(jobs[i].ran_on, s.leader[i]),
		          "job %d ran on the thread that read it", i);
		cr_assert(pthread_equal(s.leader[i + 1], s.leader[i]),
		          "the lead stayed on after job %d", i);
	}
	cr_assert_eq(s.kept, steps, "jobs 1 to %d were kept", steps);
	finish(&s, steps + 1);
}

Test(workers, a_pool_without_a_lead_runs_jobs_on_its_threads)
{
	struct tb_workers *w = tb_workers_new(2, 2);

	cr_assert_not_null(w);
	memset(jobs, 0, sizeof jobs);
	atomic_store(&jobs[0].release, 1);
	cr_assert_eq(tb_workers_submit(w, run_job, &jobs[0]), 0);
	cr_assert(!tb_workers_yielding());
	tb_workers_drain(w);
	cr_assert_eq(atomic_load(&jobs[0].state), 2);
	cr_assert(!pthread_equal(jobs[0].ran_on, pthread_self()));
}
