/* predict.c -- exercise 04.3 (worked answer): the two traces of
 * tests/04-snapshot/exercises/3-predict.scn.  The answers to chapter 04
 * explain every line. */
/* @region asyncio */
const char *const predicted_asyncio =
    "0.000000 tick 1 a\n"
    "0.000000 tick 2 b\n"
    "0.010000 tick 3 net\n"
    "0.010000 tick 4 reply\n"
    "0.020000 tick 5 t\n"
    "0.020000 tick 6 t0\n"
    "0.050000 tick 7 net\n"
    "0.050000 tick 8 reply\n";
/* @end asyncio */

/* @region miniloop */
const char *const predicted_miniloop =
    "0.010000 tick 1 a\n"
    "0.010000 tick 1 net\n"
    "0.020000 tick 2 b\n"
    "0.020000 tick 2 reply\n"
    "0.020000 tick 2 t\n"
    "0.020000 tick 3 t0\n";
/* @end miniloop */
