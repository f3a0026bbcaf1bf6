/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A disk's slots: made in attribute order whatever the order asked, found again, emptied
 * ones dropped, and originals carried to and from the whole-allowlist struct the records
 * use, exactly, but for the driver's attributes, which no disk has. */
#include <check.h>
#include <string.h>

#include "track.h"
#include "testutil.h"

static void set(struct hvt_setting *s, const char *text) {
        *s = (struct hvt_setting) { .set = true };
        strcpy(s->text, text);
}

/* The slot's want, or original, becomes text; NULL: none. */
static void set_want(struct hvt_slot *slot, const char *text) {
        struct hvt_setting v = {};

        if (text)
                set(&v, text);
        hvt_slot_set_want(slot, &v);
}

static void set_orig(struct hvt_slot *slot, const char *text) {
        struct hvt_setting v = {};

        if (text)
                set(&v, text);
        hvt_slot_set_orig(slot, &v);
}

START_TEST(test_order_and_compact) {
        const enum hvt_attr_id ids[] = { HVT_ATTR_TIMEOUT, HVT_ATTR_SCHEDULER, HVT_ATTR_READ_AHEAD_KB,
                                         HVT_ATTR_NR_REQUESTS };
        struct hvt_slots s = {};

        ck_assert_ptr_null(hvt_slot_get(&s, HVT_ATTR_SCHEDULER));
        for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
                struct hvt_slot *slot = hvt_slot_make(&s, ids[i]);

                ck_assert_ptr_nonnull(slot);
                ck_assert_int_eq(slot->id, ids[i]);
                set_want(slot, "1");
        }
        ck_assert_ptr_eq(hvt_slot_make(&s, HVT_ATTR_TIMEOUT), hvt_slot_get(&s, HVT_ATTR_TIMEOUT));
        ck_assert_uint_eq(s.n, 4);
        for (size_t i = 1; i < s.n; i++)
                ck_assert_int_lt(s.slot[i - 1].id, s.slot[i].id);

        /* Not managed any more but with an original: kept; with neither: dropped. */
        set_want(hvt_slot_get(&s, HVT_ATTR_SCHEDULER), NULL);
        set_orig(hvt_slot_get(&s, HVT_ATTR_SCHEDULER), "bfq");
        set_want(hvt_slot_get(&s, HVT_ATTR_NR_REQUESTS), NULL);
        hvt_slots_compact(&s);
        ck_assert_uint_eq(s.n, 3);
        ck_assert_ptr_null(hvt_slot_get(&s, HVT_ATTR_NR_REQUESTS));
        ck_assert_str_eq(hvt_slot_get(&s, HVT_ATTR_SCHEDULER)->orig, "bfq");

        for (size_t i = 0; i < s.n; i++) {
                set_want(&s.slot[i], NULL);
                set_orig(&s.slot[i], NULL);
        }
        hvt_slots_compact(&s);
        ck_assert_uint_eq(s.n, 0);
        ck_assert_ptr_null(s.slot);
        hvt_slots_done(&s);
}
END_TEST

START_TEST(test_originals) {
        struct hvt_originals in = {}, out;
        struct hvt_slots s = {};

        set(&in.value[HVT_ATTR_NR_REQUESTS], "256");
        set(&in.value[HVT_ATTR_EH_TIMEOUT], "10");
        set_orig(hvt_slot_make(&s, HVT_ATTR_SCHEDULER), "kyber");   /* replaced by the record */
        set_want(hvt_slot_make(&s, HVT_ATTR_SCHEDULER), "none");

        ck_assert_int_eq(hvt_slots_set_originals(&s, &in), 0);
        hvt_slots_originals(&s, &out);
        for (size_t i = 0; i < _HVT_ATTR_MAX; i++) {
                ck_assert_int_eq(out.value[i].set, in.value[i].set);
                if (in.value[i].set)
                        ck_assert_str_eq(out.value[i].text, in.value[i].text);
        }
        /* The managed attribute keeps its slot, without the original the record lacks. */
        ck_assert(hvt_slot_get(&s, HVT_ATTR_SCHEDULER)->want_set);
        ck_assert(!hvt_slot_get(&s, HVT_ATTR_SCHEDULER)->orig_set);
        ck_assert_uint_eq(s.n, 3);
        hvt_slots_done(&s);
}
END_TEST

/* A damaged record can name the driver's attributes: no slot for them, so no disk pass
 * restores them, and the record saved next leaves them out. */
START_TEST(test_driver_attributes_ignored) {
        struct hvt_originals in = {}, out;
        struct hvt_slots s = {};

        set(&in.value[HVT_ATTR_READ_AHEAD_KB], "128");
        for (size_t i = _HVT_ATTR_DISK_MAX; i < _HVT_ATTR_MAX; i++)
                set(&in.value[i], "1");
        ck_assert_int_eq(hvt_slots_set_originals(&s, &in), 0);
        ck_assert_uint_eq(s.n, 1);
        ck_assert_int_eq(s.slot[0].id, HVT_ATTR_READ_AHEAD_KB);
        hvt_slots_originals(&s, &out);
        for (size_t i = _HVT_ATTR_DISK_MAX; i < _HVT_ATTR_MAX; i++)
                ck_assert(!out.value[i].set);
        hvt_slots_done(&s);
}
END_TEST

int main(void) {
        Suite *s = suite_create("slot");
        TCase *tc = tcase_create("slots");

        tcase_add_test(tc, test_order_and_compact);
        tcase_add_test(tc, test_originals);
        tcase_add_test(tc, test_driver_attributes_ignored);
        suite_add_tcase(s, tc);
        return test_run(s);
}
