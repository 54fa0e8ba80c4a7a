# Which Check suite (tests/unit/check_NAME.c) runs against which stages.
#
# A suite written for stage N keeps running against every later stage, so a
# later chapter cannot silently break an earlier lesson: NAME_FROM is the
# first stage it applies to.  NAME_UNTIL (optional) is the last one, for the
# rare lesson a later chapter changes on purpose; say why beside it.
#
# The suite is compiled with -I code/NN-slug and linked with that stage's
# libloop.a, so it may use everything the stage's headers declare.
SUITES := io deque ready heap timers snapshot cancel threadsafe selector oom rounding lifecycle handler signals
SUITES += future task future_oom
SUITES += executor stress policy

io_FROM       := 01
deque_FROM    := 02
ready_FROM    := 02
heap_FROM     := 03
timers_FROM   := 03
snapshot_FROM := 04
cancel_FROM   := 05
threadsafe_FROM := 06
selector_FROM := 07
oom_FROM      := 02
lifecycle_FROM := 08
handler_FROM  := 08
signals_FROM  := 08
rounding_FROM := 03
future_FROM   := 09
task_FROM     := 09
future_oom_FROM := 09
executor_FROM := 10
stress_FROM   := 10
policy_FROM   := 10

# NAME_LDFLAGS (optional): extra link flags for that suite (build_suite in
# tests/lib.sh reads them from this file).  check_oom reroutes every malloc,
# calloc and realloc -- the stage's libloop.a's included -- through
# tests/support/failalloc.h, which can make the Nth one fail.
oom_LDFLAGS   := -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
# check_future_oom: the same, for the allocations of a future's outcome.
future_oom_LDFLAGS := -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
# check_rounding sees the timeval the loop hands to select().
rounding_LDFLAGS := -Wl,--wrap=select
# check_executor uses tests/support/failalloc.h too (its OOM tests:
# a failed allocation in submit / run_in_executor / run_coroutine_threadsafe
# loses nothing that was accepted).
executor_LDFLAGS := -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc

# Stages from this one on run threads: `make check-sanitize` also runs them
# under ThreadSanitizer.
THREADED_FROM := 06
