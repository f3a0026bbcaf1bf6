/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one escaping of text hvtuned does not control (lib/escape.c): which bytes keep their
 * form, which become \\, \n, \t or \xNN, and where a short buffer cuts. */
#include <check.h>

#include "escape.h"
#include "macro.h"
#include "testutil.h"

static void assert_escaped(const char *raw, const char *want) {
        char buf[256], *dup;

        ck_assert_uint_eq(hvt_escape(buf, sizeof(buf), raw), strlen(want));
        ck_assert_str_eq(buf, want);
        dup = hvt_escape_dup(raw);
        ck_assert_ptr_nonnull(dup);
        ck_assert_str_eq(dup, want);
        free(dup);
}

START_TEST(test_printable_as_is) {
        assert_escaped("", "");
        assert_escaped("sda queue/scheduler: mq-deadline -> none (applied)",
                       "sda queue/scheduler: mq-deadline -> none (applied)");
        assert_escaped(" !\"#$%&'()*+,-./09:;<=>?@AZ[]^_`az{|}~", " !\"#$%&'()*+,-./09:;<=>?@AZ[]^_`az{|}~");
}
END_TEST

START_TEST(test_controls_escaped) {
        /* A newline would start a second notification key or log line; ESC, CR and BEL would
         * act on the terminal that shows them. */
        assert_escaped("x\nWATCHDOG=trigger\n", "x\\nWATCHDOG=trigger\\n");
        assert_escaped("a\tb", "a\\tb");
        assert_escaped("Msft\033[2J", "Msft\\x1b[2J");
        assert_escaped("Virtual\rDisk\a", "Virtual\\x0dDisk\\x07");
        assert_escaped("\001\037\177", "\\x01\\x1f\\x7f");
}
END_TEST

START_TEST(test_backslash_and_high_bytes) {
        /* A backslash is escaped itself, so that the text \x41 cannot pass for "A". */
        assert_escaped("\\x41", "\\\\x41");
        assert_escaped("\\", "\\\\");
        /* Every byte from 0x80: UTF-8 shows its bytes, invalid sequences alike. */
        assert_escaped("caf\xc3\xa9", "caf\\xc3\\xa9");
        assert_escaped("\x80\xff", "\\x80\\xff");
}
END_TEST

START_TEST(test_every_byte) {
        char raw[2] = {}, buf[8];

        for (unsigned c = 1; c < 256; c++) {
                size_t n;

                raw[0] = (char) c;
                n = hvt_escape(buf, sizeof(buf), raw);
                ck_assert_uint_eq(n, strlen(buf));
                if (c >= 0x20 && c < 0x7f && c != '\\')
                        ck_assert_uint_eq(n, 1);
                else
                        ck_assert_msg(buf[0] == '\\' && (n == 2 || n == 4), "0x%02x gave \"%s\"", c, buf);
                for (size_t i = 0; i < n; i++)
                        ck_assert(buf[i] >= 0x20 && buf[i] < 0x7f);
        }
}
END_TEST

START_TEST(test_cut_between_escapes) {
        char buf[8];

        /* "ab\x1b" needs 6 bytes and its NUL: with 6 only "ab" fits, not half an escape. */
        ck_assert_uint_eq(hvt_escape(buf, 6, "ab\033cd"), 8);
        ck_assert_str_eq(buf, "ab");
        ck_assert_uint_eq(hvt_escape(buf, 7, "ab\033cd"), 8);
        ck_assert_str_eq(buf, "ab\\x1b");
        /* Nothing after the first escape that did not fit, even what would. */
        ck_assert_uint_eq(hvt_escape(buf, 3, "a\nb"), 4);
        ck_assert_str_eq(buf, "a");
        ck_assert_uint_eq(hvt_escape(buf, 1, "abc"), 3);
        ck_assert_str_eq(buf, "");
        /* size 0: only the length, dst untouched. */
        ck_assert_uint_eq(hvt_escape(NULL, 0, "\033"), 4);
        /* The worst case fits the room HVT_ESCAPED_SIZE() gives. */
        char worst[HVT_ESCAPED_SIZE(3)];
        ck_assert_uint_eq(hvt_escape(worst, sizeof(worst), "\001\002\003"), 12);
        ck_assert_str_eq(worst, "\\x01\\x02\\x03");
}
END_TEST

START_TEST(test_unescape_round_trip) {
        char raw[256], esc[HVT_ESCAPED_SIZE(255)];

        /* Every byte but NUL, escaped and back. */
        for (int i = 1; i < 256; i++)
                raw[i - 1] = (char) i;
        raw[255] = '\0';
        ck_assert_uint_lt(hvt_escape(esc, sizeof(esc), raw), sizeof(esc));
        ck_assert_int_eq(hvt_unescape(esc), 0);
        ck_assert_str_eq(esc, raw);
}
END_TEST

START_TEST(test_unescape_refuses) {
        /* What hvt_escape() never makes: read as damage, never guessed at. */
        static const char *const bad[] = { "\\", "a\\", "\\q", "\\x", "\\x4", "\\xg0", "\\x00", "\\r" };
        char buf[16];

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                snprintf(buf, sizeof(buf), "%s", bad[i]);
                ck_assert_msg(hvt_unescape(buf) == -EINVAL, "%s taken", bad[i]);
        }
        snprintf(buf, sizeof(buf), "\\x4A\\x4a");
        ck_assert_int_eq(hvt_unescape(buf), 0);
        ck_assert_str_eq(buf, "JJ");
}
END_TEST

int main(void) {
        Suite *s = suite_create("escape");
        TCase *tc = tcase_create("escape");

        tcase_add_test(tc, test_printable_as_is);
        tcase_add_test(tc, test_controls_escaped);
        tcase_add_test(tc, test_backslash_and_high_bytes);
        tcase_add_test(tc, test_every_byte);
        tcase_add_test(tc, test_cut_between_escapes);
        tcase_add_test(tc, test_unescape_round_trip);
        tcase_add_test(tc, test_unescape_refuses);
        suite_add_tcase(s, tc);
        return test_run(s);
}
