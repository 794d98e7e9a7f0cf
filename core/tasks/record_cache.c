/* The status record cache of record_cache.h: a few slots, one per task,
 * replaced least recently used first. A hit costs a memcmp of the text. A
 * slot whose record is finished may also hold the task's logs. */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/record_cache.h"
#include "host/registry.h"

#define SLOTS 32
#define TEXT_MAX 4096 /* longer records (long commands) are not kept */

/* Records are shared between threads, so the cache needs jansson's atomic
 * reference counts; without them every read is parsed. */
#ifndef JANSSON_THREAD_SAFE_REFCOUNT
#define JANSSON_THREAD_SAFE_REFCOUNT 0
#endif

struct slot {
	char *text; /* NULL: empty */
	size_t len;
	struct tb_task_record rec; /* holds a reference to rec.json */
	unsigned long used;
	unsigned char *log[2]; /* a finished task's whole logs, or NULL */
	size_t log_len[2];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[SLOTS];
static unsigned long ticks;

/* With the lock held: the slot of task_id, or NULL. */
static struct slot *find(const char *task_id)
{
	for (int i = 0; i < SLOTS; i++)
		if (slots[i].text && !strcmp(slots[i].rec.task_id, task_id))
			return &slots[i];
	return NULL;
}

static void empty(struct slot *s)
{
	free(s->text);
	free(s->log[TB_LOG_STDOUT]);
	free(s->log[TB_LOG_STDERR]);
	tb_task_record_clear(&s->rec);
	memset(s, 0, sizeof(*s));
}

/* With the lock held: keeps a copy of text and a reference to rec in the
 * task's slot, else in the least recently used one. */
static void keep(const char *text, size_t len, const struct tb_task_record *rec)
{
	struct slot *s = find(rec->task_id);
	char *copy = malloc(len);

	if (!copy)
		return;
	memcpy(copy, text, len);
	if (!s) {
		/* The least recently used; an empty slot's used is 0. */
		s = &slots[0];
		for (int i = 1; i < SLOTS; i++)
			if (slots[i].used < s->used)
				s = &slots[i];
	}
	empty(s);
	s->text = copy;
	s->len = len;
	s->rec = *rec;
	json_incref(s->rec.json);
	s->used = ++ticks;
}

int tb_record_cache_parse(const char *text, size_t len, const char *expect_id,
                          struct tb_task_record *rec, char *err, size_t errlen)
{
	pthread_mutex_lock(&lock);
	struct slot *s = find(expect_id);
	if (s && s->len == len && !memcmp(s->text, text, len)) {
		*rec = s->rec;
		json_incref(rec->json);
		s->used = ++ticks;
		pthread_mutex_unlock(&lock);
		return 0;
	}
	pthread_mutex_unlock(&lock);
	if (tb_task_record_parse(text, len, expect_id, rec, err, errlen) < 0)
		return -1;
	if (JANSSON_THREAD_SAFE_REFCOUNT && len <= TEXT_MAX) {
		pthread_mutex_lock(&lock);
		keep(text, len, rec);
		pthread_mutex_unlock(&lock);
	}
	return 0;
}

/* With the lock held: the slot holding rec itself (the same json, so the
 * same text), or NULL. */
static struct slot *holding(const struct tb_task_record *rec)
{
	struct slot *s = rec->json ? find(rec->task_id) : NULL;

	return s && s->rec.json == rec->json ? s : NULL;
}

void tb_record_cache_keep_log(const struct tb_task_record *rec,
                              enum tb_log_stream stream,
                              const unsigned char *data, size_t len)
{
	int64_t recorded =
	    stream == TB_LOG_STDOUT ? rec->stdout_bytes : rec->stderr_bytes;
	unsigned char *copy;
	struct slot *s;

	if (!tb_task_state_terminal(rec->state) || recorded < 0 ||
	    (uint64_t)recorded != len || len > TB_RECORD_LOG_MAX)
		return;
	copy = malloc(len ? len : 1);
	if (!copy)
		return;
	if (len)
		memcpy(copy, data, len);
	pthread_mutex_lock(&lock);
	s = holding(rec);
	if (s && !s->log[stream]) {
		s->log[stream] = copy;
		s->log_len[stream] = len;
		copy = NULL;
	}
	pthread_mutex_unlock(&lock);
	free(copy);
}

int tb_record_cache_log_page(const struct tb_task_record *rec,
                             enum tb_log_stream stream, uint64_t offset,
                             size_t limit, struct taskbox_buf *page)
{
	struct slot *s;
	size_t n = 0;
	int hit = 0;

	page->data = NULL;
	page->len = 0;
	pthread_mutex_lock(&lock);
	s = holding(rec);
	if (s && s->log[stream]) {
		if (offset < s->log_len[stream])
			n = s->log_len[stream] - (size_t)offset;
		if (n > limit)
			n = limit;
		page->data = n ? tb_host()->alloc(n) : NULL;
		if (n == 0 || page->data) {
			if (n)
				memcpy(page->data, s->log[stream] + offset, n);
			page->len = n;
			hit = 1;
		}
	}
	pthread_mutex_unlock(&lock);
	return hit;
}

/* With the lock held: whether slot s answers a page of stream from offset
 * without a read. */
static bool page_kept(const struct slot *s, enum tb_log_stream stream,
                      uint64_t offset)
{
	int64_t recorded =
	    stream == TB_LOG_STDOUT ? s->rec.stdout_bytes : s->rec.stderr_bytes;

	return recorded >= 0 &&
	       (offset >= (uint64_t)recorded || s->log[stream] != NULL);
}

bool tb_record_cache_pages_kept(const char *task_id, uint64_t stdout_offset,
                                uint64_t stderr_offset)
{
	bool kept;

	pthread_mutex_lock(&lock);
	struct slot *s = find(task_id);
	kept = s && tb_task_state_terminal(s->rec.state) &&
	       page_kept(s, TB_LOG_STDOUT, stdout_offset) &&
	       page_kept(s, TB_LOG_STDERR, stderr_offset);
	pthread_mutex_unlock(&lock);
	return kept;
}

void tb_record_cache_clear(void)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < SLOTS; i++)
		empty(&slots[i]);
	pthread_mutex_unlock(&lock);
}
