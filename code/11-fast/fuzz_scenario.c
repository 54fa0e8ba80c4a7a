/* fuzz_scenario.c -- libFuzzer target for the scenario parser.
 *
 * Not part of the stage's normal build: it needs clang's libFuzzer.
 * Build and run (from this folder):
 *   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined \
 *         fuzz_scenario.c scenario.c -lm -o fuzz_scenario
 *   ./fuzz_scenario -max_total_time=60 CORPUS_DIR
 * Any input must parse or be refused with "FILE:LINE:COL: message";
 * never a crash, a hang, a leak or a sanitizer report.  Each input is
 * parsed for every stage, since stages differ in what they accept.
 */
#include "scenario.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int stage = 3; stage <= 9; stage++) {
        scenario_t s;
        char *err;
        int rc = scenario_parse((const char *)data, size, "fuzz.scn", stage, &s, &err);
        if (rc < 0) {
            /* A refusal says where: "fuzz.scn:LINE:COL: message". */
            if (err == NULL || strncmp(err, "fuzz.scn:", 9) != 0)
                abort();
            free(err);
        } else {
            /* Walk the tree: every child list ends, every io index and
             * every call rank (trace's index of kept handles) is valid. */
            for (const action_t *a = s.all; a != NULL; a = a->all_next) {
                if (a->kind == ACTION_IO && (a->io < 0 || a->io >= s.nio))
                    abort();
                bool call = a->kind == ACTION_SOON || a->kind == ACTION_LATER ||
                            a->kind == ACTION_AT || a->kind == ACTION_THREADSAFE ||
                            a->kind == ACTION_CANCEL || a->kind == ACTION_SIGHANDLER ||
                            a->kind == ACTION_FUTURE || a->kind == ACTION_TASK ||
                            a->kind == ACTION_CORO;
                if (call && (a->call < 0 || a->call >= s.ncalls))
                    abort();
                /* Stage 09: every reference points at a line that defines it. */
                for (int i = 0; i < a->nrefs; i++)
                    if (a->refs[i].def == NULL || strcmp(a->refs[i].def->label, a->refs[i].label) != 0)
                        abort();
            }
        }
        scenario_free(&s);
    }
    return 0;
}
