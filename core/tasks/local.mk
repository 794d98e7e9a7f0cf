# core/tasks: task semantics: handles, views, paging, waiting, listing,
# masking, sessions, the supervisor client and its records.
# (included from core/local.mk)
libtaskbox_core_la_SOURCES += \
	core/tasks/box.c \
	core/tasks/box_write.c \
	core/tasks/dir_watch.c \
	core/tasks/host_mask.c \
	core/tasks/key_request.c \
	core/tasks/ownership.c \
	core/tasks/quota.c \
	core/tasks/pid_watch.c \
	core/tasks/record_cache.c \
	core/tasks/remote_watch.c \
	core/tasks/session.c \
	core/tasks/sup_client.c \
	core/tasks/sup_upload.c \
	core/tasks/sup_record.c \
	core/tasks/task_id.c \
	core/tasks/task_list.c \
	core/tasks/task_ring.c \
	core/tasks/task_view.c \
	core/tasks/task_wait.c \
	core/tasks/write_gate.c
noinst_HEADERS += \
	core/tasks/box.h \
	core/tasks/dir_watch.h \
	core/tasks/host_mask.h \
	core/tasks/key_request.h \
	core/tasks/ownership.h \
	core/tasks/quota.h \
	core/tasks/pid_watch.h \
	core/tasks/record_cache.h \
	core/tasks/remote_watch.h \
	core/tasks/session.h \
	core/tasks/sup_client.h \
	core/tasks/sup_upload.h \
	core/tasks/sup_record.h \
	core/tasks/task_id.h \
	core/tasks/task_list.h \
	core/tasks/task_ring.h \
	core/tasks/task_view.h \
	core/tasks/task_wait.h \
	core/tasks/write_gate.h
