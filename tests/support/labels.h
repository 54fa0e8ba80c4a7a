/* labels.h -- a log of what a test's callbacks did, to compare with the
 * order the test expects:
 *
 *     label_add("a"); label_add("b");        ran is "a b"
 *     label_add_at("c", 2);                  ran is "a b c@2"
 *
 * ran holds the labels, space-separated (an entry that would not fit is
 * dropped, and the comparison then fails); nran counts the entries added
 * since labels_reset(). */
#ifndef TESTS_SUPPORT_LABELS_H
#define TESTS_SUPPORT_LABELS_H

#include <stdio.h>
#include <string.h>

static char ran[4096];
static int nran;

static inline void labels_reset(void)
{
    ran[0] = '\0';
    nran = 0;
}

static inline void label_add(const char *label)
{
    size_t len = strlen(ran), add = strlen(label);
    if (len + (len > 0) + add < sizeof ran) {
        if (len > 0)
            ran[len++] = ' ';
        memcpy(ran + len, label, add + 1);
    }
    nran++;
}

/* "label@tick" */
static inline void label_add_at(const char *label, int tick)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s@%d", label, tick);
    label_add(buf);
}

#endif
