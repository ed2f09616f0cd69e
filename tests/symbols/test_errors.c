/*
 * test_errors.c - every way eng_image_open refuses a file says which
 * file and what is wrong with it.  Bad files are crafted in a private
 * temporary directory that is removed at the end.
 */
#include "sym_util.h"

#include <elf.h>
#include <errno.h>
#include <unistd.h>

static char dir[] = "/tmp/hunch-symerr-XXXXXX";

static const char *write_file(const char *name, const void *buf, size_t len)
{
	static char path[4][256];
	static int k;
	char *p = path[k++ & 3];
	FILE *f;

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		perror(p);
		exit(2);
	}
	return p;
}

/* Opening must fail with `code`, leave *out NULL, and say `what` about
 * the file by its full path. */
static void expect_error(const char *label, const char *path, int code,
			 const char *what)
{
	struct hunch_err err = { 0 };
	struct eng_image *img = (struct eng_image *)&err;  /* not NULL */
	int r = eng_image_open(path, &img, &err);

	tap_eq(r, code, "%s: refused with %d", label, code);
	tap_ok(img == NULL && err.code == r, "%s: no image, error recorded",
	       label);
	if (!tap_ok(strstr(err.msg, path) && strstr(err.msg, what),
		    "%s: message names the file and says '%s'", label, what))
		tap_diag("  message: %s", err.msg);
	else
		tap_diag("  %s", err.msg);
	if (r == 0)
		eng_image_close(img);
}

static void elf64_header(Elf64_Ehdr *h, int type, int machine)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = ELFCLASS64;
	h->e_ident[EI_DATA] = ELFDATA2LSB;
	h->e_ident[EI_VERSION] = EV_CURRENT;
	h->e_type = type;
	h->e_machine = machine;
	h->e_version = EV_CURRENT;
	h->e_ehsize = sizeof(*h);
}

int main(int argc, char **argv)
{
	Elf32_Ehdr h32 = { 0 };
	Elf64_Ehdr h64;
	char cmd[512];

	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 2;
	}
	expect_error("missing file", "/nonexistent/hunch/no-such-program",
		     -ENOENT, "check the path");
	expect_error("a directory", dir, -EINVAL, "not a regular file");
	expect_error("a text file",
		     write_file("notes.txt", "hello, world\n", 13),
		     -ENOEXEC, "is not an ELF file");
	expect_error("an empty file", write_file("empty", "", 0), -ENOEXEC,
		     "is not an ELF file");

	memcpy(h32.e_ident, ELFMAG, SELFMAG);
	h32.e_ident[EI_CLASS] = ELFCLASS32;
	h32.e_ident[EI_DATA] = ELFDATA2LSB;
	h32.e_ident[EI_VERSION] = EV_CURRENT;
	h32.e_type = ET_EXEC;
	h32.e_machine = EM_386;
	h32.e_version = EV_CURRENT;
	h32.e_ehsize = sizeof(h32);
	expect_error("a 32-bit i386 ELF", write_file("i386", &h32, sizeof(h32)),
		     -ENOEXEC, "32-bit");

	elf64_header(&h64, ET_EXEC, EM_AARCH64);
	expect_error("an aarch64 ELF", write_file("aarch64", &h64, sizeof(h64)),
		     -ENOEXEC, "aarch64");
	elf64_header(&h64, ET_REL, EM_X86_64);
	expect_error("an x86-64 object file",
		     write_file("obj.o", &h64, sizeof(h64)), -ENOEXEC,
		     "relocatable object");
	expect_error("no symbol tables", fixture(argc, argv, "nosyms"),
		     -ENOENT, "no symbol table");

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	tap_ok(system(cmd) == 0 && access(dir, F_OK) != 0,
	       "temporary files removed");
	return tap_done();
}
