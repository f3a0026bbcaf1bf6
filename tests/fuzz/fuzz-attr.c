/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: fuzzing every parser of the library that takes one value as the kernel (sysfs,
 * /proc) or an operator gives it: the attribute values and the allowlist (lib/attr.h), CPU
 * lists, the kernel command line and the hw queue arithmetic on what they give
 * (lib/hwqueues.h), VMBus GUIDs, controller kinds and SCSI INQUIRY strings (lib/disk.h).
 *
 * The whole input is the value, given to each of them; the checks are the promises of the
 * headers, each stated again here independently of the code that keeps it. */
#include <ctype.h>
#include <inttypes.h>

#include "attr.h"
#include "disk.h"
#include "fuzz.h"
#include "hwqueues.h"

static bool is_token_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static void check_tokens(const char *text) {
        bool token = *text != '\0';

        for (const char *p = text; *p; p++)
                token = token && is_token_char(*p);
        fuzz_check(hvt_token_valid(text) == token, "token_valid(\"%s\")", text);
        fuzz_check(hvt_sched_name_valid(text) == (token && strlen(text) < HVT_SCHED_NAME_MAX && text[0] != '-'),
                   "sched_name_valid(\"%s\")", text);
}

/* The allowlist: a name found is that row's, in that group; the path fits or says so. */
static void check_lookup(const char *text, size_t size_hint) {
        for (int g = 0; g < _HVT_GROUP_MAX; g++) {
                int id = hvt_attr_lookup((enum hvt_group) g, text);

                if (id < 0) {
                        fuzz_check(id == -ENOENT, "lookup returned %d", id);
                        continue;
                }
                fuzz_check(id < _HVT_ATTR_MAX, "lookup id %d", id);
                fuzz_check(hvt_attr_get((enum hvt_attr_id) id)->group == (enum hvt_group) g &&
                           strcmp(hvt_attr_get((enum hvt_attr_id) id)->name, text) == 0, "lookup(\"%s\") = %d", text, id);
        }
        for (int id = 0; id < _HVT_ATTR_MAX; id++) {
                char buf[48], full[48];
                size_t size = size_hint % sizeof(buf) + 1;
                int r = hvt_attr_format_path((enum hvt_attr_id) id, buf, size);

                fuzz_check(hvt_attr_format_path((enum hvt_attr_id) id, full, sizeof(full)) == 0, "path of %d", id);
                fuzz_check(r == 0 ? strcmp(buf, full) == 0 : r == -ENOBUFS && strlen(full) >= size,
                           "path of %d into %zu bytes: %d", id, size, r);
        }
}

/* A value the kernel shows: an integer attribute takes any integer and keeps its canonical
 * decimal; a configured value takes only the kernel's range. */
static void check_values(const char *text) {
        for (int id = 0; id < _HVT_ATTR_MAX; id++) {
                const struct hvt_attr *a = hvt_attr_get((enum hvt_attr_id) id);
                struct hvt_setting s = {}, c = {};
                char canonical[HVT_VALUE_MAX];
                int r = hvt_setting_from_kernel(&s, (enum hvt_attr_id) id, text);

                if (r < 0) {
                        fuzz_check(r == -EINVAL, "from_kernel returned %d", r);
                        continue;
                }
                fuzz_check(s.set, "from_kernel(%d, \"%s\") not set", id, text);
                if (a->kind == HVT_VALUE_SCHEDULER) {
                        fuzz_check(hvt_sched_name_valid(text) && strcmp(s.text, text) == 0,
                                   "scheduler from_kernel(\"%s\") = \"%s\"", text, s.text);
                        continue;
                }
                snprintf(canonical, sizeof(canonical), "%" PRId64, s.num);
                fuzz_check(strcmp(s.text, canonical) == 0, "from_kernel(%d, \"%s\"): text \"%s\", num %" PRId64,
                           id, text, s.text, s.num);
                fuzz_check(strtoll(text, NULL, 10) == s.num, "from_kernel(%d, \"%s\") = %" PRId64, id, text, s.num);

                r = hvt_setting_set_int(&c, (enum hvt_attr_id) id, s.num);
                if (a->kind != HVT_VALUE_INT)
                        fuzz_check(r == -EINVAL, "set_int on a non-integer attribute %d: %d", id, r);
                else if (s.num < a->min || s.num > a->max)
                        fuzz_check(r == -ERANGE, "set_int(%d, %" PRId64 ") out of range: %d", id, s.num, r);
                else
                        fuzz_check(r == 0 && c.set && c.num == s.num && strcmp(c.text, s.text) == 0 &&
                                   hvt_token_valid(c.text), "set_int(%d, %" PRId64 "): %d \"%s\"", id, s.num, r, c.text);
        }
}

static void check_guid(const char *text) {
        char out[HVT_GUID_STR_MAX], again[HVT_GUID_STR_MAX], bare[HVT_GUID_STR_MAX];

        if (hvt_guid_normalize(text, out) < 0)
                return;
        fuzz_check(strlen(out) == HVT_GUID_STR_MAX - 1 && out[0] == '{' && out[HVT_GUID_STR_MAX - 2] == '}',
                   "normalize(\"%s\") = \"%s\"", text, out);
        for (size_t i = 1; i < HVT_GUID_STR_MAX - 2; i++)
                fuzz_check(i == 9 || i == 14 || i == 19 || i == 24 ? out[i] == '-' :
                           isxdigit((unsigned char) out[i]) && !isupper((unsigned char) out[i]),
                           "normalize(\"%s\") = \"%s\" at %zu", text, out, i);
        /* Braced or not, any case: one spelling. */
        fuzz_check(hvt_guid_normalize(out, again) == 0 && strcmp(out, again) == 0, "not idempotent: %s", out);
        memcpy(bare, out + 1, HVT_GUID_STR_MAX - 3);
        bare[HVT_GUID_STR_MAX - 3] = '\0';
        fuzz_check(hvt_guid_normalize(bare, again) == 0 && strcmp(out, again) == 0, "bare form of %s", out);
}

static void check_kind(const char *text) {
        int k = hvt_kind_from_string(text);

        if (k >= 0)
                fuzz_check(k < _HVT_KIND_MAX && strcmp(hvt_kind_to_string((enum hvt_kind) k), text) == 0,
                           "kind(\"%s\") = %d", text, k);
        else
                fuzz_check(k == -EINVAL, "kind(\"%s\") = %d", text, k);
}

/* SCSI pads INQUIRY fields with blanks: the copy is the field cut to size, blanks stripped. */
static void check_strip(const char *text) {
        static const size_t sizes[] = { 1, 2, HVT_VENDOR_MAX, HVT_MODEL_MAX, HVT_VALUE_MAX };

        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                char dst[HVT_VALUE_MAX + 1];
                size_t n = strnlen(text, sizes[i] - 1);

                memset(dst, 'x', sizeof(dst));
                hvt_strip_copy(dst, sizes[i], text);
                while (n > 0 && isspace((unsigned char) text[n - 1]))
                        n--;
                fuzz_check(strlen(dst) == n && strncmp(dst, text, n) == 0 && dst[sizes[i]] == 'x',
                           "strip_copy(\"%s\", %zu) = \"%s\"", text, sizes[i], dst);
        }
}

/* What host.c does with /sys/devices/system/cpu/present and /proc/cmdline: the cap it asks
 * for is never above the present CPUs, and what a probe makes of any value is a queue count
 * between 1 and present. The whole text goes to both parsers; then its first line is taken as
 * the CPU list and the rest as the command line. */
static void check_hw_queues(const char *text) {
        const char *nl = strchr(text, '\n');
        _cleanup_free_ char *cpus = strndup(text, nl ? (size_t) (nl - text) : strlen(text));
        unsigned present = 0, param = 0;
        int r;

        r = hvt_cpulist_count(text, &present);
        fuzz_check(r == 0 ? present >= 1 && isdigit((unsigned char) text[0]) : r == -EINVAL,
                   "cpulist \"%s\": %d, %u", text, r, present);
        r = hvt_cmdline_max_hw_queues(text, &param);
        fuzz_check(r == 1 || r == 0 || r == -EINVAL, "cmdline returned %d", r);
        if (r == 1)
                fuzz_check(strstr(text, "hv") && strstr(text, "storvsc"), "a value found in \"%s\"", text);

        if (!cpus)
                abort();
        if (!nl || hvt_cpulist_count(cpus, &present) < 0 || hvt_cmdline_max_hw_queues(nl + 1, &param) != 1)
                return;

        struct hvt_host_config h = { .max_hw_queues_set = true, .max_hw_queues = param };
        unsigned target = hvt_hwq_target(&h, present), queues = hvt_hwq_effective(param, present);

        fuzz_check(target <= present && target <= param, "target %u of %u on %u CPUs", target, param, present);
        fuzz_check(queues >= 1 && queues <= present, "%u queues from %u on %u CPUs", queues, param, present);
        fuzz_check(hvt_hwq_effective(target, present) == (target ? target : present), "target %u", target);
        h.max_hw_queues_set = false;
        target = hvt_hwq_target(&h, present);
        fuzz_check(present <= HVT_DEFAULT_MAX_HW_QUEUES ? target == 0 : target == HVT_DEFAULT_MAX_HW_QUEUES,
                   "default target %u on %u CPUs", target, present);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *text = fuzz_strndup(data, size);

        check_tokens(text);
        check_lookup(text, size);
        check_values(text);
        check_guid(text);
        check_kind(text);
        check_strip(text);
        check_hw_queues(text);
        return 0;
}
