#!/usr/bin/env bash
# Run first by `npm test` (and so by .ci/run): the system packages some tests need. The openssl command makes
# the certificates of the SNS adapter's and the server monitor's tests; the server monitor's dashboard test
# drives Debian's chromium through playwright-core; curl runs README's first session (readme-examples test). When one is missing: as root with apt-get, it is installed
# from Debian's packages; otherwise one line says what to install and the tests do not start.
set -euo pipefail
chromium=${CHROMIUM_PATH:-/usr/bin/chromium}
missing() {
  local m=()
  command -v openssl >/dev/null || m+=(openssl)
  command -v curl >/dev/null || m+=(curl)
  [ -x "$chromium" ] || m+=(chromium)
  echo "${m[@]}"
}
need=$(missing)
[ -z "$need" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "npm test: installing $need from Debian's packages (apt-get)"
  # shellcheck disable=SC2086 # one word per package
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $need || true
  need=$(missing)
  [ -z "$need" ] && exit 0
fi
echo "npm test needs system packages first: apt-get install $need" >&2
exit 1
