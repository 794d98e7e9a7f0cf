/* The physical floor for an MCP round trip: a minimal stdio JSON-RPC loop.
 *
 * It answers `initialize` with a bare result and every other request with an
 * empty result (which is what `ping` expects); notifications get no answer.
 * It does no JSON parsing beyond finding the request id and method, so its
 * latency is the cost of the pipe, the client and the kernel, nothing else.
 * Not a server: the benchmark's yardstick only. */
#include <stdio.h>
#include <string.h>

/* Copies the JSON value that follows `"id":` in line into out (a number or a
 * string, as the client sent it). Returns 0 when the line has no id. */
static int find_id(const char *line, char *out, size_t cap)
{
	const char *p = strstr(line, "\"id\":");
	if (!p)
		return 0;
	p += 5;
	while (*p == ' ')
		p++;
	size_t n = 0;
	if (*p == '"') {
		out[n++] = *p++;
		while (*p && *p != '"' && n + 2 < cap) {
			if (*p == '\\' && p[1])
				out[n++] = *p++;
			out[n++] = *p++;
		}
		out[n++] = '"';
	} else {
		while (*p && *p != ',' && *p != '}' && *p != ' ' && n + 1 < cap)
			out[n++] = *p++;
	}
	out[n] = '\0';
	return n > 0;
}

int main(void)
{
	static char line[1 << 20];
	char id[256];

	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	while (fgets(line, sizeof line, stdin)) {
		if (!find_id(line, id, sizeof id))
			continue; /* a notification */
		if (strstr(line, "\"method\":\"initialize\""))
			printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{"
			       "\"protocolVersion\":\"2025-06-18\","
			       "\"capabilities\":{},"
			       "\"serverInfo\":{\"name\":\"echo\",\"version\":"
			       "\"0\"}}}\n",
			       id);
		else
			printf(
			    "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n",
			    id);
		fflush(stdout);
	}
	return 0;
}
