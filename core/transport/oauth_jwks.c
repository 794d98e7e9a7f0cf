/* The issuer's keys: a cache of its JWKS, filled by one fetcher thread
 * (one fetch at a time, however many requests wait for it), so that no
 * request's thread ever blocks on the network. The set is fetched at the
 * first token, again when Cache-Control says it is stale, and again when
 * a token names a kid the set lacks, at most once per OAUTH_KID_REFETCH_S:
 * made-up kids cost no flood of fetches. Without a configured jwks_uri it
 * is read from the issuer's RFC 8414 metadata, else its OpenID Connect
 * discovery document, whose issuer must be the configured one. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/curl_lib.h"
#include "base/http_url.h"
#include "transport/oauth_internal.h"

struct waiter {
	void (*ready)(void *arg);
	void *arg;
	struct waiter *next;
};

struct oauth_jwks {
	char *issuer;
	char *configured_uri; /* or NULL */
	pthread_t thread;
	int stop; /* atomic */
	pthread_mutex_t lock;
	pthread_cond_t wake; /* work for the fetcher */
	pthread_cond_t done; /* a fetch ended */
	/* Under lock: */
	char *discovered_uri; /* the fetcher's only */
	bool want;            /* a fetch is asked for */
	bool fetching;        /* asked for or running */
	unsigned long generation;
	json_t *keys; /* the set's "keys", or NULL */
	int64_t expires_ms;
	int64_t failed_ms;      /* when the last fetch failed, or 0 */
	int64_t kid_refetch_ms; /* when an unknown kid last fetched, or 0 */
	char error[320];        /* why the last fetch failed */
	struct waiter *waiters;
	unsigned long fetches; /* HTTP GETs made */
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 1;
}

static int fetch_counted(struct oauth_jwks *s, const char *url,
                         struct oauth_doc *d, char *why, size_t whylen)
{
	pthread_mutex_lock(&s->lock);
	s->fetches++;
	pthread_mutex_unlock(&s->lock);
	return oauth_fetch_json(url, &s->stop, d, why, whylen);
}

/* The metadata URLs of an issuer: RFC 8414's (the well-known path before
 * the issuer's path) and OpenID Connect's (after it). */
static int metadata_urls(const char *issuer, char urls[2][1024])
{
	CURLU *u = tb_curl.url();
	char *path = NULL, *origin = NULL;
	size_t n = strlen(issuer);
	int rc = -1;

	if (!u || tb_curl.url_set(u, CURLUPART_URL, issuer, 0) != CURLUE_OK ||
	    tb_curl.url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK ||
	    tb_curl.url_set(u, CURLUPART_PATH, "/", 0) != CURLUE_OK ||
	    tb_curl.url_get(u, CURLUPART_URL, &origin, 0) != CURLUE_OK)
		goto out;
	size_t o = strlen(origin), p = strlen(path);
	if (o && origin[o - 1] == '/')
		o--;
	if (p && path[p - 1] == '/')
		p--;
	if (n && issuer[n - 1] == '/')
		n--;
	snprintf(urls[0], 1024,
	         "%.*s/.well-known/oauth-authorization-server%.*s", (int)o,
	         origin, (int)p, path);
	snprintf(urls[1], 1024, "%.*s/.well-known/openid-configuration", (int)n,
	         issuer);
	rc = 0;
out:
	tb_curl.free(path);
	tb_curl.free(origin);
	tb_curl.url_cleanup(u);
	return rc;
}

/* Finds the jwks_uri in the issuer's metadata; a new string, or NULL with
 * why. */
static char *discover(struct oauth_jwks *s, char *why, size_t whylen)
{
	char urls[2][1024];

	if (metadata_urls(s->issuer, urls) < 0) {
		snprintf(why, whylen, "the issuer %.256s is not a URL",
		         s->issuer);
		return NULL;
	}
	for (int i = 0; i < 2; i++) {
		struct oauth_doc d;
		if (fetch_counted(s, urls[i], &d, why, whylen) < 0)
			continue;
		const char *iss =
		    json_string_value(json_object_get(d.json, "issuer"));
		const char *uri =
		    json_string_value(json_object_get(d.json, "jwks_uri"));
		char *out = NULL;
		if (!iss || strcmp(iss, s->issuer) != 0)
			snprintf(why, whylen,
			         "%.128s: its issuer is not %.128s (RFC 8414 "
			         "section 3.3)",
			         urls[i], s->issuer);
		else if (!uri || !tb_url_https_or_loopback(uri))
			snprintf(
			    why, whylen,
			    "%.200s: jwks_uri is missing, or neither https "
			    "nor http to a loopback address",
			    urls[i]);
		else if (!(out = strdup(uri)))
			snprintf(why, whylen, "out of memory");
		json_decref(d.json);
		if (out)
			return out;
	}
	return NULL;
}

/* One fetch of the set: its "keys" (a new reference) and max-age. */
static json_t *fetch_keys(struct oauth_jwks *s, int64_t *max_age_s, char *why,
                          size_t whylen)
{
	const char *uri = s->configured_uri;
	struct oauth_doc d;
	json_t *keys;

	if (!uri && !s->discovered_uri)
		s->discovered_uri = discover(s, why, whylen);
	uri = uri ? uri : s->discovered_uri;
	if (!uri)
		return NULL;
	if (fetch_counted(s, uri, &d, why, whylen) < 0) {
		free(s->discovered_uri); /* found again next time */
		s->discovered_uri = NULL;
		return NULL;
	}
	keys = json_incref(json_object_get(d.json, "keys"));
	json_decref(d.json);
	if (!json_is_array(keys)) {
		json_decref(keys);
		snprintf(why, whylen,
		         "%.256s: not a JWK set (no \"keys\" list)", uri);
		return NULL;
	}
	*max_age_s = d.max_age_s;
	return keys;
}

static int64_t cache_s(int64_t max_age_s)
{
	if (max_age_s < 0)
		return OAUTH_CACHE_DEFAULT_S;
	if (max_age_s < OAUTH_CACHE_MIN_S)
		return OAUTH_CACHE_MIN_S;
	return max_age_s > OAUTH_CACHE_MAX_S ? OAUTH_CACHE_MAX_S : max_age_s;
}

/* Ends a fetch (under lock): stores its outcome and hands back the
 * waiters to call. */
static struct waiter *fetch_ended(struct oauth_jwks *s, json_t *keys,
                                  int64_t max_age_s, const char *why)
{
	struct waiter *w = s->waiters;

	if (keys) {
		json_decref(s->keys);
		s->keys = keys;
		s->expires_ms = now_ms() + cache_s(max_age_s) * 1000;
		s->failed_ms = 0;
	} else {
		s->failed_ms = now_ms();
		snprintf(s->error, sizeof s->error, "%s", why);
	}
	s->fetching = false;
	s->generation++;
	s->waiters = NULL;
	pthread_cond_broadcast(&s->done);
	return w;
}

static void *fetcher(void *cls)
{
	struct oauth_jwks *s = cls;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->want && !__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
			pthread_cond_wait(&s->wake, &s->lock);
		if (__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
			break;
		s->want = false;
		pthread_mutex_unlock(&s->lock);
		char why[320] = "";
		int64_t max_age_s = -1;
		json_t *keys = fetch_keys(s, &max_age_s, why, sizeof why);
		pthread_mutex_lock(&s->lock);
		struct waiter *w = fetch_ended(s, keys, max_age_s, why);
		pthread_mutex_unlock(&s->lock);
		while (w) {
			struct waiter *next = w->next;
			w->ready(w->arg);
			free(w);
			w = next;
		}
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct oauth_jwks *oauth_jwks_new(const char *issuer, const char *jwks_uri)
{
	struct oauth_jwks *s = calloc(1, sizeof *s);

	if (!s)
		return NULL;
	s->issuer = strdup(issuer);
	s->configured_uri = jwks_uri ? strdup(jwks_uri) : NULL;
	if (!s->issuer || (jwks_uri && !s->configured_uri))
		goto fail;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	pthread_cond_init(&s->done, NULL);
	if (pthread_create(&s->thread, NULL, fetcher, s) != 0) {
		pthread_cond_destroy(&s->done);
		pthread_cond_destroy(&s->wake);
		pthread_mutex_destroy(&s->lock);
		goto fail;
	}
	return s;
fail:
	free(s->configured_uri);
	free(s->issuer);
	free(s);
	return NULL;
}

void oauth_jwks_free(struct oauth_jwks *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	while (s->waiters) {
		struct waiter *next = s->waiters->next;
		free(s->waiters);
		s->waiters = next;
	}
	json_decref(s->keys);
	pthread_cond_destroy(&s->done);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s->discovered_uri);
	free(s->configured_uri);
	free(s->issuer);
	free(s);
}

/* The key with kid in the cached set (borrowed), or NULL. */
static json_t *find_locked(struct oauth_jwks *s, const char *kid)
{
	size_t i;
	json_t *k;

	json_array_foreach(s->keys, i, k)
	{
		const char *id = json_string_value(json_object_get(k, "kid"));
		if (json_is_object(k) && id && strcmp(id, kid) == 0)
			return k;
	}
	return NULL;
}

/* What a lookup does now (under lock): FOUND, UNKNOWN, UNAVAILABLE, or
 * PENDING when a fetch runs or was started for it. */
static enum oauth_key_result decide_locked(struct oauth_jwks *s,
                                           const char *kid, bool may_start,
                                           json_t **jwk)
{
	int64_t now = now_ms();
	bool fresh = s->keys && now < s->expires_ms;

	if (fresh && kid && (*jwk = find_locked(s, kid)) != NULL) {
		json_incref(*jwk);
		return OAUTH_KEY_FOUND;
	}
	if (s->fetching)
		return OAUTH_KEY_PENDING;
	if (fresh) {
		if (!may_start ||
		    (s->kid_refetch_ms &&
		     now - s->kid_refetch_ms < OAUTH_KID_REFETCH_S * 1000))
			return OAUTH_KEY_UNKNOWN;
		s->kid_refetch_ms = now;
	} else if (!may_start || (s->failed_ms &&
	                          now - s->failed_ms < OAUTH_RETRY_S * 1000)) {
		return s->failed_ms ? OAUTH_KEY_UNAVAILABLE : OAUTH_KEY_UNKNOWN;
	}
	s->want = true;
	s->fetching = true;
	pthread_cond_signal(&s->wake);
	return OAUTH_KEY_PENDING;
}

enum oauth_key_result oauth_jwks_key(struct oauth_jwks *s, const char *kid,
                                     json_t **jwk, void (*ready)(void *),
                                     void *arg, char *why, size_t whylen)
{
	enum oauth_key_result r;
	bool may_start = true;

	*jwk = NULL;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		r = decide_locked(s, kid, may_start, jwk);
		if (r != OAUTH_KEY_PENDING)
			break;
		if (ready) {
			struct waiter *w = malloc(sizeof *w);
			if (!w) {
				r = OAUTH_KEY_UNAVAILABLE;
				snprintf(s->error, sizeof s->error,
				         "out of memory");
				break;
			}
			*w = (struct waiter){ready, arg, s->waiters};
			s->waiters = w;
			break;
		}
		/* Waits for this fetch's end, then decides once more
		 * without starting another. */
		unsigned long gen = s->generation;
		while (s->generation == gen)
			pthread_cond_wait(&s->done, &s->lock);
		may_start = false;
	}
	if (r == OAUTH_KEY_UNAVAILABLE)
		snprintf(why, whylen, "%s", s->error);
	pthread_mutex_unlock(&s->lock);
	return r;
}

unsigned oauth_jwks_retry_after_s(struct oauth_jwks *s)
{
	int64_t left;

	pthread_mutex_lock(&s->lock);
	left =
	    s->failed_ms ? s->failed_ms + OAUTH_RETRY_S * 1000 - now_ms() : 0;
	pthread_mutex_unlock(&s->lock);
	return left > 1000 ? (unsigned)((left + 999) / 1000) : 1;
}

unsigned long oauth_jwks_fetches(struct oauth_jwks *s)
{
	unsigned long n;

	pthread_mutex_lock(&s->lock);
	n = s->fetches;
	pthread_mutex_unlock(&s->lock);
	return n;
}
