#!/bin/sh
# Installs the Debian packages the tests need, only when their binaries are missing (a warm machine skips apt).
# Usage: system-packages.sh [BINARY=PACKAGE ...]; with no arguments, the project's list below.
# Runs apt-get as root, or through sudo when that needs no password; otherwise prints one line naming
# what to install and exits 1.
set -eu

# The report's browser test drives Chromium; the grader's sandbox runs submissions under bubblewrap; R hand-ins
# run in R with jsonlite (knitr for students' R Markdown setup chunks); shellcheck lints the Gradescope bundle's
# scripts (tests/grader/test_bundle.py). A folder stands for an R package.
DEFAULT="/usr/bin/chromium=chromium /usr/bin/bwrap=bubblewrap /usr/bin/R=r-base-core \
/usr/lib/R/site-library/jsonlite=r-cran-jsonlite /usr/lib/R/site-library/knitr=r-cran-knitr \
/usr/bin/shellcheck=shellcheck"

missing=""
for pair in ${*:-$DEFAULT}; do
  [ -x "${pair%%=*}" ] || missing="$missing ${pair#*=}"
done
[ -n "$missing" ] || exit 0
missing="${missing# }"

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO="sudo -n"
else
  echo "system-packages: the tests need Debian packages that are missing; install them with: sudo apt-get install -y $missing" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "system-packages: no apt-get here; install these packages with your system's package manager: $missing" >&2
  exit 1
fi
echo "system-packages: installing $missing"
$SUDO apt-get update -qq
plain="" lean=""
for package in $missing; do
  case "$package" in
    r-*) lean="$lean $package" ;;  # R without its recommended compilers and extra packages
    *) plain="$plain $package" ;;
  esac
done
# shellcheck disable=SC2086  # one word per package
[ -z "$plain" ] || $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $plain
# shellcheck disable=SC2086
[ -z "$lean" ] || $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $lean
