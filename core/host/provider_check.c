/* The host's checks on a plugin's descriptor (see provider_check.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "host/provider_check.h"

#define OPS_OFFSET(op)                                                         \
	(offsetof(struct taskbox_provider, ops) +                              \
	 offsetof(struct taskbox_provider_ops, op))

struct required_op {
	const char *name;
	size_t offset;
};

/* Required ops of ABI minor 0, in struct order. */
static const struct required_op required_ops[] = {
    {"init", OPS_OFFSET(init)},           {"fini", OPS_OFFSET(fini)},
    {"create", OPS_OFFSET(create)},       {"connect", OPS_OFFSET(connect)},
    {"close", OPS_OFFSET(close)},         {"exec", OPS_OFFSET(exec)},
    {"read_file", OPS_OFFSET(read_file)}, {"destroy", OPS_OFFSET(destroy)},
};

#define N_REQUIRED (sizeof required_ops / sizeof required_ops[0])

size_t tb_provider_min_size(uint32_t minor)
{
	switch (minor) {
	case 0:
	case 1: /* 1.1 appended features, which may be absent (no features) */
	case 2: /* 1.2 appended the optional read_files */
	case 3: /* 1.3 appended taskbox_exec_req's until_newline */
	case 4: /* 1.4 appended taskbox_exec_req's stdin_data, stdin_len */
	case 5: /* 1.5 appended create_req.owner and the optional describe, list
	         */
		return OPS_OFFSET(destroy) + sizeof(void (*)(void));
	default:
		return 0;
	}
}

int tb_plugin_name_valid(const char *name)
{
	size_t n;

	if (!name || !(name[0] >= 'a' && name[0] <= 'z'))
		return 0;
	for (n = 1; name[n]; n++) {
		char c = name[n];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return 0;
	}
	return n <= 32;
}

/* True when the function pointer stored at offset in desc is non-NULL. */
static int op_present(const struct taskbox_provider *desc, size_t offset)
{
	void (*fn)(void);

	memcpy(&fn, (const unsigned char *)desc + offset, sizeof fn);
	return fn != NULL;
}

int tb_provider_check(const struct taskbox_provider *desc, const char *modname,
                      struct taskbox_provider *out, char *err, size_t errlen)
{
	size_t min, copy;

	memset(out, 0, sizeof *out);
	if (!desc) {
		snprintf(err, errlen, "entry returned NULL");
		return -1;
	}
	if (desc->abi_major != TASKBOX_ABI_MAJOR) {
		snprintf(err, errlen, "ABI major %u, host speaks %u",
		         (unsigned)desc->abi_major,
		         (unsigned)TASKBOX_ABI_MAJOR);
		return -1;
	}
	if (desc->abi_minor > TASKBOX_ABI_MINOR) {
		snprintf(err, errlen,
		         "ABI minor %u is newer than the host's %u.%u",
		         (unsigned)desc->abi_minor, (unsigned)TASKBOX_ABI_MAJOR,
		         (unsigned)TASKBOX_ABI_MINOR);
		return -1;
	}
	min = tb_provider_min_size(desc->abi_minor);
	if (desc->struct_size < min) {
		snprintf(err, errlen,
		         "struct_size %zu is shorter than %zu, the minimum "
		         "for ABI %u.%u",
		         desc->struct_size, min, (unsigned)desc->abi_major,
		         (unsigned)desc->abi_minor);
		return -1;
	}
	for (size_t i = 0; i < N_REQUIRED; i++) {
		if (!op_present(desc, required_ops[i].offset)) {
			snprintf(err, errlen, "required op %s is NULL",
			         required_ops[i].name);
			return -1;
		}
	}
	if (!desc->name) {
		snprintf(err, errlen, "descriptor has no name");
		return -1;
	}
	if (strcmp(desc->name, modname) != 0) {
		snprintf(err, errlen,
		         "descriptor name \"%.64s\" does not match the module "
		         "name \"%s\"",
		         desc->name, modname);
		return -1;
	}
	copy =
	    desc->struct_size < sizeof *out ? desc->struct_size : sizeof *out;
	memcpy(out, desc, copy);
	if (!out->version)
		out->version = "";
	if (!out->description)
		out->description = "";
	return 0;
}

const char *tb_status_name(int code)
{
	static const char *const names[] = {
	    "TASKBOX_OK",
	    "TASKBOX_E_INVALID",
	    "TASKBOX_E_NOMEM",
	    "TASKBOX_E_NOT_FOUND",
	    "TASKBOX_E_GONE",
	    "TASKBOX_E_UNAVAILABLE",
	    "TASKBOX_E_PERMISSION",
	    "TASKBOX_E_AUTH",
	    "TASKBOX_E_RATE_LIMITED",
	    "TASKBOX_E_TIMEOUT",
	    "TASKBOX_E_PROTOCOL",
	    "TASKBOX_E_UNSUPPORTED",
	    "TASKBOX_E_IO",
	    "TASKBOX_E_INTERNAL",
	    "TASKBOX_E_CANCELLED",
	};

	if (code < 0 || (size_t)code >= sizeof names / sizeof names[0])
		return "unknown status";
	return names[code];
}

void tb_errbuf_tidy(char *buf, size_t len)
{
	if (!buf || len == 0)
		return;
	buf[len - 1] = '\0';
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
}
