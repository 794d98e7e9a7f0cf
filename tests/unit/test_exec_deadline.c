/* The exec deadline ladder the docker and k8s plugins share
 * (plugins/common/exec_deadline.c), on a clock of the test's: TERM, KILL
 * and giving up in order, a cancel's KILL, and signals due before the
 * command's pid came sent once it comes. */
#include <criterion/criterion.h>
#include <string.h>

#include "exec_deadline.h"
#include "taskbox/provider.h"

static uint64_t clock_now;
static int has_pid, is_cancelled;
static char sent[8][8];
static int n_sent;

static uint64_t test_clock(void)
{
	return clock_now;
}

static int cancelled(void *arg)
{
	(void)arg;
	return is_cancelled;
}

/* Records SIG as sent when the pid has come. */
static int signal_group(void *ctx, const char *sig)
{
	(void)ctx;
	if (!has_pid)
		return 0;
	cr_assert_lt(n_sent, 8);
	strcpy(sent[n_sent++], sig);
	return 1;
}

static int tick_at(struct tb_exec_deadline *d, uint64_t now)
{
	clock_now = now;
	return tb_exec_deadline_tick(d, test_clock, cancelled, NULL,
	                             signal_group, NULL);
}

static void setup(void)
{
	clock_now = 0;
	has_pid = 1;
	is_cancelled = 0;
	n_sent = 0;
}

static struct tb_exec_deadline ladder(void)
{
	struct tb_exec_deadline d;

	memset(&d, 0, sizeof d);
	d.deadline = 1000;
	d.term_grace_ms = 500;
	d.abandon_ms = 2000;
	return d;
}

Test(exec_deadline, term_then_kill_then_give_up, .init = setup)
{
	struct tb_exec_deadline d = ladder();

	cr_assert_eq(tick_at(&d, 999), TASKBOX_OK);
	cr_assert_eq(n_sent, 0);
	cr_assert_eq(tick_at(&d, 1000), TASKBOX_OK);
	cr_assert_eq(n_sent, 1);
	cr_assert_str_eq(sent[0], "TERM");
	cr_assert_eq(tick_at(&d, 1499), TASKBOX_OK);
	cr_assert_eq(n_sent, 1);
	cr_assert_eq(tick_at(&d, 1500), TASKBOX_OK);
	cr_assert_eq(n_sent, 2);
	cr_assert_str_eq(sent[1], "KILL");
	cr_assert_eq(tick_at(&d, 2999), TASKBOX_OK);
	cr_assert_eq(tick_at(&d, 3000), TASKBOX_E_TIMEOUT);
	cr_assert_eq(n_sent, 2, "each signal is sent once");
	cr_assert(d.timed_out);
}

Test(exec_deadline, a_cancel_kills_at_once, .init = setup)
{
	struct tb_exec_deadline d = ladder();

	cr_assert_eq(tick_at(&d, 10), TASKBOX_OK);
	is_cancelled = 1;
	cr_assert_eq(tick_at(&d, 20), TASKBOX_E_CANCELLED);
	cr_assert_eq(n_sent, 1);
	cr_assert_str_eq(sent[0], "KILL");
}

Test(exec_deadline, a_cancel_before_the_pid_kills_once_it_comes, .init = setup)
{
	struct tb_exec_deadline d = ladder();

	has_pid = 0;
	is_cancelled = 1;
	cr_assert_eq(tick_at(&d, 10), TASKBOX_OK, "waits for the pid");
	is_cancelled = 0; /* asked once: the cancel is remembered */
	cr_assert_eq(tick_at(&d, 300), TASKBOX_OK);
	cr_assert_eq(n_sent, 0);
	has_pid = 1;
	cr_assert_eq(tick_at(&d, 400), TASKBOX_E_CANCELLED);
	cr_assert_eq(n_sent, 1);
	cr_assert_str_eq(sent[0], "KILL");
}

Test(exec_deadline, a_cancel_gives_up_on_a_pid_that_never_comes, .init = setup)
{
	struct tb_exec_deadline d = ladder();

	has_pid = 0;
	is_cancelled = 1;
	cr_assert_eq(tick_at(&d, 10), TASKBOX_OK);
	cr_assert_eq(tick_at(&d, 10 + TB_EXEC_PID_WAIT_MS - 1), TASKBOX_OK);
	cr_assert_eq(tick_at(&d, 10 + TB_EXEC_PID_WAIT_MS),
	             TASKBOX_E_CANCELLED);
	cr_assert_eq(n_sent, 0);
}

Test(exec_deadline, a_pid_after_the_deadline_gets_the_term, .init = setup)
{
	struct tb_exec_deadline d = ladder();

	has_pid = 0;
	cr_assert_eq(tick_at(&d, 1000), TASKBOX_OK);
	cr_assert_eq(n_sent, 0);
	has_pid = 1;
	cr_assert_eq(tick_at(&d, 1100), TASKBOX_OK);
	cr_assert_eq(n_sent, 1);
	cr_assert_str_eq(sent[0], "TERM");
	cr_assert_eq(tick_at(&d, 1500), TASKBOX_OK);
	cr_assert_eq(n_sent, 2);
	cr_assert_str_eq(sent[1], "KILL");
	cr_assert_eq(tick_at(&d, 3000), TASKBOX_E_TIMEOUT);
}

Test(exec_deadline, a_pid_past_the_grace_gets_the_kill, .init = setup)
{
	struct tb_exec_deadline d = ladder();

	has_pid = 0;
	cr_assert_eq(tick_at(&d, 1000), TASKBOX_OK);
	cr_assert_eq(tick_at(&d, 1600), TASKBOX_OK);
	has_pid = 1;
	cr_assert_eq(tick_at(&d, 1700), TASKBOX_OK);
	cr_assert_eq(n_sent, 1);
	cr_assert_str_eq(sent[0], "KILL");
	cr_assert_eq(tick_at(&d, 1800), TASKBOX_OK);
	cr_assert_eq(n_sent, 1, "no TERM after the KILL");
}

Test(exec_deadline, without_a_pid_it_still_gives_up, .init = setup)
{
	struct tb_exec_deadline d = ladder();

	has_pid = 0;
	cr_assert_eq(tick_at(&d, 1000), TASKBOX_OK);
	cr_assert_eq(tick_at(&d, 2999), TASKBOX_OK);
	cr_assert_eq(tick_at(&d, 3000), TASKBOX_E_TIMEOUT);
	cr_assert_eq(n_sent, 0);
}
