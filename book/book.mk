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

BUILD ?= build
PANDOC ?= pandoc
GNUPLOT ?= gnuplot
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
    $(wildcard book/filters/*.lua) $(BOOK_PAGES) $(shell find code tests -type f 2>/dev/null)

BOOK_PANDOC := $(PANDOC) --from=markdown --metadata-file=book/metadata.yaml \
    --lua-filter=book/filters/include.lua --highlight-style=tango --resource-path=.:$(BOOK_SITE)

.PHONY: book book-html book-epub
book: book-html book-epub
book-html: $(BOOK_HTML) $(BOOK_SITE)/book.css $(BOOK_FIGS)
book-epub: $(BOOK_SITE)/book.epub

# One page of the site: its navigation metadata, then pandoc with the template.
define book_page
@mkdir -p $(dir $@) $(dir $(patsubst $(BOOK_SITE)/%.html,$(BOOK_OUT)/nav/%.yaml,$@))
sh book/site.sh $< $(BOOK_PAGES) >$(patsubst $(BOOK_SITE)/%.html,$(BOOK_OUT)/nav/%.yaml,$@)
$(BOOK_PANDOC) --lua-filter=book/filters/links.lua --to=html5 --standalone \
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

$(BOOK_SITE)/fig/%.svg: book/plots/%.gp $(wildcard book/data/*.dat)
	@mkdir -p $(dir $@)
	$(GNUPLOT) -e "set terminal svg size 720,420 dynamic font 'sans,12'; set output '$@'" $<

$(BOOK_SITE)/book.epub: $(BOOK_DEPS) book/css/book.css $(BOOK_FIGS)
	@mkdir -p $(dir $@)
	$(BOOK_PANDOC) --to=epub3 --toc --toc-depth=2 --epub-chapter-level=1 --file-scope \
	    --css=book/css/book.css -o $@ $(BOOK_CHAPTERS) $(BOOK_ANSWERS)

# Including this file must not change the includer's default goal
# (run alone, `book` is the default).
ifneq ($(notdir $(firstword $(MAKEFILE_LIST))),book.mk)
.DEFAULT_GOAL := $(book_saved_goal)
endif
