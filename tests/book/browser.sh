#!/bin/sh
# browser.sh: make check-browser. Builds the book, then loads every page of
# the site in headless Chromium (tests/book/browser/check.js says what it
# checks); screenshots go to $BUILD/browser/shots/. Installs what it needs:
# Debian's chromium (apt-get, as root) and playwright-core (npm, pinned by
# tests/book/browser/package.json; it has no dependencies of its own), which
# drives /usr/bin/chromium and downloads no browser.
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
BUILD=${BUILD:-build}
dir=$BUILD/browser

need=""
command -v chromium >/dev/null || need="$need chromium"
command -v node >/dev/null || need="$need nodejs"
command -v npm >/dev/null || need="$need npm"
if [ -n "$need" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "make check-browser: these packages are missing:$need"
        echo "    sudo apt-get install -y$need"
        exit 1
    fi
    echo "make check-browser: installing$need"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $need >/dev/null || exit 1
fi

want=$(sed -n 's/.*"playwright-core": *"\([^"]*\)".*/\1/p' tests/book/browser/package.json)
have=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$dir/node_modules/playwright-core/package.json" 2>/dev/null | head -n 1)
if [ "$have" != "$want" ]; then
    mkdir -p "$dir" && cp tests/book/browser/package.json "$dir/" &&
    (cd "$dir" && npm install --no-audit --no-fund --no-package-lock --silent) || {
        echo "make check-browser: npm could not install playwright-core $want"; exit 1; }
fi

make -s book BUILD="$BUILD" || exit 1
NODE_PATH="$root/$dir/node_modules" CHROMIUM=$(command -v chromium) \
    node tests/book/browser/check.js "$BUILD/book/site" "$dir/shots"
