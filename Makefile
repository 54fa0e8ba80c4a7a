# The one entry point of the book.  `make help` lists the targets.
#
#   make          install what is missing (Debian), build every stage and the book
#   make check    every test; the last line says "N passed, N failed"
#
# The rules that build one stage live in that stage's own Makefile
# (code/NN-slug/Makefile); the test drivers live in tests/, the book's rules in
# book/book.mk.  This file only ties them together.

BUILD  := build
STAGES := $(sort $(notdir $(wildcard code/[0-9][0-9]-*)))

include tests/suites.mk
export SUITES THREADED_FROM BUILD
export $(foreach s,$(SUITES),$(s)_FROM $(s)_UNTIL)

.DEFAULT_GOAL := all
all: deps stages book

# ---------------------------------------------------------------- packages
# Debian package names; on another system install their equivalents.
# libclang-rt-dev: the sanitizer and libFuzzer runtimes clang links (clang
# alone, without its recommended packages, cannot link -fsanitize=fuzzer).
# The book: fonts-noto-cjk renders the Chinese text (site, EPUB, PDF),
# weasyprint prints the PDF, libjs-lunr is the site's search, epubcheck and
# poppler-utils (pdffonts) check the EPUB and the PDF in make check.
# python3-uvloop: make bench's third contender for chapter 09's tasks (its
# smoke run in make check says "skipped" without it).  libuv1-dev, libev-dev,
# libevent-dev: the C loops chapter 11's make bench measures ours against;
# strace: make bench counts their system calls per round trip (题目2).
PACKAGES := build-essential clang libclang-rt-dev pkg-config check pandoc gnuplot-nox python3 valgrind \
    fonts-noto-cjk fonts-dejavu-core weasyprint libjs-lunr epubcheck poppler-utils python3-uvloop patch \
    libuv1-dev libev-dev libevent-dev strace

deps:
	@missing=""; \
	for p in $(PACKAGES); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if ! command -v apt-get >/dev/null; then \
	    echo "make: missing packages:$$missing (Debian names; install your system's equivalents)"; exit 1; \
	fi; \
	if [ "$$(id -u)" -ne 0 ]; then \
	    echo "make: these packages are missing:$$missing"; \
	    echo "make: install them, then run make again:"; \
	    echo "    sudo apt-get install -y$$missing"; exit 1; \
	fi; \
	echo "make: installing$$missing"; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null

# ---------------------------------------------------------------- stages
stages: $(STAGES)
$(STAGES): deps
	$(MAKE) -s -C code/$@ O=$(CURDIR)/$(BUILD)/$@

# ---------------------------------------------------------------- tests
# make check STAGE=05: only that stage's build, suites, pinned outputs,
# conformance and exercises.
check: deps
	@tests/check.sh all $(STAGE)

check-sanitize: deps
	@tests/check.sh sanitize $(STAGE)

check-valgrind: deps
	@tests/check.sh valgrind $(STAGE)

# make check-browser: the book's site in headless Chromium (Debian's, installed
# if missing): every page at 1280 and 390 px, links, images, Chinese glyphs,
# sideways overflow, five searches.
check-browser: deps
	@tests/book/browser.sh
.PHONY: check-browser

# make conformance N=100000 SEED=7: that many random scenarios per stage
# against CPython (make check runs 500 with seed 1).
N ?= 100000
SEED ?= 1
conformance: deps
	@CONFORMANCE_N=$(N) CONFORMANCE_SEED=$(SEED) tests/check.sh conformance $(STAGE)

# make mutate [STAGE=05]: apply each mutant of tests/mutants/ (a planted bug)
# in a scratch copy and run that stage's tests: each must be killed.
# make mutate ID=05-head-pop-count: that one mutant.
mutate: deps
	@tests/mutate.sh $(STAGE) $(ID)

# make bench: every stage's benchmarks -> book/data/*.dat (committed; the
# book only plots them).  make bench BENCH=tasks: only book/data/tasks.dat.
# BENCH=loops: only chapter 11's comparison with libuv, libev, libevent,
# asyncio and uvloop (ROUNDS=5); SCALE=0.01: its smoke run (make check's).
bench: deps
	@tests/bench.sh

# make fuzz FUZZ_SECONDS=300: libFuzzer on every stage's scenario parser.
fuzz: deps
	@tests/check.sh fuzz

# make exercise CH=01            your solutions (they fail until solved)
# make exercise CH=01 ANSWERS=1  the worked answers
exercise: deps
	@tests/exercise.sh "$(CH)" $(if $(ANSWERS),answers)

# make handout CH=04 [OUT=file.tar.gz]: chapter 04's exercises for students,
# without answers (a check proves it), buildable alone.
handout: deps
	@tests/handout.sh "$(CH)" $(OUT)

# make grade CH=04 SUBMISSIONS=folder [OUT=folder]: every exercise test
# against every student's files, sandboxed; writes grades.csv and grades.txt.
grade: deps
	@tests/grade.sh "$(CH)" "$(SUBMISSIONS)" $(OUT)

# ---------------------------------------------------------------- book
include book/book.mk

# ---------------------------------------------------------------- misc
clean:
	rm -rf $(BUILD)

help:
	@echo "make                  install missing packages, build every stage and the book"
	@echo "make check            every test: suites, pinned outputs, conformance, exercises, clang builds"
	@echo "make check STAGE=NN   the same for stage NN only (e.g. STAGE=05)"
	@echo "make check-sanitize   the same under ASan+UBSan (TSan for threaded stages), 10 s of fuzzing"
	@echo "make check-valgrind   the same under valgrind memcheck (helgrind for threaded stages)"
	@echo "make book             the HTML site, the EPUB and the PDF, into $(BUILD)/book/"
	@echo "make check-browser    the site in headless Chromium: pages, links, Chinese glyphs, overflow, search"
	@echo "make conformance      N random scenarios per stage (default 100000, SEED=1) against CPython"
	@echo "make bench            run the benchmarks, refresh book/data/*.dat (the book plots them)"
	@echo "make mutate           plant each bug of tests/mutants/ in a copy; each must fail a test (STAGE=NN, ID=NN-name)"
	@echo "make fuzz             libFuzzer on each stage's scenario parser (FUZZ_SECONDS=300 each)"
	@echo "make exercise CH=NN   chapter NN's exercise tests against your code (ANSWERS=1: the answers; EX=K-name: one)"
	@echo "make handout CH=NN    chapter NN's exercises for students, no answers: a tar.gz (OUT=file)"
	@echo "make grade CH=NN SUBMISSIONS=dir   grade a class (one folder per student), sandboxed: grades.csv/.txt"
	@echo "make NN-slug          one stage, e.g. make 01-select-loop (or make -C code/NN-slug [run])"
	@echo "make clean            remove $(BUILD)/"

.PHONY: all deps stages $(STAGES) check check-sanitize check-valgrind conformance mutate fuzz bench exercise handout grade clean help
