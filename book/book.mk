# book/book.mk: the book (DESIGN section 8). Included by the top-level Makefile;
# also works alone: make -f book/book.mk book
#
#   make book        the HTML site and the EPUB
#   make book-html   $(BUILD)/book/site/index.html and one page per chapter file
#   make book-epub   $(BUILD)/book/site/book.epub
#
# Pages come in reading order: book/index.md, chapters/NN-*.md, chapters/aN-*.md,
# then the worked answers chapters/answers/NN.md (a group of their own).
# book/site.sh gives each page its navigation; book/plots/NAME.gp draws
# $(BUILD)/book/site/fig/NAME.svg (chapters write ![...](fig/NAME.svg)).

book_saved_goal := $(.DEFAULT_GOAL)
.SECONDEXPANSION:

BUILD ?= build
PANDOC ?= pandoc
GNUPLOT ?= gnuplot
WEASYPRINT ?= weasyprint
BOOK_OUT := $(BUILD)/book
BOOK_SITE := $(BOOK_OUT)/site

BOOK_CHAPTERS := $(sort $(wildcard chapters/[0-9][0-9]-*.md)) $(sort $(wildcard chapters/a[0-9]*-*.md))
BOOK_ANSWERS := $(sort $(wildcard chapters/answers/*.md))
BOOK_PAGES := book/index.md $(BOOK_CHAPTERS) $(BOOK_ANSWERS)
BOOK_HTML := $(BOOK_SITE)/index.html $(patsubst chapters/%.md,$(BOOK_SITE)/%.html,$(BOOK_CHAPTERS) $(BOOK_ANSWERS))
BOOK_FIGS := $(patsubst book/plots/%.gp,$(BOOK_SITE)/fig/%.svg,$(wildcard book/plots/*.gp))

# Coarse on purpose: every page depends on the whole book machinery, on every
# page (their titles make the navigation) and on everything the filter includes.
BOOK_DEPS := book/book.mk book/metadata.yaml book/site.sh book/templates/page.html \
    $(wildcard book/templates/*) \
    $(wildcard book/filters/*.lua) $(BOOK_PAGES) $(shell find code tests -type f -not -path "*/__pycache__/*" 2>/dev/null)

BOOK_PANDOC := $(PANDOC) --from=markdown --metadata-file=book/metadata.yaml \
    --lua-filter=book/filters/include.lua --highlight-style=tango --resource-path=.:$(BOOK_SITE)

.PHONY: book book-html book-epub book-pdf
# The PDF takes longest (weasyprint, about a minute): unless make was given
# its own -j, two jobs, so that it prints while the pages and the EPUB build.
book:
	@$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) \
	    $(if $(filter -j%,$(MAKEFLAGS)),,-j2) book-html book-epub book-pdf
book-pdf: $(BOOK_OUT)/book.pdf
BOOK_STAGES := $(patsubst chapters/%.md,%,$(BOOK_CHAPTERS))
BOOK_ARCHIVES := $(patsubst %,$(BOOK_SITE)/code/%.tar.gz,$(filter $(notdir $(wildcard code/[0-9][0-9]-*)),$(BOOK_STAGES)))
BOOK_JS := $(BOOK_SITE)/js/book.js $(BOOK_SITE)/js/lunr.min.js $(BOOK_SITE)/search-index.js
book-html: $(BOOK_HTML) $(BOOK_SITE)/book.css $(BOOK_FIGS) $(BOOK_JS) $(BOOK_ARCHIVES) $(BOOK_SITE)/book.pdf
book-epub: $(BOOK_SITE)/book.epub

# One page of the site: its navigation metadata, then pandoc with the template.
define book_page
@mkdir -p $(dir $@) $(dir $(patsubst $(BOOK_SITE)/%.html,$(BOOK_OUT)/nav/%.yaml,$@))
sh book/site.sh $< $(BOOK_PAGES) >$(patsubst $(BOOK_SITE)/%.html,$(BOOK_OUT)/nav/%.yaml,$@)
$(BOOK_PANDOC) --lua-filter=book/filters/number.lua --lua-filter=book/filters/links.lua --to=html5 --standalone \
    --template=book/templates/page.html --toc --toc-depth=3 \
    --metadata-file=$(patsubst $(BOOK_SITE)/%.html,$(BOOK_OUT)/nav/%.yaml,$@) -o $@ $<
endef

$(BOOK_SITE)/index.html: book/index.md $(BOOK_DEPS)
	$(book_page)
$(BOOK_SITE)/%.html: chapters/%.md $(BOOK_DEPS)
	$(book_page)

$(BOOK_SITE)/book.css: book/css/book.css
	@mkdir -p $(dir $@)
	cp $< $@

# The reader's tools: book.js, Debian's lunr (libjs-lunr), and the search
# index of every page (book/search-index.py).
$(BOOK_SITE)/js/book.js: book/js/book.js
	@mkdir -p $(dir $@)
	cp $< $@
LUNR_JS ?= /usr/share/javascript/lunr/lunr.min.js
$(BOOK_SITE)/js/lunr.min.js: $(LUNR_JS)
	@mkdir -p $(dir $@)
	cp $< $@
$(BOOK_SITE)/search-index.js: book/search-index.py $(BOOK_HTML)
	python3 book/search-index.py $(BOOK_SITE) $(BOOK_HTML) >$@.tmp
	mv $@.tmp $@

# Each chapter's program as one archive, the same bytes for the same files.
$(BOOK_SITE)/code/%.tar.gz: $$(shell find code/% -type f)
	@mkdir -p $(dir $@)
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=2020-01-01 \
	    --exclude-vcs -cf - -C code $* | gzip -n >$@.tmp
	mv $@.tmp $@

$(BOOK_SITE)/book.pdf: $(BOOK_OUT)/book.pdf
	cp $< $@

$(BOOK_SITE)/fig/%.svg: book/plots/%.gp $(wildcard book/data/*.dat)
	@mkdir -p $(dir $@)
	$(GNUPLOT) -e "set terminal svg size 720,420 dynamic font 'sans,12'; set output '$@'" $<

# The EPUB: every page in one document (whole.lua makes each page's ids its
# own and points links between pages at them), numbered, with a cover drawn
# by gnuplot; epub-titles.py titles each file after its chapter.
$(BOOK_OUT)/cover.png: book/cover.gp
	@mkdir -p $(dir $@)
	$(GNUPLOT) -e "set output '$@'" $<

$(BOOK_SITE)/book.epub: $(BOOK_DEPS) book/css/book.css book/css/epub.css book/epub-titles.py $(BOOK_FIGS) $(BOOK_OUT)/cover.png
	@mkdir -p $(dir $@)
	$(BOOK_PANDOC) --lua-filter=book/filters/number.lua --lua-filter=book/filters/whole.lua \
	    --to=epub3 --toc --toc-depth=2 --epub-chapter-level=1 --file-scope \
	    --epub-cover-image=$(BOOK_OUT)/cover.png \
	    --css=book/css/book.css --css=book/css/epub.css -o $@.tmp $(BOOK_PAGES)
	python3 book/epub-titles.py $@.tmp
	mv $@.tmp $@

# The PDF: the same document as the EPUB, as one HTML page, printed by
# weasyprint with book/css/print.css (page numbers, contents, wrapped code).
# Its figures are copies that weasyprint can draw (book/print-svg.py).
BOOK_PRINT_FIGS := $(patsubst $(BOOK_SITE)/fig/%,$(BOOK_OUT)/print/fig/%,$(BOOK_FIGS))
$(BOOK_OUT)/print/fig/%.svg: $(BOOK_SITE)/fig/%.svg book/print-svg.py
	@mkdir -p $(dir $@)
	python3 book/print-svg.py $< $@

$(BOOK_OUT)/book.pdf: $(BOOK_DEPS) book/css/print.css $(BOOK_PRINT_FIGS)
	@mkdir -p $(BOOK_OUT)/print
	$(BOOK_PANDOC) --lua-filter=book/filters/number.lua --lua-filter=book/filters/whole.lua \
	    --to=html5 --standalone --template=book/templates/print.html --file-scope \
	    --toc --toc-depth=2 -o $(BOOK_OUT)/print/book.html $(BOOK_PAGES)
	$(WEASYPRINT) --base-url $(BOOK_OUT)/print/ -s book/css/print.css $(BOOK_OUT)/print/book.html $@.tmp
	mv $@.tmp $@

# Including this file must not change the includer's default goal
# (run alone, `book` is the default).
ifneq ($(notdir $(firstword $(MAKEFILE_LIST))),book.mk)
.DEFAULT_GOAL := $(book_saved_goal)
endif
