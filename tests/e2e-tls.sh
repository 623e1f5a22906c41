# shellcheck shell=bash
# End to end, TLS at HAProxy: fe_tls's certificates made once into their
# volume and kept, each certificate reached and read back from the handshake,
# curl with the lab's CA, old TLS refused; the tls-cost scenario's ordering
# and handshake mix; connections --tls; vegeta's TLS resumption as HAProxy
# counts it. Helpers and setup: tests/e2e.sh.

# ca_sum: the checksum of the CA HAProxy's fe_tls serves from its volume.
ca_sum() { compose exec -T haproxy cat /etc/haproxy-certs/ca.crt | sha256sum | cut -d' ' -f1; }

# Made on the first start, kept by the next ones; no key in a file git tracks.
test_e2e_13_tls_certificates_made_once_and_kept() {
  local first out
  e2e_up
  first=$(ca_sum)
  [[ "${first}" =~ ^[0-9a-f]{64}$ ]] || fail "no CA in the haproxy-certs volume (checksum: '${first}')"
  out=$(compose run --rm -T certs 2>&1)
  assert_match '^certificates kept in /certs \(valid until ' "${out}" "the certs service on a second start"
  quiet_compose up -d --wait --force-recreate haproxy
  assert_eq "${first}" "$(ca_sum)" "the CA after HAProxy was recreated"
  # A PEM key's first line, alone on its line (code that parses PEM names it inside quotes).
  assert_eq "" "$(git -C "${LAB_ROOT}" grep -lE -e '^-----BEGIN ([A-Z]+ )?PRIVATE KEY-----$' 2>/dev/null || true)" \
    "git-tracked files holding a private key"
  assert_eq "" "$(git -C "${LAB_ROOT}" status --porcelain -- tls haproxy)" "changes to tls/ or haproxy/ after making certificates"
  # The keys HAProxy's user's alone, the CA's key nowhere, the clients' CA alone.
  assert_eq "ca.crt 644 0:0
ecdsa.pem 400 $(env_value HAPROXY_USER)
rsa.pem 400 $(env_value HAPROXY_USER)" "$(compose exec -T haproxy stat -c '%n %a %u:%g' /etc/haproxy-certs/ca.crt /etc/haproxy-certs/ecdsa.pem /etc/haproxy-certs/rsa.pem | sed 's|^/etc/haproxy-certs/||')" \
    "fe_tls's files: name, mode, owner"
  assert_eq "ca.crt ecdsa.pem rsa.pem" "$(compose exec -T haproxy ls /etc/haproxy-certs | xargs)" "files in the haproxy-certs volume (no ca.key)"
  assert_eq "ca.crt" "$(compose run --rm -T --no-deps --entrypoint ls holder /certs | xargs)" "files a TLS client (holder) finds at /certs"
}

# tls_handshakes SNI: five TLS connections to fe_tls asking for SNI, each a
# full handshake (no session offered) verified with the lab's CA, from node
# in the holder's image: "KEY_TYPE PROTOCOL" of each, or "failed CODE".
tls_handshakes() {
  compose run --rm -T --no-deps --entrypoint node holder --input-type=module -e "
    import fs from 'node:fs';
    import tls from 'node:tls';
    const ca = fs.readFileSync('/certs/ca.crt');
    for (let i = 0; i < 5; i += 1) {
      console.log(await new Promise((resolve) => {
        const s = tls.connect({ host: 'haproxy', port: 8443, servername: '$1', ca }, () => {
          const k = s.getPeerX509Certificate().publicKey;
          resolve([k.asymmetricKeyType, k.asymmetricKeyDetails.modulusLength ?? k.asymmetricKeyDetails.namedCurve, s.getProtocol()].join(' '));
          s.end();
        });
        s.on('error', (e) => resolve('failed ' + e.code));
      }));
    }"
}

# Each certificate by its name, read back from the handshake (the client
# verifies it with the lab's CA); curl from the host with the CA copied out
# as docs/results.md says; TLS 1.1 refused.
test_e2e_13a_tls_each_certificate_read_back_from_the_handshake() {
  local sni want ca
  e2e_up
  for sni in rsa.haproxy ecdsa.haproxy; do
    want='rsa 2048'
    [[ "${sni}" == ecdsa.* ]] && want='ec prime256v1'
    assert_eq "5 ${want} TLSv1.3" "$(tls_handshakes "${sni}" | sort | uniq -c | sed 's/^ *//')" \
      "${sni}: certificate key type and protocol of five handshakes"
  done
  ca=$(mktemp)
  compose cp haproxy:/etc/haproxy-certs/ca.crt "${ca}" >/dev/null 2>&1 || fail "docker compose cp haproxy:/etc/haproxy-certs/ca.crt failed"
  assert_eq "I'm FAST!!!!" "$(curl -sS --cacert "${ca}" "https://localhost:${HAPROXY_HTTPS_PORT}/fast")" "curl --cacert ca.crt https://localhost:PORT/fast"
  assert_eq "I'm FAST!!!!" "$(curl -sS --cacert "${ca}" --resolve "rsa.haproxy:${HAPROXY_HTTPS_PORT}:127.0.0.1" "https://rsa.haproxy:${HAPROXY_HTTPS_PORT}/fast")" \
    "curl to rsa.haproxy (the RSA certificate)"
  if curl -sS --tls-max 1.1 --cacert "${ca}" "https://localhost:${HAPROXY_HTTPS_PORT}/fast" >/dev/null 2>&1; then
    fail "a TLS 1.1 handshake succeeded: expected fe_tls to refuse TLS older than 1.2"
  fi
  rm -f "${ca}"
}

# Mozilla's intermediate profile at the handshake: a static-RSA suite and a
# CBC one are refused in TLS 1.2, an ECDHE AEAD suite is taken, TLS 1.3 is
# the default (curl from the host, the lab's CA).
test_e2e_13c_tls_refuses_static_rsa_and_cbc_suites() {
  local ca suite took=""
  e2e_up
  ca=$(mktemp)
  compose cp haproxy:/etc/haproxy-certs/ca.crt "${ca}" >/dev/null 2>&1 || fail "docker compose cp haproxy:/etc/haproxy-certs/ca.crt failed"
  for suite in AES128-GCM-SHA256 AES128-SHA ECDHE-RSA-AES128-SHA ECDHE-RSA-AES128-GCM-SHA256; do
    if curl -sS -o /dev/null --tls-max 1.2 --ciphers "${suite}" --cacert "${ca}" \
        --resolve "rsa.haproxy:${HAPROXY_HTTPS_PORT}:127.0.0.1" "https://rsa.haproxy:${HAPROXY_HTTPS_PORT}/fast" 2>/dev/null; then
      took+="${suite} "
    fi
  done
  assert_eq "ECDHE-RSA-AES128-GCM-SHA256" "$(xargs <<<"${took}")" \
    "TLS 1.2 suites fe_tls takes, of static RSA (AES128-GCM-SHA256, AES128-SHA), ECDHE with CBC and ECDHE with GCM"
  assert_eq "TLSv1.3" "$(curl -sS -v -o /dev/null --cacert "${ca}" "https://localhost:${HAPROXY_HTTPS_PORT}/fast" 2>&1 | sed -n 's/.*SSL connection using \(TLSv[0-9.]*\).*/\1/p')" \
    "the TLS version a default client gets"
  rm -f "${ca}"
}

# tls-cost, quick: the cost ordering, the handshake mix, the sign floor.
test_e2e_09f_tls_cost_quick() {
  scenario_judged tls-cost tls-cost --quick
}

# connections --tls, quick: every level plain then over TLS, side by side.
test_slow_09g_connections_tls_quick() {
  scenario_judged connections-tls connections --quick --tls
}

# vegeta_attack NAME ENV=VALUE...: 40 requests (20/s for 2 s) from the vegeta
# load tool (built by compose if absent, as a scenario would); its summary
# vegeta-1.json into E2E_SUMMARIES/NAME.
vegeta_attack() {
  local name="$1" args=() kv
  shift
  for kv in "$@"; do args+=(-e "${kv}"); done
  compose --profile attack run --rm -T -e RATE=20 -e DURATION=2 -e LOADGEN_SUMMARY_DIR="${E2E_SUMMARIES#results/}/${name}" \
    "${args[@]}" vegeta >/dev/null
}

# vegeta_counts NAME: "REQUESTS SUCCESSFUL FAILED DROPPED" of vegeta_attack
# NAME's summary, as the report reads it.
vegeta_counts() { in_image NODE_IMAGE node tests/e2e/checks/load-counts.mjs vegeta "${E2E_SUMMARIES}/$1/vegeta-1.json"; }

# full_and_resumed: fe_tls's full and resumed handshakes so far (show stat's
# ssl_sess and ssl_reused_sess).
full_and_resumed() { echo "$(haproxy_stat_sum fe_tls FRONTEND ssl_sess) $(haproxy_stat_sum fe_tls FRONTEND ssl_reused_sess)"; }

# vegeta, the open-model generator: plain, and over TLS with a connection per
# request, resuming sessions or not as asked, as HAProxy's own counters see
# the handshakes; every request answered, none dropped.
test_e2e_13b_vegeta_resumes_tls_only_when_asked_as_haproxy_counts() {
  local before after full resumed full_now resumed_now
  e2e_up
  before=$(haproxy_stat_sum fe_main FRONTEND req_tot)
  vegeta_attack plain TARGET=http://haproxy:8080
  after=$(haproxy_stat_sum fe_main FRONTEND req_tot)
  assert_eq 40 $((after - before)) "requests fe_main counted from a 20/s, 2 s attack"
  assert_eq "40 40 0 0" "$(vegeta_counts plain)" "vegeta's own count (requests, successful, failed, dropped)"
  read -r full resumed <<<"$(full_and_resumed)"
  vegeta_attack resume TARGET=https://ecdsa.haproxy:8443 KEEPALIVE=false TLS_RESUME=true
  read -r full_now resumed_now <<<"$(full_and_resumed)"
  assert_eq 40 $((full_now - full + resumed_now - resumed)) "handshakes of 40 connections"
  # The first connections race for a ticket: a few may be full handshakes.
  assert_ge 30 $((resumed_now - resumed)) "resumed handshakes of 40 connections with TLS_RESUME=true (full: $((full_now - full)))"
  read -r full resumed <<<"$(full_and_resumed)"
  vegeta_attack full TARGET=https://rsa.haproxy:8443 KEEPALIVE=false TLS_RESUME=false
  read -r full_now resumed_now <<<"$(full_and_resumed)"
  assert_eq "40 0" "$((full_now - full)) $((resumed_now - resumed))" "full and resumed handshakes with TLS_RESUME=false"
  assert_eq "40 40 0 0" "$(vegeta_counts full)" "vegeta's own count over TLS (requests, successful, failed, dropped)"
}
