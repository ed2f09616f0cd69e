/*
 * src_live_exits.c - exit statuses of the followed children (see
 * src_live_exits.h).  The proc connector multicasts every process's
 * exit on the machine; only those of pids the caller wants are kept.
 * Its timestamp is the kernel's CLOCK_MONOTONIC at the exit, so the
 * report says when a child ended, not when hunch next looked.
 */
#include "src_live_exits.h"

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "eng_taskstate.h"

struct src_live_exits_end {
	pid_t pid;
	int status;
	uint64_t mono_ns;
};

struct src_live_exits {
	int fd;
	struct src_live_exits_end *e;
	size_t n;
};

/* The subscription message: netlink header, connector header, op. */
struct src_live_exits_listen {
	struct nlmsghdr h;
	struct cn_msg c;
	enum proc_cn_mcast_op op;
} __attribute__((packed));   /* the kernel reads it unpadded */

struct src_live_exits *src_live_exits_open(void)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK,
				 .nl_groups = CN_IDX_PROC };
	struct src_live_exits_listen m;
	struct src_live_exits *e;
	int fd;

	fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    NETLINK_CONNECTOR);
	if (fd < 0)
		return NULL;
	memset(&m, 0, sizeof(m));
	m.h.nlmsg_len = sizeof(m);
	m.h.nlmsg_type = NLMSG_DONE;
	m.h.nlmsg_pid = (uint32_t)getpid();
	m.c.id.idx = CN_IDX_PROC;
	m.c.id.val = CN_VAL_PROC;
	m.c.len = sizeof(m.op);
	m.op = PROC_CN_MCAST_LISTEN;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    send(fd, &m, sizeof(m), 0) < 0 ||
	    (e = calloc(1, sizeof(*e))) == NULL) {
		close(fd);
		return NULL;
	}
	e->fd = fd;
	return e;
}

void src_live_exits_close(struct src_live_exits *e)
{
	if (e == NULL)
		return;
	close(e->fd);
	free(e->e);
	free(e);
}

static void keep(struct src_live_exits *e, const struct proc_event *ev)
{
	e->e = realloc(e->e, (e->n + 1) * sizeof(*e->e));
	if (e->e == NULL)
		abort();
	e->e[e->n++] = (struct src_live_exits_end){
		.pid = (pid_t)ev->event_data.exit.process_pid,
		.status = (int)ev->event_data.exit.exit_code,
		.mono_ns = ev->timestamp_ns,
	};
}

void src_live_exits_drain(struct src_live_exits *e,
			  bool (*want)(void *arg, pid_t pid), void *arg)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	ssize_t n;

	while (e != NULL && (n = recv(e->fd, buf, sizeof(buf), 0)) > 0) {
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf;
		     NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			const struct cn_msg *c = NLMSG_DATA(h);
			const struct proc_event *ev = (const void *)c->data;

			/* A thread's exit is not the process's. */
			if (ev->what == PROC_EVENT_EXIT &&
			    ev->event_data.exit.process_pid ==
			    ev->event_data.exit.process_tgid &&
			    want(arg, (pid_t)ev->event_data.exit.process_pid))
				keep(e, ev);
		}
	}
}

bool src_live_exits_status(const struct src_live_exits *e, pid_t pid,
			   int *status, uint64_t *mono_ns)
{
	for (size_t i = 0; e != NULL && i < e->n; i++)
		if (e->e[i].pid == pid) {
			*status = e->e[i].status;
			*mono_ns = e->e[i].mono_ns;
			return true;
		}
	return false;
}

bool src_live_exits_zombie_status(pid_t pid, int *status)
{
	struct eng_taskstat st;

	if (eng_taskstate_stat(pid, 0, &st) < 0 || st.exit_code < 0)
		return false;
	*status = st.exit_code;
	return true;
}
