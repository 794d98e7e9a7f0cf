/* libFuzzer target over the decoder of envd's process stream: Connect
 * envelopes of proto-JSON events, fed in two pieces cut where the first
 * input byte says, with an output limit taken from the second. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "../../plugins/e2b/e2b_int.h"
#include "../common/quiet_host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct taskbox_exec_result res = {0};
	struct tb_pstream ps;
	size_t cut, limit;

	if (size < 2)
		return 0;
	cut = data[0];
	limit = data[1] * 7u;
	data += 2;
	size -= 2;
	if (cut > size)
		cut = size;
	res.struct_size = sizeof res;
	tb_pstream_init(&ps, &quiet_host, &res, limit);
	if (tb_pstream_feed(&ps, data, cut) == 0)
		tb_pstream_feed(&ps, data + cut, size - cut);
	(void)tb_pstream_complete(&ps);
	if (limit && (res.out.len > limit || res.err.len > limit))
		abort();
	tb_pstream_free(&ps);
	free(res.out.data);
	free(res.err.data);
	return 0;
}
