/*
 * eng_metric_sock.c - naming a socket by its peer (DESIGN §3: /Files
 * holds sockets by peer), from the socket's inode as /proc/<pid>/fd
 * shows it ("socket:[12345]") and the kernel's tables in
 * /proc/<pid>/net/{tcp,tcp6,udp,udp6,unix}.
 */
#include "eng_metric_int.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* "0100007F:1F90" (little-endian hex, as the kernel prints it) ->
 * "127.0.0.1:8080"; IPv6 has 32 hex digits. */
static bool hex_addr(const char *h, char *out, size_t len)
{
	const char *colon = strchr(h, ':');
	unsigned char a[16];
	size_t n = colon ? (size_t)(colon - h) / 2 : 0;
	char ip[INET6_ADDRSTRLEN];

	if (colon == NULL || (n != 4 && n != 16))
		return false;
	for (size_t i = 0; i < n; i += 4) {
		uint32_t w;
		char word[9];

		memcpy(word, h + 2 * i, 8);
		word[8] = 0;
		w = (uint32_t)strtoul(word, NULL, 16);
		memcpy(a + i, &w, 4);   /* the kernel printed host order */
	}
	if (inet_ntop(n == 4 ? AF_INET : AF_INET6, a, ip, sizeof ip) == NULL)
		return false;
	snprintf(out, len, n == 4 ? "%s:%lu" : "[%s]:%lu", ip,
		 strtoul(colon + 1, NULL, 16));
	return true;
}

static bool inet_peer(int pid, const char *table, uint64_t ino, char *buf,
		      size_t len)
{
	char path[64], line[512], loc[128], rem[128], l[64], r[64];
	unsigned long long i;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/net/%s", pid, table);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, " %*s %127s %127s %*s %*s %*s %*s %*s %*s "
			   "%llu", loc, rem, &i) != 3 || i != ino)
			continue;
		found = hex_addr(loc, l, sizeof l) && hex_addr(rem, r, sizeof r);
		if (found)
			snprintf(buf, len, "%.3s:%s->%s", table, l, r);
	}
	fclose(f);
	return found;
}

static bool unix_peer(int pid, uint64_t ino, char *buf, size_t len)
{
	char path[64], line[512], name[256];
	unsigned long long i;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/net/unix", pid);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof line, f) != NULL) {
		int n;

		name[0] = 0;
		n = sscanf(line, "%*s %*s %*s %*s %*s %*s %llu %255s", &i, name);
		if (n < 1 || i != ino)
			continue;
		found = true;
		snprintf(buf, len, "unix:%s", name[0] ? name : "(unnamed)");
	}
	fclose(f);
	return found;
}

/* Replace "socket:[N]" in buf by its peer when the kernel says. */
void eng_metric_sock_name(int pid, char *buf, size_t len)
{
	static const char *const tables[] = { "tcp", "tcp6", "udp", "udp6" };
	unsigned long long ino;

	if (sscanf(buf, "socket:[%llu]", &ino) != 1)
		return;
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
		if (inet_peer(pid, tables[t], ino, buf, len))
			return;
	unix_peer(pid, ino, buf, len);
}
