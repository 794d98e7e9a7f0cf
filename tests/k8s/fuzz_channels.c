/* libFuzzer target over the channel decoder: the input is a run of
 * WebSocket data messages, each a 2-byte little-endian length and its
 * bytes (channel byte first), after a first byte giving the output limit
 * and whether the pid marker is expected. Checks the limits and that the
 * Status reader never overruns. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../plugins/k8s/k8s_int.h"
#include "../common/quiet_host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct taskbox_exec_result res;
	struct tb_k8s_chan ch;
	size_t limit;
	int code;
	char msg[64];

	if (size < 1)
		return 0;
	memset(&res, 0, sizeof res);
	res.struct_size = sizeof res;
	limit = (data[0] & 0x7f) * 5u;
	tb_k8s_chan_init(&ch, &quiet_host, &res, limit, data[0] >> 7);
	data++;
	size--;
	while (size >= 2) {
		size_t n = (size_t)data[0] | (size_t)data[1] << 8;
		data += 2;
		size -= 2;
		if (n > size)
			n = size;
		if (tb_k8s_chan_feed(&ch, data, n) != 0)
			break;
		data += n;
		size -= n;
	}
	tb_k8s_chan_finish(&ch);
	(void)tb_k8s_chan_status(&ch, &code, msg, sizeof msg);
	if (code < -1 || code > 255)
		abort();
	if (limit && (res.out.len > limit || res.err.len > limit))
		abort();
	if (strnlen(msg, sizeof msg) >= sizeof msg)
		abort();
	tb_k8s_chan_free(&ch);
	free(res.out.data);
	free(res.err.data);
	return 0;
}
