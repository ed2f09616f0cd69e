/*
 * fuzz_reader.c - libFuzzer target over the journal reader.
 *
 * Each input is read twice: as a whole file (the header checks), and
 * after a valid header (so that mutations reach the record checks and
 * the decoders without first having to invent a header).  Every record
 * the reader accepts goes through the decoder the replay source will
 * use.  Built with -fsanitize=fuzzer,address,undefined; see
 * tests/journal/meson.build and docs/journal-format.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jnl_read.h"
#include "jnl_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char header[] =
	"{\"t\":\"header\",\"journal_version\":1,\"hunch_version\":\"0.1.0\","
	"\"host\":\"h\",\"kernel\":{},\"program\":\"p\",\"target\":{\"pid\":1},"
	"\"start_wall\":\"2026-11-21T00:00:00.000000Z\",\"start_mono_ns\":1,"
	"\"clock\":{\"tsc_hz\":null,\"tsc_invariant\":false},"
	"\"hypotheses\":null,\"tunables\":null}\n";

static void decode(const struct jnl_record *rec)
{
	struct pc_discovery d;
	struct jnl_output o;
	struct jnl_target t;
	struct jnl_sample s;
	struct pc_src_focus f;
	struct pc_src_reply r;
	struct pc_src_event e;

	switch (rec->kind) {
	case JNL_REC_ENABLE:
	case JNL_REC_PREDICT:
		jnl_record_focus_decode(json_object_get(rec->json, "focus"), &f,
					NULL);
		break;
	case JNL_REC_REPLY:
		jnl_record_reply_decode(rec->json, &r, NULL);
		break;
	case JNL_REC_RESOURCE:
		jnl_record_discovery_decode(rec->json, &d, NULL);
		break;
	case JNL_REC_OUTPUT:
		if (jnl_record_output_decode(rec->json, &o, NULL) == 0)
			free(o.bytes);
		break;
	case JNL_REC_TARGET:
		if (jnl_record_target_decode(rec->json, &t, NULL) == 0)
			jnl_record_target_to_src(&t, &e);
		break;
	case JNL_REC_SAMPLE:
		if (jnl_record_sample_decode(rec->json, &s, NULL) == 0) {
			for (size_t k = 0; k < s.n; k++)
				(void)jnl_record_sample_at(&s, k);
			jnl_record_sample_free(&s);
		}
		break;
	default:
		break;
	}
}

static void read_all(const void *buf, size_t len)
{
	struct jnl_reader *r;
	struct jnl_record rec;
	struct jnl_read_stats st;
	struct hunch_err err;
	const char *msg;
	int rc;

	if (jnl_read_open_mem(&r, buf, len, "fuzz", &err) != 0)
		return;
	while ((rc = jnl_read_next(r, &rec, &err)) != JNL_NEXT_END)
		if (rc == JNL_NEXT_RECORD)
			decode(&rec);
	jnl_read_end(r, &msg);
	jnl_read_get_stats(r, &st);
	jnl_read_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t hl = sizeof(header) - 1;
	char *buf = malloc(hl + size + 1);

	read_all(data, size);
	if (buf == NULL)
		return 0;
	memcpy(buf, header, hl);
	memcpy(buf + hl, data, size);
	read_all(buf, hl + size);
	free(buf);
	return 0;
}
