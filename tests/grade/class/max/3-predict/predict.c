/* predict.c -- exercise 04.3 (starter): predict two traces.
 *
 * tests/04-snapshot/exercises/3-predict.scn is a scenario (the language is
 * appendix C).  Write down, line for line, the trace you expect the stage's
 * trace program to print for it:
 *   - predicted_asyncio:  `trace 3-predict.scn`, asyncio's rules;
 *   - predicted_miniloop: `trace --rules=miniloop 3-predict.scn`, the rules
 *     of article 000's MiniLoop (loop_set_rules in loop.h).
 * One line per callback run, "%.6f tick %d LABEL\n", as in the chapter's
 * traces.  Work it out tick by tick on paper first; then run the tests.
 * TODO(3-predict): fill in both strings.
 */
const char *const predicted_asyncio =
    "";

const char *const predicted_miniloop =
    "";
