#!/usr/bin/env bash
# Regenerates the TLS test identities used by tests/common/security_test.cc and
# tests/e2e/security_test.cc. They are committed (valid for ~100 years) so the tests need no
# openssl at run time and behave the same on every machine. TEST KEYS ONLY: never deploy them.
#
#   ca.pem / ca.key            the fleet's test CA
#   server.pem / server.key    signed by ca; DNS:localhost, IP:127.0.0.1; serverAuth + clientAuth
#                              (one identity both ways: every service presents it to its peers)
#   client.pem / client.key    signed by ca; clientAuth (the CLI's identity)
#   other-ca.pem / other-ca.key, other.pem / other.key
#                              a different CA and a leaf signed by it (DNS:localhost,
#                              IP:127.0.0.1, both usages), to prove rejection
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
DAYS=36500
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
ca() {  # name subject
  key "$1.key"
  openssl req -x509 -new -key "$1.key" -sha256 -days "$DAYS" -subj "$2" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$1.pem"
}
leaf() {  # name ca subject extendedKeyUsage [subjectAltName]
  key "$1.key"
  local ext
  ext="$(mktemp)"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$4"
    if [[ -n "${5:-}" ]]; then echo "subjectAltName=$5"; fi
  } >"$ext"
  openssl req -new -key "$1.key" -subj "$3" -out "$1.csr"
  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -sha256 \
    -days "$DAYS" -extfile "$ext" -out "$1.pem" 2>/dev/null
  rm -f "$1.csr" "$ext"
}
ca ca "/CN=flamefleet test CA"
leaf server ca "/CN=localhost" "serverAuth,clientAuth" "DNS:localhost,IP:127.0.0.1"
leaf client ca "/CN=flamefleet test client" "clientAuth"
ca other-ca "/CN=flamefleet other test CA"
leaf other other-ca "/CN=localhost" "serverAuth,clientAuth" "DNS:localhost,IP:127.0.0.1"
rm -f ./*.srl
